//! Personal data the operator turns on: payment card numbers and IBANs.
//!
//! Off by default (`dlp.pii.cards`, `dlp.pii.ibans`). Both detectors look for
//! numbers that carry their own check digits, so a look-alike has to pass the
//! checksum and the shape to be mistaken for one:
//!
//! - **Cards** (`dlp.pii.card`): 13 to 19 digits written together, or in the
//!   printed groupings (fours with a shorter last group, `4-6-5`, `4-6-4`)
//!   separated by spaces or dashes (at most [`MAX_CARD_SEPARATOR_CHARS`]
//!   between two groups, such as ` - `); the
//!   number passes Luhn and its issuer prefix and length belong to a known
//!   network ([`NETWORKS`]). A number inside a longer run of digits (an order
//!   number, a timestamp, a phone number with its `+`) is not a card, and
//!   neither is a window inside a longer series of four-digit groups. The
//!   networks' published test numbers, such as `4111 1111 1111 1111`, are
//!   caught like any other: they are how operators check the floor works, and
//!   a message that carries one outward is rarely harmless.
//! - **IBANs** (`dlp.pii.iban`): a country code from [`IBAN_LENGTHS`], two
//!   check digits and the account, exactly as long as that country's IBANs,
//!   written together or in groups of four separated by single spaces or
//!   dashes, in
//!   any case, and passing ISO 13616's mod-97 check.
//!
//! A hit names the kind and its position, never the number.

use crate::config::reader::{Obj, Reader, shown};
use crate::model::{Decision, Direction, OutboundMessage, Risk, Signal, Verdict};
use crate::prelude::*;
use serde::Serialize;

/// Shortest card number, in digits.
pub const MIN_CARD_DIGITS: usize = 13;
/// Longest card number, in digits.
pub const MAX_CARD_DIGITS: usize = 19;
/// Most separator characters (spaces, dashes) between two groups of a card number.
pub const MAX_CARD_SEPARATOR_CHARS: usize = 3;
/// Most hits reported for one message (the first decides; the rest become signals).
pub const MAX_PII_HITS: usize = 16;

/// Kinds of personal data, as they appear in rules (`dlp.pii.<kind>`).
pub mod kinds {
    /// A payment card number.
    pub const CARD: &str = "card";
    /// An international bank account number.
    pub const IBAN: &str = "iban";
}

/// One card network's issuer prefixes: numbers whose first `digits` digits
/// fall in `low..=high`, with one of `lengths` digits in all.
#[derive(Debug, Clone, Copy)]
pub struct Network {
    pub name: &'static str,
    pub digits: u32,
    pub low: u32,
    pub high: u32,
    pub lengths: &'static [usize],
}

const SIXTEEN_TO_NINETEEN: &[usize] = &[16, 17, 18, 19];
const FOURTEEN_TO_NINETEEN: &[usize] = &[14, 15, 16, 17, 18, 19];

/// The issuer prefixes and lengths of the card networks that are detected.
pub const NETWORKS: &[Network] = &[
    Network { name: "visa", digits: 1, low: 4, high: 4, lengths: &[13, 16, 19] },
    Network { name: "mastercard", digits: 2, low: 51, high: 55, lengths: &[16] },
    Network { name: "mastercard", digits: 4, low: 2221, high: 2720, lengths: &[16] },
    Network { name: "amex", digits: 2, low: 34, high: 34, lengths: &[15] },
    Network { name: "amex", digits: 2, low: 37, high: 37, lengths: &[15] },
    Network { name: "discover", digits: 4, low: 6011, high: 6011, lengths: SIXTEEN_TO_NINETEEN },
    Network { name: "discover", digits: 3, low: 644, high: 649, lengths: SIXTEEN_TO_NINETEEN },
    Network { name: "discover", digits: 2, low: 65, high: 65, lengths: SIXTEEN_TO_NINETEEN },
    Network { name: "jcb", digits: 4, low: 3528, high: 3589, lengths: SIXTEEN_TO_NINETEEN },
    Network { name: "diners", digits: 2, low: 36, high: 36, lengths: FOURTEEN_TO_NINETEEN },
    Network { name: "diners", digits: 3, low: 300, high: 305, lengths: FOURTEEN_TO_NINETEEN },
    Network { name: "diners", digits: 4, low: 3095, high: 3095, lengths: FOURTEEN_TO_NINETEEN },
    Network { name: "diners", digits: 2, low: 38, high: 39, lengths: FOURTEEN_TO_NINETEEN },
    Network { name: "unionpay", digits: 2, low: 62, high: 62, lengths: SIXTEEN_TO_NINETEEN },
    Network { name: "maestro", digits: 4, low: 5018, high: 5018, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "maestro", digits: 4, low: 5020, high: 5020, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "maestro", digits: 4, low: 5038, high: 5038, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "maestro", digits: 4, low: 5893, high: 5893, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "maestro", digits: 4, low: 6304, high: 6304, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "maestro", digits: 4, low: 6759, high: 6759, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "maestro", digits: 4, low: 6761, high: 6763, lengths: &[13, 14, 15, 16, 17, 18, 19] },
    Network { name: "mir", digits: 4, low: 2200, high: 2204, lengths: SIXTEEN_TO_NINETEEN },
];

