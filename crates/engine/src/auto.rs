//! The executor that chooses itself ([`ExecutorChoice::auto`]): before the first cycle, each
//! candidate runs the real plan for a bounded time, and the fastest is kept, unless it gains
//! less than [`MIN_GAIN`] over seq (then seq: a graph too small to gain stays sequential;
//! [`RULE`] says it in words).
//! The candidates: seq; work stealing and the HLFET static schedule at 2, 4, 8... threads and
//! at the most threads ([`thread_counts`]: the cores this process may use, at most
//! [`MAX_THREADS`], and at most the threads asked: [`ExecutorChoice::auto_threads`]), when
//! the graph has
//! parallelism enough to gain [`MIN_GAIN`] (not a line of nodes); at the most threads,
//! both again pipelined ([`crate::Pipeline`]) when the graph's parallelism is short of the
//! threads, and, offline ([`ExecutorChoice::auto_overlap`]), both running [`OVERLAP`]
//! cycles as one so that a cycle's first nodes start while the previous cycle's last ones
//! finish ([`ExecutorChoice::overlap`]). Candidates are compared by their time per cycle of
//! the block asked for; every one of them computes the same samples.
//!
//! The trials run on plans compiled apart from the one that will play, so the played audio
//! starts from the first sample exactly as the chosen executor alone would make it; with
//! pinned threads ([`ExecutorChoice::pin`]), the calling thread stands on the audio thread's
//! core while they run. With a
//! known period ([`fugue_exec::ExecOptions::period`]: the real-time backends) the trial
//! cycles are paced at it (at most [`MAX_TRIAL_PERIOD`]), as they will run (workers waking for
//! each cycle); offline they run
//! back to back. Rounds are interleaved (every candidate once, then again), so that a slow
//! spell of the machine falls on all of them. In each round, a candidate's figure is the mean
//! of its cycle times, the slowest [`TRIM`] of them left out: the mean, because a run is
//! judged by it (a candidate whose workers now and then wake late pays for it there), and
//! trimmed, so that one cycle the machine took away from the process does not decide the
//! choice. Its figure over the trials is the median of its rounds' figures, so that a slow
//! spell that falls on one candidate's turn (the machine busy elsewhere for a few
//! milliseconds) does not decide it either: with one such spell in seq's turn, seq's mean
//! over all its cycles would look slower than it is, and a parallel candidate that only
//! equals it would be kept. A turn that runs on fewer threads than the turn before it (seq
//! after a parallel candidate) starts with [`SETTLE`] of untimed cycles: the machine runs
//! the thread left slower for tens of milliseconds after the others stop.

use std::time::{Duration, Instant};

use fugue_exec::{Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use crate::engine::build_executor;
use crate::executor_choice::{BuildError, ExecutorChoice, Pipeline};

/// The most threads a candidate gets.
pub const MAX_THREADS: usize = 64;

/// The thread counts of the parallel candidates when `most` threads may run: 2, 4, 8...
/// below `most`, then `most` itself (none below 2). Doubling keeps the candidates few on a
/// large machine (on 16 cores, 2, 4, 8 and 16: four counts where every count from 2 made
/// fifteen), so that a run of a second still has room to try the most promising of them, and
/// the most threads are always among them (on 16 cores they ran 6 of the 12 fastest
/// configurations of the auto study's graphs and buffers).
pub fn thread_counts(most: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut t = 2;
    while t < most {
        out.push(t);
        t *= 2;
    }
    if most >= 2 {
        out.push(most);
    }
    out
}

/// A parallel candidate is chosen only when its mean cycle is at least this much shorter
/// than seq's: 5 %, the margin that the trials' noise leaves (a smaller gain measured there
/// is as likely not to hold in the run). [`RULE`] says it in words.
pub const MIN_GAIN: f64 = 0.05;

/// The rule of the choice, in the words that `--help`, the README and the documents use
/// (the figure is [`MIN_GAIN`]; a unit test keeps them equal).
pub const RULE: &str =
    "the fastest candidate is kept if its mean cycle is at least 5 % shorter than seq's, else seq";

/// How long all trials together take at most; with a known length, at most the run itself
/// when paced, and a twentieth of it offline.
pub const BUDGET: Duration = Duration::from_millis(600);

/// Cycles each candidate runs at least (over all rounds) offline: a run too short for this
/// stays with seq, untried.
pub const MIN_CYCLES: usize = 24;

/// Cycles each candidate runs at least when the trials are paced at a period: a run too
/// short for this stays with seq, untried.
pub const MIN_PACED_CYCLES: usize = 12;

/// The longest period trials are paced at: 4 ms (a longer one would make the trials of a
/// 2048-frame buffer take seconds, and measure the same wake-ups).
pub const MAX_TRIAL_PERIOD: Duration = Duration::from_millis(4);

/// The share of a run of known length that the trials may take.
const RUN_SHARE: f64 = 0.05;

/// Rounds over the candidates.
const ROUNDS: usize = 3;

/// The share of a candidate's slowest trial cycles left out of its mean: 2 %.
pub const TRIM: f64 = 0.02;

/// A turn of the trials that runs on fewer threads than the turn before it (seq after a
/// parallel candidate) runs untimed cycles for this long first. The cores that the turn
/// before kept busy slow the one left for tens of milliseconds: on the 2-core machine, seq's
/// paced cycles of losange156 at 128 frames took 13-18 µs for the first 12 cycles (35 ms)
/// after static's turn, then 10.5 µs, as in its first round and in its run; timed from the
/// start, seq's trials read 14-16 µs and a ws that runs 15 µs looked as fast. (At most an
/// eighth of the trials' budget per turn: a short render's trials settle less.)
pub const SETTLE: Duration = Duration::from_millis(40);

/// One candidate's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// `seq`, `ws 2t`, `static 2t pipeline 4`, `ws 2t overlap 2`...
    pub label: String,
    /// Its executor.
    pub kind: ExecutorKind,
    /// Its threads.
    pub threads: usize,
    /// Sub-blocks per cycle of the block asked for (1: not pipelined).
    pub pipeline: usize,
    /// Cycles run as one (offline only; 1: none; see [`ExecutorChoice::overlap`]).
    pub overlap: usize,
    /// Mean time per cycle of the block asked for, ns: the median over the rounds of its
    /// mean cycle in each round, the slowest [`TRIM`] of a round's cycles left out
    /// ([`round_median`]; a candidate with overlap `k` runs cycles of `k` blocks: its cycle
    /// divided by `k`).
    pub mean_ns: f64,
    /// Cycles timed.
    pub cycles: usize,
}

/// Why seq was kept without trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Untried {
    /// The run is too short to measure the candidates within its share of time.
    Short,
    /// One core: there is no parallel candidate.
    OneCore,
    /// One thread asked (`--threads 1`): there is no parallel candidate.
    OneThread,
    /// The graph has no parallelism to gain from (a line of nodes) and pipelining is off.
    NoParallelism,
    /// A request to stop (a signal) came during the trials.
    Stopped,
}

