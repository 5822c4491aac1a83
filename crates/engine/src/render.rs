//! Offline rendering to a WAV file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_dsp::Registry;
use fugue_exec::TaskPanic;
use fugue_graph::TaskGraph;
use thiserror::Error;

use crate::blocks::{block_channel, BlockReceiver};
use crate::engine::Engine;
use crate::executor_choice::{BuildError, ExecutorChoice};
use crate::placement::place_audio_thread;

/// Length of a render when neither the options nor an input file give one, in seconds.
pub const DEFAULT_SECONDS: f64 = 10.0;

/// Sample format of the output file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Bits {
    /// 16-bit integers; samples beyond ±1 are clipped and counted.
    I16,
    /// 24-bit integers; samples beyond ±1 are clipped and counted.
    I24,
    /// 32-bit floats (no clipping).
    #[default]
    F32,
}

impl Bits {
    /// The format for `--bits 16|24|32`.
    pub fn from_bits(bits: u16) -> Option<Bits> {
        match bits {
            16 => Some(Bits::I16),
            24 => Some(Bits::I24),
            32 => Some(Bits::F32),
            _ => None,
        }
    }

    /// Bits per sample: 16, 24 or 32 (the inverse of [`Bits::from_bits`]).
    pub fn bits(self) -> u16 {
        match self {
            Bits::I16 => 16,
            Bits::I24 => 24,
            Bits::F32 => 32,
        }
    }
}

/// Where the audio goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// A WAV file, created (or truncated) at this path ([`crate::output::open_truncated`]).
    /// Callers that must never leave a half-written file pass a temporary file of
    /// [`crate::output::Temp::create`] and rename it on success.
    Wav(PathBuf),
    /// Nowhere: the blocks are measured (peak) and dropped; for benchmarks.
    Discard,
}

/// How to render.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Frames per cycle.
    pub block: usize,
    /// Length in seconds; `None`: the input file's length if there is one, else
    /// [`DEFAULT_SECONDS`].
    pub seconds: Option<f64>,
    /// Output sample format.
    pub bits: Bits,
    /// A WAV file whose channels feed the graph's `source` nodes (it must have the render's
    /// sample rate).
    pub input: Option<PathBuf>,
    /// Where the audio goes.
    pub output: Output,
    /// Render nodes of unknown kind as silence instead of failing.
    pub placeholder: bool,
    /// When set to `true` by another thread (Ctrl-C), the render stops with
    /// [`RenderError::Cancelled`].
    pub cancel: Option<Arc<AtomicBool>>,
    /// The executor that runs the cycles (sequential by default).
    pub executor: ExecutorChoice,
    /// Collect the per-node, per-worker profile ([`RenderSummary::profile`]).
    pub profile: bool,
    /// The kinds the graph's nodes are built by (the built-in ones by default).
    pub registry: Registry,
}

impl Default for RenderOptions {
    /// 48 kHz, 512 frames, natural length, 32-bit float, no input, discard, the built-in
    /// kinds.
    fn default() -> Self {
        RenderOptions {
            sample_rate: 48_000,
            block: 512,
            seconds: None,
            bits: Bits::F32,
            input: None,
            output: Output::Discard,
            placeholder: false,
            cancel: None,
            executor: ExecutorChoice::default(),
            profile: false,
            registry: Registry::with_builtin_kinds(),
        }
    }
}

/// How far a render has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Frames computed.
    pub frames_done: u64,
    /// Frames to compute.
    pub frames_total: u64,
}

/// What a finished render did.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSummary {
    /// Frames written (per channel).
    pub frames: u64,
    /// Channels written (one per sink input port).
    pub channels: usize,
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Largest absolute sample before conversion (1.0 = 0 dBFS).
    pub peak: f32,
    /// Samples clipped to ±1 by a 16- or 24-bit output.
    pub clipped: u64,
    /// Samples that were not finite numbers (NaN or infinite: a node's output overflowed).
    pub non_finite: u64,
    /// Time the render took.
    pub wall: Duration,
    /// Wall time from the start of the first cycle to the last block written: `wall`
    /// without reading the input, building the graph (compiling foreign nodes) and choosing
    /// the executor.
    pub cycles: Duration,
    /// Nodes of unknown kind rendered as silence.
    pub placeholders: Vec<String>,
    /// Processors that panicked (their outputs were silenced).
    pub panics: Vec<TaskPanic>,
    /// Things to tell the user once (thread pinning or real-time priority refused).
    pub warnings: Vec<String>,
    /// The profile, when [`RenderOptions::profile`] asked for it.
    pub profile: Option<crate::ProfileReport>,
    /// What the automatic executor choice measured and chose
    /// ([`crate::ExecutorChoice::auto`]).
    pub auto: Option<crate::auto::AutoReport>,
    /// Blocks run as one cycle by the plan that played (`--overlap`, or auto's overlapped
    /// candidates; 1 when a graph with feedback or rate changes refused it).
    pub blocks_per_cycle: usize,
    /// Sub-blocks each block was cut into by the plan that played (`--pipeline`; 1: not
    /// pipelined).
    pub sub_blocks: usize,
}

impl RenderSummary {
    /// Seconds of audio rendered.
    pub fn audio_seconds(&self) -> f64 {
        self.frames as f64 / self.sample_rate as f64
    }

    /// The peak in dBFS (`-inf` for silence).
    pub fn peak_dbfs(&self) -> f64 {
        20.0 * (self.peak as f64).log10()
    }

