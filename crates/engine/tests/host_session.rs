//! The host's command session: each command's reply as one line of text and one line of
//! JSON (keys in alphabetical order), a failure as a reply, the host playing on.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use fugue_engine::host::command::HELP;
use fugue_engine::host::session::Session;
use fugue_engine::host::{GraphExecutor, Host, HostOptions, Mode};
use fugue_testkit::host::{fresh_dir, graphs};
use serde_json::Value;

fn session() -> Session {
    let host = Host::start(HostOptions {
        threads: 2,
        ..HostOptions::default()
    })
    .unwrap();
    Session::new(host, Arc::new(AtomicBool::new(false)))
}

/// Sets `stop` 300 ms from now, on a thread of its own (joined by the caller).
fn stop_in_300_ms(stop: &Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let stop = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    })
}

/// The reply to `line`, as text and as JSON.
fn ask(s: &mut Session, line: &str) -> (bool, String, String) {
    let r = s.execute(line).expect("a reply");
    (r.ok, r.to_string(), r.json())
}

#[test]
fn replies_in_text_and_json() {
    let dir = fresh_dir("session");
    let g = graphs(&dir);
    let mono = g[0].1.display().to_string();
    let mut s = session();
    assert!(s.execute("").is_none());
    assert!(s.execute("  # a comment").is_none());

    let (ok, text, json) = ask(&mut s, &format!("load mono {mono}"));
    assert!(ok, "{text}");
    assert!(
        text.starts_with("loaded mono (id 1) at cycle 0: cost "),
        "{text}"
    );
    assert!(text.ends_with(" of a 5333.3 µs period"), "{text}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "auto",
            "command",
            "cost_ns",
            "cycle",
            "executor",
            "file",
            "id",
            "name",
            "ok",
            "period_ns",
            "pipeline",
            "pipeline_note",
            "predicted_ns",
            "warning"
        ]
    );
    assert!(json.starts_with("{\"auto\":null,\"command\":\"load\",\"cost_ns\":"));
    assert!(json.ends_with(&format!(
        ",\"cycle\":0,\"executor\":null,\"file\":{},\"id\":1,\"name\":\"mono\",\"ok\":true,\"period_ns\":5333333,\"pipeline\":1,\"pipeline_note\":null,\"predicted_ns\":{},\"warning\":null}}",
        Value::from(mono.clone()),
        v["predicted_ns"]
    )));

    let (ok, text, json) = ask(&mut s, "wait 0.1");
    assert!(ok);
    assert_eq!(text, "waited 0.1 s; at cycle 19");
    assert_eq!(
        json,
        "{\"command\":\"wait\",\"cycle\":19,\"ok\":true,\"seconds\":0.1}"
    );

    let (_, text, json) = ask(&mut s, "gain mono -6");
    assert_eq!(text, "gain of mono: -6 dB");
    assert_eq!(
        json,
        "{\"command\":\"gain\",\"db\":-6.0,\"name\":\"mono\",\"ok\":true}"
    );

    let (_, text, json) = ask(&mut s, "list");
    assert!(
        text.starts_with("1 loaded: mono (id 1, 2 tasks, 1 ch, -6 dB, "),
        "{text}"
    );
    // What the graph holds against the host's memory, then its cost.
    let held = text
        .strip_prefix("1 loaded: mono (id 1, 2 tasks, 1 ch, -6 dB, ")
        .and_then(|t| t.split_once(", cost "))
        .map(|(held, _)| held)
        .unwrap_or_default();
    assert!(held.ends_with(" KiB") || held.ends_with(" MiB"), "{text}");
    assert!(text.ends_with(" µs, from cycle 0)"), "{text}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["command"], "list");
    let g0 = v["graphs"][0].as_object().unwrap();
    let keys: Vec<&str> = g0.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "adopted", "channels", "cost_ns", "executor", "file", "gain_db", "id", "memory",
            "name", "pipeline", "silenced", "tasks"
        ]
    );
    assert!(g0["memory"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(g0["file"], Value::from(mono));
    assert_eq!(g0["gain_db"], -6.0);

    let (_, text, json) = ask(&mut s, "stats mono");
    assert!(
        text.starts_with("mono: 19 cycles, share of the cycle mean "),
        "{text}"
    );
    assert!(text.ends_with("; 0 deadline misses, 0 panics"), "{text}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "command",
            "cycle_mean_ns",
            "cycles",
            "max_ns",
            "mean_ns",
            "misses",
            "name",
            "non_finite",
            "ok",
            "p99_ns",
            "panics",
            "work_mean_ns"
        ]
    );
    assert_eq!(v["command"], "stats");

    let (_, text, json) = ask(&mut s, "stats");
    assert!(
        text.starts_with("host: 19 cycles, 1 graph, cycle mean "),
        "{text}"
    );
    assert!(
        text.ends_with(
            "; 0 deadline misses (0 of 1 cycle with a swap), 0 overruns, 0 recorded blocks dropped"
        ),
        "{text}"
    );
    let v: Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "command",
            "cycles",
            "first_misses",
            "graphs",
            "handovers",
            "max_ns",
            "mean_ns",
            "misses",
            "ok",
            "overruns",
            "p99_ns",
            "parallel_mean_ns",
            "record_drops",
            "resize_cycles",
            "resizes",
            "swap_cycles",
            "swap_misses"
        ]
    );

    let (_, text, json) = ask(&mut s, "mode");
    assert_eq!(
        text,
        "mode shared, 2 threads, offline at 48000 Hz, 256 frames (5333.3 µs period), 2 channels, pipeline 1, executor pool"
    );
    assert_eq!(
        json,
        "{\"backend\":\"offline\",\"buffer\":256,\"channels\":2,\"command\":\"mode\",\"executor\":\"pool\",\"mode\":\"shared\",\"ok\":true,\"pipeline\":\"1\",\"rate\":48000,\"threads\":2}"
    );

    let (_, text, json) = ask(&mut s, "unload mono");
    assert_eq!(text, "unloaded mono (id 1) at cycle 19 after 19 cycles");
    assert_eq!(
        json,
        "{\"command\":\"unload\",\"cycle\":19,\"cycles\":19,\"id\":1,\"name\":\"mono\",\"ok\":true}"
    );
    let (_, text, _) = ask(&mut s, "list");
    assert_eq!(text, "no graph is loaded");

    let (ok, text, json) = ask(&mut s, "help");
    assert!(ok);
    assert_eq!(text, HELP);
    assert_eq!(
        json,
        serde_json::json!({"command": "help", "help": HELP, "ok": true}).to_string()
    );
    // `help COMMAND`: that command's line, not the list again.
    let (ok, text, _) = ask(&mut s, "help load");
    assert!(ok);
    assert!(
        text.starts_with("load NAME FILE: reads the graph FILE"),
        "{text}"
    );
    assert_ne!(text, HELP);
    let (ok, text, _) = ask(&mut s, "help wait");
    assert!(ok && text.contains("offline, in audio time"), "{text}");
    let (ok, text, _) = ask(&mut s, "help frob");
    assert!(!ok);
    assert_eq!(
        text,
        "error: unknown command `frob`; `help` lists the commands"
    );

    let r = s.execute("quit").unwrap();
    assert!(r.quits());
    assert_eq!(
        (r.to_string(), r.json()),
        (
            "bye".to_string(),
            "{\"command\":\"quit\",\"ok\":true}".to_string()
        )
    );
    s.into_host().finish().unwrap();
}

