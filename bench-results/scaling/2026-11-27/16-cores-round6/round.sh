#!/usr/bin/env bash
# Round 6: the profile's reference as the faster of two sequential runs (before and after), 16 cores.
G=$AG/rateau/rateau101.ag
for i in 1 2; do
  for t in 8 16; do
    for e in ws static; do
      echo "== rateau101 512 frames, $e $t threads, run $i"
      fugue profile $G --backend offline --buffer 512 --seconds 5 -e $e -t $t --pin | sed -n 2,4p
    done
  done
done
