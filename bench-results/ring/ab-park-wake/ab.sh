#!/usr/bin/env bash
# Interleaved A/B of the ordered ring: before and after binaries, same points, R repeats.
set -u
A=$1; B=$2; R=${3:-5}; OUT=${4:-/tmp/h-ring-meas/ring_ab.csv}
echo "repeat,binary,strategy,producers,capacity,items,items_per_sec" > "$OUT"
for r in $(seq 1 "$R"); do
  for s in park yield; do
    for p in 1 2 3 8 15; do
      for c in 1 8 64 1024 65536; do
        [ "$s" = yield ] && [ "$c" != 1024 ] && continue
        [ "$p" -gt 3 ] && [ "$c" != 1024 ] && continue
        n=400000; [ "$c" = 1 ] && n=100000
        order="A B"; [ $((r % 2)) = 0 ] && order="B A"
        for bin in $order; do
          exe=$A; [ $bin = B ] && exe=$B
          v=$(timeout 60 "$exe" bench ring --strategy $s --producers $p --capacity $c --items $n --json 2>/dev/null | python3 -c 'import sys,json; print(json.load(sys.stdin)["items_per_sec"])' 2>/dev/null || echo NA)
          echo "$r,$bin,$s,$p,$c,$n,$v" >> "$OUT"
        done
      done
    done
  done
done
