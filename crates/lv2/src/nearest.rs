//! The installed URIs nearest to one that is not installed, for the error that names it.

/// The `n` strings of `candidates` nearest to `wanted` (Levenshtein distance over the
/// lower-cased characters, ties in the candidates' order), nearest first.
pub fn uris<'a>(candidates: impl Iterator<Item = &'a str>, wanted: &str, n: usize) -> Vec<&'a str> {
    let want = wanted.to_lowercase();
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .enumerate()
        .map(|(i, c)| (distance(&c.to_lowercase(), &want), i, c))
        .collect();
    scored.sort_unstable();
    scored.into_iter().take(n).map(|(_, _, c)| c).collect()
}

/// The edit distance between `a` and `b` over their characters (insertions, deletions,
/// substitutions).
fn distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
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
        assert_eq!(distance("ab", "b"), 1);
    }
}
