//! The per-task runtime: what a task mutates while it runs (its cell: processor, slice lists,
//! panic flag) and the functions the executors call on the audio path ([`Plan::run_task`],
//! [`Plan::run_unit`], [`Plan::run_all_tasks`]), which never allocate, lock or block.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use arrayvec::ArrayVec;
use fugue_dsp::Processor;

use super::units::{part_frames, sub_frames};
use super::Plan;
use crate::trace::{now, worker_index, TaskTime};

/// A processor's panic, reported once by [`Plan::take_panics`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskPanic {
    /// The task.
    pub task: usize,
    /// The node's name.
    pub node: String,
    /// The panic message.
    pub message: String,
}

/// What one task mutates while it runs, on its own cache lines (a 128-byte boundary: the
/// adjacent-line prefetcher moves lines in pairs).
#[repr(align(128))]
pub(super) struct TaskCell {
    processor: UnsafeCell<Box<dyn Processor>>,
    /// Input slices for `process` of a task with more than [`STACK_PORTS`] input or output
    /// ports, filled and cleared within one `run_task` call: capacity
    /// reserved at compile time, so pushes never allocate. The `'static` lifetime is never
    /// relied on: the slices point into the plan's arena and are cleared before `run_task`
    /// returns.
    ins: UnsafeCell<Vec<&'static [f32]>>,
    /// Output slices, the same way.
    outs: UnsafeCell<Vec<&'static mut [f32]>>,
    /// Set when the processor panicked (and stays set).
    panicked: AtomicBool,
    /// The first panic message, until [`Plan::take_panics`] takes it.
    message: UnsafeCell<Option<String>>,
}

impl TaskCell {
    /// A cell for `processor`, with room for `ins` input and `outs` output slices (none when
    /// both fit in [`STACK_PORTS`]: the lists are then gathered on the stack).
    pub(super) fn new(processor: Box<dyn Processor>, ins: u32, outs: u32) -> Self {
        let on_stack = lists_on_stack(ins, outs);
        let cap = |n: u32| {
            if on_stack {
                0
            } else {
                scratch_capacity(n as usize)
            }
        };
        TaskCell {
            processor: UnsafeCell::new(processor),
            ins: UnsafeCell::new(Vec::with_capacity(cap(ins))),
            outs: UnsafeCell::new(Vec::with_capacity(cap(outs))),
            panicked: AtomicBool::new(false),
            message: UnsafeCell::new(None),
        }
    }
}

/// Tasks with at most this many input ports and at most this many output ports gather their
/// slice lists on the running thread's stack; the others in their cell's vectors.
const STACK_PORTS: usize = 16;

/// Whether a task with `ins` input and `outs` output ports gathers its slice lists on the
/// stack ([`STACK_PORTS`]).
fn lists_on_stack(ins: u32, outs: u32) -> bool {
    ins as usize <= STACK_PORTS && outs as usize <= STACK_PORTS
}

/// Capacity of a task's `ins`/`outs` slice list for `n` slices. `run_task` writes the first
/// `n` entries at every run; lists of tasks run by different threads should not share a cache
/// line, or every run would move that line between the cores. The lists are small heap blocks
/// that the allocator places one after the other, so each gets at least 128 bytes (8 entries)
/// of unused room after its last entry: the written part of the next block starts past a
/// 128-byte boundary (the adjacent-line prefetcher's pair).
fn scratch_capacity(n: usize) -> usize {
    n.next_multiple_of(8) + 8
}

