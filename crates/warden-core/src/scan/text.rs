//! Text as the scanner reads it: hidden characters found, look-alike letters
//! folded, and words with the line each stands on.

use super::{Sink, push, push_at, rules};
use crate::model::Risk;
use crate::prelude::*;

/// Whether `c` is a Unicode tag character (U+E0000-U+E007F), which renders as
/// nothing and spells ASCII: U+E0041 is a hidden `A`.
pub fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// Zero-width and other invisible characters that can split or pad a word.
pub fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'
            | '\u{200C}'
            | '\u{200D}'
            | '\u{2060}'
            | '\u{2061}'
            | '\u{2062}'
            | '\u{2063}'
            | '\u{2064}'
            | '\u{180E}'
            | '\u{FEFF}'
            | '\u{034F}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{FFA0}'
    )
}

/// Bidi controls that reorder what is shown: embeddings, overrides, isolates
/// and their pops. The marks LRM, RLM and ALM only mark direction and are not among them.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

pub fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{3FFFF}')
}

/// Whether `c` is a character the scanner drops before matching words.
pub fn is_invisible(c: char) -> bool {
    is_tag(c) || is_zero_width(c) || is_bidi_control(c) || is_variation_selector(c) || c == '\u{00AD}'
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => {
            let mut s = text.get(..end).unwrap_or(text).to_string();
            s.push('…');
            s
        }
    }
}

