//! The transport of rendered blocks from the computing thread to the writing thread: the
//! ordered ring of `fugue-ring` (numbered blocks, read strictly in order, zero-copy).
//!
//! Each ring item holds one block: its frame count (`u64`, little-endian) and then
//! `block * channels` interleaved `f32` samples. The computing thread writes the samples
//! straight into the slot's memory and commits it; the writer reads them in place and
//! releases the slot. The computing thread waits (parking) only when the writer is a whole
//! ring behind. The writer, when it has written everything produced so far, sleeps for
//! [`WRITER_NAP`] and then writes every block that arrived meanwhile: it takes a small
//! fraction of a core, wakes a few hundred times a second whatever the cycle length, and the
//! computing thread never pays for waking it. The ring holds [`BYTES`] of blocks (at least
//! [`MIN_BLOCKS`]), many naps' worth of cycles. After construction nothing is allocated.

use fugue_ring::{Consumer, NextError, Options, Padding, Producer, ReadGuard, Strategy};

/// The ring's size in bytes, about (blocks of [`MIN_BLOCKS`] or more).
pub(crate) const BYTES: usize = 4 << 20;

/// Blocks in flight at least: one being written to the file while the next is computed.
/// Blocks of [`BYTES`] or more get no more than that: each then holds seconds of audio, and
/// sixteen of a thousand channels of 65,536 frames took 4 GiB.
pub(crate) const MIN_BLOCKS: usize = 2;

/// Blocks in flight at most.
const MAX_BLOCKS: usize = 4096;

/// How long the writer sleeps when it has caught up.
pub(crate) const WRITER_NAP: std::time::Duration = std::time::Duration::from_millis(2);

const HEADER: usize = 8;

/// The computing side.
pub(crate) struct BlockSender {
    producer: Producer,
    next: u64,
    samples: usize,
}

/// The writing side.
pub(crate) struct BlockReceiver {
    consumer: Consumer,
}

/// A block being read: derefs to its interleaved samples; dropping it frees the slot.
pub(crate) struct Block<'a> {
    guard: ReadGuard<'a>,
    len: usize,
}

impl Block<'_> {
    /// The block's interleaved samples (`frames * channels`).
    pub fn data(&self) -> &[f32] {
        bytemuck::cast_slice(&self.guard[HEADER..HEADER + self.len * 4])
    }
}

/// The bytes of one ring item for blocks of `frames` frames of `channels` channels, and how
/// many items the ring holds: about [`BYTES`] in all (the writer, waking every
/// [`WRITER_NAP`], writes that much each time), [`MIN_BLOCKS`] to [`MAX_BLOCKS`] of them.
pub(crate) fn ring_shape(frames: usize, channels: usize) -> (usize, usize) {
    let item = HEADER.saturating_add(frames.saturating_mul(channels).saturating_mul(4));
    let blocks = BYTES
        .div_ceil(item)
        .clamp(MIN_BLOCKS, MAX_BLOCKS)
        .next_power_of_two()
        .min(MAX_BLOCKS);
    (item, blocks)
}

/// A connected pair for blocks of at most `frames` frames of `channels` channels.
pub(crate) fn block_channel(frames: usize, channels: usize) -> (BlockSender, BlockReceiver) {
    let samples = frames * channels;
    let options = Options {
        strategy: Strategy::Park,
        padding: Padding::CacheLine,
    };
    let (item, blocks) = ring_shape(frames, channels);
    let (producer, consumer) = fugue_ring::ordered_with(blocks, item, options);
    (
        BlockSender {
            producer,
            next: 0,
            samples,
        },
        BlockReceiver { consumer },
    )
}

impl BlockSender {
    /// Writes the next block in place: `fill` gets the slot's samples (room for the whole
    /// block) and returns how many it wrote. Returns `false` when the writer has stopped.
    pub fn send_with(&mut self, fill: impl FnOnce(&mut [f32]) -> usize) -> bool {
        let Ok(mut guard) = self.producer.acquire(self.next) else {
            return false; // the consumer is gone: the writer failed
        };
        let written = fill(bytemuck::cast_slice_mut(
            &mut guard[HEADER..HEADER + 4 * self.samples],
        ));
        let written = written.min(self.samples);
        guard[..HEADER].copy_from_slice(&(written as u64).to_le_bytes());
        guard.commit();
        self.next += 1;
        true
    }
}

impl BlockSender {
    /// As [`BlockSender::send_with`], but never waits: returns `false` (and does not call
    /// `fill`) when the writer is a whole ring behind or has stopped; the block is
    /// then lost. For real-time threads.
    pub fn try_send_with(&mut self, fill: impl FnOnce(&mut [f32]) -> usize) -> bool {
        let Ok(mut guard) = self.producer.try_acquire(self.next) else {
            return false;
        };
        let written = fill(bytemuck::cast_slice_mut(
            &mut guard[HEADER..HEADER + 4 * self.samples],
        ));
        let written = written.min(self.samples);
        guard[..HEADER].copy_from_slice(&(written as u64).to_le_bytes());
        guard.commit();
        self.next += 1;
        true
    }
}

impl BlockReceiver {
    /// The next block in order, or `None` when the sender is gone and every block was read.
    pub fn recv(&mut self) -> Option<Block<'_>> {
        loop {
            match self.consumer.ready() {
                Ok(true) => break,
                Ok(false) => std::thread::sleep(WRITER_NAP),
                // Gone: `next` below says so without waiting.
                Err(_) => break,
            }
        }
        match self.consumer.next() {
            Ok(guard) => {
                let mut n = [0u8; HEADER];
                n.copy_from_slice(&guard[..HEADER]);
                let len = u64::from_le_bytes(n) as usize;
                Some(Block { guard, len })
            }
            Err(NextError::Disconnected { .. } | NextError::Timeout { .. }) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_arrive_in_order_with_their_lengths() {
        let (mut tx, mut rx) = block_channel(4, 2);
        let writer = std::thread::spawn(move || {
            let mut got = Vec::new();
            while let Some(b) = rx.recv() {
                got.push(b.data().to_vec());
            }
            got
        });
        for i in 0..100u32 {
            assert!(tx.send_with(|buf| {
                let n = if i == 99 { 3 } else { 8 };
                for (k, x) in buf[..n].iter_mut().enumerate() {
                    *x = (i * 10 + k as u32) as f32;
                }
                n
            }));
        }
        drop(tx);
        let got = writer.join().unwrap();
        assert_eq!(got.len(), 100);
        for (i, b) in got.iter().enumerate() {
            let n = if i == 99 { 3 } else { 8 };
            let want: Vec<f32> = (0..n).map(|k| (i * 10 + k) as f32).collect();
            assert_eq!(b, &want);
        }
    }

    #[test]
    fn a_stopped_writer_stops_the_sender() {
        let (mut tx, rx) = block_channel(4, 1);
        drop(rx);
        // Free slots may still be filled; once the ring is full the sender learns that the
        // writer is gone instead of waiting forever.
        let sent = (0..=MAX_BLOCKS).take_while(|_| tx.send_with(|_| 4)).count();
        assert!(sent <= MAX_BLOCKS, "sent {sent}");
    }
}
