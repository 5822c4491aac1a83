#!/usr/bin/env bash
# The 32-plugin parallel example (examples/lv2/parallel.ag: 16 branches of two LV2 plugins
# into a mix), rendered whole-process by seq, ws and static on 2 threads: RUNS runs each,
# interleaved; each output checked bit-identical to seq's before its time counts.
# Usage: bench-results/lv2/run.sh FUGUE_BINARY [RUNS] [SECONDS]
set -euo pipefail
bin=${1:?give the fugue binary}
runs=${2:-5}
seconds=${3:-10}
here=$(cd "$(dirname "$0")" && pwd)
graph="$here/../../examples/lv2/parallel.ag"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" render "$graph" -o "$tmp/ref.wav" --seconds "$seconds" -e seq 2>/dev/null >/dev/null
ref=$(md5sum < "$tmp/ref.wav")
echo "executor,threads,run,seconds,identical_to_seq" > "$here/raw.csv"
for run in $(seq 1 "$runs"); do
    for ex in "seq 1" "ws 2" "static 2"; do
        set -- $ex
        start=$(date +%s.%N)
        "$bin" render "$graph" -o "$tmp/out.wav" --seconds "$seconds" -e "$1" -t "$2" --force 2>/dev/null >/dev/null
        end=$(date +%s.%N)
        same=$([ "$(md5sum < "$tmp/out.wav")" = "$ref" ] && echo yes || echo no)
        if [ "$same" != yes ]; then echo "error: $1 on $2 threads differs from seq" >&2; exit 1; fi
        echo "$1,$2,$run,$(echo "$end - $start" | bc),$same" >> "$here/raw.csv"
    done
done
python3 - "$here/raw.csv" > "$here/summary.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r["executor"], r["threads"]), []).append(float(r["seconds"]))
seq = statistics.median(by[("seq", "1")])
print("executor,threads,runs,median_s,min_s,max_s,speedup_vs_seq,identical_to_seq")
for (e, t), v in by.items():
    m = statistics.median(v)
    print(f"{e},{t},{len(v)},{m:.3f},{min(v):.3f},{max(v):.3f},{seq / m:.2f},yes")
PY
cat "$here/summary.csv"
