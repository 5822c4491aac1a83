//! The sequential executor.

use crate::{Executor, Plan};

/// Runs the tasks in topological order on the calling thread (a pipelined plan: its units in
/// order, sub-block by sub-block).
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqExecutor;

impl SeqExecutor {
    /// A sequential executor.
    pub fn new() -> Self {
        SeqExecutor
    }
}

impl Executor for SeqExecutor {
    #[inline]
    fn run_cycle(&mut self, plan: &mut Plan) {
        let _flush = crate::denormals::FlushDenormals::new();
        // SAFETY: this thread is the only one running tasks of `plan`, which it holds by
        // `&mut`, so no other thread runs its tasks and no reference from `Plan::output` is
        // alive.
        unsafe {
            if plan.pipeline() > 1 {
                plan.run_all_units();
            } else {
                plan.run_all_tasks();
            }
        }
    }
}
