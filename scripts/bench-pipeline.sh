#!/usr/bin/env bash
# Pipelining and the executors' round-one figures, before/after style: N invocations of
# `fugue bench table` (each its own process, 5 runs of 2 s of audio, every cycle checked
# bit-identical to seq) for
#   - ligne100.ag at 512 frames, ws and static with --pipeline 4, 2 threads (the target: ws at
#     least 1.4x seq);
#   - losange156.ag and rateau101.ag at 512 frames, ws and static, --pipeline auto and 1
#     (auto must be no slower than without).
# Writes bench-results/pipeline/{raw.csv,summary.csv} (one row per invocation and executor;
# medians over the invocations) unless OUT is set.
# Usage: scripts/bench-pipeline.sh [INVOCATIONS] [FUGUE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
BIN=${2:-./target/release/fugue}
OUT=${OUT:-bench-results/pipeline}
DATA=../shared/data/ag
[ -d "$DATA" ] || { echo "no $DATA: the shared corpus is needed" >&2; exit 1; }
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "invocation,graph,pipeline,executor,threads,median_ns,speedup_vs_seq,capacity,verified" > "$OUT/raw.csv"
run() { # graph pipeline
  local g=$1 p=$2 d="$TMP/$(basename "$1" .ag)-$2-$i"
  "$BIN" bench table --shapes "$DATA/$g" --buffers 512 --executors ws,static --threads 2 \
    --runs 5 --seconds 2 --pipeline "$p" -o "$d" >/dev/null 2>"$d.err" || { cat "$d.err" >&2; exit 1; }
  tail -n +2 "$d/summary.csv" | while IFS=, read -r shape graph nodes buffer ex th runs med sp p99 max mean speed cap soc ver; do
    echo "$i,$(basename "$g"),$p,$ex,$th,$med,$speed,$cap,$ver" >> "$OUT/raw.csv"
  done
}
for i in $(seq 1 "$N"); do
  echo "invocation $i of $N (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  run ligne/ligne100.ag 4
  run losange/losange156.ag auto
  run losange/losange156.ag 1
  run rateau/rateau101.ag auto
  run rateau/rateau101.ag 1
done
python3 - "$OUT/raw.csv" > "$OUT/summary.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("graph,pipeline,executor,invocations,median_speedup,min,max,median_cycle_us,all_verified")
keys = dict.fromkeys((r["graph"], r["pipeline"], r["executor"]) for r in rows)
for g, p, e in keys:
    rs = [r for r in rows if (r["graph"], r["pipeline"], r["executor"]) == (g, p, e)]
    sp = sorted(float(r["speedup_vs_seq"]) for r in rs)
    us = statistics.median(float(r["median_ns"]) / 1000 for r in rs)
    ok = all(r["verified"] == "true" for r in rs)
    print(f"{g},{p},{e},{len(rs)},{statistics.median(sp):.3f},{sp[0]:.3f},{sp[-1]:.3f},{us:.1f},{ok}")
PY
cat "$OUT/summary.csv"
