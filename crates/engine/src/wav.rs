//! Block-wise WAV writing: the samples are converted a block at a time into one reusable
//! byte buffer and written with one call, so the writer thread costs a small fraction of a
//! core (a call per sample through `hound`'s `write_sample` cost about 30 instructions a
//! sample).
//!
//! The header is one every common reader accepts: 16-bit files are plain PCM (format 1, as
//! `hound` writes them, which Python's `wave` reads), 24-bit files `hound`'s
//! WAVE_FORMAT_EXTENSIBLE header, and 32-bit float files IEEE float (format 3) with the
//! `cbSize` field of a non-PCM `fmt ` chunk and a `fact` chunk holding the frame count, as
//! the format's specification asks (an extensible header with a float sub-format makes sox
//! warn "wave header missing extended part of fmt chunk").
//!
//! A file's sizes can be brought up to date while it grows ([`BlockWavWriter::update_sizes`],
//! written at their offsets, never moving the file's position), so that a process killed
//! while recording leaves a file that reads as the audio written until the last update. A
//! named pipe or a device cannot be seeked: there the header says the longest length (the
//! reader reads to the end of the stream) and is never rewritten.

use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::os::unix::fs::FileExt as _;
use std::path::Path;

/// Sample formats written ([`crate::render::Bits`] as the writer sees it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// 32-bit float.
    F32,
    /// 16-bit integer, clamped to ±1.0 and rounded.
    I16,
    /// 24-bit integer, clamped to ±1.0 and rounded.
    I24,
}

impl Format {
    fn bytes(self) -> usize {
        match self {
            Format::F32 => 4,
            Format::I16 => 2,
            Format::I24 => 3,
        }
    }
}

/// Offset of the frame count in the `fact` chunk of a float file's header ([`header`]).
const FACT_OFFSET: u64 = 46;

/// A sample as a 16-bit integer: times 2^15, as an input file's integers are read (divided
/// by 2^15), so that integers read and written again are the same; rounded, and clipped to
/// -32768..=32767 (+1.0 gives 32767).
pub(crate) fn to_i16(x: f32) -> i16 {
    // `as` saturates: 32768 becomes 32767; NaN becomes 0.
    (x.clamp(-1.0, 1.0) * 32_768.0).round() as i16
}

/// A sample as a 24-bit integer (in an `i32`): times 2^23, rounded, clipped to
/// -8388608..=8388607, as [`to_i16`].
pub(crate) fn to_i24(x: f32) -> i32 {
    ((x.clamp(-1.0, 1.0) * 8_388_608.0).round() as i32).min(8_388_607)
}

/// The most channels a WAV file of `bits`-bit samples at `rate` Hz can hold: its header gives
/// a frame's bytes in 16 bits and a second's in 32.
pub fn max_channels(bits: u16, rate: u32) -> usize {
    let bytes = u64::from(bits / 8).max(1);
    let by_frame = u64::from(u16::MAX) / bytes;
    let by_second = u64::from(u32::MAX) / (u64::from(rate.max(1)) * bytes);
    by_frame.min(by_second) as usize
}

