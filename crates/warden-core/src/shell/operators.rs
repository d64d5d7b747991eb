//! What the operator of a parameter expansion makes of a known value, as
//! bash computes it: `${f#pattern}`, `${f%%pattern}`, `${f/pattern/with}`,
//! `${f^^}`, `${f,,}`, `${f@U}`, `${f:-word}`, `${f: -3}` and their kin.
//!
//! A script can spell a protected path or a program through one of them
//! (`f=x.env; cat "${f/x/}"`, `c=RM; ${c,,} -rf /`), so the analyser works
//! the result out instead of leaving the word unknown. Anything it does not
//! read exactly gives `None`, which leaves the word only known at run time
//! as before: character classes (`[[:alpha:]]`) and extended patterns
//! (`@(a|b)`) in a pattern, a negated bracket set that starts with `]`
//! (which bash reads differently in `${f/…}` and `${f#…}`), prompt
//! expansion (`@P`), and values or
//! patterns past [`MAX_OPERAND_CHARS`], [`MAX_PATTERN_TOKENS`] or
//! [`MAX_MATCH_STEPS`].
//!
//! The operator text comes with quoted characters escaped by a backslash
//! (`${f/"*"/}` is `/\*/`), so that quoted pattern characters match
//! themselves, as in bash; so do characters an expansion produced, other
//! than the pattern characters of an unquoted one, so that they cannot
//! spell an operator (`g='#'; ${f#$g}` removes one `#`). In a replacement,
//! an unquoted `&` is the matched text (bash 5.2's `patsub_replacement`).

use crate::prelude::*;

/// Longest value an operator is worked out on, in characters.
pub const MAX_OPERAND_CHARS: usize = 4096;
/// Most tokens in a pattern (a character, `?`, `*` or a bracket set each).
pub const MAX_PATTERN_TOKENS: usize = 64;
/// Most pattern steps one operator may take before it gives up.
pub const MAX_MATCH_STEPS: usize = 1 << 16;

/// The value `${name<op>}` expands to, where `value` is the name's known
/// value and `op` what follows the name, quoted characters escaped.
#[inline(never)]
pub fn apply(value: &str, op: &str) -> Option<String> {
    if op.is_empty() {
        return Some(value.to_string());
    }
    if value.chars().count() > MAX_OPERAND_CHARS {
        return None;
    }
    let first = op.chars().next()?;
    let after = |n: usize| op.get(n..).unwrap_or("");
    match first {
        ':' => match op.chars().nth(1) {
            Some('-' | '=') => Some(if value.is_empty() { unescape(after(2)) } else { value.to_string() }),
            Some('?') => (!value.is_empty()).then(|| value.to_string()),
            Some('+') => Some(if value.is_empty() { String::new() } else { unescape(after(2)) }),
            _ => substring(value, &unescape(after(1))),
        },
        // The value is set, so the forms without a colon give it (or the word, for `+`).
        '-' | '=' | '?' => Some(value.to_string()),
        '+' => Some(unescape(after(1))),
        '#' | '%' => {
            let longest = op.chars().nth(1) == Some(first);
            let pattern = Pattern::new(after(if longest { 2 } else { 1 }))?;
            let chars: Vec<char> = value.chars().collect();
            let mut steps = 0;
            let kept = if first == '#' {
                let end = if longest {
                    pattern.longest_from(&chars, 0, &mut steps)?
                } else {
                    pattern.shortest_from(&chars, 0, &mut steps)?
                };
                chars.get(end.unwrap_or(0)..)?
            } else {
                let start = pattern.suffix(&chars, longest, &mut steps)?;
                chars.get(..start.unwrap_or(chars.len()))?
            };
            Some(kept.iter().collect())
        }
        '/' => substitute(value, after(1)),
        '^' | ',' | '~' => {
            let all = op.chars().nth(1) == Some(first);
            let pattern = Pattern::new(after(if all { 2 } else { 1 }))?;
            let mut steps = 0;
            let mut out = String::with_capacity(value.len());
            for (i, c) in value.chars().enumerate() {
                let changes = (all || i == 0) && (pattern.is_empty() || pattern.matches(&[c], &mut steps)?);
                out.push(match (changes, first) {
                    (false, _) => c,
                    (true, '^') => upper(c),
                    (true, ',') => lower(c),
                    (true, _) if c.is_uppercase() => lower(c),
                    (true, _) => upper(c),
                });
            }
            Some(out)
        }
        '@' => match after(1) {
            "U" => Some(value.chars().map(upper).collect()),
            "L" => Some(value.chars().map(lower).collect()),
            "u" => {
                let mut chars = value.chars();
                Some(chars.next().map(|c| core::iter::once(upper(c)).chain(chars).collect()).unwrap_or_default())
            }
            "Q" => Some(format!("'{}'", value.replace('\'', "'\\''"))),
            "E" => super::decode::ansi_c(value),
            _ => None,
        },
        _ => None,
    }
}

