//! `fugue run`'s length is wall time even when cycles overrun, and a full disk loses the
//! per-cycle file only: the summary is printed and the error names the user's file.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{example, fugue, stderr, stdout};

/// A number after `word ` in `text` (`overruns 12`).
fn number_after(text: &str, word: &str) -> u64 {
    let i = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word} in {text}"))
        + word.len();
    text[i..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// With a one-frame buffer nearly every cycle overruns its 21 µs period; the run still stops
/// when its second is up (it used to run every one of the 48000 cycles, several seconds).
#[test]
fn a_run_with_overruns_stops_on_time() {
    let start = Instant::now();
    let o = fugue(&[
        "run",
        &example("rake.ag"),
        "--backend",
        "clocked",
        "--buffer",
        "1",
        "--seconds",
        "1",
    ]);
    let elapsed = start.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let overruns = number_after(&out, "overruns ");
    let cycles = number_after(&out, "cycles ");
    assert!(cycles <= 48_000, "{out}");
    if overruns == 0 {
        eprintln!("note: no cycle overran on this machine; the bound below held without them");
    }
    // One second asked; the margin covers the start (graph, threads) and the end.
    assert!(
        elapsed < Duration::from_millis(3500),
        "a 1 s run took {elapsed:?} ({overruns} overruns): {out}"
    );
}

/// A small tmpfs, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    /// Mounts a 64 KiB tmpfs on a fresh folder; `None` where that is not permitted.
    fn mount(name: &str) -> Option<SmallDisk> {
        let d = common::folder("run-limits", name);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&d)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk(d))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `run --stats` on a full file system prints its summary and says, naming the user's file
/// (not a temporary one), that the disk is full; nothing is left on the disk.
#[test]
fn a_full_disk_loses_only_the_statistics_file() {
    let Some(disk) = SmallDisk::mount("full") else {
        common::skip(
            "a_full_disk_loses_only_the_statistics_file",
            "cannot mount a tmpfs here (needs root)",
        );
        return;
    };
    let csv = disk.path().join("cycles.csv");
    // 3000 cycles of about 50 bytes each: more than 64 KiB.
    let o = fugue(&[
        "run",
        &example("rake.ag"),
        "--backend",
        "clocked",
        "--buffer",
        "16",
        "--seconds",
        "1",
        "--executor",
        "seq",
        "--stats",
        csv.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(stdout(&o).contains("cycles "), "{}", stdout(&o));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "cannot write the per-cycle statistics to {}",
            csv.display()
        )) && err.contains("the disk is full"),
        "{err}"
    );
    assert!(!err.contains(".part"), "{err}");
    let left: Vec<_> = std::fs::read_dir(disk.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A render on a full file system names the output file and says the disk is full.
#[test]
fn a_full_disk_is_named_for_a_render() {
    let Some(disk) = SmallDisk::mount("render") else {
        common::skip(
            "a_full_disk_is_named_for_a_render",
            "cannot mount a tmpfs here (needs root)",
        );
        return;
    };
    let wav = disk.path().join("out.wav");
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        wav.to_str().unwrap(),
        "--seconds",
        "2",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot write {}", wav.display()))
            && err.contains("the disk is full"),
        "{err}"
    );
    assert!(!err.contains(".part"), "{err}");
    let left: Vec<_> = std::fs::read_dir(disk.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}
