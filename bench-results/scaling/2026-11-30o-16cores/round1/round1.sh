# Round 1 of 2026-11-30 (fourteenth): which plan splits and host run lengths help on 16 cores.
# Run with the build of experiment-hooks.patch (FUGUE_X_* read by the plan compiler and the host).
set -u
t0=$(date +%s)
say() { echo "== $(( $(date +%s) - t0 ))s: $*"; }
R101=$AG/rateau/rateau101.ag
L156=$AG/losange/losange156.ag
tab() { # name, extra flags...
  local n=$1; shift
  say "table $n"
  fugue bench table --shapes $R101,$L156 --buffers 512,2048 -t 8 --pin --seconds 30 --runs 5 -o $R/t8-$n --force "$@" | grep -E '^\| (512|2048)' | cut -c1-400
}
tab base --executors ws,static,ws-affinity
tab pipe2 --executors ws,static --pipeline 2
tab pipeauto --executors ws,static --pipeline auto
FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=2 tab g256p2 --executors ws,static
FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=4 tab g256p4 --executors ws,static
FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=8 tab g256p8 --executors ws,static
FUGUE_X_MIN_INPUTS=2 FUGUE_X_MIN_FRAMES=1024 FUGUE_X_PARTS=4 tab in2f1024p4 --executors ws,static
FUGUE_X_MIN_INPUTS=2 FUGUE_X_MIN_FRAMES=512 FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=4 tab in2f512g256p4 --executors ws,static
FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=4 tab g256p4pipe2 --executors ws,static --pipeline 2
tab base-again --executors ws,static
say profiles
fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8 --force | head -6
FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=4 fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8-g256p4 --force | head -6
fugue profile $L156 --backend offline --buffer 2048 --pin -e ws -t 8 -o $R/prof-l156-ws8 --force | head -6
fugue profile $L156 --backend offline --buffer 2048 --pin -e seq -o $R/prof-l156-seq --force | head -30
host() { local n=$1; shift; say "host $n"
  fugue bench host --graphs rateau101 --threads 4,8 --instances 4,8 --modes shared --offline-only \
    --offline-seconds 0.25 --repeats 3 -o $R/host-$n --force "$@" 2>&1 | grep -v '^offline\|^ceiling' | tail -12
}
host base
FUGUE_X_BATCH=256 host batch256
host units --grain units
host balanced --grain balanced
FUGUE_X_BATCH=256 host batch256-balanced --grain balanced
say table 16
fugue bench table --shapes $R101,$L156 --buffers 512,2048 -t 16 --pin --seconds 30 --runs 3 -o $R/t16-base --force --executors ws,static | grep -E '^\| (512|2048)' | cut -c1-400
FUGUE_X_GROUP_MIN=256 FUGUE_X_PARTS=4 fugue bench table --shapes $R101,$L156 --buffers 512,2048 -t 16 --pin --seconds 30 --runs 3 -o $R/t16-g256p4 --force --executors ws,static | grep -E '^\| (512|2048)' | cut -c1-400
say done
