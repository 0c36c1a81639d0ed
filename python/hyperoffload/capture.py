# SPDX-License-Identifier: LGPL-2.1-or-later
"""Capture (the compiler side): torch.fx graph -> graph format v1.

Tracing (our ``_Tracer``) goes through user modules down to functions and
keeps torch's own modules (``torch.nn``) as leaf operators; buffers are
proxied, ``h += y`` and ``z[...] = v`` are recorded as the in-place
operations they are, and shape/chunk unpacking and traced sizes work on
torch 1.13 under Python 3.11.  The graph then runs on the example inputs
(on a copy of the module: capture changes nothing in it), keeping every
node's value and the tensors each node wrote.  From them:

- parameters and buffers (of get_attr nodes and of leaf modules) are
  ``weight`` tensors (tied ones once);
- placeholders are live-in activations, or ``kv`` when named like a cache
  (``past*``, ``*cache*``); a cache update (``index_copy``, ``index_put``,
  ``slice_scatter``, ``index_add``) makes a ``kv`` tensor and marks the
  tensor it updates ``kv``;
- every other node whose value owns new storage is an operator defining an
  ``activation`` of that storage's real size;
- views, and nodes that make no tensor (shapes, ints), own no memory: they
  are *free* nodes, recomputed inside each operator that reads them, which
  then reads the tensor they view;
- a node that writes a tensor (``x.add_()``, ``setitem``, an in-place
  activation, BatchNorm's running statistics) is an operator whose outputs
  include that tensor; weights written are state, written back into the
  module after each call;
- a result whose shape depends on the input values is refused.

Each operator is timed on this machine (median of ``runs`` calls), and its
FLOPs and bytes are given where they are computable (``x-flops``,
``x-bytes``; matrix multiplies also carry ``gemm``).  Each operator's
output kernel is chosen here: its ``out=`` form when one exists and gives
bit-identical results, else the plain call followed by a copy into the
arena (``copy``).  Last, verify.py checks the captured program against
eager, node by node.
"""
from __future__ import annotations

import contextlib
import copy
import dis
import inspect
import operator
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generator, List, Optional, Sequence, Set, Tuple

import torch
import torch.fx
from torch.fx.node import map_arg

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
    device: torch.device = torch.device("cpu")   # where the module's run holds it


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
    mutates: bool = False       # writes only tensors it reads (x.add_(), setitem)
    fresh: List[int] = field(default_factory=list)  # result leaves copied to outputs[:len]
    # A torch.nn leaf module's own tensors: (name in the module, tensor id,
    # geometry when only part of that tensor's storage).
    module_tensors: List[Tuple[str, str, Optional[Tuple[Tuple[int, ...], Tuple[int, ...], int]]]] = \
        field(default_factory=list)


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
    node_struct: Dict[str, Any] = field(default_factory=dict)  # multi-output node -> nesting
    weight_names: Dict[str, str] = field(default_factory=dict)  # weight id -> module attribute
    state: List[str] = field(default_factory=list)     # weights written by forward
    written_inputs: List[Tuple[str, int]] = field(default_factory=list)  # inputs written
    module: Optional[torch.nn.Module] = None           # the user's module (state write-back)
    via: str = "fx"                                    # "fx" or "export" (torch 2.x)
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

# torch's own modules are leaf operators, except the containers, which only
# hold others.
_CONTAINERS = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)
# Factories that take sizes: traced sizes (``torch.arange(S)``) make nodes.
_FACTORIES = ("arange", "zeros", "ones", "empty", "full", "eye", "linspace", "rand",
              "randn", "randint", "tril_indices", "triu_indices")
# Operators whose result's shape depends on the input values.
# (repeat_interleave too, when its repeats are a tensor.)
DATA_DEPENDENT = {"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere",
                  "bincount", "histogramdd", "nonzero_static"}


# ... and those whose forward is one functional call on their parameters,
# traced through, so that the call writes into the arena (linear's out=).
_TRACED_THROUGH = (torch.nn.Linear,)


def is_torch_leaf(m: torch.nn.Module) -> bool:
    """A module running torch.nn's own forward (a torch.nn class, or a user
    subclass that keeps its forward), not a container: one operator."""
    mod = getattr(type(m).forward, "__module__", None) or ""
    return (mod.startswith("torch.nn") or mod.startswith("torch.ao.nn")) and \
        not isinstance(m, _CONTAINERS + _TRACED_THROUGH)


class _Proxy(torch.fx.Proxy):
    """fx's Proxy plus what plain Python code does to tensors: in-place
    operators (``h += y`` is an in-place add on the tensor ``h`` names, not a
    new tensor) and item assignment (``z[:, :4] = 0``)."""

    def __iadd__(self, other):
        return self.tracer.create_proxy("call_function", operator.iadd, (self, other), {})

    def __isub__(self, other):
        return self.tracer.create_proxy("call_function", operator.isub, (self, other), {})

    def __imul__(self, other):
        return self.tracer.create_proxy("call_function", operator.imul, (self, other), {})

    def __itruediv__(self, other):
        return self.tracer.create_proxy("call_function", operator.itruediv, (self, other), {})

    def __setitem__(self, key, value):
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})


def _proxy_iter(self):
    """Proxy.__iter__ for our tracer: torch 1.13 finds the calling
    instruction at ``f_lasti // 2``, which Python 3.11's inline caches broke;
    look it up by its offset instead."""
    if not isinstance(self.tracer, _Tracer):
        return _ORIG_ITER(self)
    frame = inspect.currentframe()
    calling = frame.f_back if frame is not None else None
    if calling is not None:
        for inst in dis.get_instructions(calling.f_code):
            if inst.offset == calling.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
    return self.tracer.iter(self)


