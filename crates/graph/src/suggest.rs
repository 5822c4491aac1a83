//! Near misses: the valid name closest to a mistyped one, for "did you mean ...?" in messages
//! about kinds, attributes and node names.

/// The candidate closest to `word`, when one is close enough to be a likely misspelling:
/// Jaro–Winkler similarity of at least 0.8 (which also takes `freq` for `frequency`), or a
/// Damerau–Levenshtein distance of 1 (a letter added, dropped, changed or two swapped) for
/// names of 3 letters and more, of 2 from 4 letters, compared without case (a name in the
/// wrong case is the nearest there is). Ties go to the smaller edit distance, then to the
/// first candidate. `word` itself is never suggested. Names longer than [`MAX_CHARS`]
/// characters are neither looked up nor suggested, and only the first [`MAX_CANDIDATES`]
/// candidates are looked at.
///
/// ```
/// use fugue_graph::suggest::nearest;
/// let kinds = ["osc", "mix", "sink", "biquad"];
/// assert_eq!(nearest("oscc", kinds), Some("osc"));
/// assert_eq!(nearest("frequency", ["freq", "volume", "phase"]), Some("freq"));
/// assert_eq!(nearest("zzz", kinds), None);
/// assert_eq!(nearest("FREQ", ["phase", "freq"]), Some("freq"));
/// ```
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // Each comparison takes time in the product of the two lengths: a name longer than
    // `MAX_CHARS` is no typo anyone wants spelled back, and past `MAX_CANDIDATES` names the
    // rest are not looked at, so that a huge name or graph cannot hold up the message.
    let too_long = |s: &str| s.len() > MAX_CHARS * 4 || s.chars().count() > MAX_CHARS;
    if too_long(word) {
        return None;
    }
    let mut best: Option<(&'a str, f64, usize)> = None;
    // Compared without case: `FREQ` is a typo of `freq` (distance 0, the nearest there is).
    let lower = word.to_lowercase();
    for c in candidates.into_iter().take(MAX_CANDIDATES) {
        if c == word || c.is_empty() || too_long(c) {
            continue;
        }
        let c_lower = c.to_lowercase();
        let similarity = strsim::jaro_winkler(&lower, &c_lower);
        let distance = strsim::damerau_levenshtein(&lower, &c_lower);
        let short = word.chars().count().min(c.chars().count());
        let close =
            similarity >= 0.8 || (short >= 3 && distance == 1) || (short >= 4 && distance <= 2);
        if !close {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, s, d)) => distance < d || (distance == d && similarity > s),
        };
        if better {
            best = Some((c, similarity, distance));
        }
    }
    best.map(|(c, _, _)| c)
}

/// The longest name [`nearest`] compares, in characters.
pub const MAX_CHARS: usize = 64;

/// The most candidates [`nearest`] looks at (the first ones).
pub const MAX_CANDIDATES: usize = 20_000;

/// `" (did you mean `NAME`?)"` for the candidate [`nearest`] to `word`, or an empty string.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name of 100,000 characters is no typo to look up (each comparison costs the product
    /// of the lengths: this took minutes), nor a candidate to suggest.
    #[test]
    fn huge_names_are_neither_looked_up_nor_suggested() {
        let long = "x".repeat(100_000);
        let near = format!("{long}y");
        assert_eq!(nearest(&near, [long.as_str(), "osc"]), None);
        assert_eq!(nearest("oscc", [long.as_str(), "osc"]), Some("osc"));
    }

    #[test]
    fn near_misses_find_their_name_and_far_ones_nothing() {
        let kinds = [
            "osc",
            "mod",
            "mix",
            "sink",
            "source",
            "gain",
            "biquad",
            "delay",
            "noise",
            "karplus",
            "reverb",
            "load",
            "resampler",
        ];
        assert_eq!(nearest("oscc", kinds), Some("osc"));
        assert_eq!(nearest("sinc", kinds), Some("sink"));
        assert_eq!(nearest("biqaud", kinds), Some("biquad"));
        assert_eq!(nearest("reverv", kinds), Some("reverb"));
        assert_eq!(nearest("resampeler", kinds), Some("resampler"));
        assert_eq!(nearest("Gain", kinds), Some("gain"));
        assert_eq!(nearest("otu", ["osc", "out"]), Some("out"));
        assert_eq!(nearest("mix", ["mod"]), None);
        assert_eq!(nearest("compressor", kinds), None);
        assert_eq!(
            nearest("osc", kinds),
            None,
            "a valid name is not a near miss"
        );
        assert_eq!(nearest("x", ["osc"]), None);
        assert_eq!(
            nearest("frequency", ["freq", "volume", "phase"]),
            Some("freq")
        );
        assert_eq!(
            nearest("feedbak", ["time", "feedback", "wet", "dry"]),
            Some("feedback")
        );
        assert_eq!(did_you_mean("oscc", kinds), "; did you mean `osc`?");
        assert_eq!(did_you_mean("compressor", kinds), "");
    }
}
