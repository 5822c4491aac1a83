//! The two fences of the deque's store-load race, as a type parameter of [`Deque`](super::Deque).
//!
//! The Chase–Lev `pop` needs a full fence between its `bottom` store and its `top` load, and
//! `steal` one between its `top` and `bottom` loads: a pair of SeqCst fences. [`Symmetric`]
//! is that pair. [`Asymmetric`] makes it asymmetric on Linux (Dice, Huang, Yang, "Asymmetric
//! Dekker Synchronization", 2001; the `membarrier(2)` system call): the owner's half is a
//! compiler fence only, the thief's half is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`,
//! after which every thread of the process has executed a full memory barrier at some point
//! between the call's entry and its return. Whatever point the owner's `pop` had reached then,
//! either its `bottom` store is visible to the thief's following `bottom` load, or its `top`
//! load comes after the thief's `top` load: the two cases that the proof with two SeqCst
//! fences distinguishes. An owner that pops millions of times per second and thieves that
//! steal rarely move the fence to where it is cheap; a real-time thread, which must make no
//! system call, steals through [`Symmetric`].
//!
//! Where `membarrier` is missing (old kernels, other systems) or under loom (which models
//! C11 fences, not the system call), both halves of [`Asymmetric`] are SeqCst fences.

use crate::{fence, Ordering};

/// The fence pair of a deque: [`light`](Self::light) on the owner's `pop`,
/// [`heavy`](Self::heavy) on a thief's `steal`. Together they must act as two SeqCst fences.
pub trait Fences {
    /// Prepares the pair; called by every deque constructor, before the deque is shared.
    fn init() {}
    /// The owner's half, between `pop`'s `bottom` store and `top` load.
    fn light();
    /// The thief's half, between `steal`'s `top` and `bottom` loads.
    fn heavy();
}

/// Two SeqCst fences: no system call, the same cost on both sides.
#[derive(Debug)]
pub enum Symmetric {}

impl Fences for Symmetric {
    #[inline(always)]
    fn light() {
        fence(Ordering::SeqCst);
    }

    #[inline(always)]
    fn heavy() {
        fence(Ordering::SeqCst);
    }
}

/// A compiler fence for the owner and a `membarrier` system call for the thief, where the
/// kernel offers it; two SeqCst fences elsewhere (see the module documentation).
#[derive(Debug)]
pub enum Asymmetric {}

impl Fences for Asymmetric {
    fn init() {
        imp::init();
    }

    #[inline(always)]
    fn light() {
        imp::light();
    }

    #[inline(always)]
    fn heavy() {
        imp::heavy();
    }
}

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

    /// Registers the process for expedited barriers (once). Runs before any deque is shared:
    /// the choice between the asymmetric and the symmetric fences is made here, for the life
    /// of the process, before any thread uses either.
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
        // Acquire: pairs with `init`'s Release store (made before the deque is shared, which
        // itself orders it; the Acquire keeps the argument local).
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
            // Cannot fail once registered, unless the process forbade the call since (a
            // seccomp filter installed after the first deque). No fence on this side could
            // then make up for the owners' compiler fences: say why, and abort rather than
            // run an unsound pair.
            if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 {
                const WHY: &[u8] = b"fugue: the membarrier system call failed after this process registered for it (a seccomp filter installed since?); the work-stealing deques' fences would no longer be sound, so the process stops; install such a filter before the first pool starts, or use a pool policy without them (the C API: FUGUE_POOL_POLICY=steal-mutex)\n";
                // SAFETY: `WHY` is a valid buffer of its length; write(2) on standard error
                // touches no memory of ours.
                unsafe { libc::write(2, WHY.as_ptr().cast(), WHY.len()) };
                std::process::abort();
            }
        } else {
            fence(Ordering::SeqCst);
        }
    }
}

#[cfg(not(all(target_os = "linux", not(loom))))]
mod imp {
    use crate::{fence, Ordering};

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
