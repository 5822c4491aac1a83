//! The pool's workloads, written once over [`Spawner`] so that the sequential program, fugue's
//! pool under each policy and rayon run the same code: quicksort (both halves spawned below a
//! serial cutoff), Mandelbrot (rows split in halves down to a band), Voronoi (per pixel in bands,
//! or split into four until the four corners agree or the block is small) and a spawn tree of
//! empty tasks.
//!
//! Each workload's result is checked against the sequential program's by the caller: the
//! images compare pixel for pixel, the sort for order and content, the tree by its leaf count.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// What a task can do in every runner: spawn another task into the same scope, and name the
/// thread it runs on (for per-thread counters).
pub trait Spawner<'s>: Sync {
    /// Queues `f` (the sequential runner calls it at once, depth first).
    fn spawn_task<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's;

    /// The index of the calling worker thread (0 for the sequential runner).
    fn thread_index(&self) -> usize;
}

impl<'s> Spawner<'s> for fugue_pool::Scope<'s> {
    #[inline]
    fn spawn_task<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's,
    {
        self.spawn(f);
    }

    #[inline]
    fn thread_index(&self) -> usize {
        fugue_pool::current_thread_index().unwrap_or(0)
    }
}

impl<'s> Spawner<'s> for rayon::Scope<'s> {
    #[inline]
    fn spawn_task<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's,
    {
        self.spawn(f);
    }

    #[inline]
    fn thread_index(&self) -> usize {
        rayon::current_thread_index().unwrap_or(0)
    }
}

/// The sequential runner: a spawn is a call.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inline;

impl<'s> Spawner<'s> for Inline {
    #[inline]
    fn spawn_task<F>(&self, f: F)
    where
        F: FnOnce(&Self) + Send + 's,
    {
        f(self);
    }

    #[inline]
    fn thread_index(&self) -> usize {
        0
    }
}

/// The generator of the benchmarks' inputs (quicksort's values, Voronoi's seeds): xorshift64,
/// kept apart from `fugue_sync::Rng` so that the inputs stay the same as in the recorded runs
/// of `bench-results/`, on every run and every machine.
#[derive(Clone, Debug)]
pub struct BenchInputRng(u64);

