//! Cache-line padding.

use std::ops::Deref;

/// A value aligned (and so padded) to 128 bytes: it shares no cache line, nor the pair of
/// lines that x86 processors fetch together, with its neighbours.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CachePadded<T>(T);

impl<T> CachePadded<T> {
    /// Wraps `v`.
    pub const fn new(v: T) -> Self {
        CachePadded(v)
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