/// What the automatic choice measured and chose.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoReport {
    /// The candidates, in the order they were tried.
    pub candidates: Vec<Candidate>,
    /// Index of the chosen one in `candidates`.
    pub chosen: usize,
    /// Whether the trial cycles were paced at the period.
    pub paced: bool,
    /// Whether the trial cycles were the run's first cycles, on the plan that plays
    /// ([`ExecutorChoice::trials_in_run`]), rather than cycles run apart.
    pub in_run: bool,
    /// How long the trials took.
    pub took: Duration,
    /// Why seq was kept without trials, when it was (then `candidates` is seq alone, timed
    /// over one cycle).
    pub untried: Option<Untried>,
    /// The candidates left untried because the run is too short to try them all (the most
    /// promising by the plan's costs were tried).
    pub left_out: Vec<String>,
}

impl AutoReport {
    /// The chosen candidate.
    pub fn chosen(&self) -> &Candidate {
        &self.candidates[self.chosen]
    }

    /// Why the chosen candidate was kept, in words: `x1.40 over seq`, or why seq stayed.
    pub fn why(&self) -> String {
        let c = self.chosen();
        let seq = &self.candidates[0];
        if let Some(u) = self.untried {
            match u {
                Untried::Short => "the run is too short to measure the others",
                Untried::OneCore => "the only candidate on one core",
                Untried::OneThread => "the only candidate on the one thread asked",
                Untried::NoParallelism => {
                    "the graph has no parallelism to gain from and pipelining is off"
                }
                Untried::Stopped => "stopped during the trials",
            }
            .to_string()
        } else if self.chosen == 0 {
            match self.candidates[1..]
                .iter()
                .min_by(|a, b| a.mean_ns.total_cmp(&b.mean_ns))
            {
                Some(best) => {
                    let gain = 1.0 - best.mean_ns / seq.mean_ns;
                    format!(
                        "no parallel executor's mean cycle was at least {:.0} % shorter than seq's (best {}: {:.1} % {}, x{:.2})",
                        MIN_GAIN * 100.0,
                        best.label,
                        gain.abs() * 100.0,
                        if gain >= 0.0 { "shorter" } else { "longer" },
                        seq.mean_ns / best.mean_ns
                    )
                }
                None => "no other candidate".to_string(),
            }
        } else {
            format!("x{:.2} over seq", seq.mean_ns / c.mean_ns)
        }
    }

    /// One line: what was chosen and why, with every candidate's figure.
    pub fn line(&self) -> String {
        if self.untried.is_some() {
            return format!(
                "executor auto: chose {}, {}",
                self.chosen().label,
                self.why()
            );
        }
        let others: Vec<String> = self
            .candidates
            .iter()
            .map(|k| format!("{} {:.1} µs", k.label, k.mean_ns / 1000.0))
            .collect();
        let untried = if self.left_out.is_empty() {
            String::new()
        } else {
            format!(
                "; the run is too short to try {} more ({})",
                self.left_out.len(),
                self.left_out.join(", ")
            )
        };
        if self.in_run {
            return format!(
                "executor auto: chose {}, {}; mean cycle over the run's first {}, each candidate in turn: {}{untried}",
                self.chosen().label,
                self.why(),
                span(self.took),
                others.join(", ")
            );
        }
        format!(
            "executor auto: chose {}, {}; mean cycle over {} of {} trials: {}{untried}",
            self.chosen().label,
            self.why(),
            span(self.took),
            if self.paced { "paced" } else { "back-to-back" },
            others.join(", ")
        )
    }
}

/// Why seq is kept untried among `candidates` candidates on `cores` cores (`asked` threads,
/// when asked): a run too short to measure them, or nothing to choose from.
fn why_untried(candidates: usize, cores: usize, asked: Option<usize>) -> Untried {
    if candidates > 1 {
        Untried::Short
    } else if asked.is_some_and(|t| t < 2) {
        Untried::OneThread
    } else if cores.min(MAX_THREADS) < 2 {
        Untried::OneCore
    } else {
        Untried::NoParallelism
    }
}

impl AutoReport {
    /// The report of `seq` (the first candidate) kept untried for `why`, with the one cycle
    /// timed on it when there was one (else its mean is NaN, `null` in JSON, and 0 cycles).
    fn untried(
        why: Untried,
        seq: &Trial,
        timed: Option<Duration>,
        paced: bool,
        started: Instant,
    ) -> AutoReport {
        AutoReport {
            untried: Some(why),
            candidates: vec![Candidate {
                label: seq.0.clone(),
                kind: seq.1.kind,
                threads: 1,
                pipeline: 1,
                overlap: 1,
                mean_ns: timed.map_or(f64::NAN, |t| t.as_nanos() as f64),
                cycles: usize::from(timed.is_some()),
            }],
            chosen: 0,
            paced,
            in_run: false,
            took: started.elapsed(),
            left_out: Vec::new(),
        }
    }
}

/// A candidate to try: its label, its choice (`auto` off, `pipeline` a number, `overlap`
/// set).
type Trial = (String, ExecutorChoice);

/// A candidate's sub-blocks per cycle (its `pipeline` is always a number; 1 otherwise).
fn subs(c: &ExecutorChoice) -> usize {
    match c.pipeline {
        Pipeline::Sub(n) => n,
        Pipeline::Auto => 1,
    }
}

/// The candidates for `choice` on a machine with `cores` cores, `plain` being the graph's
/// plan compiled without pipelining: seq; ws and static at each of [`thread_counts`] (unless
/// the plan's parallelism is under [`MIN_GAIN`]: a line);
/// pipelined ws and static at the most threads, unless `choice.pipeline` is `Sub(1)` or the
/// plan has parallelism enough ([`Pipeline::choose`]); with `choice.auto_overlap`, ws and
/// static at the most threads running two cycles as one.
fn candidates(choice: &ExecutorChoice, cores: usize, plain: &Plan) -> Vec<Trial> {
    let base = ExecutorChoice {
        auto: false,
        pipeline: Pipeline::Sub(1),
        overlap: 1,
        ..choice.clone()
    };
    let mut out = vec![(
        "seq".to_string(),
        ExecutorChoice {
            kind: ExecutorKind::Seq,
            threads: 1,
            ..base.clone()
        },
    )];
    let most = cores
        .min(MAX_THREADS)
        .min(choice.auto_threads.unwrap_or(usize::MAX));
    let parallel = |t: usize, pipeline: usize, overlap: usize| {
        let mut tail = String::new();
        if pipeline > 1 {
            tail += &format!(" pipeline {pipeline}");
        }
        if overlap > 1 {
            tail += &format!(" overlap {overlap}");
        }
        [
            (
                format!("ws {t}t{tail}"),
                ExecutorChoice {
                    kind: ExecutorKind::Ws,
                    threads: t,
                    pipeline: Pipeline::Sub(pipeline),
                    overlap,
                    ..base.clone()
                },
            ),
            (
                format!("static {t}t{tail}"),
                ExecutorChoice {
                    kind: ExecutorKind::Static,
                    threads: t,
                    algorithm: Algorithm::Hlfet,
                    pipeline: Pipeline::Sub(pipeline),
                    overlap,
                    ..base.clone()
                },
            ),
        ]
    };
    // Unpipelined, no executor can beat seq by more than the plan's parallelism (its total
    // cost over its critical path): a line of nodes has none, and trying it anyway would only
    // let the noise of the trials choose a second thread that idles. (A plan pipelined as
    // every candidate's is, the host's, counts the sub-blocks in its path already.)
    let (total, cp) = (plain.total_cost(), plain.critical_path_cost());
    let can_gain = !(cp > 0.0 && total.is_finite()) || total / cp >= 1.0 / (1.0 - MIN_GAIN);
    if can_gain {
        for t in thread_counts(most) {
            out.extend(parallel(t, 1, 1));
        }
    }
    if most >= 2 {
        let sub = match choice.pipeline {
            Pipeline::Sub(n) => n,
            Pipeline::Auto => Pipeline::Auto.choose(plain, most),
        };
        if sub > 1 {
            out.extend(parallel(most, sub, 1));
        }
        // Overlapped cycles make a plan of OVERLAP blocks: not beyond the largest block.
        if choice.auto_overlap
            && choice.options.period.is_none()
            && plain.block().saturating_mul(OVERLAP) <= fugue_exec::MAX_BLOCK
        {
            out.extend(parallel(most, sub, OVERLAP));
        }
    }
    out
}

