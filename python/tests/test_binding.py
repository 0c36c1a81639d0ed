# SPDX-License-Identifier: LGPL-2.1-or-later
"""The binding's own tests: standard library only (unittest), so that they
also run in the test VM on the kmod backend, where torch is too heavy.

Backend: $HYPER_TEST_BACKEND (kmod or shmem; default shmem).  Run
directly (``python3 test_binding.py``) it prints TAP for totals.awk.
"""
import ctypes
import errno
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from hyperoffload import binding as hb  # noqa: E402
from hyperoffload import _header  # noqa: E402
from hyperoffload._decls import DECLS  # noqa: E402

BACKEND = os.environ.get("HYPER_TEST_BACKEND", "shmem")
N = 4096


def header_path():
    for p in (os.environ.get("HYPEROFFLOAD_HEADER", ""),
              os.path.join(HERE, "..", "..", "include", "hyper", "hyper.h"),
              os.path.join(HERE, "hyper.h")):
        if p and os.path.exists(p):
            return p
    return None


def schedule_text():
    """w (pool) and x (device) give y; y is stored; then y gives z."""
    return json.dumps({
        "format": "hyper-schedule", "version": 1, "name": "python binding test",
        "tensors": [
            {"id": "w", "bytes": N, "kind": "weight", "home": "pool"},
            {"id": "x", "bytes": N, "kind": "activation", "home": "device"},
            {"id": "y", "bytes": N, "kind": "activation", "home": "none"},
            {"id": "z", "bytes": N, "kind": "activation", "home": "none"},
        ],
        "steps": [
            {"op": "add", "compute_ns": 1000, "before": [{"op": "prefetch", "tensor": "w"}],
             "uses": ["w", "x"], "defines": ["y"],
             "after": [{"op": "detach", "tensor": "w"}, {"op": "detach", "tensor": "x"},
                       {"op": "store", "tensor": "y"}]},
            {"op": "twice", "compute_ns": 1000, "uses": ["y"], "defines": ["z"],
             "after": [{"op": "detach", "tensor": "y"}]},
        ],
    })


def read(addr, n=N):
    return (ctypes.c_char * n).from_address(addr).raw


def write(addr, data):
    ctypes.memmove(addr, data, len(data))


