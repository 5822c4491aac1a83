#!/usr/bin/env bash
# Round 4: the grain tuner that watches balanced while it keeps it, against units, 16 cores.
t0=$(date +%s)
stamp() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
for T in 2 4 8 16; do
  for g in units auto; do
    stamp "host T=$T grain=$g"
    fugue bench host --graphs rateau101,heavy6 --threads $T --instances $T,$((2 * T)) --repeats 4 --grain $g --modes shared --offline-only --offline-seconds 0.25 -o $R/host-$g-$T --force | tail -2
  done
done
stamp done
