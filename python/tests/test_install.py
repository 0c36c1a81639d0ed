# SPDX-License-Identifier: LGPL-2.1-or-later
"""`make install-python` puts a working package where Debian's python3 looks."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_install_python(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    subprocess.run(["make", "-s", "-C", ROOT, "install-python", f"DESTDIR={tmp_path}",
                    "PREFIX=/usr", "HYPER_DEPS_CHECKED=1"], check=True, env=env,
                   capture_output=True)
    site = tmp_path / "usr/lib/python3/dist-packages"
    assert (site / "hyperoffload/torch.py").exists()
    assert (site / "hyperoffload/models/configs/llama-1b.json").exists()
    code = ("import hyperoffload.torch, hyperoffload.onnx, hyperoffload.models as m\n"
            "assert hyperoffload.torch.__file__.startswith(%r)\n"
            "print(m.build('gpt2-tiny')[0].cfg.model_type)\n") % str(site)
    out = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=str(site)),
                         cwd=str(tmp_path), check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "gpt2"
