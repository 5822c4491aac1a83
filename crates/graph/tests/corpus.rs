//! Every graph file of the shared corpus loads; node and edge counts match independent counts.

use std::path::{Path, PathBuf};

use fugue_graph::{analysis, read_file, GraphError, ReadError};

/// `../shared/data/sub`, or `None` after a counted skip of `test`.
fn data(sub: &str, test: &str) -> Option<PathBuf> {
    fugue_testkit::corpus::dir(env!("CARGO_MANIFEST_DIR"), sub, test)
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Independent counts: node declarations are lines `name = {` / `name =`, edges are arrows.
fn count_ag(text: &str) -> (usize, usize) {
    let nodes = text
        .lines()
        .filter(|l| {
            let t = l.trim_end();
            t.ends_with('=') || t.ends_with("= {") || t.ends_with("={")
        })
        .count();
    let edges = text.matches("->").count();
    (nodes, edges)
}

#[test]
fn all_ag_files_load_with_independent_counts() {
    let Some(d) = data("ag", "all_ag_files_load_with_independent_counts") else {
        return;
    };
    let mut all = Vec::new();
    files(&d, "ag", &mut all);
    assert_eq!(all.len(), 815, "the corpus holds 815 .ag files");
    let mut broken = Vec::new();
    for p in &all {
        let text = std::fs::read_to_string(p).unwrap();
        let g = match read_file(p, None) {
            Ok(g) => g,
            Err(ReadError::Graph {
                error: GraphError::UnknownNode { name, .. },
                location,
                ..
            }) => {
                // Two files of the 2019 corpus (rateau14, rateau17) declare the nodes of one
                // rake and list the edges of another. The reader must refuse them, pointing at
                // an edge that really names an undeclared node.
                let line = text.lines().nth(location.line - 1).unwrap();
                assert!(
                    line[location.column - 1..].starts_with(&name),
                    "{}: {line}",
                    p.display()
                );
                assert!(
                    !text.contains(&format!("{name} =")),
                    "{}: `{name}` is declared",
                    p.display()
                );
                broken.push(p.file_name().unwrap().to_string_lossy().into_owned());
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        let (n, e) = count_ag(&text);
        assert_eq!(g.len(), n, "{}: nodes", p.display());
        assert_eq!(g.edges().len(), e, "{}: edges", p.display());
    }
    broken.sort();
    assert!(broken.len() <= 2, "unexpected failures: {broken:?}");
}

#[test]
fn stg_and_dot_files_load() {
    let (Some(stg), Some(sched)) = (
        data("stg", "stg_and_dot_files_load"),
        data("sched", "stg_and_dot_files_load"),
    ) else {
        return;
    };
    let mut all = Vec::new();
    files(&stg, "stg", &mut all);
    files(&sched, "dot", &mut all);
    assert!(all.len() >= 120, "found {}", all.len());
    for p in &all {
        let g = read_file(p, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(g.len() > 2, "{}", p.display());
    }
}

#[test]
fn application_stg_graphs_match_published_figures() {
    let Some(d) = data("stg", "application_stg_graphs_match_published_figures") else {
        return;
    };
    for (f, cp, work) in [
        ("robot.stg", 569.0, 2483.0),
        ("sparse.stg", 122.0, 1936.0),
        ("fpppp.stg", 1062.0, 7129.0),
    ] {
        let g = read_file(&d.join(f), None).unwrap();
        assert_eq!(analysis::critical_path(&g, false).0, cp, "{f}");
        assert_eq!(analysis::total_work(&g), work, "{f}");
    }
    // rand0000 of 50 tasks: 52 rows (with the two dummy tasks); CP length in its footer.
    let g = read_file(&d.join("50/rand0000.stg"), None).unwrap();
    assert_eq!(g.len(), 52);
    assert_eq!(analysis::critical_path(&g, false).0, 55.0);
}

#[test]
fn kwok_ahmad_levels() {
    let Some(p) = data("sched/kwok-ahmad-9.dot", "kwok_ahmad_levels") else {
        return;
    };
    let g = read_file(&p, None).unwrap();
    let lv = analysis::levels(&g, true);
    let id = |n: &str| g.find(n).unwrap();
    let names: Vec<String> = (1..=9).map(|i| format!("n{i}")).collect();
    let sl: Vec<f64> = names.iter().map(|n| lv.static_level[id(n)]).collect();
    let bl: Vec<f64> = names.iter().map(|n| lv.b_level[id(n)]).collect();
    let tl: Vec<f64> = names.iter().map(|n| lv.t_level[id(n)]).collect();
    assert_eq!(sl, [11., 8., 8., 9., 5., 5., 5., 5., 1.]);
    assert_eq!(bl, [23., 15., 14., 15., 5., 10., 11., 10., 1.]);
    assert_eq!(tl, [0., 6., 3., 3., 3., 10., 12., 8., 22.]);
    let (len, path) = analysis::critical_path(&g, true);
    assert_eq!(len, 23.0);
    let path: Vec<&str> = path.iter().map(|&i| g.node(i).name.as_str()).collect();
    assert_eq!(path, ["n1", "n7", "n9"]);
}
