#!/usr/bin/env bash
# loom models of the ordered ring's slot protocol (crates/ring/tests/loom.rs).
# A separate target directory keeps the --cfg loom build from invalidating the normal one.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
exec cargo test -p fugue-ring --release --test loom "$@"
