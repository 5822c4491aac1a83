#!/usr/bin/env bash
# Round 5: fugue profile's node-time inflation for one graph on 8 and 16 threads.
G=$AG/rateau/rateau101.ag
D=$AG/losange/losange156.ag
for t in 8 16; do
  for e in ws static; do
    echo "== rateau101 512 frames, $e $t threads"
    fugue profile $G --backend offline --buffer 512 --seconds 5 -e $e -t $t --pin -o $R/profile-rateau-$e-$t --force | head -6
  done
done
echo "== losange156 2048 frames, ws 8 threads"
fugue profile $D --backend offline --buffer 2048 --seconds 10 -e ws -t 8 --pin -o $R/profile-losange-ws-8 --force | head -6
