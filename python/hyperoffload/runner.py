# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run a captured graph step by step under libhyper.

Weights and KV caches start in the pool; libhyper prefetches, stores and
detaches them as the schedule says.  Every tensor the operator touches is
a torch view over libhyper's memory (the device arena, or a pool region
for a result read at the end): there is no copy between torch and
libhyper.  An operator writes its result straight into the arena with its
``out=`` kernel where capture found one that is bit-identical, otherwise
it runs as usual and its result is copied into the arena (counted in
``stats["copied_outputs"]``).  Before an operator reads a tensor,
``hyper_wait_tensor`` has said it is resident.
"""
from __future__ import annotations

import ctypes
import time
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.fx
from torch.fx.node import map_arg

from .binding import Buffer, Context, DeviceMemory, HyperError, Schedule
from .capture import Captured, OpSpec, TensorSpec, _call, _leaves


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
                 baseline_peak: int = 0, pool_bytes: int = 0):
        self.cap = cap
        self.baseline_peak = baseline_peak
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
        self.index = {tid: self.sched.find(tid) for tid in cap.tensors}
        self.homes = {tid: self.sched.tensor(i)["home"] for tid, i in self.index.items()}
        moved = set()
        for s in range(info["nr_steps"]):
            st = self.sched.step(s)
            moved.update(st["defines"])
            moved.update(t for op, t in st["before"] + st["after"] if op == "prefetch")
        # Weights the schedule keeps on the device from the start until
        # their last use are the framework's own tensors, loaded once, as a
        # device holds a model: bound in place (and registered, for stores),
        # not copied at every call, and counted in the peak for the whole
        # run.  A weight the schedule detaches and prefetches again needs its
        # room in the arena in between, so it is copied in at each call.
        self._bound: Dict[str, torch.Tensor] = {}
        bufs: List[Buffer] = []
        for tid, spec in cap.tensors.items():
            if spec.source[0] == "weight" and self.homes[tid] == "device" and \
                    self.index[tid] not in moved:
                t = spec.source[1]
                self._bound[tid] = t
                bufs.append(Buffer(t.storage().data_ptr(), spec.nbytes, t))
        self.bound_bytes = sum(b.nbytes for b in bufs)
        arena = info["arena_bytes"] or (info["peak_device_bytes"] + info["peak_device_bytes"] // 8
                                        + 64 * info["nr_tensors"] + 4096)
        # libhyper's layout places bound tensors too; their room stays untouched.
        self._device_memory(arena, bufs)
        ctx.attach(self.sched)
        for tid, b in zip(self._bound, bufs):
            ctx.bind_device(self.index[tid], b.address)
        ctx.prepare()
        self.arena = self._arena_tensor()
        self._typed: Dict[torch.dtype, torch.Tensor] = {}
        self._views: Dict[str, Tuple[int, torch.Tensor]] = {}
        ops = {o.id: o for o in cap.ops}
        self.steps: List[Tuple[OpSpec, List[int], "_Program"]] = []
        for s in range(info["nr_steps"]):
            op = ops[self.sched.step(s)["op"]]
            self.steps.append((op, [self.index[t] for t in op.inputs], _compile(cap, op)))
        for tid, spec in cap.tensors.items():
            if spec.source[0] == "weight" and self.homes[tid] == "pool":
                self._fill(tid, self._pool_tensor(tid), spec.source[1])
        self.output = next(n for n in cap.gm.graph.nodes if n.op == "output")

    def close(self) -> None:
        """Free the context (regions, registration, ring) and the arena."""
        if self.ctx is not None:
            self.ctx.close()
        self.sched = None
        self._typed = {}
        self._views = {}
        self.arena = None
        if self.mem is not None:
            self.mem.close()
            self.mem = None

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- views over libhyper's memory ------------------------------------
    def _device_tensor(self, tid: str) -> torch.Tensor:
        bound = self._bound.get(tid)
        if bound is not None:
            return bound
        addr = self.ctx.tensor_ptr(self.index[tid])
        cached = self._views.get(tid)
        if cached is not None and cached[0] == addr:
            return cached[1]
        if not addr:
            raise HyperError(0, f"tensor {tid!r} is not resident where the schedule says it is")
        spec = self.cap.tensors[tid]
        flat = self._typed.get(spec.dtype)
        if flat is None:
            flat = self._typed[spec.dtype] = self.arena.view(spec.dtype)
        esize = flat.element_size()
        view = _as(spec, flat, (addr - self.mem.address) // esize)
        self._views[tid] = (addr, view)
        return view

    def _pool_tensor(self, tid: str) -> torch.Tensor:
        spec = self.cap.tensors[tid]
        addr = self.ctx.tensor_pool_ptr(self.index[tid])
        if not addr:
            raise HyperError(0, f"tensor {tid!r} has no pool copy")
        return _as(spec, _pool_view(addr, spec.nbytes).view(spec.dtype), 0)

    def _fill(self, tid: str, dest: torch.Tensor, src: torch.Tensor) -> None:
        """Copy a weight's whole storage (every view of it is read) into dest's."""
        spec = self.cap.tensors[tid]
        n = spec.nbytes // src.element_size()
        start = dest.storage_offset() - spec.offset
        dest.as_strided((n,), (1,), start).copy_(src.as_strided((n,), (1,), 0))

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
        self._fill_homes(inputs)
        t0 = time.perf_counter_ns()
        with torch.no_grad():
            steps = self.steps
            for step in ctx.steps():
                self._step(*steps[step])
            ctx.drain()
            wall = time.perf_counter_ns() - t0
            out = self._outputs()
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
        }
        return out

    def _fill_homes(self, inputs: Tuple[Any, ...]) -> None:
        for tid, spec in self.cap.tensors.items():
            src = spec.source
            if src[0] == "input":
                x = inputs[src[1]]
            elif src[0] == "weight" and self.homes[tid] == "device" and tid not in self._bound:
                x = src[1]
            else:
                continue
            home = self.homes[tid]
            dest = self._device_tensor(tid) if home == "device" else self._pool_tensor(tid)
            if src[0] == "weight":
                self._fill(tid, dest, x)
            else:
                dest.copy_(x)

    def _value(self, node: Any, env: Dict[str, Any], final: bool = False) -> Any:
        if node.name in env:
            return env[node.name]
        cap = self.cap
        view = self._final_tensor if final else self._device_tensor
        if node.name in cap.node_tensor:
            v: Any = view(cap.node_tensor[node.name])
        elif node.name in cap.node_leaves:
            v = tuple(view(t) for t in cap.node_leaves[node.name])
        elif node.name in cap.mutating:
            v = self._value(next(a for a in node.all_input_nodes
                                 if a.name == cap.mutating[node.name]), env, final)
        elif node.op == "get_attr":
            if node.name in cap.attr_views:
                tid, shape, stride, off = cap.attr_views[node.name]
                base = view(tid)
                start = base.storage_offset() - cap.tensors[tid].offset
                v = base.as_strided(shape, stride, start + off)
            else:
                v = cap.gm
                for part in node.target.split("."):
                    v = getattr(v, part)
        else:
            args = map_arg(node.args, lambda a: self._value(a, env, final))
            kwargs = map_arg(node.kwargs, lambda a: self._value(a, env, final))
            v = _call(node, cap.gm, args, kwargs)
        env[node.name] = v
        return v

    def _final_tensor(self, tid: str) -> torch.Tensor:
        i = self.index[tid]
        if self.ctx.tensor_ptr(i):
            return self._device_tensor(tid)
        self.ctx.wait_tensor(i)
        return self._pool_tensor(tid)

    def _step(self, op: OpSpec, uses: List[int], prog: "_Program") -> None:
        wait = self.ctx.wait_tensor
        for i in uses:
            wait(i)                      # resident before anything reads it
        env: Dict[str, Any] = {}
        view = self._device_tensor
        for name, kind, what in prog.prelude:
            if kind == _TENSOR:
                env[name] = view(what)
            elif kind == _LEAVES:
                env[name] = tuple(view(t) for t in what)
            elif kind == _ALIAS:
                env[name] = env[what]
            elif kind == _ATTR_VIEW:
                tid, shape, stride, off = what
                base = view(tid)
                start = base.storage_offset() - self.cap.tensors[tid].offset
                env[name] = base.as_strided(shape, stride, start + off)
            elif kind == _CONST:
                env[name] = what
            else:
                fn, method, targs, tkw = what
                args = _subst(targs, env)
                kw = _subst(tkw, env) if tkw else {}
                env[name] = getattr(args[0], fn)(*args[1:], **kw) if method else fn(*args, **kw)
        args = _subst(prog.args, env)
        kwargs = _subst(prog.kwargs, env) if prog.kwargs else {}
        if op.mutates:
            prog.call(*args, **kwargs)
            return
        if op.kernel is not None:
            op.kernel(*args, **kwargs, out=view(op.outputs[0]))
            return
        res = prog.call(*args, **kwargs)
        for t, r in zip(op.outputs, _leaves(res)):
            view(t).copy_(r)

    def _outputs(self) -> Any:
        env: Dict[str, Any] = {}
        val = map_arg(self.output.args[0], lambda a: self._value(a, env, final=True))
        return _detach(val)


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


# ---- each operator's argument evaluation, worked out once -------------------

_TENSOR, _LEAVES, _ALIAS, _ATTR_VIEW, _CONST, _CALL = range(6)


class _Ref:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


def _template(a: Any) -> Any:
    """fx arguments with nodes as _Ref, immutable collections as plain ones."""
    if isinstance(a, torch.fx.Node):
        return _Ref(a.name)
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_template(x) for x in a)
    if isinstance(a, list):
        return [_template(x) for x in a]
    if isinstance(a, dict):
        return {k: _template(v) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(_template(a.start), _template(a.stop), _template(a.step))
    return a


def _subst(x: Any, env: Dict[str, Any]) -> Any:
    t = type(x)
    if t is _Ref:
        return env[x.name]
    if t is tuple or t is list:
        return t(_subst(i, env) for i in x)
    if t is dict:
        return {k: _subst(v, env) for k, v in x.items()}
    if t is slice:
        return slice(_subst(x.start, env), _subst(x.stop, env), _subst(x.step, env))
    return x


class _Program:
    """What a step evaluates: the views and free nodes its operator reads
    (in graph order), then the operator's own call."""

    def __init__(self, prelude: List[Tuple[str, int, Any]], args: Any, kwargs: Any,
                 call: Any):
        self.prelude, self.args, self.kwargs, self.call = prelude, args, kwargs, call