/// A character in upper case as bash changes one (`towupper`: one
/// character for one, so `ß` stays `ß`, while `ſ` is `S` and `ı` is `I`).
fn upper(c: char) -> char {
    let mut mapped = c.to_uppercase();
    match (mapped.next(), mapped.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// A character in lower case as bash changes one (`towlower`: `İ` is `i`,
/// the Kelvin sign `k`).
fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Quote removal of an operator's word: a backslash keeps the next character.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// `${name:offset}` and `${name:offset:length}`: offsets and lengths are
/// numbers, negative ones counted from the end (`${f: -3}`, `${f:(-3)}`,
/// `${f:1:-1}`); `None` for arithmetic beyond that.
pub fn substring(value: &str, spec: &str) -> Option<String> {
    let chars: Vec<char> = value.chars().collect();
    Some(chars.get(span(chars.len(), spec)?)?.iter().collect())
}

/// The range `offset:length` (or `offset`) picks out of `len` items, as
/// bash's substring and array slice read it.
pub fn span(len: usize, spec: &str) -> Option<core::ops::Range<usize>> {
    let number = |s: &str| -> Option<i64> {
        let s = s.trim();
        let s = s.strip_prefix('(').and_then(|s| s.strip_suffix(')')).unwrap_or(s).trim();
        let (negative, digits) = match s.strip_prefix('-') {
            Some(d) => (true, d.trim_start()),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let n = i64::try_from(number(digits)?).ok()?;
        Some(if negative { -n } else { n })
    };
    let (offset, length) = match spec.split_once(':') {
        Some((o, l)) => (number(o)?, Some(number(l)?)),
        None => (number(spec)?, None),
    };
    let len = i64::try_from(len).ok()?;
    let start = if offset < 0 { len + offset } else { offset };
    // bash expands to nothing when the offset lies outside.
    if start < 0 || start > len {
        return Some(0..0);
    }
    let end = match length {
        None => len,
        Some(l) if l < 0 => len + l,
        Some(l) => start.saturating_add(l).min(len),
    };
    // A negative length ending before the offset is an error in bash.
    if end < start {
        return None;
    }
    Some(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
}

/// A number as bash's arithmetic reads it: decimal, octal after a leading
/// `0` (`010` is 8), hexadecimal after `0x`; `None` for anything else.
pub fn number(text: &str) -> Option<u64> {
    let (digits, radix) = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        (hex, 16)
    } else if text.len() > 1 && text.starts_with('0') {
        (&text[1..], 8)
    } else {
        (text, 10)
    };
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// `${f/pattern/with}` and its forms `//` (every match), `/#` (at the
/// start) and `/%` (at the end); `spec` is what follows the first `/`.
fn substitute(value: &str, spec: &str) -> Option<String> {
    let (mode, spec) = match spec.chars().next() {
        Some('/') => ('/', spec.get(1..)?),
        Some('#') => ('#', spec.get(1..)?),
        Some('%') => ('%', spec.get(1..)?),
        _ => (' ', spec),
    };
    // After `//` the pattern's first character is never the separator (`${f///x}` removes `/x`).
    let (pattern, with) = match unescaped_slash(spec, mode == '/') {
        Some(at) => (spec.get(..at)?, spec.get(at + 1..)?),
        None => (spec, ""),
    };
    let pattern = Pattern::new(pattern)?;
    let chars: Vec<char> = value.chars().collect();
    let mut steps = 0;
    let keep = |range: core::ops::Range<usize>| chars.get(range).map(|c| c.iter().collect::<String>());
    match mode {
        '#' => Some(match pattern.longest_from(&chars, 0, &mut steps)? {
            Some(end) => replacement(with, &keep(0..end)?) + &keep(end..chars.len())?,
            None => value.to_string(),
        }),
        '%' => Some(match pattern.suffix(&chars, true, &mut steps)? {
            Some(start) => keep(0..start)? + &replacement(with, &keep(start..chars.len())?),
            None => value.to_string(),
        }),
        _ => {
            // An empty pattern replaces nothing; nor does a match of nothing.
            let mut out = String::with_capacity(value.len());
            let mut at = 0;
            while at < chars.len() {
                match pattern.longest_from(&chars, at, &mut steps)? {
                    Some(end) if end > at && !pattern.is_empty() => {
                        out.push_str(&replacement(with, &keep(at..end)?));
                        at = end;
                        if mode != '/' {
                            out.push_str(&keep(at..chars.len())?);
                            return Some(out);
                        }
                    }
                    _ => {
                        out.extend(chars.get(at));
                        at += 1;
                    }
                }
            }
            Some(out)
        }
    }
}

/// The replacement of one match: quote removal, and an unquoted `&` is
/// the matched text.
fn replacement(with: &str, matched: &str) -> String {
    let mut out = String::with_capacity(with.len());
    let mut chars = with.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '&' => out.push_str(matched),
            c => out.push(c),
        }
    }
    out
}

/// Where the first `/` not escaped by a backslash is, past the first
/// character when `past_first`.
fn unescaped_slash(text: &str, past_first: bool) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '/' if !(past_first && i == 0) => return Some(i),
            _ => {}
        }
    }
    None
}