impl Plan {
    /// Runs task `i` for the current cycle: sums its multi-edge inputs, then calls its
    /// processor. A processor that panics has its outputs silenced for the cycle; the task is
    /// flagged ([`Plan::panicked`]) and its first message kept for [`Plan::take_panics`].
    /// Never allocates, locks or blocks (unless the processor panics). It computes in the
    /// calling thread's floating-point mode: the executors flush denormals
    /// ([`crate::denormals`]), so a caller that runs tasks itself holds a
    /// [`FlushDenormals`](crate::denormals::FlushDenormals) to get the same bits.
    ///
    /// # Safety
    /// 1. Every predecessor of `i` has completed in this cycle, and its writes happen-before
    ///    this call (same thread, or a Release/Acquire pair in the executor).
    /// 2. No other thread runs task `i`, or any of its successors, concurrently with this call.
    /// 3. No reference obtained from this plan ([`Plan::output`]) is alive: the executor holds
    ///    the plan through the `&mut Plan` of [`Executor::run_cycle`](crate::Executor).
    ///
    /// `i < self.len()`; otherwise this panics.
    #[inline]
    pub unsafe fn run_task(&self, i: usize) {
        // Under loom, the task's run is a write of its tracked cell and a read of its
        // predecessors': loom reports any run not ordered after theirs (and after the previous
        // cycle's readers of its outputs), which is the caller's contract 1 and 2.
        #[cfg(loom)]
        {
            let access = &self.access;
            return access.cells[i].with_mut(|_| {
                for &p in &access.preds[i] {
                    access.cells[p as usize].with(|_| ());
                }
                // SAFETY: the caller's contract, for the whole task and its own cell.
                unsafe { self.run_frames(i, i, None) }
            });
        }
        // SAFETY: the caller's contract, for the whole task and its own cell.
        #[allow(unreachable_code)]
        unsafe {
            self.run_frames(i, i, None)
        }
    }

    /// Under loom: reads every task's tracked cell, as the owner of the plan does when it
    /// reads the cycle's outputs; loom reports it if a task of the cycle is not ordered before.
    #[cfg(loom)]
    pub fn loom_read_outputs(&self) {
        for c in self.access.cells.iter() {
            c.with(|_| ());
        }
    }

    /// Runs task `i` on frames `frames` of every buffer (all of them when `None`) with the
    /// processor and scratch lists of cell `c` (the task's own, or one of its parts').
    ///
    /// # Safety
    /// As [`Plan::run_task`], where "no other thread runs task `i`" becomes: no other thread
    /// uses cell `c`, and threads running other parts of `i` at the same time touch other
    /// frames (parts of a split task, which is frame-parallel: its outputs have its block
    /// length and each part reads and writes only its own frames).
    // Always inlined: at `run_task`'s call `frames` is a constant `None` and the range
    // arithmetic folds away (the whole-task path is the hot one).
    #[inline(always)]
    unsafe fn run_frames(&self, i: usize, c: usize, frames: Option<(usize, usize)>) {
        let start = if self.profiling { now() } else { 0 };
        // SAFETY: the caller's contract.
        unsafe { self.run_frames_untimed(i, c, frames) };
        if self.profiling {
            let time = TaskTime {
                start,
                end: now(),
                worker: worker_index(),
            };
            // SAFETY: [2] only this thread uses cell `c` now, and so its record; the owner
            // reads the records under `&mut self`, after the cycle.
            unsafe { *self.times[c].get() = time };
        }
    }

    /// [`Plan::run_frames`] without the profile's record.
    ///
    /// # Safety
    /// As [`Plan::run_frames`].
    #[inline(always)]
    unsafe fn run_frames_untimed(&self, i: usize, c: usize, frames: Option<(usize, usize)>) {
        let t = &self.tasks[i];
        if lists_on_stack(t.ins.1, t.outs.1) {
            // The slice lists on this thread's stack: the cell is only read, so its cache
            // line stays shared by every core that runs the task (a task that moves between
            // cores from one cycle to the next does not drag the line with it).
            let mut ins = ArrayVec::<&[f32], STACK_PORTS>::new();
            let mut outs = ArrayVec::<&mut [f32], STACK_PORTS>::new();
            // SAFETY: the caller's contract.
            unsafe { self.gather(i, frames, |s| ins.push(s), |s| outs.push(s)) };
            self.process(c, &ins, &mut outs);
        } else {
            let cell = &self.cells[c];
            // SAFETY: [2] only this thread uses cell `c` now, so only it touches its vectors.
            let (ins, outs) = unsafe { (&mut *cell.ins.get(), &mut *cell.outs.get()) };
            // SAFETY: the caller's contract.
            unsafe { self.gather(i, frames, |s| ins.push(s), |s| outs.push(s)) };
            self.process(c, ins, outs);
            ins.clear();
            outs.clear();
        }
    }

