#!/usr/bin/env bash
# The scaling check in one command, on any machine: thread counts 1, 2, 4, 8, 16, ... up to
# the machine's cores (or -t LIST), each measured against its ceiling (the same work as k
# sequential engines side by side, pinned one per core, in the same run).
#
#   bash scripts/bench-scaling.sh [-t 1,2,4,8] [-s SECONDS] [-o DIR] [--quick]
#
# --quick: N up to the threads only, no real-time host part, a smaller table (about 5 minutes
# on 16 cores).
#
# Writes into DIR (default bench-results/scaling/latest):
#   host/      `fugue bench host`: the host's shared and partitioned modes, N = 1 .. 2T
#              instances of rateau101 and heavy6, offline, each point as a fraction of the
#              ceiling at its thread count (medians of 3 repeats, 1 with --quick)
#   host-rt/   real time (clocked) at 128 and 512 frames at the largest thread count
#   host-rt-fifo/  the same at 8 threads (fewer on a smaller machine) with --rt (SCHED_FIFO)
#   table-T/   `fugue bench table` of the corpus shapes at T threads (speed-ups over seq, every
#              cycle checked bit-identical to seq)
#   overhead-T.json  `fugue bench overhead` on the 100-node empty diamond at T threads
#   auto-T.json      `fugue run --executor auto` against `--executor seq` in real time (clocked)
#                    on rateau101 at 128 frames
#   SUMMARY.md  the figures above in one page
# Uses the release binary on PATH if FUGUE is unset and `fugue` is found, else builds it.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=""
seconds=0.5
out=bench-results/scaling/latest
quick=0
while [ $# -gt 0 ]; do
    case "$1" in
    -t | -s | -o)
        if [ $# -lt 2 ]; then
            echo "bench-scaling.sh: $1 needs a value" >&2
            exit 2
        fi
        case "$1" in -t) threads="$2" ;; -s) seconds="$2" ;; -o) out="$2" ;; esac
        shift 2
        ;;
    --quick) quick=1; shift ;;
    *) echo "bench-scaling.sh: unknown argument '$1' (expected -t LIST, -s SECONDS, -o DIR or --quick)" >&2; exit 2 ;;
    esac
done
cores=$(nproc)
if [ -z "$threads" ]; then
    threads=1
    t=2
    while [ "$t" -le "$cores" ]; do threads="$threads,$t"; t=$((t * 2)); done
    # The machine's own count too when it is not a power of two.
    case ",$threads," in *",$cores,"*) ;; *) threads="$threads,$cores" ;; esac
fi
case "$threads" in '' | *[!0-9,]*) echo "bench-scaling.sh: -t takes thread counts such as 1,2,4, not '$threads'" >&2; exit 2 ;; esac
largest=$(echo "$threads" | tr ',' '\n' | sort -n | tail -1)

if [ -n "${FUGUE:-}" ]; then
    fugue="$FUGUE"
elif command -v fugue >/dev/null 2>&1 && [ -z "${FUGUE_BUILD:-}" ]; then
    fugue=$(command -v fugue)
else
    cargo build --release --bin fugue >&2
    fugue=target/release/fugue
fi
if [ -e "$out" ] && [ ! -f "$out/.bench-scaling" ]; then
    echo "bench-scaling.sh: '$out' exists and was not written by this script; choose another -o" >&2
    exit 1
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.bench-scaling"
corpus="${AG:-${FUGUE_CORPUS:-../shared/data/ag}}"
corpus_flag=()
[ -d "$corpus/rateau" ] && corpus_flag=(--corpus "$corpus")

echo "== the host against its ceiling, threads $threads" >&2
max_n=$((2 * largest))
[ "$max_n" -gt 32 ] && max_n=32
[ "$quick" = 1 ] && max_n=$largest
# Three repeats (one with --quick), each point against the ceiling measured beside it: medians and ranges. A
# machine whose cores change speed from moment to moment needs them (bench-results/scaling/).
repeats=3
[ "$quick" = 1 ] && repeats=1
"$fugue" bench host --graphs rateau101,heavy6 --threads "$threads" --max-instances "$max_n" \
    --repeats "$repeats" --modes shared,partitioned --offline-seconds "$seconds" --offline-only \
    -o "$out/host" --force
if [ "$quick" = 0 ]; then
    echo "== the host in real time at $largest threads" >&2
    "$fugue" bench host --graphs rateau101 --threads "$largest" --max-instances "$largest" \
        --modes shared --buffers 128,512 --seconds 10 --offline-seconds 0.1 -o "$out/host-rt" --force
    # The same at 8 threads (the largest count below it on a smaller machine), its threads at
    # SCHED_FIFO (`--rt`, said in its README when refused): what `fugue host --rt` holds.
    rt_threads=$((largest < 8 ? largest : 8))
    echo "== the host in real time at $rt_threads threads, --rt" >&2
    "$fugue" bench host --graphs rateau101 --threads "$rt_threads" --max-instances "$rt_threads" \
        --modes shared --buffers 128,512 --seconds 10 --offline-seconds 0.1 --rt \
        -o "$out/host-rt-fifo" --force
fi

for t in $(echo "$threads" | tr ',' ' '); do
    [ "$t" -lt 2 ] && continue
    echo "== one graph on $t threads" >&2
    if [ "$quick" = 1 ]; then
        table=(--shapes diamond,rake --buffers 512,2048 --executors ws,static --seconds 0.5 --runs 3)
    else
        table=(--shapes line,diamond,rake --buffers 128,512,2048 --executors ws,static,levels --seconds 1 --runs 3)
    fi
    "$fugue" bench table "${table[@]}" --threads "$t" --pin "${corpus_flag[@]}" -o "$out/table-$t" --force
    "$fugue" bench overhead --shape diamond --nodes 100 --executor ws --threads "$t" --pin --json \
        >"$out/overhead-$t.json"
done

echo "== auto against seq in real time (clocked), rateau101 at 128 frames" >&2
rake="$corpus/rateau/rateau101.ag"
[ -f "$rake" ] || rake=examples/pluck.ag
for e in seq auto; do
    "$fugue" run "$rake" --backend clocked --buffer 128 --seconds 5 --executor "$e" \
        --threads "$largest" --pin --json >"$out/auto-$e.json"
done

{
    echo "# The scaling check"
    echo
    echo "Command: \`bash scripts/bench-scaling.sh -t $threads -s $seconds\`, $(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
    echo "Machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
    echo
    echo "## The host against its ceiling"
    echo
    sed -n '/^## Findings/,/^## /p' "$out/host/README.md" | sed '1d;$d'
    for rt in host-rt host-rt-fifo; do
        [ -f "$out/$rt/README.md" ] || continue
        echo
        echo "## Real time ($rt)"
        echo
        sed -n '/^## Real time: the largest N/,/^## \(Refused\|Said\)/p' "$out/$rt/README.md" | sed '1d' | grep -v -e '^## ' -e '^Files:' || true
        sed -n '/^## Said by the hosts/,/^## /p' "$out/$rt/README.md" | grep '^- ' || true
    done
    for t in $(echo "$threads" | tr ',' ' '); do
        [ -f "$out/table-$t/table.md" ] || continue
        echo
        echo "## One graph on $t threads (speed-up over seq)"
        echo
        cat "$out/table-$t/table.md"
    done
} >"$out/SUMMARY.md"
echo "wrote $out" >&2
