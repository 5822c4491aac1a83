#!/usr/bin/env bash
# The long tests that `scripts/test.sh` leaves out (`#[ignore]`d: minutes each on two cores),
# in release: a million items per wait strategy through the ring, a million items from two and
# three producer processes, every schedule algorithm verified on the whole data set (CPFD and
# `best` on the large graphs included; needs ../shared/data), and the loom models with two
# preemptions per execution (scripts/loom.sh; CI runs them with fewer). Each is named as it
# starts; the script stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
    echo "== $*"
    cargo test --release "$@"
}

run -p fugue-ring --test ring -- --ignored --exact three_producers_a_million_items
run -p fugue-ring --test shm -- --ignored --exact producer_processes_a_million_items
run -p fugue-sched --test data -- --ignored --exact every_algorithm_verifies_on_the_data_set_full
echo "== scripts/loom.sh with LOOM_MAX_PREEMPTIONS=2"
LOOM_MAX_PREEMPTIONS=2 bash scripts/loom.sh
echo "== every long test passed"
