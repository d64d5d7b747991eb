//! Destination-like values in text: what a message, a share, an invitation, a
//! payment or a fetch could be sent to.
//!
//! Every value comes out in one canonical form, so the same destination
//! written two ways (`Bob@Example.COM` and `bob@example.com`, an IBAN with or
//! without spaces) compares equal wherever it is seen: in a tool's result, in
//! the person's own message, or in a call's argument.
//!
//! **Before looking for values** the text is decoded once: JSON string
//! escapes (`\u0040`, `\/`), HTML character references (`&#64;`, `&commat;`)
//! and percent-escapes of letters, digits and `@ . - _` (`%40`, `%2E`).
//! Compatibility forms are written as NFKC writes them (full-width `＠`, `．`
//! and letters, mathematical and circled letters), the ideographic full stops
//! as `.`, Unicode spaces as spaces and Unicode hyphens as `-`; zero-width
//! characters and soft hyphens are dropped. Defanged spellings are re-formed:
//! `evil[.]com`, `evil(.)com`, `evil{dot}com`, `bob [at] example [dot] com`,
//! `bob(at)example.com`, `[@]`, `[:]`, `[://]`, `hxxp://`, `hxxps[:]//`.
//! Words spelled out without brackets (`bob at example dot com`) are not.
//!
//! **Canonical forms:**
//! - [`ValueKind::Email`]: `local@domain`, lowercased, the domain as a host
//!   (below); found in `mailto:` links, `Name <addr>` forms and plain text.
//!   The local part is letters, digits and `. _ % + -`. In text the domain
//!   needs a dot and ends with two or more letters that are not a file
//!   extension (`icon@2x.png` is no address); `user@localhost` is therefore
//!   not taken from text, but is one as a call's argument ([`destination`]).
//! - [`ValueKind::Host`]: the host of a URL of any scheme (`https://`,
//!   `ftp://`, `//host` in an attribute), after `www.`, or a bare domain in
//!   prose; the host after the userinfo (`https://good.com@evil.com/` is
//!   `evil.com`), lowercased, without port, path or trailing dot; IPv4 as
//!   a URL parser reads it (`http://0x7f.1/` is `127.0.0.1`), IPv6 in
//!   brackets as RFC 5952 writes it; internationalized labels lowercased
//!   (Unicode simple lowercase, no further IDNA mapping) and in punycode
//!   (`bücher.de` is `xn--bcher-kva.de`). A bare domain in prose is taken
//!   only when it ends with a listed top-level domain
//!   ([`extract_hosts::prose_tld`]: country codes and common generic ones,
//!   without those that are file extensions too, so `notes.txt`, `main.rs`
//!   and `README.md` are no hosts), is not followed by `(` (a method call),
//!   and is written in one case or capitalized (`System.IO` is code). Bare IP
//!   addresses in prose are not taken (versions look the same).
//! - [`ValueKind::Phone`]: an international number (`+` or `00`) as `+` and
//!   its digits (E.164, a national `(0)` dropped); a national number as its
//!   digits only, without `+`: no country is guessed, so `+1 555 123 4567`
//!   and `(555) 123-4567` are two values. See [`extract_numbers::phone_at`]
//!   for what is not a phone.
//! - [`ValueKind::Iban`]: uppercased without spaces, mod-97 checked.
//! - [`ValueKind::Account`]: digits only, and only next to a label such as
//!   `account`, `acct`, `routing`, `sort code` ([`extract_numbers::ACCOUNT_LABELS`]).
//! - [`ValueKind::Handle`]: `@name` and `#channel` lowercased with the sigil
//!   kept (`#general` and `@general` differ), Slack's `<@U123ABC>` as
//!   `@u123abc` and `<#C123|general>` as `#c123` and `#general`. A plain
//!   name given as a call's argument (`Alice`) is a handle without sigil,
//!   lowercased, which [`names`] finds in the person's own words.
//!
//! A national phone number and an account number are both digits: the same
//! digits are the same destination whichever kind they were read as, so
//! values compare by their text, not by their kind.
//!
//! **Bounds.** Only the first [`MAX_SCAN_BYTES`] of a text are read (a value
//! across that point is lost; [`scan`] says when this happened), values longer
//! than [`MAX_VALUE_CHARS`] are skipped, and at most [`MAX_VALUES`] are
//! returned. Every step is a single pass with a bounded look-around, so the
//! time is linear in the text.

