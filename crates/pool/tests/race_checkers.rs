//! Race checkers on a C program of the pool: `tests/c/handover.c`, whose accesses are all
//! ordered by the pool's guarantees, gets no report from ThreadSanitizer (every policy) nor
//! from Helgrind and DRD (with `valgrind.supp`); its `-r` run, which adds a real race between
//! tasks, gets one from each. Each checker that this machine lacks (gcc's `libtsan`,
//! `valgrind`) is skipped with a line on standard error, unless `FUGUE_REQUIRE_CHECKERS` is
//! set (CI), where that fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fugue_pool::Policy;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The library file `name` of the build that produced this test: in the test executable's own
/// `deps/` folder, or in the profile folder above it.
fn library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let deps = exe
        .parent()
        .expect("the test runs from <target>/<profile>/deps");
    [
        deps.to_path_buf(),
        deps.parent().unwrap_or(deps).to_path_buf(),
    ]
    .iter()
    .map(|d| d.join(name))
    .find(|p| p.exists())
    .unwrap_or_else(|| {
        panic!(
            "{name} is missing from {}: build the crate (`cargo build -p fugue-pool`)",
            deps.display()
        )
    })
}

/// A checker this machine lacks: skipped, or a failure under `FUGUE_REQUIRE_CHECKERS`.
fn missing(test: &str, why: &str) {
    assert!(
        std::env::var_os("FUGUE_REQUIRE_CHECKERS").is_none(),
        "{test}: FUGUE_REQUIRE_CHECKERS is set, but {why}"
    );
    eprintln!("SKIPPED {test}: {why}");
}

/// Compiles `tests/c/handover.c` into `out` with the extra arguments `args` (the library
/// among them); `Err` with the compiler's words when it fails.
fn compile(out: &Path, args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let o = Command::new("cc")
        .args(["-g", "-O1", "-Wall", "-Wextra", "-I"])
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/c/handover.c"))
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .map_err(|e| format!("could not run the C compiler `cc` ({e})"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

fn run(program: &Path, args: &[&str], policy: Policy) -> Output {
    Command::new(program)
        .args(args)
        .env("FUGUE_POOL_POLICY", policy.name())
        .output()
        .expect("the program runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn thread_sanitizer_sees_the_pools_hand_overs() {
    let test = "thread_sanitizer_sees_the_pools_hand_overs";
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fugue-pool-handover-tsan");
    let lib = library("libfugue_pool.a");
    let args = [
        "-fsanitize=thread".as_ref(),
        lib.as_os_str(),
        "-lpthread".as_ref(),
        "-ldl".as_ref(),
        "-lm".as_ref(),
    ];
    if let Err(e) = compile(&exe, &args) {
        return missing(
            test,
            &format!("`cc -fsanitize=thread` cannot build a program here: {e}"),
        );
    }
    for policy in Policy::ALL {
        let o = run(&exe, &[], policy);
        let e = text(&o);
        if e.contains("FATAL: ThreadSanitizer") {
            // Its runtime refuses this system's memory layout (some kernels' address
            // randomisation), before the program starts.
            return missing(test, &format!("ThreadSanitizer cannot run here: {e}"));
        }
        assert!(o.status.success(), "{policy:?}: {e}");
        assert!(!e.contains("WARNING: ThreadSanitizer"), "{policy:?}: {e}");
    }
    let o = run(&exe, &["-r"], Policy::Steal);
    let e = text(&o);
    assert!(
        e.contains("WARNING: ThreadSanitizer: data race") && e.contains("handover.c"),
        "{e}"
    );
}

#[test]
fn helgrind_and_drd_see_the_pools_hand_overs() {
    let test = "helgrind_and_drd_see_the_pools_hand_overs";
    if Command::new("valgrind").arg("--version").output().is_err() {
        return missing(test, "valgrind is not installed");
    }
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fugue-pool-handover-valgrind");
    let lib = library("libfugue_pool.so");
    let dir = lib.parent().expect("a folder");
    let mut rpath = std::ffi::OsString::from("-Wl,-rpath,");
    rpath.push(dir);
    let args = [lib.as_os_str(), rpath.as_os_str()];
    compile(&exe, &args).unwrap_or_else(|e| panic!("cc: {e}"));
    let supp = crate_dir().join("valgrind.supp");
    let valgrind = |tool: &str, args: &[&str], policy: Policy| {
        Command::new("valgrind")
            .arg(format!("--tool={tool}"))
            .arg(format!("--suppressions={}", supp.display()))
            .arg("--error-exitcode=99")
            .arg(&exe)
            .args(args)
            .env("FUGUE_POOL_POLICY", policy.name())
            .output()
            .expect("valgrind runs")
    };
    for tool in ["helgrind", "drd"] {
        for policy in [Policy::Steal, Policy::LifoSpin, Policy::StealMutex] {
            let o = valgrind(tool, &[], policy);
            let e = text(&o);
            assert_eq!(o.status.code(), Some(0), "{tool}, {policy:?}: {e}");
            assert!(
                e.contains("ERROR SUMMARY: 0 errors"),
                "{tool}, {policy:?}: {e}"
            );
        }
        let o = valgrind(tool, &["-r"], Policy::Steal);
        let e = text(&o);
        assert_eq!(o.status.code(), Some(99), "{tool}: {e}");
        assert!(e.contains("task (handover.c"), "{tool}: {e}");
    }
}
