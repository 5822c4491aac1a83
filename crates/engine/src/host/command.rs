//! The host's command language: one command per line, words separated by spaces, a word
//! with spaces written in double quotes (`load a "my graph.ag"`, `\"` and `\\` inside), `#`
//! starting a comment. [`parse`] is a pure function from a line to a [`Command`], with one
//! clear sentence for every error; [`quote`] is the inverse of its splitting into words
//! ([`words`]): the line that splits into the words given (what `fugue ctl` sends).

use std::path::PathBuf;

/// A host command.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `load NAME FILE`
    Load {
        /// The graph's name in the host.
        name: String,
        /// Its file.
        file: PathBuf,
    },
    /// `unload NAME`
    Unload {
        /// The graph.
        name: String,
    },
    /// `gain NAME DB`
    Gain {
        /// The graph.
        name: String,
        /// Its gain, dB.
        db: f64,
    },
    /// `set NAME NODE ATTR VALUE`
    Set {
        /// The graph.
        name: String,
        /// Its node.
        node: String,
        /// The node's live attribute.
        attr: String,
        /// Its new value, as written: a number (checked with the node and the attribute,
        /// [`crate::live::check`], so that a refusal gives the first thing wrong).
        value: String,
    },
    /// `list`
    List,
    /// `stats [NAME]`
    Stats {
        /// The graph, or the whole host.
        name: Option<String>,
    },
    /// `mode`
    Mode,
    /// `wait SECONDS`
    Wait {
        /// How long to let the host play.
        seconds: f64,
    },
    /// `help [COMMAND]`
    Help {
        /// The command asked about (its verb), or all of them.
        topic: Option<&'static str>,
    },
    /// `quit`
    Quit,
}

impl Command {
    /// The command's verb, as its replies name it (`load`, `stats`, ...).
    pub fn verb(&self) -> &'static str {
        match self {
            Command::Load { .. } => "load",
            Command::Unload { .. } => "unload",
            Command::Gain { .. } => "gain",
            Command::Set { .. } => "set",
            Command::List => "list",
            Command::Stats { .. } => "stats",
            Command::Mode => "mode",
            Command::Wait { .. } => "wait",
            Command::Help { .. } => "help",
            Command::Quit => "quit",
        }
    }
}

/// The longest `wait`, seconds (a day).
pub const MAX_WAIT: f64 = 86_400.0;

/// Every command, for `help`: its usage, one after the other.
pub const HELP: &str = "commands: load NAME FILE | unload NAME | gain NAME DB | set NAME NODE ATTR VALUE | list | stats [NAME] | mode | wait SECONDS | help [COMMAND] | quit; `help COMMAND` says what one does";

/// Each command's verb and what `help VERB` says of it (one line).
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "load",
        "load NAME FILE: reads the graph FILE (.ag, .stg, .dot, or a Faust program .dsp), measures its cost and plays it as NAME from the next cycle; the reply names that cycle, and warns when the predicted cycle passes 80 % of the period (--strict refuses the graph). A FILE with spaces goes in double quotes (\"my graph.ag\", with \\\" and \\\\ for a quote and a backslash in it)",
    ),
    (
        "unload",
        "unload NAME: stops playing graph NAME at the next cycle and frees it; the reply names that cycle and the cycles it played in",
    ),
    (
        "gain",
        "gain NAME DB: sets graph NAME's gain in the mix from the next cycle, in dB from -200 to 40 (0: as rendered)",
    ),
    (
        "set",
        "set NAME NODE ATTR VALUE: sets attribute ATTR of node NODE of graph NAME to VALUE from the next cycle, while it plays; ATTR must be live (`fugue kinds` marks them: the volume of every kind but source, sink, load, resampler and lv2; osc freq; mod freq; gain gain and db; biquad freq and q; delay time, feedback, wet and dry; reverb room, damp, wet, dry and width; karplus decay; a Faust program's parameters; an LV2 plugin's controls) and VALUE a number in its range",
    ),
    (
        "list",
        "list: the graphs loaded, in load order: id, tasks, channels, gain, the memory each holds (its plan and, offline, its capture), cost and the cycle each was adopted at",
    ),
    (
        "stats",
        "stats [NAME]: the host's cycle times, deadline misses (the first ones with their cycle numbers) and overruns; with NAME, that graph's share of the cycle, its work on all threads and its misses",
    ),
    (
        "mode",
        "mode: how the graphs share the threads, the backend, rate, buffer, channels, pipelining and executor",
    ),
    (
        "wait",
        "wait SECONDS: lets the host play for SECONDS (up to a day); offline, in audio time: the host plays only while a wait runs, up to cycle round(T x rate / buffer) after waits adding up to T seconds",
    ),
    (
        "help",
        "help [COMMAND]: the commands, or what COMMAND does",
    ),
    (
        "quit",
        "quit: stops the host (so do `exit`, Ctrl-D and Ctrl-C), closes the recording and says the cycles run and the deadline misses, with the cycle numbers of the first ones",
    ),
];