use crate::prelude::*;

#[path = "extract_hosts.rs"]
pub mod extract_hosts;
#[path = "extract_numbers.rs"]
pub mod extract_numbers;
#[path = "extract_text.rs"]
mod extract_text;
#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;

use extract_hosts::{MAX_HOST_CHARS, canonical_host, label_char, mail_tld, prose_tld};
use extract_text::{at, before, prepare};

/// Longest text read for values, in bytes (1 MiB); past it only the first part is read.
pub const MAX_SCAN_BYTES: usize = 1 << 20;
/// Longest value, in characters (the longest email address is 254).
pub const MAX_VALUE_CHARS: usize = 254;
/// Most values returned for one text, whatever `limit` asks.
pub const MAX_VALUES: usize = 1024;
/// Most words in one name from [`names`].
pub const MAX_NAME_WORDS: usize = 3;
/// Longest local part of an email address, in characters.
const MAX_LOCAL_CHARS: usize = 64;
/// Longest handle or channel name, in characters.
const MAX_HANDLE_CHARS: usize = 80;
/// Longest scheme of a URL, in characters.
const MAX_SCHEME_CHARS: usize = 32;
/// Longest authority of a URL (userinfo, host and port), in characters.
const MAX_AUTHORITY_CHARS: usize = 512;

/// What kind of destination a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueKind {
    /// `name@domain`, lowercased.
    Email,
    /// A phone number: `+` and digits when written with its country code, else its digits.
    Phone,
    /// The host of a URL or a bare domain, lowercased, without a trailing dot.
    Host,
    /// An IBAN, uppercased, without spaces.
    Iban,
    /// A bank account number that is not an IBAN, digits only.
    Account,
    /// A chat or user handle (`@name`, `#channel`, `<@U123>`), or a plain name.
    Handle,
}

impl ValueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Email => "email",
            ValueKind::Phone => "phone",
            ValueKind::Host => "host",
            ValueKind::Iban => "iban",
            ValueKind::Account => "account",
            ValueKind::Handle => "handle",
        }
    }
}

/// One destination-like value, in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    pub kind: ValueKind,
    /// The canonical text; this is what is hashed and compared.
    pub value: String,
}

/// The values found in a text, and whether some may have been left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    pub found: Vec<Found>,
    /// The text was longer than [`MAX_SCAN_BYTES`] (only its first part was
    /// read), or it held more values than were returned.
    pub truncated: bool,
}

/// Every destination-like value in `text`, canonical, without repeats, in the
/// order first seen, at most `limit` of them (and at most [`MAX_VALUES`]).
pub fn extract(text: &str, limit: usize) -> Vec<Found> {
    scan(text, limit).found
}

/// [`extract`], saying whether values may have been left out.
pub fn scan(text: &str, limit: usize) -> Scan {
    run(text, limit, false).0
}

/// The hosts of the links in `text` (URLs with a scheme, `www.` and bare
/// domains; not the domains of email addresses), canonical, without repeats,
/// at most `limit`.
pub fn link_hosts(text: &str, limit: usize) -> Vec<String> {
    scan_links(text, limit).found.into_iter().map(|f| f.value).collect()
}

/// [`link_hosts`] as [`Found`] hosts, saying whether some may have been left out.
pub fn scan_links(text: &str, limit: usize) -> Scan {
    run(text, limit, true).0
}

/// The values the passes find, collected for one pass.
struct Sink {
    items: Vec<(usize, Found)>,
    seen: BTreeSet<Found>,
    cap: usize,
    links_only: bool,
    full: bool,
}

impl Sink {
    fn new(cap: usize, links_only: bool) -> Sink {
        Sink { items: Vec::new(), seen: BTreeSet::new(), cap, links_only, full: false }
    }

    fn push(&mut self, at: usize, found: Found) {
        if (self.links_only && found.kind != ValueKind::Host) || found.value.chars().count() > MAX_VALUE_CHARS {
            return;
        }
        if self.seen.contains(&found) {
            return;
        }
        if self.items.len() >= self.cap {
            self.full = true;
            return;
        }
        self.seen.insert(found.clone());
        self.items.push((at, found));
    }
}

/// The prepared text and which of its characters a value already covers.
struct Text {
    chars: Vec<char>,
    taken: Vec<bool>,
    /// Steps taken, for the test that the scan is linear.
    work: u64,
}

