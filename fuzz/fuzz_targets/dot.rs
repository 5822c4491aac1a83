//! The .dot reader on any bytes: an error or a graph, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = fugue_graph::read::read_bytes(data, fugue_graph::Format::Dot, "fuzz.dot");
});
