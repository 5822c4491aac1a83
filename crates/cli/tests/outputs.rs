//! Output paths that are not plain new files: devices, named pipes, directories, symbolic
//! links, the command's own input, names at the file-name limit, and the temporary files of
//! dead processes. Every command that writes a file goes through the same checks.

mod common;

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::{example, fugue, stderr};

fn folder(name: &str) -> PathBuf {
    common::folder("outputs-cli", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The files in `dir`, hidden ones included, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Every command that writes a file, with `OUT` where the output path goes and `G` for the
/// input graph (a copy in the test's folder).
const WRITERS: &[&[&str]] = &[
    &["render", "G", "-o", "OUT", "--seconds", "0.05", "--force"],
    &["calibrate", "G", "--cycles", "5", "-o", "OUT", "--force"],
    &["schedule", "G", "--gantt", "OUT", "--force"],
    &["dot", "G", "-o", "OUT", "--force"],
    &["gen", "line", "--nodes", "3", "-o", "OUT", "--force"],
    &[
        "run",
        "G",
        "--backend",
        "clocked",
        "--seconds",
        "0.05",
        "--stats",
        "OUT",
        "--force",
    ],
];

fn args<'a>(cmd: &[&'a str], graph: &'a str, out: &'a str) -> Vec<&'a str> {
    cmd.iter()
        .map(|&a| match a {
            "G" => graph,
            "OUT" => out,
            a => a,
        })
        .collect()
}

fn graph_in(d: &Path) -> PathBuf {
    let g = d.join("g.ag");
    std::fs::copy(example("rake.ag"), &g).unwrap();
    g
}

