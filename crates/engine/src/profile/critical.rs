//! What bounds a profiled graph: the nodes ordered by their share of the work, and the
//! critical path of the tasks' mean times, whose length no number of threads can go below.

use super::report::NodeRow;

/// Sorts the nodes' rows by their share of the work (mean time per cycle), the largest
/// first; ties by the longest maximum, then by name.
pub(super) fn sort_by_work(nodes: &mut [NodeRow]) {
    nodes.sort_by(|a, b| {
        b.mean_ns
            .total_cmp(&a.mean_ns)
            .then(b.max_ns.cmp(&a.max_ns))
            .then(a.name.cmp(&b.name))
    });
}

/// The tasks of the longest path through the task graph whose task `i` takes `mean[i]` and
/// waits for the tasks `preds[i]`, first task first (empty for no task). A graph with a cycle
/// (which a plan never has) gives the longest path over the tasks that can be ordered.
pub(super) fn critical_path(mean: &[f64], preds: &[Vec<u32>]) -> Vec<usize> {
    let n = mean.len();
    // Kahn's order: a task after all its predecessors.
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending: Vec<usize> = vec![0; n];
    for (i, ps) in preds.iter().enumerate().take(n) {
        for &p in ps {
            if (p as usize) < n {
                succs[p as usize].push(i);
                pending[i] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    // The longest path ending at each task, and the predecessor it comes through.
    let mut start = vec![0.0f64; n];
    let mut finish = vec![0.0f64; n];
    let mut via: Vec<Option<usize>> = vec![None; n];
    while let Some(i) = ready.pop() {
        finish[i] = start[i] + mean[i];
        for &s in &succs[i] {
            if via[s].is_none() || finish[i] > start[s] {
                start[s] = finish[i];
                via[s] = Some(i);
            }
            pending[s] -= 1;
            if pending[s] == 0 {
                ready.push(s);
            }
        }
    }
    let Some(mut last) = (0..n).max_by(|&a, &b| finish[a].total_cmp(&finish[b])) else {
        return Vec::new();
    };
    let mut path = vec![last];
    while let Some(p) = via[last] {
        path.push(p);
        last = p;
        if path.len() > n {
            break;
        }
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, mean_ns: f64, max_ns: u64) -> NodeRow {
        NodeRow {
            name: name.into(),
            kind: "osc".into(),
            calls: 10,
            min_ns: 0,
            mean_ns,
            p99_ns: max_ns,
            max_ns,
            seq_mean_ns: None,
        }
    }

    #[test]
    fn nodes_are_sorted_by_their_share_of_the_work_not_their_maximum() {
        // `spiky` has the longest maximum (one slow cycle) but the least work.
        let mut nodes = vec![
            row("spiky", 1_000.0, 900_000),
            row("heavy", 50_000.0, 60_000),
            row("mid", 20_000.0, 25_000),
            row("mid2", 20_000.0, 30_000),
        ];
        sort_by_work(&mut nodes);
        let names: Vec<&str> = nodes.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["heavy", "mid2", "mid", "spiky"]);
    }

    ///   0 (1)   1 (5)
    ///     \\   /   \\
    ///      2 (1)   3 (2)
    ///        \\   /
    ///         4 (1)
    #[test]
    fn the_critical_path_is_the_longest_chain_of_mean_times_in_order() {
        let mean = [1.0, 5.0, 1.0, 2.0, 1.0];
        let preds = vec![vec![], vec![], vec![0, 1], vec![1], vec![2, 3]];
        assert_eq!(critical_path(&mean, &preds), [1, 3, 4]);
        // Task order need not be topological.
        let mean = [1.0, 3.0, 2.0];
        let preds = vec![vec![2], vec![], vec![1]];
        assert_eq!(critical_path(&mean, &preds), [1, 2, 0]);
        assert!(critical_path(&[], &[]).is_empty());
        assert_eq!(critical_path(&[4.0], &[vec![]]), [0]);
    }
}
