//! Values a label names as secret, and passwords inside URLs.
//!
//! A label is a key whose last word is a secret word: `password`, `passwd`,
//! `pwd`, `pass`, `passphrase`, `secret`, `credentials`, `api_key`,
//! `private_key`, `access_key`, … (strong labels), or `token`, `auth`,
//! `authorization`, `bearer` (weak labels, which also name many things that
//! are not secrets). Words are split at `_`, `-`, `.` and case changes, so
//! `DB_PASSWORD`, `x-api-key`, `clientSecret` and `spring.datasource.password`
//! are labels and `password_policy`, `token_url` and `max_tokens` are not.
//!
//! The label is followed by `=`, `:`, `:=` or `=>` (as in env files, YAML,
//! JSON, code and HTTP headers), by a space after a `--flag`, or by `is` in a
//! sentence. The value is taken whole, whatever punctuation it holds: up to
//! its closing quote, or up to white space. An `Authorization` value's scheme
//! word (`Bearer`, `Basic`, `Token`, `Bot`) is skipped, and a `Basic` value
//! is judged by the password it decodes to.
//!
//! A value is not a secret when it is a placeholder (`<…>`, `${…}`, `{{…}}`,
//! `%(…)s`, `$VAR`, `xxxx`, `****`, `REDACTED`, `changeme`,
//! `your_password_here`, `example`, `null`, `true`, …), code (`getpass()`,
//! `os.environ['TOKEN']`, `settings.SECRET_KEY`, a type such as `str` or
//! `Option<String>`), a path or URL, a word or a name made of words
//! (`required`, `click`, `db-credentials`), or shorter than
//! [`MIN_LABELLED_VALUE_CHARS`]. A weak label's value must also look random
//! and be at least [`MIN_WEAK_LABELLED_VALUE_CHARS`] long. A value that is
//! base64 of printable text is judged by that text.

use super::detectors::{LineStarts, RunEnds, Span, Taken, average_class_run, entropy, names, run, word_fraction};
use super::prefixes::{Fixed, Found, Prefix};
use crate::prelude::*;
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use alloc::borrow::Cow;
use base64::Engine as _;
use once_cell::race::OnceBox;

/// Shortest value of a strong label (`password`, `secret`, `api_key`) that can be a secret, in characters.
pub const MIN_LABELLED_VALUE_CHARS: usize = 6;
/// Shortest value of a weak label (`token`, `auth`) that can be a secret, in characters.
pub const MIN_WEAK_LABELLED_VALUE_CHARS: usize = 16;
/// Longest value taken after a label, in bytes; a longer quoted value is judged by its start.
pub const MAX_LABELLED_VALUE_BYTES: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    Strong,
    Weak,
}

/// Last words that make a key a strong label.
const STRONG_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "passwort",
    "secret",
    "credentials",
    "credential",
    "creds",
    "apikey",
    "secretkey",
    "privatekey",
    "accesskey",
    "masterkey",
    "signingkey",
    "encryptionkey",
    "accountkey",
    "clientsecret",
    "appsecret",
];
/// Endings of a one-word key that make it a strong label (`PGPASSWORD`, `clientsecret`).
const STRONG_ENDINGS: &[&str] = &["password", "passwd", "passphrase", "secret", "apikey", "secretkey", "accesskey"];
/// Words before a final `key` that make the key a strong label (`api_key`, `x-api-key`, `SECRET_KEY`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "secret",
    "private",
    "access",
    "master",
    "signing",
    "encryption",
    "account",
    "client",
    "app",
    "auth",
    "admin",
    "service",
    "storage",
    "shared",
    "subscription",
    "webhook",
    "license",
];
/// Last words that make a key a weak label.
const WEAK_WORDS: &[&str] = &["token", "auth", "authorization", "bearer", "authtoken", "accesstoken", "apitoken"];

