//! What the study's figures say, in sentences: per graph, the comparisons at each buffer
//! size and load (never across buffer sizes: a cycle of 512 frames is not slower than one of
//! 128 for taking longer), the deadlines missed, the share of the period seq takes, the best
//! parallel executor; and one closing line on how far the figures can be trusted and how to
//! trust more of them. Only trusted figures are stated as findings.

use super::spec::{PlotCtx, Row};
use super::trust::median_interval;
use crate::stats::median;

/// `n thing` or `n things`.
pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A row's short name: `ws at 512 frames, load idle`.
pub(super) fn where_(r: &Row) -> String {
    format!(
        "{} at {} frames, load {}",
        r.cfg.exec.name, r.cfg.buffer, r.cfg.load
    )
}

/// Whether a row's figures are stated as findings.
fn trusted(r: &&&Row) -> bool {
    r.doubt.is_none()
}

/// A row's figure of cycle time: the median over its repeats of their median cycle, µs.
fn cycle_us(r: &Row) -> f64 {
    if r.medians_us.is_empty() {
        r.s.median_ns as f64 / 1000.0
    } else {
        median(&r.medians_us)
    }
}

/// `45 µs`, `3.2 µs`.
fn us(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0} µs")
    } else {
        format!("{x:.1} µs")
    }
}

/// The sentences of graph `g`'s reading, plain text, none empty: the comparison at each
/// buffer size and load, the deadlines, seq's share of the period, the best parallel
/// executor and the parallel configurations that beat seq. The figures not trusted are
/// listed apart ([`doubt_sentence`]).
pub(super) fn sentences(ctx: &PlotCtx<'_>, g: usize) -> Vec<String> {
    let grows: Vec<&Row> = ctx.rows.iter().filter(|r| r.cfg.graph == g).collect();
    let mut v = comparisons(ctx, &grows);
    v.push(misses_sentence(&grows));
    v.extend(seq_share(&grows));
    v.extend(parallel_sentences(ctx, &grows));
    v.retain(|s| !s.trim().is_empty());
    v
}

/// The figures of graph `g` not stated as findings, up to five with their reasons, in one
/// sentence; `None` when every one is trusted.
pub(super) fn doubt_sentence(ctx: &PlotCtx<'_>, g: usize) -> Option<String> {
    let doubtful: Vec<&Row> = ctx
        .rows
        .iter()
        .filter(|r| r.cfg.graph == g && r.doubt.is_some())
        .collect();
    if doubtful.is_empty() {
        return None;
    }
    let list: Vec<String> = doubtful
        .iter()
        .take(5)
        .map(|r| format!("{} ({})", where_(r), r.doubt.as_deref().unwrap_or_default()))
        .collect();
    Some(format!(
        "Not stated as findings: {} cannot be trusted, e.g. {}{}.",
        count(doubtful.len(), "figure", "figures"),
        list.join("; "),
        if doubtful.len() > 5 {
            "; see the table"
        } else {
            ""
        }
    ))
}

/// One sentence per buffer size and load of `grows`: the parallel executor with the largest
/// trusted speedup, whether its speedup's confidence interval lies above 1 (it beats seq),
/// below (seq is faster) or across (on a par), with both median cycles at that buffer size.
fn comparisons(ctx: &PlotCtx<'_>, grows: &[&Row]) -> Vec<String> {
    let mut v = Vec::new();
    for l in ctx.loads {
        for &b in ctx.buffers {
            let here: Vec<&&Row> = grows
                .iter()
                .filter(|r| r.cfg.buffer == b && &r.cfg.load == l)
                .collect();
            if here.is_empty() {
                continue;
            }
            let at = format!("At {b} frames, load {l}");
            let seq = here.iter().find(|r| r.cfg.exec.name == "seq");
            let seq_text = seq
                .filter(|r| r.doubt.is_none())
                .map(|r| format!(", seq's {}", us(cycle_us(r))))
                .unwrap_or_default();
            // The speedup is the median of the repeats' ratios, each against the seq run
            // beside it; the cycles are medians over all repeats, so their ratio may differ.
            let cycles = |c: &str| format!("median cycle over the repeats {c}{seq_text}");
            let best = here
                .iter()
                .filter(|r| trusted(r))
                .filter(|r| r.speedup.is_some())
                .max_by(|x, y| {
                    x.speedup
                        .unwrap_or(0.0)
                        .total_cmp(&y.speedup.unwrap_or(0.0))
                });
            let Some(best) = best else {
                v.push(match seq.filter(|r| r.doubt.is_none()) {
                    Some(s) => format!(
                        "{at}, seq's median cycle is {}; no parallel executor's speedup is trusted.",
                        us(cycle_us(s))
                    ),
                    None => format!("{at}, no figure is trusted."),
                });
                continue;
            };
            let sp = best.speedup.unwrap_or(0.0);
            let (lo, hi) = median_interval(&best.speedups);
            let name = &best.cfg.exec.name;
            let cycle = cycles(&us(cycle_us(best)));
            v.push(if lo > 1.0 {
                format!(
                    "{at}, {name} is the fastest: ×{sp:.2} over seq, repeat by repeat ({cycle})."
                )
            } else if hi < 1.0 {
                format!(
                    "{at}, no parallel executor beats seq: the closest, {name}, runs at ×{sp:.2} ({cycle})."
                )
            } else {
                format!(
                    "{at}, the best parallel executor, {name}, is on a par with seq: ×{sp:.2}, its confidence interval ×{lo:.2} to ×{hi:.2} ({cycle})."
                )
            });
        }
    }
    v
}

