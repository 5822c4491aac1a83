//! WAV files read back in tests.

use std::path::Path;

/// Writes a 16-bit WAV file of `channels` channels at 48 kHz, `frames` frames, interleaved
/// sample `k` being `sample(k)`. Panics (failing the test) when it cannot be written.
pub fn write_i16(path: &Path, channels: u16, frames: usize, mut sample: impl FnMut(usize) -> i16) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    for k in 0..frames * usize::from(channels) {
        w.write_sample(sample(k)).unwrap();
    }
    w.finalize().unwrap();
}

/// The channels of the 32-bit float WAV file at `path`, each a vector of samples. Panics
/// (failing the test) when the file cannot be read or is not float.
pub fn channels(path: &Path) -> Vec<Vec<f32>> {
    let r = hound::WavReader::open(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let ch = r.spec().channels as usize;
    let s: Vec<f32> = r.into_samples::<f32>().map(|x| x.unwrap()).collect();
    (0..ch)
        .map(|c| s.iter().skip(c).step_by(ch).copied().collect())
        .collect()
}
