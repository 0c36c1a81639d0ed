#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make bench-torch: the Llama-style example through libhyper on shmem.

Plain module(*inputs), the all-resident schedule through the runner (the
baseline) and the planned schedule at each budget ratio, interleaved;
medians.  torch runs on one thread; the copy path (io_uring workers of
the shmem backend) has the other CPU, as a DMA engine would.  Prints a
table and "ok"/"not ok" per target, writes JSON; exits 1 on "not ok".

usage: bench_torch.py OUTDIR [--config NAME] [--prompt N] [--decode N]
                      [--layers N] [--ratios 0.9,0.7,0.5] [--runs N]
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hyperoffload.torch as ho  # noqa: E402
from hyperoffload.capture import capture  # noqa: E402
from hyperoffload.models import build, config_path  # noqa: E402
from hyperoffload.models.config import load_config  # noqa: E402

PEAK_TARGET = 26.0     # % lower peak ...
WALL_TARGET = 2.0      # ... at <= % more wall time
RUNNER_TARGET = 3.0    # runner at ratio 1.0 within % of plain PyTorch


def same(a, b):
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    return all(same(x, y) for x, y in zip(a, b))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--config", default="llama-1b")
    ap.add_argument("--prompt", type=int, default=256)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--layers", type=int, default=0, help="override num_hidden_layers")
    ap.add_argument("--ratios", default="0.9,0.7,0.5")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg = json.load(open(config_path(a.config)))
    if a.layers:
        cfg["num_hidden_layers"] = a.layers
    mc = load_config(cfg)
    t0 = time.time()
    module, x = build(cfg, prompt_len=a.prompt, decode_steps=a.decode)
    params = sum(p.numel() for p in module.parameters())
    print(f"bench-torch: {a.config} ({mc.num_hidden_layers} layers, hidden {mc.hidden_size}, "
          f"{params / 1e9:.2f}B parameters, fp32), prompt {a.prompt} + {a.decode} decode steps")
    print("  torch on ONE thread; the copy path (shmem backend, io_uring workers) has the "
          "other CPU, as a DMA engine would")
    with torch.no_grad():
        ref = module(*x)
    cap = capture(module, x, runs=3)
    print(f"  captured: {len(cap.ops)} operators, {len(cap.tensors)} tensors "
          f"({cap.uses_out_kernels} write through out= kernels, {cap.copied_outputs} copied) "
          f"in {time.time() - t0:.0f} s")
    ratios = [float(r) for r in a.ratios.split(",")]
    base_plan = ho.plan_captured(cap, budget_ratio=1.0)
    results = {"config": a.config, "layers": mc.num_hidden_layers, "parameters": params,
               "prompt": a.prompt, "decode": a.decode, "runs": a.runs, "ratios": {}}
    ok = True
    plain_all, base_all = [], []
    with ho.Offloaded(base_plan, "shmem", baseline=True) as base:
        for ratio in ratios:
            p = ho.plan_captured(cap, budget_ratio=ratio)
            samples = {"plain": [], "baseline": [], "planned": []}
            identical = True
            with ho.Offloaded(p, "shmem") as planned:
                base(*x)                 # warm-up: page faults of a fresh arena
                planned(*x)
                for _ in range(a.runs):
                    gc.collect()
                    with torch.no_grad():
                        t = time.perf_counter_ns()
                        module(*x)
                        samples["plain"].append({"wall_ns": time.perf_counter_ns() - t})
                    identical &= same(ref, base(*x))
                    samples["baseline"].append(base.stats)
                    identical &= same(ref, planned(*x))
                    samples["planned"].append(planned.stats)
            med = {k: {f: statistics.median(s[f] for s in v) for f in v[0]}
                   for k, v in samples.items()}
            plain_all += [s["wall_ns"] for s in samples["plain"]]
            base_all += [s["wall_ns"] for s in samples["baseline"]]
            peak_red = 100 * (1 - med["planned"]["peak_device_bytes"] /
                              med["baseline"]["peak_device_bytes"])
            wall_more = 100 * (med["planned"]["wall_ns"] / med["baseline"]["wall_ns"] - 1)
            results["ratios"][str(ratio)] = {**med, "predicted": p.predicted,
                                             "peak_reduction_pct": peak_red,
                                             "wall_increase_pct": wall_more,
                                             "outputs_identical": identical}
            print(f"\n  budget ratio {ratio}:")
            print(f"    peak device bytes   baseline {med['baseline']['peak_device_bytes'] / 2**20:9.1f} MiB"
                  f"   planned {med['planned']['peak_device_bytes'] / 2**20:9.1f} MiB  ({-peak_red:+.1f}%)")
            print(f"    wall time           baseline {med['baseline']['wall_ns'] / 1e9:9.3f} s  "
                  f"   planned {med['planned']['wall_ns'] / 1e9:9.3f} s    ({wall_more:+.1f}%)")
            print(f"    plain module        {med['plain']['wall_ns'] / 1e9:9.3f} s; stall "
                  f"{med['planned']['stall_ns'] / 1e6:.1f} ms; prefetched "
                  f"{med['planned']['bytes_prefetched'] / 2**20:.0f} MiB, stored "
                  f"{med['planned']['bytes_stored'] / 2**20:.0f} MiB")
            print(f"    stall               predicted {p.predicted['stall_ns'] / 1e6:9.1f} ms"
                  f"   measured {med['planned']['stall_ns'] / 1e6:9.1f} ms (link: this machine's "
                  f"profile, measured in-process)")
            ok &= identical
            print(f"{'ok' if identical else 'not ok'} - ratio {ratio}: outputs identical "
                  f"to module(*inputs) (torch.equal)")
            met = peak_red >= PEAK_TARGET and wall_more <= WALL_TARGET
            print(f"{'ok' if met else 'not ok'} - ratio {ratio}: peak -{peak_red:.1f}% "
                  f"(target >= {PEAK_TARGET:.0f}%) at {wall_more:+.1f}% wall "
                  f"(target <= {WALL_TARGET:.0f}%)")
    runner_pct = 100 * (statistics.median(base_all) / statistics.median(plain_all) - 1)
    results["runner_vs_plain_pct"] = runner_pct
    results["plain_wall_ns"] = statistics.median(plain_all)
    results["baseline_wall_ns"] = statistics.median(base_all)
    met = runner_pct <= RUNNER_TARGET
    ok &= met
    print(f"\n{'ok' if met else 'not ok'} - runner all-resident vs plain PyTorch: "
          f"{runner_pct:+.1f}% (target <= {RUNNER_TARGET:.0f}%; medians of "
          f"{len(base_all)} interleaved runs)")
    os.makedirs(a.outdir, exist_ok=True)
    out = os.path.join(a.outdir, "torch.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    print(f"  JSON: {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
