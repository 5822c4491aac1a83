#!/usr/bin/env bash
# Runs fugue's JACK tests against a real JACK server with the dummy driver (no sound card).
# Starts jackd, waits until it accepts clients, runs the tests that use the default server,
# then stops the jackd it started. Needs jackd2 and jack_capture (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v jackd >/dev/null; then
    echo "jackd is not installed; run scripts/install-deps.sh" >&2
    exit 1
fi

source scripts/start-jackd.sh
JACKD_PID=
trap 'kill "$JACKD_PID" 2>/dev/null || true; wait "$JACKD_PID" 2>/dev/null || true' EXIT
if ! start_jackd /tmp/fugue-jackd.log; then
    echo "jackd did not start; its log:" >&2
    cat /tmp/fugue-jackd.log >&2
    exit 1
fi

# The same profile as scripts/test.sh, so that CI reuses its build.
profile="${FUGUE_TEST_PROFILE:-ci}"
cargo test --profile "$profile" -p fugue-engine --test jack -- --nocapture
cargo test --profile "$profile" -p fugue --test run