_ORIG_ITER = torch.fx.Proxy.__iter__


def _factory(orig: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args, **kwargs):
        found: List[torch.fx.Proxy] = []
        torch.fx.node.map_aggregate((args, kwargs), lambda a: found.append(a)
                                    if isinstance(a, torch.fx.Proxy) else None)
        if found:
            return found[0].tracer.create_proxy("call_function", orig, args, kwargs)
        return orig(*args, **kwargs)
    return wrapped


@contextlib.contextmanager
def _patched():
    """Proxy iteration and traced sizes in factories, for this tracer only,
    for the time of one trace."""
    saved = {name: getattr(torch, name) for name in _FACTORIES}
    torch.fx.Proxy.__iter__ = _proxy_iter   # type: ignore[assignment]
    try:
        for name, f in saved.items():
            setattr(torch, name, _factory(f))
        yield
    finally:
        torch.fx.Proxy.__iter__ = _ORIG_ITER  # type: ignore[assignment]
        for name, f in saved.items():
            setattr(torch, name, f)


class _Tracer(torch.fx.Tracer):
    """Traces user modules down to functions and torch's own modules as leaf
    operators; buffers are proxied like parameters, so that writes to them
    are nodes.  Remembers where it was, so that a failure names the module
    and the last node made."""

    proxy_buffer_attributes = True

    def __init__(self) -> None:
        super().__init__()
        self.where: List[str] = []
        self.failed_in: Optional[str] = None
        self.last: Optional[str] = None

    def is_leaf_module(self, m: torch.nn.Module, qualname: str) -> bool:
        return is_torch_leaf(m)

    def proxy(self, node: torch.fx.Node) -> torch.fx.Proxy:
        return _Proxy(node, self)

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
    """symbolic_trace down to torch's own modules; untraceable code raises
    CaptureError naming the module, the last node traced and the reason."""
    if is_torch_leaf(module):
        raise CaptureError(f"cannot capture {type(module).__name__}: a torch.nn module on its "
                           f"own is one operator; wrap it in a module that calls it")
    tracer = _Tracer()
    try:
        with _patched():
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


class _Const:
    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _struct(v: Any, counter: List[int]) -> Any:
    """v's nesting with each tensor replaced by its index in _leaves(v)."""
    if isinstance(v, torch.Tensor):
        counter[0] += 1
        return counter[0] - 1
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_struct(x, counter) for x in v))
    return _Const(v)


def rebuild(struct: Any, leaves: Sequence[Any]) -> Any:
    """The value _struct() describes, with leaves in place of its tensors."""
    if type(struct) is int:
        return leaves[struct]
    if type(struct) is _Const:
        return struct.value
    kind, items = struct
    vals = [rebuild(x, leaves) for x in items]
    return kind(*vals) if hasattr(kind, "_fields") else kind(vals)


def _storage(t: torch.Tensor) -> Tuple[int, int]:
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def target_name(node: torch.fx.Node) -> str:
    """A node's function or method name (an ATen overload's packet name:
    ``aten.linear.default`` is ``linear``)."""
    t = node.target
    if isinstance(t, str):
        return t
    packet = getattr(t, "_overloadpacket", None)
    if packet is not None:
        return getattr(packet, "__name__", str(t)).split(".")[-1]
    return getattr(t, "__name__", str(t))


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
               operator.neg: torch.neg, operator.and_: torch.bitwise_and,
               operator.or_: torch.bitwise_or, operator.xor: torch.bitwise_xor,
               operator.invert: torch.bitwise_not}
        if node.target in ops:
            cands.append(ops[node.target])
    for ns in (torch, torch._C._nn, torch.special):
        f = getattr(ns, name, None)
        if callable(f) and f not in cands:
            cands.append(_aten_kwargs(f) if {"inplace", "_stacklevel"} & set(node.kwargs)
                         else f)
    return cands


def _aten_kwargs(f: Callable[..., Any]) -> Callable[..., Any]:
    """f without torch.nn.functional's own keywords, which ATen's
    functions do not take: inplace=False (the out-of-place call; True has
    no form into out, it writes its input) and _stacklevel (a warning's
    depth)."""
    def run(*args: Any, inplace: bool = False, _stacklevel: Any = None, **kwargs: Any) -> Any:
        if inplace:
            raise TypeError("inplace=True has no out= form")
        return f(*args, **kwargs)
    run.__name__ = getattr(f, "__name__", "kernel")
    return run


def _in_place(name: str, apply: Callable[..., Any]) -> Callable[..., Any]:
    """For an operator without an out= form whose result has its first
    argument's shape and dtype: that argument copied into ``out``, then
    ``apply(out, rest, kwargs)`` (its in-place form) on the copy, so that
    the result is never held twice (a 2048-token attention's masked_fill
    is 1 GB).  Chosen only where it equals the plain call bit for bit.
    torch.nn.functional's inplace=False and _stacklevel are dropped."""
    def run(x: Any, *rest: Any, out: torch.Tensor, inplace: bool = False,
            _stacklevel: Any = None, **kw: Any) -> None:
        if not isinstance(x, torch.Tensor) or x.shape != out.shape or x.dtype != out.dtype \
                or inplace:
            raise TypeError(f"{name}: no in-place form into out for this input")
        out.copy_(x)
        apply(out, rest, kw)
    run.__name__ = f"{name}_into_out"
    return run


def _reshape_into(x: Any, *rest: Any, out: torch.Tensor, **kw: Any) -> None:
    """reshape/flatten/contiguous that copy: the input's elements, in order,
    into a contiguous ``out`` (what they do into new memory)."""
    if not isinstance(x, torch.Tensor) or not out.is_contiguous() or x.numel() != out.numel():
        raise TypeError("no copy into out for this reshape")
    out.view(x.shape).copy_(x)


