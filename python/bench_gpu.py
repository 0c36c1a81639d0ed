#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""GPU benchmark (tools/gpu/check.sh): a Llama-style model of 1.1 B
parameters in bf16 with seeded weights (hyperoffload.models "llama-1b"
at 22 layers),
a 2048-token prompt at batch 4 and 32 decode steps.  Each phase runs
all-resident, under hyperoffload at budget ratios 0.9, 0.7 and 0.5, and
under HF accelerate's cpu_offload.  Reports peak device bytes
(torch.cuda.max_memory_allocated), prefill time, decode tokens/s and
stall, and whether outputs equal all-resident's (torch.equal); JSON on
stdout or --json, a Markdown table with --table, and the targets as TAP
ok / not ok lines (exit 1 when one is not met):

  prefill: >= 26% lower peak at <= 2% more time than all-resident;
  at accelerate's own peak: <= 0.6x its time;
  copy bandwidth >= 0.9x cudaMemcpyAsync from pinned memory, same run.

The formatting and target functions run anywhere (python/tests/test_cuda.py);
the measurements need a CUDA device.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

RATIOS = (0.9, 0.7, 0.5)
CAPTURE_RUNS = 1             # timed runs per operator at capture (GPU times are steady)
LAYERS = 22                  # 1.1 B parameters (TinyLlama-1.1B's shape)
PREFILL_PEAK_CUT = 0.26      # at least this much lower peak ...
PREFILL_TIME_MAX = 1.02      # ... at no more than this much time
ACCEL_TIME_MAX = 0.6         # at accelerate's peak, this fraction of its time
BW_MIN = 0.9                 # libhyper's copies against cudaMemcpyAsync


# ---- formatting and targets (no GPU needed) --------------------------------

def targets(res: Dict[str, Any]) -> List[Tuple[bool, str]]:
    """(met, line) for each target, from a results dict as main() writes it."""
    out: List[Tuple[bool, str]] = []
    base = res["prefill"]["resident"]
    runs = [r for r in res["prefill"]["hyperoffload"] if r["equal"]]
    ok = [r for r in runs
          if r["peak_bytes"] <= (1 - PREFILL_PEAK_CUT) * base["peak_bytes"]
          and r["time_s"] <= PREFILL_TIME_MAX * base["time_s"]]
    best = min(runs, key=lambda r: r["peak_bytes"], default=None)
    out.append((bool(ok), "prefill: >= %d%% lower peak at <= %d%% more time (%s)" % (
        PREFILL_PEAK_CUT * 100, round((PREFILL_TIME_MAX - 1) * 100),
        "ratio %s: peak %.3fx, time %.3fx" % (
            best["ratio"], best["peak_bytes"] / base["peak_bytes"],
            best["time_s"] / base["time_s"]) if best else "no run equal to all-resident")))
    acc = res["prefill"].get("accelerate")
    if acc and acc.get("time_s"):
        fit = [r for r in runs if r["peak_bytes"] <= acc["peak_bytes"]]
        fast = min(fit, key=lambda r: r["time_s"], default=None)
        met = fast is not None and fast["time_s"] <= ACCEL_TIME_MAX * acc["time_s"]
        out.append((met, "prefill at accelerate's peak: <= %.1fx its time (%s)" % (
            ACCEL_TIME_MAX, "%.3fx at ratio %s" % (fast["time_s"] / acc["time_s"], fast["ratio"])
            if fast else "no hyperoffload run within its peak")))
    else:
        out.append((False, "prefill at accelerate's peak: accelerate did not run (%s)"
                     % (acc or {}).get("error", "absent")))
    bw = res.get("bandwidth", {})
    if bw.get("memcpy_gbs"):
        r = bw["libhyper_gbs"] / bw["memcpy_gbs"]
        out.append((r >= BW_MIN, "copy bandwidth >= %.1fx cudaMemcpyAsync from pinned (%.3fx: "
                    "%.1f of %.1f GB/s)" % (BW_MIN, r, bw["libhyper_gbs"], bw["memcpy_gbs"])))
    else:
        out.append((False, "copy bandwidth: not measured"))
    return out


def _gb(n: float) -> str:
    return "%.2f GB" % (n / 1e9)


