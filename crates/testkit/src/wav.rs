//! WAV files read back in tests.

use std::path::Path;

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
