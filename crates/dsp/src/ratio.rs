//! Exact sample-rate ratios.

use std::fmt;

/// A positive rational number `num / den` in lowest terms: the ratio of a resampler, or the
/// rate of a node relative to the engine's rate.
///
/// Rates are kept exact so that block sizes downstream of resamplers are exact integers
/// (`block * num / den`) and the phase pattern of a converter repeats every cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: u64,
    den: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ratio {
    /// The ratio 1.
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// Largest denominator [`Ratio::from_f64`] looks for.
    pub const MAX_DEN: u64 = 100_000;

    /// `num / den` in lowest terms; `None` when either is zero.
    pub fn new(num: u64, den: u64) -> Option<Ratio> {
        if num == 0 || den == 0 {
            return None;
        }
        let g = gcd(num, den);
        Some(Ratio {
            num: num / g,
            den: den / g,
        })
    }

    /// The fraction with the smallest denominator (at most [`Ratio::MAX_DEN`]) within a
    /// relative 1e-12 of `x` (continued fractions); `None` when `x` is not positive and finite
    /// or no such fraction exists (`0.5` → 1/2, `2.` → 2/1, `0.91875` → 147/160).
    pub fn from_f64(x: f64) -> Option<Ratio> {
        if !(x.is_finite() && (1e-6..=1e6).contains(&x)) {
            return None;
        }
        // Convergents h/k of the continued fraction of x.
        let (mut h0, mut h1) = (0u64, 1u64);
        let (mut k0, mut k1) = (1u64, 0u64);
        let mut r = x;
        for _ in 0..64 {
            let a = r.floor();
            let a_u = a as u64;
            let h2 = a_u.checked_mul(h1)?.checked_add(h0)?;
            let k2 = a_u.checked_mul(k1)?.checked_add(k0)?;
            if k2 > Self::MAX_DEN {
                return None;
            }
            (h0, h1, k0, k1) = (h1, h2, k1, k2);
            if ((h1 as f64 / k1 as f64) - x).abs() <= 1e-12 * x {
                return Ratio::new(h1, k1);
            }
            let frac = r - a;
            if frac <= 0.0 {
                break;
            }
            r = 1.0 / frac;
        }
        None
    }

    /// The numerator.
    pub fn num(self) -> u64 {
        self.num
    }

    /// The denominator.
    pub fn den(self) -> u64 {
        self.den
    }

    /// The value as a float.
    pub fn as_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The product of two ratios, `None` on overflow.
    pub fn checked_mul(self, other: Ratio) -> Option<Ratio> {
        let g1 = gcd(self.num, other.den);
        let g2 = gcd(other.num, self.den);
        Ratio::new(
            (self.num / g1).checked_mul(other.num / g2)?,
            (self.den / g2).checked_mul(other.den / g1)?,
        )
    }

    /// The inverse `den / num`.
    pub fn recip(self) -> Ratio {
        Ratio {
            num: self.den,
            den: self.num,
        }
    }

    /// `n * self` when it is a whole number.
    pub fn scale(self, n: usize) -> Option<usize> {
        let p = (n as u128) * (self.num as u128);
        let d = self.den as u128;
        let (q, r) = (p / d, p - (p / d) * d);
        (r == 0).then_some(q as usize)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_f64_finds_small_fractions() {
        assert_eq!(Ratio::from_f64(0.5), Ratio::new(1, 2));
        assert_eq!(Ratio::from_f64(2.0), Ratio::new(2, 1));
        assert_eq!(Ratio::from_f64(44100.0 / 48000.0), Ratio::new(147, 160));
        assert_eq!(Ratio::from_f64(1.0 / 3.0), Ratio::new(1, 3));
        assert_eq!(Ratio::from_f64(0.0), None);
        assert_eq!(Ratio::from_f64(-1.0), None);
        assert_eq!(Ratio::from_f64(std::f64::consts::PI), None);
    }

    #[test]
    fn arithmetic() {
        let half = Ratio::new(1, 2).unwrap();
        let two = Ratio::new(2, 1).unwrap();
        assert_eq!(half.checked_mul(two), Some(Ratio::ONE));
        assert_eq!(half.recip(), two);
        assert_eq!(half.scale(512), Some(256));
        assert_eq!(half.scale(511), None);
        assert_eq!(Ratio::new(147, 160).unwrap().scale(320), Some(294));
        assert_eq!(half.to_string(), "1/2");
        assert_eq!(two.to_string(), "2");
    }
}
