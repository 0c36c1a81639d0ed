# SPDX-License-Identifier: LGPL-2.1-or-later
"""Capture (the compiler side): torch.fx graph -> graph format v1.

``symbolic_trace`` (through every module, down to functions, so that each
parameter is a ``get_attr`` node) and shape propagation on the example
inputs give every node's real value.  From them:

- parameters and buffers are ``weight`` tensors (tied ones once);
- placeholders are live-in activations, or ``kv`` when named like a cache
  (``past*``, ``*cache*``); a cache update (``index_copy``, ``index_put``,
  ``slice_scatter``, ``index_add``) makes a ``kv`` tensor and marks the
  tensor it updates ``kv``;
- every other node whose value owns new storage is an operator defining an
  ``activation`` of that storage's real size;
- views, and nodes that make no tensor (shapes, ints), own no memory: they
  are *free* nodes, recomputed inside each operator that reads them, which
  then reads the tensor they view;
- in-place operators (``x.add_()``, ``setitem``) define the tensor they
  modify.

Each operator is timed on this machine (median of ``runs`` calls), and its
FLOPs and bytes are given where they are computable (``x-flops``,
``x-bytes``; matrix multiplies also carry ``gemm``).  Each operator's
output kernel is chosen here: its ``out=`` form when one exists and gives
bit-identical results, else the plain call followed by a copy into the
arena (``copy``).
"""
from __future__ import annotations

import operator
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx
from torch.fx.node import map_arg
from torch.fx.passes.shape_prop import ShapeProp

KV_NAME = re.compile(r"(^past|cache)", re.I)
KV_UPDATE = {"index_copy", "index_put", "slice_scatter", "index_add"}
MATMUL = {"matmul", "mm", "bmm", "linear", "addmm", "baddbmm"}


class CaptureError(ValueError):
    """The module cannot be captured: names the node (or module) and why."""


@dataclass
class TensorSpec:
    id: str
    nbytes: int
    kind: str
    dtype: torch.dtype
    shape: Tuple[int, ...]
    stride: Tuple[int, ...]
    offset: int
    live_in: bool = False
    live_out: bool = False
    source: Tuple[Any, ...] = ()    # ("weight", tensor) | ("input", i) | ("node", name, leaf)


@dataclass
class OpSpec:
    id: str
    node: torch.fx.Node
    inputs: List[str]
    outputs: List[str]
    compute_ns: int = 0
    flops: int = 0
    nbytes: int = 0
    gemm: Optional[Tuple[int, int, int]] = None
    kernel: Optional[Callable[..., Any]] = None   # out= form, or None: plain call and copy
    mutates: bool = False


@dataclass
class Captured:
    """A captured module: the fx graph, its tensors and operators."""
    gm: torch.fx.GraphModule
    name: str
    tensors: Dict[str, TensorSpec]
    ops: List[OpSpec]
    inputs: List[Tuple[str, Tuple[int, ...], torch.dtype]]     # placeholder, shape, dtype
    node_tensor: Dict[str, str]               # node producing a base tensor -> tensor id
    node_leaves: Dict[str, List[Optional[str]]]  # multi-output node -> leaf tensor ids
    free: Dict[str, List[str]]                # free node -> base tensors it reads
    attr_views: Dict[str, Tuple[str, Tuple[int, ...], Tuple[int, ...], int]] = \
        field(default_factory=dict)           # get_attr of part of a weight -> geometry
    mutating: Dict[str, str] = field(default_factory=dict)  # in-place node -> node it changes
    uses_out_kernels: int = 0
    copied_outputs: int = 0
    notes: List[str] = field(default_factory=list)

    def graph(self) -> Dict[str, Any]:
        """The graph, format v1 (Documentation/graph-format.md)."""
        tensors = []
        for t in self.tensors.values():
            tensors.append({"id": t.id, "bytes": max(1, t.nbytes), "kind": t.kind,
                            "live_in": t.live_in, "live_out": t.live_out})
        ops = []
        for o in self.ops:
            d: Dict[str, Any] = {"id": o.id, "compute_ns": o.compute_ns,
                                 "inputs": o.inputs, "outputs": o.outputs}
            if o.gemm:
                d["gemm"] = {"m": o.gemm[0], "n": o.gemm[1], "k": o.gemm[2]}
            if o.flops:
                d["x-flops"] = o.flops
            if o.nbytes:
                d["x-bytes"] = o.nbytes
            ops.append(d)
        return {"format": "hyper-graph", "version": 1, "name": self.name,
                "tensors": tensors, "ops": ops}


