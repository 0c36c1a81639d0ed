# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared objects from Python, on the shmem backend, where every process is
a node: weights published once by one process and run from by another,
outputs torch.equal to the module's own; a KV cache handed over after the
prompt, the tokens torch.equal to a single-process run; and the refusals."""
import errno
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import hyperoffload.torch as ho
from hyperoffload.models import Decode, Prefill, build

from helpers import same

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def objects_dir(tmp_path, monkeypatch):
    """Each test's objects in a directory of its own, for its children too."""
    d = tmp_path / "objects"
    monkeypatch.setenv("HYPER_OBJECTS_DIR", str(d))
    yield d
    assert not d.exists() or not os.listdir(d), f"objects left: {os.listdir(d)}"


def other_node(code: str) -> str:
    """Run ``code`` in another process (another node); its stdout."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                         env=dict(os.environ, PYTHONPATH=PY), capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_weights_published_by_another_node():
    stored = other_node("""
        import hyperoffload.torch as ho
        from hyperoffload.models import build
        m, x = build("llama-tiny", prompt_len=8, decode_steps=3)
        print(ho.publish_weights(ho.plan(m, x, runs=1), "llama-w", backend="shmem"))
    """)
    m, x = build("llama-tiny", prompt_len=8, decode_steps=3)
    assert int(stored) == sum(p.numel() * p.element_size() for p in m.parameters()) + \
        sum(b.numel() * b.element_size() for b in m.buffers())
    with torch.no_grad():
        ref = m(*x)
    p = ho.plan(m, x, budget_ratio=0.5, runs=1)
    # This node's own weights are gone: only the object can give ref.
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            t.zero_()
    with ho.offload(m, x, plan_=p, backend="shmem", weights="llama-w") as r:
        assert same(r(*x), ref)
        assert same(r(*x), ref)                  # and again
        assert r.stats["shared_weight_bytes"] > 0
    with ho.offload(m, x, plan_=p, backend="shmem") as r:
        assert not same(r(*x), ref)
    ho.delete_object("llama-w", backend="shmem")


def test_kv_cache_handed_over():
    other_node("""
        import hyperoffload.torch as ho
        from hyperoffload.models import Prefill, build
        m, x = build("llama-tiny", prompt_len=8, decode_steps=3)
        with ho.offload(Prefill(m), x, budget_ratio=0.7, runs=1, backend="shmem") as r:
            logits, kv = r(*x)
        ho.publish_tensors("kv-0", {"kv": kv, "logits": logits}, backend="shmem")
    """)
    m, x = build("llama-tiny", prompt_len=8, decode_steps=3)
    with torch.no_grad():
        ref = m(*x)
    cfg = m.cfg
    kv_shape = (cfg.num_hidden_layers, 2, 1, cfg.num_key_value_heads, m.max_len, cfg.head_dim)
    got = ho.load_tensors("kv-0", backend="shmem",
                          like={"kv": (kv_shape, torch.float32),
                                "logits": ((1, 1, cfg.vocab_size), torch.float32)})
    with pytest.raises(ho.ObjectMismatch, match=r"tensor 'kv' is torch.float32\[.*\], expected "
                                                r"torch.float16"):
        ho.load_tensors("kv-0", backend="shmem",
                        like={"kv": (kv_shape, torch.float16), "logits": got["logits"]})
    with pytest.raises(ho.ObjectMismatch, match=r"holds \['kv', 'logits'\], expected \['kv'\]"):
        ho.load_tensors("kv-0", backend="shmem", like={"kv": got["kv"]})
    ho.delete_object("kv-0", backend="shmem")
    token = got["logits"][:, -1].argmax(-1, keepdim=True)
    with ho.offload(Decode(m), (token, got["kv"]), budget_ratio=0.7, runs=1,
                    backend="shmem") as r:
        tokens, logits = r(token, got["kv"])
    assert torch.equal(tokens, ref[0]) and torch.equal(logits, ref[1])
    # The same split in one process, eagerly: the handover changed nothing.
    with torch.no_grad():
        lg, kv = Prefill(m)(*x)
    assert torch.equal(kv, got["kv"]) and torch.equal(lg, got["logits"])


def test_refusals():
    with pytest.raises(ho.HyperError, match="not published yet, or deleted") as e:
        ho.load_tensors("no-such-object", backend="shmem")
    assert e.value.errno == errno.ENOENT
    with pytest.raises(ho.HyperError, match="give 1 to 63 characters"):
        ho.publish_tensors("bad/name", {"a": torch.ones(2)}, backend="shmem")
    ho.publish_tensors("t", {"a": torch.ones(2)}, backend="shmem")
    with pytest.raises(ho.HyperError, match="delete it first, or choose another name") as e:
        ho.publish_tensors("t", {"a": torch.ones(2)}, backend="shmem")
    assert e.value.errno == errno.EEXIST
    ho.delete_object("t", backend="shmem")

    m, x = build("llama-tiny", prompt_len=8, decode_steps=3)
    ho.publish_weights(ho.plan(m, x, runs=1), "w", backend="shmem")
    # Unknown name, another module, another dtype: refused, never run.
    with pytest.raises(ho.HyperError, match="not published yet"):
        ho.offload(m, x, runs=1, backend="shmem", weights="other")
    g, gx = build("gpt2-tiny", prompt_len=8, decode_steps=3)
    with pytest.raises(ho.ObjectMismatch, match="has no weight .*: it holds the weights of "
                                                "another module"):
        ho.offload(g, gx, runs=1, backend="shmem", weights="w")
    d = m.double()
    with pytest.raises(ho.ObjectMismatch, match=r"torch.float32\[\d+\] in shared object 'w', "
                                                r"torch.float64\[\d+\] in this module"):
        ho.offload(d, x, runs=1, backend="shmem", weights="w")
    ho.delete_object("w", backend="shmem")

    # A module that writes its buffers cannot take read-only weights.
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.register_buffer("calls", torch.zeros(1))

        def forward(self, a):
            self.calls.add_(1)
            return self.lin(a)

    c, cx = Counter(), (torch.ones(2, 8),)
    p = ho.plan(c, cx, runs=1)
    ho.publish_weights(p, "c", backend="shmem")
    with pytest.raises(ho.InputError, match=r"writes its buffers \(calls\): weights from a "
                                            r"shared object are read-only"):
        ho.offload(c, cx, plan_=p, backend="shmem", weights="c")
    ho.delete_object("c", backend="shmem")
