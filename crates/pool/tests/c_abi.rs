//! The C ABI, from C: `tests/c/quicksort.c` and `tests/c/abi.c` are compiled with `cc` against
//! `include/sched.h` and linked with this crate's static library (`libfugue_pool.a`, built for
//! the test's profile), then run under every policy. Fails with a clear message when `cc` is
//! missing.

use std::path::PathBuf;
use std::process::Command;

use fugue_pool::Policy;

/// The elements the quicksort runs sort: the program's full size (28 runs, some seconds in all
/// on two cores).
const N: &str = "10000000";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `libfugue_pool.a` of the build that produced this test: in the test executable's own
/// `deps/` folder (where `cargo test` leaves it), or in the profile folder above it (where
/// `cargo build` copies it).
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let deps = exe
        .parent()
        .expect("the test runs from <target>/<profile>/deps");
    let candidates = [
        deps.join("libfugue_pool.a"),
        deps.parent()
            .map_or_else(PathBuf::new, |p| p.join("libfugue_pool.a")),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "libfugue_pool.a is missing from {}: build the crate (`cargo build -p fugue-pool`) so that its staticlib exists",
                deps.display()
            )
        })
}

/// Compiles `tests/c/<name>.c` into the test's temporary folder, under a name of the calling
/// thread's (tests that compile one program run side by side: neither runs the other's
/// half-written binary).
fn compile(name: &str) -> PathBuf {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("main").replace("::", "-");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fugue-pool-{name}-{test}"));
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
fn the_errnos_hold_when_standard_error_cannot_be_written() {
    // The refusals' sentences go nowhere (/dev/full); the errnos are the documented ones,
    // not EIO.
    let exe = compile("abi");
    for p in Policy::ALL {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full");
        let out = Command::new(&exe)
            .env("FUGUE_POOL_POLICY", p.name())
            .stderr(full)
            .output()
            .expect("run abi");
        assert!(out.status.success(), "abi checks failed under {p}: {out:?}");
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

#[test]
fn the_header_builds_as_c89_c99_c11_and_cpp_without_warnings_and_an_empty_policy_is_the_default() {
    // A program of the header only (sched_default_threads, sched_init), under the strictest
    // flags of old and new courses, as C and as C++.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("fugue-pool-header.c");
    std::fs::write(
        &src,
        "#include <fugue/sched.h>\n\
         static void t(void *c, struct scheduler *s) { (void)s; *(int *)c = 1; }\n\
         int main(void) { int x = 0; if (sched_default_threads() <= 0) return 1;\n\
         return sched_init(2, 4, t, &x) == 0 && x == 1 ? 0 : 1; }\n",
    )
    .unwrap();
    let strict = ["-pedantic", "-Wall", "-Wextra", "-Wconversion", "-Werror"];
    for (compiler, lang) in [
        ("cc", "-std=c89"),
        ("cc", "-std=c99"),
        ("cc", "-std=c11"),
        ("c++", "-std=c++98"),
        ("c++", "-std=c++17"),
    ] {
        let exe = dir.join(format!(
            "fugue-pool-header-{}",
            lang.trim_start_matches("-std=")
        ));
        let mut c = Command::new(compiler);
        if compiler == "c++" {
            c.args(["-x", "c++"]);
        }
        c.arg(lang)
            .args(strict)
            .arg("-I")
            .arg(crate_dir().join("include"))
            .arg(&src);
        if compiler == "c++" {
            c.args(["-x", "none"]);
        }
        let out = c
            .arg("-o")
            .arg(&exe)
            .arg(static_lib())
            .args(["-lpthread", "-ldl", "-lm"])
            .output()
            .unwrap_or_else(|e| panic!("could not run `{compiler}` ({e})"));
        assert!(
            out.status.success(),
            "{compiler} {lang}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe)
            .env("FUGUE_POOL_POLICY", "")
            .output()
            .unwrap();
        assert!(run.status.success(), "{compiler} {lang}: {run:?}");
    }
}

/// A policy name with blanks around it is the policy (`FUGUE_POOL_POLICY=" steal"` from a
/// quoted shell line), and the default thread count refused by RLIMIT_NPROC is said as the
/// default's, not as a count the program passed.
#[test]
fn a_padded_policy_name_is_read_and_a_refused_default_count_says_so() {
    let exe = compile("quicksort");
    let out = Command::new(&exe)
        .args(["-n", "1000"])
        .env("FUGUE_POOL_POLICY", " steal\t")
        .output()
        .expect("run quicksort");
    assert!(out.status.success(), "{out:?}");
    // One thread allowed; the default asks for one per core (at least 2 where the test
    // runs on more than one core).
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return;
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -u 1 && exec '{}' -n 1000 -t 0",
            exe.display()
        ))
        .output()
        .expect("run quicksort");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("sched_init: nthreads 0 asks for one thread per core")
            && err.contains("RLIMIT_NPROC")
            && err.contains("Invalid argument"),
        "{err}"
    ); // As many threads as the limit: the calling thread counts too, so they cannot all start.
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -u 3 && exec '{}' -n 1000 -t 3",
            exe.display()
        ))
        .output()
        .expect("run quicksort");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(
            "3 threads requested, more than the limit of 2 (RLIMIT_NPROC, less the calling thread)"
        ),
        "{err}"
    );
}

