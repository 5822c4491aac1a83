//! Thread placement: the one place where fugue pins threads to cores and asks for real-time
//! priority (SCHED_FIFO), where permitted. The executors' worker pool places its workers with
//! it; `fugue-engine` places the audio thread with it; the benchmarks pin their threads with it.

use thiserror::Error;

/// Why a thread could not be placed as asked. Placement is best effort: callers report the
/// error once and go on unplaced.
#[derive(Debug, Error)]
pub enum PlacementError {
    /// The core number is beyond what the system's CPU set can name.
    #[error("core {core} is out of range")]
    OutOfRange {
        /// The core asked for.
        core: usize,
    },
    /// The system refused to pin the thread.
    #[error("cannot pin a thread to core {core}: {source}")]
    Pin {
        /// The core asked for.
        core: usize,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The system refused real-time priority. The message does not name the priority, so
    /// that the refusals of the workers and of the audio thread (one above) read as one.
    #[error("real-time priority (SCHED_FIFO) was refused: {source}; running at normal priority (grant it with `ulimit -r` / limits.conf rtprio or CAP_SYS_NICE)")]
    Priority {
        /// The priority asked for.
        priority: i32,
        /// The system's reason.
        source: std::io::Error,
    },
}

/// How worker threads are placed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Pin thread `i` (0 = the audio thread, which pins itself only if asked here) to core
    /// `cores[i % cores.len()]`; empty = no pinning.
    pub cores: Vec<usize>,
    /// Run workers at this SCHED_FIFO priority (1-99); the audio thread is expected to run
    /// one above. `None` = normal scheduling.
    pub rt_priority: Option<i32>,
}

/// Pins the calling thread to `core`.
pub fn pin_current(core: usize) -> Result<(), PlacementError> {
    // Record the cores the process may use before this thread's set shrinks to one.
    let _ = allowed_cores();
    // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if core >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(PlacementError::OutOfRange { core });
    }
    // SAFETY: `core` is within the set's bit range (checked above).
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: pid 0 = this thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(PlacementError::Pin {
            core,
            source: std::io::Error::last_os_error(),
        })
    }
}

/// The calling thread's CPU set as it was before [`pin_current_for_now`] pinned it, put back
/// when dropped (on the same thread: the guard is not `Send`).
#[must_use = "the thread is unpinned when the guard is dropped"]
pub struct Unpin {
    set: libc::cpu_set_t,
    /// Not `Send`: the set is restored on the thread that was pinned.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Drop for Unpin {
    fn drop(&mut self) {
        // SAFETY: pid 0 = this thread (the guard cannot leave it); `set` is a valid
        // cpu_set_t of the size passed, read by sched_getaffinity.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.set) };
    }
}

/// Pins the calling thread to `core` until the returned guard is dropped, which puts back
/// the CPU set it had: for a thread that must stand where another one will run for a while
/// (the control thread measuring executors where the audio thread will play them).
pub fn pin_current_for_now(core: usize) -> Result<Unpin, PlacementError> {
    let set = current_set().map_err(|source| PlacementError::Pin { core, source })?;
    pin_current(core)?;
    Ok(Unpin {
        set,
        _thread: std::marker::PhantomData,
    })
}

/// Gives the calling thread SCHED_FIFO real-time priority `priority` (1-99). Fails when the
/// system refuses (no CAP_SYS_NICE / rtprio limit).
pub fn set_realtime_current(priority: i32) -> Result<(), PlacementError> {
    let param = libc::sched_param {
        sched_priority: priority.clamp(1, 99),
    };
    // SAFETY: `pthread_self()` is the calling thread; `param` is a valid sched_param.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(PlacementError::Priority {
            priority,
            source: std::io::Error::from_raw_os_error(r),
        })
    }
}

/// Number of cores this process may use at once: the cores it may run on
/// ([`allowed_cores`]), or fewer under a CPU quota (a container's `--cpus`, a cgroup's
/// `cpu.max`), which lets the process run only so many threads' worth of time: more threads
/// than the quota would take turns, a cycle waiting for one that is not running.
pub fn available_cores() -> usize {
    machine().0.len().min(machine().1).max(1)
}

/// The cores this process may run on, in increasing order: the affinity set of the first
/// thread that asked (or pinned itself), recorded once, so that pinning a thread to one core
/// does not make the process look like a one-core machine to the threads created after.
pub fn allowed_cores() -> &'static [usize] {
    &machine().0
}

/// The cores this process may run on and the parallelism the system grants it (the
/// standard library's count, which a CPU quota lowers), both read once, by the first thread
/// that asked.
fn machine() -> &'static (Vec<usize>, usize) {
    static MACHINE: std::sync::OnceLock<(Vec<usize>, usize)> = std::sync::OnceLock::new();
    MACHINE.get_or_init(|| {
        let granted = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = current_set().map(|s| cores_of(&s)).unwrap_or_default();
        if cores.is_empty() {
            ((0..granted).collect(), granted)
        } else {
            (cores, granted)
        }
    })
}

/// The calling thread's CPU set.
fn current_set() -> std::io::Result<libc::cpu_set_t> {
    // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 = this thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r == 0 {
        Ok(set)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The cores in `set`, in increasing order.
fn cores_of(set: &libc::cpu_set_t) -> Vec<usize> {
    // SAFETY: `c` is within the set's bit range.
    (0..8 * std::mem::size_of::<libc::cpu_set_t>())
        .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cores the calling thread may run on now.
    fn current() -> Vec<usize> {
        cores_of(&current_set().unwrap())
    }

    #[test]
    fn a_thread_pinned_for_now_gets_its_cores_back() {
        // A thread of its own: the test harness's thread keeps its set whatever happens.
        std::thread::spawn(|| {
            let before = current();
            let core = *before.last().unwrap();
            {
                let _unpin = pin_current_for_now(core).unwrap();
                assert_eq!(current(), vec![core]);
            }
            assert_eq!(current(), before);
        })
        .join()
        .unwrap();
    }
}