_RESHAPES = ("reshape", "flatten", "contiguous")


# x.to(dtype), x.float(), x.clone(), ... (and ATen's _to_copy itself, in
# torch.export's graphs): ATen's _to_copy and clone are an empty tensor of
# the result's geometry and copy_() of the input into it.
_CONVERTS = ("to", "_to_copy", "type", "float", "double", "half", "bfloat16", "int", "long",
             "short", "char", "byte", "bool", "clone")


def _convert_into(x: Any, *rest: Any, out: torch.Tensor, **kw: Any) -> None:
    """A conversion that makes a new tensor (dtype, device, or a clone):
    the input copied into ``out``, which has the result's dtype and
    strides, as _to_copy and clone do into new memory."""
    if not isinstance(x, torch.Tensor) or x.shape != out.shape or \
            kw.get("memory_format") not in (None, torch.preserve_format):
        raise TypeError("no conversion into out for this call")
    out.copy_(x)


# Fills: the value each writes, from its arguments after the input.
_FILLS: Dict[str, Callable[[Sequence[Any], Dict[str, Any]], Any]] = {
    "zeros_like": lambda r, k: 0, "ones_like": lambda r, k: 1,
    "full_like": lambda r, k: r[0] if r else k["fill_value"],
    "new_zeros": lambda r, k: 0, "new_ones": lambda r, k: 1,
    "new_full": lambda r, k: r[1] if len(r) > 1 else k["fill_value"],
}


def _fill_into(name: str) -> Callable[..., Any]:
    """zeros_like/ones_like/full_like and x.new_zeros/new_ones/new_full
    written into ``out`` (an empty tensor and fill_(), what they do);
    kept, as every such form, only where it equals the plain call (shape,
    dtype and bits)."""
    def run(x: Any, *rest: Any, out: torch.Tensor, **kw: Any) -> None:
        if not isinstance(x, torch.Tensor) or \
                kw.get("layout") not in (None, torch.strided) or kw.get("requires_grad"):
            raise TypeError(f"{name}: no fill into out for this call")
        if name.endswith("_like"):
            if x.shape != out.shape:
                raise TypeError(f"{name}: out has another shape")
        else:
            size = rest[0] if rest else kw.get("size")
            if name != "new_full" and rest and all(isinstance(r, int) for r in rest):
                size = rest         # x.new_zeros(2, 3)
            if not isinstance(size, (tuple, list, torch.Size)) or tuple(size) != out.shape:
                raise TypeError(f"{name}: out has another shape")
        out.fill_(_FILLS[name](rest, kw))
    run.__name__ = f"{name}_into_out"
    return run


def _repeat_interleave_into(x: Any, repeats: Any, dim: Optional[int] = None, *,
                            out: torch.Tensor, output_size: Optional[int] = None) -> None:
    """repeat_interleave by a whole number along one dimension (grouped-query
    attention's key/value heads): each slice of ``x`` written ``repeats``
    times in a row into ``out``, through a broadcast view, so the result is
    never computed elsewhere and copied in."""
    if not isinstance(x, torch.Tensor) or not isinstance(repeats, int) or dim is None \
            or repeats < 1 or not out.is_contiguous():
        raise TypeError("no copy into out for this repeat_interleave")
    d = dim % x.dim()
    shape = list(x.shape)
    grouped = shape[:d + 1] + [repeats] + shape[d + 1:]
    if out.numel() != x.numel() * repeats:
        raise TypeError("repeat_interleave: out has another size")
    out.view(grouped).copy_(x.unsqueeze(d + 1).expand(grouped))


def _pair(v: Any) -> Optional[Tuple[Any, Any]]:
    if isinstance(v, int) or v is None:
        return (v, v)
    if isinstance(v, (tuple, list, torch.Size)) and len(v) == 2:
        return (v[0], v[1])
    return None


def _global_avg_into(x: Any, output_size: Any, *, out: torch.Tensor) -> None:
    """adaptive_avg_pool2d to 1 x 1, which ATen computes as the mean over
    the last two dimensions (keepdim): that mean's out= form."""
    if not isinstance(x, torch.Tensor) or x.dim() not in (3, 4) or \
            _pair(output_size) != (1, 1):
        raise TypeError("adaptive_avg_pool2d: not to 1 x 1")
    torch.mean(x, (-1, -2), keepdim=True, out=out)


def _max_pool_into(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                   dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False,
                   *, out: torch.Tensor) -> None:
    """max_pool2d without its indices, which ATen computes as
    max_pool2d_with_indices and drops the indices: that operator's out=
    form, its indices in a temporary as the plain call has them."""
    k, p, d = _pair(kernel_size), _pair(padding), _pair(dilation)
    s = _pair(stride) if stride not in (None, [], ()) else k
    if not isinstance(x, torch.Tensor) or return_indices or None in (k, s, p, d):
        raise TypeError("max_pool2d: no form into out for this call")
    indices = torch.empty(out.shape, dtype=torch.long, device=out.device)
    torch._C._nn.max_pool2d_with_indices(x, k, s, p, d, ceil_mode, out=(out, indices))


def _lookup_into(weight: Any, indices: Any, out: torch.Tensor) -> None:
    """An embedding's lookup, which ATen computes as index_select of the
    weight's rows by the flattened indices: that operator's out= form,
    written into a contiguous ``out``."""
    if not isinstance(weight, torch.Tensor) or not isinstance(indices, torch.Tensor) or \
            weight.dim() != 2 or not out.is_contiguous():
        raise TypeError("embedding: no lookup into out for this call")
    torch.index_select(weight, 0, indices.reshape(-1), out=out.view(-1, weight.shape[-1]))