/// The indices of the `n` candidates of `cands` (seq, at index 0, left out) predicted the
/// fastest by the plan's costs: the larger of the work over the threads and the critical path
/// over the blocks run at once (sub-blocks times overlapped cycles), each thread weighing a
/// little (at equal prediction, fewer threads); ties keep the candidates' order.
fn most_promising(cands: &[Trial], plain: &Plan, n: usize) -> Vec<usize> {
    let (total, cp) = (plain.total_cost(), plain.critical_path_cost());
    let predicted = |c: &ExecutorChoice| {
        let t = c.threads.max(1) as f64;
        let k = (subs(c) * c.overlap.max(1)) as f64;
        (total / t).max(cp / k) * (1.0 + 0.01 * t)
    };
    let mut order: Vec<usize> = (1..cands.len()).collect();
    order.sort_by(|&a, &b| predicted(&cands[a].1).total_cmp(&predicted(&cands[b].1)));
    order.truncate(n);
    order
}

/// Keeps seq and the `fit - 1` most promising of `cands` ([`most_promising`]) when there are
/// more than `fit`; returns the indices kept (in the old list) and the labels left out.
fn keep_promising(cands: &mut Vec<Trial>, plain: &Plan, fit: usize) -> (Vec<usize>, Vec<String>) {
    if cands.len() <= fit {
        return ((0..cands.len()).collect(), Vec::new());
    }
    let mut keep = most_promising(cands, plain, fit.saturating_sub(1));
    keep.push(0);
    keep.sort_unstable();
    let mut left_out = Vec::new();
    let mut k = 0;
    cands.retain(|(label, _)| {
        let kept = keep.contains(&k);
        if !kept {
            left_out.push(label.clone());
        }
        k += 1;
        kept
    });
    (keep, left_out)
}

/// Cycles an overlapping candidate runs as one.
pub const OVERLAP: usize = 2;

/// [`overlap_worth`]: the fewest threads at which overlapped candidates are tried.
pub const OVERLAP_MIN_THREADS: usize = 4;

/// [`overlap_worth`]: the largest block at which overlapped candidates are tried.
pub const OVERLAP_MAX_BLOCK: usize = 4096;

/// Whether a render of blocks of `block` frames should let auto try overlapped candidates
/// ([`ExecutorChoice::auto_overlap`]) on this machine: at least [`OVERLAP_MIN_THREADS`]
/// threads for its candidates and blocks of at most [`OVERLAP_MAX_BLOCK`] frames. Running
/// two blocks as one helps where each cycle's end (its last units, the threads meeting)
/// weighs on many threads; on 2 cores it never gained, and with two large blocks in flight
/// the cycle's buffers outgrow the caches (whole process, ws on 2 threads, 2026-11-28:
/// rateau101 at 512, 2048, 4096 and 8192 frames 267/263/256/255 ms plain against
/// 274/262/255/268 overlapped; strings32 at 8192 and 16384 frames 524/537 against 538/560).
/// Trials in the render run on one plan, so choosing overlap commits every candidate to it.
pub fn overlap_worth(block: usize) -> bool {
    let most = fugue_exec::placement::available_cores().min(MAX_THREADS);
    most >= OVERLAP_MIN_THREADS && block <= OVERLAP_MAX_BLOCK
}

/// Compiles the graph's plan for a candidate: `(pipeline, overlap, threads)` gives a plan of
/// `overlap` blocks per cycle cut into `pipeline * overlap` sub-blocks, chains cut into
/// `threads` segments ([`crate::Engine::build`]).
pub type Compile<'a> = dyn Fn(usize, usize, usize) -> Result<Plan, BuildError> + 'a;

