//! The installed URIs nearest to one that is not installed, for the error that names it.

/// Characters of the wanted URI compared at most beyond the longest candidate's length: the
/// edit distance takes time in the product of the two lengths, and a URI far longer than any
/// installed one is far from all of them whatever its tail holds.
const SLACK: usize = 16;

/// The `n` strings of `candidates` nearest to `wanted`, nearest first (ties in the
/// candidates' order). A candidate's distance is the Levenshtein distance over the
/// lower-cased characters to the whole URI or to its last segment (after the last `/`, `#`
/// or `:`), whichever is smaller: a misspelled URI finds its plugin, and so does the short
/// name alone (`plate` finds `http://plugin.org.uk/swh-plugins/plate`). Only the first
/// characters of a `wanted` longer than every candidate are compared (the longest one's
/// length and [`SLACK`]), so the time taken is bounded by the candidates, whatever `wanted`'s
/// length.
pub fn uris<'a>(candidates: impl Iterator<Item = &'a str>, wanted: &str, n: usize) -> Vec<&'a str> {
    let lower: Vec<(usize, &str, String)> = candidates
        .enumerate()
        .map(|(i, c)| (i, c, c.to_lowercase()))
        .collect();
    let longest = lower.iter().map(|(_, _, l)| l.chars().count()).max();
    let Some(longest) = longest else {
        return Vec::new();
    };
    let want: String = wanted
        .chars()
        .take(longest + SLACK)
        .collect::<String>()
        .to_lowercase();
    let mut scored: Vec<(usize, usize, &str)> = lower
        .iter()
        .map(|(i, c, l)| {
            let whole = distance(l, &want);
            let segment = distance(last_segment(l), &want);
            (whole.min(segment), *i, *c)
        })
        .collect();
    scored.sort_unstable();
    scored.into_iter().take(n).map(|(_, _, c)| c).collect()
}

/// What follows the last `/`, `#` or `:` of `uri`, those at its end left out (all of it when
/// it has none).
fn last_segment(uri: &str) -> &str {
    match uri
        .trim_end_matches(['/', '#', ':'])
        .rsplit_once(['/', '#', ':'])
    {
        Some((_, last)) if !last.is_empty() => last,
        _ => uri,
    }
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

    #[test]
    fn a_short_name_finds_its_plugin() {
        let all = [
            "http://drobilla.net/plugins/mda/DX10",
            "http://drobilla.net/plugins/mda/Delay",
            "http://plugin.org.uk/swh-plugins/plate",
            "urn:example#Plait",
        ];
        assert_eq!(uris(all.into_iter(), "plate", 1), [all[2]]);
        assert_eq!(uris(all.into_iter(), "delay", 1), [all[1]]);
        assert_eq!(uris(all.into_iter(), "plait", 1), [all[3]]);
        assert_eq!(last_segment("http://x/y/"), "y");
        assert_eq!(last_segment("plain"), "plain");
        assert!(uris(std::iter::empty(), "plate", 3).is_empty());
    }

    /// A megabyte of URI is compared by its first characters only (the whole of it took
    /// seconds per node): the nearest are those of its head.
    #[test]
    fn a_huge_uri_is_compared_by_its_head() {
        let all = ["http://x/mda/Delay", "http://x/swh/gate"];
        let huge = format!("http://x/swh/gate{}", "x".repeat(1 << 20));
        assert_eq!(uris(all.into_iter(), &huge, 1), [all[1]]);
        let head: String = huge.chars().take(all[0].len() + SLACK).collect();
        assert_eq!(
            uris(all.into_iter(), &huge, 2),
            uris(all.into_iter(), &head, 2)
        );
    }
}
