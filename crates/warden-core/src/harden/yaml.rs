//! A reader for the YAML that Hermes' `config.yaml` is written in (block
//! mappings and sequences, plain and quoted scalars, block scalars, flow
//! collections, comments), keeping the span of every key and value.
//!
//! Anchors, aliases, tags, merge keys and several documents in one file are
//! refused with the line they are on: a fix could not know what else shares
//! an anchored value. No maintained YAML crate both runs without `std` and
//! keeps positions for edits.

use super::json5::{self, yaml_scalar};
use super::tree::{Kind, Member, Node};
use super::{MAX_DEPTH, TextError};
use crate::prelude::*;

#[derive(Debug, Clone, Copy)]
struct Line {
    /// Offset of the line's first byte.
    start: usize,
    /// Offset of the line's end, before `\r\n` or `\n`.
    end: usize,
    /// Offset of the first byte that is not a space.
    content: usize,
    /// Offset just after the last byte that is neither a comment nor trailing space.
    content_end: usize,
}

impl Line {
    fn blank(&self) -> bool {
        self.content >= self.content_end
    }
    fn indent(&self) -> usize {
        self.content - self.start
    }
}

struct Parser<'a> {
    text: &'a str,
    lines: Vec<Line>,
    /// The next line not yet consumed.
    next: usize,
}

fn err(text: &str, pos: usize, message: &str) -> TextError {
    let (line, column) = json5::line_col(text, pos);
    TextError { line, column, message: message.to_string() }
}

/// Where a comment starts on a line (`#` at the start or after a space,
/// outside quotes), else the line's end.
fn comment_start(line: &str) -> usize {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '#' && prev_space => return i,
            None if (c == '"' || c == '\'') && prev_space_or_indicator(line, i) => quote = Some(c),
            None => {}
        }
        prev_space = c.is_whitespace();
    }
    line.len()
}

/// A quote opens a quoted scalar only at the start of a value.
fn prev_space_or_indicator(line: &str, i: usize) -> bool {
    let before = line[..i].trim_end();
    before.is_empty() || before.ends_with([':', '-', ',', '[', '{'])
}

fn split_lines(text: &str, from: usize) -> Result<Vec<Line>, TextError> {
    let mut lines = Vec::new();
    let mut start = from;
    while start < text.len() || (start == text.len() && lines.is_empty() && start > from) {
        let nl = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let end = if nl > start && text.as_bytes()[nl - 1] == b'\r' { nl - 1 } else { nl };
        let raw = &text[start..end];
        let trimmed = raw.trim_start_matches(' ');
        if trimmed.starts_with('\t') {
            return Err(err(
                text,
                start + raw.len() - trimmed.len(),
                "a tab indents this line: YAML indents with spaces only",
            ));
        }
        let content = start + raw.len() - trimmed.len();
        let body = &text[content..end];
        let content_end = content + body[..comment_start(body)].trim_end().len();
        lines.push(Line { start, end, content, content_end });
        start = nl + 1;
    }
    Ok(lines)
}

/// Reads a whole YAML document; the text may start with a byte-order mark.
pub fn parse(text: &str) -> Result<Node, TextError> {
    let from = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let mut lines = split_lines(text, from)?;
    // A `---` before the content opens the one document; `%` directives go with it.
    let mut seen_content = false;
    let mut keep = Vec::with_capacity(lines.len());
    for line in lines.drain(..) {
        let body = &text[line.content..line.content_end];
        let marker = line.indent() == 0 && (body == "---" || body.starts_with("--- "));
        if marker && !seen_content {
            if body != "---" {
                return Err(err(text, line.content, "content after `---` on the same line is not supported"));
            }
            continue;
        }
        if marker || (line.indent() == 0 && body == "...") {
            if keep.iter().any(|l: &Line| !l.blank()) || marker {
                return Err(err(text, line.content, "the file holds several YAML documents: only one is supported"));
            }
            continue;
        }
        if line.indent() == 0 && body.starts_with('%') && !seen_content {
            continue;
        }
        if !line.blank() {
            seen_content = true;
        }
        keep.push(line);
    }
    let mut p = Parser { text, lines: keep, next: 0 };
    p.skip_blank();
    let Some(first) = p.lines.get(p.next).copied() else {
        // An empty file (or only comments) is an empty mapping to Hermes.
        let at = text.len();
        return Ok(Node { kind: Kind::Null, span: at..at, entry: at..at, block: true });
    };
    if first.indent() != 0 {
        return Err(err(text, first.content, "the document must start at the first column"));
    }
    let node = p.block(first.content, 0, 0)?;
    p.skip_blank();
    if let Some(line) = p.lines.get(p.next) {
        return Err(err(text, line.content, "unexpected text: check this line's indentation"));
    }
    Ok(node)
}

