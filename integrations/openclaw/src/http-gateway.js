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

/** Longest request URL the gateway accepts, in bytes (8 KiB). */
export const MAX_URL_BYTES = 8 * 1024;

/**
 * Parses `url` in the one strict form the gateway sends, or returns undefined:
 * the same grammar as the Rust host's `parse_strict` (host-example/src/http.rs),
 * checked against the shared table tests/fixtures/url-allowlist/cases.json.
 */
function parseStrict(url) {
  if (typeof url !== "string" || url.length > MAX_URL_BYTES) return undefined;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x5c || c === 0x23) return undefined; // controls, space, non-ASCII, `\`, `#`
  }
  const sep = url.indexOf("://");
  if (sep < 0) return undefined;
  const scheme = url.slice(0, sep).toLowerCase();
  const defaultPort = scheme === "http" ? 80 : scheme === "https" ? 443 : undefined;
  if (defaultPort === undefined) return undefined;
  const rest = url.slice(sep + 3);
  let end = rest.search(/[/?]/);
  if (end < 0) end = rest.length;
  const hostPort = parseHostPort(rest.slice(0, end));
  if (!hostPort) return undefined;
  const tail = rest.slice(end);
  const q = tail.indexOf("?");
  const path = q < 0 ? tail : tail.slice(0, q);
  const segments = parseSegments(path);
  if (!segments) return undefined;
  return { scheme, host: hostPort.host, port: hostPort.port ?? defaultPort, segments, hasQuery: q >= 0 };
}

function parseHostPort(authority) {
  if (authority.includes("@") || authority.includes("%")) return undefined;
  let host;
  let port;
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close < 0) return undefined;
    const addr = authority.slice(1, close);
    if (addr === "" || !/^[0-9a-fA-F:.]+$/.test(addr)) return undefined;
    const after = authority.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) return undefined;
    host = `[${addr.toLowerCase()}]`;
    port = after === "" ? undefined : after.slice(1);
  } else {
    const colon = authority.indexOf(":");
    host = colon < 0 ? authority : authority.slice(0, colon);
    port = colon < 0 ? undefined : authority.slice(colon + 1);
    if (host.split(".").some((label) => label === "") || !/^[A-Za-z0-9.-]+$/.test(host)) return undefined;
    host = host.toLowerCase();
  }
  if (port === undefined) return { host, port: undefined };
  if (!/^[1-9][0-9]{0,4}$/.test(port) || Number(port) > 65535) return undefined;
  return { host, port: Number(port) };
}

function parseSegments(path) {
  if (path === "") return [];
  if (!path.startsWith("/") || path.includes(";")) return undefined;
  const parts = path.slice(1).split("/");
  const out = [];
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === "") {
      if (i + 1 === parts.length) break;
      return undefined;
    }
    const segment = decodeSegment(parts[i]);
    if (segment === undefined || /^\.+$/.test(segment)) return undefined;
    out.push(segment);
  }
  return out;
}

/**
 * Decodes one segment's percent-escapes once. An escape must be two hex digits
 * and must not decode to a dot, slash, backslash, percent sign (double
 * encoding), semicolon, control byte or non-ASCII byte.
 */
function decodeSegment(raw) {
  let out = "";
  for (let i = 0; i < raw.length; ) {
    if (raw[i] !== "%") {
      out += raw[i];
      i += 1;
      continue;
    }
    const hex = raw.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
    const b = parseInt(hex, 16);
    if (b < 0x20 || b >= 0x7f || ".\\/%;".includes(String.fromCharCode(b))) return undefined;
    out += String.fromCharCode(b);
    i += 3;
  }
  return out;
}

/**
 * Whether `url` lies inside `base`: both in the strict form, the same scheme,
 * host and port, the base without a query, and the base's decoded segments a
 * prefix of the URL's.
 */
export function within(base, url) {
  const b = parseStrict(base);
  const u = parseStrict(url);
  if (!b || !u || b.hasQuery) return false;
  if (b.scheme !== u.scheme || b.host !== u.host || b.port !== u.port) return false;
  return b.segments.length <= u.segments.length && b.segments.every((seg, i) => u.segments[i] === seg);
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
    // node:http throws on a header it cannot send (CR, LF, NUL, a name that is not a token);
    // answer that as the Rust host does, a transport error before any connection.
    for (const [name, value] of Object.entries(headers)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\0-\x08\x0a-\x1f\x7f]/.test(String(value))) {
        return err("transport", `invalid request: header \`${name}\` cannot be sent`);
      }
    }
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
