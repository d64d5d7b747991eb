//! Hosts in canonical form: compatibility forms folded (full-width letters
//! and dots), invisible characters dropped, lowercased, without a trailing
//! dot, IP literals as a URL parser writes them (an IPv4-mapped IPv6
//! address as its IPv4 address), internationalized labels in punycode; and
//! the top-level domains a bare domain in prose is recognized by. Both the
//! values read from text and the hosts a fetch reaches are written this way,
//! so one host has one form.

use super::extract_text::fold;
use crate::prelude::*;
use core::net::{Ipv4Addr, Ipv6Addr};

/// Longest host, in characters (RFC 1035).
pub const MAX_HOST_CHARS: usize = 253;
/// Longest label of a host, in characters, after punycode.
const MAX_LABEL_CHARS: usize = 63;

/// Country-code top-level domains, two letters each, a bare domain in prose
/// is recognized by. Left out because they are also common file extensions
/// (`lib.rs`, `README.md`, `setup.py`, `run.sh`, `main.tf`, `model.pt`):
/// `ac am cc do gd id in md mk ml mm mo nu pl pm ps pt py rs sh so sv tf`. A domain under
/// one of them is still recognized with a scheme, after `www.` or in an address.
const COUNTRY_TLDS: &[&str] = &[
    "ad", "ae", "af", "ag", "ai", "al", "ao", "aq", "ar", "at", "au", "aw", "ax", "az", "ba", "bb", "bd", "be", "bf",
    "bg", "bh", "bi", "bj", "bm", "bn", "bo", "br", "bs", "bt", "bw", "by", "bz", "ca", "cd", "cf", "cg", "ch", "ci",
    "ck", "cl", "cm", "cn", "co", "cr", "cu", "cv", "cw", "cx", "cy", "cz", "de", "dj", "dk", "dm", "dz", "ec", "ee",
    "eg", "er", "es", "et", "eu", "fi", "fj", "fk", "fm", "fo", "fr", "ga", "ge", "gf", "gg", "gh", "gi", "gl", "gm",
    "gn", "gp", "gq", "gr", "gs", "gt", "gu", "gw", "gy", "hk", "hm", "hn", "hr", "ht", "hu", "ie", "il", "im", "io",
    "iq", "ir", "is", "it", "je", "jm", "jo", "jp", "ke", "kg", "kh", "ki", "km", "kn", "kp", "kr", "kw", "ky", "kz",
    "la", "lb", "lc", "li", "lk", "lr", "ls", "lt", "lu", "lv", "ly", "ma", "mc", "me", "mg", "mh", "mn", "mp", "mq",
    "mr", "ms", "mt", "mu", "mv", "mw", "mx", "my", "mz", "na", "nc", "ne", "nf", "ng", "ni", "nl", "no", "np", "nr",
    "nz", "om", "pa", "pe", "pf", "pg", "ph", "pk", "pn", "pr", "pw", "qa", "re", "ro", "ru", "rw", "sa", "sb", "sc",
    "sd", "se", "sg", "si", "sk", "sl", "sm", "sn", "sr", "ss", "st", "su", "sx", "sy", "sz", "tc", "td", "tg", "th",
    "tj", "tk", "tl", "tm", "tn", "to", "tr", "tt", "tv", "tw", "tz", "ua", "ug", "uk", "us", "uy", "uz", "va", "vc",
    "ve", "vg", "vi", "vn", "vu", "wf", "ws", "ye", "yt", "za", "zm", "zw",
];

/// Generic top-level domains a bare domain in prose is recognized by: the
/// common ones that are not also everyday identifiers in code (`name`,
/// `email`, `link`, `page`, `app`, `id` are left out; `user.name` is a field).
const GENERIC_TLDS: &str = "com net org edu gov mil int info biz pro mobi asia xyz online site shop store tech cloud \
dev blog website news digital solutions agency icu cyou cfd sbs quest buzz monster vip ltd gmbh club live top \
space fun world today work";

/// File extensions that are not the end of an email's domain
/// (`icon@2x.png`, `logo@3x.webp`).
const NOT_MAIL_TLDS: &str = "png jpg jpeg gif svg webp ico bmp tif tiff avif heic css js mjs ts tsx jsx json html \
htm xml txt md pdf map woff woff2 ttf";

fn listed(list: &str, word: &str) -> bool {
    list.split(' ').any(|w| w == word)
}

/// Whether a bare domain in prose may end with `tld` (lowercase).
pub fn prose_tld(tld: &str) -> bool {
    COUNTRY_TLDS.binary_search(&tld).is_ok() || (tld.len() > 2 && listed(GENERIC_TLDS, tld))
}

/// Whether an email's domain may end with `tld` (lowercase): two or more
/// letters (or a punycode label), not a file extension.
pub fn mail_tld(tld: &str) -> bool {
    let letters = tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic);
    (letters || tld.starts_with("xn--")) && !listed(NOT_MAIL_TLDS, tld)
}

/// Whether `c` can be part of a host's label.
pub fn label_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

