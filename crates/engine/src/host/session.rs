//! Commands executed: a [`Session`] runs each [`Command`] of the command language against
//! its [`Host`] and answers with a [`Reply`], one line of text ([`Reply`]'s `Display`) or
//! of JSON ([`Reply::json`]). A command that fails is a reply too; the host goes on.
//!
//! The JSON of a reply is an object with `ok`, the `command` it answers and that command's
//! fields (`error` when it failed), keys in alphabetical order.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::command::{self, Command, HELP};
use super::{GraphInfo, GraphStatsSnapshot, Host, HostBackend, HostError, HostStatsSnapshot, Mode};

/// A command's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reply {
    /// Whether the command succeeded.
    pub ok: bool,
    /// What it did, or why it failed.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What a command did, or why it failed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// It succeeded.
    Done(Answer),
    /// It failed.
    Failed {
        /// The command's verb (`parse` when the line was not a command).
        command: &'static str,
        /// One sentence.
        error: String,
        /// The graph it named (`load`, `unload`), in JSON replies.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The file it named (`load`), as given.
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
}

/// What a command that succeeded did.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Answer {
    /// `load NAME FILE`
    Load {
        /// The graph's name.
        name: String,
        /// Its file, as given.
        file: String,
        /// The host's number for it.
        id: u32,
        /// The first cycle it runs in.
        cycle: u64,
        /// Its measured cost per cycle, ns.
        cost_ns: u64,
        /// The cycle predicted with it, ns.
        predicted_ns: u64,
        /// The buffer period, ns.
        period_ns: u64,
        /// Said when the predicted cycle passes 80% of the period.
        warning: Option<String>,
        /// Sub-blocks per cycle (1: not pipelined).
        pipeline: usize,
        /// Why it was not pipelined as asked.
        pipeline_note: Option<String>,
        /// Its own executor (`separate` mode).
        executor: Option<String>,
        /// What the automatic choice of its executor measured.
        auto: Option<String>,
    },
    /// `unload NAME`
    Unload {
        /// The graph's name.
        name: String,
        /// Its id.
        id: u32,
        /// The first cycle it no longer ran in.
        cycle: u64,
        /// Cycles it ran in.
        cycles: u64,
    },
    /// `gain NAME DB`
    Gain {
        /// The graph's name.
        name: String,
        /// Its gain, dB.
        db: f64,
    },
    /// `set NAME NODE ATTR VALUE`
    Set {
        /// The graph's name.
        name: String,
        /// The node.
        node: String,
        /// The attribute.
        attr: String,
        /// Its new value.
        value: f64,
    },
    /// `list`
    List {
        /// The loaded graphs, in load order.
        graphs: Vec<GraphInfo>,
    },
    /// `stats NAME`
    #[serde(rename = "stats")]
    GraphStats {
        /// The graph's name.
        name: String,
        /// Its statistics.
        #[serde(flatten)]
        stats: GraphStatsSnapshot,
    },
    /// `stats`
    #[serde(rename = "stats")]
    HostStats {
        /// Graphs loaded.
        graphs: usize,
        /// The whole host's statistics.
        #[serde(flatten)]
        stats: HostStatsSnapshot,
    },
    /// `mode`
    Mode {
        /// How the graphs share the threads.
        mode: &'static str,
        /// The threads.
        threads: usize,
        /// What paces the cycles: `offline`, `clocked` or `jack`.
        backend: &'static str,
        /// Sample rate, Hz.
        rate: u32,
        /// Frames per cycle.
        buffer: usize,
        /// The buffer period, ns (text only).
        #[serde(skip)]
        period_ns: u64,
        /// Output channels of the mix.
        channels: usize,
        /// Sub-blocks per cycle, or `auto`.
        pipeline: String,
        /// Each graph's executor: `pool` in the pool modes.
        executor: String,
    },
    /// `wait SECONDS`
    Wait {
        /// How long it let the host play.
        seconds: f64,
        /// The cycle it got to (`None` for `fugue run`'s socket, which counts no cycles).
        #[serde(skip_serializing_if = "Option::is_none")]
        cycle: Option<u64>,
    },
    /// `help [COMMAND]`
    Help {
        /// The commands, or what the command asked about does.
        help: &'static str,
    },
    /// `quit`
    Quit,
}

impl Reply {
    /// A reply of success.
    pub fn done(answer: Answer) -> Reply {
        Reply {
            ok: true,
            outcome: Outcome::Done(answer),
        }
    }

