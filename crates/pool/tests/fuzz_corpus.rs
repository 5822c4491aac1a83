//! Replays the fuzzing corpus of the C ABI's argument checks (`fuzz/corpus/pool_ffi`, kept by
//! `scripts/fuzz.sh`) on stable, decoded as `fuzz/fuzz_targets/pool_ffi.rs` decodes it.

use std::ffi::c_void;
use std::path::Path;

use fugue_pool::ffi::{sched_init, sched_spawn, scheduler, TaskFunc};

unsafe extern "C" fn spawn_null(_c: *mut c_void, s: *mut scheduler) {
    // SAFETY: `s` is the scheduler of the running pool; a null function is refused.
    let r = unsafe { sched_spawn(None, std::ptr::null_mut(), s) };
    assert_eq!(r, -1);
}

unsafe extern "C" fn nothing(_c: *mut c_void, _s: *mut scheduler) {}

#[test]
fn the_pool_ffi_corpus_runs_without_crash() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/pool_ffi");
    let mut n = 0;
    for e in std::fs::read_dir(&d).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        n += 1;
        if data.len() < 9 {
            continue;
        }
        let nthreads = i32::from(data[0] as i8 >> 4);
        let qlen = i32::from_le_bytes([data[1], data[2], data[3], data[4]]);
        let f: TaskFunc = match data[5] % 3 {
            0 => None,
            1 => Some(nothing),
            _ => Some(spawn_null),
        };
        // SAFETY: the task functions only use their scheduler, as the contract allows.
        let _ = unsafe { sched_init(nthreads, qlen, f, std::ptr::null_mut()) };
        // SAFETY: a null scheduler is refused before it is used.
        let r = unsafe { sched_spawn(Some(nothing), std::ptr::null_mut(), std::ptr::null_mut()) };
        assert_eq!(r, -1);
    }
    assert!(n > 0);
}