/// What `help VERB` says (`exit` and `?` are other names of `quit` and `help`); `None`
/// when `verb` is no command.
pub fn help_of(verb: &str) -> Option<&'static str> {
    let verb = match verb {
        "exit" => "quit",
        "?" => "help",
        v => v,
    };
    COMMANDS.iter().find(|(v, _)| *v == verb).map(|(_, h)| *h)
}

/// Splits a line into words (double quotes group, `\"` and `\\` escape inside quotes, `#`
/// outside quotes starts a comment).
pub fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err("a quoted word is not closed; end it with \"".into()),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\')) => cur.push(e),
                            Some(e) => {
                                cur.push('\\');
                                cur.push(e);
                            }
                            None => {
                                return Err("a quoted word is not closed; end it with \"".into())
                            }
                        },
                        Some(c) => cur.push(c),
                    }
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The line that [`words`] splits into `words`: each word as it is when that is safe,
/// otherwise in double quotes (`\"` and `\\` escaped inside): an empty word, or one with
/// whitespace, a quote or a `#` in it.
pub fn quote<S: AsRef<str>>(words: &[S]) -> String {
    let mut line = String::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.as_ref();
        if i > 0 {
            line.push(' ');
        }
        if w.is_empty() || w.contains(|c: char| c.is_whitespace() || c == '"' || c == '#') {
            line.push('"');
            for c in w.chars() {
                if c == '"' || c == '\\' {
                    line.push('\\');
                }
                line.push(c);
            }
            line.push('"');
        } else {
            line.push_str(w);
        }
    }
    line
}

/// The most characters a graph name holds.
pub(crate) const MAX_NAME: usize = 64;

/// Whether a graph name may hold `c`: an ASCII letter or digit, `_`, `-` or `.`.
pub(crate) fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Checks a graph name: letters, digits, `_`, `-`, `.`; at most [`MAX_NAME`] characters.
fn name(word: &str) -> Result<String, String> {
    if word.is_empty() || word.len() > MAX_NAME || !word.chars().all(name_char) {
        return Err(format!(
            "`{}` is not a graph name; use up to {MAX_NAME} ASCII letters, digits, `_`, `-` or `.`",
            shorten(word)
        ));
    }
    Ok(word.to_string())
}

/// A word as quoted in an error: at most 40 characters, control characters and
/// bidirectional marks ([`fugue_graph::error::unprintable`]) shown as `?`
/// (a reply stays one line).
pub(crate) fn shorten(word: &str) -> String {
    let clean = |c: char| {
        if fugue_graph::error::unprintable(c) {
            '?'
        } else {
            c
        }
    };
    if word.chars().count() > 40 {
        format!(
            "{}...",
            word.chars().take(40).map(clean).collect::<String>()
        )
    } else {
        word.chars().map(clean).collect()
    }
}

/// The verb that `word` names (`exit`: `quit`, `?`: `help`), as a `'static` string; `word`
/// must name a command.
fn verb_of(word: &str) -> &'static str {
    let w = match word {
        "exit" => "quit",
        "?" => "help",
        w => w,
    };
    COMMANDS
        .iter()
        .map(|(v, _)| *v)
        .find(|v| *v == w)
        .unwrap_or("help")
}