/// The canonical form of a host as written (without scheme, userinfo or
/// port), or `None` when it is not a host; `work` counts the steps taken.
pub fn canonical_host(raw: &str, work: &mut u64) -> Option<String> {
    *work += raw.len() as u64;
    let folded: String = raw.chars().filter_map(fold).collect();
    let raw = folded.strip_suffix('.').unwrap_or(&folded);
    if raw.is_empty() || raw.chars().count() > MAX_HOST_CHARS {
        return None;
    }
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner.strip_suffix(']')?;
        let ip: Ipv6Addr = inner.parse().ok()?;
        return Some(match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{ip}]"),
        });
    }
    let lower: String = raw.chars().flat_map(char::to_lowercase).collect();
    if let Some(ip) = ipv4(&lower) {
        return ip;
    }
    let mut out = String::with_capacity(lower.len());
    for (n, label) in lower.split('.').enumerate() {
        if n > 0 {
            out.push('.');
        }
        if label.is_empty() || !label.chars().all(label_char) || label.starts_with('-') || label.ends_with('-') {
            return None;
        }
        if label.is_ascii() {
            out.push_str(label);
        } else {
            let chars: Vec<char> = label.chars().collect();
            if chars.len() > MAX_LABEL_CHARS {
                return None;
            }
            *work += (chars.len() * chars.len()) as u64;
            out.push_str("xn--");
            out.push_str(&punycode(&chars)?);
        }
        if out.rsplit('.').next().is_some_and(|l| l.len() > MAX_LABEL_CHARS) {
            return None;
        }
    }
    (out.len() <= MAX_HOST_CHARS).then_some(out)
}

/// Whether a host is written with characters that stay outside ASCII once
/// folded: an internationalized name, or a spelling of one.
pub fn written_in_unicode(raw: &str) -> bool {
    raw.chars().filter_map(fold).any(|c| !c.is_ascii())
}

/// A host whose last label is a number is an IPv4 address as a URL parser
/// reads it (WHATWG): one to four parts, each decimal, `0x` hexadecimal or
/// octal with a leading zero, the last filling the remaining bytes; so
/// `0x7f.1`, `2130706433` and `127.0.0.1` are one host. `Some(None)` for a
/// numeric host that is no address, `None` for a host that is not numeric.
fn ipv4(host: &str) -> Option<Option<String>> {
    let parts: Vec<&str> = host.split('.').collect();
    let last = parts.last()?;
    if !numeric(last) {
        return None;
    }
    if parts.len() > 4 {
        return Some(None);
    }
    let mut values = Vec::with_capacity(parts.len());
    for part in &parts {
        match number(part) {
            Some(v) => values.push(v),
            None => return Some(None),
        }
    }
    let (tail, head) = values.split_last()?;
    if head.iter().any(|&v| v > 255) {
        return Some(None);
    }
    let room = 8 * (4 - head.len() as u32);
    if room < 64 && *tail >= (1u64 << room) {
        return Some(None);
    }
    let mut address = *tail;
    for (k, &v) in head.iter().enumerate() {
        address |= v << (8 * (3 - k as u32));
    }
    let address = u32::try_from(address).ok()?;
    Some(Some(Ipv4Addr::from(address).to_string()))
}

/// Whether a label is written as a number (WHATWG's "ends in a number"):
/// decimal digits, or `0x` and hexadecimal digits, whatever its value.
fn numeric(part: &str) -> bool {
    !part.is_empty()
        && (part.bytes().all(|b| b.is_ascii_digit())
            || part.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())))
}

/// One part of a numeric host: decimal, `0x` hexadecimal, or octal with a leading zero.
fn number(part: &str) -> Option<u64> {
    if part.is_empty() || part.len() > 20 {
        return None;
    }
    let (digits, radix) = if let Some(h) = part.strip_prefix("0x") {
        (h, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (part.get(1..)?, 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    u64::from_str_radix(digits, radix).ok().filter(|&v| v <= u64::from(u32::MAX))
}

const BASE: u32 = 36;
const T_MIN: u32 = 1;
const T_MAX: u32 = 26;
const SKEW: u32 = 38;
const DAMP: u32 = 700;
const INITIAL_BIAS: u32 = 72;
const INITIAL_N: u32 = 128;

fn digit(d: u32) -> char {
    let byte = if d < 26 { b'a' + d as u8 } else { b'0' + (d - 26) as u8 };
    char::from(byte)
}

fn adapt(delta: u32, points: u32, first: bool) -> u32 {
    let mut delta = if first { delta / DAMP } else { delta / 2 };
    delta += delta / points.max(1);
    let mut k = 0;
    while delta > ((BASE - T_MIN) * T_MAX) / 2 {
        delta /= BASE - T_MIN;
        k += BASE;
    }
    k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
}

/// The punycode of one label (RFC 3492), without the `xn--` prefix; `None`
/// on overflow or once it is longer than a label can be. Its loop is quadratic in the label, which a host's label
/// bounds to 63 characters.
pub fn punycode(input: &[char]) -> Option<String> {
    let mut out: String = input.iter().filter(|c| c.is_ascii()).collect();
    let basic = out.len() as u32;
    let total = u32::try_from(input.len()).ok()?;
    if basic > 0 {
        out.push('-');
    }
    let mut points: Vec<u32> = input.iter().map(|&c| c as u32).filter(|&c| c >= INITIAL_N).collect();
    points.sort_unstable();
    points.dedup();
    let (mut n, mut delta, mut bias, mut handled) = (INITIAL_N, 0u32, INITIAL_BIAS, basic);
    for &m in &points {
        if out.len() + 4 > MAX_LABEL_CHARS {
            return None;
        }
        delta = delta.checked_add((m - n).checked_mul(handled + 1)?)?;
        n = m;
        for &c in input {
            let c = c as u32;
            if c < n {
                delta = delta.checked_add(1)?;
            }
            if c == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        T_MIN
                    } else if k >= bias + T_MAX {
                        T_MAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    out.push(digit(t + (q - t) % (BASE - t)));
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                out.push(digit(q));
                bias = adapt(delta, handled + 1, handled == basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.checked_add(1)?;
        n = n.checked_add(1)?;
    }
    (handled == total).then_some(out)
}
