//! Numbers that are destinations: IBANs, account numbers next to their
//! label, phone numbers; and the numbers that look like them but are not
//! (dates, times, amounts, versions, addresses, card numbers).

use super::{Found, Sink, Text, ValueKind};
use crate::dlp::pii;
use crate::prelude::*;

/// Fewest digits of a phone number.
pub const MIN_PHONE_DIGITS: usize = 7;
/// Most digits of a phone number (E.164).
pub const MAX_PHONE_DIGITS: usize = 15;
/// Longest phone number as written, separators included, in characters.
const MAX_PHONE_CHARS: usize = 32;
/// Fewest digits of an account number.
pub const MIN_ACCOUNT_DIGITS: usize = 4;
/// Most digits of an account number.
pub const MAX_ACCOUNT_DIGITS: usize = 34;
/// Longest account number as written, separators included, in characters.
const MAX_ACCOUNT_CHARS: usize = 48;
/// Most characters between an account label and its number (`: `, ` no. `, ` is `).
const MAX_LABEL_GAP: usize = 16;
/// How far before a number a phone label (`tel`, `phone`, `call`) is looked for, in characters.
const PHONE_LABEL_REACH: usize = 24;

/// The words an account number is recognized next to, lowercase.
pub const ACCOUNT_LABELS: &[&str] = &["account", "acct", "a/c", "routing", "sort code", "bsb", "aba", "konto"];
/// What may follow an account label before its number (`account number`, `acct_no`, `accountNumber`).
const ACCOUNT_SUFFIXES: &[&str] = &["number", "num", "nbr", "no", "nr", "id", "#"];
/// The words that make the digits after them a phone number, lowercase.
pub const PHONE_LABELS: &[&str] = &["tel", "phone", "mobile", "cell", "call", "fax", "sms", "whatsapp", "text"];
/// Currency signs an amount is written with.
const CURRENCY: &[char] = &['$', '€', '£', '¥', '₹', '₽', '₩', '¢'];

/// IBANs: a country code with its registered length, two check digits and
/// the account, together or in groups of four separated by single spaces or
/// dashes, passing mod-97; uppercased, without separators.
pub(super) fn ibans(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i + 4 <= t.len() && !sink.full {
        t.work += 1;
        let starts = t.at(i).is_ascii_alphabetic()
            && t.at(i + 1).is_ascii_alphabetic()
            && t.at(i + 2).is_ascii_digit()
            && t.at(i + 3).is_ascii_digit()
            && !word_char(t.before(i))
            && t.free(i);
        if starts {
            let code = [t.at(i).to_ascii_uppercase() as u8, t.at(i + 1).to_ascii_uppercase() as u8];
            if let Some(length) = pii::iban_length(&code) {
                let found = [false, true].into_iter().find_map(|grouped| iban_at(t, i, length, grouped));
                if let Some((iban, end)) = found {
                    sink.push(i, Found { kind: ValueKind::Iban, value: iban });
                    t.take(i, end);
                    i = end;
                    continue;
                }
            }
        }
        i += 1;
    }
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn iban_at(t: &mut Text, start: usize, length: usize, grouped: bool) -> Option<(String, usize)> {
    let mut out = String::with_capacity(length);
    let mut j = start;
    while out.len() < length {
        t.work += 1;
        if grouped && !out.is_empty() && out.len() % 4 == 0 {
            if !matches!(t.at(j), ' ' | '-') {
                return None;
            }
            j += 1;
        }
        let c = t.at(j);
        if !c.is_ascii_alphanumeric() || !t.free(j) {
            return None;
        }
        out.push(c.to_ascii_uppercase());
        j += 1;
    }
    (!word_char(t.at(j)) && pii::iban_checksum(out.as_bytes())).then_some((out, j))
}

/// Whether `chars` at `i` start `word` (any ASCII case) as a whole word or
/// followed by one of `suffixes`; the index past it.
fn label_at(t: &Text, i: usize, word: &str) -> Option<usize> {
    if !t.spells(i, word) {
        return None;
    }
    let mut j = i + word.chars().count();
    if t.at(j).is_alphanumeric() || matches!(t.at(j), '_' | '-' | ' ') {
        let sep = usize::from(matches!(t.at(j), '_' | '-' | ' '));
        if let Some(suffix) = ACCOUNT_SUFFIXES.iter().find(|s| t.spells(j + sep, s)) {
            j += sep + suffix.chars().count();
        }
    }
    (!t.at(j).is_alphanumeric()).then_some(j)
}

/// Account numbers that are not IBANs, only right after a label from
/// [`ACCOUNT_LABELS`] (`Account: 12345678`, `acct no. 1234-5678`,
/// `"accountNumber": "12345678"`, `routing number 021000021`); digits only.
pub(super) fn accounts(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        let first = t.at(i).to_ascii_lowercase();
        if !matches!(first, 'a' | 'r' | 's' | 'b' | 'k') || t.before(i).is_alphanumeric() || !t.free(i) {
            i += 1;
            continue;
        }
        let label = ACCOUNT_LABELS.iter().find_map(|w| {
            t.work += 1;
            label_at(t, i, w)
        });
        let Some(mut j) = label else {
            i += 1;
            continue;
        };
        let gap = j;
        while j - gap < MAX_LABEL_GAP {
            t.work += 1;
            if matches!(t.at(j), ' ' | ':' | '#' | '.' | '=' | '"' | '\'' | '-') {
                j += 1;
            } else if t.spells(j, "is ") || t.spells(j, "no ") || t.spells(j, "no.") {
                j += 3;
            } else {
                break;
            }
        }
        match account_digits(t, j) {
            Some((digits, end)) => {
                sink.push(j, Found { kind: ValueKind::Account, value: digits });
                t.take(j, end);
                i = end;
            }
            None => i = j.max(i + 1),
        }
    }
}

