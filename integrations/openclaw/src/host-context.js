// What the plugin declares to the component about itself at start.
//
// Approval keys are authenticated with an HMAC under a secret the agent cannot
// read: 32 random bytes generated once into `<db>.key` beside the database
// (`warden.db` has `warden.db.key`), created readable by its owner only (mode
// 0600). Every process on the same database shares it. A key file of another
// size, or one group or others may read, is refused (fail closed).
//
// Protected paths: the database and its -wal, -shm and -journal files, the key
// file, OpenClaw's configuration file (it holds the plugin entry and Warden's
// configuration) and the plugin's own folder. The agent's tool calls may not
// read or change them (`self.protected-file`), open the database with a client
// (`self.database-client`) or run `warden`'s admin commands (`self.admin-command`).

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";

/** Bytes of a generated approval secret. */
export const SECRET_BYTES = 32;

export function secretPath(dbPath) {
  return `${dbPath}.key`;
}

function readSecret(file) {
  const fd = fs.openSync(file, "r");
  try {
    const mode = fs.fstatSync(fd).mode;
    if (process.platform !== "win32" && (mode & 0o077) !== 0) {
      throw new Error(
        `it may be read by group or others (mode ${(mode & 0o777).toString(8)}); it must be readable by its owner only (\`chmod 600\`)`,
      );
    }
    const buf = Buffer.alloc(SECRET_BYTES + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    if (n !== SECRET_BYTES) {
      throw new Error(`it holds ${n} bytes, not the ${SECRET_BYTES} this host writes; delete it to generate a new one`);
    }
    return new Uint8Array(buf.subarray(0, SECRET_BYTES));
  } finally {
    fs.closeSync(fd);
  }
}

/** The approval secret of the database: read, or generated once. Throws with the file named. */
export function approvalSecret(dbPath) {
  const file = secretPath(dbPath);
  try {
    try {
      return readSecret(file);
    } catch (e) {
      if (e?.code !== "ENOENT") throw e;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const secret = crypto.randomBytes(SECRET_BYTES);
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(6).toString("hex")}`;
    fs.writeFileSync(tmp, secret, { mode: 0o600, flag: "wx" });
    try {
      fs.linkSync(tmp, file); // fails if another process created it first
      return new Uint8Array(secret);
    } catch (e) {
      if (e?.code !== "EEXIST") throw e;
      return readSecret(file);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  } catch (e) {
    throw new Error(`cannot use the approval secret ${file}: ${e.message}`);
  }
}

function forms(p) {
  const abs = path.resolve(p);
  const out = [abs];
  try {
    const real = fs.realpathSync(abs);
    if (!out.includes(real)) out.push(real);
  } catch {
    // not there yet: the textual form is what the agent can name
  }
  return out;
}

/** The `host-context` record as jco expects it. */
export function declare({ dbPath, secret, openclawConfig, pluginDir }) {
  const databases = ["", "-wal", "-shm", "-journal"].flatMap((s) => forms(`${dbPath}${s}`));
  const protectedPaths = [...forms(secretPath(dbPath))];
  if (openclawConfig) protectedPaths.push(...forms(openclawConfig));
  if (pluginDir) protectedPaths.push(...forms(pluginDir).map((p) => `${p.replace(/\/+$/, "")}/**`));
  return {
    approvalSecret: secret,
    databases,
    protectedPaths: [...new Set(protectedPaths)],
    adminPrograms: ["warden"],
  };
}

/** A context with a fresh secret and no files, for a guard whose storage does not outlive it. */
export function ephemeral() {
  return { approvalSecret: new Uint8Array(crypto.randomBytes(SECRET_BYTES)), databases: [], protectedPaths: [], adminPrograms: ["warden"] };
}