/// One token of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    /// `[...]`: ranges of characters, matched unless negated (`[!...]`, `[^...]`).
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Token {
    fn takes(&self, c: char) -> bool {
        match self {
            Token::Char(t) => *t == c,
            Token::Any => true,
            Token::Star => false,
            Token::Set { negated, ranges } => ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated,
        }
    }
}

/// A shell pattern compiled to tokens, matched by simulating every place
/// in it at once, so a pattern never backtracks.
#[derive(Debug)]
struct Pattern(Vec<Token>);

impl Pattern {
    /// `None` for what is not read exactly: character classes, extended
    /// patterns, more than [`MAX_PATTERN_TOKENS`] tokens.
    fn new(text: &str) -> Option<Pattern> {
        let chars: Vec<char> = text.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            let token = match c {
                '\\' => {
                    let next = *chars.get(i)?;
                    i += 1;
                    Token::Char(next)
                }
                '?' | '*' | '+' | '@' | '!' if chars.get(i) == Some(&'(') => return None,
                '?' => Token::Any,
                '*' => Token::Star,
                '[' => match bracket(&chars, i)? {
                    Some((token, end)) => {
                        i = end;
                        token
                    }
                    None => Token::Char('['),
                },
                c => Token::Char(c),
            };
            // Runs of stars match as one.
            if !(token == Token::Star && tokens.last() == Some(&Token::Star)) {
                tokens.push(token);
            }
            if tokens.len() > MAX_PATTERN_TOKENS {
                return None;
            }
        }
        Some(Pattern(tokens))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The places reachable from `places` without reading a character.
    fn closure(&self, mut places: u128) -> u128 {
        for (i, t) in self.0.iter().enumerate() {
            if *t == Token::Star && places & (1 << i) != 0 {
                places |= 1 << (i + 1);
            }
        }
        places
    }

