# SPDX-License-Identifier: LGPL-2.1-or-later
"""Capture's check: the captured program computes module(*inputs) exactly.

Three runs on the example inputs, each on its own copy of the module
(capture.copy_module(): the user's module does not change) and from the
same RNG seed:

1. eager: ``module(*inputs)``, its outputs and the module's state after;
2. the traced graph, node by node (capture's recorder), compared with
   eager: what torch.fx could not see (Python-side state, an in-place
   change through an alias it did not record) shows here;
3. the program the runner executes (its own step code, runner.run_step,
   with each tensor in its own memory): free nodes recomputed per
   consumer, out= kernels, leaf modules on swapped tensors, in-place
   writes; each operator's results are compared with the graph's at that
   node, so a difference names the first node that differs.

Equality is bitwise (torch.equal, NaN equal to NaN): the same kernels run
in the same order.

The copies share the module's parameters (a copy of the weights would
double the memory), so every run at capture is made under protect(): a
dispatch mode that refuses a write into a parameter's memory before it
happens, so a forward that writes a parameter is refused and the module
is left as it was.  The module's own buffers are guarded the same way:
capture writes only its copies' buffers, so a write into the module's
is a capture path gone wrong (seen with torch.export's graphs, whose
buffer writes capture may miss), refused before it lands.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.fx.node import map_arg
from torch.utils._python_dispatch import TorchDispatchMode

from .capture import (SEED, Captured, CaptureError, _leaves, _rng_state, _set_rng_state,
                      _storage, copy_module, module_tensors, snap, where, whole)


class Reference:
    """Eager's outputs, buffers and inputs after one call."""

    def __init__(self, out: Any, state: Dict[str, torch.Tensor], inputs: Tuple[Any, ...]):
        self.out, self.state, self.inputs = out, state, inputs


_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def _python_state(m: torch.nn.Module) -> Dict[Tuple[str, str], Any]:
    """Plain Python attributes of every submodule (counters, flags)."""
    return {(mn, k): v for mn, sub in m.named_modules() for k, v in vars(sub).items()
            if isinstance(v, _PLAIN)}


# Kernels that write their running statistics (arguments 3 and 4, in
# training) although their schema does not say so (torch 1.13).
_HIDDEN_WRITES = {"native_batch_norm", "cudnn_batch_norm", "miopen_batch_norm"}


