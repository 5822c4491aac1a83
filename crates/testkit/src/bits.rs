//! Audio compared bit for bit: what the docs call identical is identical in every bit, so
//! `-0.0` differs from `+0.0` and a NaN equals only the same NaN (f32 `==` says otherwise).

/// The first sample where `a` and `b` differ in their bits, as `(index, a, b)`; a length
/// difference counts at the shorter length (with NaN standing for the missing sample).
pub fn first_difference(a: &[f32], b: &[f32]) -> Option<(usize, f32, f32)> {
    if let Some(i) = a
        .iter()
        .zip(b)
        .position(|(x, y)| x.to_bits() != y.to_bits())
    {
        return Some((i, a[i], b[i]));
    }
    (a.len() != b.len()).then(|| {
        let n = a.len().min(b.len());
        (
            n,
            a.get(n).copied().unwrap_or(f32::NAN),
            b.get(n).copied().unwrap_or(f32::NAN),
        )
    })
}

/// Whether `a` and `b` hold the same samples, bit for bit.
pub fn same_bits(a: &[f32], b: &[f32]) -> bool {
    first_difference(a, b).is_none()
}

/// Whether two sets of channels hold the same samples, bit for bit; the first difference as
/// `(channel, index, a, b)` otherwise (a channel count difference is reported at channel
/// `min(len)`, index 0).
pub fn first_channel_difference(
    a: &[Vec<f32>],
    b: &[Vec<f32>],
) -> Option<(usize, usize, f32, f32)> {
    for (c, (x, y)) in a.iter().zip(b).enumerate() {
        if let Some((i, p, q)) = first_difference(x, y) {
            return Some((c, i, p, q));
        }
    }
    (a.len() != b.len()).then(|| (a.len().min(b.len()), 0, f32::NAN, f32::NAN))
}

/// Panics, naming `what` and the first difference (channel, sample, both values and their
/// bits), unless `got` and `want` are the same bit for bit.
#[track_caller]
pub fn assert_same_channels(got: &[Vec<f32>], want: &[Vec<f32>], what: &str) {
    if let Some((c, i, g, w)) = first_channel_difference(got, want) {
        panic!(
            "{what}: channel {c} (of {} against {}), sample {i}: {g:?} ({:#010x}) where {w:?} ({:#010x}) was expected",
            got.len(),
            want.len(),
            g.to_bits(),
            w.to_bits()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_and_nan_are_told_apart_where_eq_is_not() {
        assert!([-0.0f32] == [0.0f32]);
        assert!(!same_bits(&[-0.0], &[0.0]));
        assert!(same_bits(&[f32::NAN], &[f32::NAN]));
        assert_eq!(
            first_difference(&[1.0, 2.0], &[1.0, 2.5]),
            Some((1, 2.0, 2.5))
        );
        assert!(first_difference(&[1.0], &[1.0, 2.0]).is_some());
        assert!(same_bits(&[], &[]));
        let a = vec![vec![1.0f32, -0.0], vec![3.0]];
        let b = vec![vec![1.0f32, 0.0], vec![3.0]];
        assert_eq!(
            first_channel_difference(&a, &b).map(|d| (d.0, d.1)),
            Some((0, 1))
        );
        assert!(first_channel_difference(&a, &a[..1]).is_some());
        assert!(std::panic::catch_unwind(|| assert_same_channels(&a, &b, "x")).is_err());
        assert_same_channels(&a, &a, "same");
    }
}
