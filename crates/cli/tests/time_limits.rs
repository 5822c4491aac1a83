//! `fugue schedule --time-limit` bounds every algorithm (the heuristics fall back to HLFET or
//! are left out, and say so), and `fugue dot` stops Graphviz after `--timeout` with a warning
//! about the size first. The bounds asserted are generous (1.5 x the limit + 3 s): they test
//! the guarantee, not the speed.

mod common;

use std::time::{Duration, Instant};

use common::{folder, fugue, stderr, stdout};

/// A line of 10,000 nodes in a fresh folder (CPFD alone takes far longer than 2 s on it).
fn line(name: &str) -> String {
    let d = folder("time_limits", name);
    let g = d.join("line.ag");
    let o = fugue(&["gen", "line", "-n", "10000", "-o", g.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    g.to_str().unwrap().to_string()
}

#[test]
fn every_algorithm_keeps_the_time_limit() {
    let g = line("algorithms");
    let limit = 2.0;
    for algo in ["cpfd", "best", "optimal", "etf"] {
        let start = Instant::now();
        let o = fugue(&["schedule", &g, "-a", algo, "-p", "2", "--time-limit", "2"]);
        let took = start.elapsed();
        assert!(o.status.success(), "{algo}: {}", stderr(&o));
        assert!(
            took < Duration::from_secs_f64(1.5 * limit + 3.0),
            "{algo} took {took:?} with --time-limit {limit}"
        );
        assert!(stdout(&o).contains("makespan"), "{algo}: {}", stdout(&o));
    }
    // A limit far too short for CPFD's first schedule on 10,000 tasks (in any build): the
    // fallback is said.
    let o = fugue(&[
        "schedule",
        &g,
        "-a",
        "cpfd",
        "-p",
        "2",
        "--time-limit",
        "0.05",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("cpfd did not finish within the time limit of 0.05 s; the schedule is HLFET's"),
        "{e}"
    );
}

/// A layered graph of 60,000 nodes, 100 wide: hundreds of tasks ready at once (a list
/// scheduler that scans its ready tasks at every step takes minutes on it).
#[test]
fn every_algorithm_keeps_the_time_limit_on_a_large_graph() {
    let d = folder("time_limits", "large");
    let g = d.join("layered.ag");
    let g = g.to_str().unwrap();
    let o = fugue(&[
        "gen",
        "layered",
        "--layers",
        "600",
        "--width",
        "100",
        "--probability",
        "0.02",
        "-o",
        g,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let limit = 1.0;
    for algo in ["hlfet", "random", "etf", "cpfd", "best", "optimal"] {
        let (ok, out, cpu, wall) =
            measured(&["schedule", g, "-a", algo, "-p", "4", "--time-limit", "1"]);
        assert!(ok, "{algo} failed");
        // The processor time it took: the wall time of a loaded machine says little.
        assert!(
            cpu < Duration::from_secs_f64(1.5 * limit + 1.0),
            "{algo} took {cpu:?} of CPU with --time-limit {limit}"
        );
        assert!(wall < Duration::from_secs(60), "{algo} took {wall:?}");
        assert!(out.contains("makespan"), "{algo}: {out}");
    }
}

/// At 4,096 processors: a list scheduler that scans every processor for every task, or ETF
/// keeping a data-ready time per processor for every ready task, took seconds past the limit
/// and gigabytes (ETF aborted). The list schedulers keep the limit, in bounded memory (the
/// exact search, which compares processors pairwise to skip symmetric branches, is tested on
/// fewer processors above).
#[test]
fn every_algorithm_keeps_the_time_limit_on_many_processors() {
    let d = folder("time_limits", "many-processors");
    let g = d.join("random.ag");
    let g = g.to_str().unwrap();
    let o = fugue(&[
        "gen",
        "random",
        "--nodes",
        "50000",
        "--probability",
        "0.00004",
        "-o",
        g,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let limit = 1.0;
    for algo in ["hlfet", "etf", "cpfd", "best"] {
        let (ok, out, cpu, wall, rss) =
            measured_rss(&["schedule", g, "-a", algo, "-p", "4096", "--time-limit", "1"]);
        assert!(ok, "{algo} failed");
        assert!(
            cpu < Duration::from_secs_f64(1.5 * limit + 1.0),
            "{algo} took {cpu:?} of CPU with --time-limit {limit}"
        );
        assert!(rss < 512 << 20, "{algo} took {} MiB", rss >> 20);
        assert!(wall < Duration::from_secs(60), "{algo} took {wall:?}");
        assert!(out.contains("makespan"), "{algo}: {out}");
    }
}

/// Runs the `fugue` binary with `args`: whether it succeeded, its standard output, the
/// processor time it used (user and system) and its wall time.
fn measured(args: &[&str]) -> (bool, String, Duration, Duration) {
    let (ok, out, cpu, wall, _) = measured_rss(args);
    (ok, out, cpu, wall)
}

/// [`measured`], and the largest resident set the process had, bytes.
fn measured_rss(args: &[&str]) -> (bool, String, Duration, Duration, u64) {
    use std::io::Read as _;
    let start = Instant::now();
    // Reaped by `wait4` below, which also gives the processor time it used.
    #[allow(clippy::zombie_processes)]
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our child's, not yet waited for; both pointers are valid.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(r, child.id() as i32);
    let wall = start.elapsed();
    let out = reader.join().unwrap();
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let rss = usage.ru_maxrss.max(0) as u64 * 1024;
    (ok, out, tv(usage.ru_utime) + tv(usage.ru_stime), wall, rss)
}

#[test]
fn a_zero_time_limit_still_gives_a_valid_schedule() {
    let g = line("zero");
    let o = fugue(&["schedule", &g, "-a", "best", "--time-limit", "0", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["chosen"], "hlfet", "{v}");
    assert!(stderr(&o).contains("left out"), "{}", stderr(&o));
}

#[test]
fn graphviz_is_stopped_after_the_timeout_and_a_large_graph_is_warned_about() {
    if std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_err()
    {
        common::skip(
            "graphviz_is_stopped_after_the_timeout",
            "Graphviz's dot is not installed",
        );
        return;
    }
    let d = folder("time_limits", "dot");
    let g = d.join("rake.ag");
    let o = fugue(&[
        "gen",
        "rake",
        "--branches",
        "3333",
        "-o",
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("rake.svg");
    let start = Instant::now();
    let o = fugue(&[
        "dot",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--timeout",
        "1",
    ]);
    let took = start.elapsed();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("10001 nodes; Graphviz may take minutes"), "{e}");
    assert!(e.contains("within --timeout 1 s and was stopped"), "{e}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(!out.exists());
}

/// The static executor's exact search, ended by its fixed 2 s before it proved its schedule
/// optimal, says so (a warning, which `--strict` makes an error); a chain of nodes whose
/// costs add up past the largest cost a node may have is still scheduled (its unit's cost
/// was refused as out of range, which crashed the render).
#[test]
fn the_static_executor_says_when_its_exact_search_is_cut_short() {
    let d = folder("time_limits", "static-optimal");
    let g = d.join("random.ag");
    let o = fugue(&["gen", "random", "-n", "300", "-o", g.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Quiet enough not to clip (the mixes of mixes add up), so that the schedule's is the
    // only warning.
    let text = std::fs::read_to_string(&g).unwrap();
    std::fs::write(&g, text.replace("volume: 1.0", "volume: 0.01")).unwrap();
    let out = d.join("out.wav");
    let render = |strict: bool| {
        let mut args = vec![
            "render",
            g.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--force",
            "--seconds",
            "0.05",
            "-e",
            "static",
            "-t",
            "2",
            "--algorithm",
            "optimal",
        ];
        if strict {
            args.push("--strict");
        }
        fugue(&args)
    };
    let said = "the static schedule: optimal did not prove its schedule optimal within the time limit of 2 s, and its best schedule found is used";
    let o = render(false);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    std::fs::remove_file(&out).unwrap();
    let o = render(true);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(said) && e.contains("--strict makes warnings errors"),
        "{e}"
    );
    assert!(!e.contains("more warning"), "{e}");
    assert!(!out.exists());

    let chain = d.join("chain.ag");
    std::fs::write(
        &chain,
        "a = { kind: \"osc\", freq: 440, wcet: 600000000000, };\nb = { kind: \"gain\", db: -6, wcet: 600000000000, };\no = { kind: \"sink\", };\na.1 -> b.1;\nb.1 -> o.1;\n",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        chain.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.05",
        "-e",
        "static",
        "-t",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
