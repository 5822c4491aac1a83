//! Thread placement: pinning to cores and real-time priority (SCHED_FIFO), where permitted.

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

/// Pins the calling thread to `core`. Returns an error text when the system refuses.
pub fn pin_current(core: usize) -> Result<(), String> {
    // Record the cores the process may use before this thread's set shrinks to one.
    let _ = allowed_cores();
    // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if core >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(format!("core {core} is out of range"));
    }
    // SAFETY: `core` is within the set's bit range (checked above).
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: pid 0 = this thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "cannot pin a thread to core {core}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Gives the calling thread SCHED_FIFO real-time priority `priority` (1-99).
/// Returns an error text when the system refuses (no CAP_SYS_NICE / rtprio limit).
pub fn set_realtime_current(priority: i32) -> Result<(), String> {
    let param = libc::sched_param {
        sched_priority: priority.clamp(1, 99),
    };
    // SAFETY: `pthread_self()` is the calling thread; `param` is a valid sched_param.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "real-time priority (SCHED_FIFO {priority}) was refused: {}; running at normal priority (grant it with `ulimit -r` / limits.conf rtprio or CAP_SYS_NICE)",
            std::io::Error::from_raw_os_error(r)
        ))
    }
}

/// Number of cores this process may run on.
pub fn available_cores() -> usize {
    allowed_cores().len()
}

/// The cores this process may run on, in increasing order: the affinity set of the first
/// thread that asked (or pinned itself), recorded once, so that pinning a thread to one core
/// does not make the process look like a one-core machine to the threads created after.
pub fn allowed_cores() -> &'static [usize] {
    static CORES: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    CORES.get_or_init(|| {
        // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: pid 0 = this thread; `set` is a valid cpu_set_t of the size passed.
        let r =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        let bits = 8 * std::mem::size_of::<libc::cpu_set_t>();
        let cores: Vec<usize> = if r == 0 {
            // SAFETY: `c` is within the set's bit range.
            (0..bits)
                .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
                .collect()
        } else {
            Vec::new()
        };
        if cores.is_empty() {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        } else {
            cores
        }
    })
}
