//! The text a value is read from, before any value is looked for: escapes
//! decoded, compatibility forms folded, invisible characters dropped and
//! defanged spellings re-formed. Each step is one pass with a bounded look
//! ahead, so the whole is linear in the length of the text.

use crate::prelude::*;

/// The longest character reference (`&#x1D41A;`, `&commat;`) decoded.
const MAX_ENTITY_CHARS: usize = 10;

/// `text` decoded, folded and re-formed; `work` counts the steps taken.
pub(super) fn prepare(text: &str, work: &mut u64) -> Vec<char> {
    let src: Vec<char> = text.chars().collect();
    let decoded = decode(&src, work);
    refang(&decoded, work)
}

/// The character at `i`, or NUL past either end.
pub(super) fn at(chars: &[char], i: usize) -> char {
    chars.get(i).copied().unwrap_or('\0')
}

/// The character before `i`, or NUL at the start.
pub(super) fn before(chars: &[char], i: usize) -> char {
    i.checked_sub(1).map_or('\0', |p| at(chars, p))
}

/// Whether `c` is invisible and dropped: zero-width characters, the soft
/// hyphen, joiners, directional marks, the byte-order mark.
fn invisible(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}')
}

/// `c` as NFKC writes it, for the compatibility forms a value can be spelled
/// with (full-width and half-width forms, small forms, mathematical and
/// circled letters and digits, letter-like symbols); the dots IDNA reads as
/// label separators are `.`, Unicode spaces are spaces, Unicode hyphens and
/// dashes are `-`. `None` for an invisible character.
pub(super) fn fold(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(c);
    }
    if invisible(c) {
        return None;
    }
    let u = c as u32;
    let ascii = |v: u32| char::from_u32(v).unwrap_or(c);
    let folded = match c {
        '\u{ff01}'..='\u{ff5e}' => ascii(u - 0xfee0),
        '\u{3002}' | '\u{ff61}' | '\u{fe52}' | '\u{2024}' => '.',
        '\u{fe6b}' => '@',
        '\u{fe55}' => ':',
        '\u{fe58}' | '\u{fe63}' | '\u{2010}'..='\u{2013}' | '\u{2212}' => '-',
        '\u{3000}'
        | '\u{a0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200a}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202f}'
        | '\u{205f}' => ' ',
        '\u{24b6}'..='\u{24cf}' => ascii(u - 0x24b6 + u32::from(b'A')),
        '\u{24d0}'..='\u{24e9}' => ascii(u - 0x24d0 + u32::from(b'a')),
        '\u{2460}'..='\u{2468}' => ascii(u - 0x2460 + u32::from(b'1')),
        '\u{1d400}'..='\u{1d6a3}' => {
            let i = (u - 0x1d400) % 52;
            ascii(if i < 26 { u32::from(b'A') + i } else { u32::from(b'a') + i - 26 })
        }
        '\u{1d7ce}'..='\u{1d7ff}' => ascii(u32::from(b'0') + (u - 0x1d7ce) % 10),
        '\u{2102}' => 'C',
        '\u{210a}' => 'g',
        '\u{210b}'..='\u{210d}' => 'H',
        '\u{210e}' => 'h',
        '\u{2110}' | '\u{2111}' => 'I',
        '\u{2112}' => 'L',
        '\u{2113}' => 'l',
        '\u{2115}' => 'N',
        '\u{2119}' => 'P',
        '\u{211a}' => 'Q',
        '\u{211b}'..='\u{211d}' => 'R',
        '\u{2124}' | '\u{2128}' => 'Z',
        '\u{212c}' => 'B',
        '\u{212d}' => 'C',
        '\u{212f}' | '\u{2147}' => 'e',
        '\u{2130}' => 'E',
        '\u{2131}' => 'F',
        '\u{2133}' => 'M',
        '\u{2134}' => 'o',
        '\u{2139}' | '\u{2148}' => 'i',
        '\u{2149}' => 'j',
        _ => c,
    };
    Some(folded)
}

fn hex(c: char) -> Option<u32> {
    c.to_digit(16)
}

/// Named character references that can spell part of a value.
const ENTITIES: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", ' '),
    ("commat", '@'),
    ("period", '.'),
    ("colon", ':'),
    ("sol", '/'),
    ("num", '#'),
    ("plus", '+'),
    ("hyphen", '-'),
    ("dash", '-'),
    ("lowbar", '_'),
    ("percnt", '%'),
    ("lpar", '('),
    ("rpar", ')'),
    ("lsqb", '['),
    ("rsqb", ']'),
];

/// JSON string escapes (`\u0040`, `\/`), HTML character references
/// (`&#64;`, `&#x40;`, `&commat;`) and percent-escapes of the characters a
/// host or an address is written with (`%40`, `%2E`, `%65`) decoded once,
/// then every character folded.
fn decode(src: &[char], work: &mut u64) -> Vec<char> {
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        *work += 1;
        let c = at(src, i);
        let (decoded, used) = match c {
            '\\' => json_escape(src, i),
            '&' => entity(src, i),
            '%' => percent(src, i),
            _ => (Some(c), 1),
        };
        *work += used as u64;
        if let Some(d) = decoded.and_then(fold) {
            out.push(d);
        }
        i += used.max(1);
    }
    out
}

