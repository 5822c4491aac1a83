//! The ceiling of the study: the same graph run as sequential engines side by side, in
//! slices that alternate with a point's host.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fugue_engine::{Engine, ExecutorChoice};
use fugue_graph::TaskGraph;

use super::HostBenchConfig;
use crate::error::BenchError;

/// Cycles each engine checks against the other engines' output after it is built.
const CHECKED: usize = 3;

/// What the engines' threads are told, and how many of them are still in a slice.
struct GateState {
    /// Bumped at each order (a slice, or the end): a thread acts on each value once.
    generation: u64,
    /// The last order is to end.
    quit: bool,
    /// Threads that have not yet ended the current slice.
    running: usize,
    /// Threads that have not ended.
    alive: usize,
    /// Why an engine stopped (a node of it failed, or it panicked), set once.
    failure: Option<String>,
}

/// The engines' threads wait here between slices; the caller waits here for a slice's end.
/// A thread that ends for any reason (even unwinding) counts itself out of the slice it was
/// in ([`Leave`]), so that no caller waits for it.
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        // Every change of the state is one assignment: a thread that panicked while holding
        // the lock left it consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts an engine's thread out of its slice when it ends its slice, or ends at all.
struct Leave<'a> {
    gate: &'a Gate,
    /// The thread is in a slice the caller waits for.
    in_slice: bool,
}

impl Leave<'_> {
    fn out(&mut self, failure: Option<String>) {
        let mut s = self.gate.lock();
        if self.in_slice {
            s.running -= 1;
            self.in_slice = false;
        }
        if s.failure.is_none() {
            s.failure = failure;
        }
        drop(s);
        self.gate.changed.notify_all();
    }
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let failure = std::thread::panicking().then(|| "a ceiling engine panicked".to_string());
        self.gate.lock().alive -= 1;
        self.out(failure);
    }
}

/// `threads` sequential engines of one graph, each built on its own thread pinned to its own
/// core (its buffers in that core's memory), checked against each other's output for their
/// first cycles, then waiting: [`Ceiling::slice`] runs them all together for a while, and
/// they wait again, asleep, while the point's host runs. So the ceiling and the point are
/// measured in alternate slices of the same stretch of time, and a slow spell of the machine
/// weighs on both sides of a fraction alike. Dropped, the threads end.
pub(super) struct Ceiling {
    handles: Vec<JoinHandle<()>>,
    gate: Arc<Gate>,
    /// Set: the slice's time is up.
    stop: Arc<AtomicBool>,
    /// Cycles each engine ran, every slice together.
    counts: Arc<Vec<AtomicU64>>,
}

