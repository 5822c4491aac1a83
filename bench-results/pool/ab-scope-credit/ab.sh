#!/usr/bin/env bash
# Interleaved A/B of the pool benchmark: before and after binaries, R alternations of one run each.
set -u
A=$1; B=$2; R=${3:-5}; OUT=${4:-/tmp/h-ring-meas/pool}
mkdir -p "$OUT"
for r in $(seq 1 "$R"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  for bin in $order; do
    exe=$A; [ $bin = B ] && exe=$B
    "$exe" bench pool --threads 1,2 --runs 1 --policies steal,steal-condvar --idle-ms 100 -o "$OUT/$bin-$r" --force > "$OUT/$bin-$r.log" 2>&1
  done
done
