# SPDX-License-Identifier: LGPL-2.1-or-later
"""``python3 -m hyperoffload.torch run PY_FILE:FACTORY --budget-ratio R``.

FACTORY() returns (module, example_inputs).  The module is planned, then
run through libhyper all-resident (the baseline) and planned, interleaved,
and the table of ``make demo`` is printed (medians).  Exit status 1 when an
output differs from ``module(*inputs)``.
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import statistics
import sys
from typing import Any, Callable, Dict, List, Tuple

import torch

from . import torch as ho
from .report import table


class CliError(Exception):
    """A mistake on the command line: one line on stderr, exit status 1."""


def load_factory(spec: str) -> Callable[[], Tuple[torch.nn.Module, Tuple[Any, ...]]]:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise CliError(f"{spec!r}: expected PY_FILE:FACTORY")
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    mspec = importlib.util.spec_from_file_location("_hyperoffload_factory", path)
    if mspec is None or mspec.loader is None:
        raise CliError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[mspec.name] = mod
    try:
        mspec.loader.exec_module(mod)
    except Exception as e:
        raise CliError(f"{path}: loading it raised {type(e).__name__}: {_line(e)}") from None
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise CliError(f"{path} has no function {name!r}")
    return fn


def _line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def make(spec: str) -> Tuple[torch.nn.Module, Tuple[Any, ...]]:
    """FACTORY() checked: a module and its example inputs."""
    fn = load_factory(spec)
    try:
        made = fn()
    except Exception as e:
        raise CliError(f"{spec}: FACTORY() raised {type(e).__name__}: {_line(e)}") from None
    if not isinstance(made, (tuple, list)) or len(made) != 2 or \
            not isinstance(made[0], torch.nn.Module):
        raise CliError(f"{spec}: FACTORY() must return (module, example_inputs), got "
                       f"{type(made).__name__}")
    module, inputs = made
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    return module, inputs


def same(a: Any, b: Any) -> bool:
    """torch.equal on every tensor of two outputs of the same structure
    (tensors, tuples, lists, dicts, other values compared with ==)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and \
            all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and \
            all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def measure(eager: torch.nn.Module, inputs: Tuple[Any, ...], p: ho.Plan, backend: str,
            runs: int) -> Tuple[Dict[str, Dict[str, float]], bool]:
    """Interleaved runs of the all-resident and the planned schedule, each
    call's output compared with a call of ``eager``, a copy of the module
    made before capture (so that state written in forward advances alike)."""
    samples: Dict[str, List[Dict[str, int]]] = {"baseline": [], "planned": []}
    ok = True
    with ho.Offloaded(p, backend, baseline=True) as base, ho.Offloaded(p, backend) as planned:
        for _ in range(runs):
            for key, r in (("baseline", base), ("planned", planned)):
                with torch.no_grad():
                    ref = eager(*inputs)
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
    try:
        if a.runs < 1:
            raise CliError(f"--runs {a.runs}: give at least 1")
        if a.json and not os.path.isdir(os.path.dirname(os.path.abspath(a.json))):
            raise CliError(f"--json {a.json}: no such folder "
                           f"{os.path.dirname(os.path.abspath(a.json))} (create it first)")
        ho._check_budget(a.budget_ratio, a.budget_bytes)
        module, inputs = make(a.factory)
        eager = copy.deepcopy(module)
        with ho.plan(module, inputs, budget_ratio=a.budget_ratio, budget_bytes=a.budget_bytes,
                     profile=a.profile) as p:
            med, ok = measure(eager, inputs, p, a.backend, a.runs)
            predicted = p.predicted
        print(table(med["baseline"], med["planned"], predicted, a.runs))
        print("outputs: " + ("identical to module(*inputs) (torch.equal), every run" if ok
                             else "DIFFER from module(*inputs)"))
        if a.json:
            try:
                with open(a.json, "w", encoding="utf-8") as f:
                    json.dump({"baseline": med["baseline"], "planned": med["planned"],
                               "predicted": predicted, "outputs_identical": ok}, f, indent=1)
            except OSError as e:
                raise CliError(f"--json {a.json}: {e.strerror or e}") from None
    except (CliError, ValueError, OSError) as e:
        # CaptureError, PlanError, InputError are ValueErrors, HyperError
        # an OSError: each is one line naming the cause.
        print(f"hyperoffload: {_line(e)}", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
