// The synchronous `http` import: a worker blocks in Atomics.wait while the
// main thread performs the requests, concurrently for send-all, and the main
// thread's event loop keeps running meanwhile.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { Worker } from "node:worker_threads";
import { HttpGateway, destinationsFrom } from "../src/http-gateway.js";
import { newFlag, serveHttp } from "../src/http-bridge.js";

let server;
let base;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => setTimeout(() => res.end(`answer to ${req.url}`), 300));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

function bridge({ gateway, onBusy }) {
  const { port1, port2 } = new MessageChannel();
  const flag = newFlag();
  serveHttp(port1, flag, gateway, { onBusy });
  const worker = new Worker(new URL("./fixtures/bridge-worker.mjs", import.meta.url), {
    workerData: { port: port2, flag },
    transferList: [port2],
  });
  const ask = (kind, reqs) =>
    new Promise((resolve) => {
      worker.once("message", resolve);
      worker.postMessage({ kind, reqs });
    });
  return { ask, close: () => worker.terminate() };
}

const req = (path, over = {}) => ({ destination: "api", method: "get", url: `${base}${path}`, headers: [], body: new Uint8Array(0), timeoutMs: 5_000, ...over });

test("send_blocks_the_worker_until_the_main_thread_has_the_answer", async () => {
  const g = new HttpGateway(destinationsFrom({ destinations: [{ name: "api", baseUrl: base }] }));
  const b = bridge({ gateway: g });
  const { results, blockedMs } = await b.ask("send", [req("/one")]);
  assert.equal(results[0].tag, "ok");
  assert.equal(new TextDecoder().decode(results[0].val.body), "answer to /one");
  assert.ok(blockedMs >= 250, `blocked ${blockedMs} ms`);
  await b.close();
});

test("send_all_is_concurrent_in_order_and_the_main_loop_keeps_running", async () => {
  const g = new HttpGateway(destinationsFrom({ destinations: [{ name: "api", baseUrl: base }] }));
  const busy = [];
  const b = bridge({ gateway: g, onBusy: (x) => busy.push(x) });
  let ticks = 0;
  const ticker = setInterval(() => (ticks += 1), 20);
  const paths = ["/a", "/b", "/c", "/d", "/e"];
  const { results, blockedMs } = await b.ask("sendAll", [...paths.map((p) => req(p)), req("/x", { destination: "nope" })]);
  clearInterval(ticker);
  assert.deepEqual(
    results.slice(0, 5).map((r) => new TextDecoder().decode(r.val.body)),
    paths.map((p) => `answer to ${p}`),
  );
  assert.deepEqual(results[5], { tag: "err", val: { tag: "denied" } });
  assert.ok(blockedMs < 1_000, `five 300 ms requests blocked the worker ${blockedMs} ms`);
  assert.ok(ticks >= 10, `the main loop ticked ${ticks} times while the worker waited`);
  assert.deepEqual(busy, [true, false]);
  await b.close();
});

test("the_worker_stops_waiting_when_the_main_thread_never_answers", async () => {
  // A gateway that never settles: the worker must give up after the request's
  // timeout plus the bridge's margin, answering `timeout` itself.
  const stuck = { sendAll: () => new Promise(() => {}) };
  const b = bridge({ gateway: stuck });
  const { results, blockedMs } = await b.ask("send", [req("/never", { timeoutMs: 100 })]);
  assert.deepEqual(results[0], { tag: "err", val: { tag: "timeout" } });
  assert.ok(blockedMs >= 5_000 && blockedMs < 7_000, `blocked ${blockedMs} ms`);
  await b.close();
});
