//! The host's command parser on any line: a command or one line of error, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        if let Err(msg) = fugue_engine::host::command::parse(line) {
            assert!(!msg.contains('\n'), "{msg}");
        }
    }
});
