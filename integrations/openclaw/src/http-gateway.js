// The host side of the `http` import: an allow-listed gateway with the same
// rules as the Rust host's (host-example/src/http.rs). The component names a
// destination and a URL; anything outside that destination's base URL is
// refused before a connection is attempted. The gateway attaches the
// destination's credential itself (from an environment variable, or a key
// file reread when it changes), drops credential headers the component sets,
// enforces the request's timeout, caps the response size and never follows a
// redirect (node:http does not follow them). The component never sees a key.
//
// It runs on the main thread, asynchronously: the guard worker that needs a
// response blocks only itself (see http-bridge.js), never OpenClaw.

import http from "node:http";
import https from "node:https";
import fs from "node:fs";

/** Longest timeout a request may ask for, in milliseconds. */
export const MAX_TIMEOUT_MS = 60_000;
/** Most requests of one `send-all` batch that run at the same time. */
export const MAX_CONCURRENT = 32;
/** Largest request body, in bytes (4 MiB). */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** Default response size cap, in bytes, when a destination sets none. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** Headers the component may never set: credentials and framing belong to the host. */
const RESERVED_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "host", "content-length"]);

const ok = (val) => ({ tag: "ok", val });
const err = (tag, val) => (val === undefined ? { tag: "err", val: { tag } } : { tag: "err", val: { tag, val } });

/**
 * Whether `url` lies inside `base`: the same prefix ending at a path boundary,
 * and no dot segments that a server could resolve outside it.
 */
export function within(base, url) {
  const trimmed = base.replace(/\/+$/, "");
  if (!url.startsWith(trimmed)) return false;
  const rest = url.slice(trimmed.length);
  const boundary = rest === "" || rest.startsWith("/") || rest.startsWith("?");
  const pathPart = rest.split(/[?#]/)[0] ?? "";
  const dotSegment = pathPart.split("/").some((seg) => {
    const lower = seg.toLowerCase();
    return seg === "." || seg === ".." || lower === "%2e" || lower.includes("%2e%2e");
  });
  return boundary && !dotSegment && !url.includes("\\") && !url.includes("@");
}

function joinScheme(scheme, key) {
  return scheme === "" ? key : `${scheme} ${key}`;
}

/** Reads the `destinations` section of a configuration the component accepted. */
export function destinationsFrom(config) {
  const list = Array.isArray(config?.destinations) ? config.destinations : [];
  return list.map((d) => ({
    name: d.name,
    baseUrl: d.baseUrl,
    credential: d.credential
      ? {
          env: d.credential.env,
          file: d.credential.file,
          header: d.credential.header ?? "authorization",
          scheme: d.credential.scheme ?? "Bearer",
        }
      : undefined,
    maxResponseBytes: d.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  }));
}

/** The allow-listed HTTP client behind the `http` import. */
export class HttpGateway {
  #fileKeys = new Map();

  /** `env` is where `credential.env` names are looked up (the process environment by default). */
  constructor(destinations, { env = process.env } = {}) {
    this.destinations = destinations;
    this.env = env;
  }

  #allowed(name, url) {
    const dest = this.destinations.find((d) => d.name === name);
    return dest && within(dest.baseUrl, url) ? dest : undefined;
  }

  #key(credential) {
    if (credential.env) {
      const key = String(this.env[credential.env] ?? "").trim();
      return key === "" ? undefined : key;
    }
    if (!credential.file) return undefined;
    let stat;
    try {
      stat = fs.statSync(credential.file);
    } catch {
      return undefined;
    }
    const cached = this.#fileKeys.get(credential.file);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.key;
    let key;
    try {
      key = fs.readFileSync(credential.file, "utf8").trim();
    } catch {
      return undefined;
    }
    if (key === "") {
      this.#fileKeys.delete(credential.file);
      return undefined;
    }
    this.#fileKeys.set(credential.file, { mtimeMs: stat.mtimeMs, size: stat.size, key });
    return key;
  }

  /** Sends one request; resolves to a WIT `result<response, http-error>`, never rejects. */
  async send(req) {
    const dest = this.#allowed(req.destination, req.url);
    if (!dest) return err("denied");
    const body = req.body ?? new Uint8Array(0);
    if (body.byteLength > MAX_REQUEST_BYTES) return err("too-large");
    let credential;
    if (dest.credential) {
      const key = this.#key(dest.credential);
      if (key === undefined) return err("missing-credential");
      credential = { header: dest.credential.header, value: joinScheme(dest.credential.scheme, key) };
    }
    const timeoutMs = Math.min(Number(req.timeoutMs ?? 0), MAX_TIMEOUT_MS);
    if (timeoutMs <= 0) return err("timeout");
    let target;
    try {
      target = new URL(req.url);
    } catch (e) {
      return err("transport", `invalid request: ${e.message}`);
    }
    const headers = {};
    for (const [name, value] of req.headers ?? []) {
      const lower = String(name).toLowerCase();
      if (RESERVED_HEADERS.has(lower) || (credential && credential.header.toLowerCase() === lower)) continue;
      headers[name] = value;
    }
    if (credential) headers[credential.header] = credential.value;
    headers["content-length"] = String(body.byteLength);
    const client = target.protocol === "https:" ? https : target.protocol === "http:" ? http : undefined;
    if (!client) return err("denied");
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const request = client.request(target, { method: String(req.method).toUpperCase(), headers, agent: false }, (res) => {
        const chunks = [];
        let size = 0;
        res.on("data", (chunk) => {
          size += chunk.length;
          if (size > dest.maxResponseBytes) {
            finish(err("too-large"));
            res.destroy();
            request.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => {
          const pairs = [];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
          finish(ok({ status: res.statusCode ?? 0, headers: pairs, body: new Uint8Array(Buffer.concat(chunks)) }));
        });
        res.on("error", (e) => finish(err("transport", e.message)));
      });
      const timer = setTimeout(() => {
        finish(err("timeout"));
        request.destroy();
      }, timeoutMs);
      request.on("error", (e) => finish(err("transport", e.message)));
      request.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
    });
  }

  /** Sends every request concurrently (at most MAX_CONCURRENT at a time); answers in request order. */
  async sendAll(reqs) {
    const out = new Array(reqs.length);
    let next = 0;
    const lane = async () => {
      while (next < reqs.length) {
        const i = next++;
        out[i] = await this.send(reqs[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT, reqs.length) }, lane));
    return out;
  }
}