/// `/dev/full` is written into, never replaced, by every command (as root, a rename onto it
/// would succeed): each fails with one sentence naming it and saying the disk is full.
#[test]
fn a_device_is_written_not_replaced() {
    if !is_root() {
        common::skip(
            "a_device_is_written_not_replaced",
            "needs root (a rename onto /dev/full only succeeds as root)",
        );
        return;
    }
    let d = folder("device");
    let g = graph_in(&d);
    for cmd in WRITERS {
        let o = fugue(&args(cmd, s(&g), "/dev/full"));
        let meta = std::fs::symlink_metadata("/dev/full").unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "{cmd:?} replaced /dev/full"
        );
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("/dev/full") && e.contains("the disk is full"),
            "{cmd:?}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{cmd:?}: {e}");
    }
    // /dev/null takes the output and stays what it is; no --force needed.
    let o = fugue(&["render", s(&g), "-o", "/dev/null", "--seconds", "0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(meta.file_type().is_char_device());
    assert_eq!(listing(&d), ["g.ag"]);
}

/// A named pipe gets the WAV written into it, for a reader at the other end; it stays a pipe.
#[test]
fn a_named_pipe_is_written_into() {
    let d = folder("fifo");
    let g = graph_in(&d);
    let fifo = d.join("player");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = fugue(&["render", s(&g), "-o", s(&fifo), "--seconds", "0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = reader.join().unwrap();
    assert_eq!(&bytes[..4], b"RIFF");
    // 0.05 s at 48 kHz: 2400 frames of 32-bit samples, at least one channel.
    assert!(bytes.len() > 2400 * 4, "{}", bytes.len());
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(meta.file_type().is_fifo());
}

/// A directory is said to be one, with or without --force, for every command.
#[test]
fn a_directory_is_named_as_one() {
    let d = folder("dir");
    let g = graph_in(&d);
    let sub = d.join("sub.wav");
    std::fs::create_dir(&sub).unwrap();
    for cmd in WRITERS {
        let o = fugue(&args(cmd, s(&g), s(&sub)));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {e}");
        assert!(e.contains("is a directory"), "{cmd:?}: {e}");
        assert!(!e.contains("already exists"), "{cmd:?}: {e}");
        assert!(sub.is_dir());
    }
}

/// A name ending with `/` whose folder does not exist is refused by every command before its
/// work (calibrate measured every cycle, then failed with "Not a directory").
#[test]
fn a_name_ending_with_a_slash_is_no_file() {
    let d = folder("slash");
    let g = graph_in(&d);
    let missing = format!("{}/", d.join("newdir").display());
    for cmd in WRITERS {
        let o = fugue(&args(cmd, s(&g), &missing));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {e}");
        assert!(
            e.contains(&format!(
                "cannot write {missing}: a name that ends with / names a folder, and there is none; name a file"
            )),
            "{cmd:?}: {e}"
        );
        assert!(!d.join("newdir").exists(), "{cmd:?}");
    }
}

/// A symbolic link to nothing is refused, with and without --force; a link to a file stays
/// a link and the file it points to is replaced.
#[test]
fn symbolic_links() {
    let d = folder("links");
    let g = graph_in(&d);
    let link = d.join("out.wav");
    std::os::unix::fs::symlink("missing.wav", &link).unwrap();
    for force in [false, true] {
        let mut a = vec!["render", s(&g), "-o", s(&link), "--seconds", "0.05"];
        if force {
            a.push("--force");
        }
        let o = fugue(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            e.contains("out.wav is a symbolic link to missing.wav, which does not exist"),
            "{e}"
        );
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!d.join("missing.wav").exists());
    }
    let target = d.join("real.wav");
    std::fs::write(&target, "old").unwrap();
    let good = d.join("good.wav");
    std::os::unix::fs::symlink("real.wav", &good).unwrap();
    let o = fugue(&["render", s(&g), "-o", s(&good), "--seconds", "0.05"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already exists; pass --force"));
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&good),
        "--seconds",
        "0.05",
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&good)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(&std::fs::read(&target).unwrap()[..4], b"RIFF");
}

/// The output cannot be one of the command's inputs, even with --force, under any name.
#[test]
fn the_input_is_not_overwritten() {
    let d = folder("input");
    let g = graph_in(&d);
    let before = std::fs::read(&g).unwrap();
    let hard = d.join("alias.wav");
    std::fs::hard_link(&g, &hard).unwrap();
    for out in [&g, &hard] {
        for cmd in [
            &["render", "G", "-o", "OUT", "--seconds", "0.05", "--force"][..],
            &["calibrate", "G", "--cycles", "5", "-o", "OUT", "--force"][..],
            &["dot", "G", "-o", "OUT", "--force"][..],
        ] {
            let o = fugue(&args(cmd, s(&g), s(out)));
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{cmd:?}: {e}");
            assert!(e.contains("is the input file"), "{cmd:?}: {e}");
        }
    }
    assert_eq!(std::fs::read(&g).unwrap(), before);
    // The input WAV of a render, too.
    let wav = d.join("in.wav");
    let o = fugue(&["render", s(&g), "-o", s(&wav), "--seconds", "0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let echo = example("echo.ag");
    let o = fugue(&[
        "render",
        &echo,
        "--input",
        s(&wav),
        "-o",
        s(&wav),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    // `-o -` with standard output opened on the input WAV or on the graph (`>> in.wav`,
    // `1<> graph.ag`): refused, neither file touched.
    let wav_before = std::fs::read(&wav).unwrap();
    for (onto, input) in [(&wav, &wav), (&g, &wav)] {
        let before = std::fs::read(onto).unwrap();
        let out = std::fs::OpenOptions::new().append(true).open(onto).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args([
                "render",
                s(&g),
                "--input",
                s(input),
                "-o",
                "-",
                "--seconds",
                "0.05",
            ])
            .stdout(out)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            e.contains(&format!(
                "standard output is the input file {}",
                onto.display()
            )),
            "{e}"
        );
        assert_eq!(std::fs::read(onto).unwrap(), before);
    }
    assert_eq!(std::fs::read(&wav).unwrap(), wav_before);
}

/// `run --stats` never replaces the costs file the run reads, even with --force; and a
/// `--profile` folder that is, or would write, another output of the command is refused
/// before the run, even with --force, while an output that merely lies in it is fine.
#[test]
fn the_costs_file_and_the_profile_folder_are_not_other_outputs() {
    let d = folder("costs-profile");
    let g = graph_in(&d);
    let costs = d.join("costs.csv");
    std::fs::write(&costs, "osc1,5\n").unwrap();
    let o = fugue(&[
        "run",
        s(&g),
        "--backend",
        "clocked",
        "-e",
        "static",
        "--seconds",
        "0.02",
        "--costs",
        s(&costs),
        "--stats",
        s(&costs),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&costs).unwrap(), "osc1,5\n");
    // Refused before the run, as a usage error, saying `said`.
    let refused = |o: &std::process::Output, said: &str| {
        let e = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(said), "{e}");
    };
    let pd = d.join("pd");
    std::fs::create_dir(&pd).unwrap();
    let stats = pd.join("nodes.csv");
    let profile = format!("--profile={}", s(&pd));
    let o = fugue(&[
        "run",
        s(&g),
        "--backend",
        "clocked",
        "-e",
        "seq",
        "--seconds",
        "0.02",
        "--stats",
        s(&stats),
        &profile,
        "--force",
    ]);
    refused(&o, "is a file of the report and also the command's output");
    assert!(!stats.exists());
    let same = d.join("same.wav");
    let o = fugue(&[
        "render",
        s(&g),
        "--seconds",
        "0.01",
        "-o",
        s(&same),
        &format!("--profile={}", s(&same)),
        "--force",
    ]);
    refused(&o, "is the report's folder and also the command's output");
    assert!(!same.exists());
    let inside = pd.join("out.wav");
    let o = fugue(&[
        "render",
        s(&g),
        "--seconds",
        "0.01",
        "-o",
        s(&inside),
        &profile,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(inside.is_file() && pd.join("profile.txt").is_file());
}

/// A name of 255 bytes (the limit of most file systems) can be written: the temporary name
/// is short whatever the final one.
#[test]
fn names_at_the_length_limit() {
    let d = folder("long");
    let g = graph_in(&d);
    for len in [244, 250, 255] {
        let name = format!("{}.wav", "n".repeat(len - 4));
        let o = fugue(&[
            "render",
            s(&g),
            "-o",
            s(&d.join(&name)),
            "--seconds",
            "0.05",
        ]);
        assert!(o.status.success(), "{len}: {}", stderr(&o));
        assert!(d.join(&name).is_file());
        let name = format!("{}.ag", "m".repeat(len - 3));
        let o = fugue(&["gen", "line", "--nodes", "3", "-o", s(&d.join(&name))]);
        assert!(o.status.success(), "{len}: {}", stderr(&o));
    }
    assert!(listing(&d).iter().all(|n| !n.ends_with(".part")));
}

/// The temporary files that dead processes left (in the current naming and in the older
/// `.NAME.PID.part` one) are removed by the next write into the folder; a live process's
/// are not.
#[test]
fn stale_temporary_files_are_removed() {
    let d = folder("stale");
    let g = graph_in(&d);
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let live = std::process::id();
    let old = SystemTime::now() - Duration::from_secs(600);
    let names = [
        format!(".fugue-{dead}-0.part"),
        format!(".fugue-{dead}-3.part.svg"),
        format!(".out.wav.{dead}.part"),
        format!(".fugue-{live}-0.part"),
    ];
    for n in &names {
        let f = std::fs::File::create(d.join(n)).unwrap();
        f.set_modified(old).unwrap();
    }
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&d.join("out.wav")),
        "--seconds",
        "0.05",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let left = listing(&d);
    assert_eq!(
        left,
        [names[3].clone(), "g.ag".into(), "out.wav".into()],
        "{left:?}"
    );
}

/// The benchmarks that write a results folder refuse it before they run (a run may take
/// minutes): files of an earlier run without `--force`, and a path that is a file.
#[test]
fn bench_results_folders_are_refused_before_the_run() {
    let d = folder("bench-before");
    let old = d.join("old");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("README.md"), "earlier").unwrap();
    let file = d.join("afile");
    std::fs::write(&file, "x").unwrap();
    let under = file.join("sub");
    let rake = example("rake.ag");
    let dangling = d.join("dangling");
    let _ = std::fs::remove_file(&dangling);
    std::os::unix::fs::symlink("/nonexistent/folder", &dangling).unwrap();
    for (out, force, want) in [
        (
            &old,
            false,
            "README.md already exists; pass --force to overwrite it",
        ),
        (&file, true, "afile exists and is not a folder"),
        (&under, true, "afile/sub: "),
        (&dangling, true, "which does not exist; name a folder"),
    ] {
        for bench in [
            vec!["bench", "host", "--graphs", "rateau101", "--instances", "1"],
            vec!["bench", "faust", "--seconds", "1"],
            vec![
                "bench",
                "table",
                "--shapes",
                "gen:line:3",
                "--buffers",
                "64",
                "--seconds",
                "0.01",
                "--runs",
                "1",
                "--executors",
                "ws",
            ],
            vec!["profile", rake.as_str(), "--seconds", "0.05"],
        ] {
            // The profile refuses only its own files in a folder, and a file or a dangling
            // link where its folder goes in words of its own.
            if bench[0] == "profile" && out != &under {
                continue;
            }
            let mut a = bench.clone();
            a.extend(["-o", out.to_str().unwrap()]);
            if force {
                a.push("--force");
            }
            let t = std::time::Instant::now();
            let o = fugue(&a);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{a:?}: {e}");
            assert!(e.contains(want), "{a:?}: {e}");
            assert!(t.elapsed() < Duration::from_secs(5), "{a:?} ran first");
        }
    }
    assert_eq!(std::fs::read(old.join("README.md")).unwrap(), b"earlier");
}

/// `-o /dev/stdout` with standard output a pipe (its link's target, `pipe:[N]`, is no path):
/// written into the pipe, by every command that writes a file.
#[test]
fn dev_stdout_as_a_pipe_is_written_into() {
    let rake = example("rake.ag");
    let rake = rake.as_str();
    for args in [
        vec!["dot", rake, "-o", "/dev/stdout"],
        vec!["gen", "line", "-n", "3", "-o", "/dev/stdout"],
        vec!["render", rake, "-o", "/dev/stdout", "--seconds", "0.01"],
    ] {
        // `Output` pipes standard output.
        let o = fugue(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
}

/// A point the host refuses (partitioned mode with more graphs than threads) is listed once
/// in the study's README, however many repeats ran.
#[test]
fn bench_host_lists_a_refused_point_once() {
    let d = folder("bench-host-refused");
    let out = d.join("study");
    let o = fugue(&[
        "bench",
        "host",
        "--graphs",
        "gen:line:3",
        "--threads",
        "1",
        "--instances",
        "1,2",
        "--modes",
        "partitioned",
        "--offline-only",
        "--offline-seconds",
        "0.02",
        "--repeats",
        "3",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    let refused: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains("partitioned, N=2"))
        .collect();
    assert_eq!(refused.len(), 1, "{readme}");
}

/// A file replaced with `--force` keeps its permissions (a private file stays private), and
/// an existing file named for another format is refused for its name first, with or
/// without `--force` (the same sentence: `--force` would not mend it), and left as it was.
#[test]
fn a_replaced_file_keeps_its_mode_and_a_misnamed_one_is_said_first() {
    use std::os::unix::fs::PermissionsExt as _;
    let d = folder("mode");
    let g = graph_in(&d);
    let out = d.join("private.wav");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&out),
        "--seconds",
        "0.05",
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(meta.len() > 44);
    // A new file gets what the umask leaves (the temporary file it was is private).
    let fresh = d.join("fresh.wav");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 027 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_fugue"))
        .args(["render", s(&g), "-o", s(&fresh), "--seconds", "0.05"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    let txt = d.join("notes.txt");
    std::fs::write(&txt, "mine").unwrap();
    for force in [false, true] {
        let mut a = vec!["render", s(&g), "-o", s(&txt), "--seconds", "0.05"];
        if force {
            a.push("--force");
        }
        let o = fugue(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains("render writes WAV files only"), "{e}");
        assert_eq!(std::fs::read_to_string(&txt).unwrap(), "mine");
    }
}
