//! The figures of a render and of a real-time run, and what `auto` chose.

use std::path::Path;

use fugue_exec::ExecutorKind;
use serde::{Serialize, Serializer};

use super::us;
use crate::auto::{AutoReport, Candidate};
use crate::{Bits, RenderSummary, RunReport, Summary};

/// Serializes a value by its `Display` (an executor's name).
fn display<T: std::fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// One candidate of the automatic choice, as its `--json` object.
#[derive(Serialize)]
struct CandidateJson<'a> {
    label: &'a str,
    #[serde(serialize_with = "display")]
    kind: ExecutorKind,
    threads: usize,
    pipeline: usize,
    overlap: usize,
    /// `null` (with `cycles` 0) for a candidate kept untried (a run too short to measure).
    mean_us: Option<f64>,
    cycles: usize,
}

impl<'a> From<&'a Candidate> for CandidateJson<'a> {
    fn from(k: &'a Candidate) -> Self {
        CandidateJson {
            label: &k.label,
            kind: k.kind,
            threads: k.threads,
            pipeline: k.pipeline,
            overlap: k.overlap,
            mean_us: k.mean_ns.is_finite().then(|| us(k.mean_ns)),
            cycles: k.cycles,
        }
    }
}

/// What the automatic choice measured and chose: the chosen candidate, why, whether the
/// trials were paced, how long they took, and every candidate's mean cycle (µs, the slowest
/// 2 % left out) over its trial cycles.
#[derive(Serialize)]
struct AutoJson<'a> {
    chose: &'a str,
    #[serde(serialize_with = "display")]
    kind: ExecutorKind,
    threads: usize,
    pipeline: usize,
    overlap: usize,
    why: String,
    paced: bool,
    /// The trials were the run's first cycles.
    in_run: bool,
    trials_s: f64,
    candidates: Vec<CandidateJson<'a>>,
    /// The candidates a short run had no room to try.
    left_out: &'a [String],
}

impl Serialize for AutoReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.chosen();
        AutoJson {
            chose: &c.label,
            kind: c.kind,
            threads: c.threads,
            pipeline: c.pipeline,
            overlap: c.overlap,
            why: self.why(),
            paced: self.paced,
            in_run: self.in_run,
            trials_s: self.took.as_secs_f64(),
            candidates: self.candidates.iter().map(CandidateJson::from).collect(),
            left_out: &self.left_out,
        }
        .serialize(s)
    }
}

/// A finished render: `render --json`'s object, and its summary line (`Display`).
#[derive(Serialize)]
pub struct RenderReport<'a> {
    /// The graph file.
    pub graph: String,
    /// Where the WAV went (`standard output`, or the file).
    pub output: String,
    /// Frames written per channel.
    pub frames: u64,
    /// Channels written.
    pub channels: usize,
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Frames per cycle.
    pub buffer: u64,
    /// `16-bit`, `24-bit` or `32-bit float`.
    pub format: &'static str,
    /// The peak, dBFS (in JSON, `null` for silence or where a sample was not finite: see
    /// `non_finite`).
    pub peak_dbfs: f64,
    /// Samples clipped.
    pub clipped: u64,
    /// Samples that were not finite numbers (NaN or infinite: a node's output overflowed, or
    /// the input held them); `peak_dbfs` `null` with `non_finite` 0 is silence.
    pub non_finite: u64,
    /// Seconds of audio.
    pub audio_s: f64,
    /// Seconds of wall time.
    pub wall_s: f64,
    /// Seconds from the first cycle to the last block written (no build, no compilation).
    pub cycles_s: f64,
    /// Seconds of audio per second of wall time.
    pub realtime_factor: f64,
    /// The executor that played.
    #[serde(serialize_with = "display")]
    pub executor: ExecutorKind,
    /// Its threads.
    pub threads: usize,
    /// Blocks run as one cycle (`--overlap`; 1: one block per cycle).
    pub blocks_per_cycle: usize,
    /// Sub-blocks each block was cut into (`--pipeline`; 1: not pipelined).
    pub pipeline: usize,
    /// What the automatic choice chose, when it chose.
    pub auto: Option<&'a AutoReport>,
}