class protect(TorchDispatchMode):
    """While active, an ATen operator that would write into the memory of
    one of ``module``'s parameters or buffers (through the tensor, a view
    of it, ``.data`` or ``out=``; what the operator's schema marks as
    written) is refused with a CaptureError before it runs: the module's
    tensors never change at capture (its copies' buffers do).  ``refused``
    keeps the first refusal, in case forward catches the exception;
    leaving the mode raises it."""

    supports_higher_order_operators = True     # torch 2.x: run them, do not refuse them

    def __init__(self, module: torch.nn.Module, name: str):
        super().__init__()
        self.name = name
        self.refused: Optional[CaptureError] = None
        first: Dict[int, Tuple[int, str]] = {}     # storage -> its end, first name
        self.buffers = set()
        for kind, named in (("p", module.named_parameters()), ("b", module.named_buffers())):
            for n, p in named:
                ptr, size = _storage(p)
                if size and ptr not in first:
                    first[ptr] = (ptr + size, n)
                    if kind == "b":
                        self.buffers.add(n)
        self.ranges = sorted((a, b, n) for a, (b, n) in first.items())

    def _owner(self, t: Any) -> Optional[str]:
        """The parameter whose memory t's storage overlaps, if any."""
        if not isinstance(t, torch.Tensor) or t.is_sparse or t.device.type == "meta":
            return None
        try:
            lo, size = _storage(t)
        except (RuntimeError, NotImplementedError):     # no storage: not a parameter's
            return None
        return next((n for a, b, n in self.ranges if a < lo + size and lo < b), None) \
            if size else None

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        schema = getattr(func, "_schema", None)
        if schema is None:      # a higher-order operator (torch 2.x): run, not looked into
            return func(*args, **kwargs)
        written: List[Any] = []
        for i, a in enumerate(schema.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                written.append(kwargs.get(a.name, args[i] if i < len(args) else None))
        op = func.overloadpacket.__name__
        if op in _HIDDEN_WRITES and len(args) > 5 and args[5]:
            written += list(args[3:5])
        for v in written:
            for t in (v if isinstance(v, (tuple, list)) else [v]):
                n = self._owner(t)
                if n in self.buffers:
                    self.refused = self.refused or CaptureError(
                        f"cannot capture {self.name}: capture would write buffer {n!r} of the "
                        f"module itself ({op}), not its copy's (a capture bug: the module is "
                        f"unchanged; report it with the model)")
                    raise self.refused
                if n is not None:
                    self.refused = self.refused or CaptureError(
                        f"cannot capture {self.name}: forward changes parameter {n!r} in "
                        f"place ({op}), which is not supported: make it a buffer "
                        f"(register_buffer) (the module is unchanged)")
                    raise self.refused
        return func(*args, **kwargs)

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        if self.refused is not None:
            raise self.refused


def eager(module: torch.nn.Module, inputs: Tuple[Any, ...]) -> Reference:
    """module(*inputs) on a copy, from the capture seed (caller: no_grad,
    protect()).  A forward that changes a plain Python attribute is
    refused: the graph holds the value it had when traced."""
    m = copy_module(module)
    ins = snap(inputs)
    before = _python_state(m)
    versions = [(n, p, p._version) for n, p in m.named_parameters()]
    torch.manual_seed(SEED)
    out = m(*ins)
    after = _python_state(m)
    for n, p, v in versions:
        if p._version != v:     # shared with the module: protect() refuses the write
            raise CaptureError(f"cannot capture {type(module).__name__}: forward changes "
                               f"parameter {n!r} in place, which is not supported: make it "
                               f"a buffer (register_buffer)")
    for (mn, k), v in before.items():
        if after.get((mn, k), v) != v:
            name = f"{mn}.{k}" if mn else k
            raise CaptureError(f"cannot capture {type(module).__name__}: forward changes its "
                               f"Python attribute {name!r} ({v!r} -> {after[(mn, k)]!r}), which "
                               f"a graph cannot: keep it in a tensor buffer "
                               f"(register_buffer) and update that in place")
    params = {id(p) for p in m.parameters()}
    return Reference(snap(out), {n: t.clone() for n, t in module_tensors(m)
                                 if id(t) not in params}, ins)


def equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """torch.equal, with NaN equal to NaN in the same place."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return False


def _diff(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.shape != b.shape:
        return f"shape {tuple(a.shape)} instead of {tuple(b.shape)}"
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} instead of {b.dtype}"
    if a.is_floating_point():
        return f"max abs diff {float((a.double() - b.double()).abs().nan_to_num(0).max()):.3g}"
    return f"{int((a != b).sum())} elements differ"


def first_difference(got: Any, want: Any, path: str = "the output") -> Optional[str]:
    """Where two output structures first differ, and how; None if equal."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{path}: {type(got).__name__} instead of a tensor"
        return None if equal(got, want) else f"{path}: {_diff(got, want)}"
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(got) != list(want):
            return f"{path}: different keys"
        for k in want:
            d = first_difference(got[k], want[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{path}: a different structure"
        for i, (g, w) in enumerate(zip(got, want)):
            d = first_difference(g, w, f"{path}[{i}]")
            if d:
                return d
        return None
    try:
        same = bool(got == want)
    except Exception:
        same = False
    return None if same else f"{path}: {got!r} instead of {want!r}"


def check_trace(name: str, ref: Reference, traced_out: Any, work: torch.nn.Module) -> None:
    """The traced graph (run on ``work``) against eager: outputs and state."""
    d = first_difference(traced_out, ref.out)
    if d is None:
        for n, t in module_tensors(work):
            if n in ref.state and not equal(t, ref.state[n]):
                d = f"{n!r} after the call: {_diff(t, ref.state[n])}"
                break
    if d is not None:
        raise CaptureError(f"cannot capture {name}: the traced graph differs from eager at "
                           f"{d}: forward does something torch.fx "
                           f"does not record (a change through an alias, Python-side state "
                           f"or randomness); make it explicit or run that part outside the "
                           f"captured module")


class _Reference:
    """The traced graph on a fresh copy of the module, run one node at a
    time, so that a node's value is read when the node has just run (later
    in-place changes have not happened yet), and freed after its last use."""

    def __init__(self, cap: Captured, initial: Dict[str, torch.Tensor],
                 inputs: Tuple[Any, ...]):
        gm = copy_module(cap.gm)
        for n, b in gm.named_buffers():     # the buffers as they were before capture ran
            whole(b).copy_(initial[n])
        self.interp = torch.fx.Interpreter(gm)
        self.interp.args_iter = iter(snap(inputs))
        self.env = self.interp.env
        self.tensors = dict(module_tensors(gm))
        self.rng = _rng_state()
        self.left = {n: len(n.users) for n in gm.graph.nodes}
        self.by_name = {n.name: n for n in gm.graph.nodes}
        self.dead: List[Any] = []

    def run(self, name: str) -> None:
        """Run one node; the values it was the last to read are freed at
        the next call (the check after this node still reads them)."""
        for a in self.dead:
            del self.env[a]
        n = self.by_name[name]
        _set_rng_state(self.rng)
        self.env[n] = self.interp.run_node(n)
        self.rng = _rng_state()
        self.dead = []
        for a in n.all_input_nodes:
            self.left[a] -= 1
            if self.left[a] == 0 and not any(u.op == "output" for u in a.users):
                self.dead.append(a)

    def value(self, name: str) -> Any:
        return self.env[self.by_name[name]]


def check_program(cap: Captured, initial: Dict[str, torch.Tensor], inputs: Tuple[Any, ...],
                  ref: Reference) -> None:
    """The runner's program, step by step, against the graph run beside it
    (node by node, from the same state and seed); then its outputs, the
    module's state and the inputs after the call against eager."""
    from .runner import _as, _compile, node_value, run_step
    store: Dict[str, torch.Tensor] = {}

    def view(tid: str) -> torch.Tensor:
        spec = cap.tensors[tid]
        flat = store.get(tid)
        if flat is None:
            n = spec.nbytes // torch.empty((), dtype=spec.dtype).element_size()
            flat = store[tid] = torch.zeros(n, dtype=spec.dtype, device=spec.device)
        return _as(spec, flat, 0)

    state = set(cap.state)
    for tid, spec in cap.tensors.items():
        if spec.source[0] == "weight":     # read in place unless forward writes it
            store[tid] = whole(spec.source[1]).clone() if tid in state else \
                whole(spec.source[1])
        elif spec.source[0] == "input":
            view(tid).copy_(inputs[spec.source[1]])
    # Where each activation is last used: its memory is freed after it.
    last: Dict[str, int] = {}
    for i, op in enumerate(cap.ops):
        for t in op.inputs + op.outputs:
            last[t] = i
    keep = {t for t, spec in cap.tensors.items() if spec.live_out or spec.source[0] != "node"}
    ops = {op.node.name: (i, op) for i, op in enumerate(cap.ops)}
    refg = _Reference(cap, initial, inputs)

    def fail(node: Any, what: str) -> CaptureError:
        return CaptureError(f"cannot capture {cap.name}: the captured program differs from "
                            f"the graph at {where(node)}: {what} (views and scalars are read "
                            f"where they are used: clone() a value read from a tensor that "
                            f"changes in place before it is used)")

    def reference_tensor(tid: str) -> Optional[torch.Tensor]:
        spec = cap.tensors[tid]
        src = spec.source
        if src[0] == "weight":
            t = refg.tensors.get(cap.weight_names.get(tid, ""))
            return None if t is None else whole(t)
        try:
            if src[0] == "input":
                t = refg.value(cap.inputs[src[1]][0])
            else:
                t = refg.value(src[1])
                t = t if src[2] is None else _leaves(t)[src[2]]
        except KeyError:      # freed: the nodes that read the tensor next check it
            return None
        return t.as_strided(spec.shape, spec.stride, spec.offset)

    torch.manual_seed(SEED)
    rng = _rng_state()
    refg.rng = rng
    for node in cap.gm.graph.nodes:
        if node.op == "output":
            break
        refg.run(node.name)
        if node.name not in ops:
            continue
        i, op = ops[node.name]
        _set_rng_state(rng)
        try:
            run_step(cap, op, _compile(cap, op), view)
        except Exception as e:
            raise fail(op.node, f"running it failed: {type(e).__name__}: {e}") from None
        rng = _rng_state()
        want = _leaves(refg.value(node.name))
        for k, t in zip(op.fresh, op.outputs):
            if not equal(view(t), want[k]):
                raise fail(op.node, f"result {t!r}: {_diff(view(t), want[k])}")
        for t in op.outputs[len(op.fresh):]:
            exp = reference_tensor(t)
            got = store[t] if cap.tensors[t].source[0] == "weight" else view(t)
            if exp is not None and not equal(got, exp):
                raise fail(op.node, f"tensor {t!r} it writes: {_diff(got, exp)}")
        for t in set(op.inputs + op.outputs):
            if last.get(t) == i and t not in keep:
                store.pop(t, None)
    out_node = next(n for n in cap.gm.graph.nodes if n.op == "output")
    env: Dict[str, Any] = {}
    out = cap.gm.graph.process_outputs(
        map_arg(out_node.args[0], lambda a: node_value(cap, a, env, view)))
    d = first_difference(out, ref.out)
    if d:
        raise CaptureError(f"cannot capture {cap.name}: the captured program differs from "
                           f"eager at {d}; please report it")
    # The state after the call: what eager wrote, the program writes too.
    by_ptr = {_storage(cap.tensors[t].source[1])[0]: t for t in cap.weight_names}
    for n, t in module_tensors(cap.module):
        if n not in ref.state:          # a parameter: eager checked it is unchanged
            continue
        tid = by_ptr.get(_storage(t)[0])
        got = store[tid].as_strided(t.shape, t.stride(), t.storage_offset()) \
            if tid in state else t
        if not equal(got, ref.state[n]):
            raise CaptureError(f"cannot capture {cap.name}: {n!r} after the call differs from "
                               f"eager ({_diff(got, ref.state[n])}): forward changes it in a "
                               f"way the graph does not record")
    written = dict(cap.written_inputs)
    inames = [i[0] for i in cap.inputs]
    for tid, spec in cap.tensors.items():
        if spec.source[0] != "input":
            continue
        i = spec.source[1]
        got = view(tid) if tid in written else inputs[i]
        if not equal(got, ref.inputs[i]):
            raise CaptureError(f"cannot capture {cap.name}: input {inames[i]!r} after the call "
                               f"differs from eager ({_diff(got, ref.inputs[i])})")


__all__: List[str] = ["protect", "eager", "check_trace", "check_program", "first_difference",
                       "equal"]
