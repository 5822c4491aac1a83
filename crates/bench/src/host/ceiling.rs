//! The ceiling of the study: the same graph run as sequential engines side by side.

use std::time::{Duration, Instant};

use fugue_engine::{Engine, ExecutorChoice};
use fugue_graph::TaskGraph;

use super::{CeilingPoint, HostBenchConfig};
use crate::error::BenchError;

/// The ceiling of `graph` at `threads` threads ([`CeilingPoint`]): each engine is built on
/// its own thread (its buffers in its own core's memory), checked against the first
/// engine's output for the first cycles, then all start together and run cycles until
/// the wall time of an offline point has passed.
pub(super) fn ceiling(
    c: &HostBenchConfig,
    name: &str,
    graph: &TaskGraph,
    threads: usize,
    repeat: usize,
) -> Result<CeilingPoint, BenchError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Barrier};
    const CHECKED: usize = 3;
    let cores = fugue_exec::placement::allowed_cores();
    let barrier = Arc::new(Barrier::new(threads + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (graph, barrier, stop) = (graph.clone(), barrier.clone(), stop.clone());
            let registry = c.registry.clone();
            let core = cores[i % cores.len()];
            let (rate, block) = (c.rate as f64, c.offline_buffer);
            std::thread::spawn(move || -> Result<(Vec<u64>, u64), String> {
                let _ = fugue_exec::placement::pin_current(core);
                // A panic while the engine is built or checked is this engine's failure: it
                // still meets the others at the barrier below, so that none waits for ever.
                let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let built = Engine::build(
                        &graph,
                        &registry,
                        rate,
                        block,
                        &ExecutorChoice::default(),
                        false,
                    );
                    let mut hashes = Vec::with_capacity(CHECKED);
                    let engine = match built {
                        Ok((mut e, _)) => {
                            for _ in 0..CHECKED {
                                e.run_cycle();
                                hashes.push(e.plan.output_hash());
                            }
                            Ok(e)
                        }
                        Err(e) => Err(e.to_string()),
                    };
                    (hashes, engine)
                }));
                let (hashes, mut engine) = prepared.unwrap_or_else(|payload| {
                    let why = fugue_exec::panic_message(payload.as_ref()).unwrap_or("no message");
                    (
                        Vec::new(),
                        Err(format!(
                            "a ceiling engine panicked while it was built: {why}"
                        )),
                    )
                });
                // Every engine meets the others here, built or not, so that none waits for
                // ever.
                barrier.wait();
                let mut cycles = 0u64;
                if let Ok(e) = engine.as_mut() {
                    // Relaxed: a stop request; nothing is published with it.
                    while !stop.load(Ordering::Relaxed) {
                        e.run_cycle();
                        cycles += 1;
                    }
                }
                engine.map(|_| (hashes, cycles))
            })
        })
        .collect();
    barrier.wait();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(c.offline_seconds));
    stop.store(true, Ordering::Relaxed);
    let mut cycles = Vec::with_capacity(threads);
    let mut first: Option<Vec<u64>> = None;
    for h in handles {
        let (hashes, n) = h
            .join()
            .map_err(|_| BenchError::Failed("a ceiling engine panicked".into()))?
            .map_err(BenchError::Failed)?;
        match &first {
            None => first = Some(hashes),
            Some(f) if *f != hashes => {
                return Err(BenchError::Failed(format!(
                    "{name}: the ceiling's engines disagree on the first {CHECKED} cycles"
                )))
            }
            Some(_) => {}
        }
        cycles.push(n);
    }
    let seconds = t0.elapsed().as_secs_f64();
    if cycles.contains(&0) {
        return Err(BenchError::Failed(format!(
            "{name}: an engine of the ceiling ran no cycle in {seconds:.3} s, so there is no ceiling to compare with; give the points more time (--offline-seconds)"
        )));
    }
    Ok(CeilingPoint {
        graph: name.to_string(),
        threads,
        repeat,
        cycles,
        seconds,
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
            let _ = tx.send(ceiling(&c, "broken", &graph, 2, 0).map(|_| ()));
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
