// The storage import on node:sqlite: versions and compare-and-swap exactly as
// wit/guard.wit documents them, limits at and past their bounds, and typed
// errors instead of exceptions.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
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

const put = (namespace, key, value, when) => ({ tag: "put", val: { namespace, key, value: bytes(value), when } });
const remove = (namespace, key, when) => ({ tag: "remove", val: { namespace, key, when } });

test("a_batch_with_one_failed_condition_writes_nothing_and_names_that_write", () => {
  const s = tempStorage();
  assert.deepEqual(s.set("n", "a", bytes("1"), any), { tag: "ok", val: 1n });
  const torn = [put("n", "b", "2", absent), put("n", "a", "3", version(1)), put("n", "a", "4", version(1))];
  assert.deepEqual(s.commit(torn), { tag: "err", val: { tag: "conflict", val: 2 } });
  assert.deepEqual(s.get("n", "b"), { tag: "ok", val: undefined });
  assert.deepEqual(s.get("n", "a"), { tag: "ok", val: { value: bytes("1"), version: 1n } });
  // Later writes see earlier ones.
  const chained = [put("n", "b", "2", absent), put("n", "a", "3", version(1)), put("n", "a", "4", version(2)), remove("n", "gone", any)];
  assert.deepEqual(s.commit(chained), { tag: "ok", val: undefined });
  assert.deepEqual(s.get("n", "a"), { tag: "ok", val: { value: bytes("4"), version: 3n } });
  assert.deepEqual(s.commit([remove("n", "gone", version(1))]), { tag: "err", val: { tag: "conflict", val: 0 } });
  assert.deepEqual(s.commit([remove("n", "b", version(1))]), { tag: "ok", val: undefined });
  assert.deepEqual(s.get("n", "b"), { tag: "ok", val: undefined });
});

test("a_batch_over_the_write_limit_or_with_an_oversized_value_is_refused_whole", async () => {
  const { MAX_BATCH_WRITES } = await import("../src/storage.js");
  const s = tempStorage();
  const writes = (n) => Array.from({ length: n }, (_, i) => put("n", `k${i}`, "v", absent));
  assert.deepEqual(s.commit(writes(MAX_BATCH_WRITES + 1)), { tag: "err", val: { tag: "failed", val: { tag: "too-large" } } });
  assert.deepEqual(s.list("n", "", 10, false), { tag: "ok", val: [] });
  assert.deepEqual(s.commit(writes(MAX_BATCH_WRITES)), { tag: "ok", val: undefined });
  const big = { tag: "put", val: { namespace: "n", key: "big", value: new Uint8Array(MAX_VALUE_BYTES + 1), when: any } };
  assert.deepEqual(s.commit([put("n", "x", "1", any), big]), { tag: "err", val: { tag: "failed", val: { tag: "too-large" } } });
  assert.deepEqual(s.get("n", "x"), { tag: "ok", val: undefined });
});

function refusal(s) {
  const r = s.get("n", "k");
  assert.equal(r.tag, "err");
  assert.equal(r.val.tag, "unavailable");
  const c = s.commit([put("n", "k", "v", any)]);
  assert.deepEqual(c.tag, "err");
  assert.equal(c.val.tag, "failed");
  return r.val.val;
}

