#!/usr/bin/env bash
# loom models of the executors' protocols: sleep/wake, epoch, work-stealing deque,
# activation (crates/exec/src/loom_tests.rs). A separate target directory keeps the
# --cfg loom build from invalidating the normal one.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
exec cargo test -p fugue-exec --release --lib loom "$@"
