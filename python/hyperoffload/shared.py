# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tensors in libhyper's shared objects: stored once in the pool, opened
by every node (with the shmem backend every process is a node; see
Documentation/supernode.md).

    import hyperoffload.torch as ho
    ho.publish_weights(plan, "llama-w")               # node A, once
    r = ho.offload(module, inputs, weights="llama-w")  # node B: no weight copy of its own
    ho.publish_tensors("kv-0", {"kv": kv})             # node A: a KV cache after the prompt
    kv = ho.load_tensors("kv-0", like={"kv": kv_spec})["kv"]   # node B, then decode

An object's directory names each tensor by id, with its dtype and shape
(``desc``); a reader gets exactly those or an error, never other bytes.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import torch

from .binding import Context, Region
from .capture import Captured, TensorSpec

__all__ = ["publish_weights", "publish_tensors", "load_tensors", "delete_object",
           "weight_desc", "ObjectMismatch"]

_DESC = re.compile(r"^torch\.(\w+)(\[[0-9, ]*\])$")


class ObjectMismatch(ValueError):
    """A shared object whose tensors are not the ones asked for."""


def weight_desc(spec: TensorSpec) -> str:
    """What a weight's directory entry says of it: its storage's dtype and
    bytes (the object holds the whole storage, as the pool copy does)."""
    return f"{spec.dtype}[{spec.nbytes // _esize(spec.dtype)}]"


def tensor_desc(t: torch.Tensor) -> str:
    """"torch.float32[1, 2, 24, 16]": dtype and shape of a contiguous tensor."""
    return f"{t.dtype}{list(t.shape)}"


def _esize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def _weights(cap: Captured) -> Dict[str, torch.Tensor]:
    return {tid: spec.source[1] for tid, spec in cap.tensors.items() if spec.source[0] == "weight"}


def publish_weights(plan_or_captured: Any, name: str, *, backend: str = "auto") -> int:
    """Store every weight of a planned (or captured) module, by its capture
    id, as the shared object ``name``; returns the bytes stored.  Modules
    planned from the same code and shapes on any node run from it with
    ``offload(..., weights=name)``."""
    cap = getattr(plan_or_captured, "captured", plan_or_captured)
    if not isinstance(cap, Captured):
        raise TypeError("publish_weights takes a Plan (hyperoffload.torch.plan) or a Captured")
    entries = []
    for tid, w in _weights(cap).items():
        spec = cap.tensors[tid]
        if w.device.type != "cpu":
            raise ValueError(f"weight {tid!r} is on {w.device}: publish from host memory")
        entries.append({"id": tid, "desc": weight_desc(spec), "kind": "weight",
                        "address": w.storage().data_ptr(), "bytes": spec.nbytes})
    if not entries:
        raise ValueError("the module has no weights to publish")
    with Context(backend) as ctx:
        ctx.object_pack(name, entries)
    return sum(e["bytes"] for e in entries)


def publish_tensors(name: str, tensors: Mapping[str, torch.Tensor], *, backend: str = "auto",
                    kind: str = "kv") -> int:
    """Store named host tensors (a KV cache, logits) as the shared object
    ``name``; returns the bytes stored."""
    entries, keep = [], []
    for tid, t in tensors.items():
        if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
            raise ValueError(f"tensor {tid!r}: a host (cpu) torch.Tensor is needed")
        if t.numel() == 0:
            raise ValueError(f"tensor {tid!r} is empty")
        c = t.detach().contiguous()
        keep.append(c)
        entries.append({"id": tid, "desc": tensor_desc(c), "kind": kind,
                        "address": c.data_ptr(), "bytes": c.numel() * c.element_size()})
    if not entries:
        raise ValueError("no tensors to publish")
    with Context(backend) as ctx:
        ctx.object_pack(name, entries)
    return sum(e["bytes"] for e in entries)


