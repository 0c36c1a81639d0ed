# SPDX-License-Identifier: LGPL-2.1-or-later
"""ONNX round trip: torch.onnx.export, import, plan, run under libhyper.

The ONNX graph runs on numpy kernels (MatMul/Gemm through numpy's BLAS
call, its own softmax), not torch's, so outputs are compared with a stated
tolerance: rtol 1e-5, atol 1e-6 (float32).
"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from hyperoffload import _planner
from hyperoffload import onnx as ho_onnx
from hyperoffload.binding import process_resources

RTOL, ATOL = 1e-5, 1e-6


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 256)
        self.b = torch.nn.Linear(256, 256)
        self.c = torch.nn.Linear(256, 16)

    def forward(self, x):
        h = torch.relu(self.b(torch.tanh(self.a(x))))
        return torch.softmax(self.c(h), -1), h.transpose(0, 1)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch.manual_seed(0)
    m = Small().eval()
    x = torch.randn(8, 64)
    path = str(tmp_path_factory.mktemp("onnx") / "small.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x,), path, input_names=["x"], output_names=["y", "h"])
    with torch.no_grad():
        ref = [t.numpy() for t in m(x)]
    return path, x.numpy(), ref


def test_import_graph(exported):
    path, _, _ = exported
    og = ho_onnx.import_onnx(path)
    g = og.graph
    assert g["format"] == "hyper-graph" and g["version"] == 1
    kinds = {t["id"]: t["kind"] for t in g["tensors"]}
    assert kinds["a.weight"] == "weight" and kinds["x"] == "activation"
    sizes = {t["id"]: t["bytes"] for t in g["tensors"]}
    assert sizes["a.weight"] == 256 * 64 * 4 and sizes["y"] == 8 * 16 * 4
    gemm = [o for o in g["ops"] if o["id"].endswith("Gemm")]
    assert [o["x-flops"] for o in gemm] == [2 * 8 * 256 * 64, 2 * 8 * 256 * 256,
                                           2 * 8 * 16 * 256]


@pytest.mark.parametrize("ratio", [1.0, 0.8])
def test_round_trip(exported, ratio):
    path, x, ref = exported
    before = process_resources()
    og = ho_onnx.import_onnx(path)
    with _planner.plan(og.graph, policy="none") as base:
        peak = base.predicted["peak_device_bytes"]
    with _planner.plan(og.graph, budget_bytes=int(ratio * peak)) as planned, \
            ho_onnx.OnnxRunner(og, planned.schedule, "shmem") as r:
        for _ in range(2):
            out = r(x)
            for got, want in zip(out, ref):
                np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        st = r.stats
        assert st["peak_resident_bytes"] <= int(ratio * peak)
        if ratio < 1:
            assert st["bytes_prefetched"] > 0
    assert process_resources() == before


def test_cli_writes_graph(exported, tmp_path):
    path, _, _ = exported
    out = tmp_path / "graph.json"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ho_onnx.__file__)))
    subprocess.run([sys.executable, "-m", "hyperoffload.onnx", path, "-o", str(out)],
                   check=True, env=env, capture_output=True)
    g = json.loads(out.read_text())
    want = ho_onnx.import_onnx(path).graph
    # compute_ns follows each process's own measured profile; the rest is exact.
    assert g["tensors"] == want["tensors"]
    assert [(o["id"], o["inputs"], o["outputs"]) for o in g["ops"]] == \
        [(o["id"], o["inputs"], o["outputs"]) for o in want["ops"]]
