//! Test-only fault switches: each breaks one step of one protocol, so that a loom model can be
//! shown to catch the broken variant.
//!
//! A protocol step guarded by `if fault::active("name") { broken } else { correct }` runs the
//! correct code in every build but a loom one: outside loom, [`active`] is the constant
//! `false` and the broken branch is compiled out. Under loom, the switch named by the
//! environment variable `FUGUE_LOOM_FAULT` (read once) is on. A model test proves that it
//! catches a fault by running itself in a child process with the variable set and expecting
//! the model to fail (loom reports a deadlock by aborting the process, which an in-process
//! `should_panic` cannot catch): see `expect_caught` (loom builds only).

/// Whether the fault switch `name` is on (always `false` outside loom builds).
#[inline(always)]
pub fn active(name: &str) -> bool {
    #[cfg(loom)]
    {
        static ON: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        ON.get_or_init(|| std::env::var("FUGUE_LOOM_FAULT").ok())
            .as_deref()
            == Some(name)
    }
    #[cfg(not(loom))]
    {
        let _ = name;
        false
    }
}

/// Runs the test `test` of the current test binary in a child process with the fault switch
/// `fault` on, and panics unless the child fails with `expected` in its output (loom's
/// "deadlock" report, or the panic of a broken assertion or of a causality violation).
/// Returns the line of the child's output that names the failure.
#[cfg(loom)]
pub fn expect_caught(test: &str, fault: &str, expected: &str) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env("FUGUE_LOOM_FAULT", fault)
        .output()
        .expect("cannot run the test binary again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "{test} passed with the fault `{fault}` on: the model does not catch it\n{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains(expected))
        .unwrap_or_else(|| {
            panic!("{test} failed with `{fault}` on, but not with `{expected}`:\n{text}")
        });
    println!("{test} with `{fault}`: {}", line.trim());
    line.trim().to_string()
}
