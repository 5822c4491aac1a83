#!/usr/bin/env bash
# whole process wall time, 5 runs each, 10 s of audio, buffer 256
# Usage: bench-results/faust/measure.sh [FUGUE_BINARY] (default: the release build)
cd "$(dirname "$0")/../.."
F=${1:-./target/release/fugue}
G=examples/faust/strings32.ag
for ex in seq ws static; do
  th=2; [ $ex = seq ] && th=1
  for r in 1 2 3 4 5; do
    s=$(date +%s.%N)
    $F render $G -o ${TMPDIR:-/tmp}/s32-$ex.wav --seconds 10 --buffer 256 --executor $ex --threads $th --force 2>/dev/null >/dev/null
    e=$(date +%s.%N)
    echo "$ex $th $(echo "$e - $s" | bc)"
  done
done
cmp ${TMPDIR:-/tmp}/s32-seq.wav ${TMPDIR:-/tmp}/s32-ws.wav && echo "ws bit-identical"
cmp ${TMPDIR:-/tmp}/s32-seq.wav ${TMPDIR:-/tmp}/s32-static.wav && echo "static bit-identical"