class BindingTest(unittest.TestCase):
    def setUp(self):
        self.before = hb.process_resources()

    def tearDown(self):
        self.assertEqual(hb.process_resources(), self.before, "libhyper resources left behind")

    def test_header_matches_decls(self):
        path = header_path()
        if not path:
            self.skipTest("include/hyper/hyper.h not found")
        self.assertEqual(_header.parse(_header.read(path)), DECLS,
                         "hyper.h changed: regenerate python/hyperoffload/_decls.py")

    def test_struct_sizes(self):
        # What gcc gives these structs on x86-64 (sizeof, reserved room included).
        want = {"hyper_open_opts": 88, "hyper_stats": 160, "hyper_event": 64,
                "hyper_cop": 8, "hyper_tensor_info": 64, "hyper_step_info": 128,
                "hyper_schedule_info": 136, "iovec": 16}
        for name, size in want.items():
            self.assertEqual(ctypes.sizeof(hb.STRUCTS[name]), size, name)

    def test_open_backend(self):
        with hb.Context(BACKEND) as ctx:
            self.assertEqual(ctx.backend, BACKEND)

    def test_region_zeroed_mapped_freed(self):
        with hb.Context(BACKEND) as ctx:
            with ctx.region(1 << 20) as reg:
                self.assertGreaterEqual(reg.size, 1 << 20)
                addr = reg.map()
                self.assertEqual(read(addr), bytes(N))
                write(addr, b"\xa5" * N)
                self.assertEqual(read(addr), b"\xa5" * N)
            with ctx.region(1 << 20) as reg:
                self.assertEqual(read(reg.map()), bytes(N), "a reused region must be zeroed")

    def test_schedule_info_and_steps(self):
        with hb.Schedule.parse(schedule_text()) as s:
            info = s.info()
            self.assertEqual((info["nr_tensors"], info["nr_steps"]), (4, 2))
            t = s.tensor(0)
            # one residency, placed by libhyper's layout on the arena's grid
            offs = t.pop("arena_offsets")
            self.assertEqual(len(offs), 1)
            self.assertEqual(offs[0] % hb.CONST["HYPER_ARENA_ALIGN"], 0)
            self.assertEqual(t, {"id": "w", "bytes": N, "kind": "weight",
                                 "home": "pool", "flags": 3})
            st = s.step(0)
            self.assertEqual(st["before"], [("prefetch", 0)])
            self.assertEqual(st["after"], [("detach", 0), ("detach", 1), ("store", 2)])
            self.assertEqual(s.find("z"), 3)

    def test_bad_schedule_is_an_exception(self):
        bad = json.loads(schedule_text())
        bad["version"] = 2
        with self.assertRaises(hb.HyperError) as cm:
            hb.Schedule.parse(json.dumps(bad))
        self.assertEqual(str(cm.exception),
                         "schedule: unsupported schedule version 2 (this libhyper reads 1)")
        self.assertEqual(cm.exception.errno, errno.EPROTONOSUPPORT)

    def _run(self, ctx, fn):
        mem = hb.DeviceMemory(1 << 20)
        try:
            with hb.Schedule.parse(schedule_text()) as s:
                ctx.register_buffers([mem])
                ctx.set_arena(mem)
                ctx.attach(s)
                ctx.prepare()
                write(ctx.tensor_pool_ptr(0), bytes(i % 251 for i in range(N)))
                write(ctx.tensor_ptr(1), bytes(i % 13 for i in range(N)))
                ctx.run(fn)
                ctx.drain()
        finally:
            ctx.close()
            mem.close()

    def test_run_python_compute(self):
        want_y = bytes((i % 251 + i % 13) & 0xFF for i in range(N))
        seen = []
        with hb.Context(BACKEND) as ctx:
            def op(step):
                seen.append(step)
                if step == 0:
                    ctx.wait_tensor(0)
                    w, x = read(ctx.tensor_ptr(0)), read(ctx.tensor_ptr(1))
                    write(ctx.tensor_ptr(2), bytes((a + b) & 0xFF for a, b in zip(w, x)))
                else:
                    y = read(ctx.tensor_ptr(2))
                    write(ctx.tensor_ptr(3), bytes((2 * a) & 0xFF for a in y))
            events = []
            ctx.set_event_fn(events.append)
            mem = hb.DeviceMemory(1 << 20)
            with hb.Schedule.parse(schedule_text()) as s:
                ctx.register_buffers([mem])
                ctx.set_arena(mem)
                ctx.attach(s)
                ctx.prepare()
                write(ctx.tensor_pool_ptr(0), bytes(i % 251 for i in range(N)))
                write(ctx.tensor_ptr(1), bytes(i % 13 for i in range(N)))
                ctx.run(op)
                ctx.drain()
                ctx.wait_tensor(2)
                self.assertEqual(read(ctx.tensor_pool_ptr(2)), want_y)
                self.assertEqual(read(ctx.tensor_ptr(3)), bytes((2 * a) & 0xFF for a in want_y))
                st = ctx.stats()
                self.assertEqual((st["steps"], st["bytes_prefetched"], st["bytes_stored"]),
                                 (2, N, N))
                kinds = {e["type"] for e in events}
                self.assertIn(hb.CONST["HYPER_EV_XFER_DONE"], kinds)
            ctx.close()
            mem.close()
        self.assertEqual(seen, [0, 1])

    def test_step_loop_and_rewind(self):
        with hb.Context(BACKEND) as ctx:
            mem = hb.DeviceMemory(1 << 20)
            with hb.Schedule.parse(schedule_text()) as s:
                ctx.register_buffers([mem])
                ctx.set_arena(mem)
                ctx.attach(s)
                ctx.prepare()
                for _ in range(2):
                    self.assertEqual(list(ctx.steps()), [0, 1])
                    ctx.rewind()
            ctx.close()
            mem.close()

    def test_errors_are_exceptions(self):
        with hb.Context(BACKEND) as ctx:
            with self.assertRaises(hb.HyperError) as cm:
                ctx.step_end()
            self.assertEqual(cm.exception.errno, errno.EINVAL)
            self.assertIn("hyper_step_end: ", str(cm.exception))
            with self.assertRaises(hb.HyperError) as cm:
                ctx.prepare()
            self.assertEqual(str(cm.exception), "hyper_prepare: attach a schedule first")

    def test_callback_exception_propagates(self):
        def boom(step):
            raise ZeroDivisionError("operator failed")
        with hb.Context(BACKEND) as ctx:
            with self.assertRaises(ZeroDivisionError):
                self._run(ctx, boom)

    def test_exception_in_with_frees_everything(self):
        with self.assertRaises(RuntimeError):
            with hb.Context(BACKEND) as ctx:
                ctx.region(1 << 20).map()
                raise RuntimeError("user code failed")

    def test_library_not_found(self):
        env = dict(os.environ, HYPEROFFLOAD_LIBHYPER="/nonexistent/libhyper.so.1")
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from hyperoffload import binding\n"
                "try:\n    binding.Context('shmem')\n"
                "except binding.LibraryNotFound as e:\n    print(e)\n") % os.path.dirname(HERE)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        self.assertEqual(out, "libhyper not found (tried /nonexistent/libhyper.so.1): build it "
                              "with `make`, install it with `make install`, or set "
                              "HYPEROFFLOAD_LIBHYPER to the path of libhyper.so.1")


class _Tap(unittest.TextTestResult):
    n = 0

    def _line(self, test, ok, note=""):
        _Tap.n += 1
        print(f"{'ok' if ok else 'not ok'} {_Tap.n} - {test.id()}{note}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(test, False)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(test, False)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(test, True, f" # SKIP {reason}")


if __name__ == "__main__":
    runner = unittest.TextTestRunner(stream=sys.stderr, resultclass=_Tap, verbosity=0)
    res = runner.run(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]))
    fails = len(res.failures) + len(res.errors)
    print(f"# Totals: pass:{res.testsRun - fails - len(res.skipped)} fail:{fails} "
          f"xfail:0 xpass:0 skip:{len(res.skipped)} error:0")
    sys.exit(1 if fails else 0)