def _parse_desc(name: str, tid: str, desc: str) -> Tuple[torch.dtype, Tuple[int, ...]]:
    m = _DESC.match(desc)
    dtype = getattr(torch, m.group(1), None) if m else None
    if not isinstance(dtype, torch.dtype):
        raise ObjectMismatch(f"shared object {name!r}: tensor {tid!r} is described as {desc!r}, "
                             f"not a dtype and shape: it was not published by publish_tensors")
    return dtype, tuple(json.loads(m.group(2)))


Like = Union[torch.Tensor, Tuple[Tuple[int, ...], torch.dtype]]


def load_tensors(name: str, like: Optional[Mapping[str, Like]] = None, *,
                 backend: str = "auto") -> Dict[str, torch.Tensor]:
    """The tensors of shared object ``name``, read through libhyper's
    transfer engine (hyper_region_read) into new host tensors.  ``like``
    (id -> a tensor, or (shape, dtype)) is what the caller expects: other
    ids, dtypes or shapes raise ObjectMismatch."""
    with Context(backend) as ctx:
        obj = ctx.object_open(name)
        out: Dict[str, torch.Tensor] = {}
        for e in ctx.object_entries(obj):
            dtype, shape = _parse_desc(name, e["id"], e["desc"])
            t = torch.empty(shape, dtype=dtype)
            if t.numel() * t.element_size() != e["bytes"]:
                raise ObjectMismatch(f"shared object {name!r}: tensor {e['id']!r} has "
                                     f"{e['bytes']} bytes, not those of {e['desc']}")
            obj.read(e["offset"], t.data_ptr(), e["bytes"])
            out[e["id"]] = t
    if like is not None:
        _check_like(name, out, like)
    return out


def _check_like(name: str, got: Dict[str, torch.Tensor], like: Mapping[str, Like]) -> None:
    if set(got) != set(like):
        raise ObjectMismatch(f"shared object {name!r} holds {sorted(got)}, "
                             f"expected {sorted(like)}")
    for tid, want in like.items():
        shape, dtype = (tuple(want.shape), want.dtype) if isinstance(want, torch.Tensor) \
            else (tuple(want[0]), want[1])
        t = got[tid]
        if tuple(t.shape) != shape or t.dtype != dtype:
            raise ObjectMismatch(f"shared object {name!r}: tensor {tid!r} is {t.dtype}"
                                 f"{list(t.shape)}, expected {dtype}{list(shape)}")


def delete_object(name: str, *, backend: str = "auto") -> None:
    """Remove the name; the memory goes when the last user closes it."""
    with Context(backend) as ctx:
        ctx.object_delete(name)


def object_weights(ctx: Context, name: str, cap: Captured
                   ) -> Tuple[Region, Dict[str, torch.Tensor], Dict[str, int]]:
    """For a runner: open the weights object ``name`` and check it holds every
    weight of ``cap`` as published; returns the region and, per weight, a
    read-only view of its bytes in the object, shaped as the module's, and
    their offset in the object."""
    obj = ctx.object_open(name)
    ents = {e["id"]: e for e in ctx.object_entries(obj)}
    base = obj.map()
    views: Dict[str, torch.Tensor] = {}
    offsets: Dict[str, int] = {}
    for tid, w in _weights(cap).items():
        spec = cap.tensors[tid]
        e = ents.get(tid)
        if e is None:
            raise ObjectMismatch(f"shared object {name!r} has no weight {tid!r}: it holds the "
                                 f"weights of another module; publish this one's with "
                                 f"publish_weights")
        if e["desc"] != weight_desc(spec) or e["bytes"] != spec.nbytes:
            raise ObjectMismatch(f"weight {tid!r}: {e['desc']} in shared object {name!r}, "
                                 f"{weight_desc(spec)} in this module: not the same model")
        from .runner import _pool_view
        flat = _pool_view(base + e["offset"], spec.nbytes).view(w.dtype)
        views[tid] = flat.as_strided(tuple(w.shape), tuple(w.stride()), w.storage_offset())
        offsets[tid] = e["offset"]
    return obj, views, offsets
