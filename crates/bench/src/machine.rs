//! The machine a benchmark ran on: CPU model, cores, caches, kernel, load average, and the
//! versions of the tools (commit, compiler, date), for the README of every results folder.

use std::path::Path;

/// One data or unified cache level of cpu0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    /// `L1`, `L2`, ...
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
}

/// What the README of a results folder says about the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The CPU model (`unknown CPU` when not found).
    pub cpu: String,
    /// Cores this process may run on.
    pub cores: usize,
    /// The kernel release (`?` when not found).
    pub kernel: String,
    /// Data and unified caches of cpu0, smallest level first.
    pub caches: Vec<Cache>,
}

impl Machine {
    /// Reads the machine's description (Linux: /proc and /sys; elsewhere mostly unknown).
    pub fn detect() -> Machine {
        Machine {
            cpu: cpu_model().unwrap_or_else(|| "unknown CPU".into()),
            cores: fugue_exec::placement::available_cores(),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|k| k.trim().to_string())
                .ok()
                .or_else(|| command_output("uname", &["-r"]))
                .unwrap_or_else(|| "?".into()),
            caches: caches(),
        }
    }
}

impl std::fmt::Display for Machine {
    /// `CPU, N cores available, kernel K`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {} cores available, kernel {}",
            self.cpu, self.cores, self.kernel
        )
    }
}

fn cpu_model() -> Option<String> {
    let from_proc = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|x| x.trim().to_string())
    });
    from_proc.or_else(|| {
        command_output_all("lscpu", &[])?
            .lines()
            .find_map(|x| x.strip_prefix("Model name:"))
            .map(|s| s.trim().to_string())
    })
}

/// The cache levels of cpu0 (data and unified), from /sys/devices/system/cpu/cpu0/cache.
pub fn caches() -> Vec<Cache> {
    let base = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .collect();
    dirs.sort();
    let mut v = Vec::new();
    for d in dirs {
        let read = |f: &str| {
            std::fs::read_to_string(d.join(f))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        if read("type") == "Instruction" {
            continue;
        }
        if let Some(bytes) = parse_size(&read("size")) {
            v.push(Cache {
                name: format!("L{}", read("level")),
                bytes,
            });
        }
    }
    v
}

/// A size as /sys writes it: `32K`, `1M`, `512`.
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1024 * 1024),
        'G' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The machine's load average (1, 5, 15 minutes), if readable.
pub fn load_average() -> Option<String> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The first line of a command's output, if it ran and succeeded.
pub fn command_output(cmd: &str, args: &[&str]) -> Option<String> {
    command_output_all(cmd, args)?
        .lines()
        .next()
        .map(|l| l.trim().to_string())
}

fn command_output_all(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The versions of what made a measurement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versions {
    /// `git rev-parse HEAD` (`unknown` outside a checkout).
    pub commit: String,
    /// The same, abbreviated.
    pub short_commit: String,
    /// `rustc -V` (`rustc unknown` when not found).
    pub rustc: String,
    /// fugue's version.
    pub fugue: &'static str,
    /// The UTC date and time (`unknown` when `date` is missing).
    pub date: String,
}

impl Versions {
    /// Asks git, rustc and date.
    pub fn detect() -> Versions {
        Versions {
            commit: command_output("git", &["rev-parse", "HEAD"])
                .unwrap_or_else(|| "unknown".into()),
            short_commit: command_output("git", &["rev-parse", "--short", "HEAD"])
                .unwrap_or_else(|| "unknown".into()),
            rustc: command_output("rustc", &["-V"]).unwrap_or_else(|| "rustc unknown".into()),
            fugue: env!("CARGO_PKG_VERSION"),
            date: command_output("date", &["-u", "+%Y-%m-%d %H:%M"])
                .unwrap_or_else(|| "unknown".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_sys_writes_them() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn detect_names_the_cores() {
        let m = Machine::detect();
        assert!(m.cores >= 1);
        assert!(m.to_string().contains("cores available"));
    }
}
