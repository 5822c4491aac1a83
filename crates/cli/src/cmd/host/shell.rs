//! The host's interactive shell on a terminal: Tab completion of commands, graph names and
//! graph files ([`complete`]), and a history kept between sessions ([`History`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fugue_engine::host::command::COMMANDS;
use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;

/// The names of the graphs loaded, as the control loop last saw them (for completion).
pub(crate) type Names = Arc<Mutex<Vec<String>>>;

/// Lines the history keeps (the oldest go first).
pub(crate) const HISTORY_KEPT: usize = 1000;

/// The file extensions of graph files, which `load` completes.
const GRAPH_EXTENSIONS: &[&str] = &["ag", "stg", "dot"];

/// The completions of the word under the cursor at byte `pos` of `line`: where the word
/// starts, and the words that may replace it. The first word completes to a command; the
/// second to a graph name (`unload`, `gain`, `stats`; from `names`) or a command (`help`);
/// the third of `load` to a graph file (`.ag`, `.stg`, `.dot`) or a folder, looked up
/// from the current folder. Words are read as the command line reads them: a word in double
/// quotes may hold spaces (`load a "my graphs/x.ag"`), and a file whose path needs quotes is
/// offered quoted ([`fugue_engine::host::command::quote`]).
pub(crate) fn complete(line: &str, pos: usize, names: &[String]) -> (usize, Vec<String>) {
    let before = &line[..pos.min(line.len())];
    let (start, word) = current_word(before);
    let word = word.as_str();
    let done_words = fugue_engine::host::command::words(&before[..start]).unwrap_or_default();
    let done: Vec<&str> = done_words.iter().map(String::as_str).collect();
    let starting = |options: &mut dyn Iterator<Item = &str>| -> Vec<String> {
        let mut v: Vec<String> = options
            .filter(|o| o.starts_with(word))
            .map(str::to_string)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let verbs = || COMMANDS.iter().map(|(v, _)| *v).chain(["exit"]);
    let found = match (done.as_slice(), done.len()) {
        ([], _) => starting(&mut verbs()),
        (["help" | "?"], 1) => starting(&mut verbs()),
        (["unload" | "gain" | "stats" | "set"], 1) => {
            starting(&mut names.iter().map(String::as_str))
        }
        (["load", _], 2) => files(word)
            .iter()
            .map(|f| fugue_engine::host::command::quote(&[f]))
            .collect(),
        _ => Vec::new(),
    };
    (start, found)
}

/// Where the word under the cursor starts in `before` (the line up to the cursor), and its
/// text: a word that opens a double quote is read as the command line reads it
/// ([`fugue_engine::host::command::words`]), its quote closed first when the cursor is still
/// inside it; other words as they are.
fn current_word(before: &str) -> (usize, String) {
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in before.char_indices() {
        if escaped {
            escaped = false;
        } else if quoted && c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if !quoted && c.is_whitespace() {
            start = i + c.len_utf8();
        }
    }
    let raw = &before[start..];
    if !raw.starts_with('"') {
        return (start, raw.to_string());
    }
    let closed = if quoted {
        format!("{raw}\"")
    } else {
        raw.to_string()
    };
    let text = fugue_engine::host::command::words(&closed)
        .ok()
        .and_then(|w| w.into_iter().next())
        .unwrap_or_default();
    (start, text)
}

/// The graph files and folders whose path starts with `word` (relative to the current
/// folder unless absolute); folders end with `/`; hidden ones only when `word` names them.
fn files(word: &str) -> Vec<String> {
    let (dir, prefix) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = e.path().is_dir();
            let is_graph = Path::new(&name)
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| GRAPH_EXTENSIONS.contains(&x));
            match (is_dir, is_graph) {
                (true, _) => Some(format!("{dir}{name}/")),
                (false, true) => Some(format!("{dir}{name}")),
                _ => None,
            }
        })
        .collect();
    out.sort();
    out
}

/// The line editor's helper: completion (no hints, no colours, no validation).
pub(crate) struct ShellHelper {
    /// The graphs loaded.
    pub(crate) names: Names,
}

impl Completer for ShellHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        Ok(complete(line, pos, &names))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

impl rustyline::Helper for ShellHelper {}

/// Where the history is kept: `$XDG_STATE_HOME/fugue/history`, else
/// `$HOME/.local/state/fugue/history` (`None` when neither is set to an absolute path).
pub(crate) fn history_path(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let absolute = |v: Option<&str>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(xdg_state_home)
        .or_else(|| absolute(home).map(|h| h.join(".local/state")))
        .map(|base| base.join("fugue/history"))
}

/// The shell's history file: read at the start (the last [`HISTORY_KEPT`] lines kept),
/// each line appended as it is entered (so that a host stopped any way keeps it). A file
/// that cannot be read or written is said once, as a warning; the shell goes on without.
pub(crate) struct History {
    path: Option<PathBuf>,
}

impl History {
    /// The history at `path` (none: not kept).
    pub(crate) fn at(path: Option<PathBuf>) -> History {
        History { path }
    }

