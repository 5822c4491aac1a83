//! The study-spec reader on any text: an error or a spec, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = fugue_bench::study::spec::parse(text, "fuzz.toml");
    }
});