    /// Seconds of audio per second of wall time.
    pub fn realtime_factor(&self) -> f64 {
        self.audio_seconds() / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Why a render failed.
#[derive(Debug, Error)]
pub enum RenderError {
    /// The graph could not be compiled, or its executor built.
    #[error(transparent)]
    Build(#[from] Box<BuildError>),
    /// The graph has no `sink`, so there is nothing to write.
    #[error("the graph has no sink node, so there is nothing to render; connect the audio to a node of kind \"sink\"")]
    NoSink,
    /// Bad options (a sample rate or a length out of range).
    #[error("{0}")]
    Options(String),
    /// The plan and the blocks on their way to the writer would take more memory than the
    /// process may use (half the machine's memory, or of the address space under `ulimit -v`).
    #[error("the render would hold {}: its plan {} and the blocks on their way to the output ({} of {} of {} each) {}, more than the limit of {} (half the memory this process may use); use a smaller buffer size (--buffer) or fewer output channels", fugue_exec::size_in_words(plan.saturating_add(*ring)), fugue_exec::size_in_words(*plan), crate::report::counted(*blocks, "block"), crate::report::counted(*channels, "channel"), crate::report::counted(*frames, "frame"), fugue_exec::size_in_words(*ring), fugue_exec::size_in_words(*limit))]
    Memory {
        /// The plan's bytes ([`fugue_exec::Plan::memory`]).
        plan: usize,
        /// The blocks in flight to the writer, bytes.
        ring: usize,
        /// How many blocks the ring holds.
        blocks: usize,
        /// Output channels.
        channels: usize,
        /// Frames per block.
        frames: usize,
        /// The limit, bytes.
        limit: usize,
    },
    /// The graph has more output channels than a WAV file can hold.
    #[error("{channels} channels are too many for a WAV file of {bits}-bit samples at {rate} Hz, which holds at most {max}")]
    TooManyChannels {
        /// The graph's output channels.
        channels: usize,
        /// Bits per sample.
        bits: u16,
        /// The sample rate.
        rate: u32,
        /// The most the file can hold (for its sample format and rate).
        max: usize,
    },
    /// The render would not fit in one WAV file (4 GiB of samples, less 1 KiB for the header).
    #[error("{frames} frames of {channels} channel(s) of {bits}-bit samples make {bytes} bytes, more than the {} a WAV file can hold (4 GiB less 1 KiB for its header); render fewer seconds or channels{}", crate::wav::MAX_DATA_BYTES, if *bits > 16 && bytes / u64::from(*bits / 8) * 2 <= crate::wav::MAX_DATA_BYTES { ", or 16-bit samples (--bits 16)" } else { "" })]
    TooLong {
        /// Frames to render.
        frames: u64,
        /// Channels.
        channels: usize,
        /// Bits per sample.
        bits: u32,
        /// Bytes of samples.
        bytes: u64,
    },
    /// A thread could not be started.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// A thread of the render (the WAV writer) panicked.
    #[error("the {0} thread panicked")]
    ThreadPanicked(&'static str),
    /// The input file could not be read.
    #[error("cannot read input {path}: {reason}")]
    Input {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The output file could not be written.
    #[error("cannot write {path}: {reason}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// [`RenderOptions::cancel`] was set.
    #[error("the render was interrupted")]
    Cancelled {
        /// What was rendered before the stop: its frames (those computed; the output file is
        /// left unfinished), the profile of its cycles when [`RenderOptions::profile`] asked
        /// for one, what `auto` chose, the warnings.
        partial: Option<Box<RenderSummary>>,
    },
}

/// Why a WAV file could not be written, with "the disk is full" said when it is (ENOSPC,
/// EDQUOT), and the format's size limit when it was reached
/// ([`crate::wav::BlockWavWriter::write`] refuses the block that would pass it).
pub(crate) fn write_reason(e: &hound::Error) -> String {
    match e {
        hound::Error::TooWide => {
            "a WAV file holds at most 4 GiB of samples, and this one is full".to_string()
        }
        hound::Error::IoError(io) if crate::output::is_disk_full(io) => {
            format!("the disk is full ({io})")
        }
        e => e.to_string(),
    }
}

/// The WAV formats an input file may have (those `hound` reads).
const INPUT_FORMATS: &str =
    "the input must be a WAV file of 8, 16, 24 or 32-bit integer or 32-bit float samples";

/// What a WAV file's `fmt ` chunk says of its samples ("64-bit float", "8-bit A-law"), read
/// from its first 64 KiB; `None` when it is not a RIFF/WAVE file with one.
fn wav_format(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(65_536)
        .read_to_end(&mut head)
        .ok()?;
    let f = fmt_chunk(&head)?;
    let bits = u16_at(f, 14)?;
    let mut tag = u16_at(f, 0)?;
    if tag == 0xFFFE {
        // WAVE_FORMAT_EXTENSIBLE: the format is the sub-format's first two bytes.
        tag = u16_at(f, 24)?;
    }
    Some(match tag {
        1 => format!("{bits}-bit integer samples"),
        3 => format!("{bits}-bit float samples"),
        6 => format!("{bits}-bit A-law samples"),
        7 => format!("{bits}-bit µ-law samples"),
        t => format!("{bits}-bit samples in encoding {t:#06x}"),
    })
}

/// The `fmt ` chunk of the RIFF/WAVE header `head`: its contents, as far as `head` holds
/// them; `None` when `head` is not RIFF/WAVE or holds no `fmt ` chunk.
fn fmt_chunk(head: &[u8]) -> Option<&[u8]> {
    if head.len() < 12 || &head[..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return None;
    }
    let mut at = 12;
    while at + 8 <= head.len() {
        let size = u32::from_le_bytes(head[at + 4..at + 8].try_into().ok()?) as usize;
        if &head[at..at + 4] == b"fmt " {
            return Some(&head[at + 8..head.len().min(at + 8 + size)]);
        }
        at = at.checked_add(8 + size + (size & 1))?;
    }
    None
}

/// The bytes of one frame that the `fmt ` chunk `f` gives (its block align), when they agree
/// with its channels and bits per sample (whole bytes per sample); `None` for a header that
/// contradicts itself, left for `hound` to refuse.
fn frame_bytes(f: &[u8]) -> Option<u64> {
    let (channels, align, bits) = (u16_at(f, 2)?, u16_at(f, 12)?, u16_at(f, 14)?);
    let frame = u64::from(channels) * u64::from(bits).div_ceil(8);
    (frame > 0 && frame == u64::from(align)).then_some(frame)
}

/// The little-endian `u16` at byte `i` of `bytes`, when they hold it.
fn u16_at(bytes: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(i..i + 2)?.try_into().ok()?))
}

/// Whether [`wav_format`]'s words name a sample format that inputs may have
/// ([`INPUT_FORMATS`]).
fn supported(format: &str) -> bool {
    [
        "8-bit integer samples",
        "16-bit integer samples",
        "24-bit integer samples",
        "32-bit integer samples",
        "32-bit float samples",
    ]
    .contains(&format)
}

/// The highest sample rate a render runs at (`--rate`), Hz.
pub const MAX_RATE: u32 = 1_536_000;

/// The most samples (all channels together) a render reads of an input WAV file: 2^27 (512
/// MiB as 32-bit floats; 23 minutes of stereo at 48 kHz). A longer file is refused before its
/// samples are read, unless the render's length (`--seconds`) asks for no more than that of
/// its start.
pub const MAX_INPUT_SAMPLES: u64 = 1 << 27;

/// The input file's channels, at the render's rate: its first `frames` frames at most, when
/// given (the render's length: it plays no more of its input).
fn read_input(path: &Path, rate: u32, frames: Option<u64>) -> Result<Vec<Vec<f32>>, RenderError> {
    let err = |reason: String| RenderError::Input {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let len = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    read_wav_of(std::io::BufReader::new(file), rate, len, frames).map_err(|e| match e {
        WavInputError::Format(e) => err(match wav_format(path) {
            // A format chunk that the reader met only after the samples (it reads the chunks
            // in order, and the samples need the format first).
            Some(f) if supported(&f) && e.to_string().contains("missing fmt chunk") => {
                format!("its format chunk (of {f}) comes after its samples, where fugue does not read it; write the file again with its format chunk first")
            }
            // A format it reads, refused all the same: the header is what is wrong.
            Some(f) if supported(&f) => {
                format!("its header is not valid ({e}), though it names {f}")
            }
            Some(f) => format!("it is a WAV file of {f}; {INPUT_FORMATS}"),
            None => format!("it is not a WAV file ({e}); {INPUT_FORMATS}"),
        }),
        WavInputError::Other(reason) => err(reason),
    })
}

/// The number of channels a WAV file's header gives, when it is a WAV file `hound` reads.
pub fn wav_channels(path: &Path) -> Option<u16> {
    let mut f = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let head = riff_head(&mut f, None).ok()?;
    let reader = hound::WavReader::new(std::io::Read::chain(&head[..], f)).ok()?;
    Some(reader.spec().channels)
}

/// The most bytes of chunks before a WAV file's `data` chunk that [`riff_head`] reads.
const MAX_WAV_HEAD: u64 = 16 << 20;

/// The data chunk sizes that writers to a pipe put in a header they cannot come back to:
/// "as long as the stream" (sox's `0x7ffff000`, and the largest size).
const STREAMED_SIZES: [u32; 2] = [0x7fff_f000, u32::MAX];

/// A WAV stream's header up to its `data` chunk's header, as `hound` reads it: the chunks
/// that RIFF pads to an even length (a `LIST` of odd size, which `hound` reads without its pad
/// byte) given whole with their pad, the others as they are. A stream that is not RIFF is
/// given back as read, for `hound` to say what it is. At most [`MAX_WAV_HEAD`] bytes are read
/// before `data`. A `fmt ` chunk too short for what it declares is refused. The `data`
/// chunk's size is given as whole frames (a last, incomplete frame is left out), and, for a
/// stream of `len` bytes whose header holds a size of [`STREAMED_SIZES`] larger than the
/// stream, as the frames the stream holds.
fn riff_head<R: std::io::Read>(r: &mut R, len: Option<u64>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::new();
    r.by_ref().take(12).read_to_end(&mut head)?;
    if head.len() < 12 || &head[0..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return Ok(head);
    }
    loop {
        let at = head.len();
        r.by_ref().take(8).read_to_end(&mut head)?;
        let hdr = &head[at..];
        if hdr.len() < 8 {
            return Ok(head);
        }
        if &hdr[0..4] == b"data" {
            let size = u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]]);
            let mut n = u64::from(size);
            let left = len.map(|l| l.saturating_sub(head.len() as u64));
            if let Some(left) = left.filter(|&l| n > l && STREAMED_SIZES.contains(&size)) {
                n = left;
            }
            // Whole frames, of at most the largest size (a stream larger than any size).
            let frame = fmt_chunk(&head).and_then(frame_bytes).unwrap_or(1);
            n = n.min(u64::from(u32::MAX));
            n -= n % frame;
            let n = n as u32;
            head[at + 4..at + 8].copy_from_slice(&n.to_le_bytes());
            return Ok(head);
        }
        let (id, size) = (
            String::from_utf8_lossy(&hdr[0..4])
                .escape_debug()
                .to_string(),
            u64::from(u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]])),
        );
        let padded = size + (size & 1);
        if head.len() as u64 + padded > MAX_WAV_HEAD {
            return Err(std::io::Error::other(format!(
                "its chunk `{id}` before the samples says it holds {size} bytes, more than the {} MiB read before the samples; the header is damaged, or the file is not a sound file",
                MAX_WAV_HEAD >> 20
            )));
        }
        let start = head.len();
        r.by_ref().take(padded).read_to_end(&mut head)?;
        if ((head.len() - start) as u64) < padded {
            return Ok(head);
        }
        if &head[at..at + 4] == b"fmt " {
            // The fields up to the bits per sample, and WAVE_FORMAT_EXTENSIBLE's 22 more.
            let need = if u16_at(&head[start..], 0) == Some(0xFFFE) {
                40
            } else {
                16
            };
            if size < need {
                return Err(std::io::Error::other(format!(
                    "its format chunk holds {size} bytes, fewer than the {need} of {}; the header is damaged",
                    if need == 40 {
                        "a WAVE_FORMAT_EXTENSIBLE format"
                    } else {
                        "a WAV format"
                    }
                )));
            }
        }
        if size & 1 == 1 {
            // Given to hound with its pad byte counted, so that it finds the next chunk.
            let even = u32::try_from(padded).unwrap_or(u32::MAX);
            head[start - 4..start].copy_from_slice(&even.to_le_bytes());
        }
    }
}

