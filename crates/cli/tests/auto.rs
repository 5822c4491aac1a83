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
    assert!(line.contains("seq "), "{line}");
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
