//! [`Text`]: an object's JSON text as the packed stores keep it.
//!
//! JSON of Kubernetes objects repeats itself (field names, label keys, the same image and
//! names in several places), so LZ4 takes a Work or a Deployment to a third or half of its
//! size, and unpacks it at several GB/s: a microsecond or two per read of a few KB, against a
//! parse of that text that takes ten times as long anyway.

use std::borrow::Cow;
use std::sync::Arc;

/// Texts shorter than this are kept as they are: too little to gain.
const COMPRESS_FROM: usize = 512;

const PLAIN: u8 = 0;
const LZ4: u8 = 1;

/// JSON text, LZ4-compressed when that saves at least a tenth. Clones share it.
#[derive(Clone)]
pub(crate) struct Text(Arc<[u8]>);

impl Text {
    /// Keeps `json`.
    pub(crate) fn new(json: &[u8]) -> Text {
        if json.len() >= COMPRESS_FROM {
            let packed = lz4_flex::compress_prepend_size(json);
            if packed.len() * 10 <= json.len() * 9 {
                return Text(tagged(LZ4, &packed));
            }
        }
        Text(tagged(PLAIN, json))
    }

    /// The JSON text kept.
    pub(crate) fn json(&self) -> Cow<'_, [u8]> {
        let (tag, body) = self.0.split_first().unwrap_or((&PLAIN, &[]));
        if *tag == PLAIN {
            return Cow::Borrowed(body);
        }
        // Written by `new` from a whole text: unpacks, or the store's memory is corrupt.
        Cow::Owned(lz4_flex::decompress_size_prepended(body).unwrap_or_default())
    }

    /// The bytes held.
    pub(crate) fn held(&self) -> usize {
        self.0.len()
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
