# Round 2 on the 16-core machine: auto after the change of its candidates, the host again.
set -u
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
t0=$(date +%s)
say() { echo "== $(( $(date +%s) - t0 ))s: $*"; }
R101=$AG/rateau/rateau101.ag
L156=$AG/losange/losange156.ag
L100=$AG/ligne/ligne100.ag
say renders
for i in 1 2 3; do
  for e in seq auto; do
    s=$(date +%s%N); fugue render $R101 --seconds 120 --buffer 2048 -e $e -o /tmp/r-$e.wav --force --json > $R/render-$e-$i.json 2>&1
    echo "render $e round $i: $(( ($(date +%s%N) - s) / 1000000 )) ms"
  done
  cmp /tmp/r-seq.wav /tmp/r-auto.wav && echo "round $i: identical"
done
grep -h "executor auto" $R/render-auto-*.json
say auto runs
for g in $R101 $L156 $L100; do for b in 128 512 2048; do
  fugue run $g --backend clocked --rate 44100 --buffer $b --seconds 1 -e auto 2>&1 | tail -2 | cut -c1-400
done; done
say host
fugue bench host --graphs rateau101,heavy6 --threads 4,8,16 --instances 4,8,16 \
  --modes shared --offline-only --offline-seconds 0.25 --repeats 3 -o $R/host --force 2>&1 | grep -v '^offline\|^ceiling'
say study auto 1s
fugue bench study $D/auto16-1s.toml -o $R/study-auto-1s --force 2>&1 | tail -4
sed -n '/## auto against the others/,/## Files/p' $R/study-auto-1s/README.md
say done
