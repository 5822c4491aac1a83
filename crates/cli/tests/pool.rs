//! `fugue pool` (the demos) and `fugue bench pool` through the binary, scaled down: every
//! policy sorts, the pictures decode, bad input is one sentence with exit code 2, and the
//! benchmark writes its folder with every result checked.

mod common;

use common::{fugue, stderr};
use std::path::Path;

fn folder(name: &str) -> std::path::PathBuf {
    common::folder("pool-cli", name)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit code 2, one line on standard error starting with `error:` or `fugue:`, no panic.
fn assert_usage(args: &[&str], expect: &str) {
    let o = fugue(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: `{expect}` not in: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn quicksort_under_every_policy_and_serially() {
    for policy in [
        "lifo-mutex",
        "lifo-spin",
        "steal-mutex",
        "steal-backoff-shared",
        "steal-backoff-local",
        "steal-condvar",
        "steal",
    ] {
        for threads in ["1", "3"] {
            let o = fugue(&[
                "pool",
                "quicksort",
                "-n",
                "200000",
                "--policy",
                policy,
                "--threads",
                threads,
            ]);
            assert!(o.status.success(), "{policy}: {}", stderr(&o));
            let out = stdout(&o);
            assert!(
                out.contains(&format!("policy {policy} with {threads} thread")),
                "{out}"
            );
            assert!(
                out.contains("sorted and checked") && out.contains("tasks"),
                "{out}"
            );
        }
    }
    let o = fugue(&["pool", "quicksort", "-n", "1000", "--serial"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("the sequential program"));
    // A run of a few milliseconds gives no cores-busy figure (the process's CPU time over
    // such a span said 3.07 cores for the sequential program on 2 cores).
    let out = stdout(&o);
    let wall: f64 = out
        .split(" s on the sequential program")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    // (The wall time is printed to the millisecond: at 20 ms either may be said.)
    if (wall - 0.02).abs() > 0.001 {
        assert_eq!(
            out.contains("too short a run to say how many cores were busy"),
            wall < 0.02,
            "{out}"
        );
    }
}

#[test]
fn pictures_are_written_and_decode() {
    let dir = folder("pictures");
    let m = dir.join("m.png");
    let o = fugue(&[
        "pool",
        "mandelbrot",
        "--width",
        "120",
        "--height",
        "80",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info = png::Decoder::new(std::fs::File::open(&m).unwrap())
        .read_info()
        .unwrap()
        .info()
        .clone();
    assert_eq!((info.width, info.height), (120, 80));

    let g = dir.join("v.gif");
    let o = fugue(&[
        "pool",
        "voronoi",
        "--width",
        "90",
        "--height",
        "60",
        "--seeds",
        "12",
        "--frames",
        "5",
        "--algorithm",
        "pixel",
        "-o",
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut dec = gif::DecodeOptions::new()
        .read_info(std::fs::File::open(&g).unwrap())
        .unwrap();
    let mut frames = 0;
    while dec.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    assert_eq!(frames, 5);

    let seq = dir.join("s.png");
    let o = fugue(&[
        "pool",
        "voronoi",
        "--width",
        "50",
        "--height",
        "40",
        "--frames",
        "3",
        "-o",
        seq.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for i in 1..=3 {
        assert!(dir.join(format!("s-000{i}.png")).exists());
    }
    // No temporary file left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".part")), "{names:?}");

    // An existing picture is kept without --force, replaced with it.
    let before = std::fs::read(&m).unwrap();
    assert_usage(
        &[
            "pool",
            "mandelbrot",
            "--width",
            "10",
            "--height",
            "10",
            "-o",
            m.to_str().unwrap(),
        ],
        "already exists; pass --force",
    );
    assert_eq!(std::fs::read(&m).unwrap(), before);
    let o = fugue(&[
        "pool",
        "mandelbrot",
        "--width",
        "10",
        "--height",
        "10",
        "-o",
        m.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read(&m).unwrap(), before);
}

#[test]
fn bad_input_is_one_sentence_and_exit_2() {
    assert_usage(
        &["pool", "quicksort", "--policy", "fifo"],
        "unknown pool policy `fifo`; the policies are: lifo-mutex",
    );
    assert_usage(&["pool", "quicksort", "--threads", "0"], "--threads");
    assert_usage(
        &["pool", "quicksort", "--threads", "-2"],
        "must be at least 1 (got -2)",
    );
    assert_usage(
        &["pool", "quicksort", "--threads", "two"],
        "`two` is not a whole number",
    );
    assert_usage(
        &["pool", "quicksort", "--threads", "100000"],
        "more than the limit",
    );
    assert_usage(
        &["pool", "quicksort", "-n", "0"],
        "must be at least 1 (got 0)",
    );
    assert_usage(
        &["pool", "quicksort", "-n", "-5"],
        "must be at least 1 (got -5)",
    );
    assert_usage(&["pool", "mandelbrot", "--width", "0"], "--width");
    assert_usage(
        &[
            "pool",
            "mandelbrot",
            "--width",
            "30000",
            "--height",
            "30000",
        ],
        "more than the",
    );
    assert_usage(&["pool", "mandelbrot", "-o", "x.jpg"], "name the file .png");
    assert_usage(
        &["pool", "voronoi", "--algorithm", "fast"],
        "unknown Voronoi algorithm `fast`",
    );
    assert_usage(
        &["pool", "voronoi", "-o", "x.bmp"],
        "PNG (.png) or animated GIF (.gif)",
    );
    assert_usage(&["pool", "voronoi", "--seeds", "0"], "--seeds");
    assert_usage(&["pool", "voronoi", "--frames", "0"], "--frames");
    assert_usage(
        &["bench", "pool", "--policies", "steal,nope"],
        "unknown pool policy `nope`",
    );
    assert_usage(&["bench", "pool", "--threads", "0"], "--threads");
    assert_usage(
        &["bench", "pool", "--threads", "5000"],
        "more than the pool's limit",
    );
    assert_usage(&["bench", "pool", "--runs", "0"], "--runs");
    let o = fugue(&["pool", "voronoi", "-o", "/nonexistent-folder/v.png"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
}

#[test]
fn bench_pool_writes_its_folder() {
    let dir = folder("bench");
    let out = dir.join("b");
    let o = fugue(&[
        "bench",
        "pool",
        "--scale",
        "64",
        "--runs",
        "2",
        "--threads",
        "1,2",
        "--policies",
        "steal,steal-mutex,lifo-mutex",
        "--idle-ms",
        "20",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("quicksort: `steal` on 2 threads at least 1.7x"),
        "{text}"
    );
    assert!(text.contains("every result checked"), "{text}");
    for f in [
        "raw.csv",
        "summary.csv",
        "idle.csv",
        "README.md",
        "time.svg",
        "time.png",
        "speedup.svg",
        "speedup.png",
        "steals.svg",
        "steals.png",
        "cpu.svg",
        "cpu.png",
    ] {
        let p = out.join(f);
        assert!(
            p.metadata().map(|m| m.len() > 0).unwrap_or(false),
            "{f} missing"
        );
    }
    let raw = std::fs::read_to_string(out.join("raw.csv")).unwrap();
    // 2 repeats x 4 workloads x (serial + (rayon + 3 policies) x 2 thread counts).
    assert_eq!(raw.lines().count(), 1 + 2 * 4 * (1 + 4 * 2), "{raw}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("spawn-tree,steal,2,2,")),
        "{summary}"
    );
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("## Targets at 2 threads") && readme.contains("![time](time.png)"));
    assert!(
        readme.contains("## Speed-up against threads")
            && readme.contains("![speedup](speedup.png)"),
        "{readme}"
    );
    // The folder is not overwritten without --force.
    assert_usage(
        &[
            "bench",
            "pool",
            "--scale",
            "64",
            "--runs",
            "1",
            "-o",
            out.to_str().unwrap(),
        ],
        "already exists; pass --force",
    );
    assert!(Path::new(&out.join("raw.csv")).exists());
}

/// Without `--threads`, the benchmark runs 1, 2, 4, ... threads up to the machine's cores.
#[test]
fn bench_pool_threads_default_to_the_cores() {
    let dir = folder("bench-default-threads");
    let out = dir.join("b");
    let o = fugue(&[
        "bench",
        "pool",
        "--scale",
        "1024",
        "--runs",
        "1",
        "--policies",
        "steal",
        "--workloads",
        "spawn-tree",
        "--idle-ms",
        "10",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut expected = vec![1usize];
    while expected.last().unwrap() * 2 < cores {
        expected.push(expected.last().unwrap() * 2);
    }
    if cores > 1 {
        expected.push(cores);
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut seen: Vec<usize> = summary
        .lines()
        .filter(|l| l.starts_with("spawn-tree,steal,"))
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, expected, "{summary}");
}