/// Whole values that are not secrets whatever the label.
const NOT_SECRETS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "required",
    "optional",
    "string",
    "str",
    "bool",
    "boolean",
    "int",
    "number",
    "any",
    "object",
    "unknown",
    "n/a",
    "default",
    "hidden",
    "masked",
    "omitted",
    "removed",
    "secret123",
    "password123",
    "password1",
    "12345678",
    "123456",
    "1234567890",
    "qwerty",
    "letmein",
    "admin123",
];
/// Pieces whose presence makes a value a placeholder.
const PLACEHOLDER_PIECES: &[&str] = &[
    "xxxx",
    "***",
    "...",
    "\u{2026}",
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "placeholder",
    "example",
    "your_",
    "your-",
    "yourpass",
    "yoursecret",
    "yourtoken",
    "yourkey",
    "_here",
    "-here",
    "dummy",
    "sample",
    "${",
    "{{",
    "%(",
    "#{",
    "$(",
    "<%",
    "%s",
    "fixme",
    "todo",
    "replace_",
    "replace-",
    "insert_",
    "insert-",
    "not_set",
    "notset",
    "not-set",
    "secret_value",
    "secretvalue",
    "mysecret",
    "mypassword",
    "supersecret",
];

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// What the label checks read of a key's words: how many, the last and
/// the one before it. A key splits into words at `_`, `-`, `.` and
/// lower-to-upper case changes; words are compared ignoring ASCII case, so
/// none is copied.
struct LastWords<'a> {
    count: usize,
    last: Option<&'a str>,
    before: Option<&'a str>,
}

