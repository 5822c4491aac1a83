//! The machine's memory as the limits on what foreign processors allocate for themselves
//! (and on what a host's graphs take together) see it.

/// Half the machine's memory, and half the process's address space where it is limited
/// (`ulimit -v`): `usize::MAX` where neither can be read.
pub fn half_of_memory() -> usize {
    // SAFETY: sysconf and getrlimit only read; `lim` is a valid out-pointer.
    let (phys, space) = unsafe {
        let pages = libc::sysconf(libc::_SC_PHYS_PAGES);
        let size = libc::sysconf(libc::_SC_PAGESIZE);
        let phys = if pages > 0 && size > 0 {
            (pages as u64).saturating_mul(size as u64)
        } else {
            u64::MAX
        };
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let space = if libc::getrlimit(libc::RLIMIT_AS, &mut lim) == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
        {
            lim.rlim_cur
        } else {
            u64::MAX
        };
        (phys, space)
    };
    usize::try_from((phys / 2).min(space / 2)).unwrap_or(usize::MAX)
}

/// Bytes in words, as messages about memory say them (the plan compiler's, a plugin's):
/// whole KiB below a MiB, else whole MiB (rounded up).
pub fn size_in_words(bytes: usize) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    } else {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    }
}

/// The process's virtual size in bytes (`/proc/self/statm`'s first field): what it has
/// mapped, touched or not, so that a block that a foreign processor allocates and has not
/// written yet counts too. `None` where it cannot be read (not Linux). Allocates (reads a
/// file): control thread only.
pub fn virtual_size() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = text.split_ascii_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf only reads.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().map(|p| pages.saturating_mul(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_virtual_size_grows_with_a_mapping() {
        let Some(before) = virtual_size() else {
            return;
        };
        // 64 MiB, never written: counted all the same.
        let block: Vec<u8> = Vec::with_capacity(64 << 20);
        let after = virtual_size().unwrap();
        assert!(after >= before + (60 << 20), "{before} -> {after}");
        drop(block);
        assert!(half_of_memory() > 0);
    }
}