/// Measures the candidates (each on a plan compiled by `compile` apart from the one that will
/// play, with the kinds of `registry`; `plain` is the graph's plan without pipelining, or,
/// where `compile` pipelines every candidate alike (the host's --pipeline), pipelined as they
/// are on the most threads: it decides whether parallel and pipelined candidates are worth
/// trying) and returns the choice to build, with the report. Control
/// thread; allocates.
pub fn choose(
    graph: &TaskGraph,
    registry: &fugue_dsp::Registry,
    compile: &Compile<'_>,
    plain: &Plan,
    choice: &ExecutorChoice,
) -> Result<(ExecutorChoice, AutoReport), BuildError> {
    let started = Instant::now();
    let cores = fugue_exec::placement::available_cores();
    // With pinned threads, the trials run where the audio thread will play: on the first
    // core, the workers on the others. Left where it was, the calling thread may share a
    // core with a candidate's worker and make every parallel candidate look as slow as seq.
    // Best effort: a refusal leaves the thread where it was (the played run says so).
    let _unpin = choice
        .pin
        .then(|| {
            fugue_exec::placement::pin_current_for_now(fugue_exec::placement::allowed_cores()[0])
                .ok()
        })
        .flatten();
    // A costs file is for the static candidates, which a short run does not try: it is
    // read and checked against the graph now, so that a file that cannot be used is said
    // whatever the run's length.
    if let crate::Costs::File(_) = &choice.costs {
        let mut g = graph.clone();
        choice
            .costs
            .apply(&mut g, plain.sample_rate(), plain.block(), registry)?;
    }
    let mut cands = candidates(choice, cores, plain);
    // Trials are paced at the period, or at MAX_TRIAL_PERIOD when it is longer (the workers
    // park between cycles either way, and wake ahead of the paced start as they will).
    let period = choice.options.period.map(|p| p.min(MAX_TRIAL_PERIOD));
    let paced = period.is_some();
    let least = if paced { MIN_PACED_CYCLES } else { MIN_CYCLES };
    // Decided before any trial plan is compiled when nothing can be tried: one candidate, or
    // a run whose length leaves fewer timed trial cycles than two candidates (seq and one
    // other) need, as the budget below counts them at most (paced: the cycles at the trials'
    // period, which is shorter than the run's above MAX_TRIAL_PERIOD, that fit in the run's
    // own length and in BUDGET, less the settling; offline: the run's share), less their
    // turns' untimed cycles. Then no processor is made or run beside the plan that plays, so
    // seq's output is the output of seq alone, even for a plugin that keeps process-wide
    // state (a random generator shared by its instances).
    let most_trials = choice.auto_cycles.map(|n| match period {
        Some(trial) => timed_trial_cycles(choice, trial, 2, Duration::ZERO),
        None => n as f64 * RUN_SHARE - (2 * ROUNDS * 2) as f64,
    });
    if cands.len() == 1 || most_trials.is_some_and(|t| t < (least * 2) as f64) {
        let why = why_untried(cands.len(), cores, choice.auto_threads);
        let report = AutoReport::untried(why, &cands[0], None, paced, started);
        return Ok((cands.swap_remove(0).1, report));
    }
    // One trial plan per (pipeline, overlap, threads) that some candidate needs; a candidate
    // whose pipelining the plan refused (a graph that changes rates) is dropped.
    let mut plans: Vec<((usize, usize, usize), Plan)> = Vec::new();
    let mut plan_of = Vec::with_capacity(cands.len());
    let mut kept = Vec::with_capacity(cands.len());
    for (label, c) in cands.drain(..) {
        let sub = subs(&c);
        let key = (
            sub,
            c.overlap,
            if sub * c.overlap > 1 { c.threads } else { 1 },
        );
        let k = match plans.iter().position(|(k, _)| *k == key) {
            Some(k) => k,
            None => {
                let p = compile(key.0, key.1, key.2)?;
                if key.0 * key.1 > 1 && p.pipeline() != key.0 * key.1 {
                    continue;
                }
                plans.push((key, p));
                plans.len() - 1
            }
        };
        plan_of.push(k);
        kept.push((label, c));
    }
    let mut cands = kept;
    // Paced, no more candidates can be tried than fit at the trials' period (a cycle takes at
    // least that long): the most promising of those left (a pipelined candidate the plan
    // refused is gone) are kept before an executor is made for the others.
    let mut left_out = Vec::new();
    if let Some(trial) = period {
        let fit = fitting(choice, trial, least, cands.len(), Duration::ZERO);
        if fit >= 2 {
            let kept;
            (kept, left_out) = keep_promising(&mut cands, plain, fit);
            let mut k = 0;
            plan_of.retain(|_| {
                k += 1;
                kept.contains(&(k - 1))
            });
        }
    }
    let mut execs = Vec::with_capacity(cands.len());
    for ((_, c), &k) in cands.iter().zip(&plan_of) {
        let mut c = c.clone();
        c.options.period = period;
        execs.push(build_executor(graph, registry, &plans[k].1, &c)?.0);
    }
    // Cycles per candidate per round: from one cycle's time (seq's), within the budget.
    let t0 = Instant::now();
    execs[0].run_cycle(&mut plans[plan_of[0]].1);
    let one = t0.elapsed().max(Duration::from_micros(1));
    let per_cycle = period.map_or(one, |p| p.max(one));
    let settle = trial_settle(choice, per_cycle);
    // Paced, the trials delay the run, and so does what came before them (the plans'
    // compiling, the executors' building, the first cycle): the budget counts it.
    let spent = if paced {
        started.elapsed()
    } else {
        Duration::ZERO
    };
    // A run too short to try every candidate tries the most promising ones that fit (by the
    // plan's costs: the work over the threads, or the critical path), seq always among them.
    let (mut cands, mut execs, mut plan_of) = (cands, execs, plan_of);
    let fit = fitting(choice, per_cycle, least, cands.len(), spent);
    if fit >= 2 {
        let (kept, more) = keep_promising(&mut cands, plain, fit);
        left_out.extend(more);
        let mut k = 0;
        execs.retain(|_| {
            k += 1;
            kept.contains(&(k - 1))
        });
        let mut k = 0;
        plan_of.retain(|_| {
            k += 1;
            kept.contains(&(k - 1))
        });
    }
    let total = timed_trial_cycles(choice, per_cycle, cands.len(), spent).max(0.0) as usize;
    if total < least * cands.len() || cands.len() == 1 {
        // Too short a run to measure (or nothing to choose from): seq, untried.
        let why = why_untried(cands.len(), cores, choice.auto_threads);
        let report = AutoReport::untried(why, &cands[0], Some(one), paced, started);
        return Ok((cands[0].1.clone(), report));
    }
    let per_round = (total / (cands.len() * ROUNDS)).clamp(least.div_ceil(ROUNDS), 2000);
    let mut times = round_times(cands.len(), per_round);
    // Paced cycles start one period apart (the first at once); unpaced, back to back.
    let pace = |next: &mut Option<Instant>| {
        let (Some(p), Some(n)) = (period, next.as_mut()) else {
            *next = Some(Instant::now());
            return;
        };
        *n += p;
        let now = Instant::now();
        if *n > now {
            std::thread::sleep(*n - now);
        } else {
            *n = now;
        }
    };
    // The trials end within the budget even when the machine is slower than the first cycle
    // said (a loaded machine, late wake-ups): a round that would run a cycle past the
    // deadline is left unfinished and not counted, the rounds before decide. Paced, the
    // deadline is the budget from the start, less PACED_MARGIN of it (the run's start waits
    // for the trials, which take no longer than the run: the last cycle started before the
    // deadline may end after it, later still where the system was slow to run it; in a CI
    // run on a loaded machine, trials counted for 0.175 s of a 0.2-s run took 0.2007 s
    // without the margin); offline, the budget and a quarter from the first cycle
    // (the cycles were counted to fit the budget from one cycle's time, which later cycles
    // exceed a little, and the trials take from the run, not ahead of it). The first round
    // always ends: it is all there is to decide from.
    let budget = trial_budget(choice, per_cycle);
    let deadline = if paced {
        started + Duration::from_secs_f64(budget * (1.0 - PACED_MARGIN))
    } else {
        t0 + Duration::from_secs_f64(budget * 1.25)
    };
    // The threads of the turn before (the build: one).
    let mut before = 1;
    'rounds: for round in 0..ROUNDS {
        for k in 0..execs.len() {
            let (exec, ts) = (&mut execs[k], &mut times[k]);
            let plan = &mut plans[plan_of[k]].1;
            let overlap = cands[k].1.overlap.max(1);
            // A candidate running several blocks per cycle runs as many fewer cycles.
            let cycles = per_round.div_ceil(overlap);
            // Untimed: two cycles (the workers start or wake, the caches fill), and a turn on
            // fewer threads than the one before runs them for SETTLE at least.
            let threads = cands[k].1.threads.max(1);
            let settle = if threads < before {
                settle
            } else {
                Duration::ZERO
            };
            before = threads;
            let turn = Instant::now();
            let mut next = None;
            let mut warm = 0;
            let past =
                || choice.stop_requested() || (round > 0 && Instant::now() + one >= deadline);
            let mut late = false;
            // Checked after the pacing's wait, just before the cycle it would run.
            while warm < 2 || turn.elapsed() < settle {
                pace(&mut next);
                late = past();
                if late {
                    break;
                }
                exec.run_cycle(plan);
                warm += 1;
            }
            for _ in 0..cycles {
                if late {
                    break;
                }
                pace(&mut next);
                late = past();
                if late {
                    break;
                }
                let t = Instant::now();
                exec.run_cycle(plan);
                ts[round].push(t.elapsed().as_nanos() as u64 / overlap as u64);
            }
            if late {
                for ts in times.iter_mut() {
                    ts[round].clear();
                }
                break 'rounds;
            }
        }
    }
    // Stopped: nothing measured decides; seq, untried, for the little the run has left.
    if choice.stop_requested() {
        let report = AutoReport::untried(Untried::Stopped, &cands[0], Some(one), paced, started);
        return Ok((cands[0].1.clone(), report));
    }
    let mut out: Vec<Candidate> = Vec::with_capacity(cands.len());
    for ((label, c), mut ts) in cands.iter().zip(times) {
        let n = ts.iter().map(Vec::len).sum();
        let mean_ns = round_median(&mut ts);
        out.push(Candidate {
            label: label.clone(),
            kind: c.kind,
            threads: c.threads,
            pipeline: subs(c),
            overlap: c.overlap,
            mean_ns,
            cycles: n,
        });
    }
    let chosen = keep(&out, |_| true);
    let report = AutoReport {
        untried: None,
        chosen,
        candidates: out,
        paced,
        in_run: false,
        took: started.elapsed(),
        left_out,
    };
    Ok((cands[chosen].1.clone(), report))
}

