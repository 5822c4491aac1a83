//! The ceiling of the study: the same graph run as sequential engines side by side, in
//! slices that alternate with a point's host.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fugue_engine::{Engine, ExecutorChoice};
use fugue_graph::TaskGraph;

use super::HostBenchConfig;
use crate::error::BenchError;

/// Cycles each engine checks against the first engine's output after it is built.
const CHECKED: usize = 3;

/// `threads` sequential engines of one graph, each built on its own thread pinned to its own
/// core (its buffers in that core's memory), checked against the first engine's output for
/// their first cycles, then waiting: [`Ceiling::slice`] runs them all together for a while,
/// and they wait again, asleep, while the point's host runs. So the ceiling and the point
/// are measured in alternate slices of the same stretch of time, and a slow spell of the
/// machine weighs on both sides of a fraction alike.
pub(super) struct Ceiling {
    handles: Vec<JoinHandle<()>>,
    /// Every engine and the caller meet here at a slice's start (and at the end).
    start: Arc<Barrier>,
    /// ... and here once every engine stopped.
    end: Arc<Barrier>,
    /// Set: the slice's time is up.
    stop: Arc<AtomicBool>,
    /// Set before a start: the engines leave instead of running.
    quit: Arc<AtomicBool>,
    /// Cycles each engine ran, every slice together.
    counts: Arc<Vec<AtomicU64>>,
    /// Why an engine stopped running (it panicked in a cycle), set once.
    failure: Arc<OnceLock<String>>,
}

impl Ceiling {
    /// Builds and checks the engines of `graph` on `threads` threads. Every engine is built
    /// before this returns; one that cannot be, or that disagrees with the first engine's
    /// output, fails the ceiling with a sentence, and no thread is left waiting.
    pub(super) fn start(
        c: &HostBenchConfig,
        name: &str,
        graph: &TaskGraph,
        threads: usize,
    ) -> Result<Ceiling, BenchError> {
        let cores = fugue_exec::placement::allowed_cores();
        let start = Arc::new(Barrier::new(threads + 1));
        let end = Arc::new(Barrier::new(threads + 1));
        let stop = Arc::new(AtomicBool::new(false));
        let quit = Arc::new(AtomicBool::new(false));
        let counts: Arc<Vec<AtomicU64>> =
            Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect());
        let failure = Arc::new(OnceLock::new());
        let (tx, rx) = mpsc::channel::<Result<Vec<u64>, String>>();
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let graph = graph.clone();
                let (start, end, stop, quit, counts, failure, tx) = (
                    start.clone(),
                    end.clone(),
                    stop.clone(),
                    quit.clone(),
                    counts.clone(),
                    failure.clone(),
                    tx.clone(),
                );
                let registry = c.registry.clone();
                let core = cores[i % cores.len()];
                let (rate, block) = (c.rate as f64, c.offline_buffer);
                std::thread::spawn(move || {
                    let _ = fugue_exec::placement::pin_current(core);
                    // A panic while the engine is built or checked is this engine's
                    // failure: it is said, and the thread still meets the others at every
                    // barrier below, so that none waits for ever.
                    let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let (mut e, _) = Engine::build(
                            &graph,
                            &registry,
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
                        Ok((e, hashes))
                    }))
                    .unwrap_or_else(|payload| {
                        let why =
                            fugue_exec::panic_message(payload.as_ref()).unwrap_or("no message");
                        Err(format!(
                            "a ceiling engine panicked while it was built: {why}"
                        ))
                    });
                    let mut engine = match prepared {
                        Ok((e, hashes)) => {
                            let _ = tx.send(Ok(hashes));
                            Some(e)
                        }
                        Err(why) => {
                            let _ = tx.send(Err(why));
                            None
                        }
                    };
                    drop(tx);
                    loop {
                        start.wait();
                        // Relaxed: the barrier orders the caller's store before this load.
                        if quit.load(Ordering::Relaxed) {
                            return;
                        }
                        let mut cycles = 0u64;
                        if let Some(e) = engine.as_mut() {
                            let ran =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    // Relaxed: a stop request; nothing is published with it.
                                    while !stop.load(Ordering::Relaxed) {
                                        e.run_cycle();
                                        cycles += 1;
                                    }
                                }));
                            if let Err(payload) = ran {
                                let why = fugue_exec::panic_message(payload.as_ref())
                                    .unwrap_or("no message");
                                let _ = failure.set(format!("a ceiling engine panicked: {why}"));
                                engine = None;
                            }
                        }
                        // Relaxed: the end barrier orders it before the caller's read.
                        counts[i].fetch_add(cycles, Ordering::Relaxed);
                        end.wait();
                    }
                })
            })
            .collect();
        drop(tx);
        let ceiling = Ceiling {
            handles,
            start,
            end,
            stop,
            quit,
            counts,
            failure,
        };
        // Every engine sends once, built or not (a thread that dies before it sends drops
        // its sender, and the channel then ends early).
        let mut first: Option<Vec<u64>> = None;
        for _ in 0..threads {
            let got = match rx.recv() {
                Ok(got) => got,
                Err(_) => Err("a ceiling engine's thread ended before it was built".to_string()),
            };
            let failure = match got {
                Err(why) => Some(why),
                Ok(hashes) => match &first {
                    None => {
                        first = Some(hashes);
                        None
                    }
                    Some(f) if *f != hashes => Some(format!(
                        "{name}: the ceiling's engines disagree on the first {CHECKED} cycles"
                    )),
                    Some(_) => None,
                },
            };
            if let Some(why) = failure {
                ceiling.close();
                return Err(BenchError::Failed(why));
            }
        }
        Ok(ceiling)
    }

    /// Runs every engine for `seconds` of wall time, all starting together; the wall time
    /// from the start until the last engine ended its cycle. An engine that panicked in a
    /// cycle fails the ceiling.
    pub(super) fn slice(&self, seconds: f64) -> Result<f64, BenchError> {
        // Relaxed: the start barrier orders it before the engines' loads.
        self.stop.store(false, Ordering::Relaxed);
        self.start.wait();
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        self.stop.store(true, Ordering::Relaxed);
        self.end.wait();
        let took = t0.elapsed().as_secs_f64();
        match self.failure.get() {
            Some(why) => Err(BenchError::Failed(why.clone())),
            None => Ok(took),
        }
    }

    /// Cycles each engine ran so far, every slice together.
    pub(super) fn cycles(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }

    /// Ends the engines' threads.
    pub(super) fn close(self) {
        self.quit.store(true, Ordering::Relaxed);
        self.start.wait();
        for h in self.handles {
            let _ = h.join();
        }
    }
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
            let _ = tx.send(Ceiling::start(&c, "broken", &graph, 2).map(Ceiling::close));
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
