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
import json
import time
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.fx.node import map_arg

from .binding import Context, DeviceMemory, HyperError, Schedule
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

    def __init__(self, cap: Captured, schedule: Dict[str, Any], backend: str = "auto",
                 baseline_peak: int = 0, pool_bytes: int = 0):
        self.cap = cap
        self.baseline_peak = baseline_peak
        self.mem: Optional[DeviceMemory] = None
        self.sched: Optional[Schedule] = None
        self.ctx = Context(backend, pool_bytes=pool_bytes)
        try:
            self._setup(schedule)
        except BaseException:
            self.close()
            raise
        self.stats: Dict[str, int] = {}

    # ---- setup -----------------------------------------------------------
    def _setup(self, schedule: Dict[str, Any]) -> None:
        cap, ctx = self.cap, self.ctx
        self.sched = Schedule.parse(json.dumps(schedule))
        info = self.sched.info()
        arena = info["arena_bytes"] or (info["peak_device_bytes"] + info["peak_device_bytes"] // 8
                                        + 64 * info["nr_tensors"] + 4096)
        self.mem = DeviceMemory(arena)
        ctx.register_buffers([self.mem])
        ctx.set_arena(self.mem)
        ctx.attach(self.sched)
        ctx.prepare()
        self.arena = torch.frombuffer(self.mem.mmap, dtype=torch.uint8)
        self._typed: Dict[torch.dtype, torch.Tensor] = {}
        self.index = {tid: self.sched.find(tid) for tid in cap.tensors}
        self.homes = {tid: self.sched.tensor(i)["home"] for tid, i in self.index.items()}
        ops = {o.id: o for o in cap.ops}
        self.steps: List[Tuple[OpSpec, List[int]]] = []
        touched = set()
        for s in range(info["nr_steps"]):
            st = self.sched.step(s)
            op = ops[st["op"]]
            self.steps.append((op, [self.index[t] for t in op.inputs]))
            touched.update(t for _, t in st["before"] + st["after"])
            touched.update(st["defines"])
        # Weights on the device from the start that nothing moves or writes
        # keep their bytes across runs when they keep their address.
        self._static = {tid for tid, spec in cap.tensors.items()
                        if spec.source[0] == "weight" and self.homes[tid] == "device"
                        and self.index[tid] not in touched}
        self._static_addr: Dict[str, int] = {}
        for tid, spec in cap.tensors.items():
            if spec.source[0] == "weight" and self.homes[tid] == "pool":
                self._fill(tid, self._pool_tensor(tid), spec.source[1])
        self.placeholders = [n for n in cap.gm.graph.nodes if n.op == "placeholder"]
        self.output = next(n for n in cap.gm.graph.nodes if n.op == "output")

    def close(self) -> None:
        """Free the context (regions, registration, ring) and the arena."""
        if self.ctx is not None:
            self.ctx.close()
        if self.sched is not None:
            self.sched.free()
            self.sched = None
        self._typed = {}
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
        spec = self.cap.tensors[tid]
        addr = self.ctx.tensor_ptr(self.index[tid])
        if not addr:
            raise HyperError(0, f"tensor {tid!r} is not resident where the schedule says it is")
        flat = self._typed.get(spec.dtype)
        if flat is None:
            flat = self._typed[spec.dtype] = self.arena.view(spec.dtype)
        esize = flat.element_size()
        return _as(spec, flat, (addr - self.mem.address) // esize)

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
            for step in ctx.steps():
                self._step(*self.steps[step])
            ctx.drain()
            wall = time.perf_counter_ns() - t0
            out = self._outputs()
        st = ctx.stats()
        self.stats = {
            "peak_device_bytes": st["peak_arena_bytes"],
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
            elif src[0] == "weight" and self.homes[tid] == "device":
                x = src[1]
                if tid in self._static:
                    addr = self.ctx.tensor_ptr(self.index[tid])
                    if self._static_addr.get(tid) == addr:
                        continue
                    self._static_addr[tid] = addr
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

    def _step(self, op: OpSpec, uses: List[int]) -> None:
        for i in uses:
            self.ctx.wait_tensor(i)      # resident before anything reads it
        node, env = op.node, {}
        args = map_arg(node.args, lambda a: self._value(a, env))
        kwargs = map_arg(node.kwargs, lambda a: self._value(a, env))
        if op.mutates:
            _call(node, self.cap.gm, args, kwargs)
            return
        dests = [self._device_tensor(t) for t in op.outputs]
        if op.kernel is not None:
            op.kernel(*args, **kwargs, out=dests[0])
            return
        res = _call(node, self.cap.gm, args, kwargs)
        for d, r in zip(dests, _leaves(res)):
            d.copy_(r)

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