/// The trials' budget in seconds, cycles taking `per_cycle`: [`BUDGET`] (or the shorter
/// [`ExecutorChoice::auto_budget`]), and with a known
/// length, at most the run itself when paced (the trials delay a real-time run's start), a
/// share of it offline (they take from it).
fn trial_budget(choice: &ExecutorChoice, per_cycle: Duration) -> f64 {
    let mut budget = choice
        .auto_budget
        .map_or(BUDGET, |b| b.min(BUDGET))
        .as_secs_f64();
    if let Some(n) = choice.auto_cycles {
        let run = match choice.options.period {
            Some(p) => n as f64 * p.as_secs_f64(),
            None => n as f64 * per_cycle.as_secs_f64() * RUN_SHARE,
        };
        budget = budget.min(run);
    }
    budget
}

/// How long seq's turns after the first round run untimed cycles: [`SETTLE`], or an eighth
/// of the budget when that is shorter (a short render's trials settle less).
fn trial_settle(choice: &ExecutorChoice, per_cycle: Duration) -> Duration {
    SETTLE.min(Duration::from_secs_f64(
        trial_budget(choice, per_cycle) / 8.0,
    ))
}

/// The timed trial cycles that `cands` candidates share, cycles taking `per_cycle`: the
/// budget ([`trial_budget`]) less seq's settling in the rounds after the first
/// ([`trial_settle`]) and the `spent` part of it (paced: the plans' compiling and the first
/// cycle, which delay the run as the trials do), over `per_cycle`, less every turn's two
/// untimed cycles in each round.
/// Paced, `per_cycle` is at least the trials' period, so this count at the period bounds the
/// count at any measured cycle from above: what [`choose`] checks before compiling anything.
fn timed_trial_cycles(
    choice: &ExecutorChoice,
    per_cycle: Duration,
    cands: usize,
    spent: Duration,
) -> f64 {
    let budget = trial_budget(choice, per_cycle)
        - spent.as_secs_f64()
        - trial_settle(choice, per_cycle).as_secs_f64() * (ROUNDS - 1) as f64;
    budget / per_cycle.as_secs_f64().max(1e-9) - (2 * ROUNDS * cands) as f64
}

/// The most candidates, at most `n`, whose trials fit when cycles take `per_cycle`: each of
/// them gets `least` timed cycles out of [`timed_trial_cycles`] (which leaves out every turn's
/// untimed ones, so that more candidates leave fewer); 0 when not even one fits.
fn fitting(
    choice: &ExecutorChoice,
    per_cycle: Duration,
    least: usize,
    n: usize,
    spent: Duration,
) -> usize {
    (1..=n)
        .rev()
        .find(|&k| timed_trial_cycles(choice, per_cycle, k, spent) >= (least * k) as f64)
        .unwrap_or(0)
}

/// Trials that are the first cycles of an offline run ([`ExecutorChoice::trials_in_run`]):
/// every candidate runs the plan that plays, in turn, a few cycles at a time, interleaved in
/// [`ROUNDS`] rounds, and the run goes on with the fastest ([`keep`]'s rule). Each cycle is
/// a cycle of the run (its output is the run's output: every executor computes the same
/// samples), so the trials cost only the difference between the candidates' cycles and the
/// chosen one's, not cycles run apart and thrown away. Only candidates of the plan that plays
/// are tried: with `overlap`, ws and static running that many blocks per cycle, else plain
/// ws and static (never pipelined ones); seq runs on it too.
pub(crate) struct InRun {
    cands: Vec<Trial>,
    execs: Vec<Box<dyn Executor + Send>>,
    /// Per candidate, per round: the timed cycles' times (ns per block).
    times: Vec<Vec<Vec<u64>>>,
    /// Timed cycles per candidate per round (each after [`IN_RUN_WARM`] untimed ones).
    per_round: usize,
    /// Where the trials are: round, candidate, cycle within the candidate's turn.
    round: usize,
    cand: usize,
    step: usize,
    /// Blocks per cycle of the plan.
    overlap: usize,
    started: Instant,
    left_out: Vec<String>,
}

/// Untimed cycles before a candidate's timed ones in each round (its workers start or wake,
/// the caches fill with what it touches).
const IN_RUN_WARM: usize = 2;

/// The share of a paced trials' budget kept free at its end (5 %): room for the cycle that
/// the deadline let start to end, and for a late wake-up before it.
const PACED_MARGIN: f64 = 0.05;

/// The share of a run's cycles that its trials may take at most.
const IN_RUN_SHARE: usize = 4;

/// Trials in the run stop running seq once a parallel candidate's mean cycle is at most this
/// share of seq's (after a round): six times [`MIN_GAIN`]'s margin, beyond what one round's
/// noise moves a figure on the 2-core machine (5-15 %). Seq's turns are the dearest cycles of
/// the trials: on 2 cores, where the best candidate of a wide graph takes 0.55-0.6 of seq's
/// time, 0.5 kept seq running all three rounds.
const SEQ_BEATEN: f64 = 0.7;

impl std::fmt::Debug for InRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InRun")
            .field("candidates", &self.cands.len())
            .field("per_round", &self.per_round)
            .finish_non_exhaustive()
    }
}

/// How many candidates' trials fit within the share of a run of `blocks` blocks, run
/// `overlap` blocks per cycle, that trials in the run may take ([`IN_RUN_SHARE`]).
fn in_run_fit(blocks: u64, overlap: usize) -> usize {
    let cycles = (blocks as usize).div_ceil(overlap.max(1));
    let turn = MIN_CYCLES.div_ceil(ROUNDS) + IN_RUN_WARM;
    (cycles / IN_RUN_SHARE) / (turn * ROUNDS)
}

