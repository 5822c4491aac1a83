//! A quick measurement of the pool's policies against rayon at 2 threads (no criterion):
//! - `join-tree`: a binary tree of `join` of depth 20 (about a million leaves, no allocation);
//! - `spawn-tree`: the same tree with `Scope::spawn` (one boxed task per node; leaves counted
//!   in one padded slot per thread);
//! - `quicksort`: 10 million `u32` sorted with `join` below a 128-element serial cutoff,
//!   against the same program run serially.
//!
//! Every result is checked (leaf count, sortedness) before its time counts. Prints the median
//! and the spread of `--runs` runs (default 5) per workload and pool.
//!
//! `cargo run --release -p fugue-pool --example pool_quick -- [--threads N] [--runs R]
//! [--n ELEMENTS] [--depth D] [--policy NAME]`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fugue_pool::{Policy, Pool};

const CUTOFF: usize = 128;

fn tree_join(d: u32) -> usize {
    if d == 0 {
        return 1;
    }
    let (a, b) = fugue_pool::join(|| tree_join(d - 1), || tree_join(d - 1));
    a + b
}

fn tree_rayon(d: u32) -> usize {
    if d == 0 {
        return 1;
    }
    let (a, b) = rayon::join(|| tree_rayon(d - 1), || tree_rayon(d - 1));
    a + b
}

/// Leaf counts, one padded slot per worker thread (the count must not measure contention on
/// one shared counter).
struct Leaves(Vec<Slot>);

#[repr(align(128))]
struct Slot(AtomicUsize);

impl Leaves {
    fn new(threads: usize) -> Self {
        Leaves((0..threads).map(|_| Slot(AtomicUsize::new(0))).collect())
    }

    /// Counts a leaf in the slot of worker `i` (only that worker writes it).
    fn add(&self, i: Option<usize>) {
        let c = &self.0[i.expect("leaves run on workers")].0;
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    fn total(&self) -> usize {
        self.0.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

fn tree_spawn<'s>(s: &fugue_pool::Scope<'s>, d: u32, leaves: &'s Leaves) {
    if d == 0 {
        leaves.add(fugue_pool::current_thread_index());
        return;
    }
    s.spawn(move |s| tree_spawn(s, d - 1, leaves));
    s.spawn(move |s| tree_spawn(s, d - 1, leaves));
}

fn tree_spawn_rayon<'s>(s: &rayon::Scope<'s>, d: u32, leaves: &'s Leaves) {
    if d == 0 {
        leaves.add(rayon::current_thread_index());
        return;
    }
    s.spawn(move |s| tree_spawn_rayon(s, d - 1, leaves));
    s.spawn(move |s| tree_spawn_rayon(s, d - 1, leaves));
}

/// Lomuto partition around the middle element; returns the pivot's final index.
fn partition(v: &mut [u32]) -> usize {
    let n = v.len();
    v.swap(n / 2, n - 1);
    let p = v[n - 1];
    let mut i = 0;
    for j in 0..n - 1 {
        if v[j] < p {
            v.swap(i, j);
            i += 1;
        }
    }
    v.swap(i, n - 1);
    i
}

fn qsort_serial(v: &mut [u32]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let p = partition(v);
    let (l, r) = v.split_at_mut(p);
    qsort_serial(l);
    qsort_serial(&mut r[1..]);
}

fn qsort_pool(v: &mut [u32]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let p = partition(v);
    let (l, r) = v.split_at_mut(p);
    fugue_pool::join(|| qsort_pool(l), || qsort_pool(&mut r[1..]));
}

fn qsort_rayon(v: &mut [u32]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let p = partition(v);
    let (l, r) = v.split_at_mut(p);
    rayon::join(|| qsort_rayon(l), || qsort_rayon(&mut r[1..]));
}

fn input(n: usize) -> Vec<u32> {
    let mut rng = fugue_sync::Rng::new(0x2545_F491_4F6C_DD1D);
    (0..n).map(|_| (rng.next_u64() >> 32) as u32).collect()
}

fn check_sorted(v: &[u32]) {
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "not sorted");
}

fn median(mut t: Vec<Duration>) -> (Duration, Duration, Duration) {
    t.sort();
    (t[t.len() / 2], t[0], t[t.len() - 1])
}