/// IBAN lengths by country code (ISO 13616 registry).
pub const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BI", 27),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DJ", 27),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FK", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("LY", 25),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MN", 20),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NI", 28),
    ("NL", 18),
    ("NO", 15),
    ("OM", 23),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("RU", 33),
    ("SA", 24),
    ("SC", 31),
    ("SD", 18),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("SO", 23),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
    ("YE", 30),
];

/// One personal-data hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// One of [`kinds`].
    pub kind: &'static str,
    /// Where the number starts, in characters from the start of the text (0-based).
    pub offset: usize,
}

/// Finds the kinds that are turned on, in order of position, at most [`MAX_PII_HITS`].
pub fn scan(text: &str, cards: bool, ibans: bool) -> Vec<Hit> {
    if !cards && !ibans {
        return Vec::new();
    }
    let (chars, origin) = super::listed::folded(text);
    let at = |i: usize| origin.get(i).copied().unwrap_or(i);
    let mut hits = Vec::new();
    if cards {
        hits.extend(card_offsets(&chars).into_iter().map(|i| Hit { kind: kinds::CARD, offset: at(i) }));
    }
    if ibans {
        hits.extend(iban_offsets(&chars).into_iter().map(|i| Hit { kind: kinds::IBAN, offset: at(i) }));
    }
    hits.sort_by_key(|h| h.offset);
    hits.truncate(MAX_PII_HITS);
    hits
}

/// Whether `digits` (ASCII digits) pass the Luhn check.
pub fn luhn(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut v = u32::from(d.wrapping_sub(b'0'));
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    !digits.is_empty() && sum.is_multiple_of(10)
}

/// The network whose issuer prefix and length `digits` have, if any.
pub fn network(digits: &[u8]) -> Option<&'static Network> {
    NETWORKS.iter().find(|n| {
        let Some(prefix) = digits.get(..n.digits as usize) else {
            return false;
        };
        let value = prefix.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d.wrapping_sub(b'0')));
        (n.low..=n.high).contains(&value) && n.lengths.contains(&digits.len())
    })
}

fn is_card_separator(c: char) -> bool {
    matches!(c, ' ' | '-' | '\u{a0}')
}

/// Whether the character before a number (at `start`) lets it stand alone.
fn free_before(chars: &[char], start: usize) -> bool {
    let Some(&prev) = start.checked_sub(1).and_then(|i| chars.get(i)) else {
        return true;
    };
    if prev.is_alphanumeric() || prev == '_' || prev == '+' {
        return false;
    }
    // `3.4111…` or `12/4111…`: part of a longer number.
    prev.is_whitespace() || !start.checked_sub(2).and_then(|i| chars.get(i)).is_some_and(char::is_ascii_digit)
}

/// Whether the character after a number (ending before `end`) lets it stand alone.
fn free_after(chars: &[char], end: usize) -> bool {
    let Some(&next) = chars.get(end) else {
        return true;
    };
    if next.is_alphanumeric() || next == '_' {
        return false;
    }
    next.is_whitespace() || !chars.get(end + 1).is_some_and(char::is_ascii_digit)
}

/// Whether group lengths `groups` are a printed card grouping.
fn card_grouping(groups: &[usize]) -> bool {
    match groups {
        [single] => (MIN_CARD_DIGITS..=MAX_CARD_DIGITS).contains(single),
        [4, 6, 5] | [4, 6, 4] => true,
        [init @ .., last] if init.len() >= 2 => init.iter().all(|&g| g == 4) && (1..=4).contains(last),
        _ => false,
    }
}