/// Whether trials in the run ([`InRun`]) may be worth building for `choice` run `overlap`
/// blocks per cycle: a run of known length with room for two candidates' trials. Asked
/// before a plan is compiled for them, so that a run too short makes no processor but those
/// that play.
pub(crate) fn in_run_fits(choice: &ExecutorChoice, overlap: usize) -> bool {
    choice
        .auto_cycles
        .is_some_and(|blocks| in_run_fit(blocks, overlap) >= 2)
}

impl InRun {
    /// The trials of `choice` (auto, offline, `auto_cycles` known) on `plan`, which runs
    /// `overlap` blocks per cycle (`plain` is the graph's unpipelined plan of one block, for
    /// the candidates and their ranking), with their executors built, and the warnings to say
    /// once. `None`: no trial is worth it (one core, no parallelism, or a run too short for
    /// two candidates' trials within a quarter of its cycles): the caller measures as
    /// [`choose`] does, or keeps seq.
    pub(crate) fn new(
        graph: &TaskGraph,
        registry: &fugue_dsp::Registry,
        plain: &Plan,
        plan: &Plan,
        overlap: usize,
        choice: &ExecutorChoice,
    ) -> Result<Option<(InRun, Vec<String>)>, BuildError> {
        let Some(blocks) = choice.auto_cycles else {
            return Ok(None);
        };
        let cores = fugue_exec::placement::available_cores();
        // Seq (first) runs any plan; the others, those of this plan. (Seq on a plan of
        // several blocks per cycle is seq.)
        let mut cands: Vec<Trial> = candidates(choice, cores, plain)
            .into_iter()
            .enumerate()
            .filter(|(i, (_, c))| *i == 0 || (subs(c) == 1 && c.overlap.max(1) == overlap.max(1)))
            .map(|(_, t)| t)
            .collect();
        if cands.len() < 2 {
            return Ok(None);
        }
        let cycles = (blocks as usize).div_ceil(overlap.max(1));
        let least = MIN_CYCLES.div_ceil(ROUNDS);
        let fit = in_run_fit(blocks, overlap);
        if fit < 2 {
            return Ok(None);
        }
        let (_, left_out) = keep_promising(&mut cands, plain, fit);
        // A longer run measures longer: a twentieth of it, within the quarter.
        let per_round = ((cycles / 20) / (cands.len() * ROUNDS))
            .saturating_sub(IN_RUN_WARM)
            .clamp(least, 2000);
        let mut execs = Vec::with_capacity(cands.len());
        let mut warnings = Vec::new();
        for (_, c) in &cands {
            let (e, w) = build_executor(graph, registry, plan, c)?;
            execs.push(e);
            warnings.extend(w);
        }
        Ok(Some((
            InRun {
                times: round_times(cands.len(), per_round),
                cands,
                execs,
                per_round,
                round: 0,
                cand: 0,
                step: 0,
                overlap: overlap.max(1),
                started: Instant::now(),
                left_out,
            },
            warnings,
        )))
    }

    /// Runs the next cycle of the trials on `plan`; returns `true` when that was the last
    /// one. Never allocates: the times have their room.
    pub(crate) fn run_cycle(&mut self, plan: &mut Plan) -> bool {
        let exec = &mut self.execs[self.cand];
        if self.step < IN_RUN_WARM {
            exec.run_cycle(plan);
        } else {
            let t = Instant::now();
            exec.run_cycle(plan);
            self.times[self.cand][self.round]
                .push(t.elapsed().as_nanos() as u64 / self.overlap as u64);
        }
        self.step += 1;
        if self.step == IN_RUN_WARM + self.per_round {
            self.step = 0;
            self.cand += 1;
            if self.cand == self.cands.len() {
                self.cand = 0;
                self.round += 1;
            }
            // Seq's cycles are the dearest of the trials: once a round shows a parallel
            // candidate at SEQ_BEATEN of seq's time or less, the rounds to come would have to
            // slow it by more than a third to make seq the choice, and seq runs no more.
            if self.cand == 0 && self.round < ROUNDS && self.seq_beaten() {
                self.cand = 1;
            }
        }
        self.round == ROUNDS
    }

    /// Whether a parallel candidate's mean so far is at most [`SEQ_BEATEN`] of seq's.
    fn seq_beaten(&self) -> bool {
        let mean = |t: &[Vec<u64>]| {
            let n: usize = t.iter().map(Vec::len).sum();
            let sum: u64 = t.iter().flatten().sum();
            (n > 0).then(|| sum as f64 / n as f64)
        };
        let Some(seq) = mean(&self.times[0]) else {
            return false;
        };
        self.times[1..]
            .iter()
            .any(|t| mean(t).is_some_and(|m| m <= seq * SEQ_BEATEN))
    }

    /// The chosen candidate's executor and choice, and the report; the other executors are
    /// dropped (their threads end).
    pub(crate) fn finish(self) -> (Box<dyn Executor + Send>, ExecutorChoice, AutoReport) {
        let mut out: Vec<Candidate> = Vec::with_capacity(self.cands.len());
        for ((label, c), mut ts) in self.cands.iter().zip(self.times) {
            out.push(Candidate {
                label: label.clone(),
                kind: c.kind,
                threads: c.threads,
                pipeline: 1,
                overlap: self.overlap,
                cycles: ts.iter().map(Vec::len).sum(),
                mean_ns: round_median(&mut ts),
            });
        }
        let chosen = keep(&out, |_| true);
        let report = AutoReport {
            untried: None,
            chosen,
            candidates: out,
            paced: false,
            in_run: true,
            took: self.started.elapsed(),
            left_out: self.left_out,
        };
        let choice = self.cands[chosen].1.clone();
        let exec = self
            .execs
            .into_iter()
            .nth(chosen)
            .expect("one executor per candidate");
        (exec, choice, report)
    }
}

/// The candidate to keep among `candidates` (seq first): the fastest of those that `fit`,
/// unless it gains less than [`MIN_GAIN`] over seq; then seq (0).
pub fn keep(candidates: &[Candidate], fits: impl Fn(&Candidate) -> bool) -> usize {
    let seq = candidates[0].mean_ns;
    (1..candidates.len())
        .filter(|&i| fits(&candidates[i]))
        .min_by(|&a, &b| candidates[a].mean_ns.total_cmp(&candidates[b].mean_ns))
        .filter(|&i| candidates[i].mean_ns <= seq * (1.0 - MIN_GAIN))
        .unwrap_or(0)
}

/// Room for the times of `cands` candidates' timed cycles, `per_round` in each of
/// [`ROUNDS`] rounds (each vector with its own capacity: pushing them never allocates).
fn round_times(cands: usize, per_round: usize) -> Vec<Vec<Vec<u64>>> {
    (0..cands)
        .map(|_| (0..ROUNDS).map(|_| Vec::with_capacity(per_round)).collect())
        .collect()
}