    /// A reply of failure: command `verb` failed, `error` says why.
    pub fn failed(verb: &'static str, error: impl Into<String>) -> Reply {
        Reply {
            ok: false,
            outcome: Outcome::Failed {
                command: verb,
                error: error.into(),
                name: None,
                file: None,
            },
        }
    }

    /// This failed reply, naming the graph `name` and the file `file` its command named.
    fn naming(mut self, graph: Option<String>, path: Option<String>) -> Reply {
        if let Outcome::Failed { name, file, .. } = &mut self.outcome {
            *name = graph;
            *file = path;
        }
        self
    }

    /// Whether the command asks the host to stop (`quit`).
    pub fn quits(&self) -> bool {
        matches!(self.outcome, Outcome::Done(Answer::Quit))
    }

    /// The reply as one line of JSON.
    pub fn json(&self) -> String {
        // Through a `Value`, whose objects keep their keys in order: a reply's keys come out
        // sorted, whatever the order of its fields.
        match serde_json::to_value(self) {
            Ok(v) => v.to_string(),
            Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}).to_string(),
        }
    }

    /// The reply as one line: JSON with `json`, else text.
    pub fn line(&self, json: bool) -> String {
        if json {
            self.json()
        } else {
            self.to_string()
        }
    }
}

/// The reply as one line of text (`error: ...` when the command failed).
impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::Done(a) => a.fmt(f),
            // A megabyte-long path in a command stays one readable line.
            // A control character a command held (a NUL, an escape) is shown as `?`.
            Outcome::Failed { error, .. } => write!(
                f,
                "error: {}",
                fugue_graph::error::shorten_words(error)
                    .chars()
                    .map(|c| if fugue_graph::error::unprintable(c) {
                        '?'
                    } else {
                        c
                    })
                    .collect::<String>()
            ),
        }
    }
}

/// A duration of `ns` nanoseconds in µs, one decimal.
fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1e3)
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Load { .. } => write_load(self, f),
            Answer::Unload {
                name,
                id,
                cycle,
                cycles,
            } => write!(
                f,
                "unloaded {name} (id {id}) at cycle {cycle} after {}",
                crate::report::counted(*cycles as usize, "cycle")
            ),
            Answer::Gain { name, db } => write!(f, "gain of {name}: {} dB", plain(*db)),
            Answer::Set {
                name,
                node,
                attr,
                value,
            } => write!(
                f,
                "{name}: {node} {attr} = {} from the next cycle",
                // -0 is said as 0.
                fugue_dsp::attrs::short_number(*value + 0.0)
            ),
            Answer::List { graphs } => write_list(graphs, f),
            Answer::GraphStats { name, stats: s } => write!(
                f,
                "{name}: {} cycles, share of the cycle mean {}, p99 {}, max {}, of cycles of mean {}; work on all threads mean {}; {} deadline misses, {} panics",
                s.cycles,
                us(s.mean_ns),
                us(s.p99_ns as f64),
                us(s.max_ns as f64),
                us(s.cycle_mean_ns),
                us(s.work_mean_ns),
                s.misses,
                s.panics
            )
            .and_then(|()| match s.non_finite {
                0 => Ok(()),
                n => write!(f, ", {n} samples not finite (mixed as silence)"),
            }),
            Answer::HostStats { graphs, stats } => write_host_stats(*graphs, stats, f),
            Answer::Mode {
                mode,
                threads,
                backend,
                rate,
                buffer,
                period_ns,
                channels,
                pipeline,
                executor,
            } => write!(
                f,
                "mode {mode}, {}, {backend} at {rate} Hz, {buffer} frames ({} period), {}, pipeline {pipeline}, executor {executor}",
                crate::report::counted(*threads, "thread"),
                us(*period_ns as f64),
                crate::report::counted(*channels, "channel"),
            ),
            Answer::Wait {
                seconds,
                cycle: Some(cycle),
            } => write!(f, "waited {} s; at cycle {cycle}", plain(*seconds)),
            Answer::Wait {
                seconds,
                cycle: None,
            } => write!(f, "waited {} s", plain(*seconds)),
            Answer::Help { help } => f.write_str(help),
            Answer::Quit => f.write_str("bye"),
        }
    }
}