impl<'a> LastWords<'a> {
    fn of(key: &'a str) -> LastWords<'a> {
        let mut words = LastWords { count: 0, last: None, before: None };
        let mut close = |from: usize, to: usize| {
            if from < to {
                words.count += 1;
                words.before = words.last;
                words.last = key.get(from..to);
            }
        };
        let mut start = 0;
        let mut prev_lower = false;
        // Words split only at ASCII bytes, so every range is whole characters.
        for (i, &b) in key.as_bytes().iter().enumerate() {
            if matches!(b, b'_' | b'-' | b'.') {
                close(start, i);
                start = i + 1;
                prev_lower = false;
                continue;
            }
            if b.is_ascii_uppercase() && prev_lower {
                close(start, i);
                start = i;
            }
            prev_lower = b.is_ascii_lowercase() || b.is_ascii_digit();
        }
        close(start, key.len());
        words
    }
}

/// Whether `word` is one of `list` (lower-case), ignoring ASCII case.
fn one_of(list: &[&str], word: &str) -> bool {
    list.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether `word` ends with `ending` (lower-case), ignoring ASCII case.
fn ends_with(word: &str, ending: &str) -> bool {
    word.len()
        .checked_sub(ending.len())
        .and_then(|at| word.as_bytes().get(at..))
        .is_some_and(|end| end.eq_ignore_ascii_case(ending.as_bytes()))
}

/// Pieces, one of which every label's last word holds (`pass` in `passwd`,
/// `key` in `apiKey`, `auth` in `authorization`), in any case.
pub(super) const LABEL_PIECES: &[&[u8]] = &[b"pass", b"pwd", b"secret", b"cred", b"key", b"token", b"auth", b"bearer"];

/// Whether `key` holds one of [`LABEL_PIECES`], ignoring ASCII case: a
/// necessary condition for [`strength`] to find a label, checked in one pass.
fn holds_secret_word(key: &[u8]) -> bool {
    (0..key.len()).any(|i| {
        // The pieces start with seven letters; any other byte starts none of them.
        matches!(key.get(i).map(u8::to_ascii_lowercase), Some(b'p' | b's' | b'c' | b'k' | b't' | b'a' | b'b'))
            && LABEL_PIECES.iter().any(|p| key.get(i..i + p.len()).is_some_and(|w| w.eq_ignore_ascii_case(p)))
    })
}

fn strength(key: &str) -> Option<Strength> {
    let words = LastWords::of(key);
    let last = words.last?;
    if one_of(STRONG_WORDS, last)
        || (words.count == 1 && STRONG_ENDINGS.iter().any(|e| ends_with(last, e)))
        || (last.eq_ignore_ascii_case("key") && words.before.is_some_and(|b| one_of(KEY_QUALIFIERS, b)))
    {
        return Some(Strength::Strong);
    }
    if one_of(WEAK_WORDS, last) || (words.count == 1 && ends_with(last, "token")) {
        return Some(Strength::Weak);
    }
    None
}

/// How a label is joined to its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Joint {
    /// `=`, `:`, `:=`, `=>`.
    Assign,
    /// A space after a `--flag`.
    Flag,
    /// `is` in a sentence.
    Prose,
}

/// Values after secret-like labels.
///
/// A key is a maximal run of label bytes. Only a run holding a label piece or
/// `-u` can be a label (see [`holds_secret_word`]); the pieces' positions come
/// from the one pass of [`super::prefixes`], so the other runs are not read.
pub(super) fn labelled(text: &str, found: &Found, spans: &mut Vec<Span>) {
    let bytes = text.as_bytes();
    let mut reading = Reading { taken: Taken::of(spans), values: ValueEnds::default(), lines: LineStarts::default() };
    // Every run that starts before `covered` is judged; the byte just before it is no label byte.
    let mut covered = 0usize;
    for at in found.label_starts() {
        if at < covered {
            continue;
        }
        let back = bytes.get(covered..at).map_or(0, |b| b.iter().rev().take_while(|&&b| is_label_byte(b)).count());
        let start = at - back;
        let end = at + run(bytes, at, is_label_byte);
        if let Some(key) = text.get(start..end) {
            label_at(text, Key { start, text: key, end }, &mut reading, spans);
        }
        covered = end + 1;
    }
}

/// What reading the labels of one text keeps from one label to the next.
struct Reading {
    /// The spans found so far.
    taken: Taken,
    /// Where unquoted values end.
    values: ValueEnds,
    /// Where the lines of keys start (keys come in order).
    lines: LineStarts,
}

/// Where unquoted values end: at white space, and in a URL query also at `&`
/// or `#`. A run of value bytes is measured once, so the labels inside one
/// long value (`AccountKey=AccountKey=…`) share its end instead of each
/// reading it again.
struct ValueEnds {
    plain: RunEnds<fn(u8) -> bool>,
    query: RunEnds<fn(u8) -> bool>,
}

impl Default for ValueEnds {
    fn default() -> ValueEnds {
        ValueEnds { plain: RunEnds::new(|b| !b.is_ascii_whitespace()), query: RunEnds::new(is_query_value_byte) }
    }
}

fn is_query_value_byte(b: u8) -> bool {
    !b.is_ascii_whitespace() && !matches!(b, b'&' | b'#')
}

impl ValueEnds {
    /// The length of the unquoted value at `at`, at most [`MAX_LABELLED_VALUE_BYTES`].
    fn len(&mut self, bytes: &[u8], at: usize, in_query: bool) -> usize {
        let runs = if in_query { &mut self.query } else { &mut self.plain };
        runs.len(bytes, at).min(MAX_LABELLED_VALUE_BYTES)
    }
}

/// A key that may be a label, and where it is.
struct Key<'a> {
    start: usize,
    text: &'a str,
    end: usize,
}

