//! Completion of a command line of the host's shell: commands, graph names and graph files
//! ([`complete`]), words read as the command line reads them ([`super::super::command`]).

use std::path::Path;

use crate::host::command::{quote, words, COMMANDS};

/// The file extensions of graph files, which `load` completes.
const GRAPH_EXTENSIONS: &[&str] = &["ag", "stg", "dot"];

/// The completions of the word under the cursor at byte `pos` of `line`: where the word
/// starts, and the words that may replace it. The first word completes to a command; the
/// second to a graph name (`unload`, `gain`, `stats`; from `names`) or a command (`help`);
/// the third of `load` to a graph file (`.ag`, `.stg`, `.dot`) or a folder, looked up
/// from the current folder. Words are read as the command line reads them: a word in double
/// quotes may hold spaces (`load a "my graphs/x.ag"`), and a file whose path needs quotes is
/// offered quoted ([`quote`]).
pub fn complete(line: &str, pos: usize, names: &[String]) -> (usize, Vec<String>) {
    let before = &line[..pos.min(line.len())];
    let (start, word) = current_word(before);
    let word = word.as_str();
    let done_words = words(&before[..start]).unwrap_or_default();
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
        (["load", _], 2) => files(word).iter().map(|f| quote(&[f])).collect(),
        _ => Vec::new(),
    };
    (start, found)
}

/// Where the word under the cursor starts in `before` (the line up to the cursor), and its
/// text: a word that opens a double quote is read as the command line reads it
/// ([`words`]), its quote closed first when the cursor is still
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
    let text = words(&closed)
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
            // A name holding a line break cannot be written on a command line (a line is
            // one command): not offered.
            if name.contains(['\n', '\r']) {
                return None;
            }
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
        // A name with a line break is never offered (it cannot be written in one line).
        for f in [
            "a.ag",
            "ab.stg",
            "b.dot",
            "notes.txt",
            ".hidden.ag",
            "a\nquit.ag",
        ] {
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
            words(&done).unwrap()[2],
            format!("{base}my graphs/pad one.ag")
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
