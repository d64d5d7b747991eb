//! Operator-listed sensitive values (`dlp.listedValues`): exact strings, such
//! as a client's name, a project codename or an account number, that must not
//! leave in a message.
//!
//! **Kept as keyed hashes.** At configure each value is normalized and only
//! its HMAC-SHA256 is kept, with the number of characters it has after
//! normalization; the value itself is dropped. Verdicts, signals, logs,
//! counters, errors and the policy version never carry a listed value, not
//! even which entry matched. The key is `dlp.listedValues.key` when set; without
//! it, it is derived from the whole list of values, so guessing one value
//! does not give the key. An entry can also be given already hashed, as
//! `hmac-sha256:<characters>:<64 hex digits>`, so the configuration need not
//! hold the value in plain text; hashed entries need `key`, the key they were
//! hashed with. [`hashed_entry`] computes one: HMAC-SHA256 keyed with the
//! key's UTF-8 bytes over the normalized value.
//!
//! **Normalization.** Full-width forms become ASCII, zero-width and other
//! invisible format characters are removed, letters are lower-cased (`ß` is
//! `ss`, a final `ς` is `σ`), the accents of Latin-1 letters and combining
//! accents are dropped, and everything that is not a letter or a digit
//! separates words. The normalized value is its words written together, so
//! `Project Bluebird`, `project-bluebird`, `PROJECT_BLUEBIRD` and
//! `Pro\u{ad}ject Blue bird` (with a soft hyphen) are one value, and `DE12 3456` matches `de123456`.
//! A match covers whole words of the message: `Bluebird` does not match
//! inside `Bluebirds`.
//!
//! **Matching.** Every window of 1 to [`MAX_LISTED_VALUE_WORDS`] consecutive
//! words of the message whose normalized length is one of the listed lengths
//! is hashed with the key and looked up. A value split into more pieces than
//! that, spelled with other letters (`0` for `o`), or translated, is not seen.

use super::pii::PiiAction;
use crate::config::reader::{Node, Obj, Reader};
use crate::prelude::*;
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Most listed values, plain and hashed together.
pub const MAX_LISTED_VALUES: usize = 1024;
/// Longest listed value as written, in characters.
pub const MAX_LISTED_VALUE_CHARS: usize = 256;
/// Fewest letters and digits of a listed value after normalization.
pub const MIN_LISTED_VALUE_CHARS: usize = 3;
/// Most words of a listed value after normalization, and most words of a message one match may span.
pub const MAX_LISTED_VALUE_WORDS: usize = 8;
/// Shortest `key`, in characters.
pub const MIN_LISTED_KEY_CHARS: usize = 16;
/// Longest `key`, in characters.
pub const MAX_LISTED_KEY_CHARS: usize = 1024;
/// Hashed entries start with this.
pub const HASHED_PREFIX: &str = "hmac-sha256:";
/// Most matches reported for one message.
pub const MAX_LISTED_HITS: usize = 16;

const DERIVED_KEY_DOMAIN: &[u8] = b"warden.dlp.listed-values.v1";

type HmacSha256 = Hmac<Sha256>;

/// The `dlp.listedValues` section, as configured: keyed hashes only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ListedValues {
    /// `deny` (default) or `ask`.
    pub action: PiiAction,
    key: Vec<u8>,
    digests: BTreeSet<(usize, [u8; 32])>,
    lengths: BTreeSet<usize>,
}

impl core::fmt::Debug for ListedValues {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ListedValues")
            .field("action", &self.action)
            .field("entries", &self.digests.len())
            .finish_non_exhaustive()
    }
}

/// What the policy version digests: the action and the hashed entries, never the key.
impl Serialize for ListedValues {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shape<'a> {
            action: &'a PiiAction,
            entries: Vec<String>,
        }
        let entries = self.digests.iter().map(|(n, d)| format!("{HASHED_PREFIX}{n}:{}", hex(d))).collect();
        Shape { action: &self.action, entries }.serialize(serializer)
    }
}

/// The `dlp.listedValues` section as the configuration document writes it (for the schema).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields, rename_all = "camelCase")]
#[expect(dead_code, reason = "describes the document for the schema only")]
pub struct ListedValuesDocument {
    /// Values in plain text, hashed at configure and then dropped.
    #[schemars(length(max = MAX_LISTED_VALUES))]
    values: Option<Vec<ListedValueText>>,
    /// Values already hashed: `hmac-sha256:<characters>:<64 hex digits>`, keyed with `key`.
    #[schemars(length(max = MAX_LISTED_VALUES))]
    hashed: Option<Vec<String>>,
    /// The HMAC key; required with `hashed`. Without it the key is derived from the values.
    #[schemars(length(min = MIN_LISTED_KEY_CHARS, max = MAX_LISTED_KEY_CHARS))]
    key: Option<String>,
    /// `deny` (default) or `ask`.
    action: Option<PiiAction>,
}

