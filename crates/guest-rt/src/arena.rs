//! A per-call arena in front of dlmalloc.
//!
//! A check allocates many small, short-lived blocks (tokens, words, reasons)
//! and frees nearly all of them before it returns. dlmalloc's bins cost more
//! than that work deserves, so small blocks are bumped out of a fixed region
//! of [`CHUNKS`] chunks of [`CHUNK`] bytes instead. Each chunk counts its live
//! blocks; when the count of the chunk being bumped falls to zero (the call
//! freed everything it made there) the chunk starts over from its beginning,
//! and any other chunk whose count falls to zero is free to be bumped again.
//!
//! Nothing is ever reused while a block in it is live, so a block that
//! outlives its call (a batched counter, a cache entry) is safe: it only keeps
//! its chunk from starting over. The cost of such blocks is bounded by the
//! region: when no chunk is free, allocations go to dlmalloc, as they do for
//! blocks larger than [`LARGEST`], for over-aligned ones, inside
//! [`persistent`] (the policy built by `configure`, which lives for the
//! instance), and when the region could not be reserved (the memory cap).
//!
//! A component instance is single-threaded and never re-entered, so the
//! state is kept in plain cells.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;

/// Bytes in one chunk.
pub const CHUNK: usize = 32 * 1024;
/// Chunks in the region (1 MiB in all).
pub const CHUNKS: usize = 32;
/// The largest block the arena takes; larger ones go to dlmalloc.
pub const LARGEST: usize = CHUNK / 4;
/// The largest alignment the arena takes.
const MOST_ALIGNED: usize = 64;
/// Bytes in a WebAssembly page.
const PAGE: usize = 64 * 1024;
/// `base` before the region is reserved.
const UNRESERVED: usize = 0;
/// `base` when the region could not be reserved: the arena is off for good.
const REFUSED: usize = usize::MAX;

pub(crate) struct Arena {
    /// Where the region starts, or [`UNRESERVED`] or [`REFUSED`].
    base: Cell<usize>,
    /// The chunk being bumped.
    current: Cell<usize>,
    /// The next free byte in the current chunk.
    top: Cell<usize>,
    /// The end of the current chunk; 0 before the region is reserved, so
    /// the fast path of [`Arena::alloc`] falls through to reserving it.
    limit: Cell<usize>,
    /// Live blocks in each chunk.
    live: [Cell<u32>; CHUNKS],
    /// How deep inside [`persistent`] the instance is.
    persistent: Cell<u32>,
}

// SAFETY: a component instance runs on one thread and is never re-entered.
unsafe impl Sync for Arena {}

pub(crate) static ARENA: Arena = Arena {
    base: Cell::new(UNRESERVED),
    current: Cell::new(0),
    top: Cell::new(0),
    limit: Cell::new(0),
    live: [const { Cell::new(0) }; CHUNKS],
    persistent: Cell::new(0),
};

/// Runs `f` with every allocation it makes going to dlmalloc: for what lives
/// as long as the instance, so that it does not hold arena chunks.
pub fn persistent<T>(f: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            ARENA.persistent.set(ARENA.persistent.get().saturating_sub(1));
        }
    }
    ARENA.persistent.set(ARENA.persistent.get().saturating_add(1));
    let _leave = Leave;
    f()
}

impl Arena {
    /// The region's bounds, once reserved.
    fn region(&self) -> Option<usize> {
        match self.base.get() {
            UNRESERVED | REFUSED => None,
            base => Some(base),
        }
    }

    /// The chunk holding `ptr`, when the arena made it.
    fn chunk_of(&self, ptr: *mut u8) -> Option<usize> {
        let base = self.region()?;
        let offset = (ptr as usize).checked_sub(base)?;
        (offset < CHUNK * CHUNKS).then_some(offset / CHUNK)
    }

    /// Reserves the region on first use.
    fn reserve(&self) -> Option<usize> {
        if let Some(base) = self.region() {
            return Some(base);
        }
        if self.base.get() == REFUSED {
            return None;
        }
        let pages = core::arch::wasm32::memory_grow(0, CHUNK * CHUNKS / PAGE);
        // The region's end must be addressable (a memory grown to the full
        // 4 GiB would end at 2^32); such a region is not used.
        let base = pages.checked_mul(PAGE).filter(|b| b.checked_add(CHUNK * CHUNKS).is_some());
        let Some(base) = base.filter(|_| pages != usize::MAX) else {
            self.base.set(REFUSED);
            return None;
        };
        self.base.set(base);
        self.start_chunk(base, 0);
        Some(base)
    }

    /// Makes `chunk` the one being bumped, from its start.
    fn start_chunk(&self, base: usize, chunk: usize) {
        self.current.set(chunk);
        self.top.set(base + chunk * CHUNK);
        self.limit.set(base + (chunk + 1) * CHUNK);
    }

    /// A block from the arena, or `None` when it does not take `layout` or
    /// has no room. The common case (room in the current chunk) is a bump.
    #[inline(always)]
    fn alloc(&self, layout: Layout) -> Option<*mut u8> {
        let (size, align) = (layout.size(), layout.align());
        if size == 0 || size > LARGEST || align > MOST_ALIGNED || self.persistent.get() != 0 {
            return None;
        }
        // `top` and `limit` lie inside the addressable region, so neither sum overflows.
        let start = (self.top.get() + (align - 1)) & !(align - 1);
        let end = start + size;
        if end <= self.limit.get() {
            self.top.set(end);
            let live = &self.live[self.current.get() % CHUNKS];
            live.set(live.get() + 1);
            return Some(start as *mut u8);
        }
        self.alloc_in_new_chunk(layout)
    }