/// The text of a `load` reply.
fn write_load(a: &Answer, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let Answer::Load {
        name,
        id,
        cycle,
        cost_ns,
        predicted_ns,
        period_ns,
        warning,
        pipeline,
        pipeline_note,
        executor,
        auto,
        ..
    } = a
    else {
        return Ok(());
    };
    write!(
        f,
        "loaded {name} (id {id}) at cycle {cycle}: cost {}, predicted cycle {} of a {} period",
        us(*cost_ns as f64),
        us(*predicted_ns as f64),
        us(*period_ns as f64)
    )?;
    match (auto, executor) {
        (Some(line), _) => write!(f, "; {line}")?,
        (None, Some(e)) => write!(f, "; executor {e}")?,
        (None, None) => {}
    }
    if *pipeline > 1 {
        write!(f, "; pipelined in {pipeline} sub-blocks")?;
    }
    if let Some(note) = pipeline_note {
        write!(f, "; {note}")?;
    }
    if let Some(w) = warning {
        write!(f, "; warning: {w}")?;
    }
    Ok(())
}

/// The text of a `list` reply.
fn write_list(graphs: &[GraphInfo], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if graphs.is_empty() {
        return f.write_str("no graph is loaded");
    }
    write!(f, "{} loaded: ", graphs.len())?;
    for (i, g) in graphs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(
            f,
            "{} (id {}, {}, {} ch, {} dB, {}, cost {}, from cycle {}",
            g.name,
            g.id,
            crate::report::graph::counted(g.tasks, "task"),
            g.channels,
            plain(g.gain_db),
            fugue_exec::size_in_words(g.memory),
            us(g.cost_ns as f64),
            g.adopted
        )?;
        if let Some(e) = &g.executor {
            write!(f, ", {e}")?;
        }
        if g.pipeline > 1 {
            write!(f, ", {} sub-blocks", g.pipeline)?;
        }
        if g.silenced {
            f.write_str(", silenced")?;
        }
        f.write_str(")")?;
    }
    Ok(())
}

