# SPDX-License-Identifier: LGPL-2.1-or-later
"""``python3 -m hyperoffload.torch run PY_FILE:FACTORY --budget-ratio R``.

FACTORY() returns (module, example_inputs).  The module is planned, then
run through libhyper all-resident (the baseline) and planned, interleaved,
and the table of ``make demo`` is printed (medians).  Exit status 1 when an
output differs from ``module(*inputs)``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
from typing import Any, Callable, Dict, List, Tuple

import torch

from . import torch as ho
from .report import table


def load_factory(spec: str) -> Callable[[], Tuple[torch.nn.Module, Tuple[Any, ...]]]:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"hyperoffload: {spec!r}: expected PY_FILE:FACTORY")
    if not os.path.exists(path):
        raise SystemExit(f"hyperoffload: {path}: no such file")
    mspec = importlib.util.spec_from_file_location("_hyperoffload_factory", path)
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[mspec.name] = mod
    mspec.loader.exec_module(mod)  # type: ignore[union-attr]
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise SystemExit(f"hyperoffload: {path} has no function {name!r}")
    return fn


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and \
            all(same(x, y) for x, y in zip(a, b))
    return a == b


def measure(module: torch.nn.Module, inputs: Tuple[Any, ...], p: ho.Plan, backend: str,
            runs: int) -> Tuple[Dict[str, Dict[str, float]], bool]:
    """Interleaved runs of the all-resident and the planned schedule."""
    with torch.no_grad():
        ref = module(*inputs)
    samples: Dict[str, List[Dict[str, int]]] = {"baseline": [], "planned": []}
    ok = True
    with ho.Offloaded(p, backend, baseline=True) as base, ho.Offloaded(p, backend) as planned:
        for _ in range(runs):
            for key, r in (("baseline", base), ("planned", planned)):
                ok = same(ref, r(*inputs)) and ok
                samples[key].append(r.stats)
    med = {k: {f: statistics.median(s[f] for s in v) for f in v[0]} for k, v in samples.items()}
    return med, ok


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m hyperoffload.torch",
                                 description="plan and run a PyTorch module under libhyper")
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="plan, run all-resident and planned, print the table")
    run.add_argument("factory", metavar="PY_FILE:FACTORY")
    g = run.add_mutually_exclusive_group()
    g.add_argument("--budget-ratio", type=float, help="budget as a ratio of the all-resident peak")
    g.add_argument("--budget-bytes", type=int, help="budget in bytes")
    run.add_argument("--backend", default="auto", choices=["auto", "kmod", "shmem"])
    run.add_argument("--profile", help="hyper-plan profile name or file (default: measured)")
    run.add_argument("--runs", type=int, default=3, help="interleaved runs (medians)")
    run.add_argument("--json", help="write the figures here")
    a = ap.parse_args(argv)
    module, inputs = load_factory(a.factory)()
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    try:
        p = ho.plan(module, inputs, budget_ratio=a.budget_ratio, budget_bytes=a.budget_bytes,
                    profile=a.profile)
        med, ok = measure(module, inputs, p, a.backend, a.runs)
    except (ho.CaptureError, ho.PlanError, ho.InputError, OSError) as e:
        print(f"hyperoffload: {e}", file=sys.stderr)
        return 1
    print(table(med["baseline"], med["planned"], p.predicted, a.runs))
    print("outputs: " + ("identical to module(*inputs) (torch.equal), every run" if ok
                         else "DIFFER from module(*inputs)"))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"baseline": med["baseline"], "planned": med["planned"],
                       "predicted": p.predicted, "outputs_identical": ok}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
