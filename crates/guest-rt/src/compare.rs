//! `memcmp` and `bcmp` a word at a time.
//!
//! Every string comparison of the guest (`==` on `str`, sorted look-ups,
//! `starts_with`) ends in one of these. wasi-libc's versions compare a byte
//! per loop iteration, and under wasmtime with epoch interruption every
//! iteration also checks the epoch, so a comparison of two 8-byte names cost
//! eight rounds of both. These compare eight bytes a step, and the last
//! fewer-than-eight bytes by one overlapping word or a few narrower loads, so
//! the names and keys the checks compare (mostly under 16 bytes) take no
//! loop at all.

/// Loads `N` bytes at `p` as a little-endian number, widened to `u64`.
///
/// # Safety
/// `p..p+N` must be readable.
#[inline(always)]
unsafe fn load<const N: usize>(p: *const u8) -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: the caller guarantees `N` readable bytes at `p`; `N <= 8`.
    unsafe { core::ptr::copy_nonoverlapping(p, bytes.as_mut_ptr(), N) };
    u64::from_le_bytes(bytes)
}

/// The sign of the first differing byte of two little-endian words that differ.
#[inline(always)]
fn order(x: u64, y: u64) -> i32 {
    // The lowest differing bit is in the first differing byte (little endian).
    let shift = (x ^ y).trailing_zeros() & !7;
    let a = (x >> shift) & 0xff;
    let b = (y >> shift) & 0xff;
    a as i32 - b as i32
}

/// The first `n` bytes at `a` and `b`, compared as `memcmp` does; when
/// `ordered` is false only zero or not zero is meaningful.
///
/// # Safety
/// `a..a+n` and `b..b+n` must be readable.
#[inline(always)]
pub(crate) unsafe fn compare(a: *const u8, b: *const u8, n: usize, ordered: bool) -> i32 {
    // SAFETY (every load below): each reads bytes below `n` from `a` and `b`.
    unsafe {
        let mut i = 0;
        while i + 8 <= n {
            let (x, y) = (load::<8>(a.add(i)), load::<8>(b.add(i)));
            if x != y {
                return if ordered { order(x, y) } else { 1 };
            }
            i += 8;
        }
        let rest = n - i;
        if rest == 0 {
            return 0;
        }
        let (x, y) = if n >= 8 {
            // One word ending at `n`: its first `8 - rest` bytes were equal already.
            (load::<8>(a.add(n - 8)), load::<8>(b.add(n - 8)))
        } else {
            let (mut x, mut y, mut at) = (0u64, 0u64, 0usize);
            if rest & 4 != 0 {
                x = load::<4>(a);
                y = load::<4>(b);
                at = 4;
            }
            if rest & 2 != 0 {
                x |= load::<2>(a.add(at)) << (8 * at);
                y |= load::<2>(b.add(at)) << (8 * at);
                at += 2;
            }
            if rest & 1 != 0 {
                x |= load::<1>(a.add(at)) << (8 * at);
                y |= load::<1>(b.add(at)) << (8 * at);
            }
            (x, y)
        };
        if x == y {
            0
        } else if ordered {
            order(x, y)
        } else {
            1
        }
    }
}

/// libc's `memcmp`.
///
/// # Safety
/// `a..a+n` and `b..b+n` must be readable.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract is forwarded unchanged.
    unsafe { compare(a, b, n, true) }
}

/// libc's `bcmp`: zero when equal.
///
/// # Safety
/// `a..a+n` and `b..b+n` must be readable.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract is forwarded unchanged.
    unsafe { compare(a, b, n, false) }
}

#[cfg(test)]
mod tests {
    use super::compare;

    fn reference(a: &[u8], b: &[u8]) -> i32 {
        a.iter().zip(b).find(|(x, y)| x != y).map_or(0, |(x, y)| i32::from(*x) - i32::from(*y))
    }

    #[test]
    fn every_length_and_every_differing_position_compares_as_bytes_do() {
        for n in 0..40usize {
            let a: alloc::vec::Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
            // SAFETY: both slices hold `n` bytes.
            assert_eq!(unsafe { compare(a.as_ptr(), a.as_ptr(), n, true) }, 0, "n={n}");
            for at in 0..n {
                for delta in [1u8, 0x7f, 0x80, 0xff] {
                    let mut b = a.clone();
                    b[at] = b[at].wrapping_add(delta);
                    let want = reference(&a, &b);
                    // SAFETY: both slices hold `n` bytes.
                    let got = unsafe { compare(a.as_ptr(), b.as_ptr(), n, true) };
                    assert_eq!(got.signum(), want.signum(), "n={n} at={at} delta={delta}");
                    assert_eq!(got, want, "n={n} at={at} delta={delta}");
                    // SAFETY: both slices hold `n` bytes.
                    assert_ne!(unsafe { compare(a.as_ptr(), b.as_ptr(), n, false) }, 0);
                }
            }
        }
    }
}
