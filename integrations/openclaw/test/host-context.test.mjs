import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { approvalSecret, declare, secretPath, SECRET_BYTES } from "../src/host-context.js";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "warden-hostctx-"));

test("the approval secret is generated once, private, and read back the same", () => {
  const db = path.join(tmp(), "warden.db");
  const first = approvalSecret(db);
  assert.equal(first.length, SECRET_BYTES);
  assert.equal(fs.statSync(secretPath(db)).mode & 0o777, 0o600);
  assert.deepEqual(approvalSecret(db), first);
});

test("a key file others may read, or of another size, is refused naming the file", () => {
  const db = path.join(tmp(), "warden.db");
  approvalSecret(db);
  fs.chmodSync(secretPath(db), 0o644);
  assert.throws(() => approvalSecret(db), /warden\.db\.key: it may be read by group or others .*chmod 600/);
  fs.chmodSync(secretPath(db), 0o600);
  fs.writeFileSync(secretPath(db), "short");
  assert.throws(() => approvalSecret(db), /holds 5 bytes, not the 32/);
});

test("the declared context protects the database files, the key, OpenClaw's config and the plugin folder", () => {
  const dir = tmp();
  const db = path.join(dir, "warden.db");
  const ctx = declare({ dbPath: db, secret: approvalSecret(db), openclawConfig: "/home/me/.openclaw/openclaw.json", pluginDir: "/opt/warden" });
  for (const suffix of ["", "-wal", "-shm", "-journal"]) assert.ok(ctx.databases.includes(`${db}${suffix}`), suffix);
  assert.ok(ctx.protectedPaths.includes(`${db}.key`));
  assert.ok(ctx.protectedPaths.includes("/home/me/.openclaw/openclaw.json"));
  assert.ok(ctx.protectedPaths.includes("/opt/warden/**"));
  assert.deepEqual(ctx.adminPrograms, ["warden"]);
  assert.equal(ctx.approvalSecret.length, 32);
});