impl Text {
    fn new(chars: Vec<char>, work: u64) -> Text {
        Text { taken: vec![false; chars.len()], chars, work }
    }
    fn len(&self) -> usize {
        self.chars.len()
    }
    fn at(&self, i: usize) -> char {
        at(&self.chars, i)
    }
    fn before(&self, i: usize) -> char {
        before(&self.chars, i)
    }
    fn free(&self, i: usize) -> bool {
        self.taken.get(i).is_some_and(|t| !t)
    }
    fn take(&mut self, start: usize, end: usize) {
        for t in self.taken.iter_mut().take(end).skip(start) {
            *t = true;
        }
        self.work += end.saturating_sub(start) as u64;
    }
    fn string(&self, start: usize, end: usize) -> String {
        self.chars.get(start..end).unwrap_or_default().iter().collect()
    }
    fn spells(&self, i: usize, word: &str) -> bool {
        extract_text::spells(&self.chars, i, word)
    }
}

/// `text` cut to at most [`MAX_SCAN_BYTES`] at a character boundary, and whether it was cut.
fn head(text: &str) -> (&str, bool) {
    if text.len() <= MAX_SCAN_BYTES {
        return (text, false);
    }
    let mut end = MAX_SCAN_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text.get(..end).unwrap_or_default(), true)
}

type Pass = fn(&mut Text, &mut Sink);

/// The passes, in the order they claim characters: a URL's userinfo is not
/// an address, an address's domain is not a link, an IBAN's digits are not
/// a phone number.
const PASSES: &[Pass] = &[
    urls,
    slack_mentions,
    emails,
    extract_numbers::ibans,
    extract_numbers::accounts,
    extract_numbers::phones,
    handles,
    channels,
    bare_domains,
];

/// The scan, and the steps it took.
fn run(text: &str, limit: usize, links_only: bool) -> (Scan, u64) {
    let limit = limit.min(MAX_VALUES);
    let (text, cut) = head(text);
    let mut work = 0;
    let chars = prepare(text, &mut work);
    let mut t = Text::new(chars, work);
    let mut items: Vec<(usize, Found)> = Vec::new();
    let mut truncated = cut;
    for pass in PASSES {
        let mut sink = Sink::new(limit, links_only);
        pass(&mut t, &mut sink);
        truncated |= sink.full;
        items.extend(sink.items);
    }
    items.sort_by_key(|(at, _)| *at);
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for (_, f) in items {
        if seen.contains(&f) {
            continue;
        }
        if found.len() >= limit {
            truncated = true;
            break;
        }
        seen.insert(f.clone());
        found.push(f);
    }
    (Scan { found, truncated }, t.work)
}

/// Whether `c` ends a URL's authority.
fn ends_authority(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\0' | '/'
                | '?'
                | '#'
                | '\\'
                | '"'
                | '\''
                | '<'
                | '>'
                | '`'
                | '{'
                | '}'
                | '|'
                | '^'
                | '('
                | ')'
                | ','
                | ';'
                | '*'
        )
}

/// Hosts of URLs: `scheme://[userinfo@]host[:port]`, and `//host` right after
/// a quote, `=` or `(` (a scheme-relative link in an attribute).
fn urls(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        let scheme = t.at(i) == ':' && t.at(i + 1) == '/' && t.at(i + 2) == '/';
        let relative = !scheme
            && t.at(i) == '/'
            && t.at(i + 1) == '/'
            && matches!(t.before(i), '"' | '\'' | '=' | '(')
            && label_char(t.at(i + 2));
        if !(scheme || relative) || !t.free(i) {
            i += 1;
            continue;
        }
        let mut start = i;
        if scheme {
            while start > 0 && i - start < MAX_SCHEME_CHARS {
                t.work += 1;
                let c = t.at(start - 1);
                if !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) || !t.free(start - 1) {
                    break;
                }
                start -= 1;
            }
        }
        let from = i + if scheme { 3 } else { 2 };
        let (end, host) = authority(t, from);
        if let Some(value) = host {
            sink.push(start, Found { kind: ValueKind::Host, value });
        }
        t.take(start, end);
        i = end.max(i + 1);
    }
}

