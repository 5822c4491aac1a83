#!/usr/bin/env bash
# Installs what fugue's build, tests and benchmarks need on a Debian/Ubuntu machine:
# the Rust toolchain's rustfmt and clippy, Graphviz (fugue dot), the JACK server and headers
# (fugue run --backend jack and its tests), jack_capture, oneTBB (the benchmark peer),
# pkg-config, Faust with libfaust (the `faust` kind, its tests and `fugue bench faust`), and for
# the `lv2` node kind the LV2 host library (liblilv-0-0, opened at run time), lilv-utils
# (lv2apply, which the `lv2` tests compare against) and two free plugin sets (mda-lv2, swh-lv2),
# sox (the WAV header test reads every format fugue writes with `sox --i`), and the ALSA
# library and headers (libasound2-dev: the alsa backend; its tests play on ALSA's null
# device, which needs no sound card), and Valgrind (the task pool's race-checker test runs
# a C program under Helgrind and DRD; g++ brings gcc's ThreadSanitizer for the same test).
# Packages already present are left alone. Needs root or sudo for apt-get.
set -euo pipefail

packages=(graphviz jackd2 libjack-jackd2-dev jack-capture libtbb-dev pkg-config g++ faust libfaust2
          liblilv-0-0 lilv-utils mda-lv2 swh-lv2 sox libasound2-dev valgrind)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        if [ "$(id -u)" -ne 0 ]; then
            SUDO="sudo"
        fi
        echo "installing: ${missing[*]}"
        $SUDO apt-get update -qq
        # jackd2 asks whether to enable real-time priority; answer it without a terminal.
        echo "jackd2 jackd/tweak_rt_limits boolean true" | $SUDO debconf-set-selections || true
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "warning: apt-get not found; install these yourself: ${missing[*]}" >&2
    fi
fi

if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo not found; install Rust from https://rustup.rs and run this script again" >&2
    exit 1
fi
