//! Fixtures of the multi-graph host's tests (the engine's `Host`, the binary's `fugue host`
//! and the JACK buffer-size test): a fresh folder, the small graphs their sessions load, and
//! the mix a host should have recorded, the sum of each graph's solo render over the cycles
//! it was loaded; a host process on a control socket ([`Running`]).

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A host process on a control socket; killed when dropped.
pub struct Running {
    /// The process.
    pub child: Child,
    /// Its control socket.
    pub socket: PathBuf,
}

impl Running {
    /// Starts `command`, a `fugue host ... --control SOCKET`, and waits until it listens.
    pub fn start(mut command: Command, socket: &Path) -> Running {
        let child = command.spawn().expect("the host starts");
        let running = Running {
            child,
            socket: socket.to_path_buf(),
        };
        wait_for_socket(socket);
        running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (at most 20 s) until something answers on `socket`.
pub fn wait_for_socket(socket: &Path) {
    let start = Instant::now();
    while UnixStream::connect(socket).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nothing listens on {}",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One oscillator into a mono sink.
pub const MONO: &str =
    "o = { kind: \"osc\", freq: 440, volume: 0.3, }; s = { kind: \"sink\", }; o.1 -> s.1;";

/// Two oscillators (one filtered) and a noise into a stereo sink.
pub const DUO: &str = "a = { kind: \"osc\", freq: 220, volume: 0.2, }; b = { kind: \"osc\", freq: 331, volume: 0.2, };\n\
     f = { kind: \"biquad\", type: \"lowpass\", freq: 900.0, q: 1.5, };\n\
     n = { kind: \"noise\", volume: 0.1, seed: 3, };\n\
     s = { kind: \"sink\", in: 2, }; a.1 -> f.1 -> s.1; b.1 -> s.2; n.1 -> s.2;";

/// The repository's `examples` folder.
pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A fresh, empty folder for one test, named after `test` and this process.
pub fn fresh_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fugue-host-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
    d
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
    p
}

/// The graphs of the host's sessions, by name: `mono` ([`MONO`]) and `duo` ([`DUO`]),
/// written into `dir`, then the examples `synth` and `pluck`.
pub fn graphs(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("mono", write(dir, "mono.ag", MONO)),
        ("duo", write(dir, "duo.ag", DUO)),
        ("synth", examples().join("synth.ag")),
        ("pluck", examples().join("pluck.ag")),
    ]
}

/// A graph's time in a host: its id (the mix adds graphs in increasing id), the cycle it was
/// adopted at, and the first cycle it no longer ran in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The host's number for the graph.
    pub id: u64,
    /// The first cycle it ran in (its solo cycle 0).
    pub from: u64,
    /// The first cycle it did not run in.
    pub to: u64,
}

/// The mix of `channels` channels that a host playing `cycles` cycles of `block` frames
/// records: for each cycle, the graphs loaded then (each span with its solo render, one
/// vector per sink channel, at least `to - from` cycles long), in id order, each contributing
/// its solo cycle `c - from` (mono to every channel, else channel `ch % channels`), added to
/// silence in that order.
pub fn expected_mix(
    spans: &[(Span, &[Vec<f32>])],
    cycles: u64,
    block: usize,
    channels: usize,
) -> Vec<Vec<f32>> {
    let mut spans = spans.to_vec();
    spans.sort_by_key(|(s, _)| s.id);
    let mut mix = vec![vec![0.0f32; cycles as usize * block]; channels];
    for c in 0..cycles {
        let out = c as usize * block..(c as usize + 1) * block;
        for (span, solo) in &spans {
            if c < span.from || c >= span.to {
                continue;
            }
            let k = (c - span.from) as usize;
            for (ch, src) in solo.iter().enumerate() {
                let src = &src[k * block..(k + 1) * block];
                let targets = if solo.len() == 1 {
                    0..channels
                } else {
                    ch % channels..ch % channels + 1
                };
                for t in targets {
                    for (d, &x) in mix[t][out.clone()].iter_mut().zip(src) {
                        *d += x;
                    }
                }
            }
        }
    }
    mix
}

/// A graph (`.ag` text) of `branches` `load` nodes of `wcet_us` µs each (`w0`, `w1`, ...)
/// mixed into one sink (`m` into `s`): work that parallel threads share, at a known cost.
pub fn load_fan(branches: usize, wcet_us: u32) -> String {
    let mut text = format!(
        "m = {{ kind: \"mix\", in: {branches}, }};\ns = {{ kind: \"sink\", }};\nm.1 -> s.1;\n"
    );
    for i in 0..branches {
        text.push_str(&format!(
            "w{i} = {{ kind: \"load\", wcet: {wcet_us}, }};\nw{i}.1 -> m.{};\n",
            i + 1
        ));
    }
    text
}

/// Whether the cycles that adopted or removed a graph met their deadlines, as a host's
/// statistics count them (`swap_cycles`, `swap_misses`): at least `least` such cycles, and
/// at most one in ten of them late. A swap that made its cycle late would miss in most of
/// them; a test runner that holds the audio thread off its core for a period makes any
/// cycle miss, a swap's as likely as another (a session of loads and unloads swaps in most
/// of its cycles). `Err` says which.
pub fn swaps_met(swap_cycles: u64, swap_misses: u64, least: u64) -> Result<(), String> {
    if swap_cycles < least {
        return Err(format!(
            "{swap_cycles} cycles with a swap, fewer than {least}"
        ));
    }
    if swap_misses * 10 > swap_cycles {
        return Err(format!(
            "{swap_misses} of {swap_cycles} cycles with a swap missed their deadline"
        ));
    }
    Ok(())
}
