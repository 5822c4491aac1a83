//! Asymmetric fences for the deque's store-load race: a cheap one for the owner's frequent
//! `pop`, a costly one for the thieves' rare `steal`.
//!
//! The Chase–Lev `pop` needs a full fence between its `bottom` store and its `top` load, and
//! `steal` one between its `top` and `bottom` loads: a pair of SeqCst fences (see `deque.rs`).
//! On Linux the pair can be made asymmetric (Dice, Huang, Yang, "Asymmetric Dekker
//! Synchronization", 2001; the `membarrier(2)` system call): [`light`] is a compiler fence
//! only, [`heavy`] is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, after which every thread
//! of the process has executed a full memory barrier at some point between the call's entry
//! and its return. Whatever point the owner's `pop` had reached then, either its `bottom` store
//! is visible to the thief's following `bottom` load, or its `top` load comes after the
//! thief's `top` load: the two cases that the proof with two SeqCst fences distinguishes. The
//! owner pops millions of times per second and a thief steals rarely, so the fence moves to
//! where it is cheap.
//!
//! Where `membarrier` is missing (old kernels, other systems) or under loom (which models
//! C11 fences, not the system call), both are SeqCst fences.

#[cfg(all(target_os = "linux", not(loom)))]
mod imp {
    use std::sync::atomic::{compiler_fence, fence, AtomicU8, Ordering};

    const MEMBARRIER_CMD_QUERY: libc::c_long = 0;
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    /// 0: not tried yet; 1: registered; 2: unavailable.
    static STATE: AtomicU8 = AtomicU8::new(0);

    fn membarrier(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: `membarrier` takes two integers and touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Registers the process for expedited barriers (once). Must run before any deque is
    /// shared: the choice between the asymmetric and the symmetric fences is made here, for the
    /// life of the process, before any thread uses either.
    pub fn init() {
        if STATE.load(Ordering::Acquire) != 0 {
            return;
        }
        let q = membarrier(MEMBARRIER_CMD_QUERY);
        let ok = q >= 0
            && q & MEMBARRIER_CMD_PRIVATE_EXPEDITED != 0
            && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
        // Release: pairs with the Acquire loads of `light`/`heavy`. Two threads racing here
        // compute the same answer.
        STATE.store(if ok { 1 } else { 2 }, Ordering::Release);
    }

    /// Whether the asymmetric fences are in use.
    #[inline]
    fn asymmetric() -> bool {
        // Acquire: pairs with `init`'s Release store (set before the pool's threads start,
        // which itself orders it; the Acquire keeps the argument local).
        STATE.load(Ordering::Acquire) == 1
    }

    /// The owner's side.
    #[inline]
    pub fn light() {
        if asymmetric() {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// The thieves' side.
    #[inline]
    pub fn heavy() {
        if asymmetric() {
            // Cannot fail once registered. If it did, no fence on this side could make up for
            // the owners' compiler fences: abort rather than run an unsound pair.
            if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 {
                std::process::abort();
            }
        } else {
            fence(Ordering::SeqCst);
        }
    }
}

#[cfg(not(all(target_os = "linux", not(loom))))]
mod imp {
    use fugue_sync::{fence, Ordering};

    /// Nothing to register.
    pub fn init() {}

    /// A SeqCst fence.
    #[inline]
    pub fn light() {
        fence(Ordering::SeqCst);
    }

    /// A SeqCst fence.
    #[inline]
    pub fn heavy() {
        fence(Ordering::SeqCst);
    }
}

pub use imp::{heavy, init, light};