impl BenchInputRng {
    /// A generator from `seed` (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> BenchInputRng {
        BenchInputRng(if seed == 0 {
            0x2545_F491_4F6C_DD1D
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }
}

// ---------------------------------------------------------------------------------------------
// Quicksort

/// `n` pseudo-random `u32`s (the same for the same `n`).
pub fn quicksort_input(n: usize) -> Vec<u32> {
    let mut r = BenchInputRng::new(0x9E37_79B9_7F4A_7C15);
    (0..n).map(|_| (r.next_u64() >> 32) as u32).collect()
}

/// Lomuto partition around the median of three; returns the pivot's final index.
fn partition(v: &mut [u32]) -> usize {
    let n = v.len();
    let (a, b, c) = (0, n / 2, n - 1);
    let m = if (v[a] <= v[b]) == (v[b] <= v[c]) {
        b
    } else if (v[b] <= v[a]) == (v[a] <= v[c]) {
        a
    } else {
        c
    };
    v.swap(m, n - 1);
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

/// Sorts `v`: partitions, then spawns both halves; slices of at most `cutoff` elements are
/// sorted serially (insertion sort, as the report's program does).
pub fn quicksort<'s, S: Spawner<'s>>(s: &S, v: &'s mut [u32], cutoff: usize) {
    if v.len() <= cutoff.max(1) {
        insertion_sort(v);
        return;
    }
    let p = partition(v);
    let (left, right) = v.split_at_mut(p);
    let right = &mut right[1..];
    s.spawn_task(move |s| quicksort(s, left, cutoff));
    s.spawn_task(move |s| quicksort(s, right, cutoff));
}

fn insertion_sort(v: &mut [u32]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Whether `v` is sorted and equals `reference` (the input sorted by the standard library).
pub fn check_sorted(v: &[u32], reference: &[u32]) -> Result<(), String> {
    check_order(v)?;
    if v != reference {
        return Err("sorted, but not a permutation of the input".into());
    }
    Ok(())
}

/// Whether `v` is in non-decreasing order.
pub fn check_order(v: &[u32]) -> Result<(), String> {
    if let Some(i) = v.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!(
            "not sorted: element {} ({}) is greater than element {} ({})",
            i,
            v[i],
            i + 1,
            v[i + 1]
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Images

/// An image that tasks fill in parallel: one `u32` per pixel, row-major. Tasks write disjoint
/// pixels with relaxed stores (a plain store on the common targets); the scope's end orders
/// them before the image is read.
#[derive(Debug)]
pub struct Canvas {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    px: Vec<AtomicU32>,
}

impl Canvas {
    /// A `width` × `height` image of zeros.
    pub fn new(width: usize, height: usize) -> Canvas {
        Canvas {
            width,
            height,
            px: (0..width * height).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Sets pixel `(x, y)` (inside the image).
    #[inline]
    pub fn set(&self, x: usize, y: usize, v: u32) {
        self.px[y * self.width + x].store(v, Ordering::Relaxed);
    }

    /// The pixels, row-major.
    pub fn pixels(&self) -> Vec<u32> {
        self.px.iter().map(|p| p.load(Ordering::Relaxed)).collect()
    }

    /// The first pixel where `self` and `other` differ, as `(x, y, self, other)`.
    pub fn first_difference(&self, other: &Canvas) -> Option<(usize, usize, u32, u32)> {
        if (self.width, self.height) != (other.width, other.height) {
            return Some((self.width, self.height, 0, 0));
        }
        self.px
            .iter()
            .zip(&other.px)
            .position(|(a, b)| a.load(Ordering::Relaxed) != b.load(Ordering::Relaxed))
            .map(|i| {
                (
                    i % self.width,
                    i / self.width,
                    self.px[i].load(Ordering::Relaxed),
                    other.px[i].load(Ordering::Relaxed),
                )
            })
    }
}

/// Rows per task at the bottom of the row splits (Mandelbrot, per-pixel Voronoi).
pub const BAND_ROWS: usize = 4;

/// Splits rows `y0..y1` in halves, spawning both, down to bands of at most [`BAND_ROWS`]
/// rows, each row drawn by `row(model, canvas, y)`.
pub fn bands<'s, S, M>(
    s: &S,
    y0: usize,
    y1: usize,
    model: &'s M,
    canvas: &'s Canvas,
    row: fn(&M, &Canvas, usize),
) where
    S: Spawner<'s>,
    M: Sync,
{
    if y1 - y0 <= BAND_ROWS {
        for y in y0..y1 {
            row(model, canvas, y);
        }
        return;
    }
    let mid = y0 + (y1 - y0) / 2;
    s.spawn_task(move |s| bands(s, y0, mid, model, canvas, row));
    s.spawn_task(move |s| bands(s, mid, y1, model, canvas, row));
}

/// The Mandelbrot set's view and detail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mandelbrot {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Iterations before a point counts as inside.
    pub iterations: u32,
    /// The centre of the view (real, imaginary).
    pub center: (f64, f64),
    /// The view's width in the complex plane.
    pub span: f64,
}

impl Default for Mandelbrot {
    fn default() -> Self {
        Mandelbrot {
            width: 1024,
            height: 768,
            iterations: 500,
            center: (-0.6, 0.0),
            span: 3.2,
        }
    }
}

impl Mandelbrot {
    /// Iterations before escape of pixel `(x, y)` (`iterations` when it does not escape).
    #[inline]
    pub fn escape(&self, x: usize, y: usize) -> u32 {
        let scale = self.span / self.width as f64;
        let cr = self.center.0 + (x as f64 - self.width as f64 / 2.0) * scale;
        let ci = self.center.1 + (y as f64 - self.height as f64 / 2.0) * scale;
        let (mut zr, mut zi) = (0.0f64, 0.0f64);
        let mut i = 0;
        while i < self.iterations {
            let zr2 = zr * zr;
            let zi2 = zi * zi;
            if zr2 + zi2 > 4.0 {
                break;
            }
            zi = 2.0 * zr * zi + ci;
            zr = zr2 - zi2 + cr;
            i += 1;
        }
        i
    }
}

/// Draws `set` into `canvas` (of the set's size), bands of rows as tasks.
pub fn mandelbrot<'s, S: Spawner<'s>>(s: &S, set: &'s Mandelbrot, canvas: &'s Canvas) {
    bands(s, 0, set.height, set, canvas, |set, canvas, y| {
        for x in 0..set.width {
            canvas.set(x, y, set.escape(x, y));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Voronoi

/// Blocks of at most this many pixels a side are drawn pixel by pixel by the split algorithm.
pub const SPLIT_MIN: usize = 16;

/// How a Voronoi diagram is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoronoiAlgorithm {
    /// Every pixel asks every seed; bands of rows as tasks.
    Pixel,
    /// A block whose four corners have the same nearest seed is filled at once (a Voronoi
    /// cell is convex); otherwise it is split into four tasks, down to [`SPLIT_MIN`] pixels a
    /// side, then drawn pixel by pixel.
    Split,
}

impl VoronoiAlgorithm {
    /// Both, in the order the reports list them.
    pub const ALL: [VoronoiAlgorithm; 2] = [VoronoiAlgorithm::Pixel, VoronoiAlgorithm::Split];

    /// `pixel` or `split`.
    pub fn name(self) -> &'static str {
        match self {
            VoronoiAlgorithm::Pixel => "pixel",
            VoronoiAlgorithm::Split => "split",
        }
    }
}

impl std::str::FromStr for VoronoiAlgorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                format!("unknown Voronoi algorithm `{s}`; the algorithms are: pixel, split")
            })
    }
}

/// One seed: its position in pixels and its velocity in pixels per frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed {
    /// Column.
    pub x: i64,
    /// Row.
    pub y: i64,
    /// Columns moved per frame.
    pub vx: i64,
    /// Rows moved per frame.
    pub vy: i64,
}

/// A Voronoi diagram: every pixel takes the index of its nearest seed (squared distances in
/// integers, so exact; the lowest index wins a tie, which keeps every cell convex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Voronoi {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// The seeds.
    pub seeds: Vec<Seed>,
}

impl Voronoi {
    /// `n` seeds placed and set moving pseudo-randomly (the same for the same arguments).
    pub fn random(width: usize, height: usize, n: usize, seed: u64) -> Voronoi {
        let mut r = BenchInputRng::new(seed);
        let seeds = (0..n)
            .map(|_| Seed {
                x: r.below(width as u64) as i64,
                y: r.below(height as u64) as i64,
                vx: r.below(9) as i64 - 4,
                vy: r.below(9) as i64 - 4,
            })
            .collect();
        Voronoi {
            width,
            height,
            seeds,
        }
    }

