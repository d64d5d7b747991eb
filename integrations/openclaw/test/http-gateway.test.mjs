// The allow-listed HTTP gateway: the same rules as the Rust host's
// (host-example/src/http.rs), against a real loopback server.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { HttpGateway, within, destinationsFrom, MAX_REQUEST_BYTES, MAX_URL_BYTES } from "../src/http-gateway.js";

let server;
let base;
const seen = [];
let connections = 0;

before(async () => {
  server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      seen.push({ url: req.url, method: req.method, headers: req.headers, body: Buffer.concat(parts).toString() });
      res.socket.setNoDelay(true);
      if (req.url.startsWith("/v1/slow")) {
        setTimeout(() => res.end("late"), 1_000);
      } else if (req.url.startsWith("/v1/big")) {
        res.end("x".repeat(4096));
      } else if (req.url.startsWith("/v1/redirect")) {
        res.writeHead(302, { location: `${base}/v1/echo` });
        res.end();
      } else {
        res.writeHead(201, { "x-answer": "yes" });
        res.end("hello");
      }
    });
  });
  server.on("connection", () => (connections += 1));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

const request = (over) => ({
  destination: "api",
  method: "post",
  url: `${base}/v1/echo`,
  headers: [],
  body: new TextEncoder().encode("{}"),
  timeoutMs: 2_000,
  ...over,
});

function gateway(credential, extra = {}) {
  return new HttpGateway(
    destinationsFrom({ destinations: [{ name: "api", baseUrl: `${base}/v1`, credential, maxResponseBytes: 1024, ...extra }] }),
    { env: { API_KEY: " sk-env \n" } },
  );
}

// The shared table every host's gateway runs (tests/fixtures/url-allowlist).
const TABLE = JSON.parse(
  fs.readFileSync(new URL("../../../tests/fixtures/url-allowlist/cases.json", import.meta.url), "utf8"),
);
const LOOPBACK = "127.0.0.1:9";
const padded = (c, url) => (c.padTo ? url.padEnd(c.padTo, "a") : url);

test("every_url_in_the_shared_table_gets_its_expected_answer", () => {
  assert.equal(TABLE.maxUrlBytes, MAX_URL_BYTES);
  const wrong = TABLE.cases.filter((c) => within(c.base, padded(c, c.url)) !== c.allow).map((c) => c.name);
  assert.deepEqual(wrong, []);
  assert.ok(TABLE.cases.length > 90, `${TABLE.cases.length} cases`);
});

test("every_loopback_row_of_the_shared_table_is_sent_or_denied_without_connecting", async () => {
  const here = base.slice("http://".length);
  let sent = 0;
  let denied = 0;
  for (const c of TABLE.cases.filter((c) => c.base.includes(LOOPBACK))) {
    const b = c.base.replace(LOOPBACK, here);
    const url = padded(c, c.url.replace(LOOPBACK, here));
    assert.equal(within(b, url), c.allow, `on the live port: ${c.name}`);
    const g = new HttpGateway(destinationsFrom({ destinations: [{ name: "api", baseUrl: b }] }));
    const before = connections;
    const out = await g.send(request({ url, method: "get", body: new Uint8Array(0) }));
    if (c.allow) {
      assert.equal(out.tag, "ok", `${c.name}: ${JSON.stringify(out)}`);
      sent += 1;
    } else {
      assert.deepEqual(out, { tag: "err", val: { tag: "denied" } }, c.name);
      assert.equal(connections, before, `${c.name}: no connection`);
      denied += 1;
    }
  }
  assert.ok(sent >= 5 && denied >= 60, `${sent} sent, ${denied} denied`);
});

test("a_url_outside_the_destination_is_denied_without_connecting", async () => {
  const before = connections;
  const g = gateway();
  assert.deepEqual(await g.send(request({ url: `${base}/admin` })), { tag: "err", val: { tag: "denied" } });
  assert.deepEqual(await g.send(request({ destination: "other" })), { tag: "err", val: { tag: "denied" } });
  assert.equal(connections, before);
});

test("the_host_attaches_the_credential_and_drops_the_components_credential_headers", async () => {
  const g = gateway({ env: "API_KEY" });
  const r = await g.send(
    request({ headers: [["Authorization", "Bearer stolen"], ["Cookie", "c=1"], ["Host", "evil"], ["x-ok", "1"]] }),
  );
  assert.equal(r.tag, "ok");
  assert.equal(r.val.status, 201);
  assert.deepEqual(new TextDecoder().decode(r.val.body), "hello");
  assert.ok(r.val.headers.some(([k, v]) => k.toLowerCase() === "x-answer" && v === "yes"));
  const got = seen.at(-1).headers;
  assert.equal(got.authorization, "Bearer sk-env");
  assert.equal(got.cookie, undefined);
  assert.equal(got.host, new URL(base).host);
  assert.equal(got["x-ok"], "1");
});