def table(res: Dict[str, Any]) -> str:
    """The Markdown table of Documentation/bench-gpu.md."""
    rows = ["| run | prefill peak | prefill time | decode peak | decode tok/s | stall | "
            "equal |", "|---|---|---|---|---|---|---|"]

    def row(name: str, p: Optional[Dict[str, Any]], d: Optional[Dict[str, Any]]) -> None:
        if not p or "error" in p:
            rows.append("| %s | %s | | | | | |" % (name, (p or {}).get("error", "not run")))
            return
        d = d or {}
        rows.append("| %s | %s | %.3f s | %s | %s | %s | %s |" % (
            name, _gb(p["peak_bytes"]), p["time_s"],
            _gb(d["peak_bytes"]) if "peak_bytes" in d else "-",
            "%.1f" % d["tokens_per_s"] if "tokens_per_s" in d else "-",
            "%.3f s" % (p.get("stall_s", 0) + d.get("stall_s", 0)),
            "yes" if p.get("equal", True) and d.get("equal", True) else "NO"))

    row("all-resident", res["prefill"]["resident"], res["decode"]["resident"])
    for p, d in zip(res["prefill"]["hyperoffload"], res["decode"]["hyperoffload"]):
        row("hyperoffload %.1f" % p["ratio"], p, d)
    row("accelerate cpu_offload", res["prefill"].get("accelerate"),
        res["decode"].get("accelerate"))
    bw = res.get("bandwidth", {})
    if bw:
        rows.append("")
        rows.append("Copy bandwidth, %s host to device: libhyper %.1f GB/s, cudaMemcpyAsync "
                    "from pinned memory %.1f GB/s." % (_gb(bw["bytes"]), bw["libhyper_gbs"],
                                                        bw["memcpy_gbs"]))
    return "\n".join(rows)


# ---- measurements (CUDA) ---------------------------------------------------

def _model(prompt: int, decode: int, batch: int):
    import contextlib

    import torch
    from hyperoffload.models import build, config_path, load_config  # noqa: F401

    with open(config_path("llama-1b")) as f:
        cfg = json.load(f)
    cfg["max_position_embeddings"] = max(cfg["max_position_embeddings"], prompt + decode)
    # llama-1b's shape with TinyLlama-1.1B's 22 layers: 1.1 B parameters.
    cfg["num_hidden_layers"] = LAYERS
    # Built on the GPU (torch 2.x: torch.device is a context manager): a
    # 1 B-parameter initialisation on the host takes most of a minute.
    where = torch.device("cuda") if hasattr(torch.device, "__enter__") else \
        contextlib.nullcontext()
    with where:
        m, (ids,) = build(cfg, prompt_len=prompt, decode_steps=decode, batch=batch, seed=0)
    return m.to(torch.bfloat16), ids


_T0 = time.perf_counter()


def log(what: str) -> None:
    """Progress on stderr, with the seconds since the start."""
    print("# %7.1f s  %s" % (time.perf_counter() - _T0, what), file=sys.stderr, flush=True)


def _timed(fn, x):
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    out = fn(x)
    torch.cuda.synchronize()
    return out, time.perf_counter() - t0, torch.cuda.max_memory_allocated()


def _same(a: Any, b: Any) -> bool:
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a.to(b.device), b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def phase(name: str, prompt: int, decode: int, batch: int, ratios, accel: bool
          ) -> Dict[str, Any]:

    import torch
    import hyperoffload.torch as ho
    from hyperoffload.capture import capture

    res: Dict[str, Any] = {"phase": name, "hyperoffload": []}
    log(f"{name}: building the model")
    m, ids = _model(prompt, decode, batch)
    m, ids = m.to("cuda"), ids.to("cuda")
    res["parameters"] = sum(p.numel() for p in m.parameters())
    with torch.no_grad():
        _timed(m, ids)                              # warm-up
        want, t, peak = _timed(m, ids)
    res["resident"] = {"time_s": t, "peak_bytes": peak}
    log(f"{name}: all-resident {t:.3f} s, peak {peak / 1e9:.2f} GB; capturing")
    t0 = time.perf_counter()
    try:
        cap = capture(m, (ids,), runs=CAPTURE_RUNS)  # once: each ratio plans it
    except Exception as e:                          # reported, and a target fails
        cap, err = None, "capture: " + str(e).splitlines()[0]
    res["capture_s"] = time.perf_counter() - t0
    log(f"{name}: captured in {res['capture_s']:.1f} s")
    for r in ratios:
        if cap is None:
            res["hyperoffload"].append({"ratio": r, "error": err, "equal": False,
                                        "time_s": float("inf"), "peak_bytes": float("inf")})
            continue
        try:
            t0 = time.perf_counter()
            p = ho.plan_captured(cap, budget_ratio=r)
            plan_s = time.perf_counter() - t0
            with p, ho.offload(m, (ids,), plan_=p, device="cuda") as off:
                off(ids)                            # warm-up
                got, t, peak = _timed(off, ids)
                st = off.stats
                pred = p.predicted
            res["hyperoffload"].append({"ratio": r, "time_s": t, "peak_bytes": peak,
                                        "stall_s": st.get("stall_ns", 0) / 1e9,
                                        "predicted_peak_bytes": pred["peak_device_bytes"],
                                        "predicted_stall_s": pred["stall_ns"] / 1e9,
                                        "arena_bytes": p.arena_bytes, "plan_s": plan_s,
                                        "bytes_prefetched": st.get("bytes_prefetched", 0),
                                        "equal": _same(got, want)})
        except Exception as e:                      # reported, and a target fails
            res["hyperoffload"].append({"ratio": r, "error": str(e).splitlines()[0],
                                        "equal": False, "time_s": float("inf"),
                                        "peak_bytes": float("inf")})
        log(f"{name}: ratio {r}: {res['hyperoffload'][-1]}")
    del cap
    if accel:
        try:
            from accelerate import cpu_offload

            m2 = m.to("cpu")            # off the GPU: only what accelerate moves counts
            cpu_offload(m2, execution_device=torch.device("cuda"))
            with torch.no_grad():
                _timed(m2, ids)
                got, t, peak = _timed(m2, ids)
            res["accelerate"] = {"time_s": t, "peak_bytes": peak, "equal": _same(got, want)}
            del m2
        except Exception as e:
            res["accelerate"] = {"error": str(e).splitlines()[0] if str(e) else repr(e)}
    del m
    torch.cuda.empty_cache()
    return res