fn account_digits(t: &mut Text, start: usize) -> Option<(String, usize)> {
    let mut digits = String::new();
    let mut j = start;
    while j - start < MAX_ACCOUNT_CHARS {
        t.work += 1;
        let c = t.at(j);
        if c.is_ascii_digit() && t.free(j) {
            digits.push(c);
            j += 1;
        } else if matches!(c, ' ' | '-') && t.at(j + 1).is_ascii_digit() && !digits.is_empty() {
            j += 1;
        } else {
            break;
        }
    }
    let ok = (MIN_ACCOUNT_DIGITS..=MAX_ACCOUNT_DIGITS).contains(&digits.len()) && !word_char(t.at(j));
    ok.then_some((digits, j))
}

/// Whether the character before a number keeps it from starting a phone number there.
fn blocks_phone(c: char) -> bool {
    word_char(c) || matches!(c, '.' | ',' | '/' | '-' | '#' | '@' | '%' | '\\' | '&' | '+') || CURRENCY.contains(&c)
}

/// Phone numbers: `+` and the country code (or `00`), or a national number
/// with separators; spaces, dots, dashes and parentheses between groups;
/// [`MIN_PHONE_DIGITS`] to [`MAX_PHONE_DIGITS`] digits. See [`phone_at`] for
/// what is not taken as one.
pub(super) fn phones(t: &mut Text, sink: &mut Sink) {
    let mut i = 0;
    while i < t.len() && !sink.full {
        t.work += 1;
        let c = t.at(i);
        if !(c.is_ascii_digit() || c == '+' || c == '(') || !t.free(i) || blocks_phone(t.before(i)) {
            i += 1;
            continue;
        }
        let (end, phone) = phone_at(t, i);
        if let Some(value) = phone {
            sink.push(i, Found { kind: ValueKind::Phone, value });
            t.take(i, end);
        }
        i = end.max(i + 1);
    }
}

struct Groups {
    digits: String,
    sizes: Vec<usize>,
    separators: Vec<char>,
}

/// The phone number that starts at `start`, canonical, and the index past
/// what was read. International numbers (`+`, `00`) come out as `+` and
/// digits, a national `(0)` dropped; national numbers as their digits, no
/// country being guessed. Not phones: a run of digits without separators
/// unless it has `+` or a phone label before it (`tel`, `call`: ids,
/// timestamps); dates (`2024-01-15`, `15.01.2024`); times (`10:30`);
/// decimals and amounts (`1,234.56`, `1.234.567`, a currency sign next to
/// it); dotted versions and addresses (`10.0.19041.1`, `192.168.10.20`);
/// US ZIP+4 and social security shapes; card numbers (network and Luhn).
pub(super) fn phone_at(t: &mut Text, start: usize) -> (usize, Option<String>) {
    let plus = t.at(start) == '+';
    let (end, groups) = read_groups(t, start + usize::from(plus), plus);
    let Some(mut g) = groups else { return (end, None) };
    let (next, after) = (t.at(end), t.at(end + 1));
    if word_char(next) || matches!(next, '%' | '@') || CURRENCY.contains(&next) || CURRENCY.contains(&after) {
        return (end, None);
    }
    if matches!(next, ',' | ':' | '/' | '.') && after.is_ascii_digit() {
        return (end, None);
    }
    if has_currency_before(t, start) {
        return (end, None);
    }
    let double_zero = !plus && g.digits.starts_with("00");
    if double_zero {
        g.digits.drain(..2);
    }
    let international = plus || double_zero;
    if international && g.digits.starts_with('0') {
        return (end, None);
    }
    if !(MIN_PHONE_DIGITS..=MAX_PHONE_DIGITS).contains(&g.digits.len()) {
        return (end, None);
    }
    if !plus && !labelled(t, start) && !national_shape(&g) {
        return (end, None);
    }
    let value = if international { format!("+{}", g.digits) } else { g.digits };
    (end, Some(value))
}

