//! A record set packed in one allocation: `COUNT:u16` then per record `CLUSTER:u16 LEN:u16 BYTES`.
//!
//! One boxed slice per set keeps a 10,000-service snapshot small; sets are a handful of records, so
//! walking them to rotate costs less than the pointer chasing a `Vec<Vec<u8>>` would.

/// Cluster index of records that belong to no cluster (SOA, NS, SRV, glue).
pub(crate) const NO_CLUSTER: u16 = u16::MAX;

/// Packed records; see the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rrset(Box<[u8]>);

impl Rrset {
    /// Packs `(cluster, record)` pairs.
    pub(crate) fn new<'a>(records: impl IntoIterator<Item = (u16, &'a [u8])>) -> Rrset {
        let mut out = vec![0, 0];
        let mut count = 0u16;
        for (cluster, bytes) in records {
            out.extend_from_slice(&cluster.to_be_bytes());
            out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
            out.extend_from_slice(bytes);
            count += 1;
        }
        out[..2].copy_from_slice(&count.to_be_bytes());
        Rrset(out.into_boxed_slice())
    }

    /// Number of records.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        u16::from_be_bytes([self.0[0], self.0[1]]) as usize
    }

    /// `(cluster, record)` pairs in stored order.
    #[inline]
    pub(crate) fn iter(&self) -> RrsetIter<'_> {
        RrsetIter { rest: &self.0[2..] }
    }
}

/// Iterator over an [`Rrset`].
pub(crate) struct RrsetIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for RrsetIter<'a> {
    type Item = (u16, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.len() < 4 {
            return None;
        }
        let cluster = u16::from_be_bytes([self.rest[0], self.rest[1]]);
        let len = u16::from_be_bytes([self.rest[2], self.rest[3]]) as usize;
        let bytes = &self.rest[4..4 + len];
        self.rest = &self.rest[4 + len..];
        Some((cluster, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_walks() {
        let set = Rrset::new([(1u16, &b"abc"[..]), (NO_CLUSTER, &b""[..]), (7, &b"zz"[..])]);
        assert_eq!(set.len(), 3);
        let items: Vec<_> = set.iter().collect();
        assert_eq!(
            items,
            vec![(1, &b"abc"[..]), (NO_CLUSTER, &b""[..]), (7, &b"zz"[..])]
        );
        assert_eq!(Rrset::new([]).len(), 0);
    }
}
