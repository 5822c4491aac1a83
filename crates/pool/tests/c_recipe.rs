//! The C build recipe of `docs/pool.md`, followed as written: its one line (with `prog.c` and
//! `prog` replaced by this test's program and output) builds the release library, compiles the
//! program with the flags of `crates/pool/fugue-pool.pc`, and the program runs. The programs
//! include `<pthread.h>` under `_GNU_SOURCE` beside fugue's header, once by its old name
//! (`"sched.h"`) and once by its installed name (`<fugue/sched.h>`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn workspace_root() -> PathBuf {
    crate_dir()
        .parent()
        .and_then(Path::parent)
        .expect("crates/pool is two levels below the workspace root")
        .to_path_buf()
}

/// The one line of the recipe: the `sh` block's line that builds fugue-pool and runs `cc`.
fn recipe() -> String {
    let doc = std::fs::read_to_string(workspace_root().join("docs/pool.md")).expect("docs/pool.md");
    let lines: Vec<&str> = doc
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo build") && l.contains("&& cc "))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "docs/pool.md has one build recipe line: {lines:?}"
    );
    let line = lines[0].to_string();
    assert!(
        line.contains(" prog.c ") && line.contains("-o prog "),
        "the recipe names prog.c and prog: {line}"
    );
    line
}

/// Runs the recipe for `tests/c/<name>.c` from the workspace root, then the program.
fn build_and_run(name: &str) -> String {
    let src = crate_dir().join("tests/c").join(format!("{name}.c"));
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fugue-recipe-{name}"));
    let _ = std::fs::remove_file(&exe);
    let line = recipe()
        .replace(" prog.c ", &format!(" '{}' ", src.display()))
        .replace("-o prog ", &format!("-o '{}' ", exe.display()));
    let out = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(workspace_root())
        // The recipe documents the default target folder.
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap_or_else(|e| panic!("could not run sh ({e})"));
    assert!(
        out.status.success(),
        "the recipe failed for {name} (it needs cargo, cc and pkg-config): {line}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the program");
    assert!(
        run.status.success(),
        "{name} failed: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).into_owned()
}

#[test]
fn the_documented_line_builds_a_pthread_program_that_includes_the_old_header_name() {
    let out = build_and_run("pthread_compat");
    assert!(out.starts_with("compat: sum 50005000 on "), "{out}");
}

#[test]
fn the_documented_line_builds_a_pthread_program_that_includes_fugue_sched_h() {
    let out = build_and_run("pthread_fugue");
    assert!(out.starts_with("fugue: sum 50005000 on "), "{out}");
}

#[test]
fn the_pkg_config_file_carries_the_crate_version() {
    let pc = std::fs::read_to_string(crate_dir().join("fugue-pool.pc")).expect("fugue-pool.pc");
    let version = pc
        .lines()
        .find_map(|l| l.strip_prefix("Version: "))
        .expect("a Version line");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
}
