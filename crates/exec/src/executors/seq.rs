//! The sequential executor.

use crate::{Executor, Plan};

/// Runs the tasks in topological order on the calling thread.
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
        // SAFETY: this thread is the only one running tasks of `plan`, which it holds by
        // `&mut`, so no other thread runs its tasks and no reference from `Plan::output` is
        // alive.
        unsafe { plan.run_all_tasks() };
    }
}
