//! [`Render`]: how a write's value is made once the revision it is stored at is known.

use bytes::{BufMut, Bytes, BytesMut};

use crate::Revision;

/// Renders the value to store once the revision it will be stored at is known (the API server
/// stamps `metadata.resourceVersion` into the JSON). Rendered exactly once, inside the writer,
/// only if the write's preconditions hold.
///
/// Two forms:
/// - [`Render::splice`] (and [`Render::fixed`]): the value is given as bytes around the place
///   where the revision's decimal digits go. It costs the writer a copy, and it is plain data,
///   so a replica can hand the write to the replica that commits for all of them.
/// - [`Render::with`]: any function of the revision. It runs in the writer, so it must be quick;
///   if it panics, that write fails with [`Error::RenderPanicked`](crate::Error). Such writes
///   are always committed by the process that made them.
pub struct Render(Form);

enum Form {
    Splice { head: Bytes, tail: Option<Bytes> },
    With(Box<dyn FnOnce(Revision) -> Bytes + Send>),
}

impl Render {
    /// The value `head`, the revision in decimal, then `tail`.
    pub fn splice(head: impl Into<Bytes>, tail: impl Into<Bytes>) -> Render {
        Render(Form::Splice {
            head: head.into(),
            tail: Some(tail.into()),
        })
    }

    /// The value `value`, whatever the revision.
    pub fn fixed(value: impl Into<Bytes>) -> Render {
        Render(Form::Splice {
            head: value.into(),
            tail: None,
        })
    }

    /// The value `f` makes of the revision.
    pub fn with(f: impl FnOnce(Revision) -> Bytes + Send + 'static) -> Render {
        Render(Form::With(Box::new(f)))
    }

    /// The value at `revision`.
    pub(crate) fn render(self, revision: Revision) -> Bytes {
        match self.0 {
            Form::Splice { head, tail: None } => head,
            Form::Splice {
                head,
                tail: Some(tail),
            } => {
                let digits = revision.to_string();
                let mut b = BytesMut::with_capacity(head.len() + digits.len() + tail.len());
                b.put_slice(&head);
                b.put_slice(digits.as_bytes());
                b.put_slice(&tail);
                b.freeze()
            }
            Form::With(f) => f(revision),
        }
    }

    /// The parts of a splice (`tail` is `None` for a fixed value); `None` for a function.
    pub(crate) fn parts(&self) -> Option<(&Bytes, Option<&Bytes>)> {
        match &self.0 {
            Form::Splice { head, tail } => Some((head, tail.as_ref())),
            Form::With(_) => None,
        }
    }
}

impl<F: FnOnce(Revision) -> Bytes + Send + 'static> From<F> for Render {
    fn from(f: F) -> Render {
        Render::with(f)
    }
}

impl std::fmt::Debug for Render {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Form::Splice { head, tail } => f
                .debug_struct("Splice")
                .field("head", &head.len())
                .field("tail", &tail.as_ref().map(Bytes::len))
                .finish(),
            Form::With(_) => f.write_str("With(..)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_puts_the_revision_between_head_and_tail() {
        let r = Render::splice(&b"{\"rv\":\""[..], &b"\"}"[..]);
        assert_eq!(r.render(1234), Bytes::from_static(b"{\"rv\":\"1234\"}"));
        assert_eq!(Render::fixed(&b"x"[..]).render(7), Bytes::from_static(b"x"));
        let with = Render::with(|rev| Bytes::from(format!("v{rev}")));
        assert!(with.parts().is_none());
        assert_eq!(with.render(3), Bytes::from_static(b"v3"));
    }
}
