//! A small fast hasher for the name table: names are short byte strings and the table is built by us
//! from the fleet, so the DoS resistance of SipHash buys nothing on the query path.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing over 8-byte words (the FxHash idea).
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // fold the high bits down: hashbrown takes its control bits from the top
        self.0 ^ (self.0 >> 29)
    }
}

/// `BuildHasher` for maps keyed by wire names.
pub(crate) type FastBuild = BuildHasherDefault<FastHasher>;