/// Whether `body` starts a mapping entry: a key followed by `:` and a space
/// or the line's end.
fn key_end(body: &str) -> Option<(usize, usize)> {
    // A quoted key.
    if let Some(q) = body.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let mut i = 1;
        let bytes = body.as_bytes();
        while i < body.len() {
            if bytes[i] == q as u8 {
                if q == '\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                let after = body[i + 1..].trim_start_matches(' ');
                let colon = body.len() - after.len();
                return (after.starts_with(':') && (after.len() == 1 || after[1..].starts_with([' ', '\t'])))
                    .then_some((i + 1, colon));
            }
            if q == '"' && bytes[i] == b'\\' {
                i += 1;
            }
            i += 1;
        }
        return None;
    }
    if body.starts_with(['[', '{', '|', '>', '&', '*', '!', '#', '%', '@', '`']) || is_dash(body) {
        return None;
    }
    let mut search = 0;
    while let Some(i) = body[search..].find(':') {
        let at = search + i;
        let after = &body[at + 1..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let key = body[..at].trim_end();
            return (!key.is_empty()).then_some((key.len(), at));
        }
        search = at + 1;
    }
    None
}

fn is_dash(body: &str) -> bool {
    body == "-" || body.starts_with("- ")
}

impl<'a> Parser<'a> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.next).is_some_and(|l| l.blank()) {
            self.next += 1;
        }
    }

    /// The line that holds byte `pos`.
    fn line_of(&self, pos: usize) -> usize {
        self.lines.partition_point(|l| l.start <= pos).saturating_sub(1)
    }

    fn body(&self, line: usize, from: usize) -> &'a str {
        let l = self.lines[line];
        &self.text[from.max(l.content)..l.content_end]
    }

    /// A block value starting at byte `at` (on a line not yet consumed, or
    /// after a `- ` on one), whose entries are at column `indent`.
    fn block(&mut self, at: usize, indent: usize, depth: usize) -> Result<Node, TextError> {
        if depth >= MAX_DEPTH {
            return Err(err(self.text, at, &format!("values are nested more than {MAX_DEPTH} deep")));
        }
        let line = self.line_of(at);
        let body = self.body(line, at);
        if is_dash(body) {
            self.sequence(at, indent, depth)
        } else if key_end(body).is_some() {
            self.mapping(at, indent, depth)
        } else {
            self.next = line + 1;
            let node = self.scalar(at, line, indent, depth)?;
            Ok(node)
        }
    }

    fn mapping(&mut self, first: usize, indent: usize, depth: usize) -> Result<Node, TextError> {
        let mut members = Vec::new();
        let mut at = first;
        let mut end;
        loop {
            let line = self.line_of(at);
            let body = self.body(line, at);
            let Some((klen, colon)) = key_end(body) else {
                return Err(err(self.text, at, "expected a `key: value` entry"));
            };
            let raw_key = &body[..klen];
            let key = if raw_key.starts_with(['"', '\'']) {
                match json5::parse_flow(self.text, at, depth)?.kind {
                    Kind::Str(s) => s,
                    _ => return Err(err(self.text, at, "expected a quoted key")),
                }
            } else {
                raw_key.to_string()
            };
            if key == "<<" {
                return Err(err(self.text, at, "merge keys (`<<`) are not supported"));
            }
            let key_span = at..at + klen;
            let after = at + colon + 1;
            self.next = line + 1;
            let value = self.value_after(after, line, indent, depth)?;
            end = value.entry.end.max(self.lines[line].end);
            let entry = at..end;
            members.push(Member { key, key_span, value: Node { entry, ..value } });
            self.skip_blank();
            match self.lines.get(self.next) {
                Some(l) if l.indent() == indent && !is_dash(self.body(self.next, l.content)) => at = l.content,
                Some(l) if l.indent() > indent => {
                    return Err(err(self.text, l.content, "unexpected indentation: this line belongs to no entry"));
                }
                _ => break,
            }
        }
        Ok(Node { kind: Kind::Object(members), span: first..end, entry: first..end, block: true })
    }

    fn sequence(&mut self, first: usize, indent: usize, depth: usize) -> Result<Node, TextError> {
        let mut items = Vec::new();
        let mut at = first;
        let mut end;
        loop {
            let line = self.line_of(at);
            let rest = at + 1;
            self.next = line + 1;
            let body = self.body(line, rest);
            let item = if body.is_empty() {
                self.nested(rest, line, indent, depth, false)?
            } else {
                let start = rest + (self.text[rest..].len() - self.text[rest..].trim_start_matches(' ').len());
                let col = start - self.lines[line].start;
                if key_end(body).is_some() || is_dash(body) {
                    self.block(start, col, depth + 1)?
                } else {
                    self.scalar(start, line, indent, depth)?
                }
            };
            end = item.entry.end.max(self.lines[line].end);
            items.push(Node { entry: at..end, ..item });
            self.skip_blank();
            match self.lines.get(self.next) {
                Some(l) if l.indent() == indent && is_dash(self.body(self.next, l.content)) => at = l.content,
                Some(l) if l.indent() > indent => {
                    return Err(err(self.text, l.content, "unexpected indentation: this line belongs to no item"));
                }
                _ => break,
            }
        }
        Ok(Node { kind: Kind::Array(items), span: first..end, entry: first..end, block: true })
    }

    /// The value after a key's `:` at byte `after` on `line`.
    fn value_after(&mut self, after: usize, line: usize, indent: usize, depth: usize) -> Result<Node, TextError> {
        let body = self.body(line, after);
        if body.trim().is_empty() {
            return self.nested(after, line, indent, depth, true);
        }
        let start = after + (self.text[after..].len() - self.text[after..].trim_start_matches([' ', '\t']).len());
        self.scalar(start, line, indent, depth)
    }

    /// The block under an entry whose own line holds nothing more: deeper
    /// lines, or (for a key) a sequence at the key's own column; else null.
    fn nested(&mut self, after: usize, line: usize, indent: usize, depth: usize, key: bool) -> Result<Node, TextError> {
        self.skip_blank();
        if let Some(l) = self.lines.get(self.next).copied() {
            let dash = is_dash(self.body(self.next, l.content));
            if l.indent() > indent || (key && l.indent() == indent && dash) {
                return self.block(l.content, l.indent(), depth + 1);
            }
        }
        let _ = line;
        Ok(Node { kind: Kind::Null, span: after..after, entry: after..after, block: false })
    }

    /// A scalar, quoted scalar, block scalar or flow collection at `start` on `line`.
    fn scalar(&mut self, start: usize, line: usize, indent: usize, depth: usize) -> Result<Node, TextError> {
        let l = self.lines[line];
        let body = &self.text[start..l.content_end.max(start)];
        match body.chars().next() {
            Some('[') | Some('{') => {
                let node = json5::parse_flow(self.text, start, depth + 1)?;
                let end_line = self.line_of(node.span.end.saturating_sub(1).max(start));
                let tail = &self.text[node.span.end..self.lines[end_line].content_end.max(node.span.end)];
                if !tail.trim().is_empty() {
                    return Err(err(self.text, node.span.end, "unexpected text after a flow collection"));
                }
                self.next = self.next.max(end_line + 1);
                let entry = node.span.start..self.lines[end_line].end;
                Ok(Node { entry, ..node })
            }
            Some('"') | Some('\'') => {
                let node = json5::parse_flow(self.text, start, depth + 1)?;
                if node.span.end > l.end {
                    return Err(err(self.text, start, "a quoted value that spans lines is not supported"));
                }
                if !self.text[node.span.end..l.content_end.max(node.span.end)].trim().is_empty() {
                    return Err(err(self.text, node.span.end, "unexpected text after a quoted value"));
                }
                Ok(node)
            }
            Some('|') | Some('>') => {
                // A block scalar: every following line deeper than the entry, or blank.
                let mut last = l.end;
                while let Some(n) = self.lines.get(self.next) {
                    if n.blank() || n.indent() > indent {
                        if !n.blank() {
                            last = n.end;
                        }
                        self.next += 1;
                    } else {
                        break;
                    }
                }
                // Its text as PyYAML reads it, near enough for the rules (which trim): the lines
                // without their indentation, joined by line feeds (`|`) or spaces (`>`).
                let parts: Vec<&str> = self.lines[line + 1..self.next]
                    .iter()
                    .filter(|n| !n.blank())
                    .map(|n| self.text[n.content..n.end].trim_end())
                    .collect();
                let value = parts.join(if body.starts_with('|') { "\n" } else { " " });
                Ok(Node { kind: Kind::Str(value), span: start..last, entry: start..last, block: false })
            }
            Some('&') | Some('*') | Some('!') => {
                Err(err(self.text, start, "anchors, aliases and tags are not supported"))
            }
            _ => {
                // A plain scalar; deeper lines that follow continue it.
                let mut end = l.content_end.max(start);
                let mut text = String::from(&self.text[start..end]);
                while let Some(n) = self.lines.get(self.next).copied() {
                    if !n.blank() && n.indent() > indent && key_end(self.body(self.next, n.content)).is_none() {
                        text.push(' ');
                        text.push_str(&self.text[n.content..n.content_end]);
                        end = n.content_end;
                        self.next += 1;
                    } else {
                        break;
                    }
                }
                Ok(Node { kind: yaml_scalar(&text), span: start..end, entry: start..end, block: false })
            }
        }
    }
}
