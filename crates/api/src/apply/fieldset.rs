//! Sets of field paths: what one manager owns.
//!
//! A set is a tree. At each node, `members` are the elements owned at that level (a leaf
//! field, or a list item or map entry owned as such) and `children` hold the sets further
//! down. A node can be both a member and have children: a list item is owned in itself and
//! its fields are owned one by one. That is exactly the shape of `fieldsV1`, where a member
//! with children is written with a `"."` entry (see the `fieldsv1` module).

use std::collections::{BTreeMap, BTreeSet};

use super::path::{Path, PathElement};
use super::ApplyError;

/// A set of field paths, as stored in `metadata.managedFields[].fieldsV1`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    pub(crate) members: BTreeSet<PathElement>,
    pub(crate) children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> Self {
        FieldSet::default()
    }

    /// A set of the given printed paths (see [`Path::parse`]).
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a str>) -> Result<Self, ApplyError> {
        let mut set = FieldSet::new();
        for p in paths {
            set.insert(&Path::parse(p)?.0);
        }
        Ok(set)
    }

    /// Whether the set owns nothing.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(FieldSet::is_empty)
    }

    /// Adds a path (the empty path is ignored: the root is never a member).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether the path is a member of the set.
    pub fn contains(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.contains(rest)),
        }
    }

    /// The set below one element (empty when there is nothing there).
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Every path in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Whether a path is in both sets, as [`FieldSet::difference`] judges it (member by
    /// member): when not, the difference is `self` and need not be built.
    pub fn meets(&self, other: &FieldSet) -> bool {
        let (small, large) = if self.members.len() <= other.members.len() {
            (&self.members, &other.members)
        } else {
            (&other.members, &self.members)
        };
        small.iter().any(|m| large.contains(m))
            || self
                .children
                .iter()
                .any(|(pe, c)| other.children.get(pe).is_some_and(|o| c.meets(o)))
    }

    /// Whether every path of `other` is a path of `self`: then `self.union(other)` owns
    /// nothing more, and `self` can stand for it as it is.
    pub fn covers(&self, other: &FieldSet) -> bool {
        other.members.is_subset(&self.members)
            && other
                .children
                .iter()
                .all(|(pe, c)| c.is_empty() || self.children.get(pe).is_some_and(|s| s.covers(c)))
    }

    /// The paths of `self` that are not paths of `other` (member by member: removing `.a`
    /// leaves `.a.b` in place).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            let rest = match other.children.get(pe) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if let Some(o) = other.children.get(pe) {
                let both = c.intersection(o);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// `self` without the members of `other` and everything below them.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// Only the parts of `self` at or below a member of `keep`.
    pub fn restrict_to(&self, keep: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.intersection(&keep.members).cloned().collect();
        for (pe, c) in &self.children {
            let kept = if keep.members.contains(pe) {
                c.clone()
            } else if let Some(k) = keep.children.get(pe) {
                c.restrict_to(k)
            } else {
                continue;
            };
            if !kept.is_empty() {
                out.children.insert(pe.clone(), kept);
            }
        }
        out
    }

    /// Every member path, in the order Kubernetes lists them: a node's own members first,
    /// then its children, each in element order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for pe in &self.members {
            prefix.push(pe.clone());
            out.push(Path(prefix.clone()));
            prefix.pop();
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// Drops children that own nothing, so equal sets compare equal.
    pub(crate) fn normalized(mut self) -> FieldSet {
        self.children = std::mem::take(&mut self.children)
            .into_iter()
            .map(|(pe, c)| (pe, c.normalized()))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        self
    }
}