def _aten_embedding_into(weight: Any, indices: Any, padding_idx: int = -1,
                         scale_grad_by_freq: bool = False, sparse: bool = False, *,
                         out: torch.Tensor) -> None:
    """torch.embedding / aten.embedding (torch.export's graphs): the
    lookup (padding_idx and the rest change only the gradient)."""
    _lookup_into(weight, indices, out)


def _functional_embedding_into(input: Any, weight: Any, padding_idx: Any = None,
                               max_norm: Any = None, norm_type: float = 2.0,
                               scale_grad_by_freq: bool = False, sparse: bool = False, *,
                               out: torch.Tensor) -> None:
    """F.embedding without max_norm (which renormalises the weight in
    place): the lookup."""
    if max_norm is not None:
        raise TypeError("embedding with max_norm: no lookup into out")
    _lookup_into(weight, input, out)


def _into_candidates(node: torch.fx.Node) -> List[Callable[..., Any]]:
    """Forms that write the result into out= for operators that have none."""
    name = target_name(node)
    cands: List[Callable[..., Any]] = []
    if name in _RESHAPES:
        cands.append(_reshape_into)
    if name == "repeat_interleave":
        cands.append(_repeat_interleave_into)
    if name in _FILLS:
        cands.append(_fill_into(name))
    if name in _CONVERTS:
        cands.append(_convert_into)
    if name == "adaptive_avg_pool2d":
        cands.append(_global_avg_into)
    if name == "max_pool2d":
        cands.append(_max_pool_into)
    if name == "embedding":
        cands.append(_functional_embedding_into if node.target is torch.nn.functional.embedding
                     else _aten_embedding_into)
    if callable(getattr(torch.Tensor, name + "_", None)):
        cands.append(_in_place(name, lambda o, r, k: getattr(o, name + "_")(*r, **k)))
    for ns in (torch._C._nn, torch):
        f = getattr(ns, name + "_", None)
        if callable(f):
            cands.append(_in_place(name, lambda o, r, k, f=f: f(o, *r, **k)))
            break
    return cands


def _choose_kernel(node, gm, args, kwargs, value: torch.Tensor) -> Optional[Callable]:
    """An out= form that writes in place and equals the plain call bit for
    bit (NaN equal to NaN): the operator's own, else a copy into out= and
    its in-place form."""
    if node.op == "call_method":
        args = list(args)
    return _first_exact(_out_candidates(node) + _into_candidates(node), args, kwargs, {},
                        value)


def _first_exact(cands: Sequence[Callable[..., Any]], args: Sequence[Any],
                 kwargs: Dict[str, Any], extra: Dict[str, Any], value: torch.Tensor
                 ) -> Optional[Callable[..., Any]]:
    """The first candidate that, called with ``out=`` a tensor of value's
    geometry (and ``extra``), writes into that tensor's memory and gives
    value bit for bit (NaN equal to NaN); warnings count as failures."""
    import warnings
    from .verify import equal
    for f in cands:
        out = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                  device=value.device)
        ptr = out.data_ptr()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                f(*args, **kwargs, **extra, out=out)
        except Exception:
            continue
        if out.data_ptr() == ptr and out.shape == value.shape and \
                out.stride() == value.stride() and out.is_contiguous() == \
                value.is_contiguous() and equal(out, value):
            return f
    return None


def _embedding_into(idx: Any, *, out: torch.Tensor, weight: torch.Tensor) -> None:
    """nn.Embedding's lookup (no max_norm: that one renormalises the weight in
    place) as ATen's index_select out= form: the rows written into ``out``."""
    _lookup_into(weight, idx, out)


def _leaf_in_place(mod: torch.nn.Module) -> Callable[..., Any]:
    """A leaf module with an ``inplace`` switch, off (nn.ReLU, nn.SiLU,
    nn.LeakyReLU, ...): its input copied into ``out``, then a copy of the
    module with the switch on, run on out."""
    ip = copy.copy(mod)
    ip.inplace = True

    def run(x: Any, *, out: torch.Tensor) -> None:
        if not isinstance(x, torch.Tensor) or x.shape != out.shape or x.dtype != out.dtype:
            raise TypeError(f"{type(mod).__name__}: no in-place form into out for this input")
        out.copy_(x)
        ip(out)
    run.__name__ = f"{type(mod).__name__}_into_out"
    return run


def _unary_into(f: Callable[..., Any], **kw: Any) -> Callable[..., Any]:
    """A leaf module whose forward is ``f(input, **kw)``: f's out= form."""
    def run(x: Any, *, out: torch.Tensor) -> None:
        f(x, **kw, out=out)
    run.__name__ = f"{getattr(f, '__name__', 'unary')}_into_out"
    return run


def _conv_transpose_into(mod: torch.nn.ConvTranspose2d) -> Optional[Callable[..., Any]]:
    """nn.ConvTranspose2d (one group, zero padding, no output_size) as
    ATen's slow_conv_transpose2d out= form, which is the kernel torch
    picks for it where MKL-DNN does not run (float32 on the host)."""
    if mod.groups != 1 or mod.padding_mode != "zeros":
        return None
    k, st, p, op, d = (list(mod.kernel_size), list(mod.stride), list(mod.padding),
                       list(mod.output_padding), list(mod.dilation))

    def run(x: Any, *, out: torch.Tensor, weight: torch.Tensor,
            bias: Optional[torch.Tensor] = None) -> None:
        if not isinstance(x, torch.Tensor) or x.dim() != 4:
            raise TypeError("ConvTranspose2d: no form into out for this input")
        torch._C._nn.slow_conv_transpose2d(x, weight, k, bias, st, p, op, d, out=out)
    run.__name__ = "conv_transpose2d_into_out"
    return run


