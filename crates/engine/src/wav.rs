//! Block-wise WAV writing for offline render: the header is `hound`'s, the samples are
//! converted a block at a time into one reusable byte buffer and written with one call, so
//! the writer thread costs a small fraction of a core (a call per sample through `hound`'s
//! `write_sample` cost about 30 instructions a sample).

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
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

/// A WAV file being written, block by block.
pub(crate) struct BlockWavWriter {
    file: BufWriter<File>,
    format: Format,
    /// Bytes of the header: the data chunk's length is its last 4 bytes.
    header: u64,
    data_bytes: u64,
    bytes: Vec<u8>,
}

/// The most data bytes a WAV file's 32-bit sizes can describe, with its header.
const MAX_DATA_BYTES: u64 = u32::MAX as u64 - 1024;

impl BlockWavWriter {
    /// Creates `path` (truncating it) with the header of `spec` and no samples yet.
    pub(crate) fn create(path: &Path, spec: hound::WavSpec) -> Result<Self, hound::Error> {
        let format = match (spec.sample_format, spec.bits_per_sample) {
            (hound::SampleFormat::Float, 32) => Format::F32,
            (hound::SampleFormat::Int, 16) => Format::I16,
            (hound::SampleFormat::Int, 24) => Format::I24,
            _ => return Err(hound::Error::Unsupported),
        };
        // hound writes the header, its data chunk last, and never a `fact` chunk.
        hound::WavWriter::create(path, spec)?.finalize()?;
        let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
        let header = file.seek(SeekFrom::End(0))?;
        Ok(BlockWavWriter {
            file: BufWriter::with_capacity(1 << 20, file),
            format,
            header,
            data_bytes: 0,
            bytes: Vec::new(),
        })
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
                self.file.write_all(bytemuck::cast_slice(samples))?;
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
                    let v = (x.clamp(-1.0, 1.0) * 32_767.0).round() as i16;
                    b.copy_from_slice(&v.to_le_bytes());
                }
            }
            Format::I24 => {
                self.bytes.resize(n, 0);
                for (b, &x) in self.bytes.chunks_exact_mut(3).zip(samples) {
                    let v = (x.clamp(-1.0, 1.0) * 8_388_607.0).round() as i32;
                    b.copy_from_slice(&v.to_le_bytes()[..3]);
                }
            }
        }
        self.file.write_all(&self.bytes)?;
        self.data_bytes += n as u64;
        Ok(())
    }

    /// Writes the sizes into the header and flushes.
    pub(crate) fn finalize(mut self) -> Result<(), hound::Error> {
        self.file.flush()?;
        let file = self.file.get_mut();
        // RIFF size: everything after its first 8 bytes; then the data chunk's length.
        let riff = (self.header + self.data_bytes - 8) as u32;
        file.seek(SeekFrom::Start(4))?;
        file.write_all(&riff.to_le_bytes())?;
        file.seek(SeekFrom::Start(self.header - 4))?;
        file.write_all(&(self.data_bytes as u32).to_le_bytes())?;
        file.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same samples through `hound`'s per-sample writer and through this one give the
    /// same file, byte for byte, in every format and channel count.
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
                        (16, _) => w
                            .write_sample((x.clamp(-1.0, 1.0) * 32_767.0).round() as i16)
                            .unwrap(),
                        _ => w
                            .write_sample((x.clamp(-1.0, 1.0) * 8_388_607.0).round() as i32)
                            .unwrap(),
                    }
                }
                w.finalize().unwrap();
                let mut bw = BlockWavWriter::create(&b, spec).unwrap();
                for block in samples.chunks(6 * 10) {
                    bw.write(block).unwrap();
                }
                bw.finalize().unwrap();
                assert_eq!(
                    std::fs::read(&a).unwrap(),
                    std::fs::read(&b).unwrap(),
                    "{bits} bits, {channels} channels"
                );
                let _ = std::fs::remove_file(&a);
                let _ = std::fs::remove_file(&b);
            }
        }
    }
}
