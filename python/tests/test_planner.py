# SPDX-License-Identifier: LGPL-2.1-or-later
"""The planner is called in-process (libhyperplan through ctypes) and its
plan reaches libhyper as a struct hyper_schedule, with no JSON and no
child process."""
import errno
import json
import os
import subprocess
import sys

import pytest
import torch

import hyperoffload.torch as ho
from hyperoffload import _header, _planner, binding
from hyperoffload._plan_decls import DECLS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "python")
MIB = 1 << 20


def chain(layers=8, name="chain"):
    """Weights of 16 MiB read in turn by a chain of 2 ms operators."""
    tensors = [{"id": "x0", "bytes": MIB, "kind": "activation", "live_in": True,
                "live_out": False}]
    ops = []
    for i in range(layers):
        tensors += [{"id": f"w{i}", "bytes": 16 * MIB, "kind": "weight"},
                    {"id": f"x{i + 1}", "bytes": MIB, "kind": "activation"}]
        ops.append({"id": f"layer{i}", "compute_ns": 2000000,
                    "inputs": [f"x{i}", f"w{i}"], "outputs": [f"x{i + 1}"],
                    "gemm": {"m": 1, "n": 2048, "k": 2048}})
    return {"format": "hyper-graph", "version": 1, "name": name, "tensors": tensors, "ops": ops}


def test_plan_decls_match_header():
    path = os.path.join(ROOT, "include", "hyper", "plan.h")
    assert _header.parse(_header.read(path)) == DECLS, \
        "plan.h changed: regenerate python/hyperoffload/_plan_decls.py " \
        "(python3 -m hyperoffload._header include/hyper/plan.h)"


@pytest.fixture
def no_subprocess(monkeypatch):
    """Any attempt to start a process fails the test."""
    def refuse(*a, **kw):
        raise AssertionError(f"a process was started: {a!r}")
    for name in ("run", "Popen", "call", "check_call", "check_output"):
        monkeypatch.setattr(subprocess, name, refuse)
    for name in ("fork", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)


def test_plan_in_process(no_subprocess):
    g = chain()
    with _planner.plan(g, policy="none") as base:
        peak = base.predicted["peak_device_bytes"]
        assert base.predicted["policy"] == "none"
    assert peak >= 8 * 16 * MIB
    budget = peak // 2
    with _planner.plan(g, budget_bytes=budget) as p:
        assert isinstance(p.schedule, binding.Schedule)
        info = p.schedule.info()
        assert info["name"] == "chain"
        assert info["nr_steps"] == 8 and info["nr_tensors"] == 17
        assert info["budget_bytes"] == budget
        assert p.predicted["peak_device_bytes"] <= budget
        assert info["pred_peak_device_bytes"] == p.predicted["peak_device_bytes"]
        # the arena the schedule carries, and that it fits the budget
        assert p.predicted["arena_over"] is False
        assert info["arena_bytes"] == p.predicted["arena_bytes"] <= budget
        assert p.schedule.step(0)["gemm"] == (1, 2048, 2048)
        assert p.schedule.tensor(p.schedule.find("w7"))["kind"] == "weight"
        handle = p.schedule.handle
    assert handle and p.schedule._ptr is None     # freed when the with block ends
    with pytest.raises(binding.HyperError):
        p.schedule.info()
    # libhyperplan's libhyper is the binding's, found by its soname: the
    # schedule is made and freed by one library.
    with open("/proc/self/maps", encoding="utf-8") as f:
        libs = {ln.split()[-1] for ln in f if "/libhyper.so" in ln}
    assert len(libs) == 1, libs


def test_profile_measured_in_process(no_subprocess):
    """This machine's profile comes from hyper_plan_profile_measure(), not
    from the hyper-plan CLI: no process is started, even the first time."""
    _planner._PROFILE.clear()
    prof = _planner.machine_profile()
    assert prof["name"] == "this-machine"
    assert prof["x-engine"] == "worker"           # libhyper's shmem default
    assert "with SGEMM running" in prof["desc"]
    for k in ("device_bytes", "mem_bytes_per_s", "flops", "h2d_bytes_per_s",
              "d2h_bytes_per_s", "x-h2d_alone_bytes_per_s", "x-d2h_alone_bytes_per_s"):
        assert prof[k] > 0, k
    assert prof["latency_ns"] >= 0
    # The file plans read is the same profile, and the planner takes it.
    with open(_planner._measured_profile(), encoding="utf-8") as f:
        assert json.load(f) == prof
    with _planner.plan(chain(2)) as p:
        assert p.predicted["makespan_ns"] > 0
    alone = _planner.measure_profile(copy="uring", compute_cpu=0, alone=True,
                                     link_bytes=MIB, runs=3)
    assert alone["x-engine"] == "uring" and "alone" in alone["desc"]
    assert alone["h2d_bytes_per_s"] == alone["x-h2d_alone_bytes_per_s"]


