//! The host's interactive shell on a terminal: rustyline's line editing with the engine's
//! completion ([`fugue_engine::host::control::complete`]).

use std::sync::{Arc, Mutex};

use fugue_engine::host::control::complete::complete;
use fugue_engine::host::control::history::HISTORY_KEPT;
use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;

/// The names of the graphs loaded, as the control loop last saw them (for completion).
pub(crate) type Names = Arc<Mutex<Vec<String>>>;

/// The line editor's helper: completion (no hints, no colours, no validation).
pub(crate) struct ShellHelper {
    /// The graphs loaded.
    names: Names,
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
        let (start, mut found) = complete(line, pos, &names);
        // One candidate at the end of the line is a whole word: a space follows, so that the
        // next word can be typed at once (not after a folder, whose files come next).
        if let [only] = found.as_mut_slice() {
            if pos >= line.len() && !(only.ends_with('/') || only.ends_with("/\"")) {
                only.push(' ');
            }
        }
        Ok((start, found))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

impl rustyline::Helper for ShellHelper {}

/// A line editor that completes with `names`, keeping [`HISTORY_KEPT`] lines (`None` when
/// the terminal cannot be set up).
pub(crate) fn editor(names: Names) -> Option<rustyline::Editor<ShellHelper, DefaultHistory>> {
    // Completion as a shell's: the first Tab completes what all candidates share, the next
    // lists them (cycling through them instead made a second Tab undo the first).
    let config = rustyline::Config::builder()
        .max_history_size(HISTORY_KEPT)
        .map(|b| b.completion_type(rustyline::CompletionType::List).build())
        .unwrap_or_default();
    let mut rl = rustyline::Editor::with_config(config).ok()?;
    rl.set_helper(Some(ShellHelper { names }));
    Some(rl)
}
