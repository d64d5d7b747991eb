// A memory cap for the guest, as the Rust host's `StoreLimits` gives it.
//
// A JavaScript host cannot limit how far a module's own memory grows once it
// is instantiated, but the limit is part of the module: before compiling a
// core module, the guard rewrites the limits of each memory it defines so
// that their maximum is at most the cap. A `memory.grow` past it then fails
// inside the guest, whose allocator reports the failure by trapping; the
// worker ends and the call answers with its failure mode.

/** Size of a WebAssembly page, in bytes. */
export const PAGE_BYTES = 65_536;
/** Default cap, in bytes (64 MiB, the Rust host's default). */
export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;

const MEMORY_SECTION = 5;

function readU32(bytes, at) {
  let value = 0;
  let shift = 0;
  let pos = at;
  for (;;) {
    if (pos >= bytes.length) throw new Error("truncated LEB128");
    const b = bytes[pos++];
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
    if (shift > 35) throw new Error("LEB128 too long");
  }
  return { value, next: pos };
}

function writeU32(value) {
  const out = [];
  let v = value;
  do {
    let b = v & 0x7f;
    v = Math.floor(v / 128);
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

/** Memory-section content with every 32-bit, unshared memory capped at `maxPages`. */
function capSection(content, maxPages) {
  const count = readU32(content, 0);
  const out = [...writeU32(count.value)];
  let pos = count.next;
  for (let i = 0; i < count.value; i++) {
    const flags = content[pos++];
    if (flags !== 0x00 && flags !== 0x01) {
      throw new Error(`memory ${i} has limits flags ${flags} (shared or 64-bit); the cap supports plain 32-bit memories only`);
    }
    const min = readU32(content, pos);
    pos = min.next;
    let max = maxPages;
    if (flags === 0x01) {
      const declared = readU32(content, pos);
      pos = declared.next;
      max = Math.min(declared.value, maxPages);
    }
    if (min.value > max) throw new Error(`memory ${i} starts at ${min.value} pages, more than the cap of ${max}`);
    out.push(0x01, ...writeU32(min.value), ...writeU32(max));
  }
  if (pos !== content.length) throw new Error("unexpected bytes after the memory limits");
  return out;
}

/** Returns `module` (core WebAssembly bytes) with its memories capped at `maxBytes`. */
export function capMemory(module, maxBytes = DEFAULT_MEMORY_BYTES) {
  const bytes = module instanceof Uint8Array ? module : new Uint8Array(module);
  const maxPages = Math.max(1, Math.floor(maxBytes / PAGE_BYTES));
  if (bytes.length < 8 || bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new Error("not a WebAssembly module");
  }
  const parts = [bytes.subarray(0, 8)];
  let pos = 8;
  while (pos < bytes.length) {
    const id = bytes[pos];
    const size = readU32(bytes, pos + 1);
    const start = size.next;
    const end = start + size.value;
    if (end > bytes.length) throw new Error("truncated section");
    if (id === MEMORY_SECTION) {
      const content = capSection(bytes.subarray(start, end), maxPages);
      parts.push(Uint8Array.from([id, ...writeU32(content.length), ...content]));
    } else {
      parts.push(bytes.subarray(pos, end));
    }
    pos = end;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
