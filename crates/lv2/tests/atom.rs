//! A plugin with an atom (MIDI) input, that requires `urid:map`: an instrument given an empty
//! event sequence every cycle plays nothing, and runs.

mod common;

use fugue_engine::{render, ExecutorChoice, Output, RenderOptions};

#[test]
fn an_instrument_with_a_midi_input_runs_on_empty_sequences() {
    let text = "p = { kind: \"lv2\", uri: \"http://drobilla.net/plugins/mda/EPiano\", };\n\
                s = { kind: \"sink\", in: 2, }; p.1 -> s.1; p.2 -> s.2;";
    let graph = fugue_graph::read::ag::parse(text, "epiano.ag").unwrap();
    if !common::installed(
        "an_instrument_with_a_midi_input_runs_on_empty_sequences",
        &graph,
    ) {
        return;
    }
    let p = fugue_lv2::plugins()
        .unwrap()
        .iter()
        .find(|p| p.uri.ends_with("mda/EPiano"))
        .unwrap();
    assert!(p
        .ports
        .iter()
        .any(|q| q.kind == fugue_lv2::PortKind::Atom && q.input));
    assert!(p
        .required_features
        .iter()
        .any(|f| f == fugue_lv2::uris::URID_MAP));
    let wav = std::env::temp_dir().join(format!("fugue-lv2-epiano-{}.wav", std::process::id()));
    let s = render(
        &graph,
        &RenderOptions {
            sample_rate: 48_000,
            block: 128,
            seconds: Some(0.1),
            output: Output::Wav(wav.clone()),
            executor: ExecutorChoice::default(),
            registry: common::registry(),
            ..RenderOptions::default()
        },
        |_| {},
    )
    .unwrap();
    assert!(s.panics.is_empty(), "{s:?}");
    let out = fugue_testkit::wav::channels(&wav);
    assert_eq!(out.len(), 2);
    assert!(
        out.iter().flatten().all(|x| *x == 0.0),
        "no note was sent, yet the piano played"
    );
    let _ = std::fs::remove_file(&wav);
}
