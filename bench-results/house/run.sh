#!/usr/bin/env bash
# Speed before and after a change that moves code between crates: two fugue binaries, OLD and
# NEW, measured in one run, interleaved round by round (the order alternates), on
#   - the overhead of a 100-node diamond (`fugue bench overhead --shape diamond --nodes 100`,
#     76 nodes, empty checking nodes) with seq and ws on 2 threads: median ns per cycle;
#   - a sequential render of rateau101.ag (44.1 kHz, 512 frames, 300 s of audio): the
#     render's wall time and its cycles' time, from `--json`.
# Correctness before timing: the overhead bench checks its nodes' outputs; every render must
# have the expected frames and the two binaries' WAV data must be byte-identical (else the
# script fails). Writes raw.csv (one row per measurement) and summary.csv (median, min, max
# per binary and figure, and NEW's median over OLD's).
# Usage: bench-results/house/run.sh OLD_FUGUE NEW_FUGUE [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=$1
NEW=$2
ROUNDS=${3:-7}
GRAPH=../shared/data/ag/rateau/rateau101.ag
OUT=bench-results/house
[ -f "$GRAPH" ] || { echo "no $GRAPH: the shared data is needed" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "round,binary,figure,value" > "$OUT/raw.csv"
measure() { # round label binary
    local r=$1 label=$2 bin=$3
    "$bin" bench overhead --shape diamond --nodes 100 --executor seq,ws --threads 2 \
        --runs 1 --cycles 100000 --warmup 5000 --json > "$TMP/o.json"
    python3 - "$TMP/o.json" "$r" "$label" >> "$OUT/raw.csv" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    print(f"{sys.argv[2]},{sys.argv[3]},overhead_{v['executor']}_median_ns,{v['median_ns']}")
PY
    "$bin" render "$GRAPH" -o "$TMP/$label.wav" --force --rate 44100 --buffer 512 \
        --seconds 300 --executor seq --json > "$TMP/r.json" 2>/dev/null
    python3 - "$TMP/r.json" "$r" "$label" >> "$OUT/raw.csv" <<'PY'
import json, sys
v = json.loads(open(sys.argv[1]).read())
assert v["frames"] == 300 * 44100, v
print(f"{sys.argv[2]},{sys.argv[3]},render_wall_s,{v['wall_s']}")
print(f"{sys.argv[2]},{sys.argv[3]},render_cycles_s,{v['cycles_s']}")
PY
}
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    for label in $order; do
        if [ "$label" = old ]; then measure "$r" old "$OLD"; else measure "$r" new "$NEW"; fi
    done
    # The same samples from both binaries (the data chunk, after the 44-byte-or-more header).
    python3 - "$TMP/old.wav" "$TMP/new.wav" <<'PY'
import sys
def data(p):
    b = open(p, "rb").read()
    return b[b.index(b"data") + 8:]
assert data(sys.argv[1]) == data(sys.argv[2]), "the two binaries rendered different samples"
PY
    echo "round $r of $ROUNDS done" >&2
done
python3 - "$OUT/raw.csv" > "$OUT/summary.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("figure,old_median,old_min,old_max,new_median,new_min,new_max,new_over_old")
for f in dict.fromkeys(r["figure"] for r in rows):
    m = {}
    for b in ("old", "new"):
        xs = sorted(float(r["value"]) for r in rows if r["figure"] == f and r["binary"] == b)
        m[b] = (statistics.median(xs), xs[0], xs[-1])
    o, n = m["old"], m["new"]
    print(f"{f},{o[0]:.6g},{o[1]:.6g},{o[2]:.6g},{n[0]:.6g},{n[1]:.6g},{n[2]:.6g},{n[0] / o[0]:.3f}")
PY
cat "$OUT/summary.csv"