@pytest.mark.parametrize("kw, msg", [
    ({"compute_cpu": 4096}, "hyper_plan_measure_opts: compute CPU 4096 is not one this process "
     f"may run on (this machine has CPUs 0 to {os.cpu_count() - 1})"),
    ({"copy_cpu": 4096}, "measuring the link: the copy engine (hyper_copy_opts): copy CPU 4096 "
     f"is not one this process may run on (this machine has CPUs 0 to {os.cpu_count() - 1})"),
    ({"copy": "uring", "copy_cpu": 0}, "measuring the link: the copy engine (hyper_copy_opts): "
     "workers, CPUs, nt_bytes and spin_ns are for the worker and sqpoll engines"),
    ({"link_bytes": 4097}, "hyper_plan_measure_opts: link_bytes 4097: give a multiple of 4 KiB "
     "from 4 KiB to 1 GiB, or 0 for 16 MiB"),
    ({"runs": 500}, "hyper_plan_measure_opts: runs 500: give 1 to 101, or 0 for 7"),
    ({"copy": "dma"}, "copy engine 'dma': use one of default, uring, sqpoll, worker"),
])
def test_profile_measure_bad_input(kw, msg):
    with pytest.raises(ho.PlanError) as e:
        _planner.measure_profile(**kw)
    assert e.value.errno == errno.EINVAL
    assert str(e.value) == msg


def test_torch_plan_in_process(no_subprocess):
    m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64))
    x = torch.randn(2, 64)
    p = ho.plan(m, (x,), budget_ratio=0.7, runs=1)
    assert p.predicted["peak_device_bytes"] <= 0.7 * p.baseline_peak_bytes + 1
    r = ho.offload(m, (x,), backend="shmem", plan_=p)
    p.close()                      # the context holds its own reference
    with pytest.raises(binding.HyperError):
        p.schedule.info()
    with r, torch.no_grad():
        assert torch.equal(r(x), m(x))


def test_planner_error_is_plan_error():
    with pytest.raises(ho.PlanError) as e:
        _planner.plan(chain(), budget_bytes=1000, profile="h100-pcie")
    assert e.value.errno == errno.EINVAL
    assert str(e.value) == ('budget 1000 B (1000 bytes) is below the working set of op '
                            '"layer0": 18.00 MiB (18874368 bytes) must be resident while it runs')
    g = chain()
    g["tensors"].append({"id": "w0", "bytes": 1, "kind": "weight"})
    with pytest.raises(ho.PlanError) as e:
        _planner.plan(g, profile="h100-pcie")
    assert e.value.errno == errno.EINVAL
    assert 'duplicate id "w0"' in str(e.value)
    with pytest.raises(ho.PlanError) as e:
        _planner.plan(chain(), profile="no-such-profile")
    assert "no-such-profile" in str(e.value)
    with pytest.raises(ho.PlanError) as e:
        _planner.plan(dict(chain(), profile="gh200"), profile="h100-pcie")
    assert "pass profile='gh200'" in str(e.value)
    with pytest.raises(ho.PlanError) as e:
        _planner.plan(dict(chain(), extra=1), profile="h100-pcie")
    assert str(e.value) == "graph: unknown key 'extra' (graph-format.md)"


def test_libhyperplan_not_found():
    code = ("import torch, hyperoffload.torch as ho\n"
            "try:\n"
            "    ho.plan(torch.nn.Linear(4, 4), (torch.randn(2, 4),), budget_ratio=1.0, runs=1,\n"
            "            profile='h100-pcie')\n"
            "except ho.LibraryNotFound as e:\n"
            "    print(type(e).__name__, e.errno, e)\n")
    env = dict(os.environ, PYTHONPATH=PKG,
               HYPEROFFLOAD_LIBHYPERPLAN="/nonexistent/libhyperplan.so.1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == (f"LibraryNotFound {errno.ENOENT} libhyperplan not found (tried "
                   "/nonexistent/libhyperplan.so.1): build it with `make`, install it with "
                   "`make install`, or set HYPEROFFLOAD_LIBHYPERPLAN to the path of "
                   "libhyperplan.so.1")


def test_libhyperplan_too_old():
    """A library without the functions of this package's header is named, with
    what it lacks, before any call: not an AttributeError later."""
    other = os.path.join(os.path.dirname(PKG), "build", "lib", "libhyper.so.1")
    code = ("from hyperoffload import _planner\n"
            "try:\n"
            "    _planner.library()\n"
            "except _planner.binding.LibraryNotFound as e:\n"
            "    print(type(e).__name__, e.errno, e)\n")
    env = dict(os.environ, PYTHONPATH=PKG, HYPEROFFLOAD_LIBHYPERPLAN=other)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out.startswith(f"LibraryNotFound {errno.ENOENT} {other} is not the libhyperplan "
                          "this package was made for: it lacks hyper_plan_"), out
    assert out.endswith("more; build this tree's with `make`, install it with `make install`, "
                        "or set HYPEROFFLOAD_LIBHYPERPLAN to a libhyperplan.so.1 of this "
                        "version"), out