/// The canonical host of the authority starting at `from`, and where it ends.
fn authority(t: &mut Text, from: usize) -> (usize, Option<String>) {
    let mut j = from;
    let mut bracket = false;
    while j - from <= MAX_AUTHORITY_CHARS {
        t.work += 1;
        let c = t.at(j);
        match c {
            '[' => bracket = true,
            ']' if !bracket => break,
            ']' => bracket = false,
            _ if ends_authority(c) => break,
            _ => {}
        }
        j += 1;
    }
    if j - from > MAX_AUTHORITY_CHARS {
        return (j, None);
    }
    let text = t.string(from, j);
    (j, host_of_authority(&text))
}

/// The canonical host of `[userinfo@]host[:port]`.
fn host_of_authority(authority: &str) -> Option<String> {
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if hostport.starts_with('[') {
        hostport.split_inclusive(']').next().unwrap_or_default()
    } else {
        hostport.split(':').next().unwrap_or_default()
    };
    canonical_host(host)
}

/// Slack's mentions: `<@U123ABC>`, `<@U123|bob>`, `<#C123>`, `<#C123|general>`.
fn slack_mentions(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        let sigil = t.at(i + 1);
        if t.at(i) != '<' || !matches!(sigil, '@' | '#') || !t.free(i) {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while t.at(j).is_ascii_alphanumeric() && j - i < MAX_HANDLE_CHARS {
            t.work += 1;
            j += 1;
        }
        let id_end = j;
        let mut label = None;
        if t.at(j) == '|' {
            let from = j + 1;
            j = from;
            while !matches!(t.at(j), '>' | '<' | '\0' | '\n') && j - from < MAX_HANDLE_CHARS {
                t.work += 1;
                j += 1;
            }
            label = Some((from, j));
        }
        if id_end == i + 2 || t.at(j) != '>' {
            i += 1;
            continue;
        }
        let id = t.string(i + 2, id_end);
        let label = label.map(|(from, to)| t.string(from, to));
        sink.push(i, Found { kind: ValueKind::Handle, value: format!("{sigil}{}", id.to_lowercase()) });
        if let Some(value) = label
            .filter(|_| sigil == '#')
            .and_then(|l| channel_name(&core::iter::once('#').chain(l.trim().chars()).collect::<Vec<char>>()))
        {
            sink.push(i, Found { kind: ValueKind::Handle, value });
        }
        t.take(i, j + 1);
        i = j + 1;
    }
}

/// Whether `c` can be part of an email's local part.
fn local_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-')
}

/// Email addresses: the local part before each `@`, the domain after it.
fn emails(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        if t.at(i) != '@' || !t.free(i) {
            i += 1;
            continue;
        }
        let mut start = i;
        while start > 0 && local_char(t.at(start - 1)) && t.free(start - 1) && i - start <= MAX_LOCAL_CHARS {
            t.work += 1;
            start -= 1;
        }
        let mut end = i + 1;
        let mut dot = false;
        while (label_char(t.at(end)) || (t.at(end) == '.' && label_char(t.at(end + 1))))
            && t.free(end)
            && end - i <= MAX_HOST_CHARS
        {
            t.work += 1;
            dot |= t.at(end) == '.';
            end += 1;
        }
        while start < i && t.at(start) == '.' {
            start += 1;
        }
        if !dot || start == i || !tld_may_be_mail(t, end) {
            i += 1;
            continue;
        }
        let local = t.string(start, i);
        let domain = t.string(i + 1, end);
        let ok = !local.is_empty() && local.chars().count() <= MAX_LOCAL_CHARS && !local.ends_with('.');
        if let Some(value) = ok.then(|| mail_address(&local, &domain, true)).flatten() {
            sink.push(start, Found { kind: ValueKind::Email, value });
            t.take(start, end);
            i = end;
            continue;
        }
        i += 1;
    }
}

/// Whether the label that ends at `end` has two letters or more, or is
/// punycode: checked on the characters, before anything is built.
fn tld_may_be_mail(t: &Text, end: usize) -> bool {
    let mut k = end;
    while k > 0 && t.at(k - 1) != '.' && end - k <= MAX_HOST_CHARS {
        k -= 1;
    }
    let letters = (k..end).all(|j| t.at(j).is_alphabetic()) && end - k >= 2;
    letters || t.spells(k, "xn--")
}

/// `local@domain` canonical; in text (`strict`) the domain needs a dot and a
/// top-level domain [`mail_tld`] accepts.
fn mail_address(local: &str, domain: &str, strict: bool) -> Option<String> {
    if local.is_empty() || !local.chars().all(local_char) {
        return None;
    }
    let host = canonical_host(domain)?;
    if strict {
        let (_, tld) = host.rsplit_once('.')?;
        if !mail_tld(tld) {
            return None;
        }
    }
    let local: String = local.chars().flat_map(char::to_lowercase).collect();
    Some(format!("{local}@{host}"))
}

