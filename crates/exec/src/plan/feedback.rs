//! The two nodes of a feedback edge (`a.1 ~> b.1`, [`fugue_graph::Feedback`]): `read` plays
//! the block kept in the previous cycle, `write` keeps the block of this one. They share one
//! block of memory, made when the plan is compiled (a fresh one for every plan: two plans of
//! one graph keep their own state).
//!
//! Why sharing it is sound: the graph orders `read` before `write` in every cycle (an edge
//! from `read`'s port 2 to `write`'s port 2), and the executors separate cycles (a cycle's
//! tasks all complete before the next cycle's start, with a happens-before edge). So in a
//! cycle `read` reads the block while no `write` runs, and `write` replaces it after. With
//! pipelining (the cycle in sub-blocks), `read` and `write` run once per sub-block, each on
//! that sub-block's frames: `read`'s sub-block `k` precedes `write`'s sub-block `k` by the
//! same edge, and a `write` of sub-block `j` and a `read` of sub-block `k != j` that run at
//! once touch disjoint frames of the block. Each side keeps its own position in the block,
//! advanced by every call (both see the same sequence of sub-blocks).

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::Arc;

use fugue_dsp::{DspNode, NodeContext, Processor};
use fugue_graph::{FEEDBACK_READ, FEEDBACK_WRITE};

use super::compile::CompileError;

/// The block a feedback edge carries from one cycle to the next.
pub(super) struct Kept {
    frames: usize,
    data: UnsafeCell<Box<[f32]>>,
}

// SAFETY: the block is written only by its `write` processor and read only by its `read`
// processor, on disjoint frames or ordered by the plan (see the module's text).
unsafe impl Sync for Kept {}
// SAFETY: it owns plain memory.
unsafe impl Send for Kept {}

impl Kept {
    fn new(frames: usize) -> Kept {
        Kept {
            frames,
            data: UnsafeCell::new(vec![0.0; frames].into_boxed_slice()),
        }
    }

    /// The kept block's frames `[pos, pos + n)`, through a raw pointer (never a reference
    /// to the whole block, which the other side may be using on other frames).
    fn ptr(&self, pos: usize, n: usize) -> *mut f32 {
        assert!(
            pos + n <= self.frames,
            "a feedback edge's call runs past its block"
        );
        // SAFETY: `data` is a live boxed slice of `frames` floats; `pos + n <= frames`.
        unsafe { (*self.data.get()).as_mut_ptr().add(pos) }
    }
}

/// The kept blocks of one compilation, by the `pair` attribute of the feedback nodes.
#[derive(Default)]
pub(super) struct Pairs {
    kept: HashMap<i64, (Arc<Kept>, usize, String)>,
}

impl Pairs {
    /// The feedback node of `ctx`, or `None` when the node is not one. Refuses one whose two
    /// sides run at different block sizes (a resampler between the edge's two ends).
    pub(super) fn build(
        &mut self,
        ctx: &NodeContext<'_>,
    ) -> Result<Option<Box<dyn DspNode>>, CompileError> {
        let kind = ctx.kind();
        if kind != FEEDBACK_READ && kind != FEEDBACK_WRITE {
            return Ok(None);
        }
        let pair = ctx
            .node
            .attr("pair")
            .and_then(|v| v.as_f64())
            .map_or(-1, |p| p as i64);
        let (kept, block, first) = self
            .kept
            .entry(pair)
            .or_insert_with(|| {
                (
                    Arc::new(Kept::new(ctx.block)),
                    ctx.block,
                    ctx.name().to_string(),
                )
            })
            .clone();
        if block != ctx.block {
            return Err(CompileError::Options(format!(
                "feedback edge `{first}` carries {block} frames a cycle at one end and {} at the other: a feedback edge cannot cross a resampler",
                ctx.block
            )));
        }
        Ok(Some(Box::new(FeedbackNode {
            kept,
            read: kind == FEEDBACK_READ,
        })))
    }
}

/// Either side of a feedback edge.
struct FeedbackNode {
    kept: Arc<Kept>,
    read: bool,
}

impl DspNode for FeedbackNode {
    fn inputs(&self) -> usize {
        if self.read {
            0
        } else {
            2
        }
    }

    fn outputs(&self) -> usize {
        if self.read {
            2
        } else {
            0
        }
    }

    fn processor(&self) -> Box<dyn Processor> {
        fugue_dsp::isolated(Side {
            kept: Arc::clone(&self.kept),
            read: self.read,
            pos: 0,
        })
    }

    fn memory(&self) -> usize {
        self.kept.frames * 4
    }
}

/// A feedback node's processor.
struct Side {
    kept: Arc<Kept>,
    read: bool,
    /// Where the next call starts in the block (sub-blocks of a pipelined plan).
    pos: usize,
}

impl Processor for Side {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let n = if self.read {
            outputs.first().map_or(0, |o| o.len())
        } else {
            inputs.first().map_or(0, |i| i.len())
        };
        let p = self.kept.ptr(self.pos, n);
        if self.read {
            // SAFETY: frames [pos, pos + n) of the kept block, which no `write` touches now
            // (the module's text).
            let kept = unsafe { std::slice::from_raw_parts(p, n) };
            outputs[0].copy_from_slice(kept);
            for o in outputs.iter_mut().skip(1) {
                o.fill(0.0);
            }
        } else {
            // SAFETY: frames [pos, pos + n) of the kept block, which no `read` touches now.
            let kept = unsafe { std::slice::from_raw_parts_mut(p, n) };
            kept.copy_from_slice(inputs[0]);
        }
        self.pos = (self.pos + n) % self.kept.frames.max(1);
    }

    fn reset(&mut self) {
        self.pos = 0;
        let p = self.kept.ptr(0, self.kept.frames);
        // SAFETY: reset runs while no task of the plan runs: no other reference exists.
        unsafe { std::slice::from_raw_parts_mut(p, self.kept.frames) }.fill(0.0);
    }
}
