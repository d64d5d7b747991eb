//! Look-alike domains: hosts whose letters imitate Latin ones.

use super::text::{latin_look_alike, quote};
use super::{Sink, push, rules};
use crate::prelude::*;

/// Longest host examined, in bytes.
pub const MAX_HOST_BYTES: usize = 253;

/// Finds look-alike domains in `text` (whose first line is `first_line`).
pub fn scan(text: &str, first_line: u32, out: &mut Sink) {
    for (i, line) in text.split('\n').enumerate() {
        let line_no = first_line.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
        for chunk in line.split(|c: char| c.is_whitespace() || "<>()[]{}\"'`,;|".contains(c)) {
            let Some(host) = host_of(chunk) else { continue };
            if let Some(why) = look_alike(host) {
                push(out, rules::HOMOGLYPH_DOMAIN, line_no, format!("`{}` {why}", quote(host)));
            }
        }
    }
}

fn is_dot(c: char) -> bool {
    matches!(c, '.' | '\u{3002}' | '\u{FF0E}' | '\u{FF61}')
}

/// The host a chunk of text names, if it looks like one.
fn host_of(chunk: &str) -> Option<&str> {
    let rest = match chunk.find("://") {
        Some(at) => chunk.get(at + 3..)?,
        None => chunk,
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let end = rest.find(['/', '?', '#', ':']).unwrap_or(rest.len());
    let host = rest.get(..end)?.trim_end_matches(is_dot);
    if host.len() > MAX_HOST_BYTES || !host.contains(is_dot) {
        return None;
    }
    let labels: Vec<&str> = host.split(is_dot).collect();
    if labels.len() < 2 || labels.iter().any(|l| l.is_empty()) {
        return None;
    }
    if !labels.iter().all(|l| l.chars().all(|c| c.is_alphanumeric() || c == '-')) {
        return None;
    }
    let tld = labels.last()?;
    if tld.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let interesting = !host.is_ascii()
        || labels.iter().any(|l| l.len() > 4 && l.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("xn--")));
    interesting.then_some(host)
}

#[derive(Default)]
struct Scripts {
    latin: usize,
    imitating: usize,
    other: usize,
    compat: bool,
}

/// Why `host` imitates a Latin one, if it does.
pub fn look_alike(host: &str) -> Option<String> {
    for label in host.split(is_dot) {
        let decoded = match label.get(..4) {
            Some(p) if p.eq_ignore_ascii_case("xn--") => match punycode_decode(label.get(4..).unwrap_or("")) {
                Some(d) => d,
                None => return Some(format!("has a punycode label `{label}` that does not decode")),
            },
            _ => label.to_string(),
        };
        let via = if decoded != label { format!(" (punycode for `{}`)", quote(&decoded)) } else { String::new() };
        let mut s = Scripts::default();
        let mut skeleton = String::new();
        for c in decoded.chars() {
            // Full-width and mathematical forms (accented Latin letters are Latin).
            if let Some(plain) =
                super::text::compatible(c).filter(|p| p.is_ascii() && !('\u{00C0}'..='\u{024F}').contains(&c))
            {
                s.compat = true;
                skeleton.push(plain.to_ascii_lowercase());
                continue;
            }
            if c.is_ascii_digit() || c == '-' {
                skeleton.push(c);
            } else if c.is_ascii_alphabetic()
                || ('\u{00C0}'..='\u{024F}').contains(&c)
                || ('\u{1E00}'..='\u{1EFF}').contains(&c)
            {
                s.latin += 1;
                skeleton.push(c.to_ascii_lowercase());
            } else if matches!(c, '\u{0370}'..='\u{03FF}' | '\u{0400}'..='\u{052F}' | '\u{0530}'..='\u{058F}' | '\u{1F00}'..='\u{1FFF}')
            {
                s.imitating += 1;
                match latin_look_alike(c) {
                    Some(l) => skeleton.push(l),
                    None => s.other += 1,
                }
            } else {
                s.other += 1;
                skeleton.push(c);
            }
        }
        if s.compat {
            return Some(format!("is written in full-width or mathematical letters that read as `{skeleton}`{via}"));
        }
        if s.latin > 0 && s.imitating > 0 {
            return Some(format!("mixes Latin letters with Cyrillic, Greek or Armenian ones that look alike{via}"));
        }
        if s.latin == 0 && s.imitating > 0 && s.other == 0 {
            return Some(format!("is written wholly in letters drawn like Latin ones: it reads as `{skeleton}`{via}"));
        }
    }
    None
}

/// Decodes the part of a punycode label after `xn--` (RFC 3492).
pub fn punycode_decode(input: &str) -> Option<String> {
    const BASE: u32 = 36;
    const TMIN: u32 = 1;
    const TMAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    let (basic, extended) = match input.rfind('-') {
        Some(at) => (input.get(..at)?, input.get(at + 1..)?),
        None => ("", input),
    };
    if !basic.is_ascii() {
        return None;
    }
    let mut output: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = extended.bytes().peekable();
    while digits.peek().is_some() {
        let old_i = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let b = digits.next()?;
            let digit = match b {
                b'a'..=b'z' => u32::from(b - b'a'),
                b'A'..=b'Z' => u32::from(b - b'A'),
                b'0'..=b'9' => u32::from(b - b'0') + 26,
                _ => return None,
            };
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = if k <= bias {
                TMIN
            } else if k >= bias + TMAX {
                TMAX
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let len = u32::try_from(output.len()).ok()? + 1;
        // Bias adaptation.
        let mut delta = if old_i == 0 { (i - old_i) / DAMP } else { (i - old_i) / 2 };
        delta += delta / len;
        let mut k = 0;
        while delta > ((BASE - TMIN) * TMAX) / 2 {
            delta /= BASE - TMIN;
            k += BASE;
        }
        bias = k + (((BASE - TMIN + 1) * delta) / (delta + SKEW));
        n = n.checked_add(i / len)?;
        i %= len;
        output.insert(usize::try_from(i).ok()?, char::from_u32(n)?);
        i += 1;
        if output.len() > MAX_HOST_BYTES {
            return None;
        }
    }
    Some(output.into_iter().collect())
}
