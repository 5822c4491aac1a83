//! fugue-faust: Faust programs as fugue nodes.
//!
//! The `faust` kind runs a program of the Faust language (Orlarey, Fober, Letz; faust.grame.fr)
//! as a node:
//!
//! ```text
//! strings = { kind: "faust", file: "string.dsp", freq: 220, "/string/gain": 0.5, };
//! tone    = { kind: "faust", code: "import(\"stdfaust.lib\"); process = os.osc(440);", };
//! ```
//!
//! - `file` (relative to the graph's folder) or `code` gives the program; `backend:
//!   "interp"` runs it in Faust's interpreter instead of compiling it with LLVM (the
//!   interpreter is also used when the library has no LLVM backend); `volume` scales every
//!   output. Every other attribute sets the parameter (slider, numeric entry, button, check
//!   box) of that label or path; one that names none is reported by [`lint`].
//! - The node's ports are the program's inputs and outputs.
//! - The program is compiled when the graph is built (on the control thread), by libfaust,
//!   which is opened at run time ([`Faust::shared`]): fugue builds and runs without Faust,
//!   and only a graph with a `faust` node needs it. Every node of the same program and
//!   options shares one compiled [`Factory`].
//! - libfaust changes the process's working directory while it compiles: it looks for an
//!   imported file by entering each library folder in turn (`chdir`) and going back after.
//!   Meanwhile a relative path opened by another thread of the process resolves against
//!   the wrong folder. fugue compiles on the thread that opens the graph's files, before a
//!   render's or a run's other threads open theirs; in the host, a `load` compiles while
//!   the audio plays, and no thread of the host opens a relative path then.
//! - A node's processor is one instance of the program; its `process` calls the program's
//!   `compute`, which neither allocates nor locks. Parameters are set when the instance is
//!   made, between blocks.
//!
//! [`dsp_graph`] turns a `.dsp` file into a graph of one `faust` node wired to the engine's
//! outputs (and inputs), for `fugue render prog.dsp` and the host's `load`.

mod factory;
pub mod ffi;
pub mod guard;
mod node;
pub mod ui;

use std::path::{Path, PathBuf};

use fugue_dsp::kinds::doc::KindDoc;
use fugue_dsp::{LintNote, NodeContext, Registry};
use fugue_graph::TaskGraph;

pub use factory::{
    Backend, Factory, Faust, Source, MAX_LIBRARY_RATE, MAX_PROGRAM_BYTES, RATE_TRIAL_FRAMES,
};
pub use guard::{helper_main, stop_child, use_helper, HELPER_ARG, HELPER_ENV};
pub use node::{build, factory_of, node_for_code, source_of, unknown_attributes, OWN_ATTRIBUTES};

