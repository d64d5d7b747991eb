// The host side of the `storage` import: versioned key-value records in one
// SQLite file (node:sqlite), the same table the Rust host uses, so both hosts
// can share a database. Writes are compare-and-swap inside an immediate
// transaction. Every failure is returned as a typed `storage-error`; nothing
// here throws into the component.

import { DatabaseSync } from "node:sqlite";
import fs from "node:fs";
import path from "node:path";

/** Largest value a record may hold, in bytes (1 MiB). */
export const MAX_VALUE_BYTES = 1024 * 1024;
/** Longest namespace or key, in bytes. */
export const MAX_KEY_BYTES = 1024;
/** Most records one `list` call returns. */
export const MAX_LIST = 10_000;
/** How long a writer waits for another writer's lock, in milliseconds. */
export const BUSY_TIMEOUT_MS = 5_000;

// SQLite primary result codes that mean "the store cannot be used right now".
const UNAVAILABLE_CODES = new Set([
  5, // SQLITE_BUSY
  6, // SQLITE_LOCKED
  8, // SQLITE_READONLY
  10, // SQLITE_IOERR
  11, // SQLITE_CORRUPT
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
  26, // SQLITE_NOTADB
]);

const ok = (val) => ({ tag: "ok", val });
const err = (val) => ({ tag: "err", val });
const CONFLICT = err({ tag: "conflict" });
const TOO_LARGE = err({ tag: "too-large" });

function classify(e) {
  const code = typeof e?.errcode === "number" ? e.errcode & 0xff : undefined;
  const message = String(e?.message ?? e);
  if (code === undefined || UNAVAILABLE_CODES.has(code)) return err({ tag: "unavailable", val: message });
  return err({ tag: "other", val: message });
}

function keyTooLarge(...parts) {
  return parts.some((p) => Buffer.byteLength(p, "utf8") > MAX_KEY_BYTES);
}

function holds(current, when) {
  switch (when?.tag) {
    case "any":
      return true;
    case "absent":
      return current === undefined;
    case "version":
      return current !== undefined && current === BigInt(when.val);
    default:
      return false;
  }
}

/** Records in a SQLite file; `open` never throws, a failure is reported on every call. */
export class SqliteStorage {
  #db = undefined;
  #failure = undefined;
  #stmts = {};

  constructor(file) {
    this.file = file;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
      // WAL lets readers proceed during a write; NORMAL sync is durable across
      // application crashes, which is what a policy ledger needs.
      db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
      db.exec(`CREATE TABLE IF NOT EXISTS records (
                 namespace TEXT NOT NULL,
                 key TEXT NOT NULL,
                 value BLOB NOT NULL,
                 version INTEGER NOT NULL,
                 PRIMARY KEY (namespace, key)
               ) WITHOUT ROWID;`);
      const prepare = (sql) => {
        const stmt = db.prepare(sql);
        stmt.setReadBigInts(true);
        return stmt;
      };
      this.#stmts = {
        get: prepare("SELECT value, version FROM records WHERE namespace = ? AND key = ?"),
        version: prepare("SELECT version FROM records WHERE namespace = ? AND key = ?"),
        upsert: prepare(`INSERT INTO records (namespace, key, value, version) VALUES (?, ?, ?, ?)
                         ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, version = excluded.version`),
        delete: prepare("DELETE FROM records WHERE namespace = ? AND key = ?"),
        // substr, not LIKE: LIKE ignores ASCII case, and keys are case-sensitive.
        listAsc: prepare(`SELECT key, value, version FROM records
                          WHERE namespace = ? AND substr(key, 1, length(?)) = ? ORDER BY key ASC LIMIT ?`),
        listDesc: prepare(`SELECT key, value, version FROM records
                           WHERE namespace = ? AND substr(key, 1, length(?)) = ? ORDER BY key DESC LIMIT ?`),
      };
      this.#db = db;
    } catch (e) {
      this.#failure = classify(e);
    }
  }

  close() {
    try {
      this.#db?.close();
    } catch {
      // closing a broken handle has nothing left to report
    }
    this.#db = undefined;
  }

  #current(namespace, key) {
    const row = this.#stmts.version.get(namespace, key);
    return row === undefined ? undefined : BigInt(row.version);
  }

  /** Runs `f` in an immediate transaction; any SQLite failure rolls back. */
  #write(f) {
    if (this.#failure) return this.#failure;
    const db = this.#db;
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (e) {
      return classify(e);
    }
    try {
      const result = f();
      if (result.tag === "ok") db.exec("COMMIT");
      else db.exec("ROLLBACK");
      return result;
    } catch (e) {
      try {
        db.exec("ROLLBACK");
      } catch {
        // the transaction is already gone
      }
      return classify(e);
    }
  }

  get(namespace, key) {
    if (keyTooLarge(namespace, key)) return TOO_LARGE;
    if (this.#failure) return this.#failure;
    try {
      const row = this.#stmts.get.get(namespace, key);
      if (row === undefined) return ok(undefined);
      return ok({ value: new Uint8Array(row.value), version: BigInt(row.version) });
    } catch (e) {
      return classify(e);
    }
  }

  set(namespace, key, value, when) {
    if (keyTooLarge(namespace, key) || value.byteLength > MAX_VALUE_BYTES) return TOO_LARGE;
    return this.#write(() => {
      const current = this.#current(namespace, key);
      if (!holds(current, when)) return CONFLICT;
      const version = current === undefined ? 1n : current + 1n;
      this.#stmts.upsert.run(namespace, key, value, version);
      return ok(version);
    });
  }

  delete(namespace, key, when) {
    if (keyTooLarge(namespace, key)) return TOO_LARGE;
    return this.#write(() => {
      const current = this.#current(namespace, key);
      if (!holds(current, when)) return CONFLICT;
      if (current === undefined) return ok(false);
      this.#stmts.delete.run(namespace, key);
      return ok(true);
    });
  }

  list(namespace, prefix, limit, reverse) {
    if (keyTooLarge(namespace, prefix)) return TOO_LARGE;
    if (this.#failure) return this.#failure;
    try {
      const stmt = reverse ? this.#stmts.listDesc : this.#stmts.listAsc;
      const rows = stmt.all(namespace, prefix, prefix, Math.min(limit, MAX_LIST));
      return ok(
        rows.map((row) => ({
          key: row.key,
          entry: { value: new Uint8Array(row.value), version: BigInt(row.version) },
        })),
      );
    } catch (e) {
      return classify(e);
    }
  }
}
