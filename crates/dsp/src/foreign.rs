//! Integer divisions by zero in foreign code (Faust programs, LV2 plugins).
//!
//! On x86-64 an integer division by zero, or of the lowest integer by -1, traps: the kernel
//! sends SIGFPE, whose default action ends the process (a render without a word, a host with
//! every graph it plays). Faust's `%` and integer `/` compile to such divisions, and a
//! parameter within its range can make the divisor 0 (`ba.pulse(n)` at `n = 0`); a plugin's
//! C code can do the same. A foreign processor calls its code through [`guarded`]: there, a
//! division that traps is taken as giving 0 (quotient and remainder), the code goes on after
//! it, and `guarded` returns how many divisions trapped, for the processor to report. Outside
//! `guarded`, and for a SIGFPE that is not such a division (one sent by `kill`), the signal
//! gets the action it had before [`install`].
//!
//! Other architectures (aarch64) do not trap: the division gives 0 there, and is not counted.

use std::cell::Cell;

thread_local! {
    /// 0 outside [`guarded`]; inside, 1 + the divisions that trapped.
    static GUARD: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` (a call into foreign code) with its integer divisions that trap taken as giving
/// 0; returns its result and how many there were (0 unless [`install`] was called). Never
/// allocates, locks or blocks: a thread-local word written before and after.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> (R, u32) {
    /// Puts back the outer call's count (nested calls), also when `f` unwinds.
    struct Restore(u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            GUARD.with(|g| g.set(self.0));
        }
    }
    let restore = Restore(GUARD.with(|g| g.replace(1)));
    let r = f();
    let traps = GUARD.with(|g| g.get()).saturating_sub(1);
    drop(restore);
    (r, traps)
}

/// Installs the SIGFPE handler that [`guarded`] needs, once per process (later calls return
/// at once). Call it where foreign code is loaded or instantiated, off the audio thread.
pub fn install() {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    trap::install();
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod trap {
    use std::sync::{Once, OnceLock};

    use super::GUARD;

    /// `si_code` of a SIGFPE for an integer division by zero, and for an integer overflow
    /// (Linux's `<asm-generic/siginfo.h>`; the libc crate does not name them).
    const FPE_INTDIV: libc::c_int = 1;
    const FPE_INTOVF: libc::c_int = 2;

    /// SIGFPE's action before [`install`], given back for a signal that is not ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub(super) fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: zeroed `sigaction` structures are valid (no handler, empty mask);
            // `on_sigfpe` has the three-argument signature that SA_SIGINFO asks for.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_sigfpe as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                // The previous action is stored before the handler can run.
                libc::sigaction(libc::SIGFPE, std::ptr::null(), &mut old);
                let _ = PREVIOUS.set(old);
                libc::sigaction(libc::SIGFPE, &new, std::ptr::null_mut());
            }
        });
    }

    /// The handler: a division that trapped inside [`super::guarded`] is stepped over with
    /// its results set to 0 and counted; anything else gets the previous action: a handler
    /// of before is called; the default action (the process ends) is given back, and meets
    /// the trapping instruction run again on return, or a sent signal raised again; a sent
    /// signal ignored before stays ignored.
    extern "C" fn on_sigfpe(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // The guard is a const-initialised thread-local without a destructor: reading it is
        // a load from the thread's block, safe in a handler.
        let inside = GUARD.with(|g| g.get());
        // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
        let code = unsafe { (*info).si_code };
        let ours = inside > 0
            && (code == FPE_INTDIV || code == FPE_INTOVF)
            // SAFETY: as above; the context is the trapping thread's, which this handler runs
            // on, and its instruction pointer points into mapped, executable code.
            && unsafe { step_over_division(ctx.cast()) };
        if ours {
            GUARD.with(|g| g.set(inside.saturating_add(1)));
            return;
        }
        // A signal another process (or `raise`) sent: `si_code` SI_USER, SI_QUEUE, ... (0 or
        // less); a fault of an instruction has a positive code.
        let sent = code <= 0;
        let previous = PREVIOUS.get().map_or(libc::SIG_DFL, |p| p.sa_sigaction);
        match previous {
            libc::SIG_IGN if sent => {}
            libc::SIG_DFL | libc::SIG_IGN => {
                // SAFETY: `signal` and `raise` are async-signal-safe. A fault that is not ours
                // cannot be ignored (the instruction would trap again forever): the default
                // action ends the process, as without this handler.
                unsafe {
                    libc::signal(libc::SIGFPE, libc::SIG_DFL);
                    if sent {
                        // Pending while this handler runs (SIGFPE is blocked in it), taken
                        // by the default action on return.
                        libc::raise(libc::SIGFPE);
                    }
                }
            }
            handler => {
                let flags = PREVIOUS.get().map_or(0, |p| p.sa_flags);
                // SAFETY: the previous action's handler, installed by the program for SIGFPE
                // with these flags: called as the kernel would have called it.
                unsafe {
                    if flags & libc::SA_SIGINFO != 0 {
                        let h: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(handler);
                        h(sig, info, ctx);
                    } else {
                        let h: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                        h(sig);
                    }
                }
            }
        }
    }

    /// The operand width of a division.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Width {
        /// `div/idiv r/m8`: AX by the operand, quotient in AL, remainder in AH.
        Byte,
        /// With the 0x66 prefix: DX:AX.
        Word,
        /// EDX:EAX (results zero-extended into RDX and RAX).
        Double,
        /// With REX.W: RDX:RAX.
        Quad,
    }

    /// The length and width of the `div` or `idiv` instruction whose bytes `at` reads, or
    /// `None` when it is not one: legacy prefixes, an optional REX prefix, opcode F6 or F7
    /// with ModRM's reg field 6 (div) or 7 (idiv), then the ModRM's SIB byte and
    /// displacement. Bytes are read in order and only as far as needed: up to the opcode for
    /// another instruction, to the end of a division; never past 15 (an instruction's most).
    pub(super) fn decode(at: impl Fn(usize) -> u8) -> Option<(usize, Width)> {
        let byte = |i: usize| (i < 15).then(|| at(i));
        let mut i = 0;
        let mut word = false;
        loop {
            match byte(i)? {
                0x66 => word = true,
                0x67 | 0xF0 | 0xF2 | 0xF3 | 0x2E | 0x36 | 0x3E | 0x26 | 0x64 | 0x65 => {}
                _ => break,
            }
            i += 1;
        }
        let mut quad = false;
        let b = byte(i)?;
        if (0x40..=0x4F).contains(&b) {
            quad = b & 0x08 != 0;
            i += 1;
        }
        let width = match byte(i)? {
            0xF6 => Width::Byte,
            0xF7 if quad => Width::Quad,
            0xF7 if word => Width::Word,
            0xF7 => Width::Double,
            _ => return None,
        };
        i += 1;
        let modrm = byte(i)?;
        i += 1;
        if !matches!((modrm >> 3) & 7, 6 | 7) {
            return None;
        }
        let (md, rm) = (modrm >> 6, modrm & 7);
        if md != 3 && rm == 4 {
            let sib = byte(i)?;
            i += 1;
            if md == 0 && sib & 7 == 5 {
                i += 4;
            }
        }
        i += match (md, rm) {
            (0, 5) => 4,
            (1, _) => 1,
            (2, _) => 4,
            _ => 0,
        };
        (i <= 15).then_some((i, width))
    }

    /// Steps over the division at the context's instruction pointer, its quotient and
    /// remainder set to 0; `false` (nothing changed) when the instruction is not a division.
    ///
    /// # Safety
    /// `uc` is the context the kernel passed to the handler of a SIGFPE that this thread's
    /// instruction raised.
    unsafe fn step_over_division(uc: *mut libc::ucontext_t) -> bool {
        // SAFETY: the caller's contract: a live context of this thread.
        let regs = unsafe { &mut (*uc).uc_mcontext.gregs };
        let rip = regs[libc::REG_RIP as usize] as *const u8;
        // SAFETY: `decode` reads the instruction's bytes in order, and no further than the
        // opcode of one that is not a division: every byte read belongs to the instruction
        // that trapped, which was fetched, so it is mapped.
        let Some((len, width)) = decode(|i| unsafe { rip.add(i).read_volatile() }) else {
            return false;
        };
        let (rax, rdx) = (libc::REG_RAX as usize, libc::REG_RDX as usize);
        match width {
            Width::Byte => regs[rax] &= !0xFFFF,
            Width::Word => {
                regs[rax] &= !0xFFFF;
                regs[rdx] &= !0xFFFF;
            }
            Width::Double | Width::Quad => {
                regs[rax] = 0;
                regs[rdx] = 0;
            }
        }
        regs[libc::REG_RIP as usize] += len as i64;
        true
    }

    #[cfg(test)]
    mod tests {
        use super::{decode, Width};

        fn at(bytes: &[u8]) -> Option<(usize, Width)> {
            // Reading past the bytes given fails the test: decode reads no further than the
            // instruction.
            decode(|i| bytes[i])
        }

        #[test]
        fn divisions_are_decoded_with_their_lengths() {
            // idiv ecx; div rcx; idiv r9d; idiv cl; idiv cx
            assert_eq!(at(&[0xF7, 0xF9]), Some((2, Width::Double)));
            assert_eq!(at(&[0x48, 0xF7, 0xF1]), Some((3, Width::Quad)));
            assert_eq!(at(&[0x41, 0xF7, 0xF9]), Some((3, Width::Double)));
            assert_eq!(at(&[0xF6, 0xF9]), Some((2, Width::Byte)));
            assert_eq!(at(&[0x66, 0xF7, 0xF9]), Some((3, Width::Word)));
            // idiv dword [rbp-8]; idiv dword [rsp+0x10] (SIB); idiv dword [rip+disp32];
            // idiv qword [rax+rbx*4+0x12345678]; idiv dword [disp32] (SIB, no base)
            assert_eq!(at(&[0xF7, 0x7D, 0xF8]), Some((3, Width::Double)));
            assert_eq!(at(&[0xF7, 0x7C, 0x24, 0x10]), Some((4, Width::Double)));
            assert_eq!(at(&[0xF7, 0x3D, 1, 2, 3, 4]), Some((6, Width::Double)));
            assert_eq!(
                at(&[0x48, 0xF7, 0xBC, 0x98, 0x78, 0x56, 0x34, 0x12]),
                Some((8, Width::Quad))
            );
            assert_eq!(
                at(&[0xF7, 0x3C, 0x25, 1, 2, 3, 4]),
                Some((7, Width::Double))
            );
        }

        #[test]
        fn other_instructions_are_not_divisions() {
            // neg ecx (F7 /3); mul ecx (F7 /4); nop; ret
            assert_eq!(at(&[0xF7, 0xD9]), None);
            assert_eq!(at(&[0xF7, 0xE1]), None);
            assert_eq!(at(&[0x90]), None);
            assert_eq!(at(&[0xC3]), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{guarded, install};

    /// `idiv` of `a` by `b` in 32 bits, as foreign code divides (no check for 0 before it).
    #[cfg(target_arch = "x86_64")]
    fn idiv32(a: i32, b: i32) -> (i32, i32) {
        let (q, r): (i32, i32);
        // SAFETY: a plain division; with `b == 0` it traps, which the tests run guarded.
        unsafe {
            std::arch::asm!("cdq", "idiv {b:e}", b = in(reg) b, inout("eax") a => q, out("edx") r)
        };
        (q, r)
    }

    /// `div` of `a` by the 64-bit word at `b` (a memory operand).
    #[cfg(target_arch = "x86_64")]
    fn div64_mem(a: u64, b: &u64) -> (u64, u64) {
        let (q, r): (u64, u64);
        // SAFETY: as above; `b` points to a live word.
        unsafe {
            std::arch::asm!("xor edx, edx", "div qword ptr [{b} + 8*{z}]", b = in(reg) b as *const u64, z = in(reg) 0usize, inout("rax") a => q, out("rdx") r)
        };
        (q, r)
    }

    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn a_division_by_zero_gives_zero_and_is_counted() {
        install();
        let ((q, r), traps) = guarded(|| idiv32(7, std::hint::black_box(0)));
        assert_eq!((q, r, traps), (0, 0, 1));
        let ((q, r), traps) = guarded(|| idiv32(i32::MIN, std::hint::black_box(-1)));
        assert_eq!((q, r, traps), (0, 0, 1));
        let zero = std::hint::black_box(0u64);
        let (v, traps) = guarded(|| {
            let a = div64_mem(9, &zero);
            let b = idiv32(-9, std::hint::black_box(2));
            let c = idiv32(5, std::hint::black_box(0));
            (a, b, c)
        });
        assert_eq!(v, ((0, 0), (-4, -1), (0, 0)));
        assert_eq!(traps, 2);
        // Nested: each call counts its own.
        let ((inner, outer_after), traps) = guarded(|| {
            let ((), inner) = guarded(|| {
                idiv32(1, std::hint::black_box(0));
            });
            idiv32(1, std::hint::black_box(0));
            idiv32(1, std::hint::black_box(0));
            (inner, ())
        });
        assert_eq!((inner, outer_after, traps), (1, (), 2));
        // Divisions that do not trap are not counted.
        let (v, traps) = guarded(|| idiv32(100, std::hint::black_box(7)));
        assert_eq!((v, traps), ((14, 2), 0));
    }

    #[test]
    fn nothing_is_counted_without_a_trap() {
        let (v, traps) = guarded(|| 6 * 7);
        assert_eq!((v, traps), (42, 0));
    }
}
