# SPDX-License-Identifier: LGPL-2.1-or-later
"""PyTorch front end: capture, plan and run a module under libhyper.

    import hyperoffload.torch as ho
    p = ho.plan(module, example_inputs, budget_ratio=0.7)   # or budget_bytes=
    p.predicted   # peak_device_bytes, baseline_peak_bytes, stall_ns, makespan_ns
    r = ho.offload(module, example_inputs, budget_ratio=0.7, backend="auto")
    y = r(*inputs)            # same outputs as module(*inputs)
    r.stats       # peak_device_bytes, baseline_peak_bytes, bytes_prefetched,
                  # bytes_stored, stall_ns, wall_ns, steps

Shared objects (weights stored once in the pool, a KV cache handed from
one node to another; Documentation/pytorch.md):

    ho.publish_weights(p, "w")                 # once, on any node
    r = ho.offload(module, example_inputs, weights="w")   # any node
    ho.publish_tensors("kv", {"kv": kv}); ho.load_tensors("kv", like={"kv": kv})

CLI: ``python3 -m hyperoffload.torch run PY_FILE:FACTORY --budget-ratio 0.7``.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import torch as _torch

from . import _planner
from .capture import Captured, CaptureError, capture
from .runner import InputError, Runner
from ._planner import PlanError
from .binding import HyperError, LibraryNotFound, Schedule
from .shared import ObjectMismatch, delete_object, load_tensors, publish_tensors, publish_weights

__all__ = ["plan", "plan_captured", "offload", "Plan", "Offloaded", "CaptureError", "PlanError", "InputError",
           "HyperError", "LibraryNotFound", "publish_weights", "publish_tensors", "load_tensors",
           "delete_object", "ObjectMismatch"]


def _device_bytes(pred: Dict[str, Any]) -> int:
    """The device memory a run of the plan allocates: its arena as the
    planner laid it out (residency plus what placement loses to holes and
    alignment)."""
    return int(pred["arena_bytes"] or pred["peak_device_bytes"])


class Plan:
    """A captured module and its plans, made in-process by libhyperplan:
    ``schedule`` under the budget, ``baseline`` with nothing offloaded (the
    all-resident run), both libhyper schedules (binding.Schedule) that the
    Plan owns: close() or ``with`` frees them."""

    def __init__(self, captured: Captured, planned: _planner.Planned,
                 baseline: _planner.Planned, budget_bytes: Optional[int]):
        self.captured = captured
        self._planned = planned
        self._baseline = baseline
        self.budget_bytes = budget_bytes

    @property
    def schedule(self) -> Schedule:
        return self._planned.schedule

    @property
    def baseline(self) -> Schedule:
        return self._baseline.schedule

    @property
    def graph(self) -> Dict[str, Any]:
        return self.captured.graph()

    @property
    def predicted(self) -> Dict[str, int]:
        pred = self._planned.predicted
        return {"peak_device_bytes": int(pred["peak_device_bytes"]),
                "baseline_peak_bytes": self.baseline_peak_bytes,
                "stall_ns": int(pred["stall_ns"]),
                "makespan_ns": int(pred["makespan_ns"])}

    @property
    def arena_bytes(self) -> int:
        """The device arena a run of this plan allocates (never above the
        budget: an arena over it is refused when planning)."""
        return _device_bytes(self._planned.predicted)

    @property
    def baseline_peak_bytes(self) -> int:
        """The all-resident run's device memory, its arena included: what
        ``budget_ratio`` is a fraction of."""
        return _device_bytes(self._baseline.predicted)

    def close(self) -> None:
        """Free both schedules (a running Offloaded keeps its own reference)."""
        self._planned.close()
        self._baseline.close()

    def __enter__(self) -> "Plan":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def plan(module: _torch.nn.Module, example_inputs: Sequence[Any], *,
         budget_ratio: Optional[float] = None, budget_bytes: Optional[int] = None,
         profile: Optional[str] = None, runs: int = 3) -> Plan:
    """Capture ``module`` on ``example_inputs`` and plan it.

    The budget is ``budget_bytes``, or ``budget_ratio`` times the peak of the
    all-resident run; with neither, the planner's default goal (the lowest
    peak at most 1% slower).  ``profile`` is a hyper-plan profile name or
    file (default: this machine, measured).  ``runs`` timed runs of every
    operator give its compute time (their median).
    """
    _check_budget(budget_ratio, budget_bytes)
    return plan_captured(capture(module, example_inputs, runs=runs), budget_ratio=budget_ratio,
                         budget_bytes=budget_bytes, profile=profile)


def _check_budget(budget_ratio: Optional[float], budget_bytes: Optional[int]) -> None:
    """One line for each budget the planner cannot take."""
    if budget_ratio is not None and budget_bytes is not None:
        raise ValueError("give budget_ratio or budget_bytes, not both")
    if budget_ratio is not None:
        if isinstance(budget_ratio, bool) or not isinstance(budget_ratio, (int, float)):
            raise ValueError(f"budget_ratio must be a number in (0, 1] "
                             f"(got {type(budget_ratio).__name__})")
        if not 0 < budget_ratio <= 1:      # NaN fails this too
            raise ValueError(f"budget_ratio must be in (0, 1] (got {budget_ratio}): it is a "
                             f"fraction of the all-resident peak; for more room give no budget")
    if budget_bytes is not None:
        _planner.check_budget_bytes(budget_bytes)


def plan_captured(cap: Captured, *, budget_ratio: Optional[float] = None,
                  budget_bytes: Optional[int] = None, profile: Optional[str] = None) -> Plan:
    """Plan an already captured module (see plan()); capture once, plan often."""
    _check_budget(budget_ratio, budget_bytes)
    if profile is None:
        from . import _cuda
        dev = _cuda.captured_device(cap)
        if dev is not None:       # the GPU's own link and compute, not the host's
            profile = _cuda.profile_file(dev)
    graph = cap.graph()
    baseline = _planner.plan(graph, policy="none", profile=profile)
    try:
        peak = _device_bytes(baseline.predicted)
        if budget_ratio is not None:
            budget_bytes = max(1, int(peak * budget_ratio))
        planned = _planner.plan(graph, budget_bytes=budget_bytes, profile=profile)
    except BaseException:
        baseline.close()
        raise
    return Plan(cap, planned, baseline, budget_bytes)


class Offloaded:
    """A planned module running under libhyper; call it like the module."""

    def __init__(self, p: Plan, backend: str = "auto", *, baseline: bool = False,
                 pool_bytes: int = 0, device: str = "cpu", weights: Optional[str] = None):
        self.plan = p
        sched = p.baseline if baseline else p.schedule
        if device != "cpu" and weights is not None:
            raise ValueError("weights from a shared object run on the host (device='cpu'): "
                             "a CUDA context cannot pin a read-only object")
        if device != "cpu":
            from . import _cuda
            self._runner: Optional[Runner] = _cuda.runner(
                p.captured, sched, device, p.baseline_peak_bytes, pool_bytes)[0]
            return
        self._runner = Runner(p.captured, sched, backend, baseline_peak=p.baseline_peak_bytes,
                              pool_bytes=pool_bytes, weights=weights)

    def __call__(self, *inputs: Any) -> Any:
        if self._runner is None:
            raise ValueError("this offloaded module was closed")
        return self._runner(*inputs)

    @property
    def stats(self) -> Dict[str, int]:
        """The last call's figures (empty before the first call)."""
        return dict(self._runner.stats) if self._runner else {}

    @property
    def backend(self) -> str:
        return self._runner.ctx.backend if self._runner else "closed"

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def __enter__(self) -> "Offloaded":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def offload(module: _torch.nn.Module, example_inputs: Sequence[Any], *,
            budget_ratio: Optional[float] = None, budget_bytes: Optional[int] = None,
            backend: str = "auto", profile: Optional[str] = None, runs: int = 3,
            plan_: Optional[Plan] = None, device: str = "cpu",
            weights: Optional[str] = None) -> Offloaded:
    """Plan ``module`` (or take ``plan_``) and return it ready to run on
    ``backend`` ("auto": the kmod device if present, else shmem).

    ``device="cuda"`` (or "cuda:N"): the module and inputs are on that GPU;
    the arena is GPU memory and the pool pinned host memory (shmem); raises
    ``CudaUnavailable`` at once where there is no CUDA device.

    ``weights="name"``: the weights come from that shared object (see
    publish_weights), read-only, one copy for every node; the module's own
    tensors are not read.  An object of another module is refused
    (ObjectMismatch)."""
    if device != "cpu":
        from . import _cuda
        _cuda.check_cuda(device)
    p = plan_ or plan(module, example_inputs, budget_ratio=budget_ratio,
                      budget_bytes=budget_bytes, profile=profile, runs=runs)
    return Offloaded(p, backend, device=device, weights=weights)


if __name__ == "__main__":
    from .cli import main
    raise SystemExit(main())
