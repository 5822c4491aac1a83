//! Denormal numbers off while a plan runs.
//!
//! A float below about 1.2e-38 (`f32::MIN_POSITIVE`) is *denormal*: x86 processors compute
//! with it through a microcode assist that can cost a hundred cycles per operation. Audio
//! meets such values all the time (a decaying tail, a long chain of ring modulators whose
//! product shrinks towards zero) and cannot hear them (they lie more than 700 dB below full
//! scale), so audio engines flush them to zero. Every thread that runs tasks of a plan does
//! so with the processor's flush-to-zero and denormals-are-zero modes on (x86-64: MXCSR bits
//! FTZ and DAZ; AArch64: FPCR bit FZ): the executors' workers from their start, the calling
//! thread for the length of each cycle ([`FlushDenormals`], which puts the caller's mode back
//! afterwards). A node's cost no longer depends on how small its signal happens to be, and
//! every thread computes the same bits (the parallel executors still match `seq` exactly).

/// While alive, the calling thread flushes denormal results and inputs to zero; dropping it
/// restores the thread's previous mode. Costs two register reads and writes; never
/// allocates, locks or blocks. Nesting is allowed.
#[must_use = "the mode is restored when the guard is dropped"]
pub struct FlushDenormals {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    saved: u64,
}

impl FlushDenormals {
    /// Turns flushing on for the calling thread until the guard is dropped.
    #[inline]
    pub fn new() -> FlushDenormals {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        {
            let saved = mode::get();
            mode::set(saved | mode::FLUSH);
            FlushDenormals { saved }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        FlushDenormals {}
    }
}

impl Default for FlushDenormals {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for FlushDenormals {
    #[inline]
    fn drop(&mut self) {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        mode::set(self.saved);
    }
}

/// Turns flushing on for the rest of the calling thread's life (for threads the executors
/// own).
pub fn flush_denormals_on_this_thread() {
    std::mem::forget(FlushDenormals::new());
}

/// Whether the calling thread flushes denormals now.
pub fn flushing() -> bool {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        mode::get() & mode::FLUSH == mode::FLUSH
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    false
}

#[cfg(target_arch = "x86_64")]
mod mode {
    /// MXCSR bits 15 (flush to zero) and 6 (denormals are zero).
    pub(super) const FLUSH: u64 = 0x8040;

    #[inline]
    pub(super) fn get() -> u64 {
        let mut csr: u32 = 0;
        // SAFETY: `stmxcsr` stores the 32-bit MXCSR register into the given, valid and
        // writable `u32`; it has no other effect.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags))
        };
        u64::from(csr)
    }

    #[inline]
    pub(super) fn set(v: u64) {
        let csr = v as u32;
        // SAFETY: `ldmxcsr` loads MXCSR from the given `u32`, which holds a value read from
        // MXCSR with only the FTZ and DAZ bits changed (both defined on every x86-64
        // processor); it changes the floating-point mode of this thread only.
        unsafe {
            std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags, readonly))
        };
    }
}

#[cfg(target_arch = "aarch64")]
mod mode {
    /// FPCR bit 24 (flush to zero, inputs and outputs).
    pub(super) const FLUSH: u64 = 1 << 24;

    #[inline]
    pub(super) fn get() -> u64 {
        let v: u64;
        // SAFETY: reading FPCR has no effect besides the read.
        unsafe {
            std::arch::asm!("mrs {}, fpcr", out(reg) v, options(nomem, nostack, preserves_flags))
        };
        v
    }

    #[inline]
    pub(super) fn set(v: u64) {
        // SAFETY: writes FPCR with a value read from it with only bit FZ changed; it changes
        // the floating-point mode of this thread only.
        unsafe {
            std::arch::asm!("msr fpcr, {}", in(reg) v, options(nomem, nostack, preserves_flags))
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_flushes_and_restores() {
        let before = flushing();
        let tiny = std::hint::black_box(f32::MIN_POSITIVE);
        {
            let _g = FlushDenormals::new();
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            {
                assert!(flushing());
                // A denormal result becomes zero.
                assert_eq!(std::hint::black_box(tiny) / 4.0, 0.0);
            }
        }
        assert_eq!(flushing(), before);
        if !before {
            assert!(std::hint::black_box(tiny) / 4.0 > 0.0);
        }
    }
}