/// A line of a document as a detail quotes it: trimmed, shortened, invisible
/// and control characters spelled out (`<U+200B>`), and never a secret.
pub fn quote(line: &str) -> String {
    let trimmed = line.trim();
    if !crate::dlp::detectors::scan(trimmed).is_empty() {
        return String::from("(the line holds a secret and is not quoted)");
    }
    let mut out = String::new();
    for (count, c) in trimmed.chars().enumerate() {
        if count >= super::MAX_QUOTE_CHARS {
            out.push('…');
            break;
        }
        if is_invisible(c) || c.is_control() {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The `line`th line (from `first_line`) of `text`.
pub fn line_text(text: &str, first_line: u32, line: u32) -> &str {
    let index = line.saturating_sub(first_line) as usize;
    text.split('\n').nth(index).unwrap_or("")
}

/// The line (from 1) that the character at `offset` (in characters) is on.
pub fn line_of_char(text: &str, offset: usize) -> u32 {
    let mut line = 1u32;
    for c in text.chars().take(offset) {
        if c == '\n' {
            line = line.saturating_add(1);
        }
    }
    line
}

/// The line (from 1) that byte `offset` is on.
pub fn line_of_byte(text: &str, offset: usize) -> u32 {
    let end = offset.min(text.len());
    let count = text.as_bytes().get(..end).map_or(0, |b| b.iter().filter(|&&b| b == b'\n').count());
    u32::try_from(count).unwrap_or(u32::MAX).saturating_add(1)
}

/// `text` cut into windows of whole lines of at most `max` bytes (a longer
/// line is a window of its own, cut at a character boundary), each with the
/// line it starts on.
pub fn windows(text: &str, max: usize) -> Vec<(u32, &str)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut line = 1u32;
    while start < text.len() {
        let rest = text.get(start..).unwrap_or("");
        let mut end = rest.len().min(max);
        if end < rest.len() {
            match rest.get(..end).and_then(|r| r.rfind('\n')) {
                Some(nl) if nl > 0 => end = nl + 1,
                _ => {
                    while !rest.is_char_boundary(end) {
                        end -= 1;
                    }
                }
            }
        }
        let window = rest.get(..end).unwrap_or("");
        if window.is_empty() {
            break;
        }
        out.push((line, window));
        line = line.saturating_add(u32::try_from(window.matches('\n').count()).unwrap_or(u32::MAX));
        start += end;
    }
    out
}

/// Finds the hidden characters of `text` (whose first line is `first_line`):
/// one finding per line and kind.
pub fn hidden(text: &str, first_line: u32, out: &mut Sink) {
    let chars: Vec<char> = text.chars().collect();
    let mut line = first_line;
    let mut i = 0usize;
    let mut reported: Vec<(u32, u8)> = Vec::new();
    let mut once = |line: u32, kind: u8| {
        if reported.contains(&(line, kind)) {
            false
        } else {
            reported.push((line, kind));
            true
        }
    };
    while let Some(&c) = chars.get(i) {
        if c == '\n' {
            line = line.saturating_add(1);
            i += 1;
            continue;
        }
        if is_tag(c) {
            let mut hidden_ascii = String::new();
            let mut n = 0usize;
            while let Some(&t) = chars.get(i) {
                if !is_tag(t) {
                    break;
                }
                let v = t as u32 - 0xE0000;
                if (0x20..0x7F).contains(&v) {
                    hidden_ascii.push(char::from(v as u8));
                }
                n += 1;
                i += 1;
            }
            push_at(
                out,
                rules::HIDDEN_TEXT,
                line,
                Risk::Critical,
                format!(
                    "{n} Unicode tag characters, invisible, spell `{}`",
                    shorten(&hidden_ascii, super::MAX_QUOTE_CHARS)
                ),
            );
            if hidden_ascii.len() > 3 {
                super::phrases::scan(&hidden_ascii, line, super::phrases::Place::Describes, out);
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        if is_zero_width(c) && !(c == '\u{FEFF}' && i == 0) {
            // Emoji sequences and scripts that join letters use ZWJ and ZWNJ;
            // between Latin letters or at a word's edge they only hide.
            let foreign = |x: Option<char>| x.is_some_and(|x| !x.is_ascii());
            if !(foreign(prev) || foreign(next)) && once(line, 0) {
                let n = chars.iter().skip(i).take_while(|&&x| x != '\n').filter(|&&x| is_zero_width(x)).count();
                push(
                    out,
                    rules::HIDDEN_TEXT,
                    line,
                    format!(
                        "{n} zero-width character(s) (first U+{:04X}) in `{}`",
                        c as u32,
                        quote(&line_at(&chars, i))
                    ),
                );
            }
        } else if is_bidi_control(c) && once(line, 1) {
            push(
                out,
                rules::HIDDEN_TEXT,
                line,
                format!(
                    "a bidi control (U+{:04X}) reorders what is shown of `{}`",
                    c as u32,
                    quote(&line_at(&chars, i))
                ),
            );
        } else if is_variation_selector(c) {
            let run = chars.iter().skip(i).take_while(|&&x| is_variation_selector(x)).count();
            let supplementary = c >= '\u{E0100}' && !prev.is_some_and(is_cjk);
            if (run > 1 || supplementary) && once(line, 2) {
                push(
                    out,
                    rules::HIDDEN_TEXT,
                    line,
                    format!("{run} variation selector(s) in a row, which can carry hidden bytes"),
                );
            }
            i += run;
            continue;
        }
        i += 1;
    }
}

/// The line of `chars` that index `i` stands on.
fn line_at(chars: &[char], i: usize) -> String {
    let start = chars.get(..i).and_then(|b| b.iter().rposition(|&c| c == '\n')).map_or(0, |p| p + 1);
    let end = chars.get(i..).and_then(|a| a.iter().position(|&c| c == '\n')).map_or(chars.len(), |p| i + p);
    chars.get(start..end).map_or_else(String::new, |s| s.iter().collect())
}

/// The words of `text` (whose first line is `first_line`), folded: HTML
/// entities decoded, invisible characters dropped, compatibility forms
/// (full-width, mathematical letters) and Cyrillic, Greek and Armenian
/// look-alikes of Latin letters read as those letters, accents dropped, lower
/// case. A web address is the word `@url`; a path the path guard protects by
/// default is the word `@path`. `not` stands for `do not`, `don't` and `never`.
pub fn words(text: &str, first_line: u32) -> Vec<(String, u32)> {
    let decoded = decode_entities(text);
    let mut out: Vec<(String, u32)> = Vec::new();
    let mut line = first_line;
    for raw_line in decoded.split('\n') {
        for chunk in raw_line.split(|c: char| c.is_whitespace()) {
            if chunk.is_empty() {
                continue;
            }
            let visible: String = chunk.chars().filter(|&c| !is_invisible(c)).collect();
            let lower = visible.to_ascii_lowercase();
            if lower.contains("://") || lower.contains("www.") {
                out.push((String::from("@url"), line));
                continue;
            }
            if super::code::names_protected_path(&visible) {
                out.push((String::from("@path"), line));
                continue;
            }
            let mut word = String::new();
            for c in visible.chars() {
                for f in fold_char(c) {
                    if f.is_alphanumeric() {
                        word.push(f);
                    } else if !word.is_empty() {
                        out.push((core::mem::take(&mut word), line));
                    }
                }
            }
            if !word.is_empty() {
                out.push((word, line));
            }
        }
        line = line.saturating_add(1);
    }
    merge_negations(out)
}

fn merge_negations(words: Vec<(String, u32)>) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::with_capacity(words.len());
    let mut iter = words.into_iter().peekable();
    while let Some((w, line)) = iter.next() {
        let next = iter.peek().map(|(n, _)| n.as_str());
        let pair = matches!((w.as_str(), next), ("do", Some("not")) | ("don", Some("t")) | ("does", Some("not")));
        if pair {
            iter.next();
            out.push((String::from("not"), line));
        } else if w == "dont" || w == "never" {
            out.push((String::from("not"), line));
        } else {
            out.push((w, line));
        }
    }
    out
}

/// One character as the matcher reads it.
pub fn fold_char(c: char) -> Vec<char> {
    let mut out = Vec::new();
    if is_invisible(c) {
        return out;
    }
    let d = compatible(c).unwrap_or(c);
    let d = latin_look_alike(d).unwrap_or(d);
    for l in d.to_lowercase() {
        out.push(l);
    }
    out
}

/// The plain character a compatibility form stands for: full-width forms,
/// mathematical letters and digits, and Latin letters with accents (so
/// `ｉｇｎｏｒｅ`, `𝐢𝐠𝐧𝐨𝐫𝐞` and `ignóre` read as `ignore`).
pub fn compatible(c: char) -> Option<char> {
    let cp = c as u32;
    let ascii = |v: u32| char::from_u32(v);
    match cp {
        0xFF01..=0xFF5E => ascii(cp - 0xFEE0),
        0x3000 => Some(' '),
        0x1D400..=0x1D6A3 => {
            let i = (cp - 0x1D400) % 52;
            if i < 26 { ascii(u32::from(b'A') + i) } else { ascii(u32::from(b'a') + i - 26) }
        }
        0x1D7CE..=0x1D7FF => ascii(u32::from(b'0') + (cp - 0x1D7CE) % 10),
        _ => ACCENTED.iter().find(|(set, _)| set.contains(c)).map(|(_, base)| *base),
    }
}

/// Latin letters with accents and the letter under them.
const ACCENTED: &[(&str, char)] = &[
    ("àáâãäåāăą", 'a'),
    ("ÀÁÂÃÄÅĀĂĄ", 'A'),
    ("çćĉċč", 'c'),
    ("ÇĆĈĊČ", 'C'),
    ("ďđ", 'd'),
    ("èéêëēĕėęě", 'e'),
    ("ÈÉÊËĒĔĖĘĚ", 'E'),
    ("ĝğġģ", 'g'),
    ("ĥħ", 'h'),
    ("ìíîïĩīĭįı", 'i'),
    ("ÌÍÎÏĨĪĬĮİ", 'I'),
    ("ĵ", 'j'),
    ("ķ", 'k'),
    ("ĺļľŀł", 'l'),
    ("ñńņňŉ", 'n'),
    ("ÑŃŅŇ", 'N'),
    ("òóôõöøōŏő", 'o'),
    ("ÒÓÔÕÖØŌŎŐ", 'O'),
    ("ŕŗř", 'r'),
    ("śŝşš", 's'),
    ("ţťŧ", 't'),
    ("ùúûüũūŭůűų", 'u'),
    ("ÙÚÛÜŨŪŬŮŰŲ", 'U'),
    ("ŵ", 'w'),
    ("ýÿŷ", 'y'),
    ("źżž", 'z'),
];

/// The Latin letter a Cyrillic, Greek or Armenian letter is drawn like, if any.
pub fn latin_look_alike(c: char) -> Option<char> {
    Some(match c {
        'а' | 'А' | 'α' | 'Α' => 'a',
        'в' | 'В' | 'Β' | 'β' => 'b',
        'с' | 'С' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'Е' | 'ё' | 'Ε' | 'ε' => 'e',
        'ɡ' | 'ց' => 'g',
        'һ' | 'Н' | 'Η' | 'հ' => 'h',
        'і' | 'І' | 'ι' | 'Ι' | 'ӏ' | 'Ӏ' => 'i',
        'ј' | 'Ј' => 'j',
        'к' | 'К' | 'κ' | 'Κ' => 'k',
        'М' | 'Μ' => 'm',
        'ո' | 'η' | 'Ν' => 'n',
        'о' | 'О' | 'ο' | 'Ο' | 'օ' | 'σ' => 'o',
        'р' | 'Р' | 'ρ' | 'Ρ' => 'p',
        'ԛ' => 'q',
        'ѕ' | 'Ѕ' => 's',
        'т' | 'Т' | 'τ' | 'Τ' => 't',
        'υ' | 'ս' => 'u',
        'ν' | 'ѵ' => 'v',
        'ԝ' | 'ѡ' => 'w',
        'х' | 'Х' | 'χ' | 'Χ' => 'x',
        'у' | 'У' | 'γ' | 'Υ' => 'y',
        'Ζ' => 'z',
        _ => return None,
    })
}

/// `text` with HTML character references decoded (`&#105;`, `&#x69;`,
/// `&lt;`, ...); anything else kept as written.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or(""));
        let after = rest.get(at + 1..).unwrap_or("");
        let end = after.find(';').filter(|&e| e > 0 && e <= 10);
        let decoded = end.and_then(|e| entity(after.get(..e).unwrap_or("")));
        match (decoded, end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = after.get(e + 1..).unwrap_or("");
            }
            _ => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let value = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse::<u32>().ok()?,
        };
        return char::from_u32(value);
    }
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "shy" => '\u{00AD}',
        "zwj" => '\u{200D}',
        "zwnj" => '\u{200C}',
        _ => return None,
    })
}
