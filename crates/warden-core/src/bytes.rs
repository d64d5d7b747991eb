//! Byte scans eight bytes at a time, for the short texts every check reads
//! (path bodies, shell words, argument strings).
//!
//! Under wasmtime each step of a loop also pays an epoch check (the per-call
//! CPU limit), and `core`'s `memchr` reads only four bytes a step on a
//! 32-bit target without SIMD, after a set-up that costs more than a short
//! text's whole scan. These read a `u64` a step, with exact byte masks.

/// `bytes` as little-endian words of eight bytes, the last one holding the
/// bytes left over (fewer than eight) with zeros above them. Each word is one
/// load: a copy of a length only known at run time would be a call to the
/// host under wasmtime (`memory.copy`).
#[inline(always)]
pub(crate) fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let whole = bytes.chunks_exact(8);
    let rest = whole.remainder().len();
    whole
        .map(|c| <[u8; 8]>::try_from(c).map_or(0, u64::from_le_bytes))
        .chain((rest > 0).then(|| last_word(bytes, rest)))
}

/// The last `rest` bytes of `bytes` (fewer than eight) as a little-endian
/// word, zeros above them: the last eight bytes shifted down past those read
/// already, or, in a text shorter than eight, its bytes read four, two and
/// one at a time (no loop: each step of one costs an epoch check).
#[inline(always)]
fn last_word(bytes: &[u8], rest: usize) -> u64 {
    let last_eight = bytes.len().checked_sub(8).and_then(|start| bytes.get(start..));
    if let Some(eight) = last_eight.and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        return u64::from_le_bytes(eight) >> (8 * (8 - rest));
    }
    let (mut word, mut at) = (0u64, 0usize);
    if rest & 4 != 0
        && let Some(four) = bytes.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok())
    {
        word = u64::from(u32::from_le_bytes(four));
        at = 4;
    }
    if rest & 2 != 0
        && let Some(two) = bytes.get(at..at + 2).and_then(|b| <[u8; 2]>::try_from(b).ok())
    {
        word |= u64::from(u16::from_le_bytes(two)) << (8 * at);
        at += 2;
    }
    if rest & 1 != 0
        && let Some(&one) = bytes.get(at)
    {
        word |= u64::from(one) << (8 * at);
    }
    word
}

/// The high bit of every byte of `word` that equals `byte`, and nothing
/// else: exact, as no sum carries from one byte into the next.
#[inline(always)]
pub(crate) fn equal_to(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = u64::from_le_bytes([0x7f; 8]);
    let zero_where_equal = word ^ (u64::from_le_bytes([0x01; 8]) * u64::from(byte));
    !(((zero_where_equal & LOW7).wrapping_add(LOW7)) | zero_where_equal | LOW7)
}

/// Where the first `byte` of `bytes` is. (A zero `byte` also meets the
/// last word's padding, past the end: such a hit is no hit.)
#[inline(always)]
pub(crate) fn find(bytes: &[u8], byte: u8) -> Option<usize> {
    let mut at = 0;
    while let Some(eight) = bytes.get(at..at + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        let hits = equal_to(u64::from_le_bytes(eight), byte);
        if hits != 0 {
            return Some(at + (hits.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.len() - at;
    if rest == 0 {
        return None;
    }
    let hits = equal_to(last_word(bytes, rest), byte);
    let found = at + (hits.trailing_zeros() / 8) as usize;
    (hits != 0 && found < bytes.len()).then_some(found)
}

/// Whether `bytes` holds `byte`.
#[inline(always)]
pub(crate) fn contains(bytes: &[u8], byte: u8) -> bool {
    find(bytes, byte).is_some()
}

/// Whether `bytes` holds `needle` (the empty needle is everywhere): its
/// first byte is sought eight bytes a step and the needle compared where it
/// is found. Nothing is set up first, where `str`'s `contains` builds a
/// two-way searcher (about 700 instructions in the guest) before it reads
/// the short paths and names the checks search.
pub(crate) fn contains_seq(bytes: &[u8], needle: &[u8]) -> bool {
    let Some((&first, _)) = needle.split_first() else { return true };
    let mut from = 0;
    while let Some(rest) = bytes.get(from..) {
        let Some(at) = find(rest, first) else { return false };
        if rest.get(at..).is_some_and(|r| r.starts_with(needle)) {
            return true;
        }
        from += at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn a_byte_is_found_at_every_position_of_every_length_and_only_where_it_is() {
        // Fillers next to the byte sought, and ones whose borrow could cross a byte.
        let fillers = [b'a', 0u8, 1, 0x7f, 0x80, 0xff, b'=' - 1, b'=' + 1];
        for sought in [b'=', 0] {
            for len in 0..20usize {
                for filler in fillers.into_iter().filter(|f| *f != sought) {
                    let plain = vec![filler; len];
                    assert_eq!(find(&plain, sought), None, "{sought:#x} in {len} of {filler:#x}");
                    assert!(!contains(&plain, sought), "{sought:#x} in {len} of {filler:#x}");
                    for at in 0..len {
                        let mut text = plain.clone();
                        text[at] = sought;
                        // A second one further on never hides the first.
                        if at + 3 < len {
                            text[at + 3] = sought;
                        }
                        assert_eq!(find(&text, sought), Some(at), "{sought:#x} in {len} of {filler:#x}, at {at}");
                        assert!(contains(&text, sought), "{sought:#x} in {len} of {filler:#x}, at {at}");
                    }
                }
            }
        }
        assert_eq!(find(b"ab", 0), None, "the padding of the last word is no zero byte of the text");
        assert_eq!(find(b"\0", 0), Some(0));
        assert_eq!(find("é=".as_bytes(), b'='), Some(2));
    }

    #[test]
    fn a_sequence_is_found_where_comparing_every_window_finds_it() {
        // Every text of up to 7 bytes over `p`, `r`, `o`, `c` and NUL, for
        // needles that repeat their first byte and ones that do not.
        let alphabet = [b'p', b'r', b'o', b'c', 0];
        for needle in [&b"proc"[..], b"pp", b"p", b"\0p", b"pop"] {
            for len in 0..8u32 {
                for mut n in 0..5usize.pow(len) {
                    let mut text = vec![];
                    for _ in 0..len {
                        text.push(alphabet[n % 5]);
                        n /= 5;
                    }
                    let want = text.windows(needle.len()).any(|w| w == needle);
                    assert_eq!(contains_seq(&text, needle), want, "{needle:?} in {text:?}");
                }
            }
        }
        assert!(contains_seq(b"anything", b""), "the empty needle is everywhere");
    }
}
