//! Replays the fuzzing corpus of the graph readers (`fuzz/corpus/{ag,stg,dot}`, kept by
//! `scripts/fuzz.sh`) on stable: every file is read, an error or a graph, never a panic.

use std::path::Path;

use fugue_graph::read::read_bytes;
use fugue_graph::Format;

fn replay(dir: &str, format: Format) {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(dir);
    let mut n = 0;
    for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let _ = read_bytes(&bytes, format, &p.display().to_string());
        n += 1;
    }
    assert!(n > 0, "{} is empty", d.display());
}

#[test]
fn the_ag_corpus_reads_without_panic() {
    replay("ag", Format::Ag);
}

#[test]
fn the_stg_corpus_reads_without_panic() {
    replay("stg", Format::Stg);
}

#[test]
fn the_dot_corpus_reads_without_panic() {
    replay("dot", Format::Dot);
}
