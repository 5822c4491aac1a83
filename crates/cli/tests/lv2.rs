//! The `lv2` kind through the binary: a one-node graph over a WAV file renders the same
//! samples, bit for bit, as lilv's own `lv2apply` with the same plugin and controls; the
//! mistakes a user can make are said in one sentence each; `fugue plugins` lists what is
//! installed. Tests that need the plugins (Debian `mda-lv2`, `swh-lv2`, `lilv-utils`) skip,
//! saying so, where they are not installed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{folder, fugue, skip, stderr, stdout};

/// The sample rate of every file here.
const RATE: u32 = 48_000;

/// Ten plugins of different kinds, each with control values that differ from its defaults.
const CASES: &[(&str, &[(&str, f32)])] = &[
    // Reverbs (Ambience: a stereo pair in and out; plate: one in, two out).
    (
        "http://drobilla.net/plugins/mda/Ambience",
        &[("mix", 0.5), ("size", 0.4)],
    ),
    (
        "http://plugin.org.uk/swh-plugins/plate",
        &[("time", 2.0), ("wet", 0.5)],
    ),
    // Delays.
    (
        "http://drobilla.net/plugins/mda/Delay",
        &[("l_delay", 0.1), ("feedback", 0.5)],
    ),
    (
        "http://plugin.org.uk/swh-plugins/delay_l",
        &[("delay_time", 0.003)],
    ),
    // Filters (the cutoff's range is a fraction of the rate).
    (
        "http://plugin.org.uk/swh-plugins/lowpass_iir",
        &[("cutoff", 2000.0), ("stages", 2.0)],
    ),
    (
        "http://drobilla.net/plugins/mda/RezFilter",
        &[("freq", 0.5), ("res", 0.3)],
    ),
    // Dynamics.
    (
        "http://plugin.org.uk/swh-plugins/sc1",
        &[("threshold", -20.0), ("ratio", 4.0)],
    ),
    (
        "http://drobilla.net/plugins/mda/Limiter",
        &[("thresh", 0.3)],
    ),
    // Distortion.
    (
        "http://drobilla.net/plugins/mda/Overdrive",
        &[("drive", 0.8)],
    ),
    (
        "http://plugin.org.uk/swh-plugins/foverdrive",
        &[("drive", 2.5)],
    ),
];

/// The installed plugins, or `None` (saying why) where lilv or `lv2apply` is missing.
fn installed(test: &str) -> Option<&'static [fugue_lv2::PluginInfo]> {
    let lv2apply = Command::new("lv2apply").arg("--version").output();
    if !lv2apply.is_ok_and(|o| o.status.success()) {
        skip(test, "lv2apply (Debian lilv-utils) is not installed");
        return None;
    }
    match fugue_lv2::plugins() {
        Ok(p) => Some(p),
        Err(e) => {
            skip(test, &format!("lilv {e}"));
            None
        }
    }
}

/// A `channels`-channel 32-bit float WAV file of `seconds`: a chord, a burst of loud noise
/// in the middle (for the dynamics), silence at the end (for the tails), different in each
/// channel.
fn input(path: &Path, channels: u16, seconds: f64) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: RATE,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    let frames = (seconds * f64::from(RATE)) as usize;
    let mut rng = fugue_sync::Rng::new(0x9e37_79b9);
    for n in 0..frames {
        let t = n as f64 / f64::from(RATE);
        for c in 0..channels {
            let noise = f64::from(rng.bipolar());
            let f = 220.0 * (1.0 + f64::from(c) * 0.5);
            let x = match n * 4 / frames {
                0 => 0.3 * (2.0 * std::f64::consts::PI * f * t).sin(),
                1 => 0.9 * noise,
                2 => 0.2 * (2.0 * std::f64::consts::PI * f * 3.0 * t).sin() + 0.05 * noise,
                _ => 0.0,
            };
            w.write_sample(x as f32).unwrap();
        }
    }
    w.finalize().unwrap();
}

/// A one-node graph: `source` (one port per plugin input) into the plugin into `sink`.
fn one_node_graph(uri: &str, controls: &[(&str, f32)], ins: usize, outs: usize) -> String {
    let mut g = format!("src = {{ kind: \"source\", out: {ins}, }};\n");
    g += &format!("p = {{ kind: \"lv2\", uri: \"{uri}\",");
    for (sym, v) in controls {
        g += &format!(" {sym}: {v:?},");
    }
    g += &format!(" }};\ns = {{ kind: \"sink\", in: {outs}, }};\n");
    for i in 1..=ins {
        g += &format!("src.{i} -> p.{i};\n");
    }
    for o in 1..=outs {
        g += &format!("p.{o} -> s.{o};\n");
    }
    g
}

/// The samples of a 32-bit float WAV file, interleaved, as bits.
fn bits(path: &Path) -> Vec<u32> {
    hound::WavReader::open(path)
        .unwrap()
        .into_samples::<f32>()
        .map(|s| s.unwrap().to_bits())
        .collect()
}

#[test]
fn ten_plugins_render_as_lv2apply_applies_them_bit_for_bit() {
    let Some(plugins) = installed("ten_plugins_render_as_lv2apply_applies_them_bit_for_bit") else {
        return;
    };
    let dir = folder("lv2", "lv2apply");
    let mut missing = Vec::new();
    let mut compared = 0;
    for (k, (uri, controls)) in CASES.iter().enumerate() {
        let Some(p) = plugins.iter().find(|p| p.uri == *uri) else {
            missing.push(*uri);
            continue;
        };
        let (ins, outs) = (p.audio(true).count(), p.audio(false).count());
        let wav = dir.join(format!("in{k}.wav"));
        input(&wav, ins as u16, 0.4);
        let graph = dir.join(format!("p{k}.ag"));
        std::fs::write(&graph, one_node_graph(uri, controls, ins, outs)).unwrap();
        // lv2apply runs the plugin one frame at a time: a buffer of one frame here.
        let ours = dir.join(format!("fugue{k}.wav"));
        let o = fugue(&[
            "render",
            graph.to_str().unwrap(),
            "--input",
            wav.to_str().unwrap(),
            "-o",
            ours.to_str().unwrap(),
            "--buffer",
            "1",
            "--executor",
            "seq",
            "--bits",
            "32",
        ]);
        assert!(o.status.success(), "{uri}: {}", stderr(&o));
        let theirs = dir.join(format!("lv2apply{k}.wav"));
        let mut c = Command::new("lv2apply");
        c.args(["-i", wav.to_str().unwrap(), "-o", theirs.to_str().unwrap()]);
        for (sym, v) in *controls {
            c.args(["-c", sym, &format!("{v:?}")]);
        }
        let a = c.arg(uri).output().unwrap();
        assert!(a.status.success(), "lv2apply {uri}: {}", stderr(&a));
        let (x, y) = (bits(&ours), bits(&theirs));
        assert_eq!(x.len(), y.len(), "{uri}: lengths");
        assert!(x.iter().any(|&b| b != 0), "{uri}: silent");
        let first = x.iter().zip(&y).position(|(a, b)| a != b);
        assert_eq!(first, None, "{uri}: the samples differ from lv2apply's");
        compared += 1;
    }
    if !missing.is_empty() {
        skip(
            "ten_plugins_render_as_lv2apply_applies_them_bit_for_bit",
            &format!(
                "{} of {} plugins are not installed (Debian mda-lv2, swh-lv2): {}",
                missing.len(),
                CASES.len(),
                missing.join(", ")
            ),
        );
    }
    assert_eq!(compared + missing.len(), CASES.len());
}

