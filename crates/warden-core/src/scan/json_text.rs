//! The string literals of JSON text, decoded, with the line each starts on:
//! how the scanner reads what `\u200b` or `\u0069gnore` escapes spell.

use crate::prelude::*;

/// Longest string literal decoded, in bytes; longer ones are skipped (the
/// text around them is still scanned as written).
pub const MAX_LITERAL_BYTES: usize = 256 * 1024;

/// Every JSON string literal of `text` that decodes, in order.
pub fn strings(text: &str) -> Vec<(u32, String)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' => {
                line = line.saturating_add(1);
                i += 1;
            }
            b'"' => {
                let start = i;
                let mut j = i + 1;
                let mut closed = false;
                while let Some(&c) = bytes.get(j) {
                    match c {
                        b'\\' => j += 2,
                        b'"' => {
                            closed = true;
                            break;
                        }
                        b'\n' => break,
                        _ => j += 1,
                    }
                }
                if !closed {
                    i = j.max(i + 1);
                    continue;
                }
                let literal = text.get(start..=j).unwrap_or("");
                if literal.len() <= MAX_LITERAL_BYTES
                    && let Ok(s) = serde_json::from_str::<String>(literal)
                {
                    out.push((line, s));
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The line of the first literal of `strings` at or after `from` that
/// decodes to `value`, and its index; `None` when there is none.
pub fn find(strings: &[(u32, String)], value: &str, from: usize) -> Option<(usize, u32)> {
    strings.iter().enumerate().skip(from).find(|(_, (_, s))| s == value).map(|(i, (l, _))| (i, *l))
}
