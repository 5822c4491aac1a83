//! The reference corpus: graphs and task sets written by others, in `../shared/data` beside
//! the repository (see its README). Tests use them by path when they are there, and say that
//! they skip when they are not.

use std::path::{Path, PathBuf};

/// The corpus root, `<workspace>/../shared/data`, from a crate's `CARGO_MANIFEST_DIR`
/// (`crates/<name>`).
pub fn root(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir).join("../../../shared/data")
}

/// `root/sub` when it exists; otherwise `None`, after saying on stderr which test skips.
pub fn dir(manifest_dir: &str, sub: &str, test: &str) -> Option<PathBuf> {
    let d = root(manifest_dir).join(sub);
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipped: {test}: the corpus {} is not there", d.display());
        None
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
