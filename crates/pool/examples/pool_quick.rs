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
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        })
        .collect()
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
    let want = |w: &str| only.as_deref().map_or(true, |o| o == w);
    println!("threads {threads}, runs {runs}, quicksort n {n}, tree depth {depth}");
    let rp = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let data = input(n);

    let time = |f: &mut dyn FnMut()| {
        let t0 = Instant::now();
        f();
        t0.elapsed()
    };

    // Baselines.
    let mut rayon_join = None;
    let mut rayon_spawn = None;
    let mut rayon_qs = None;
    if want("join-tree") {
        let t = (0..runs)
            .map(|_| time(&mut || assert_eq!(rp.install(|| tree_rayon(depth)), 1 << depth)))
            .collect();
        rayon_join = Some(report("join-tree", "rayon", t, None));
    }
    if want("spawn-tree") {
        let t = (0..runs)
            .map(|_| {
                time(&mut || {
                    let leaves = Leaves::new(threads);
                    rp.scope(|s| tree_spawn_rayon(s, depth, &leaves));
                    assert_eq!(leaves.total(), 1 << depth);
                })
            })
            .collect();
        rayon_spawn = Some(report("spawn-tree", "rayon", t, None));
    }
    if want("quicksort") {
        let t = (0..runs)
            .map(|_| {
                let mut v = data.clone();
                let d = time(&mut || qsort_serial(&mut v));
                check_sorted(&v);
                d
            })
            .collect();
        let serial = report("quicksort", "serial", t, None);
        let t = (0..runs)
            .map(|_| {
                let mut v = data.clone();
                let d = time(&mut || rp.install(|| qsort_rayon(&mut v)));
                check_sorted(&v);
                d
            })
            .collect();
        let r = report("quicksort", "rayon", t, None);
        println!(
            "{:<11} {:<21} speed-up over serial {:.2}",
            "",
            "rayon",
            serial.as_secs_f64() / r.as_secs_f64()
        );
        rayon_qs = Some((r, serial));
    }

    for p in policies {
        let pool = Pool::new(threads, p).unwrap();
        if want("join-tree") {
            let t = (0..runs)
                .map(|_| time(&mut || assert_eq!(pool.install(|| tree_join(depth)), 1 << depth)))
                .collect();
            report("join-tree", p.name(), t, rayon_join);
            if std::env::var_os("POOL_QUICK_STATS").is_some() {
                let _ = pool.stats();
                pool.install(|| tree_join(depth));
                println!("{:?}", pool.stats());
            }
        }
        if want("spawn-tree") {
            let t = (0..runs)
                .map(|_| {
                    time(&mut || {
                        let leaves = Leaves::new(threads);
                        pool.scope(|s| tree_spawn(s, depth, &leaves));
                        assert_eq!(leaves.total(), 1 << depth);
                    })
                })
                .collect();
            report("spawn-tree", p.name(), t, rayon_spawn);
            if std::env::var_os("POOL_QUICK_STATS").is_some() {
                let leaves = Leaves::new(threads);
                let ((), st) = pool.scope_with_stats(|s| tree_spawn(s, depth, &leaves));
                println!("{:?}", st.total);
            }
        }
        if want("quicksort") {
            let t = (0..runs)
                .map(|_| {
                    let mut v = data.clone();
                    let d = time(&mut || pool.install(|| qsort_pool(&mut v)));
                    check_sorted(&v);
                    d
                })
                .collect();
            if std::env::var_os("POOL_QUICK_STATS").is_some() {
                let mut v = data.clone();
                let _ = pool.stats();
                pool.install(|| qsort_pool(&mut v));
                println!("{:?}", pool.stats().total);
            }
            let (r, serial) = rayon_qs.unwrap();
            let m = report("quicksort", p.name(), t, Some(r));
            println!(
                "{:<11} {:<21} speed-up over serial {:.2}",
                "",
                p.name(),
                serial.as_secs_f64() / m.as_secs_f64()
            );
        }
    }
}