/// Runs fugue with `env` added.
fn fugue_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
    c.args(args).env_remove(common::FAULT_VAR);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Writes `graph` as `NAME.ag` in `dir`; returns its path.
fn graph_file(dir: &Path, name: &str, graph: &str) -> PathBuf {
    let p = dir.join(format!("{name}.ag"));
    std::fs::write(&p, graph).unwrap();
    p
}

/// A mono graph through `node` (the attributes of an `lv2` node) for 0.1 s.
fn render(dir: &Path, name: &str, node: &str, env: &[(&str, &str)]) -> Output {
    let g = graph_file(
        dir,
        name,
        &format!(
            "o = {{ kind: \"osc\", freq: 440, }};\np = {{ kind: \"lv2\", {node} }};\ns = {{ kind: \"sink\", }};\no.1 -> p.1 -> s.1;\n"
        ),
    );
    let out = dir.join(format!("{name}.wav"));
    fugue_env(
        &[
            "render",
            g.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.1",
            "--force",
        ],
        env,
    )
}

/// The one line of standard error of a failed run, checked to be one line with no panic.
fn one_error(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

const FOVERDRIVE: &str = "uri: \"http://plugin.org.uk/swh-plugins/foverdrive\",";

#[test]
fn an_unknown_uri_names_the_nearest_installed_ones() {
    let Some(_) = installed("an_unknown_uri_names_the_nearest_installed_ones") else {
        return;
    };
    let dir = folder("lv2", "unknown");
    let o = render(
        &dir,
        "g",
        "uri: \"http://plugin.org.uk/swh-plugins/foverdrvie\",",
        &[],
    );
    let e = one_error(&o);
    assert!(e.contains("g.ag") && e.contains("node `p`"), "{e}");
    assert!(e.contains("is not an installed LV2 plugin"), "{e}");
    assert!(
        e.contains("nearest installed: http://plugin.org.uk/swh-plugins/foverdrive"),
        "{e}"
    );
}

#[test]
fn a_control_out_of_range_names_the_range_and_an_unknown_one_is_warned_about() {
    let Some(_) = installed("a_control_out_of_range_names_the_range") else {
        return;
    };
    let dir = folder("lv2", "range");
    let o = render(&dir, "g", &format!("{FOVERDRIVE} drive: 7,"), &[]);
    let e = one_error(&o);
    assert!(
        e.contains("`drive` = `7` is outside the range of control `drive`") && e.contains("1 to 3"),
        "{e}"
    );
    // A range given as a fraction of the rate, in the figures meant (0.0001 x 48000 is 4.8,
    // not its 32-bit rounding 4.7999997).
    let o = render(
        &dir,
        "cutoff",
        "uri: \"http://plugin.org.uk/swh-plugins/lowpass_iir\", cutoff: 1,",
        &[],
    );
    let e = one_error(&o);
    assert!(e.contains(": 4.8 to 21600 at 48000 Hz"), "{e}");
    let o = render(&dir, "w", &format!("{FOVERDRIVE} drvie: 2,"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("attribute `drvie`, which is no control") && e.contains("its controls: drive"),
        "{e}"
    );
    // The plugin does not declare itself real-time safe: a render, which has no deadline,
    // does not say so (nor refuses it with --strict); `check` and `info` do, once.
    assert_eq!(e.matches("hardRTCapable").count(), 0, "{e}");
    let g = dir.join("s.ag");
    std::fs::write(
        &g,
        format!("o = {{ kind: \"osc\", freq: 440, }};\np = {{ kind: \"lv2\", {FOVERDRIVE} }};\ns = {{ kind: \"sink\", }};\no.1 -> p.1 -> s.1;\n"),
    )
    .unwrap();
    let strict = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        dir.join("s.wav").to_str().unwrap(),
        "--seconds",
        "0.1",
        "--strict",
    ]);
    assert!(strict.status.success(), "{}", stderr(&strict));
    for cmd in ["check", "info"] {
        let o = fugue(&[cmd, g.to_str().unwrap()]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.matches("hardRTCapable").count(), 1, "{cmd}: {e}");
    }
}

