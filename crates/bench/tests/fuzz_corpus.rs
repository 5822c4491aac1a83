//! Replays the study-spec fuzzing corpus (`fuzz/corpus/study_spec`, kept by
//! `scripts/fuzz.sh`) on stable: every file parses to a spec or an error, never a panic.

use std::path::Path;

#[test]
fn the_study_spec_corpus_parses_without_panic() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/study_spec");
    let mut n = 0;
    let mut specs = 0;
    for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            specs +=
                fugue_bench::study::spec::parse(text, &p.display().to_string()).is_ok() as usize;
        }
        n += 1;
    }
    assert!(n > 0, "{} is empty", d.display());
    // The seeds include the shipped specs, which parse.
    assert!(specs >= 2, "{specs} of {n} files parsed");
}