def _leaf_candidates(mod: torch.nn.Module, local: List[str]) -> List[Callable[..., Any]]:
    """Forms into out for a torch.nn leaf module of exactly these classes
    (a subclass may compute otherwise), called with the module's tensors
    (``local``: their names) as keyword arguments."""
    nn = torch.nn
    t = type(mod)
    cands: List[Optional[Callable[..., Any]]] = []
    if t is nn.Embedding and mod.max_norm is None and local == ["weight"]:
        cands.append(_embedding_into)
    if t is nn.ConvTranspose2d and local in (["weight"], ["weight", "bias"]):
        cands.append(_conv_transpose_into(mod))
    if local:
        return [c for c in cands if c is not None]
    if t is nn.Tanh:
        cands.append(_unary_into(torch.tanh))
    elif t is nn.Sigmoid:
        cands.append(_unary_into(torch.sigmoid))
    elif t is nn.GELU:
        cands.append(_unary_into(torch._C._nn.gelu, approximate=mod.approximate))
    elif t is nn.MaxPool2d:
        cands.append(_unary_into(_max_pool_into, kernel_size=mod.kernel_size, stride=mod.stride,
                                 padding=mod.padding, dilation=mod.dilation,
                                 ceil_mode=mod.ceil_mode, return_indices=mod.return_indices))
    elif t is nn.AdaptiveAvgPool2d:
        cands.append(_unary_into(_global_avg_into, output_size=mod.output_size))
    if t.__module__.startswith("torch.nn.modules.") and \
            isinstance(getattr(mod, "inplace", None), bool) and not mod.inplace:
        cands.append(_leaf_in_place(mod))
    return [c for c in cands if c is not None]


def _choose_leaf_kernel(mod: torch.nn.Module, mod_tensors: Sequence[Tuple[str, str, Any]],
                        args: Sequence[Any], kwargs: Dict[str, Any], value: torch.Tensor
                        ) -> Optional[Callable[..., Any]]:
    """An out= form for a torch.nn leaf module, called with the module's own
    tensors as keyword arguments (where libhyper holds them): kept only where
    it equals the module's call bit for bit.  Not for a module with hooks,
    which the plain call runs."""
    if kwargs or any(g is not None for _, _, g in mod_tensors) or \
            mod._forward_hooks or mod._forward_pre_hooks:
        return None
    local = [n for n, _, _ in mod_tensors]
    tensors = dict(module_tensors(mod))
    extra = {n: tensors[n].detach() for n in local}
    return _first_exact(_leaf_candidates(mod, local), args, kwargs, extra, value)


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
    """The median time of ``runs`` calls of fn.  CUDA kernels run
    asynchronously: where CUDA is in use, each call is timed from an idle
    device to its kernels' end, not to their launch."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() and \
        torch.cuda.is_initialized() else (lambda: None)
    times = []
    for _ in range(runs):
        sync()
        t0 = time.perf_counter_ns()
        fn()
        sync()
        times.append(time.perf_counter_ns() - t0)
    return int(statistics.median(times))


# ---- capture ----------------------------------------------------------------

SEED = 0x5EED   # the RNG seed of every reference run at capture


def copy_module(module: torch.nn.Module) -> torch.nn.Module:
    """A deep copy sharing the parameters: buffers, counters and any other
    Python state are the copy's own, so running it changes nothing in
    ``module``."""
    memo: Dict[int, Any] = {id(p): p for p in module.parameters()}
    if isinstance(module, torch.fx.GraphModule):
        # GraphModule.__deepcopy__ drops the memo (torch 1.13): do what it does, with it.
        root = torch.nn.Module()
        root.__dict__ = copy.deepcopy(module.__dict__, memo)
        return torch.fx.GraphModule(root, root.__dict__["_graph"], module.__class__.__name__)
    return copy.deepcopy(module, memo)


def module_tensors(m: torch.nn.Module) -> List[Tuple[str, torch.Tensor]]:
    """A module's parameters and buffers by name, tied ones under each name."""
    out: List[Tuple[str, torch.Tensor]] = []
    for kind in ("_parameters", "_buffers"):
        for prefix, sub in m.named_modules(remove_duplicate=False):
            for n, t in getattr(sub, kind).items():
                if t is not None:
                    out.append((f"{prefix}.{n}" if prefix else n, t))
    return out


def snap(v: Any) -> Any:
    """A copy of a value's tensors, as they are now."""
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, (tuple, list)):
        vals = [snap(x) for x in v]
        return type(v)(*vals) if hasattr(v, "_fields") else type(v)(vals)
    if isinstance(v, dict):
        return {k: snap(x) for k, x in v.items()}
    return v


def whole(t: torch.Tensor) -> torch.Tensor:
    """All of t's storage, as a flat tensor of t's dtype."""
    return t.as_strided((t.storage().size(),), (1,), 0)


class _NodeFailed(Exception):
    def __init__(self, node: torch.fx.Node, error: Exception):
        super().__init__(str(error))
        self.node, self.error = node, error


class _BuildFailed(Exception):
    """A CaptureError of _build(), raised from inside the recorder's run."""

    def __init__(self, error: CaptureError):
        super().__init__()
        self.error = error