#[test]
fn without_lilv_a_graph_with_an_lv2_node_names_the_package() {
    let dir = folder("lv2", "absent");
    let env = [(fugue_lv2::LIBRARY_VAR, "/nonexistent/liblilv-0.so.0")];
    let o = render(&dir, "g", FOVERDRIVE, &env);
    let e = one_error(&o);
    assert!(
        e.contains("node `p`") && e.contains("install the package liblilv-0-0"),
        "{e}"
    );
    // The other kinds go on working, and so does the run command's refusal.
    let plain = graph_file(
        &dir,
        "plain",
        "o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\no.1 -> s.1;",
    );
    let out = dir.join("plain.wav");
    let o = fugue_env(
        &[
            "render",
            plain.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.1",
        ],
        &env,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fugue_env(&["plugins"], &env);
    let e = one_error(&o);
    assert!(e.contains("liblilv-0-0"), "{e}");
}

/// The Turtle prefixes of the test bundles' files.
const TTL_PREFIXES: &str = "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n\
                            @prefix doap: <http://usefulinc.com/ns/doap#> .\n\
                            @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n";

/// A bundle of plugins described only (no binary): one requires a worker, one has a CV
/// input, one declares no port (these refused before their library is loaded), one is plain
/// (refused when its library cannot be loaded), one has a control named as a graph's
/// attribute.
fn fake_bundle(dir: &Path) -> PathBuf {
    let b = dir.join("lv2/fake.lv2");
    std::fs::create_dir_all(&b).unwrap();
    let prefixes = TTL_PREFIXES;
    std::fs::write(
        b.join("manifest.ttl"),
        format!(
            "{prefixes}\
             <urn:fugue:test:worker> a lv2:Plugin ; lv2:binary <fake.so> ; rdfs:seeAlso <fake.ttl> .\n\
             <urn:fugue:test:cv> a lv2:Plugin ; lv2:binary <fake.so> ; rdfs:seeAlso <fake.ttl> .\n\
             <urn:fugue:test:nolib> a lv2:Plugin ; lv2:binary <fake.so> ; rdfs:seeAlso <fake.ttl> .\n\
             <urn:fugue:test:owned> a lv2:Plugin ; lv2:binary <fake.so> ; rdfs:seeAlso <fake.ttl> .\n\
             <urn:fugue:test:noports> a lv2:Plugin ; lv2:binary <fake.so> ; rdfs:seeAlso <fake.ttl> .\n\
             <urn:fugue:test:notlv2> a lv2:Plugin ; lv2:binary <notlv2.so> ; rdfs:seeAlso <fake.ttl> .\n"
        ),
    )
    .unwrap();
    // A library that loads but is no LV2 plugin library: the C library this process runs
    // with.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    if let Some(libc) = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so") || p.contains("/libc-"))
    {
        let _ = std::fs::remove_file(b.join("notlv2.so"));
        std::os::unix::fs::symlink(libc, b.join("notlv2.so")).unwrap();
    }
    let audio = "lv2:port [ a lv2:AudioPort , lv2:InputPort ; lv2:index 0 ; lv2:symbol \"in\" ; lv2:name \"In\" ] , \
                 [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 1 ; lv2:symbol \"out\" ; lv2:name \"Out\" ]";
    std::fs::write(
        b.join("fake.ttl"),
        format!(
            "{prefixes}\
             <urn:fugue:test:worker> a lv2:Plugin ; doap:name \"Needs a worker\" ;\n\
               lv2:requiredFeature <http://lv2plug.in/ns/ext/worker#schedule> , <http://lv2plug.in/ns/ext/state#loadDefaultState> ;\n  {audio} .\n\
             <urn:fugue:test:cv> a lv2:Plugin ; doap:name \"Has a CV input\" ;\n  {audio} , \
               [ a lv2:CVPort , lv2:InputPort ; lv2:index 2 ; lv2:symbol \"mod\" ; lv2:name \"Mod\" ] .\n\
             <urn:fugue:test:nolib> a lv2:Plugin ; doap:name \"Has no library\" ;\n  {audio} .\n\
             <urn:fugue:test:owned> a lv2:Plugin ; doap:name \"A control named as the graph's attribute\" ;\n  {audio} , \
               [ a lv2:ControlPort , lv2:InputPort ; lv2:index 2 ; lv2:symbol \"wcet\" ; lv2:name \"Weight\" ; \
               lv2:minimum 0 ; lv2:maximum 2 ; lv2:default 1 ] , \
               [ a lv2:ControlPort , lv2:InputPort ; lv2:index 3 ; lv2:symbol \"uri\" ; lv2:name \"Uri\" ; \
               lv2:minimum 0 ; lv2:maximum 1 ; lv2:default 0.5 ] , \
               [ a lv2:ControlPort , lv2:InputPort ; lv2:index 4 ; lv2:symbol \"big\" ; lv2:name \"Big\" ; \
               lv2:minimum 0.01 ; lv2:maximum 1e300 ; lv2:default 1e300 ] .\n\
             <urn:fugue:test:noports> a lv2:Plugin ; doap:name \"Declares no port\" .\n\
             <urn:fugue:test:notlv2> a lv2:Plugin ; doap:name \"Not an LV2 library\" ;\n  {audio} .\n"
        ),
    )
    .unwrap();
    dir.join("lv2")
}

#[test]
fn a_plugin_that_needs_what_fugue_lacks_is_refused_in_one_sentence() {
    let Some(_) = installed("a_plugin_that_needs_what_fugue_lacks_is_refused") else {
        return;
    };
    let dir = folder("lv2", "unsupported");
    let path = fake_bundle(&dir);
    let env = [("LV2_PATH", path.to_str().unwrap())];
    let o = render(&dir, "worker", "uri: \"urn:fugue:test:worker\",", &env);
    let e = one_error(&o);
    // Every feature missing, in one sentence.
    assert!(
        e.contains("requires ")
            && e.contains("a worker thread (<http://lv2plug.in/ns/ext/worker#schedule>)")
            && e.contains("saved state (<http://lv2plug.in/ns/ext/state#loadDefaultState>)")
            && e.contains(" and ")
            && e.contains("features fugue does not provide"),
        "{e}"
    );
    let o = render(&dir, "cv", "uri: \"urn:fugue:test:cv\",", &env);
    let e = one_error(&o);
    assert!(e.contains("port `mod` is a CV port"), "{e}");
    // A description that was read (it names the plugin) but declares no port is said as
    // such, not as files that could not be read.
    let g = graph_file(
        &dir,
        "noports",
        "o = { kind: \"osc\", };\np = { kind: \"lv2\", uri: \"urn:fugue:test:noports\", };\ns = { kind: \"sink\", };\no.1 -> s.1;\n",
    );
    let o = fugue_env(&["check", g.to_str().unwrap()], &env);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("is plugin <urn:fugue:test:noports> (Declares no port), whose description as read declares no port, so it has no audio port"),
        "{e}"
    );
    let o = render(&dir, "nolib", "uri: \"urn:fugue:test:nolib\",", &env);
    let e = one_error(&o);
    assert!(
        e.contains("could not load plugin <urn:fugue:test:nolib>: its library ")
            && e.contains("fake.lv2/fake.so cannot be loaded: ")
            && e.contains("No such file"),
        "{e}"
    );
    if dir.join("lv2/fake.lv2/notlv2.so").exists() {
        let o = render(&dir, "notlv2", "uri: \"urn:fugue:test:notlv2\",", &env);
        let e = one_error(&o);
        assert!(
            e.contains("could not load plugin <urn:fugue:test:notlv2>: its library ")
                && e.contains("is not an LV2 plugin library (it has neither function `lv2_descriptor` nor `lv2_lib_descriptor`)"),
            "{e}"
        );
    }
    // A control whose symbol the graph reads itself (`wcet`, the node's cost) cannot be
    // set, and a node that gives the attribute is told so.
    // (Checked: with no library the node cannot be built, which `check` says too.)
    let g = graph_file(
        &dir,
        "owned",
        "o = { kind: \"osc\", };\np = { kind: \"lv2\", uri: \"urn:fugue:test:owned\", wcet: 0.5, };\ns = { kind: \"sink\", };\no.1 -> p.1 -> s.1;\n",
    );
    let o = fugue_env(&["check", g.to_str().unwrap()], &env);
    assert!(
        stderr(&o).contains("node `p`: attribute `wcet` is the graph's (the node's cost in µs), not control `wcet` of plugin <urn:fugue:test:owned>, which no attribute can set: it keeps its default, 1"),
        "{}",
        stderr(&o)
    );
    // Nor can one named as an attribute every `lv2` node gives (`uri`): said of every node.
    assert!(
        stderr(&o).contains("node `p`: control `uri` of plugin <urn:fugue:test:owned> cannot be set: attribute `uri` is the plugin the node runs; the control keeps its default, 0.5"),
        "{}",
        stderr(&o)
    );
    // `fugue plugins` lists them all the same.
    let o = fugue_env(&["plugins", "urn:fugue"], &env);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // A bound and a default too large for a 32-bit float (`1e300`) are none, not infinite:
    // the unset control takes its minimum.
    assert!(!out.contains("inf"), "{out}");
    println!("{out}");
    assert!(
        out.contains("urn:fugue:test:worker")
            && out.contains("requires: ")
            && out.contains("http://lv2plug.in/ns/ext/worker#schedule"),
        "{out}"
    );
}

