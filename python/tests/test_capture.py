# SPDX-License-Identifier: LGPL-2.1-or-later
"""Capture of each example model into graph format v1."""
import pytest
import torch

from hyperoffload import _planner
from hyperoffload.capture import capture
from helpers import MODELS, model


@pytest.mark.parametrize("name", MODELS)
def test_capture_model(name):
    m, x, _ = model(name)
    cap = capture(m, x, runs=1)
    g = cap.graph()
    assert g["format"] == "hyper-graph" and g["version"] == 1
    kinds = {t["kind"] for t in g["tensors"]}
    assert kinds == {"weight", "activation", "kv"}
    # Every parameter and buffer is a weight, tied ones once, at its storage size.
    params = {p.data_ptr(): p for p in list(m.parameters()) + list(m.buffers())}
    weights = [t for t in cap.tensors.values() if t.kind == "weight"]
    assert sum(t.nbytes for t in weights) == sum(p.storage().nbytes() for p in params.values())
    if m.cfg.tie_word_embeddings:
        assert m.lm_head.weight is m.embed_tokens.weight
    # Two cache tensors per layer at the start, then one more per pass.
    passes = 1 + m.decode_steps - 1
    kv = [t for t in cap.tensors.values() if t.kind == "kv"]
    assert len(kv) == 2 * m.cfg.num_hidden_layers * (1 + passes)
    cache_bytes = m.batch * m.cfg.kv_dim * m.max_len * 4
    assert all(t.nbytes == cache_bytes for t in kv)
    # Real costs: every operator measured, matrix multiplies with FLOPs and shape.
    ops = g["ops"]
    assert all(o["compute_ns"] > 0 for o in ops)
    gemms = [o for o in ops if "gemm" in o]
    assert gemms and all(o["x-flops"] == 2 * o["gemm"]["m"] * o["gemm"]["n"] * o["gemm"]["k"]
                         for o in gemms)
    # Outputs are live out, inputs live in.
    assert [t.id for t in cap.tensors.values() if t.source[0] == "input"] == ["input_ids"]
    assert sum(t["live_out"] for t in g["tensors"] if t["kind"] != "weight") == 2


@pytest.mark.parametrize("name", MODELS)
def test_planner_accepts_graph(name):
    m, x, _ = model(name)
    g = capture(m, x, runs=1).graph()
    with _planner.plan(g, policy="none") as p:
        assert p.schedule.info()["nr_steps"] == len(g["ops"])
        assert p.predicted["peak_device_bytes"] > 0
        assert p.predicted["policy"] == "none"


def test_views_own_no_memory():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 8))

        def forward(self, x):
            y = x @ self.w            # new tensor
            z = y.view(-1).view(8, 3)   # views: no tensor, no operator
            return z * 2

    cap = capture(M(), (torch.randn(3, 4),), runs=1)
    assert [o.id for o in cap.ops] == ["matmul", "mul"]
    assert cap.ops[1].inputs == ["matmul"]
    assert cap.tensors["matmul"].nbytes == 3 * 8 * 4