class _Recorder(torch.fx.Interpreter):
    """Runs the graph node by node, each under ``guard()`` (verify.protect),
    and hands each node to ``build`` (a _build() generator) as soon as it
    has run, with its value in ``values`` and the storages it wrote in
    ``written`` (found by the tensors' version counters).  A value is
    dropped once its last user is built, so capture holds about what an
    eager run holds, not every intermediate (a 2048-token prefill and 32
    decode steps of a 1 B model held 137 GB on a GPU); a storage no live
    value uses any more is forgotten (``forget``), so that a later tensor
    at the same address is not taken for it.  Inputs' and ``pinned``
    storages (the module's tensors) are never forgotten."""

    def __init__(self, gm: torch.fx.GraphModule, guard: Callable[[], Any],
                 pinned: Set[int]):
        super().__init__(gm)
        self.values: Dict[str, Any] = {}
        self.written: Dict[str, List[int]] = {}
        self.guard = guard
        self.build: Any = None
        self.forget: Callable[[int], None] = lambda ptr: None
        self.pinned = set(pinned)
        self._refs: Dict[int, int] = {}    # storage -> live values that use it
        self._last: Dict[str, str] = {}    # node -> its last user
        for n in gm.graph.nodes:
            for a in n.all_input_nodes:
                self._last[a.name] = n.name
        # Buffers: some kernels (batch_norm's running statistics) write them
        # without bumping their version, so their values are compared too.
        self._buffers = {_storage(b)[0] for b in gm.buffers()}

    def run_node(self, n: torch.fx.Node) -> Any:
        watch: List[torch.Tensor] = []
        if n.op in ("call_function", "call_method", "call_module"):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            torch.fx.node.map_aggregate((args, kwargs), lambda a: watch.append(a)
                                        if isinstance(a, torch.Tensor) else None)
            if n.op == "call_module":
                watch += [t for _, t in module_tensors(self.module.get_submodule(n.target))]
        before = [t._version for t in watch]
        kept = [whole(t).clone() if _storage(t)[0] in self._buffers else None for t in watch]
        try:
            with self.guard():
                v = super().run_node(n)
        except Exception as e:
            raise _NodeFailed(n, e) from None
        self.values[n.name] = v
        for t in _leaves(v):
            ptr = _storage(t)[0]
            self._refs[ptr] = self._refs.get(ptr, 0) + 1
            if n.op in ("placeholder", "get_attr"):
                self.pinned.add(ptr)
        changed = [_storage(t)[0] for t, b, k in zip(watch, before, kept)
                   if t._version != b or (k is not None and not torch.equal(k, whole(t)))]
        if changed:
            self.written[n.name] = list(dict.fromkeys(changed))
        if self.build is not None:
            # Building times and tries kernels: neither the run's RNG nor a
            # leaf module's buffers (BatchNorm's statistics) may see it.
            rng = _rng_state()
            kept_bufs = [(b, b.clone()) for b in self.module.get_submodule(n.target).buffers()] \
                if n.op == "call_module" else []
            try:
                self.build.send(n)
            except CaptureError as e:     # carried past fx's message rewriting
                raise _BuildFailed(e) from None
            for b, c in kept_bufs:
                b.copy_(c)
            _set_rng_state(rng)
        for a in n.all_input_nodes:
            if self._last.get(a.name) == n.name:
                self._drop(a.name)
        if not n.users and n.op != "output":
            self._drop(n.name)
        return v

    def _drop(self, name: str) -> None:
        for t in _leaves(self.values.pop(name, None)):
            ptr = _storage(t)[0]
            self._refs[ptr] -= 1
            if not self._refs[ptr]:
                del self._refs[ptr]
                if ptr not in self.pinned:
                    self.forget(ptr)


def _rng_state() -> Tuple[torch.Tensor, Any]:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and \
        torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda


def _set_rng_state(state: Tuple[torch.Tensor, Any]) -> None:
    torch.set_rng_state(state[0])
    if state[1] is not None:
        torch.cuda.set_rng_state_all(state[1])


def where(node: torch.fx.Node) -> str:
    """A node as messages name it."""
    what = f"module {node.target!r}" if node.op == "call_module" else target_name(node)
    return f"node {node.name!r} ({what})"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _check_inputs(module: torch.nn.Module, gm: torch.fx.GraphModule,
                  example_inputs: Tuple[Any, ...]) -> None:
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise CaptureError(f"{type(module).__name__}.forward takes {len(placeholders)} "
                           f"inputs, {len(example_inputs)} example inputs were given")
    for n, v in zip(placeholders, example_inputs):
        if not isinstance(v, torch.Tensor):
            raise CaptureError(f"input {n.name!r}: only tensor inputs are supported "
                               f"(got {type(v).__name__})")


def export(module: torch.nn.Module, example_inputs: Tuple[Any, ...]) -> torch.fx.GraphModule:
    """torch.export (torch 2.1 and later): a functional ATen graph, buffer
    writes explicit (``copy_`` into the buffer), as a GraphModule whose
    parameters and buffers keep their names in ``module``."""
    if not hasattr(torch, "export"):
        raise CaptureError(f"cannot capture {type(module).__name__} with torch.export: "
                           f"torch {torch.__version__} has none (2.1 or later)")
    try:
        gm = torch.export.export(module, example_inputs).module()
    except Exception as e:
        raise CaptureError(f"cannot capture {type(module).__name__} with torch.export: "
                           f"{_first_line(e)}") from None
    if not isinstance(gm, torch.fx.GraphModule):
        raise CaptureError(f"cannot capture {type(module).__name__} with torch.export: "
                           f"its module() is a {type(gm).__name__}, not a GraphModule")
    return gm


