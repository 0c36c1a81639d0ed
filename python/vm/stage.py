#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stage what the test VM needs to run the binding's tests on kmod:
Debian's interpreter, the standard-library modules those tests load (not
all 58 MB of it: the initramfs is shared by every suite), the package's
binding and the tests, under DEST as they will sit in the VM's root.

usage: stage.py DEST HEADER
"""
import glob
import io
import os
import shutil
import sys
import sysconfig
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)


def main() -> int:
    dest, header = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(PYDIR, "tests"))
    sys.path.insert(0, PYDIR)
    import test_binding  # noqa: F401 - loads what the tests load
    suite = unittest.defaultTestLoader.loadTestsFromModule(test_binding)
    unittest.TextTestRunner(stream=io.StringIO()).run(suite)   # and what they run
    import runpy  # noqa: F401 - `python3 -c` in the tests' subprocess
    stdlib = sysconfig.get_paths()["stdlib"]
    files = {os.path.join(stdlib, "os.py"), os.path.join(stdlib, "site.py")}
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if f and os.path.realpath(f).startswith(stdlib + os.sep):
            files.add(os.path.realpath(f))
    for enc in os.listdir(os.path.join(stdlib, "encodings")):
        if enc.endswith(".py"):
            files.add(os.path.join(stdlib, "encodings", enc))
    shutil.rmtree(dest, ignore_errors=True)
    for f in sorted(files):
        out = dest + f
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copy2(f, out)
    exe = os.path.realpath(sys.executable)
    os.makedirs(dest + os.path.dirname(exe), exist_ok=True)
    shutil.copy2(exe, dest + exe)
    os.symlink(os.path.basename(exe), dest + "/usr/bin/python3")
    tests = os.path.join(dest, "tests", "python")
    shutil.copytree(os.path.join(PYDIR, "hyperoffload"), os.path.join(tests, "hyperoffload"),
                    ignore=shutil.ignore_patterns("__pycache__", "models", "*.json"))
    os.makedirs(os.path.join(tests, "tests"))
    shutil.copy2(os.path.join(PYDIR, "tests", "test_binding.py"), os.path.join(tests, "tests"))
    # hyper.h and the <hyper/...> headers it includes, side by side.
    for h in glob.glob(os.path.join(os.path.dirname(header), "*.h")):
        shutil.copy2(h, os.path.join(tests, "tests", os.path.basename(h)))
    with open(os.path.join(dest, "tests", "python_binding"), "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n# The binding's tests on the kmod backend (python/vm/stage.py).\n"
                "HYPER_TEST_BACKEND=kmod HYPEROFFLOAD_LIBHYPER=/tests/python/libhyper.so.1 "
                "exec /usr/bin/python3 /tests/python/tests/test_binding.py\n")
    os.chmod(os.path.join(dest, "tests", "python_binding"), 0o755)
    print(f"{dest}: {len(files)} standard-library files, "
          f"{sum(os.path.getsize(f) for f in files) // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
