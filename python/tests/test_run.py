# SPDX-License-Identifier: LGPL-2.1-or-later
"""Planned runs on the shmem backend give exactly module(*inputs).

Every operator either writes through an out= kernel that capture checked
to be bit-identical, or runs its own kernel and is copied: so the test
demands torch.equal, no tolerance.
"""
import pytest
import torch

import hyperoffload.torch as ho
from hyperoffload.binding import process_resources
from hyperoffload.capture import capture
from helpers import MODELS, model, same

RATIOS = [1.0, 0.7, 0.5]
KEYS = {"peak_device_bytes", "baseline_peak_bytes", "bytes_prefetched", "bytes_stored",
        "stall_ns", "wall_ns", "steps"}


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("name", MODELS)
def test_outputs_equal(name, ratio):
    m, x, ref = model(name)
    before = process_resources()
    p = ho.plan(m, x, budget_ratio=ratio, runs=1)
    assert set(p.predicted) == {"peak_device_bytes", "baseline_peak_bytes", "stall_ns",
                                "makespan_ns"}
    assert p.predicted["peak_device_bytes"] <= ratio * p.predicted["baseline_peak_bytes"] + 1
    with ho.offload(m, x, plan_=p, backend="shmem") as r:
        assert r.backend == "shmem"
        for _ in range(2):               # a second call rewinds and runs again
            y = r(*x)
            assert same(ref, y)
        st = r.stats
        assert KEYS <= set(st)
        assert st["steps"] == len(p.captured.ops)
        assert st["peak_resident_bytes"] <= p.budget_bytes
        if ratio < 1.0:
            assert st["bytes_prefetched"] > 0
    assert process_resources() == before


def test_new_inputs_same_shape():
    m, x, _ = model("llama-tiny")
    other = (torch.randint(0, m.cfg.vocab_size, x[0].shape, generator=torch.Generator().manual_seed(7)),)
    with torch.no_grad():
        want = m(*other)
    with ho.offload(m, x, budget_ratio=0.6, backend="shmem", runs=1) as r:
        assert same(want, r(*other))


def test_plain_module_with_inplace_and_multi_output():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(16, 16)

        def forward(self, x):
            h = self.lin(x)
            h.add_(1.0)
            top = torch.topk(h, 4, dim=-1)
            return top[0] * 2, top[1], h.relu()

    torch.manual_seed(1)
    m = M().eval()
    x = (torch.randn(8, 16),)
    with torch.no_grad():
        ref = m(*x)
    with ho.offload(m, x, budget_ratio=1.0, backend="shmem", runs=1) as r:
        assert same(ref, r(*x))