def capture(module: torch.nn.Module, example_inputs: Sequence[Any], *, runs: int = 3,
            name: Optional[str] = None, verify: bool = True, via: str = "auto") -> Captured:
    """Trace, run on example_inputs, build the graph, and (``verify``) check
    that the captured program gives module(*example_inputs) exactly, state
    included; a difference is a CaptureError naming the first node that
    differs.  Everything runs on copies of ``module`` (copy_module()),
    which share its parameters, under verify.protect(), which refuses a
    write into them before it happens: capture changes neither the
    module's state, refused or not, nor the RNG's.

    ``via``: "fx" (torch.fx symbolic tracing, leaves for torch.nn), "export"
    (torch.export, torch 2.1 and later), or "auto": export where torch has
    it, and fx when export fails or its graph is refused (the reason is in
    ``notes``)."""
    if via not in ("auto", "fx", "export"):
        raise ValueError(f"via must be 'auto', 'fx' or 'export' (got {via!r})")
    if via == "auto":
        if not hasattr(torch, "export"):
            return capture(module, example_inputs, runs=runs, name=name, verify=verify,
                           via="fx")
        try:
            return capture(module, example_inputs, runs=runs, name=name, verify=verify,
                           via="export")
        except Exception as e:    # any failure of the export path: fx, and say why
            cap = capture(module, example_inputs, runs=runs, name=name, verify=verify,
                          via="fx")
            cap.notes.append(f"torch.export not used: {_first_line(e)}")
            return cap
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    # Each path leaves the module's buffers as they were, whatever it did:
    # runs are guarded (verify.protect), and anything else is undone here.
    saved = [(b, b.detach().clone()) for b in module.buffers()]   # each once
    try:
        return _capture(module, tuple(example_inputs), runs, name, verify, via)
    finally:
        with torch.no_grad():
            for b, v in saved:
                if not torch.equal(b, v):
                    b.copy_(v)


def _capture(module: torch.nn.Module, example_inputs: Tuple[Any, ...], runs: int,
             name: Optional[str], verify: bool, via: str) -> Captured:
    mname = type(module).__name__
    work = copy_module(module)
    gm = export(work, example_inputs) if via == "export" else trace(work)
    _check_inputs(module, gm, example_inputs)
    from . import verify as _verify
    # The caller's RNG streams are left as they were: the host's, and each
    # GPU's once CUDA is in use (capture seeds them for its reference runs).
    gpus = list(range(torch.cuda.device_count())) if torch.cuda.is_available() and \
        torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=gpus), torch.no_grad():
        # The module's own tensors (fx's GraphModule registers the constants it
        # folded as buffers too: those are data, not weights).
        holder = work if via == "fx" else gm
        owned = {_storage(t)[0] for t in list(holder.parameters()) + list(holder.buffers())}
        module_ptrs = {_storage(t)[0] for t in list(gm.parameters()) + list(gm.buffers())}
        # Each node runs under protect(): the copies share the module's parameters.
        rec = _Recorder(gm, lambda: _verify.protect(module, mname), owned | module_ptrs)
        build = _build(gm, rec, example_inputs, runs, name or mname, owned)
        next(build)
        rec.build = build
        initial = {n: whole(b).clone() for n, b in gm.named_buffers()} if verify else {}
        torch.manual_seed(SEED)
        try:
            traced_out = rec.run(*snap(example_inputs))
        except _NodeFailed as f:
            raise CaptureError(f"cannot capture {mname}: running it on the example inputs "
                               f"failed at {where(f.node)}: {_first_line(f.error)}") from None
        except _BuildFailed as b:
            raise b.error from None
        try:
            build.send(None)
            raise AssertionError("_build() did not finish")
        except StopIteration as done:
            cap = done.value
        ref = None
        if verify:
            with _verify.protect(module, mname):
                ref = _verify.eager(module, example_inputs)
        if ref is not None:
            _verify.check_trace(mname, ref, traced_out, gm)
        cap.via = via
        _bind_to(cap, module)
        if ref is not None:
            with _verify.protect(module, mname):
                _verify.check_program(cap, initial, example_inputs, ref)
        return cap


def _bind_to(cap: Captured, module: torch.nn.Module) -> None:
    """Weights are read from ``module`` itself (the copy's buffers moved
    while capturing), which is kept for the state written back."""
    cap.module = module
    own = dict(module_tensors(module))
    for tid, qual in cap.weight_names.items():
        t = own.get(qual)
        if t is not None:
            cap.tensors[tid].source = ("weight", t)


def _mask_index(v: Any) -> bool:
    found: List[bool] = []
    torch.fx.node.map_aggregate(v, lambda a: found.append(True) if isinstance(
        a, torch.Tensor) and a.dtype in (torch.bool, torch.uint8) else None)
    return bool(found)


def _data_dependent(n: torch.fx.Node, args: Any, kwargs: Any) -> bool:
    """Does the node's result's shape depend on the values of its inputs?"""
    name = target_name(n)
    if n.op == "call_module":
        return False
    if name in DATA_DEPENDENT:
        return True
    if name == "repeat_interleave":
        rep = args[1] if len(args) > 1 else kwargs.get("repeats", args[0] if args else None)
        return isinstance(rep, torch.Tensor) and rep.numel() > 1
    if n.target is operator.getitem and len(args) > 1 and isinstance(args[0], torch.Tensor):
        return _mask_index(args[1])
    return name == "where" and len(args) == 1 and not kwargs


