# SPDX-License-Identifier: LGPL-2.1-or-later
"""The table ``make demo`` prints, for runs of a PyTorch module."""
from __future__ import annotations

from typing import Dict


def mib(b: float) -> str:
    return f"{b / 1048576:.1f} MiB"


def ms(ns: float) -> str:
    return f"{ns / 1e9:.2f} s" if ns >= 1e9 else f"{ns / 1e6:.1f} ms"


def table(base: Dict[str, float], plan: Dict[str, float], pred: Dict[str, float],
          runs: int) -> str:
    """Baseline (all-resident through the runner) against the planned run,
    then the planner's prediction against the planned run."""
    peak_pct = 100.0 * plan["peak_device_bytes"] / max(1, base["peak_device_bytes"])
    wall_pct = 100.0 * (plan["wall_ns"] / max(1, base["wall_ns"]) - 1)
    pre = lambda s: f"{s['bytes_prefetched'] / 1048576:.0f} / {s['bytes_stored'] / 1048576:.0f} MiB"  # noqa: E731
    lines = [
        "|                             | baseline       | planned                    |",
        "|-----------------------------|----------------|----------------------------|",
        f"| peak device-buffer bytes    | {mib(base['peak_device_bytes']):<14} | "
        f"{mib(plan['peak_device_bytes']):<10} ({peak_pct:.0f}% of baseline) |",
        f"| wall time                   | {ms(base['wall_ns']):<14} | "
        f"{ms(plan['wall_ns']):<10} ({wall_pct:+.1f}%)           |",
        f"| stall time                  | {ms(base['stall_ns']):<14} | {ms(plan['stall_ns']):<26} |",
        f"| bytes prefetched / stored   | {pre(base):<14} | {pre(plan):<26} |",
        "",
        "The planner's prediction for the planned run, next to what was measured:",
        "",
        "|                             | predicted      | measured                   |",
        "|-----------------------------|----------------|----------------------------|",
        f"| peak residency              | {mib(pred['peak_device_bytes']):<14} | "
        f"{mib(plan['peak_resident_bytes']):<26} |",
        f"| stall                       | {ms(pred['stall_ns']):<14} | {ms(plan['stall_ns']):<26} |",
        f"| makespan                    | {ms(pred['makespan_ns']):<14} | {ms(plan['wall_ns']):<26} |",
        "",
        f"(medians of {runs} runs each, interleaved; both runs go through the same",
        "runner, the baseline's schedule offloading nothing.  Device-buffer bytes are",
        "the most arena libhyper held.)",
    ]
    return "\n".join(lines)
