//! Digests and canonical JSON, for policy versions, fingerprints and hashes.

use crate::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// Canonical JSON bytes: object keys sorted, no insignificant whitespace.
/// serde_json's `Value` keeps objects in a sorted map, so a round trip
/// through it sorts every level.
pub fn canonical_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let value = serde_json::to_value(value).unwrap_or_default();
    serde_json::to_vec(&value).unwrap_or_default()
}

/// `sha256:` and the full hex digest of the canonical JSON of `value`.
pub fn versioned<T: Serialize + ?Sized>(value: &T) -> String {
    format!("sha256:{}", sha256_hex(&canonical_json(value)))
}

/// HMAC-SHA-256 of `parts` under `key`, each part prefixed with its length
/// (8 bytes, big-endian) so that no two lists of parts hash alike. HMAC
/// accepts keys of any length, so this never falls back; if it did, the
/// all-zero output would fail every key check and close what it guards.
pub fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    use hmac::{KeyInit, Mac};
    let Ok(mut mac) = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        return [0; 32];
    };
    for part in parts {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let a = json!({"b": 1, "a": {"d": 2, "c": [3, {"f": 4, "e": 5}]}});
        assert_eq!(
            String::from_utf8(canonical_json(&a)).unwrap_or_default(),
            r#"{"a":{"c":[3,{"e":5,"f":4}],"d":2},"b":1}"#
        );
    }

    #[test]
    fn sha256_of_empty_input_is_the_known_digest() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
