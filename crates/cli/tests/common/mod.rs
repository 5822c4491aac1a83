//! Helpers shared by the command-line tests: run the binary, read its output, find the
//! examples, make a fresh folder.

// Each test binary uses its own subset of these.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};

/// The test-only variable that breaks an executor on purpose (`fugue_exec::fault`).
pub const FAULT_VAR: &str = "FUGUE_TEST_FAULT";

/// Runs the `fugue` binary with `args` and waits for it (never with a fault injected, even
/// if the test's own environment holds one).
pub fn fugue(args: &[&str]) -> Output {
    fugue_with_fault(args, None)
}

/// Runs the `fugue` binary with `args`, with [`FAULT_VAR`] set to `fault` when given.
pub fn fugue_with_fault(args: &[&str], fault: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
    c.args(args).env_remove(FAULT_VAR);
    if let Some(f) = fault {
        c.env(FAULT_VAR, f);
    }
    c.output().expect("run fugue")
}

/// The standard output of a run, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
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

/// Says that `test` was skipped and why, on the real standard error (not captured by the test
/// harness, so a skip shows in every run).
pub fn skip(test: &str, why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Whether this machine gives the process one core (or one core's worth of time): then
/// `test`, which needs two threads running at once, is skipped, and says so.
pub fn one_core(test: &str) -> bool {
    let one = fugue_exec::placement::available_cores() < 2;
    if one {
        skip(test, "one core, where no two threads run at once");
    }
    one
}

/// The standard error of `child` (spawned with it piped) read to its end, and its exit
/// status once it has ended.
pub fn stderr_at_exit(child: &mut Child) -> (ExitStatus, String) {
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("standard error piped")
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), err)
}
