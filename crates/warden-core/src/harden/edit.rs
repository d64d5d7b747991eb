//! Applies one fix to the text of a configuration, touching only the bytes
//! of the value it fixes: comments, spacing, key order, line endings and a
//! byte-order mark stay as they were.

use super::tree::{self, Kind, Node, Seg};
use super::{Fix, FixAction, Syntax};
use crate::prelude::*;
use core::ops::Range;

/// One replacement of a byte range.
struct Splice {
    range: Range<usize>,
    with: String,
}

fn splice(text: &str, s: Splice) -> String {
    let mut out = String::with_capacity(text.len() + s.with.len());
    out.push_str(&text[..s.range.start]);
    out.push_str(&s.with);
    out.push_str(&text[s.range.end..]);
    out
}

fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The spaces (or tabs) that open the line holding `pos`.
fn indent_of(text: &str, pos: usize) -> &str {
    let start = line_start(text, pos);
    let line = &text[start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n.min(pos - start)]
}

/// One level of indentation, as the file uses it.
fn indent_unit(text: &str) -> String {
    for line in text.lines() {
        let n = line.len() - line.trim_start_matches([' ', '\t']).len();
        if n > 0 && n < line.trim_end().len() {
            return line[..n].to_string();
        }
    }
    "  ".to_string()
}

fn render(value: &serde_json::Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

fn render_key(syntax: Syntax, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if syntax == Syntax::Yaml && plain { key.to_string() } else { render(&serde_json::Value::String(key.to_string())) }
}

/// `{"a": {"b": value}}` for keys `a`, `b`.
fn nest(keys: &[String], value: &serde_json::Value) -> serde_json::Value {
    let mut v = value.clone();
    for k in keys.iter().rev() {
        let mut m = serde_json::Map::new();
        m.insert(k.clone(), v);
        v = serde_json::Value::Object(m);
    }
    v
}

/// Applies `fix` to `text`, whose parsed shape is `root`.
pub fn apply(text: &str, syntax: Syntax, root: &Node, fix: &Fix) -> Result<String, String> {
    let shown = tree::display(&fix.path);
    let value = fix.value.clone().unwrap_or(serde_json::Value::Null);
    match fix.action {
        FixAction::Set => set(text, syntax, root, &fix.path, &value),
        FixAction::Remove => {
            let (parent, last) = split(&fix.path)?;
            let Some(obj) = root.at(parent) else { return Ok(text.to_string()) };
            let Seg::Key(key) = last else { return Err(format!("`{shown}` does not name a key")) };
            let Some(members) = obj.members() else { return Ok(text.to_string()) };
            // Duplicates: the runtime reads the last, so that is the one removed.
            let Some(i) = members.iter().rposition(|m| &m.key == key) else { return Ok(text.to_string()) };
            let entries: Vec<Range<usize>> = members.iter().map(|m| m.key_span.start..m.value.span.end).collect();
            let blocks: Vec<Range<usize>> = members.iter().map(|m| m.value.entry.clone()).collect();
            remove_entry(text, obj, &entries, &blocks, i, &shown).map(|s| splice(text, s))
        }
        FixAction::AddItem => match root.at(&fix.path) {
            None => set(text, syntax, root, &fix.path, &serde_json::Value::Array(vec![value])),
            Some(Node { kind: Kind::Null, .. }) => {
                set(text, syntax, root, &fix.path, &serde_json::Value::Array(vec![value]))
            }
            Some(arr @ Node { kind: Kind::Array(items), .. }) => {
                add_item(text, arr, items, &render(&value)).map(|s| splice(text, s))
            }
            Some(_) => Err(format!("`{shown}` is not a list, so `{}` cannot be added to it", render(&value))),
        },
        FixAction::RemoveItem => {
            let Some(arr) = root.at(&fix.path) else { return Ok(text.to_string()) };
            let Some(items) = arr.as_array() else { return Ok(text.to_string()) };
            let wanted = value.as_str().unwrap_or_default();
            let Some(i) = items.iter().position(|n| n.as_str() == Some(wanted)) else { return Ok(text.to_string()) };
            let entries: Vec<Range<usize>> = items.iter().map(|n| n.span.clone()).collect();
            let blocks: Vec<Range<usize>> = items.iter().map(|n| n.entry.clone()).collect();
            remove_entry(text, arr, &entries, &blocks, i, &shown).map(|s| splice(text, s))
        }
    }
}

fn split(path: &[Seg]) -> Result<(&[Seg], &Seg), String> {
    match path.split_last() {
        Some((last, parent)) => Ok((parent, last)),
        None => Err("a fix must name a setting".to_string()),
    }
}

fn set(text: &str, syntax: Syntax, root: &Node, path: &[Seg], value: &serde_json::Value) -> Result<String, String> {
    let mut node = root;
    for (i, seg) in path.iter().enumerate() {
        let child = match seg {
            Seg::Key(k) => node.get(k),
            Seg::Index(n) => node.as_array().and_then(|items| items.get(*n)),
        };
        match child {
            Some(c) if i + 1 == path.len() => {
                let mut with = render(value);
                if c.span.is_empty() && syntax == Syntax::Yaml {
                    with.insert(0, ' ');
                }
                return Ok(splice(text, Splice { range: c.span.clone(), with }));
            }
            Some(c) if matches!(c.kind, Kind::Object(_) | Kind::Array(_)) => node = c,
            Some(c @ Node { kind: Kind::Null, .. }) => {
                let rest: Vec<String> = keys_of(&path[i + 1..])?;
                let mut with = render(&nest(&rest, value));
                if c.span.is_empty() && syntax == Syntax::Yaml {
                    with.insert(0, ' ');
                }
                return Ok(splice(text, Splice { range: c.span.clone(), with }));
            }
            Some(_) => {
                return Err(format!(
                    "`{}` is not an object, so `{}` cannot be set under it",
                    tree::display(&path[..=i]),
                    tree::display(path)
                ));
            }
            None => {
                let rest = keys_of(&path[i..])?;
                return insert_member(text, syntax, node, &rest, value).map(|s| splice(text, s));
            }
        }
    }
    Err("a fix must name a setting".to_string())
}

fn keys_of(path: &[Seg]) -> Result<Vec<String>, String> {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => Ok(k.clone()),
            Seg::Index(_) => Err(format!("`{}` names a list item that does not exist", tree::display(path))),
        })
        .collect()
}