#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[schemars(transparent)]
#[expect(dead_code, reason = "describes the document for the schema only")]
struct ListedValueText(#[schemars(length(min = 1, max = MAX_LISTED_VALUE_CHARS))] String);

impl ListedValues {
    /// Fields of the `dlp.listedValues` section.
    pub const FIELDS: &'static [&'static str] = &["values", "hashed", "key", "action"];

    /// Whether no value is listed (the section then leaves the policy version as it was).
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// Reads the section; errors never show a listed value.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> ListedValues {
        let Some(obj) = obj else {
            return ListedValues::default();
        };
        let action = super::pii::read_action(r, &obj);
        let key = obj.get("key").and_then(|node| read_key(r, &node));
        for field in ["values", "hashed"] {
            if let Some(node) = obj.get(field).filter(|n| !n.value.is_array()) {
                r.error(node.path, "must be a list of strings (the value is not shown)");
            }
        }
        let lists = |field: &str| obj.get(field).is_some_and(|n| n.value.is_array());
        let plain = if lists("values") { r.list(&obj, "values", MAX_LISTED_VALUES, read_value) } else { None }
            .unwrap_or_default();
        let hashed = if lists("hashed") { r.list(&obj, "hashed", MAX_LISTED_VALUES, read_hashed) } else { None }
            .unwrap_or_default();
        let total = obj.get("values").and_then(|n| n.value.as_array().map(Vec::len)).unwrap_or(0)
            + obj.get("hashed").and_then(|n| n.value.as_array().map(Vec::len)).unwrap_or(0);
        if total > MAX_LISTED_VALUES {
            r.error(
                obj.path.clone(),
                format!("at most {MAX_LISTED_VALUES} listed values, plain and hashed together, got {total}"),
            );
        }
        if !hashed.is_empty() && key.is_none() && obj.get("key").is_none() {
            r.error(obj.path_of("key"), "is required with `hashed`: the key the entries were hashed with");
        }
        let key = key.unwrap_or_else(|| derived_key(&plain));
        let mut digests: BTreeSet<(usize, [u8; 32])> = hashed.into_iter().collect();
        for value in &plain {
            digests.insert((value.chars().count(), mac(&key, value)));
        }
        let lengths = digests.iter().map(|(n, _)| *n).collect();
        ListedValues { action, key, digests, lengths }
    }

    /// Character offsets of listed values in `text`, at most [`MAX_LISTED_HITS`].
    pub fn scan(&self, text: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let (Some(&shortest), Some(&longest)) = (self.lengths.first(), self.lengths.last()) else {
            return out;
        };
        let Ok(keyed) = <HmacSha256 as KeyInit>::new_from_slice(&self.key) else {
            return out;
        };
        let (chars, origin) = folded(text);
        let words = words(&chars);
        let mut window = String::new();
        for (i, (_, start)) in words.iter().enumerate() {
            window.clear();
            let mut length = 0;
            for (word, _) in words.iter().skip(i).take(MAX_LISTED_VALUE_WORDS) {
                window.push_str(word);
                length += word.chars().count();
                if length > longest {
                    break;
                }
                if length < shortest || !self.lengths.contains(&length) {
                    continue;
                }
                let mut mac = keyed.clone();
                mac.update(window.as_bytes());
                let digest: [u8; 32] = mac.finalize().into_bytes().into();
                if self.digests.contains(&(length, digest)) {
                    out.push(origin.get(*start).copied().unwrap_or(*start));
                    break;
                }
            }
            if out.len() >= MAX_LISTED_HITS {
                break;
            }
        }
        out
    }
}

/// The hashed entry for `value` under `key`, as `dlp.listedValues.hashed`
/// takes it, or `None` when the value is not listable (too short or too
/// many words after normalization).
pub fn hashed_entry(key: &str, value: &str) -> Option<String> {
    let normal = normalized(value).ok()?;
    Some(format!("{HASHED_PREFIX}{}:{}", normal.chars().count(), hex(&mac(key.as_bytes(), &normal))))
}

/// A value's normalized form: its words written together, or what is wrong with it.
pub fn normalized(value: &str) -> Result<String, String> {
    let (chars, _) = folded(value);
    let words = words(&chars);
    if words.len() > MAX_LISTED_VALUE_WORDS {
        return Err(format!("must be at most {MAX_LISTED_VALUE_WORDS} words after normalization, got {}", words.len()));
    }
    let normal: String = words.into_iter().map(|(w, _)| w).collect();
    let n = normal.chars().count();
    if n < MIN_LISTED_VALUE_CHARS {
        return Err(format!(
            "must have at least {MIN_LISTED_VALUE_CHARS} letters or digits after normalization, got {n}"
        ));
    }
    Ok(normal)
}

