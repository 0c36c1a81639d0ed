# SPDX-License-Identifier: LGPL-2.1-or-later
"""python3 -m hyperoffload.torch run PY_FILE:FACTORY prints the demo's table."""
import json
import os
import subprocess
import sys

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_cli_run(tmp_path):
    factory = tmp_path / "f.py"
    factory.write_text("from hyperoffload.models import build\n"
                       "def make():\n    return build('llama-tiny', prompt_len=8, decode_steps=2)\n")
    out = subprocess.run([sys.executable, "-m", "hyperoffload.torch", "run", f"{factory}:make",
                          "--budget-ratio", "0.7", "--backend", "shmem", "--runs", "1",
                          "--json", str(tmp_path / "r.json")],
                         env=dict(os.environ, PYTHONPATH=PY), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split("|")[2].strip() == "baseline"
    assert any(ln.startswith("| peak device-buffer bytes") for ln in lines)
    assert any(ln.startswith("| makespan") for ln in lines)
    assert lines[-1] == "outputs: identical to module(*inputs) (torch.equal), every run"
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["outputs_identical"] and r["planned"]["peak_resident_bytes"] <= \
        0.7 * r["predicted"]["baseline_peak_bytes"] + 1


def test_cli_bad_factory(tmp_path):
    out = subprocess.run([sys.executable, "-m", "hyperoffload.torch", "run",
                          f"{tmp_path}/none.py:make"], env=dict(os.environ, PYTHONPATH=PY),
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.strip() == f"hyperoffload: {tmp_path}/none.py: no such file"
