//! A frozen map from names to values, looked up with one cheap probe.
//!
//! The exec gate asks what it knows of every program name it meets, and the
//! tool-call judge finds every call's tool among the built-in entries. A
//! general hash map costs a 128-bit multiply per look-up in the guest (a
//! library call on 32-bit WebAssembly); this table picks a bucket from a
//! 32-bit multiplicative hash of the name's length, its first two bytes and
//! its last byte, then compares the few names in that bucket.

use crate::prelude::*;

/// Buckets in a table (a power of two).
const BUCKETS: usize = 1024;

/// The bucket of `name`.
#[inline(always)]
fn bucket(name: &[u8]) -> usize {
    let (first, second, last) = match name {
        [] => (0, 0, 0),
        [only] => (*only, 0, *only),
        [first, last] => (*first, *last, *last),
        [first, second, .., last] => (*first, *second, *last),
    };
    let key = u32::from(first) | u32::from(second) << 8 | u32::from(last) << 16 | (name.len() as u32) << 24;
    // The top bits of a golden-ratio product mix every input bit.
    (key.wrapping_mul(0x9e37_79b1) >> (32 - BUCKETS.trailing_zeros())) as usize
}

/// Names and their values, grouped by bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameTable<K, V> {
    /// Bucket `b` holds `entries[starts[b]..starts[b + 1]]`.
    starts: Vec<u32>,
    entries: Vec<(K, V)>,
}

impl<K: AsRef<str>, V> Default for NameTable<K, V> {
    fn default() -> Self {
        NameTable { starts: vec![0; BUCKETS + 1], entries: Vec::new() }
    }
}

impl<K: AsRef<str>, V> NameTable<K, V> {
    /// The table of `pairs`; of pairs with the same name, the first is kept.
    pub fn new(pairs: impl IntoIterator<Item = (K, V)>) -> NameTable<K, V> {
        let mut all: Vec<(usize, (K, V))> =
            pairs.into_iter().map(|(name, value)| (bucket(name.as_ref().as_bytes()), (name, value))).collect();
        // Stable: within a bucket, names keep their order, so a repeated
        // name's first pair is the first of its bucket.
        all.sort_by_key(|(b, _)| *b);
        let mut entries: Vec<(usize, (K, V))> = Vec::with_capacity(all.len());
        for (b, (name, value)) in all {
            let same_bucket = entries.iter().rev().take_while(|(e, _)| *e == b);
            if !same_bucket.clone().any(|(_, (k, _))| k.as_ref() == name.as_ref()) {
                entries.push((b, (name, value)));
            }
        }
        let mut starts = vec![0u32; BUCKETS + 1];
        for (b, _) in &entries {
            if let Some(count) = starts.get_mut(b + 1) {
                *count += 1;
            }
        }
        for b in 0..BUCKETS {
            let before = starts.get(b).copied().unwrap_or(0);
            if let Some(count) = starts.get_mut(b + 1) {
                *count += before;
            }
        }
        NameTable { starts, entries: entries.into_iter().map(|(_, pair)| pair).collect() }
    }

    /// The value of `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&V> {
        let b = bucket(name.as_bytes());
        let (Some(&from), Some(&to)) = (self.starts.get(b), self.starts.get(b + 1)) else { return None };
        let bucket = self.entries.get(from as usize..to as usize)?;
        bucket.iter().find(|(k, _)| k.as_ref().len() == name.len() && k.as_ref() == name).map(|(_, v)| v)
    }

    /// Every name and value, grouped by bucket.
    pub fn iter(&self) -> impl Iterator<Item = &(K, V)> {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_finds_the_value_a_scan_of_the_pairs_finds_first() {
        let mut names: Vec<String> = ["", "a", "ab", "ba", "git", "gjt", "curl", "carl", "é", "ééé", "sh", "sh "]
            .iter()
            .map(|n| n.to_string())
            .collect();
        names.extend((0..3000).map(|i| format!("n{i}")));
        let mut pairs: Vec<(String, usize)> = names.iter().cloned().zip(0..).collect();
        pairs.push(("git".into(), 9999));
        let table = NameTable::new(pairs.clone());
        let mut probes = names.clone();
        probes.extend(["gi", "gitx", "GIT", "n3000", "n", "\u{0}", "curl\u{0}"].map(String::from));
        for probe in &probes {
            let scanned = pairs.iter().find(|(k, _)| k == probe).map(|(_, v)| v);
            assert_eq!(table.get(probe), scanned, "{probe:?}");
        }
        assert_eq!(table.iter().count(), pairs.len() - 1, "the repeated name is kept once");
        assert_eq!(NameTable::<String, usize>::default().get("git"), None);
    }
}
