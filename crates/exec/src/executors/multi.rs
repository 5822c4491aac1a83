//! Many plans on one pool: [`SharedPool`] runs, once per cycle, every unit of every
//! [`Tenant`] handed to it, on one set of threads (the calling thread and `threads - 1`
//! workers), with work stealing across plans. This is the runtime of the multi-graph host
//! (after Marquet et al., "CalMAR: a multi-application dataflow runtime": one thread per core
//! shared by every loaded application).
//!
//! Each tenant keeps its own plan and its own activation counters; a work item is the pair
//! (tenant, unit) packed into a `u32` ([`MAX_TENANTS`] tenants of at most [`MAX_UNITS`] units).
//! A cycle proceeds as the single-plan work stealing of Letz et al.: threads claim source
//! units from a shared cursor, run a unit, decrement its successors' counters, run one ready
//! successor next and push the others on their own deque (Chase–Lev, fixed capacity), pop
//! their own deque LIFO and steal from the others FIFO. The cycle ends when the count of
//! units left reaches zero.
//!
//! Partitions ([`SharedPool::set_partition`]): threads and tenants may be split into groups;
//! a thread then runs only units of tenants of its group (the `partitioned` mode of the host).
//! With one group (the default) every thread runs every tenant's units.
//!
//! Protocol, and why it loses nothing:
//! - The calling thread stores the units left (Release), publishes the cycle (tenant table,
//!   each group's source table), then stores each group's source cursor
//!   `(n_sources << 32) | 0` and whole word with Release, then bumps the pool's epoch. A
//!   claim is a `fetch_add` (Acquire) on a group's cursor: a claim that reads an index below
//!   the count read it from the release sequence of this cycle's store (at the end of the
//!   previous cycle every source had been claimed, so its cursor's index was at or past its
//!   count), so it sees the tables, and the units left of this cycle: a worker still looking
//!   since the last cycle may claim as soon as a cursor is stored, and its subtraction comes
//!   after the count it subtracts from (stored after the cursors, the count erased it, and
//!   the cycle never ended).
//! - A unit's counter reaching zero is reset to its initial value by the thread that brought
//!   it to zero (every decrement of this cycle on it is done), then the unit is ready. Work
//!   items in deques were pushed during this cycle by threads that had seen its tables.
//! - Every run unit is subtracted from the units left (AcqRel), by the thread that ran it,
//!   before that thread next looks at the count: the calling thread's Acquire load that
//!   reads zero sees every write of the cycle (the subtractions form one release sequence),
//!   and the count reaches zero only when every unit has run.
//!   A worker that is still looking when the next cycle starts takes part in it, and sees its
//!   tables by the same claims.
//!
//! Runs of several cycles ([`SharedPool::run_cycles`], offline): the units left count every
//! unit of every cycle of the run. A whole tenant's entry word is `(run << 16) | state`,
//! `state` its next cycle with a held bit, or taken: a thread claims a free entry by a
//! compare-and-swap (AcqRel) that sets the held bit, runs its cycles, and hands it back with
//! a Release store of its next cycle (the next holder's claim sees its writes) or marks it
//! taken; at the run's end every entry is taken, so a thread holding an older run's word
//! claims nothing. A tenant in parts counts down its exit units (AcqRel); the thread that
//! ends the countdown captures the cycle's outputs and stores the tenant's source cursor
//! again (Release), which the next cycle's claims acquire.

use std::sync::atomic::AtomicPtr;

use crossbeam_utils::CachePadded;

use crate::executors::grain::{GrainTuner, TenantGrain};
use crate::executors::ExecOptions;
use crate::runtime::pool::{Pool, StartError, Work};
use crate::runtime::{Deque, Steal};
use crate::trace::now;
use crate::{Plan, NO_SLOT};
use fugue_sync::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Tenants a cycle may run at most.
pub const MAX_TENANTS: usize = 64;

/// Units a tenant may have at most.
pub const MAX_UNITS: usize = 1 << 26;

/// A thread that found no work pauses `2^min(k, IDLE_BACKOFF_SHIFT)` spin-loop hints before
/// its `k+1`-th look (at most 32: a microsecond or two).
const IDLE_BACKOFF_SHIFT: u32 = 5;

/// Bits of a work item that hold the unit.
const UNIT_BITS: u32 = 26;

/// A whole entry's word is `(run << 16) | state`: `state` is [`TAKEN`] when the entry is
/// done for run `run` (claimed, in a run of one cycle; all its cycles run, in a run of
/// several), else `(j << 1) | busy`: its next cycle `j`, and whether a thread holds it.
const TAKEN: u64 = 0xffff;

/// The cycle a whole entry of word `e` is free for in run `cur`: none when it is held, done,
/// or a later run's (a thread that read an older run's word claims nothing); 0 for an older
/// run's word (not claimed in this run yet).
fn free_at(e: u64, cur: u64) -> Option<usize> {
    let (r, state) = (e >> 16, e & TAKEN);
    if r > cur || (r == cur && (state == TAKEN || state & 1 == 1)) {
        None
    } else if r < cur {
        Some(0)
    } else {
        Some((state >> 1) as usize)
    }
}

/// The cycle at which a thread claimed the whole entry of word `e` in run `cur`, while it
/// holds it; none when it is free, done, or another run's.
fn held_at(e: u64, cur: u64) -> Option<usize> {
    let (r, state) = (e >> 16, e & TAKEN);
    (r == cur && state != TAKEN && state & 1 == 1).then_some((state >> 1) as usize)
}

/// How many cycles a free entry may lag the one a thread holds, at cycle `j` of a run of
/// `run`, before the thread turns to it: a quarter of the cycles left, at least one.
fn slack(run: usize, j: usize) -> usize {
    (run.saturating_sub(j) / 4).max(1)
}

/// How many slacks another thread's entry must lag before a thread turns to it rather than
/// to its own home entries: one value for the claim and the hand-back, so that an entry
/// handed back for another's is not claimed again at once.
const OTHERS_SLACKS: usize = 2;

/// What a thread claimed of a whole entry.
enum Claim {
    /// Tenant `k` (table index), for the run's one cycle.
    Once(usize),
    /// Entry `p` of group `g`, tenant `k`, from cycle `j` of run number `cur` of `run`
    /// cycles.
    Cycles {
        g: usize,
        p: usize,
        k: usize,
        j: usize,
        cur: u64,
        n: usize,
        run: usize,
        /// The claiming thread's rank in the group: its home entries are `rank, rank + t,
        /// ...` (`t` the group's threads).
        rank: usize,
    },
}

/// What the thread that holds a whole entry in a run of several does after one of its
/// cycles ([`MultiState::keep_or_hand_back`]).
enum Next {
    /// Runs the entry's next cycle.
    Keep,
    /// Handed the entry back, or marked it done: looks for work again.
    Left,
    /// Handed the entry back because another thread asked for it: looks for work again,
    /// leaving that entry to the asker for a while.
    Asked,
    /// Claimed entry `q` (tenant `kq`), which it had asked for, at its cycle `jq`, and
    /// handed its own back: runs `q` next.
    Switch { q: usize, kq: usize, jq: usize },
}

/// How many cycles an entry that another thread holds must lag the one a thread holds, at
/// cycle `j` of a run of `run`, before the thread asks for it: a sixteenth of the cycles
/// left, at least two.
fn ask_lag(run: usize, j: usize) -> usize {
    (run.saturating_sub(j) / 16).max(2)
}

/// Over how many of its own cycles at least a thread watches an entry that lags it before
/// it asks for it ([`MultiState::keep_or_hand_back`]): it asks once the entry ran a quarter
/// fewer cycles than its own over that stretch, and at least three fewer.
const WATCH_CYCLES: usize = 8;

/// Every how many of its cycles a thread that holds a whole entry looks at where the
/// entries that others hold are ([`MultiState::held_behind`]): each look reads a cache line
/// per entry that its holder writes at every cycle.
const LOOK_EVERY: usize = 4;

/// After how many of its own cycles a thread starts watching a lagging entry afresh.
const WATCH_MAX_CYCLES: usize = 64;

/// What the thread that holds a whole entry knows of the entries that lag it.
#[derive(Default)]
struct Watch {
    /// The entry it asked for, not yet handed back, and that entry's word when it asked
    /// (held by the thread it asked).
    asked: Option<(usize, u64)>,
    /// An entry that lags it, that entry's cycle and its own when it first saw it lag.
    look: Option<(usize, usize, usize)>,
}

/// For how many of its own last cycle's time a thread that handed an entry over on request
/// leaves it to the thread that asked (which takes it at the end of its current cycle).
const ASKED_CYCLES: u64 = 4;

