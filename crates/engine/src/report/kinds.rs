//! Every node kind of a registry, its ports and attributes, from the registry's
//! descriptions: as text, and as Markdown (`docs/nodes.md`).

use std::fmt::Write as _;

use fugue_dsp::kinds::doc::KindDoc;
use fugue_dsp::Registry;

/// The described kinds of `reg`, in name order.
fn kinds(reg: &Registry) -> Vec<KindDoc> {
    reg.names()
        .iter()
        .filter_map(|n| reg.doc(n).cloned())
        .collect()
}

/// The kinds of `reg` as text, one block per kind (`fugue kinds`).
pub fn text(reg: &Registry) -> String {
    let mut t = String::new();
    for k in kinds(reg) {
        let _ = writeln!(t, "{}: {}", k.name, k.summary);
        let _ = writeln!(t, "  inputs       {}", k.inputs);
        let _ = writeln!(t, "  outputs      {}", k.outputs);
        for (i, (a, what)) in k.attributes.iter().enumerate() {
            let head = if i == 0 { "attributes" } else { "" };
            let live = if k.is_live(a) { " [live]" } else { "" };
            let _ = writeln!(t, "  {head:<12} {a}: {what}{live}");
        }
        if let Some(others) = &k.others {
            let head = if k.attributes.is_empty() {
                "attributes"
            } else {
                ""
            };
            let _ = writeln!(t, "  {head:<12} any other: {others}");
        }
        t.push('\n');
    }
    t.push_str(
        "Every node may also give kind, in and out (its port counts) and wcet (its cost, µs).\n[live]: the host's `set GRAPH NODE ATTR VALUE` changes it while the graph plays.\n",
    );
    t
}

/// The kinds of `reg` as Markdown (`fugue kinds --markdown`: the text of docs/nodes.md).
pub fn markdown(reg: &Registry) -> String {
    let mut t = String::from(
        "# Node kinds\n\n\
         Written by `fugue kinds --markdown` from the registry's descriptions; a test checks that \
         this file is the command's output.\n\n\
         Every node may also give `kind`, `in` and `out` (its port counts; the graph's edges \
         count too) and `wcet` (its cost in µs, for static schedules; 1 when absent). \"Summed\": \
         the kind processes the sum of its input ports. Attributes a node gives that its kind \
         does not read are warnings for `render`, `run` and `info`, and errors for `fugue check`. A \
         **live** attribute can change while the graph \
         plays: `set GRAPH NODE ATTR VALUE` in the host (its shell, a script, the control socket, \
         `fugue ctl`), from the next cycle on.\n\n\
         | kind | what it is | inputs | outputs |\n|---|---|---|---|\n",
    );
    let all = kinds(reg);
    for k in &all {
        let _ = writeln!(
            t,
            "| [`{0}`](#{0}) | {1} | {2} | {3} |",
            k.name, k.summary, k.inputs, k.outputs
        );
    }
    for k in &all {
        let _ = write!(t, "\n## {}\n\n{}.\n\n", k.name, k.summary);
        let _ = writeln!(t, "- inputs: {}", k.inputs);
        let _ = writeln!(t, "- outputs: {}", k.outputs);
        t.push_str("\n| attribute | meaning |\n|---|---|\n");
        for (a, what) in k.attributes.iter() {
            let live = if k.is_live(a) { " **Live.**" } else { "" };
            let _ = writeln!(t, "| `{a}` | {what}{live} |");
        }
        if let Some(others) = &k.others {
            let _ = writeln!(t, "| any other | {others} |");
        }
    }
    t
}
