//! loom models of the executors' protocols (run with `scripts/loom.sh`, which CI runs):
//! the interleavings of the model's threads are explored (up to `LOOM_MAX_PREEMPTIONS`
//! preemptions per execution, 2 unless set), with the futex modelled by a mutex and a
//! condition variable so that a lost wake-up is a deadlock that loom reports.
//!
//! - The building blocks: the sleep/wake signal and the source ranges (the Chase-Lev deque's
//!   own models, for this crate's fixed configuration too, are in `crates/sync/tests/loom.rs`).
//! - The executors themselves: `ws`, `share`, `share-spin`, `levels` and `static`, built by
//!   [`crate::build`] on a compiled plan and run for two cycles by the model's main thread
//!   (the audio thread) with one worker, with spin budgets of zero so that every wait goes
//!   to sleep. The real worker pool, epoch, activation counters (reset, group counters of a
//!   wide join), deques, queues, barriers and wait words run; each task's run is a tracked
//!   access (`Plan::run_task` under loom), so loom reports a task that runs without
//!   happens-before from its predecessors or from the previous cycle; each cycle's output must
//!   equal the sequential executor's bit for bit.
//! - The shared pool of the multi-graph host ([`crate::SharedPool`]): two threads, two
//!   cycles, a tenant in parts (claims, steals) and tenants whole (a partition of one thread per
//!   group), each tenant's output checked against seq.
//! - Each protocol's broken variant (a `fugue_sync::fault` switch) is caught by its model:
//!   the `*_catches_*` tests run the model again in a child process with the switch on.

use loom::sync::Arc;
use loom::thread;

use crate::runtime::signal::{Signal, SpinBudget};
use crate::{build, CompileOptions, ExecOptions, Executor, ExecutorKind, Plan, SeqExecutor};
use fugue_sync::fault::expect_caught;
use fugue_sync::{AtomicBool, AtomicU32, Ordering};

/// Explores `f` with at most `LOOM_MAX_PREEMPTIONS` preemptions per execution (2 unless set).
fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(2, f);
}

/// Explores `f` with at most `bound` preemptions per execution, or `LOOM_MAX_PREEMPTIONS`
/// when set (the whole executors' models use 1 in CI: each preemption multiplies the
/// executions by the number of atomic operations of a cycle).
fn model_bounded(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound);
    }
    b.check(f);
}

/// Sleep/wake: a waiter that sleeps at once (no spin budget) is always woken by a signaller
/// that sets the condition and notifies, whatever the interleaving.
#[test]
fn loom_signal_never_loses_a_wakeup() {
    model(|| {
        let s = Arc::new(Signal::new());
        let flag = Arc::new(AtomicBool::new(false));
        let (s2, f2) = (s.clone(), flag.clone());
        let t = thread::spawn(move || {
            // Release: pairs with the waiter's Acquire load.
            f2.store(true, Ordering::Release);
            s2.notify();
        });
        s.wait_until(SpinBudget::NONE, || flag.load(Ordering::Acquire));
        t.join().unwrap();
    });
}