fn report(workload: &str, pool: &str, t: Vec<Duration>, base: Option<Duration>) -> Duration {
    let (m, lo, hi) = median(t);
    let ratio = base.map_or(String::new(), |b| {
        format!("  ({:.2}x rayon)", m.as_secs_f64() / b.as_secs_f64())
    });
    println!(
        "{workload:<11} {pool:<21} median {:>9.2} ms  [min {:.2}, max {:.2}]{ratio}",
        m.as_secs_f64() * 1e3,
        lo.as_secs_f64() * 1e3,
        hi.as_secs_f64() * 1e3
    );
    m
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// One pool under test.
enum Runner {
    Rayon(rayon::ThreadPool),
    Fugue(Pool),
}

impl Runner {
    fn name(&self) -> &'static str {
        match self {
            Runner::Rayon(_) => "rayon",
            Runner::Fugue(p) => p.policy().name(),
        }
    }

    /// One timed run of `workload`, its result checked.
    fn run(&self, workload: &str, depth: u32, data: &[u32], threads: usize) -> Duration {
        let t0;
        match (workload, self) {
            ("join-tree", Runner::Rayon(rp)) => {
                t0 = Instant::now();
                assert_eq!(rp.install(|| tree_rayon(depth)), 1 << depth);
            }
            ("join-tree", Runner::Fugue(p)) => {
                t0 = Instant::now();
                assert_eq!(p.install(|| tree_join(depth)), 1 << depth);
            }
            ("spawn-tree", Runner::Rayon(rp)) => {
                let leaves = Leaves::new(threads);
                t0 = Instant::now();
                rp.scope(|s| tree_spawn_rayon(s, depth, &leaves));
                assert_eq!(leaves.total(), 1 << depth);
            }
            ("spawn-tree", Runner::Fugue(p)) => {
                let leaves = Leaves::new(threads);
                t0 = Instant::now();
                p.scope(|s| tree_spawn(s, depth, &leaves));
                assert_eq!(leaves.total(), 1 << depth);
            }
            ("quicksort", r) => {
                let mut v = data.to_vec();
                t0 = Instant::now();
                match r {
                    Runner::Rayon(rp) => rp.install(|| qsort_rayon(&mut v)),
                    Runner::Fugue(p) => p.install(|| qsort_pool(&mut v)),
                }
                let d = t0.elapsed();
                check_sorted(&v);
                return d;
            }
            _ => unreachable!("unknown workload {workload}"),
        }
        t0.elapsed()
    }
}

fn main() {
    let threads: usize = arg("--threads").map_or(2, |s| s.parse().unwrap());
    let runs: usize = arg("--runs").map_or(5, |s| s.parse().unwrap());
    let n: usize = arg("--n").map_or(10_000_000, |s| s.parse().unwrap());
    let depth: u32 = arg("--depth").map_or(20, |s| s.parse().unwrap());
    let policies: Vec<Policy> = match arg("--policy") {
        Some(p) => vec![p.parse().unwrap()],
        None => Policy::ALL.to_vec(),
    };
    let only = arg("--only");
    let workloads: Vec<&str> = ["join-tree", "spawn-tree", "quicksort"]
        .into_iter()
        .filter(|w| only.as_deref().is_none_or(|o| o == *w))
        .collect();
    println!(
        "threads {threads}, runs {runs} (interleaved: one run of every pool in turn), \
         quicksort n {n}, tree depth {depth}"
    );
    let data = input(n);
    let mut runners = vec![Runner::Rayon(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
    )];
    for p in policies {
        runners.push(Runner::Fugue(Pool::new(threads, p).unwrap()));
    }
    for w in &workloads {
        // times[0]: serial (quicksort only); times[1 + i]: runners[i].
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); runners.len() + 1];
        for _ in 0..runs {
            if *w == "quicksort" {
                let mut v = data.clone();
                let t0 = Instant::now();
                qsort_serial(&mut v);
                times[0].push(t0.elapsed());
                check_sorted(&v);
            }
            for (i, r) in runners.iter().enumerate() {
                times[i + 1].push(r.run(w, depth, &data, threads));
            }
        }
        let serial = (*w == "quicksort").then(|| report(w, "serial", times[0].clone(), None));
        let base = report(w, "rayon", times[1].clone(), None);
        if let Some(s) = serial {
            println!(
                "{:<11} {:<21} speed-up over serial {:.2}",
                "",
                "rayon",
                s.as_secs_f64() / base.as_secs_f64()
            );
        }
        for (i, r) in runners.iter().enumerate().skip(1) {
            let m = report(w, r.name(), times[i + 1].clone(), Some(base));
            if let Some(s) = serial {
                println!(
                    "{:<11} {:<21} speed-up over serial {:.2}",
                    "",
                    r.name(),
                    s.as_secs_f64() / m.as_secs_f64()
                );
            }
            if let (true, Runner::Fugue(p)) = (std::env::var_os("POOL_QUICK_STATS").is_some(), r) {
                let _ = p.stats();
                r.run(w, depth, &data, threads);
                println!("{:<11} {:<21} {:?}", "", "", p.stats().total);
            }
        }
    }
}
