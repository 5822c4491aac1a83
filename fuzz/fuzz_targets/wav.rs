//! The `--input` WAV reader on any bytes: an error or the channels, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = fugue_engine::read_wav(data, 48_000);
});
