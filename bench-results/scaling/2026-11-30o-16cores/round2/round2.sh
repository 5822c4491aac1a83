# Round 2 of 2026-11-30 (fourteenth): the interleaved deal of sources (ws, experiment-interleave.patch)
# against the deal by join (FUGUE_X_DEAL=1 in that build), and the host's whole check.
set -u
t0=$(date +%s)
say() { echo "== $(( $(date +%s) - t0 ))s: $*"; }
R101=$AG/rateau/rateau101.ag
L156=$AG/losange/losange156.ag
tab() { local n=$1; shift; say "table $n"
  fugue bench table --shapes $R101 --buffers 128,512,2048 --pin --seconds 30 --runs 5 -o $R/$n --force "$@" | grep -E '^\| (128|512|2048)' | cut -c1-330
}
tab t8-new-1 -t 8 --executors ws,ws-affinity
FUGUE_X_DEAL=1 tab t8-old-1 -t 8 --executors ws,ws-affinity
tab t8-new-2 -t 8 --executors ws,ws-affinity
FUGUE_X_DEAL=1 tab t8-old-2 -t 8 --executors ws,ws-affinity
tab t16-new -t 16 --executors ws
FUGUE_X_DEAL=1 tab t16-old -t 16 --executors ws
tab t4-new -t 4 --executors ws
FUGUE_X_DEAL=1 tab t4-old -t 4 --executors ws
say profile
fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8-new --force | head -4
FUGUE_X_DEAL=1 fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8-old --force | head -4
say renders
for i in 1 2 3; do
  for e in seq auto; do
    s=$(date +%s%N); fugue render $R101 --seconds 120 --buffer 2048 -e $e -o /tmp/r-$e.wav --force --json > $R/render-$e-$i.json 2>&1
    echo "render $e round $i: $(( ($(date +%s%N) - s) / 1000000 )) ms"
  done
  cmp /tmp/r-seq.wav /tmp/r-auto.wav && echo "round $i: identical"
done
grep -h "executor auto" $R/render-auto-*.json | cut -c1-300
say host offline
fugue bench host --graphs rateau101,heavy6 --threads 2,4,8,16 --instances 2,4,8,16 \
  --modes shared,partitioned --offline-only --offline-seconds 0.25 --repeats 3 -o $R/host --force 2>&1 | grep -v '^offline\|^ceiling' | tail -12
say host rt 8
fugue bench host --graphs rateau101 --threads 8 --instances 8 --modes shared --buffers 128 \
  --seconds 10 --offline-seconds 0.2 -o $R/rt8 --force 2>&1 | grep -v '^offline\|^ceiling' | tail -6
say done