/// The header of a WAV file of `spec` holding `data_bytes` bytes of samples, and the format.
/// The data chunk's length is the header's last 4 bytes.
fn header(spec: hound::WavSpec, data_bytes: u32) -> Result<(Vec<u8>, Format), hound::Error> {
    if usize::from(spec.channels) > max_channels(spec.bits_per_sample, spec.sample_rate) {
        return Err(hound::Error::Unsupported);
    }
    let format = match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => Format::F32,
        (hound::SampleFormat::Int, 16) => Format::I16,
        (hound::SampleFormat::Int, 24) => Format::I24,
        _ => return Err(hound::Error::Unsupported),
    };
    if format != Format::F32 {
        // hound's header for integer samples, its data chunk last.
        let mut c = Cursor::new(Vec::new());
        hound::WavWriter::new(&mut c, spec)?.finalize()?;
        let mut h = c.into_inner();
        let n = h.len();
        h[4..8].copy_from_slice(&((n as u32 - 8).saturating_add(data_bytes)).to_le_bytes());
        h[n - 4..].copy_from_slice(&data_bytes.to_le_bytes());
        return Ok((h, format));
    }
    let channels = spec.channels;
    let align = u32::from(channels) * 4;
    let frames = data_bytes / align.max(1);
    let mut h = Vec::with_capacity(58);
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&(50u32.saturating_add(data_bytes)).to_le_bytes());
    h.extend_from_slice(b"WAVE");
    h.extend_from_slice(b"fmt ");
    h.extend_from_slice(&18u32.to_le_bytes());
    h.extend_from_slice(&3u16.to_le_bytes()); // WAVE_FORMAT_IEEE_FLOAT
    h.extend_from_slice(&channels.to_le_bytes());
    h.extend_from_slice(&spec.sample_rate.to_le_bytes());
    h.extend_from_slice(&(spec.sample_rate.saturating_mul(align)).to_le_bytes());
    h.extend_from_slice(&(align as u16).to_le_bytes());
    h.extend_from_slice(&32u16.to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes()); // cbSize: no extension
    h.extend_from_slice(b"fact");
    h.extend_from_slice(&4u32.to_le_bytes());
    debug_assert_eq!(h.len() as u64, FACT_OFFSET);
    h.extend_from_slice(&frames.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&data_bytes.to_le_bytes());
    Ok((h, format))
}

/// A WAV file being written, block by block.
pub(crate) struct BlockWavWriter {
    file: BufWriter<File>,
    format: Format,
    spec: hound::WavSpec,
    /// Bytes of the header: the data chunk's length is its last 4 bytes.
    header: u64,
    data_bytes: u64,
    /// The data bytes the header says (its last update of the sizes).
    said_bytes: u64,
    /// Whether the file is a regular file, whose header is rewritten with the sizes
    /// (otherwise a stream, whose header says the longest length).
    seekable: bool,
    bytes: Vec<u8>,
}

/// Float blocks of at least this many bytes are written to the file directly, without
/// passing through the writer's buffer: one system call per block costs less than copying
/// them.
const DIRECT_BYTES: usize = 32 << 10;

/// The most data bytes a WAV file's 32-bit sizes can describe, with its header.
pub(crate) const MAX_DATA_BYTES: u64 = u32::MAX as u64 - 1024;

impl BlockWavWriter {
    /// Opens `path` ([`crate::output::open_truncated`]: a registered temporary file is
    /// never created again) with the header of `spec` and no samples yet.
    pub(crate) fn create(path: &Path, spec: hound::WavSpec) -> Result<Self, hound::Error> {
        BlockWavWriter::new(crate::output::open_truncated(path)?, spec)
    }

    /// Writes into `file`, open for writing and empty: a regular file gets the header of
    /// `spec` with no samples yet (its sizes updated later); a named pipe or a device, one
    /// that says the longest length.
    pub(crate) fn new(file: File, spec: hound::WavSpec) -> Result<Self, hound::Error> {
        let seekable = file.metadata()?.file_type().is_file();
        // A stream's longest length, in whole frames (a reader may check that the data
        // chunk holds a whole number of them).
        let frame = u64::from(spec.bits_per_sample / 8) * u64::from(spec.channels.max(1));
        let length = if seekable {
            0
        } else {
            (MAX_DATA_BYTES / frame.max(1) * frame.max(1)) as u32
        };
        let (h, format) = header(spec, length)?;
        let mut file = BufWriter::with_capacity(1 << 20, file);
        file.write_all(&h)?;
        // A regular file: on disk at once, so that a process killed before its first update
        // of the sizes leaves a file that reads (as no samples), not an empty one. (A stream
        // gets it with the first samples: one that cannot be written, `/dev/full`, is then
        // said as the recording's failure while the host plays on.)
        if seekable {
            file.flush()?;
        }
        Ok(BlockWavWriter {
            file,
            format,
            spec,
            header: h.len() as u64,
            data_bytes: 0,
            said_bytes: 0,
            seekable,
            bytes: Vec::new(),
        })
    }