#[test]
fn a_failure_is_a_reply_and_the_host_plays_on() {
    let dir = fresh_dir("session-errors");
    let g = graphs(&dir);
    let mut s = session();
    let (ok, text, json) = ask(&mut s, "frobnicate");
    assert!(!ok);
    assert_eq!(
        text,
        "error: unknown command `frobnicate`; `help` lists the commands"
    );
    assert_eq!(
        json,
        "{\"command\":\"parse\",\"error\":\"unknown command `frobnicate`; `help` lists the commands\",\"ok\":false}"
    );
    let (ok, text, json) = ask(&mut s, "unload zz");
    assert!(!ok);
    assert_eq!(
        text,
        "error: no graph named `zz` is loaded; `list` shows the loaded graphs"
    );
    assert_eq!(
        json,
        "{\"command\":\"unload\",\"error\":\"no graph named `zz` is loaded; `list` shows the loaded graphs\",\"name\":\"zz\",\"ok\":false}"
    );
    let bad = fugue_testkit::host::write(
        &dir,
        "bad.ag",
        "o = { kind: \"osc\", };\ns = { kind: \"sink\",, };\n",
    );
    let (ok, text, _) = ask(&mut s, &format!("load b {}", bad.display()));
    assert!(
        !ok && text.starts_with("error: ") && text.contains("bad.ag:2:"),
        "{text}"
    );
    let (ok, text, _) = ask(&mut s, &format!("load a {}", g[0].1.display()));
    assert!(ok, "{text}");
    let (ok, text, _) = ask(&mut s, &format!("load a {}", g[1].1.display()));
    assert!(!ok && text.contains("loaded already"), "{text}");
    let (ok, text, _) = ask(&mut s, "wait 0.01");
    assert!(ok, "{text}");
    assert!(s.host().last_mix().unwrap()[0].iter().any(|&x| x != 0.0));
    s.into_host().finish().unwrap();
}

