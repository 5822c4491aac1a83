# Round 3 of 2026-11-30 (fourteenth): ws's sources cut into ranges with the longer ranges last
# (new) against the rounded equal cut (FUGUE_X_DEAL=1 in this experiment build).
set -u
t0=$(date +%s)
say() { echo "== $(( $(date +%s) - t0 ))s: $*"; }
R101=$AG/rateau/rateau101.ag
tab() { local n=$1; shift; say "table $n"
  fugue bench table --shapes $R101 --buffers 128,512,2048 --pin --seconds 30 --runs 5 -o $R/$n --force "$@" | grep -E '^\| (128|512|2048)' | cut -c1-330
}
tab t8-new-1 -t 8 --executors ws,ws-affinity
FUGUE_X_DEAL=1 tab t8-old-1 -t 8 --executors ws,ws-affinity
tab t8-new-2 -t 8 --executors ws,ws-affinity
FUGUE_X_DEAL=1 tab t8-old-2 -t 8 --executors ws,ws-affinity
tab t16-new-1 -t 16 --executors ws
FUGUE_X_DEAL=1 tab t16-old-1 -t 16 --executors ws
tab t16-new-2 -t 16 --executors ws
FUGUE_X_DEAL=1 tab t16-old-2 -t 16 --executors ws
say profile
fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8-new --force | head -4
FUGUE_X_DEAL=1 fugue profile $R101 --backend offline --buffer 512 --pin -e ws -t 8 -o $R/prof-ws8-old --force | head -4
say table 8 all
fugue bench table --shapes $R101,$AG/losange/losange156.ag --buffers 512,2048 -t 8 --pin --seconds 30 --runs 5 -o $R/t8-all --force --executors ws,static | grep -E '^\| (512|2048)' | cut -c1-330
say done
