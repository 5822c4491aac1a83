#!/usr/bin/env bash
# Whole-process offline render of rateau101.ag (600 s of audio at 48 kHz, 512 frames, 32-bit
# WAV), `--executor auto` against `--executor seq`, interleaved, ROUNDS rounds; the wall time of
# the whole process (start to exit: reading, compiling, auto's trials, the cycles, the WAV
# writer) from Python's monotonic clock. Every auto output is compared with seq's, byte for
# byte. Writes bench-results/render-auto/{raw.csv,summary.csv} unless OUT is set.
# Usage: scripts/bench-render-auto.sh [ROUNDS] [SECONDS] [GRAPH]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-600}
GRAPH=${3:-../shared/data/ag/rateau/rateau101.ag}
OUT=${OUT:-bench-results/render-auto}
[ -f "$GRAPH" ] || { echo "no $GRAPH: the shared corpus is needed" >&2; exit 1; }
mkdir -p "$OUT"
python3 - "$ROUNDS" "$SECS" "$GRAPH" "$OUT" <<'PY'
import csv, filecmp, os, statistics, subprocess, sys, tempfile, time
rounds, secs, graph, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
tmp = tempfile.mkdtemp()
rows = []
for r in range(rounds):
    outs = {}
    for ex in ["seq", "auto"]:
        wav = os.path.join(tmp, f"{ex}.wav")
        t = time.monotonic()
        p = subprocess.run(["./target/release/fugue", "render", graph, "--seconds", secs,
                            "--buffer", "512", "--rate", "48000", "--executor", ex,
                            "-o", wav, "--force"], capture_output=True, text=True)
        wall = time.monotonic() - t
        if p.returncode != 0:
            sys.exit(f"render failed: {p.stderr}")
        chose = next((l.split("chose ")[1].split(",")[0] for l in p.stderr.splitlines()
                      if "executor auto: chose" in l), "")
        outs[ex] = wav
        rows.append({"round": r, "executor": ex, "wall_s": f"{wall:.3f}", "chose": chose,
                     "load": open("/proc/loadavg").read().split()[0]})
        print(f"round {r} {ex}: {wall:.3f} s {chose}", file=sys.stderr)
    same = filecmp.cmp(outs["seq"], outs["auto"], shallow=False)
    if not same:
        sys.exit("auto's WAV differs from seq's")
    for row in rows[-2:]:
        row["identical"] = "true"
with open(os.path.join(out, "raw.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["round", "executor", "wall_s", "chose", "load", "identical"])
    w.writeheader()
    w.writerows(rows)
seq = [float(r["wall_s"]) for r in rows if r["executor"] == "seq"]
auto = [float(r["wall_s"]) for r in rows if r["executor"] == "auto"]
ratios = sorted(s / a for s, a in zip(seq, auto))
x_rt = float(secs) / statistics.median(seq)
with open(os.path.join(out, "summary.csv"), "w") as f:
    f.write("rounds,seq_median_s,auto_median_s,ratio_of_medians,ratio_per_round_median,ratio_min,ratio_max,seq_x_realtime\n")
    f.write(f"{rounds},{statistics.median(seq):.3f},{statistics.median(auto):.3f},"
            f"{statistics.median(seq) / statistics.median(auto):.3f},{statistics.median(ratios):.3f},"
            f"{ratios[0]:.3f},{ratios[-1]:.3f},{x_rt:.0f}\n")
print(open(os.path.join(out, "summary.csv")).read())
PY
