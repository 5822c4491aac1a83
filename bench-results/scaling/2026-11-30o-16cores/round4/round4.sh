# Round 4 of 2026-11-30 (fourteenth): the host's runs of cycles, 64 (default) against 256 and
# 1024 (FUGUE_X_BATCH in the experiment build of round1/experiment-hooks.patch), shared mode,
# N = T, three graphs, the three lengths in turn, twice, in one call.
set -u
t0=$(date +%s)
say() { echo "== $(( $(date +%s) - t0 ))s: $*"; }
host() { local n=$1 g=$2 gn=$3; say "host $n $gn"
  fugue bench host --graphs $g --threads 8,16 --instances 8,16 --modes shared --offline-only \
    --offline-seconds 0.25 --repeats 3 -o $R/host-$n-$gn --force 2>&1 | grep -E "threads, shared"
}
for i in 1 2; do
  for g in rateau101 $AG/losange/losange156.ag $AG/ligne/ligne100.ag; do
    gn=$(basename $g .ag)
    host b64-$i $g $gn
    FUGUE_X_BATCH=256 host b256-$i $g $gn
    FUGUE_X_BATCH=1024 host b1024-$i $g $gn
  done
done
say done
