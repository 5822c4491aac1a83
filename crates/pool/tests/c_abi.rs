//! The C ABI, from C: `tests/c/quicksort.c` and `tests/c/abi.c` are compiled with `cc` against
//! `include/sched.h` and linked with this crate's static library (`libfugue_pool.a`, built for
//! the test's profile), then run under every policy. Fails with a clear message when `cc` is
//! missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use fugue_pool::Policy;

/// The elements the quicksort runs sort: the program's full size (28 runs, some seconds in all
/// on two cores).
const N: &str = "10000000";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `libfugue_pool.a` of the profile that built this test (`<target>/<profile>/`, beside the
/// test executable's `deps/`). `cargo test` builds the library as an rlib only, so the
/// static library is built here, once per test process, with the same cargo, target folder
/// and profile (a no-op when it is fresh).
fn static_lib() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test's own path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test runs from <target>/<profile>/deps");
        let target_dir = profile_dir.parent().expect("<target>/<profile>");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev".to_owned(),
            Some(p) => p.to_owned(),
            None => panic!("no profile folder in {}", profile_dir.display()),
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "fugue-pool", "--lib", "--profile", &profile])
            .env("CARGO_TARGET_DIR", target_dir)
            .status()
            .expect("run cargo to build the static library");
        assert!(status.success(), "cargo could not build libfugue_pool.a");
        let lib = profile_dir.join("libfugue_pool.a");
        assert!(lib.exists(), "{} is missing after the build", lib.display());
        lib
    })
    .clone()
}

/// Compiles `tests/c/<name>.c` into the test's temporary folder.
fn compile(name: &str) -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fugue-pool-{name}"));
    let src = crate_dir().join("tests/c").join(format!("{name}.c"));
    let status = Command::new("cc")
        .args(["-O2", "-Wall", "-Wextra", "-std=gnu11", "-I"])
        .arg(crate_dir().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap_or_else(|e| {
            panic!("could not run the C compiler `cc` ({e}): install gcc or clang to run the C ABI tests")
        });
    assert!(status.success(), "cc failed to compile {}", src.display());
    out
}

#[test]
fn quicksort_in_c_sorts_under_every_policy_and_thread_count() {
    let exe = compile("quicksort");
    for p in Policy::ALL {
        for threads in ["1", "2", "4", "0"] {
            let out = Command::new(&exe)
                .args(["-n", N, "-t", threads])
                .env("FUGUE_POOL_POLICY", p.name())
                .output()
                .expect("run quicksort");
            assert!(
                out.status.success(),
                "quicksort failed under {p} with {threads} threads: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // A small queue: spawns find it full and the spawner sorts the half itself.
    let out = Command::new(&exe)
        .args(["-n", "200000", "-t", "2", "-q", "2"])
        .output()
        .expect("run quicksort");
    assert!(out.status.success(), "{out:?}");
    // The serial baseline sorts too.
    let out = Command::new(&exe)
        .args(["-n", "200000", "-s"])
        .output()
        .expect("run quicksort");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn abi_errors_full_queue_foreign_threads_and_repeated_init() {
    let exe = compile("abi");
    for p in Policy::ALL {
        let out = Command::new(&exe)
            .env("FUGUE_POOL_POLICY", p.name())
            .output()
            .expect("run abi");
        assert!(
            out.status.success(),
            "abi checks failed under {p}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn an_unknown_policy_fails_with_einval_and_one_sentence_on_stderr() {
    let exe = compile("quicksort");
    let out = Command::new(&exe)
        .args(["-n", "1000"])
        .env("FUGUE_POOL_POLICY", "work-stealing")
        .output()
        .expect("run quicksort");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("work-stealing") && err.contains("steal-backoff-shared"),
        "{err}"
    );
    assert!(err.contains("Invalid argument"), "errno EINVAL: {err}");
}