/// Which of `grows` missed deadlines, the worst first, and which skipped cycles
/// (overruns).
fn misses_sentence(grows: &[&Row]) -> String {
    let misses: Vec<&&Row> = grows.iter().filter(|r| r.s.misses > 0).collect();
    // Every repeat's, as the summary counts them.
    let overran: Vec<String> = grows
        .iter()
        .filter(|r| r.every_repeat.overruns > 0)
        .take(4)
        .map(|r| format!("{} ({})", where_(r), r.every_repeat.overruns))
        .collect();
    let skipped = grows.iter().filter(|r| r.every_repeat.overruns > 0).count();
    let overruns = if skipped == 0 {
        String::new()
    } else {
        format!(
            " The clock fell more than a period behind and skipped cycles (overruns, all repeats) in {skipped} of {} configurations: {}.",
            grows.len(),
            overran.join(", ")
        )
    };
    if misses.is_empty() {
        // None in the median repeats; another repeat may have missed some.
        let elsewhere: Vec<String> = grows
            .iter()
            .filter(|r| r.every_repeat.misses > 0)
            .map(|r| format!("{} ({})", where_(r), r.every_repeat.misses))
            .collect();
        if !elsewhere.is_empty() {
            return format!(
                "No configuration missed a deadline in its median repeat, but {} of {} did in another repeat (cycles missed, all repeats): {}.{overruns}",
                elsewhere.len(),
                grows.len(),
                elsewhere[..elsewhere.len().min(4)].join(", ")
            );
        }
        return if skipped > 0 {
            format!("No cycle that ran missed its deadline, in any repeat.{overruns}")
        } else {
            "No configuration missed a deadline, in any repeat.".to_string()
        };
    }
    let mut worst = misses.clone();
    worst.sort_by(|a, b| b.s.miss_rate().total_cmp(&a.s.miss_rate()));
    let list: Vec<String> = worst
        .iter()
        .take(4)
        .map(|r| format!("{} ({:.1} %)", where_(r), r.s.miss_rate() * 100.0))
        .collect();
    format!(
        "Deadlines were missed in {} of {} configurations (in their median repeat); most often by {}.{overruns}",
        misses.len(),
        grows.len(),
        list.join(", ")
    )
}

/// The share of the buffer period seq's cycle takes among `grows` (a figure per frame, so
/// the buffer sizes compare), `None` without seq.
fn seq_share(grows: &[&Row]) -> Option<String> {
    let seq_rows: Vec<&&Row> = grows.iter().filter(|r| r.cfg.exec.name == "seq").collect();
    if seq_rows.is_empty() {
        return None;
    }
    let use_of = |r: &&&Row| cycle_us(r) / r.period_us * 100.0;
    let lo = seq_rows.iter().map(use_of).fold(f64::INFINITY, f64::min);
    let hi = seq_rows.iter().map(use_of).fold(0.0, f64::max);
    let range = if format!("{lo:.1}") == format!("{hi:.1}") {
        format!("{lo:.1} %")
    } else {
        format!("{lo:.1} % to {hi:.1} %")
    };
    Some(format!(
        "The sequential cycle takes {range} of the buffer period (median cycle){}.",
        if hi < 25.0 {
            ", so the work per cycle is small against the cost of waking and synchronising a second thread"
        } else {
            ""
        }
    ))
}