/// Why [`read_wav`] refused its input.
#[derive(Debug)]
pub enum WavInputError {
    /// Not a WAV file, or one whose samples `hound` does not read (the text says why).
    Format(String),
    /// A readable WAV file that cannot be used: wrong rate, too long, truncated, unreadable.
    Other(String),
}

/// Reads a WAV stream into one vector per channel; its rate must be `rate`, and it may hold
/// at most [`MAX_INPUT_SAMPLES`] samples (checked from its header before any sample is read;
/// a header that claims more samples than the stream has gives an error, not a long read).
pub fn read_wav<R: std::io::Read>(r: R, rate: u32) -> Result<Vec<Vec<f32>>, WavInputError> {
    read_wav_of(r, rate, None, None)
}

/// [`read_wav`] of a stream of `len` bytes, when known (a file): a header whose `data` size
/// says "as long as the stream" ([`STREAMED_SIZES`]) reads what the file holds. With `frames`,
/// it reads no more than that many frames: the limit applies to what is read.
fn read_wav_of<R: std::io::Read>(
    r: R,
    rate: u32,
    len: Option<u64>,
    frames: Option<u64>,
) -> Result<Vec<Vec<f32>>, WavInputError> {
    let mut r = r;
    let head = riff_head(&mut r, len).map_err(|e| WavInputError::Other(e.to_string()))?;
    let reader =
        hound::WavReader::new(std::io::Read::chain(&head[..], r)).map_err(|e| match e {
            // hound's words without its "Ill-formed WAVE file" prefix: the sentence around
            // them says the file is not a WAV file.
            hound::Error::FormatError(why) => WavInputError::Format(why.to_string()),
            hound::Error::Unsupported => WavInputError::Format(e.to_string()),
            // hound says a short read in words of its own.
            hound::Error::IoError(io)
                if io.kind() == std::io::ErrorKind::UnexpectedEof
                    || io.to_string().contains("enough bytes") =>
            {
                WavInputError::Other("the file ends inside its header".to_string())
            }
            e => WavInputError::Other(e.to_string()),
        })?;
    let spec = reader.spec();
    if spec.sample_rate == 0 || spec.sample_rate > MAX_RATE {
        return Err(WavInputError::Other(format!(
            "its header says {} Hz, a rate fugue does not render at (1 to {MAX_RATE} Hz); convert it first (e.g. `sox IN.wav -r 48000 OUT.wav`)",
            spec.sample_rate
        )));
    }
    if spec.sample_rate != rate {
        return Err(WavInputError::Other(format!(
            "it is at {} Hz but the render runs at {rate} Hz; pass --rate {}",
            spec.sample_rate, spec.sample_rate
        )));
    }
    let ch = usize::from(spec.channels).max(1);
    let promised = u64::from(reader.len());
    // The samples read: the whole file, or the frames asked for (whole frames).
    let total = frames.map_or(promised, |f| promised.min(f.saturating_mul(ch as u64)));
    if total > MAX_INPUT_SAMPLES {
        return Err(WavInputError::Other(format!(
            "{}, more than the limit of {MAX_INPUT_SAMPLES} samples read ({} MiB as 32-bit floats); give --seconds to render its start, cut it shorter, or mend a header that promises more than the file holds",
            if total == promised {
                format!("its header promises {promised} samples")
            } else {
                format!("the render would read {total} of its samples")
            },
            (MAX_INPUT_SAMPLES * 4) >> 20
        )));
    }
    // Capacity from the header, but not more than a second or so ahead of the samples
    // actually read: a header may lie.
    let frames = (total as usize / ch).min(1 << 16);
    let mut out = vec![Vec::with_capacity(frames); ch];
    let mut push = |i: usize, v: f32| out[i % ch].push(v);
    // A sample that cannot be read: the header promised more than the file holds, or the
    // file cannot be read there.
    let bad = |read: usize, e: hound::Error| {
        match e {
        // hound says the file ended with an error that carries no system error number.
        hound::Error::IoError(io)
            if io.kind() == std::io::ErrorKind::UnexpectedEof || io.raw_os_error().is_none() =>
        {
            WavInputError::Other(format!(
                "its header promises {promised} samples but the file ends after {read}; the file is cut short or its header is wrong"
            ))
        }
        hound::Error::IoError(io) => {
            WavInputError::Other(format!("reading sample {read} of {total} failed: {io}"))
        }
        e => WavInputError::Other(format!("sample {read} of {total}: {e}")),
    }
    };
    let container = container_bytes(&head, spec.channels);
    match spec.sample_format {
        // hound reads other float widths as errors at the first sample; said as a format.
        hound::SampleFormat::Float if spec.bits_per_sample != 32 => {
            return Err(WavInputError::Format(format!(
                "{}-bit float samples",
                spec.bits_per_sample
            )));
        }
        // Fewer valid bits than the container holds (WAVE_FORMAT_EXTENSIBLE: 24 in 32, 20
        // in 24, 12 in 16): the valid bits are the container's most significant ones, which
        // hound does not read so.
        hound::SampleFormat::Int if matches!(container, Some(b @ 2..=4) if u32::from(b) * 8 > u32::from(spec.bits_per_sample)) =>
        {
            let bytes = usize::from(container.unwrap_or(4));
            read_left_justified(reader.into_inner(), total, bytes, &mut push).map_err(
                |read| match read {
                    Ok(read) => WavInputError::Other(format!(
                        "its header promises {promised} samples but the file ends after {read}; the file is cut short or its header is wrong"
                    )),
                    Err((read, io)) => WavInputError::Other(format!(
                        "reading sample {read} of {total} failed: {io}"
                    )),
                },
            )?;
        }
        hound::SampleFormat::Float => {
            for (i, s) in reader
                .into_samples::<f32>()
                .take(total as usize)
                .enumerate()
            {
                push(i, s.map_err(|e| bad(i, e))?);
            }
        }
        hound::SampleFormat::Int => {
            let bits = u32::from(spec.bits_per_sample).clamp(1, 32);
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            for (i, s) in reader
                .into_samples::<i32>()
                .take(total as usize)
                .enumerate()
            {
                push(i, s.map_err(|e| bad(i, e))? as f32 * scale);
            }
        }
    }
    // A last, incomplete frame is dropped, as before.
    let whole = out.iter().map(Vec::len).min().unwrap_or(0);
    for c in &mut out {
        c.truncate(whole);
    }
    Ok(out)
}