    /// The current chunk is full (or the region not yet reserved): bumps
    /// `layout` out of a free chunk, if there is one.
    #[cold]
    fn alloc_in_new_chunk(&self, layout: Layout) -> Option<*mut u8> {
        let fresh = self.region().is_none();
        let base = self.reserve()?;
        if !fresh {
            let current = self.current.get();
            let free = (0..CHUNKS).find(|&i| i != current && self.live[i].get() == 0)?;
            self.start_chunk(base, free);
        }
        let start = (self.top.get() + (layout.align() - 1)) & !(layout.align() - 1);
        let end = start + layout.size();
        if end > self.limit.get() {
            return None;
        }
        self.top.set(end);
        let live = &self.live[self.current.get()];
        live.set(live.get() + 1);
        Some(start as *mut u8)
    }

    /// Frees an arena block; `false` when `ptr` is not one.
    #[inline(always)]
    fn dealloc(&self, ptr: *mut u8, layout: Layout) -> bool {
        let Some(chunk) = self.chunk_of(ptr) else {
            return false;
        };
        let live = &self.live[chunk];
        let left = live.get().saturating_sub(1);
        live.set(left);
        if chunk == self.current.get() {
            if left == 0 {
                self.top.set(self.limit.get() - CHUNK);
            } else if ptr as usize + layout.size() == self.top.get() {
                self.top.set(ptr as usize);
            }
        }
        true
    }

    /// Grows or shrinks an arena block in place when it can; `None` when
    /// `ptr` is not an arena block, `Some(null)` when it must move.
    fn resize_in_place(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> Option<*mut u8> {
        let chunk = self.chunk_of(ptr)?;
        if new_size <= layout.size() {
            if chunk == self.current.get() && ptr as usize + layout.size() == self.top.get() {
                self.top.set(ptr as usize + new_size);
            }
            return Some(ptr);
        }
        let end = ptr as usize + new_size;
        if chunk == self.current.get()
            && ptr as usize + layout.size() == self.top.get()
            && new_size <= LARGEST * 2
            && end <= self.limit.get()
        {
            self.top.set(end);
            return Some(ptr);
        }
        Some(core::ptr::null_mut())
    }
}

/// The arena in front of dlmalloc.
pub(crate) struct ArenaThenDlmalloc;

// SAFETY: arena blocks are handed out once, each inside a chunk no other live
// block overlaps (the bump only moves forward over memory nothing live
// holds), and freed only through `dealloc`/`realloc` with the pointer the
// arena gave; every other block is dlmalloc's, with the caller's contract
// forwarded unchanged.
unsafe impl GlobalAlloc for ArenaThenDlmalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match ARENA.alloc(layout) {
            Some(ptr) => ptr,
            // SAFETY: the caller's contract is forwarded unchanged.
            None => unsafe { dlmalloc_alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match ARENA.alloc(layout) {
            Some(ptr) => {
                // SAFETY: the arena just handed out `layout.size()` bytes at `ptr`.
                unsafe { core::ptr::write_bytes(ptr, 0, layout.size()) };
                ptr
            }
            // SAFETY: the caller's contract is forwarded unchanged.
            None => unsafe { dlmalloc::GlobalDlmalloc.alloc_zeroed(layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match ARENA.resize_in_place(ptr, layout, new_size) {
            Some(moved) if moved.is_null() => {
                // SAFETY: `new_size` is non-zero and, rounded up to the
                // alignment, does not overflow (the caller's contract).
                let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                // SAFETY: as for `alloc`.
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks are live, distinct and at least
                    // `layout.size()` (< `new_size`) bytes long.
                    unsafe { core::ptr::copy_nonoverlapping(ptr, new, layout.size()) };
                    ARENA.dealloc(ptr, layout);
                }
                new
            }
            Some(same) => same,
            // SAFETY: not an arena block: dlmalloc's, contract forwarded.
            None => unsafe { dlmalloc_realloc(ptr, layout, new_size) },
        }
    }

    // One small function every drop calls: inlined, its copies at every
    // drop site made the component a quarter larger.
    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !ARENA.dealloc(ptr, layout) {
            // SAFETY: not an arena block: dlmalloc's, contract forwarded.
            unsafe { dlmalloc_dealloc(ptr, layout) }
        }
    }
}

// dlmalloc's paths are kept out of line, so the arena's fast path (a bump or
// a count), which nearly every allocation and free of a check takes, is all
// that is compiled where it is called. Measured against dlmalloc's code
// inlined there: the component is 18 KB smaller and a typical check runs
// about 130 fewer instructions.

/// dlmalloc's `alloc`, out of line.
///
/// # Safety
/// As [`GlobalAlloc::alloc`].
#[cold]
#[inline(never)]
unsafe fn dlmalloc_alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's contract is forwarded unchanged.
    unsafe { dlmalloc::GlobalDlmalloc.alloc(layout) }
}

/// dlmalloc's `realloc`, out of line.
///
/// # Safety
/// As [`GlobalAlloc::realloc`].
#[cold]
#[inline(never)]
unsafe fn dlmalloc_realloc(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    // SAFETY: the caller's contract is forwarded unchanged.
    unsafe { dlmalloc::GlobalDlmalloc.realloc(ptr, layout, new_size) }
}

/// dlmalloc's `dealloc`, out of line.
///
/// # Safety
/// As [`GlobalAlloc::dealloc`].
#[cold]
#[inline(never)]
unsafe fn dlmalloc_dealloc(ptr: *mut u8, layout: Layout) {
    // SAFETY: the caller's contract is forwarded unchanged.
    unsafe { dlmalloc::GlobalDlmalloc.dealloc(ptr, layout) }
}
