#!/usr/bin/env bash
# Builds the oneTBB flow-graph peer (benches/peers/tbb/flow_graph.cpp, against Debian's
# libtbb-dev: scripts/install-deps.sh installs it) into target/peers/tbb-flow, builds fugue in
# release mode, and, unless --build-only, runs the overhead benchmark of every executor and
# the peers (rayon, oneTBB) on the same graphs, writing JSON lines into OUT
# (default bench-results/overhead).
#
# Usage: scripts/bench-peers.sh [--build-only] [OUT]
# --build-only compiles the oneTBB harness only (a few seconds; the CLI test of the tbb peer
# runs when target/peers/tbb-flow exists).
# Environment: RUNS (default 5), CYCLES (default 10000), THREADS (default 2), FUGUE (a fugue
# binary to use instead of building target/release/fugue).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
if [ "${1:-}" = "--build-only" ]; then
    build_only=1
    shift
fi
out="${1:-bench-results/overhead}"
runs="${RUNS:-5}"
cycles="${CYCLES:-10000}"
threads="${THREADS:-2}"

if [ ! -e /usr/include/oneapi/tbb/flow_graph.h ] && [ ! -e /usr/include/tbb/flow_graph.h ]; then
    echo "error: oneTBB headers not found; run scripts/install-deps.sh (Debian package libtbb-dev)" >&2
    exit 1
fi
mkdir -p target/peers
g++ -O2 -std=c++17 -Wall -Wextra -o target/peers/tbb-flow benches/peers/tbb/flow_graph.cpp -ltbb
echo "built target/peers/tbb-flow ($(g++ --version | head -n1))"
if [ "$build_only" = 1 ]; then
    exit 0
fi
if [ -z "${FUGUE:-}" ]; then
    cargo build --release -p fugue
fi

fugue="${FUGUE:-target/release/fugue}"
mkdir -p "$out"
# run NAME CYCLES ARGS...: every executor and both peers, JSON lines into OUT/NAME.jsonl.
run() {
    local name="$1" n="$2"
    shift 2
    echo "== $name: fugue bench overhead $* --cycles $n"
    "$fugue" bench overhead "$@" --executor all --threads "$threads" --runs "$runs" \
        --cycles "$n" --tbb target/peers/tbb-flow --json | tee "$out/$name.jsonl"
}
run diamond100 "$cycles" --shape diamond --nodes 100
run diamond100-idle1000 $((cycles / 5)) --shape diamond --nodes 100 --idle-us 1000 --warmup 200
run diamond156 "$cycles" --shape diamond --nodes 156
run line100 "$cycles" --shape line --nodes 100
run rake101 "$cycles" --shape rake --nodes 101
echo "wrote $out"