fn read_groups(t: &mut Text, start: usize, international: bool) -> (usize, Option<Groups>) {
    let mut g = Groups { digits: String::new(), sizes: Vec::new(), separators: Vec::new() };
    let mut j = start;
    loop {
        t.work += 1;
        if j - start > MAX_PHONE_CHARS {
            return (j, None);
        }
        let in_parens = t.at(j) == '(';
        if in_parens {
            let mut k = j + 1;
            while t.at(k).is_ascii_digit() && t.free(k) && k - j <= 5 {
                t.work += 1;
                k += 1;
            }
            if t.at(k) != ')' || k == j + 1 {
                break;
            }
            let inner = t.string(j + 1, k);
            let trunk = inner == "0" && (international || !g.sizes.is_empty());
            if !trunk {
                g.sizes.push(inner.len());
                g.digits.push_str(&inner);
            }
            j = k + 1;
        } else if t.at(j).is_ascii_digit() && t.free(j) {
            let from = j;
            while t.at(j).is_ascii_digit() && t.free(j) && j - start <= MAX_PHONE_CHARS {
                t.work += 1;
                g.digits.push(t.at(j));
                j += 1;
            }
            g.sizes.push(j - from);
        } else {
            break;
        }
        let sep = t.at(j);
        if matches!(sep, ' ' | '.' | '-') && (t.at(j + 1).is_ascii_digit() || t.at(j + 1) == '(') {
            g.separators.push(sep);
            j += 1;
        } else if !(t.at(j) == '(' || (in_parens && t.at(j).is_ascii_digit())) {
            break;
        }
    }
    let ok = !g.digits.is_empty();
    (j, ok.then_some(g))
}

fn has_currency_before(t: &Text, start: usize) -> bool {
    let c1 = t.before(start);
    let c2 = start.checked_sub(1).map_or('\0', |p| t.before(p));
    CURRENCY.contains(&c1) || (c1 == ' ' && CURRENCY.contains(&c2))
}

fn labelled(t: &mut Text, start: usize) -> bool {
    let from = start.saturating_sub(PHONE_LABEL_REACH);
    t.work += ((start - from) * PHONE_LABELS.len()) as u64;
    (from..start).any(|k| PHONE_LABELS.iter().any(|l| t.spells(k, l)))
}

fn year(size: usize, digits: &str) -> bool {
    size == 4 && (digits.starts_with("19") || digits.starts_with("20"))
}

/// Whether separated digits written without `+` have the shape of a phone
/// number rather than of a date, an amount, a version or another number.
fn national_shape(g: &Groups) -> bool {
    let sizes = g.sizes.as_slice();
    if sizes.len() < 2 {
        return false;
    }
    let digits = g.digits.as_str();
    let first = sizes.first().copied().unwrap_or(0);
    let last_start = digits.len() - sizes.last().copied().unwrap_or(0);
    let last = digits.get(last_start..).unwrap_or_default();
    let date = matches!(sizes, [a, b, c] if (*a == 4 && *b <= 2 && *c <= 2) || (*a <= 2 && *b <= 2 && year(*c, last)));
    let years = matches!(sizes, [4, 4]) && year(4, digits) && year(4, last);
    let dashes = g.separators.iter().all(|&s| s == '-');
    let zip_or_ssn = dashes && matches!(sizes, [5, 4] | [3, 2, 4]);
    let dots = g.separators.iter().all(|&s| s == '.');
    let dotted_number = dots
        && (sizes.len() < 3 || sizes.iter().any(|&n| n < 2) || (sizes.len() == 4 && sizes.iter().all(|&n| n <= 3)));
    let thousands = dots && (1..=3).contains(&first) && sizes.iter().skip(1).all(|&n| n == 3);
    let card =
        (13..=15).contains(&digits.len()) && pii::network(digits.as_bytes()).is_some() && pii::luhn(digits.as_bytes());
    !(date || years || zip_or_ssn || dotted_number || thousands || card)
}
