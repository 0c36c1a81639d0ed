# SPDX-License-Identifier: GPL-2.0
"""libhyperplan from Python's ctypes, as the framework front end calls it.

Builds a small graph with plain structures, plans it, reads the
prediction, hands the plan to libhyper and reads the schedule back, and
checks that errors come back as -errno with a message.  Exits non-zero
on the first failure.  usage: plan_ctypes.py LIBDIR
"""
import ctypes as C
import errno
import sys

# libhyper first: libhyperplan's dependency is then found by its soname.
hyper = C.CDLL(sys.argv[1] + "/libhyper.so.1", mode=C.RTLD_GLOBAL)
lib = C.CDLL(sys.argv[1] + "/libhyperplan.so.1")


class Tensor(C.Structure):
    _fields_ = [("id", C.c_char_p), ("bytes", C.c_uint64), ("kind", C.c_uint32),
                ("flags", C.c_uint32), ("reserved", C.c_uint64 * 4)]


class Op(C.Structure):
    _fields_ = [("id", C.c_char_p), ("compute_ns", C.c_uint64),
                ("inputs", C.POINTER(C.c_uint32)), ("outputs", C.POINTER(C.c_uint32)),
                ("nr_inputs", C.c_uint32), ("nr_outputs", C.c_uint32),
                ("gemm_m", C.c_uint32), ("gemm_n", C.c_uint32), ("gemm_k", C.c_uint32),
                ("reserved0", C.c_uint32), ("flops", C.c_double), ("bytes", C.c_double),
                ("reserved", C.c_uint64 * 4)]


class Opts(C.Structure):
    _fields_ = [("profile", C.c_char_p), ("profile_file", C.c_char_p),
                ("budget_bytes", C.c_uint64), ("max_slowdown", C.c_double),
                ("policy", C.c_uint32), ("flags", C.c_uint32), ("reserved", C.c_uint64 * 6)]


class Prediction(C.Structure):
    _fields_ = [(n, C.c_uint64) for n in (
        "peak_device_bytes", "baseline_peak_bytes", "bound_bytes", "stall_ns",
        "makespan_ns", "compute_ns", "h2d_bytes", "d2h_bytes")] + [
        ("slowdown", C.c_double), ("policy", C.c_uint32), ("reserved0", C.c_uint32),
        ("reserved", C.c_uint64 * 6)]


class SchedInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("version", C.c_uint32), ("flags", C.c_uint32),
                ("nr_tensors", C.c_uint32), ("nr_steps", C.c_uint32)] + [
        (n, C.c_uint64) for n in (
            "budget_bytes", "peak_device_bytes", "total_compute_ns",
            "pred_peak_device_bytes", "pred_stall_ns", "pred_makespan_ns",
            "arena_bytes")] + [("reserved", C.c_uint64 * 7)]


KIND_WEIGHT, KIND_ACTIVATION = 1, 2
LIVE_IN, EXPLICIT = 1, 1 << 31
MIB = 1 << 20
vp = C.c_void_p
lib.hyper_plan_graph_new.argtypes = [C.c_char_p, C.POINTER(vp)]
lib.hyper_plan_graph_add_tensor.argtypes = [vp, C.POINTER(Tensor)]
lib.hyper_plan_graph_add_op.argtypes = [vp, C.POINTER(Op)]
lib.hyper_plan_graph_last_error.argtypes = [vp]
lib.hyper_plan_graph_last_error.restype = C.c_char_p
lib.hyper_plan_graph_free.argtypes = [vp]
lib.hyper_plan_run.argtypes = [vp, C.POINTER(Opts), C.POINTER(vp), C.c_char_p, C.c_size_t]
lib.hyper_plan_prediction.argtypes = [vp, C.POINTER(Prediction)]
lib.hyper_plan_schedule.argtypes = [vp, C.POINTER(vp), C.c_char_p, C.c_size_t]
lib.hyper_plan_free.argtypes = [vp]
hyper.hyper_schedule_info.argtypes = [vp, C.POINTER(SchedInfo)]
hyper.hyper_schedule_free.argtypes = [vp]


def check(cond, what):
    if not cond:
        print("not ok:", what)
        sys.exit(1)


g = vp()
check(lib.hyper_plan_graph_new(b"py-chain", C.byref(g)) == 0, "graph_new")
act = lib.hyper_plan_graph_add_tensor(g, Tensor(b"x0", MIB, KIND_ACTIVATION, EXPLICIT | LIVE_IN))
for i in range(16):
    w = lib.hyper_plan_graph_add_tensor(g, Tensor(b"w%d" % i, 16 * MIB, KIND_WEIGHT, 0))
    nxt = lib.hyper_plan_graph_add_tensor(g, Tensor(b"x%d" % (i + 1), MIB, KIND_ACTIVATION, 0))
    ins, outs = (C.c_uint32 * 2)(act, w), (C.c_uint32 * 1)(nxt)
    check(lib.hyper_plan_graph_add_op(g, Op(b"layer%d" % i, 2000000, ins, outs, 2, 1)) == i,
          "add_op %d" % i)
    act = nxt
check(lib.hyper_plan_graph_add_tensor(g, Tensor(b"w0", 1, KIND_WEIGHT, 0)) == -errno.EINVAL,
      "a duplicate id is -EINVAL")
check(b'duplicate id "w0"' in lib.hyper_plan_graph_last_error(g), "and says so")

plan, err = vp(), C.create_string_buffer(256)
check(lib.hyper_plan_run(g, Opts(b"h100-pcie", None, 64 * MIB), C.byref(plan), err, 256) == 0,
      "plan: %s" % err.value)
pred = Prediction()
check(lib.hyper_plan_prediction(plan, C.byref(pred)) == 0, "prediction")
check(pred.peak_device_bytes <= 64 * MIB < pred.baseline_peak_bytes, "fits the budget")
sched = vp()
check(lib.hyper_plan_schedule(plan, C.byref(sched), err, 256) == 0, "schedule: %s" % err.value)
info = SchedInfo()
check(hyper.hyper_schedule_info(sched, C.byref(info)) == 0, "schedule_info")
check(info.nr_steps == 16 and info.peak_device_bytes == pred.peak_device_bytes,
      "libhyper replays the plan's peak")
hyper.hyper_schedule_free(sched)
lib.hyper_plan_free(plan)
bad = Opts()
bad.reserved[0] = 1
check(lib.hyper_plan_run(g, C.byref(bad), C.byref(plan), err, 256) == -errno.EINVAL and
      err.value == b"hyper_plan_opts: reserved fields must be zero", "reserved fields")
lib.hyper_plan_graph_free(g)
print("peak %d of %d bytes" % (pred.peak_device_bytes, pred.baseline_peak_bytes))