/// A handle or channel with its sigil (`@`, `#`), lowercased: letters,
/// digits, `_`, `-` and inner dots after the sigil, at least one letter.
fn handle_name(handle: &[char]) -> Option<String> {
    let (&sigil, mut name) = handle.split_first()?;
    while let [rest @ .., '.' | '-'] = name {
        name = rest;
    }
    let ok = matches!(sigil, '@' | '#')
        && !name.is_empty()
        && name.len() <= MAX_HANDLE_CHARS
        && name.iter().all(|&c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && name.iter().any(|c| c.is_alphabetic())
        && !matches!(name.first(), Some('.' | '-'));
    ok.then(|| core::iter::once(sigil).chain(name.iter().flat_map(|c| c.to_lowercase())).collect())
}

/// A channel with its `#`: a handle without dots that is not a colour
/// (`#fff`, `#a0b0c0`) or a preprocessor directive (`#include`).
fn channel_name(name: &[char]) -> Option<String> {
    const DIRECTIVES: &[&str] = &[
        "include",
        "define",
        "if",
        "ifdef",
        "ifndef",
        "endif",
        "else",
        "elif",
        "pragma",
        "undef",
        "error",
        "region",
        "endregion",
        "import",
        "warning",
        "line",
    ];
    let handle = handle_name(name).filter(|h| h.starts_with('#'))?;
    let name = handle.get(1..).unwrap_or_default();
    let colour = matches!(name.len(), 3 | 4 | 6 | 8) && name.chars().all(|c| c.is_ascii_hexdigit());
    let ok = !name.contains('.') && !colour && !DIRECTIVES.contains(&name);
    ok.then_some(handle)
}

/// Where the run of handle characters from `from` ends, bounded.
fn handle_run(t: &mut Text, from: usize, dots: bool) -> usize {
    let mut j = from;
    while j - from <= MAX_HANDLE_CHARS {
        let c = t.at(j);
        let inner_dot = dots && c == '.' && t.at(j + 1).is_alphanumeric();
        if !(c.is_alphanumeric() || matches!(c, '_' | '-') || inner_dot) || !t.free(j) {
            break;
        }
        t.work += 1;
        j += 1;
    }
    j
}

fn blocks_sigil(c: char) -> bool {
    local_char(c) || matches!(c, '@' | '#' | '/' | '\\' | '&' | '`' | '$' | '!' | '=' | '*')
}

/// `@name` handles (not inside an address, not an npm scope `@types/node`).
fn handles(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        if t.at(i) != '@' || !t.free(i) || blocks_sigil(t.before(i)) {
            i += 1;
            continue;
        }
        let end = handle_run(t, i + 1, true);
        if end > i + 1
            && end - (i + 1) <= MAX_HANDLE_CHARS
            && t.at(end) != '/'
            && let Some(value) = handle_name(t.chars.get(i..end).unwrap_or_default())
        {
            sink.push(i, Found { kind: ValueKind::Handle, value });
            t.take(i, end);
        }
        i = end.max(i + 1);
    }
}

/// `#channel` names.
fn channels(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        if t.at(i) != '#' || !t.free(i) || blocks_sigil(t.before(i)) || t.before(i) == '"' && t.at(i + 1) == '"' {
            i += 1;
            continue;
        }
        let end = handle_run(t, i + 1, false);
        if end > i + 1
            && end - (i + 1) <= MAX_HANDLE_CHARS
            && t.at(end) != '('
            && let Some(value) = channel_name(t.chars.get(i..end).unwrap_or_default())
        {
            sink.push(i, Found { kind: ValueKind::Handle, value });
            t.take(i, end);
        }
        i = end.max(i + 1);
    }
}

/// Whether a bare domain's letters are in one case or only capitalized
/// (`Example.com`); `System.IO` and `Foo.Bar` are code.
fn plausible_case(token: &str) -> bool {
    let mut letters = token.chars().filter(|c| c.is_alphabetic());
    let first = letters.next();
    let rest: Vec<char> = letters.collect();
    let lower = rest.iter().all(|c| !c.is_uppercase());
    let upper = first.is_none_or(|c| !c.is_lowercase()) && rest.iter().all(|c| !c.is_lowercase());
    lower || upper
}

