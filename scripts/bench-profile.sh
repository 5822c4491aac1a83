#!/usr/bin/env bash
# The wake-up and profile measurements (docs/executors.md, "Waking ahead of the cycle";
# bench-results/profile/README.md):
#   1. bench overhead on the 100-node diamond, ws, 2 threads: cycles after a sleep of 1000 µs
#      (no period known), and cycles every 1000 µs with the workers woken 0, 50, 100 and
#      200 µs ahead; N invocations of each, interleaved;
#   2. the profile's own cost: clocked runs of rateau101 at 512 frames with and without
#      --profile, interleaved, mean cycle time of each;
#   3. the profile of rateau101 with seq at 512 frames (nodes total against the cycle) and
#      with ws on 2 threads at 128 frames (workers' wake-up latency).
# Usage: scripts/bench-profile.sh [OUT_DIR] [N]   (graph from $FUGUE_RATEAU, else the corpus,
# else generated: `fugue gen rake`).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-results/profile/$(date +%Y-%m-%d)}
n=${2:-5}
mkdir -p "$out"
cargo build --release -q -p fugue
f=target/release/fugue
rateau=${FUGUE_RATEAU:-../shared/data/ag/rateau/rateau101.ag}
if [ ! -f "$rateau" ]; then
    rateau="$out/rake33.ag"
    rm -f "$rateau"
    "$f" gen rake --branches 33 -o "$rateau" >/dev/null
fi
{
    echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)"
    echo "graph for the profile: $rateau"
} >"$out/machine.txt"

# 1. Wake-up.
: >"$out/overhead.jsonl"
for i in $(seq 1 "$n"); do
    for mode in "idle" "lead0" "lead50" "lead100" "lead200"; do
        case $mode in
            idle) flags=(--idle-us 1000) ;;
            lead*) flags=(--period-us 1000 --wake-lead-us "${mode#lead}") ;;
        esac
        "$f" bench overhead --shape diamond --nodes 100 --executor ws --threads 2 \
            --cycles 5000 --warmup 500 "${flags[@]}" --json |
            sed "s/^{/{\"mode\":\"$mode\",\"invocation\":$i,/" >>"$out/overhead.jsonl"
    done
done

# 2. The profile's cost: a plain and a profiled engine of rateau101 at 512 frames, blocks
#    of 500 cycles back to back, interleaved; seq, then ws on 2 threads.
: >"$out/cost.jsonl"
for e in seq ws; do
    threads=1
    [ "$e" = ws ] && threads=2
    "$f" bench profile-cost --graph "$rateau" --buffer 512 --executor "$e" --threads "$threads" \
        --pairs 40 --cycles 500 --json | tr -d '\n' >>"$out/cost.jsonl"
    echo >>"$out/cost.jsonl"
done
# 3. Profiles.
"$f" profile "$rateau" --executor seq --buffer 512 --seconds 10 -o "$out/seq-512" --force \
    >/dev/null
"$f" profile "$rateau" --executor ws --threads 2 --buffer 128 --seconds 10 \
    -o "$out/ws2-128" --force >/dev/null
"$f" profile "$rateau" --executor ws --threads 2 --buffer 512 --seconds 10 \
    -o "$out/ws2-512" --force >/dev/null
python3 scripts/bench-profile-summary.py "$out" | tee "$out/summary.txt"