/// A plan with its own activation counters and its busy-time account: what a
/// [`SharedPool`] runs.
pub struct Tenant {
    plan: Plan,
    /// One counter per activation slot of the plan ([`Plan::n_slots`]).
    counts: Box<[AtomicU32]>,
    /// [`now`] ticks spent running this tenant's units since [`Tenant::take_busy_ticks`],
    /// added by each thread once per stretch of this tenant's units it ran (not per unit, and
    /// not in a per-thread table that the calling thread would have to read whole after every
    /// cycle: see [`Account`]).
    busy: CachePadded<AtomicU64>,
    /// The partition group it runs in.
    group: usize,
    /// Whether cycles run it.
    enabled: bool,
    /// Its outputs of the cycles of a run of several ([`SharedPool::run_cycles`]): cycle `j`,
    /// channel `c` at `(j * n_outputs + c) * block`. Room for `batch` cycles (none: runs of
    /// one cycle only). Written during a run by the one thread that claimed the tenant
    /// whole, read between runs.
    capture: std::cell::UnsafeCell<Box<[f32]>>,
    /// Cycles [`Tenant::capture`] has room for.
    batch: usize,
    /// Cycles of the last run of several whose outputs are captured: all of them, or those
    /// before the cycle in which one of its processors panicked.
    captured: AtomicUsize,
    /// Units with no successor: a cycle of the tenant is done when they all ran.
    exits: usize,
    /// In a run of several, in parts: its exits still to run in its current cycle. The
    /// thread that brings it to zero ends that cycle and opens the next.
    exits_left: CachePadded<AtomicUsize>,
    /// In a run of several, in parts: the cycle of the run it is in.
    run_at: AtomicUsize,
}

// SAFETY: the one field that is not `Sync` by itself is the capture, written only during a
// run of [`SharedPool::run_cycles`], which holds every tenant it runs by `&mut`: while a
// `&Tenant` can be shared, no run writes it.
unsafe impl Sync for Tenant {}

impl std::fmt::Debug for Tenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenant")
            .field("units", &self.plan.n_units())
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

impl Tenant {
    /// A tenant for `plan` (control thread; allocates its counters).
    ///
    /// # Panics
    /// If the plan has more than [`MAX_UNITS`] units.
    pub fn new(plan: Plan) -> Tenant {
        assert!(plan.n_units() <= MAX_UNITS, "a plan of too many units");
        // Written by the threads that run the tenant, every cycle: on lines of their own
        // (`crate::lines`), not beside another tenant's.
        let counts = crate::lines::apart(|| {
            (0..plan.n_slots())
                .map(|c| AtomicU32::new(plan.slot_initial(c)))
                .collect()
        });
        let exits = (0..plan.n_units())
            .filter(|&u| plan.unit_successors(u).is_empty())
            .count();
        Tenant {
            plan,
            counts,
            busy: CachePadded::new(AtomicU64::new(0)),
            group: 0,
            enabled: true,
            capture: std::cell::UnsafeCell::new(Box::new([])),
            batch: 1,
            captured: AtomicUsize::new(0),
            exits,
            exits_left: CachePadded::new(AtomicUsize::new(0)),
            run_at: AtomicUsize::new(0),
        }
    }

    /// Makes room for the outputs of `cycles` cycles, so that [`SharedPool::run_cycles`] may
    /// run the tenant that many cycles at a time (control thread; allocates
    /// `cycles × outputs × block` samples).
    ///
    /// # Panics
    /// If `cycles` is `1 << 14` or more (a run's cycle is held in 15 bits of a claim word).
    pub fn set_batch(&mut self, cycles: usize) {
        assert!(cycles < 1 << 14, "a batch of too many cycles");
        let cycles = cycles.max(1);
        let len = if cycles > 1 {
            cycles * self.plan.n_outputs() * self.plan.block()
        } else {
            0
        };
        // Written by the thread that runs the tenant's cycles (`crate::lines`).
        *self.capture.get_mut() = crate::lines::apart(|| vec![0.0; len].into_boxed_slice());
        self.batch = cycles;
    }

    /// Cycles of the last run of several ([`SharedPool::run_cycles`]) whose outputs are
    /// captured ([`Tenant::captured_output`]): all of them, or, when a processor panicked in
    /// cycle `j` of the run, `j` (the plan's panic flag stays set). Between runs.
    pub fn captured(&self) -> usize {
        // Relaxed: between runs; the running thread's store is ordered before the run's end
        // by the units-left protocol (module documentation).
        self.captured.load(Ordering::Relaxed)
    }

    /// Output `channel` of cycle `cycle` of the last run of several (`cycle` below
    /// [`Tenant::captured`]). Between runs.
    ///
    /// # Panics
    /// If `cycle` or `channel` is past what the tenant holds.
    pub fn captured_output(&self, cycle: usize, channel: usize) -> &[f32] {
        assert!(cycle < self.batch && channel < self.plan.n_outputs());
        // SAFETY: between runs (the caller's contract, and `&self` of a tenant that runs only
        // under the calling thread's `&mut`): no thread writes the capture.
        let all = unsafe { &*self.capture.get() };
        &all[self.capture_range(cycle, channel)]
    }

    /// Where output `channel` of cycle `cycle` of a run lies in the capture.
    fn capture_range(&self, cycle: usize, channel: usize) -> std::ops::Range<usize> {
        let block = self.plan.block();
        let at = (cycle * self.plan.n_outputs() + channel) * block;
        at..at + block
    }