def _build(gm, rec: "_Recorder", example_inputs, runs, name, owned
           ) -> Generator[None, Optional[torch.fx.Node], Captured]:
    """The Captured, built node by node as the recorder runs them: send
    each node once it has run (its value still in ``rec.values``, its
    arguments' too), then None; the generator returns the Captured."""
    values = rec.values
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
                                  t.storage_offset(), source=source, device=t.device)
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

    def weight(qual: str, t: torch.Tensor):
        """The weight tensor t is (part of): its id and, when only part of
        it, t's geometry."""
        ptr, _ = _storage(t)
        # torch.fx folds tensors made from constants only (torch.zeros of
        # a fixed shape) into _tensor_constant attributes: data, not weights.
        # A constant that is a view of a buffer (sliced at trace time) is
        # that buffer: a weight.
        kind = "weight" if ptr in owned or not qual.startswith("_tensor_constant") \
            else "activation"
        tid = by_storage.get(ptr)
        if tid is None:
            tid = new_tensor(qual, t, kind, ("weight", t))
            if kind == "weight":
                cap.weight_names[tid] = qual
        tensors[tid].live_in = True
        spec = tensors[tid]
        if tuple(t.shape) == spec.shape and t.storage_offset() == spec.offset and \
                tuple(t.stride()) == spec.stride:
            return tid, None
        return tid, (tuple(t.shape), tuple(t.stride()), t.storage_offset())

    def fail(n: torch.fx.Node, why: str) -> CaptureError:
        return CaptureError(f"cannot capture {name}: {where(n)} {why}")

    rec.forget = lambda ptr: by_storage.pop(ptr, None)
    while True:
        n = yield
        if n is None:
            break
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
                tid, geom = weight(n.target, v)
                if geom is None:
                    node_tensor[n.name] = tid
                else:
                    free[n.name] = [tid]
                    cap.attr_views[n.name] = (tid, *geom)
            else:
                free[n.name] = []
            continue
        if n.op == "output":
            for tid in reads(arg_nodes(n)):
                tensors[tid].live_out = True
            continue
        args = map_arg(n.args, lambda a: values.get(a.name))
        kwargs = map_arg(n.kwargs, lambda a: values.get(a.name))
        if _data_dependent(n, args, kwargs):
            raise fail(n, "makes a tensor whose shape depends on the input values "
                       "(boolean mask, nonzero, unique, ...): its memory cannot be planned; "
                       "use a fixed-shape form (torch.where, masked_fill) or run it outside "
                       "the captured module")
        deps = reads(arg_nodes(n))
        mod_tensors: List[Tuple[str, str, Any]] = []
        if n.op == "call_module":
            for local, t in module_tensors(gm.get_submodule(n.target)):
                tid, geom = weight(f"{n.target}.{local}", t)
                mod_tensors.append((local, tid, geom))
                if tid not in deps:
                    deps.append(tid)
        leaves = _leaves(v)
        written: List[str] = []
        for ptr in rec.written.get(n.name, []):
            if ptr not in by_storage:
                raise fail(n, "writes a tensor that is not an input, weight or result of the graph")
            if by_storage[ptr] not in written:
                written.append(by_storage[ptr])
        fresh = [i for i, t in enumerate(leaves) if _storage(t)[0] not in by_storage]
        if not fresh and not written:
            if mod_tensors:
                raise fail(n, "returns a view of its input and has parameters: not supported")
            free[n.name] = deps      # a view, or no tensor at all
            continue
        if fresh and len(fresh) != len(leaves):
            raise fail(n, "returns both views of its inputs and new tensors, which is not "
                       "supported")
        if written and not fresh:
            # In place: the node's value is the tensor it changed (or nothing).
            target = None
            for a in arg_nodes(n):
                av = values.get(a.name)
                if isinstance(v, torch.Tensor) and isinstance(av, torch.Tensor) and \
                        _storage(av)[0] == _storage(v)[0] and av.shape == v.shape and \
                        av.stride() == v.stride() and av.storage_offset() == v.storage_offset():
                    target = a
                    break
            if leaves and target is None:
                raise fail(n, "changes a tensor in place and returns a different view of it "
                           "(in-place shape change): not supported; use the out-of-place form")
            if target is None:
                target = arg_nodes(n)[0] if arg_nodes(n) else None
            if target is not None:
                cap.mutating[n.name] = target.name
                free[n.name] = reads([target])
            else:
                free[n.name] = []
            op = OpSpec(n.name, n, deps, written, mutates=True, module_tensors=mod_tensors)
            _time(op, n, gm, args, kwargs, runs)
            ops.append(op)
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
            outs = []
            for i, t in enumerate(leaves):
                outs.append(new_tensor(f"{n.name}.{i}", t, kind, ("node", n.name, i)))
            node_leaves[n.name] = outs  # type: ignore[assignment]
            cap.node_struct[n.name] = _struct(v, [0])
        op = OpSpec(n.name, n, deps, outs + [w for w in written if w not in outs],
                    fresh=fresh, module_tensors=mod_tensors, mutates=False)
        if isinstance(v, torch.Tensor) and not written and n.op != "call_module":
            op.kernel = _choose_kernel(n, gm, args, kwargs, v)
        elif isinstance(v, torch.Tensor) and not written:
            op.kernel = _choose_leaf_kernel(gm.get_submodule(n.target), mod_tensors,
                                            args, kwargs, v)
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
    cap.state = [t for op in ops for t in op.outputs if tensors[t].source[0] == "weight"]
    cap.state = list(dict.fromkeys(cap.state))
    cap.written_inputs = [(t, tensors[t].source[1]) for t in dict.fromkeys(
        t for op in ops for t in op.outputs) if tensors[t].source[0] == "input"]
    for t in cap.state + [t for t, _ in cap.written_inputs]:
        tensors[t].live_out = True      # its value after the call is written back
    return cap


def _time(op: OpSpec, n, gm, args, kwargs, runs: int) -> None:
    if op.mutates:
        # Time it on copies: the captured values must not change.
        def fresh():
            return _call(n, gm, *snap((args, kwargs)))
        op.compute_ns = _median_ns(fresh, max(1, runs))
        return
    op.compute_ns = _median_ns(lambda: _call(n, gm, args, kwargs), max(1, runs))