    /// The places after reading `c` from `places`.
    fn step(&self, places: u128, c: char, steps: &mut usize) -> Option<u128> {
        *steps += self.0.len() + 1;
        if *steps > MAX_MATCH_STEPS {
            return None;
        }
        let mut next = 0;
        for (i, t) in self.0.iter().enumerate() {
            if places & (1 << i) == 0 {
                continue;
            }
            if *t == Token::Star {
                next |= 1 << i;
            } else if t.takes(c) {
                next |= 1 << (i + 1);
            }
        }
        Some(self.closure(next))
    }

    fn accepts(&self, places: u128) -> bool {
        places & (1 << self.0.len()) != 0
    }

    /// The ends of the matches that start at `start`, shortest first, up to
    /// the first (`shortest`) or all of them; `None` past the step bound.
    fn ends_from(&self, chars: &[char], start: usize, shortest: bool, steps: &mut usize) -> Option<Vec<usize>> {
        let mut ends = Vec::new();
        let mut places = self.closure(1);
        if self.accepts(places) {
            ends.push(start);
            if shortest {
                return Some(ends);
            }
        }
        for (i, &c) in chars.iter().enumerate().skip(start) {
            places = self.step(places, c, steps)?;
            if places == 0 {
                break;
            }
            if self.accepts(places) {
                ends.push(i + 1);
                if shortest {
                    break;
                }
            }
        }
        Some(ends)
    }

    /// The end of the longest match starting at `start`, if any.
    fn longest_from(&self, chars: &[char], start: usize, steps: &mut usize) -> Option<Option<usize>> {
        Some(self.ends_from(chars, start, false, steps)?.last().copied())
    }

    /// The end of the shortest match starting at `start`, if any.
    fn shortest_from(&self, chars: &[char], start: usize, steps: &mut usize) -> Option<Option<usize>> {
        Some(self.ends_from(chars, start, true, steps)?.first().copied())
    }

    /// Whether the pattern matches all of `chars`.
    fn matches(&self, chars: &[char], steps: &mut usize) -> Option<bool> {
        Some(self.ends_from(chars, 0, false, steps)?.last() == Some(&chars.len()))
    }

    /// Where the shortest (or `longest`) suffix the pattern matches starts.
    fn suffix(&self, chars: &[char], longest: bool, steps: &mut usize) -> Option<Option<usize>> {
        let mut starts: Box<dyn Iterator<Item = usize>> =
            if longest { Box::new(0..=chars.len()) } else { Box::new((0..=chars.len()).rev()) };
        starts.try_fold(None, |found, start| match found {
            Some(_) => Some(found),
            None => {
                let ends = self.ends_from(chars, start, false, steps)?;
                Some((ends.last() == Some(&chars.len())).then_some(start))
            }
        })
    }
}