# ---- tracing ----------------------------------------------------------------

class _Tracer(torch.fx.Tracer):
    """Traces through every module and remembers where it was, so that a
    failure names the module and the last node made."""

    def __init__(self) -> None:
        super().__init__()
        self.where: List[str] = []
        self.failed_in: Optional[str] = None
        self.last: Optional[str] = None

    def is_leaf_module(self, m: torch.nn.Module, qualname: str) -> bool:
        return False

    def call_module(self, m, forward, args, kwargs):
        self.where.append(self.path_of_module(m) or type(m).__name__)
        try:
            return super().call_module(m, forward, args, kwargs)
        except Exception:
            if self.failed_in is None:
                self.failed_in = self.where[-1]
            raise
        finally:
            self.where.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        self.last = node.name
        return node


def trace(module: torch.nn.Module) -> torch.fx.GraphModule:
    """symbolic_trace through every submodule; untraceable code raises
    CaptureError naming the module, the last node traced and the reason."""
    tracer = _Tracer()
    try:
        graph = tracer.trace(module)
    except Exception as e:  # torch.fx raises TraceError, TypeError, ...
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        where = tracer.failed_in or ""
        sub = module.get_submodule(where) if where else module
        after = f", after node {tracer.last!r}" if tracer.last else ""
        hint = ""
        if "cannot be used as inputs to control flow" in reason:
            hint = (" (Python control flow on a tensor's value: make it static, use "
                    "torch.where, or run that part outside the captured module)")
        raise CaptureError(f"cannot capture {type(module).__name__}: in module "
                           f"{where or '<root>'!r} ({type(sub).__name__}){after}: {reason}{hint}") from None
    name = type(module).__name__
    return torch.fx.GraphModule(tracer.root, graph, name)


# ---- helpers ---------------------------------------------------------------

def _leaves(v: Any) -> List[torch.Tensor]:
    """The tensors in a value, depth first (the order the runner rebuilds)."""
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        out: List[torch.Tensor] = []
        for x in v:
            out.extend(_leaves(x))
        return out
    return []


def _storage(t: torch.Tensor) -> Tuple[int, int]:
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def target_name(node: torch.fx.Node) -> str:
    t = node.target
    if isinstance(t, str):
        return t
    return getattr(t, "__name__", str(t))


def is_mutating(node: torch.fx.Node) -> bool:
    if node.op == "call_function" and node.target in (operator.setitem, operator.iadd,
                                                      operator.imul, operator.isub):
        return True
    name = target_name(node)
    return node.op in ("call_method", "call_function") and name.endswith("_") \
        and not name.endswith("__")


def _call(node: torch.fx.Node, gm: torch.fx.GraphModule, args, kwargs) -> Any:
    if node.op == "call_function":
        return node.target(*args, **kwargs)
    if node.op == "call_method":
        self_obj, *rest = args
        return getattr(self_obj, node.target)(*rest, **kwargs)
    if node.op == "call_module":
        return gm.get_submodule(node.target)(*args, **kwargs)
    raise AssertionError(node.op)


def _linear_mm(x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor] = None, *,
               out: torch.Tensor) -> torch.Tensor:
    """linear as one GEMM on 2-D views: ATen's linear.out for 3-D inputs
    runs a slower path (twice the time of F.linear on a 64-token prompt)."""
    x2, o2 = x.reshape(-1, x.shape[-1]), out.view(-1, out.shape[-1])
    if b is None:
        torch.mm(x2, w.t(), out=o2)
    else:
        torch.addmm(b, x2, w.t(), out=o2)
    return out


def _out_candidates(node: torch.fx.Node) -> List[Callable[..., Any]]:
    name = target_name(node)
    cands: List[Callable[..., Any]] = []
    if name == "linear":
        cands.append(_linear_mm)
    if node.op == "call_function":
        cands.append(node.target)
        ops = {operator.add: torch.add, operator.mul: torch.mul, operator.sub: torch.sub,
               operator.truediv: torch.div, operator.matmul: torch.matmul,
               operator.neg: torch.neg}
        if node.target in ops:
            cands.append(ops[node.target])
    for ns in (torch, torch._C._nn, torch.special):
        f = getattr(ns, name, None)
        if callable(f) and f not in cands:
            cands.append(f)
    return cands


