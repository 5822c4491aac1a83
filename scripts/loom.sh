#!/usr/bin/env bash
# The loom models of fugue's lock-free protocols, run by CI (scripts/test.sh):
# - the Chase-Lev deque in both of its configurations, the executors' fixed one and the
#   pool's growing one (crates/sync/tests/loom.rs);
# - the executors (crates/exec/src/loom_tests.rs): the sleep/wake signal, the source
#   ranges, and ws, share, share-spin, levels and static run whole for two cycles, and the
#   host's shared pool (tenants in parts and whole);
# - the ordered ring's slot protocol and parking (crates/ring/tests/loom.rs);
# - the task pool's sleep protocol with its deque (crates/pool/src/loom_tests.rs);
# each with its protocols' broken variants (fugue_sync::fault) shown to be caught.
# Each model sets its own bound on preemptions per execution, chosen to keep the whole run
# within a few minutes on two cores; LOOM_MAX_PREEMPTIONS=N overrides them all (deeper and
# much longer: scripts/long-tests.sh runs them with 2). Extra arguments go to every test
# binary (a name filter, --nocapture). A separate target directory keeps the --cfg loom
# build from invalidating the normal one. The last line counts the models that ran.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
# The models need optimised code, not the release profile's whole-program LTO, which would
# only lengthen their builds.
export CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=4
log="$CARGO_TARGET_DIR/loom-results.txt"
mkdir -p "$CARGO_TARGET_DIR"
: >"$log"
run() {
    echo "== loom: $*"
    cargo test --release "$@" 2>&1 | tee -a "$log" | grep -v '^$'
}
start=$(date +%s)
run -p fugue-sync --test loom -- "$@"
run -p fugue-exec --lib loom -- "$@"
run -p fugue-ring --test loom -- "$@"
run -p fugue-pool --lib loom -- "$@"
passed=$(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')
echo "== loom: $passed model test(s) passed in $(( $(date +%s) - start )) s"
