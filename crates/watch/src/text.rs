//! [`Text`]: an object's JSON text as the packed stores keep it.
//!
//! LZ4 takes a Work or a Deployment to a third of its size or less, and unpacks it in a
//! microsecond or two, against a parse of that text that takes ten times as long anyway
//! ([`flotilla_compress`]). A store compresses against a [`Dictionary`] learned from its first
//! objects.

use std::borrow::Cow;
use std::sync::Arc;

pub use flotilla_compress::Dictionary;

/// Texts shorter than this are kept as they are: too little to gain.
const COMPRESS_FROM: usize = 512;

const PLAIN: u8 = 0;
const LZ4: u8 = 1;

/// JSON text, LZ4-compressed when that saves at least a tenth ([`flotilla_compress::pack`]).
/// Clones share it.
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
            if let Some(packed) = flotilla_compress::pack(json, dict.as_deref()) {
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
        Cow::Owned(flotilla_compress::unpack(body, self.dict.as_deref()).unwrap_or_default())
    }

    /// The bytes held (not counting the dictionary, which every text of a store shares).
    pub(crate) fn held(&self) -> usize {
        self.bytes.len()
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
