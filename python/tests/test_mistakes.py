# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every mistake gets one line: the CLI and the ONNX tool exit 1 with one
line on stderr and no traceback, the API raises a typed exception, and
nothing is left behind.  The ONNX importer folds shape computations."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import hyperoffload.torch as ho
from hyperoffload import _planner
from hyperoffload import onnx as ho_onnx
from hyperoffload.binding import process_resources
from zoo import ZOO

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.dirname(os.path.abspath(__file__))


def run(*args):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join([PY, TESTS])))


def one_line(out, want_start):
    assert out.returncode == 1, out
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(want_start), out.stderr
    return lines[0]


def factory(tmp_path, body):
    f = tmp_path / "f.py"
    f.write_text(body)
    return f"{f}:make"


@pytest.mark.parametrize("name, ratio", [("dict_out", "0.7"), ("buffer_update", "1.0")])
def test_cli_zoo_model(tmp_path, name, ratio):
    """A dict output (cli.same) and a module writing state in forward."""
    spec = factory(tmp_path, "from zoo import ZOO\n"
                             f"def make():\n    m, x, _ = ZOO[{name!r}]()\n    return m, x\n")
    out = run("hyperoffload.torch", "run", spec, "--budget-ratio", ratio, "--backend", "shmem",
              "--runs", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == \
        "outputs: identical to module(*inputs) (torch.equal), every run"


def test_cli_budget_ratio_above_one(tmp_path):
    spec = factory(tmp_path, "import torch\n"
                             "def make():\n    return torch.nn.Linear(4, 4), (torch.randn(2, 4),)\n")
    line = one_line(run("hyperoffload.torch", "run", spec, "--budget-ratio", "1.5"),
                    "hyperoffload: budget_ratio must be in (0, 1] (got 1.5)")
    assert "fraction of the all-resident peak" in line


def test_cli_factory_raises(tmp_path):
    spec = factory(tmp_path, "def make():\n    raise RuntimeError('no weights here')\n")
    one_line(run("hyperoffload.torch", "run", spec),
             f"hyperoffload: {spec}: FACTORY() raised RuntimeError: no weights here")


def test_cli_factory_returns_junk(tmp_path):
    spec = factory(tmp_path, "def make():\n    return 3\n")
    one_line(run("hyperoffload.torch", "run", spec),
             f"hyperoffload: {spec}: FACTORY() must return (module, example_inputs), got int")


def test_cli_json_into_missing_folder(tmp_path):
    spec = factory(tmp_path, "import torch\n"
                             "def make():\n    return torch.nn.Linear(4, 4), (torch.randn(2, 4),)\n")
    one_line(run("hyperoffload.torch", "run", spec, "--json", str(tmp_path / "no" / "r.json")),
             f"hyperoffload: --json {tmp_path}/no/r.json: no such folder {tmp_path}/no")
    assert not (tmp_path / "no").exists()


def test_budget_bytes_past_64_bits():
    before = process_resources()
    with pytest.raises(ho.PlanError) as e:
        ho.plan(torch.nn.Linear(4, 4), (torch.randn(2, 4),), budget_bytes=2**70, runs=1)
    assert str(e.value) == (f"budget_bytes {2**70} does not fit in 64 bits (at most "
                            f"{2**64 - 1}); give the device's real size")
    with pytest.raises(ho.PlanError):
        _planner.plan({"format": "hyper-graph", "version": 1, "tensors": [], "ops": []},
                      budget_bytes=2**64)
    assert process_resources() == before


@pytest.mark.parametrize("kw, msg", [
    ({"budget_ratio": 0.0}, "budget_ratio must be in (0, 1] (got 0.0)"),
    ({"budget_ratio": float("nan")}, "budget_ratio must be in (0, 1] (got nan)"),
    ({"budget_ratio": True}, "budget_ratio must be a number in (0, 1] (got bool)"),
    ({"budget_bytes": 1.5e9}, "budget_bytes must be an integer number of bytes (got float)"),
    ({"budget_bytes": -1}, "budget_bytes must be positive (got -1)"),
])
def test_bad_budgets(kw, msg):
    with pytest.raises(ValueError) as e:
        ho.plan(torch.nn.Linear(4, 4), (torch.randn(2, 4),), runs=1, **kw)
    assert str(e.value).startswith(msg) and "\n" not in str(e.value)


def test_arena_over_budget_refused():
    """Residency fits, the arena (64-byte granules) does not: refused, not run over."""
    before = process_resources()
    with pytest.raises(ho.PlanError) as e:
        ho.plan(torch.nn.Linear(4, 4), (torch.randn(2, 4),), budget_bytes=144, runs=1)
    msg = str(e.value)
    assert msg.startswith("budget 144 B: the schedule's device arena needs ") and \
        "give a budget of at least" in msg and "\n" not in msg
    assert process_resources() == before


# ---- ONNX ------------------------------------------------------------------------

def export(m, x, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, x, str(path), input_names=[f"x{i}" for i in range(len(x))])


def test_onnx_output_into_missing_folder(tmp_path):
    export(torch.nn.Linear(4, 4), (torch.randn(2, 4),), tmp_path / "m.onnx")
    out = run("hyperoffload.onnx", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "no" / "g.json"))
    one_line(out, f"hyperoffload.onnx: -o {tmp_path}/no/g.json: no such folder {tmp_path}/no "
                  f"(create it first)")
    assert not (tmp_path / "no").exists()


