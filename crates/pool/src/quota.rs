//! The CPU quota of the process's control group (a container's `--cpus`, a systemd unit's
//! `CPUQuota`), in CPUs: cgroup v2's `cpu.max`, or v1's `cpu.cfs_quota_us` over
//! `cpu.cfs_period_us`, the smallest along the group's path up to its hierarchy's root.
//!
//! The standard library's `available_parallelism` reads the same quota but rounds it down
//! (1.5 CPUs give 1): a pool of one thread would then use two thirds of what the process may
//! run. The pool's default rounds it up instead ([`crate::default_threads`]).

use std::path::{Path, PathBuf};

/// The quota in CPUs, when the process's control group has one (`None`: no quota, or none
/// that can be read).
pub(crate) fn cpus() -> Option<f64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut least: Option<f64> = None;
    let mut take = |q: Option<f64>| least = smaller(least, q);
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            take(walk(Path::new("/sys/fs/cgroup"), path, v2));
        } else if controllers.split(',').any(|c| c == "cpu") {
            for mount in ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"] {
                take(walk(Path::new(mount), path, v1));
            }
        }
    }
    least
}

/// The least quota that `read` finds in the folders of `path` under `mount` and above it, up
/// to `mount` (a process in a container sees its group as the hierarchy's root, and the
/// path of /proc/self/cgroup may then name folders that are not there: they are skipped).
fn walk(mount: &Path, path: &str, read: fn(&Path) -> Option<f64>) -> Option<f64> {
    let mut dir: PathBuf = mount.join(path.trim_start_matches('/'));
    let mut least: Option<f64> = None;
    loop {
        least = smaller(least, read(&dir));
        if dir == mount || !dir.pop() || !dir.starts_with(mount) {
            return least;
        }
    }
}

/// The smaller of two quotas, either of which may be none.
fn smaller(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// cgroup v2: `cpu.max` holds `QUOTA PERIOD` (`max PERIOD`: none).
fn v2(dir: &Path) -> Option<f64> {
    parse_v2(&std::fs::read_to_string(dir.join("cpu.max")).ok()?)
}

/// cgroup v1: `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us`.
fn v1(dir: &Path) -> Option<f64> {
    let quota = std::fs::read_to_string(dir.join("cpu.cfs_quota_us")).ok()?;
    let period = std::fs::read_to_string(dir.join("cpu.cfs_period_us")).ok()?;
    ratio(quota.trim(), period.trim())
}

/// The quota of a `cpu.max` file's text.
fn parse_v2(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    ratio(words.next()?, words.next()?)
}

/// `quota / period` in CPUs, when both are positive whole numbers (`max` or `-1`: none).
fn ratio(quota: &str, period: &str) -> Option<f64> {
    let q: u64 = quota.parse().ok().filter(|&q| q > 0)?;
    let p: u64 = period.parse().ok().filter(|&p| p > 0)?;
    Some(q as f64 / p as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_read_as_cpus() {
        assert_eq!(parse_v2("150000 100000\n"), Some(1.5));
        assert_eq!(parse_v2("max 100000\n"), None);
        assert_eq!(parse_v2(""), None);
        assert_eq!(ratio("-1", "100000"), None);
        assert_eq!(ratio("50000", "100000"), Some(0.5));
        assert_eq!(ratio("50000", "0"), None);
    }

    /// The least quota along the path counts, folders missing on the way skipped.
    #[test]
    fn the_least_quota_on_the_path_counts() {
        let root = std::env::temp_dir().join(format!("fugue-quota-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let leaf = root.join("a/b/c");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(root.join("a/cpu.max"), "250000 100000\n").unwrap();
        std::fs::write(root.join("a/b/cpu.max"), "150000 100000\n").unwrap();
        std::fs::write(leaf.join("cpu.max"), "max 100000\n").unwrap();
        assert_eq!(walk(&root, "/a/b/c", v2), Some(1.5));
        assert_eq!(walk(&root, "/a", v2), Some(2.5));
        assert_eq!(walk(&root, "/a/not-here/d", v2), Some(2.5));
        assert_eq!(walk(&root, "/", v2), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