impl<'a> RenderReport<'a> {
    /// The report of the render of `graph` into `output` summed up by `s`, written as
    /// `bits`, at `buffer` frames per cycle, played by `executor` on `threads` threads.
    pub fn new(
        graph: &Path,
        output: &str,
        buffer: u64,
        bits: Bits,
        s: &'a RenderSummary,
        (executor, threads): (ExecutorKind, usize),
    ) -> Self {
        RenderReport {
            graph: graph.display().to_string(),
            output: output.to_string(),
            frames: s.frames,
            channels: s.channels,
            sample_rate: s.sample_rate,
            buffer,
            format: match bits {
                Bits::I16 => "16-bit",
                Bits::I24 => "24-bit",
                Bits::F32 => "32-bit float",
            },
            peak_dbfs: s.peak_dbfs(),
            clipped: s.clipped,
            non_finite: s.non_finite,
            audio_s: s.audio_seconds(),
            wall_s: s.wall.as_secs_f64(),
            cycles_s: s.cycles.as_secs_f64(),
            realtime_factor: s.realtime_factor(),
            executor,
            threads,
            blocks_per_cycle: s.blocks_per_cycle,
            pipeline: s.sub_blocks,
            auto: s.auto.as_ref(),
        }
    }
}

impl std::fmt::Display for RenderReport<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} frames, {} channel{}, {} Hz {}, peak {:.1} dBFS",
            self.output,
            self.frames,
            self.channels,
            if self.channels == 1 { "" } else { "s" },
            self.sample_rate,
            self.format,
            // A peak just under full scale reads 0.0, not -0.0.
            if self.peak_dbfs > -0.05 && self.peak_dbfs <= 0.0 {
                0.0
            } else {
                self.peak_dbfs
            },
        )?;
        if self.clipped > 0 {
            write!(f, ", {} samples clipped", self.clipped)?;
        }
        write!(
            f,
            ", {:.2} s of audio in {:.3} s ({:.1}x real time)",
            self.audio_s, self.wall_s, self.realtime_factor
        )
    }
}

/// `ns` as `12.3 µs`.
fn us_text(ns: f64) -> String {
    format!("{:.1} µs", us(ns))
}

/// One line of cycle statistics (with the threads' wake-up latency when other threads took
/// part).
pub fn cycles_line(s: &Summary) -> String {
    if s.cycles == 0 {
        // No figure to give: a run stopped before its first cycle.
        return "cycles 0 (no cycle ran)".to_string();
    }
    let wake = if s.woken > 0 {
        format!(
            ", wake-up median {}, p99 {}",
            us_text(s.wake_median_ns as f64),
            us_text(s.wake_p99_ns as f64)
        )
    } else {
        String::new()
    };
    format!(
        "cycles {}, mean {}, median {}, p99 {}, max {}, deadline misses {} ({:.2} %){wake}",
        s.cycles,
        us_text(s.mean_ns),
        us_text(s.median_ns as f64),
        us_text(s.p99_ns as f64),
        us_text(s.max_ns as f64),
        s.misses,
        s.miss_rate() * 100.0
    )
}

/// A real-time run's figures: `run --json`'s object, and its summary line (`Display`).
#[derive(Serialize)]
pub struct RunSummary<'a> {
    /// The graph file.
    pub graph: String,
    /// `jack`, `alsa` or `clocked`.
    pub backend: &'a str,
    /// What the audio device was asked and granted (ALSA), in words.
    pub device: Option<&'a str>,
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Frames per cycle (the last one, under JACK).
    pub buffer: usize,
    /// The executor that played.
    #[serde(serialize_with = "display")]
    pub executor: ExecutorKind,
    /// Its threads.
    pub threads: usize,
    /// Sub-blocks each cycle's block was cut into (`--pipeline`; 1: not pipelined).
    pub pipeline: usize,
    /// `period` or `double`.
    pub deadline: &'a str,
    /// A cycle's deadline, µs.
    pub deadline_us: f64,
    /// Cycles measured.
    pub cycles: u64,
    /// Mean cycle, µs.
    pub mean_us: f64,
    /// Median cycle, µs.
    pub median_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Longest cycle, µs.
    pub max_us: f64,
    /// Cycles past their deadline.
    pub misses: u64,
    /// Their share.
    pub miss_rate: f64,
    /// JACK xruns, the ALSA device's underruns, or the clocked backend's overruns.
    pub overruns: u64,
    /// Periods whose cycle never ran after the clocked backend's overruns (the clock
    /// restarts at the present and does not catch up); `null` for JACK and ALSA.
    pub skipped_periods: Option<u64>,
    /// Records the statistics ring dropped.
    pub dropped: u64,
    /// Tasks stolen.
    pub steals: u64,
    /// Median wake-up latency of the threads, µs.
    pub wake_median_us: f64,
    /// Its 99th percentile, µs.
    pub wake_p99_us: f64,
    /// Buffer-size changes (JACK).
    pub buffer_changes: u32,
    /// Cycles left silent around them.
    pub silent_cycles: u64,
    /// What the automatic choice chose, when it chose.
    pub auto: Option<&'a AutoReport>,
    /// Output samples that were not finite numbers (NaN or infinity), played as silence.
    pub non_finite: u64,
    /// Server cycles the client did not run (JACK), for the text.
    #[serde(skip)]
    skipped: u64,
    /// The statistics, for the text.
    #[serde(skip)]
    summary: &'a Summary,
}

