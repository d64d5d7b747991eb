//! Base64 and hex blobs that decode to instructions or commands.

use super::text::{self, quote};
use super::{Sink, push, rules};
use crate::prelude::*;
use base64::Engine as _;

/// Shortest base64 run decoded, in characters.
pub const MIN_BASE64_CHARS: usize = 24;
/// Shortest hex run decoded, in characters (16 bytes).
pub const MIN_HEX_CHARS: usize = 32;
/// How many times a decoded text is decoded again (base64 of base64).
pub const MAX_DECODE_DEPTH: usize = 2;
/// Most blobs decoded in one text; the rest are not.
pub const MAX_BLOBS: usize = 256;
/// Longest blob decoded, in characters.
pub const MAX_BLOB_CHARS: usize = 64 * 1024;
/// Smallest share of printable characters that makes decoded bytes text.
pub const MIN_PRINTABLE_SHARE: f64 = 0.9;

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// Finds blobs in `text` (whose first line is `first_line`) that decode to
/// instructions or commands; `depth` is how many decodings led here.
pub fn scan(text: &str, first_line: u32, depth: usize, out: &mut Sink) {
    for (start, blob, how) in runs(text).into_iter().take(MAX_BLOBS) {
        let Some(decoded) = decode(&blob, how) else { continue };
        let line = first_line + text::line_of_byte(text, start) - 1;
        if let Some(why) = judge(&decoded, depth) {
            push(
                out,
                rules::ENCODED_INSTRUCTIONS,
                line,
                format!("a {} blob decodes to text that {why}: `{}`", how.name(), quote(&decoded.replace('\n', " "))),
            );
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Base64,
    Hex,
}

impl How {
    fn name(self) -> &'static str {
        match self {
            How::Base64 => "base64",
            How::Hex => "hex",
        }
    }
}

/// The candidate blobs: where each starts, its characters, how to decode it.
fn runs(text: &str) -> Vec<(usize, String, How)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < bytes.len() {
        // `\x69\x67...` escapes.
        if bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'x') {
            let start = i;
            let mut hex = String::new();
            while bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'x') {
                match (bytes.get(i + 2), bytes.get(i + 3)) {
                    (Some(&a), Some(&b)) if a.is_ascii_hexdigit() && b.is_ascii_hexdigit() => {
                        hex.push(char::from(a));
                        hex.push(char::from(b));
                        i += 4;
                    }
                    _ => break,
                }
            }
            if hex.len() >= 16 {
                out.push((start, hex, How::Hex));
            }
            i = i.max(start + 1);
            continue;
        }
        if !bytes.get(i).copied().is_some_and(is_b64) {
            i += 1;
            continue;
        }
        let start = i;
        while bytes.get(i).copied().is_some_and(is_b64) {
            i += 1;
        }
        let end = i;
        while bytes.get(i) == Some(&b'=') {
            i += 1;
        }
        let run = text.get(start..end).unwrap_or("");
        if run.len() > MAX_BLOB_CHARS {
            continue;
        }
        if run.len() >= MIN_HEX_CHARS && run.len() % 2 == 0 && run.bytes().all(|b| b.is_ascii_hexdigit()) {
            out.push((start, run.to_string(), How::Hex));
        } else if run.len() >= MIN_BASE64_CHARS
            && !run.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
        {
            out.push((start, run.to_string(), How::Base64));
        }
    }
    out
}

fn decode(blob: &str, how: How) -> Option<String> {
    let bytes = match how {
        How::Hex => blob
            .as_bytes()
            .chunks(2)
            .map(|p| core::str::from_utf8(p).ok().and_then(|s| u8::from_str_radix(s, 16).ok()))
            .collect::<Option<Vec<u8>>>()?,
        How::Base64 => {
            let clean = blob.trim_end_matches('=');
            let engines =
                [base64::engine::general_purpose::STANDARD_NO_PAD, base64::engine::general_purpose::URL_SAFE_NO_PAD];
            engines.iter().find_map(|e| e.decode(clean).ok())?
        }
    };
    let text = String::from_utf8(bytes).ok()?;
    let total = text.chars().count();
    if total < 8 {
        return None;
    }
    let printable = text.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t')).count();
    (printable as f64 >= MIN_PRINTABLE_SHARE * total as f64).then_some(text)
}

/// What a decoded text holds that makes it a finding.
fn judge(decoded: &str, depth: usize) -> Option<String> {
    let mut found = Sink::new();
    super::phrases::scan(decoded, 1, super::phrases::Place::Describes, &mut found);
    if let Some(f) = found.iter().find(|f| f.rule == rules::MODEL_INSTRUCTIONS) {
        let what = f.detail.split(':').next().unwrap_or("instructs the model");
        return Some(what.to_string());
    }
    found.clear();
    super::code::scan_command(decoded, 1, super::code::Origin::Code, &mut found);
    if let Some(f) = found.first() {
        return Some(format!("is a command the exec gate refuses ({})", f.rule));
    }
    if depth + 1 < MAX_DECODE_DEPTH {
        found.clear();
        scan(decoded, 1, depth + 1, &mut found);
        if !found.is_empty() {
            return Some(String::from("is itself an encoded blob of instructions"));
        }
    }
    None
}