/// A description whose ports are not numbered 0 to N - 1 (a huge `lv2:index`, which made
/// lilv write past an array and crash the process even for graphs that used other plugins,
/// or a gap; a port symbol that is no C identifier, of which lilv printed its error at
/// every command) is refused when used, in one sentence, and listed as malformed; a plugin
/// that requires an option fugue does not pass is refused too.
#[test]
fn a_malformed_description_is_refused_and_harms_no_other_plugin() {
    let Some(_) = installed("a_malformed_description_is_refused") else {
        return;
    };
    let dir = folder("lv2", "malformed");
    let b = dir.join("lv2/bad.lv2");
    std::fs::create_dir_all(&b).unwrap();
    let prefixes = TTL_PREFIXES;
    let plugins = ["far", "gap", "option", "sym"];
    let manifest: String = plugins
        .iter()
        .map(|p| format!("<urn:fugue:test:{p}> a lv2:Plugin ; lv2:binary <bad.so> ; rdfs:seeAlso <bad.ttl> .\n"))
        .collect();
    std::fs::write(b.join("manifest.ttl"), format!("{prefixes}{manifest}")).unwrap();
    let port = |i: u64, io: &str, sym: &str| {
        format!("[ a lv2:AudioPort , lv2:{io}Port ; lv2:index {i} ; lv2:symbol \"{sym}\" ; lv2:name \"{sym}\" ]")
    };
    std::fs::write(
        b.join("bad.ttl"),
        format!(
            "{prefixes}@prefix opts: <http://lv2plug.in/ns/ext/options#> .\n\
             <urn:fugue:test:far> a lv2:Plugin ; doap:name \"Far\" ; lv2:port {} , {} .\n\
             <urn:fugue:test:gap> a lv2:Plugin ; doap:name \"Gap\" ; lv2:port {} , {} .\n\
             <urn:fugue:test:option> a lv2:Plugin ; doap:name \"Option\" ; \
             opts:requiredOption <http://lv2plug.in/ns/ext/buf-size#sequenceSize> ; lv2:port {} , {} .\n\
             <urn:fugue:test:sym> a lv2:Plugin ; doap:name \"Sym\" ; lv2:port {} , {} .\n",
            port(0, "Input", "in"),
            port(4_000_000_000, "Output", "out"),
            port(0, "Input", "in"),
            port(5, "Output", "out"),
            port(0, "Input", "in"),
            port(1, "Output", "out"),
            port(0, "Input", "in"),
            port(1, "Output", "a-b"),
        ),
    )
    .unwrap();
    // The installed plugins come after the bad bundle: a graph of one of them still renders.
    let path = format!("{}:/usr/lib/lv2", dir.join("lv2").display());
    let env = [("LV2_PATH", path.as_str())];
    let o = fugue_env(&["plugins", "urn:fugue"], &env);
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("malformed description, cannot be used: its 2 ports should have lv2:index 0 to 1, but one has 4000000000")
            && out.contains("but one has 5")
            && out.contains("requires the options: http://lv2plug.in/ns/ext/buf-size#sequenceSize")
            && out.contains("malformed description, cannot be used: a port's lv2:symbol is `a-b`, which is not a C identifier"),
        "{out}"
    );
    assert!(!stderr(&o).contains("lilv"), "{}", stderr(&o));
    let o = render(&dir, "far", "uri: \"urn:fugue:test:far\",", &env);
    let e = one_error(&o);
    assert!(
        e.contains("whose description is malformed (its 2 ports should have lv2:index 0 to 1, but one has 4000000000)"),
        "{e}"
    );
    let o = render(&dir, "option", "uri: \"urn:fugue:test:option\",", &env);
    let e = one_error(&o);
    assert!(
        e.contains(
            "requires the option <http://lv2plug.in/ns/ext/buf-size#sequenceSize> at instantiation"
        ),
        "{e}"
    );
    // A relative folder in LV2_PATH (lilv itself crashes on one).
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .current_dir(&dir)
        .env("LV2_PATH", "lv2")
        .args(["plugins", "urn:fugue"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    assert!(stdout(&o).contains("4 plugins matching"), "{}", stdout(&o));
    if Path::new("/usr/lib/lv2/amp-swh.lv2").is_dir() {
        let o = render(
            &dir,
            "amp",
            "uri: \"http://plugin.org.uk/swh-plugins/amp\",",
            &env,
        );
        assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
        assert!(!stderr(&o).contains("lilv"), "{}", stderr(&o));
    }
}

/// A plugin is not run below 8 kHz (some swh plugins end the process there): refused in
/// one sentence with the rate it would run at.
#[test]
fn a_plugin_runs_between_8_and_768_khz() {
    let Some(_) = installed("a_plugin_runs_between_8_and_768_khz") else {
        return;
    };
    if !Path::new("/usr/lib/lv2/amp-swh.lv2").is_dir() {
        eprintln!("SKIPPED a_plugin_runs_between_8_and_768_khz: swh-lv2 is not installed");
        return;
    }
    let dir = folder("lv2", "low-rate");
    let g = graph_file(
        &dir,
        "low",
        "o = { kind: \"osc\", freq: 100, };\np = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/amp\", };\ns = { kind: \"sink\", };\no.1 -> p.1 -> s.1;\n",
    );
    let out = dir.join("low.wav");
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--rate",
        "500",
        "--seconds",
        "0.1",
        "--force",
    ]);
    let e = one_error(&o);
    assert!(
        e.contains("which would run at 500 Hz") && e.contains("at 8000 Hz or more"),
        "{e}"
    );
    // Nor above 768 kHz, where plugins size their memory by a rate of their own (here
    // 196 MHz behind a resampler: tapeDelay took 8.4 GB there).
    let g = graph_file(
        &dir,
        "high",
        "o = { kind: \"osc\", freq: 100, };\nup = { kind: \"resampler\", ratio: 4096, conv: \"zero_hold\", };\np = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/amp\", };\ndown = { kind: \"resampler\", ratio: \"1/4096\", conv: \"zero_hold\", };\ns = { kind: \"sink\", };\no.1 -> up.1 -> p.1 -> down.1 -> s.1;\n",
    );
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--buffer",
        "16",
        "--seconds",
        "0.001",
        "--force",
    ]);
    let e = one_error(&o);
    assert!(
        e.contains("which would run at 196608000 Hz") && e.contains("at 768000 Hz or less"),
        "{e}"
    );
}

