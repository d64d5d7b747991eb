// The storage import on node:sqlite: versions and compare-and-swap exactly as
// wit/guard.wit documents them, limits at and past their bounds, and typed
// errors instead of exceptions.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SqliteStorage, MAX_VALUE_BYTES, MAX_KEY_BYTES } from "../src/storage.js";

function tempStorage() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-storage-"));
  return new SqliteStorage(path.join(dir, "nested", "t.db"));
}

const bytes = (s) => new TextEncoder().encode(s);
const any = { tag: "any" };
const absent = { tag: "absent" };
const version = (v) => ({ tag: "version", val: BigInt(v) });

test("compare_and_swap_honours_each_condition", () => {
  const s = tempStorage();
  assert.deepEqual(s.set("n", "k", bytes("a"), absent), { tag: "ok", val: 1n });
  assert.deepEqual(s.set("n", "k", bytes("b"), absent), { tag: "err", val: { tag: "conflict" } });
  assert.deepEqual(s.set("n", "k", bytes("b"), version(2)), { tag: "err", val: { tag: "conflict" } });
  assert.deepEqual(s.set("n", "k", bytes("b"), version(1)), { tag: "ok", val: 2n });
  assert.deepEqual(s.set("n", "k", bytes("c"), any), { tag: "ok", val: 3n });
  assert.deepEqual(s.get("n", "k"), { tag: "ok", val: { value: bytes("c"), version: 3n } });
  assert.deepEqual(s.delete("n", "k", version(2)), { tag: "err", val: { tag: "conflict" } });
  assert.deepEqual(s.delete("n", "k", version(3)), { tag: "ok", val: true });
  assert.deepEqual(s.delete("n", "k", any), { tag: "ok", val: false });
  assert.deepEqual(s.get("n", "k"), { tag: "ok", val: undefined });
  // A deleted key starts over at version 1.
  assert.deepEqual(s.set("n", "k", bytes("d"), absent), { tag: "ok", val: 1n });
  // `absent` on delete holds only when nothing is there.
  assert.deepEqual(s.delete("n", "k", absent), { tag: "err", val: { tag: "conflict" } });
});

test("a_conflict_writes_nothing", () => {
  const s = tempStorage();
  s.set("n", "k", bytes("a"), any);
  s.set("n", "k", bytes("b"), version(7));
  assert.deepEqual(s.get("n", "k"), { tag: "ok", val: { value: bytes("a"), version: 1n } });
});

test("list_matches_prefixes_literally_and_case_sensitively_and_orders_both_ways", () => {
  const s = tempStorage();
  for (const k of ["a_1", "a_2", "ab", "a%", "b", "A_9"]) s.set("n", k, bytes(k), any);
  s.set("other", "a_3", bytes("x"), any);
  const keys = (r) => r.val.map((e) => e.key);
  assert.deepEqual(keys(s.list("n", "a_", 10, false)), ["a_1", "a_2"]);
  assert.deepEqual(keys(s.list("n", "a_", 10, true)), ["a_2", "a_1"]);
  assert.deepEqual(keys(s.list("n", "a%", 10, false)), ["a%"]);
  assert.deepEqual(keys(s.list("n", "", 2, false)), ["A_9", "a%"]);
  assert.deepEqual(s.list("n", "b", 10, false).val[0].entry, { value: bytes("b"), version: 1n });
});

test("values_are_capped_at_exactly_the_limit", () => {
  const s = tempStorage();
  assert.deepEqual(s.set("n", "k", new Uint8Array(MAX_VALUE_BYTES + 1), any), { tag: "err", val: { tag: "too-large" } });
  assert.deepEqual(s.get("n", "k"), { tag: "ok", val: undefined });
  assert.deepEqual(s.set("n", "k", new Uint8Array(MAX_VALUE_BYTES), any), { tag: "ok", val: 1n });
});

test("keys_and_namespaces_are_capped_in_bytes", () => {
  const s = tempStorage();
  const at = "k".repeat(MAX_KEY_BYTES);
  const past = "é".repeat(MAX_KEY_BYTES / 2) + "k"; // 1,025 bytes in UTF-8
  assert.deepEqual(s.set("n", at, bytes("v"), any), { tag: "ok", val: 1n });
  assert.deepEqual(s.set("n", past, bytes("v"), any), { tag: "err", val: { tag: "too-large" } });
  assert.deepEqual(s.get(past, "k"), { tag: "err", val: { tag: "too-large" } });
  assert.deepEqual(s.list("n", past, 1, false), { tag: "err", val: { tag: "too-large" } });
});

test("an_unopenable_database_answers_unavailable_on_every_call", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-storage-"));
  const s = new SqliteStorage(dir); // a directory, not a database file
  for (const result of [s.get("n", "k"), s.set("n", "k", bytes("v"), any), s.delete("n", "k", any), s.list("n", "", 1, false)]) {
    assert.equal(result.tag, "err");
    assert.equal(result.val.tag, "unavailable");
  }
});

test("two_handles_on_one_file_never_lose_an_update", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-storage-"));
  const a = new SqliteStorage(path.join(dir, "t.db"));
  const b = new SqliteStorage(path.join(dir, "t.db"));
  assert.deepEqual(a.set("n", "k", bytes("a"), absent), { tag: "ok", val: 1n });
  // b read version 1 too; a wins the race, b's stale write is refused.
  assert.deepEqual(a.set("n", "k", bytes("a2"), version(1)), { tag: "ok", val: 2n });
  assert.deepEqual(b.set("n", "k", bytes("b2"), version(1)), { tag: "err", val: { tag: "conflict" } });
  assert.deepEqual(b.get("n", "k").val.value, bytes("a2"));
});