test("an_empty_foreign_or_newer_database_is_refused_and_left_as_it_was", async () => {
  const { DatabaseSync } = await import("node:sqlite");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-refuse-"));
  const empty = path.join(dir, "empty.db");
  fs.writeFileSync(empty, "");
  assert.match(refusal(new SqliteStorage(empty)), /^the database `.*empty\.db` is empty \(0 bytes\).*delete the file to start a new database$/);
  assert.equal(fs.statSync(empty).size, 0, "an empty file stays empty");

  const foreign = path.join(dir, "foreign.db");
  const other = new DatabaseSync(foreign);
  other.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');");
  other.close();
  const before = fs.readFileSync(foreign);
  assert.match(refusal(new SqliteStorage(foreign)), /is not Warden's \(it has no Warden mark, and tables `notes`\)/);
  assert.ok(fs.readFileSync(foreign).equals(before), "the foreign file is unchanged");
  const marked = path.join(dir, "marked.db");
  const app = new DatabaseSync(marked);
  app.exec("PRAGMA application_id = 1234; CREATE TABLE records (namespace TEXT, key TEXT, value BLOB, version INTEGER);");
  app.close();
  assert.match(refusal(new SqliteStorage(marked)), /its application id is 0x000004d2/);

  const newer = path.join(dir, "newer.db");
  const first = new SqliteStorage(newer);
  assert.deepEqual(first.set("n", "k", bytes("v"), any), { tag: "ok", val: 1n });
  first.close();
  const bump = new DatabaseSync(newer);
  bump.exec("PRAGMA user_version = 2;");
  bump.close();
  assert.match(refusal(new SqliteStorage(newer)), /written by a newer Warden \(schema 2; this one knows up to 1\)/);

  const text = path.join(dir, "text.db");
  fs.writeFileSync(text, "not a database at all, just text\n".repeat(100));
  assert.match(refusal(new SqliteStorage(text)), /cannot be read as SQLite/);
  assert.equal(fs.readFileSync(text, "utf8").startsWith("not a database"), true);
});

test("a_database_of_an_earlier_warden_is_marked_and_kept", async () => {
  const { DatabaseSync } = await import("node:sqlite");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-earlier-"));
  const file = path.join(dir, "old.db");
  const old = new DatabaseSync(file);
  old.exec(`CREATE TABLE records (namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, version INTEGER NOT NULL,
            PRIMARY KEY (namespace, key)) WITHOUT ROWID; INSERT INTO records VALUES ('n', 'k', x'76', 4);`);
  old.close();
  const s = new SqliteStorage(file);
  assert.deepEqual(s.get("n", "k"), { tag: "ok", val: { value: bytes("v"), version: 4n } });
  s.close();
  const check = new DatabaseSync(file);
  assert.equal(Number(Object.values(check.prepare("PRAGMA application_id").get())[0]), 0x57444e31);
  assert.equal(Number(Object.values(check.prepare("PRAGMA user_version").get())[0]), 1);
  check.close();
});

// Guard workers are threads of one process that start together, each opening
// the plugin's database: on a new file all of them create it at once.
const OPENER = `
  const { parentPort, workerData } = require("node:worker_threads");
  const { file, gate, storageUrl, writes } = workerData;
  import(storageUrl).then(({ SqliteStorage }) => {
    Atomics.wait(new Int32Array(gate), 0, 0);
    const s = new SqliteStorage(file);
    const results = [];
    for (let i = 0; i < writes; i++) {
      const key = workerData.name + "/" + i;
      results.push(s.set("n", key, new TextEncoder().encode(key), { tag: "absent" }).tag);
      results.push(s.get("n", key).tag);
    }
    s.close();
    parentPort.postMessage(results);
  });
`;

test("guard_workers_creating_one_new_database_at_once_share_it_and_lose_nothing", async () => {
  const WORKERS = 6;
  const WRITES = 20;
  const storageUrl = new URL("../src/storage.js", import.meta.url).href;
  for (let round = 0; round < 8; round++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-openers-"));
    const file = path.join(dir, "warden.db");
    const gate = new SharedArrayBuffer(4);
    const workers = Array.from({ length: WORKERS }, (_, w) => new Worker(OPENER, { eval: true, workerData: { file, gate, storageUrl, writes: WRITES, name: `w${w}` } }));
    const done = workers.map((w) => new Promise((resolve, reject) => (w.once("message", resolve), w.once("error", reject))));
    // Every worker waits at the gate before it opens the database; all are let through at once.
    await new Promise((resolve) => setTimeout(resolve, 200));
    Atomics.store(new Int32Array(gate), 0, 1);
    Atomics.notify(new Int32Array(gate), 0);
    const results = await Promise.all(done);
    for (const r of results) assert.deepEqual(r, Array(2 * WRITES).fill("ok"), `round ${round}: every write and read answered`);
    const s = new SqliteStorage(file);
    const listed = s.list("n", "", 10_000, false);
    assert.equal(listed.tag, "ok");
    assert.equal(listed.val.length, WORKERS * WRITES, `round ${round}: every write is in the one database`);
    s.close();
    const leftovers = fs.readdirSync(dir).filter((f) => f.endsWith(".new") || f.includes(".new-"));
    assert.deepEqual(leftovers, [], `round ${round}: no temporary database is left behind`);
  }
});
