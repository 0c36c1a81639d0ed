# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run a captured graph step by step under libhyper.

Weights and KV caches start in the pool; libhyper prefetches, stores and
detaches them as the schedule says.  Every tensor the operator touches is
a torch view over libhyper's memory (the device arena, or a pool region
for a result read at the end): there is no copy between torch and
libhyper.  An operator writes its result straight into the arena with its
``out=`` kernel where capture found one that is bit-identical, otherwise
it runs as usual and its result is copied into the arena (counted in
``stats["copied_outputs"]``).  hyper_step_begin() waits for the step's
prefetches; before the operator runs, the runner waits
(``ctx.wait_tensor``) for each input the schedule prefetches or stores,
and for no other: a tensor that never moves has nothing in flight.

Each operator's step is compiled once, at setup, into one Python function
(_compile(): its views and free nodes as locals, its call with constants
bound), so a step costs hyper_step_begin(), one hyper_tensor_ptr() per
tensor it touches, that function and hyper_step_end().

A torch.nn leaf module runs its own forward with its parameters and
buffers swapped for views of libhyper's memory (call_leaf()).  Buffers
forward writes (the module's state) are copied back into the module after
each call, and inputs written in place into the caller's tensors, as an
eager call leaves them.  run_step() is one operator's code, shared with
capture's check (verify.py).
"""
from __future__ import annotations

import ctypes
import errno
import keyword
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.fx
from torch.fx.node import map_arg

from .binding import CONST, Buffer, Context, DeviceMemory, HyperError, Schedule
from .capture import Captured, OpSpec, TensorSpec, _call, _leaves, rebuild


class InputError(ValueError):
    """Inputs that do not match what was captured and planned."""


def _pool_view(addr: int, nbytes: int) -> torch.Tensor:
    buf = (ctypes.c_char * nbytes).from_address(addr)
    return torch.frombuffer(buf, dtype=torch.uint8)


def _as(spec: TensorSpec, flat: torch.Tensor, elem_off: int) -> torch.Tensor:
    return flat.as_strided(spec.shape, spec.stride, elem_off + spec.offset)


class Runner:
    """One libhyper context running one schedule of a captured graph."""

    def __init__(self, cap: Captured, schedule: Schedule, backend: str = "auto",
                 baseline_peak: int = 0, pool_bytes: int = 0, weights: Optional[str] = None):
        """``weights``: the name of a shared object holding the module's
        weights (shared.publish_weights): pool copies are the object's,
        read-only in place, and the rest are copied from it, not from the
        module."""
        self.cap = cap
        self.baseline_peak = baseline_peak
        self.weights = weights
        self._wsrc: Dict[str, torch.Tensor] = {}
        self.mem: Optional[DeviceMemory] = None
        self.sched: Optional[Schedule] = None
        self._bound = {}
        self.ctx = self._open(backend, pool_bytes)
        try:
            self._setup(schedule)
        except BaseException:
            self.close()
            raise
        self.stats: Dict[str, int] = {}

    # ---- setup -----------------------------------------------------------
    # The device side: host memory here; _cuda.CudaRunner overrides these.
    def _open(self, backend: str, pool_bytes: int) -> Context:
        return Context(backend, pool_bytes=pool_bytes)

    def _device_memory(self, arena: int, bufs: List[Buffer]) -> None:
        """The arena (self.mem, self.arena) and the bound weights' memory."""
        self.mem = DeviceMemory(arena, prefault=not bufs)
        self.ctx.register_buffers([self.mem, *bufs])
        self.ctx.set_arena(self.mem)

    def _arena_tensor(self) -> torch.Tensor:
        return torch.frombuffer(self.mem.mmap, dtype=torch.uint8)

    def _setup(self, schedule: Schedule) -> None:
        cap, ctx = self.cap, self.ctx
        # The caller's (the Plan's) schedule: hyper_attach takes its own
        # reference, so the runner never frees it.
        self.sched = schedule
        info = self.sched.info()
        # Each step as the schedule has it (a call into libhyper that
        # builds a dict), read once for all of setup's needs.
        steps = [self.sched.step(s) for s in range(info["nr_steps"])]
        self.index = {tid: self.sched.find(tid) for tid in cap.tensors}
        self.homes = {tid: self.sched.tensor(i)["home"] for tid, i in self.index.items()}
        # Weights are the framework's own tensors, loaded once, as a device
        # holds a model.  One the schedule keeps on the device from the
        # start can be bound in place (registered, for stores) instead of
        # being copied into its arena room at every call; but a bound
        # weight holds its memory for the whole run, while the planner
        # frees it after its last use.  So a weight is bound only where
        # that does not raise the run's peak above the schedule's
        # (_bindable); every other weight whose home is the device is
        # copied into its arena room at each call, and that room is
        # reused once the schedule detaches it.
        self._bound: Dict[str, torch.Tensor] = {}
        self._state = set(cap.state)
        bufs: List[Buffer] = []
        obj = None
        if self.weights is not None:
            # Weights from a shared object: read-only, so none is state,
            # and none is bound in place (its room in the arena is used).
            if cap.state:
                raise InputError(f"the module writes its buffers ({', '.join(cap.state)}): "
                                 f"weights from a shared object are read-only; run it "
                                 f"without weights=")
            from .shared import object_weights
            obj, self._wsrc, offsets = object_weights(ctx, self.weights, cap)
        for tid in ([] if obj is not None else
                    _bindable(cap, self.sched, info, steps, self.index, self.homes,
                              self._state)):
            t = cap.tensors[tid].source[1]
            self._bound[tid] = t
            bufs.append(Buffer(t.storage().data_ptr(), cap.tensors[tid].nbytes, t))
        self.bound_bytes = sum(b.nbytes for b in bufs)
        arena = info["arena_bytes"] or (info["peak_device_bytes"] + info["peak_device_bytes"] // 8
                                        + 64 * info["nr_tensors"] + 4096)
        # libhyper's layout places bound tensors too; their room stays untouched.
        self._device_memory(arena, bufs)
        ctx.attach(self.sched)
        for tid, b in zip(self._bound, bufs):
            ctx.bind_device(self.index[tid], b.address)
        # A weight's pool copy is the object's bytes, read-only in place,
        # unless the schedule stores it (a weight it starts on the device
        # and offloads later): that one gets a private pool copy, which the
        # store fills with the same bytes.
        in_pool = set()
        if obj is not None:
            stored = {t for st in steps for when in ("before", "after")
                      for op, t in st[when] if op == "store"}
            for tid in self._wsrc:
                i = self.index[tid]
                if self.sched.tensor(i)["flags"] & CONST["HYPER_TENSOR_NEEDS_POOL"] and \
                        i not in stored:
                    ctx.bind_pool(i, obj, offsets[tid])
                    in_pool.add(tid)
        self.shared_weight_bytes = sum(cap.tensors[t].nbytes for t in in_pool)
        ctx.prepare()
        self.arena = self._arena_tensor()
        self._typed: Dict[torch.dtype, torch.Tensor] = {}
        # tid -> [index, address of the cached view, the view, bound tensor]
        self._slots: Dict[str, List[Any]] = {tid: [i, -1, None, self._bound.get(tid)]
                                             for tid, i in self.index.items()}
        self._view: Optional[Callable[[str], torch.Tensor]] = self._viewer()
        self._fills = self._to_fill()
        # Only a tensor the schedule prefetches or stores ever has a
        # transfer in flight (early prefetches are the schedule's own, run
        # ahead): a step waits for those of its inputs, no other.
        moved = {t for st in steps for when in ("before", "after")
                 for kind, t in st[when] if kind in ("prefetch", "store")}
        ops = {o.id: o for o in cap.ops}
        progs: Dict[str, _Program] = {}
        self.steps: List[Tuple[OpSpec, Tuple[int, ...], _Program]] = []
        for st in steps:
            op = ops[st["op"]]
            if op.id not in progs:
                progs[op.id] = _compile(cap, op)
            waits = tuple(self.index[t] for t in op.inputs if self.index[t] in moved)
            self.steps.append((op, waits, progs[op.id]))
        with torch.no_grad():
            for tid, spec in cap.tensors.items():
                if spec.source[0] == "weight" and self.homes[tid] == "pool" and \
                        tid not in in_pool:
                    self._fill(tid, self._pool_tensor(tid),
                               self._wsrc.get(tid, spec.source[1]))
        self.output = next(n for n in cap.gm.graph.nodes if n.op == "output")

    def close(self) -> None:
        """Free the context (regions, registration, ring) and the arena."""
        self._view = None
        if self.ctx is not None:
            self.ctx.close()
        self.sched = None
        self._typed = {}
        self._slots = {}
        self.arena = None
        if self.mem is not None:
            self.mem.close()
            self.mem = None

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- views over libhyper's memory ------------------------------------
    def _viewer(self) -> Callable[[str], torch.Tensor]:
        """view(tid): the tensor as a view of where libhyper holds it now.

        One hyper_tensor_ptr() call; the view is made again only when the
        address changed.  The handle is this context's: close() drops the
        function before it frees the context."""
        ptr = self.ctx._lib.hyper_tensor_ptr
        handle = self.ctx.handle
        slots = self._slots
        new_view = self._new_view

        def view(tid: str) -> torch.Tensor:
            s = slots[tid]
            if s[3] is not None:
                return s[3]
            addr = ptr(handle, s[0])
            if addr == s[1]:
                return s[2]
            return new_view(tid, s, addr)
        return view

    def _new_view(self, tid: str, slot: List[Any], addr: Optional[int]) -> torch.Tensor:
        if not addr:
            raise HyperError(0, f"tensor {tid!r} is not resident where the schedule says it is")
        spec = self.cap.tensors[tid]
        flat = self._typed.get(spec.dtype)
        if flat is None:
            flat = self._typed[spec.dtype] = self.arena.view(spec.dtype)
        esize = flat.element_size()
        view = _as(spec, flat, (addr - self.mem.address) // esize)
        slot[1], slot[2] = addr, view
        return view

    def _device_tensor(self, tid: str) -> torch.Tensor:
        if self._view is None:
            raise HyperError(errno.EBADF, "the runner is closed")
        return self._view(tid)

    def _pool_tensor(self, tid: str) -> torch.Tensor:
        spec = self.cap.tensors[tid]
        addr = self.ctx.tensor_pool_ptr(self.index[tid])
        if not addr:
            raise HyperError(0, f"tensor {tid!r} has no pool copy")
        return _as(spec, _pool_view(addr, spec.nbytes).view(spec.dtype), 0)

    def _fill(self, tid: str, dest: torch.Tensor, src: torch.Tensor) -> None:
        """Copy a weight's whole storage (every view of it is read) into dest's."""
        n = self.cap.tensors[tid].nbytes // src.element_size()
        _part(self.cap, dest, tid, ((n,), (1,), 0)).copy_(src.as_strided((n,), (1,), 0))

    # ---- running ------------------------------------------------------------
    def check_inputs(self, inputs: Tuple[Any, ...]) -> None:
        want = self.cap.inputs
        if len(inputs) != len(want):
            raise InputError(f"{len(inputs)} inputs given, the plan was made for {len(want)}")
        for i, (x, (name, shape, dtype)) in enumerate(zip(inputs, want)):
            if not isinstance(x, torch.Tensor):
                raise InputError(f"input {i} ({name!r}): a tensor is needed, "
                                 f"got {type(x).__name__}")
            if tuple(x.shape) != shape or x.dtype != dtype:
                raise InputError(f"input {i} ({name!r}): shape {tuple(x.shape)} {x.dtype} does "
                                 f"not match the planned {shape} {dtype}; plan again with "
                                 f"inputs of this shape")

    def __call__(self, *inputs: Any) -> Any:
        self.check_inputs(inputs)
        ctx = self.ctx
        ctx.rewind()
        ctx.reset_stats()
        with torch.no_grad():
            # Under no_grad: a weight that requires grad copied into the
            # arena must not make the arena's views require grad.
            self._fill_homes(inputs)
            t0 = time.perf_counter_ns()
            self._run_steps()
            ctx.drain()
            wall = time.perf_counter_ns() - t0
            out = self._outputs()
            self._write_back(inputs)
        st = ctx.stats()
        self.stats = {
            "peak_device_bytes": st["peak_arena_bytes"] + self.bound_bytes,
            "bound_weight_bytes": self.bound_bytes,
            "baseline_peak_bytes": self.baseline_peak,
            "bytes_prefetched": st["bytes_prefetched"],
            "bytes_stored": st["bytes_stored"],
            "stall_ns": st["stall_ns"],
            "wall_ns": wall,
            "steps": st["steps"],
            "peak_resident_bytes": st["peak_resident_bytes"],
            "out_kernels": self.cap.uses_out_kernels,
            "copied_outputs": self.cap.copied_outputs,
            "shared_weight_bytes": self.shared_weight_bytes,
        }
        return out

    def _to_fill(self) -> List[Tuple[str, bool, bool]]:
        """(tid, weight, home is the device) of what each call copies in:
        the inputs, and the weights not bound whose home is the device, or
        that forward writes (state, read afresh at every call)."""
        out = []
        for tid, spec in self.cap.tensors.items():
            kind = spec.source[0]
            if kind == "input" or (kind == "weight" and tid not in self._bound and
                                   (self.homes[tid] == "device" or tid in self._state)):
                out.append((tid, kind == "weight", self.homes[tid] == "device"))
        return out

    def _fill_homes(self, inputs: Tuple[Any, ...]) -> None:
        tensors, wsrc = self.cap.tensors, self._wsrc
        for tid, weight, device in self._fills:
            src = tensors[tid].source
            dest = self._device_tensor(tid) if device else self._pool_tensor(tid)
            if weight:
                # a shared object's weights from the object
                self._fill(tid, dest, wsrc.get(tid, src[1]))
            else:
                dest.copy_(inputs[src[1]])

    def _final_tensor(self, tid: str) -> torch.Tensor:
        i = self.index[tid]
        if self.ctx.tensor_ptr(i):
            return self._device_tensor(tid)
        self.ctx.wait_tensor(i)
        return self._pool_tensor(tid)

    def _run_steps(self) -> None:
        """Every step: hyper_step_begin(), waits for its inputs with a
        transfer in flight (ctx.wait_tensor: a CUDA context's waits on the
        compute stream), its operator's compiled code, hyper_step_end()."""
        ctx = self.ctx
        lib, handle = ctx._lib, ctx.handle
        begin, end = lib.hyper_step_begin, lib.hyper_step_end
        wait, view, steps = ctx.wait_tensor, self._view, self.steps
        nodata = -errno.ENODATA
        while True:
            step = begin(handle)
            if step < 0:
                if step == nodata:
                    return
                ctx.check(step, "hyper_step_begin")
            _op, waits, prog = steps[step]
            for i in waits:
                wait(i)                  # resident before anything reads it
            prog.run(view)
            ret = end(handle)
            if ret:
                ctx.check(ret, "hyper_step_end")

    def _outputs(self) -> Any:
        env: Dict[str, Any] = {}
        view = self._final_tensor
        val = map_arg(self.output.args[0], lambda a: node_value(self.cap, a, env, view))
        # torch.export's graphs return their outputs flat: rebuild them.
        return _detach(self.cap.gm.graph.process_outputs(val))

    def _write_back(self, inputs: Tuple[Any, ...]) -> None:
        """What forward wrote outside its results, back where eager writes
        it: buffers (running statistics, counters) into the module, and
        inputs changed in place into the caller's tensors."""
        cap = self.cap
        for tid in cap.state:
            if tid not in self._bound:
                write_back(cap, tid, self._final_tensor(tid), cap.tensors[tid].source[1])
        for tid, i in cap.written_inputs:
            inputs[i].copy_(self._final_tensor(tid))


def write_back(cap: Captured, tid: str, final: torch.Tensor, dest: torch.Tensor) -> None:
    """Copy a weight's whole storage from ``final`` (a view of it where it
    now is) into ``dest`` (the module's tensor)."""
    n = cap.tensors[tid].nbytes // dest.element_size()
    dest.as_strided((n,), (1,), 0).copy_(_part(cap, final, tid, ((n,), (1,), 0)))


def node_value(cap: Captured, node: Any, env: Dict[str, Any], view: Any) -> Any:
    """A node's value once the steps are done (``view(tid)``: where a tensor is)."""
    if node.name in env:
        return env[node.name]
    if node.name in cap.node_tensor:
        v: Any = view(cap.node_tensor[node.name])
    elif node.name in cap.node_leaves:
        v = rebuild(cap.node_struct[node.name], [view(t) for t in cap.node_leaves[node.name]])
    elif node.name in cap.mutating:
        v = node_value(cap, next(a for a in node.all_input_nodes
                                 if a.name == cap.mutating[node.name]), env, view)
    elif node.op == "get_attr":
        if node.name in cap.attr_views:
            tid, shape, stride, off = cap.attr_views[node.name]
            v = _part(cap, view(tid), tid, (shape, stride, off))
        else:
            v = cap.gm
            for part in node.target.split("."):
                v = getattr(v, part)
    else:
        args = map_arg(node.args, lambda a: node_value(cap, a, env, view))
        kwargs = map_arg(node.kwargs, lambda a: node_value(cap, a, env, view))
        v = _call(node, cap.gm, args, kwargs)
    env[node.name] = v
    return v


def _bindable(cap: Captured, sched: Schedule, info: Dict[str, Any],
              steps: List[Dict[str, Any]], index: Dict[str, int],
              homes: Dict[str, str], state: Any) -> List[str]:
    """Weights to bind in place without raising the schedule's peak.

    The schedule's residency is replayed event by event (device homes at
    the start; each step's before-list, its definitions, its after-list).
    Binding a weight that is resident from the start and detached at
    event d keeps its bytes resident after d too; weights are taken
    longest-lived first while the replayed peak stays the schedule's.
    If the replay does not give the schedule's own peak, only weights
    resident to the end are bound.  ``steps``: each step's
    ``sched.step()``, in order."""
    nbytes = {i: sched.tensor(i)["bytes"] for i in index.values()}
    resident = {i for tid, i in index.items() if homes[tid] == "device"}
    moved = set()
    freed: Dict[int, int] = {}           # tensor -> first event after its detach
    points = [sum(nbytes[i] for i in resident)]
    last = info["nr_steps"] - 1
    for s, st in enumerate(steps):
        events = list(st["before"]) + [("define", t) for t in st["defines"]] + list(st["after"])
        for op, t in events:
            if op in ("prefetch", "define"):
                moved.add(t)
                if t not in resident:
                    resident.add(t)
                    points.append(points[-1] + nbytes[t])
            elif op == "detach" and t in resident:
                resident.discard(t)
                if s != last and t not in freed:
                    freed[t] = len(points)
                points.append(points[-1] - nbytes[t])
    peak = info["peak_device_bytes"]
    cands = []
    for tid, spec in cap.tensors.items():
        i = index[tid]
        if spec.source[0] == "weight" and homes[tid] == "device" and i not in moved and \
                tid not in state:
            cands.append((freed.get(i, len(points)), tid))
    if max(points) != peak:
        return [tid for d, tid in cands if d == len(points)]
    bound = []
    for d, tid in sorted(cands, key=lambda c: -c[0]):
        size = nbytes[index[tid]]
        if d == len(points) or max(points[d:]) + size <= peak:
            for j in range(d, len(points)):
                points[j] += size
            bound.append(tid)
    return bound


def _detach(v: Any) -> Any:
    """Results outlive the run: copy them out of the arena and the pool."""
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*(_detach(x) for x in v))
    if isinstance(v, (tuple, list)):
        return type(v)(_detach(x) for x in v)
    if isinstance(v, dict):
        return {k: _detach(x) for k, x in v.items()}
    return v


def _part_args(cap: Captured, tid: str, geom: Tuple[Tuple[int, ...], Tuple[int, ...], int]
               ) -> Tuple[Tuple[int, ...], Tuple[int, ...], int]:
    """The part of weight ``tid``'s storage that geom (shape, stride,
    storage offset, as captured) says, as as_strided() arguments on a view
    ``base`` of the weight where it is now: (shape, stride, d) for
    ``base.as_strided(shape, stride, base.storage_offset() + d)``.  The
    one definition of that arithmetic: _part() (a weight's whole storage
    too, for _fill() and write_back()) and _compile()'s code."""
    shape, stride, off = geom
    return shape, stride, off - cap.tensors[tid].offset


def _part(cap: Captured, base: torch.Tensor, tid: str,
          geom: Tuple[Tuple[int, ...], Tuple[int, ...], int]) -> torch.Tensor:
    """The view of a weight's storage that geom (shape, stride, offset) says."""
    shape, stride, d = _part_args(cap, tid, geom)
    return base.as_strided(shape, stride, base.storage_offset() + d)


def call_leaf(mod: torch.nn.Module, tensors: List[Tuple[str, torch.Tensor]], args: Any,
              kwargs: Any) -> Any:
    """Run a torch.nn module with ``tensors`` in place of its parameters and
    buffers (views of libhyper's memory): its writes to a buffer (BatchNorm's
    running statistics) land there.  The module is left as it was."""
    return _Leaf(mod, [n for n, _ in tensors])([t for _, t in tensors], args, kwargs)


class _Leaf:
    """call_leaf() for one module and the names of the tensors it swaps,
    with their owners and the module's RNNs looked up once."""

    def __init__(self, mod: torch.nn.Module, names: List[str]):
        self.mod = mod
        self.owners = []
        for name in names:
            owner, _, attr = name.rpartition(".")
            self.owners.append((mod.get_submodule(owner) if owner else mod, attr))
        self.rnns = [m for m in mod.modules() if isinstance(m, torch.nn.RNNBase)]

    def __call__(self, tensors: List[torch.Tensor], args: Any, kwargs: Any) -> Any:
        saved = []
        try:
            for (sub, attr), t in zip(self.owners, tensors):
                d = sub._parameters if attr in sub._parameters else sub._buffers
                saved.append((d, attr, d[attr]))
                d[attr] = t
            for m in self.rnns:
                _refresh_flat_weights(m)
            return self.mod(*args, **kwargs)
        finally:
            for d, attr, old in reversed(saved):
                d[attr] = old
            for m in self.rnns:
                _refresh_flat_weights(m)


def _refresh_flat_weights(m: torch.nn.RNNBase) -> None:
    # RNNs keep a list of their weights: make it follow the swapped ones.
    m._flat_weights = [getattr(m, n) if hasattr(m, n) else None for n in m._flat_weights_names]


def run_step(cap: Captured, op: OpSpec, prog: "_Program", view: Any) -> None:
    """One operator: its views and free nodes, then its call, its result
    written to its output tensors (``view(tid)``: where a tensor is now).
    ``prog`` is _compile(cap, op): the same code the runner runs."""
    prog.run(view)


def _shape_error(op: OpSpec, got: torch.Tensor, want: torch.Tensor) -> None:
    raise InputError(f"node {op.id!r}: its result has shape {tuple(got.shape)} where the "
                     f"plan has {tuple(want.shape)}: its size depends on the input "
                     f"values; plan again with these inputs")


# ---- each operator's code, generated once -------------------------------------
#
# A step is compiled into one Python function of ``view`` (tid -> the tensor
# where libhyper holds it now): the views and free nodes its operator reads
# in graph order, each a local variable, then the operator's call with its
# arguments written out positionally and its constants bound once.  Running
# a step is then one call: no dict of values, no walk over an argument
# template.

_LITERALS = (int, bool, type(None))


class _Program:
    """What a step evaluates, compiled: ``run(view)``; ``source`` is its code."""

    def __init__(self, source: str, run: Callable[[Any], None]):
        self.source, self.run = source, run


class _Gen:
    """Python source of one step, with its constants in its own globals."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.consts: Dict[str, Any] = {"_leaves": _leaves, "_rebuild": rebuild,
                                       "_shape_error": _shape_error,
                                       "_getattr": getattr, "_slice": slice}
        self.names: Dict[str, str] = {}        # fx node name -> local variable

    def const(self, v: Any) -> str:
        if type(v) in _LITERALS:
            return repr(v)
        name = f"_k{len(self.consts)}"
        self.consts[name] = v
        return name

    def var(self, node_name: str) -> str:
        v = self.names[node_name] = f"_v{len(self.names)}"
        return v

    def expr(self, a: Any) -> str:
        """An fx argument as an expression: nodes are locals; a list or dict
        is built afresh at each call, a tuple or slice too where it holds
        one; the rest are constants.  Tuples (torch.Size included) are
        passed as plain tuples, lists and dicts as plain ones."""
        if isinstance(a, torch.fx.Node):
            return self.names[a.name]
        if not _has_node(a):
            return self.const(_plain(a))
        if isinstance(a, tuple):
            return "(" + "".join(self.expr(x) + ", " for x in a) + ")"
        if isinstance(a, list):
            return "[" + ", ".join(self.expr(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{self.const(k)}: {self.expr(v)}" for k, v in a.items()) + "}"
        return f"_slice({self.expr(a.start)}, {self.expr(a.stop)}, {self.expr(a.step)})"

    def call_args(self, args: Any, kwargs: Dict[str, Any], extra: List[Tuple[str, str]]) -> str:
        """``args`` (a tuple or a list) positionally, then keywords."""
        parts = [self.expr(x) for x in args]
        kw = [(k, self.expr(v)) for k, v in kwargs.items()] + extra
        names = [k for k, _ in kw]
        if len(set(names)) == len(names) and \
                all(_ident(k) for k in names):
            parts += [f"{k}={e}" for k, e in kw]
        else:
            # as a call with ** would: a repeated name is the call's TypeError
            parts += ["**{" + f"{self.const(k)}: {e}" + "}" for k, e in kw]
        return ", ".join(parts)

    def call(self, fn: Any, method: bool, args: Any, kwargs: Dict[str, Any],
             extra: List[Tuple[str, str]]) -> str:
        if method:
            rest = self.call_args(args[1:], kwargs, extra)
            if _ident(fn):
                return f"({self.expr(args[0])}).{fn}({rest})"
            return f"_getattr({self.expr(args[0])}, {self.const(fn)})({rest})"
        return f"{self.const(fn)}({self.call_args(args, kwargs, extra)})"


def _ident(name: str) -> bool:
    """Whether ``name`` may be written in the source as it is: an ASCII
    identifier, not a keyword (Python reads a non-ASCII one NFKC-normalised:
    "\ufb01" as "fi")."""
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def _has_node(a: Any) -> bool:
    """Whether an argument is built at each call: it holds an fx node, a
    list or a dict (a fresh one each time, as the operator may keep it)."""
    if isinstance(a, (torch.fx.Node, list, dict)):
        return True
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return any(_has_node(x) for x in a)
    if isinstance(a, slice):
        return any(_has_node(x) for x in (a.start, a.stop, a.step))
    return False


def _plain(a: Any) -> Any:
    """A constant argument with its tuples plain tuples (not torch.Size)."""
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_plain(x) for x in a)
    if isinstance(a, slice):
        return slice(_plain(a.start), _plain(a.stop), _plain(a.step))
    return a


def _callable(node: Any, gm: Any) -> Tuple[Any, bool]:
    if node.op == "call_method":
        return node.target, True
    if node.op == "call_module":
        return gm.get_submodule(node.target), False
    return node.target, False


def _compile(cap: Captured, op: OpSpec) -> _Program:
    g = _Gen()
    emit = g.lines.append
    view = "view"

    def attr_view(tid: str, geom: Tuple[Tuple[int, ...], Tuple[int, ...], int]) -> str:
        # _part(), written out with its arguments as constants
        shape, stride, d = _part_args(cap, tid, geom)
        emit(f"_b = {view}({g.const(tid)})")
        return f"_b.as_strided({g.const(shape)}, {g.const(stride)}, " \
               f"_b.storage_offset() + {d!r})"

    def need(node: Any) -> None:
        if node.name in g.names:
            return
        if node.name in cap.node_tensor:
            value = f"{view}({g.const(cap.node_tensor[node.name])})"
        elif node.name in cap.node_leaves:
            value = f"_rebuild({g.const(cap.node_struct[node.name])}, [" + \
                    ", ".join(f"{view}({g.const(t)})" for t in cap.node_leaves[node.name]) + "])"
        elif node.name in cap.mutating:
            target = next(a for a in node.all_input_nodes if a.name == cap.mutating[node.name])
            need(target)
            value = g.names[target.name]
        elif node.op == "get_attr":
            if node.name in cap.attr_views:
                tid, shape, stride, off = cap.attr_views[node.name]
                value = attr_view(tid, (shape, stride, off))
            else:
                v = cap.gm
                for part in node.target.split("."):
                    v = getattr(v, part)
                value = g.const(v)
        else:
            for a in node.all_input_nodes:
                need(a)
            fn, method = _callable(node, cap.gm)
            value = g.call(fn, method, node.args, node.kwargs, [])
        emit(f"{g.var(node.name)} = {value}")

    for a in op.node.all_input_nodes:
        need(a)
    fn, method = _callable(op.node, cap.gm)
    args, kwargs = op.node.args, op.node.kwargs
    out = [("out", f"{view}({g.const(op.outputs[0])})")] if op.kernel is not None else []
    if op.module_tensors and op.kernel is not None:
        # a leaf module's out= form, its tensors passed where libhyper holds them
        emit(g.call(op.kernel, False, args, kwargs,
                    out + [(n, f"{view}({g.const(t)})") for n, t, _ in op.module_tensors]))
    elif op.kernel is not None:
        emit(g.call(op.kernel, False, args, kwargs, out))
    else:
        if op.module_tensors:
            ts = []
            for _n, t, geom in op.module_tensors:
                ts.append(f"{view}({g.const(t)})" if geom is None else attr_view(t, geom))
                if geom is not None:
                    # attr_view() names its base _b: keep each tensor's own
                    emit(f"_t{len(ts)} = {ts[-1]}")
                    ts[-1] = f"_t{len(ts)}"
            leaf = _Leaf(fn, [n for n, _, _ in op.module_tensors])
            emit(f"_r = {g.const(leaf)}([{', '.join(ts)}], "
                 f"{g.expr(tuple(args))}, {g.expr(dict(kwargs))})")
        else:
            emit(f"_r = {g.call(fn, method, args, kwargs, [])}")
        if not op.mutates:
            emit("_l = _leaves(_r)")
            g.consts["_op"] = op
            for i, t in zip(op.fresh, op.outputs):
                emit(f"_d = {view}({g.const(t)})")
                emit(f"_x = _l[{i}]")
                emit("if _d.shape != _x.shape:")
                emit("    _shape_error(_op, _x, _d)")
                emit("_d.copy_(_x)")
    src = f"def _step({view}):\n" + "".join(f"    {line}\n" for line in g.lines or ["pass"])
    code = compile(src, f"<hyperoffload step {op.id}>", "exec")
    exec(code, g.consts)    # noqa: S102 - our own generated code, constants bound by name
    return _Program(src, g.consts["_step"])