/// A session on an offline host of `threads` threads in `mode`, at `block` frames.
fn session_of(mode: Mode, threads: usize, block: usize) -> Session {
    let host = Host::start(HostOptions {
        threads,
        mode,
        block,
        executor: if mode == Mode::Separate {
            GraphExecutor::Kind(fugue_exec::ExecutorKind::Ws)
        } else {
            GraphExecutor::Auto
        },
        ..HostOptions::default()
    })
    .unwrap();
    Session::new(host, Arc::new(AtomicBool::new(false)))
}

/// The JSON of the reply to `line`, which must succeed.
fn json_of(s: &mut Session, line: &str) -> Value {
    let r = s.execute(line).expect("a reply");
    assert!(r.ok, "{line}: {r}");
    serde_json::from_str(&r.json()).unwrap()
}

/// A graph's share of the cycle is never larger than the cycles it ran in, whose mean is
/// the host's own figure (the same cycles, the same clock) when it ran in all of them; the
/// shares of the graphs add up to at most the host's cycle; its work on all threads may
/// be larger than its share.
#[test]
fn a_graphs_share_of_the_cycle_fits_in_the_hosts_cycle() {
    let dir = fresh_dir("session-shares");
    let wide = dir.join("wide.ag");
    std::fs::write(&wide, fugue_testkit::host::load_fan(8, 40)).unwrap();
    let g = graphs(&dir);
    for mode in [Mode::Shared, Mode::Partitioned, Mode::Separate] {
        let mut s = session_of(mode, 2, 256);
        json_of(&mut s, &format!("load a {}", wide.display()));
        json_of(&mut s, &format!("load b {}", g[0].1.display()));
        json_of(&mut s, "wait 0.2");
        let host = json_of(&mut s, "stats");
        let host_mean = host["mean_ns"].as_f64().unwrap();
        let mut shares = 0.0;
        for name in ["a", "b"] {
            let v = json_of(&mut s, &format!("stats {name}"));
            assert_eq!(v["cycles"], host["cycles"], "{mode:?} {name}: {v}");
            let (share, cycle) = (
                v["mean_ns"].as_f64().unwrap(),
                v["cycle_mean_ns"].as_f64().unwrap(),
            );
            assert!(share > 0.0, "{mode:?} {name}: {v}");
            assert!(share <= cycle, "{mode:?} {name}: {v}, host {host}");
            assert!(
                (cycle - host_mean).abs() <= 1e-6 * host_mean,
                "{mode:?} {name}: {v}, host {host}"
            );
            assert!(v["max_ns"].as_u64().unwrap() <= host["max_ns"].as_u64().unwrap());
            assert!(v["work_mean_ns"].as_f64().unwrap() > 0.0, "{v}");
            shares += share;
        }
        assert!(shares <= host_mean, "{mode:?}: {shares} > {host_mean}");
        let text = s.execute("stats a").unwrap().to_string();
        assert!(text.contains(", of cycles of mean "), "{text}");
        assert!(text.contains("; work on all threads mean "), "{text}");
    }
}

