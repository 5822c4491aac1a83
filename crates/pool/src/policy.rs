//! The scheduling policies: each a named, documented choice of queues and idle behaviour.

use std::fmt;
use std::str::FromStr;

use crate::error::UnknownPolicy;

/// How the pool's threads share work and what an idle thread does. The names (`name()`,
/// `FromStr`) are the ones the C ABI reads from `FUGUE_POOL_POLICY`. See `docs/pool.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// Work sharing: one LIFO stack under one mutex; idle threads wait on a condition
    /// variable that every push signals when somebody waits.
    LifoMutex,
    /// Work sharing: one LIFO stack under a spinlock; an idle thread sleeps a fixed 2 ms
    /// before it looks again.
    LifoSpin,
    /// Work stealing: one deque per thread, each under its own mutex; the owner pops the
    /// newest task (LIFO), thieves take the oldest (FIFO); a thief that finds nothing in any
    /// queue sleeps 1 ms.
    StealMutex,
    /// As [`StealMutex`](Self::StealMutex), with one adaptive sleep shared by all threads:
    /// doubled (up to 2 ms) after a fruitless search, halved (down to 1 µs) after a steal.
    StealBackoffShared,
    /// As [`StealBackoffShared`](Self::StealBackoffShared), with one adaptive sleep per
    /// thread.
    StealBackoffLocal,
    /// As [`StealMutex`](Self::StealMutex), idle thieves wait on a condition variable that a
    /// push signals when somebody waits.
    StealCondvar,
    /// fugue's own: lock-free Chase–Lev deques per thread (growable), a global injector for
    /// spawns from outside the pool, random victim order, a bounded spin then a futex park
    /// with no lost wake-up. The default.
    #[default]
    Steal,
}

impl Policy {
    /// Every policy, in the order of the list above.
    pub const ALL: [Policy; 7] = [
        Policy::LifoMutex,
        Policy::LifoSpin,
        Policy::StealMutex,
        Policy::StealBackoffShared,
        Policy::StealBackoffLocal,
        Policy::StealCondvar,
        Policy::Steal,
    ];

    /// The policy's name: `lifo-mutex`, `lifo-spin`, `steal-mutex`, `steal-backoff-shared`,
    /// `steal-backoff-local`, `steal-condvar`, `steal`.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::LifoMutex => "lifo-mutex",
            Policy::LifoSpin => "lifo-spin",
            Policy::StealMutex => "steal-mutex",
            Policy::StealBackoffShared => "steal-backoff-shared",
            Policy::StealBackoffLocal => "steal-backoff-local",
            Policy::StealCondvar => "steal-condvar",
            Policy::Steal => "steal",
        }
    }

    /// The valid names, comma-separated (for error messages).
    pub fn names() -> String {
        Self::ALL.map(Policy::name).join(", ")
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for p in Policy::ALL {
            assert_eq!(p.name().parse::<Policy>().unwrap(), p);
        }
        assert_eq!(Policy::default(), Policy::Steal);
        let e = "stael".parse::<Policy>().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("stael") && msg.contains("steal-backoff-local"),
            "{msg}"
        );
    }
}