/// An optional CV input is given a buffer of silence: a plugin that reads it in `activate`
/// without checking that it was connected (swh's lowpass_iir, described here with its
/// `stages` control as an optional CV port) reads zeros instead of a null pointer.
#[test]
fn an_optional_cv_port_is_connected_to_silence() {
    let Some(_) = installed("an_optional_cv_port_is_connected_to_silence") else {
        return;
    };
    let library = Path::new("/usr/lib/lv2/lowpass_iir-swh.lv2/plugin-linux.so");
    if !library.is_file() {
        eprintln!(
            "SKIPPED an_optional_cv_port_is_connected_to_silence: no {}",
            library.display()
        );
        return;
    }
    let dir = folder("lv2", "cv-optional");
    let b = dir.join("lv2/cv.lv2");
    std::fs::create_dir_all(&b).unwrap();
    let prefixes = TTL_PREFIXES;
    std::fs::write(
        b.join("manifest.ttl"),
        format!(
            "{prefixes}<http://plugin.org.uk/swh-plugins/lowpass_iir> a lv2:Plugin ; \
             lv2:binary <file://{}> ; rdfs:seeAlso <cv.ttl> .\n",
            library.display()
        ),
    )
    .unwrap();
    std::fs::write(
        b.join("cv.ttl"),
        format!(
            "{prefixes}<http://plugin.org.uk/swh-plugins/lowpass_iir> a lv2:Plugin ; \
             doap:name \"Lowpass, stages as CV\" ; lv2:optionalFeature lv2:hardRTCapable ;\n\
             lv2:port [ a lv2:InputPort , lv2:ControlPort ; lv2:index 0 ; lv2:symbol \"cutoff\" ; \
             lv2:name \"Cutoff\" ; lv2:minimum 1 ; lv2:maximum 20000 ; lv2:default 1000 ] , \
             [ a lv2:InputPort , lv2:CVPort ; lv2:portProperty lv2:connectionOptional ; \
             lv2:index 1 ; lv2:symbol \"stages\" ; lv2:name \"Stages\" ] , \
             [ a lv2:InputPort , lv2:AudioPort ; lv2:index 2 ; lv2:symbol \"in\" ; lv2:name \"In\" ] , \
             [ a lv2:OutputPort , lv2:AudioPort ; lv2:index 3 ; lv2:symbol \"out\" ; lv2:name \"Out\" ] .\n"
        ),
    )
    .unwrap();
    let path = dir.join("lv2");
    let env = [("LV2_PATH", path.to_str().unwrap())];
    let o = render(
        &dir,
        "cv",
        "uri: \"http://plugin.org.uk/swh-plugins/lowpass_iir\",",
        &env,
    );
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
}