def _callable(node: Any, gm: Any) -> Tuple[Any, bool]:
    if node.op == "call_method":
        return node.target, True
    if node.op == "call_module":
        return gm.get_submodule(node.target), False
    return node.target, False


def _compile(cap: Captured, op: OpSpec) -> _Program:
    order: List[Tuple[str, int, Any]] = []
    done = set()

    def need(node: Any) -> None:
        if node.name in done:
            return
        done.add(node.name)
        if node.name in cap.node_tensor:
            order.append((node.name, _TENSOR, cap.node_tensor[node.name]))
        elif node.name in cap.node_leaves:
            order.append((node.name, _LEAVES, cap.node_leaves[node.name]))
        elif node.name in cap.mutating:
            target = next(a for a in node.all_input_nodes if a.name == cap.mutating[node.name])
            need(target)
            order.append((node.name, _ALIAS, target.name))
        elif node.op == "get_attr":
            if node.name in cap.attr_views:
                order.append((node.name, _ATTR_VIEW, cap.attr_views[node.name]))
            else:
                v = cap.gm
                for part in node.target.split("."):
                    v = getattr(v, part)
                order.append((node.name, _CONST, v))
        else:
            for a in node.all_input_nodes:
                need(a)
            fn, method = _callable(node, cap.gm)
            order.append((node.name, _CALL, (fn, method, _template(node.args),
                                             _template(node.kwargs))))

    for a in op.node.all_input_nodes:
        need(a)
    fn, method = _callable(op.node, cap.gm)
    call = (lambda *a, **k: getattr(a[0], fn)(*a[1:], **k)) if method else fn
    return _Program(order, _template(op.node.args), _template(op.node.kwargs), call)
