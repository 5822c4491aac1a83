//! The transport of rendered blocks from the computing thread to the writing thread.
//!
//! Blocks are numbered and must reach the writer in order. Today a bounded channel carries
//! them (the computing thread waits when the writer is `CAPACITY` blocks behind); the
//! ordered ring of `fugue-ring` is meant to replace it behind these same three functions.
//! Emptied buffers travel back so that, after the first `CAPACITY + 2` blocks, rendering
//! allocates no more.

use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TryRecvError};

/// Blocks in flight at most.
pub(crate) const CAPACITY: usize = 16;

/// A numbered block of interleaved frames.
pub(crate) struct Block {
    /// Position of the block in the render (0, 1, 2...).
    pub seq: u64,
    /// Interleaved samples: `frames * channels`.
    pub data: Vec<f32>,
}

/// The computing side.
pub(crate) struct BlockSender {
    tx: SyncSender<Block>,
    spare: Receiver<Vec<f32>>,
    next: u64,
}

/// The writing side.
pub(crate) struct BlockReceiver {
    rx: Receiver<Block>,
    back: Sender<Vec<f32>>,
    next: u64,
}

/// A connected pair.
pub(crate) fn block_channel() -> (BlockSender, BlockReceiver) {
    let (tx, rx) = mpsc::sync_channel(CAPACITY);
    let (back, spare) = mpsc::channel();
    (
        BlockSender { tx, spare, next: 0 },
        BlockReceiver { rx, back, next: 0 },
    )
}

impl BlockSender {
    /// An empty buffer to fill (recycled when one came back).
    pub fn buffer(&mut self) -> Vec<f32> {
        match self.spare.try_recv() {
            Ok(mut v) => {
                v.clear();
                v
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => Vec::new(),
        }
    }

    /// Sends the next block; `false` when the writer has stopped.
    pub fn send(&mut self, data: Vec<f32>) -> bool {
        let seq = self.next;
        self.next += 1;
        self.tx.send(Block { seq, data }).is_ok()
    }
}

impl BlockReceiver {
    /// The next block in order, or `None` when the sender is gone and all blocks are read.
    pub fn recv(&mut self) -> Option<Block> {
        let b = self.rx.recv().ok()?;
        debug_assert_eq!(b.seq, self.next, "blocks arrive in order");
        self.next += 1;
        Some(b)
    }

    /// Returns a buffer for reuse.
    pub fn recycle(&self, data: Vec<f32>) {
        let _ = self.back.send(data);
    }
}
