// The memory cap: a module's own memory limits are rewritten before it is
// compiled, so growing past the cap fails inside the guest.

import { test } from "node:test";
import assert from "node:assert/strict";
import { capMemory, PAGE_BYTES } from "../src/memory-cap.js";

// (module (memory (export "mem") <min> [<max>]))
function moduleWithMemory(min, max) {
  const limits = max === undefined ? [0x00, min] : [0x01, min, max];
  const memory = [0x01, ...limits];
  const exportName = [0x03, 0x6d, 0x65, 0x6d];
  const exports = [0x01, ...exportName, 0x02, 0x00];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x05, memory.length, ...memory,
    0x07, exports.length, ...exports,
  ]);
}

function grow(bytes, pages) {
  const { mem } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
  try {
    mem.grow(pages);
    return mem.buffer.byteLength / PAGE_BYTES;
  } catch (e) {
    return e.name;
  }
}

test("an_unbounded_memory_gets_the_cap_as_its_maximum", () => {
  const capped = capMemory(moduleWithMemory(1), 4 * PAGE_BYTES);
  assert.equal(grow(capped, 3), 4, "growing up to the cap works");
  assert.equal(grow(capped, 4), "RangeError", "growing past the cap fails");
  assert.equal(grow(moduleWithMemory(1), 4), 5, "the original grows freely");
});

test("a_declared_maximum_below_the_cap_is_kept", () => {
  const capped = capMemory(moduleWithMemory(1, 2), 4 * PAGE_BYTES);
  assert.equal(grow(capped, 2), "RangeError");
  assert.equal(grow(capped, 1), 2);
});

test("a_memory_that_starts_above_the_cap_is_refused", () => {
  assert.throws(() => capMemory(moduleWithMemory(5), 4 * PAGE_BYTES), /starts at 5 pages/);
});

test("bytes_that_are_not_a_module_are_refused", () => {
  assert.throws(() => capMemory(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])), /not a WebAssembly module/);
});
