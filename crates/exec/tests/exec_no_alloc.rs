//! Thousands of cycles of every executor allocate nothing after the first cycle, on any
//! thread (the audio thread and the workers), under a counting global allocator.
//!
//! This test has its own `main` (`harness = false`): no test harness thread runs beside it
//! and allocates while the counter is armed.

use fugue_dsp::Registry;
use fugue_exec::SpinBudget;
use fugue_exec::{build, CompileOptions, ExecOptions, ExecutorKind, Plan};

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

fn main() {
    no_executor_allocates_after_the_first_cycle();
    println!("exec_no_alloc: 1 passed, 0 failed");
}

fn no_executor_allocates_after_the_first_cycle() {
    let reg = Registry::with_builtin_kinds();
    let graphs = [
        ("rake", fugue_graph::gen::rake(8)),
        ("diamond", fugue_graph::gen::diamond(3)),
        (
            "layered",
            fugue_graph::gen::layered(5, 4, 0.5, Default::default(), 3),
        ),
    ];
    // Short budgets so that workers park and are woken often: the futex path is covered too.
    let opts = ExecOptions {
        idle_budget: SpinBudget {
            spins: 50,
            time: std::time::Duration::from_micros(20),
        },
        steal_budget: SpinBudget {
            spins: 50,
            time: std::time::Duration::from_micros(20),
        },
        ..ExecOptions::default()
    };
    // The same with the profile on and the workers waking ahead of cycles paced at a
    // period (the timed sleep and the wake-up records on the workers, the records read on
    // the audio thread).
    let paced = ExecOptions {
        period: Some(std::time::Duration::from_micros(300)),
        wake_lead: std::time::Duration::from_micros(100),
        ..opts.clone()
    };
    // Pipelined plans too (4 sub-blocks, lines cut into 2 segments), unprofiled (the engine
    // never profiles a pipelined plan).
    let graphs_piped = [
        ("line", fugue_graph::gen::line(12)),
        ("rake", fugue_graph::gen::rake(8)),
        ("diamond", fugue_graph::gen::diamond(3)),
    ];
    for (opts, profiled, pipeline) in [(&opts, false, 1), (&paced, true, 1), (&opts, false, 4)] {
        let graphs = if pipeline > 1 { &graphs_piped } else { &graphs };
        for (name, g) in graphs {
            for kind in ExecutorKind::ALL {
                // The mutex/condvar work-sharing executor is the documented exception (it locks and
                // blocks), but it must not allocate either.
                for threads in [2, 3] {
                    let mut plan = Plan::compile(
                        g,
                        &reg,
                        &CompileOptions {
                            sample_rate: 48_000.0,
                            block: 64,
                            placeholder: false,
                            merge_chains: true,
                            pipeline,
                            ..Default::default()
                        },
                    )
                    .unwrap();
                    let lists = (kind == ExecutorKind::Static).then(|| {
                        let mut l = vec![Vec::new(); threads];
                        for t in 0..plan.n_units() {
                            l[t % threads].push(t as u32);
                        }
                        l
                    });
                    let mut exec = build(kind, &plan, threads, lists, opts).unwrap();
                    plan.set_profiling(profiled);
                    exec.set_profiling(profiled);
                    let mut wakes = [None; 3];
                    let mut steals = [0u64; 3];
                    exec.run_cycle(&mut plan);
                    let cycles = if profiled { 300 } else { 2000 };
                    let (n, ()) = fugue_testkit::alloc::count_all(|| {
                        let mut sum = 0u64;
                        for _ in 0..cycles {
                            if profiled {
                                std::thread::sleep(std::time::Duration::from_micros(200));
                            }
                            exec.run_cycle(&mut plan);
                            if profiled {
                                exec.worker_wakes(&mut wakes);
                                exec.thread_steals(&mut steals);
                                plan.task_times(|_, t| sum += t.duration());
                            }
                        }
                        std::hint::black_box(sum);
                    });
                    let (who, size) = fugue_testkit::alloc::last_event();
                    // SAFETY: no preconditions.
                    let me = unsafe { libc::pthread_self() } as usize;
                    assert_eq!(
                        n, 0,
                        "{kind} on {name} with {threads} threads (profiled and paced: {profiled}, \
                     {pipeline} sub-blocks) allocated or freed {n} times in {cycles} cycles (last on thread {}, the main \
                     thread is {me}; last allocation size {})",
                        who, size
                    );
                    drop(exec);
                }
            }
        }
    }
}