fn read_value(r: &mut Reader, node: Node<'_>) -> Option<String> {
    let Value::String(text) = node.value else {
        r.error(node.path, "must be a string (the value is not shown)");
        return None;
    };
    let chars = text.chars().count();
    if chars > MAX_LISTED_VALUE_CHARS {
        r.error(node.path, format!("must be at most {MAX_LISTED_VALUE_CHARS} characters, got {chars}"));
        return None;
    }
    match normalized(text) {
        Ok(normal) => Some(normal),
        Err(problem) => {
            r.error(node.path, format!("{problem} (the value is not shown)"));
            None
        }
    }
}

fn read_hashed(r: &mut Reader, node: Node<'_>) -> Option<(usize, [u8; 32])> {
    let parsed = node.value.as_str().and_then(|text| {
        let (length, digest) = text.strip_prefix(HASHED_PREFIX)?.split_once(':')?;
        let length: usize =
            length.parse().ok().filter(|n| (MIN_LISTED_VALUE_CHARS..=MAX_LISTED_VALUE_CHARS).contains(n))?;
        Some((length, unhex(digest)?))
    });
    if parsed.is_none() {
        r.error(
            node.path,
            format!(
                "must be `{HASHED_PREFIX}<characters>:<64 lowercase hex digits>` with {MIN_LISTED_VALUE_CHARS} to \
                 {MAX_LISTED_VALUE_CHARS} characters (the entry is not shown)"
            ),
        );
    }
    parsed
}

fn read_key(r: &mut Reader, node: &Node<'_>) -> Option<Vec<u8>> {
    let Some(text) = node.value.as_str() else {
        r.error(node.path.clone(), "must be a string (the key is not shown)");
        return None;
    };
    let n = text.chars().count();
    if !(MIN_LISTED_KEY_CHARS..=MAX_LISTED_KEY_CHARS).contains(&n) {
        r.error(
            node.path.clone(),
            format!(
                "must be {MIN_LISTED_KEY_CHARS} to {MAX_LISTED_KEY_CHARS} characters, got {n} (the key is not shown)"
            ),
        );
        return None;
    }
    Some(text.as_bytes().to_vec())
}

/// The key of a list without `key`: a digest of all its normalized values.
fn derived_key(values: &[String]) -> Vec<u8> {
    let sorted: BTreeSet<&String> = values.iter().collect();
    let mut hasher = Sha256::new();
    hasher.update(DERIVED_KEY_DOMAIN);
    for value in sorted {
        hasher.update((value.len() as u64).to_be_bytes());
        hasher.update(value.as_bytes());
    }
    hasher.finalize().to_vec()
}

fn mac(key: &[u8], normal: &str) -> [u8; 32] {
    match <HmacSha256 as KeyInit>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(normal.as_bytes());
            mac.finalize().into_bytes().into()
        }
        Err(_) => [0; 32],
    }
}

fn hex(bytes: &[u8]) -> String {
    use core::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        *slot = (digit(*pair.first()?)? << 4) | digit(*pair.get(1)?)?;
    }
    Some(out)
}

/// Whether `c` is invisible and removed before matching: zero-width
/// characters, the soft hyphen, joiners, directional marks and the byte-order mark.
fn invisible(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}')
}

/// `text` with full-width forms as ASCII, Unicode spaces as spaces and
/// invisible characters removed, with the character offset in `text` of each
/// character kept.
pub(crate) fn folded(text: &str) -> (Vec<char>, Vec<usize>) {
    let mut chars = Vec::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    for (i, c) in text.chars().enumerate() {
        if invisible(c) {
            continue;
        }
        let c = match c {
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
            '\u{3000}' | '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' => ' ',
            _ => c,
        };
        chars.push(c);
        origin.push(i);
    }
    (chars, origin)
}

/// A Latin-1 letter without its accent.
fn unaccented(c: char) -> char {
    match c {
        'à'..='å' => 'a',
        'ç' => 'c',
        'è'..='ë' => 'e',
        'ì'..='ï' => 'i',
        'ñ' => 'n',
        'ò'..='ö' | 'ø' => 'o',
        'ù'..='ü' => 'u',
        'ý' | 'ÿ' => 'y',
        _ => c,
    }
}

/// The words of folded text, lower-cased and unaccented, with the index of each word's first character.
fn words(chars: &[char]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut current: Option<(String, usize)> = None;
    for (i, &c) in chars.iter().enumerate() {
        if ('\u{300}'..='\u{36f}').contains(&c) {
            continue;
        }
        if !c.is_alphanumeric() {
            out.extend(current.take());
            continue;
        }
        let word = &mut current.get_or_insert_with(|| (String::new(), i)).0;
        for lower in c.to_lowercase() {
            match lower {
                'ß' => word.push_str("ss"),
                'ς' => word.push('σ'),
                other => word.push(unaccented(other)),
            }
        }
    }
    out.extend(current);
    out
}
