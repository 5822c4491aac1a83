//! The ALSA backend: an ALSA playback device (a sound card through `hw:`/`plughw:`, the
//! desktop's sound server through the `default`, `pulse` or `pipewire` plugins, or `null`,
//! which discards what it is given), with no audio server of fugue's own.
//!
//! [`open`] asks the device for a sample rate, a period of `block` frames, a buffer of
//! `periods` periods, as many channels as the graph has outputs, and 32-bit float samples
//! (else 32-bit, else 16-bit integers); the graph is then compiled at the rate and period the
//! device granted, and [`Granted`] says both in words. The device is opened non-blocking:
//! opening a busy sound card fails at once instead of waiting for it.
//!
//! The audio thread runs a cycle, interleaves (and converts) its outputs into a buffer
//! allocated before the first cycle, and writes them; when the device's buffer is full it
//! waits for room (`snd_pcm_wait`, at most a few periods at a time, so that a stop request is
//! seen). So the device's clock paces the cycles, as JACK's does. An underrun (the buffer
//! ran empty before a cycle's write) is recovered from at once, counted as an xrun, and the
//! run goes on; an error ALSA cannot recover from (the device unplugged) ends the run with
//! its reason ([`crate::EndReason::DeviceLost`]). A device that takes frames faster than it
//! could play them (`null`, a file) is paced by the clock instead: a write that would put
//! more than the buffer ahead of the wall clock sleeps until it is not. Such a device never
//! runs dry, so the clock stands in for its underruns too: once four buffers were written, a
//! period written after the frames before it would have played out counts as an xrun (and
//! the clock starts again from it), and a run that falls behind ends when its length in wall
//! time is up, as the clocked backend's does. A device that ever made a write wait for room,
//! or reported an underrun of its own, plays in real time and is left to its clock. A mono graph is
//! played on every channel the device grants; outputs beyond its channels are left out (with
//! a warning), and channels beyond the outputs are silent. Inputs are silent.

use std::ffi::CString;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use ::alsa as a;
use a::pcm::{Access, Format, HwParams, PCM};
use a::{Direction, ValueOr};
use fugue_graph::TaskGraph;

use super::clocked::{now_ns, sleep_until_or};
use super::paced::{self, Pacer};
use crate::cycle::finite_or_zero;
use crate::options::{RunError, RunOptions, RunReport};
use crate::stats::Summary;

/// The most periods a device's buffer may be asked to hold.
pub const MAX_PERIODS: u32 = 16;

/// A sample format the backend writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleFormat {
    /// 32-bit float.
    F32,
    /// 32-bit signed integer.
    S32,
    /// 16-bit signed integer.
    S16,
}

impl SampleFormat {
    /// ALSA's name of the format, as `aplay` says it.
    pub fn name(self) -> &'static str {
        match self {
            SampleFormat::F32 => "FLOAT_LE",
            SampleFormat::S32 => "S32_LE",
            SampleFormat::S16 => "S16_LE",
        }
    }

    fn alsa(self) -> Format {
        match self {
            SampleFormat::F32 => Format::float(),
            SampleFormat::S32 => Format::s32(),
            SampleFormat::S16 => Format::s16(),
        }
    }
}

/// What a device was asked and what it granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Granted {
    /// The device's ALSA name.
    pub device: String,
    /// Sample rate asked, Hz.
    pub asked_rate: u32,
    /// Period asked, frames.
    pub asked_block: usize,
    /// Periods per buffer asked.
    pub asked_periods: u32,
    /// Channels asked (the graph's outputs, at least one).
    pub asked_channels: usize,
    /// Sample rate granted, Hz: the graph runs at it.
    pub rate: u32,
    /// Period granted, frames: the graph's block.
    pub block: usize,
    /// Buffer granted, frames.
    pub buffer: usize,
    /// Channels granted.
    pub channels: usize,
    /// Sample format granted.
    pub format: SampleFormat,
}

impl fmt::Display for Granted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ALSA device {}: asked {} Hz, {}-frame periods, {} periods, {} channel(s); granted {} Hz, {}-frame periods, a buffer of {} frames ({:.1} ms), {} channel(s), {}",
            self.device,
            self.asked_rate,
            self.asked_block,
            self.asked_periods,
            self.asked_channels,
            self.rate,
            self.block,
            self.buffer,
            self.buffer as f64 * 1000.0 / f64::from(self.rate.max(1)),
            self.channels,
            self.format.name(),
        )
    }
}