/// The bytes of one sample (`block_align / channels`) in the `fmt ` chunk of the WAV header
/// `head` (as [`riff_head`] read it).
fn container_bytes(head: &[u8], channels: u16) -> Option<u16> {
    u16_at(fmt_chunk(head)?, 12)?.checked_div(channels)
}

/// Reads `total` integer samples of `bytes` bytes each (2 to 4) from `r`, the valid bits the
/// most significant ones (the rest, padding, read as they are), each scaled to ±1 by its
/// container's full scale, into `push(index, value)`. On failure, the samples read before:
/// `Ok` when the stream ended, `Err` with the error when reading failed.
fn read_left_justified<R: std::io::Read>(
    mut r: R,
    total: u64,
    bytes: usize,
    push: &mut impl FnMut(usize, f32),
) -> Result<(), Result<usize, (usize, std::io::Error)>> {
    use std::io::Read as _;
    const CHUNK: usize = 1 << 16;
    let mut buf = Vec::with_capacity(CHUNK * bytes);
    let mut read = 0usize;
    while (read as u64) < total {
        let want = (total - read as u64).min(CHUNK as u64) as usize;
        buf.clear();
        (&mut r)
            .take((want * bytes) as u64)
            .read_to_end(&mut buf)
            .map_err(|e| Err((read, e)))?;
        for s in buf.chunks_exact(bytes) {
            let mut word = [0u8; 4];
            word[4 - bytes..].copy_from_slice(s);
            push(
                read,
                i32::from_le_bytes(word) as f32 * (1.0 / 2_147_483_648.0),
            );
            read += 1;
        }
        if buf.len() < want * bytes {
            return Err(Ok(read));
        }
    }
    Ok(())
}