/// Card numbers' character offsets.
fn card_offsets(chars: &[char]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
            continue;
        }
        // A run of digit groups joined by single separators.
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while chars.get(j).is_some_and(char::is_ascii_digit) {
                j += 1;
            }
            groups.push((start, j));
            let gap = chars.get(j..).unwrap_or_default().iter().take_while(|&&c| is_card_separator(c)).count();
            if (1..=MAX_CARD_SEPARATOR_CHARS).contains(&gap) && chars.get(j + gap).is_some_and(char::is_ascii_digit) {
                j += gap;
            } else {
                break;
            }
        }
        if let Some(offset) = card_in_run(chars, &groups, free_before(chars, i), free_after(chars, j)) {
            out.push(offset);
        }
        i = j.max(i + 1);
    }
    out
}

/// The first card in a run of digit groups: a window of whole groups, not
/// flanked by further four-digit groups, with a card's grouping, prefix,
/// length and check digit. `open_start` and `open_end` tell whether the run
/// itself stands alone at its start and end.
fn card_in_run(chars: &[char], groups: &[(usize, usize)], open_start: bool, open_end: bool) -> Option<usize> {
    let len = |g: &(usize, usize)| g.1 - g.0;
    for s in 0..groups.len() {
        if (s == 0 && !open_start) || (s > 0 && groups.get(s - 1).map(len) == Some(4)) {
            continue;
        }
        let mut best = None;
        let mut digits: Vec<u8> = Vec::new();
        for e in s..groups.len() {
            let (a, b) = *groups.get(e)?;
            digits.extend(chars.get(a..b)?.iter().map(|&c| c as u8));
            if digits.len() > MAX_CARD_DIGITS {
                break;
            }
            if groups.get(e + 1).map(len) == Some(4) || (e + 1 == groups.len() && !open_end) {
                continue;
            }
            let lengths: Vec<usize> = groups.get(s..=e)?.iter().map(len).collect();
            if card_grouping(&lengths) && network(&digits).is_some() && luhn(&digits) {
                best = Some(groups.get(s)?.0);
            }
        }
        if best.is_some() {
            return best;
        }
    }
    None
}

/// The registered length of IBANs of country `code` (upper case), if any.
pub fn iban_length(code: &[u8]) -> Option<usize> {
    IBAN_LENGTHS.iter().find(|(c, _)| c.as_bytes() == code).map(|&(_, n)| n)
}

/// Whether `iban` (upper-case letters and digits, country first) passes mod-97.
pub fn iban_checksum(iban: &[u8]) -> bool {
    if iban.len() < 5 {
        return false;
    }
    let (head, tail) = iban.split_at(4);
    let mut remainder = 0u32;
    for &c in tail.iter().chain(head) {
        let value = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => return false,
        };
        remainder = if value >= 10 { (remainder * 100 + value) % 97 } else { (remainder * 10 + value) % 97 };
    }
    remainder == 1
}

/// The IBAN starting at `start`, upper-cased, written together or in groups of four.
fn iban_at(chars: &[char], start: usize, length: usize, grouped: bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(length);
    let mut j = start;
    while out.len() < length {
        if grouped && !out.is_empty() && out.len() % 4 == 0 {
            if !chars.get(j).is_some_and(|&c| matches!(c, ' ' | '\u{a0}' | '-')) {
                return None;
            }
            j += 1;
        }
        let c = *chars.get(j)?;
        if !c.is_ascii_alphanumeric() {
            return None;
        }
        out.push(c.to_ascii_uppercase() as u8);
        j += 1;
    }
    let ends = !chars.get(j).is_some_and(|c| c.is_alphanumeric() || *c == '_');
    ends.then_some(out)
}

