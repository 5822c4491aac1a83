//! The C ABI's argument checks (`sched_init`, `sched_spawn`): arguments from the input, the
//! task function null or not; an error code or a finished pool, never a crash.
#![no_main]

use std::ffi::c_void;

use fugue_pool::ffi::{sched_init, sched_spawn, scheduler};

unsafe extern "C" fn spawn_null(_c: *mut c_void, s: *mut scheduler) {
    // SAFETY: `s` is the scheduler of the running pool; a null function is refused.
    let r = unsafe { sched_spawn(None, std::ptr::null_mut(), s) };
    assert_eq!(r, -1);
}

unsafe extern "C" fn nothing(_c: *mut c_void, _s: *mut scheduler) {}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    // Threads: -8..=7 (a real pool starts threads, so few); queue length: any i32.
    let nthreads = i32::from(data[0] as i8 >> 4);
    let qlen = i32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let f: fugue_pool::ffi::TaskFunc = match data[5] % 3 {
        0 => None,
        1 => Some(nothing),
        _ => Some(spawn_null),
    };
    // SAFETY: the task functions satisfy the contract (they only use their scheduler).
    let _ = unsafe { sched_init(nthreads, qlen, f, std::ptr::null_mut()) };
    // SAFETY: a null scheduler is refused before it is used.
    assert_eq!(unsafe { sched_spawn(Some(nothing), std::ptr::null_mut(), std::ptr::null_mut()) }, -1);
});
