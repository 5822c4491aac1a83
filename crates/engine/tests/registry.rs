//! A kind registered at run time plays through every way in: the offline render (sequential,
//! the automatic choice, a static schedule on measured costs), the real-time run and the
//! host. The kind (`table`, from the `runtime_kind` example) carries state and reads a file
//! that the graph names relative to its own folder; the samples it plays are checked.

#[path = "../examples/runtime_kind/table.rs"]
mod table;

use std::path::{Path, PathBuf};
use std::time::Duration;

use fugue_engine::host::{Host, HostOptions, Mode};
use fugue_engine::{
    render, Backend, Costs, ExecutorChoice, Output, Registry, RenderOptions, RenderSummary,
    RunOptions,
};
use fugue_exec::ExecutorKind;

const RATE: u32 = 48_000;
const BLOCK: usize = 64;

/// The two tables: eight and five exact binary fractions, so that every product below is
/// exact.
const A: [f32; 8] = [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875];
const B: [f32; 5] = [-0.5, 0.25, -0.125, 0.0625, 1.0];

/// A fresh temporary folder holding a graph and its tables (one of them in a subfolder);
/// returns the folder and the graph's file.
fn setup(test: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("fugue-registry-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tables")).unwrap();
    let words = |t: &[f32]| t.iter().map(|x| format!("{x}\n")).collect::<String>();
    std::fs::write(dir.join("a.txt"), words(&A)).unwrap();
    std::fs::write(dir.join("tables/b.txt"), words(&B)).unwrap();
    let graph = dir.join("tables.ag");
    std::fs::write(
        &graph,
        "a = { kind: \"table\", file: \"a.txt\", volume: 0.5, };\n\
         b = { kind: \"table\", file: \"tables/b.txt\", };\n\
         g = { kind: \"gain\", gain: 2.0, };\n\
         s = { kind: \"sink\", in: 2, };\n\
         a.1 -> s.1; b.1 -> g.1 -> s.2;",
    )
    .unwrap();
    (dir, graph)
}

/// What the graph plays: channel 1 is table A at half volume, channel 2 table B doubled.
fn expected(frames: usize) -> Vec<Vec<f32>> {
    vec![
        (0..frames).map(|n| A[n % A.len()] * 0.5).collect(),
        (0..frames).map(|n| B[n % B.len()] * 2.0).collect(),
    ]
}

/// The built-in kinds and `table`.
fn registry() -> (Registry, std::sync::Arc<table::Tables>) {
    let mut reg = Registry::with_builtin_kinds();
    let tables = table::Tables::register(&mut reg);
    (reg, tables)
}

/// Renders 20 ms of `graph` with `executor` into a WAV file beside it; returns its channels.
fn rendered(graph: &Path, executor: ExecutorChoice, registry: Registry) -> Vec<Vec<f32>> {
    let (s, out) = rendered_for(graph, 0.02, executor, registry);
    assert_eq!(s.frames, 960);
    out
}

/// Renders `seconds` of `graph` with `executor` into a WAV file beside it; returns the
/// summary and the file's channels.
fn rendered_for(
    graph: &Path,
    seconds: f64,
    executor: ExecutorChoice,
    registry: Registry,
) -> (RenderSummary, Vec<Vec<f32>>) {
    let g = fugue_graph::read_file(graph, None).unwrap();
    let wav = graph.with_extension("wav");
    let s = render(
        &g,
        &RenderOptions {
            sample_rate: RATE,
            block: BLOCK,
            seconds: Some(seconds),
            output: Output::Wav(wav.clone()),
            executor,
            registry,
            ..RenderOptions::default()
        },
        |_| {},
    )
    .unwrap();
    assert!(s.panics.is_empty() && s.placeholders.is_empty(), "{s:?}");
    let out = fugue_testkit::wav::channels(&wav);
    (s, out)
}

#[test]
fn a_kind_registered_at_run_time_renders_its_file_beside_the_graph() {
    let (dir, graph) = setup("render");
    let (reg, tables) = registry();
    let out = rendered(&graph, ExecutorChoice::default(), reg);
    assert_eq!(out, expected(960));
    // Both files were found relative to the graph's folder, each read once.
    let files = tables.files();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0].starts_with(&dir) && files[0].ends_with("a.txt"));
    assert!(files[1].ends_with("tables/b.txt"));
    // Without the kind, the same graph is refused, naming it.
    let g = fugue_graph::read_file(&graph, None).unwrap();
    let e = render(&g, &RenderOptions::default(), |_| {}).unwrap_err();
    assert!(e.to_string().contains("unknown kind `table`"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kind_registered_at_run_time_plays_with_the_automatic_choice() {
    let (dir, graph) = setup("auto");
    let (reg, _) = registry();
    let auto = ExecutorChoice {
        auto: true,
        ..ExecutorChoice::default()
    };
    // Two seconds: long enough for the trials (on a machine of two cores or more).
    let (s, out) = rendered_for(&graph, 2.0, auto, reg);
    assert_eq!(out, expected(2 * RATE as usize));
    let report = s.auto.expect("the automatic choice reports");
    if report.untried.is_none() {
        // Every candidate ran the graph's nodes, built by the same registry.
        assert!(report.candidates.len() > 1, "{report:?}");
        assert!(report.candidates.iter().all(|c| c.cycles > 0), "{report:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_static_schedule_measures_the_costs_of_a_kind_registered_at_run_time() {
    let (dir, graph) = setup("static");
    let (reg, _) = registry();
    let measured = ExecutorChoice {
        kind: ExecutorKind::Static,
        threads: 2,
        costs: Costs::Measured,
        ..ExecutorChoice::default()
    };
    assert_eq!(rendered(&graph, measured, reg), expected(960));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kind_registered_at_run_time_runs_in_real_time() {
    let (dir, graph) = setup("run");
    let (reg, tables) = registry();
    let g = fugue_graph::read_file(&graph, None).unwrap();
    let report = fugue_engine::run(
        &g,
        &RunOptions {
            backend: Backend::Clocked {
                rate: RATE,
                block: BLOCK,
            },
            duration: Some(Duration::from_millis(20)),
            registry: reg,
            ..RunOptions::default()
        },
        |_| {},
    )
    .unwrap();
    assert!(report.cycles_run() > 0);
    assert!(report.panics.is_empty());
    assert_eq!(tables.files().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kind_registered_at_run_time_plays_in_the_host() {
    let (dir, graph) = setup("host");
    let (reg, _) = registry();
    const CYCLES: usize = 12;
    // Every mode; `separate` chooses each graph's executor by measuring it.
    for mode in Mode::ALL {
        let mut host = Host::with_registry(
            HostOptions {
                rate: RATE,
                block: BLOCK,
                threads: 2,
                mode,
                channels: 2,
                ..HostOptions::default()
            },
            reg.clone(),
        )
        .unwrap();
        host.load("tables", &graph).unwrap();
        let mut mix = vec![Vec::new(); 2];
        for _ in 0..CYCLES {
            host.run_cycles(1).unwrap();
            for (m, ch) in mix.iter_mut().zip(host.last_mix().unwrap()) {
                m.extend_from_slice(ch);
            }
        }
        assert_eq!(mix, expected(CYCLES * BLOCK), "{mode:?}");
        host.finish().unwrap();
    }
    // The host's default registry has the built-in kinds only.
    let mut host = Host::start(HostOptions::default()).unwrap();
    let e = host.load("tables", &graph).unwrap_err().to_string();
    assert!(e.contains("unknown kind `table`"), "{e}");
    host.finish().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