/// A candidate's figure from its trial cycles' times in each round: the median over the
/// rounds that timed cycles of each round's trimmed mean (the mean of the middle two
/// for an even count; 0 when no round timed any). Sorts each round's times.
pub fn round_median(rounds: &mut [Vec<u64>]) -> f64 {
    let mut means: Vec<f64> = rounds
        .iter_mut()
        .filter(|r| !r.is_empty())
        .map(|r| {
            r.sort_unstable();
            trimmed_mean(r)
        })
        .collect();
    means.sort_by(f64::total_cmp);
    match means.len() {
        0 => 0.0,
        n if n % 2 == 1 => means[n / 2],
        n => (means[n / 2 - 1] + means[n / 2]) / 2.0,
    }
}

/// The mean of `sorted` (ascending) without its slowest [`TRIM`] (rounded down: nothing is
/// left out of fewer than 50).
fn trimmed_mean(sorted: &[u64]) -> f64 {
    let keep = sorted.len() - (sorted.len() as f64 * TRIM) as usize;
    let kept = &sorted[..keep.max(1).min(sorted.len())];
    kept.iter().map(|&t| t as f64).sum::<f64>() / kept.len().max(1) as f64
}

/// A trial's span in words: seconds with two decimals, or milliseconds below a hundredth of
/// a second (a span of a few blocks is not "0.00 s").
fn span(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 0.01 {
        format!("{s:.2} s")
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A candidate of label `label` and figure `mean_ns` (what `keep` reads).
    fn c(label: &str, mean_ns: f64) -> Candidate {
        Candidate {
            label: label.into(),
            kind: ExecutorKind::Seq,
            threads: 1,
            pipeline: 1,
            overlap: 1,
            mean_ns,
            cycles: 24,
        }
    }

    #[test]
    fn the_rule_in_words_says_the_margin_that_the_choice_uses() {
        let said = format!("at least {:.0} % shorter than seq's", MIN_GAIN * 100.0);
        assert!(RULE.contains(&said), "{RULE}");
        // 5.5 % shorter: kept; 4 % shorter: seq.
        assert_eq!(keep(&[c("seq", 100.0), c("ws 2t", 94.5)], |_| true), 1);
        assert_eq!(keep(&[c("seq", 100.0), c("ws 2t", 96.0)], |_| true), 0);
    }

    /// Seq kept: the reason states the margin and the best candidate's own gain, shorter or
    /// longer, so that "5 %" and "x1.05" do not read as a contradiction.
    #[test]
    fn why_seq_was_kept_states_the_best_candidates_gain() {
        let report = |ws: f64| AutoReport {
            candidates: vec![c("seq", 100.0), c("ws 2t", ws), c("static 2t", 120.0)],
            chosen: 0,
            paced: false,
            in_run: false,
            took: Duration::ZERO,
            untried: None,
            left_out: Vec::new(),
        };
        assert_eq!(
            report(96.0).why(),
            "no parallel executor's mean cycle was at least 5 % shorter than seq's (best ws 2t: 4.0 % shorter, x1.04)"
        );
        assert_eq!(
            report(110.0).why(),
            "no parallel executor's mean cycle was at least 5 % shorter than seq's (best ws 2t: 10.0 % longer, x0.91)"
        );
    }

    /// One round of seq slowed by a spell of the machine (every cycle twice as long) does not
    /// make seq look slower than a candidate that equals it: the rounds' median is kept, where
    /// the mean of all cycles would have chosen the candidate.
    #[test]
    fn a_slow_round_does_not_decide_the_choice() {
        let mut seq = vec![vec![100u64; 10], vec![200; 10], vec![100; 10]];
        let mut ws = vec![vec![98u64; 10], vec![99; 10], vec![97; 10]];
        let all = |r: &[Vec<u64>]| r.iter().flatten().sum::<u64>() as f64 / 30.0;
        assert!(
            all(&ws) < all(&seq) * (1.0 - MIN_GAIN),
            "the old figure chose ws"
        );
        let (s, w) = (round_median(&mut seq), round_median(&mut ws));
        assert_eq!((s, w), (100.0, 98.0));
        assert_eq!(keep(&[c("seq", s), c("ws 2t", w)], |_| true), 0);
        // Two rounds: the mean of both; rounds without cycles do not count; none: 0.
        assert_eq!(round_median(&mut [vec![10, 10], vec![30, 30]]), 20.0);
        assert_eq!(round_median(&mut [vec![], vec![7], vec![]]), 7.0);
        assert_eq!(round_median(&mut [vec![], vec![]]), 0.0);
        // Each round trimmed on its own: 2 % of 100 cycles.
        let mut one = vec![10u64; 98];
        one.extend([1000, 5000]);
        assert_eq!(round_median(&mut [one]), 10.0);
    }

    /// Overlap is worth trying only with enough threads for the candidates and blocks small
    /// enough that two in flight stay in the caches.
    #[test]
    fn overlap_is_tried_on_enough_cores_at_small_blocks() {
        let many = fugue_exec::placement::available_cores().min(MAX_THREADS) >= OVERLAP_MIN_THREADS;
        assert_eq!(overlap_worth(256), many);
        assert_eq!(overlap_worth(OVERLAP_MAX_BLOCK), many);
        assert!(!overlap_worth(OVERLAP_MAX_BLOCK + 1));
    }

    #[test]
    fn the_trimmed_mean_leaves_out_the_slowest_two_percent() {
        let mut ts: Vec<u64> = vec![10; 98];
        ts.extend([1000, 5000]);
        assert_eq!(trimmed_mean(&ts), 10.0);
        // Under 50 cycles, none is left out.
        assert_eq!(trimmed_mean(&[10, 20, 30, 100]), 40.0);
        assert_eq!(trimmed_mean(&[7]), 7.0);
    }

    /// On a wide graph (a rake of 101 nodes), a run too short for every candidate tries
    /// those with the most threads first, and never a pipelined one before an unpipelined one
    /// that the costs predict as fast.
    #[test]
    fn a_short_run_tries_the_most_promising_candidates() {
        let g = fugue_graph::read::ag::parse(
            &{
                let mut s =
                    String::from("a = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\n");
                for i in 0..40 {
                    s += &format!(
                        "g{i} = {{ kind: \"gain\", volume: 0.5, }};\na.1 -> g{i}.1 -> s.1;\n"
                    );
                }
                s
            },
            "rake.ag",
        )
        .unwrap();
        let reg = fugue_dsp::Registry::with_builtin_kinds();
        let plain = fugue_exec::Plan::compile(
            &g,
            &reg,
            &fugue_exec::CompileOptions {
                sample_rate: 48_000.0,
                block: 256,
                ..Default::default()
            },
        )
        .unwrap();
        let choice = ExecutorChoice::default();
        let cands = candidates(&choice, 8, &plain);
        assert!(
            cands.len() > 4,
            "{:?}",
            cands.iter().map(|c| &c.0).collect::<Vec<_>>()
        );
        // Threads asked (`--threads`) bound the candidates: 3 gives 2 and 3, 1 seq alone.
        for (asked, most) in [(3, 3), (1, 1)] {
            let bounded = ExecutorChoice {
                pipeline: Pipeline::Auto,
                auto_threads: Some(asked),
                ..ExecutorChoice::default()
            };
            let c = candidates(&bounded, 8, &plain);
            assert_eq!(c.iter().map(|c| c.1.threads).max(), Some(most));
            assert_eq!(c.len() == 1, asked == 1);
        }
        assert_eq!(why_untried(1, 8, Some(1)), Untried::OneThread);
        let keep = most_promising(&cands, &plain, 4);
        assert_eq!(keep.len(), 4);
        assert!(!keep.contains(&0), "seq is always tried, not ranked");
        // ws and static at 8 threads, then at 4.
        let threads: Vec<usize> = keep.iter().map(|&k| cands[k].1.threads).collect();
        assert_eq!(
            threads,
            [8, 8, 4, 4],
            "{:?}",
            keep.iter().map(|&k| &cands[k].0).collect::<Vec<_>>()
        );
    }

    #[test]
    fn thread_counts_double_up_to_the_most() {
        assert_eq!(thread_counts(1), Vec::<usize>::new());
        assert_eq!(thread_counts(2), [2]);
        assert_eq!(thread_counts(3), [2, 3]);
        assert_eq!(thread_counts(4), [2, 4]);
        assert_eq!(thread_counts(12), [2, 4, 8, 12]);
        assert_eq!(thread_counts(16), [2, 4, 8, 16]);
    }

    /// A real-time run of 0.4 s at 512 frames (44.1 kHz: 34 cycles of 11.6 ms) on 16 cores
    /// has nine candidates, more than its trials can measure: it still tries seq and the most
    /// promising that fit (it kept seq untried, counting every candidate's untimed cycles).
    #[test]
    fn a_short_paced_run_on_many_cores_tries_the_candidates_that_fit() {
        let period = Duration::from_secs_f64(512.0 / 44_100.0);
        let mut choice = ExecutorChoice {
            auto: true,
            auto_cycles: Some(34),
            ..ExecutorChoice::default()
        };
        choice.options.period = Some(period);
        let g = fugue_graph::gen::rake(33);
        let reg = fugue_dsp::Registry::with_builtin_kinds();
        let plain = fugue_exec::Plan::compile(
            &g,
            &reg,
            &fugue_exec::CompileOptions {
                sample_rate: 44_100.0,
                block: 512,
                ..Default::default()
            },
        )
        .unwrap();
        let cands = candidates(&choice, 16, &plain);
        assert_eq!(cands.len(), 9, "{cands:?}");
        assert!(
            timed_trial_cycles(&choice, MAX_TRIAL_PERIOD, 2, Duration::ZERO)
                >= (2 * MIN_PACED_CYCLES) as f64
        );
        let fit = fitting(
            &choice,
            MAX_TRIAL_PERIOD,
            MIN_PACED_CYCLES,
            cands.len(),
            Duration::ZERO,
        );
        assert!((2..cands.len()).contains(&fit), "{fit}");
        // Each of them has its cycles, with every turn's untimed ones left out.
        assert!(
            timed_trial_cycles(&choice, MAX_TRIAL_PERIOD, fit, Duration::ZERO)
                >= (fit * MIN_PACED_CYCLES) as f64
        );
        assert!(
            timed_trial_cycles(&choice, MAX_TRIAL_PERIOD, fit + 1, Duration::ZERO)
                < ((fit + 1) * MIN_PACED_CYCLES) as f64
        );
    }

    #[test]
    fn the_early_count_of_paced_trials_bounds_the_budgets_count() {
        // A run of `n` cycles at 2048 frames (42.7 ms): trials paced at MAX_TRIAL_PERIOD.
        let run = Duration::from_micros(42_667);
        for n in [1u64, 10, 24, 94, 1000, 100_000] {
            let mut choice = ExecutorChoice {
                auto_cycles: Some(n),
                ..ExecutorChoice::default()
            };
            choice.options.period = Some(run);
            let early = timed_trial_cycles(&choice, MAX_TRIAL_PERIOD, 5, Duration::ZERO);
            for one_us in [1u64, 4_000, 4_001, 10_000, 50_000] {
                let per_cycle = MAX_TRIAL_PERIOD.max(Duration::from_micros(one_us));
                let later = timed_trial_cycles(&choice, per_cycle, 5, Duration::ZERO);
                assert!(
                    early >= later,
                    "n {n}, cycle {one_us} us: {early} < {later}"
                );
            }
            // Never more than the run's own length or BUDGET allows at the period.
            let length = (n as f64 * run.as_secs_f64()).min(BUDGET.as_secs_f64());
            assert!(
                early <= length / MAX_TRIAL_PERIOD.as_secs_f64(),
                "n {n}: {early}"
            );
        }
        // A 1-s run (24 cycles) leaves room for two candidates' 12 paced cycles each: the
        // early check must not keep it on seq untried.
        let mut second = ExecutorChoice {
            auto_cycles: Some(24),
            ..ExecutorChoice::default()
        };
        second.options.period = Some(run);
        let t = timed_trial_cycles(&second, MAX_TRIAL_PERIOD, 5, Duration::ZERO);
        assert!(t >= (MIN_PACED_CYCLES * 2) as f64, "{t}");
        // Offline, the budget is a share of the run: 100 cycles of 1 ms leave none.
        let offline = ExecutorChoice {
            auto_cycles: Some(100),
            ..ExecutorChoice::default()
        };
        assert!(timed_trial_cycles(&offline, Duration::from_millis(1), 3, Duration::ZERO) < 0.0);
    }

    /// A budget in time bounds the trials' budget whatever one cycle takes, where a count of
    /// cycles told from a shorter cycle's time (the host's offline count, from the graph's
    /// cost) would give three times as much; it never lifts [`BUDGET`].
    #[test]
    fn a_budget_in_time_holds_whatever_the_cycles_take() {
        // 100 ms offline as the host tells it: twenty budgets in cycles of 20 µs. A first
        // cycle of 60 µs made that 0.3 s of trials.
        let counted = ExecutorChoice {
            auto_cycles: Some(20 * 100_000 / 20),
            ..ExecutorChoice::default()
        };
        let b = trial_budget(&counted, Duration::from_micros(60));
        assert!((b - 0.3).abs() < 1e-9, "{b}");
        let c = ExecutorChoice {
            auto_budget: Some(Duration::from_millis(100)),
            ..counted.clone()
        };
        let b = trial_budget(&c, Duration::from_micros(60));
        assert!((b - 0.1).abs() < 1e-12, "{b}");
        // Cycles faster than told: the count's share, below the budget.
        let b = trial_budget(&c, Duration::from_micros(10));
        assert!((b - 0.05).abs() < 1e-9, "{b}");
        let c = ExecutorChoice {
            auto_budget: Some(Duration::from_millis(100)),
            ..ExecutorChoice::default()
        };
        for us in [1, 20, 60, 5000] {
            let b = trial_budget(&c, Duration::from_micros(us));
            assert!((b - 0.1).abs() < 1e-12, "{us} µs: {b}");
        }
        let long = ExecutorChoice {
            auto_budget: Some(Duration::from_secs(5)),
            ..ExecutorChoice::default()
        };
        assert_eq!(
            trial_budget(&long, Duration::from_micros(20)),
            BUDGET.as_secs_f64()
        );
    }
}