/// An open playback device, set up as [`Granted`] says, not yet written to.
pub struct Device {
    pcm: PCM,
    granted: Granted,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("granted", &self.granted)
            .finish_non_exhaustive()
    }
}

impl Device {
    /// What the device granted.
    pub fn granted(&self) -> &Granted {
        &self.granted
    }
}

/// While it lives, ALSA's messages on the calling thread are not printed (ALSA prints its
/// own line to standard error for an unknown device; the error returned says it once).
struct Quiet(alsa_sys::snd_local_error_handler_t);

impl Quiet {
    fn new() -> Quiet {
        // SAFETY: sets this thread's handler to a function of the type ALSA calls; the old
        // one is put back by `drop`.
        Quiet(unsafe { alsa_sys::snd_lib_error_set_local(Some(say_nothing)) })
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        // SAFETY: puts back the handler `new` replaced, on the same thread.
        unsafe { alsa_sys::snd_lib_error_set_local(self.0) };
    }
}

/// An ALSA error handler that prints nothing.
unsafe extern "C" fn say_nothing(
    _file: *const libc::c_char,
    _line: libc::c_int,
    _func: *const libc::c_char,
    _err: libc::c_int,
    _fmt: *const libc::c_char,
    _args: *mut alsa_sys::__va_list_tag,
) {
}

