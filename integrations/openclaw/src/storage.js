// The host side of the `storage` import: versioned key-value records in one
// SQLite file (node:sqlite), the same table the Rust host uses, so both hosts
// can share a database. Writes are compare-and-swap inside an immediate
// transaction. Every failure is returned as a typed `storage-error`; nothing
// here throws into the component.

import { DatabaseSync } from "node:sqlite";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { threadId } from "node:worker_threads";

/** Largest value a record may hold, in bytes (1 MiB). */
export const MAX_VALUE_BYTES = 1024 * 1024;
/** Longest namespace or key, in bytes. */
export const MAX_KEY_BYTES = 1024;
/** Most records one `list` call returns. */
export const MAX_LIST = 10_000;
/** How long a writer waits for another writer's lock, in milliseconds. */
export const BUSY_TIMEOUT_MS = 5_000;
/** Most writes one atomic batch may hold; a longer batch is refused as `too-large`. */
export const MAX_BATCH_WRITES = 256;
/** `PRAGMA application_id` of a Warden database (`WDN1`), as the Rust host writes it. */
export const APPLICATION_ID = 0x57444e31;
/** `PRAGMA user_version` of the schema this host writes; a greater one is a newer Warden's. */
export const SCHEMA_VERSION = 1;

const SCHEMA = `CREATE TABLE IF NOT EXISTS records (
                 namespace TEXT NOT NULL,
                 key TEXT NOT NULL,
                 value BLOB NOT NULL,
                 version INTEGER NOT NULL,
                 PRIMARY KEY (namespace, key)
               ) WITHOUT ROWID;`;

const unavailable = (message) => err({ tag: "unavailable", val: message });

/**
 * Creates a new database at `file`: built under a temporary name next to it
 * and linked into place only where no file exists, so no process sees a
 * half-made database and two starting together share one.
 */
function create(file) {
  // Every guard worker is a thread of one process and they start together: the
  // temporary name is claimed exclusively (`wx`), so no two of them ever build in
  // one file, or remove the journal of a database another still has open.
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${threadId}.${randomUUID()}.new`);
  fs.closeSync(fs.openSync(temp, "wx", 0o600));
  try {
    const db = new DatabaseSync(temp);
    db.exec("PRAGMA journal_mode = WAL;");
    db.exec(`BEGIN; PRAGMA application_id = ${APPLICATION_ID}; PRAGMA user_version = ${SCHEMA_VERSION}; ${SCHEMA} COMMIT;`);
    db.close();
    try {
      fs.linkSync(temp, file);
    } catch (e) {
      // Another process created it first: use theirs.
      if (e?.code !== "EEXIST") throw e;
    }
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(temp + suffix, { force: true });
  }
}

/** Refuses a database that is not Warden's or of a newer schema; marks an earlier Warden's. */
function checkSchema(db, file) {
  const pragma = (name) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
  const applicationId = pragma("application_id") >>> 0;
  const userVersion = pragma("user_version");
  const foreign = (what) =>
    `the database \`${file}\` is not Warden's (${what}); Warden does not write to another program's database: ` +
    "configure Warden's database or a path where no file exists";
  if (applicationId === APPLICATION_ID) {
    if (userVersion > SCHEMA_VERSION) {
      return (
        `the database \`${file}\` was written by a newer Warden (schema ${userVersion}; this one knows up to ` +
        `${SCHEMA_VERSION}); run a Warden at least as new as the one that wrote it`
      );
    }
    db.exec(SCHEMA);
    return undefined;
  }
  if (applicationId !== 0) return foreign(`its application id is 0x${applicationId.toString(16).padStart(8, "0")}`);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => r.name);
  const columns = db.prepare("SELECT name FROM pragma_table_info('records') ORDER BY cid").all().map((r) => r.name);
  const earlier = tables.join() === "records" && columns.join() === "namespace,key,value,version" && userVersion === 0;
  if (!earlier) {
    if (tables.length === 0) return foreign(`it has no Warden mark and no tables, user version ${userVersion}`);
    return foreign(`it has no Warden mark, and tables ${tables.slice(0, 5).map((t) => `\`${t}\``).join(", ")}`);
  }
  db.exec(`BEGIN IMMEDIATE; PRAGMA application_id = ${APPLICATION_ID}; PRAGMA user_version = ${SCHEMA_VERSION}; COMMIT;`);
  return undefined;
}

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
    // Refused, with a message naming the file and what to do, as the Rust
    // host refuses them: an empty (0-byte) file, a file that is not SQLite, a
    // database that is not Warden's and one of a newer schema. Every call then
    // answers `unavailable`, so tool calls and outbound messages fail closed.
    // A new database is created only where no file exists.
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      let stat;
      try {
        stat = fs.statSync(file);
      } catch (e) {
        if (e?.code !== "ENOENT") throw e;
      }
      if (stat === undefined) create(file);
      else if (stat.isDirectory()) {
        this.#failure = unavailable(`the database \`${file}\` is a folder; configure a file path`);
        return;
      } else if (stat.size === 0) {
        this.#failure = unavailable(
          `the database \`${file}\` is empty (0 bytes), so its pins, approvals, consents and opt-outs are gone or ` +
            "were never there; restore it from a backup, or delete the file to start a new database",
        );
        return;
      }
      const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
      // WAL lets readers proceed during a write; NORMAL sync is durable across
      // application crashes, which is what a policy ledger needs.
      let refusal;
      try {
        // The marks are read before anything is set: a foreign file is refused unchanged.
        refusal = checkSchema(db, file);
        if (refusal === undefined) db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
      } catch (e) {
        refusal =
          `the database \`${file}\` cannot be read as SQLite (${e?.message ?? e}); it is damaged or not a database: ` +
          "restore it from a backup, or configure Warden's database or a path where no file exists";
      }
      if (refusal !== undefined) {
        db.close();
        this.#failure = unavailable(refusal);
        return;
      }
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

  /** Applies every write in order, each condition tested against the state the earlier writes left, or none. */
  commit(writes) {
    if (writes.length > MAX_BATCH_WRITES) return err({ tag: "failed", val: { tag: "too-large" } });
    for (const w of writes) {
      const { namespace, key } = w.val;
      if (keyTooLarge(namespace, key) || (w.tag === "put" && w.val.value.byteLength > MAX_VALUE_BYTES)) {
        return err({ tag: "failed", val: { tag: "too-large" } });
      }
    }
    const result = this.#write(() => {
      for (const [i, w] of writes.entries()) {
        const { namespace, key, when } = w.val;
        const current = this.#current(namespace, key);
        if (!holds(current, when)) return err({ tag: "conflict", val: i });
        if (w.tag === "put") {
          this.#stmts.upsert.run(namespace, key, w.val.value, current === undefined ? 1n : current + 1n);
        } else if (current !== undefined) {
          this.#stmts.delete.run(namespace, key);
        }
      }
      return ok(undefined);
    });
    // A storage failure of the transaction itself is reported as `failed`.
    if (result.tag === "err" && result.val.tag !== "conflict" && result.val.tag !== "failed") {
      return err({ tag: "failed", val: result.val });
    }
    return result;
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