/// IBANs' character offsets.
fn iban_offsets(chars: &[char]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= chars.len() {
        let head = chars.get(i..i + 4).unwrap_or_default();
        let starts = matches!(head, [a, b, c, d] if a.is_ascii_alphabetic() && b.is_ascii_alphabetic()
            && c.is_ascii_digit() && d.is_ascii_digit())
            && !i.checked_sub(1).and_then(|p| chars.get(p)).is_some_and(|c| c.is_alphanumeric() || *c == '_');
        if starts {
            let code: Vec<u8> = head.iter().take(2).map(|c| c.to_ascii_uppercase() as u8).collect();
            if let Some(length) = iban_length(&code) {
                let found = [false, true]
                    .into_iter()
                    .filter_map(|grouped| iban_at(chars, i, length, grouped))
                    .find(|iban| iban_checksum(iban));
                if found.is_some() {
                    out.push(i);
                    i += length;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// What a personal-data hit does: `deny` (default) refuses the message, `ask`
/// puts it to a person, whose approval covers that exact message only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PiiAction {
    #[default]
    Deny,
    Ask,
}

impl PiiAction {
    /// The decision a hit makes.
    pub fn decision(self) -> Decision {
        match self {
            PiiAction::Deny => Decision::Deny,
            PiiAction::Ask => Decision::Ask,
        }
    }
}

/// Reads a section's optional `action` field: `deny` (default) or `ask`.
pub fn read_action(r: &mut Reader, obj: &Obj<'_>) -> PiiAction {
    let Some(node) = obj.get("action") else {
        return PiiAction::Deny;
    };
    match node.value.as_str() {
        Some("deny") => PiiAction::Deny,
        Some("ask") => PiiAction::Ask,
        _ => {
            r.error(node.path, format!("must be `deny` or `ask`, got `{}`", shown(node.value)));
            PiiAction::Deny
        }
    }
}

/// The `dlp.pii` section: which kinds are detected and what a hit does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct PiiConfig {
    /// Detect payment card numbers (`dlp.pii.card`). Off by default.
    pub cards: bool,
    /// Detect IBANs (`dlp.pii.iban`). Off by default.
    pub ibans: bool,
    /// `deny` (default) or `ask`.
    pub action: PiiAction,
}

impl PiiConfig {
    /// Fields of the `dlp.pii` section.
    pub const FIELDS: &'static [&'static str] = &["cards", "ibans", "action"];

    /// Reads the section; its unknown fields were already reported.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> PiiConfig {
        let Some(obj) = obj else {
            return PiiConfig::default();
        };
        PiiConfig {
            cards: r.bool(&obj, "cards", false),
            ibans: r.bool(&obj, "ibans", false),
            action: read_action(r, &obj),
        }
    }

    /// Whether no kind is turned on (the section then leaves the policy version as it was).
    pub fn is_off(&self) -> bool {
        !self.cards && !self.ibans
    }

    /// Hits in `text` of the kinds turned on.
    pub fn scan(&self, text: &str) -> Vec<Hit> {
        scan(text, self.cards, self.ibans)
    }
}

/// The personal-data answer to an outbound message whose pre-checks passed:
/// `None` when nothing turned on was found (or the message is inbound), else
/// the operator's action for the hit that decides. A family set to `deny`
/// decides over one set to `ask`; among equals, the first hit in the text.
/// Not relaxed by `dlp.mode`: the operator trials a family with `ask`.
pub fn personal(config: &super::DlpConfig, message: &OutboundMessage, text: &str) -> Option<Verdict> {
    if message.direction == Direction::Inbound {
        return None;
    }
    let hits = config.pii.scan(text);
    let listed = config.listed_values.scan(text);
    let mut found: Vec<(PiiAction, String, &str, usize)> = Vec::new();
    if let Some(first) = hits.first() {
        found.push((
            config.pii.action,
            format!("{}{}", super::rules::PII_PREFIX, first.kind),
            first.kind,
            first.offset,
        ));
    }
    if let Some(&first) = listed.first() {
        found.push((config.listed_values.action, super::rules::LISTED_VALUE.into(), "listed-value", first));
    }
    let (action, rule, kind, offset) = found.into_iter().min_by_key(|(a, _, _, o)| (*a != PiiAction::Deny, *o))?;
    let what = match kind {
        kinds::CARD => "a payment card number",
        kinds::IBAN => "an IBAN",
        _ => "a value the operator listed as sensitive",
    };
    let outcome = match action {
        PiiAction::Deny => "so it is not sent",
        PiiAction::Ask => "so a person must approve this exact message before it is sent",
    };
    let mut verdict = Verdict::new(
        action.decision(),
        rule,
        format!("The message contains {what} (at character {offset}), {outcome}."),
        Risk::High,
    );
    for hit in &hits {
        verdict = verdict.with_signal(Signal::new("dlp.pii", format!("{} at character {}", hit.kind, hit.offset)));
    }
    for at in &listed {
        verdict = verdict.with_signal(Signal::new("dlp.listed-value", format!("at character {at}")));
    }
    Some(verdict)
}

#[cfg(test)]
#[path = "pii_tests.rs"]
mod tests;
