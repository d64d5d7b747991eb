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
    MacKey::new(key).mac(parts)
}

/// A key for [`hmac`] with its two padded key blocks hashed once. A MAC under
/// it hashes only the message: two SHA-256 blocks fewer than [`hmac`] a MAC,
/// which is most of a short one. Same output as [`hmac`] under the same key.
#[derive(Clone)]
pub struct MacKey(Option<hmac::Hmac<Sha256>>);

/// The empty key, as [`hmac`] under `&[]`.
impl Default for MacKey {
    fn default() -> Self {
        MacKey::new(&[])
    }
}

impl core::fmt::Debug for MacKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MacKey(..)")
    }
}

impl MacKey {
    /// `key`, ready to MAC under.
    pub fn new(key: &[u8]) -> MacKey {
        use hmac::KeyInit;
        MacKey(<hmac::Hmac<Sha256> as KeyInit>::new_from_slice(key).ok())
    }

    /// [`hmac`] of `parts` under this key.
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        use hmac::Mac;
        let Some(mut mac) = self.0.clone() else {
            return [0; 32];
        };
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }
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

    /// HMAC as RFC 2104 writes it, over the parts each prefixed with its length.
    fn textbook_hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let mut inner = Sha256::new();
        inner.update(block.map(|b| b ^ 0x36));
        for part in parts {
            inner.update((part.len() as u64).to_be_bytes());
            inner.update(part);
        }
        let mut outer = Sha256::new();
        outer.update(block.map(|b| b ^ 0x5c));
        outer.update(inner.finalize());
        outer.finalize().into()
    }

    #[test]
    fn a_prepared_key_macs_exactly_as_the_textbook_hmac_of_the_length_prefixed_parts() {
        let long = vec![0xa5u8; 1000];
        let parts: [&[&[u8]]; 7] =
            [&[], &[b""], &[b"a"], &[b"ab", b"c"], &[b"a", b"bc"], &[b"seal", b"entry", &long], &[&long[..55]]];
        for len in [0usize, 1, 31, 32, 55, 63, 64, 65, 200] {
            let key: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let prepared = MacKey::new(&key);
            for p in parts {
                let want = textbook_hmac(&key, p);
                assert_eq!(hmac(&key, p), want, "hmac, key of {len} bytes, parts {p:?}");
                assert_eq!(prepared.mac(p), want, "prepared key of {len} bytes, parts {p:?}");
                // A key used again gives the same MAC: nothing of one MAC stays in the key.
                assert_eq!(prepared.mac(p), want, "prepared key of {len} bytes used twice, parts {p:?}");
            }
            assert_ne!(prepared.mac(&[b"ab", b"c"]), prepared.mac(&[b"a", b"bc"]), "the length prefix separates parts");
        }
    }

    #[test]
    fn sha256_of_empty_input_is_the_known_digest() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