def bandwidth(nbytes: int = 1 << 30) -> Dict[str, Any]:
    """One prefetch of nbytes by libhyper against torch's pinned copy."""
    import torch
    from hyperoffload.binding import Context, Schedule

    src = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    memcpy = nbytes / best / 1e9
    sched = Schedule.parse(json.dumps({
        "format": "hyper-schedule", "version": 1,
        "tensors": [{"id": "w", "bytes": nbytes, "kind": "weight", "home": "pool"}],
        "steps": [{"op": "use", "before": [{"op": "prefetch", "tensor": "w"}],
                   "uses": ["w"], "after": [{"op": "detach", "tensor": "w"}]}]}))
    best = float("inf")
    with Context("shmem", cuda_device=torch.cuda.current_device(),
                 pool_bytes=nbytes + (64 << 20)) as ctx:
        ctx.set_arena_at(dst.data_ptr(), nbytes)
        ctx.attach(sched)
        ctx.prepare()
        for _ in range(4):
            ctx.rewind()
            t0 = time.perf_counter()
            for _step in ctx.steps():
                ctx.wait_tensor(0)          # on the host: the copy's whole time
            ctx.drain()
            best = min(best, time.perf_counter() - t0)
    sched.free()
    return {"bytes": nbytes, "memcpy_gbs": memcpy, "libhyper_gbs": nbytes / best / 1e9}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the results here (default: stdout)")
    ap.add_argument("--table", help="write the Markdown table here")
    ap.add_argument("--prompt", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--no-accelerate", action="store_true")
    a = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("not ok 1 bench-gpu # no CUDA device: torch.cuda.is_available() is False")
        return 1
    res: Dict[str, Any] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                           "prompt": a.prompt, "batch": a.batch, "decode_steps": a.decode}

    def save() -> None:          # after each phase: a run cut short keeps what it measured
        if a.json:
            with open(a.json, "w") as f:
                f.write(json.dumps(res, indent=1, default=str) + "\n")

    res["bandwidth"] = bandwidth()
    save()
    res["prefill"] = phase("prefill", a.prompt, 1, a.batch, RATIOS, not a.no_accelerate)
    save()
    full = phase("prefill+decode", a.prompt, a.decode, a.batch, RATIOS, not a.no_accelerate)
    res["prefill+decode"] = full
    # Decode figures: the full run less its prefill, per generated token.
    dec: Dict[str, Any] = {"hyperoffload": []}
    toks = a.batch * (a.decode - 1)

    def split(p: Dict[str, Any], f: Dict[str, Any]) -> Dict[str, Any]:
        if "error" in p or "error" in f:
            return {"error": f.get("error") or p.get("error")}
        dt = max(f["time_s"] - p["time_s"], 1e-9)
        return {"time_s": dt, "tokens_per_s": toks / dt, "peak_bytes": f["peak_bytes"],
                "stall_s": max(f.get("stall_s", 0) - p.get("stall_s", 0), 0),
                "equal": f.get("equal", True)}

    dec["resident"] = split(res["prefill"]["resident"], full["resident"])
    for p, f in zip(res["prefill"]["hyperoffload"], full["hyperoffload"]):
        dec["hyperoffload"].append(dict(split(p, f), ratio=f["ratio"]))
    if "accelerate" in full:
        dec["accelerate"] = split(res["prefill"]["accelerate"], full["accelerate"])
    res["decode"] = dec
    text = json.dumps(res, indent=1, default=str)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    if a.table:
        with open(a.table, "w") as f:
            f.write(table(res) + "\n")
    print(table(res), file=sys.stderr)
    failed = 0
    for i, (met, line) in enumerate(targets(res), 1):
        print("%s %d %s" % ("ok" if met else "not ok", i, line))
        failed += not met
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