#[test]
fn plugins_lists_ports_controls_and_ranges_as_text_and_json() {
    let Some(all) = installed("plugins_lists_ports_controls_and_ranges") else {
        return;
    };
    let o = fugue(&["plugins", "foverdrive"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("http://plugin.org.uk/swh-plugins/foverdrive\n"),
        "{out}"
    );
    assert!(out.contains("audio: 1 in [input], 1 out [output]"), "{out}");
    assert!(out.contains("control drive 1..3 (default 1)"), "{out}");
    // A port read out with no range nor default declared: its symbol and name.
    let o = fugue(&["plugins", "artificialLatency"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("  reads out latency: latency\n"),
        "{}",
        stdout(&o)
    );
    assert!(
        out.contains(&format!(
            "1 plugin matching `foverdrive` (of {})",
            all.len()
        )),
        "{out}"
    );
    let o = fugue(&["plugins", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), all.len());
    let amb = list
        .iter()
        .find(|p| p["uri"] == "http://drobilla.net/plugins/mda/Ambience")
        .unwrap();
    let mix = amb["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["symbol"] == "mix")
        .unwrap();
    assert_eq!(mix["kind"], "control");
    assert_eq!(mix["min"], 0.0);
    assert_eq!(mix["max"], 1.0);
    assert!((mix["default"].as_f64().unwrap() - 0.9).abs() < 1e-6);
}

#[test]
fn the_host_loads_plugin_graphs_and_says_each_bad_one_in_a_line_while_it_plays() {
    let Some(_) = installed("the_host_loads_plugin_graphs_and_says_each_bad_one") else {
        return;
    };
    let dir = folder("lv2", "host");
    let graph = |name: &str, node: &str| {
        graph_file(
            &dir,
            name,
            &format!(
                "o = {{ kind: \"osc\", freq: 440, }};\np = {{ kind: \"lv2\", {node} }};\ns = {{ kind: \"sink\", }};\no.1 -> p.1 -> s.1;\n"
            ),
        )
    };
    let good = graph("good", &format!("{FOVERDRIVE} drive: 2,"));
    let unknown = graph(
        "unknown",
        "uri: \"http://plugin.org.uk/swh-plugins/foverdrvie\",",
    );
    let range = graph("range", &format!("{FOVERDRIVE} drive: 9,"));
    let script = dir.join("s.txt");
    std::fs::write(
        &script,
        format!(
            "load a {}\nload b {}\nload c {}\nwait 0.05\nunload a\nload d {}\nwait 0.05\nlist\nset d p uri 5\nset d p wcet 5\nset d p drive x\nset d p drvie 2\n",
            good.display(),
            unknown.display(),
            range.display(),
            good.display()
        ),
    )
    .unwrap();
    let mix = dir.join("mix.wav");
    let host = |env: &[(&str, &str)]| {
        fugue_env(
            &[
                "host",
                "--backend",
                "offline",
                "--script",
                script.to_str().unwrap(),
                "--record",
                mix.to_str().unwrap(),
                "--force",
            ],
            env,
        )
    };
    let o = host(&[]);
    // A command failed: the host played on, and the run fails as it ends.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(" failed") && stderr(&o).contains("the host ran the others"),
        "{}",
        stderr(&o)
    );
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(lines.len(), 6, "{err}");
    assert!(
        lines[0].contains("s.txt:2:") && lines[0].contains("nearest installed"),
        "{err}"
    );
    assert!(
        lines[1].contains("s.txt:3:") && lines[1].contains("1 to 3"),
        "{err}"
    );
    // A plugin's URI and cost are not live, whatever the value; its controls are, and
    // take numbers.
    for (i, attr) in ["uri", "wcet"].iter().enumerate() {
        assert!(
            lines[2 + i].contains(&format!(
                "attribute `{attr}` of node `p` cannot change while the graph plays (the live attributes of kind lv2 are the parameters its nodes load)"
            )),
            "{err}"
        );
    }
    assert!(lines[4].contains("`x` is not a number"), "{err}");
    // A control the plugin does not have: what `set` asked, not an attribute of the node.
    assert!(
        lines[5].contains("node `p` cannot set `drvie`, which is no control of plugin")
            && lines[5].contains("did you mean `drive`?"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let out = stdout(&o);
    assert!(out.contains("1 loaded: d"), "{out}");
    let w = fugue_testkit::wav::channels(&mix);
    assert!(w[0].iter().any(|&x| x != 0.0), "the host played nothing");
    // Without lilv: every plugin graph is refused, naming the package; the host plays on.
    let o = host(&[(fugue_lv2::LIBRARY_VAR, "/nonexistent/liblilv-0.so.0")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
    // The four loads, the unload of the graph that was not loaded, the four sets.
    assert_eq!(lines.len(), 9, "{err}");
    let lilv = lines
        .iter()
        .filter(|l| l.contains("install the package liblilv-0-0"));
    assert_eq!(lilv.count(), 4, "{err}");
    assert!(stdout(&o).contains("no graph is loaded"), "{}", stdout(&o));
}

#[test]
fn info_lists_a_plugins_control_outputs_and_the_profile_reports_their_values() {
    let Some(_) = installed("info_lists_a_plugins_control_outputs") else {
        return;
    };
    let dir = folder("lv2", "readings");
    // A gate (control outputs `level` and `gate_state`) on a loud tone, and a limiter
    // (`attenuation`, `latency`) on the same tone pushed 20 dB over its limit.
    let g = graph_file(
        &dir,
        "meters",
        "tone = { kind: \"osc\", freq: 220, volume: 0.9, };\n\
         gate = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/gate\", lf_fc: 25, threshold: -30, };\n\
         lim = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/fastLookaheadLimiter\", ingain: 20, limit: -6, };\n\
         out = { kind: \"sink\", in: 3, };\n\
         tone.1 -> gate.1 -> out.1;\n tone.1 -> lim.1;\n tone.1 -> lim.2;\n lim.1 -> out.2;\n lim.2 -> out.3;\n",
    );
    let o = fugue(&["info", g.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "control outputs, reported by `fugue profile`: level (-90 to 0), gate_state (0 to 1)"
        ),
        "{out}"
    );
    assert!(out.contains("controls: lf_fc 25 (25 to 4000)"), "{out}");
    assert!(out.contains("threshold -30 (-70 to 20)"), "{out}");
    let o = fugue(&["info", g.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["details"][1]["node"], "lim", "{v}");

    let report = dir.join("report");
    let o = fugue(&[
        "profile",
        g.to_str().unwrap(),
        "--backend",
        "offline",
        "--seconds",
        "1",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("what the nodes report after the last cycle:"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("profile.json")).unwrap()).unwrap();
    let r = &json["readings"];
    // The tone (220 Hz, above the key filter's 25 Hz) is over the gate's threshold: the gate
    // is open and its level is about the tone's (0.9 peak: about -1 dB).
    let level = r["gate"]["level"].as_f64().unwrap();
    assert!((-12.0..=3.0).contains(&level), "{r}");
    assert!(r["gate"]["gate_state"].as_f64().unwrap() > 0.0, "{r}");
    // The limiter takes the tone 20 dB up and holds it at -6 dB: it attenuates by well
    // over 10 dB.
    let att = r["lim"]["attenuation"].as_f64().unwrap();
    assert!(att > 10.0, "{r}");
    assert!(r["lim"]["latency"].as_f64().unwrap() >= 0.0, "{r}");
}

#[test]
fn a_plugin_is_never_cut_into_sub_blocks_so_pipelining_keeps_seqs_samples() {
    let Some(_) = installed("a_plugin_is_never_cut_into_sub_blocks") else {
        return;
    };
    // swh's delay_n and comb_n ramp their controls over each call: run on quarter blocks,
    // they would give other samples than seq on whole blocks.
    let dir = folder("lv2", "pipeline");
    let g = graph_file(
        &dir,
        "line",
        "src = { kind: \"noise\", seed: 5, volume: 0.3, };\n\
         a = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/delay_n\", delay_time: 0.01, };\n\
         b = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/comb_n\", };\n\
         d = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/lowpass_iir\", cutoff: 3000, };\n\
         out = { kind: \"sink\", };\n\
         src.1 -> a.1 -> b.1 -> d.1;\nd.1 -> out.1;\n",
    );
    let run = |name: &str, extra: &[&str]| {
        let out = dir.join(format!("{name}.wav"));
        let mut args = vec![
            "render",
            g.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "1",
            "--force",
        ];
        args.extend_from_slice(extra);
        let o = fugue(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        (bits(&out), stderr(&o))
    };
    let (seq, _) = run("seq", &["-e", "seq"]);
    let (piped, said) = run("ws", &["-e", "ws", "-t", "2", "--pipeline", "4"]);
    assert!(
        said.contains("not pipelined: node `a` (lv2) gives other samples when a block is cut into shorter calls"),
        "{said}"
    );
    assert!(seq == piped, "pipelining changed an LV2 graph's samples");
    // Two blocks as one cycle are pipelined by block: refused for the same reason.
    let (overlapped, said) = run("overlap", &["-e", "ws", "-t", "2", "--overlap", "2"]);
    assert!(
        said.contains("overlap 2: node `a` (lv2) gives other samples when a block is cut into shorter calls, so it runs one block per cycle"),
        "{said}"
    );
    assert!(
        seq == overlapped,
        "--overlap changed an LV2 graph's samples"
    );
    let (auto, _) = run("auto", &[]);
    assert!(seq == auto, "auto changed an LV2 graph's samples");
}

#[test]
fn lv2_warnings_have_places_suggestions_and_count_under_strict() {
    let Some(_) = installed("lv2_warnings_have_places_suggestions_and_count_under_strict") else {
        return;
    };
    let dir = folder("lv2", "lint");
    // Three nodes of one plugin not declared real-time safe, a misspelt control, a
    // control given by its name in another case, a bound written as `fugue plugins` shows
    // it (0.45 x rate), and an instrument.
    let g = graph_file(
        &dir,
        "g",
        "src = { kind: \"osc\", freq: 220, volume: 0.5, };\n\
         p = { kind: \"lv2\", uri: \"http://drobilla.net/plugins/mda/Combo\", drvie: 0.5, Drive: 0.3, };\n\
         a = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/lowpass_iir\", cutoff: 21600, };\n\
         b = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/lowpass_iir\", };\n\
         c = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/lowpass_iir\", };\n\
         j = { kind: \"lv2\", uri: \"http://drobilla.net/plugins/mda/JX10\", };\n\
         out = { kind: \"sink\", in: 2, };\n\
         src.1 -> p.1;\nsrc.1 -> p.2;\np.1 -> a.1 -> b.1 -> c.1;\nc.1 -> out.1;\nj.1 -> out.2;\n",
    );
    // A name that is no control is an error for `check`, as for the built-in kinds.
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("error: ") && e.contains("g.ag:2:66: node `p` has attribute `drvie`, which is no control of plugin <http://drobilla.net/plugins/mda/Combo>; did you mean `drive`?"),
        "{e}"
    );
    assert!(
        e.contains("g.ag:2:78:") && e.contains("attribute `Drive`"),
        "{e}"
    );
    // A port's name without its unit (`Frequency` of `Frequency (Hz)`) is taken as meant
    // for the port's symbol.
    let named = graph_file(
        &dir,
        "named",
        "o = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/analogueOsc\", Frequency: 100, };\n\
         out = { kind: \"sink\", };\no.1 -> out.1;\n",
    );
    let e2 = stderr(&fugue(&["check", named.to_str().unwrap()]));
    assert!(
        e2.contains("attribute `Frequency`, which is no control")
            && e2.contains("did you mean `freq`?"),
        "{e2}"
    );
    assert_eq!(
        e.matches("lowpass_iir> does not declare lv2:hardRTCapable")
            .count(),
        1,
        "{e}"
    );
    assert!(
        e.contains("g.ag:3:1:"),
        "said at the plugin's first node: {e}"
    );
    assert!(
        e.contains("JX10> takes events (MIDI notes) on its port `event_in`"),
        "{e}"
    );
    assert!(e.contains("g.ag: 2 problems"), "{e}");
    assert_eq!(e.matches("warning: ").count(), 2, "{e}");
    let o = fugue(&["check", "--strict", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = dir.join("g.wav");
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.1",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--strict makes warnings errors"),
        "{}",
        stderr(&o)
    );
    // A whole-number control refuses a fraction, at its place.
    let g = graph_file(
        &dir,
        "whole",
        "p = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/analogueOsc\", wave: 2.5, };\nout = { kind: \"sink\", };\np.1 -> out.1;\n",
    );
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "whole.ag:1:73: node `p` (lv2): attribute `wave` = `2.5` is not a whole number"
        ),
        "{}",
        stderr(&o)
    );
    // `info --rate` describes the controls at that rate: a range that follows it, and a
    // value valid only there.
    let g = graph_file(
        &dir,
        "rate",
        "p = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/analogueOsc\", freq: 30000, };\nout = { kind: \"sink\", };\np.1 -> out.1;\n",
    );
    let o = fugue(&["info", g.to_str().unwrap(), "--rate", "192000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("freq 30000 (0.192 to 95808)"), "{out}");
    // An output the plugin does not have is the check's error, with its place.
    let g = graph_file(
        &dir,
        "outs",
        "src = { kind: \"noise\", volume: 0.3, };\n\
         p = { kind: \"lv2\", uri: \"http://drobilla.net/plugins/mda/Ambience\", };\n\
         out = { kind: \"sink\", in: 3, };\n\
         src.1 -> p.1;\np.1 -> out.1;\np.2 -> out.2;\np.3 -> out.3;\n",
    );
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("outs.ag:2:1: node `p` (lv2) is plugin <http://drobilla.net/plugins/mda/Ambience> with 2 audio output(s), but the graph uses 3 output port(s)"),
        "{}",
        stderr(&o)
    );
}

/// `--executor auto` on a render too short to measure keeps seq without making any other
/// plan's processors: a plugin whose instances share process-wide state (mda VocInput's
/// random generator) renders the bytes of `-e seq`.
#[test]
fn auto_that_keeps_seq_renders_seqs_bytes_with_a_plugin_of_shared_state() {
    let test = "auto_that_keeps_seq_renders_seqs_bytes_with_a_plugin_of_shared_state";
    let Some(plugins) = installed(test) else {
        return;
    };
    let uri = "http://drobilla.net/plugins/mda/VocInput";
    if !plugins.iter().any(|p| p.uri == uri) {
        skip(test, "mda VocInput (Debian mda-lv2) is not installed");
        return;
    }
    let dir = folder("lv2", "auto-short");
    let g = graph_file(
        &dir,
        "voc.ag",
        &format!(
            "n = {{ kind: \"noise\", seed: 5, volume: 0.3, }};\nm = {{ kind: \"osc\", freq: 220, volume: 0.5, }};\nv = {{ kind: \"lv2\", uri: \"{uri}\", }};\no = {{ kind: \"sink\", in: 2, }};\nn.1 -> v.1;\nm.1 -> v.2;\nv.1 -> o.1;\nv.2 -> o.2;\n"
        ),
    );
    let mut out = Vec::new();
    for e in ["seq", "auto"] {
        let wav = dir.join(format!("{e}.wav"));
        let o = fugue(&[
            "render",
            g.to_str().unwrap(),
            "-o",
            wav.to_str().unwrap(),
            "--seconds",
            "1",
            "-e",
            e,
            "--force",
        ]);
        assert!(o.status.success(), "{e}: {}", stderr(&o));
        if e == "auto" {
            assert!(stderr(&o).contains("chose seq"), "{}", stderr(&o));
        }
        out.push(std::fs::read(&wav).unwrap());
    }
    assert!(out[0] == out[1], "auto's render differs from seq's");
}

/// A plugin graph loaded in the host plays what a render of it plays, from its first
/// sample: the host measures a graph on a few cycles and then resets it, and a plugin's
/// reset is a new instance (deactivating and activating left many plugins' delay lines and
/// filter memory full of the calibration's audio).
#[test]
fn the_host_plays_a_plugin_graph_from_a_fresh_state() {
    let Some(plugins) = installed("the_host_plays_a_plugin_graph_from_a_fresh_state") else {
        return;
    };
    let dir = folder("lv2", "host_fresh");
    for (k, (uri, controls)) in CASES.iter().enumerate() {
        let Some(p) = plugins.iter().find(|p| p.uri == *uri) else {
            skip(
                "the_host_plays_a_plugin_graph_from_a_fresh_state",
                &format!("{uri} is not installed"),
            );
            continue;
        };
        let ins = p.audio(true).count();
        let mut g = String::from("src = { kind: \"noise\", seed: 3, volume: 0.5, };\n");
        g += &format!("p = {{ kind: \"lv2\", uri: \"{uri}\",");
        for (sym, v) in *controls {
            g += &format!(" {sym}: {v:?},");
        }
        g += " };\ns = { kind: \"sink\", in: 1, };\np.1 -> s.1;\n";
        for i in 1..=ins {
            g += &format!("src.1 -> p.{i};\n");
        }
        let graph = graph_file(&dir, &format!("g{k}"), &g);
        let script = dir.join(format!("s{k}.txt"));
        std::fs::write(&script, format!("load z {}\nwait 0.25\n", graph.display())).unwrap();
        let (hw, rw) = (dir.join(format!("h{k}.wav")), dir.join(format!("r{k}.wav")));
        let o = fugue(&[
            "host",
            "--backend",
            "offline",
            "--buffer",
            "256",
            "--script",
            script.to_str().unwrap(),
            "--record",
            hw.to_str().unwrap(),
            "--force",
        ]);
        assert!(o.status.success(), "{uri}: {}", stderr(&o));
        let o = fugue(&[
            "render",
            graph.to_str().unwrap(),
            "-o",
            rw.to_str().unwrap(),
            "--seconds",
            "0.25",
            "--buffer",
            "256",
            "-e",
            "seq",
            "--force",
        ]);
        assert!(o.status.success(), "{uri}: {}", stderr(&o));
        // The host's mix is stereo: the graph's one channel in both, added to silence (so a
        // -0.0 is 0.0 there: the values are compared, not their bits).
        let host: Vec<f32> = bits(&hw)
            .into_iter()
            .step_by(2)
            .map(f32::from_bits)
            .collect();
        let render: Vec<f32> = bits(&rw).into_iter().map(f32::from_bits).collect();
        assert!(host.len() >= render.len(), "{uri}");
        let first = (0..render.len()).find(|&i| host[i] != render[i]);
        assert_eq!(
            first, None,
            "{uri}: the host's recording differs from the render"
        );
    }
}

/// A bundle lilv cannot parse is said once, in fugue's words, naming its file; lilv's own
/// lines do not reach standard error, and the other plugins play.
#[test]
fn a_bundle_lilv_cannot_read_is_said_once_in_a_warning() {
    let Some(_) = installed("a_bundle_lilv_cannot_read_is_said_once_in_a_warning") else {
        return;
    };
    let dir = folder("lv2", "broken-bundle");
    let bundle = dir.join("broken.lv2");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(
        bundle.join("manifest.ttl"),
        "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n<urn:x:broken> a lv2:Plugin ; lv2:binary <x.so> ; rdfs:seeAlso <p.ttl> .\n",
    )
    .unwrap();
    let path = format!("{}:/usr/lib/lv2", dir.display());
    let out = dir.join("chain.wav");
    for args in [
        vec!["plugins", "amp"],
        vec![
            "render",
            "examples/lv2/parallel.ag",
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.05",
            "--force",
        ],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .env("LV2_PATH", &path)
            .args(&args)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(o.status.success(), "{args:?}: {e}");
        let said: Vec<&str> = e
            .lines()
            .filter(|l| l.contains("lilv could not read every installed plugin description"))
            .collect();
        assert_eq!(said.len(), 1, "{args:?}: {e}");
        assert!(said[0].contains("broken.lv2/manifest.ttl"), "{e}");
        assert!(e.lines().all(|l| l.starts_with("fugue")), "{args:?}: {e}");
    }
}

/// What plugins allocate for themselves, which no plan counts, is bounded: under `ulimit -v`
/// of 1.2 GB, 120 instances of swh's giantFlange at 768 kHz (16 MiB each, as the process's
/// virtual size grows) are refused at the instance that passes half of it, in one sentence
/// naming the node, and nothing is written (the plugin, which does not check what `malloc`
/// returns, crashed the process at the instance the address space refused).
#[test]
fn the_memory_plugins_take_is_bounded() {
    let Some(plugins) = installed("the_memory_plugins_take_is_bounded") else {
        return;
    };
    let uri = "http://plugin.org.uk/swh-plugins/giantFlange";
    if !plugins.iter().any(|p| p.uri == uri) {
        skip(
            "the_memory_plugins_take_is_bounded",
            "swh-lv2's giantFlange is not installed",
        );
        return;
    }
    let dir = folder("lv2", "plugin-memory");
    let n = 120;
    let mut text = String::from("src = { kind: \"noise\", volume: 0.3, };\n");
    for i in 1..=n {
        text += &format!("p{i} = {{ kind: \"lv2\", uri: \"{uri}\", }};\n");
    }
    text += &format!(
        "mix = {{ kind: \"mix\", in: {n}, volume: 0.01, }};\nout = {{ kind: \"sink\", }};\n"
    );
    for i in 1..=n {
        text += &format!("src.1 -> p{i}.1;\np{i}.1 -> mix.{i};\n");
    }
    text += "mix.1 -> out.1;\n";
    let g = graph_file(&dir, "flanges", &text);
    let out = dir.join("x.wav");
    let _ = std::fs::remove_file(&out);
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1200000 && exec '{}' render '{}' -o '{}' --seconds 0.01 --rate 768000 --executor seq",
            env!("CARGO_BIN_EXE_fugue"),
            g.display(),
            out.display()
        ))
        .env_remove(common::FAULT_VAR)
        .output()
        .unwrap();
    let e = one_error(&o);
    assert!(
        e.contains("flanges.ag:")
            && e.contains(&format!("is plugin <{uri}>, which took "))
            && e.contains(
                "when instantiated at 768000 Hz: that makes the LV2 plugins of the process hold "
            )
            && e.contains("more than the limit of ")
            && e.contains("`ulimit -v`"),
        "{e}"
    );
    assert!(!out.exists());
}