    /// The lines kept, oldest first, at most [`HISTORY_KEPT`]; a longer file is cut to them.
    pub(crate) fn load(&mut self) -> Vec<String> {
        let Some(path) = self.path.clone() else {
            return Vec::new();
        };
        let text = match std::fs::read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                self.fail(&format!("cannot read it: {e}"));
                return Vec::new();
            }
        };
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        let kept = lines[lines.len().saturating_sub(HISTORY_KEPT)..].to_vec();
        if kept.len() < lines.len() {
            let mut text = kept.join("\n");
            text.push('\n');
            if let Err(e) = std::fs::write(&path, text) {
                self.fail(&format!("cannot shorten it: {e}"));
            }
        }
        kept
    }

    /// Appends `line` (a command entered).
    pub(crate) fn add(&mut self, line: &str) {
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

    /// Says once that the history cannot be kept, and keeps it no more.
    fn fail(&mut self, why: &str) {
        if let Some(p) = self.path.take() {
            crate::util::warning(format_args!(
                "the shell's history {} is not kept: {why}",
                p.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["pluck".into(), "synth".into(), "pad".into()]
    }

    #[test]
    fn commands_complete_first() {
        assert_eq!(complete("lo", 2, &[]), (0, vec!["load".to_string()]));
        assert_eq!(
            complete("  s", 3, &[]),
            (2, vec!["set".to_string(), "stats".to_string()])
        );
        assert_eq!(complete("  st", 4, &[]), (2, vec!["stats".to_string()]));
        let (_, all) = complete("", 0, &[]);
        assert!(all.contains(&"quit".to_string()) && all.contains(&"exit".to_string()));
        assert_eq!(complete("zz", 2, &[]).1, Vec::<String>::new());
        assert_eq!(complete("help u", 6, &[]), (5, vec!["unload".to_string()]));
    }

    #[test]
    fn graph_names_complete_after_the_commands_that_take_one() {
        let n = names();
        assert_eq!(
            complete("unload p", 8, &n),
            (7, vec!["pad".to_string(), "pluck".to_string()])
        );
        assert_eq!(complete("gain sy", 7, &n).1, ["synth"]);
        assert_eq!(complete("stats ", 6, &n).1.len(), 3);
        // `load` takes a new name: nothing to complete; nor after the name of `gain`.
        assert!(complete("load p", 6, &n).1.is_empty());
        assert!(complete("gain pad -", 10, &n).1.is_empty());
        // The cursor inside the line: the word up to it.
        assert_eq!(complete("unload s extra", 8, &n).1, ["synth"]);
    }

    #[test]
    fn load_completes_graph_files_and_folders() {
        let d = std::env::temp_dir().join(format!("fugue-shell-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        for f in ["a.ag", "ab.stg", "b.dot", "notes.txt", ".hidden.ag"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let base = format!("{}/", d.display());
        let line = format!("load x {base}");
        let (start, got) = complete(&line, line.len(), &[]);
        assert_eq!(start, 7);
        let want: Vec<String> = ["a.ag", "ab.stg", "b.dot", "sub/"]
            .iter()
            .map(|f| format!("{base}{f}"))
            .collect();
        assert_eq!(got, want);
        let line = format!("load x {base}a");
        assert_eq!(complete(&line, line.len(), &[]).1, want[..2]);
        let line = format!("load x {base}.h");
        assert_eq!(
            complete(&line, line.len(), &[]).1,
            [format!("{base}.hidden.ag")]
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// File names with spaces are offered quoted, and a quoted word (open or closed)
    /// completes from its unquoted text.
    #[test]
    fn load_quotes_paths_with_spaces() {
        let d = std::env::temp_dir().join(format!("fugue-shell-space-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("my graphs")).unwrap();
        std::fs::write(d.join("my graphs/pad one.ag"), "").unwrap();
        std::fs::write(d.join("plain.ag"), "").unwrap();
        let base = format!("{}/", d.display());
        let line = format!("load x {base}m");
        let (start, got) = complete(&line, line.len(), &[]);
        assert_eq!(start, 7);
        assert_eq!(got, [format!("\"{base}my graphs/\"")]);
        // The completed folder, quoted, then tab again: its files, quoted.
        let line = format!("load x \"{base}my graphs/\"");
        let (start, got) = complete(&line, line.len(), &[]);
        assert_eq!(start, 7);
        assert_eq!(got, [format!("\"{base}my graphs/pad one.ag\"")]);
        // An open quote completes too; a name that needs no quotes stays bare.
        let line = format!("load x \"{base}my graphs/p");
        assert_eq!(
            complete(&line, line.len(), &[]).1,
            [format!("\"{base}my graphs/pad one.ag\"")]
        );
        let line = format!("load x {base}pl");
        assert_eq!(
            complete(&line, line.len(), &[]).1,
            [format!("{base}plain.ag")]
        );
        // What was completed reads back as the command line's one word.
        let done = format!("load x {}", got[0]);
        assert_eq!(
            fugue_engine::host::command::words(&done).unwrap()[2],
            format!("{base}my graphs/pad one.ag")
        );
        let _ = std::fs::remove_dir_all(&d);
    }

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
        // A history that cannot be written: said once, then no more tried.
        let blocked = d.join("file");
        std::fs::write(&blocked, "").unwrap();
        let mut h = History::at(Some(blocked.join("history")));
        h.add("list");
        assert!(h.path.is_none());
        h.add("list");
        let _ = std::fs::remove_dir_all(&d);
    }
}
