//! Access tracking of the ring's slot bytes under loom. The atomics, spin hints and futex
//! the ring is built from come from `fugue-sync` (std normally, loom under `--cfg loom`).

/// Access tracking for the slot bytes. Under loom, each slot has a `loom::cell::UnsafeCell<()>`
/// and every write (acquire, commit) and read (next, release) of slot bytes is registered on
/// it, so loom reports any access that is not ordered by the slot protocol. Without loom it
/// compiles to nothing.
pub(crate) struct AccessTrack {
    #[cfg(loom)]
    cells: Box<[loom::cell::UnsafeCell<()>]>,
}

impl AccessTrack {
    pub(crate) fn new(_slots: usize) -> Self {
        AccessTrack {
            #[cfg(loom)]
            cells: (0.._slots)
                .map(|_| loom::cell::UnsafeCell::new(()))
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn write(&self, _slot: usize) {
        #[cfg(loom)]
        self.cells[_slot].with_mut(|_| ());
    }

    #[inline]
    pub(crate) fn read(&self, _slot: usize) {
        #[cfg(loom)]
        self.cells[_slot].with(|_| ());
    }
}
