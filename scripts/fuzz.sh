#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS (default 120) each, one job, then minimizes its
# corpus into fuzz/corpus/<target>/ (kept in the repository; files over 4 KiB are dropped).
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# CI replays the corpus on stable through ordinary tests (crates/*/tests/fuzz_corpus.rs).
set -euo pipefail
secs="${1:-120}"
cd "$(dirname "$0")/../fuzz"
for t in ${FUZZ_TARGETS:-ag stg dot wav pool_ffi study_spec host_command}; do
    mkdir -p "corpus/$t"
    work="$(mktemp -d)"
    cargo +nightly fuzz run -j 1 "$t" "$work" "corpus/$t" -- \
        -max_total_time="$secs" -max_len=4096 -print_final_stats=1 2>&1 |
        grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' || true
    rm -rf "corpus/$t.new" && mkdir "corpus/$t.new"
    cargo +nightly fuzz run "$t" "corpus/$t.new" "corpus/$t" "$work" -- -merge=1 -max_len=4096 >/dev/null 2>&1
    find "corpus/$t.new" -type f -size +4k -delete
    rm -rf "corpus/$t" "$work" && mv "corpus/$t.new" "corpus/$t"
    echo "$t: $(ls "corpus/$t" | wc -l) files, $(du -sk "corpus/$t" | cut -f1) KiB"
done