/// The bracket set whose text starts at `from` (after its `[`) and the
/// index after its `]`; `Some(None)` when no `]` closes it (the `[` is then
/// literal), `None` for a character class (`[:alpha:]`), not read here.
fn bracket(chars: &[char], from: usize) -> Option<Option<(Token, usize)>> {
    let mut i = from;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    // bash reads a negated set that starts with `]` one way in `${f#…}` and another in `${f/…}`.
    if negated && chars.get(i) == Some(&']') {
        return None;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else { return Some(None) };
        if c == ']' && !first {
            return Some(Some((Token::Set { negated, ranges }, i + 1)));
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            return None;
        }
        let lo = if c == '\\' {
            i += 1;
            *chars.get(i)?
        } else {
            c
        };
        i += 1;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&h| h != ']') {
            let hi = match chars.get(i + 1) {
                Some('\\') => {
                    i += 1;
                    *chars.get(i + 1)?
                }
                h => *h?,
            };
            i += 2;
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what the row shows, value, operator, what bash expands it to)
    type Row = (&'static str, &'static str, &'static str, Option<&'static str>);

    const ROWS: &[Row] = &[
        ("no operator gives the value", "/etc/shadow", "", Some("/etc/shadow")),
        ("a default is not used for a set value", "a", ":-b", Some("a")),
        ("a default is used for an empty value", "", ":-b", Some("b")),
        ("a default without colon keeps an empty value", "", "-b", Some("")),
        ("an alternative replaces a set value", "a", ":+b", Some("b")),
        ("an alternative of an empty value is empty", "", ":+b", Some("")),
        ("an error message fails for an empty value", "", ":?no", None),
        ("the shortest prefix is removed", "abcabc", "#*b", Some("cabc")),
        ("the longest prefix is removed", "abcabc", "##*b", Some("c")),
        ("the shortest suffix is removed", "/etc/shadowXYZX", "%X*", Some("/etc/shadowXYZ")),
        ("the longest suffix is removed", "/etc/shadowXYZX", "%%X*", Some("/etc/shadow")),
        ("a prefix that does not match removes nothing", "/etc/shadow", "#x", Some("/etc/shadow")),
        ("a trailing slash taken off a path without one", "/home", "%/", Some("/home")),
        ("the first match is replaced", "x.envx", "/x/", Some(".envx")),
        ("every match is replaced", "x.envx", "//x/", Some(".env")),
        ("every match of a longer pattern is replaced", ".ex.nvx.", "//x./", Some(".env")),
        ("a replacement without its slash deletes", "x.env", "/x", Some(".env")),
        ("a match at the start is replaced", "/tmp/x", "/#\\/tmp\\/x//etc/shadow", Some("/etc/shadow")),
        ("a match at the end is replaced", "/etc/sh", "/%sh/shadow", Some("/etc/shadow")),
        ("an empty pattern at the start prepends", "shadow", "/#//etc/", Some("/etc/shadow")),
        ("an empty unanchored pattern replaces nothing", "abc", "//", Some("abc")),
        ("the longest match is replaced", "aXbXc", "/X*X/-", Some("a-c")),
        ("a star alone replaces everything", "abc", "//*/Z", Some("Z")),
        ("a quoted star is a star", "a*b", "/\\*/", Some("ab")),
        ("a quoted slash is part of the pattern", "a/b/c", "/a\\/b/x", Some("x/c")),
        ("a bracket set matches one of its characters", "/etc/shadoW", "/[WX]/w", Some("/etc/shadow")),
        ("a negated set", "abc", "//[!b]/", Some("b")),
        ("a range", "a1b2", "//[0-9]/", Some("ab")),
        ("an unclosed bracket is literal", "a[b", "/[/", Some("ab")),
        ("a negated set that starts with a bracket is not read", "/", "/[!]]/X", None),
        ("a set that starts with a bracket holds it", "/etc/shadoW", "/[]W]/w", Some("/etc/shadow")),
        ("a pattern after two slashes may start with a slash", "./x", "///x", Some(".")),
        ("a slash pattern replaced everywhere", "a/b/c", "////x", Some("axbxc")),
        ("an ampersand is the matched text", "/", "/\\//&", Some("/")),
        ("two ampersands are the match twice", ".", "/./&&", Some("..")),
        ("a quoted ampersand is an ampersand", "abc", "//b/\\&", Some("a&c")),
        ("an ampersand in a replacement at the start", "shadow", "/#sha/&", Some("shadow")),
        ("an escaped anchor character is matched", ".#.", "/\\#/", Some("..")),
        ("an offset with a leading zero is octal", "abcdefgh/xy", ":010:1", Some("/")),
        ("a hexadecimal offset", "abcdefghijklmnopq", ":0x10", Some("q")),
        ("a dotted capital I is lowered to i", "credent\u{130}als", ",,", Some("credentials")),
        ("the Kelvin sign is lowered to k", "\u{212a}ey", "@L", Some("key")),
        ("a sharp s stays itself when raised", "stra\u{df}e", "^^", Some("STRA\u{df}E")),
        ("a letter beyond ASCII is raised as bash raises it", "\u{e9}t\u{e9}", "^^", Some("\u{c9}T\u{c9}")),
        ("a long s is raised to an ASCII S", "/etc/\u{17f}hadow", "^^", Some("/ETC/SHADOW")),
        ("a dotless i is raised to an ASCII I", "cred\u{131}t", "^", Some("Cred\u{131}t")),
        ("a dotless i is raised to an ASCII I everywhere", "cred\u{131}t", "^^", Some("CREDIT")),
        ("a character class is not read", "a1", "//[[:digit:]]/", None),
        ("an extended pattern is not read", "ab", "//@(a|b)/", None),
        ("everything lowered", "/ETC/SHADOW", ",,", Some("/etc/shadow")),
        ("everything raised", "rm", "^^", Some("RM")),
        ("the first character raised", "rm", "^", Some("Rm")),
        ("only the characters the pattern matches lowered", "ABC", ",,[AB]", Some("abC")),
        ("case toggled", "aBc", "~~", Some("AbC")),
        ("the upper-case transform", "rm", "@U", Some("RM")),
        ("the lower-case transform", "/ETC/SHADOW", "@L", Some("/etc/shadow")),
        ("the first-upper transform", "rm", "@u", Some("Rm")),
        ("the quoting transform quotes", "rm -rf /", "@Q", Some("'rm -rf /'")),
        ("the escape transform expands escapes", "\\x2eenv", "@E", Some(".env")),
        ("prompt expansion is not read", "\\u", "@P", None),
        ("a substring from the end", "/etc/shadow", ": -7", Some("/shadow")),
        ("a substring in parentheses", "/etc/shadow", ":(-6)", Some("shadow")),
        ("a substring with a negative length", "x/etc/shadowx", ":1:-1", Some("/etc/shadow")),
        ("a substring from the start", "/etc/shadow", ":0:4", Some("/etc")),
        ("a substring past the end is empty", "ab", ":5:2", Some("")),
        ("the first character of the default separators", " \t\n", ":0:1", Some(" ")),
        ("a substring to the end", "abc", ":1", Some("bc")),
        ("a substring whose offset is not a number is not read", "abc", ":x", None),
        ("a colon and a minus are a default, not a negative offset", "abc", ":-1", Some("abc")),
    ];

    #[test]
    fn an_operator_on_a_known_value_gives_what_bash_expands_it_to() {
        for (what, value, op, want) in ROWS {
            assert_eq!(apply(value, op).as_deref(), *want, "{what}: ${{x{op}}} of {value:?}");
        }
    }

    #[test]
    fn a_pattern_that_would_take_too_many_steps_is_not_read() {
        let value = "a".repeat(MAX_OPERAND_CHARS);
        let pattern = format!("//{}b/", "*a".repeat(MAX_PATTERN_TOKENS / 2 - 1));
        assert_eq!(apply(&value, &pattern), None);
        assert_eq!(apply(&"a".repeat(MAX_OPERAND_CHARS + 1), "^^"), None);
        assert_eq!(apply("a", &format!("/{}/", "a".repeat(MAX_PATTERN_TOKENS + 1))), None);
    }

    #[test]
    fn a_pattern_matches_as_a_backtracking_matcher_would() {
        // An independent statement of shell matching, by recursion.
        fn naive(p: &[Token], s: &[char]) -> bool {
            match p.split_first() {
                None => s.is_empty(),
                Some((Token::Star, rest)) => (0..=s.len()).any(|i| naive(rest, &s[i..])),
                Some((t, rest)) => s.split_first().is_some_and(|(c, tail)| t.takes(*c) && naive(rest, tail)),
            }
        }
        let patterns = ["*", "a*", "*a", "a*b*a", "?", "??*", "[ab]*[!a]", "*.env", "\\*?", "a[b-d]?*"];
        let alphabet = ['a', 'b', 'c', '*', '.'];
        let (mut words, mut frontier) = (vec![String::new()], vec![String::new()]);
        for _ in 0..5 {
            frontier = frontier.iter().flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}"))).collect();
            words.extend(frontier.iter().cloned());
        }
        for p in patterns {
            let pattern = Pattern::new(p).unwrap();
            for w in &words {
                let chars: Vec<char> = w.chars().collect();
                let mut steps = 0;
                assert_eq!(pattern.matches(&chars, &mut steps), Some(naive(&pattern.0, &chars)), "{p} on {w:?}");
            }
        }
    }
}