    /// Frames written so far.
    pub(crate) fn frames(&self) -> u64 {
        self.data_bytes / (self.format.bytes() as u64 * u64::from(self.spec.channels.max(1)))
    }

    /// Appends interleaved samples (whole frames).
    pub(crate) fn write(&mut self, samples: &[f32]) -> Result<(), hound::Error> {
        let n = samples.len() * self.format.bytes();
        if self.data_bytes + n as u64 > MAX_DATA_BYTES {
            return Err(hound::Error::TooWide);
        }
        match self.format {
            // Little-endian float is the file's format: the samples' own bytes.
            Format::F32 if cfg!(target_endian = "little") => {
                let bytes: &[u8] = bytemuck::cast_slice(samples);
                if bytes.len() >= DIRECT_BYTES {
                    // Large blocks go to the file as they are: copying them through the
                    // buffer first cost the writer more than the write itself.
                    self.file.flush()?;
                    self.file.get_mut().write_all(bytes)?;
                } else {
                    self.file.write_all(bytes)?;
                }
                self.data_bytes += n as u64;
                return Ok(());
            }
            Format::F32 => {
                self.bytes.resize(n, 0);
                for (b, &x) in self.bytes.chunks_exact_mut(4).zip(samples) {
                    b.copy_from_slice(&x.to_le_bytes());
                }
            }
            Format::I16 => {
                self.bytes.resize(n, 0);
                for (b, &x) in self.bytes.chunks_exact_mut(2).zip(samples) {
                    b.copy_from_slice(&to_i16(x).to_le_bytes());
                }
            }
            Format::I24 => {
                self.bytes.resize(n, 0);
                for (b, &x) in self.bytes.chunks_exact_mut(3).zip(samples) {
                    b.copy_from_slice(&to_i24(x).to_le_bytes()[..3]);
                }
            }
        }
        self.file.write_all(&self.bytes)?;
        self.data_bytes += n as u64;
        Ok(())
    }

    /// Flushes the samples written and writes their sizes into the header, so that the file
    /// reads whole as it stands (nothing for a stream).
    pub(crate) fn update_sizes(&mut self) -> Result<(), hound::Error> {
        self.file.flush()?;
        if !self.seekable {
            return Ok(());
        }
        let (h, _) = header(self.spec, self.data_bytes as u32)?;
        let file = self.file.get_ref();
        // Written at their offsets: the file's position stays at its end.
        file.write_all_at(&h[h.len() - 4..], self.header - 4)?;
        file.write_all_at(&h[4..8], 4)?;
        if self.format == Format::F32 {
            file.write_all_at(
                &h[FACT_OFFSET as usize..FACT_OFFSET as usize + 4],
                FACT_OFFSET,
            )?;
        }
        self.said_bytes = self.data_bytes;
        Ok(())
    }

    /// After a write that failed (a full disk): cuts a regular file to the header and the
    /// frames its sizes last said ([`BlockWavWriter::update_sizes`]), so that no part of a
    /// block the header does not count is left after them; what the writer still holds is
    /// dropped, not written. Nothing for a stream.
    pub(crate) fn cut(self) -> std::io::Result<()> {
        let (file, _unwritten) = self.file.into_parts();
        if !self.seekable {
            return Ok(());
        }
        let data = self.said_bytes;
        file.set_len(self.header + data + data % 2)
    }