/// Adds `keys[0]` (holding `keys[1..]` and then `value`) to the object `obj`.
fn insert_member(
    text: &str,
    syntax: Syntax,
    obj: &Node,
    keys: &[String],
    value: &serde_json::Value,
) -> Result<Splice, String> {
    let Some((first, rest)) = keys.split_first() else { return Err("a fix must name a setting".to_string()) };
    let nl = newline(text);
    if obj.block || (syntax == Syntax::Yaml && matches!(obj.kind, Kind::Null)) {
        // A YAML block mapping (or an empty document): new lines after its last one.
        let (at, indent) = match obj.members().and_then(|m| m.first()) {
            Some(m) => (obj.span.end, " ".repeat(m.key_span.start - line_start(text, m.key_span.start))),
            None => (text.len(), String::new()),
        };
        let mut lines = String::new();
        let mut pad = indent.clone();
        for (i, k) in keys.iter().enumerate() {
            lines.push_str(nl);
            lines.push_str(&pad);
            lines.push_str(&render_key(syntax, k));
            lines.push(':');
            if i + 1 == keys.len() {
                lines.push(' ');
                lines.push_str(&render(value));
            }
            pad.push_str("  ");
        }
        if obj.members().is_none_or(|m| m.is_empty()) {
            // Appended to the file: a line of its own, ending like the others.
            let lead = if text.is_empty() || text.ends_with('\n') || text == "\u{feff}" { "" } else { nl };
            let body = format!("{lead}{}{nl}", &lines[nl.len()..]);
            return Ok(Splice { range: at..at, with: body });
        }
        return Ok(Splice { range: at..at, with: lines });
    }
    let member = format!("{}: {}", render_key(syntax, first), render(&nest(rest, value)));
    let members = obj.members().unwrap_or_default();
    match members.last() {
        Some(last) => {
            let at = last.value.span.end;
            if text[obj.span.clone()].contains('\n') {
                let indent = indent_of(text, last.key_span.start).to_string();
                Ok(Splice { range: at..at, with: format!(",{nl}{indent}{member}") })
            } else {
                Ok(Splice { range: at..at, with: format!(", {member}") })
            }
        }
        None => {
            let at = obj.span.start + 1;
            if syntax == Syntax::Yaml {
                return Ok(Splice { range: at..at, with: member });
            }
            let outer = indent_of(text, obj.span.start).to_string();
            let inner = format!("{outer}{}", indent_unit(text));
            let inside = &text[at..obj.span.end.saturating_sub(1)];
            if inside.trim().is_empty() {
                Ok(Splice { range: at..obj.span.end - 1, with: format!("{nl}{inner}{member}{nl}{outer}") })
            } else {
                // Only comments inside: keep them, add the member after the brace.
                Ok(Splice { range: at..at, with: format!("{nl}{inner}{member},") })
            }
        }
    }
}

