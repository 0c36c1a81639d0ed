# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every bad input of issue 16 gets its exact message, and leaves no pool
memfd, io_uring (registered buffers), /dev/hyper file or pool mapping
behind (process_resources() before and after)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import hyperoffload.torch as ho
from hyperoffload import onnx as ho_onnx
from hyperoffload.binding import HyperError, process_resources
from hyperoffload.models import ConfigError, build, load_config

PKG = os.path.dirname(os.path.dirname(os.path.abspath(ho.__file__)))


@pytest.fixture(autouse=True)
def nothing_left():
    before = process_resources()
    yield
    assert process_resources() == before, "libhyper resources left behind"


class Gate(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.gate = Gate()

    def forward(self, x):
        return self.gate(self.lin(x))


def test_untraceable_module():
    with pytest.raises(ho.CaptureError) as e:
        ho.plan(Branchy(), (torch.randn(2, 4),))
    assert str(e.value) == (
        "cannot capture Branchy: in module 'gate' (Gate), after node 'gt': symbolically "
        "traced variables cannot be used as inputs to control flow (Python control flow on "
        "a tensor's value: make it static, use torch.where, or run that part outside the "
        "captured module)")


def test_wrong_input_shape_at_run_time():
    m = torch.nn.Linear(4, 4)
    with ho.offload(m, (torch.randn(2, 4),), budget_ratio=1.0, backend="shmem", runs=1) as r:
        with pytest.raises(ho.InputError) as e:
            r(torch.randn(3, 4))
        assert str(e.value) == (
            "input 0 ('input_1'): shape (3, 4) torch.float32 does not match the planned "
            "(2, 4) torch.float32; plan again with inputs of this shape")
        x = torch.randn(2, 4)
        with torch.no_grad():
            assert torch.equal(r(x), m(x))       # still usable after the error


def test_budget_below_largest_operator():
    with pytest.raises(ho.PlanError) as e:
        ho.plan(torch.nn.Linear(64, 64), (torch.randn(2, 64),), budget_bytes=1000, runs=1)
    assert str(e.value) == (
        'budget 1000 B (1000 bytes) is below the working set of op "linear": '
        "17.25 KiB (17664 bytes) must be resident while it runs")


def test_kmod_backend_missing():
    if os.path.exists("/dev/hyper0"):
        pytest.skip("hyper.ko is loaded here")
    with pytest.raises(HyperError) as e:
        ho.offload(torch.nn.Linear(4, 4), (torch.randn(2, 4),), budget_ratio=1.0,
                   backend="kmod", runs=1)
    assert str(e.value) == ("hyper_open (backend kmod): No such file or directory "
                            "(is hyper.ko loaded and the device present?)")


def test_libhyper_not_found():
    code = ("import torch, hyperoffload.torch as ho\n"
            "try:\n"
            "    ho.offload(torch.nn.Linear(4, 4), (torch.randn(2, 4),), budget_ratio=1.0)\n"
            "except ho.HyperError as e:\n"
            "    print(type(e).__name__, e)\n")
    env = dict(os.environ, PYTHONPATH=PKG, HYPEROFFLOAD_LIBHYPER="/nonexistent/libhyper.so.1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == ("LibraryNotFound libhyper not found (tried /nonexistent/libhyper.so.1): "
                   "build it with `make`, install it with `make install`, or set "
                   "HYPEROFFLOAD_LIBHYPER to the path of libhyper.so.1")


# ---- ONNX -------------------------------------------------------------------

def _save(model, path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onnx.save_model(model, str(path), **kw)
    return str(path)


def _mlp():
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4],
                           np.full(16, 0.5, dtype=np.float32).tobytes(), raw=True)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [w])
    return helper.make_model(g)


def test_onnx_truncated(tmp_path):
    path = _save(_mlp(), tmp_path / "m.onnx")
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[:len(data) // 2])
    with pytest.raises(ho_onnx.OnnxError) as e:
        ho_onnx.import_onnx(path)
    assert str(e.value) == (f"{path}: not an ONNX model, or truncated "
                            "(Error parsing message with type 'onnx.ModelProto')")


def test_onnx_unsupported_op(tmp_path):
    g = helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="fancy",
                                            domain="com.example")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.example", 1)])
    path = _save(m, tmp_path / "m.onnx")
    with pytest.raises(ho_onnx.OnnxError) as e:
        ho_onnx.import_onnx(path)
    assert str(e.value) == (f"{path}: node 0 ('fancy', op FancyOp): unsupported op "
                            "'FancyOp' in domain 'com.example': not an ONNX operator, so its "
                            "output shapes are unknown")


def test_onnx_no_shape(tmp_path):
    g = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"], name="nz")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    path = _save(helper.make_model(g), tmp_path / "m.onnx")
    with pytest.raises(ho_onnx.OnnxError) as e:
        ho_onnx.import_onnx(path)
    assert str(e.value) == (f"{path}: node 0 ('nz', op NonZero): output 'y' has no shape "
                            "information (give it a static shape in value_info)")


def test_onnx_control_flow(tmp_path):
    branch = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "b", [],
                               [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 4])])
    node = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=branch,
                            else_branch=branch)
    g = helper.make_graph([node], "g",
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
    path = _save(helper.make_model(g), tmp_path / "m.onnx")
    with pytest.raises(ho_onnx.OnnxError) as e:
        ho_onnx.import_onnx(path)
    assert str(e.value) == (f"{path}: node 0 ('branch', op If): control-flow subgraphs are "
                            "not supported (a static schedule needs one path through the graph)")


def test_onnx_missing_external_data(tmp_path):
    path = _save(_mlp(), tmp_path / "m.onnx", save_as_external_data=True,
                 all_tensors_to_one_file=True, location="m.data", size_threshold=0)
    os.unlink(tmp_path / "m.data")
    with pytest.raises(ho_onnx.OnnxError) as e:
        ho_onnx.import_onnx(path)
    assert str(e.value) == (f"{path}: external data of initializer 'w' is missing: "
                            f"{tmp_path / 'm.data'} (keep the data file next to the model)")


# ---- config.json ------------------------------------------------------------

def test_config_unknown_key(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"model_type": "llama", "hiden_size": 64}')
    with pytest.raises(ConfigError) as e:
        build(str(p))
    assert str(e.value) == (
        f"{p}: unknown key 'hiden_size' for model_type 'llama' (known: head_dim, hidden_act, "
        "hidden_size, intermediate_size, max_position_embeddings, num_attention_heads, "
        "num_experts_per_tok, num_hidden_layers, num_key_value_heads, num_local_experts, "
        "rms_norm_eps, rope_theta, sliding_window, tie_word_embeddings, vocab_size)")


def test_config_impossible_shape(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"hidden_size": 100, "num_attention_heads": 3}')
    with pytest.raises(ConfigError) as e:
        build(str(p))
    assert str(e.value) == (f"{p}: hidden_size 100 is not divisible by num_attention_heads 3; "
                            "set head_dim")
    # With head_dim the same shape is valid.
    cfg = load_config({"hidden_size": 100, "num_attention_heads": 3, "head_dim": 32})
    assert cfg.head_dim == 32


def test_config_defaults():
    cfg = load_config({"model_type": "gpt2"})
    assert (cfg.tie_word_embeddings, cfg.hidden_act, cfg.num_key_value_heads) == \
        (True, "gelu", cfg.num_attention_heads)