/// The host's `stats` names the cycles that missed their deadline: the first ten and the
/// count.
#[test]
fn missed_cycles_are_named_by_their_numbers() {
    let dir = fresh_dir("session-misses");
    let slow = dir.join("slow.ag");
    // 25 ms of work in a 1024-frame cycle (21.3 ms): every cycle with it misses.
    std::fs::write(
        &slow,
        "w = { kind: \"load\", wcet: 25000, };\ns = { kind: \"sink\", };\nw.1 -> s.1;\n",
    )
    .unwrap();
    let mut s = session_of(Mode::Shared, 1, 1024);
    json_of(&mut s, "wait 0.064");
    json_of(&mut s, &format!("load slow {}", slow.display()));
    // 0.384 s: cycle 18, the last 15 of them with the graph.
    json_of(&mut s, "wait 0.32");
    let v = json_of(&mut s, "stats");
    assert_eq!(v["cycles"], 18, "{v}");
    assert_eq!(v["misses"], 15, "{v}");
    assert_eq!(
        v["first_misses"],
        serde_json::json!([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        "{v}"
    );
    let text = s.execute("stats").unwrap().to_string();
    assert!(
        text.contains(
            "; 15 deadline misses, the first 10 at cycles 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ("
        ),
        "{text}"
    );
}

/// A `wait` cut short by a stop request (SIGTERM, SIGINT, SIGHUP in the binary) replies how
/// long it really waited, clocked (wall time) and offline (audio played), never the seconds
/// asked.
#[test]
fn a_wait_cut_short_says_how_long_it_waited() {
    use fugue_engine::host::HostBackend;
    use std::time::{Duration, Instant};
    for backend in [HostBackend::Clocked, HostBackend::Offline] {
        let stop = Arc::new(AtomicBool::new(false));
        let host = Host::start(HostOptions {
            threads: 1,
            backend: backend.clone(),
            ..HostOptions::default()
        })
        .unwrap();
        let mut s = Session::new(host, stop.clone());
        let stopper = stop_in_300_ms(&stop);
        let t0 = Instant::now();
        // Offline, 20 000 s of audio cannot play in 0.3 s: the stop cuts it short too.
        let line = if backend == HostBackend::Offline {
            "wait 20000"
        } else {
            "wait 20"
        };
        let (ok, text, json) = ask(&mut s, line);
        stopper.join().unwrap();
        assert!(ok, "{text}");
        assert!(t0.elapsed() < Duration::from_secs(10), "{backend:?}");
        let v: Value = serde_json::from_str(&json).unwrap();
        let waited = v["seconds"].as_f64().unwrap();
        let asked = if backend == HostBackend::Offline {
            20000.0
        } else {
            20.0
        };
        assert!(waited > 0.0 && waited < asked, "{backend:?}: {text}");
        if backend == HostBackend::Clocked {
            assert!((0.2..5.0).contains(&waited), "{text}");
        }
        assert!(
            text.starts_with(&format!("waited {waited} s; at cycle ")),
            "{text}"
        );
    }
}

/// A `load` waiting for the audio thread to take it at a long period (65,536 frames at 1 Hz:
/// 18 hours) gives up as soon as the stop request is set, so that a signal ends the host at
/// once; the reply says the command was not done.
#[test]
fn a_load_waiting_for_a_long_period_ends_on_the_stop_request() {
    use fugue_engine::host::HostBackend;
    use std::time::{Duration, Instant};
    let dir = fresh_dir("long-period-stop");
    let g = graphs(&dir);
    let stop = Arc::new(AtomicBool::new(false));
    let host = Host::start(HostOptions {
        threads: 1,
        backend: HostBackend::Clocked,
        rate: 1,
        block: 65_536,
        ..HostOptions::default()
    })
    .unwrap();
    let mut s = Session::new(host, stop.clone());
    let stopper = stop_in_300_ms(&stop);
    let t0 = Instant::now();
    let mut reply = None;
    // The first cycle may take the first load at once; a later one waits for the next.
    for name in ["a", "b"] {
        let (ok, text, _) = ask(&mut s, &format!("load {name} {}", g[0].1.display()));
        if !ok {
            reply = Some(text);
            break;
        }
    }
    stopper.join().unwrap();
    let text = reply.expect("a load refused");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert!(
        text.contains("the host is stopping; the command was not done"),
        "{text}"
    );
}

/// Offline, commands that fill the queue to the audio side are taken between cycles: a graph
/// adopted among them still counts its cycle as one with a swap.
#[test]
fn a_swap_taken_with_a_full_queue_is_counted() {
    let dir = fresh_dir("session-full-queue");
    let g = graphs(&dir);
    let mono = g[0].1.display().to_string();
    let mut s = session();
    let (ok, text, _) = ask(&mut s, &format!("load mono {mono}"));
    assert!(ok, "{text}");
    for _ in 0..200 {
        let (ok, text, _) = ask(&mut s, "gain mono -1");
        assert!(ok, "{text}");
    }
    let (ok, text, _) = ask(&mut s, "wait 0.1");
    assert!(ok, "{text}");
    let (_, text, json) = ask(&mut s, "stats");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["swap_cycles"], 1, "{text}");
}
