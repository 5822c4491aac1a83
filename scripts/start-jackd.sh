# Sourced by scripts/test.sh and scripts/jack-test.sh: `start_jackd LOG` starts jackd with the
# dummy driver (44100 Hz, 128 frames; no sound card) in the background, its output in LOG,
# sets JACKD_PID, and returns 0 once the server accepts clients (1 if it did not within 5 s).
# A JACK server that was killed leaves its entries in /dev/shm, and with enough of them no
# server starts ("Too many servers already active"): when that happens and no jackd runs,
# this user's entries are stale; they are removed and the server started once more.
start_jackd() {
    local log="$1"
    jackd -d dummy -r 44100 -p 128 >"$log" 2>&1 &
    JACKD_PID=$!
    if jack_wait -w -t 5 >/dev/null 2>&1; then
        return 0
    fi
    if grep -q "Too many servers" "$log" && ! pgrep -x jackd >/dev/null; then
        echo "== jackd refused to start: stale JACK entries in /dev/shm and no jackd running; removing this user's and starting it again"
        kill "$JACKD_PID" 2>/dev/null || true
        wait "$JACKD_PID" 2>/dev/null || true
        find /dev/shm -maxdepth 1 -name 'jack*' -user "$(id -u)" -exec rm -rf {} + 2>/dev/null || true
        jackd -d dummy -r 44100 -p 128 >"$log" 2>&1 &
        JACKD_PID=$!
        jack_wait -w -t 5 >/dev/null 2>&1 && return 0
    fi
    return 1
}