    /// The index of the seed nearest to `(x, y)`.
    #[inline]
    pub fn nearest(&self, x: usize, y: usize) -> u32 {
        let (x, y) = (x as i64, y as i64);
        let mut best = 0;
        let mut best_d = i64::MAX;
        for (i, s) in self.seeds.iter().enumerate() {
            let (dx, dy) = (s.x - x, s.y - y);
            let d = dx * dx + dy * dy;
            if d < best_d {
                best_d = d;
                best = i;
            }
        }
        best as u32
    }

    /// Moves every seed by its velocity, bouncing off the edges.
    pub fn step(&mut self) {
        let (w, h) = (self.width as i64 - 1, self.height as i64 - 1);
        for s in &mut self.seeds {
            (s.x, s.vx) = bounce(s.x + s.vx, s.vx, w);
            (s.y, s.vy) = bounce(s.y + s.vy, s.vy, h);
        }
    }
}

/// A coordinate moved to `p`, reflected into `0..=max`.
fn bounce(p: i64, v: i64, max: i64) -> (i64, i64) {
    if p < 0 {
        ((-p).min(max.max(0)), -v)
    } else if p > max {
        ((2 * max - p).max(0), -v)
    } else {
        (p, v)
    }
}

/// Draws `diagram` into `canvas` (of its size) with `algorithm`.
pub fn voronoi<'s, S: Spawner<'s>>(
    s: &S,
    diagram: &'s Voronoi,
    canvas: &'s Canvas,
    algorithm: VoronoiAlgorithm,
) {
    if diagram.seeds.is_empty() || diagram.width == 0 || diagram.height == 0 {
        return;
    }
    match algorithm {
        VoronoiAlgorithm::Pixel => bands(s, 0, diagram.height, diagram, canvas, |d, c, y| {
            for x in 0..d.width {
                c.set(x, y, d.nearest(x, y));
            }
        }),
        VoronoiAlgorithm::Split => split(s, diagram, canvas, (0, 0, diagram.width, diagram.height)),
    }
}

/// The split algorithm on the block `(x0, y0, w, h)` (not empty).
fn split<'s, S: Spawner<'s>>(
    s: &S,
    d: &'s Voronoi,
    c: &'s Canvas,
    (x0, y0, w, h): (usize, usize, usize, usize),
) {
    let (x1, y1) = (x0 + w - 1, y0 + h - 1);
    let a = d.nearest(x0, y0);
    if d.nearest(x1, y0) == a && d.nearest(x0, y1) == a && d.nearest(x1, y1) == a {
        for y in y0..=y1 {
            for x in x0..=x1 {
                c.set(x, y, a);
            }
        }
        return;
    }
    if w <= SPLIT_MIN && h <= SPLIT_MIN {
        for y in y0..=y1 {
            for x in x0..=x1 {
                c.set(x, y, d.nearest(x, y));
            }
        }
        return;
    }
    let (wl, hl) = (w.div_ceil(2), h.div_ceil(2));
    for (bx, bw) in [(x0, wl), (x0 + wl, w - wl)] {
        for (by, bh) in [(y0, hl), (y0 + hl, h - hl)] {
            if bw > 0 && bh > 0 {
                s.spawn_task(move |s| split(s, d, c, (bx, by, bw, bh)));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Spawn tree

/// Per-thread leaf counts (one padded slot per thread, so that the tree measures the pool
/// rather than contention on one counter).
#[derive(Debug)]
pub struct Leaves(Vec<Slot>);

#[derive(Debug)]
#[repr(align(128))]
struct Slot(AtomicU64);

impl Leaves {
    /// Counters for `threads` threads.
    pub fn new(threads: usize) -> Leaves {
        Leaves(
            (0..threads.max(1))
                .map(|_| Slot(AtomicU64::new(0)))
                .collect(),
        )
    }

    /// Counts a leaf for thread `i` (only that thread writes its slot).
    #[inline]
    fn add(&self, i: usize) {
        let c = &self.0[i % self.0.len()].0;
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// The leaves counted.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

/// A binary tree of empty tasks of depth `depth` (2^(depth+1) - 2 spawns, 2^depth leaves).
pub fn spawn_tree<'s, S: Spawner<'s>>(s: &S, depth: u32, leaves: &'s Leaves) {
    if depth == 0 {
        leaves.add(s.thread_index());
        return;
    }
    s.spawn_task(move |s| spawn_tree(s, depth - 1, leaves));
    s.spawn_task(move |s| spawn_tree(s, depth - 1, leaves));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quicksort_sorts_in_every_runner() {
        let input = quicksort_input(50_000);
        let mut reference = input.clone();
        reference.sort_unstable();
        let mut v = input.clone();
        quicksort(&Inline, &mut v, 16);
        check_sorted(&v, &reference).unwrap();
        let pool = fugue_pool::Pool::new(2, fugue_pool::Policy::Steal).unwrap();
        let mut v = input.clone();
        pool.scope(|s| quicksort(s, &mut v, 16));
        check_sorted(&v, &reference).unwrap();
        let rp = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut v = input;
        rp.scope(|s| quicksort(s, &mut v, 16));
        check_sorted(&v, &reference).unwrap();
        let mut bad = reference.clone();
        bad.swap(10, 20_000);
        assert!(check_sorted(&bad, &reference).is_err());
        let mut other = reference.clone();
        other[0] = other[0].saturating_sub(1);
        assert!(check_sorted(&other, &reference).is_err() || other == reference);
    }

    #[test]
    fn both_voronoi_algorithms_draw_the_same_picture() {
        let mut d = Voronoi::random(203, 131, 40, 7);
        let pool = fugue_pool::Pool::new(2, fugue_pool::Policy::Steal).unwrap();
        for _ in 0..5 {
            let a = Canvas::new(d.width, d.height);
            voronoi(&Inline, &d, &a, VoronoiAlgorithm::Pixel);
            let b = Canvas::new(d.width, d.height);
            pool.scope(|s| voronoi(s, &d, &b, VoronoiAlgorithm::Split));
            assert_eq!(a.first_difference(&b), None);
            d.step();
            assert!(d
                .seeds
                .iter()
                .all(|s| (0..203).contains(&s.x) && (0..131).contains(&s.y)));
        }
    }

    #[test]
    fn mandelbrot_in_parallel_equals_serial() {
        let set = Mandelbrot {
            width: 97,
            height: 61,
            iterations: 200,
            ..Mandelbrot::default()
        };
        let a = Canvas::new(set.width, set.height);
        mandelbrot(&Inline, &set, &a);
        let b = Canvas::new(set.width, set.height);
        let rp = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        rp.scope(|s| mandelbrot(s, &set, &b));
        assert_eq!(a.first_difference(&b), None);
        // The view holds points inside (the maximum) and points that escape at once.
        let px = a.pixels();
        assert!(px.contains(&200));
        assert!(px.iter().any(|&p| p < 3));
    }

    #[test]
    fn spawn_tree_counts_every_leaf() {
        let pool = fugue_pool::Pool::new(3, fugue_pool::Policy::LifoMutex).unwrap();
        let leaves = Leaves::new(3);
        pool.scope(|s| spawn_tree(s, 12, &leaves));
        assert_eq!(leaves.total(), 1 << 12);
        let leaves = Leaves::new(1);
        spawn_tree(&Inline, 10, &leaves);
        assert_eq!(leaves.total(), 1 << 10);
    }
}
