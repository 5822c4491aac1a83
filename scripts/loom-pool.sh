#!/usr/bin/env bash
# loom models of the task pool's lock-free protocols: the Chase-Lev deque (exactly once,
# growth, the last-item race) and the steal policy's sleep/wake (no lost wake-up, and the
# fault switch that must lose one) (crates/pool/src/loom_tests.rs). A separate target
# directory keeps the --cfg loom build from invalidating the normal one.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
exec cargo test -p fugue-pool --release --lib loom "$@"
