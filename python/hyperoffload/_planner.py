# SPDX-License-Identifier: LGPL-2.1-or-later
"""The one place that calls the planner.

Today that is the ``hyper-plan`` CLI (graph JSON in, schedule JSON out);
when the planner becomes a library, only this module changes.  Found as
$HYPEROFFLOAD_HYPER_PLAN, else the build tree's build/bin/hyper-plan, else
``hyper-plan`` on PATH.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, Optional

PLAN_ENV = "HYPEROFFLOAD_HYPER_PLAN"
_PROFILE: Dict[str, str] = {}


class PlanError(ValueError):
    """The planner refused the graph or the budget; the text is its own."""


def hyper_plan() -> str:
    env = os.environ.get(PLAN_ENV)
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.normpath(os.path.join(here, "..", "..", "build", "bin", "hyper-plan"))
    if os.access(tree, os.X_OK):
        return tree
    found = shutil.which("hyper-plan")
    if not found:
        raise PlanError(f"hyper-plan not found (tried {tree} and PATH): build it with `make`, "
                        f"install it with `make install`, or set {PLAN_ENV}")
    return found


def _run(args: list) -> subprocess.CompletedProcess:
    return subprocess.run([hyper_plan(), *args], capture_output=True, text=True, check=False)


def profile_args(profile: Optional[str]) -> list:
    """``--profile NAME`` or ``--profile-file F``; by default this machine,
    measured once per process (about 0.2 s)."""
    if profile and os.path.exists(profile):
        return ["--profile-file", profile]
    if profile:
        return ["--profile", profile]
    if "this" not in _PROFILE:
        path = os.path.join(tempfile.mkdtemp(prefix="hyperoffload-"), "this-machine.json")
        r = _run(["--measure-profile", "-o", path])
        if r.returncode:
            raise PlanError(f"hyper-plan --measure-profile failed: {r.stderr.strip()}")
        _PROFILE["this"] = path
    return ["--profile-file", _PROFILE["this"]]


def machine_profile() -> Dict[str, float]:
    """This machine's measured profile (the one plans use by default)."""
    with open(profile_args(None)[1], encoding="utf-8") as f:
        return json.load(f)


def plan(graph: Dict[str, Any], *, budget_bytes: Optional[int] = None,
         policy: Optional[str] = None, profile: Optional[str] = None) -> Dict[str, Any]:
    """Plan a graph (format v1); returns the schedule (format v1) as a dict."""
    with tempfile.TemporaryDirectory(prefix="hyperoffload-") as tmp:
        gpath = os.path.join(tmp, "graph.json")
        spath = os.path.join(tmp, "schedule.json")
        with open(gpath, "w", encoding="utf-8") as f:
            json.dump(graph, f)
        args = ["--graph", gpath, *profile_args(profile), "-o", spath]
        if budget_bytes is not None:
            args += ["--budget", str(int(budget_bytes))]
        if policy:
            args += ["--policy", policy]
        r = _run(args)
        if r.returncode:
            lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
            raise PlanError(lines[-1] if lines else f"hyper-plan exited with {r.returncode}")
        with open(spath, encoding="utf-8") as f:
            return json.load(f)
