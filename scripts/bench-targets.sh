#!/usr/bin/env bash
# Measures the executors' benchmark targets N times each (separate invocations, so that the
# machine's phases show in the spread) and prints, per target, every invocation's figure, the
# median, the range and how many invocations met it.
#
#   bash scripts/bench-targets.sh [-n N] [-o DIR]
#
# Targets (2 threads; graphs from ../shared/data/ag, or $FUGUE_CORPUS):
#   overhead   100-node empty diamond: ws median <= 5 µs and <= 1/4 of oneTBB's in the same run
#   idle       the same with 1000 µs between cycles: ws p99 <= 50 µs
#   line       ligne100.ag at 128 frames: every parallel executor within 1.1x of seq
#   rake       rateau101.ag at 512 frames: ws >= 1.8x seq
#   diamond    losange156.ag at 512 frames: ws >= 1.6x seq
# and, for the rake, the ceiling of two threads at that moment: `rake_oracle` (seq, ws and a
# split by hand with one flag each way per cycle, in one process).
# Raw outputs (JSON lines, bench table folders) go to DIR (default bench-results/targets/latest;
# an existing DIR is kept unless it was written by this script).
set -euo pipefail
cd "$(dirname "$0")/.."

n=5
out=bench-results/targets/latest
while [ $# -gt 0 ]; do
    case "$1" in
    -n | -o)
        if [ $# -lt 2 ]; then
            echo "bench-targets.sh: $1 needs a value" >&2
            exit 2
        fi
        if [ "$1" = -n ]; then n="$2"; else out="$2"; fi
        shift 2
        ;;
    *) echo "bench-targets.sh: unknown argument '$1' (expected -n N or -o DIR)" >&2; exit 2 ;;
    esac
done
case "$n" in '' | *[!0-9]* | 0) echo "bench-targets.sh: -n takes a positive number, not '$n'" >&2; exit 2 ;; esac
corpus="${FUGUE_CORPUS:-../shared/data/ag}"
if [ ! -d "$corpus" ]; then
    echo "bench-targets.sh: no graph corpus at '$corpus' (set FUGUE_CORPUS)" >&2
    exit 1
fi
if [ -e "$out" ] && [ ! -f "$out/.bench-targets" ]; then
    echo "bench-targets.sh: '$out' exists and was not written by this script; choose another -o" >&2
    exit 1
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.bench-targets"

cargo build --release --bin fugue >&2
cargo build --release -p fugue-bench --example rake_oracle >&2
fugue=target/release/fugue
oracle=target/release/examples/rake_oracle
tbb=target/peers/tbb-flow
if [ ! -x "$tbb" ]; then
    bash scripts/bench-peers.sh --build-only >&2 || true
fi
if [ ! -x "$tbb" ]; then
    echo "bench-targets.sh: the oneTBB harness is not built (scripts/bench-peers.sh --build-only); the oneTBB ratio is not measured" >&2
fi

{
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
} >"$out/machine.txt"

peer=()
[ -x "$tbb" ] && peer=(--tbb "$tbb")
execs=ws
[ -x "$tbb" ] && execs=ws,tbb
for i in $(seq "$n"); do
    echo "round $i of $n" >&2
    "$fugue" bench overhead --shape diamond --nodes 100 --executor "$execs" --threads 2 \
        --runs 5 "${peer[@]}" --json >"$out/overhead-$i.json"
    "$fugue" bench overhead --shape diamond --nodes 100 --executor "$execs" --threads 2 \
        --runs 3 --cycles 3000 --idle-us 1000 "${peer[@]}" --json >"$out/idle-$i.json"
    "$fugue" bench table --shapes rake,diamond --buffers 512 --executors seq,ws --threads 2 \
        --seconds 200 --runs 7 --corpus "$corpus" -o "$out/table512-$i" >/dev/null
    # The same rake in one process: seq, ws and the least-synchronised split by hand (the
    # ceiling of two threads on this machine at this moment), alternating.
    "$oracle" "$corpus/rateau/rateau101.ag" 3 >"$out/oracle-$i.txt"
    "$fugue" bench table --shapes line --buffers 128 --executors all --threads 2 \
        --seconds 60 --runs 7 --corpus "$corpus" -o "$out/line128-$i" >/dev/null
done
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"

python3 - "$out" "$n" <<'EOF' | tee "$out/summary.txt"
import csv, json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])

def rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]

def table(path):
    with open(path + "/summary.csv") as f:
        return list(csv.DictReader(f))

def report(name, values, ok, unit, fmt="{:.3g}"):
    """One line per figure; `ok` None for a figure that is not a target."""
    med = statistics.median(values)
    line = (f"{name}: median {fmt.format(med)}{unit} (range {fmt.format(min(values))}-"
            f"{fmt.format(max(values))}{unit})")
    if ok is not None:
        met = sum(1 for v in values if ok(v))
        line += (f", met in {met} of {len(values)} invocations, "
                 f"median {'meets' if ok(med) else 'MISSES'} the target")
    print(line)
    print("    " + ", ".join(fmt.format(v) for v in values))

with open(out + "/machine.txt") as f:
    print(f.read().rstrip())
ws_med, ratio, idle_p99 = [], [], []
for i in range(1, n + 1):
    for r in rows(f"{out}/overhead-{i}.json"):
        if r["executor"] == "ws":
            ws_med.append(r["median_ns"] / 1e3)
            if r.get("vs_tbb") is not None:
                ratio.append(r["vs_tbb"])
    for r in rows(f"{out}/idle-{i}.json"):
        if r["executor"] == "ws":
            idle_p99.append(r["p99_ns"] / 1e3)
report("overhead: ws median per cycle <= 5 µs", ws_med, lambda v: v <= 5.0, " µs")
if ratio:
    report("overhead: ws / oneTBB <= 0.25", ratio, lambda v: v <= 0.25, "")
report("idle 1000 µs: ws p99 <= 50 µs", idle_p99, lambda v: v <= 50.0, " µs")
rake, dia, worst_line = [], [], []
for i in range(1, n + 1):
    for r in table(f"{out}/table512-{i}"):
        if r["executor"] == "ws":
            (rake if r["shape"] == "rake" else dia).append(float(r["speedup_vs_seq"]))
    line = [float(r["speedup_vs_seq"]) for r in table(f"{out}/line128-{i}")
            if r["executor"] not in ("seq", "rayon")]
    worst_line.append(min(line))
report("ligne100 at 128: slowest parallel executor / seq >= 1/1.1", worst_line,
       lambda v: v >= 1 / 1.1, "x")
report("rateau101 at 512: ws >= 1.8x", rake, lambda v: v >= 1.8, "x")
ws_o, or_o = [], []
for i in range(1, n + 1):
    with open(f"{out}/oracle-{i}.txt") as f:
        for l in f:
            if l.startswith("ws: speedup median"):
                ws_o.append(float(l.split()[3].rstrip(",")))
            elif l.startswith("oracle: speedup median"):
                or_o.append(float(l.split()[3].rstrip(",")))
if ws_o and len(ws_o) == len(or_o):
    report("rateau101 at 512, in one process: ws", ws_o, lambda v: v >= 1.8, "x")
    report("rateau101 at 512, in one process: the split by hand (the ceiling)", or_o,
           None, "x")
    report("rateau101 at 512, in one process: ws / the split by hand",
           [w / o for w, o in zip(ws_o, or_o)], None, "")
report("losange156 at 512: ws >= 1.6x", dia, lambda v: v >= 1.6, "x")
EOF