def test_onnx_output_is_a_folder(tmp_path):
    export(torch.nn.Linear(4, 4), (torch.randn(2, 4),), tmp_path / "m.onnx")
    one_line(run("hyperoffload.onnx", str(tmp_path / "m.onnx"), "-o", str(tmp_path)),
             f"hyperoffload.onnx: -o {tmp_path}: Is a directory")


def test_onnx_dtypes():
    from onnx import TensorProto
    assert ho_onnx.np_dtype(TensorProto.FLOAT) == np.float32
    assert ho_onnx.np_dtype(TensorProto.INT64) == np.int64
    assert ho_onnx.np_dtype(TensorProto.FLOAT16) == np.float16


def test_onnx_vit_reshape_folded(tmp_path):
    """torch's export of ``B, N, C = x.shape`` leaves Reshape shapes to a
    Shape -> Gather -> Concat chain; folded, every output has its shape."""
    m, x, _ = ZOO["vit"]()
    export(m, x, tmp_path / "vit.onnx")
    og = ho_onnx.import_onnx(str(tmp_path / "vit.onnx"))
    reshapes = [n for n in og.nodes if n.op_type == "Reshape"]
    assert reshapes and {og.shapes[n.outputs[0]][0] for n in reshapes} == \
        {(2, 32, 16), (2, 17, 3, 4, 8), (2, 17, 32)}
    assert not any(n.op_type == "Shape" for n in og.nodes)
    with _planner.plan(og.graph, policy="none") as p:
        assert p.predicted["peak_device_bytes"] > sum(
            t["bytes"] for t in og.graph["tensors"] if t["kind"] == "weight") // 2


class ShapeUser(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 128)
        self.b = torch.nn.Linear(128, 32)

    def forward(self, x):
        B, N, C = x.shape
        h = torch.relu(self.a(x.reshape(B * N, C)))
        return self.b(h).reshape(B, N, -1).transpose(0, 1)


@pytest.mark.parametrize("ratio", [1.0, 0.8])
def test_onnx_folded_shapes_run(tmp_path, ratio):
    """The folded graph computes what torch does (numpy kernels: tolerance)."""
    torch.manual_seed(3)
    m = ShapeUser().eval()
    x = torch.randn(3, 5, 32)
    export(m, (x,), tmp_path / "s.onnx")
    with torch.no_grad():
        want = m(x).numpy()
    og = ho_onnx.import_onnx(str(tmp_path / "s.onnx"))
    assert "Constant" in {n.op_type for n in og.nodes}
    before = process_resources()
    with _planner.plan(og.graph, policy="none") as base:
        peak = base.predicted["arena_bytes"]
    with _planner.plan(og.graph, budget_bytes=int(ratio * peak)) as p, \
            ho_onnx.OnnxRunner(og, p.schedule, "shmem") as r:
        got, = r(x.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert process_resources() == before
