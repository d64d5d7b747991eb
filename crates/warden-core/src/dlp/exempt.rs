//! Random-looking text that is public or not a credential at all.
//!
//! These exemptions apply only to the generic high-entropy detector, and each
//! is earned by the token itself or by the syntax it sits in, never by a word
//! placed near it:
//!
//! - OpenSSH public keys: a base64 blob that decodes to the wire format of a
//!   public key (a length-prefixed key type such as `ssh-ed25519`,
//!   `ecdsa-sha2-nistp256` or `sk-ssh-ed25519@openssh.com`), so one-line
//!   public keys, `authorized_keys` lines with options and `known_hosts`
//!   lines are public whatever surrounds them;
//! - hashed `known_hosts` entries (`|1|salt|hash`);
//! - `data:` URIs of images, fonts, audio and video;
//! - base64 that decodes to printable text, which is judged by the text it
//!   decodes to instead (see [`base64_text`]);
//! - reCAPTCHA site keys (`6L…`) in a site-key attribute, public by design.
//!
//! PEM public keys and certificates, digests, UUIDs and commit IDs are
//! recognised in the detectors themselves.

use crate::prelude::*;
use base64::Engine as _;

/// Shortest base64 token decoded to see whether it is text, in characters.
pub const MIN_DECODED_TEXT_CHARS: usize = 16;

/// Whether the token at `start..end` is public material. `line_start` is where
/// its line starts, or `start` itself when the byte before it is not a `|`
/// (then it cannot be in a hashed `known_hosts` entry, whatever the line holds).
pub fn public_token(text: &str, start: usize, end: usize, line_start: usize) -> bool {
    let Some(token) = text.get(start..end) else {
        return false;
    };
    ssh_public_key(token)
        || hashed_known_host(text.get(line_start..start).unwrap_or_default())
        || media_data_uri(text, start)
        || site_key(text, start, token)
}

fn decode_any(token: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let trimmed = token.trim_end_matches('=');
    STANDARD
        .decode(token)
        .or_else(|_| STANDARD_NO_PAD.decode(trimmed))
        .or_else(|_| URL_SAFE.decode(token))
        .or_else(|_| URL_SAFE_NO_PAD.decode(trimmed))
        .ok()
}

/// A base64 blob in the OpenSSH public key wire format.
fn ssh_public_key(token: &str) -> bool {
    if !token.starts_with("AAAA") {
        return false;
    }
    let Some(blob) = decode_any(token) else {
        return false;
    };
    let Some(len) = blob.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize) else {
        return false;
    };
    let Some(kind) = blob.get(4..4 + len.min(64)) else {
        return false;
    };
    (7..=64).contains(&len)
        && kind.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'@' | b'.'))
        && (kind.starts_with(b"ssh-") || kind.starts_with(b"ecdsa-") || kind.starts_with(b"sk-"))
}

/// The salt or hash of a hashed `known_hosts` entry: `line`, the text of its
/// line before it, starts `|1|`.
fn hashed_known_host(line: &str) -> bool {
    line.starts_with("|1|") && line.ends_with('|')
}

/// The payload of a `data:` URI whose media type is an image, font, audio or video.
fn media_data_uri(text: &str, start: usize) -> bool {
    let before = text.get(start.saturating_sub(96)..start).or_else(|| text.get(..start)).unwrap_or_default();
    let Some(uri) = before.rfind("data:").and_then(|i| before.get(i + 5..)) else {
        return false;
    };
    let Some(media) = uri.strip_suffix(";base64,") else {
        return false;
    };
    let media = media.split(';').next().unwrap_or(media).to_ascii_lowercase();
    ["image/", "font/", "audio/", "video/", "application/font", "application/x-font", "application/vnd.ms-fontobject"]
        .iter()
        .any(|p| media.starts_with(p))
}

/// A reCAPTCHA site key named as one (`data-sitekey="6L…"`, `siteKey: '6L…'`).
fn site_key(text: &str, start: usize, token: &str) -> bool {
    let before = text.get(start.saturating_sub(24)..start).unwrap_or_default().to_ascii_lowercase();
    token.starts_with("6L")
        && token.len() == 40
        && ["sitekey", "site_key", "site-key"].iter().any(|w| before.contains(w))
}

/// The text a base64 token decodes to, when it is printable text: UTF-8
/// without control characters other than white space, and not a bare
/// `user:password` pair.
pub fn base64_text(token: &str) -> Option<String> {
    if token.trim_end_matches('=').len() < MIN_DECODED_TEXT_CHARS {
        return None;
    }
    let raw = decode_any(token)?;
    let text = String::from_utf8(raw).ok()?;
    let printable = text.chars().all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
    // `user:password` is a Basic credential, not text, however printable.
    let pair = !text.contains(char::is_whitespace) && text.contains(':') && !text.starts_with('{');
    (printable && !pair).then_some(text)
}
