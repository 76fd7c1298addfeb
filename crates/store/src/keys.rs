//! Key ranges for prefix scans.
//!
//! Both backends compare keys byte-wise (SQLite's BINARY collation on TEXT, PostgreSQL BYTEA),
//! so a prefix scan is the half-open range `[prefix, successor(prefix))`, which the primary-key
//! index serves directly. UTF-8 preserves code-point order under byte-wise comparison, so the
//! successor can be computed on chars and stays a valid `String`.

/// The smallest string greater than every string that starts with `prefix`, or `None` when no
/// such string exists (the empty prefix, or one made only of `char::MAX`): then the range has
/// no upper bound.
pub(crate) fn prefix_successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = next_char(last) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

fn next_char(c: char) -> Option<char> {
    let mut n = c as u32 + 1;
    // Surrogates are not chars; the next valid one after them is U+E000.
    if (0xD800..=0xDFFF).contains(&n) {
        n = 0xE000;
    }
    char::from_u32(n)
}

/// The key range of a scan: `lower` inclusive, `after` exclusive (pagination), `upper`
/// exclusive.
#[derive(Clone, Debug)]
pub(crate) struct Range {
    pub lower: String,
    pub upper: Option<String>,
    pub after: Option<String>,
}

impl Range {
    pub(crate) fn new(prefix: &str, start_after: Option<&str>) -> Range {
        Range {
            lower: prefix.to_owned(),
            upper: prefix_successor(prefix),
            // A start key before the prefix adds nothing to `key >= prefix`.
            after: start_after.filter(|a| *a >= prefix).map(str::to_owned),
        }
    }

    /// The SQL condition on column `col`; placeholders are numbered from `first` using `mark`
    /// (`?` for SQLite, `$` for PostgreSQL), in the order of [`Range::params`].
    pub(crate) fn sql(&self, col: &str, mark: char, first: usize) -> String {
        let mut n = first;
        let mut s = format!("{col} >= {mark}{n}");
        if self.upper.is_some() {
            n += 1;
            s.push_str(&format!(" AND {col} < {mark}{n}"));
        }
        if self.after.is_some() {
            n += 1;
            s.push_str(&format!(" AND {col} > {mark}{n}"));
        }
        s
    }

    /// The bound values in placeholder order.
    pub(crate) fn params(&self) -> Vec<&str> {
        let mut p = vec![self.lower.as_str()];
        p.extend(self.upper.as_deref());
        p.extend(self.after.as_deref());
        p
    }
}

#[cfg(test)]
mod tests;
