//! Helpers shared by the command-line tests: run the binary, read its output, find the
//! examples, make a fresh folder.

// Each test binary uses its own subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `fugue` binary with `args` and waits for it.
pub fn fugue(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .output()
        .expect("run fugue")
}

/// The standard error of a run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The path of `examples/NAME` of the repository.
pub fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A fresh, empty folder `GROUP/NAME` under the test target's temporary folder.
pub fn folder(group: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
