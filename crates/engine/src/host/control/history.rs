//! The shell's history, kept between sessions in the user's state folder.

use std::io::Write as _;
use std::path::PathBuf;

/// Lines the history keeps (the oldest go first).
pub const HISTORY_KEPT: usize = 1000;

/// The most bytes read from the end of the history file: a longer file (written by something
/// else) is read from there and cut to the lines kept.
pub const HISTORY_BYTES: u64 = 1 << 20;

/// The last `max` bytes of the file at `path`, and whether anything before them was left.
fn read_tail(path: &std::path::Path, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let from = len.saturating_sub(max);
    f.seek(SeekFrom::Start(from))?;
    let mut text = Vec::new();
    f.take(max).read_to_end(&mut text)?;
    Ok((text, from > 0))
}

/// Where the history is kept: `$XDG_STATE_HOME/fugue/history`, else
/// `$HOME/.local/state/fugue/history` (`None` when neither is set to an absolute path).
pub fn history_path(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let absolute = |v: Option<&str>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(xdg_state_home)
        .or_else(|| absolute(home).map(|h| h.join(".local/state")))
        .map(|base| base.join("fugue/history"))
}

/// The shell's history file: read at the start (the last [`HISTORY_KEPT`] lines kept),
/// each line appended as it is entered (so that a host stopped any way keeps it). A file
/// that cannot be read or written gives one warning ([`History::take_warning`]); the shell
/// goes on without.
pub struct History {
    path: Option<PathBuf>,
    warning: Option<String>,
}

impl History {
    /// The history at `path` (none: not kept).
    pub fn at(path: Option<PathBuf>) -> History {
        History {
            path,
            warning: None,
        }
    }

    /// The lines kept, oldest first, at most [`HISTORY_KEPT`]; a longer file is cut to them.
    pub fn load(&mut self) -> Vec<String> {
        let Some(path) = self.path.clone() else {
            return Vec::new();
        };
        // Only a regular file: opening a named pipe would wait for a writer, and the shell
        // with it, before its first prompt.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                self.fail("it is a folder");
                return Vec::new();
            }
            Ok(m) if !m.is_file() => {
                self.fail("it is not a regular file (a named pipe or a device)");
                return Vec::new();
            }
            _ => {}
        }
        let (text, cut) = match read_tail(&path, HISTORY_BYTES) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                self.fail(&format!("cannot read it: {e}"));
                return Vec::new();
            }
        };
        let text = String::from_utf8_lossy(&text);
        let lines: Vec<String> = text
            .lines()
            // When cut, the first line read began before the part read.
            .skip(usize::from(cut))
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        let kept = lines[lines.len().saturating_sub(HISTORY_KEPT)..].to_vec();
        if cut || kept.len() < lines.len() {
            let mut text = kept.join("\n");
            text.push('\n');
            if let Err(e) = std::fs::write(&path, text) {
                self.fail(&format!("cannot shorten it: {e}"));
            }
        }
        kept
    }

    /// Appends `line` (a command entered).
    pub fn add(&mut self, line: &str) {
        let Some(path) = &self.path else {
            return;
        };
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() || line.contains('\n') {
            return;
        }
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?;
                writeln!(f, "{line}")
            });
        if let Err(e) = written {
            self.fail(&format!("cannot write it: {e}"));
        }
    }

    /// The warning that the history cannot be kept, once.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }

    /// Keeps the history no more, with a warning.
    fn fail(&mut self, why: &str) {
        if let Some(p) = self.path.take() {
            self.warning = Some(format!(
                "the shell's history {} is not kept: {why}",
                p.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_lives_in_the_state_folder() {
        assert_eq!(
            history_path(Some("/s"), Some("/h")),
            Some(PathBuf::from("/s/fugue/history"))
        );
        assert_eq!(
            history_path(None, Some("/h")),
            Some(PathBuf::from("/h/.local/state/fugue/history"))
        );
        assert_eq!(
            history_path(Some("relative"), Some("/h")),
            Some(PathBuf::from("/h/.local/state/fugue/history"))
        );
        assert_eq!(history_path(None, None), None);
    }

    #[test]
    fn the_history_is_written_bounded_and_read_back() {
        let d = std::env::temp_dir().join(format!("fugue-shell-history-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let path = d.join("state/fugue/history");
        let mut h = History::at(Some(path.clone()));
        assert!(h.load().is_empty());
        h.add("load a examples/pluck.ag");
        h.add("   ");
        h.add("wait 1\n");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "load a examples/pluck.ag\nwait 1\n"
        );
        assert_eq!(
            History::at(Some(path.clone())).load(),
            ["load a examples/pluck.ag", "wait 1"]
        );
        // A longer file is cut to the last lines kept.
        let many: String = (0..HISTORY_KEPT + 5)
            .map(|i| format!("wait {i}\n"))
            .collect();
        std::fs::write(&path, many).unwrap();
        let kept = History::at(Some(path.clone())).load();
        assert_eq!(kept.len(), HISTORY_KEPT);
        assert_eq!(kept[0], "wait 5");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap().lines().count(),
            HISTORY_KEPT
        );
        // A file of gigabytes (sparse here) is read from its last HISTORY_BYTES only, its
        // first partial line dropped, and cut to the lines after it.
        {
            let f = std::fs::File::create(&path).unwrap();
            f.set_len(3 << 30).unwrap();
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(b"\nlist\nwait 2\n").unwrap();
        }
        let kept = History::at(Some(path.clone())).load();
        assert_eq!(kept.len(), 2, "{:?}", &kept[..kept.len().min(3)]);
        assert_eq!(kept, ["list", "wait 2"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "list\nwait 2\n");
        // A history that cannot be written: said once, then no more tried.
        let blocked = d.join("file");
        std::fs::write(&blocked, "").unwrap();
        let mut h = History::at(Some(blocked.join("history")));
        h.add("list");
        assert!(h.path.is_none());
        let w = h.take_warning().expect("one warning");
        assert!(w.contains("is not kept: cannot write it"), "{w}");
        h.add("list");
        assert_eq!(h.take_warning(), None);
        // A named pipe or a folder at the history's path: said, never opened (a pipe's open
        // would wait for a writer, the shell with it).
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for (path, why) in [
            (fifo, "it is not a regular file (a named pipe or a device)"),
            (d.clone(), "it is a folder"),
        ] {
            let mut h = History::at(Some(path));
            assert!(h.load().is_empty());
            assert!(h.path.is_none());
            let w = h.take_warning().expect("one warning");
            assert!(w.ends_with(&format!("is not kept: {why}")), "{w}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
