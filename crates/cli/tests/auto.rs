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
