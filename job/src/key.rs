//! The server's internal key of a job ([`JobKey`]): one `u64` that orders an array parent
//! before its subjobs and needs no lookup to compute. Made only from a [`JobId`]
//! (`JobId::key`) or, at the edges that keep it as a plain integer (the store's column, the
//! scheduler's order key), with [`JobKey::from_raw`].
//!
//! Must not know: server state, storage. A newtype over `u64`, so it costs nothing.

use crate::JobId;
use std::fmt;

/// Bits of a key below the sequence number: a subjob's index + 1 lives there.
pub(crate) const INDEX_BITS: u32 = 32;

/// A job's key: `seq << 32`, plus `index + 1` for a subjob. Ordinary jobs and array parents
/// share the form (they never share a seq), and a parent's subjobs sort right after it.
/// Invariant: `seq < 2^31` (ids wrap long before; the store keeps keys in a signed 64-bit
/// column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobKey(u64);

impl JobKey {
    /// The key of sequence number `seq` and, for a subjob, its index.
    pub(crate) fn new(seq: u64, index: Option<u32>) -> JobKey {
        let low = index.map_or(0, |index| u64::from(index) + 1);
        JobKey((seq << INDEX_BITS) | low)
    }

    /// A key kept as a plain integer (a store column, the scheduler's order key), back. Only
    /// for those edges: elsewhere keys come from [`JobId::key`].
    pub const fn from_raw(raw: u64) -> JobKey {
        JobKey(raw)
    }

    /// The key as a plain integer, for the edges that keep it so.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The sequence number of the job.
    pub fn seq(self) -> u64 {
        self.0 >> INDEX_BITS
    }

    /// The subjob index, if this is a subjob's key.
    pub fn index(self) -> Option<u32> {
        match self.0 & ((1 << INDEX_BITS) - 1) {
            0 => None,
            low => Some((low - 1) as u32),
        }
    }

    /// Whether this is a subjob's key.
    pub fn is_subjob(self) -> bool {
        self.index().is_some()
    }

    /// The key of the parent (or ordinary job) with this key's seq.
    pub fn parent(self) -> JobKey {
        JobKey(self.0 & !((1 << INDEX_BITS) - 1))
    }

    /// The key of subjob `index` of the array with this key's seq.
    pub fn subjob(self, index: u32) -> JobKey {
        JobKey::new(self.seq(), Some(index))
    }

    /// The keys of every subjob this parent key may have, in order (for a range of a map).
    pub fn subjob_range(self) -> std::ops::RangeInclusive<JobKey> {
        JobKey(self.parent().0 + 1)..=JobKey(self.parent().0 | u64::from(u32::MAX))
    }

    /// The id this key was made from, except that an array parent's comes back as an ordinary
    /// job's (the key does not tell them apart; the caller knows from the job's spec).
    pub fn to_id(self, server: impl Into<compact_str::CompactString>) -> JobId {
        match self.index() {
            Some(index) => JobId::sub(self.seq(), index, server),
            None => JobId::new(self.seq(), server),
        }
    }
}

/// The raw integer, as logs have always shown keys.
impl fmt::Display for JobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_parents_before_their_subjobs() {
        let parent = JobId::parent(5, "s").key();
        let first = JobId::sub(5, 0, "s").key();
        let big = JobId::sub(5, u32::MAX - 1, "s").key();
        let next = JobId::new(6, "s").key();
        assert!(parent < first && first < big && big < next);
        assert_eq!(JobId::new(5, "s").key(), parent);
        assert_eq!(big.seq(), 5);
        assert_eq!(first.index(), Some(0));
        assert_eq!(parent.index(), None);
        assert_eq!(big.parent(), parent);
        assert_eq!(parent.subjob(0), first);
        assert!(parent.subjob_range().contains(&big) && !parent.subjob_range().contains(&next));
        assert_eq!(first.to_id("s"), JobId::sub(5, 0, "s"));
        assert_eq!(parent.to_id("s"), JobId::new(5, "s"));
        assert_eq!(JobKey::from_raw(first.raw()), first);
    }
}
