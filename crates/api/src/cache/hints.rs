//! What a write made on this replica already knows about the object the cache will index.
//!
//! Serving a custom resource whose schema declares defaults asks whether those defaults
//! change the stored object (if not, its bytes are served as stored). The cache answers that
//! once per object version, which takes parsing the whole object again; but the write that
//! stored it had the object parsed already, and answers it for nothing. So the write leaves a
//! hint under the object's key: its bytes around the revision's digits (the store splices the
//! digits in), the defaults asked about, and the answer. The cache takes it when the write's
//! event comes, if the event's bytes are exactly those (any other write to the key meanwhile,
//! from here or from another replica, leaves other bytes, and the answer is worked out as
//! without a hint).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use super::object::same_defaults;
use super::Cache;
use crate::admission::schema::on_read::ReadDefaults;

impl Cache {
    /// The object about to be stored at `key` is `head`, the revision's digits, `tail`, and
    /// `defaults` change it or not: said once by its write, not asked again of the object.
    pub(crate) fn hint(
        &self,
        key: &str,
        (head, tail): (Bytes, Bytes),
        defaults: Arc<ReadDefaults>,
        changed: bool,
    ) {
        self.hints.leave(key, head, tail, defaults, changed);
    }

    /// Whether `defaults` change the object `raw` just stored at `key`, if a write on this
    /// replica said so (its hint, or the cached object it went to): a write's response is then
    /// served without parsing the object again.
    pub(crate) fn known_defaults(
        &self,
        key: &str,
        raw: &Bytes,
        defaults: &Arc<ReadDefaults>,
    ) -> Option<bool> {
        let (known, changed) = match self.hints.peek(key, raw) {
            Some(hint) => hint,
            None => {
                let cached = self.get(key).filter(|o| o.is(raw))?;
                return cached.known_defaults(defaults);
            }
        };
        same_defaults(&known, defaults).then_some(changed)
    }
}

/// Hints kept at most; beyond it (writes that failed leave theirs behind) they are dropped.
const MAX_HINTS: usize = 4096;

/// Hints waiting for their writes' events, by storage key.
#[derive(Default)]
pub(crate) struct Hints {
    by_key: Mutex<HashMap<String, Hint>>,
}

struct Hint {
    head: Bytes,
    tail: Bytes,
    defaults: Arc<ReadDefaults>,
    changed: bool,
}

impl Hints {
    /// The object about to be stored at `key` is `head`, the revision's digits, `tail`;
    /// `defaults` change it or not (`changed`).
    pub(crate) fn leave(
        &self,
        key: &str,
        head: Bytes,
        tail: Bytes,
        defaults: Arc<ReadDefaults>,
        changed: bool,
    ) {
        let mut by_key = self.by_key.lock();
        if by_key.len() >= MAX_HINTS {
            by_key.clear();
        }
        let hint = Hint {
            head,
            tail,
            defaults,
            changed,
        };
        by_key.insert(key.to_owned(), hint);
    }

    /// The answer left for `key`, if `raw` is the object it was left for; taken (the cache
    /// keeps it with the object from then on).
    pub(crate) fn take(&self, key: &str, raw: &[u8]) -> Option<(Arc<ReadDefaults>, bool)> {
        let hint = {
            let mut by_key = self.by_key.lock();
            if by_key.is_empty() {
                return None;
            }
            by_key.remove(key)?
        };
        hint.is_for(raw).then_some((hint.defaults, hint.changed))
    }

    /// As [`Hints::take`], leaving it there.
    pub(crate) fn peek(&self, key: &str, raw: &[u8]) -> Option<(Arc<ReadDefaults>, bool)> {
        let by_key = self.by_key.lock();
        let hint = by_key.get(key).filter(|h| h.is_for(raw))?;
        Some((hint.defaults.clone(), hint.changed))
    }
}

impl Hint {
    /// Is `raw` the object this hint was left for: its head, digits, its tail?
    fn is_for(&self, raw: &[u8]) -> bool {
        let Some(digits) = raw
            .len()
            .checked_sub(self.head.len() + self.tail.len())
            .filter(|n| *n > 0)
        else {
            return false;
        };
        let (head, rest) = raw.split_at(self.head.len());
        let (middle, tail) = rest.split_at(digits);
        head == self.head && tail == self.tail && middle.iter().all(u8::is_ascii_digit)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn defaults() -> Arc<ReadDefaults> {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "A"}}});
        Arc::new(ReadDefaults::compile(&schema).expect("a default"))
    }

    #[test]
    fn a_hint_answers_only_for_the_bytes_it_was_left_for_and_once() {
        let hints = Hints::default();
        let d = defaults();
        let leave = |changed| {
            hints.leave(
                "/k",
                Bytes::from_static(b"{\"rv\":\""),
                Bytes::from_static(b"\"}"),
                d.clone(),
                changed,
            )
        };
        leave(true);
        let peeked = hints.peek("/k", b"{\"rv\":\"42\"}").expect("the hint");
        assert!(peeked.1 && hints.peek("/k", b"{\"rv\":\"4\",}").is_none());
        let (got, changed) = hints.take("/k", b"{\"rv\":\"42\"}").expect("the hint");
        assert!(Arc::ptr_eq(&got, &d) && changed);
        assert!(hints.take("/k", b"{\"rv\":\"42\"}").is_none(), "taken once");
        // Other bytes (another write won), no digits, or another key: no answer.
        leave(false);
        assert!(hints.take("/k", b"{\"rv\":\"43\",\"x\":1}").is_none());
        leave(false);
        assert!(hints.take("/k", b"{\"rv\":\"\"}").is_none());
        leave(false);
        assert!(hints.take("/k", b"{\"rv\":\"4x\"}").is_none());
        assert!(hints.take("/other", b"{\"rv\":\"1\"}").is_none());
    }
}