fn blocks_domain(c: char) -> bool {
    label_char(c) || matches!(c, '.' | '@' | '/' | '\\' | '%' | '~' | '#' | '$' | '&' | '+' | '*')
}

/// Bare domains in prose (`visit evil-site.com today`) and `www.` hosts.
fn bare_domains(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        if !label_char(t.at(i)) || !t.free(i) || blocks_domain(t.before(i)) {
            i += 1;
            continue;
        }
        let mut end = i;
        let mut dot = false;
        while (label_char(t.at(end)) || (t.at(end) == '.' && label_char(t.at(end + 1)))) && t.free(end) {
            t.work += 1;
            dot |= t.at(end) == '.';
            end += 1;
            if end - i > MAX_HOST_CHARS {
                break;
            }
        }
        if !dot || end - i > MAX_HOST_CHARS || matches!(t.at(end), '(' | '@') {
            i = end.max(i + 1);
            continue;
        }
        let token = t.string(i, end);
        if let Some(value) = bare_host(&token) {
            sink.push(i, Found { kind: ValueKind::Host, value });
            t.take(i, end);
        }
        i = end.max(i + 1);
    }
}

/// The canonical host of a bare token, when it reads as a domain rather than a
/// file name, a version or a member access.
fn bare_host(token: &str) -> Option<String> {
    let lower: String = token.chars().flat_map(char::to_lowercase).collect();
    let tld = lower.rsplit('.').next().unwrap_or_default();
    let www = lower.starts_with("www.") && tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic);
    if !(www || (prose_tld(tld) && plausible_case(token))) {
        return None;
    }
    canonical_host(token)
}

/// The canonical form of one value a call names as a destination (a
/// recipient argument): an address, a URL's or a bare host, a phone number,
/// an IBAN or account number, a handle; a plain name with no destination
/// syntax (`Alice`, `general`) is a [`ValueKind::Handle`], lowercased with
/// its spaces collapsed. `None` only for a value with nothing in it.
pub fn destination(text: &str) -> Option<Found> {
    let (text, _) = head(text);
    let mut work = 0;
    let prepared: String = prepare(text, &mut work).into_iter().collect();
    let value = prepared.trim().trim_end_matches([',', ';', '!', '?']).trim();
    if value.is_empty() {
        return None;
    }
    let found = |kind, value| Some(Found { kind, value });
    let inner = match (value.rfind('<'), value.strip_suffix('>')) {
        (Some(open), Some(body)) if !matches!(value.get(open + 1..open + 2), Some("@" | "#")) => {
            body.get(open + 1..).unwrap_or(body).trim()
        }
        _ => value,
    };
    if let Some(f) =
        extract(inner, 2).into_iter().next().filter(|f| f.kind == ValueKind::Handle && inner.starts_with('<'))
    {
        return Some(f);
    }
    let lower = inner.to_lowercase();
    if let Some(rest) = lower.strip_prefix("mailto:") {
        let address = rest.split(['?', '#']).next().unwrap_or_default();
        if let Some((local, domain)) = address.rsplit_once('@')
            && let Some(v) = mail_address(local, domain, false)
        {
            return found(ValueKind::Email, v);
        }
    }
    let unprefixed = ["tel:", "sms:", "callto:"].iter().find_map(|p| lower.strip_prefix(p)).unwrap_or(&lower);
    if let Some(f) = number_destination(unprefixed) {
        return Some(f);
    }
    if let Some((_, rest)) = inner.split_once("://").or_else(|| inner.strip_prefix("//").map(|r| ("", r))) {
        let end = rest.find(ends_authority).unwrap_or(rest.len());
        if let Some(v) = host_of_authority(rest.get(..end).unwrap_or_default()) {
            return found(ValueKind::Host, v);
        }
    }
    if let Some(handle) = handle_name(&inner.chars().collect::<Vec<char>>()) {
        return found(ValueKind::Handle, handle);
    }
    if let Some((local, domain)) = inner.rsplit_once('@')
        && let Some(v) = mail_address(local, domain, false)
    {
        return found(ValueKind::Email, v);
    }
    if !inner.contains(char::is_whitespace) {
        let end = inner.find(['/', '?', '#']).unwrap_or(inner.len());
        let hostport = inner.get(..end).unwrap_or_default();
        if let Some(v) = host_of_authority(hostport).filter(|h| h.contains('.') || h.starts_with('[')) {
            return found(ValueKind::Host, v);
        }
    }
    let plain: Vec<String> = lower.split_whitespace().map(ToString::to_string).collect();
    found(ValueKind::Handle, plain.join(" "))
}

