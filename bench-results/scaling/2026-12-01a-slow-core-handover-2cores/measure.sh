#!/bin/bash
# A/B of the committed build (new) against ea7cdd27 (old), alternating, on this 2-core VM.
set -u
D=bench-results/scaling/2026-12-01a-slow-core-handover-2cores
NEW=target/release/fugue
OLD=old/fugue
cd /work/main
fast() { $1 bench host --graphs rateau101,heavy6 --threads 2 --instances 2,4,8 --modes shared,partitioned --offline-only --offline-seconds 0.5 --repeats 3 -o $2 --force > $2.log 2>&1; }
slow() { $1 bench host --graphs rateau101,heavy6,../shared/data/ag/ligne/ligne100.ag --threads 2 --instances 2,4 --modes shared,partitioned --offline-only --offline-seconds 0.5 --repeats 3 -o $2 --force > $2.log 2>&1; }
for r in 1 2; do
  fast $OLD $D/fast-old-$r; fast $NEW $D/fast-new-$r
done
taskset -c 1 sh -c 'while :; do :; done' &
L=$!
sleep 0.5
for r in 1 2; do
  slow $OLD $D/slow-old-$r; slow $NEW $D/slow-new-$r
done
kill $L
echo finished