/// ALSA's reason in words, without the errno's number.
fn reason(e: &a::Error) -> String {
    let s = std::io::Error::from_raw_os_error(e.errno()).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// An error of the device `name`, in one sentence.
fn failed(name: &str, what: &str, e: &a::Error) -> RunError {
    RunError::Alsa(format!("the ALSA device {name:?} {what}: {}", reason(e)))
}

/// Opens the playback device `name` and asks it for `rate` Hz, periods of `block` frames,
/// `periods` periods per buffer and `channels` channels (see the module documentation).
pub fn open(
    name: &str,
    rate: u32,
    block: usize,
    periods: u32,
    channels: usize,
) -> Result<Device, RunError> {
    if rate == 0 || block == 0 {
        return Err(RunError::Options(
            "the sample rate and the buffer size must be at least 1".into(),
        ));
    }
    if !(2..=MAX_PERIODS).contains(&periods) {
        return Err(RunError::Options(format!(
            "the periods per buffer must be between 2 and {MAX_PERIODS}, not {periods}"
        )));
    }
    let cname = CString::new(name).map_err(|_| {
        RunError::Options(format!("the ALSA device name {name:?} contains a NUL byte"))
    })?;
    // ALSA's own messages are not printed: the error returned says what failed.
    let _quiet = Quiet::new();
    let pcm = PCM::open(&cname, Direction::Playback, true).map_err(|e| {
        let hint = match e.errno() {
            libc::ENOENT | libc::ENODEV | libc::ENXIO => {
                " (`aplay -L`, of alsa-utils, lists the devices; with no sound card, `--device null` plays into ALSA's null device and `--backend clocked` plays nothing, both paced by the clock)"
            }
            libc::EBUSY => " (another program is using it; try the `default` device)",
            _ => "",
        };
        RunError::Alsa(format!(
            "the ALSA playback device {name:?} cannot be opened: {}{hint}",
            reason(&e)
        ))
    })?;
    let asked_channels = channels.max(1);
    let (format, buffer, got_channels, got_rate, got_block) = {
        let hw = HwParams::any(&pcm).map_err(|e| failed(name, "has no configuration", &e))?;
        hw.set_access(Access::RWInterleaved)
            .map_err(|e| failed(name, "refuses interleaved writes", &e))?;
        let format = [SampleFormat::F32, SampleFormat::S32, SampleFormat::S16]
            .into_iter()
            .find(|f| hw.test_format(f.alsa()).is_ok())
            .ok_or_else(|| {
                RunError::Alsa(format!(
                    "the ALSA device {name:?} takes none of FLOAT_LE, S32_LE and S16_LE samples; use a plug device (plughw:...) or `default`"
                ))
            })?;
        hw.set_format(format.alsa())
            .map_err(|e| failed(name, "refuses its own sample format", &e))?;
        let got_channels =
            hw.set_channels_near(asked_channels as u32)
                .map_err(|e| failed(name, "refuses every channel count", &e))? as usize;
        let got_rate = hw
            .set_rate_near(rate, ValueOr::Nearest)
            .map_err(|e| failed(name, "refuses every sample rate", &e))?;
        let got_block = hw
            .set_period_size_near(block as a::pcm::Frames, ValueOr::Nearest)
            .map_err(|e| failed(name, "refuses every period size", &e))?;
        hw.set_periods_near(periods, ValueOr::Nearest)
            .map_err(|e| failed(name, "refuses every period count", &e))?;
        pcm.hw_params(&hw)
            .map_err(|e| failed(name, "refuses the configuration asked", &e))?;
        let cur = pcm
            .hw_params_current()
            .map_err(|e| failed(name, "does not say its configuration", &e))?;
        let got_block = cur.get_period_size().unwrap_or(got_block);
        let buffer = cur
            .get_buffer_size()
            .map_err(|e| failed(name, "does not say its buffer size", &e))?;
        (format, buffer, got_channels, got_rate, got_block)
    };
    if got_block <= 0 || buffer < got_block || got_rate == 0 || got_channels == 0 {
        return Err(RunError::Alsa(format!(
            "the ALSA device {name:?} granted an unusable configuration ({got_rate} Hz, periods of {got_block} frames, a buffer of {buffer} frames, {got_channels} channels)"
        )));
    }
    {
        let sw = pcm
            .sw_params_current()
            .map_err(|e| failed(name, "does not say its software configuration", &e))?;
        // Playback starts once the buffer is full: the first cycles fill it back to back.
        sw.set_start_threshold(buffer - buffer % got_block)
            .and_then(|()| sw.set_avail_min(got_block))
            .and_then(|()| pcm.sw_params(&sw))
            .map_err(|e| failed(name, "refuses the start threshold asked", &e))?;
    }
    Ok(Device {
        pcm,
        granted: Granted {
            device: name.to_string(),
            asked_rate: rate,
            asked_block: block,
            asked_periods: periods,
            asked_channels,
            rate: got_rate,
            block: got_block as usize,
            buffer: buffer as usize,
            channels: got_channels,
            format,
        },
    })
}

/// The interleaved samples of one period, in the device's format.
enum Samples {
    F32(Vec<f32>),
    S32(Vec<i32>),
    S16(Vec<i16>),
}

/// The audio thread's side of a [`Device`]: the interleaving buffer, the clock guard and the
/// xrun count. Made before the first cycle; [`Writer::output`] and [`Writer::write`] never
/// allocate.
pub struct Writer {
    device: Device,
    samples: Samples,
    /// The graph's output channels.
    outputs: usize,
    /// Frames written since the first write, and when it was (ns), for the clock guard (moved
    /// later by each underrun, as the device restarts then).
    frames: u64,
    first_ns: Option<u64>,
    /// When the first write was (ns), and the run's length in wall time (ns), when it has
    /// one: no cycle starts after that, however late the cycles came.
    start_ns: Option<u64>,
    length_ns: Option<u64>,
    /// Whether the device ever made a write wait for room or reported an underrun: one that
    /// never does (`null`) does not play in real time, and the clock guard stands in for its
    /// underruns and its end.
    device_waited: bool,
    xruns: u64,
    /// The longest wait for room, ms, before the stop request is looked at again.
    wait_ms: u32,
}

impl Writer {
    /// The writer of `device` for a graph (or a host's mix) of `outputs` channels.
    pub fn new(device: Device, outputs: usize) -> Writer {
        let g = &device.granted;
        let n = g.block * g.channels;
        let samples = match g.format {
            SampleFormat::F32 => Samples::F32(vec![0.0; n]),
            SampleFormat::S32 => Samples::S32(vec![0; n]),
            SampleFormat::S16 => Samples::S16(vec![0; n]),
        };
        let period_ms = (g.block as u64 * 1000).div_ceil(u64::from(g.rate)) as u32;
        Writer {
            samples,
            outputs,
            frames: 0,
            first_ns: None,
            start_ns: None,
            length_ns: None,
            device_waited: false,
            xruns: 0,
            wait_ms: (4 * period_ms).clamp(10, 200),
            device,
        }
    }

    /// Ends the run `ns` of wall time after its first write, on a device that never waits
    /// (`null`): a cycle due after that is not run, so that a run whose cycles are longer than
    /// their period still ends on time.
    pub fn set_length(&mut self, ns: u64) {
        self.length_ns = Some(ns);
    }

    /// Recovers from `e` when ALSA can (an underrun, counted; a suspend; an interrupted
    /// call), else says why the device failed.
    fn recover(&mut self, e: a::Error) -> Result<(), String> {
        let code = e.errno();
        if code == libc::EPIPE || code == libc::ESTRPIPE {
            self.xruns += 1;
        }
        if matches!(code, libc::EPIPE | libc::ESTRPIPE | libc::EINTR) {
            if let Ok(()) = self.device.pcm.try_recover(e, true) {
                return Ok(());
            }
        }
        Err(format!(
            "the ALSA device {:?} failed: {}",
            self.device.granted.device,
            reason(&e)
        ))
    }

    /// Writes frames `[done..]` of the period; returns how many frames were taken.
    fn write_from(&self, done: usize) -> a::Result<usize> {
        let ch = self.device.granted.channels;
        let pcm = &self.device.pcm;
        // SAFETY: the device was set to this sample format by `open` (and granted it: a
        // device that refuses a format fails `hw_params`), so each buffer's element type is
        // the device's sample type; `io_unchecked` only skips asking the device again.
        unsafe {
            match &self.samples {
                Samples::F32(b) => pcm.io_unchecked::<f32>().writei(&b[done * ch..]),
                Samples::S32(b) => pcm.io_unchecked::<i32>().writei(&b[done * ch..]),
                Samples::S16(b) => pcm.io_unchecked::<i16>().writei(&b[done * ch..]),
            }
        }
    }
}

impl Writer {
    /// Takes output channel `ch` of a cycle (a period of samples) into the period to write.
    pub fn output(&mut self, ch: usize, x: &[f32]) {
        let channels = self.device.granted.channels;
        // A mono graph plays on every channel; otherwise output ch on channel ch.
        let targets = if self.outputs == 1 {
            0..channels
        } else if ch < channels {
            ch..ch + 1
        } else {
            return;
        };
        for c in targets {
            match &mut self.samples {
                // A sample that is not a finite number is played as silence (counted by the
                // cycle body), not at full scale.
                Samples::F32(b) => {
                    for (i, &v) in x.iter().enumerate() {
                        b[i * channels + c] = finite_or_zero(v);
                    }
                }
                Samples::S32(b) => {
                    for (i, &v) in x.iter().enumerate() {
                        // Times 2^31, rounded; `as` saturates (+1.0 gives i32::MAX).
                        b[i * channels + c] = (f64::from(finite_or_zero(v).clamp(-1.0, 1.0))
                            * 2_147_483_648.0)
                            .round() as i32;
                    }
                }
                Samples::S16(b) => {
                    for (i, &v) in x.iter().enumerate() {
                        b[i * channels + c] = crate::wav::to_i16(finite_or_zero(v));
                    }
                }
            }
        }
    }

    /// Writes the period taken by [`Writer::output`], waiting for room in the device's
    /// buffer (or, for a device that does not play in real time, for the clock); returns early
    /// when `stop` is set. `Err`: the device failed and could not be recovered, in words.
    pub fn write(&mut self, stop: &AtomicBool) -> Result<(), String> {
        let block = self.device.granted.block;
        let xruns = self.xruns;
        let mut done = 0;
        while done < block {
            match self.write_from(done) {
                Ok(n) => done += n,
                Err(e) if e.errno() == libc::EAGAIN => {
                    self.device_waited = true;
                    // Relaxed: a request polled while waiting; nothing is published with it.
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    if let Err(e) = self.device.pcm.wait(Some(self.wait_ms)) {
                        self.recover(e)?;
                    }
                }
                Err(e) => self.recover(e)?,
            }
        }
        // The clock guard: a device that took more than its buffer ahead of the wall clock
        // does not play in real time; sleep until it would have.
        let now = now_ns();
        self.start_ns.get_or_insert(now);
        let first = *self.first_ns.get_or_insert(now);
        self.frames += block as u64;
        let g = &self.device.granted;
        let played = frames_ns(self.frames, g.rate);
        let played_until = first + played;
        if self.xruns > xruns {
            // A sound card that underran (counted by `recover`) keeps its own clock.
            self.device_waited = true;
        }
        let settled = self.frames >= 4 * g.buffer as u64;
        if !self.device_waited && settled && played_until < now {
            // A device that never waits would have run dry before this period came, had it
            // played in real time: counted as its underrun, and its clock starts again from
            // now.
            self.xruns += 1;
            self.first_ns = Some(now.saturating_sub(played));
            return Ok(());
        }
        let ahead = self.frames.saturating_sub(g.buffer as u64);
        let due = first + frames_ns(ahead, g.rate);
        if due > now {
            sleep_until_or(due, stop);
        }
        Ok(())
    }

    /// Whether the run's length in wall time ([`Writer::set_length`]) has passed, for a
    /// device that never waits (one that does ends with its cycles, at its own clock).
    fn time_is_up(&self) -> bool {
        match (self.start_ns, self.length_ns) {
            (Some(start), Some(length)) if !self.device_waited => {
                now_ns() >= start.saturating_add(length)
            }
            _ => false,
        }
    }

    /// Underruns so far, each recovered from.
    pub fn xruns(&self) -> u64 {
        self.xruns
    }
}

impl Pacer for Writer {
    fn wait(&mut self, _: &AtomicBool) -> Option<u64> {
        // The device's clock paces the run through the writes (`end_cycle`); a run that fell
        // behind ends when its time is up, as the clocked backend's does.
        (!self.time_is_up()).then_some(0)
    }

    fn output(&mut self, ch: usize, samples: &[f32]) {
        Writer::output(self, ch, samples);
    }

    fn end_cycle(&mut self, stop: &AtomicBool) -> Result<(), String> {
        self.write(stop)
    }

    fn xruns(&self) -> u64 {
        Writer::xruns(self)
    }

    fn finish(&mut self, stop: &AtomicBool) {
        // A run shorter than the device's start threshold never started it: start it now.
        if self.device.pcm.state() == a::pcm::State::Prepared {
            let _ = self.device.pcm.start();
        }
        // The frames written play until `first` + their length: the first periods filled the
        // buffer at once, so the run's last write came that much before its audio's end.
        if let Some(first) = self.first_ns {
            let end = first + frames_ns(self.frames, self.device.granted.rate);
            if !sleep_until_or(end, stop) {
                return;
            }
        }
        // A sound card's clock may trail the wall clock (or restarted after an underrun):
        // what it still holds, for at most its buffer's length and 200 ms more (dropping the
        // device drops what is left).
        let g = &self.device.granted;
        let buffer_ns = (g.buffer as u64).saturating_mul(1_000_000_000) / u64::from(g.rate);
        let give_up = now_ns() + buffer_ns + 200_000_000;
        // Relaxed: a request flag.
        while now_ns() < give_up && !stop.load(Ordering::Relaxed) {
            match self.device.pcm.delay() {
                Ok(d) if d > 0 => std::thread::sleep(std::time::Duration::from_millis(2)),
                _ => break,
            }
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // What is still buffered is dropped, not played out: a stopped run stops now.
        let _ = self.device.pcm.drop();
    }
}

/// Runs `graph` on the ALSA device `device`, asked for `rate` Hz, periods of `block` frames
/// and `periods` periods per buffer; the graph runs at what the device grants.
pub(crate) fn run(
    graph: &TaskGraph,
    options: &RunOptions,
    device: &str,
    (rate, block, periods): (u32, usize, u32),
    on_tick: impl FnMut(&Summary),
) -> Result<RunReport, RunError> {
    let outputs = sink_channels(graph);
    let dev = open(device, rate, block, periods, outputs)?;
    let g = dev.granted().clone();
    let line = g.to_string();
    if let Some(say) = options.announce {
        say(&line);
    }
    // The run's length in wall time: the frames of its cycles at the granted rate.
    let length_ns =
        paced::max_cycles(options, g.rate, g.block).map(|m| frames_ns(m * g.block as u64, g.rate));
    let mut report = paced::run(
        graph,
        options,
        g.rate,
        g.block,
        Some(line),
        move |outputs| {
            let mut w = Writer::new(dev, outputs);
            if let Some(ns) = length_ns {
                w.set_length(ns);
            }
            w
        },
        on_tick,
    )?;
    if outputs > g.channels {
        report.warnings.push(format!(
            "the graph has {outputs} output channels and the ALSA device {} plays {}: outputs {} to {outputs} are not heard",
            g.device,
            g.channels,
            g.channels + 1
        ));
    }
    Ok(report)
}

/// How long `frames` frames play at `rate` Hz, ns.
fn frames_ns(frames: u64, rate: u32) -> u64 {
    (u128::from(frames) * 1_000_000_000 / u128::from(rate.max(1))) as u64
}

/// The output channels a plan of `graph` has: its sinks' input ports.
fn sink_channels(graph: &TaskGraph) -> usize {
    (0..graph.len())
        .filter(|&v| graph.node(v).kind == "sink")
        .map(|v| graph.inputs(v))
        .sum::<usize>()
}
