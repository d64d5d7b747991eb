//! The parsed shape of a configuration file, with the byte span of every key
//! and value in the original text, so that a fix can replace exactly one
//! value and leave every other byte (comments, spacing, key order) as it was.

use crate::prelude::*;
use core::ops::Range;

/// One step of a path into a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A key of an object (a mapping in YAML).
    Key(String),
    /// A position in an array (a sequence in YAML).
    Index(usize),
}

/// `plugins.entries.warden.enabled`, `hooks.PreToolUse[0].matcher`; a key
/// that is not a plain name is written `["key"]`.
pub fn display(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Key(k) => {
                out.push_str("[\"");
                out.push_str(&k.replace('\\', "\\\\").replace('"', "\\\""));
                out.push_str("\"]");
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// Builds a path from keys.
pub fn keys(parts: &[&str]) -> Vec<Seg> {
    parts.iter().map(|p| Seg::Key((*p).to_string())).collect()
}

/// A value and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    /// The value's bytes in the text (for a YAML block collection: from its
    /// first line's start to the end of its last line).
    pub span: Range<usize>,
    /// In a YAML block collection, the entry that holds this value: from its
    /// key or its `-` to the end of its last line; elsewhere the same as `span`.
    pub entry: Range<usize>,
    /// Whether this is a YAML block collection (edited by lines) rather than
    /// a bracketed one (edited like JSON).
    pub block: bool,
}

/// What a value is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Str(String),
    /// A number, as written.
    Num(String),
    Bool(bool),
    Null,
}

/// One key of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    /// The key as written, quotes included.
    pub key_span: Range<usize>,
    pub value: Node,
}

impl Node {
    /// The members of an object, if this is one.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The value under `key`; with duplicate keys, the last one, as the
    /// runtimes' own parsers (JSON.parse, JSON5, PyYAML) read it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.members()?.iter().rev().find(|m| m.key == key).map(|m| &m.value)
    }

    /// The value at `path`.
    pub fn at(&self, path: &[Seg]) -> Option<&Node> {
        let mut node = self;
        for seg in path {
            node = match (seg, &node.kind) {
                (Seg::Key(k), Kind::Object(_)) => node.get(k)?,
                (Seg::Index(i), Kind::Array(items)) => items.get(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match &self.kind {
            Kind::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// A number that is a whole number of at most `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match &self.kind {
            Kind::Num(n) => n.parse::<u64>().ok().or_else(|| {
                let f: f64 = n.parse().ok()?;
                ((0.0..=1.0e15).contains(&f) && libm::floor(f) == f).then_some(f as u64)
            }),
            _ => None,
        }
    }

    /// Keys that appear more than once in this object or any object below it,
    /// with the path of the object that holds them.
    pub fn duplicate_keys(&self, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, String)>) {
        match &self.kind {
            Kind::Object(members) => {
                for (i, m) in members.iter().enumerate() {
                    if members[..i].iter().any(|o| o.key == m.key) && !out.iter().any(|(p, k)| p == path && *k == m.key)
                    {
                        out.push((path.clone(), m.key.clone()));
                    }
                }
                for m in members {
                    path.push(Seg::Key(m.key.clone()));
                    m.value.duplicate_keys(path, out);
                    path.pop();
                }
            }
            Kind::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    item.duplicate_keys(path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
}