/// The best parallel executor among `grows` (trusted figures; each speedup is a ratio at one
/// buffer size and load, so they compare), and how many parallel configurations beat seq.
fn parallel_sentences(ctx: &PlotCtx<'_>, grows: &[&Row]) -> Vec<String> {
    let mut v = Vec::new();
    let mut best_par: Option<(String, f64)> = None;
    for e in ctx.execs.iter().filter(|e| e.name != "seq") {
        let sp: Vec<f64> = grows
            .iter()
            .filter(trusted)
            .filter(|r| r.cfg.exec.name == e.name)
            .filter_map(|r| r.speedup)
            .collect();
        if sp.is_empty() {
            continue;
        }
        let med = median(&sp);
        if best_par.as_ref().is_none_or(|(_, m)| med > *m) {
            best_par = Some((e.name.clone(), med));
        }
    }
    if let Some((name, med)) = best_par {
        v.push(format!(
            "The best parallel executor here is {name} (median speedup ×{med:.2} over its trusted figures, each measured against seq at the same buffer size and load)."
        ));
    }
    let parallel: Vec<&&Row> = grows
        .iter()
        .filter(trusted)
        .filter(|r| r.speedup.is_some())
        .collect();
    if parallel.is_empty() {
        return v;
    }
    let wins = parallel
        .iter()
        .filter(|r| r.speedup.unwrap_or(0.0) > 1.05)
        .count();
    v.push(if wins == 0 {
        "No parallel configuration beat seq by more than 5 %.".to_string()
    } else {
        format!(
            "{} of {} beat seq by more than 5 %.",
            count(wins, "parallel configuration", "parallel configurations"),
            parallel.len()
        )
    });
    v
}

/// What the closing line of [`trust_line`] reads besides the rows.
pub struct TrustContext<'a> {
    /// The spec's path, or `built-in studies/default.toml`.
    pub spec_label: &'a str,
    /// Runs of each configuration.
    pub repeats: usize,
    /// Seconds per run.
    pub seconds: f64,
    /// The spread bound of the trusted figures, percent.
    pub max_spread: f64,
    /// Whether the runs had real-time priority.
    pub rt: bool,
    /// Whether this program was built without optimisation.
    pub debug_build: bool,
}

