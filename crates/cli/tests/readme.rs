//! The README's commands run as written: the first command's render, every line of the tour
//! and of "Real time", with the built `fugue` first on `PATH`, in a fresh folder that holds
//! the checkout's `examples/`. Lines marked `(JACK)`, `(corpus)` or `(minutes)` are left out
//! and counted, and so is the line that runs the test suite itself.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a README line may take here.
const LIMIT: Duration = Duration::from_secs(180);

/// A command of the README: its text and the comment lines that follow it.
struct Line {
    text: String,
    notes: String,
}

/// The fenced `sh` blocks of `readme` in the section whose heading is `heading` (the first
/// block of the file for an empty heading).
fn blocks(readme: &str, heading: &str) -> Vec<Vec<Line>> {
    let section = if heading.is_empty() {
        readme.split("\n## ").next().unwrap()
    } else {
        readme
            .split("\n## ")
            .find(|s| s.starts_with(heading))
            .unwrap_or_else(|| panic!("the README has no section `{heading}`"))
    };
    let mut out = Vec::new();
    let mut rest = section;
    while let Some(i) = rest.find("```sh\n") {
        let body = &rest[i + 6..];
        let end = body.find("```").expect("a closed block");
        let mut lines: Vec<Line> = Vec::new();
        for l in body[..end].lines() {
            if l.trim().is_empty() {
                continue;
            }
            if l.starts_with(char::is_whitespace) && l.trim_start().starts_with('#') {
                lines.last_mut().expect("a command").notes.push_str(l);
            } else {
                lines.push(Line {
                    text: l.to_string(),
                    notes: String::new(),
                });
            }
        }
        out.push(lines);
        rest = &body[end + 3..];
    }
    out
}

/// Why `line` is left out, if it is.
fn left_out(line: &Line) -> Option<&'static str> {
    let all = format!("{} {}", line.text, line.notes);
    [
        ("(JACK)", "need a JACK server"),
        ("(sound)", "need a sound card or a sound server"),
        ("(corpus)", "need the reference corpus"),
        ("(minutes)", "take minutes"),
    ]
    .into_iter()
    .find(|(mark, _)| all.contains(mark))
    .map(|(_, why)| why)
}

/// Runs `script` with bash in `dir`, the built `fugue` first on `PATH`; panics with its
/// output when it fails or takes longer than [`LIMIT`].
fn run(script: &str, dir: &Path) {
    let bin = Path::new(env!("CARGO_BIN_EXE_fugue")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (out, err) = (dir.join(".out"), dir.join(".err"));
    let mut child = Command::new("bash")
        .args(["-o", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env_remove(common::FAULT_VAR)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("run bash");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = || {
        format!(
            "{}{}",
            std::fs::read_to_string(&out).unwrap_or_default(),
            std::fs::read_to_string(&err).unwrap_or_default()
        )
    };
    match status {
        Some(s) if s.success() => {}
        Some(s) => panic!("README: `{script}` failed ({s}):\n{}", said()),
        None => panic!("README: `{script}` took more than {LIMIT:?}:\n{}", said()),
    }
}

#[test]
fn the_readmes_commands_run_as_written() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = common::folder("readme", "tour");
    std::os::unix::fs::symlink(
        root.join("examples").canonicalize().unwrap(),
        dir.join("examples"),
    )
    .unwrap();
    let mut skipped: BTreeMap<&str, Vec<String>> = BTreeMap::new();

    // The first command installs the binary, then renders: its render runs here.
    let first = &blocks(&readme, "")[0];
    assert!(
        first[0]
            .text
            .contains("cargo install --path crates/cli --locked && fugue render "),
        "the README's first command must install fugue: {}",
        first[0].text
    );
    let mut ran = 0;
    for part in first[0]
        .text
        .split(" && ")
        .filter(|p| p.starts_with("fugue "))
    {
        run(part, &dir);
        ran += 1;
    }
    assert_eq!(ran, 1);
    assert!(dir.join("pluck.wav").is_file());
    for l in &first[1..] {
        skipped
            .entry("run the test suite itself")
            .or_default()
            .push(l.text.clone());
    }

    for heading in ["A tour of the commands", "Real time"] {
        let lines: Vec<Line> = blocks(&readme, heading).into_iter().flatten().collect();
        assert!(lines.len() >= 5, "{heading}: {} lines", lines.len());
        for l in &lines {
            match left_out(l) {
                Some(why) => skipped.entry(why).or_default().push(l.text.clone()),
                None => {
                    run(&l.text, &dir);
                    ran += 1;
                }
            }
        }
    }
    // What the tour's lines wrote.
    for f in [
        "synth.wav",
        "rake.wav",
        "echo.wav",
        "pluck.svg",
        "rake8.ag",
        "costs.csv",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    assert!(dir.join("rake-profile").is_dir());
    assert!(ran >= 15, "{ran} lines ran");
    for (why, lines) in &skipped {
        common::skip(
            "the_readmes_commands_run_as_written",
            &format!("{} README lines left out: they {why}", lines.len()),
        );
    }
    // The lines left out are few, and each kind is one the README names.
    assert!(
        skipped.values().map(Vec::len).sum::<usize>() <= 14,
        "{skipped:?}"
    );
}