impl<'a> RunSummary<'a> {
    /// The figures of the run of `graph` on `backend` (`jack`, `alsa` or `clocked`) with the
    /// `deadline` rule, played by `executor` on `threads` threads.
    pub fn new(
        graph: &Path,
        backend: &'a str,
        deadline: &'a str,
        r: &'a RunReport,
        (executor, threads): (ExecutorKind, usize),
    ) -> Self {
        let s = &r.summary;
        RunSummary {
            graph: graph.display().to_string(),
            backend,
            device: r.device.as_deref(),
            sample_rate: r.sample_rate,
            buffer: r.block,
            executor,
            threads,
            pipeline: r.pipeline,
            deadline,
            deadline_us: us(deadline_ns(s, r.block as f64, r.sample_rate, deadline)),
            cycles: s.cycles,
            mean_us: us(s.mean_ns),
            median_us: us(s.median_ns as f64),
            p99_us: us(s.p99_ns as f64),
            max_us: us(s.max_ns as f64),
            misses: s.misses,
            miss_rate: s.miss_rate(),
            overruns: r.xruns,
            skipped_periods: r.skipped_periods,
            dropped: s.dropped,
            steals: s.steals,
            wake_median_us: us(s.wake_median_ns as f64),
            wake_p99_us: us(s.wake_p99_ns as f64),
            buffer_changes: r.buffer_changes,
            silent_cycles: r.silent_cycles,
            auto: r.auto.as_ref(),
            non_finite: r.non_finite,
            // Cycles the server's clock went through while the client was active but did
            // not run it (it fell behind real time); only exact when the buffer size did not
            // change.
            skipped: r
                .server_cycles()
                .map_or(0, |c| c.saturating_sub(r.cycles_run())),
            summary: s,
        }
    }
}

/// The cycles' deadline, ns: the last cycle's, or before any cycle ran (a run stopped
/// during auto's trials) the one the rule gives the block at the rate (`double`: two
/// periods).
fn deadline_ns(s: &Summary, block: f64, rate: u32, rule: &str) -> f64 {
    if s.cycles > 0 || rate == 0 {
        return s.deadline_ns as f64;
    }
    let periods = if rule == "double" { 2.0 } else { 1.0 };
    periods * block / f64::from(rate) * 1e9
}

impl std::fmt::Display for RunSummary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {} Hz, {} frames ({} deadline {}): {}",
            self.graph,
            self.sample_rate,
            self.buffer,
            self.deadline,
            us_text(deadline_ns(
                self.summary,
                self.buffer as f64,
                self.sample_rate,
                self.deadline
            )),
            cycles_line(self.summary),
        )?;
        match (self.backend, self.skipped) {
            ("jack", 0) => write!(f, ", JACK xruns {}", self.overruns)?,
            ("jack", n) => write!(
                f,
                ", JACK xruns {} ({n} server cycles skipped)",
                self.overruns
            )?,
            ("alsa", _) => write!(f, ", ALSA xruns {}", self.overruns)?,
            _ => match self.skipped_periods {
                Some(n) if self.overruns > 0 => write!(
                    f,
                    ", overruns {} (cycles that started more than a period late): the run did not keep pace, {} ran no cycle",
                    self.overruns,
                    crate::report::counted(n as usize, "period")
                )?,
                _ => write!(f, ", overruns {}", self.overruns)?,
            },
        }
        if self.dropped > 0 {
            write!(
                f,
                ", {} records dropped (statistics ring full)",
                self.dropped
            )?;
        }
        if self.buffer_changes > 0 {
            write!(
                f,
                ", {}, {}",
                crate::report::counted(self.buffer_changes as usize, "buffer-size change"),
                crate::report::counted(self.silent_cycles as usize, "silent cycle")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before any cycle ran, the deadline is the rule's for the block at the rate, not 0.
    #[test]
    fn the_deadline_is_known_before_the_first_cycle() {
        let none = Summary::default();
        assert_eq!(
            deadline_ns(&none, 256.0, 48_000, "period"),
            256.0 / 48_000.0 * 1e9
        );
        assert_eq!(
            deadline_ns(&none, 256.0, 48_000, "double"),
            512.0 / 48_000.0 * 1e9
        );
        let ran = Summary {
            cycles: 3,
            deadline_ns: 5_000_000,
            ..Summary::default()
        };
        assert_eq!(deadline_ns(&ran, 256.0, 48_000, "period"), 5e6);
    }
}