/// The level of the samples rendered so far: measured by the computing thread on each block
/// right after interleaving it, while the block is in its cache (the writer, on another
/// core, would read it again from there, in the time of a core that an executor may be
/// using).
#[derive(Default)]
struct Level {
    peak: f32,
    over: u64,
    non_finite: u64,
}

impl Level {
    fn add(&mut self, data: &[f32]) {
        let (peak, over, bad) = peak_and_over(data);
        self.peak = self.peak.max(peak);
        self.over += over;
        self.non_finite += bad;
    }
}

/// The largest magnitude of `data`, how many samples lie beyond ±1.0, and how many are not
/// finite (NaN or infinite), eight lanes at a time (so that the compiler can use vector
/// instructions: `f32::max` alone, with its NaN rule, keeps a loop scalar). A NaN sample
/// counts in the last only; an infinite one in all three.
fn peak_and_over(data: &[f32]) -> (f32, u64, u64) {
    let mut m = [0.0f32; 8];
    let mut over = [0u32; 8];
    let mut bad = [0u32; 8];
    let chunks = data.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            let a = c[i].abs();
            m[i] = if a > m[i] { a } else { m[i] };
            over[i] += (a > 1.0) as u32;
            bad[i] += u32::from(!a.is_finite());
        }
    }
    let mut peak = m.iter().fold(0.0f32, |p, &x| if x > p { x } else { p });
    let mut n: u64 = over.iter().map(|&x| x as u64).sum();
    let mut non_finite: u64 = bad.iter().map(|&x| x as u64).sum();
    for &x in rest {
        let a = x.abs();
        peak = if a > peak { a } else { peak };
        n += (a > 1.0) as u64;
        non_finite += u64::from(!a.is_finite());
    }
    (peak, n, non_finite)
}

/// The writer thread: takes blocks in order and writes them (a block at a time).
fn write_blocks(
    mut rx: BlockReceiver,
    mut writer: Option<crate::wav::BlockWavWriter>,
) -> Result<(), hound::Error> {
    while let Some(block) = rx.recv() {
        if let Some(w) = writer.as_mut() {
            w.write(block.data())?;
        }
    }
    if let Some(mut w) = writer {
        w.finalize()?;
    }
    Ok(())
}

/// Writes the first `frames` frames of the `channels` buffers that `output` gives into `buf`
/// (`frames * channels` samples), frame by frame: mono is a copy and stereo one pass over
/// both channels (the compiler vectorises both); beyond, each channel's samples every
/// `channels` samples.
fn interleave<'a>(
    channels: usize,
    output: impl Fn(usize) -> &'a [f32],
    frames: usize,
    buf: &mut [f32],
) {
    let buf = &mut buf[..frames * channels];
    match channels {
        0 => {}
        1 => buf.copy_from_slice(&output(0)[..frames]),
        2 => {
            let (l, r) = (&output(0)[..frames], &output(1)[..frames]);
            for ((frame, &a), &b) in buf.chunks_exact_mut(2).zip(l).zip(r) {
                frame[0] = a;
                frame[1] = b;
            }
        }
        _ => {
            for c in 0..channels {
                let out = &output(c)[..frames];
                for (frame, &x) in buf.chunks_exact_mut(channels).zip(out) {
                    frame[c] = x;
                }
            }
        }
    }
}

