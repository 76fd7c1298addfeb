//! [`Text`]: an object's JSON text as the packed stores keep it.
//!
//! JSON of Kubernetes objects repeats itself (field names, label keys, the same image and
//! names in several places), so LZ4 takes a Work or a Deployment to a third or half of its
//! size, and unpacks it at several GB/s: a microsecond or two per read of a few KB, against a
//! parse of that text that takes ten times as long anyway. Objects of one store repeat each
//! other more than themselves (field names, annotation keys, a manifest's shape), so a store
//! compresses against a [`Dictionary`] learned from its first objects.

use std::borrow::Cow;
use std::sync::Arc;

/// Texts shorter than this are kept as they are: too little to gain.
const COMPRESS_FROM: usize = 512;

const PLAIN: u8 = 0;
const LZ4: u8 = 1;

/// How many texts a [`Dictionary`] is learned from.
const SAMPLES: usize = 4;
/// The most a dictionary holds (LZ4 reaches back 64 KB at most).
const DICTIONARY_MOST: usize = 32 * 1024;

/// JSON text, LZ4-compressed when that saves at least a tenth. Clones share it.
#[derive(Clone)]
pub(crate) struct Text {
    bytes: Arc<[u8]>,
    /// The dictionary it was compressed with.
    dict: Option<Arc<[u8]>>,
}

impl Text {
    /// Keeps `json`, compressed against `dict` if there is one.
    pub(crate) fn new(json: &[u8], dict: Option<Arc<[u8]>>) -> Text {
        if json.len() >= COMPRESS_FROM {
            let packed = match &dict {
                Some(d) => lz4_flex::block::compress_prepend_size_with_dict(json, d),
                None => lz4_flex::compress_prepend_size(json),
            };
            if packed.len() * 10 <= json.len() * 9 {
                return Text {
                    bytes: tagged(LZ4, &packed),
                    dict,
                };
            }
        }
        Text {
            bytes: tagged(PLAIN, json),
            dict: None,
        }
    }

    /// The JSON text kept.
    pub(crate) fn json(&self) -> Cow<'_, [u8]> {
        let (tag, body) = self.bytes.split_first().unwrap_or((&PLAIN, &[]));
        if *tag == PLAIN {
            return Cow::Borrowed(body);
        }
        // Written by `new` from a whole text: unpacks, or the store's memory is corrupt.
        let unpacked = match &self.dict {
            Some(d) => lz4_flex::block::decompress_size_prepended_with_dict(body, d),
            None => lz4_flex::decompress_size_prepended(body),
        };
        Cow::Owned(unpacked.unwrap_or_default())
    }

    /// The bytes held (not counting the dictionary, which every text of a store shares).
    pub(crate) fn held(&self) -> usize {
        self.bytes.len()
    }
}

/// A compression dictionary learned from the first [`SAMPLES`] texts a store keeps, and fixed
/// from then on (each text compressed with it holds it).
#[derive(Default)]
pub struct Dictionary {
    samples: Vec<u8>,
    seen: usize,
    ready: Option<Arc<[u8]>>,
}

impl Dictionary {
    /// The dictionary, once learned; until then `json` is learned from.
    pub fn learn(&mut self, json: &[u8]) -> Option<Arc<[u8]>> {
        if self.ready.is_none() {
            let room = DICTIONARY_MOST - self.samples.len();
            self.samples
                .extend_from_slice(&json[..json.len().min(room)]);
            self.seen += 1;
            if self.seen == SAMPLES || self.samples.len() == DICTIONARY_MOST {
                self.ready = Some(std::mem::take(&mut self.samples).into());
            }
            return None;
        }
        self.ready.clone()
    }
}

fn tagged(tag: u8, body: &[u8]) -> Arc<[u8]> {
    std::iter::once(tag).chain(body.iter().copied()).collect()
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Text({} bytes held)", self.held())
    }
}

#[cfg(test)]
mod tests;