/// Parses one line. `Ok(None)`: nothing to do (empty, or a comment).
pub fn parse(line: &str) -> Result<Option<Command>, String> {
    let w = words(line)?;
    let Some(verb) = w.first() else {
        return Ok(None);
    };
    let args = &w[1..];
    let usage = |form: &str| -> String { format!("`{verb}` takes {form}") };
    let exact = |n: usize, form: &str| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else if args.len() < n {
            Err(format!("{}; something is missing", usage(form)))
        } else {
            Err(format!(
                "{}; `{}` is one word too many",
                usage(form),
                shorten(&args[n])
            ))
        }
    };
    let cmd = match verb.as_str() {
        "load" => {
            exact(2, "a NAME and a FILE: load NAME FILE")?;
            // (`""` is a word: a FILE with no name.)
            if args[1].is_empty() {
                return Err(format!(
                    "{}; the FILE `\"\"` is empty: give the graph's path",
                    usage("a NAME and a FILE: load NAME FILE")
                ));
            }
            if args[1].contains('\0') {
                return Err(
                    "the FILE holds a NUL byte, which no file name can; give the graph's path"
                        .to_string(),
                );
            }
            Command::Load {
                name: name(&args[0])?,
                file: PathBuf::from(&args[1]),
            }
        }
        "unload" => {
            exact(1, "a NAME: unload NAME")?;
            Command::Unload {
                name: name(&args[0])?,
            }
        }
        "gain" => {
            // The unit may also stand apart (`gain a -6 dB`): a word after it is too many.
            let unit = args.len() >= 3 && args[2].eq_ignore_ascii_case("db");
            exact(
                if unit { 3 } else { 2 },
                "a NAME and a gain in dB: gain NAME DB",
            )?;
            // One unit at most (`-6dB`, or `-6 dB`; `-6dBdB` and `-6dB dB` are no gain).
            let a = args[1].as_str();
            let stripped = a.strip_suffix("dB").or_else(|| a.strip_suffix("db"));
            if unit && stripped.is_some() {
                return Err(format!(
                    "`{} {}` gives the unit twice; give a number of dB from -200 to 40",
                    shorten(&args[1]),
                    shorten(&args[2])
                ));
            }
            let db: f64 = stripped
                .unwrap_or(a)
                .parse()
                .ok()
                .filter(|d: &f64| d.is_finite() && (-200.0..=40.0).contains(d))
                .ok_or_else(|| {
                    format!(
                        "`{}` is not a gain; give a number of dB from -200 to 40",
                        shorten(&args[1])
                    )
                })?;
            Command::Gain {
                name: name(&args[0])?,
                // -0 is 0 dB (said as `0 dB`, not `-0 dB`).
                db: db + 0.0,
            }
        }
        "set" => {
            exact(
                4,
                "a graph, a node, an attribute and a value: set NAME NODE ATTR VALUE",
            )?;
            Command::Set {
                name: name(&args[0])?,
                node: args[1].clone(),
                attr: args[2].clone(),
                value: args[3].clone(),
            }
        }
        "list" => {
            exact(0, "no argument")?;
            Command::List
        }
        "stats" => {
            if args.len() > 1 {
                return Err(format!(
                    "`stats` takes at most a NAME: stats [NAME]; `{}` is one word too many",
                    shorten(&args[1])
                ));
            }
            Command::Stats {
                name: args.first().map(|a| name(a)).transpose()?,
            }
        }
        "mode" => {
            exact(0, "no argument")?;
            Command::Mode
        }
        "wait" => {
            exact(1, "a number of SECONDS: wait SECONDS")?;
            // One unit at most (`0.5s`; `0.5ss` is no time).
            let seconds: f64 = match args[0].strip_suffix('s').unwrap_or(&args[0]).parse::<f64>() {
                Ok(s) if (0.0..=MAX_WAIT).contains(&s) => s,
                // A number, out of the range (a NaN is no number of seconds).
                Ok(s) if s > MAX_WAIT => {
                    return Err(format!(
                        "`{}` is more seconds than a wait takes: give seconds from 0 to {MAX_WAIT}",
                        shorten(&args[0])
                    ))
                }
                _ => {
                    return Err(format!(
                        "`{}` is not a duration; give seconds from 0 to {MAX_WAIT}",
                        shorten(&args[0])
                    ))
                }
            };
            // -0 is 0 s (said as `0 s`).
            Command::Wait {
                seconds: seconds + 0.0,
            }
        }
        "help" | "?" => {
            if args.len() > 1 {
                return Err(format!(
                    "`help` takes at most a COMMAND: help [COMMAND]; `{}` is one word too many",
                    shorten(&args[1])
                ));
            }
            let topic = match args.first() {
                None => None,
                Some(a) => Some(help_of(a).map(|_| verb_of(a)).ok_or_else(|| {
                    format!(
                        "unknown command `{}`; `help` lists the commands",
                        shorten(a)
                    )
                })?),
            };
            Command::Help { topic }
        }
        "quit" | "exit" => {
            exact(0, "no argument")?;
            Command::Quit
        }
        other => {
            return Err(format!(
                "unknown command `{}`; `help` lists the commands",
                shorten(other)
            ))
        }
    };
    Ok(Some(cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("   # a comment").unwrap(), None);
        assert_eq!(
            parse("load a graphs/x.ag").unwrap(),
            Some(Command::Load {
                name: "a".into(),
                file: "graphs/x.ag".into()
            })
        );
        assert!(parse("load a \"\"")
            .unwrap_err()
            .contains("the FILE `\"\"` is empty"));
        assert!(parse("load a synth\0.ag")
            .unwrap_err()
            .starts_with("the FILE holds a NUL byte"));
        assert_eq!(
            parse("load a \"my graph.ag\"  # there").unwrap(),
            Some(Command::Load {
                name: "a".into(),
                file: "my graph.ag".into()
            })
        );
        assert_eq!(
            parse("gain a -6").unwrap(),
            Some(Command::Gain {
                name: "a".into(),
                db: -6.0
            })
        );
        // -0 dB is 0 dB, said without its sign.
        match parse("gain a -0").unwrap() {
            Some(Command::Gain { db, .. }) => assert!(db == 0.0 && db.is_sign_positive()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse("gain a -3.5dB").unwrap(),
            Some(Command::Gain {
                name: "a".into(),
                db: -3.5
            })
        );
        // The unit apart too, and only the unit.
        assert_eq!(
            parse("gain a -6 dB").unwrap(),
            Some(Command::Gain {
                name: "a".into(),
                db: -6.0
            })
        );
        assert!(parse("gain a -6 dBs").is_err());
        // One unit at most.
        assert!(parse("gain a 3dbdB").is_err());
        assert!(parse("gain a 3dBdB").is_err());
        assert!(parse("wait 0.1ss").is_err());
        // -0 s is 0 s, said without its sign.
        match parse("wait -0s").unwrap() {
            Some(Command::Wait { seconds }) => {
                assert!(seconds == 0.0 && seconds.is_sign_positive())
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse("wait 0.5s").unwrap(),
            Some(Command::Wait { seconds: 0.5 })
        );
        assert!(parse("gain a -6 dB x").is_err());
        assert_eq!(
            parse("wait 0.5").unwrap(),
            Some(Command::Wait { seconds: 0.5 })
        );
        assert_eq!(parse("stats").unwrap(), Some(Command::Stats { name: None }));
        assert_eq!(
            parse("stats b").unwrap(),
            Some(Command::Stats {
                name: Some("b".into())
            })
        );
        assert_eq!(parse("quit").unwrap(), Some(Command::Quit));
        assert_eq!(parse("help").unwrap(), Some(Command::Help { topic: None }));
        assert_eq!(
            parse("help exit").unwrap(),
            Some(Command::Help {
                topic: Some("quit")
            })
        );
        assert_eq!(parse("\tlist ").unwrap(), Some(Command::List));
    }

    #[test]
    fn errors_are_one_clear_sentence() {
        let cases = [
            ("frobnicate", "unknown command `frobnicate`"),
            ("load a", "`load` takes a NAME and a FILE"),
            ("load a b c", "`c` is one word too many"),
            ("unload", "something is missing"),
            ("gain a loud", "`loud` is not a gain"),
            ("gain a inf", "is not a gain"),
            ("gain a -6dB dB", "`-6dB dB` gives the unit twice"),
            ("gain a -6db DB", "gives the unit twice"),
            ("gain a -6 dB extra", "`extra` is one word too many"),
            ("gain a -6 extra", "`extra` is one word too many"),
            ("wait -1", "is not a duration"),
            ("wait NaN", "is not a duration"),
            (
                "wait 1e20",
                "`1e20` is more seconds than a wait takes: give seconds from 0 to",
            ),
            ("wait inf", "is more seconds than a wait takes"),
            ("load a \"x.ag", "not closed"),
            ("unload a/b", "is not a graph name"),
            ("stats a b", "one word too many"),
            ("help frob", "unknown command `frob`"),
            ("help load unload", "one word too many"),
        ];
        for (line, want) in cases {
            let e = parse(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
            assert!(!e.contains('\n'), "{line}: {e}");
        }
    }

    proptest::proptest! {
        /// Any line parses or fails with one short line; never a panic.
        #[test]
        fn any_line_gives_a_command_or_one_line_of_error(line in "\\PC{0,80}|[ a-z0-9\"#\\\\.\t\r-]{0,40}") {
            if let Err(e) = parse(&line) {
                proptest::prop_assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
                proptest::prop_assert!(e.len() < 400, "{e:?}");
            }
        }
    }

    proptest::proptest! {
        /// Quoting is the inverse of splitting: any words, quoted into a line, split back
        /// into the same words.
        #[test]
        fn quoted_words_split_back_into_the_same_words(
            ws in proptest::collection::vec("\\PC{0,12}|[ a-z\"#\\\\\t\n]{0,8}|\\\\*\"?\\\\*", 0..6)
        ) {
            let line = quote(&ws);
            proptest::prop_assert_eq!(words(&line), Ok(ws), "{}", line);
        }
    }

    #[test]
    fn quoting_keeps_plain_words_and_quotes_the_others() {
        assert_eq!(quote(&["load", "a", "x.ag"]), "load a x.ag");
        assert_eq!(
            quote(&["load", "a", "my graph.ag"]),
            "load a \"my graph.ag\""
        );
        assert_eq!(
            quote(&["a\"b", "", "#c", "d\\e"]),
            "\"a\\\"b\" \"\" \"#c\" d\\e"
        );
        let cmd = parse(&quote(&["load", "a", "my \"graph\" #1.ag"])).unwrap();
        assert_eq!(
            cmd,
            Some(Command::Load {
                name: "a".into(),
                file: "my \"graph\" #1.ag".into()
            })
        );
    }

    /// `help set` names every live attribute of every built-in kind (the volume as the
    /// kinds that have none live), so that it stays true as kinds change.
    #[test]
    fn help_set_names_every_live_attribute() {
        let help = help_of("set").unwrap();
        let (_, list) = help.split_once("`fugue kinds` marks them: ").unwrap();
        let (list, _) = list.split_once(')').unwrap();
        let (volume, others) = list.split_once(';').unwrap();
        let reg = fugue_dsp::Registry::with_builtin_kinds();
        for name in reg.names() {
            let doc = reg.doc(name).unwrap();
            let has = |a: &str| doc.attributes.iter().any(|(n, _)| n == a) && doc.is_live(a);
            // The kinds without a live volume are those named after "but".
            let without = volume.split_once(" but ").unwrap().1;
            let named = without.split([',', ' ']).any(|w| w == name);
            assert_eq!(has("volume"), !named, "{name}: {volume}");
            for (a, _) in doc.attributes.iter() {
                if a == "volume" || !doc.is_live(a) {
                    continue;
                }
                let part = others
                    .split(';')
                    .map(str::trim)
                    .find(|p| p.starts_with(&format!("{name} ")))
                    .unwrap_or_else(|| panic!("{name}'s live {a} is not in `help set`"));
                assert!(
                    part.split([',', ' ']).any(|w| w == a),
                    "{name}'s live {a} is not in `help set`: {part}"
                );
            }
        }
    }

    #[test]
    fn every_command_has_its_help_and_is_listed() {
        for (verb, help) in COMMANDS {
            assert!(
                help.starts_with(&format!("{verb} ")) || help.starts_with(&format!("{verb}:")),
                "{help}"
            );
            assert!(HELP.contains(verb), "{verb}");
            assert!(!help.contains('\n'), "{help}");
            assert_eq!(help_of(verb), Some(*help));
            // A command that takes no argument parses; the others ask for theirs.
            assert!(parse(verb).is_ok() || parse(verb).unwrap_err().contains(verb));
        }
        assert_eq!(help_of("exit"), help_of("quit"));
        assert_eq!(help_of("frob"), None);
    }

    #[test]
    fn long_words_are_shortened_in_errors() {
        let line = format!("x{}", "y".repeat(10_000));
        let e = parse(&line).unwrap_err();
        assert!(e.len() < 200, "{}", e.len());
    }
}