/// The length of a render of `input` with `tail` seconds after its end (`--tail`): the
/// input's length from its header plus `tail`, checked (a sentence about `--tail` when it is
/// out of range). `None` when the header cannot be read: the render then reads the file and
/// says what is wrong with it.
pub fn tail_seconds(input: &Path, tail: f64) -> Result<Option<f64>, String> {
    if !(tail.is_finite() && (0.0..=86_400.0).contains(&tail)) {
        return Err(format!(
            "--tail must be a number of seconds from 0 to 86400, not {}",
            crate::report::shown(tail)
        ));
    }
    let Ok(reader) = hound::WavReader::open(input) else {
        return Ok(None);
    };
    let length = f64::from(reader.duration()) / f64::from(reader.spec().sample_rate.max(1));
    if length + tail > 86_400.0 {
        return Err(format!(
            "--tail {tail}: {} lasts {length:.1} s, and a render may last at most 86400 s",
            input.display()
        ));
    }
    Ok(Some(length + tail))
}

/// Renders `graph` offline with the executor of `options.executor` (sequential by default)
/// and writes the sink channels
/// (sinks in file order, then port order) to `options.output`.
///
/// `on_progress` is called from the calling thread every few cycles and once at the end.
pub fn render(
    graph: &TaskGraph,
    options: &RenderOptions,
    mut on_progress: impl FnMut(Progress),
) -> Result<RenderSummary, RenderError> {
    let start = Instant::now();
    if options.sample_rate == 0 {
        return Err(RenderError::Options(
            "the sample rate must be at least 1 Hz".into(),
        ));
    }
    // A render of a given length reads no more of its input than it plays.
    let frames = options
        .seconds
        .filter(|s| s.is_finite() && (0.0..=86_400.0).contains(s))
        .map(|s| (s * options.sample_rate as f64).round() as u64);
    let input = match &options.input {
        Some(p) => read_input(p, options.sample_rate, frames)?,
        None => Vec::new(),
    };
    let seconds = match options.seconds {
        Some(s) => s,
        None if options.input.is_some() => {
            let frames = input.first().map_or(0, Vec::len);
            if frames == 0 {
                // The render's length comes from the input: an empty one would make an empty
                // file, and say nothing.
                return Err(RenderError::Options(format!(
                    "--input {} holds no audio (0 frames), so the render, as long as its input, would be empty; give --seconds or --tail",
                    options.input.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
                )));
            }
            frames as f64 / options.sample_rate as f64
        }
        None => DEFAULT_SECONDS,
    };
    if !(seconds.is_finite() && (0.0..=86_400.0).contains(&seconds)) {
        return Err(RenderError::Options(format!(
            "the length must be between 0 and 86400 seconds, not {}",
            fugue_graph::short_number(seconds)
        )));
    }
    let total = (seconds * options.sample_rate as f64).round() as u64;
    // The automatic choice, if asked for, knows how many cycles the render has.
    let mut choice = options.executor.clone();
    choice.auto_cycles = Some(total.div_ceil(options.block.max(1) as u64));
    let (mut engine, mut warnings) = Engine::build(
        graph,
        &options.registry,
        options.sample_rate as f64,
        options.block,
        &choice,
        options.placeholder,
    )
    .map_err(Box::new)?;
    if engine.plan.n_outputs() == 0 {
        return Err(RenderError::NoSink);
    }
    if options.profile {
        engine.enable_profile().map_err(RenderError::Options)?;
    }
    let channels = engine.plan.n_outputs();
    if let Output::Wav(_) = &options.output {
        let max = crate::wav::max_channels(options.bits.bits(), options.sample_rate);
        if channels > max {
            return Err(RenderError::TooManyChannels {
                channels,
                bits: options.bits.bits(),
                rate: options.sample_rate,
                max,
            });
        }
        // Said before anything is rendered or written, not after 4 GiB of it.
        let bits = u32::from(options.bits.bits());
        let bytes = total
            .saturating_mul(channels as u64)
            .saturating_mul(u64::from(bits / 8));
        if bytes > crate::wav::MAX_DATA_BYTES {
            return Err(RenderError::TooLong {
                frames: total,
                channels,
                bits,
                bytes,
            });
        }
    }
    // The blocks on their way to the writer come on top of the plan: bounded together
    // before either the ring or the output file is made.
    let block = engine.plan.block();
    let (item, blocks) = crate::blocks::ring_shape(block, channels);
    let ring = item.saturating_mul(blocks);
    let (plan, limit) = (engine.plan.memory(), fugue_dsp::memory::half_of_memory());
    if plan.saturating_add(ring) > limit {
        return Err(RenderError::Memory {
            plan,
            ring,
            blocks,
            channels,
            frames: block,
            limit,
        });
    }
    let writer = match &options.output {
        Output::Wav(path) => {
            let spec = hound::WavSpec {
                // Below `max_channels`, checked above.
                channels: channels as u16,
                sample_rate: options.sample_rate,
                bits_per_sample: options.bits.bits(),
                sample_format: if options.bits == Bits::F32 {
                    hound::SampleFormat::Float
                } else {
                    hound::SampleFormat::Int
                },
            };
            let w =
                crate::wav::BlockWavWriter::create(path, spec).map_err(|e| RenderError::Write {
                    path: path.clone(),
                    reason: write_reason(&e),
                })?;
            Some(w)
        }
        Output::Discard => None,
    };
    let (mut tx, rx) = block_channel(block, channels);
    let writer_thread = std::thread::Builder::new()
        .name("fugue-wav-writer".into())
        .spawn(move || write_blocks(rx, writer))
        .map_err(|source| RenderError::Io {
            what: "cannot start the writer thread".into(),
            source,
        })?;

    warnings.extend(place_audio_thread(&options.executor));
    // The audio thread's refusals repeat the workers' (real-time priority, say).
    warnings.sort();
    warnings.dedup();
    let mut done = 0u64;
    let mut cycle = 0u64;
    let mut level = Level::default();
    let mut cancelled = false;
    let cycles_start = Instant::now();
    on_progress(Progress {
        frames_done: 0,
        frames_total: total,
    });
    while done < total {
        if options
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            cancelled = true;
            break;
        }
        let pos = done as usize;
        for c in 0..engine.plan.n_inputs() {
            let data = input.get(c).map_or(&[][..], |v| &v[pos.min(v.len())..]);
            engine.plan.set_input(c, data);
        }
        engine.run_cycle();
        let frames = (total - done).min(block as u64) as usize;
        let sent = tx.send_with(|buf| {
            let buf = &mut buf[..frames * channels];
            let plan = &engine.plan;
            interleave(channels, |c| plan.output(c), frames, buf);
            level.add(buf);
            frames * channels
        });
        if !sent {
            break; // the writer failed: its error is reported below
        }
        done += frames as u64;
        cycle += 1;
        if cycle & 31 == 0 {
            on_progress(Progress {
                frames_done: done,
                frames_total: total,
            });
        }
    }
    drop(tx);
    let written = writer_thread
        .join()
        .map_err(|_| RenderError::ThreadPanicked("writer"))?;
    let cycles_time = cycles_start.elapsed();
    if !cancelled {
        written.map_err(|e| RenderError::Write {
            path: match &options.output {
                Output::Wav(p) => p.clone(),
                Output::Discard => PathBuf::from("(discarded output)"),
            },
            reason: write_reason(&e),
        })?;
        on_progress(Progress {
            frames_done: done,
            frames_total: total,
        });
    }
    // The plan that played (auto's choice, when it chose): blocks per cycle and sub-blocks.
    let blocks_per_cycle = (engine.plan.block() / options.block.max(1)).max(1);
    let sub_blocks = (engine.plan.pipeline() / blocks_per_cycle).max(1);
    let summary = RenderSummary {
        frames: done,
        channels,
        sample_rate: options.sample_rate,
        peak: level.peak,
        // Samples beyond ±1 are clipped in integer files; a float file keeps them.
        clipped: if options.bits == Bits::F32 {
            0
        } else {
            level.over
        },
        non_finite: level.non_finite,
        wall: start.elapsed(),
        cycles: cycles_time,
        placeholders: engine.plan.placeholders().to_vec(),
        panics: engine.plan.take_panics(),
        warnings,
        profile: engine.profile_report(),
        auto: engine.auto_report().cloned(),
        blocks_per_cycle,
        sub_blocks,
    };
    if cancelled {
        // What was rendered until the stop (its output left unfinished).
        return Err(RenderError::Cancelled {
            partial: Some(Box::new(summary)),
        });
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::{
        interleave, peak_and_over, read_wav, read_wav_of, write_reason, WavInputError,
        STREAMED_SIZES,
    };

    /// A mono WAVE_FORMAT_EXTENSIBLE file at 48 kHz: `valid` bits in containers of `bytes`,
    /// the sub-format `sub` (1 integer, 3 float), the samples' bytes `data`.
    fn extensible(bytes: u16, valid: u16, sub: u16, data: &[u8]) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(b"RIFF");
        h.extend_from_slice(&(60 + data.len() as u32).to_le_bytes());
        h.extend_from_slice(b"WAVEfmt ");
        h.extend_from_slice(&40u32.to_le_bytes());
        h.extend_from_slice(&0xFFFEu16.to_le_bytes());
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&48_000u32.to_le_bytes());
        h.extend_from_slice(&(48_000 * u32::from(bytes)).to_le_bytes());
        h.extend_from_slice(&bytes.to_le_bytes());
        h.extend_from_slice(&(bytes * 8).to_le_bytes());
        h.extend_from_slice(&22u16.to_le_bytes());
        h.extend_from_slice(&valid.to_le_bytes());
        h.extend_from_slice(&4u32.to_le_bytes()); // front centre
        h.extend_from_slice(&sub.to_le_bytes());
        h.extend_from_slice(&[
            0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
        ]);
        h.extend_from_slice(b"data");
        h.extend_from_slice(&(data.len() as u32).to_le_bytes());
        h.extend_from_slice(data);
        h
    }

    /// A plain 16-bit PCM file of `channels` channels: its `fmt ` chunk `fmt_len` bytes long
    /// (16 in a good file), its data chunk's size field `size` (the data's length in a good
    /// file), then `data`.
    fn pcm16(channels: u16, fmt_len: u32, size: u32, data: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&channels.to_le_bytes());
        f.extend_from_slice(&48_000u32.to_le_bytes());
        f.extend_from_slice(&(48_000 * 2 * u32::from(channels)).to_le_bytes());
        f.extend_from_slice(&(2 * channels).to_le_bytes());
        f.extend_from_slice(&16u16.to_le_bytes());
        f.truncate(fmt_len as usize);
        let mut h = Vec::new();
        h.extend_from_slice(b"RIFF");
        h.extend_from_slice(&(20 + fmt_len + data.len() as u32).to_le_bytes());
        h.extend_from_slice(b"WAVEfmt ");
        h.extend_from_slice(&fmt_len.to_le_bytes());
        h.extend_from_slice(&f);
        h.extend_from_slice(b"data");
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(data);
        h
    }

    /// A data size that a writer to a pipe left ("as long as the stream") reads the frames
    /// the file holds; a last, incomplete frame is left out; any other size larger than the
    /// file is still an error; a `fmt ` chunk too short is said as such.
    #[test]
    fn streamed_sizes_partial_frames_and_short_formats() {
        let data: Vec<u8> = (0..10i16).flat_map(|v| (v * 1000).to_le_bytes()).collect();
        let want = |ch: usize| -> Vec<Vec<f32>> {
            (0..ch)
                .map(|c| {
                    (0..10 / ch)
                        .map(|k| ((k * ch + c) as f32 * 1000.0) / 32_768.0)
                        .collect()
                })
                .collect()
        };
        for size in STREAMED_SIZES {
            let file = pcm16(1, 16, size, &data);
            let len = Some(file.len() as u64);
            assert_eq!(read_wav_of(&file[..], 48_000, len, None).unwrap(), want(1));
            // Without the stream's length, the size is taken at its word.
            assert!(read_wav(&file[..], 48_000).is_err());
        }
        let file = pcm16(1, 16, 40, &data);
        match read_wav_of(&file[..], 48_000, Some(file.len() as u64), None) {
            Err(WavInputError::Other(e)) => assert!(e.contains("promises 20 samples"), "{e}"),
            r => panic!("{r:?}"),
        }
        // Stereo, 10 samples and one byte more; then 3 channels (a frame of 6 bytes): 3
        // whole frames of the 20 bytes.
        let mut odd = data.clone();
        odd.push(7);
        assert_eq!(
            read_wav(&pcm16(2, 16, 21, &odd)[..], 48_000).unwrap(),
            want(2)
        );
        let three = read_wav(&pcm16(3, 16, 20, &data)[..], 48_000).unwrap();
        assert_eq!(three, want(3));
        for (fmt_len, need) in [(14, "fewer than the 16 of a WAV format"), (0, "the 16")] {
            match read_wav(&pcm16(1, fmt_len, 20, &data)[..], 48_000) {
                Err(WavInputError::Other(e)) => assert!(
                    e.contains(&format!("its format chunk holds {fmt_len} bytes"))
                        && e.contains(need),
                    "{e}"
                ),
                r => panic!("{fmt_len}: {r:?}"),
            }
        }
        let mut ext = extensible(2, 16, 1, &data);
        // WAVE_FORMAT_EXTENSIBLE's chunk cut to 20 bytes (its data chunk follows at once).
        ext.drain(20 + 20..20 + 40);
        ext[16..20].copy_from_slice(&20u32.to_le_bytes());
        match read_wav(&ext[..], 48_000) {
            Err(WavInputError::Other(e)) => assert!(
                e.contains("holds 20 bytes, fewer than the 40 of a WAVE_FORMAT_EXTENSIBLE format"),
                "{e}"
            ),
            r => panic!("{r:?}"),
        }
    }

    /// Samples of fewer valid bits than their container (24 in 32, 20 in 24, 12 in 16) are
    /// read from the container's most significant bits, as WAVE_FORMAT_EXTENSIBLE places
    /// them; a file cut short says so; 64-bit float is refused as a format.
    #[test]
    fn left_justified_samples_are_read_at_their_scale() {
        let values = [0.5f64, -0.25, 0.0, -1.0, 0.123_456_7];
        for (bytes, valid) in [(4u16, 24u16), (3, 20), (2, 12), (4, 20)] {
            let mut data = Vec::new();
            for v in values {
                let q = (v * f64::from(1u32 << (valid - 1))).round() as i64;
                let word = (q << (u32::from(bytes) * 8 - u32::from(valid))) as i32;
                data.extend_from_slice(&word.to_le_bytes()[..usize::from(bytes)]);
            }
            let file = extensible(bytes, valid, 1, &data);
            let got = read_wav(&file[..], 48_000).unwrap();
            assert_eq!(got.len(), 1);
            for (g, v) in got[0].iter().zip(values) {
                let step = 1.0 / f64::from(1u32 << (valid - 1));
                assert!(
                    (f64::from(*g) - v).abs() <= step,
                    "{valid} bits in {bytes} bytes: {g} for {v}"
                );
            }
            let cut = &file[..file.len() - usize::from(bytes)];
            match read_wav(cut, 48_000) {
                Err(WavInputError::Other(e)) => assert!(
                    e.contains("promises 5 samples but the file ends after 4"),
                    "{e}"
                ),
                r => panic!("{r:?}"),
            }
        }
        let f64s = extensible(8, 64, 3, &0.5f64.to_le_bytes());
        assert!(matches!(
            read_wav(&f64s[..], 48_000),
            Err(WavInputError::Format(_))
        ));
    }

    /// The WAV writer's refusal of a block past the format's 4 GiB is said as that limit
    /// (hound's own text spoke of a sample's bits), and a full disk as such.
    #[test]
    fn a_full_wav_file_and_a_full_disk_are_said_as_such() {
        assert_eq!(
            write_reason(&hound::Error::TooWide),
            "a WAV file holds at most 4 GiB of samples, and this one is full"
        );
        let full = hound::Error::IoError(std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(write_reason(&full).starts_with("the disk is full"));
    }

    /// Every channel count's frames hold each channel's sample in order, for a block cut
    /// short, and nothing past the frames asked is written.
    #[test]
    fn interleave_puts_each_channel_in_its_place() {
        for channels in 1..=5 {
            let outs: Vec<Vec<f32>> = (0..channels)
                .map(|c| (0..10).map(|k| (100 * c + k) as f32).collect())
                .collect();
            let frames = 7;
            let mut buf = vec![-1.0; 10 * channels];
            interleave(channels, |c| &outs[c][..], frames, &mut buf);
            for k in 0..frames {
                for c in 0..channels {
                    assert_eq!(buf[k * channels + c], (100 * c + k) as f32, "{channels} ch");
                }
            }
            assert!(buf[frames * channels..].iter().all(|&x| x == -1.0));
        }
    }

    #[test]
    fn peak_and_over_match_a_plain_loop() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 1000] {
            let data: Vec<f32> = (0..len)
                .map(|i| ((i as f32) * 0.71).sin() * 1.5 * if i % 3 == 0 { -1.0 } else { 1.0 })
                .collect();
            let peak = data.iter().fold(0.0f32, |p, x| p.max(x.abs()));
            let over = data.iter().filter(|x| x.abs() > 1.0).count() as u64;
            assert_eq!(peak_and_over(&data), (peak, over, 0), "{len} samples");
        }
        assert_eq!(peak_and_over(&[0.5, f32::NAN, -2.0]), (2.0, 1, 1));
        let mut data = vec![0.25f32; 20];
        data[3] = f32::NAN;
        data[9] = f32::NEG_INFINITY;
        data[18] = f32::NAN;
        assert_eq!(peak_and_over(&data), (f32::INFINITY, 1, 3));
    }
}