/// `x` as Rust writes it, but in scientific notation below a millionth or from 10^16 on,
/// where that would write many digits (`1e-320`, not 0.000...0001).
fn plain(x: f64) -> String {
    // -0 is said as 0.
    let x = x + 0.0;
    if x != 0.0 && x.is_finite() && !(1e-6..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// The text of a `stats` reply for the whole host.
fn write_host_stats(
    graphs: usize,
    s: &HostStatsSnapshot,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    write!(
        f,
        "host: {}, {}, cycle mean {}, p99 {}, max {}; {} ({} of {} with a swap), {}, {} dropped",
        crate::report::counted(s.cycles as usize, "cycle"),
        crate::report::counted(graphs, "graph"),
        us(s.mean_ns),
        us(s.p99_ns as f64),
        us(s.max_ns as f64),
        s.misses_said(),
        s.swap_misses,
        crate::report::counted(s.swap_cycles as usize, "cycle"),
        crate::report::counted(s.overruns as usize, "overrun"),
        crate::report::counted(s.record_drops as usize, "recorded block"),
    )?;
    if s.resizes > 0 || s.resize_cycles > 0 {
        write!(
            f,
            "; {} followed, {} while compiling for them",
            crate::report::counted(s.resizes as usize, "buffer-size change"),
            crate::report::counted(s.resize_cycles as usize, "silent cycle")
        )?;
    }
    Ok(())
}

/// A host and the commands executed on it (see the module's documentation).
#[derive(Debug)]
pub struct Session {
    host: Host,
    stop: Arc<AtomicBool>,
    /// Set when the source of the command running went away ([`Session::set_gone`]).
    gone: Option<Arc<AtomicBool>>,
    /// Set when a source sent a `quit` ([`Session::set_quit`]).
    quit: Option<Arc<AtomicBool>>,
    /// Offline: the seconds that every `wait` so far adds up to.
    waited: Duration,
}

impl Session {
    /// A session on `host`; a `wait` ends early once `stop` is set (Ctrl-C).
    pub fn new(host: Host, stop: Arc<AtomicBool>) -> Session {
        let mut host = host;
        host.set_stop(stop.clone());
        Session {
            host,
            stop,
            gone: None,
            quit: None,
            waited: Duration::ZERO,
        }
    }

    /// The flag set when the source of the command about to run goes away: its `wait` ends
    /// there (`None`: a source that stays, such as a script).
    pub fn set_gone(&mut self, gone: Option<Arc<AtomicBool>>) {
        self.gone = gone;
    }

    /// The flag a source sets as it sends a `quit`: a `wait` running ends there, so that the
    /// quit, queued behind it, is served.
    pub fn set_quit(&mut self, quit: Option<Arc<AtomicBool>>) {
        self.quit = quit;
    }

    /// Whether a `wait` is to end now: the stop request (a signal), its source gone, or a
    /// `quit` waiting.
    fn cut_short(&self) -> bool {
        // Relaxed: request flags.
        let set =
            |f: &Option<Arc<AtomicBool>>| f.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
        self.stop.load(Ordering::Relaxed) || set(&self.gone) || set(&self.quit)
    }

    /// The host.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The host, to change.
    pub fn host_mut(&mut self) -> &mut Host {
        &mut self.host
    }

    /// The host, for [`Host::finish`].
    pub fn into_host(self) -> Host {
        self.host
    }

    /// Parses and executes one line; `None` when it holds no command (empty, a comment).
    /// Never fails: a failure is a reply.
    pub fn execute(&mut self, line: &str) -> Option<Reply> {
        match command::parse(line) {
            Ok(Some(cmd)) => Some(self.run(cmd)),
            Ok(None) => None,
            Err(e) => Some(Reply::failed("parse", e)),
        }
    }

    /// Executes `cmd`; never fails (a failure is a reply).
    pub fn run(&mut self, cmd: Command) -> Reply {
        let verb = cmd.verb();
        let (name, file) = match &cmd {
            Command::Load { name, file } => (Some(name.clone()), Some(file.display().to_string())),
            Command::Unload { name } => (Some(name.clone()), None),
            _ => (None, None),
        };
        match self.answer(cmd) {
            Ok(a) => Reply::done(a),
            Err(e) => Reply::failed(verb, message(&e)).naming(name, file),
        }
    }

    /// What the host did on its own since the last call (a JACK buffer-size change
    /// followed), one sentence each ([`Host::take_notices`]).
    pub fn take_notices(&mut self) -> Vec<String> {
        self.host.take_notices()
    }

    /// Between commands: lets the host follow a JACK buffer-size change
    /// ([`Host::poll`]); [`Session::take_notices`] then says what it did. A server that went
    /// away shows in the next command's reply.
    pub fn idle(&mut self) {
        let _ = self.host.poll();
    }

    fn answer(&mut self, cmd: Command) -> Result<Answer, HostError> {
        Ok(match cmd {
            Command::Load { name, file } => {
                let r = self.host.load(&name, &file)?;
                Answer::Load {
                    file: file.display().to_string(),
                    name,
                    id: r.id,
                    cycle: r.cycle,
                    cost_ns: r.cost_ns,
                    predicted_ns: r.predicted_ns,
                    period_ns: r.period_ns,
                    warning: r.warning,
                    pipeline: r.pipeline,
                    pipeline_note: r.pipeline_note,
                    executor: r.executor,
                    auto: r.auto,
                }
            }
            Command::Unload { name } => {
                let r = self.host.unload(&name)?;
                Answer::Unload {
                    name,
                    id: r.id,
                    cycle: r.cycle,
                    cycles: r.stats.cycles,
                }
            }
            Command::Gain { name, db } => {
                self.host.set_gain(&name, db)?;
                Answer::Gain { name, db }
            }
            Command::Set {
                name,
                node,
                attr,
                value,
            } => {
                let value = self.host.set_param_word(&name, &node, &attr, &value)?;
                Answer::Set {
                    name,
                    node,
                    attr,
                    value,
                }
            }
            Command::List => Answer::List {
                graphs: self.host.list(),
            },
            Command::Stats { name: Some(name) } => Answer::GraphStats {
                stats: self.host.stats(&name)?,
                name,
            },
            Command::Stats { name: None } => Answer::HostStats {
                stats: self.host.host_stats(),
                graphs: self.host.list().len(),
            },
            Command::Mode => self.mode(),
            Command::Wait { seconds } => Answer::Wait {
                seconds: self.wait(seconds)?,
                cycle: Some(self.host.cycle()),
            },
            Command::Help { topic } => Answer::Help {
                help: topic.and_then(command::help_of).unwrap_or(HELP),
            },
            Command::Quit => Answer::Quit,
        })
    }

    /// The answer to `mode`.
    fn mode(&self) -> Answer {
        let o = self.host.options();
        Answer::Mode {
            mode: o.mode.name(),
            threads: o.threads,
            backend: match o.backend {
                HostBackend::Offline => "offline",
                HostBackend::Clocked => "clocked",
                HostBackend::Alsa { .. } => "alsa",
                HostBackend::Jack { .. } => "jack",
            },
            rate: o.rate,
            buffer: o.block,
            period_ns: o.period_ns(),
            channels: o.channels,
            pipeline: o.pipeline.to_string(),
            executor: match o.mode {
                Mode::Separate => o.executor.to_string(),
                Mode::Shared | Mode::Partitioned => "pool".to_string(),
            },
        }
    }

    /// Lets the host play for `seconds`: offline in audio time ([`Session::wait_offline`]),
    /// otherwise in wall time, in slices, so that a stop request, the source gone or a
    /// `quit` waiting is noticed ([`Session::cut_short`]). Returns the seconds it waited:
    /// `seconds`, or less when one of those cut it short (whole
    /// milliseconds, never more than asked).
    fn wait(&mut self, seconds: f64) -> Result<f64, HostError> {
        if self.host.options().backend == HostBackend::Offline {
            return self.wait_offline(seconds);
        }
        let start = Instant::now();
        let end = start + Duration::from_secs_f64(seconds);
        loop {
            if self.cut_short() {
                return Ok(waited(start.elapsed().as_secs_f64(), seconds));
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(seconds);
            }
            self.host.wait(left.min(Duration::from_millis(100)))?;
        }
    }

    /// Offline, the host's clock is the audio it has played, and it plays only while a
    /// `wait` runs: with `T` the seconds that every `wait` so far adds up to, `wait` runs the
    /// cycles up to cycle `round(T × rate / buffer)` (none when the host is there already),
    /// as fast as they go, in stretches of about 100 ms of wall time so that what cuts a wait
    /// short is noticed ([`Session::cut_short`]).
    /// The other commands apply at the start of the next cycle run. So a script's recording
    /// holds exactly that many cycles, the same bytes at every run. Returns `seconds`, or,
    /// when it was cut short, the audio it played (whole milliseconds).
    fn wait_offline(&mut self, seconds: f64) -> Result<f64, HostError> {
        self.waited += Duration::from_secs_f64(seconds);
        let o = self.host.options();
        let per_second = o.rate as f64 / o.block as f64;
        let target = (self.waited.as_secs_f64() * per_second).round() as u64;
        let first = self.host.cycle();
        loop {
            let at = self.host.cycle();
            if self.cut_short() {
                // The clock stays where the audio is: a later `wait` does not play this
                // one's rest.
                self.waited = Duration::from_secs_f64(at as f64 / per_second);
                return Ok(waited((at - first) as f64 / per_second, seconds));
            }
            if at >= target {
                return Ok(seconds);
            }
            self.host
                .run_cycles_for(target - at, Duration::from_millis(100))?;
            self.host.poll()?;
        }
    }
}

/// What a `wait` of `asked` seconds replies after `elapsed` seconds: whole milliseconds,
/// never more than asked.
pub fn waited(elapsed: f64, asked: f64) -> f64 {
    (elapsed.min(asked) * 1e3).round() / 1e3
}

/// An error as one sentence: its causes joined with `: `, user text quoted in it cut to a
/// readable length ([`fugue_graph::error::shorten_quotes`]).
pub fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    fugue_graph::error::shorten_quotes(&s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One cycle is said as one, any other count in the plural.
    #[test]
    fn an_unload_counts_its_cycles_in_words() {
        let unload = |cycles| {
            Answer::Unload {
                name: "a".into(),
                id: 1,
                cycle: 7,
                cycles,
            }
            .to_string()
        };
        assert_eq!(unload(1), "unloaded a (id 1) at cycle 7 after 1 cycle");
        assert_eq!(unload(0), "unloaded a (id 1) at cycle 7 after 0 cycles");
        assert_eq!(unload(19), "unloaded a (id 1) at cycle 7 after 19 cycles");
    }

    #[test]
    fn negative_zero_is_said_as_zero() {
        assert_eq!(plain(-0.0), "0");
        let set = Answer::Set {
            name: "a".into(),
            node: "n".into(),
            attr: "volume".into(),
            value: -0.0,
        };
        assert_eq!(set.to_string(), "a: n volume = 0 from the next cycle");
        let gain = Answer::Gain {
            name: "a".into(),
            db: -0.0,
        };
        assert_eq!(gain.to_string(), "gain of a: 0 dB");
    }
}