fn json_escape(src: &[char], i: usize) -> (Option<char>, usize) {
    match at(src, i + 1) {
        'u' => {
            let Some(high) = hex4(src, i + 2) else { return (Some('\\'), 1) };
            if (0xd800..0xdc00).contains(&high) && at(src, i + 6) == '\\' && at(src, i + 7) == 'u' {
                if let Some(low) = hex4(src, i + 8).filter(|l| (0xdc00..0xe000).contains(l)) {
                    let c = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
                    return (char::from_u32(c), 12);
                }
            }
            (Some(char::from_u32(high).unwrap_or(' ')), 6)
        }
        '/' => (Some('/'), 2),
        '"' => (Some('"'), 2),
        '\\' => (Some('\\'), 2),
        'n' | 'r' | 't' | 'b' | 'f' => (Some(' '), 2),
        _ => (Some('\\'), 1),
    }
}

fn hex4(src: &[char], i: usize) -> Option<u32> {
    (i..i + 4).try_fold(0u32, |v, j| Some(v * 16 + hex(at(src, j))?))
}

fn entity(src: &[char], i: usize) -> (Option<char>, usize) {
    let mut j = i + 1;
    if at(src, j) == '#' {
        j += 1;
        let radix = if matches!(at(src, j), 'x' | 'X') {
            j += 1;
            16
        } else {
            10
        };
        let start = j;
        let mut value = 0u32;
        while let Some(d) = at(src, j).to_digit(radix) {
            if j - start >= 7 {
                return (Some('&'), 1);
            }
            value = value * radix + d;
            j += 1;
        }
        if j == start {
            return (Some('&'), 1);
        }
        if at(src, j) == ';' {
            j += 1;
        }
        return (Some(char::from_u32(value).unwrap_or(' ')), j - i);
    }
    let start = j;
    while at(src, j).is_ascii_alphabetic() && j - start < MAX_ENTITY_CHARS {
        j += 1;
    }
    if at(src, j) != ';' {
        return (Some('&'), 1);
    }
    let name: String = src.get(start..j).unwrap_or_default().iter().collect();
    match ENTITIES.iter().find(|(n, _)| *n == name) {
        Some(&(_, c)) => (Some(c), j + 1 - i),
        None => (Some('&'), 1),
    }
}

fn percent(src: &[char], i: usize) -> (Option<char>, usize) {
    let (Some(a), Some(b)) = (hex(at(src, i + 1)), hex(at(src, i + 2))) else { return (Some('%'), 1) };
    match char::from_u32(a * 16 + b) {
        Some(c) if c.is_ascii_alphanumeric() || matches!(c, '@' | '.' | '-' | '_') => (Some(c), 3),
        _ => (Some('%'), 1),
    }
}

/// Whether `chars` at `i` spell `word`, ignoring ASCII case.
pub(super) fn spells(chars: &[char], i: usize, word: &str) -> bool {
    word.chars().enumerate().all(|(k, w)| at(chars, i + k).eq_ignore_ascii_case(&w))
}

/// What a defanged token in brackets stands for: `[.]`, `(dot)`, `{at}`,
/// `[@]`, `[:]`, `[://]`, `[/]`, with or without a space inside.
fn bracketed(chars: &[char], i: usize) -> Option<(&'static str, usize)> {
    let close = match at(chars, i) {
        '[' => ']',
        '(' => ')',
        '{' => '}',
        _ => return None,
    };
    let mut j = i + 1;
    if at(chars, j) == ' ' {
        j += 1;
    }
    let (symbol, len) = if spells(chars, j, "://") {
        ("://", 3)
    } else if spells(chars, j, "dot") {
        (".", 3)
    } else if spells(chars, j, "at") {
        ("@", 2)
    } else {
        match at(chars, j) {
            '.' => (".", 1),
            '@' => ("@", 1),
            ':' => (":", 1),
            '/' => ("/", 1),
            _ => return None,
        }
    };
    j += len;
    if at(chars, j) == ' ' {
        j += 1;
    }
    (at(chars, j) == close).then_some((symbol, j + 1 - i))
}

/// Defanged spellings re-formed: `evil[.]com`, `evil(.)com`, `evil[dot]com`,
/// `bob [at] example [dot] com`, `bob(at)example.com`, `hxxp://`, `hxxps[:]//`.
/// A bracketed `.` or `@` takes the single spaces around it with it.
fn refang(chars: &[char], work: &mut u64) -> Vec<char> {
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        *work += 1;
        let c = at(chars, i);
        if !matches!(c, '[' | '(' | '{' | 'h' | 'H') {
            out.push(c);
            i += 1;
            continue;
        }
        if let Some((symbol, used)) = bracketed(chars, i) {
            *work += used as u64;
            let joins = matches!(symbol, "." | "@");
            if joins && out.last() == Some(&' ') {
                out.pop();
            }
            out.extend(symbol.chars());
            i += used;
            if joins && at(chars, i) == ' ' {
                i += 1;
            }
            continue;
        }
        if matches!(c, 'h' | 'H')
            && !before(chars, i).is_alphanumeric()
            && spells(chars, i, "hxxp")
            && (matches!(at(chars, i + 4), ':' | '[')
                || (matches!(at(chars, i + 4), 's' | 'S') && matches!(at(chars, i + 5), ':' | '[')))
        {
            *work += 4;
            out.extend("http".chars());
            i += 4;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}