impl Ceiling {
    /// Builds and checks the engines of `graph` on `threads` threads. Every engine is built
    /// before this returns; one that cannot be, that fails in its first cycles, or that
    /// disagrees with the others' output, fails the ceiling with a sentence, and no thread is
    /// left waiting.
    pub(super) fn start(
        c: &HostBenchConfig,
        name: &str,
        graph: &TaskGraph,
        threads: usize,
    ) -> Result<Ceiling, BenchError> {
        let cores = fugue_exec::placement::allowed_cores();
        let mut ceiling = Ceiling {
            handles: Vec::with_capacity(threads),
            gate: Arc::new(Gate {
                state: Mutex::new(GateState {
                    generation: 0,
                    quit: false,
                    running: 0,
                    alive: threads,
                    failure: None,
                }),
                changed: Condvar::new(),
            }),
            stop: Arc::new(AtomicBool::new(false)),
            counts: Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect()),
        };
        let (tx, rx) = mpsc::channel::<Result<Vec<u64>, String>>();
        for i in 0..threads {
            let graph = graph.clone();
            let (gate, stop, counts, tx) = (
                ceiling.gate.clone(),
                ceiling.stop.clone(),
                ceiling.counts.clone(),
                tx.clone(),
            );
            let registry = c.registry.clone();
            let core = cores[i % cores.len()];
            let (rate, block) = (c.rate as f64, c.offline_buffer);
            let spawned = std::thread::Builder::new()
                .name("fugue-ceiling".into())
                .spawn(move || {
                    let _ = fugue_exec::placement::pin_current(core);
                    engine_thread(
                        &graph, &registry, rate, block, &gate, &stop, &counts[i], &tx,
                    );
                });
            match spawned {
                Ok(h) => ceiling.handles.push(h),
                // The threads already started end as the ceiling is dropped.
                Err(e) => {
                    ceiling.gate.lock().alive -= threads - i;
                    return Err(BenchError::Failed(format!(
                        "cannot start a thread for an engine of the ceiling: {e}"
                    )));
                }
            }
        }
        drop(tx);
        // Every engine sends once, built or not; a thread that ends before it sends drops
        // its sender, and the channel then ends early.
        let mut first: Option<Vec<u64>> = None;
        for _ in 0..threads {
            let got = rx.recv().unwrap_or_else(|_| {
                Err("a ceiling engine's thread ended before it was built".into())
            });
            match got {
                Err(why) => return Err(BenchError::Failed(why)),
                Ok(hashes) => match &first {
                    None => first = Some(hashes),
                    Some(f) if *f != hashes => {
                        return Err(BenchError::Failed(format!(
                            "{name}: the ceiling's engines disagree on the first {CHECKED} cycles"
                        )))
                    }
                    Some(_) => {}
                },
            }
        }
        Ok(ceiling)
    }

    /// Runs every engine for `seconds` of wall time, all starting together; the wall time
    /// from the start until the last engine ended its cycle. An engine that failed (a node
    /// of it panicked: the plan silences it, and the ceiling would run faster) fails the
    /// ceiling.
    pub(super) fn slice(&self, seconds: f64) -> Result<f64, BenchError> {
        // Relaxed: the gate's lock orders it before the engines' loads.
        self.stop.store(false, Ordering::Relaxed);
        {
            let mut s = self.gate.lock();
            if let Some(why) = &s.failure {
                return Err(BenchError::Failed(why.clone()));
            }
            s.generation += 1;
            s.running = s.alive;
        }
        self.gate.changed.notify_all();
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        self.stop.store(true, Ordering::Relaxed);
        let mut s = self.gate.lock();
        while s.running > 0 {
            s = self.gate.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let took = t0.elapsed().as_secs_f64();
        match &s.failure {
            Some(why) => Err(BenchError::Failed(why.clone())),
            None => Ok(took),
        }
    }

    /// Cycles each engine ran so far, every slice together.
    pub(super) fn cycles(&self) -> Vec<u64> {
        // Relaxed: each was added before its thread left the slice under the gate's lock,
        // which the caller took since.
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for Ceiling {
    /// Tells the engines' threads to end, and joins them.
    fn drop(&mut self) {
        {
            let mut s = self.gate.lock();
            s.quit = true;
            s.generation += 1;
        }
        self.gate.changed.notify_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// An engine's thread: builds the engine and runs its first cycles (said through `tx`), then
/// runs a slice at each order of the gate until told to end.
#[allow(clippy::too_many_arguments)]
fn engine_thread(
    graph: &TaskGraph,
    registry: &fugue_dsp::Registry,
    rate: f64,
    block: usize,
    gate: &Gate,
    stop: &AtomicBool,
    count: &AtomicU64,
    tx: &mpsc::Sender<Result<Vec<u64>, String>>,
) {
    // Declared first, dropped last: whatever ends the thread counts it out.
    let mut leave = Leave {
        gate,
        in_slice: false,
    };
    // A panic while the engine is built or checked is this engine's failure, said.
    let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (mut e, _) = Engine::build(
            graph,
            registry,
            rate,
            block,
            &ExecutorChoice::default(),
            false,
        )
        .map_err(|e| e.to_string())?;
        let mut hashes = Vec::with_capacity(CHECKED);
        for _ in 0..CHECKED {
            e.run_cycle();
            hashes.push(e.plan.output_hash());
        }
        match failed_node(&mut e) {
            Some(why) => Err(why),
            None => Ok((e, hashes)),
        }
    }))
    .unwrap_or_else(|payload| {
        let why = fugue_exec::panic_message(payload.as_ref()).unwrap_or("no message");
        Err(format!(
            "a ceiling engine panicked while it was built: {why}"
        ))
    });
    let mut engine = match prepared {
        Ok((e, hashes)) => {
            let _ = tx.send(Ok(hashes));
            e
        }
        Err(why) => {
            let _ = tx.send(Err(why));
            return;
        }
    };
    let mut seen = 0;
    loop {
        {
            let mut s = gate.lock();
            while s.generation == seen {
                s = gate.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            seen = s.generation;
            if s.quit {
                return;
            }
            leave.in_slice = true;
        }
        let mut cycles = 0u64;
        // Relaxed: a stop request; nothing is published with it.
        while !stop.load(Ordering::Relaxed) {
            engine.run_cycle();
            cycles += 1;
        }
        // Relaxed: the gate's lock, taken below, publishes it to the caller.
        count.fetch_add(cycles, Ordering::Relaxed);
        leave.out(failed_node(&mut engine));
    }
}

/// The sentence for a node of `e` that failed (its processor panicked: the plan silences
/// it), if one did.
fn failed_node(e: &mut Engine) -> Option<String> {
    if !e.plan.any_panicked() {
        return None;
    }
    let panics = e.plan.take_panics();
    Some(match panics.first() {
        Some(p) => format!(
            "node `{}` of a ceiling engine failed ({}), so the ceiling would not run the graph's whole work",
            p.node, p.message
        ),
        None => "a node of a ceiling engine failed, so the ceiling would not run the graph's whole work".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_dsp::{DspNode, NodeContext, NodeError, Processor, Registry};

    /// A node whose processor cannot be made: its `processor` panics.
    struct Broken;

    impl DspNode for Broken {
        fn inputs(&self) -> usize {
            0
        }
        fn outputs(&self) -> usize {
            1
        }
        fn processor(&self) -> Box<dyn Processor> {
            panic!("no processor")
        }
    }

    /// A node whose processor panics at its `at`-th cycle (from 1), then plays silence.
    struct Late {
        at: usize,
    }

    struct LateProcessor {
        at: usize,
        cycles: usize,
    }

    impl Processor for LateProcessor {
        fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
            self.cycles += 1;
            if self.cycles == self.at {
                panic!("late");
            }
            outputs[0].fill(0.25);
        }
        fn reset(&mut self) {
            self.cycles = 0;
        }
    }

    impl DspNode for Late {
        fn inputs(&self) -> usize {
            0
        }
        fn outputs(&self) -> usize {
            1
        }
        fn processor(&self) -> Box<dyn Processor> {
            Box::new(LateProcessor {
                at: self.at,
                cycles: 0,
            })
        }
    }

    /// A node of the ceiling's engines that fails in a slice (its plan silences it, and the
    /// engines would run faster) fails the study with the node and its message, and every
    /// thread ends; one that fails in the first cycles fails the start.
    #[test]
    fn a_node_that_fails_in_the_ceiling_fails_the_study() {
        for (at, said) in [
            (50, "node `b` of a ceiling engine failed (late)"),
            (2, "node `b` of a ceiling engine failed (late)"),
        ] {
            let mut registry = Registry::with_builtin_kinds();
            registry.register("late", move |_: &NodeContext<'_>| {
                Ok(Box::new(Late { at }) as Box<dyn DspNode>)
            });
            let graph = fugue_graph::read::ag::parse(
                "b = { kind: \"late\", };\nout = { kind: \"sink\", in: 1, };\nb.1 -> out.1;\n",
                "late.ag",
            )
            .unwrap();
            let c = HostBenchConfig {
                offline_seconds: 0.05,
                instances: vec![1],
                modes: vec![super::super::Mode::Shared],
                threads: vec![2],
                buffers: Vec::new(),
                registry,
                ..HostBenchConfig::default()
            };
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let got =
                    super::super::run(&c, &[("late".to_string(), graph)], &mut crate::NoProgress);
                let _ = tx.send(got.map(|_| ()).map_err(|e| e.to_string()));
            });
            let got = rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the study returns");
            let e = got.expect_err("the study fails");
            assert!(e.contains(said), "{at}: {e}");
        }
    }

    /// The error of the ceiling at 2 threads of a graph of one node of kind `broken`, which
    /// `broken` builds (beside the built-in kinds); the ceiling must return within 30 s (no
    /// engine left waiting at the start).
    fn broken_ceiling(
        broken: impl Fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> + Send + Sync + 'static,
    ) -> String {
        let mut registry = Registry::with_builtin_kinds();
        registry.register("broken", broken);
        let graph = fugue_graph::read::ag::parse(
            "b = { kind: \"broken\", };\nout = { kind: \"sink\", in: 1, };\nb.1 -> out.1;\n",
            "broken.ag",
        )
        .unwrap();
        let c = HostBenchConfig {
            offline_seconds: 0.01,
            registry,
            ..HostBenchConfig::default()
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Ceiling::start(&c, "broken", &graph, 2).map(drop));
        });
        let got = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the ceiling returns");
        got.expect_err("the ceiling fails").to_string()
    }

    /// An engine that cannot be built (its processor's making panics, which the compile
    /// reports as the node's error) fails the ceiling with a sentence; the others do not wait
    /// for it at the start for ever.
    #[test]
    fn an_engine_that_cannot_be_built_fails_the_ceiling() {
        let e = broken_ceiling(|_: &NodeContext<'_>| Ok(Box::new(Broken) as Box<dyn DspNode>));
        assert!(
            e.contains("node `b`: its processor could not be made: no processor"),
            "{e}"
        );
    }

    /// An engine whose build panics (here the kind's factory) fails the ceiling with the
    /// panic's message; the others do not wait for it at the start for ever.
    #[test]
    fn an_engine_that_panics_while_built_fails_the_ceiling() {
        let e = broken_ceiling(
            |_: &NodeContext<'_>| -> Result<Box<dyn DspNode>, NodeError> { panic!("no node") },
        );
        assert!(
            e.contains("a ceiling engine panicked while it was built: no node"),
            "{e}"
        );
    }
}