def test_weights_that_are_parts_of_one_storage():
    """Weights that are views into one storage, at other offsets and
    strides than the tensor capture keeps for it: a get_attr read in a
    step (the compiled code) and as a result (node_value), and a leaf
    module's parameter (LayerNorm), each a view of its own part, whether
    the storage stays resident or is prefetched."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            big = torch.randn(4, 64)
            self.register_buffer("hi", big[2])     # kept whole: offset 128
            self.register_buffer("lo", big[0])     # a part below it
            self.register_buffer("col", big[1:4, 3])
            self.lin = torch.nn.Linear(64, 64)
            self.lin2 = torch.nn.Linear(64, 64)
            self.tail = torch.nn.Sequential(*(torch.nn.Linear(64, 64) for _ in range(4)))
            w = torch.randn(2, 64, 64)
            self.lin.weight = torch.nn.Parameter(w[1])
            self.lin2.weight = torch.nn.Parameter(w[0])
            self.n1 = torch.nn.LayerNorm(64)
            self.n2 = torch.nn.LayerNorm(64)
            g = torch.randn(2, 64)
            self.n1.weight = torch.nn.Parameter(g[1])
            self.n2.weight = torch.nn.Parameter(g[0])

        def forward(self, x):
            h = self.n2(self.lin2(self.n1(self.lin(x)) + self.hi))
            h = torch.relu(h * self.lo - self.col.sum())
            return self.tail(h), self.lo, self.col

    torch.manual_seed(2)
    m = M().eval()
    x = (torch.randn(4, 64),)
    with torch.no_grad():
        ref = m(*x)
    cap = capture(m, x, runs=1)
    assert {n: v[0] for n, v in cap.attr_views.items()} == \
        {"lin2_weight": "lin.weight", "lo": "hi", "col": "hi"}
    assert [t for o in cap.ops for _n, t, geom in o.module_tensors if geom] == ["n1.weight"]
    for ratio in RATIOS:
        with ho.offload(m, x, budget_ratio=ratio, backend="shmem", runs=1) as r:
            for _ in range(2):
                assert same(ref, r(*x))
            if ratio == RATIOS[-1]:
                assert r.stats["bytes_prefetched"] > 0


def test_steps_wait_only_for_tensors_with_transfers():
    """A step waits (ctx.wait_tensor: a CUDA context's stream waits) for
    its inputs the schedule prefetches or stores, and for no other: one
    that never moves has no transfer to wait for."""
    m, x, ref = model("llama-tiny")
    with ho.offload(m, x, budget_ratio=0.5, backend="shmem", runs=1) as r:
        run = r._runner
        sched = run.sched
        moved = {t for s in range(sched.info()["nr_steps"]) for when in ("before", "after")
                 for kind, t in sched.step(s)[when] if kind in ("prefetch", "store")}
        assert moved
        skipped = 0
        for op, waits, _prog in run.steps:
            uses = [run.index[t] for t in op.inputs]
            assert waits == tuple(i for i in uses if i in moved)
            skipped += len(uses) - len(waits)
        assert skipped > 0
        calls = []
        wait = run.ctx.wait_tensor
        run.ctx.wait_tensor = lambda i: (calls.append(i), wait(i))[1]
        assert same(ref, r(*x))
        assert calls == [i for _op, waits, _p in run.steps for i in waits]


def test_step_code_arguments():
    """Each step is compiled once into Python code: node values as locals,
    lists and slices with nodes built at each call, constants bound once,
    torch.Size passed as a plain tuple, keywords by name."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)
            self.lin2 = torch.nn.Linear(64, 64)

        def forward(self, x):
            h = self.lin2(self.lin(x))
            n = h.size(1) // 2
            a = h[:, :n]                     # a slice holding a node
            b = h[:, n:].reshape(h.shape[0], -1)
            c = torch.cat([a, b, a], dim=1)  # a list of nodes, a keyword
            d = torch.nn.functional.pad(c, [1, 1])
            e = d.view(d.size())             # torch.Size from a node
            return torch.stack((e, e * 2), 0).sum(dim=(0, 2), keepdim=True), c

    torch.manual_seed(0)
    m = M().eval()
    x = (torch.randn(3, 64),)
    with torch.no_grad():
        want = m(*x)
    for ratio in (1.0, 0.6):
        with ho.offload(m, x, budget_ratio=ratio, backend="shmem", runs=1) as r:
            for _ in range(2):
                assert same(want, r(*x))
            progs = {id(p): p for _op, _w, p in r._runner.steps}.values()
            assert all("env" not in p.source for p in progs)


def test_step_result_of_another_shape_is_refused():
    """A copied result whose shape is not the planned one is refused in
    one line, not copied over its neighbours."""
    from hyperoffload.capture import capture
    from hyperoffload.runner import InputError, _compile, run_step

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.topk(x * 2, 2).values + 1   # topk: no out= form, copied

    cap = capture(M(), (torch.randn(4, 6),), runs=1)
    op = next(o for o in cap.ops if o.kernel is None and o.fresh)
    plan = {t: torch.zeros(cap.tensors[t].shape, dtype=cap.tensors[t].dtype)
            for t in cap.tensors}
    run_step(cap, op, _compile(cap, op), plan.__getitem__)   # the planned shapes: runs
    plan[op.outputs[0]] = torch.zeros(4, 3)
    with pytest.raises(InputError, match=r"node 'topk': its result has shape \(4, 2\) where "
                                         r"the plan has \(4, 3\)"):
        run_step(cap, op, _compile(cap, op), plan.__getitem__)



def test_compiled_call_keeps_non_ascii_names():
    """A keyword or method name goes into a step's generated source only
    when it is ASCII: Python reads identifiers in source NFKC-normalised,
    so "\ufb01" (a ligature) would be read as "fi".  Others are passed
    by string, as fx's node says."""
    from hyperoffload.runner import _Gen

    name = "\ufb01"
    got = {}

    def fn(**kw):
        got.update(kw)

    class Obj:
        pass

    obj = Obj()
    setattr(obj, name, lambda: got.update(called=True))
    g = _Gen()
    src = ("def _f():\n"
           f"    {g.call(fn, False, (), {name: 1}, [])}\n"
           f"    {g.call(name, True, (obj,), {}, [])}\n")
    exec(compile(src, "<test>", "exec"), g.consts)  # noqa: S102 - the runner's own way
    g.consts["_f"]()
    assert got == {name: 1, "called": True}
