set -u
G=$AG/rateau/rateau101.ag
echo "== render 120 s rateau101 2048, whole process: seq / old auto / new auto, 7 rounds"
for r in 1 2 3 4 5 6 7; do
  for b in seq old new; do
    case $b in seq) cmd="fugue render $G -e seq";; old) cmd="fugue-old render $G -e auto";; new) cmd="fugue render $G -e auto";; esac
    s=$(date +%s%N); $cmd -o /tmp/r-$b.wav --seconds 120 --buffer 2048 --force 2>/tmp/r-$b.err >/dev/null; e=$(date +%s%N)
    echo "round $r $b $(( (e - s) / 1000000 )) ms"; grep "executor auto" /tmp/r-$b.err
  done
  cmp /tmp/r-seq.wav /tmp/r-new.wav && cmp /tmp/r-seq.wav /tmp/r-old.wav && echo "round $r: files identical"
done
echo "== host, shared, offline: fractions of the ceiling"
fugue bench host --graphs rateau101,heavy6 --threads 2,4,8,16 --instances 2,4,8,16 --repeats 3 --modes shared,partitioned --offline-only --offline-seconds 0.25 -o $R/host 2>&1 | tail -40
