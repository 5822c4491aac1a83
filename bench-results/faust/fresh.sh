#!/usr/bin/env bash
# strings32.ag (32 Karplus-Strong string nodes and a mixer) rendered to a new WAV file by seq,
# ws and static (2 threads), and Faust's own parallel builds of karplus32.dsp (-vec -sch and
# -vec -omp, on 1 and 2 threads, built with `fugue bench faust`'s driver), every process
# timed whole: ROUNDS rounds of fugue's three, interleaved, then ROUNDS of Faust's. The
# previous round's files are removed (and the disk synced) before each run, outside the
# timing, so that no run pays for deleting the file it replaces. ws's and static's files
# are compared with seq's (`cmp`), and each Faust build's output with its one-thread run's
# (`cmp`, else at most 1e-5 apart).
# Faust's part is skipped (and said) where `faust` or `g++` is missing, or with NOFAUST=1.
# Usage: bench-results/faust/fresh.sh [FUGUE] [ROUNDS] [BUFFER] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
F=${1:-./target/release/fugue}
R=${2:-5}
B=${3:-16384}
S=${4:-300}
G=examples/faust/strings32.ag
K=${KARPLUS:-/usr/share/faust/examples/physicalModeling/old/karplus32.dsp}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
# The compiled program is kept on disk: one warm-up render fills that cache.
"$F" render "$G" -o "$D/warm.wav" --seconds 1 >/dev/null 2>&1

# Faust's builds of karplus32, as `fugue bench faust` makes them.
modes=()
if [ "${NOFAUST:-0}" != 1 ] && command -v faust >/dev/null && command -v g++ >/dev/null && [ -f "$K" ]; then
    for m in sch omp; do
        flags="-vec -sch"
        extra=""
        [ $m = omp ] && { flags="-vec -omp"; extra="-fopenmp"; }
        # The same commands as `fugue bench faust`'s builds; their messages shown on failure.
        # shellcheck disable=SC2086
        { faust $flags -a crates/bench/faust/driver.cpp -I "$(dirname "$K")" "$K" -o "$D/k-$m.cpp" &&
            g++ -O3 -w -std=c++14 $extra "$D/k-$m.cpp" -o "$D/k-$m" -lpthread; } 2>"$D/build.log" ||
            { cat "$D/build.log" >&2; exit 1; }
        modes+=("$m")
    done
else
    echo "Faust's builds skipped (NOFAUST=1, or faust, g++ or $K missing)" >&2
fi
blocks=$(python3 -c "print(max(1, round($S * 48000 / $B)))")

{
    # fugue's rounds, then Faust's: each contender is compared with its own runs of the same
    # rounds, and Faust's two-thread runs (which spin for seconds on two cores) do not fall
    # between fugue's.
    for r in $(seq 1 "$R"); do
        for ex in seq ws static; do
            th=2
            [ "$ex" = seq ] && th=1
            rm -f "$D/$ex.wav"
            sync
            s=$(date +%s.%N)
            "$F" render "$G" -o "$D/$ex.wav" --seconds "$S" --buffer "$B" -e "$ex" -t "$th" >/dev/null 2>&1
            e=$(date +%s.%N)
            echo "fugue-$ex $th $(echo "$e - $s" | bc)"
        done
        cmp "$D/seq.wav" "$D/ws.wav" && cmp "$D/seq.wav" "$D/static.wav"
    done
    rm -f "$D"/*.wav
    for r in $(seq 1 "$R"); do
        for m in "${modes[@]}"; do
            for th in 1 2; do
                rm -f "$D/k-$m-$th.raw"
                sync
                s=$(date +%s.%N)
                OMP_NUM_THREADS=$th "$D/k-$m" "$blocks" "$B" 48000 - "$D/k-$m-$th.raw" play=1 polyphony=32 >/dev/null
                e=$(date +%s.%N)
                echo "faust-$m $th $(echo "$e - $s" | bc)"
            done
            cmp -s "$D/k-$m-1.raw" "$D/k-$m-2.raw" || python3 - "$D/k-$m-1.raw" "$D/k-$m-2.raw" <<'EOF'
import array, sys
a, b = array.array("f"), array.array("f")
a.frombytes(open(sys.argv[1], "rb").read()); b.frombytes(open(sys.argv[2], "rb").read())
d = max((abs(x - y) for x, y in zip(a, b)), default=0.0) if len(a) == len(b) else float("inf")
if not d <= 1e-5:
    sys.exit(f"{sys.argv[2]}: {d} from the one-thread run")
EOF
        done
    done
} | python3 -c '
import statistics, sys
t = {}
for line in sys.stdin:
    who, th, s = line.split()
    t.setdefault((who, int(th)), []).append(float(s))
label = {"fugue-seq": "fugue seq (strings32.ag)", "fugue-ws": "fugue ws (strings32.ag)",
         "fugue-static": "fugue static (strings32.ag)",
         "faust-sch": "faust -vec -sch (karplus32.dsp)", "faust-omp": "faust -vec -omp (karplus32.dsp)"}
print("| contender | threads | median s (min-max) | over its 1-thread run | runs |")
print("|---|---:|---|---:|---|")
for (who, th), v in t.items():
    m = statistics.median(v)
    # fugue: over seq; a Faust build: over the same build on one thread.
    ref = statistics.median(t[("fugue-seq", 1)] if who.startswith("fugue") else t[(who, 1)])
    runs = " ".join(f"{x:.3f}" for x in v)
    print(f"| {label[who]} | {th} | {m:.3f} ({min(v):.3f}-{max(v):.3f}) | {ref / m:.2f}x | {runs} |")
'
echo "fugue: ws and static files identical to seq's in every round; Faust: each build's 2-thread output checked against its 1-thread run's"
