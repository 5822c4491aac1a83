//! Typed errors. Temporary conditions (`Full`, `Empty`) are distinct from misuse
//! (`AlreadyRead`, `AlreadyAcquired`) and from a gone peer (`Disconnected`, `Timeout`).

use std::fmt;
use std::time::Duration;

/// Why [`Producer::try_acquire`](crate::Producer::try_acquire) returned no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum TryAcquireError {
    /// Temporary: the item's slot still holds an earlier item (the number is at least
    /// `next_to_read + capacity`). Try again later with the same number.
    #[error("the ring is full: the item's slot still holds an earlier item")]
    Full,
    /// Misuse: the consumer has already read (or is reading) this item.
    #[error("the item was already read")]
    AlreadyRead,
    /// Misuse: another guard holds this item, or it was already committed.
    #[error("the item is already acquired or committed")]
    AlreadyAcquired,
}

/// Why [`Producer::acquire`](crate::Producer::acquire) returned no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum AcquireError {
    /// Misuse: the consumer has already read (or is reading) item `n`.
    #[error("item {n} was already read")]
    AlreadyRead {
        /// The item number.
        n: u64,
    },
    /// Misuse: item `n` is held by another guard or already committed.
    #[error("item {n} is already acquired or committed")]
    AlreadyAcquired {
        /// The item number.
        n: u64,
    },
    /// The consumer is gone while item `n`'s slot was still in use: it will never be free.
    #[error("the consumer is gone; item {n} can never be written")]
    Disconnected {
        /// The item number.
        n: u64,
    },
    /// Item `n`'s slot did not become free in time (only from `acquire_timeout`).
    #[error("the slot of item {n} did not become free within {}", Pretty(*waited))]
    Timeout {
        /// The item number.
        n: u64,
        /// How long the call waited.
        waited: Duration,
    },
}

impl AcquireError {
    pub(crate) fn from_try(e: TryAcquireError, n: u64) -> AcquireError {
        match e {
            TryAcquireError::AlreadyRead => AcquireError::AlreadyRead { n },
            TryAcquireError::AlreadyAcquired | TryAcquireError::Full => {
                AcquireError::AlreadyAcquired { n }
            }
        }
    }
}

/// Why [`Consumer::try_next`](crate::Consumer::try_next) returned no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum TryNextError {
    /// Temporary: item `next` has not been committed yet.
    #[error("item {next} is not there yet")]
    Empty {
        /// The number of the item the consumer waits for.
        next: u64,
    },
    /// Every producer handle is gone and item `missing` was never committed.
    #[error("every producer is gone; item {missing} will never arrive")]
    Disconnected {
        /// The number of the item that will not arrive.
        missing: u64,
    },
}

/// Why [`Consumer::next`](crate::Consumer::next) or
/// [`Consumer::next_timeout`](crate::Consumer::next_timeout) returned no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum NextError {
    /// Every producer handle is gone and item `missing` was never committed (in-process
    /// rings; a shared-memory consumer cannot tell a dead producer from a slow one and gets
    /// `Timeout` instead).
    #[error("every producer is gone; item {missing} will never arrive")]
    Disconnected {
        /// The number of the item that will not arrive.
        missing: u64,
    },
    /// Item `missing` was not committed within `waited` (e.g. its producer died mid-write).
    #[error("item {missing} did not arrive within {}", Pretty(*waited))]
    Timeout {
        /// The number of the item that did not arrive.
        missing: u64,
        /// How long the call waited.
        waited: Duration,
    },
}

/// A duration written the way a person would: `2s`, `250ms`, `1.5s`, `40µs`.
pub(crate) struct Pretty(pub(crate) Duration);

impl fmt::Display for Pretty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else if d >= Duration::from_secs(1) {
            write!(f, "{}s", d.as_secs_f64())
        } else if d.subsec_nanos().is_multiple_of(1_000_000) {
            write!(f, "{}ms", d.as_millis())
        } else if d.subsec_nanos().is_multiple_of(1_000) {
            write!(f, "{}µs", d.as_micros())
        } else {
            write!(f, "{d:?}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_message_names_the_item() {
        let e = NextError::Timeout {
            missing: 1234,
            waited: Duration::from_secs(2),
        };
        assert_eq!(e.to_string(), "item 1234 did not arrive within 2s");
        let e = NextError::Timeout {
            missing: 7,
            waited: Duration::from_millis(250),
        };
        assert_eq!(e.to_string(), "item 7 did not arrive within 250ms");
    }
}
