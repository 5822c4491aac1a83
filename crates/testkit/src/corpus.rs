//! The reference corpus: graphs and task sets written by others, in `../shared/data` beside
//! the repository (see its README). Tests use them by path when they are there. When they are
//! not, a test skips visibly: it says so on stderr and appends its name to the file named by
//! `FUGUE_SKIP_LOG` (`scripts/test.sh` counts and prints them at the end). With
//! `FUGUE_REQUIRE_CORPUS=1` a missing corpus fails the test instead.

use std::path::{Path, PathBuf};

/// The corpus root, `<workspace>/../shared/data`, from a crate's `CARGO_MANIFEST_DIR`
/// (`crates/<name>`).
pub fn root(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir).join("../../../shared/data")
}

/// `root/sub` when it exists (a folder or a file); otherwise `None`, after [`skip`].
pub fn dir(manifest_dir: &str, sub: &str, test: &str) -> Option<PathBuf> {
    let d = root(manifest_dir).join(sub);
    if d.exists() {
        Some(d)
    } else {
        skip(test, &d);
        None
    }
}

/// Records that `test` skips because `missing` is not there: a line on stderr and one in the
/// `FUGUE_SKIP_LOG` file. Panics instead when `FUGUE_REQUIRE_CORPUS` is set to anything but
/// `0` or nothing.
#[track_caller]
pub fn skip(test: &str, missing: &Path) {
    if std::env::var("FUGUE_REQUIRE_CORPUS").is_ok_and(|v| !v.is_empty() && v != "0") {
        panic!(
            "{test}: the corpus {} is not there, and FUGUE_REQUIRE_CORPUS is set",
            missing.display()
        );
    }
    eprintln!(
        "skipped: {test}: the corpus {} is not there",
        missing.display()
    );
    if let Some(log) = std::env::var_os("FUGUE_SKIP_LOG") {
        use std::io::Write as _;
        // One short line per skip; O_APPEND keeps concurrent test processes' lines whole.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "{test}");
        }
    }
}

/// Every file under `dir` (recursively) whose name ends with `.ext`, sorted.
pub fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
