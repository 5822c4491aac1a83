//! An exact branch-and-bound for schedules without duplication, with a time limit.
//!
//! # Search space
//! A node of the search tree is a partial schedule; a child adds one ready task on one
//! processor, **appended** after the processor's last task at its earliest start
//! `max(processor free, data ready)`. Every schedule can be left-shifted into one that this
//! generates, and the search only generates each such schedule in one order: the sequence of
//! `(start, task index)` pairs must increase (a child that would start before the last placed
//! task, or at the same time with a smaller index, is not generated), except that a task of
//! cost 0 lets the next one start at its own start with any index. Replaying an optimal
//! schedule in order of start, at one start its tasks of cost 0 first (in an order their
//! processors and dependencies allow: two tasks of one processor, or a task and its
//! successor, start at one time only when the first costs 0), then the others by index,
//! until nothing moves, gives an optimal schedule with that property, so the restriction
//! loses no optimum. (Without that exception, a task of cost 0 that must precede a task of
//! lower index on its processor, both starting at one time, could only go to another
//! processor, and a schedule longer than the optimum was proven optimal.)
//!
//! Processor symmetry: of the processors that run nothing yet, only the first is tried;
//! without communication costs, of processors free at the same time, only the first is tried
//! (they are then interchangeable).
//!
//! # Bounds
//! At each node, the makespan of every completion is at least:
//! - the latest finish so far;
//! - the load bound `(sum over processors of max(free time, last start) + remaining work) / P`
//!   (every later task starts after the last start, on a processor after it is free);
//! - the path bound: `max over unscheduled t of est(t) + SL(t)`, where SL is the static level
//!   and `est(t)` is a lower bound on `t`'s start: at least the last start and the earliest
//!   processor free time, after each unscheduled predecessor's `est + cost`, and after each
//!   scheduled predecessor `q`'s `min(free time of q's processor, finish(q) + comm)`;
//! - the head-body-tail (energy) bound: the work of the tasks whose
//!   earliest start is at least `θ` fits between the processors' free times (raised to `θ`)
//!   and the makespan minus the smallest remaining path after those tasks.
//!
//! A transposition table cuts a partial schedule whose future was already searched: same
//! placed tasks, same processor free times, same data-ready times of the unplaced tasks, and
//! a canonical floor no later (keys are 128-bit hashes; the table is emptied when it holds 4
//! million states, about 200 MB).
//!
//! When all costs are integers, bounds are rounded up. A subtree is cut when its bound cannot
//! beat the incumbent, which starts as the shortest schedule of the non-duplicating heuristics
//! (HLFET, ETF, random, and CPFD when its schedule has no duplicate), then improved by up to
//! 20,000 list-scheduling runs with randomly perturbed static levels (seeded; at most a tenth of
//! the time limit). The search stops as soon
//! as the incumbent meets the root bound. Children are tried by earliest start, then higher
//! static level (as ETF). To find good schedules early, the first 30 % of the time limit goes
//! to limited discrepancy passes (pass `k` lets the path deviate from that order by at most `k`
//! ranks in total; the transposition table is not used there, since these passes do not search
//! every subtree fully), then the full search runs.
//!
//! The result is optimal among schedules without duplication; a duplicating schedule
//! ([`crate::cpfd()`]) may be shorter when communication costs are not zero.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use fugue_graph::{analysis, NodeId, TaskGraph};

use crate::list;
use crate::metrics;
use crate::schedule::{le, lt, Schedule, Slot};

/// What the exact search found.
#[derive(Clone, Debug)]
pub struct OptimalOutcome {
    /// The best schedule found (no duplication).
    pub schedule: Schedule,
    /// Whether it is proven optimal (the search finished, or met the lower bound).
    pub proven: bool,
    /// A proven lower bound on the optimal makespan (equal to the makespan when proven).
    pub lower_bound: f64,
    /// Search-tree nodes visited.
    pub nodes: u64,
    /// Time spent searching.
    pub elapsed: Duration,
}

/// Finds an optimal schedule of `g` on `p` processors without duplication, or the best one
/// within `time_limit`, starting from the best non-duplicating heuristic's schedule.
pub fn optimal(g: &TaskGraph, p: usize, time_limit: Duration) -> OptimalOutcome {
    let t0 = Instant::now();
    let (incumbent, _) = crate::best::best_without_duplication_within(
        g,
        p,
        0,
        crate::Deadline::after(time_limit / 2),
    );
    optimal_from(g, p, time_limit.saturating_sub(t0.elapsed()), incumbent)
}