fn label_at(text: &str, key: Key<'_>, reading: &mut Reading, spans: &mut Vec<Span>) {
    let Key { start: key_start, text: key, end: key_end } = key;
    // Most words of a message are no label: only a key holding a secret word can be one.
    if !holds_secret_word(key.as_bytes()) && key != "-u" && key != "--user" {
        return;
    }
    let bytes = text.as_bytes();
    let dashes = key.bytes().take_while(|&b| b == b'-').count();
    let is_flag = dashes == 2;
    let name = key.trim_start_matches('-').trim_end_matches(['.', '-']);
    if key == "-u" || key == "--user" {
        user_flag(text, key_end, reading, spans);
        return;
    }
    let Some(strength) = strength(name) else {
        return;
    };
    // `.netrc` lines: `machine host login ada password …`.
    let netrc = {
        let line_start = reading.lines.of(bytes, key_start);
        let l = text.get(line_start..key_start).unwrap_or_default().trim_start();
        l.starts_with("machine ") || l.starts_with("default ")
    };
    let mut at = key_end;
    let quote_before = key_start.checked_sub(1).and_then(|i| bytes.get(i)).copied();
    // An XML element (`<password>S3cret</password>`): the value runs to the next tag.
    if quote_before == Some(b'<') && bytes.get(at) == Some(&b'>') {
        xml_element(text, at + 1, strength, reading, spans);
        return;
    }
    // A quoted key (`"password": …`) closes its quote before the separator.
    let mut quoted_key = false;
    if let Some(q @ (b'"' | b'\'')) = quote_before
        && bytes.get(at) == Some(&q)
    {
        at += 1;
        quoted_key = true;
    }
    let spaces = run(bytes, at, |b| b == b' ' || b == b'\t');
    at += spaces;
    let joint = match (bytes.get(at), bytes.get(at + 1)) {
        // `define('DB_PASSWORD', 'S3cret')`: a quoted key, a comma, a quoted value.
        (Some(b','), _) if quoted_key => {
            at += 1;
            at += run(bytes, at, |b| b == b' ');
            if !matches!(bytes.get(at), Some(b'"' | b'\'')) {
                return;
            }
            Joint::Assign
        }
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => {
            at += 2;
            Joint::Assign
        }
        (Some(b'='), Some(b'=')) | (Some(b':'), Some(b':')) => return,
        (Some(b'=' | b':'), _) => {
            at += 1;
            Joint::Assign
        }
        (Some(b'i'), Some(b's')) if spaces > 0 && matches!(bytes.get(at + 2), Some(b' ' | b':')) => {
            at += 2;
            at += run(bytes, at, |b| b == b' ');
            if bytes.get(at) == Some(&b':') {
                at += 1;
            }
            Joint::Prose
        }
        _ if (is_flag || netrc) && spaces > 0 => Joint::Flag,
        // `PASSWORD 'S3cret'`, as SQL and some configuration files write it.
        (Some(b'\'' | b'"'), _) if spaces > 0 && strength == Strength::Strong => Joint::Flag,
        _ => return,
    };
    at += run(bytes, at, |b| b == b' ' || b == b'\t');
    let in_query = matches!(key_start.checked_sub(1).and_then(|i| bytes.get(i)), Some(b'?' | b'&'));
    let authorization = LastWords::of(name).last.is_some_and(|w| one_of(&["authorization", "auth"], w));
    // An unquoted `Authorization: Bearer …` value is the word after the scheme.
    let mut scheme = Scheme::None;
    if authorization && let Some((skipped, found)) = text.get(at..).and_then(scheme_word) {
        at += skipped;
        scheme = found;
    }
    let Some((value_start, value_end, quoted)) = value_at(bytes, at, in_query, &mut reading.values) else {
        return;
    };
    let Some(value) = text.get(value_start..value_end) else {
        return;
    };
    let (value_start, mut value) = skip_scheme(value_start, value);
    if scheme != Scheme::None {
        value.1 = scheme;
    }
    let end = value_start + value.0.len();
    // A value overlapping a span found before adds nothing, whatever it is: it is not judged.
    if reading.taken.overlaps(value_start, end) {
        return;
    }
    let (judged, basic) = if authorization && value.1 == Scheme::Basic {
        (Cow::Owned(basic_password(value.0)), true)
    } else {
        (decoded_text(value.0).map_or(Cow::Borrowed(value.0), Cow::Owned), false)
    };
    let strength = if basic { Strength::Strong } else { strength };
    // A decoded `Basic` password is a literal, as a quoted value is.
    if is_secret_value(&judged, strength, joint, quoted || basic) {
        reading.taken.push(spans, names::LABELLED_SECRET, value_start, end);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    None,
    Basic,
    Other,
}

const SCHEMES: &[(&str, Scheme)] = &[
    ("Bearer ", Scheme::Other),
    ("bearer ", Scheme::Other),
    ("Basic ", Scheme::Basic),
    ("basic ", Scheme::Basic),
    ("Token ", Scheme::Other),
    ("token ", Scheme::Other),
    ("Bot ", Scheme::Other),
];

/// The length of a leading authorization scheme word and the spaces after it, and the scheme.
fn scheme_word(value: &str) -> Option<(usize, Scheme)> {
    SCHEMES.iter().find_map(|&(word, scheme)| {
        let rest = value.strip_prefix(word)?.trim_start_matches([' ', '\t']);
        Some((value.len() - rest.len(), scheme))
    })
}

/// A quoted value without its leading authorization scheme word.
fn skip_scheme(start: usize, value: &str) -> (usize, (&str, Scheme)) {
    match scheme_word(value) {
        Some((skipped, scheme)) => {
            let rest = value.get(skipped..).unwrap_or_default();
            let token = rest.split([' ', '\t']).next().unwrap_or(rest);
            (start + skipped, (token, scheme))
        }
        None => (start, (value, Scheme::None)),
    }
}

/// The password a `Basic` credential decodes to, or the credential itself.
fn basic_password(value: &str) -> String {
    let decoded = base64::engine::general_purpose::STANDARD.decode(value).ok().and_then(|d| String::from_utf8(d).ok());
    match decoded.as_deref().and_then(|d| d.split_once(':')) {
        Some((_, password)) => password.to_string(),
        None => value.to_string(),
    }
}

/// The text a base64 value decodes to, when it is printable text.
fn decoded_text(value: &str) -> Option<String> {
    // Padding is at most two `=`, at the end (decoding refuses any other).
    let body = value.trim_end_matches('=');
    if value.len() < 8
        || !value.len().is_multiple_of(4)
        || value.len() - body.len() > 2
        || !body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
    {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(value).ok()?;
    let text = String::from_utf8(raw).ok()?;
    text.chars().all(|c| !c.is_control()).then_some(text)
}

/// Where a value starts and ends, and whether it was quoted.
fn value_at(bytes: &[u8], at: usize, in_query: bool, values: &mut ValueEnds) -> Option<(usize, usize, bool)> {
    let first = *bytes.get(at)?;
    if matches!(first, b'"' | b'\'' | b'`') {
        let start = at + 1;
        let mut i = start;
        while i < bytes.len() && i - start < MAX_LABELLED_VALUE_BYTES {
            match bytes.get(i) {
                Some(b'\\') => i += 2,
                Some(b'\n') | None => return None,
                Some(&b) if b == first => return Some((start, i, true)),
                Some(_) => i += 1,
            }
        }
        return None;
    }
    let mut end = at + values.len(bytes, at, in_query);
    // Sentence and structure punctuation after an unquoted value is not part of it.
    while end > at
        && bytes
            .get(end - 1)
            .is_some_and(|b| matches!(b, b',' | b';' | b'.' | b')' | b']' | b'}' | b'"' | b'\'' | b'`'))
    {
        end -= 1;
    }
    (end > at).then_some((at, end, false))
}

/// Whether `value`, the whole value after a label, is a concrete secret.
fn is_secret_value(value: &str, strength: Strength, joint: Joint, quoted: bool) -> bool {
    let min = match strength {
        Strength::Strong => MIN_LABELLED_VALUE_CHARS,
        Strength::Weak => MIN_WEAK_LABELLED_VALUE_CHARS,
    };
    // Fewer than `min` characters: counted no further than `min`.
    if value.chars().nth(min.saturating_sub(1)).is_none() {
        return false;
    }
    let bytes = value.as_bytes();
    // A weak label's value must look random whatever else holds: asked first, it
    // spares the other passes over most values (a word, a name, a repeated key).
    let random = looks_random(bytes);
    if strength == Strength::Weak && !random {
        return false;
    }
    if placeholder(value) || value.contains("://") || path_like(value) {
        return false;
    }
    if !quoted && (code_like(value) || value.starts_with(['(', '['])) {
        return false;
    }
    if joint == Joint::Prose && value.bytes().all(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    if (word_like(value) || name_like(value)) && !random {
        return false;
    }
    match strength {
        Strength::Strong => true,
        Strength::Weak => random,
    }
}

const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 4;
const OTHER: u8 = 8;

/// The class bit of every byte.
static CLASS_BITS: [u8; 256] = {
    let mut bits = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        bits[b] = match b as u8 {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            _ => OTHER,
        };
        b += 1;
    }
    bits
};

/// A value made of mixed character classes with short runs and few words.
fn looks_random(bytes: &[u8]) -> bool {
    // Which classes the value holds, in one pass without branches.
    let held = bytes.iter().fold(0u8, |held, &b| held | CLASS_BITS[usize::from(b)]);
    if (held & (UPPER | LOWER | DIGIT)).count_ones() < 2 {
        return false;
    }
    let letters_only = held & (DIGIT | OTHER) == 0;
    let shape = if letters_only { average_class_run(bytes) <= 2.5 && bytes.len() >= 10 } else { true };
    shape && entropy(bytes) >= 3.0 && word_fraction(bytes) <= 0.5
}

static PIECES: OnceBox<Option<AhoCorasick>> = OnceBox::new();

/// One automaton for every placeholder piece, in any ASCII case, built on first use;
/// `None` if it could not be built (a test builds it).
fn pieces() -> Option<&'static AhoCorasick> {
    PIECES
        .get_or_init(|| {
            Box::new(
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(PLACEHOLDER_PIECES)
                    .ok(),
            )
        })
        .as_ref()
}

/// Whether `value` holds a placeholder piece, in any ASCII case: one pass of
/// the automaton, or, were it missing, each piece looked for in turn.
fn holds_placeholder_piece(value: &str) -> bool {
    match pieces() {
        Some(automaton) => automaton.is_match(value),
        None => {
            let lower = value.to_ascii_lowercase();
            PLACEHOLDER_PIECES.iter().any(|p| lower.contains(p))
        }
    }
}

/// A placeholder a person writes where a secret would go.
pub fn placeholder(value: &str) -> bool {
    if NOT_SECRETS.iter().any(|w| w.eq_ignore_ascii_case(value)) || holds_placeholder_piece(value) {
        return true;
    }
    let bytes = value.as_bytes();
    let first = bytes.first().map(u8::to_ascii_lowercase);
    let second = bytes.get(1).copied();
    let wrapped = |open: u8, close: u8| first == Some(open) && bytes.last() == Some(&close);
    // `$VAR`, `$env:VAR`, `%VAR%`, `<password>`, `{password}`, `[password]`.
    let variable = first == Some(b'$') && second.is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'{');
    let same = bytes.iter().all(|b| Some(b.to_ascii_lowercase()) == first);
    variable || same || wrapped(b'<', b'>') || wrapped(b'{', b'}') || wrapped(b'%', b'%') || wrapped(b'[', b']')
}