/// Compiles the C program `text` (C99, warnings as errors) against the header and the static
/// library, into the test's temporary folder as `name`.
fn compile_text(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, text).unwrap();
    let exe = dir.join(name);
    let status = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-I"])
        .arg(crate_dir().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed to compile {}", src.display());
    exe
}

/// `sched_default_threads()` is the count `sched_init(0, ...)` starts, the cores the process
/// may use: the test's own count, and 1 under `taskset -c 0` (not the cores online).
#[test]
fn the_default_thread_count_is_the_cores_the_process_may_use() {
    let exe = compile_text(
        "fugue-pool-default-threads",
        "#include <stdio.h>\n#include <fugue/sched.h>\n\
         int main(void) { printf(\"%d\\n\", sched_default_threads()); return 0; }\n",
    );
    let count = |cmd: &mut Command| -> usize {
        let out = cmd.output().expect("run the program");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    assert_eq!(
        count(&mut Command::new(&exe)),
        fugue_pool::default_threads()
    );
    if fugue_pool::default_threads() >= 2 && on_path("taskset") {
        assert_eq!(
            count(Command::new("taskset").args(["-c", "0"]).arg(&exe)),
            1
        );
    }
}

/// A C program keeps SIGPIPE's default action: with its standard error a pipe nobody reads,
/// the sentence of a refused call is lost, but the call still returns -1 with its errno
/// (the write does not end the process), and a SIGPIPE already pending stays pending.
#[test]
fn a_refusal_said_to_a_closed_pipe_still_returns_its_errno() {
    let exe = compile_text(
        "fugue-pool-closed-stderr",
        "#define _POSIX_C_SOURCE 200809L\n\
         #include <errno.h>\n#include <signal.h>\n#include <unistd.h>\n#include <fugue/sched.h>\n\
         static void nop(void *c, struct scheduler *s) { (void)c; (void)s; }\n\
         int main(void) {\n\
           int p[2]; sigset_t set, pending; int r1, e1, r2, e2;\n\
           if (pipe(p) != 0) return 10;\n\
           close(p[0]); dup2(p[1], 2); close(p[1]);\n\
           errno = 0; r1 = sched_init(2, 0, nop, 0); e1 = errno;\n\
           errno = 0; r2 = sched_spawn(0, 0, 0); e2 = errno;\n\
           if (r1 != -1 || e1 != EINVAL) return 11;\n\
           if (r2 != -1 || e2 != EINVAL) return 12;\n\
           /* A SIGPIPE of the program's own, blocked and pending, is left to it. */\n\
           sigemptyset(&set); sigaddset(&set, SIGPIPE);\n\
           sigprocmask(SIG_BLOCK, &set, 0); raise(SIGPIPE);\n\
           sched_init(2, 0, nop, 0);\n\
           sigpending(&pending);\n\
           return sigismember(&pending, SIGPIPE) == 1 ? 0 : 13;\n\
         }\n",
    );
    let out = Command::new(&exe).output().expect("run the program");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// Whether `cmd` is on the `PATH`.
fn on_path(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd} >/dev/null"))
        .status()
        .is_ok_and(|s| s.success())
}

/// The former header copied beside the program, which includes it as `"sched.h"` before any
/// system header and is built with `-I.` (its own folder first on the search path): the
/// system's `<sched.h>` is still read (`struct sched_param`, `cpu_set_t` from `<pthread.h>` under `_GNU_SOURCE`), and
/// fugue's declarations with it.
#[test]
fn the_former_header_beside_the_program_still_reads_the_systems() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fugue-pool-beside");
    std::fs::create_dir_all(dir.join("fugue")).unwrap();
    std::fs::copy(crate_dir().join("include/sched.h"), dir.join("sched.h")).unwrap();
    std::fs::copy(
        crate_dir().join("include/fugue/sched.h"),
        dir.join("fugue/sched.h"),
    )
    .unwrap();
    std::fs::write(
        dir.join("beside.c"),
        "#define _GNU_SOURCE\n#include \"sched.h\"\n#include <pthread.h>\n\
         static void t(void *c, struct scheduler *s) { (void)s; *(int *)c = 1; }\n\
         int main(void) { struct sched_param sp; cpu_set_t set; int x = 0;\n\
         CPU_ZERO(&set); sp.sched_priority = 0; (void)sp; (void)sched_yield();\n\
         return sched_init(2, 4, t, &x) == 0 && x == 1 ? 0 : 1; }\n",
    )
    .unwrap();
    let out = Command::new("cc")
        .current_dir(&dir)
        .args([
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            "-I.",
        ])
        .args(["beside.c", "-o", "beside"])
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.join("beside")).output().unwrap();
    assert!(run.status.success(), "{run:?}");
}