fn add_item(text: &str, arr: &Node, items: &[Node], rendered: &str) -> Result<Splice, String> {
    let nl = newline(text);
    if arr.block {
        let first = items.first().map_or(arr.span.start, |n| n.entry.start);
        let indent = " ".repeat(first - line_start(text, first));
        return Ok(Splice { range: arr.span.end..arr.span.end, with: format!("{nl}{indent}- {rendered}") });
    }
    match items.last() {
        Some(last) => {
            let at = last.span.end;
            if text[arr.span.clone()].contains('\n') {
                let indent = indent_of(text, last.span.start).to_string();
                Ok(Splice { range: at..at, with: format!(",{nl}{indent}{rendered}") })
            } else {
                Ok(Splice { range: at..at, with: format!(", {rendered}") })
            }
        }
        None => Ok(Splice { range: arr.span.start + 1..arr.span.start + 1, with: rendered.to_string() }),
    }
}

/// Removes entry `i` of a collection: `entries` are key-to-value spans
/// (bracketed syntax), `blocks` the YAML block entries.
fn remove_entry(
    text: &str,
    coll: &Node,
    entries: &[Range<usize>],
    blocks: &[Range<usize>],
    i: usize,
    shown: &str,
) -> Result<Splice, String> {
    if coll.block {
        let entry = &blocks[i];
        let start = line_start(text, entry.start);
        if !text[start..entry.start].trim().is_empty() {
            return Err(format!("`{shown}` shares its line with another entry; remove it by hand"));
        }
        let end = text[entry.end..].find('\n').map_or(text.len(), |n| entry.end + n + 1);
        return Ok(Splice { range: start..end, with: String::new() });
    }
    let this = &entries[i];
    let after = comma_after(text, this.end);
    if i + 1 < entries.len() {
        // A comma follows: remove through it, and the rest of its line when blank.
        let comma = after.unwrap_or(this.end);
        let mut end = comma + 1;
        let tail = &text[end..];
        let line_rest = tail.find('\n').map_or(tail, |n| &tail[..n]);
        let start_line = line_start(text, this.start);
        let own_line = text[start_line..this.start].trim().is_empty();
        if own_line && line_rest.trim().is_empty() {
            end += tail.find('\n').map_or(tail.len(), |n| n + 1);
            return Ok(Splice { range: start_line..end, with: String::new() });
        }
        end += tail.len() - tail.trim_start_matches([' ', '\t']).len();
        return Ok(Splice { range: this.start..end, with: String::new() });
    }
    if i > 0 {
        // The last entry: remove from the end of the one before it.
        let prev = &entries[i - 1];
        return Ok(Splice { range: prev.end..this.end, with: String::new() });
    }
    let end = after.map_or(this.end, |c| c + 1);
    Ok(Splice { range: this.start..end, with: String::new() })
}

/// The offset of the `,` after `pos`, past spaces and comments.
fn comma_after(text: &str, pos: usize) -> Option<usize> {
    let mut i = pos;
    let bytes = text.as_bytes();
    while i < text.len() {
        match bytes[i] {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'/' if text[i..].starts_with("//") => i = text[i..].find('\n').map_or(text.len(), |n| i + n),
            b'/' if text[i..].starts_with("/*") => i = text[i + 2..].find("*/").map_or(text.len(), |n| i + 2 + n + 2),
            b'#' => i = text[i..].find('\n').map_or(text.len(), |n| i + n),
            b',' => return Some(i),
            _ => return None,
        }
    }
    None
}
