// The synchronous `http` import over an asynchronous gateway.
//
// The component calls `send` and `send-all` synchronously, and a JavaScript
// host cannot turn an asynchronous request into a synchronous answer on the
// thread that waits for it. So the guest runs in a worker thread, and the
// request runs on the main thread: the worker posts the requests on a
// MessagePort and blocks in `Atomics.wait` on a SharedArrayBuffer; the main
// thread performs them with the allow-listed gateway (all of a `send-all`
// batch concurrently), posts the answers on the port, and wakes the worker
// with `Atomics.notify`; the worker reads them with `receiveMessageOnPort`.
// Only the worker blocks; the main thread (OpenClaw's event loop) never does.
//
// Considered and not used: JSPI (jco's `--async-mode jspi`) needs Node 24.20 or
// later unflagged while OpenClaw supports 24.16, and jco marks it experimental.
// Blocking the main thread instead would freeze OpenClaw for every classifier call.

import { receiveMessageOnPort } from "node:worker_threads";

/** Time the worker waits beyond the longest request timeout before answering `timeout` itself. */
export const BRIDGE_MARGIN_MS = 5_000;
/** Longest timeout honoured, as the gateway's MAX_TIMEOUT_MS. */
const MAX_TIMEOUT_MS = 60_000;

/** A shared flag for one bridge. */
export function newFlag() {
  return new SharedArrayBuffer(4);
}

/** Worker side: the `http` import, blocking this thread on each call. */
export function blockingHttp(port, flagBuffer) {
  const flag = new Int32Array(flagBuffer);
  let seq = 0;
  const roundTrip = (reqs) => {
    const id = ++seq;
    const longest = Math.min(Math.max(0, ...reqs.map((r) => Number(r.timeoutMs) || 0)), MAX_TIMEOUT_MS);
    const deadline = Date.now() + longest + BRIDGE_MARGIN_MS;
    Atomics.store(flag, 0, 0);
    port.postMessage({ id, reqs });
    for (;;) {
      let received;
      while ((received = receiveMessageOnPort(port))) {
        // An answer to an earlier round trip that gave up waiting is dropped.
        if (received.message.id === id) return received.message.results;
      }
      const left = deadline - Date.now();
      if (left <= 0) return reqs.map(() => ({ tag: "err", val: { tag: "timeout" } }));
      Atomics.wait(flag, 0, 0, left);
      Atomics.store(flag, 0, 0);
    }
  };
  return {
    send: (req) => roundTrip([req])[0],
    sendAll: (reqs) => (reqs.length === 0 ? [] : roundTrip(reqs)),
  };
}

/**
 * Main side: answers the worker's requests with `gateway`. `onBusy(true)` runs
 * before a batch and `onBusy(false)` after it (the guard pauses the guest's CPU
 * deadline in between); `alive()` false drops the answer.
 */
export function serveHttp(port, flagBuffer, gateway, { onBusy = () => {}, alive = () => true } = {}) {
  const flag = new Int32Array(flagBuffer);
  port.on("message", async ({ id, reqs }) => {
    onBusy(true);
    let results;
    try {
      results = await gateway.sendAll(reqs);
    } catch (e) {
      results = reqs.map(() => ({ tag: "err", val: { tag: "transport", val: String(e?.message ?? e) } }));
    }
    if (!alive()) return;
    port.postMessage({ id, results });
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    onBusy(false);
  });
  port.unref();
}
