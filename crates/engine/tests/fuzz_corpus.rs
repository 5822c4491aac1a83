//! Replays the fuzzing corpus of the WAV-input reader (`fuzz/corpus/wav`, kept by
//! `scripts/fuzz.sh`) on stable: an error or the channels, never a panic.

use std::path::Path;

#[test]
fn the_wav_corpus_reads_without_panic() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/wav");
    let mut n = 0;
    for e in std::fs::read_dir(&d).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        let _ = fugue_engine::read_wav(&bytes[..], 48_000);
        n += 1;
    }
    assert!(n > 0);
}

/// The host's command parser on the corpus of `fuzz/corpus/host_command`: a command or one
/// line of error, never a panic.
#[test]
fn the_host_command_corpus_parses_without_panic() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/host_command");
    let mut n = 0;
    for e in std::fs::read_dir(&d).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines() {
            if let Err(msg) = fugue_engine::host::command::parse(line) {
                assert!(!msg.contains('\n'), "{msg}");
            }
        }
        n += 1;
    }
    assert!(n > 0);
}
