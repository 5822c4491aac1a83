#!/usr/bin/env bash
# fugue's test command: formatting, lints, documentation links, then every test of the workspace.
# When jackd is installed and no JACK server runs, a server with the dummy driver (no sound
# card) is started for the JACK tests and stopped at the end; without jackd those tests say
# that they skip.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo doc (every link resolves)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# (`jack_wait -c` exits 0 either way; it prints "running" or "not running".)
if command -v jackd >/dev/null 2>&1 && ! jack_wait -c 2>/dev/null | grep -qx "running"; then
    mkdir -p target
    source scripts/start-jackd.sh
    JACKD_PID=
    trap 'kill "$JACKD_PID" 2>/dev/null || true; wait "$JACKD_PID" 2>/dev/null || true' EXIT
    if start_jackd target/jackd.log; then
        echo "== started jackd (dummy driver, 44100 Hz, 128 frames) for the JACK tests"
    else
        echo "== jackd did not start; the JACK tests will skip. Its log:"
        cat target/jackd.log || true
    fi
fi

echo "== the oneTBB peer harness (its tests run when it is built)"
if [ -e /usr/include/oneapi/tbb/flow_graph.h ] || [ -e /usr/include/tbb/flow_graph.h ]; then
    bash scripts/bench-peers.sh --build-only
else
    echo "oneTBB headers not found (libtbb-dev): the tests of the oneTBB peer are skipped"
fi
echo "== cargo test"
# Tests that need the reference corpus (../shared/data) skip visibly without it: each skip is
# logged here and counted below. FUGUE_REQUIRE_CORPUS=1 makes a missing corpus a failure.
mkdir -p target
export FUGUE_SKIP_LOG="$PWD/target/corpus-skips.txt"
rm -f "$FUGUE_SKIP_LOG"
cargo test --workspace --profile ci
if [ -s "$FUGUE_SKIP_LOG" ]; then
    echo "== $(wc -l <"$FUGUE_SKIP_LOG") corpus test(s) skipped: ../shared/data is not beside this checkout"
    sort "$FUGUE_SKIP_LOG" | uniq -c | sed 's/^/   /'
else
    echo "== no corpus test skipped"
fi
echo "== loom models (scripts/loom.sh)"
bash scripts/loom.sh