    /// Copies the plan's outputs, as its last cycle left them, to the capture as cycle
    /// `cycle` of the run.
    ///
    /// # Safety
    /// Called during a run by the one thread that ran the tenant's cycle `cycle` (whole: it
    /// holds the entry; in parts: it ended the cycle's countdown), before the next cycle can
    /// start: no other thread runs the tenant or touches its capture, and the calling thread
    /// reads them only after the run. `cycle` is below the run's length, which
    /// [`SharedPool::run_cycles`] keeps within [`Tenant::set_batch`]'s room.
    unsafe fn capture_cycle(&self, cycle: usize) {
        // SAFETY: the caller's contract: this thread alone touches the capture now.
        let dst = unsafe { &mut *self.capture.get() };
        for c in 0..self.plan.n_outputs() {
            dst[self.capture_range(cycle, c)].copy_from_slice(self.plan.output(c));
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The plan, to set inputs and read outputs between cycles.
    pub fn plan_mut(&mut self) -> &mut Plan {
        &mut self.plan
    }

    /// The plan back (control thread).
    pub fn into_plan(self) -> Plan {
        self.plan
    }

    /// [`now`] ticks spent running this tenant's units since the last call. Between cycles.
    #[inline]
    pub fn take_busy_ticks(&mut self) -> u64 {
        // Relaxed: between cycles; the threads' additions are ordered before the cycle's end
        // by the units-left protocol (module documentation).
        self.busy.swap(0, Ordering::Relaxed)
    }

    /// Sets the partition group this tenant runs in (between cycles; see
    /// [`SharedPool::set_partition`]).
    pub fn set_group(&mut self, group: usize) {
        self.group = group;
    }

    /// Turns the tenant off or on: [`SharedPool::run_cycle`] skips a tenant that is off
    /// (between cycles).
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Whether cycles run it ([`Tenant::set_enabled`]).
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

impl AsMut<Tenant> for Tenant {
    fn as_mut(&mut self) -> &mut Tenant {
        self
    }
}

/// One partition group's view of a cycle.
struct Group {
    /// Per member slot: `(n_sources << 32) | next`, the next source of that member to claim
    /// (slots past the members: no source).
    cursors: Box<[CachePadded<AtomicU64>]>,
    /// Member slots whose cursors the last cycle set (the next one clears those it leaves
    /// unused). Written by the calling thread only.
    used: AtomicUsize,
    /// `(cycle << 16) | n`: the cycle's number and how many of `whole_list`'s entries it
    /// runs whole (one word, so that a thread reads both of one cycle).
    whole: CachePadded<AtomicU64>,
    /// The tenants (table indices) that this cycle runs whole, each by one thread.
    whole_list: Box<[AtomicU32]>,
    /// Per entry of `whole_list`: the last cycle whose entry was claimed (`fetch_max`).
    whole_claim: Box<[CachePadded<AtomicU64>]>,
    /// Per entry of `whole_list`, in a run of several: the run's number when a thread asked
    /// its holder to hand it over ([`MultiState::keep_or_hand_back`]), else an older run's
    /// or 0. A hint: it decides when the holder hands the entry back, never who may claim it.
    whole_ask: Box<[CachePadded<AtomicU64>]>,
    /// Per entry of `whole_list`, in a run of several: `(run << 16) | j`, the next cycle `j`
    /// of the entry while a thread keeps it, stored by that thread after each cycle (apart
    /// from `whole_claim`, which the threads read at every cycle's end and which changes only
    /// when the entry changes hands). Read by [`MultiState::held_behind`] every
    /// [`LOOK_EVERY`] cycles.
    whole_at: Box<[CachePadded<AtomicU64>]>,
    /// Threads of the group.
    threads: AtomicUsize,
    /// Tenants of the group this cycle (their indices in the tenant table).
    n: AtomicUsize,
    members: Box<[AtomicU32]>,
}

impl Group {
    /// Splits this cycle's members (`members[..n]`) into the tenants run whole (moved to
    /// `whole_list`; returns how many) and those run in parts (left in `members`, `n`
    /// updated). A group of one thread runs every tenant whole: in order, with no claim,
    /// counter or deque per unit, as a sequential engine does. A group of several runs them
    /// in parts, so that a thread done early (or a core slowed by the machine's other work)
    /// is made up for by the others, unit by unit, while each tenant's home thread runs most
    /// of its units ([`MultiState::claim_source`]).
    ///
    /// With several threads, `grain` decides ([`TenantGrain`]): none whole, all whole, or
    /// (balanced) the largest multiple of the threads whole, the rest in parts (`Auto` is
    /// resolved to one of these before).
    fn split_members(&self, grain: TenantGrain, run: usize) -> usize {
        let n = self.n.load(Ordering::Relaxed);
        let whole = self.whole_count(n, grain, run);
        if whole == 0 {
            return 0;
        }
        for m in 0..whole {
            let k = self.members[m].load(Ordering::Relaxed);
            self.whole_list[m].store(k, Ordering::Relaxed);
        }
        for m in whole..n {
            let k = self.members[m].load(Ordering::Relaxed);
            self.members[m - whole].store(k, Ordering::Relaxed);
        }
        self.n.store(n - whole, Ordering::Relaxed);
        whole
    }

    /// How many of `n` members `grain` runs whole in a run of `run` cycles
    /// ([`Group::split_members`]). In a run of several, balanced runs every member whole
    /// when there are at least as many as threads: their cycles are claimed one by one, each
    /// thread's home members furthest behind first, another's when it lags
    /// ([`MultiState::claim_whole`]), so any count spreads evenly.
    fn whole_count(&self, n: usize, grain: TenantGrain, run: usize) -> usize {
        let threads = self.threads.load(Ordering::Relaxed);
        if threads <= 1 {
            n
        } else {
            match grain {
                TenantGrain::Units | TenantGrain::Auto => 0,
                TenantGrain::Whole => n,
                TenantGrain::Balanced if run > 1 && n >= threads => n,
                TenantGrain::Balanced => n - n % threads,
            }
        }
    }
}

/// A thread's running account of busy time within one of its stretches of work: the tenant
/// whose units it ran last and their ticks so far, added to that tenant's counter when the
/// thread turns to another tenant or runs out of work. So the busy time costs one addition
/// per stretch on a tenant's line, and after the cycle the calling thread reads one counter
/// per tenant; a table of a cell per thread and tenant, read whole after every cycle, cost
/// threads × tenants reads of lines other cores wrote (a part of the serial time that grew
/// with the threads: `bench-results/scaling/`).
struct Account {
    /// The tenant's table index (`usize::MAX`: none yet).
    tenant: usize,
    ticks: u64,
}

struct MultiState {
    deques: Box<[Deque]>,
    /// The cycle's tenants.
    tenants: Box<[AtomicPtr<Tenant>]>,
    groups: Box<[Group]>,
    /// Per thread: its group.
    thread_group: Box<[AtomicUsize]>,
    /// Per thread: its rank among its group's threads (where its own whole tenants start).
    thread_rank: Box<[AtomicUsize]>,
    /// Units left in the cycle. Each thread subtracts the units it ran in one go when it
    /// runs out of work (not one by one: the line would travel between the cores at every
    /// unit).
    remaining: CachePadded<AtomicUsize>,
    /// Cycles of the current run: 1, or more ([`SharedPool::run_cycles`]). Stored before the
    /// run is published (Release), read after a claim.
    run: AtomicUsize,
    /// Per tenant (table index) run in parts: its member slot in its group this run (where a
    /// run of several publishes its next cycle's sources).
    slot_of: Box<[AtomicUsize]>,
    /// Whether to account busy time per tenant.
    timing: bool,
    /// More threads than cores: a thread that finds no work yields its core.
    oversubscribed: bool,
    /// Whole entries handed over on request ([`Next::Asked`]) since the pool started.
    handovers: CachePadded<AtomicU64>,
}

impl MultiState {
    /// The tenant of table index `k`.
    ///
    /// # Safety
    /// Called during a cycle for a `k` read from a claim or a work item of this cycle (see
    /// the module's protocol): the pointer is one that the calling thread stored for this
    /// cycle, to a tenant it holds by `&mut` until the cycle ends.
    #[inline]
    unsafe fn tenant(&self, k: usize) -> &Tenant {
        let p = self.tenants[k].load(Ordering::Relaxed);
        // SAFETY: the caller's contract: the pointer is valid and published for this cycle.
        unsafe { &*p }
    }

    /// Claims a source unit of group `g` for thread `w`, as a work item: first of the members
    /// it is home to (slots `rank`, `rank + threads`, ...: a tenant's units then run on the
    /// same thread cycle after cycle, its buffers and state in that core's cache, while the
    /// load is even), then of any other member, from the next slot on.
    #[inline]
    fn claim_source(&self, w: usize, g: usize) -> Option<u32> {
        let group = &self.groups[g];
        // Relaxed, and possibly of another cycle: a slot past this cycle's members has no
        // source, and a member missed here is found at the next look (a thread looks until
        // the cycle ends).
        let n = group.n.load(Ordering::Relaxed);
        if n == 0 {
            return None;
        }
        let t = group.threads.load(Ordering::Relaxed).max(1);
        let rank = self.thread_rank[w].load(Ordering::Relaxed);
        let mut m = rank;
        while m < n {
            if let Some(i) = self.claim_in(group, m) {
                return Some(i);
            }
            m += t;
        }
        (1..=n)
            .map(|d| (rank + d) % n)
            .filter(|m| m % t != rank)
            .find_map(|m| self.claim_in(group, m))
    }

    /// Claims a source of the member in slot `m` of `group`, as a work item.
    #[inline]
    fn claim_in(&self, group: &Group, m: usize) -> Option<u32> {
        let cursor = group.cursors.get(m)?;
        // Relaxed pre-check: skip the RMW when every source is claimed.
        let c = cursor.load(Ordering::Relaxed);
        if (c & 0xffff_ffff) >= (c >> 32) {
            return None;
        }
        // Acquire: pairs with the Release store of this cycle's cursor (module protocol).
        let c = cursor.fetch_add(1, Ordering::Acquire);
        let (total, i) = ((c >> 32) as u32, (c & 0xffff_ffff) as u32);
        if i >= total {
            return None;
        }
        // Read after the claim: this cycle's member of the slot.
        let k = group.members[m].load(Ordering::Relaxed) as usize;
        // SAFETY: `k` was read after a claim of this cycle (module protocol).
        let t = unsafe { self.tenant(k) };
        let u = t.plan.unit_sources()[i as usize];
        Some(((k as u32) << UNIT_BITS) | u)
    }

    /// Claims a tenant that group `g` runs whole this run ([`Group::split_members`]), from
    /// the entry at thread `w`'s rank on: the tenant for the run's one cycle, or, in a run
    /// of several, its free home entry furthest behind (another thread's when that one lags
    /// it by twice the keep slack, or when it has no home entry left), from its next cycle.
    /// In a run of several, entry `skip` is left alone (one this thread handed over on
    /// request a moment ago, left to the thread that asked).
    #[inline]
    fn claim_whole(&self, w: usize, g: usize, skip: Option<usize>) -> Option<Claim> {
        let rank = self.thread_rank[w].load(Ordering::Relaxed);
        self.claim_whole_by_rank(rank, g, skip)
    }

    /// [`MultiState::claim_whole`] for the thread of rank `rank` in group `g`.
    #[inline]
    fn claim_whole_by_rank(&self, rank: usize, g: usize, skip: Option<usize>) -> Option<Claim> {
        let group = &self.groups[g];
        // Acquire: pairs with the Release store of this run's word (module protocol).
        let word = group.whole.load(Ordering::Acquire);
        // Acquire (the Release store before the word read above): a later run's value can be
        // read only once this word's run has ended, when every entry is taken and no claim
        // of this word succeeds.
        let run = self.run.load(Ordering::Acquire);
        if run <= 1 {
            // With the word read above: a newer run's word may be published meanwhile, and
            // its run may hold several cycles.
            return self.claim_whole_of(rank, g, word).map(Claim::Once);
        }
        let (cur, n) = (word >> 16, (word & 0xffff) as usize);
        if n == 0 {
            return None;
        }
        let t = group.threads.load(Ordering::Relaxed).max(1);
        loop {
            // The free home entry furthest behind (a tenant stays on its home core, its
            // state and buffers in that core's cache), unless another thread's free entry
            // lags it by twice the slack of [`MultiState::keep_or_hand_back`] (that thread
            // is slow, or has more to run) or the thread has no home entry left; then the
            // other entry furthest behind, from the next on.
            let furthest = |entries: &mut dyn Iterator<Item = usize>| {
                let mut best: Option<(usize, usize, u64)> = None;
                for p in entries.filter(|&p| Some(p) != skip) {
                    // Relaxed: a look; the claim below is the read-modify-write that counts.
                    let e = group.whole_claim[p].load(Ordering::Relaxed);
                    if let Some(j) = free_at(e, cur) {
                        if best.is_none_or(|(bj, _, _)| j < bj) {
                            best = Some((j, p, e));
                        }
                    }
                }
                best
            };
            let home = furthest(&mut (rank..n).step_by(t));
            let other = furthest(
                &mut (1..=n)
                    .map(|d| (rank + d) % n)
                    .filter(|p| p % t != rank % t),
            );
            let (j, p, e) = match (home, other) {
                (Some(h), Some(o)) if o.0 + OTHERS_SLACKS * slack(run, h.0) <= h.0 => o,
                (Some(h), _) => h,
                (None, o) => o?,
            };
            let held = (cur << 16) | ((j as u64) << 1) | 1;
            // AcqRel: one thread holds an entry at a time; its claim sees the writes of the
            // thread that ran the entry's previous cycle (its Release store of the word).
            if group.whole_claim[p]
                .compare_exchange(e, held, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                // Relaxed: a hint. An ask left from before the entry was handed back for
                // another reason is answered by this claim (its holder would otherwise hand
                // it back after one cycle).
                if group.whole_ask[p].load(Ordering::Relaxed) == cur {
                    group.whole_ask[p].store(0, Ordering::Relaxed);
                }
                let k = group.whole_list[p].load(Ordering::Relaxed) as usize;
                return Some(Claim::Cycles {
                    g,
                    p,
                    k,
                    j,
                    cur,
                    n,
                    run,
                    rank,
                });
            }
        }
    }

    /// Whether an entry of group `g`'s first `n` is free for a cycle before `home` of run
    /// `cur`, when it is a home entry of the thread of rank `rank`, or before `other` when it
    /// is another's (a tenant further behind than one at that cycle).
    fn behind(&self, g: usize, cur: u64, n: usize, rank: usize, home: usize, other: usize) -> bool {
        let group = &self.groups[g];
        let t = group.threads.load(Ordering::Relaxed).max(1);
        group.whole_claim[..n].iter().enumerate().any(|(p, w)| {
            let j = if p % t == rank % t { home } else { other };
            // Relaxed: a look.
            free_at(w.load(Ordering::Relaxed), cur).is_some_and(|f| f < j)
        })
    }

    /// [`MultiState::claim_whole`] for the thread of rank `rank` in group `g`.
    #[inline]
    #[cfg(loom)]
    fn claim_whole_ranked(&self, rank: usize, g: usize) -> Option<usize> {
        // Acquire: pairs with the Release store of this cycle's word (module protocol).
        let word = self.groups[g].whole.load(Ordering::Acquire);
        self.claim_whole_of(rank, g, word)
    }

    /// A claim of a whole entry of group `g`, for the thread of rank `rank`, in the run of
    /// one cycle whose word (Acquire) is `word`.
    #[inline]
    fn claim_whole_of(&self, rank: usize, g: usize, word: u64) -> Option<usize> {
        let group = &self.groups[g];
        let (cycle, n) = (word >> 16, (word & 0xffff) as usize);
        if n == 0 {
            return None;
        }
        let t = group.threads.load(Ordering::Relaxed).max(1);
        let claim = |p: usize| {
            let taken = (cycle << 16) | TAKEN;
            // Relaxed pre-check: skip the RMW of an entry already taken this cycle.
            if group.whole_claim[p].load(Ordering::Relaxed) >= taken {
                return None;
            }
            if fugue_sync::fault::active("whole-claim-load-store") {
                // Broken on purpose (loom): a store after the load instead of one
                // read-modify-write, so two threads can both take the entry.
                group.whole_claim[p].store(taken, Ordering::Release);
                return Some(group.whole_list[p].load(Ordering::Relaxed) as usize);
            }
            // AcqRel: exactly one thread raises an entry to this cycle; a thread that read an
            // older cycle's word never claims (module protocol: at the end of a run every
            // entry of it is taken).
            (group.whole_claim[p].fetch_max(taken, Ordering::AcqRel) < taken)
                .then(|| group.whole_list[p].load(Ordering::Relaxed) as usize)
        };
        // Its home entries first (`rank`, `rank + threads`, ...: a tenant then runs on the
        // same thread cycle after cycle, its buffers and state in that core's cache), then
        // any other, from the next entry on.
        (rank..n).step_by(t).find_map(claim).or_else(|| {
            (1..=n)
                .map(|d| (rank + d) % n)
                .filter(|p| p % t != rank % t)
                .find_map(claim)
        })
    }

    /// Adds the time since `start` ([`now`] ticks, 0 when not timing) to the thread's
    /// account `acct` of tenant `k`, when timing.
    #[inline]
    fn account(&self, acct: &mut Account, k: usize, start: u64) {
        if self.timing {
            let ticks = now().wrapping_sub(start);
            if acct.tenant != k {
                self.flush(acct);
                acct.tenant = k;
            }
            acct.ticks += ticks;
        }
    }

    /// Adds the ticks of `acct` to its tenant's busy time. Called before the thread
    /// subtracts the units it ran from the units left, so that the cycle has not ended and the
    /// tenant's pointer is still this cycle's (module protocol).
    #[inline]
    fn flush(&self, acct: &mut Account) {
        if acct.ticks > 0 {
            // SAFETY: `acct.tenant` is a tenant whose units this thread ran this cycle and
            // has not yet subtracted from the units left, so the cycle is still running and
            // the pointer is the one the calling thread stored for it (module protocol).
            let t = unsafe { self.tenant(acct.tenant) };
            // Relaxed: a sum read by the calling thread after the cycle's end, which the
            // units-left protocol orders after this addition.
            t.busy.fetch_add(acct.ticks, Ordering::Relaxed);
            acct.ticks = 0;
        }
    }

    /// Runs tenant `k` whole on this thread, once: every unit in order, no counter touched;
    /// returns its units.
    #[inline]
    fn run_whole(&self, acct: &mut Account, k: usize) -> usize {
        // SAFETY: `k` was claimed this cycle (module protocol).
        let t = unsafe { self.tenant(k) };
        let start = if self.timing { now() } else { 0 };
        // SAFETY: this thread claimed the tenant for this cycle, so no other thread runs any
        // of its units; the plan is held by `&mut` by the calling thread until the cycle
        // ends, so no output reference is alive.
        unsafe { run_plan(&t.plan) };
        self.account(acct, k, start);
        t.plan.n_units()
    }

    /// Runs the whole entry claimed in `c` ([`Claim::Cycles`]) from its cycle `j` on, cycle
    /// after cycle, each one's outputs copied to the tenant's capture, while
    /// [`MultiState::keep_or_hand_back`] keeps it; then hands it back (its next cycle free for
    /// any thread), marks it done, or turns to the entry it had asked for. A panic ends the
    /// tenant's run: its later cycles' units count as run, unrun. Returns the units it ran or
    /// counted, and the entry it handed back because another thread asked for it, with the
    /// tick until which it leaves that entry to the asker.
    fn run_whole_cycles(&self, acct: &mut Account, c: Claim) -> (usize, Option<(usize, u64)>) {
        let Claim::Cycles {
            g,
            mut p,
            mut k,
            mut j,
            cur,
            n,
            run,
            rank,
        } = c
        else {
            return (0, None);
        };
        let mut watch = Watch::default();
        let mut ran = 0;
        loop {
            // SAFETY: `k` was claimed for this run (module protocol): by the claim, or by
            // the switch below.
            let t = unsafe { self.tenant(k) };
            let plan = &t.plan;
            let units = plan.n_units();
            let start = now();
            // SAFETY: this thread holds the entry (its claim or its switch to it, and the
            // cycles it ran since): no other thread runs any of the tenant's units; the plan
            // is held by `&mut` by the calling thread until the run ends, so no output
            // reference is alive.
            unsafe { run_plan(plan) };
            self.account(acct, k, start);
            ran += units;
            if plan.any_panicked() {
                // Relaxed: read after the run's end (units-left protocol).
                t.captured.store(j, Ordering::Relaxed);
                // Release: the entry is done for this run.
                self.groups[g].whole_claim[p].store((cur << 16) | TAKEN, Ordering::Release);
                return (ran + (run - j - 1) * units, None);
            }
            // SAFETY: this thread holds the entry, and ran its cycle `j` (module protocol).
            unsafe { t.capture_cycle(j) };
            j += 1;
            if j == run {
                // Relaxed: read after the run's end (units-left protocol).
                t.captured.store(run, Ordering::Relaxed);
            }
            match self.keep_or_hand_back(g, p, cur, n, j, run, rank, &mut watch) {
                Next::Keep => {}
                Next::Left => return (ran, None),
                Next::Asked => {
                    // Left to the asker for four of this thread's last cycle's time.
                    let end = now();
                    let until = end.wrapping_add(ASKED_CYCLES * end.wrapping_sub(start));
                    return (ran, Some((p, until)));
                }
                Next::Switch { q, kq, jq } => {
                    (p, k, j) = (q, kq, jq);
                    watch = Watch::default();
                }
            }
        }
    }

    /// On the thread that holds whole entry `p` of group `g` (of `n`) in run `cur` of `run`
    /// cycles, after the entry's cycle `j - 1`, what it does next ([`Next`]):
    /// - marks the entry done when `j == run`;
    /// - hands it back when another thread asked for it (`whole_ask`);
    /// - takes the entry it asked for (`watch.asked`) once its holder handed it back and it
    ///   is still behind, and hands its own back;
    /// - hands it back, its next cycle `j` free for any thread, when a free entry is far
    ///   enough behind (below);
    /// - else keeps it, and asks for an entry another thread holds that lags it by
    ///   [`ask_lag`] cycles and advanced a quarter fewer cycles than this one (three at least)
    ///   over the last [`WATCH_CYCLES`] or more: that thread is slower, or was taken off its core, and
    ///   the run ends only when every entry has run its cycles, so the entry furthest behind
    ///   is best run by the thread that is ahead. (With as many tenants as threads no entry
    ///   is ever free, and a thread that the system runs half the time would otherwise hold
    ///   its tenant back to half speed, and every other tenant with it at the run's end.) A
    ///   lag alone is no reason: threads of one speed keep the lag they have, and would hand
    ///   their tenants to each other at every cycle.
    #[allow(clippy::too_many_arguments)]
    fn keep_or_hand_back(
        &self,
        g: usize,
        p: usize,
        cur: u64,
        n: usize,
        j: usize,
        run: usize,
        rank: usize,
        watch: &mut Watch,
    ) -> Next {
        let group = &self.groups[g];
        let word = &group.whole_claim[p];
        if j == run {
            // Release: done for this run (the run's end is counted by the units left).
            word.store((cur << 16) | TAKEN, Ordering::Release);
            return Next::Left;
        }
        let free = (cur << 16) | ((j as u64) << 1);
        // Relaxed: a hint; the claim of the entry is its word's read-modify-write.
        if group.whole_ask[p].load(Ordering::Relaxed) == cur {
            group.whole_ask[p].store(0, Ordering::Relaxed);
            // Release: the thread that claims its next cycle sees this one's writes.
            word.store(free, Ordering::Release);
            // Relaxed: a count read between runs.
            self.handovers.fetch_add(1, Ordering::Relaxed);
            return Next::Asked;
        }
        if let Some((q, seen)) = watch.asked.take() {
            // Relaxed: a look; the claim is the compare-and-swap.
            let e = group.whole_claim[q].load(Ordering::Relaxed);
            if e == seen && held_at(e, cur).is_some() {
                // Still held by the thread asked: not handed back yet. (Held by another
                // since, or done: the ask is dropped.)
                watch.asked = Some((q, seen));
            } else if let Some(jq) = free_at(e, cur).filter(|&jq| jq < j) {
                let held = (cur << 16) | ((jq as u64) << 1) | 1;
                // AcqRel: as every claim of a whole entry (see `claim_whole_by_rank`).
                if group.whole_claim[q]
                    .compare_exchange(e, held, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    // Release: as every hand-back.
                    let order = if fugue_sync::fault::active("switch-hand-back-relaxed") {
                        // Broken on purpose (loom): the next cycle's thread may not see
                        // this one's.
                        Ordering::Relaxed
                    } else {
                        Ordering::Release
                    };
                    word.store(free, order);
                    // Relaxed: a hint; the ask is answered (its holder may have handed it
                    // back for its own reasons, before it saw the ask).
                    group.whole_ask[q].store(0, Ordering::Relaxed);
                    let kq = group.whole_list[q].load(Ordering::Relaxed) as usize;
                    return Next::Switch { q, kq, jq };
                }
            }
        }
        // Kept while no free home entry of the thread is `slack` cycles behind (a quarter of
        // the cycles left), nor another thread's entry twice that: a tenant stays on one
        // core for stretches (moving it takes its state and buffers to another core's
        // cache), the thread turns to its other home tenants in time, and the threads end
        // the run together.
        let slack = slack(run, j);
        if self.behind(
            g,
            cur,
            n,
            rank,
            (j + 1).saturating_sub(slack),
            (j + 1).saturating_sub(OTHERS_SLACKS * slack),
        ) {
            // Release: the thread that claims its next cycle sees this one's writes.
            let order = if fugue_sync::fault::active("cycle-hand-back-relaxed") {
                // Broken on purpose (loom): the next cycle's thread may not see this one's.
                Ordering::Relaxed
            } else {
                Ordering::Release
            };
            word.store(free, order);
            return Next::Left;
        }
        if watch.asked.is_none() && j.is_multiple_of(LOOK_EVERY) {
            let lagging = self.held_behind(g, cur, n, p, j.saturating_sub(ask_lag(run, j)));
            watch.look = match (lagging, watch.look) {
                (Some((q, jq)), Some((q0, jq0, j0))) if q == q0 && jq >= jq0 && j >= j0 => {
                    // Over `w` cycles of this entry, `q` ran `w - d`.
                    let w = j - j0;
                    let d = w.saturating_sub(jq - jq0);
                    if w >= WATCH_CYCLES && d >= (w / 4).max(3) {
                        // Relaxed: a hint (see `whole_ask`).
                        group.whole_ask[q].store(cur, Ordering::Relaxed);
                        // Relaxed: a look; the switch compares it.
                        watch.asked = Some((q, group.whole_claim[q].load(Ordering::Relaxed)));
                        None
                    } else if w >= WATCH_MAX_CYCLES {
                        Some((q, jq, j))
                    } else {
                        watch.look
                    }
                }
                (Some((q, jq)), _) => Some((q, jq, j)),
                (None, _) => None,
            };
        }
        // Relaxed: the entry's progress, for the other threads' looks (`held_behind`).
        group.whole_at[p].store((cur << 16) | j as u64, Ordering::Relaxed);
        Next::Keep
    }

    /// The entry of group `g`'s first `n` in run `cur`, other than `p`, that a thread holds
    /// at a cycle before `before`: the one furthest behind, and its cycle.
    fn held_behind(
        &self,
        g: usize,
        cur: u64,
        n: usize,
        p: usize,
        before: usize,
    ) -> Option<(usize, usize)> {
        let group = &self.groups[g];
        let mut best: Option<(usize, usize)> = None;
        for (q, w) in group.whole_claim[..n].iter().enumerate() {
            // Relaxed: a look.
            let Some(claimed) = held_at(w.load(Ordering::Relaxed), cur).filter(|_| q != p) else {
                continue;
            };
            // Where its holder is: its last progress stored in this run, else where it
            // claimed it.
            let at = group.whole_at[q].load(Ordering::Relaxed);
            let jq = if at >> 16 == cur {
                ((at & 0xffff) as usize).max(claimed)
            } else {
                claimed
            };
            if jq < before && best.is_none_or(|(bj, _)| jq < bj) {
                best = Some((jq, q));
            }
        }
        best.map(|(jq, q)| (q, jq))
    }

    /// Ends cycle `j` of a run of several of tenant `k`, run in parts, on the thread that ran
    /// its last exit: its outputs to the capture, then its next cycle's sources published
    /// (the activation counters were reset by the threads that brought them to zero). A
    /// panic ends the tenant's run: its later cycles' units count as run, unrun.
    fn end_tenant_cycle(&self, k: usize, t: &Tenant) {
        // Relaxed: stored before this run was published; `run_at` is written only by the
        // thread that ends a cycle of the tenant, which this one follows (the exits' AcqRel
        // countdown and the Release/Acquire of the sources' cursor).
        let run = self.run.load(Ordering::Relaxed);
        let j = t.run_at.load(Ordering::Relaxed);
        let plan = &t.plan;
        if plan.any_panicked() {
            t.captured.store(j, Ordering::Relaxed);
            let skipped = (run - j - 1) * plan.n_units();
            if skipped > 0 {
                // AcqRel, as every subtraction (module protocol). The count stays above zero:
                // it holds this thread's units not yet subtracted.
                self.remaining.fetch_sub(skipped, Ordering::AcqRel);
            }
            return;
        }
        // SAFETY: every unit of the tenant's cycle `j` has run (its exits' countdown reached
        // zero here) and its next cycle is not yet published.
        unsafe { t.capture_cycle(j) };
        // Relaxed: read after the run's end (units-left protocol).
        t.captured.store(j + 1, Ordering::Relaxed);
        if j + 1 < run {
            t.run_at.store(j + 1, Ordering::Relaxed);
            t.exits_left.store(t.exits, Ordering::Relaxed);
            let m = self.slot_of[k].load(Ordering::Relaxed);
            let sources = plan.unit_sources().len() as u64;
            // Release: a claim of the next cycle (Acquire) sees this cycle's writes, the
            // reset counters and the countdown above.
            self.groups[t.group].cursors[m].store(sources << 32, Ordering::Release);
        }
    }

    /// Runs work item `item` on thread `w`; returns a ready successor to run next, if any
    /// (the others are pushed on `w`'s deque). The caller counts the unit as run.
    #[inline]
    fn run_item(&self, w: usize, acct: &mut Account, item: u32) -> Option<u32> {
        let k = (item >> UNIT_BITS) as usize;
        let u = (item & ((1 << UNIT_BITS) - 1)) as usize;
        // SAFETY: `item` comes from a claim or a deque of this cycle (module protocol).
        let t = unsafe { self.tenant(k) };
        let plan = &t.plan;
        let start = if self.timing { now() } else { 0 };
        // SAFETY: the unit is ready: every predecessor unit brought its counter to zero
        // after running (AcqRel decrements, so their writes happen-before), or it is a source
        // claimed once; each item is taken by exactly one thread (claim, pop or steal); the
        // plan is held by `&mut` by the calling thread for the whole cycle, so no output
        // reference is alive.
        unsafe { plan.run_unit(u) };
        self.account(acct, k, start);
        if plan.unit_successors(u).is_empty() && self.run.load(Ordering::Relaxed) > 1 {
            // AcqRel: the thread that ends the countdown sees every exit's writes (and so
            // every unit's of the cycle).
            if t.exits_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.end_tenant_cycle(k, t);
            }
        }
        let mut next = None;
        for (&s, &slot) in plan.unit_successors(u).iter().zip(plan.unit_succ_slots(u)) {
            let mut c = slot as usize;
            loop {
                // AcqRel: the last decrement sees every predecessor's writes (Acquire of
                // their Release decrements) and publishes ours.
                if t.counts[c].fetch_sub(1, Ordering::AcqRel) != 1 {
                    break;
                }
                // Every decrement of this cycle on `c` is done: ready it for the next.
                t.counts[c].store(plan.slot_initial(c), Ordering::Relaxed);
                let parent = plan.slot_parent(c);
                if parent == NO_SLOT {
                    let ready = ((k as u32) << UNIT_BITS) | s;
                    match next {
                        None => next = Some(ready),
                        Some(_) => self.deques[w].push(ready),
                    }
                    break;
                }
                c = parent as usize;
            }
        }
        next
    }

    /// Finds work for thread `w` of group `g`: its own deque, then a source, then a steal.
    #[inline]
    fn find(&self, w: usize, g: usize) -> Option<u32> {
        if let Some(i) = self.deques[w].pop() {
            return Some(i);
        }
        if let Some(i) = self.claim_source(w, g) {
            return Some(i);
        }
        let n = self.deques.len();
        for d in 1..n {
            let v = (w + d) % n;
            if self.thread_group[v].load(Ordering::Relaxed) != g {
                continue;
            }
            loop {
                match self.deques[v].steal() {
                    Steal::Success(i) => return Some(i),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
        }
        None
    }

    /// Thread `w`'s part of a cycle: runs work until no unit is left.
    fn cycle(&self, w: usize) {
        let mut idle = 0u32;
        let mut ran = 0usize;
        let mut acct = Account {
            tenant: usize::MAX,
            ticks: 0,
        };
        // An entry this thread handed over on request, left to the asker until a tick.
        let mut handed: Option<(usize, u64)> = None;
        loop {
            // Read afresh each time: a thread still looking when the next cycle starts
            // must serve the group it has in that cycle, or its group could wait forever.
            let g = self.thread_group[w].load(Ordering::Relaxed);
            let skip = handed.and_then(|(p, until)| (now() < until).then_some(p));
            if skip.is_none() {
                handed = None;
            }
            if let Some(c) = self.claim_whole(w, g, skip) {
                idle = 0;
                ran += match c {
                    Claim::Once(k) => self.run_whole(&mut acct, k),
                    c => {
                        let (units, h) = self.run_whole_cycles(&mut acct, c);
                        handed = h;
                        units
                    }
                };
                continue;
            }
            if let Some(mut item) = self.find(w, g) {
                idle = 0;
                ran += 1;
                while let Some(next) = self.run_item(w, &mut acct, item) {
                    item = next;
                    ran += 1;
                }
                continue;
            }
            if ran > 0 {
                self.flush(&mut acct);
                // AcqRel: see the module protocol (the calling thread's Acquire load of
                // zero sees every unit's writes: the subtractions form one release sequence).
                self.remaining.fetch_sub(ran, Ordering::AcqRel);
                ran = 0;
            }
            // Acquire: see the module protocol.
            if self.remaining.load(Ordering::Acquire) == 0 {
                return;
            }
            idle += 1;
            if self.oversubscribed && idle >= 64 {
                // Let a thread we wait for run (the machine has fewer cores than threads).
                fugue_sync::yield_now();
            } else {
                // Back off before looking again: a thread that polls the other threads'
                // deques and cursors without pause takes their cache lines away from their
                // owners at every look, and slows the units they run. (Under loom, one
                // hint: a yield to the model's other threads.)
                let spins = if cfg!(loom) {
                    1
                } else {
                    1u32 << idle.min(IDLE_BACKOFF_SHIFT)
                };
                for _ in 0..spins {
                    fugue_sync::spin_hint();
                }
            }
        }
    }

    /// Publishes a cycle of `total` units to the claims (the calling thread, after the tenant
    /// table and the groups' members are stored): the units left, then each group's split
    /// between tenants whole and in parts (`grain`), the source cursors of those in parts and
    /// the word of those whole, numbered `cycle` (module protocol).
    ///
    /// # Safety
    /// The tenant pointer of every group member stored for this cycle points to a tenant
    /// that the calling thread holds by `&mut` until the cycle ends.
    unsafe fn publish(&self, total: usize, grain: TenantGrain, cycle: u64) {
        // The units left first, before any claim of this cycle can be made: a worker still
        // looking since the last cycle (which ended when its count reached zero) may claim
        // a unit as soon as a cursor or a whole word of this cycle is published, run it and
        // subtract it; stored after, the count would erase that subtraction and never reach
        // zero (every thread would look for a unit that had already run).
        let late = fugue_sync::fault::active("units-left-after-publish");
        if !late {
            // Release: the claims' Acquire (of the cursors and words stored after) see it.
            self.remaining.store(total, Ordering::Release);
        }
        for g in self.groups.iter() {
            let whole = g.split_members(grain, self.run.load(Ordering::Relaxed));
            let n = g.n.load(Ordering::Relaxed);
            for m in 0..n {
                let k = g.members[m].load(Ordering::Relaxed) as usize;
                self.slot_of[k].store(m, Ordering::Relaxed);
                let p = self.tenants[k].load(Ordering::Relaxed);
                // SAFETY: a member's pointer of this cycle (the caller's contract).
                let sources = unsafe { &*p }.plan.unit_sources().len() as u64;
                // Release: publishes the tables to the claims of this cycle (module protocol).
                g.cursors[m].store(sources << 32, Ordering::Release);
            }
            // Slots the last cycle used and this one does not: no source.
            for c in g.cursors[n..g.used.load(Ordering::Relaxed).max(n)].iter() {
                c.store(0, Ordering::Relaxed);
            }
            g.used.store(n, Ordering::Relaxed);
            // Release: publishes the tables to the whole claims of this cycle.
            g.whole
                .store((cycle << 16) | whole as u64, Ordering::Release);
        }
        if late {
            // Broken on purpose (loom): the count stored after the claims can start.
            self.remaining.store(total, Ordering::Release);
        }
    }
}

/// Runs one cycle of `plan` on this thread, in order.
///
/// # Safety
/// As [`Plan::run_all_tasks`]: no other thread runs any of its tasks meanwhile, and no
/// reference to its outputs is alive.
#[inline]
unsafe fn run_plan(plan: &Plan) {
    // SAFETY: the caller's contract.
    unsafe {
        if plan.pipeline() > 1 {
            plan.run_all_units();
        } else {
            plan.run_all_tasks();
        }
    }
}

impl Work for MultiState {
    fn work(&self, worker: usize) {
        self.cycle(worker);
    }
}

/// One pool of threads that runs many plans per cycle (see the module's documentation).
pub struct SharedPool {
    pool: Option<Pool<MultiState>>,
    /// The state, when the pool has no workers (one thread).
    alone: Option<MultiState>,
    unit_capacity: usize,
    /// Cycles run (the number of the last one; see [`Group::whole`]).
    cycle: u64,
    /// How groups of several threads run their tenants.
    grain: TenantGrain,
    /// With [`TenantGrain::Auto`]: the measurements that choose the grain of each cycle.
    tuner: GrainTuner,
}

impl std::fmt::Debug for SharedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedPool")
            .field("threads", &self.threads())
            .field("unit_capacity", &self.unit_capacity)
            .finish()
    }
}

impl SharedPool {
    /// A pool of `threads` threads (the calling one included) for cycles of at most
    /// `unit_capacity` units in all tenants together. Accounts each tenant's busy time when
    /// `timing` (two clock reads per unit). Control thread; allocates and starts the workers;
    /// fails when the system refuses a worker thread.
    pub fn new(
        threads: usize,
        unit_capacity: usize,
        timing: bool,
        opts: &ExecOptions,
    ) -> Result<Self, StartError> {
        // The threads' deques and counters on cache lines of their own (`crate::lines`).
        crate::lines::apart(|| Self::start(threads, unit_capacity, timing, opts))
    }

    /// [`SharedPool::new`]'s work.
    fn start(
        threads: usize,
        unit_capacity: usize,
        timing: bool,
        opts: &ExecOptions,
    ) -> Result<Self, StartError> {
        let threads = threads.max(1);
        let opts = opts.adapted_to(threads);
        let state = MultiState {
            deques: (0..threads)
                .map(|_| Deque::with_capacity(unit_capacity.max(2)))
                .collect(),
            tenants: (0..MAX_TENANTS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            groups: (0..threads)
                .map(|_| Group {
                    cursors: crate::runtime::padded_zeros(MAX_TENANTS),
                    used: AtomicUsize::new(0),
                    whole: CachePadded::new(AtomicU64::new(0)),
                    whole_list: (0..MAX_TENANTS).map(|_| AtomicU32::new(0)).collect(),
                    whole_claim: crate::runtime::padded_zeros(MAX_TENANTS),
                    whole_ask: crate::runtime::padded_zeros(MAX_TENANTS),
                    whole_at: crate::runtime::padded_zeros(MAX_TENANTS),
                    threads: AtomicUsize::new(0),
                    n: AtomicUsize::new(0),
                    members: (0..MAX_TENANTS).map(|_| AtomicU32::new(0)).collect(),
                })
                .collect(),
            thread_group: (0..threads).map(|_| AtomicUsize::new(0)).collect(),
            thread_rank: (0..threads).map(AtomicUsize::new).collect(),
            remaining: CachePadded::new(AtomicUsize::new(0)),
            run: AtomicUsize::new(1),
            slot_of: (0..MAX_TENANTS).map(|_| AtomicUsize::new(0)).collect(),
            timing,
            oversubscribed: threads > crate::placement::available_cores(),
            handovers: CachePadded::new(AtomicU64::new(0)),
        };
        state.groups[0].threads.store(threads, Ordering::Relaxed);
        let (pool, alone) = if threads == 1 {
            (None, Some(state))
        } else {
            (Some(Pool::new(threads, state, &opts)?), None)
        };
        Ok(SharedPool {
            pool,
            alone,
            unit_capacity,
            cycle: 0,
            grain: TenantGrain::default(),
            tuner: GrainTuner::default(),
        })
    }

    /// Sets how groups of several threads run their tenants (between cycles).
    pub fn set_grain(&mut self, grain: TenantGrain) {
        self.grain = grain;
        self.tuner.restart();
    }

    /// How groups of several threads run their tenants, as set.
    pub fn grain(&self) -> TenantGrain {
        self.grain
    }

    /// Loom model support: makes group 0 a group of `threads` threads (ranks 0, 1, ...)
    /// whose whole list is `tenants`.
    #[cfg(loom)]
    pub(crate) fn loom_whole_setup(&self, threads: usize, tenants: &[u32]) {
        let s = self.state();
        s.groups[0].threads.store(threads, Ordering::Relaxed);
        for (k, &t) in tenants.iter().enumerate() {
            s.groups[0].whole_list[k].store(t, Ordering::Relaxed);
        }
    }

    /// Loom model support: publishes cycle `cycle` with `n` whole entries (Release, as
    /// [`SharedPool::run_cycle`] does).
    #[cfg(loom)]
    pub(crate) fn loom_whole_publish(&self, cycle: u64, n: usize) {
        self.state().groups[0]
            .whole
            .store((cycle << 16) | n as u64, Ordering::Release);
    }

    /// Loom model support: what the thread of rank `w` claims until no whole entry is left.
    #[cfg(loom)]
    pub(crate) fn loom_whole_claim_all(&self, w: usize) -> Vec<usize> {
        let s = self.state();
        std::iter::from_fn(|| s.claim_whole_ranked(w, 0)).collect()
    }

    /// Loom model support: the thread of rank `w` in group 0 claims the cycles of a run of
    /// `run` cycles (published by [`SharedPool::loom_whole_publish`]) until none is free,
    /// "running" cycle `j` of entry `p` by checking that `state[p]` holds `j` and writing
    /// `j + 1` (a cell loom tracks: a cycle that does not follow the entry's previous one is
    /// a data race), keeping or handing back each entry as the pool does. Returns the
    /// `(entry, cycle)` pairs it ran.
    #[cfg(loom)]
    pub(crate) fn loom_cycle_claims(
        &self,
        w: usize,
        run: usize,
        state: &[loom::cell::UnsafeCell<usize>],
        ask: Option<usize>,
    ) -> Vec<(usize, usize)> {
        let s = self.state();
        s.run.store(run, Ordering::Relaxed);
        let mut got = Vec::new();
        let mut ask = ask;
        while let Some(c) = s.claim_whole_by_rank(w, 0, None) {
            let Claim::Cycles {
                mut p,
                mut j,
                cur,
                n,
                ..
            } = c
            else {
                panic!("a run of one cycle");
            };
            let mut watch = Watch::default();
            // Asks for entry `q` once, as a thread that saw it lag would.
            if let Some(q) = ask.filter(|&q| q != p) {
                s.groups[0].whole_ask[q].store(cur, Ordering::Relaxed);
                watch.asked = Some((q, s.groups[0].whole_claim[q].load(Ordering::Relaxed)));
                ask = None;
            }
            loop {
                state[p].with_mut(|v| {
                    // SAFETY: loom's cell; the model checks the access.
                    let v = unsafe { &mut *v };
                    assert_eq!(*v, j, "entry {p}: cycle {j} after cycle {}", *v);
                    *v = j + 1;
                });
                got.push((p, j));
                j += 1;
                match s.keep_or_hand_back(0, p, cur, n, j, run, w, &mut watch) {
                    Next::Keep => {}
                    Next::Left | Next::Asked => break,
                    Next::Switch { q, jq, .. } => (p, j) = (q, jq),
                }
            }
        }
        got
    }

    /// Loom model support: makes `tenants` (table indices) this cycle's members of group 0,
    /// to be published whole ([`SharedPool::loom_publish_whole`]).
    #[cfg(loom)]
    pub(crate) fn loom_members(&self, tenants: &[u32]) {
        let g = &self.state().groups[0];
        for (m, &k) in tenants.iter().enumerate() {
            g.members[m].store(k, Ordering::Relaxed);
        }
        g.n.store(tenants.len(), Ordering::Relaxed);
    }

    /// Loom model support: publishes cycle `cycle` of `total` units, group 0's members run
    /// whole, by the code [`SharedPool::run_cycle`] runs.
    #[cfg(loom)]
    pub(crate) fn loom_publish_whole(&self, cycle: u64, total: usize) {
        // SAFETY: the members are all run whole: no tenant pointer is followed.
        unsafe { self.state().publish(total, TenantGrain::Whole, cycle) };
    }

    /// Loom model support: one look of a thread of rank `w` in group 0, as
    /// [`MultiState::cycle`] makes it: claims whole entries until none is left, then
    /// subtracts them from the units left. Returns how many it claimed.
    #[cfg(loom)]
    pub(crate) fn loom_look(&self, w: usize) -> usize {
        let s = self.state();
        let ran = std::iter::from_fn(|| s.claim_whole_ranked(w, 0)).count();
        if ran > 0 {
            s.remaining.fetch_sub(ran, Ordering::AcqRel);
        }
        ran
    }

    /// Loom model support: the units left.
    #[cfg(loom)]
    pub(crate) fn loom_units_left(&self) -> usize {
        self.state().remaining.load(Ordering::Acquire)
    }

    /// Threads, the calling one included.
    pub fn threads(&self) -> usize {
        self.state().deques.len()
    }

    /// Units a cycle may hold at most (all tenants together).
    pub fn unit_capacity(&self) -> usize {
        self.unit_capacity
    }

    /// How many times, in runs of several cycles, a thread that fell behind (slower, or
    /// taken off its core) handed a graph it ran whole to a thread ahead that asked for it,
    /// since the pool started. Read between runs.
    pub fn handovers(&self) -> u64 {
        // Relaxed: a count; the caller holds the pool between runs.
        self.state().handovers.load(Ordering::Relaxed)
    }

    /// Problems met placing the workers (pinning or priority refused), said once.
    pub fn warnings(&self) -> &[String] {
        self.pool.as_ref().map_or(&[], |p| &p.warnings)
    }

    fn state(&self) -> &MultiState {
        match (&self.pool, &self.alone) {
            (Some(p), _) => p.work(),
            (None, Some(s)) => s,
            (None, None) => unreachable!("a pool has its state"),
        }
    }

    /// Splits the threads into groups: thread `w` runs only tenants of group `groups[w]`
    /// ([`Tenant::set_group`]). Between cycles. Every group that a tenant names must have a
    /// thread, and thread 0 (the calling one) waits for all groups anyway.
    ///
    /// # Panics
    /// If `groups` does not have one entry per thread, or names a group past the threads.
    pub fn set_partition(&mut self, groups: &[usize]) {
        self.tuner.restart();
        let s = self.state();
        assert_eq!(groups.len(), s.deques.len(), "one group per thread");
        for group in s.groups.iter() {
            group.threads.store(0, Ordering::Relaxed);
        }
        for (w, &g) in groups.iter().enumerate() {
            assert!(g < s.groups.len(), "a group past the threads");
            s.thread_group[w].store(g, Ordering::Relaxed);
            let rank = s.groups[g].threads.load(Ordering::Relaxed);
            s.thread_rank[w].store(rank, Ordering::Relaxed);
            s.groups[g].threads.store(rank + 1, Ordering::Relaxed);
        }
    }

    /// Runs one cycle of every tenant of `tenants`, in parallel, and returns when all are
    /// done. Never allocates, locks or blocks.
    ///
    /// # Panics
    /// With more than [`MAX_TENANTS`] tenants, more units than the pool's capacity, or a
    /// tenant of a group that has no thread.
    pub fn run_cycle<T: AsMut<Tenant>>(&mut self, tenants: &mut [T]) {
        self.run(tenants, 1);
    }

    /// Runs up to `cycles` cycles of every tenant of `tenants` and returns how many ran.
    ///
    /// More than one only when every tenant has room for them ([`Tenant::set_batch`]). Then
    /// the threads meet once per run, not once per cycle: the cycles of a tenant run whole
    /// are claimed one by one, each thread's home tenants furthest behind first, and a
    /// thread keeps its tenant for
    /// stretches of cycles; a tenant run in parts opens its next cycle as soon
    /// as its own cycle is done (the thread that runs its last exit unit publishes its
    /// sources again), while the others may still be in an earlier cycle. So a thread done
    /// early goes on with the next cycles instead of waiting, and a cycle a core took longer
    /// over is made up by the next ones. The outputs of cycle `j` are
    /// [`Tenant::captured_output`]`(j, _)`, not the plan's. With one, the outputs are the
    /// plan's, as after [`SharedPool::run_cycle`]. Nothing can be changed between the cycles
    /// of a run (parameters, tenants): it is for offline runs. Under [`TenantGrain::Auto`] a
    /// run stops where the tuner would change grain, and counts as that many cycles of its
    /// mean duration, unless every group of several threads has at least as many tenants as
    /// threads: then it runs them whole ([`TenantGrain::Balanced`]), unmeasured. Never
    /// allocates, locks or blocks.
    ///
    /// # Panics
    /// As [`SharedPool::run_cycle`].
    pub fn run_cycles<T: AsMut<Tenant>>(&mut self, tenants: &mut [T], cycles: usize) -> usize {
        self.run(tenants, cycles.max(1))
    }

    /// [`SharedPool::run_cycles`].
    fn run<T: AsMut<Tenant>>(&mut self, tenants: &mut [T], cycles: usize) -> usize {
        assert!(tenants.len() <= MAX_TENANTS, "too many tenants");
        let _flush = crate::denormals::FlushDenormals::new();
        self.cycle += 1;
        let cycle = self.cycle;
        let s = self.state();
        let mut total = 0usize;
        let mut enabled = 0u64;
        let mut room = cycles;
        for g in s.groups.iter() {
            g.n.store(0, Ordering::Relaxed);
        }
        for (k, t) in tenants.iter_mut().enumerate() {
            let t: &mut Tenant = t.as_mut();
            if !t.enabled {
                continue;
            }
            total += t.plan.n_units();
            enabled += 1;
            room = room.min(t.batch);
            if t.plan.n_units() == 0 {
                // Nothing to run, and nothing the units left would count: not a member (an
                // entry held or claimed by no unit's count could outlive the run).
                continue;
            }
            if cycles > 1 {
                // Relaxed: published with the run.
                t.run_at.store(0, Ordering::Relaxed);
                t.exits_left.store(t.exits, Ordering::Relaxed);
                t.captured.store(0, Ordering::Relaxed);
            }
            let g = &s.groups[t.group];
            let m = g.n.load(Ordering::Relaxed);
            g.members[m].store(k as u32, Ordering::Relaxed);
            g.n.store(m + 1, Ordering::Relaxed);
            s.tenants[k].store(t as *mut Tenant, Ordering::Relaxed);
        }
        assert!(
            total <= self.unit_capacity,
            "more units than the pool holds"
        );
        if total == 0 {
            return 1;
        }
        let auto = self.grain == TenantGrain::Auto;
        // Under `auto`, a run of several cycles with at least as many tenants as threads in
        // every group of several threads runs them whole (`balanced`), unmeasured: a tenant
        // that a thread taken off its core holds back is then handed to a thread that is
        // ahead ([`MultiState::keep_or_hand_back`]), which the tuner's short measuring runs
        // cannot show (`docs/host.md`, "The grain").
        let whole_run = auto
            && room > 1
            && s.groups.iter().all(|g| {
                let t = g.threads.load(Ordering::Relaxed);
                t <= 1 || g.n.load(Ordering::Relaxed) >= t
            });
        let tuned = auto && !whole_run;
        let grain = if whole_run {
            TenantGrain::Balanced
        } else if tuned {
            // What the cycle runs on: a change of tenants starts a new measurement.
            self.tuner.grain(((total as u64) << 8) | enabled)
        } else {
            self.grain
        };
        if tuned {
            room = room.min(self.tuner.run_length());
        }
        let s = self.state();
        let run = room.max(1);
        if run > 1 {
            // A tenant with no units has every cycle of the run captured (silence: it has
            // no outputs).
            for t in tenants.iter_mut() {
                let t: &mut Tenant = t.as_mut();
                if t.enabled && t.plan.n_units() == 0 {
                    t.captured.store(run, Ordering::Relaxed);
                }
            }
        }
        // Release, and Acquire where a claim reads it after the run's word: the run's length
        // goes with the word it was published with.
        s.run.store(run, Ordering::Release);
        let started = if tuned { now() } else { 0 };
        // SAFETY: every member's tenant pointer was stored above from a `&mut Tenant` that
        // lives until this function returns, after the cycle.
        unsafe { s.publish(total * run, grain, cycle) };
        if let Some(p) = &self.pool {
            p.start_cycle();
        }
        s.cycle(0);
        // Nothing of the cycle is referenced past here: the workers only follow the tables
        // after a claim, and every source has been claimed. Each tenant's busy time is in its
        // own counter ([`Tenant::take_busy_ticks`]).
        if tuned {
            let mean = now().wrapping_sub(started) / run as u64;
            self.tuner.record_run(mean, run);
        }
        run
    }
}
