# SPDX-License-Identifier: LGPL-2.1-or-later
"""``offload(..., device="cuda")``: the runner on a CUDA device.

The arena is one torch CUDA tensor and every tensor a view over it; the
pool stays host memory, pinned by libhyper (cudaHostRegister), and its
copies run on libhyper's own CUDA streams.  Operators run on torch's
current stream, which libhyper makes wait for their prefetches on the GPU
(hyper_set_compute_stream, hyper_wait_tensor_stream): no host
synchronisation per operator.  The measured peak is
``torch.cuda.max_memory_allocated()`` over the call.

Run on an H200 (Documentation/bench-gpu.md).  While it is open, the
weights the schedule streams from the pool leave
the GPU: the module's parameters point at their pinned pool copies (host
memory), and close() copies them back to the GPU.  That is where the peak
goes down; a weight the schedule keeps resident stays where it is.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

import torch

from .binding import Buffer, Context, CudaUnavailable, Schedule
from .capture import Captured, _storage
from .runner import Runner, _pool_view


def cuda_ordinal(device: str) -> Optional[int]:
    """None for "cpu"; the ordinal for "cuda" / "cuda:N" (the current
    device for "cuda"); ValueError for anything else.  Needs no GPU."""
    if device == "cpu":
        return None
    if device == "cuda":
        return -1
    if device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    raise ValueError(f"device {device!r}: use 'cpu', 'cuda' or 'cuda:N'")


def check_cuda(device: str) -> torch.device:
    """The torch device for ``device``, or CudaUnavailable saying why not."""
    n = cuda_ordinal(device)
    if n is None:
        raise ValueError("check_cuda() is for a CUDA device")
    if not torch.cuda.is_available():
        raise CudaUnavailable(
            f"device={device!r}: this torch ({torch.__version__}) has no CUDA device "
            f"(torch.cuda.is_available() is False); use device='cpu'")
    if n < 0:
        n = torch.cuda.current_device()
    if n >= torch.cuda.device_count():
        raise CudaUnavailable(f"device={device!r}: torch sees {torch.cuda.device_count()} "
                              f"CUDA device(s)")
    return torch.device("cuda", n)


_PROFILES: Dict[int, str] = {}     # device index -> its profile file, measured once


def _copy_s(dst: torch.Tensor, src: torch.Tensor, runs: int = 3) -> float:
    """The fastest of ``runs`` copies, timed with CUDA events, in seconds."""
    best = float("inf")
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src, non_blocking=True)
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) / 1e3)
    return best


def measure_profile(dev: torch.device) -> Dict[str, Any]:
    """This GPU's profile (Documentation/profiles.md's keys), for the
    planner: the link is a pinned-memory cudaMemcpyAsync each way (what
    libhyper's copy streams do over the registered pool), memory bandwidth
    a device-to-device copy, compute a bf16 matrix product.  Under a
    second."""
    n = 64 << 20
    with torch.cuda.device(dev):
        host = torch.empty(n, dtype=torch.uint8).pin_memory()
        gpu = torch.empty(n, dtype=torch.uint8, device=dev)
        gpu2 = torch.empty(n, dtype=torch.uint8, device=dev)
        gpu.copy_(host)                      # warm-up
        h2d = n / _copy_s(gpu, host)
        d2h = n / _copy_s(host, gpu)
        mem = 2 * n / _copy_s(gpu2, gpu)
        small = 4096
        lat = _copy_s(gpu[:small], host[:small], 5) - small / h2d
        k = 4096
        a = torch.randn(k, k, device=dev, dtype=torch.bfloat16)
        a @ a
        t0 = torch.cuda.Event(enable_timing=True)
        t1 = torch.cuda.Event(enable_timing=True)
        t0.record()
        for _ in range(5):
            a @ a
        t1.record()
        t1.synchronize()
        flops = 5 * 2 * k ** 3 / (t0.elapsed_time(t1) / 1e3)
        props = torch.cuda.get_device_properties(dev)
    return {"name": "this-gpu", "desc": f"{props.name} (cuda:{dev.index}), measured by "
            f"hyperoffload: pinned copies, a device copy, a bf16 matrix product",
            "device_bytes": int(props.total_memory), "mem_bytes_per_s": int(mem),
            "flops": int(flops), "h2d_bytes_per_s": int(h2d), "d2h_bytes_per_s": int(d2h),
            "latency_ns": max(1, int(lat * 1e9))}


def profile_file(dev: torch.device) -> str:
    """The profile file of ``dev``, measured once per process."""
    if dev.index not in _PROFILES:
        prof = measure_profile(dev)
        path = os.path.join(tempfile.mkdtemp(prefix="hyperoffload-"),
                            f"cuda{dev.index}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(prof, f, indent=2)
        _PROFILES[dev.index] = path
    return _PROFILES[dev.index]


def captured_device(cap: Captured) -> Optional[torch.device]:
    """The CUDA device a captured module runs on, or None (CPU)."""
    return next((s.device for s in cap.tensors.values() if s.device.type == "cuda"), None)


class _Arena:
    """The arena: one torch CUDA tensor (what DeviceMemory is on the host)."""

    def __init__(self, nbytes: int, dev: torch.device):
        self.nbytes = max(4096, (nbytes + 4095) & ~4095)
        self.tensor: Optional[torch.Tensor] = torch.empty(self.nbytes, dtype=torch.uint8,
                                                          device=dev)
        self.address = self.tensor.data_ptr()

    def close(self) -> None:
        self.tensor = None


class _CudaContext(Context):
    """Waits before an operator are stream waits on torch's current stream."""

    def wait_tensor(self, tensor: int) -> None:
        self.wait_tensor_stream(tensor, torch.cuda.current_stream().cuda_stream)

    def wait_tensor_host(self, tensor: int) -> None:
        super().wait_tensor(tensor)


class CudaRunner(Runner):
    """Runner with the arena in GPU memory of ``dev``."""

    def __init__(self, cap: Captured, schedule: Schedule, dev: torch.device,
                 baseline_peak: int = 0, pool_bytes: int = 0):
        self.dev = dev
        self._released: List[torch.nn.Parameter] = []
        for tid, spec in cap.tensors.items():
            if spec.device != dev:
                raise ValueError(f"tensor {tid!r} ({spec.source[0] if spec.source else spec.kind}) "
                                 f"is on {spec.device}, not {dev}: with device={str(dev)!r} the "
                                 f"module, its inputs and every tensor it makes must be on that "
                                 f"GPU (give torch.arange/zeros/... device=x.device)")
        super().__init__(cap, schedule, "shmem", baseline_peak=baseline_peak,
                         pool_bytes=pool_bytes)
        try:
            self._release_weights()
        except BaseException:
            self.close()
            raise

    def _release_weights(self) -> None:
        self._released = release_weights(self, self.dev)

    def _restore_weights(self) -> None:
        restore_weights(self._released, self.dev)
        self._released = []

    def close(self) -> None:
        if self._released and self.ctx is not None:
            self._restore_weights()
        super().close()

    def _open(self, backend: str, pool_bytes: int) -> Context:
        # Only the shmem pool can be pinned (hyper_open(3)).
        return _CudaContext("shmem", pool_bytes=pool_bytes, cuda_device=self.dev.index)

    def _device_memory(self, arena: int, bufs: List[Buffer]) -> None:
        for b in bufs:
            if not (isinstance(b.owner, torch.Tensor) and b.owner.device == self.dev):
                raise ValueError(f"a weight the schedule keeps on the device is on "
                                 f"{getattr(b.owner, 'device', '?')}, not {self.dev}: "
                                 f"move the module there first (module.to({str(self.dev)!r}))")
        self.mem = _Arena(arena, self.dev)   # type: ignore[assignment]
        self.ctx.set_arena_at(self.mem.address, self.mem.nbytes)

    def _arena_tensor(self) -> torch.Tensor:
        return self.mem.tensor               # type: ignore[union-attr]

    def _final_tensor(self, tid: str) -> torch.Tensor:
        i = self.index[tid]
        if self.ctx.tensor_ptr(i):
            return self._device_tensor(tid)
        self.ctx.wait_tensor_host(i)         # type: ignore[attr-defined]
        return self._pool_tensor(tid).to(self.dev)

    def __call__(self, *inputs: Any) -> Any:
        with torch.cuda.device(self.dev):
            stream = torch.cuda.current_stream()
            self.ctx.set_compute_stream(stream.cuda_stream)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter_ns()
            out = super().__call__(*inputs)
            torch.cuda.synchronize()
            wall = time.perf_counter_ns() - t0
            self.stats["wall_ns"] = wall
            self.stats["libhyper_peak_device_bytes"] = self.stats["peak_device_bytes"]
            self.stats["peak_device_bytes"] = torch.cuda.max_memory_allocated()
        return out


def release_weights(r: Runner, dev: torch.device) -> List[torch.nn.Parameter]:
    """Point the module's parameters on ``dev`` that the schedule streams
    from the pool (home "pool", never written, not bound) at their pool
    copies, so that their device memory is freed while runner ``r`` is
    open; returns them.  Only a parameter that is its storage's only
    tensor is moved: a view of a larger storage (an RNN's flat weights)
    frees nothing alone."""
    streamed = {}
    for tid, spec in r.cap.tensors.items():
        if spec.source and spec.source[0] == "weight" and r.homes[tid] == "pool" \
                and tid not in r._state and tid not in r._bound:
            streamed[_storage(spec.source[1])[0]] = tid
    seen = set()
    out: List[torch.nn.Parameter] = []
    mods = [m for m in (r.cap.module, r.cap.gm) if m is not None]
    for p in (p for m in mods for p in m.parameters()):
        if id(p) in seen or p.device != dev:
            continue
        seen.add(id(p))
        ptr, nbytes = _storage(p)
        tid = streamed.get(ptr)
        if tid is None or nbytes != r.cap.tensors[tid].nbytes or \
                p.numel() * p.element_size() != nbytes:
            continue
        flat = _pool_view(r.ctx.tensor_pool_ptr(r.index[tid]), nbytes).view(p.dtype)
        p.data = flat.as_strided(p.shape, p.stride(), p.storage_offset())
        out.append(p)
    return out


def restore_weights(released: List[torch.nn.Parameter], dev: torch.device) -> None:
    """Copy parameters release_weights() moved back to ``dev`` (before the
    pool is unmapped)."""
    with torch.no_grad():
        for p in released:
            p.data = p.data.to(dev, copy=True)


def runner(cap: Captured, schedule: Schedule, device: str, baseline_peak: int = 0,
           pool_bytes: int = 0) -> Tuple[CudaRunner, torch.device]:
    dev = check_cuda(device)
    return CudaRunner(cap, schedule, dev, baseline_peak, pool_bytes), dev
