#!/usr/bin/env bash
# Soak test: plays for a given time and checks that memory stays flat and counts deadline
# misses.
#
#   scripts/soak.sh [SECONDS] [OUT_DIR]        (default 1800 s, bench-results/soak/DATE)
#
# With `fugue host` (the multi-graph host): one host on the clocked backend, 128 frames,
# plays while a control loop loads and unloads random graphs (`fugue gen` lines, diamonds,
# rakes and random DAGs of random sizes) through its control socket, one change every
# CHANGE_MS (default 500) ms, keeping between 1 and MAX_GRAPHS (default 4) loaded.
# Without it: `fugue run --backend clocked` of a rake for the whole time.
# Every 10 s the process's resident memory (VmRSS) is sampled into rss.csv. At the end,
# summary.txt says: resident memory after the first minute and at the end (and their
# ratio: the soak passes when the end is within 5 % of the first minute), the run's cycles
# and deadline misses, and the load average (misses depend on what else runs).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1800}
out=${2:-bench-results/soak/$(date +%Y-%m-%d)}
change_ms=${CHANGE_MS:-500}
max_graphs=${MAX_GRAPHS:-4}
mkdir -p "$out"
cargo build --release -q -p fugue
f=$PWD/target/release/fugue
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

has_host() { "$f" host --help >/dev/null 2>&1; }

echo "t_s,rss_kib" >"$out/rss.csv"
sample_rss() { # pid -> appends one row per 10 s until the process ends
    local pid=$1 t0=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$rss" ] && echo "$((SECONDS - t0)),$rss" >>"$out/rss.csv"
        sleep 10
    done
}

if has_host; then
    mode=host
    sock=$work/host.sock
    "$f" host --backend clocked --buffer 128 --threads 2 --control "$sock" \
        >"$out/host.log" 2>&1 </dev/null &
    pid=$!
    for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
    sample_rss "$pid" &
    sampler=$!
    # Random graphs to load, made once.
    shapes=()
    for i in $(seq 0 19); do
        case $((RANDOM % 4)) in
            0) "$f" gen line --nodes $((5 + RANDOM % 60)) -o "$work/g$i.ag" >/dev/null 2>&1 ;;
            1) "$f" gen diamond --depth $((1 + RANDOM % 3)) -o "$work/g$i.ag" >/dev/null 2>&1 ;;
            2) "$f" gen rake --branches $((2 + RANDOM % 10)) -o "$work/g$i.ag" >/dev/null 2>&1 ;;
            3) "$f" gen random --nodes $((5 + RANDOM % 30)) --probability 0.2 -o "$work/g$i.ag" >/dev/null 2>&1 ;;
        esac
        shapes+=("$work/g$i.ag")
    done
    loaded=()
    changes=0
    end=$((SECONDS + secs - 5))
    while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
        if [ ${#loaded[@]} -gt 0 ] && { [ ${#loaded[@]} -ge "$max_graphs" ] || [ $((RANDOM % 2)) = 0 ]; }; then
            k=$((RANDOM % ${#loaded[@]}))
            "$f" ctl "$sock" unload "${loaded[$k]}" >>"$out/ctl.log" 2>&1 || true
            loaded=("${loaded[@]:0:$k}" "${loaded[@]:$((k + 1))}")
        else
            name=s$changes
            "$f" ctl "$sock" load "$name" "${shapes[$((RANDOM % ${#shapes[@]}))]}" \
                >>"$out/ctl.log" 2>&1 && loaded+=("$name")
        fi
        changes=$((changes + 1))
        sleep "$(awk -v ms="$change_ms" 'BEGIN {print ms / 1000}')"
    done
    "$f" ctl "$sock" stats >"$out/stats.txt" 2>&1 || true
    "$f" ctl "$sock" quit >/dev/null 2>&1 || true
    wait "$pid" || true
else
    mode=run
    changes=0
    "$f" gen rake --branches 33 -o "$work/rake.ag" >/dev/null 2>&1
    "$f" run "$work/rake.ag" --backend clocked --buffer 128 --executor ws --threads 2 \
        --seconds "$secs" >"$out/run.log" 2>&1 </dev/null &
    pid=$!
    sample_rss "$pid" &
    sampler=$!
    wait "$pid" || true
fi
wait "$sampler" 2>/dev/null || true

python3 - "$out" "$mode" "$changes" "$secs" <<'EOF'
import csv, sys, pathlib
out, mode, changes, secs = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [(int(r["t_s"]), int(r["rss_kib"])) for r in csv.DictReader(open(out / "rss.csv"))]
lines = [f"soak: {mode}, {secs} s, {changes} graph changes"]
if rows:
    first = next((r for r in rows if r[0] >= 60), rows[0])
    last = rows[-1]
    ratio = last[1] / first[1]
    verdict = "flat (within 5 %)" if ratio <= 1.05 else "GREW by more than 5 %"
    lines.append(
        f"resident memory: {first[1]} KiB at {first[0]} s, {last[1]} KiB at {last[0]} s "
        f"(end / first minute = {ratio:.3f}: {verdict}); max {max(r[1] for r in rows)} KiB"
    )
log = out / ("host.log" if mode == "host" else "run.log")
if log.exists():
    tail = [l for l in log.read_text().splitlines() if "cycles" in l or "miss" in l]
    lines += tail[-3:]
stats = out / "stats.txt"
if stats.exists():
    lines += stats.read_text().splitlines()[:10]
lines.append("load average at the end: " + open("/proc/loadavg").read().strip())
text = "\n".join(lines)
print(text)
(out / "summary.txt").write_text(text + "\n")
EOF