/// Code that reads a secret from somewhere else: a call, an index, a member path or a type.
fn code_like(value: &str) -> bool {
    let body = value.trim_start_matches(['&', '*', '!', '@']);
    let ident = body.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.')).count();
    let head_ok = body.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !head_ok || ident == 0 {
        return false;
    }
    let rest = body.get(ident..).unwrap_or_default();
    if rest.starts_with(['(', '[']) || rest.starts_with("::") || rest.starts_with("->") {
        return true;
    }
    // Types: `Option<String>`, `String?`, `str | None`; names of types hold no digits.
    let type_name = body.get(..ident).is_some_and(|name| !name.bytes().any(|b| b.is_ascii_digit()));
    if type_name && rest.starts_with(['<', '?', '|']) {
        return true;
    }
    // `settings.SECRET_KEY`, `process.env.TOKEN`: member paths of letter-led names without digits.
    body.contains('.')
        && body.split('.').all(|seg| {
            seg.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && seg.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
        })
}

/// A file path (`/run/secrets/db`, `~/.ssh/id_rsa`, `./key.pem`, `C:\keys\a.pfx`).
fn path_like(value: &str) -> bool {
    let b = value.as_bytes();
    value.starts_with("~/")
        || value.starts_with("./")
        || value.starts_with("../")
        || (b.len() > 3 && b.get(1) == Some(&b':') && b.get(2) == Some(&b'\\'))
        || (value.starts_with('/')
            && value.bytes().skip(1).filter(|&c| c == b'/').count() >= 1
            && value.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'.' | b'_' | b'-')))
}

