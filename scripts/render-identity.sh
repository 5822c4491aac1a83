#!/usr/bin/env bash
# Renders every corpus graph (../shared/data/ag/**/*.ag beside the checkout, and
# examples/*.ag) with every executor through the release `fugue render`, and writes a
# manifest: one line per (graph, executor) with the SHA-256 of the WAV's audio data (its
# `data` chunk: the header's layout may change, the samples may not), or `refused` where
# render fails (the same graphs fail with every executor). With `--check MANIFEST` it renders
# again and compares with MANIFEST, naming every difference, and fails if there is one.
#
# The executors are bit-identical to seq, so every column of a graph's rows holds one hash;
# `auto` may choose a different executor from run to run and must still give the same bytes.
# Every render is short (SECONDS of audio, fixed rate, buffer and threads) so that a run of
# the whole corpus takes minutes on two cores; JOBS renders run at once.
#
# Usage: scripts/render-identity.sh [-o MANIFEST] [--check MANIFEST]
#   FUGUE (default target/release/fugue), DURATION (0.05 s), BUFFER (128), THREADS (2), JOBS (2)
# Build the binary first: cargo build --release -p fugue
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=""
CHECK=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT=$2; shift 2 ;;
        --check) CHECK=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
FUGUE=${FUGUE:-target/release/fugue}
[ -x "$FUGUE" ] || { echo "no $FUGUE: run cargo build --release -p fugue" >&2; exit 1; }
[ -d ../shared/data/ag ] || { echo "no ../shared/data/ag: the shared corpus is needed" >&2; exit 1; }
[ -n "$CHECK" ] && [ ! -f "$CHECK" ] && { echo "no manifest $CHECK" >&2; exit 1; }
if [ -z "$OUT" ]; then
    OUT=$(mktemp)
    trap 'rm -f "$OUT"' EXIT
fi
python3 - "$FUGUE" "${DURATION:-0.05}" "${BUFFER:-128}" "${THREADS:-2}" \
    "${JOBS:-2}" "$OUT" "$CHECK" <<'PY'
import concurrent.futures, glob, hashlib, os, subprocess, sys, tempfile, time

fugue, secs, buffer, threads, jobs, out, check = sys.argv[1:8]
EXECUTORS = ["seq", "static", "ws", "ws-affinity", "share", "share-spin", "levels", "auto"]
graphs = sorted(glob.glob("../shared/data/ag/**/*.ag", recursive=True)) + sorted(glob.glob("examples/*.ag"))
tmp = tempfile.mkdtemp()
start = time.monotonic()

def data_chunk(b):
    """The bytes of a RIFF/WAVE file's `data` chunk."""
    pos = 12
    while pos + 8 <= len(b):
        cid, size = b[pos:pos + 4], int.from_bytes(b[pos + 4:pos + 8], "little")
        if cid == b"data":
            return b[pos + 8:pos + 8 + size]
        pos += 8 + size + (size & 1)
    sys.exit("a WAV without a data chunk")

def render(job):
    i, graph, ex = job
    wav = os.path.join(tmp, f"{i}-{ex}.wav")
    p = subprocess.run([fugue, "render", graph, "--seconds", secs, "--rate", "48000",
                        "--buffer", buffer, "--bits", "32", "--executor", ex,
                        "--threads", threads, "-o", wav, "--force"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return graph, ex, "refused"
    with open(wav, "rb") as f:
        digest = hashlib.sha256(data_chunk(f.read())).hexdigest()
    os.remove(wav)
    return graph, ex, digest

work = [(i, g, ex) for i, g in enumerate(graphs) for ex in EXECUTORS]
with concurrent.futures.ThreadPoolExecutor(int(jobs)) as pool:
    rows = sorted(pool.map(render, work))
os.rmdir(tmp)
settings = f"seconds={secs} rate=48000 buffer={buffer} bits=32 threads={threads}"
with open(out, "w") as f:
    f.write(f"# fugue render identity: {len(graphs)} graphs x {len(EXECUTORS)} executors, {settings}\n")
    f.write("# graph\texecutor\tsha256 of the WAV's data chunk, or refused\n")
    for g, ex, h in rows:
        f.write(f"{g}\t{ex}\t{h}\n")
wall = time.monotonic() - start
refused = {g for g, _, h in rows if h == "refused"}
print(f"{len(rows)} renders of {len(graphs)} graphs ({len(refused)} refused) in {wall:.0f} s",
      file=sys.stderr)

problems = []
# Within this run: every executor of a graph gives seq's bytes (or all refuse).
by_graph = {}
for g, ex, h in rows:
    by_graph.setdefault(g, {})[ex] = h
for g, hs in sorted(by_graph.items()):
    for ex, h in hs.items():
        if h != hs["seq"]:
            problems.append(f"{g}: {ex} gives {h}, seq gives {hs['seq']}")

if check:
    def load(path):
        table = {}
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            g, ex, h = line.rstrip("\n").split("\t")
            table[(g, ex)] = h
        return table
    want, got = load(check), load(out)
    for key in sorted(want.keys() | got.keys()):
        g, ex = key
        if key not in got:
            problems.append(f"{g} {ex}: in {check}, not rendered now")
        elif key not in want:
            problems.append(f"{g} {ex}: rendered now, not in {check}")
        elif want[key] != got[key]:
            problems.append(f"{g} {ex}: {check} has {want[key]}, now {got[key]}")

for p in problems:
    print(p, file=sys.stderr)
if problems:
    sys.exit(f"{len(problems)} differences")
if check:
    print(f"identical to {check}", file=sys.stderr)
PY
