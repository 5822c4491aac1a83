#!/usr/bin/env bash
# strings32.ag rendered to a new WAV file by seq, ws and static (2 threads), whole process
# timed, ROUNDS rounds interleaved; the previous round's files are removed (and the disk
# synced) before each run, outside the timing, so that no run pays for deleting the file it
# replaces. ws's and static's files are compared with seq's (`cmp`).
# Usage: bench-results/faust/fresh.sh [FUGUE] [ROUNDS] [BUFFER] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
F=${1:-./target/release/fugue}
R=${2:-5}
B=${3:-16384}
S=${4:-300}
G=examples/faust/strings32.ag
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
# The compiled program is kept on disk: one warm-up render fills that cache.
"$F" render "$G" -o "$D/warm.wav" --seconds 1 >/dev/null 2>&1
for r in $(seq 1 "$R"); do
    for ex in seq ws static; do
        th=2
        [ "$ex" = seq ] && th=1
        rm -f "$D/$ex.wav"
        sync
        s=$(date +%s.%N)
        "$F" render "$G" -o "$D/$ex.wav" --seconds "$S" --buffer "$B" -e "$ex" -t "$th" >/dev/null 2>&1
        e=$(date +%s.%N)
        echo "$ex $(echo "$e - $s" | bc)"
    done
    cmp "$D/seq.wav" "$D/ws.wav" && cmp "$D/seq.wav" "$D/static.wav"
done | python3 -c '
import statistics, sys
t = {}
for line in sys.stdin:
    ex, s = line.split()
    t.setdefault(ex, []).append(float(s))
seq = statistics.median(t["seq"])
for ex, v in t.items():
    m = statistics.median(v)
    print(f"{ex}: median {m:.3f} s ({min(v):.3f}-{max(v):.3f}), {seq / m:.2f}x over seq; runs " + " ".join(f"{x:.3f}" for x in v))
'
echo "ws and static files identical to seq's in every round"
