#!/usr/bin/env python3
"""Summarises the measurements of scripts/bench-profile.sh in OUT_DIR (medians over the
invocations, with their range)."""
import json
import re
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])


def med(v):
    return statistics.median(v) if v else float("nan")


print("1. bench overhead, diamond of 76 nodes, ws, 2 threads (medians over invocations; range)")
rows = [json.loads(l) for l in (out / "overhead.jsonl").read_text().splitlines() if l.strip()]
for mode in ["idle", "lead0", "lead50", "lead100", "lead200"]:
    r = [x for x in rows if x["mode"] == mode]
    if not r:
        continue
    p99 = [x["p99_ns"] / 1e3 for x in r]
    m = [x["median_ns"] / 1e3 for x in r]
    cpu = [100 * x["cpu_cores"] for x in r if x.get("cpu_cores") is not None]
    what = {
        "idle": "sleep 1000 µs between cycles, no period",
        "lead0": "a cycle every 1000 µs, not woken ahead",
    }.get(mode, f"a cycle every 1000 µs, woken {mode[4:]} µs ahead")
    print(
        f"  {what:<45} median {med(m):6.2f} µs  p99 {med(p99):6.2f} µs ({min(p99):.1f}-{max(p99):.1f})"
        f"  CPU {med(cpu):5.1f} % ({min(cpu):.0f}-{max(cpu):.0f}), n={len(r)}"
    )

print("2. the profile's cost: rateau, 512 frames, blocks of cycles back to back, interleaved")
cost_file = out / "cost.jsonl"
if cost_file.exists():
    for line in cost_file.read_text().splitlines():
        if not line.strip():
            continue
        c = json.loads(line)
        print(
            f"  {c['executor']} {c['threads']}t: plain {c['median_off_us']:.2f} µs, profiled {c['median_on_us']:.2f} µs; "
            f"profiled/plain median {c['median_ratio']:.3f} (range {c['ratio_min']:.3f}-{c['ratio_max']:.3f}, "
            f"{c['pairs']} pairs of {c['cycles_per_block']} cycles)"
        )

print("3. profiles")
for name in ["seq-512", "ws2-128", "ws2-512"]:
    p = out / name / "profile.json"
    if not p.exists():
        continue
    j = json.loads(p.read_text())
    total, cycle = j["nodes_total_ns"], j["cycle_mean_ns"]
    line = (
        f"  {name}: {j['cycles']} cycles, cycle mean {cycle / 1e3:.1f} µs, nodes total {total / 1e3:.1f} µs"
        f" ({100 * total / (cycle * j['threads']):.1f} % of {j['threads']} thread(s) x cycle)"
    )
    if j["threads"] > 1:
        t = j["threads_detail"][1]
        line += (
            f"; worker 1 woke in {t['woke']} cycles, wake p99 {t['wake_p99_ns'] / 1e3:.1f} µs"
            f" (median {t['wake_median_ns'] / 1e3:.1f}), first task p99 {t['first_task_p99_ns'] / 1e3:.1f} µs"
        )
    line += f"; the profile's own folding {j.get('profile_own_ns', 0) / 1e3:.2f} µs per cycle"
    line += f"; process CPU {j['process_cpu_cores']:.2f} cores"
    print(line)