/// Why a Faust program could not be used.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum FaustError {
    /// libfaust could not be opened.
    #[error("libfaust could not be loaded ({reason}); install Faust (Debian: `apt install faust libfaust2`) to run Faust programs")]
    Missing {
        /// The loader's message.
        reason: String,
    },
    /// The program's file could not be read.
    #[error("cannot read the Faust program {}: {reason}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        reason: String,
    },
    /// Faust refused the program.
    #[error("{}", compile_message(name, message))]
    Compile {
        /// The program's name (its file).
        name: String,
        /// Faust's message.
        message: String,
    },
    /// libfaust could not make an instance of a compiled program.
    #[error("libfaust could not create an instance of the program {name}")]
    Instance {
        /// The program's name (its file).
        name: String,
    },
    /// The program divided an integer by zero while it initialised (its tables), at this rate.
    #[error("the Faust program {name} divided an integer by zero while it initialised at {rate} Hz (a `%` or an integer `/` whose right side was 0, in a table or a constant computed from the rate)")]
    InitDivision {
        /// The program's name (its file).
        name: String,
        /// The rate it was initialised at.
        rate: u32,
    },
    /// The program's state (its delay lines and tables) is larger than a node may hold.
    #[error("the Faust program {name} needs {} MiB of state per instance (its delay lines and tables), more than the {} MiB a node may hold; shorten its delays or tables", bytes.div_ceil(1 << 20), fugue_dsp::MAX_NODE_MEMORY >> 20)]
    TooLarge {
        /// The program's name (its file).
        name: String,
        /// Bytes of one instance's state.
        bytes: u64,
    },
    /// The compiled program calls functions outside itself (Faust's `ffunction`) that are
    /// not the C math library's: fugue does not run them.
    #[error("the Faust program {name} calls {}, {} of C outside the math library (Faust's `ffunction`); fugue runs only programs whose foreign functions are the C math library's (sinh, erf, fmod, ...)", functions.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "), if functions.len() == 1 { "a function" } else { "functions" })]
    Foreign {
        /// The program's name (its file).
        name: String,
        /// The functions, as the compiled code names them.
        functions: Vec<String>,
    },
    /// The program reads C constants or variables (Faust's `fconstant`, `fvariable`) that
    /// fugue cannot give it: the LLVM backend would read them as 0 (the interpreter refuses
    /// them in its own words).
    #[error("the Faust program {name} reads {}, {} of C (Faust's `fconstant` or `fvariable`) that fugue cannot give a program: it would read 0; write the value in the program instead (`fconstant(int fSamplingFreq, <math.h>)`, the sample rate, is given)", names.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "), if names.len() == 1 { "a constant or variable" } else { "constants or variables" })]
    ForeignConstant {
        /// The program's name (its file).
        name: String,
        /// The constants and variables, as the program names them.
        names: Vec<String>,
    },
    /// The program reads sound files (`soundfile`), which Faust's interpreter crashes
    /// running without them: refused before any block runs.
    #[error("the Faust program {name} reads the sound {} {}, which fugue does not load and Faust's interpreter cannot run without (it crashes); use the LLVM backend (`backend: \"llvm\"`), where that part plays silence", if labels.len() == 1 { "file" } else { "files" }, labels.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", "))]
    InterpSoundfile {
        /// The program's name (its file).
        name: String,
        /// The sound files' labels.
        labels: Vec<String>,
    },
    /// libfaust crashed while compiling the program (in the child process that compiles
    /// programs first, [`guard`]).
    #[error("libfaust crashed while compiling {name} ({how}{}); nothing of it was loaded: this version of Faust cannot run the program with this backend, and Faust's own `faust` command may fail on it too", if *interp { "; an interpreter's program also runs one block there" } else { "" })]
    Crashed {
        /// The program's name (its file).
        name: String,
        /// How the compiling process ended: "segmentation fault, signal 11".
        how: String,
        /// The interpreter backend's: the child ran one block of the program too.
        interp: bool,
    },
    /// The child process compiling the program ended in a way its protocol does not know
    /// (a helper program that failed, [`guard::HELPER_ENV`]): nothing of it was loaded, and it
    /// is not compiled in this process, without the child's limits, instead.
    #[error("compiling {name} failed: the compiling process ({helper}) ended with {how}{}; nothing of it was loaded ({env}=off compiles in fugue's own process, without the time and memory limits)", if *answered { " and an answer fugue does not know" } else { " and no answer" }, env = guard::HELPER_ENV)]
    HelperEnded {
        /// The program's name (its file).
        name: String,
        /// The helper program.
        helper: String,
        /// How it ended: "exit status 101".
        how: String,
        /// Whether it answered something (not in the protocol's words).
        answered: bool,
    },
    /// The child process compiling the program ran out of the memory a compilation may use
    /// ([`guard::memory_limit`]): the compiler's own memory, or a program's tables, which
    /// LLVM allocates with its code.
    #[error("compiling {name} needs more than {} ({env}=MIB sets another limit, 0 none); nothing of it was loaded: a program with tables or delay lines past the {} MiB a node may hold needs that memory to compile, and so does a very large program", if *mib > 0 { format!("the {mib} MiB of memory a compilation may use") } else { "the memory the system gave it (no limit of fugue's is set)".to_string() }, fugue_dsp::MAX_NODE_MEMORY >> 20, env = guard::MEMORY_LIMIT_ENV)]
    CompileMemory {
        /// The program's name (its file).
        name: String,
        /// The limit, in MiB (0: none of fugue's).
        mib: u64,
    },
    /// The child process compiling the program ran past the time limit
    /// ([`guard::TIME_LIMIT_ENV`]) and was stopped.
    #[error("compiling {name} took longer than {seconds} s, the limit, and was stopped; nothing of it was loaded ({env}=SECONDS sets another limit, 0 none)", env = guard::TIME_LIMIT_ENV)]
    TimedOut {
        /// The program's name (its file).
        name: String,
        /// The limit, in seconds.
        seconds: u64,
    },
    /// The child process compiling the program was stopped by a signal from outside
    /// (Ctrl-C, `kill`).
    #[error("compiling {name} was stopped ({how})")]
    Stopped {
        /// The program's name (its file).
        name: String,
        /// The signal: "interrupted, signal 2".
        how: String,
    },
    /// A program with no output: nothing to hear.
    #[error("the Faust program {} has no output", file.display())]
    NoOutputs {
        /// The file.
        file: PathBuf,
    },
}