    /// Writes the sizes into the header and flushes. A data chunk of an odd length (24-bit
    /// samples, an odd number of channels and of frames) is followed by the pad byte that
    /// RIFF asks for, counted in the RIFF chunk's size but not in the data chunk's.
    pub(crate) fn finalize(&mut self) -> Result<(), hound::Error> {
        self.update_sizes()?;
        if self.seekable && self.data_bytes % 2 == 1 {
            self.file.write_all(&[0])?;
            self.file.flush()?;
            let riff = (self.header - 8 + self.data_bytes + 1) as u32;
            self.file.get_ref().write_all_at(&riff.to_le_bytes(), 4)?;
        }
        self.file.get_mut().flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a failed write, the file is cut to the frames its header last counted: nothing
    /// of a later block is left after them, and it reads as those frames.
    #[test]
    fn a_cut_file_ends_with_the_frames_its_header_counts() {
        let path = std::env::temp_dir().join(format!("fugue-wav-cut-{}.wav", std::process::id()));
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: 48_000,
            bits_per_sample: 24,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = BlockWavWriter::create(&path, spec).unwrap();
        w.write(&[0.25; 2 * 101]).unwrap();
        w.update_sizes().unwrap();
        assert_eq!(w.frames(), 101);
        w.write(&[0.75; 2 * 5000]).unwrap();
        w.cut().unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        let r = hound::WavReader::open(&path).unwrap();
        assert_eq!(r.duration(), 101);
        let got: Vec<i32> = r.into_samples::<i32>().collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), 2 * 101);
        // The header and 101 frames of 6 bytes: nothing after them.
        assert_eq!(len, header(spec, 0).unwrap().0.len() as u64 + 101 * 6);
        let _ = std::fs::remove_file(&path);
    }

    /// A stream's header says the longest length in whole frames.
    #[test]
    fn a_streams_length_is_whole_frames() {
        for (bits, channels) in [(16u16, 1u16), (24, 2), (32, 3), (24, 5)] {
            let (reader, writer) = std::io::pipe().unwrap();
            let file = File::from(std::os::fd::OwnedFd::from(writer));
            let spec = hound::WavSpec {
                channels,
                sample_rate: 48_000,
                bits_per_sample: bits,
                sample_format: if bits == 32 {
                    hound::SampleFormat::Float
                } else {
                    hound::SampleFormat::Int
                },
            };
            let w = BlockWavWriter::new(file, spec).unwrap();
            let h = header(spec, 0).unwrap().0.len();
            drop(w);
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut { reader }, &mut bytes).unwrap();
            assert_eq!(bytes.len(), h);
            let data = u32::from_le_bytes(bytes[h - 4..h].try_into().unwrap());
            let frame = u32::from(bits / 8) * u32::from(channels);
            assert_eq!(data % frame, 0, "{bits} bits, {channels} channels: {data}");
            assert!(u64::from(data) > MAX_DATA_BYTES - u64::from(frame));
        }
    }

    /// The same samples through `hound`'s per-sample writer and through this one give the
    /// same file, byte for byte, in the integer formats, and the same data chunk in float
    /// (whose header is IEEE float with a `fact` chunk), in every channel count.
    #[test]
    fn files_equal_hounds_byte_for_byte() {
        let dir = std::env::temp_dir();
        let samples: Vec<f32> = (0..6 * 97)
            .map(|i| ((i as f32) * 0.37).sin() * 1.3 - 0.1)
            .collect();
        for (bits, fmt) in [
            (32, hound::SampleFormat::Float),
            (16, hound::SampleFormat::Int),
            (24, hound::SampleFormat::Int),
        ] {
            for channels in [1u16, 2, 3, 6] {
                let spec = hound::WavSpec {
                    channels,
                    sample_rate: 44_100,
                    bits_per_sample: bits,
                    sample_format: fmt,
                };
                let a = dir.join(format!(
                    "fugue-wav-{}-{bits}-{channels}-a.wav",
                    std::process::id()
                ));
                let b = dir.join(format!(
                    "fugue-wav-{}-{bits}-{channels}-b.wav",
                    std::process::id()
                ));
                let mut w = hound::WavWriter::create(&a, spec).unwrap();
                for &x in &samples {
                    match (bits, fmt) {
                        (32, _) => w.write_sample(x).unwrap(),
                        (16, _) => w.write_sample(to_i16(x)).unwrap(),
                        _ => w.write_sample(to_i24(x)).unwrap(),
                    }
                }
                w.finalize().unwrap();
                let mut bw = BlockWavWriter::create(&b, spec).unwrap();
                for block in samples.chunks(6 * 10) {
                    bw.write(block).unwrap();
                }
                bw.finalize().unwrap();
                let (ha, hb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
                if bits == 32 {
                    // hound's float header is 68 bytes (an extensible `fmt `), this one 58.
                    assert_eq!(&ha[68..], &hb[58..], "{channels} channels");
                    check_float_header(&hb, channels, samples.len());
                } else {
                    assert_eq!(ha, hb, "{bits} bits, {channels} channels");
                }
                let _ = std::fs::remove_file(&a);
                let _ = std::fs::remove_file(&b);
            }
        }
    }

    /// An odd data chunk (24-bit mono, odd frames) is padded to an even length: the RIFF
    /// size counts the pad byte, the data chunk's does not, and readers see every frame.
    #[test]
    fn odd_data_chunk_gets_its_pad_byte() {
        let path = std::env::temp_dir().join(format!("fugue-wav-pad-{}.wav", std::process::id()));
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 48_000,
            bits_per_sample: 24,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = BlockWavWriter::create(&path, spec).unwrap();
        w.write(&[0.5f32; 33]).unwrap();
        w.finalize().unwrap();
        let b = std::fs::read(&path).unwrap();
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!(b.len() % 2, 0);
        assert_eq!(u32_at(4) as usize, b.len() - 8);
        assert_eq!(u32_at(b.len() - 1 - 99 - 4), 99);
        assert_eq!(b[b.len() - 1], 0);
        let mut r = hound::WavReader::open(&path).unwrap();
        assert_eq!(r.duration(), 33);
        let s: Vec<i32> = r.samples::<i32>().map(Result::unwrap).collect();
        assert!(s.iter().all(|&v| v == 4_194_304), "{s:?}");
        let _ = std::fs::remove_file(&path);
    }

    /// A float file's header: RIFF size, format 3, cbSize 0, `fact` with the frame count, and
    /// the data chunk's length.
    fn check_float_header(b: &[u8], channels: u16, samples: usize) {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let u16_at = |i: usize| u16::from_le_bytes(b[i..i + 2].try_into().unwrap());
        assert_eq!(&b[..4], b"RIFF");
        assert_eq!(u32_at(4) as usize, b.len() - 8);
        assert_eq!(&b[12..16], b"fmt ");
        assert_eq!(u32_at(16), 18);
        assert_eq!(u16_at(20), 3);
        assert_eq!(u16_at(22), channels);
        assert_eq!(u16_at(36), 0);
        assert_eq!(&b[38..42], b"fact");
        assert_eq!(u32_at(46) as usize, samples / channels as usize);
        assert_eq!(&b[50..54], b"data");
        assert_eq!(u32_at(54) as usize, samples * 4);
    }

    /// Sizes updated while the file grows: the file reads whole from its creation on and after
    /// each update; a named
    /// pipe gets a header of the longest length and no update.
    #[test]
    fn sizes_are_kept_up_to_date_while_the_file_grows() {
        let path = std::env::temp_dir().join(format!("fugue-wav-grow-{}.wav", std::process::id()));
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: 48_000,
            bits_per_sample: 32,
            sample_format: hound::SampleFormat::Float,
        };
        let mut w = BlockWavWriter::create(&path, spec).unwrap();
        // Before any sample: the header is on disk, and the file reads as empty (a process
        // killed now leaves a file that reads).
        check_float_header(&std::fs::read(&path).unwrap(), 2, 0);
        assert_eq!(hound::WavReader::open(&path).unwrap().duration(), 0);
        let block = vec![0.25f32; 2 * 64];
        for n in 1..=3 {
            w.write(&block).unwrap();
            w.update_sizes().unwrap();
            let b = std::fs::read(&path).unwrap();
            check_float_header(&b, 2, n * block.len());
            let r = hound::WavReader::open(&path).unwrap();
            assert_eq!(r.duration() as usize, n * 64);
        }
        assert_eq!(w.frames(), 3 * 64);
        drop(w);
        let _ = std::fs::remove_file(&path);
    }
}