/// Words or a name made of words: letters joined by `_`, `-`, `.` or spaces, no digits or other symbols.
fn word_like(value: &str) -> bool {
    value.bytes().all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'-' | b'.' | b' '))
}

/// The text of an XML element named as secret, up to the next tag.
fn xml_element(text: &str, start: usize, strength: Strength, reading: &mut Reading, spans: &mut Vec<Span>) {
    let Some(rest) = text.get(start..) else {
        return;
    };
    let Some(len) = rest.find('<').filter(|&l| l <= MAX_LABELLED_VALUE_BYTES) else {
        return;
    };
    let value = rest.get(..len).unwrap_or_default();
    let trimmed = value.trim();
    let from = start + (value.len() - value.trim_start().len());
    let end = from + trimmed.len();
    if !trimmed.contains('\n')
        && !reading.taken.overlaps(from, end)
        && is_secret_value(trimmed, strength, Joint::Assign, true)
    {
        reading.taken.push(spans, names::LABELLED_SECRET, from, end);
    }
}

/// The password of `-u user:password` and `--user user:password` (curl and kin).
fn user_flag(text: &str, at: usize, reading: &mut Reading, spans: &mut Vec<Span>) {
    let bytes = text.as_bytes();
    let spaces = run(bytes, at, |b| b == b' ');
    let Some((start, end, quoted)) =
        (spaces > 0).then(|| value_at(bytes, at + spaces, false, &mut reading.values)).flatten()
    else {
        return;
    };
    let Some((user, password)) = text.get(start..end).and_then(|v| v.split_once(':')) else {
        return;
    };
    let from = start + user.len() + 1;
    if !user.is_empty()
        && !reading.taken.overlaps(from, end)
        && is_secret_value(password, Strength::Strong, Joint::Flag, quoted)
    {
        reading.taken.push(spans, names::LABELLED_SECRET, from, end);
    }
}