/// Faust's message as `file:line: message`: Faust writes `file : line : ERROR : message`;
/// other messages keep their words, the first after the program's name when it does not
/// give it, the lines of one message joined by `; ` (the program named once, no `;;`).
fn compile_message(name: &str, message: &str) -> String {
    let mut trace = false;
    let lines: Vec<String> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| {
            // The stack trace libfaust prints after an internal error: addresses, not words.
            if l.contains("stack trace start") {
                trace = true;
            }
            let keep = !trace;
            if l.contains("stack trace stop") {
                trace = false;
            }
            keep
        })
        .map(|l| {
            let parts: Vec<&str> = l.splitn(4, " : ").collect();
            match parts[..] {
                [file, line, "ERROR", msg] if line.parse::<u32>().is_ok() => {
                    format!("{file}:{line}: {msg}")
                }
                // No place known (`???? : -1 : ERROR : ...`).
                [_, line, "ERROR", msg] if line.parse::<i64>().is_ok() => msg.to_string(),
                _ => {
                    let l = l.strip_prefix("ERROR : ").unwrap_or(l);
                    if let Some(rest) = l.strip_prefix("ASSERT : ") {
                        // An internal check of Faust's compiler that failed: where, and which
                        // version, without the request to report it and the options.
                        let place = rest
                            .split_once('(')
                            .map(|(_, p)| p.split(", options").next().unwrap_or(p))
                            .map(|p| p.trim_end_matches(')').to_string())
                            .unwrap_or_default();
                        format!("Faust's compiler failed one of its internal checks ({place}): this version of Faust cannot compile the program")
                    } else {
                        l.to_string()
                    }
                }
            }
        })
        .collect();
    let lines: Vec<String> = lines
        .iter()
        .map(|l| {
            // libfaust glues its lexer's note on a character it could not read to the
            // parser's error (`unexpected EXTRAextra text is : ...`).
            let l = l.replacen(
                "EXTRAextra text is :",
                "EXTRA; the text has a character Faust cannot read:",
                1,
            );
            l.trim_end_matches(';')
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect();
    match lines.first() {
        None => format!("{name}: Faust refused the program (no message)"),
        // A message that names its place (`file:line:`) or the program stands as it is.
        Some(first) if first.starts_with(name) => lines.join("; "),
        Some(_) => format!("{name}: {}", lines.join("; ")),
    }
}

/// What `fugue kinds` says of the `faust` kind.
pub fn doc() -> KindDoc {
    KindDoc::new(
        "faust",
        "a program of the Faust language, compiled when the graph is loaded (needs libfaust)",
        "the program's inputs",
        "the program's outputs",
    )
    .attribute(
        "file",
        "the program's .dsp file, relative to the graph's folder (this or code is required)",
    )
    .attribute("code", "the program's text, instead of a file")
    .attribute(
        "backend",
        "llvm (compiled to machine code, the default) or interp (Faust's interpreter)",
    )
    .attribute("volume", "output gain (default 1.0)")
    .others(
        "sets the program's parameter (slider, numeric entry, button, check box) of that label or path, e.g. freq: 220 or \"/synth/gain\": 0.5; one that names none is warned about, with the program's parameters (an error for `fugue check`); every parameter is live",
    )
    .live(&["volume"])
}

/// Adds the `faust` kind to `registry`, described ([`doc`]) and with [`lint`]'s check of
/// its nodes' parameters. libfaust is opened when the first `faust` node is built, not here.
pub fn register(registry: &mut Registry) {
    registry.register_documented(build, doc());
    registry.set_linter("faust", lint_node);
}

/// What [`lint`] says of one `faust` node: each attribute that names none of its program's
/// parameters, a node attribute that hides a parameter, the sound files it would read, a
/// program that computes above [`MAX_LIBRARY_RATE`] as if at that rate
/// ([`Factory::stops_rate_at_library_limit`]), and one whose samples differ from instance
/// to instance ([`Factory::differs_between_instances`]). A node whose program cannot be compiled is
/// left to the build, which says why.
fn lint_node(ctx: &NodeContext<'_>) -> Vec<LintNote> {
    let Ok(factory) = factory_of(ctx) else {
        return Vec::new();
    };
    let mut out: Vec<LintNote> = unknown_attributes(ctx, &factory)
        .into_iter()
        .map(|attr| {
            LintNote::unread(attr, format!(
                "node `{}` has attribute `{attr}`, which its Faust program does not have as a parameter (its parameters: {}; the kind also reads {})",
                ctx.name(),
                factory.param_names(),
                OWN_ATTRIBUTES.join(", ")
            ))
        })
        .collect();
    // An attribute the kind reads itself that also names a parameter sets the kind's, not
    // the program's: said of `backend` and `volume`, which a user may have meant for the
    // program. Not of `file` and `code`, which every node gives to name its program (a
    // node made from a `.dsp` file too), nor when another attribute sets that parameter by
    // its path.
    for own in ["backend", "volume"] {
        if ctx.node.attr(own).is_none() {
            continue;
        }
        if let Some(p) = hidden_parameter(ctx, &factory, own) {
            out.push(LintNote::attr(own, format!(
                "node `{}`: attribute `{own}` is the node's own ({}), not its program's parameter `{}`; write \"{}\" to set that one",
                ctx.name(),
                OWN_ATTRIBUTE_USES[OWN_ATTRIBUTES.iter().position(|a| *a == own).expect("listed")],
                p.path,
                p.path
            )));
        }
    }
    // The attributes the graph itself reads (a node's ports and cost) never reach the
    // program: said when the program has a parameter of that name, which the user may have
    // meant (and which its path still sets).
    for (attr, given, what) in ctx.graph_attributes() {
        if !given {
            continue;
        }
        if let Some(p) = hidden_parameter(ctx, &factory, attr) {
            out.push(LintNote::node(format!(
                "node `{}`: attribute `{attr}` is the graph's ({what}), not its program's parameter `{}`, which it leaves at {}; write \"{}\" to set that one",
                ctx.name(),
                p.path,
                p.init,
                p.path
            )));
        }
    }
    // At the node's own rate (a resampler upstream changes it), its parameters as its
    // attributes set them (a program silent at its defaults says nothing of its rate); a
    // node whose attributes its build refuses is left to the build.
    let rate = ctx.sample_rate.round() as u32;
    let settings = node::settings_of(ctx, &factory).ok();
    let bounded = settings
        .as_ref()
        .map(|s| factory.stops_rate_at_library_limit(rate, s));
    if let Some(Ok(true)) = bounded {
        let bound = factory::MAX_LIBRARY_RATE;
        out.push(LintNote::node(format!(
            "node `{}`: at {rate} Hz its Faust program computes as if at {bound} Hz (Faust's standard library bounds the rate it computes with, `ma.SR`, to {bound} Hz), so what it derives from the rate (frequencies, delay and smoothing times) is off by a factor of {:.3}; run the graph at {bound} Hz or below",
            ctx.name(),
            f64::from(rate) / f64::from(bound),
        )));
    }
    if let Some(Ok(true)) = settings
        .as_ref()
        .map(|s| factory.differs_between_instances(rate, s))
    {
        out.push(LintNote::node(format!(
            "node `{}`: its Faust program gives other samples at every instance (it seeds its noise at random, as `no.rnoise` does), so what the graph plays differs from one run to the next; a noise of fixed seed (`no.noise`) plays the same samples every time",
            ctx.name()
        )));
    }
    for label in &factory.soundfiles {
        out.push(LintNote::node(format!(
            "node `{}`: its Faust program reads the sound file `{label}` (soundfile), which fugue does not load: that part of the program plays silence",
            ctx.name()
        )));
    }
    out
}

/// The program's input parameter named `attr` that no other attribute of the node sets (by
/// its path), which an attribute `attr` read by the kind or the graph hides.
fn hidden_parameter<'f>(
    ctx: &NodeContext<'_>,
    factory: &'f Factory,
    attr: &str,
) -> Option<&'f ui::Param> {
    let set_otherwise = |p: &ui::Param| {
        ctx.node
            .attrs
            .iter()
            .any(|(k, _)| !OWN_ATTRIBUTES.contains(&k.as_str()) && p.is_named(k))
    };
    factory
        .params
        .iter()
        .find(|p| p.is_input() && p.is_named(attr) && !set_otherwise(p))
}