/// Like [`optimal`] with a given incumbent, which must be a valid schedule of `g` on at most
/// `p` processors without duplicates (otherwise HLFET's schedule is used instead).
///
/// The depth-first search goes one level deeper per task placed: on a large graph it runs on
/// a thread whose stack holds [`STACK_PER_TASK`] bytes per task, so that a long time limit
/// cannot overflow the caller's stack.
pub fn optimal_from(
    g: &TaskGraph,
    p: usize,
    time_limit: Duration,
    incumbent: Schedule,
) -> OptimalOutcome {
    if g.len() <= DEEP_SEARCH {
        return search(g, p, time_limit, incumbent);
    }
    let t0 = Instant::now();
    let stack = (1 << 20) + g.len().saturating_mul(STACK_PER_TASK);
    std::thread::scope(|scope| {
        let incumbent = incumbent.clone();
        let h = std::thread::Builder::new()
            .name("fugue-optimal".into())
            .stack_size(stack)
            .spawn_scoped(scope, move || search(g, p, time_limit, incumbent))
            .ok()?;
        Some(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
    // No thread (no memory for its stack): the incumbent, unproven.
    .unwrap_or_else(|| OptimalOutcome {
        lower_bound: metrics::lower_bound(g, p.max(1)),
        schedule: incumbent,
        proven: false,
        nodes: 0,
        elapsed: t0.elapsed(),
    })
}

/// Seconds per step of a search node's bound (`n p log2 p` steps), an upper estimate: the
/// root bound of 200,000 tasks on 4,096 processors took 3.7 s on the 2-core machine, 0.37 ns
/// a step.
const BOUND_STEP_SECONDS: f64 = 1e-9;

/// Tasks up to which the search runs on the caller's stack.
const DEEP_SEARCH: usize = 2_000;

/// Stack bytes per task of a search on its own thread (one search level per task placed).
pub const STACK_PER_TASK: usize = 2048;

/// [`optimal_from`] on the calling thread.
fn search(g: &TaskGraph, p: usize, time_limit: Duration, incumbent: Schedule) -> OptimalOutcome {
    let t0 = Instant::now();
    let p = p.max(1);
    let incumbent = if incumbent.has_duplicates()
        || incumbent.num_processors() > p
        || crate::verify(g, &incumbent).is_err()
    {
        crate::hlfet(g, p)
    } else {
        incumbent
    };
    let n = g.len();
    let mut root_lb0 = metrics::lower_bound(g, p);
    let integral0 =
        g.nodes().iter().all(|x| is_int(x.cost)) && g.edges().iter().all(|e| is_int(e.comm));
    if integral0 {
        root_lb0 = (root_lb0 - 1e-9).ceil();
    }
    let far = t0 + Duration::from_secs(365 * 24 * 3600);
    let deadline = t0.checked_add(time_limit).unwrap_or(far);
    let incumbent = multi_start(
        g,
        p,
        incumbent,
        root_lb0,
        t0.checked_add(time_limit / 10).unwrap_or(far),
    );
    // The incumbent meets the graph's lower bound (a line of tasks, or a graph as wide as
    // the processors): proven with no search. Else, a search node's bound costs about
    // `n p log p` steps (every task's head against every processor's load): when the time left
    // cannot pay for one (a graph of 200,000 tasks on 4,096 processors: 3.7 s), the incumbent
    // is kept, unproven, rather than the time limit passed several times over.
    let proven_now = le(incumbent.makespan(), root_lb0);
    let one_bound = Duration::try_from_secs_f64(
        n as f64 * p as f64 * (p as f64).log2().max(1.0) * BOUND_STEP_SECONDS,
    )
    .unwrap_or(Duration::MAX);
    if proven_now || t0.elapsed().saturating_add(one_bound) > time_limit {
        return OptimalOutcome {
            lower_bound: if proven_now {
                incumbent.makespan()
            } else {
                root_lb0
            },
            schedule: incumbent,
            proven: proven_now,
            nodes: 0,
            elapsed: t0.elapsed(),
        };
    }
    let integral =
        g.nodes().iter().all(|x| is_int(x.cost)) && g.edges().iter().all(|e| is_int(e.comm));
    let zero_comm = g.edges().iter().all(|e| e.comm == 0.0);
    let mut bb = Bb {
        g,
        p,
        cost: g.costs(),
        sl: analysis::static_levels(g),
        integral,
        zero_comm,
        proc_of: vec![usize::MAX; n],
        start: vec![0.0; n],
        finish: vec![0.0; n],
        missing: (0..n).map(|t| g.preds(t).len()).collect(),
        done: vec![false; n],
        avail: vec![0.0; p],
        used: vec![0; p],
        rem_work: analysis::total_work(g),
        n_done: 0,
        floor: (f64::NEG_INFINITY, 0),
        max_finish: 0.0,
        best: incumbent.makespan(),
        best_assign: None,
        nodes: 0,
        deadline,
        // A node of the search costs about `n x P`: on large graphs, look at the clock at
        // every node.
        check_mask: if n >= 256 { 0 } else { 1023 },
        timed_out: false,
        est: vec![0.0; n],
        items: Vec::with_capacity(n),
        fill_buf: Vec::with_capacity(p),
        seen: HashMap::new(),
        skipped: false,
    };
    let mut root_lb = metrics::lower_bound(g, p).max(bb.bound());
    if integral {
        root_lb = (root_lb - 1e-9).ceil();
    }
    // Proven when a schedule meets the lower bound or a search that left nothing out ran to
    // its end; a search cut short by the time limit proves nothing.
    let mut proven = bb.cut(root_lb);
    if !proven {
        // Limited discrepancy passes first (good schedules early), then the full search.
        let lds_end = t0.checked_add(time_limit.mul_f64(LDS_SHARE)).unwrap_or(far);
        bb.deadline = lds_end.min(deadline);
        for k in 0..n.max(1) {
            bb.skipped = false;
            bb.dfs(k);
            if bb.timed_out {
                break;
            }
            if bb.cut(root_lb) || !bb.skipped {
                // the bound is met, or nothing was left out: this pass was the full search
                proven = true;
                break;
            }
        }
        bb.timed_out = false;
        bb.deadline = deadline;
        if !proven && Instant::now() < deadline {
            bb.dfs(usize::MAX);
            proven = !bb.timed_out;
        }
        // A schedule found before time ran out that meets the bound is optimal all the same.
        proven |= bb.cut(root_lb);
    }
    let schedule = match &bb.best_assign {
        None => incumbent,
        Some(a) => {
            let mut s = Schedule::new(p);
            for (t, &(q, st)) in a.iter().enumerate() {
                s.processors[q].push(Slot {
                    task: t,
                    start: st,
                    finish: st + g.node(t).cost,
                });
            }
            s.sort();
            s
        }
    };
    OptimalOutcome {
        lower_bound: if proven { schedule.makespan() } else { root_lb },
        schedule,
        proven,
        nodes: bb.nodes,
        elapsed: t0.elapsed(),
    }
}

/// Improves the incumbent by list scheduling with noisy static levels (seeded, so the result
/// is reproducible): up to [`MULTI_START_RUNS`] runs, stopping at the lower bound or at
/// `deadline`.
fn multi_start(
    g: &TaskGraph,
    p: usize,
    mut best: Schedule,
    lb: f64,
    deadline: Instant,
) -> Schedule {
    use rand::{Rng, SeedableRng};
    let sl = analysis::static_levels(g);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5eed);
    let mut key: Vec<(f64, usize)> = Vec::with_capacity(g.len());
    let mut order: Vec<usize> = Vec::with_capacity(g.len());
    for i in 0..MULTI_START_RUNS {
        if le(best.makespan(), lb) || Instant::now() >= deadline {
            break;
        }
        let noise = [0.02, 0.05, 0.1, 0.2][i % 4];
        key.clear();
        key.extend((0..g.len()).map(|t| (sl[t] * (1.0 + noise * rng.gen::<f64>()), t)));
        key.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        order.clear();
        order.extend(key.iter().map(|k| k.1));
        let s = list::by_rank(g, p, &list::ranks(&order));
        if lt(s.makespan(), best.makespan()) {
            best = s;
        }
    }
    best
}

/// Most list-scheduling runs of the incumbent's improvement.
const MULTI_START_RUNS: usize = 20_000;

fn is_int(x: f64) -> bool {
    x.fract() == 0.0 && x.abs() < 1e12
}

struct Bb<'g> {
    g: &'g TaskGraph,
    p: usize,
    cost: Vec<f64>,
    sl: Vec<f64>,
    integral: bool,
    zero_comm: bool,
    proc_of: Vec<usize>,
    start: Vec<f64>,
    finish: Vec<f64>,
    missing: Vec<usize>,
    done: Vec<bool>,
    avail: Vec<f64>,
    used: Vec<usize>,
    rem_work: f64,
    n_done: usize,
    /// (start, task) of the last placed task: the canonical order's floor.
    floor: (f64, NodeId),
    max_finish: f64,
    best: f64,
    best_assign: Option<Vec<(usize, f64)>>,
    nodes: u64,
    deadline: Instant,
    /// The clock is read at the search nodes whose count has these bits clear.
    check_mask: u64,
    timed_out: bool,
    est: Vec<f64>,
    items: Vec<(f64, f64, f64)>,
    fill_buf: Vec<f64>,
    seen: HashMap<(u64, u64), (f64, NodeId)>,
    /// Whether a discrepancy-limited pass left a child out.
    skipped: bool,
}

/// Share of the time limit given to the limited discrepancy passes.
const LDS_SHARE: f64 = 0.3;

/// Most states the transposition table keeps (about 40 bytes each).
const TABLE_LIMIT: usize = 4_000_000;

/// Two independent 64-bit hashes (splitmix64 finalizer over a running state).
struct Hasher(u64, u64);

impl Hasher {
    fn new() -> Self {
        Hasher(0x9e37_79b9_7f4a_7c15, 0xd1b5_4a32_d192_ed03)
    }

    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn add(&mut self, x: u64) {
        self.0 = Self::mix(self.0 ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.1 = Self::mix(self.1.rotate_left(17) ^ x ^ 0x5851_f42d_4c95_7f2d);
    }

    fn finish(&self) -> (u64, u64) {
        (self.0, self.1)
    }
}

impl Bb<'_> {
    /// Whether a subtree whose makespan is at least `lb` cannot beat the incumbent.
    fn cut(&self, lb: f64) -> bool {
        if self.integral {
            (lb - 1e-9).ceil() > self.best - 0.5
        } else {
            le(self.best, lb)
        }
    }

    fn floor_time(&self) -> f64 {
        if self.n_done == 0 {
            0.0
        } else {
            self.floor.0
        }
    }

    /// What a task starting at the floor's time must exceed in `index + 1`: the last placed
    /// task's index + 1, or 0 (anything) before the first task and after a task of cost 0
    /// (one that ends at its start, within the tolerance that starts are compared with).
    fn floor_rank(&self) -> usize {
        let (start, t) = self.floor;
        if self.n_done == 0 || le(start + self.cost[t], start) {
            0
        } else {
            t + 1
        }
    }

    /// Lower bound on the makespan of every completion of the current partial schedule.
    fn bound(&mut self) -> f64 {
        let floor = self.floor_time();
        let min_avail = self.avail.iter().copied().fold(f64::INFINITY, f64::min);
        let base = floor.max(min_avail);
        let mut lb = self.max_finish;
        let load: f64 = self.avail.iter().map(|a| a.max(floor)).sum::<f64>() + self.rem_work;
        lb = lb.max(load / self.p as f64);
        for &t in self.g.topo_order() {
            if self.done[t] {
                continue;
            }
            let mut e = base;
            for &(q, c) in self.g.preds(t) {
                let v = if self.done[q] {
                    self.avail[self.proc_of[q]].min(self.finish[q] + c)
                } else {
                    self.est[q] + self.cost[q]
                };
                e = e.max(v);
            }
            self.est[t] = e;
            lb = lb.max(e + self.sl[t]);
        }
        lb.max(self.energy_bound())
    }

    /// The head-body-tail bound: for the unscheduled tasks whose earliest start (head) is at
    /// least `θ`, their work must fit on the processors between `max(free time, θ)` and
    /// `C - (their smallest tail)`, the tail being the static level minus the task's cost; and
    /// symmetrically for the tasks whose tail is at least `φ`, from their smallest head. The
    /// level `L` that the work fills is found by water-filling the processors' start times.
    fn energy_bound(&mut self) -> f64 {
        let mut items = std::mem::take(&mut self.items);
        items.clear();
        for t in 0..self.g.len() {
            if !self.done[t] {
                items.push((self.est[t], self.sl[t] - self.cost[t], self.cost[t]));
            }
        }
        let mut lb = 0.0f64;
        // By heads, descending: the set {head >= θ} grows.
        items.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (mut work, mut min_tail) = (0.0f64, f64::INFINITY);
        for i in 0..items.len() {
            work += items[i].2;
            min_tail = min_tail.min(items[i].1);
            if i + 1 < items.len() && items[i + 1].0 == items[i].0 {
                continue;
            }
            lb = lb.max(self.fill(items[i].0, work) + min_tail);
        }
        // By tails, descending.
        items.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (mut work, mut min_head) = (0.0f64, f64::INFINITY);
        for i in 0..items.len() {
            work += items[i].2;
            min_head = min_head.min(items[i].0);
            if i + 1 < items.len() && items[i + 1].1 == items[i].1 {
                continue;
            }
            lb = lb.max(self.fill(min_head, work) + items[i].1);
        }
        self.items = items;
        lb
    }

    /// The lowest level `L` such that the processors, each available from `max(free, theta)`,
    /// hold `work` below `L`.
    fn fill(&mut self, theta: f64, work: f64) -> f64 {
        let a = &mut self.fill_buf;
        a.clear();
        a.extend(self.avail.iter().map(|&x| x.max(theta)));
        a.sort_by(f64::total_cmp);
        // Raise the level over the k lowest processors until the work fits.
        let mut sum = 0.0f64;
        let mut level = a[0];
        for k in 0..a.len() {
            sum += a[k];
            let cand = (work + sum) / (k + 1) as f64;
            level = cand;
            if k + 1 == a.len() || cand <= a[k + 1] {
                break;
            }
        }
        level
    }

    fn apply(&mut self, t: NodeId, q: usize, s: f64) -> (f64, (f64, NodeId), f64) {
        let saved = (self.avail[q], self.floor, self.max_finish);
        let f = s + self.cost[t];
        self.done[t] = true;
        self.proc_of[t] = q;
        self.start[t] = s;
        self.finish[t] = f;
        self.avail[q] = f;
        self.used[q] += 1;
        self.rem_work -= self.cost[t];
        self.n_done += 1;
        self.floor = (s, t);
        self.max_finish = self.max_finish.max(f);
        for &(x, _) in self.g.succs(t) {
            self.missing[x] -= 1;
        }
        saved
    }

    fn undo(&mut self, t: NodeId, q: usize, saved: (f64, (f64, NodeId), f64)) {
        for &(x, _) in self.g.succs(t) {
            self.missing[x] += 1;
        }
        self.done[t] = false;
        self.proc_of[t] = usize::MAX;
        self.avail[q] = saved.0;
        self.used[q] -= 1;
        self.rem_work += self.cost[t];
        self.n_done -= 1;
        self.floor = saved.1;
        self.max_finish = saved.2;
    }

    /// The transposition table: whether a partial schedule with the same future (see
    /// [`Bb::state_key`]) and a floor no later than this one's was already searched, in which
    /// case this subtree holds nothing the other did not (records this state otherwise).
    fn seen_before(&mut self) -> bool {
        let key = self.state_key();
        // A floor no later and of no higher rank lets through every continuation that this
        // one does; so does one earlier by more than the tolerance of the children's test
        // (`lt`, `le` around the floor's time), whatever its rank.
        let floor = (self.floor_time(), self.floor_rank());
        match self.seen.get_mut(&key) {
            Some(old) => {
                let far = floor.0 - old.0 > 4.0 * crate::schedule::EPS * (1.0 + floor.0.abs());
                if old.0 <= floor.0 && (old.1 <= floor.1 || far) {
                    return true;
                }
                *old = floor;
                false
            }
            None => {
                if self.seen.len() >= TABLE_LIMIT {
                    // Full: start afresh (the search stays exact, recent states matter most).
                    self.seen.clear();
                }
                self.seen.insert(key, floor);
                false
            }
        }
    }

    /// A 128-bit hash of what the completions of the partial schedule depend on, the canonical
    /// floor aside: the set of placed tasks; the processors' free times (sorted when
    /// communication is free, since processors are then interchangeable); and, for every
    /// unplaced task, the data-ready times given by its placed predecessors (the latest finish
    /// among them without communication costs; otherwise each placed predecessor's processor
    /// and finish).
    fn state_key(&mut self) -> (u64, u64) {
        let mut h = Hasher::new();
        for t in 0..self.g.len() {
            if self.done[t] {
                h.add(t as u64);
            }
        }
        h.add(u64::MAX);
        let mut av = std::mem::take(&mut self.fill_buf);
        av.clear();
        av.extend_from_slice(&self.avail);
        if self.zero_comm {
            av.sort_by(f64::total_cmp);
        }
        for a in &av {
            h.add(a.to_bits());
        }
        self.fill_buf = av;
        h.add(u64::MAX);
        for t in 0..self.g.len() {
            if self.done[t] {
                continue;
            }
            if self.zero_comm {
                let mut r = f64::NEG_INFINITY;
                for &(q, _) in self.g.preds(t) {
                    if self.done[q] {
                        r = r.max(self.finish[q]);
                    }
                }
                if r > f64::NEG_INFINITY {
                    h.add(t as u64);
                    h.add(r.to_bits());
                }
            } else {
                for &(q, _) in self.g.preds(t) {
                    if self.done[q] {
                        h.add(t as u64);
                        h.add(q as u64);
                        h.add(self.proc_of[q] as u64);
                        h.add(self.finish[q].to_bits());
                    }
                }
            }
        }
        h.finish()
    }

    /// Depth-first search below the current partial schedule; `budget` limits the
    /// discrepancies (the `i`-th child in the branching order costs `i`), `usize::MAX` for none.
    fn dfs(&mut self, budget: usize) {
        self.nodes += 1;
        if self.nodes & self.check_mask == 0 && Instant::now() >= self.deadline {
            self.timed_out = true;
        }
        if self.timed_out {
            return;
        }
        let n = self.g.len();
        if self.n_done == n {
            if lt(self.max_finish, self.best) {
                self.best = self.max_finish;
                self.best_assign = Some((0..n).map(|t| (self.proc_of[t], self.start[t])).collect());
            }
            return;
        }
        let lb = self.bound();
        if self.cut(lb) {
            return;
        }
        // The table only holds fully searched states: not in discrepancy-limited passes.
        if budget == usize::MAX && self.seen_before() {
            return;
        }
        let first_empty = (0..self.p).find(|&q| self.used[q] == 0);
        let rank = self.floor_rank();
        let mut kids: Vec<(f64, NodeId, usize)> = Vec::new();
        for t in 0..n {
            if self.done[t] || self.missing[t] != 0 {
                continue;
            }
            for q in 0..self.p {
                if self.used[q] == 0 && Some(q) != first_empty {
                    continue;
                }
                if self.zero_comm && (0..q).any(|r| self.avail[r] == self.avail[q]) {
                    continue;
                }
                let mut dat = 0.0f64;
                for &(x, c) in self.g.preds(t) {
                    let a = if self.proc_of[x] == q {
                        self.finish[x]
                    } else {
                        self.finish[x] + c
                    };
                    dat = dat.max(a);
                }
                let s = dat.max(self.avail[q]);
                if self.n_done > 0 {
                    let f = self.floor.0;
                    if lt(s, f) || (le(s, f) && t + 1 < rank) {
                        continue;
                    }
                }
                if self.cut(s + self.sl[t]) {
                    continue;
                }
                kids.push((s, t, q));
            }
        }
        kids.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(self.sl[b.1].total_cmp(&self.sl[a.1]))
                .then(a.1.cmp(&b.1))
                .then(a.2.cmp(&b.2))
        });
        for (i, (s, t, q)) in kids.into_iter().enumerate() {
            if i > budget {
                self.skipped = true;
                break;
            }
            if self.cut(s + self.sl[t]) {
                continue;
            }
            let saved = self.apply(t, q, s);
            self.dfs(if budget == usize::MAX {
                budget
            } else {
                budget - i
            });
            self.undo(t, q, saved);
            if self.timed_out {
                return;
            }
        }
    }
}
