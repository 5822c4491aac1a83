//! `--executor auto`: says what it chose, and the audio is seq's.

use std::process::Command;

fn fugue(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn auto_says_what_it_chose_and_renders_seqs_audio() {
    let dir = std::env::temp_dir().join(format!("fugue-auto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/synth.ag");
    let (a, s) = (dir.join("auto.wav"), dir.join("seq.wav"));
    let o = fugue(&[
        "render",
        graph,
        "-o",
        a.to_str().unwrap(),
        "--seconds",
        "0.5",
        "--executor",
        "auto",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("fugue: executor auto: chose "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("chose seq, "), "{line}");
    let o = fugue(&[
        "render",
        graph,
        "-o",
        s.to_str().unwrap(),
        "--seconds",
        "0.5",
    ]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&s).unwrap());
    let o = fugue(&["render", graph, "-o", "-", "--executor", "autox"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(", auto"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--json`: one JSON object, whose `auto` holds the choice, its reason and every
/// candidate's figure, consistent with the executor that played.
#[test]
fn json_reports_carry_the_choice_and_every_candidate() {
    if fugue_exec::placement::available_cores() < 2 {
        eprintln!("SKIPPED json_reports_carry_the_choice_and_every_candidate: one core, where auto has one candidate");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fugue-auto-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rake.ag");
    let check = |v: &serde_json::Value| {
        let a = &v["auto"];
        let cands = a["candidates"].as_array().unwrap();
        assert!(cands.len() >= 2, "{v}");
        assert_eq!(cands[0]["label"], "seq", "{v}");
        let chosen = cands
            .iter()
            .find(|c| c["label"] == a["chose"])
            .unwrap_or_else(|| panic!("the chosen candidate is listed: {v}"));
        for c in cands {
            assert!(c["mean_us"].as_f64().unwrap() > 0.0, "{v}");
            assert!(c["cycles"].as_u64().unwrap() >= 12, "{v}");
        }
        assert_eq!(v["executor"], chosen["kind"], "{v}");
        assert_eq!(v["threads"], chosen["threads"], "{v}");
        assert!(!a["why"].as_str().unwrap().is_empty(), "{v}");
    };
    let wav = dir.join("r.wav");
    let o = fugue(&[
        "render",
        graph,
        "-o",
        wav.to_str().unwrap(),
        "--seconds",
        "60",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["frames"], 60 * 48_000, "{v}");
    assert_eq!(v["auto"]["paced"], false, "{v}");
    check(&v);
    let o = fugue(&[
        "run",
        graph,
        "--backend",
        "clocked",
        "--buffer",
        "256",
        "--seconds",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["buffer"], 256, "{v}");
    assert!(v["cycles"].as_u64().unwrap() > 100, "{v}");
    assert_eq!(v["auto"]["paced"], true, "{v}");
    check(&v);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The words with every run of whitespace made one space (help text is wrapped).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rule of the automatic choice is said in the same words by the README, the documents
/// and every command's help, and those words are the code's ([`fugue_engine::auto::RULE`],
/// whose figure a unit test ties to `MIN_GAIN`).
#[test]
fn the_rule_of_the_choice_is_described_one_way_everywhere() {
    let rule = fugue_engine::auto::RULE;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    for doc in ["README.md", "docs/executors.md", "docs/host.md"] {
        let text = flat(&std::fs::read_to_string(format!("{root}/{doc}")).unwrap());
        assert!(text.contains(rule), "{doc} does not say: {rule}");
        assert!(!text.contains("3 % over seq"), "{doc}");
        assert!(!text.contains("gains 5 %"), "{doc}");
    }
    for cmd in ["render", "run", "host"] {
        let o = fugue(&[cmd, "--help"]);
        let text = flat(&String::from_utf8_lossy(&o.stdout));
        assert!(
            text.contains(rule),
            "fugue {cmd} --help does not say: {rule}"
        );
    }
}

/// A render too short to measure the candidates keeps seq and says so in one line, also
/// without `--executor auto` and without `--json`.
#[test]
fn a_run_too_short_to_measure_says_that_it_kept_seq() {
    if fugue_exec::placement::available_cores() < 2 {
        eprintln!("SKIPPED a_run_too_short_to_measure_says_that_it_kept_seq: one core");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fugue-auto-short-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rake.ag");
    let wav = dir.join("short.wav");
    let o = fugue(&[
        "render",
        graph,
        "-o",
        wav.to_str().unwrap(),
        "--seconds",
        "0.05",
        "--force",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("executor auto"))
        .collect();
    assert_eq!(
        lines,
        ["fugue: executor auto: chose seq, the run is too short to measure the others"],
        "{err}"
    );
    // And a run as short, in real time.
    let o = fugue(&["run", graph, "--backend", "clocked", "--seconds", "0.02"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("fugue: executor auto: chose seq, the run is too short to measure the others"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// In real time, auto's trials take no longer than the run they delay (its untimed cycles
/// counted too): `run --seconds 0.5` with auto reports trials of at most 0.5 s.
#[test]
fn autos_trials_take_no_longer_than_the_run() {
    for seconds in ["0.2", "0.5"] {
        let o = fugue(&[
            "run",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/synth.ag"),
            "--backend",
            "clocked",
            "--seconds",
            seconds,
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        let report: serde_json::Value =
            serde_json::from_str(out.lines().last().unwrap_or_default()).unwrap();
        let trials = report["auto"]["trials_s"].as_f64().unwrap();
        let limit: f64 = seconds.parse().unwrap();
        assert!(trials <= limit, "{seconds} s: trials {trials} s: {report}");
    }
}