/// A resource name of words and small numbers (`postgres-secret-1`, `app_tls_v2`, `aws-prod-01`).
fn name_like(value: &str) -> bool {
    let segments: Vec<&str> = value.split(['-', '_', '.']).collect();
    let word = |s: &str| s.bytes().all(|b| b.is_ascii_lowercase()) || s.bytes().all(|b| b.is_ascii_uppercase());
    let number = |s: &str| s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit());
    let version = |s: &str| s.strip_prefix(['v', 'V']).is_some_and(|n| !n.is_empty() && number(n));
    segments.len() >= 2
        && segments.iter().all(|s| !s.is_empty() && (word(s) || number(s) || version(s)))
        && segments.iter().any(|s| s.len() >= 3 && word(s))
}

/// Passwords of `scheme://user:password@host` URLs.
pub(super) fn url_credentials(text: &str, found: &Found, spans: &mut Vec<Span>) {
    const DEFAULTS: &[&str] =
        &["guest", "admin", "root", "postgres", "mysql", "test", "user", "redis", "mongo", "rabbitmq", "anonymous"];
    let bytes = text.as_bytes();
    for at in found.starts(Prefix::Fixed(Fixed::UrlScheme)) {
        let scheme = bytes.get(..at).map_or(0, |b| {
            b.iter().rev().take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-')).count()
        });
        let scheme_ok = scheme >= 2 && bytes.get(at - scheme).is_some_and(u8::is_ascii_alphabetic);
        let info_at = at + 3;
        let info_len = run(bytes, info_at, |b| {
            !b.is_ascii_whitespace() && !matches!(b, b'@' | b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`')
        });
        let at_sign = info_at + info_len;
        let host_ok = bytes.get(at_sign + 1).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'[');
        if !scheme_ok || bytes.get(at_sign) != Some(&b'@') || !host_ok {
            continue;
        }
        let Some(info) = text.get(info_at..at_sign) else {
            continue;
        };
        let Some((user, password)) = info.split_once(':') else {
            continue;
        };
        let lower = password.to_ascii_lowercase();
        let exempt = password.chars().count() < 4
            || placeholder(password)
            || password == user
            || DEFAULTS.contains(&lower.as_str())
            || (password.starts_with('%') && password.len() <= 4);
        if !exempt {
            let start = info_at + user.len() + 1;
            spans.push(Span { detector: names::URL_CREDENTIALS, start, end: at_sign });
        }
    }
}

#[cfg(test)]
#[path = "labelled_tests.rs"]
mod tests;
