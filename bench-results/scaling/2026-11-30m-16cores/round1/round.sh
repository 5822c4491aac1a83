# One round of the issue-37 measurements on the 16-core machine (run through .device/run.sh).
set -u
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
t0=$(date +%s)
say() { echo "== $(( $(date +%s) - t0 ))s: $*"; }
R101=$AG/rateau/rateau101.ag
L156=$AG/losange/losange156.ag
say host offline
fugue bench host --graphs rateau101,heavy6 --threads 2,4,8,16 --instances 1,2,4,8,16 \
  --modes shared,partitioned --offline-only --offline-seconds 0.25 --repeats 3 -o $R/host --force 2>&1 | grep -v '^offline\|^ceiling'
say host rt 8
fugue bench host --graphs rateau101 --threads 8 --instances 8 --modes shared --buffers 128,512 \
  --seconds 10 --offline-seconds 0.2 -o $R/rt8 --force 2>&1 | grep -v '^offline\|^ceiling'
say renders
for i in 1 2 3; do
  for e in seq auto ws static; do
    s=$(date +%s%N); fugue render $R101 --seconds 120 --buffer 2048 -e $e -o /tmp/r-$e.wav --force --json > $R/render-$e-$i.json 2>&1
    echo "render $e round $i: $(( ($(date +%s%N) - s) / 1000000 )) ms"
  done
  cmp /tmp/r-seq.wav /tmp/r-auto.wav && cmp /tmp/r-seq.wav /tmp/r-ws.wav && cmp /tmp/r-seq.wav /tmp/r-static.wav && echo "round $i: identical"
done
say table 8
fugue bench table --shapes $R101,$L156 --buffers 512,2048 --executors seq,ws,static,levels -t 8 --pin \
  --seconds 30 --runs 5 -o $R/table8 --force | tail -30
say table 16
fugue bench table --shapes $R101,$L156 --buffers 512,2048 --executors seq,ws,static -t 16 --pin \
  --seconds 30 --runs 3 -o $R/table16 --force | tail -20
say profile
fugue profile $R101 --backend offline --buffer 512 --pin -e seq -o $R/prof-seq --force | head -30
fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8 --force | head -30
say overhead
fugue bench overhead --shape diamond --nodes 100 -e seq,ws,static,levels -t 2 --runs 3 --pin --json > $R/overhead-2.json
fugue bench overhead --shape diamond --nodes 100 -e seq,ws,static,levels -t 8 --runs 3 --pin --json > $R/overhead-8.json
fugue bench overhead --shape diamond --nodes 100 -e seq,ws,static,levels -t 16 --runs 3 --pin --json > $R/overhead-16.json
cat $R/overhead-*.json | cut -c1-300
say study auto
fugue bench study $D/auto16.toml -o $R/study-auto --force 2>&1 | tail -25
say host more graphs
fugue bench host --graphs $L156,$AG/ligne/ligne100.ag --threads 8,16 --instances 8,16 \
  --modes shared --offline-only --offline-seconds 0.25 --repeats 2 -o $R/host-more --force 2>&1 | grep -v '^offline\|^ceiling'
say ring
for s in park yield spin; do fugue bench ring --producers 15 --strategy $s --items 2000000 --repeat 3; done
say host rt 16
fugue bench host --graphs rateau101 --threads 16 --instances 16 --modes shared --buffers 128 \
  --seconds 10 --offline-seconds 0.2 -o $R/rt16 --force 2>&1 | grep -v '^offline\|^ceiling'
say done