/// What each of [`OWN_ATTRIBUTES`] sets, in a few words.
const OWN_ATTRIBUTE_USES: [&str; 4] = [
    "the program's file",
    "the program's text",
    "the compiler's backend",
    "the node's output gain",
];

/// What `graph`'s `faust` nodes suggest is a mistake when it runs at `rate` Hz: an attribute
/// that names none of the program's parameters, with the list of them, and the rest of what
/// the engine's lint says of them through the registry's linter ([`register`]).
pub fn lint(graph: &TaskGraph, rate: f64) -> Vec<String> {
    (0..graph.len())
        .filter(|&v| graph.node(v).kind == "faust")
        .flat_map(|v| lint_node(&NodeContext::of(graph, v, rate, 256)))
        .map(|note| note.text)
        .collect()
}

/// For tests: whether libfaust can be opened. Where it cannot, says that `test` is skipped
/// and returns false, unless `FUGUE_REQUIRE_FAUST` is set (CI): then it panics with the
/// reason.
pub fn available_for(test: &str) -> bool {
    match Faust::shared() {
        Ok(_) => true,
        Err(e) if std::env::var_os("FUGUE_REQUIRE_FAUST").is_some() => {
            panic!("{test}: FUGUE_REQUIRE_FAUST is set, but {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            false
        }
    }
}

/// Whether `path` names a Faust program (`.dsp`).
pub fn is_dsp(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dsp"))
}

/// The graph of the program in `file`: one `faust` node, its outputs wired to a `sink`, its
/// inputs (if any) fed by a `source`. The program is compiled (or found compiled) to learn
/// its ports.
pub fn dsp_graph(file: &Path) -> Result<TaskGraph, FaustError> {
    // The node names its program by a text attribute: a name that is not UTF-8 cannot be
    // written there.
    let name = match file.file_name().map(|n| n.to_str()) {
        Some(Some(n)) => n.to_string(),
        Some(None) => {
            return Err(FaustError::Compile {
                name: file.display().to_string(),
                message: "its file name is not UTF-8 text, which the `file` attribute of a graph's node cannot hold; rename the file".to_string(),
            })
        }
        None => String::new(),
    };
    let faust = Faust::shared()?;
    let folder = fugue_graph::read::folder_of(file).to_path_buf();
    // The source that the graph's node will have (its file in the graph's folder), so that
    // the program is compiled once.
    let source = Source::file(file, Some(&folder))?;
    let factory = faust.factory(&source, Backend::Llvm)?;
    if factory.outputs == 0 {
        return Err(FaustError::NoOutputs {
            file: file.to_path_buf(),
        });
    }
    let quoted = fugue_graph::write::ag_string(&name);
    let mut text = format!(
        "dsp = {{ kind: \"faust\", file: {quoted}, }};\nout = {{ kind: \"sink\", in: {}, }};\n",
        factory.outputs
    );
    if factory.inputs > 0 {
        text.push_str(&format!(
            "in = {{ kind: \"source\", out: {}, }};\n",
            factory.inputs
        ));
        for i in 1..=factory.inputs {
            text.push_str(&format!("in.{i} -> dsp.{i};\n"));
        }
    }
    for j in 1..=factory.outputs {
        text.push_str(&format!("dsp.{j} -> out.{j};\n"));
    }
    // Written to be read back; were it not (a name the reader refuses), said as the file's.
    let mut graph =
        fugue_graph::read::ag::parse(&text, &file.display().to_string()).map_err(|e| {
            FaustError::Compile {
                name: file.display().to_string(),
                message: format!("its file name cannot be named in a graph ({e}); rename the file"),
            }
        })?;
    graph.set_folder(Some(folder));
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faust_messages_become_file_and_line() {
        assert_eq!(
            compile_message(
                "x.dsp",
                "x.dsp : 2 : ERROR : syntax error, unexpected ENDDEF\n"
            ),
            "x.dsp:2: syntax error, unexpected ENDDEF"
        );
        assert_eq!(
            compile_message(
                "x.dsp",
                "b.dsp : 1 : ERROR : syntax error, unexpected EXTRAextra text is : \u{7f}\n"
            ),
            "x.dsp: b.dsp:1: syntax error, unexpected EXTRA; the text has a character Faust cannot read: \u{7f}"
        );
        assert_eq!(
            compile_message("x.dsp", "ERROR : undefined symbol : foo"),
            "x.dsp: undefined symbol : foo"
        );
        // No place known, and an internal check of the compiler's, without its stack trace.
        assert_eq!(
            compile_message("x.dsp", "???? : -1 : ERROR : undefined symbol : process"),
            "x.dsp: undefined symbol : process"
        );
        assert_eq!(
            compile_message(
                "x.dsp",
                "ASSERT : please report this message (file: a.cpp, line: 1, version: 2.54.9, options: -lang llvm )\n====== stack trace start ======\n/lib/libfaust.so.2(+0x1) [0x2]\n====== stack trace stop ======\n"
            ),
            "x.dsp: Faust's compiler failed one of its internal checks (file: a.cpp, line: 1, version: 2.54.9): this version of Faust cannot compile the program"
        );
        assert!(compile_message("x.dsp", "").contains("no message"));
        // A message of several lines: the program named once, the lines joined, no `;;`.
        assert_eq!(
            compile_message(
                "type.dsp",
                "ERROR in sequential composition A:B\nThe number of outputs [1] of A must be equal to the number of inputs [2] of B\n\nHere  A = +;\nhas 1 output\n\nwhile B = _,_;\nhas 2 inputs\n"
            ),
            "type.dsp: ERROR in sequential composition A:B; The number of outputs [1] of A must be equal to the number of inputs [2] of B; Here A = +; has 1 output; while B = _,_; has 2 inputs"
        );
    }
}
