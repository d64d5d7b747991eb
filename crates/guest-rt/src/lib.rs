//! The runtime pieces every `no_std` guest component of this workspace
//! needs, in one place: the global allocator, a panic handler that traps, the
//! canonical ABI's `cabi_realloc`, and libc's `memcmp` family. On
//! `wasm32-wasip2` these normally come from `std`; a `no_std` component, which
//! imports nothing but its own world, provides them itself. Depending on this
//! crate (and naming it with `use guest_rt as _;`) links them in.

#![no_std]

extern crate alloc;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// A guest panic is a bug; trapping hands it to the host, which discards the
/// instance and answers with the running check's failure mode.
#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

// `memcmp` and friends come from wasi-libc's self-contained libc, which has
// no imports of its own; nothing else of libc is linked.
#[cfg(target_arch = "wasm32")]
#[link(name = "c")]
unsafe extern "C" {}

/// The canonical ABI's allocator entry point, over the global allocator.
///
/// # Safety
/// Called only by the component model's lifting and lowering code, with a
/// pointer and sizes it obtained from earlier calls.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cabi_realloc(old_ptr: *mut u8, old_len: usize, align: usize, new_len: usize) -> *mut u8 {
    use alloc::alloc::{Layout, alloc, realloc};
    if new_len == 0 {
        return align as *mut u8;
    }
    // SAFETY: the canonical ABI passes a power-of-two alignment and, for a
    // reallocation, the pointer and size of an earlier allocation.
    let ptr = unsafe {
        if old_len == 0 {
            alloc(Layout::from_size_align_unchecked(new_len, align))
        } else {
            realloc(old_ptr, Layout::from_size_align_unchecked(old_len, align), new_len)
        }
    };
    if ptr.is_null() {
        core::arch::wasm32::unreachable();
    }
    ptr
}
