# SPDX-License-Identifier: LGPL-2.1-or-later
"""ONNX import: an ONNX graph (initializers, external data, value_info
shapes) to graph format v1, and a small numpy runner for it under libhyper.

    python3 -m hyperoffload.onnx MODEL.onnx -o graph.json

Initializers are ``weight`` tensors, graph inputs live-in activations,
every node output an ``activation`` of its static size; inputs and outputs
named like a cache (``past*``, ``present*``, ``*cache*``) are ``kv``.
Shapes come from the file's value_info and ONNX shape inference; a node
whose output has no static shape, a control-flow node (a subgraph
attribute) and an op that is not an ONNX operator each get one error
naming the node.  Compute time is a roofline over this machine's measured
profile (FLOPs for MatMul and Gemm, bytes for every op, both kept as
``x-flops``/``x-bytes`` so a planner can re-time for another device).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx as _onnx
from onnx import numpy_helper, shape_inference

from . import _planner
from .binding import Context, DeviceMemory, Schedule

KV = ("past", "present", "cache")


class OnnxError(ValueError):
    """An ONNX file this importer cannot turn into a graph."""


@dataclass
class OnnxNode:
    id: str
    op_type: str
    inputs: List[str]
    outputs: List[str]
    attrs: Dict[str, Any]


@dataclass
class OnnxGraph:
    name: str
    graph: Dict[str, Any]
    nodes: List[OnnxNode]
    initializers: Dict[str, np.ndarray]
    shapes: Dict[str, Tuple[Tuple[int, ...], np.dtype]]
    inputs: List[str]
    outputs: List[str]
    ids: Dict[str, str] = field(default_factory=dict)   # ONNX name -> tensor id


def _load(path: str) -> "_onnx.ModelProto":
    try:
        model = _onnx.load(path, load_external_data=False)
    except OSError as e:
        raise OnnxError(f"{path}: {e.strerror or e}") from None
    except Exception as e:  # protobuf DecodeError and friends
        raise OnnxError(f"{path}: not an ONNX model, or truncated ({e})") from None
    if not model.graph.node:
        raise OnnxError(f"{path}: not an ONNX model, or truncated (no graph nodes)")
    base = os.path.dirname(os.path.abspath(path))
    for init in model.graph.initializer:
        if init.data_location != _onnx.TensorProto.EXTERNAL:
            continue
        loc = {e.key: e.value for e in init.external_data}.get("location", "")
        if not os.path.exists(os.path.join(base, loc)):
            raise OnnxError(f"{path}: external data of initializer {init.name!r} is missing: "
                            f"{os.path.join(base, loc)} (keep the data file next to the model)")
    try:
        _onnx.load_external_data_for_model(model, base)
    except Exception as e:
        raise OnnxError(f"{path}: cannot read external data: {e}") from None
    return model


def np_dtype(elem_type: int) -> np.dtype:
    """numpy's dtype of an ONNX element type (onnx.mapping is gone in 1.19;
    helper.tensor_dtype_to_np_dtype is not in 1.12)."""
    conv = getattr(_onnx.helper, "tensor_dtype_to_np_dtype", None)
    if conv is not None:
        return np.dtype(conv(elem_type))
    return np.dtype(_onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type])  # onnx < 1.13


# ---- constant folding of shape computations ------------------------------------
#
# An exporter writes ``B, N, C = x.shape`` as Shape -> Gather -> Concat ->
# Reshape, which ONNX shape inference leaves without a static shape (even
# with data propagation).  Where the graph's shapes are static, every such
# node computes a constant: each node whose inputs are all constants (or a
# Shape of a tensor whose shape is known) is evaluated here with numpy and
# replaced by a Constant node, then shapes are inferred again, until
# nothing more folds.  Only exact integer and copy operations are folded.

def _attr(node: Any, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            return _onnx.helper.get_attribute_value(a)
    return default


def _axes(node: Any, c: List[Optional[np.ndarray]], idx: int) -> Optional[List[int]]:
    axes = _attr(node, "axes")
    if axes is None and len(c) > idx and c[idx] is not None:
        axes = c[idx].tolist()
    return None if axes is None else [int(a) for a in axes]


def _unsqueeze(x: np.ndarray, axes: List[int]) -> np.ndarray:
    rank = x.ndim + len(axes)
    for a in sorted(a % rank for a in axes):
        x = np.expand_dims(x, a)
    return x


def _slice(node: Any, c: List[Optional[np.ndarray]]) -> np.ndarray:
    x = c[0]
    if len(c) > 1:
        starts, ends = c[1].tolist(), c[2].tolist()
        axes = c[3].tolist() if len(c) > 3 and c[3] is not None else list(range(len(starts)))
        steps = c[4].tolist() if len(c) > 4 and c[4] is not None else [1] * len(starts)
    else:
        starts, ends = _attr(node, "starts"), _attr(node, "ends")
        axes = _attr(node, "axes", list(range(len(starts))))
        steps = [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        idx[int(ax)] = slice(int(st), int(en), int(sp))
    return x[tuple(idx)]


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)  # ONNX truncates
    return a / b


def _reshape(x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    dims = [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape.tolist())]
    return x.reshape(dims)


def _expand(x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    return x * np.ones(tuple(int(d) for d in shape), dtype=x.dtype)


_FOLD = {
    "Identity": lambda n, c: c[0],
    "Cast": lambda n, c: c[0].astype(np_dtype(_attr(n, "to"))),
    "Gather": lambda n, c: np.take(c[0], c[1], axis=_attr(n, "axis", 0)),
    "Unsqueeze": lambda n, c: _unsqueeze(c[0], _axes(n, c, 1)),
    "Squeeze": lambda n, c: np.squeeze(c[0], axis=tuple(_axes(n, c, 1) or ())) if
    _axes(n, c, 1) else np.squeeze(c[0]),
    "Concat": lambda n, c: np.concatenate(c, axis=_attr(n, "axis")),
    "Slice": _slice,
    "Add": lambda n, c: c[0] + c[1],
    "Sub": lambda n, c: c[0] - c[1],
    "Mul": lambda n, c: c[0] * c[1],
    "Div": lambda n, c: _div(c[0], c[1]),
    "Neg": lambda n, c: -c[0],
    "Equal": lambda n, c: np.equal(c[0], c[1]),
    "Less": lambda n, c: np.less(c[0], c[1]),
    "Greater": lambda n, c: np.greater(c[0], c[1]),
    "Not": lambda n, c: np.logical_not(c[0]),
    "Where": lambda n, c: np.where(c[0], c[1], c[2]),
    "Max": lambda n, c: np.maximum.reduce(c),
    "Min": lambda n, c: np.minimum.reduce(c),
    "Range": lambda n, c: np.arange(c[0], c[1], c[2], dtype=c[0].dtype),
    "Reshape": lambda n, c: _reshape(c[0], c[1]),
    "Expand": lambda n, c: _expand(c[0], c[1]),
    "ConstantOfShape": lambda n, c: np.full(
        tuple(int(d) for d in c[0]),
        numpy_helper.to_array(_attr(n, "value")).reshape(-1)[0] if _attr(n, "value") is not None
        else np.float32(0)),
}
_FOLD_MAX = 1 << 16     # elements: shape computations are small


def _fold_shapes(model: Any, path: str) -> Any:
    """Shape inference, folding constant shape computations (above)."""
    for _ in range(64):
        try:
            model = shape_inference.infer_shapes(model)
        except Exception as e:
            raise OnnxError(f"{path}: shape inference failed: {e}") from None
        g = model.graph
        consts: Dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        static: Dict[str, Tuple[int, ...]] = {k: v.shape for k, v in consts.items()}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            dims = vi.type.tensor_type.shape.dim
            if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value")
                                                             for d in dims):
                static[vi.name] = tuple(d.dim_value for d in dims)
        nodes, folded = [], 0
        for n in g.node:
            vals = None
            if n.op_type == "Constant" and _attr(n, "value") is not None:
                consts[n.output[0]] = numpy_helper.to_array(_attr(n, "value"))
            elif n.op_type == "Shape" and n.input[0] in static and not n.domain:
                shp = np.array(static[n.input[0]], dtype=np.int64)
                vals = [shp[_attr(n, "start", 0):_attr(n, "end", len(shp))]]
            elif n.op_type in _FOLD and not n.domain and all(
                    x in consts for x in n.input if x):
                try:
                    vals = [np.asarray(_FOLD[n.op_type](n, [consts[x] if x else None
                                                            for x in n.input]))]
                except Exception:       # not foldable here: left to the graph
                    vals = None
                if vals is not None and (vals[0].size > _FOLD_MAX or len(n.output) != 1):
                    vals = None
            if vals is None:
                nodes.append(n)
                continue
            folded += 1
            consts[n.output[0]] = vals[0]
            nodes.append(_onnx.helper.make_node(
                "Constant", [], [n.output[0]], name=n.name or n.output[0],
                value=numpy_helper.from_array(vals[0], n.output[0])))
        if not folded:
            return model
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return model


def import_onnx(path: str, profile: Optional[Dict[str, float]] = None) -> OnnxGraph:
    """Read an ONNX file into graph format v1 (see the module docstring)."""
    model = _load(path)
    for i, n in enumerate(model.graph.node):
        label = f"node {i} ({n.name or n.op_type!r}, op {n.op_type})"
        if any(a.type in (_onnx.AttributeProto.GRAPH, _onnx.AttributeProto.GRAPHS)
               for a in n.attribute):
            raise OnnxError(f"{path}: {label}: control-flow subgraphs are not supported "
                            f"(a static schedule needs one path through the graph)")
        if not _onnx.defs.has(n.op_type, n.domain or ""):
            raise OnnxError(f"{path}: {label}: unsupported op {n.op_type!r}"
                            f"{' in domain ' + repr(n.domain) if n.domain else ''}: not an "
                            f"ONNX operator, so its output shapes are unknown")
    model = _fold_shapes(model, path)
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    shapes: Dict[str, Tuple[Tuple[int, ...], np.dtype]] = {
        k: (tuple(v.shape), v.dtype) for k, v in inits.items()}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if vi.name in shapes or not tt.HasField("shape") or None in dims or not tt.elem_type:
            continue
        shapes[vi.name] = (tuple(dims), np_dtype(tt.elem_type))
    og = OnnxGraph(g.name or os.path.basename(path), {}, [], inits, shapes,
                   [i.name for i in g.input if i.name not in inits], [o.name for o in g.output])
    used_ids = set()

    def tid(name: str) -> str:
        if name not in og.ids:
            t = name if 0 < len(name) <= 127 else f"t{len(og.ids)}"
            while t in used_ids:
                t = f"{t[:100]}#{len(og.ids)}"
            used_ids.add(t)
            og.ids[name] = t
        return og.ids[name]

    prof = profile or _planner.machine_profile()
    tensors: Dict[str, Dict[str, Any]] = {}

    def add(name: str, kind: str, **kw: Any) -> None:
        shape, dt = shapes[name]
        nbytes = max(1, int(np.prod(shape, dtype=np.int64)) * dt.itemsize)
        tensors[name] = {"id": tid(name), "bytes": nbytes, "kind": kind, **kw}

    for name in inits:
        add(name, "weight")
    for name in og.inputs:
        if name not in shapes:
            raise OnnxError(f"{path}: graph input {name!r} has no static shape")
        add(name, "kv" if any(k in name.lower() for k in KV) else "activation", live_in=True)
    ops = []
    seen_ops = set()
    for i, n in enumerate(g.node):
        label = f"node {i} ({n.name or n.op_type!r}, op {n.op_type})"
        outs = [o for o in n.output if o]
        for o in outs:
            if o not in shapes:
                raise OnnxError(f"{path}: {label}: output {o!r} has no shape information "
                                f"(give it a static shape in value_info)")
            add(o, "kv" if o in og.outputs and any(k in o.lower() for k in KV) else "activation")
        ins = [x for x in n.input if x]
        for x in ins:
            if x not in tensors:
                raise OnnxError(f"{path}: {label}: input {x!r} is not produced before it")
        oid = n.name if n.name and n.name not in seen_ops and len(n.name) <= 127 \
            else f"{n.op_type}_{i}"
        seen_ops.add(oid)
        attrs = {a.name: _onnx.helper.get_attribute_value(a) for a in n.attribute}
        og.nodes.append(OnnxNode(oid, n.op_type, list(n.input), outs, attrs))
        flops = _flops(n.op_type, [shapes[x][0] for x in ins], [shapes[o][0] for o in outs],
                       attrs)
        nbytes = sum(tensors[x]["bytes"] for x in set(ins) | set(outs))
        ns = max(flops / prof["flops"], nbytes / prof["mem_bytes_per_s"]) * 1e9
        op: Dict[str, Any] = {"id": oid, "compute_ns": int(ns), "inputs": _uniq(tid(x) for x in ins),
                              "outputs": _uniq(tid(o) for o in outs), "x-bytes": nbytes}
        if flops:
            op["x-flops"] = flops
        ops.append(op)
    for o in og.outputs:
        tensors[o]["live_out"] = True
    og.graph = {"format": "hyper-graph", "version": 1, "name": og.name,
                "tensors": list(tensors.values()), "ops": ops}
    return og


def _uniq(it: Any) -> List[str]:
    out: List[str] = []
    for x in it:
        if x not in out:
            out.append(x)
    return out


def _flops(op: str, ins: List[Tuple[int, ...]], outs: List[Tuple[int, ...]],
           attrs: Dict[str, Any]) -> int:
    """2·M·N·K for MatMul and Gemm (the output's elements times K), else 0."""
    if op == "MatMul" and ins and ins[0]:
        k = ins[0][-1]
    elif op == "Gemm" and ins and len(ins[0]) == 2:
        k = ins[0][0] if attrs.get("transA") else ins[0][1]
    else:
        return 0
    return 2 * int(np.prod(outs[0], dtype=np.int64)) * int(k)


# ---- a numpy runner, so that an imported graph runs with real compute ------

def _softmax(x: np.ndarray, axis: int, out: np.ndarray) -> None:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    np.divide(e, e.sum(axis=axis, keepdims=True), out=out)


def _gemm(a, b, c, attrs, out) -> None:
    a = a.T if attrs.get("transA") else a
    b = b.T if attrs.get("transB") else b
    r = attrs.get("alpha", 1.0) * (a @ b)
    if c is not None:
        r = r + attrs.get("beta", 1.0) * c
    out[...] = r


KERNELS = {
    "MatMul": lambda i, a, o: np.matmul(i[0], i[1], out=o[0]),
    "Gemm": lambda i, a, o: _gemm(i[0], i[1], i[2] if len(i) > 2 else None, a, o[0]),
    "Add": lambda i, a, o: np.add(i[0], i[1], out=o[0]),
    "Sub": lambda i, a, o: np.subtract(i[0], i[1], out=o[0]),
    "Mul": lambda i, a, o: np.multiply(i[0], i[1], out=o[0]),
    "Div": lambda i, a, o: np.divide(i[0], i[1], out=o[0]),
    "Relu": lambda i, a, o: np.maximum(i[0], 0, out=o[0]),
    "Tanh": lambda i, a, o: np.tanh(i[0], out=o[0]),
    "Sigmoid": lambda i, a, o: np.divide(1, 1 + np.exp(-i[0]), out=o[0]),
    "Softmax": lambda i, a, o: _softmax(i[0], a.get("axis", -1), o[0]),
    "Identity": lambda i, a, o: np.copyto(o[0], i[0]),
    "Transpose": lambda i, a, o: np.copyto(o[0], np.transpose(i[0], a.get("perm"))),
    "Reshape": lambda i, a, o: np.copyto(o[0], i[0].reshape(o[0].shape)),
    "Flatten": lambda i, a, o: np.copyto(o[0], i[0].reshape(o[0].shape)),
    "Constant": lambda i, a, o: np.copyto(o[0], numpy_helper.to_array(a["value"])),
}


class OnnxRunner:
    """Runs a schedule of an imported graph: numpy views over libhyper's
    arena and pool, each node written into its output's arena memory."""

    def __init__(self, og: OnnxGraph, schedule: Schedule, backend: str = "auto"):
        """``schedule``: a plan's (``_planner.plan(og.graph).schedule``) or a
        loaded one; the caller keeps owning it (hyper_attach holds a
        reference)."""
        for n in og.nodes:
            if n.op_type not in KERNELS:
                raise OnnxError(f"node {n.id!r}: no kernel for op {n.op_type} in this runner "
                                f"(it runs {', '.join(sorted(KERNELS))})")
        self.og = og
        self.mem: Optional[DeviceMemory] = None
        self.ctx = Context(backend)
        try:
            self.sched = schedule
            info = self.sched.info()
            self.mem = DeviceMemory(info["arena_bytes"] or 2 * info["peak_device_bytes"])
            self.ctx.register_buffers([self.mem])
            self.ctx.set_arena(self.mem)
            self.ctx.attach(self.sched)
            self.ctx.prepare()
            self.index = {name: self.sched.find(t) for name, t in og.ids.items()}
            self.homes = {name: self.sched.tensor(i)["home"] for name, i in self.index.items()}
            byid = {n.id: n for n in og.nodes}
            self.steps = [byid[self.sched.step(s)["op"]] for s in range(info["nr_steps"])]
            for name, arr in og.initializers.items():
                if self.homes[name] == "pool":
                    self._view(name, pool=True)[...] = arr
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.ctx.close()
        if self.mem is not None:
            self.mem.close()
            self.mem = None

    def __enter__(self) -> "OnnxRunner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _view(self, name: str, pool: bool = False) -> np.ndarray:
        i = self.index[name]
        addr = self.ctx.tensor_pool_ptr(i) if pool else self.ctx.tensor_ptr(i)
        if not addr:
            raise OnnxError(f"tensor {name!r} is not {'in the pool' if pool else 'resident'}")
        shape, dt = self.og.shapes[name]
        n = max(1, int(np.prod(shape, dtype=np.int64)) * dt.itemsize)
        buf = (ctypes.c_char * n).from_address(addr)
        return np.frombuffer(buf, dtype=dt, count=int(np.prod(shape, dtype=np.int64))).reshape(shape)

    def __call__(self, *inputs: np.ndarray) -> List[np.ndarray]:
        ctx, og = self.ctx, self.og
        if len(inputs) != len(og.inputs):
            raise OnnxError(f"{len(inputs)} inputs given, the graph takes {len(og.inputs)}")
        ctx.rewind()
        ctx.reset_stats()
        for name, x in zip(og.inputs, inputs):
            if tuple(np.shape(x)) != og.shapes[name][0]:
                raise OnnxError(f"input {name!r}: shape {tuple(np.shape(x))} does not match "
                                f"the planned {og.shapes[name][0]}")
            self._view(name, pool=self.homes[name] == "pool")[...] = x
        for name, arr in og.initializers.items():
            if self.homes[name] == "device":
                self._view(name)[...] = arr
        t0 = time.perf_counter_ns()
        for step in ctx.steps():
            n = self.steps[step]
            for x in n.inputs:
                if x:
                    ctx.wait_tensor(self.index[x])
            KERNELS[n.op_type]([self._view(x) if x else None for x in n.inputs], n.attrs,
                               [self._view(o) for o in n.outputs])
        ctx.drain()
        self.wall_ns = time.perf_counter_ns() - t0
        out = []
        for name in og.outputs:
            i = self.index[name]
            ctx.wait_tensor(i)
            out.append(self._view(name, pool=not ctx.tensor_ptr(i)).copy())
        return out

    @property
    def stats(self) -> Dict[str, int]:
        return self.ctx.stats()


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m hyperoffload.onnx",
                                 description="ONNX model to hyperoffload graph format v1")
    ap.add_argument("model", metavar="MODEL.onnx")
    ap.add_argument("-o", "--output", required=True, help="graph JSON to write ('-': stdout)")
    a = ap.parse_args(argv)
    if a.output != "-":
        folder = os.path.dirname(os.path.abspath(a.output))
        if not os.path.isdir(folder):
            print(f"hyperoffload.onnx: -o {a.output}: no such folder {folder} (create it "
                  f"first)", file=sys.stderr)
            return 1
    try:
        og = import_onnx(a.model)
    except (OnnxError, _planner.PlanError) as e:
        print(f"hyperoffload.onnx: {e}", file=sys.stderr)
        return 1
    text = json.dumps(og.graph, indent=1)
    if a.output == "-":
        print(text)
    else:
        try:
            with open(a.output, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as e:
            print(f"hyperoffload.onnx: -o {a.output}: {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"{a.model}: {len(og.graph['ops'])} ops, {len(og.graph['tensors'])} tensors "
              f"-> {a.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