    /// Sums the multi-edge inputs of task `i` (on `frames`), then hands each input slice to
    /// `input` and each output slice to `output`, in port order.
    ///
    /// # Safety
    /// As [`Plan::run_frames`]; the slices must be dropped before the call's contract ends.
    #[inline(always)]
    unsafe fn gather<'a>(
        &self,
        i: usize,
        frames: Option<(usize, usize)>,
        mut input: impl FnMut(&'a [f32]),
        mut output: impl FnMut(&'a mut [f32]),
    ) {
        let t = &self.tasks[i];
        let range = |len: usize| match frames {
            Some((a, b)) => a.min(len)..b.min(len),
            None => 0..len,
        };
        let ports = &self.in_ports[t.ins.0 as usize..(t.ins.0 + t.ins.1) as usize];
        for port in ports {
            if port.n_srcs >= 2 {
                let srcs = &self.sum_srcs[port.first as usize..(port.first + port.n_srcs) as usize];
                // SAFETY: the scratch buffer belongs to this port of task `i` alone, and these
                // frames of it to this part [2]; the sources are outputs of predecessors,
                // complete and visible [1], written by no one while their successor `i` runs
                // [2]; no outside reference exists [3].
                let dst = unsafe {
                    self.arena
                        .slice_mut_range(port.buf, range(port.buf.len as usize))
                };
                // SAFETY: as above: predecessors' buffers, finished and not written now.
                let first = unsafe { self.arena.slice_range(srcs[0], range(srcs[0].len as usize)) };
                dst.copy_from_slice(first);
                for &s in &srcs[1..] {
                    // SAFETY: as above.
                    let src = unsafe { self.arena.slice_range(s, range(s.len as usize)) };
                    for (d, x) in dst.iter_mut().zip(src) {
                        *d += *x;
                    }
                }
            }
            // SAFETY: the buffer is a predecessor's output [1, 2], the silent buffer (never
            // written), an engine input channel (written only under `&mut self`), or this
            // port's scratch, whose mutable slice above has ended (its frames outside this
            // part's are not read here: other parts may be writing them).
            input(unsafe {
                self.arena
                    .slice_range(port.buf, range(port.buf.len as usize))
            });
        }
        for &b in &self.out_bufs[t.outs.0 as usize..(t.outs.0 + t.outs.1) as usize] {
            // SAFETY: output buffers of task `i` are written only by task `i`, and these frames
            // only by this part [2], and read only by its successors, which do not run now [2];
            // no outside reference [3].
            output(unsafe { self.arena.slice_mut_range(b, range(b.len as usize)) });
        }
    }

    /// Calls the processor of cell `c` on the gathered slices; a panic silences the outputs
    /// and is recorded.
    #[inline(always)]
    fn process(&self, c: usize, ins: &[&[f32]], outs: &mut [&mut [f32]]) {
        let cell = &self.cells[c];
        // SAFETY: the processor of cell `c` is used only by the thread using the cell
        // ([`Plan::run_frames`] 2).
        let processor = unsafe { &mut *cell.processor.get() };
        let result = catch_unwind(AssertUnwindSafe(|| processor.process(ins, outs)));
        if let Err(payload) = result {
            for o in outs.iter_mut() {
                o.fill(0.0);
            }
            self.record_panic(c, payload);
        }
    }

    #[cold]
    fn record_panic(&self, c: usize, payload: Box<dyn std::any::Any + Send>) {
        let cell = &self.cells[c];
        // Relaxed: the flag is read by the control side under `&mut self` or as a hint; the
        // message itself is handed over by the `&mut self` of `take_panics`.
        self.any_panic.store(true, Ordering::Relaxed);
        if !cell.panicked.swap(true, Ordering::Relaxed) {
            let msg = crate::panic_message(payload.as_ref())
                .unwrap_or("a panic with no message")
                .to_string();
            // SAFETY: only the thread using cell `c` writes the message [run_frames 2].
            unsafe { *cell.message.get() = Some(msg) };
        }
    }

    /// Whether any processor has panicked since compile or [`Plan::reset`] (one load, where
    /// [`Plan::panicked`] reads every task's flags).
    #[inline]
    pub fn any_panicked(&self) -> bool {
        self.any_panic.load(Ordering::Relaxed)
    }

    /// Whether the processor of task `i` has panicked since compile or [`Plan::reset`].
    pub fn panicked(&self, i: usize) -> bool {
        let t = &self.tasks[i];
        let parts = t.part_cells as usize..(t.part_cells + t.parts - 1) as usize;
        let subs = if t.stateless {
            t.sub_cells as usize..t.sub_cells as usize + self.pipeline - 1
        } else {
            0..0
        };
        self.cells[i].panicked.load(Ordering::Relaxed)
            || self.cells[parts]
                .iter()
                .chain(&self.cells[subs])
                .any(|c| c.panicked.load(Ordering::Relaxed))
    }

    /// What the processors report beside their audio ([`Processor::readings`]), as they stand
    /// after the last cycle: `(node, readings)` for every node that reports any, in task
    /// order, each node once (a split task's first part). Control side; allocates.
    ///
    /// # Safety
    /// No task of this plan runs during the call: no cycle is in progress (the executors run
    /// tasks only inside `run_cycle`, which holds the plan by `&mut`).
    pub unsafe fn readings(&self) -> Vec<(String, Vec<(String, f32)>)> {
        let mut v = Vec::new();
        for (c, cell) in self.cells.iter().enumerate() {
            let i = self.cell_task[c] as usize;
            if c != i {
                // A part of a split task: its node was read with the task's own cell.
                continue;
            }
            // SAFETY: no task runs (the caller's contract), so nothing writes the processor.
            let r = unsafe { (*cell.processor.get()).readings() };
            if !r.is_empty() {
                v.push((self.tasks[i].name.clone(), r));
            }
        }
        v
    }

    /// Sets live parameter `param` of node `node`'s processors to `value`
    /// ([`Processor::set_param`]): every processor of its task (a frame-parallel node's
    /// parts and sub-blocks have their own). Between cycles (`&mut self`: no task runs); on
    /// the audio path: it allocates, locks and waits for nothing. A node the plan does not
    /// have is ignored.
    pub fn set_param(&mut self, node: fugue_graph::NodeId, param: usize, value: f64) {
        let Some(&t) = self.task_of_node.get(node) else {
            return;
        };
        for (c, cell) in self.cells.iter_mut().enumerate() {
            if self.cell_task[c] == t {
                cell.processor.get_mut().set_param(param, value);
            }
        }
    }

    /// The first panic not reported yet: its task and message, moved out of the plan (the
    /// message is then no longer reported by [`Plan::take_panics`]). Never allocates: the
    /// audio side of a host hands the message to its control thread with it.
    pub fn take_first_panic(&mut self) -> Option<(usize, String)> {
        let tasks = &self.cell_task;
        self.cells
            .iter_mut()
            .enumerate()
            .find_map(|(c, cell)| Some((tasks[c] as usize, cell.message.get_mut().take()?)))
    }

    /// The panics not reported yet (each task's first message, once).
    pub fn take_panics(&mut self) -> Vec<TaskPanic> {
        let mut v = Vec::new();
        for (c, cell) in self.cells.iter_mut().enumerate() {
            if let Some(message) = cell.message.get_mut().take() {
                let i = self.cell_task[c] as usize;
                if v.iter().any(|p: &TaskPanic| p.task == i) {
                    // Another part of the same task: one report per task.
                    continue;
                }
                v.push(TaskPanic {
                    task: i,
                    node: self.tasks[i].name.clone(),
                    message,
                });
            }
        }
        v
    }

    /// Runs every task in order on the calling thread, denormals flushed
    /// ([`crate::denormals`]): the sequential executor's cycle, also
    /// run by the parallel executors for a sequential plan ([`Plan::is_sequential`]). Never
    /// inlined, so that every executor runs a sequential plan through this one copy of the
    /// loop: copies inlined in each executor ran the same work at different speeds
    /// (measurement: `bench-results/table/HISTORY.md`).
    ///
    /// # Safety
    /// No other thread runs a task of this plan during the call, and no reference from
    /// [`Plan::output`] is alive (hold the plan by `&mut`).
    #[inline(never)]
    pub unsafe fn run_all_tasks(&self) {
        let _flush = crate::denormals::FlushDenormals::new();
        for i in 0..self.len() {
            // SAFETY: tasks are stored in topological order, so every predecessor of `i` ran
            // earlier in this loop, on this thread (program order gives happens-before); no
            // other thread runs tasks (the caller's contract).
            unsafe { self.run_task(i) };
        }
    }

    /// Runs every unit in order on the calling thread, denormals flushed: the sequential executor's cycle for a
    /// pipelined plan (the same samples as [`Plan::run_all_tasks`], sub-block by sub-block).
    ///
    /// # Safety
    /// As [`Plan::run_all_tasks`].
    #[inline(never)]
    pub unsafe fn run_all_units(&self) {
        let _flush = crate::denormals::FlushDenormals::new();
        for u in 0..self.n_units() {
            // SAFETY: units are numbered in a topological order, so every predecessor unit ran
            // earlier in this loop, on this thread; no other thread runs units (the caller's
            // contract).
            unsafe { self.run_unit(u) };
        }
    }

    /// Runs unit `u`: its tasks, in order, on the calling thread (of a pipelined plan: on the
    /// unit's sub-block of every buffer, [`Plan::unit_sub`]).
    ///
    /// # Safety
    /// As [`Plan::run_task`], for the unit: every predecessor unit has completed in this
    /// cycle and its writes happen-before this call; no other thread runs `u` or any of its
    /// successor units concurrently; no reference from [`Plan::output`] is alive.
    #[inline]
    pub unsafe fn run_unit(&self, u: usize) {
        let ui = self.units.info[u];
        if ui.parts > 1 {
            let t = self.units.tasks[ui.tasks.0 as usize] as usize;
            let task = &self.tasks[t];
            let c = if ui.part == 0 {
                t
            } else {
                (task.part_cells + ui.part - 1) as usize
            };
            let frames = part_frames(task.block, ui.part as usize, ui.parts as usize);
            // SAFETY: the caller's contract for unit `u`: the task's predecessors (those of
            // every part) are complete and visible; only this thread runs this part (its own
            // cell); the other parts of the task use other cells and other frames of the
            // task's buffers (the task is frame-parallel, see `compile`).
            unsafe { self.run_frames(t, c, Some(frames)) };
            return;
        }
        if ui.subs > 1 {
            let frames = sub_frames(self.block, ui.sub as usize, ui.subs as usize);
            for &t in self.unit_tasks(u) {
                let t = t as usize;
                let task = &self.tasks[t];
                let c = if ui.sub == 0 || !task.stateless {
                    t
                } else {
                    (task.sub_cells + ui.sub - 1) as usize
                };
                // SAFETY: the caller's contract for unit `u`, sub-block `k`: the predecessors
                // of the first task are last tasks of predecessor units (complete, visible),
                // which include the same segment's sub-block `k - 1` unless its tasks are
                // stateless; each later task's only predecessor is the task before it, run
                // just before on this thread. Cell `c`: the task's own cell is used by one
                // sub-block at a time (sub-block `k` waits for `k - 1`, which waits for
                // `k - 2`...: a chain of units); a stateless task's sub-blocks each have a
                // cell of their own. Frames: sub-block `k` of every buffer, which no other
                // unit running now touches (the other sub-blocks of this segment and of its
                // neighbours touch other frames; a task's successors read sub-block `k` only
                // in their own sub-block `k`, a successor unit that does not run now).
                unsafe { self.run_frames(t, c, Some(frames)) };
            }
            return;
        }
        for &t in self.unit_tasks(u) {
            // SAFETY: the predecessors of the first task are last tasks of predecessor units
            // (complete, visible: the caller's contract); each later task's only predecessor
            // is the task before it, run just before on this thread. Only this thread runs
            // the unit's tasks; their successors are in this unit (run after, here) or in
            // successor units (not running: the caller's contract).
            unsafe { self.run_task(t as usize) };
        }
    }

    /// Turns the per-task profile on or off: while on, every run of a task records when it
    /// started and ended and which thread ran it ([`Plan::task_times`]), at the cost of two
    /// clock reads and a store per task. A pipelined plan ([`Plan::pipeline`]` > 1`) runs a
    /// task several times per cycle with one cell: its record is then its last sub-block's
    /// run only (the engine refuses to profile a pipelined plan). The records lie side by side in one array, apart
    /// from the cells (whose lines the running threads only read).
    pub fn set_profiling(&mut self, on: bool) {
        self.profiling = on;
    }

    /// Whether the per-task profile is on ([`Plan::set_profiling`]).
    pub fn profiling(&self) -> bool {
        self.profiling
    }

    /// Number of cells: one per task, plus one per part beyond the first of each task split
    /// by frames ([`Plan::unit_part`]). Each has its own [`TaskTime`].
    pub fn n_cells(&self) -> usize {
        self.cells.len()
    }

    /// The task of cell `c` (cell `i < len()` is task `i`; the others are parts).
    pub fn cell_task(&self, c: usize) -> usize {
        self.cell_task[c] as usize
    }

    /// Calls `f(cell, time)` for every cell with its record of the last profiled cycle
    /// ([`Plan::set_profiling`]). Between cycles (`&mut self`); never allocates.
    pub fn task_times(&mut self, mut f: impl FnMut(usize, TaskTime)) {
        for (c, t) in self.times.iter_mut().enumerate() {
            f(c, *t.get_mut());
        }
    }

    /// Returns to the initial state: every processor reset, every buffer silent, panic flags
    /// and messages cleared. The next cycles equal those of a freshly compiled plan.
    pub fn reset(&mut self) {
        self.arena.clear();
        *self.any_panic.get_mut() = false;
        for cell in self.cells.iter_mut() {
            cell.processor.get_mut().reset();
            *cell.panicked.get_mut() = false;
            *cell.message.get_mut() = None;
        }
    }
}

/// Under loom: one tracked cell per task standing for its outputs, and each task's
/// predecessors (see [`Plan::run_task`]).
#[cfg(loom)]
pub(super) struct Access {
    cells: Box<[loom::cell::UnsafeCell<()>]>,
    preds: Vec<Vec<u32>>,
}

#[cfg(loom)]
impl Access {
    /// The cells of `n` tasks with successor lists `succ(i)`.
    pub(super) fn new<'a>(n: usize, succ: impl Fn(usize) -> &'a [u32]) -> Self {
        let mut preds = vec![Vec::new(); n];
        for i in 0..n {
            for &s in succ(i) {
                preds[s as usize].push(i as u32);
            }
        }
        Access {
            cells: (0..n).map(|_| loom::cell::UnsafeCell::new(())).collect(),
            preds,
        }
    }
}
