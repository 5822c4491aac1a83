#!/usr/bin/env bash
# Measures the sequential offline render of rateau101.ag (44.1 kHz, buffer 512) in multiples
# of real time: through `fugue render` (WAV written) and through the bench_render example (no
# WAV). Writes raw.csv (one row per run) and summary.csv (median, min, max per method).
# Usage: bench-results/render/run.sh [RUNS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-9}
SECONDS_OF_AUDIO=${2:-30}
GRAPH=../shared/data/ag/rateau/rateau101.ag
OUT=bench-results/render
[ -f "$GRAPH" ] || { echo "no $GRAPH: the shared data is needed" >&2; exit 1; }
cargo build --release -q -p fugue -p fugue-bench --example bench_render
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "method,graph,rate,buffer,seconds,run,wall_s,x_realtime,checked" > "$OUT/raw.csv"
for r in $(seq 0 $((RUNS - 1))); do
  line=$(./target/release/fugue render "$GRAPH" -o "$TMP/out.wav" --force --rate 44100 --buffer 512 --seconds "$SECONDS_OF_AUDIO" --executor seq)
  echo "$line" >&2
  wall=$(echo "$line" | sed -E 's/.* in ([0-9.]+) s \(.*/\1/')
  x=$(echo "$line" | sed -E 's/.*\(([0-9.]+)x real time\).*/\1/')
  # The render is checked: the expected length and a non-silent peak.
  echo "$line" | grep -q "$((SECONDS_OF_AUDIO * 44100)) frames, 1 channel" || { echo "wrong length" >&2; exit 1; }
  echo "$line" | grep -q "peak -inf" && { echo "silent output" >&2; exit 1; }
  echo "fugue-render-wav,rateau101.ag,44100,512,$SECONDS_OF_AUDIO,$r,$wall,$x,ok" >> "$OUT/raw.csv"
done
./target/release/examples/bench_render "$GRAPH" --rate 44100 --buffer 512 --seconds "$SECONDS_OF_AUDIO" \
  --runs "$RUNS" --csv "$TMP/cycles.csv" >&2
sed -E 's/^[^,]*,/cycles-no-wav,rateau101.ag,/' "$TMP/cycles.csv" >> "$OUT/raw.csv"
python3 - "$OUT/raw.csv" > "$OUT/summary.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("method,runs,median_x_realtime,min,max,spread_pct,all_checked")
for m in dict.fromkeys(r["method"] for r in rows):
    xs = sorted(float(r["x_realtime"]) for r in rows if r["method"] == m)
    med = statistics.median(xs)
    ok = all(r["checked"] == "ok" for r in rows if r["method"] == m)
    print(f"{m},{len(xs)},{med:.1f},{xs[0]:.1f},{xs[-1]:.1f},{100 * (xs[-1] - xs[0]) / med:.0f},{ok}")
PY
cat "$OUT/summary.csv"
