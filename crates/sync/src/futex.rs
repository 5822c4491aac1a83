//! Sleeping on a 32-bit word.
//!
//! [`wait`] sleeps while the word holds an expected value; [`wake`] wakes threads sleeping on
//! it. Both return spuriously at will: every caller re-checks its condition in a loop. The
//! private variants serve words that only one process sees; [`wait_shared`] and
//! [`wake_shared`] serve words in memory shared between processes (the ordered ring's
//! control block), where the kernel keys the wait queue by the physical page.
//!
//! Under loom the futex is modelled by one mutex and one condition variable per model
//! execution: `wait` re-reads the word and sleeps under the lock, `wake` notifies every
//! sleeper under the lock. The model may wake more threads than asked (allowed: futex waits
//! return spuriously), and it never loses a wake-up that the kernel would deliver, so a
//! protocol that can lose one deadlocks in the model and loom reports it. A wait with a
//! timeout returns at once under loom (loom has no time); protocols whose correctness
//! rests on a wake-up must be modelled with untimed waits.

use std::time::Duration;

use crate::AtomicU32;
#[cfg(loom)]
use crate::Ordering;

/// Sleeps while `*word == expected`, at most `timeout` (forever when `None`). Returns on a
/// wake-up, on a changed value, on timeout or spuriously.
#[inline]
pub fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    imp::wait(word, expected, timeout, true);
}

/// Wakes up to `count` threads sleeping in [`wait`] on `word`.
#[inline]
pub fn wake(word: &AtomicU32, count: i32) {
    imp::wake(word, count, true);
}

/// Wakes every thread sleeping in [`wait`] on `word`: one system call.
#[inline]
pub fn wake_all(word: &AtomicU32) {
    imp::wake(word, i32::MAX, true);
}

/// [`wait`] on a word that other processes may wake (shared memory).
#[inline]
pub fn wait_shared(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    imp::wait(word, expected, timeout, false);
}

/// [`wake`] for words in shared memory.
#[inline]
pub fn wake_shared(word: &AtomicU32, count: i32) {
    imp::wake(word, count, false);
}

#[cfg(all(not(loom), target_os = "linux"))]
mod imp {
    use super::*;

    pub(super) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>, private: bool) {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        let op = if private {
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG
        } else {
            libc::FUTEX_WAIT
        };
        // SAFETY: `word.as_ptr()` points to a live, 4-byte-aligned u32 for the duration of
        // the call (we hold `&AtomicU32`); `ts_ptr` is null or points to `ts`, alive on this
        // frame. FUTEX_WAIT only reads both.
        unsafe {
            libc::syscall(libc::SYS_futex, word.as_ptr(), op, expected, ts_ptr);
        }
    }

    pub(super) fn wake(word: &AtomicU32, count: i32, private: bool) {
        let op = if private {
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG
        } else {
            libc::FUTEX_WAKE
        };
        // SAFETY: `word.as_ptr()` points to a live u32; FUTEX_WAKE does not access memory
        // through it, it only uses the address as the key of the wait queue.
        unsafe {
            libc::syscall(libc::SYS_futex, word.as_ptr(), op, count);
        }
    }
}

#[cfg(all(not(loom), not(target_os = "linux")))]
mod imp {
    use super::*;

    /// Portable fallback: a short sleep; the callers' loops re-check, so nothing is lost.
    pub(super) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>, _: bool) {
        if word.load(std::sync::atomic::Ordering::SeqCst) == expected {
            std::thread::sleep(
                timeout
                    .unwrap_or(Duration::from_micros(50))
                    .min(Duration::from_micros(50)),
            );
        }
    }

    /// Portable fallback: nothing to do, sleepers poll.
    pub(super) fn wake(_: &AtomicU32, _: i32, _: bool) {}
}

#[cfg(loom)]
mod imp {
    use super::*;

    loom::lazy_static! {
        static ref LOCK: loom::sync::Mutex<()> = loom::sync::Mutex::new(());
        static ref CV: loom::sync::Condvar = loom::sync::Condvar::new();
    }

    pub(super) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>, _: bool) {
        if timeout.is_some() {
            loom::thread::yield_now();
            return;
        }
        let g = LOCK.lock().unwrap();
        if word.load(Ordering::SeqCst) == expected {
            drop(CV.wait(g).unwrap());
        }
    }

    pub(super) fn wake(_: &AtomicU32, _: i32, _: bool) {
        let _g = LOCK.lock().unwrap();
        CV.notify_all();
    }
}

/// A 32-bit word to sleep on, with its private futex operations.
#[derive(Debug, Default)]
pub struct Futex {
    /// The word: the protocol that uses the futex decides what its values mean.
    pub word: AtomicU32,
}

impl Futex {
    /// A futex holding `v`.
    pub fn new(v: u32) -> Self {
        Futex {
            word: AtomicU32::new(v),
        }
    }

    /// Sleeps while the word equals `expected` (may return spuriously; callers loop).
    #[inline]
    pub fn wait(&self, expected: u32) {
        wait(&self.word, expected, None);
    }

    /// Sleeps while the word equals `expected`, for at most `timeout` (may return
    /// spuriously or early; callers loop and check the time).
    #[inline]
    pub fn wait_timeout(&self, expected: u32, timeout: Duration) {
        wait(&self.word, expected, Some(timeout));
    }

    /// Wakes every thread sleeping on the word: one system call.
    #[inline]
    pub fn wake_all(&self) {
        wake_all(&self.word);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_wakes_when_the_word_changes() {
        let f = Arc::new(Futex::new(0));
        let f2 = f.clone();
        let t = std::thread::spawn(move || {
            while f2.word.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                f2.wait(0);
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        f.word.store(1, std::sync::atomic::Ordering::SeqCst);
        f.wake_all();
        t.join().unwrap();
    }

    #[test]
    fn a_timed_wait_returns() {
        let w = AtomicU32::new(7);
        let t0 = std::time::Instant::now();
        wait_shared(&w, 7, Some(Duration::from_millis(10)));
        assert!(t0.elapsed() >= Duration::from_millis(5));
        // A wait on a value the word does not hold returns at once.
        wait(&w, 8, None);
        wake_shared(&w, 1);
    }
}
