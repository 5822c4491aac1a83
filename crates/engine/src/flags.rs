//! The executor's command-line flags (feature `clap`), shared by `fugue render`, `fugue run`,
//! `fugue profile` and the benchmarks: [`ExecArgs`], what the user asks, made an
//! [`ExecutorRequest`] and from it an executor choice.

use crate::host::GraphExecutor;
use crate::{Costs, ExecutorRequest, Pipeline};
use fugue_sched::Algorithm;

/// Executor selection flags.
#[derive(clap::Args, Debug, Clone)]
pub struct ExecArgs {
    /// Executor: seq, static, ws (work stealing), ws-affinity (work stealing, tasks kept on the
    /// thread that ran them last), share (work sharing, mutex), share-spin
    /// (work sharing, spinlock), levels (fork/join by levels), or auto (measures seq, and ws
    /// and static at 2, 4, 8... threads and at one per core, pipelined too when the graph is short of parallelism
    /// and, in a render on 4 cores or more at blocks up to 4096 frames, running two cycles
    /// as one, on the graph for a bounded time (sized to
    /// 0.6 s, ending within 0.75 s; at most a twentieth of a render): the fastest candidate is kept if its mean
    /// cycle is at least 5 % shorter than seq's, else seq; says what it chose, and when the
    /// run is too short to measure) [default: auto for render and run, seq for profile and
    /// the benchmarks].
    #[arg(long, short = 'e')]
    pub executor: Option<GraphExecutor>,
    /// Threads, the audio thread included (default: 1 for seq, else the number of cores; with
    /// auto, the most its candidates get).
    #[arg(long, short = 't', value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Static schedule algorithm (with --executor static): hlfet, etf, cpfd, random, optimal,
    /// best [default: hlfet].
    #[arg(long)]
    pub algorithm: Option<Algorithm>,
    /// Node costs for the static schedule: declared (from the file), measured (calibrated
    /// now), or a CSV file `node,cost` written by `fugue calibrate`.
    #[arg(long, default_value = "declared")]
    pub costs: Costs,
    /// Seed of the random schedule.
    #[arg(long, default_value_t = crate::executor_request::DEFAULT_SEED)]
    pub seed: u64,
    /// Pin thread i to core i (mod the number of cores). The default in real time (`run`, and
    /// `profile` on the clocked backend): there the threads sleep between cycles, and two of
    /// them woken on one core stay there (the kernel does not spread threads that are mostly
    /// asleep), which halves a parallel executor; offline, threads are not pinned unless asked.
    #[arg(long)]
    pub pin: bool,
    /// Do not pin threads in real time (see --pin).
    #[arg(long, conflicts_with = "pin")]
    pub no_pin: bool,
    /// Schedule the graph node by node instead of merging chains of nodes into units (for
    /// comparing executors on the graph as written).
    #[arg(long)]
    pub no_merge_chains: bool,
    /// Run the workers at real-time priority (SCHED_FIFO PRIORITY, default 80; the audio
    /// thread one above) where the system permits; when refused, say so once and go on.
    /// Under JACK the audio thread is JACK's, which keeps the server's priority (`jackd -P`,
    /// often below the workers'; pinning keeps them off its core).
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "PRIORITY", default_missing_value = "80", value_parser = clap::value_parser!(i32).range(1..=98))]
    pub rt: Option<i32>,
    /// Work stealing's threshold.
    #[command(flatten)]
    pub steal: StealArgs,
    /// Real-time backends: workers sleeping between cycles wake this many µs before the
    /// next cycle's expected start and spin until it starts (0: they sleep until the cycle
    /// wakes them) [default: 50].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub wake_lead_us: Option<u64>,
    /// Pipelining: cut each cycle's buffer into N sub-blocks, so that a line of nodes cut
    /// into one segment per thread runs on several threads at once (N must divide the
    /// buffer; 1: off), or auto (N from the graph's critical path, the threads and the
    /// buffer: 1 when the graph has parallelism enough). Same output, same latency; not with
    /// --profile [default: 1; with --executor auto, candidates are tried both ways, N as auto].
    #[arg(long)]
    pub pipeline: Option<Pipeline>,
}

/// The work-stealing flag shared by `render`, `run` and the benchmarks.
#[derive(clap::Args, Debug, Clone)]
pub struct StealArgs {
    /// Work stealing: the least work, in µs, a stolen task must bring for a thread to take it
    /// from a busy owner (0: steal any task, as the plain protocol) [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub min_steal_us: Option<u64>,
}

impl ExecArgs {
    /// What the flags ask.
    pub fn request(&self) -> ExecutorRequest {
        ExecutorRequest {
            executor: self.executor,
            threads: self.threads.map(usize::from),
            algorithm: self.algorithm,
            costs: self.costs.clone(),
            seed: self.seed,
            pin: self.pin,
            no_pin: self.no_pin,
            no_merge_chains: self.no_merge_chains,
            rt: self.rt,
            min_steal_us: self.steal.min_steal_us,
            wake_lead_us: self.wake_lead_us,
            pipeline: self.pipeline,
        }
    }
}
