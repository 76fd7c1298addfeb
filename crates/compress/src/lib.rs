//! LZ4 compression of Kubernetes objects' JSON, as the processes keep many of them in memory:
//! the hub's watch cache ([`flotilla-api`]) and the controllers' packed stores
//! ([`flotilla-watch`]).
//!
//! JSON of Kubernetes objects repeats itself (field names, label keys, the same image and
//! names in several places), and objects of one kind repeat each other far more: the field
//! names, annotation keys, a manifest's shape and the managedFields of the same managers are
//! in every Work, and only names, uids, hashes and times differ. Given earlier objects of the
//! kind as a [`Dictionary`], LZ4 finds those repeats too, and takes an object to a fifth of its
//! size or less; it unpacks at several GB/s, a microsecond or two per object of a few KB.

use std::sync::Arc;

pub use lz4_flex::block::DecompressError;

/// How many objects a [`Dictionary`] is learned from.
pub const SAMPLES: usize = 4;
/// The most a dictionary holds (LZ4 reaches back 64 KB at most).
pub const DICTIONARY_MOST: usize = 32 * 1024;

/// `text` compressed (against `dict`, if given), unless that saves less than a tenth: text
/// that does not shrink so much (already dense) is not worth unpacking on every read.
pub fn pack(text: &[u8], dict: Option<&[u8]>) -> Option<Vec<u8>> {
    let packed = match dict {
        Some(d) => lz4_flex::block::compress_prepend_size_with_dict(text, d),
        None => lz4_flex::compress_prepend_size(text),
    };
    (packed.len() * 10 <= text.len() * 9).then_some(packed)
}

/// The text `packed` was made from by [`pack`] with the same `dict`.
pub fn unpack(packed: &[u8], dict: Option<&[u8]>) -> Result<Vec<u8>, DecompressError> {
    match dict {
        Some(d) => lz4_flex::block::decompress_size_prepended_with_dict(packed, d),
        None => lz4_flex::decompress_size_prepended(packed),
    }
}

/// The length of the text `packed` was made from (its 4-byte little-endian prefix).
pub fn unpacked_len(packed: &[u8]) -> usize {
    packed
        .get(..4)
        .map_or(0, |n| u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize)
}

/// A compression dictionary learned from the first [`SAMPLES`] objects of a kind, and fixed
/// from then on: each object compressed with it holds it by its `Arc`, so it must not change,
/// and it outlives the objects it was learned from (keep none for Secrets).
#[derive(Default)]
pub struct Dictionary {
    samples: Vec<u8>,
    seen: usize,
    ready: Option<Arc<[u8]>>,
}

impl Dictionary {
    /// The dictionary, once learned; until then `text` is learned from.
    pub fn learn(&mut self, text: &[u8]) -> Option<Arc<[u8]>> {
        if self.ready.is_none() {
            let room = DICTIONARY_MOST - self.samples.len();
            self.samples
                .extend_from_slice(&text[..text.len().min(room)]);
            self.seen += 1;
            if self.seen == SAMPLES || self.samples.len() == DICTIONARY_MOST {
                self.ready = Some(std::mem::take(&mut self.samples).into());
            }
            return None;
        }
        self.ready.clone()
    }
}

#[cfg(test)]
mod tests;