/// A destination written with digits only: an IBAN, a phone number (`+`,
/// `00`, or 7 to 15 digits), an account number (4 to 34 digits).
fn number_destination(value: &str) -> Option<Found> {
    let parts: Vec<&str> = value.split('.').collect();
    if parts.len() == 4 && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
        return None;
    }
    let compact: String = value.chars().filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')')).collect();
    let upper = compact.to_ascii_uppercase();
    let code = upper.as_bytes().get(..2).unwrap_or_default();
    if crate::dlp::pii::iban_length(code) == Some(upper.len()) && crate::dlp::pii::iban_checksum(upper.as_bytes()) {
        return Some(Found { kind: ValueKind::Iban, value: upper });
    }
    let (international, digits) = match compact.strip_prefix('+') {
        Some(d) => (true, d),
        None => match compact.strip_prefix("00") {
            Some(d) if compact.len() > 9 => (true, d),
            _ => (false, compact.as_str()),
        },
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let phone = (extract_numbers::MIN_PHONE_DIGITS..=extract_numbers::MAX_PHONE_DIGITS).contains(&digits.len());
    if international {
        return (phone && !digits.starts_with('0'))
            .then(|| Found { kind: ValueKind::Phone, value: format!("+{digits}") });
    }
    if phone {
        return Some(Found { kind: ValueKind::Phone, value: digits.to_string() });
    }
    let account = (extract_numbers::MIN_ACCOUNT_DIGITS..=extract_numbers::MAX_ACCOUNT_DIGITS).contains(&digits.len());
    account.then(|| Found { kind: ValueKind::Account, value: digits.to_string() })
}

/// Each of `text`'s values split at commas, semicolons and line breaks, as
/// [`destination`] reads it, without repeats, at most `limit`.
pub fn destinations(text: &str, limit: usize) -> Vec<Found> {
    let (text, _) = head(text);
    let mut out: Vec<Found> = Vec::new();
    for part in text.split([',', ';', '\n']) {
        if out.len() >= limit.min(MAX_VALUES) {
            break;
        }
        if let Some(f) = destination(part)
            && !out.contains(&f)
        {
            out.push(f);
        }
    }
    out
}

/// Every word of `text` and every run of 2 and up to [`MAX_NAME_WORDS`]
/// adjacent words, lowercased, with the punctuation around each word
/// trimmed, as [`ValueKind::Handle`]s without repeats, in the order first
/// seen, at most `limit` (and at most [`MAX_VALUES`]): so a plain-name
/// recipient (`Alice`, `Alice Smith`, `general`) the person named can be
/// recognized. A run does not cross `, . ; : ! ?` or a bracket.
pub fn names(text: &str, limit: usize) -> Vec<Found> {
    let limit = limit.min(MAX_VALUES);
    let (text, _) = head(text);
    let mut work = 0;
    let prepared: String = prepare(text, &mut work).into_iter().collect();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut phrase: Vec<String> = Vec::new();
    for raw in prepared.split_whitespace() {
        let word: String =
            raw.trim_matches(|c: char| !c.is_alphanumeric()).chars().flat_map(char::to_lowercase).collect();
        if word.is_empty() || word.chars().count() > MAX_VALUE_CHARS {
            phrase.clear();
            continue;
        }
        if raw.starts_with(['(', '[', '{', '"', '\'']) {
            phrase.clear();
        }
        phrase.push(word);
        if phrase.len() > MAX_NAME_WORDS {
            phrase.remove(0);
        }
        for n in 1..=phrase.len() {
            if out.len() >= limit {
                return out;
            }
            let value = phrase.get(phrase.len() - n..).unwrap_or_default().join(" ");
            if value.chars().count() <= MAX_VALUE_CHARS && seen.insert(value.clone()) {
                out.push(Found { kind: ValueKind::Handle, value });
            }
        }
        if raw.ends_with([',', '.', ';', ':', '!', '?', ')', ']', '}', '"', '\'']) {
            phrase.clear();
        }
    }
    out
}

/// The steps a scan of `text` takes, for the test that it is linear.
#[cfg(test)]
fn work(text: &str) -> u64 {
    run(text, usize::MAX, false).1
}
