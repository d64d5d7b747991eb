//! The runtime pieces every `no_std` guest component of this workspace
//! needs, in one place: the global allocator (a per-call arena in front of
//! dlmalloc, see `arena`), a panic handler that traps, the
//! canonical ABI's `cabi_realloc`, and libc's `memcmp` family. On
//! `wasm32-wasip2` these normally come from `std`; a `no_std` component, which
//! imports nothing but its own world, provides them itself. Depending on this
//! crate (and naming it with `use guest_rt as _;`) links them in.

#![no_std]

extern crate alloc;

#[cfg(target_arch = "wasm32")]
mod arena;
// Only the guest links `memcmp` and `bcmp` from it; natively only its tests use it.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod compare;

#[cfg(target_arch = "wasm32")]
pub use arena::persistent;

/// Runs `f`; off WebAssembly there is no arena to keep out of.
#[cfg(not(target_arch = "wasm32"))]
pub fn persistent<T>(f: impl FnOnce() -> T) -> T {
    f()
}

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: Capped = Capped;

/// The per-call arena in front of dlmalloc ([`arena`]), except that an
/// allocation the host's memory cap refuses (its `memory.grow` returned -1)
/// traps at once with [`out_of_memory`]'s own trap instead of unwinding into a
/// generic panic.
#[cfg(target_arch = "wasm32")]
struct Capped;

#[cfg(target_arch = "wasm32")]
fn checked(ptr: *mut u8) -> *mut u8 {
    if ptr.is_null() {
        out_of_memory();
    }
    ptr
}

// SAFETY: every call is forwarded unchanged to the arena-then-dlmalloc
// allocator; only a null result (an allocation that failed) is turned into a
// trap.
#[cfg(target_arch = "wasm32")]
unsafe impl core::alloc::GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: core::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded unchanged.
        checked(unsafe { arena::ArenaThenDlmalloc.alloc(layout) })
    }
    unsafe fn alloc_zeroed(&self, layout: core::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded unchanged.
        checked(unsafe { arena::ArenaThenDlmalloc.alloc_zeroed(layout) })
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: core::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded unchanged.
        checked(unsafe { arena::ArenaThenDlmalloc.realloc(ptr, layout, new_size) })
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: core::alloc::Layout) {
        // SAFETY: the caller's contract is forwarded unchanged.
        unsafe { arena::ArenaThenDlmalloc.dealloc(ptr, layout) }
    }
}

/// The guest ran out of memory: traps with an out-of-bounds read of the last
/// address of the 32-bit address space, a trap safe Rust never raises
/// otherwise (its bounds checks panic, and a panic traps as `unreachable`).
/// A host that cannot trap at the refused `memory.grow` itself (wasmtime-py
/// has no such option) tells "hit its memory cap" from any other failure by
/// this trap.
#[cfg(target_arch = "wasm32")]
#[cold]
fn out_of_memory() -> ! {
    // SAFETY: the read loads nothing: only a memory grown to the full 4 GiB
    // holds this address, and no host's cap allows that (without a cap the
    // read succeeds and the `unreachable` below traps instead).
    unsafe { core::ptr::read_volatile(usize::MAX as *const u8) };
    core::arch::wasm32::unreachable()
}

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
    checked(ptr)
}
