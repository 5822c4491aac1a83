#!/bin/bash
# The final build's figures (both cores free; core 1 shared with a busy loop; core 1 taken
# 1 ms in every 6 by a duty-cycle loop, old build against new), one call each.
D=bench-results/scaling/2026-12-01a-slow-core-handover-2cores
NEW=target/release/fugue; OLD=${OLD:-old/fugue}
pts() { $1 bench host --graphs rateau101,heavy6,../shared/data/ag/ligne/ligne100.ag --threads 2 --instances $3 --modes shared --offline-only --offline-seconds 0.5 --repeats 3 -o $2 --force > $2.log 2>&1; }
pts $NEW $D/final-fast 2,4,8
taskset -c 1 sh -c 'while :; do :; done' & L=$!; sleep 0.5
pts $NEW $D/final-slow 2,4
kill $L
taskset -c 1 /tmp/duty 1000 5000 & L=$!; sleep 0.5
pts $OLD $D/duty-old 2,4
pts $NEW $D/duty-new 2,4
kill $L
