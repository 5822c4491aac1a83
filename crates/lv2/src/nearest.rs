//! The installed URIs nearest to one that is not installed, for the error that names it.

/// The `n` strings of `candidates` nearest to `wanted` (Levenshtein distance over the
/// lower-cased characters, ties in the candidates' order), nearest first.
pub fn uris<'a>(candidates: impl Iterator<Item = &'a str>, wanted: &str, n: usize) -> Vec<&'a str> {
    let want: Vec<char> = wanted.to_lowercase().chars().collect();
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .enumerate()
        .map(|(i, c)| {
            (
                distance(&c.to_lowercase().chars().collect::<Vec<_>>(), &want),
                i,
                c,
            )
        })
        .collect();
    scored.sort_unstable();
    scored.into_iter().take(n).map(|(_, _, c)| c).collect()
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions).
fn distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_come_first() {
        let all = [
            "http://x/mda/Delay",
            "http://x/mda/Ambience",
            "http://x/swh/gate",
        ];
        assert_eq!(
            uris(all.into_iter(), "http://x/mda/Ambiance", 2),
            ["http://x/mda/Ambience", "http://x/mda/Delay"]
        );
        assert_eq!(distance(&['a', 'b'], &['b']), 1);
    }
}
