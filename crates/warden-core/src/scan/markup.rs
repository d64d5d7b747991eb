//! Markdown as the scanner reads it: front matter that only describes, a body
//! that may instruct, fenced code that may be run, and markup that renders as
//! nothing.

use super::phrases::Place;
use super::text::quote;
use super::{Sink, code, push, push_at, rules};
use crate::model::Risk;
use crate::prelude::*;

/// Most lines of a hidden element read after the line that opens it.
pub const MAX_HIDDEN_ELEMENT_LINES: usize = 50;

/// Fence languages whose blocks are prose or data, not commands.
pub const NOT_CODE: &[&str] = &[
    "text",
    "txt",
    "plain",
    "plaintext",
    "markdown",
    "md",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "toml",
    "csv",
    "diff",
    "output",
    "log",
    "html",
    "xml",
    "mermaid",
];

/// Style and attributes that hide an HTML element.
pub const HIDING: &[&str] = &[
    "display:none",
    "visibility:hidden",
    "font-size:0",
    "opacity:0",
    "color:transparent",
    "height:0",
    "width:0",
    " hidden>",
    " hidden ",
    " hidden=",
    "aria-hidden=\"true\"",
];

/// Scans a markdown document; a skill's front matter only describes.
pub fn scan_markdown(text: &str, skill: bool, out: &mut Sink) {
    let lines: Vec<&str> = text.split('\n').collect();
    if skill
        && lines.first().map(|l| l.trim_start_matches('\u{FEFF}').trim_end()) == Some("---")
        && let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---")
    {
        let front = lines.get(1..=end).map(|l| l.join("\n")).unwrap_or_default();
        super::phrases::scan(&front, 2, Place::Describes, out);
    }
    super::everywhere(text, 1, out);
    fenced_code(&lines, out);
    comments(text, out);
    for (i, line) in lines.iter().enumerate() {
        let n = line_no(i);
        reference_comment(line, n, out);
        empty_link(line, n, out);
        if let Some(style) = hiding(line) {
            let end = (i + 1 + MAX_HIDDEN_ELEMENT_LINES).min(lines.len());
            let closing =
                lines.get(i..end).and_then(|ls| ls.iter().position(|l| l.contains("</"))).map_or(i, |p| i + p);
            let hidden = lines.get(i..=closing).map(|l| l.join("\n")).unwrap_or_default();
            push_at(
                out,
                rules::INVISIBLE_MARKUP,
                n,
                Risk::Medium,
                format!("an element hidden by `{style}`, invisible when rendered: `{}`", quote(line)),
            );
            super::phrases::scan(&strip_tags(&hidden), n, Place::Describes, out);
        }
    }
}

fn line_no(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX).saturating_add(1)
}

fn hiding(line: &str) -> Option<&'static str> {
    if !line.contains('<') {
        return None;
    }
    let squeezed: String = line.to_ascii_lowercase().chars().filter(|c| *c != ' ' && *c != '\t').collect();
    let spaced = line.to_ascii_lowercase();
    HIDING.iter().copied().find(|h| if h.starts_with(' ') { spaced.contains(h) } else { squeezed.contains(h) })
}

fn strip_tags(text: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Fenced code blocks (```` ``` ```` or `~~~`): commands judged by the exec gate.
fn fenced_code(lines: &[&str], out: &mut Sink) {
    let mut i = 0usize;
    while let Some(line) = lines.get(i) {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence = if trimmed.starts_with("```") {
            "```"
        } else if trimmed.starts_with("~~~") {
            "~~~"
        } else {
            ""
        };
        if fence.is_empty() || indent > 3 {
            i += 1;
            continue;
        }
        let info = trimmed.trim_start_matches(fence.chars().next().unwrap_or('`')).trim();
        let lang =
            info.split(|c: char| c.is_whitespace() || c == '{' || c == ',').next().unwrap_or("").to_ascii_lowercase();
        let start = i + 1;
        let end =
            lines.iter().skip(start).position(|l| l.trim_start().starts_with(fence)).map_or(lines.len(), |p| start + p);
        if !NOT_CODE.contains(&lang.as_str()) {
            let block: Vec<&str> = lines.get(start..end).unwrap_or(&[]).to_vec();
            let prompt = matches!(lang.as_str(), "console" | "terminal" | "shell-session" | "shellsession");
            let body: String = if prompt {
                // Only the lines typed at a prompt are commands; the rest is output.
                block
                    .iter()
                    .map(|l| {
                        l.trim_start().strip_prefix("$ ").or_else(|| l.trim_start().strip_prefix("% ")).unwrap_or("")
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                block.join("\n")
            };
            code::scan_script(&body, line_no(start), out);
        }
        i = end + 1;
    }
}

/// HTML comments, which render as nothing.
fn comments(text: &str, out: &mut Sink) {
    let mut from = 0usize;
    while let Some(at) = text.get(from..).and_then(|r| r.find("<!--")) {
        let start = from + at;
        let inner_start = start + 4;
        let end = text.get(inner_start..).and_then(|r| r.find("-->")).map_or(text.len(), |e| inner_start + e);
        let inner = text.get(inner_start..end).unwrap_or("");
        let line = super::text::line_of_byte(text, start);
        if !inner.trim().is_empty() {
            push(
                out,
                rules::INVISIBLE_MARKUP,
                line,
                format!("an HTML comment, invisible when rendered: `{}`", quote(&inner.replace('\n', " "))),
            );
            super::phrases::scan(inner, line, Place::Describes, out);
        }
        from = (end + 3).min(text.len());
        if from <= start {
            break;
        }
    }
}

/// `[//]: # (text)` and `[comment]: <> (text)`: link reference definitions
/// that nothing links to, used as comments.
fn reference_comment(line: &str, n: u32, out: &mut Sink) {
    let t = line.trim_start();
    if !t.starts_with('[') {
        return;
    }
    let Some(close) = t.find("]:") else { return };
    let rest = t.get(close + 2..).unwrap_or("").trim_start();
    let Some(after) = rest.strip_prefix('#').or_else(|| rest.strip_prefix("<>")) else { return };
    let inner = after.trim();
    if inner.is_empty() {
        return;
    }
    push(
        out,
        rules::INVISIBLE_MARKUP,
        n,
        format!("a reference definition used as a comment, invisible when rendered: `{}`", quote(inner)),
    );
    super::phrases::scan(inner, n, Place::Describes, out);
}

/// `[](https://...)`: a link with no text, which renders as nothing.
fn empty_link(line: &str, n: u32, out: &mut Sink) {
    let mut from = 0usize;
    while let Some(at) = line.get(from..).and_then(|r| r.find("[](")) {
        let start = from + at;
        let image = start > 0 && line.as_bytes().get(start - 1) == Some(&b'!');
        if !image {
            push_at(
                out,
                rules::INVISIBLE_MARKUP,
                n,
                Risk::Medium,
                format!("a link with no text, invisible when rendered: `{}`", quote(line)),
            );
            return;
        }
        from = start + 3;
    }
}
