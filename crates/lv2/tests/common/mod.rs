//! Helpers of the `lv2` kind's tests: the registry with the kind, the examples, and the skip
//! where the plugins are not installed.

#![allow(dead_code)]

use std::path::PathBuf;

use fugue_dsp::Registry;

/// The built-in kinds and `lv2`, its warnings dropped.
pub fn registry() -> Registry {
    let mut r = Registry::with_builtin_kinds();
    fugue_lv2::register(&mut r, |_| {});
    r
}

/// `examples/lv2/NAME` of the repository.
pub fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/lv2")
        .join(name)
}

/// Whether every plugin that `graph` names is installed; says on standard error, where the
/// test harness does not capture it, that `test` is skipped when one is not.
pub fn installed(test: &str, graph: &fugue_graph::TaskGraph) -> bool {
    use std::io::Write as _;
    let plugins = match fugue_lv2::plugins() {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: lilv {e}");
            return false;
        }
    };
    let missing: Vec<String> = graph
        .nodes()
        .iter()
        .filter(|n| n.kind == "lv2")
        .filter_map(|n| n.attr("uri").map(|u| u.as_str().into_owned()))
        .filter(|u| !plugins.iter().any(|p| p.uri == *u))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: {} plugin node(s) name plugins not installed (Debian mda-lv2, swh-lv2): {}",
            missing.len(),
            missing.join(", ")
        );
        return false;
    }
    true
}