/// The closing line: how many of the figures are trusted, and what would make more of them
/// so (a quiet machine, more repeats with the command that runs them, longer runs,
/// real-time priority, a release build), or that all are.
pub fn trust_line(rows: &[Row], t: &TrustContext<'_>) -> String {
    let n = rows.len();
    let trusted = rows.iter().filter(|r| r.doubt.is_none()).count();
    // The spec as the command that runs it again names it (the built-in one: no name).
    let spec = if t.spec_label.starts_with("built-in") {
        String::new()
    } else {
        format!(" {}", t.spec_label)
    };
    if t.repeats < 2 {
        // One run of each: no spread to judge a figure by.
        return format!(
            "None of the {n} figures can be judged: each comes from one run, and a figure is trusted when its repeats agree within {:.0} %; run the study with repeats (`fugue bench study{spec} --repeats 3`).",
            t.max_spread
        );
    }
    if trusted == n {
        return format!(
            "All {n} figures are trusted: each one's repeats agree within {:.0} %; more repeats (`--repeats`) narrow them further.",
            t.max_spread
        );
    }
    // The flagged figures in three kinds, each counted once.
    let impossible_of = |r: &&Row| r.doubt.as_deref().is_some_and(|d| d.contains("speedup ×"));
    let impossible = rows.iter().filter(impossible_of).count();
    let busy = rows
        .iter()
        .filter(|r| r.doubt.is_some() && !impossible_of(r) && r.cfg.load == "busy")
        .count();
    let idle = n - trusted - impossible - busy;
    let mut why = Vec::new();
    if impossible > 0 {
        why.push(format!(
            "{} an impossible speedup",
            count(impossible, "has", "have")
        ));
    }
    if busy > 0 {
        why.push(format!(
            "{busy} ran under `busy` load, where the other threads take the cores at random moments"
        ));
    }
    if idle > 0 {
        why.push(format!(
            "{idle} disagree between repeats with nothing of the study running beside them"
        ));
    }
    let mut how = vec![
        "on a quiet machine (no builds or other jobs beside it: they are what makes repeats disagree)".to_string(),
        format!(
            "with more repeats (`fugue bench study{spec} --repeats {}`: from 6 repeats on, the most disturbed ones are left out of the judgement)",
            (t.repeats * 2).max(6)
        ),
        format!("with longer runs (`seconds = {}` in the spec)", t.seconds * 2.0),
    ];
    if !t.rt {
        how.push("with real-time priority where permitted (`rt = true`)".to_string());
    }
    if t.debug_build {
        how.push(
            "from a release build (`cargo build --release`; this one has debug assertions)"
                .to_string(),
        );
    }
    format!(
        "{trusted} of {n} figures are trusted (repeats within {:.0} %){}. To trust more of them, run the study {}.",
        t.max_spread,
        if why.is_empty() {
            String::new()
        } else {
            format!("; of the {} others, {}", n - trusted, why.join(", "))
        },
        how.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::spec::{Config, Exec};
    use super::*;
    use fugue_engine::Summary;

    fn row(exec: &str, buffer: usize, load: &str, cycle_us: f64, speedups: &[f64]) -> Row {
        let cfg = Config {
            graph: 0,
            exec: Exec {
                order: 0,
                name: exec.into(),
                later_threads: false,
            },
            threads: if exec == "seq" { 1 } else { 2 },
            buffer,
            load: load.into(),
        };
        Row {
            cfg,
            s: Summary {
                cycles: 100,
                mean_ns: cycle_us * 1000.0,
                median_ns: (cycle_us * 1000.0) as u64,
                ..Summary::default()
            },
            means_us: vec![cycle_us; 3],
            medians_us: vec![cycle_us; 3],
            speedups: speedups.to_vec(),
            spread_pct: 0.0,
            doubt: None,
            overruns: 0,
            every_repeat: Default::default(),
            verified: true,
            chose: Vec::new(),
            expected_cycles: 100,
            period_us: buffer as f64 * 1e6 / 44100.0,
            speedup: (!speedups.is_empty()).then(|| median(speedups)),
        }
    }

    /// A deadline missed outside the median repeat is said, not "no configuration missed";
    /// with none in any repeat, that is said of every repeat.
    #[test]
    fn a_miss_in_any_repeat_is_said() {
        let mut ws = row("ws", 128, "idle", 10.0, &[1.5, 1.6, 1.4]);
        let seq = row("seq", 128, "idle", 15.0, &[]);
        assert_eq!(
            misses_sentence(&[&ws, &seq]),
            "No configuration missed a deadline, in any repeat."
        );
        ws.every_repeat.overruns = 2;
        let s = misses_sentence(&[&ws, &seq]);
        assert!(
            s.starts_with("No cycle that ran missed its deadline, in any repeat. The clock fell more than a period behind and skipped cycles (overruns, all repeats) in 1 of 2 configurations: ")
                && s.contains("(2)"),
            "{s}"
        );
        ws.every_repeat.misses = 3;
        let s = misses_sentence(&[&ws, &seq]);
        assert!(
            s.starts_with(
                "No configuration missed a deadline in its median repeat, but 1 of 2 did in another repeat (cycles missed, all repeats): "
            ) && s.contains("(3)"),
            "{s}"
        );
    }

    /// A graph at 64 and 256 frames, idle: at 64 ws is slower than seq, at 256 faster; at
    /// 64 busy nothing is trusted; seq's cycle at 256 frames is longer than ws's at 64.
    fn synthetic() -> Vec<Row> {
        let mut untrusted = row("seq", 64, "busy", 30.0, &[]);
        untrusted.doubt =
            Some("its 3 repeats' median cycle times disagree by 40 % (more than 20 %)".into());
        let mut ws_busy = row("ws", 64, "busy", 50.0, &[0.5, 0.9, 0.6]);
        ws_busy.doubt =
            Some("its 3 repeats' speedups over seq disagree by 67 % (more than 20 %)".into());
        vec![
            row("seq", 64, "idle", 40.0, &[]),
            row("ws", 64, "idle", 50.0, &[0.78, 0.8, 0.82]),
            row("levels", 64, "idle", 44.0, &[0.88, 0.91, 0.95]),
            row("seq", 256, "idle", 160.0, &[]),
            row("ws", 256, "idle", 120.0, &[1.3, 1.33, 1.36]),
            row("levels", 256, "idle", 150.0, &[0.97, 1.07, 1.1]),
            untrusted,
            ws_busy,
        ]
    }

    fn ctx<'a>(
        rows: &'a [Row],
        execs: &'a [Exec],
        names: &'a [String],
        loads: &'a [String],
    ) -> PlotCtx<'a> {
        PlotCtx {
            rows,
            names,
            execs,
            colors: &[],
            buffers: &[64, 256],
            loads,
            threads: &[2],
            cores: 2,
        }
    }

    #[test]
    fn sentences_compare_like_with_like_and_none_is_empty() {
        let rows = synthetic();
        let execs: Vec<Exec> = ["seq", "ws", "levels"]
            .iter()
            .enumerate()
            .map(|(order, n)| Exec {
                order,
                name: n.to_string(),
                later_threads: false,
            })
            .collect();
        let names = vec!["line600".to_string()];
        let loads = ["idle".to_string(), "busy".to_string()];
        let c = ctx(&rows, &execs, &names, &loads);
        let s = sentences(&c, 0);
        let text = s.join(" ");
        // One sentence per buffer size and load, each naming its own buffer size.
        assert_eq!(
            s[0],
            "At 64 frames, load idle, no parallel executor beats seq: the closest, levels, runs at ×0.91 (median cycle over the repeats 44 µs, seq's 40 µs)."
        );
        assert_eq!(
            s[1],
            "At 256 frames, load idle, ws is the fastest: ×1.33 over seq, repeat by repeat (median cycle over the repeats 120 µs, seq's 160 µs)."
        );
        assert_eq!(s[2], "At 64 frames, load busy, no figure is trusted.");
        assert!(!text.contains("fastest mean cycle"), "{text}");
        // The trusted parallel configurations: 2 of 4 beat seq by more than 5 %.
        assert!(
            text.contains("2 parallel configurations of 4 beat seq by more than 5 %."),
            "{text}"
        );
        assert!(
            text.contains("The best parallel executor here is ws"),
            "{text}"
        );
        for sentence in &s {
            let t = sentence.trim();
            assert!(t.len() > 3 && t.ends_with('.'), "{sentence:?}");
            assert!(
                !t.contains(": .") && !t.contains(" .") && !t.starts_with('.'),
                "{t}"
            );
        }
        // A speedup whose repeats straddle 1 is on a par, not a win.
        let mut par = rows.clone();
        par.retain(|r| r.cfg.exec.name != "ws");
        let c = ctx(&par, &execs, &names, &loads);
        assert_eq!(
            sentences(&c, 0)[1],
            "At 256 frames, load idle, the best parallel executor, levels, is on a par with seq: ×1.07, its confidence interval ×0.97 to ×1.10 (median cycle over the repeats 150 µs, seq's 160 µs)."
        );
        let d = doubt_sentence(&c, 0).unwrap();
        assert!(d.starts_with("Not stated as findings: 1 figure cannot be trusted, e.g. seq at 64 frames, load busy (its 3 repeats'"), "{d}");
    }

    #[test]
    fn a_graph_with_nothing_trusted_still_reads_in_whole_sentences() {
        let mut rows = synthetic();
        for r in &mut rows {
            r.doubt = Some("disturbed".into());
        }
        let execs = [];
        let names = vec!["g".to_string()];
        let loads = ["idle".to_string(), "busy".to_string()];
        let c = ctx(&rows, &execs, &names, &loads);
        let s = sentences(&c, 0);
        assert_eq!(s[0], "At 64 frames, load idle, no figure is trusted.");
        assert!(s.iter().all(|x| x.ends_with('.') && x.len() > 3), "{s:?}");
        assert!(!s.join(" ").contains("beat seq by more"), "{s:?}");
    }

    #[test]
    fn the_closing_line_says_how_to_trust_more() {
        let rows = synthetic();
        let t = TrustContext {
            spec_label: "studies/short.toml",
            repeats: 3,
            seconds: 0.3,
            max_spread: 20.0,
            rt: false,
            debug_build: false,
        };
        let line = trust_line(&rows, &t);
        assert!(line.starts_with("6 of 8 figures are trusted (repeats within 20 %); of the 2 others, 2 ran under `busy` load"), "{line}");
        assert!(line.contains("on a quiet machine"), "{line}");
        assert!(
            line.contains("`fugue bench study studies/short.toml --repeats 6`"),
            "{line}"
        );
        assert!(
            line.contains("`seconds = 0.6`") && line.contains("`rt = true`"),
            "{line}"
        );
        assert!(!line.contains("cargo build --release"), "{line}");
        let t = TrustContext {
            spec_label: "built-in studies/default.toml",
            repeats: 6,
            rt: true,
            debug_build: true,
            ..t
        };
        let line = trust_line(&rows, &t);
        assert!(line.contains("`fugue bench study --repeats 12`"), "{line}");
        assert!(
            !line.contains("rt = true") && line.contains("cargo build --release"),
            "{line}"
        );
        let all: Vec<Row> = rows.into_iter().filter(|r| r.doubt.is_none()).collect();
        assert_eq!(
            trust_line(&all, &t),
            "All 6 figures are trusted: each one's repeats agree within 20 %; more repeats (`--repeats`) narrow them further."
        );
        // One run of each: nothing to judge by.
        let once = TrustContext { repeats: 1, ..t };
        let line = trust_line(&all, &once);
        assert!(
            line.starts_with("None of the 6 figures can be judged: each comes from one run")
                && line.contains("`fugue bench study --repeats 3`"),
            "{line}"
        );
    }
}