/// Two waiters and two signallers: the flag that one signaller clears may have been set by
/// either waiter; nobody sleeps through the signal.
#[test]
fn loom_signal_two_waiters_two_signallers() {
    model(|| {
        let s = Arc::new(Signal::new());
        let flag = Arc::new(AtomicU32::new(0));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let (s, f) = (s.clone(), flag.clone());
                thread::spawn(move || {
                    s.wait_until(SpinBudget::NONE, || f.load(Ordering::Acquire) == 2);
                })
            })
            .collect();
        let (s2, f2) = (s.clone(), flag.clone());
        let other = thread::spawn(move || {
            f2.fetch_add(1, Ordering::Release);
            s2.notify();
        });
        flag.fetch_add(1, Ordering::Release);
        s.notify();
        other.join().unwrap();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

/// Source ranges: the audio thread deals three sources (thread 0: 0..2, thread 1: 2..3) after
/// publishing the cycle's data, then takes from its own range's front and steals thread 1's;
/// meanwhile a thief steals from the back of thread 0's range, before or after the deal. Each
/// source is taken exactly once, and whoever takes one sees the data published before the
/// deal.
#[test]
fn loom_source_ranges_each_source_once() {
    use crate::runtime::sources::SourceRanges;
    model(|| {
        let r = Arc::new(SourceRanges::new(2));
        let data = Arc::new(AtomicU32::new(0));
        let taken = Arc::new([AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)]);
        let (r2, d2, k2) = (r.clone(), data.clone(), taken.clone());
        let thief = thread::spawn(move || {
            // A thread still looking for work: it may run before or after the deal.
            if let Some(i) = r2.steal(0) {
                assert_eq!(d2.load(Ordering::Relaxed), 7, "the deal's data is visible");
                k2[i as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        // Relaxed: published by the deal's Release store.
        data.store(7, Ordering::Relaxed);
        r.deal(0, 3);
        let mut mine = 0;
        while let Some(i) = r.take_own(0).or_else(|| r.steal(1)) {
            taken[i as usize].fetch_add(1, Ordering::Relaxed);
            mine += 1;
        }
        thief.join().unwrap();
        assert!(mine >= 1);
        for k in taken.iter() {
            assert_eq!(
                k.load(Ordering::Relaxed),
                1,
                "each source taken exactly once"
            );
        }
    });
}

/// The signal's broken variant (the condition checked before the sleeping flag is set) loses
/// a wake-up: a deadlock.
#[test]
fn loom_signal_catches_check_before_flag() {
    expect_caught(
        "loom_tests::loom_signal_never_loses_a_wakeup",
        "signal-check-before-flag",
        "deadlock",
    );
}

/// A diamond: a source, two branches, a sink summing them (four units, the sink counted).
const DIAMOND: &str = "a = { kind: \"osc\", freq: 1000, }; \
    b = { kind: \"gain\", gain: 0.5, }; c = { kind: \"gain\", gain: 0.25, }; \
    s = { kind: \"sink\", }; \
    a.1 -> b.1; a.1 -> c.1; b.1 -> s.1; c.1 -> s.1;";

/// Two sources joined by the sink: two levels (the sources, then the sink), two sources dealt.
const VEE: &str = "a = { kind: \"osc\", freq: 1000, }; b = { kind: \"osc\", freq: 750, }; \
    s = { kind: \"sink\", }; a.1 -> s.1; b.1 -> s.1;";

/// A wide join: three branches into the sink, more than `JOIN_FANIN` (2 under loom), so that
/// the sink's count is kept in group counters, which the thread that empties a group resets
/// for the next cycle.
const WIDE: &str = "a = { kind: \"osc\", freq: 1000, }; \
    b1 = { kind: \"gain\", gain: 0.5, }; b2 = { kind: \"gain\", gain: 0.25, }; \
    b3 = { kind: \"gain\", gain: 0.125, }; s = { kind: \"sink\", }; \
    a.1 -> b1.1; a.1 -> b2.1; a.1 -> b3.1; b1.1 -> s.1; b2.1 -> s.1; b3.1 -> s.1;";

fn compile(text: &str) -> Plan {
    let g = fugue_graph::read::ag::parse(text, "model.ag").unwrap();
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block: 4,
        ..Default::default()
    };
    Plan::compile(&g, &reg, &opts).unwrap()
}

/// The unit whose first task is node `name`.
fn unit(plan: &Plan, name: &str) -> u32 {
    (0..plan.n_units())
        .find(|&u| plan.name(plan.unit_tasks(u)[0] as usize) == name)
        .unwrap_or_else(|| panic!("no unit {name}")) as u32
}

/// Runs `kind` with two threads (the model's thread and one worker) for two cycles on the
/// graph `text`, each cycle checked against the sequential executor bit for bit.
fn executor_model(kind: ExecutorKind, text: &'static str) {
    executor_model_with(kind, text, None);
}

/// [`executor_model`], with the workers waking ahead of cycles of `period` when given (under
/// loom a timed sleep ends after one model step, as if its timeout fired at any point, and
/// the spin before the cycle is left out).
fn executor_model_with(
    kind: ExecutorKind,
    text: &'static str,
    period: Option<std::time::Duration>,
) {
    model_bounded(1, move || {
        let mut plan = compile(text);
        let mut reference = compile(text);
        assert!(plan.n_units() > 1 && !plan.is_sequential());
        // Group counters exactly in the wide join.
        assert_eq!(plan.n_slots() > plan.n_units(), text == WIDE);
        // Static (on the diamond): the source, the first branch and the sink on the audio
        // thread, the other branch on the worker.
        let lists = (kind == ExecutorKind::Static).then(|| {
            let (a, s) = (unit(&plan, "a"), unit(&plan, "s"));
            let mut own = vec![a];
            let mut other = Vec::new();
            for u in 0..plan.n_units() as u32 {
                if u != a && u != s {
                    if own.len() == 1 {
                        own.push(u);
                    } else {
                        other.push(u);
                    }
                }
            }
            own.push(s);
            vec![own, other]
        });
        let opts = ExecOptions {
            idle_budget: SpinBudget::NONE,
            steal_budget: SpinBudget::NONE,
            min_steal: std::time::Duration::ZERO,
            period,
            ..Default::default()
        };
        let mut exec = build(kind, &plan, 2, lists, &opts).unwrap();
        let mut seq = SeqExecutor::new();
        for cycle in 1..=2 {
            exec.run_cycle(&mut plan);
            plan.loom_read_outputs();
            seq.run_cycle(&mut reference);
            for ch in 0..plan.n_outputs() {
                if let Some((i, a, b)) =
                    fugue_testkit::bits::first_difference(plan.output(ch), reference.output(ch))
                {
                    panic!(
                        "{kind}: cycle {cycle}, output {ch}, sample {i}: {a:?} where seq has {b:?}"
                    );
                }
            }
        }
        drop(exec);
    });
}

#[test]
fn loom_ws_diamond_two_cycles() {
    executor_model(ExecutorKind::Ws, DIAMOND);
}

/// Waking ahead: a worker's timed sleep on the epoch (which may end by its timeout, leaving
/// the futex flag set) then its wait for the cycle lose no cycle's start.
#[test]
fn loom_ws_vee_two_cycles_waking_ahead() {
    executor_model_with(
        ExecutorKind::Ws,
        VEE,
        Some(std::time::Duration::from_secs(3600)),
    );
}

#[test]
fn loom_ws_wide_join_two_cycles() {
    executor_model(ExecutorKind::Ws, WIDE);
}

#[test]
fn loom_share_diamond_two_cycles() {
    executor_model(ExecutorKind::Share, DIAMOND);
}

#[test]
fn loom_share_spin_diamond_two_cycles() {
    executor_model(ExecutorKind::ShareSpin, DIAMOND);
}

#[test]
fn loom_levels_vee_two_cycles() {
    executor_model(ExecutorKind::Levels, VEE);
}

#[test]
fn loom_static_diamond_two_cycles() {
    executor_model(ExecutorKind::Static, DIAMOND);
}

/// Activation: a counter not reset for the next cycle never reaches zero again.
#[test]
fn loom_ws_catches_activation_no_reset() {
    expect_caught(
        "loom_tests::loom_ws_diamond_two_cycles",
        "activation-no-reset",
        "deadlock",
    );
}

/// Activation: a Relaxed decrement does not make the other branch's run visible to the task
/// it readies.
#[test]
fn loom_ws_catches_activation_relaxed() {
    expect_caught(
        "loom_tests::loom_ws_diamond_two_cycles",
        "activation-relaxed",
        "Causality violation",
    );
}

/// The worker pool's epoch and the end-of-cycle signal with the signal's broken variant.
#[test]
fn loom_ws_catches_signal_check_before_flag() {
    expect_caught(
        "loom_tests::loom_ws_diamond_two_cycles",
        "signal-check-before-flag",
        "deadlock",
    );
}

/// Work sharing (mutex and condition variable): without the wake-up at the end of a cycle, a
/// worker waits on the condition variable forever.
#[test]
fn loom_share_catches_no_end_notify() {
    expect_caught(
        "loom_tests::loom_share_diamond_two_cycles",
        "share-no-end-notify",
        "deadlock",
    );
}

/// Levels: a barrier that opens one task early lets the sink run before a branch.
#[test]
fn loom_levels_catches_early_barrier() {
    expect_caught(
        "loom_tests::loom_levels_vee_two_cycles",
        "levels-early-barrier",
        "Causality violation",
    );
}

/// Static lists: a task's last predecessor that does not wake the thread sleeping on its
/// wait word leaves it asleep.
#[test]
fn loom_static_catches_no_wake() {
    expect_caught(
        "loom_tests::loom_static_diamond_two_cycles",
        "static-no-wake",
        "deadlock",
    );
}

/// The shared pool of the multi-graph host with two threads, for two cycles, on `n` tenants of
/// the graph `text`: shared (every tenant in parts: its sources claimed from its cursor, home
/// thread first, its units pushed, popped and stolen; more tenants make the model too long to
/// explore) or partitioned (one thread per group, each group's tenants
/// run whole, one after the other): each tenant's output equals the sequential executor's bit
/// for bit at every cycle, so no unit ran twice, early, or not at all, and every run follows
/// its previous cycle's (tracked accesses).
fn shared_pool_model(n: usize, partitioned: bool, text: &'static str) {
    shared_pool_model_with(n, partitioned, crate::TenantGrain::Units, text)
}

/// [`shared_pool_model`] with the grain of the pool's groups of several threads.
fn shared_pool_model_with(
    n: usize,
    partitioned: bool,
    grain: crate::TenantGrain,
    text: &'static str,
) {
    model_bounded(1, move || {
        let mut tenants: Vec<crate::Tenant> =
            (0..n).map(|_| crate::Tenant::new(compile(text))).collect();
        let mut reference = compile(text);
        let opts = ExecOptions {
            idle_budget: SpinBudget::NONE,
            steal_budget: SpinBudget::NONE,
            ..Default::default()
        };
        // Partitioned: with each tenant's busy time accounted (the flush of a thread's
        // account before it subtracts its units is part of the model).
        let mut pool = crate::SharedPool::new(2, 64, partitioned, &opts).unwrap();
        pool.set_grain(grain);
        if partitioned {
            pool.set_partition(&[0, 1]);
            for (k, t) in tenants.iter_mut().enumerate() {
                t.set_group(k % 2);
            }
        }
        let mut seq = SeqExecutor::new();
        for cycle in 1..=2 {
            pool.run_cycle(&mut tenants);
            seq.run_cycle(&mut reference);
            for (k, t) in tenants.iter_mut().enumerate() {
                if partitioned {
                    assert!(
                        t.take_busy_ticks() > 0,
                        "tenant {k}, cycle {cycle}: no busy time"
                    );
                }
                let plan = t.plan_mut();
                plan.loom_read_outputs();
                if let Some((i, a, b)) =
                    fugue_testkit::bits::first_difference(plan.output(0), reference.output(0))
                {
                    panic!("tenant {k}, cycle {cycle}, sample {i}: {a:?} where seq has {b:?}");
                }
            }
        }
        drop(pool);
    });
}

/// Ignored in CI: the pool's threads spin inside a cycle until its last unit ran (they do not
/// sleep as the executors' workers do), and every look is a step loom explores: the model ran
/// for more than ten minutes on two cores without finishing. Run it with `--ignored`.
#[test]
#[ignore = "explores for more than ten minutes"]
fn loom_shared_pool_tenant_in_parts() {
    shared_pool_model(1, false, VEE);
}

#[test]
fn loom_shared_pool_partitioned_whole_tenants() {
    shared_pool_model(3, true, DIAMOND);
}

/// Partitioned, a run of two cycles ([`crate::SharedPool::run_cycles`]): each thread claims
/// its group's tenants whole once and runs them two cycles in a row, copying each cycle's
/// outputs to the tenant's capture, with busy time accounted; every captured cycle equals the
/// sequential executor's, bit for bit, and the run counts every unit of both cycles (the
/// calling thread's wait for the units left ends).
#[test]
fn loom_shared_pool_partitioned_run_of_two_cycles() {
    model_bounded(1, || {
        let mut tenants: Vec<crate::Tenant> = (0..3)
            .map(|_| {
                let mut t = crate::Tenant::new(compile(DIAMOND));
                t.set_batch(2);
                t
            })
            .collect();
        let mut reference = compile(DIAMOND);
        let opts = ExecOptions {
            idle_budget: SpinBudget::NONE,
            steal_budget: SpinBudget::NONE,
            ..Default::default()
        };
        let mut pool = crate::SharedPool::new(2, 64, true, &opts).unwrap();
        pool.set_partition(&[0, 1]);
        for (k, t) in tenants.iter_mut().enumerate() {
            t.set_group(k % 2);
        }
        assert_eq!(pool.run_cycles(&mut tenants, 2), 2);
        let mut seq = SeqExecutor::new();
        for cycle in 0..2 {
            seq.run_cycle(&mut reference);
            for (k, t) in tenants.iter().enumerate() {
                assert_eq!(t.captured(), 2);
                if let Some((i, a, b)) = fugue_testkit::bits::first_difference(
                    t.captured_output(cycle, 0),
                    reference.output(0),
                ) {
                    panic!("tenant {k}, cycle {cycle}, sample {i}: {a:?} where seq has {b:?}");
                }
            }
        }
        for t in tenants.iter_mut() {
            assert!(t.take_busy_ticks() > 0, "no busy time");
        }
        drop(pool);
    });
}

/// The claims of whole tenants by the two threads of one group (shared mode with
/// `--grain whole` or `balanced`): in each of two cycles, the threads race for three entries,
/// each its home ones first, then the other's; every entry is claimed by exactly one thread,
/// and a thread still holding the first cycle's word claims nothing in the second. (The whole
/// pool with two threads in one group is not modelled: its threads spin inside a cycle, and
/// the exploration does not end, as `loom_shared_pool_tenant_in_parts` shows.)
#[test]
fn loom_shared_pool_whole_claims_raced() {
    model_bounded(2, || {
        let pool = Arc::new(crate::SharedPool::new(1, 64, false, &ExecOptions::default()).unwrap());
        pool.loom_whole_setup(2, &[10, 11, 12]);
        for cycle in 1..=2u64 {
            pool.loom_whole_publish(cycle, 3);
            let other = {
                let pool = pool.clone();
                thread::spawn(move || pool.loom_whole_claim_all(1))
            };
            let mut got = pool.loom_whole_claim_all(0);
            got.extend(other.join().unwrap());
            got.sort_unstable();
            assert_eq!(got, vec![10, 11, 12], "cycle {cycle}");
        }
        // A thread that read the second cycle's word claims nothing more in it.
        assert!(pool.loom_whole_claim_all(1).is_empty());
    });
}

/// The cycle claims of a run of several cycles (`SharedPool::run_cycles`) by the two
/// threads of one group: three whole entries, a run of two cycles. Each cycle of each entry
/// is run exactly once, in order, and each follows its previous one (a tracked cell per
/// entry: a claim that did not see the previous cycle's writes is a data race).
#[test]
fn loom_shared_pool_cycle_claims_raced() {
    cycle_claims_raced(&[10, 11, 12], 2, None);
}

/// Two threads of one group claim the cycles of a run of `run` cycles of whole entries
/// (tenants `tenants`), thread 0 asking for entry `ask` first when given, under loom with
/// one preemption: every cycle of every entry runs exactly once, in order, after the entry's
/// previous one (a tracked cell per entry).
fn cycle_claims_raced(tenants: &'static [u32], run: usize, ask: Option<usize>) {
    model_bounded(1, move || {
        let n = tenants.len();
        let pool = Arc::new(crate::SharedPool::new(1, 64, false, &ExecOptions::default()).unwrap());
        pool.loom_whole_setup(2, tenants);
        pool.loom_whole_publish(1, n);
        let state: Arc<Vec<loom::cell::UnsafeCell<usize>>> =
            Arc::new((0..n).map(|_| loom::cell::UnsafeCell::new(0)).collect());
        let other = {
            let pool = pool.clone();
            let state = state.clone();
            thread::spawn(move || pool.loom_cycle_claims(1, run, &state, None))
        };
        let mut got = pool.loom_cycle_claims(0, run, &state, ask);
        got.extend(other.join().unwrap());
        got.sort_unstable();
        let want: Vec<(usize, usize)> =
            (0..n).flat_map(|p| (0..run).map(move |j| (p, j))).collect();
        assert_eq!(got, want);
    });
}

/// Cycle claims with a request: one thread asks for the entry it did not claim first (as a
/// thread ahead asks for an entry that a slow thread holds). Whichever way the two threads
/// interleave with one preemption (the asked entry held, handed back on request, taken in a
/// switch, or claimed by the other thread first), each cycle of each entry runs once, in order, after the
/// entry's previous cycle, on a cell loom tracks.
#[test]
fn loom_shared_pool_asked_entries_switch() {
    cycle_claims_raced(&[10, 11], 3, Some(1));
}

/// Cycle claims with a request: the entry that a thread hands back as it switches to the one
/// it asked for, handed back with a Relaxed store, lets the thread that claims its next
/// cycle run it without seeing the previous cycle's writes; the model reaches the switch and
/// sees the race.
#[test]
fn loom_shared_pool_catches_a_relaxed_switch() {
    expect_caught(
        "loom_tests::loom_shared_pool_asked_entries_switch",
        "switch-hand-back-relaxed",
        "Causality violation",
    );
}

/// Cycle claims: an entry handed back with a Relaxed store lets the thread that claims its
/// next cycle run it without seeing the previous cycle's writes, and the model sees the race.
#[test]
fn loom_shared_pool_catches_a_relaxed_hand_back() {
    expect_caught(
        "loom_tests::loom_shared_pool_cycle_claims_raced",
        "cycle-hand-back-relaxed",
        "Causality violation",
    );
}

/// Whole claims: an entry taken by a load and a store instead of one read-modify-write is
/// taken twice in some interleaving, and the model sees it.
#[test]
fn loom_shared_pool_catches_a_racy_whole_claim() {
    expect_caught(
        "loom_tests::loom_shared_pool_whole_claims_raced",
        "whole-claim-load-store",
        "assertion",
    );
}

/// A thread still looking since the last cycle when the next one is published (the
/// straggler: it read a count of units left that was not yet zero, and looks once more): it
/// may claim units of the new cycle as soon as they are published, and subtracts them from
/// the count; the calling thread claims the others and subtracts its own. Whatever the
/// interleaving, the count ends at zero: every claim's subtraction comes after the store of
/// the count it subtracts from, which [`crate::SharedPool::run_cycle`] makes before the claims
/// can start (a count stored after would erase the straggler's subtraction, and the cycle
/// would wait for units that had run).
#[test]
fn loom_shared_pool_straggler_counted() {
    model_bounded(2, || {
        let pool = Arc::new(crate::SharedPool::new(1, 64, false, &ExecOptions::default()).unwrap());
        // The last cycle has ended: no unit left, no entry to claim.
        pool.loom_whole_setup(2, &[]);
        pool.loom_members(&[10, 11, 12]);
        let straggler = {
            let pool = pool.clone();
            thread::spawn(move || pool.loom_look(1))
        };
        pool.loom_publish_whole(1, 3);
        let mine = pool.loom_look(0);
        let theirs = straggler.join().unwrap();
        assert_eq!(mine + theirs, 3, "every entry claimed once");
        assert_eq!(pool.loom_units_left(), 0, "units left after every unit ran");
    });
}

/// The count of units left stored after the cycle's claims can start: the straggler's
/// subtraction is erased in some interleaving, and the model sees the count that never
/// reaches zero.
#[test]
fn loom_shared_pool_catches_a_late_count() {
    expect_caught(
        "loom_tests::loom_shared_pool_straggler_counted",
        "units-left-after-publish",
        "units left after every unit ran",
    );
}