def _choose_kernel(node, gm, args, kwargs, value: torch.Tensor) -> Optional[Callable]:
    """An out= form that writes in place and equals the plain call bit for bit."""
    if node.op == "call_method":
        args = list(args)
    for f in _out_candidates(node):
        out = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype)
        ptr = out.data_ptr()
        try:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                f(*args, **kwargs, out=out)
        except Exception:
            continue
        if out.data_ptr() == ptr and out.shape == value.shape and \
                out.stride() == value.stride() and out.is_contiguous() == \
                value.is_contiguous() and torch.equal(out, value):
            return f
    return None


def _gemm(node: torch.fx.Node, args: Sequence[Any], value: torch.Tensor
          ) -> Tuple[int, Optional[Tuple[int, int, int]]]:
    name = target_name(node)
    if name not in MATMUL and node.target is not operator.matmul:
        return 0, None
    if name == "linear":
        x, w = args[0], args[1]
        k, n = w.shape[1], w.shape[0]
        m = x.numel() // k
        return 2 * m * n * k, (m, n, k)
    if name in ("addmm", "baddbmm"):
        a, b = args[1], args[2]
    else:
        a, b = args[0], args[1]
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.dim() < 1:
        return 0, None
    k = a.shape[-1]
    flops = 2 * value.numel() * k
    if b.dim() == 2 and a.dim() >= 2:
        return flops, (a.numel() // k, b.shape[1], k)
    return flops, None


def _median_ns(fn: Callable[[], Any], runs: int) -> int:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return int(statistics.median(times))


# ---- capture ----------------------------------------------------------------

class _Recorder(ShapeProp):
    """ShapeProp that also keeps every node's value."""

    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__(gm)
        self.values: Dict[str, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        v = super().run_node(n)
        self.values[n.name] = v
        return v


def capture(module: torch.nn.Module, example_inputs: Sequence[Any], *, runs: int = 3,
            name: Optional[str] = None) -> Captured:
    """Trace, propagate shapes on example_inputs, and build the graph."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    gm = trace(module)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise CaptureError(f"{type(module).__name__}.forward takes {len(placeholders)} "
                           f"inputs, {len(example_inputs)} example inputs were given")
    for n, v in zip(placeholders, example_inputs):
        if not isinstance(v, torch.Tensor):
            raise CaptureError(f"input {n.name!r}: only tensor inputs are supported "
                               f"(got {type(v).__name__})")
    rec = _Recorder(gm)
    with torch.no_grad():
        try:
            rec.propagate(*example_inputs)
        except Exception as e:
            raise CaptureError(f"running {type(module).__name__} on the example inputs "
                               f"failed: {e}") from None
        owned = {_storage(t)[0] for t in list(module.parameters()) + list(module.buffers())}
        return _build(gm, rec.values, example_inputs, runs, name or type(module).__name__,
                      owned)


def _build(gm, values, example_inputs, runs, name, owned) -> Captured:
    tensors: Dict[str, TensorSpec] = {}
    ops: List[OpSpec] = []
    by_storage: Dict[int, str] = {}     # storage address -> tensor id
    node_tensor: Dict[str, str] = {}
    node_leaves: Dict[str, List[Optional[str]]] = {}
    free: Dict[str, List[str]] = {}
    inputs = []
    cap = Captured(gm, name, tensors, ops, inputs, node_tensor, node_leaves, free)

    def new_tensor(tid: str, t: torch.Tensor, kind: str, source) -> str:
        ptr, nbytes = _storage(t)
        tensors[tid] = TensorSpec(tid, nbytes, kind, t.dtype, tuple(t.shape), tuple(t.stride()),
                                  t.storage_offset(), source=source)
        by_storage[ptr] = tid
        return tid

    def reads(arg_nodes: List[torch.fx.Node]) -> List[str]:
        """Base tensors a node reads through its arguments (free nodes included)."""
        out: List[str] = []
        for a in arg_nodes:
            if a.name in node_tensor:
                ids = [node_tensor[a.name]]
            elif a.name in node_leaves:
                ids = [i for i in node_leaves[a.name] if i]
            else:
                ids = free.get(a.name, [])
            for i in ids:
                if i not in out:
                    out.append(i)
        return out

    def arg_nodes(n: torch.fx.Node) -> List[torch.fx.Node]:
        found: List[torch.fx.Node] = []
        map_arg((n.args, n.kwargs), lambda a: found.append(a) or a)
        return found

    for n in gm.graph.nodes:
        v = values.get(n.name)
        if n.op == "placeholder":
            idx = len(inputs)
            inputs.append((n.name, tuple(v.shape), v.dtype))
            kind = "kv" if KV_NAME.search(n.name) else "activation"
            tid = new_tensor(n.name, v, kind, ("input", idx))
            tensors[tid].live_in = True
            node_tensor[n.name] = tid
            continue
        if n.op == "get_attr":
            if isinstance(v, torch.Tensor):
                ptr, _ = _storage(v)
                # torch.fx folds tensors made from constants only (torch.zeros of
                # a fixed shape) into _tensor_constant attributes: data, not weights.
                # A constant that is a view of a buffer (sliced at trace time) is
                # that buffer: a weight.
                kind = "weight" if ptr in owned or not n.target.startswith(
                    "_tensor_constant") else "activation"
                tid = by_storage.get(ptr) or new_tensor(n.target, v, kind, ("weight", v))
                tensors[tid].live_in = True
                if tuple(v.shape) == tensors[tid].shape and v.storage_offset() == \
                        tensors[tid].offset and tuple(v.stride()) == tensors[tid].stride:
                    node_tensor[n.name] = tid
                else:
                    free[n.name] = [tid]
                    cap.attr_views[n.name] = (tid, tuple(v.shape), tuple(v.stride()),
                                              v.storage_offset())
            else:
                free[n.name] = []
            continue
        if n.op == "output":
            for tid in reads(arg_nodes(n)):
                tensors[tid].live_out = True
            continue
        args = map_arg(n.args, lambda a: values.get(a.name))
        kwargs = map_arg(n.kwargs, lambda a: values.get(a.name))
        deps = reads(arg_nodes(n))
        leaves = _leaves(v)
        if is_mutating(n):
            target = arg_nodes(n)[0]
            bases = reads([target])
            cap.mutating[n.name] = target.name
            op = OpSpec(n.name, n, deps, bases, mutates=True)
            _time(op, n, gm, args, kwargs, runs)
            ops.append(op)
            if isinstance(v, torch.Tensor) and bases:
                free[n.name] = bases
            else:
                free[n.name] = []
            continue
        fresh = [t for t in leaves if _storage(t)[0] not in by_storage]
        if not fresh:
            free[n.name] = deps      # a view, or no tensor at all
            continue
        # A cache update makes a kv tensor, and marks the cache it extends kv.
        kind = "activation"
        if target_name(n) in KV_UPDATE and isinstance(v, torch.Tensor):
            kind = "kv"
            for d in reads(arg_nodes(n)[:1]):
                if tensors[d].kind == "activation":
                    tensors[d].kind = "kv"
        if isinstance(v, torch.Tensor):
            tid = new_tensor(n.name, v, kind, ("node", n.name, None))
            node_tensor[n.name] = tid
            outs = [tid]
        else:
            if len(fresh) != len(leaves):
                raise CaptureError(f"node {n.name!r} ({target_name(n)}) returns both views of "
                                   f"its inputs and new tensors, which is not supported")
            outs = []
            for i, t in enumerate(leaves):
                outs.append(new_tensor(f"{n.name}.{i}", t, kind, ("node", n.name, i)))
            node_leaves[n.name] = outs  # type: ignore[assignment]
        op = OpSpec(n.name, n, deps, outs)
        if isinstance(v, torch.Tensor):
            op.kernel = _choose_kernel(n, gm, args, kwargs, v)
        if op.kernel:
            cap.uses_out_kernels += 1
        else:
            cap.copied_outputs += 1
        op.flops, op.gemm = _gemm(n, args, v) if isinstance(v, torch.Tensor) else (0, None)
        op.nbytes = sum(tensors[i].nbytes for i in deps + outs)
        _time(op, n, gm, args, kwargs, runs)
        ops.append(op)
    if not ops:
        raise CaptureError(f"{name}: the traced graph has no operator")
    return cap


def _time(op: OpSpec, n, gm, args, kwargs, runs: int) -> None:
    if op.mutates:
        # Time it on copies: the captured values must not change.
        def fresh():
            return _call(n, gm, *_clone((args, kwargs)))
        op.compute_ns = _median_ns(fresh, max(1, runs))
        return
    op.compute_ns = _median_ns(lambda: _call(n, gm, args, kwargs), max(1, runs))


def _clone(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, (tuple, list)):
        return type(v)(_clone(x) for x in v) if not hasattr(v, "_fields") else v
    if isinstance(v, dict):
        return {k: _clone(x) for k, x in v.items()}
    return v
