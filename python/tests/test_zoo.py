# SPDX-License-Identifier: LGPL-2.1-or-later
"""The model zoo (tests/zoo/) at budget ratios 1.0, 0.7 and 0.5 on shmem.

Each model is planned on its example inputs, then called twice on them
and once on other inputs of the same shapes, beside an eager copy of the
module made before capture: outputs and the module's state (parameters
and buffers) must be torch.equal after every call, so capture itself may
change nothing either.  The measured peak device bytes must be within 5%
of the schedule's peak, at most 5% above the planner's prediction, and
never above the budget; nothing may be left open.  Models that must be refused raise the typed exception with a
one-line message.
"""
import copy
import re

import pytest
import torch

import hyperoffload.torch as ho
from hyperoffload import _planner
from hyperoffload.binding import process_resources
from hyperoffload.capture import capture
from zoo import REFUSED, ZOO

RATIOS = [1.0, 0.7, 0.5]
PEAK_TOLERANCE = 0.05


def same(a, b):
    """torch.equal on every tensor; containers of the same type and keys."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def state_diff(a: torch.nn.Module, b: torch.nn.Module):
    """The first parameter or buffer that differs between two modules, or None."""
    sa, sb = a.state_dict(), b.state_dict()
    if sa.keys() != sb.keys():
        return "keys"
    for k in sa:
        if not torch.equal(sa[k], sb[k]):
            return k
    return None


def plan(module, x, ratio):
    """ho.plan(), but a failure that is libhyperplan's known non-monotonicity
    (this budget: "no schedule meets the goal"; a smaller one plans) is
    reported as such (xfail, with both budgets), not hidden."""
    cap = capture(module, x, runs=1)
    try:
        return ho.plan_captured(cap, budget_ratio=ratio)
    except ho.PlanError as e:
        if "no schedule meets the goal" not in str(e):
            raise
        with _planner.plan(cap.graph(), policy="none") as base:
            budget = max(1, int(ratio * (base.predicted["arena_bytes"] or
                                         base.predicted["peak_device_bytes"])))
        for f in (0.95, 0.9, 0.8, 0.7):
            try:
                ho.plan_captured(cap, budget_bytes=int(budget * f)).close()
            except ho.PlanError:
                continue
            pytest.xfail(f"libhyperplan is not monotonic in the budget: {budget} B gives "
                         f"'{e}', {int(budget * f)} B plans")
        raise


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo(name, ratio):
    module, x, other = ZOO[name]()
    eager = copy.deepcopy(module)
    before = process_resources()
    with plan(module, x, ratio) as p:
        assert state_diff(module, eager) is None, "capture changed the module's state"
        pred = p.predicted["peak_device_bytes"]
        # The schedule's own peak (its residency, validated): what the run
        # holds, alignment aside.  The planner's replay on the profile can
        # be higher (a store it times as still in flight), never lower.
        sched_peak = p.schedule.info()["peak_device_bytes"]
        assert sched_peak <= pred
        assert pred <= p.budget_bytes and p.arena_bytes <= p.budget_bytes
        peaks = []
        with ho.offload(module, x, plan_=p, backend="shmem") as r:
            for call, inputs in enumerate((x, x, other)):
                with torch.no_grad():
                    want = eager(*inputs)
                got = r(*inputs)
                assert same(want, got), f"call {call}: outputs differ from eager"
                diff = state_diff(module, eager)
                assert diff is None, f"call {call}: state {diff!r} differs from eager"
                st = r.stats
                peak = st["peak_device_bytes"]
                peaks.append(peak)
                assert peak <= (1 + PEAK_TOLERANCE) * min(pred, sched_peak), \
                    f"call {call}: measured peak {peak} B, predicted {pred} B, the " \
                    f"schedule's {sched_peak} B"
                assert peak <= p.budget_bytes, \
                    f"call {call}: measured peak {peak} B above the budget {p.budget_bytes} B"
                assert st["peak_resident_bytes"] <= p.budget_bytes
            # The run holds what the schedule holds: its residency (the
            # schedule's state machine, whatever the timing) reaches the
            # schedule's peak.  The arena's high-water mark can stay lower
            # on a loaded machine (a prefetch libhyper defers behind a store
            # still in flight takes its place later), so it is only bounded
            # from above.
            held = r.stats["peak_resident_bytes"]
            assert held >= (1 - PEAK_TOLERANCE) * sched_peak, \
                f"measured residency {held} B (arena peaks {peaks} B), the " \
                f"schedule's {sched_peak} B"
    assert process_resources() == before


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_zoo_refused(name):
    factory, exc, pattern = REFUSED[name]
    module, x, _ = factory()
    eager = copy.deepcopy(module)
    before = process_resources()
    with pytest.raises(getattr(ho, exc)) as e:
        ho.plan(module, x, budget_ratio=1.0, runs=1)
    msg = str(e.value)
    assert "\n" not in msg and re.search(pattern, msg), msg
    assert state_diff(module, eager) is None
    assert process_resources() == before


@pytest.mark.parametrize("name", ["bert", "unet", "mobilenet"])
def test_weights_bound_in_place_within_the_peak(name):
    """All-resident, weights are bound in place (no copy per call) as far
    as that keeps the schedule's peak: bound bytes count for the whole run."""
    module, x, _ = ZOO[name]()
    with ho.plan(module, x, budget_ratio=1.0, runs=1) as p, \
            ho.Offloaded(p, "shmem", baseline=True) as r:
        r(*x)
        st = r.stats
        sched_peak = p.baseline.info()["peak_device_bytes"]
        assert st["bound_weight_bytes"] > 0
        assert sched_peak <= st["peak_device_bytes"] <= (1 + PEAK_TOLERANCE) * sched_peak