test("a_custom_credential_header_and_empty_scheme_are_honoured", async () => {
  const g = gateway({ env: "API_KEY", header: "x-api-key", scheme: "" });
  await g.send(request({ headers: [["X-Api-Key", "stolen"]] }));
  assert.equal(seen.at(-1).headers["x-api-key"], "sk-env");
});

test("a_key_file_is_reread_when_it_changes", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "warden-key-")), "key");
  fs.writeFileSync(file, "first\n");
  const g = gateway({ file });
  await g.send(request());
  assert.equal(seen.at(-1).headers.authorization, "Bearer first");
  fs.writeFileSync(file, "second-key\n");
  await g.send(request());
  assert.equal(seen.at(-1).headers.authorization, "Bearer second-key");
  fs.writeFileSync(file, "  \n");
  assert.deepEqual(await g.send(request()), { tag: "err", val: { tag: "missing-credential" } });
});

test("a_missing_credential_is_reported_before_connecting", async () => {
  const before = connections;
  assert.deepEqual(await gateway({ env: "NOT_SET" }).send(request()), { tag: "err", val: { tag: "missing-credential" } });
  assert.equal(connections, before);
});

test("the_timeout_is_enforced_and_zero_means_no_time", async () => {
  const g = gateway();
  const started = Date.now();
  assert.deepEqual(await g.send(request({ url: `${base}/v1/slow`, timeoutMs: 200 })), { tag: "err", val: { tag: "timeout" } });
  assert.ok(Date.now() - started < 900);
  assert.deepEqual(await g.send(request({ timeoutMs: 0 })), { tag: "err", val: { tag: "timeout" } });
});

test("responses_over_the_destination_cap_are_refused", async () => {
  assert.deepEqual(await gateway().send(request({ url: `${base}/v1/big` })), { tag: "err", val: { tag: "too-large" } });
  const r = await gateway(undefined, { maxResponseBytes: 4096 }).send(request({ url: `${base}/v1/big` }));
  assert.equal(r.tag, "ok");
  assert.equal(r.val.body.byteLength, 4096);
});

test("request_bodies_over_the_cap_are_refused", async () => {
  const r = await gateway().send(request({ body: new Uint8Array(MAX_REQUEST_BYTES + 1) }));
  assert.deepEqual(r, { tag: "err", val: { tag: "too-large" } });
});

test("redirects_are_returned_not_followed", async () => {
  const count = seen.length;
  const r = await gateway().send(request({ url: `${base}/v1/redirect`, method: "get", body: new Uint8Array(0) }));
  assert.equal(r.tag, "ok");
  assert.equal(r.val.status, 302);
  assert.equal(seen.length, count + 1);
});

test("transport_failures_are_typed", async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const g = new HttpGateway(destinationsFrom({ destinations: [{ name: "api", baseUrl: `http://127.0.0.1:${port}` }] }));
  const r = await g.send(request({ url: `http://127.0.0.1:${port}/x` }));
  assert.equal(r.tag, "err");
  assert.equal(r.val.tag, "transport");
});

test("send_all_runs_concurrently_and_answers_in_request_order", async () => {
  const g = gateway();
  const started = Date.now();
  const out = await g.sendAll([
    request({ url: `${base}/v1/slow?1`, timeoutMs: 3_000 }),
    request({ url: `${base}/admin` }),
    request({ url: `${base}/v1/slow?2`, timeoutMs: 3_000 }),
    request({ url: `${base}/v1/slow?3`, timeoutMs: 3_000 }),
  ]);
  const elapsed = Date.now() - started;
  assert.deepEqual(out.map((r) => r.tag), ["ok", "err", "ok", "ok"]);
  assert.equal(out[1].val.tag, "denied");
  assert.ok(elapsed < 2_000, `three 1 s requests took ${elapsed} ms`);
});

test("a_header_with_control_characters_is_a_transport_error_without_connecting", async () => {
  const before = connections;
  const g = gateway();
  for (const headers of [[["x-a", "b\r\nx-evil: 1"]], [["x-a", "b\u0000"]], [["x a", "b"]], [["x-a\r\n", "b"]]]) {
    const out = await g.send(request({ headers }));
    assert.equal(out.tag, "err", JSON.stringify(headers));
    assert.equal(out.val.tag, "transport", JSON.stringify(headers));
  }
  const keyed = new HttpGateway(
    destinationsFrom({ destinations: [{ name: "api", baseUrl: `${base}/v1`, credential: { env: "API_KEY" } }] }),
    { env: { API_KEY: "sk-1\r\nx-evil: 1" } },
  );
  const out = await keyed.send(request({}));
  assert.equal(out.val?.tag, "transport", "a key with CR LF is never sent");
  assert.equal(connections, before);
});
