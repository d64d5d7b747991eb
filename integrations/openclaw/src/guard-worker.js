// One guard instance, in its own worker thread: the component with its three
// imports. `storage` is synchronous here (node:sqlite); `http` blocks this
// thread while the main thread performs the request (http-bridge.js); `log`
// posts lines to the main thread, which writes them to OpenClaw's logger.
//
// Protocol with guard.js (parentPort):
//   in:  {type: "call", id, fn, args}
//   out: {type: "ready", report} | {type: "refused", errors} | {type: "failed", message}
//        {type: "result", id, value} | {type: "error", id, payload} | {type: "trap", id, message}
//        {type: "log", level, message}

import { parentPort, workerData } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { SqliteStorage } from "./storage.js";
import { blockingHttp } from "./http-bridge.js";

const { guestModule, coreModules, dbPath, config, hostContext, httpPort, httpFlag } = workerData;
const storage = new SqliteStorage(dbPath);

function log(level, message) {
  parentPort.postMessage({ type: "log", level, message });
}

const http = blockingHttp(httpPort, httpFlag);
const storageImport = {
  get: (namespace, key) => storage.get(namespace, key),
  set: (namespace, key, value, when) => storage.set(namespace, key, value, when),
  delete: (namespace, key, when) => storage.delete(namespace, key, when),
  list: (namespace, prefix, limit, reverse) => storage.list(namespace, prefix, limit, reverse),
  commit: (writes) => storage.commit(writes),
};
const logImport = { write: (level, message) => log(level, message) };
// jco looks the interfaces up without their version; the versioned names are
// given too, as its type declarations spell them.
const imports = {
  "warden:guard/http": http,
  "warden:guard/http@0.1.0": http,
  "warden:guard/storage": storageImport,
  "warden:guard/storage@0.1.0": storageImport,
  "warden:guard/log": logImport,
  "warden:guard/log@0.1.0": logImport,
  "warden:guard/types": {},
  "warden:guard/types@0.1.0": {},
};

function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

let guard;
try {
  const { instantiate } = await import(pathToFileURL(guestModule).href);
  const root = await instantiate((name) => coreModules[name], imports);
  guard = { policy: root.policy, gate: root.gate, runtimeConfig: root.runtimeConfig };
} catch (e) {
  parentPort.postMessage({ type: "failed", message: `cannot instantiate the component: ${describe(e)}` });
  process.exit(1);
}

try {
  guard.policy.setHostContext(hostContext);
} catch (e) {
  const why = e && Object.hasOwn(e, "payload") ? JSON.stringify(e.payload) : describe(e);
  parentPort.postMessage({ type: "failed", message: `the component refused the host context: ${why}` });
  process.exit(1);
}

try {
  const report = guard.policy.configure(config);
  parentPort.postMessage({ type: "ready", report });
} catch (e) {
  if (e && Object.hasOwn(e, "payload")) {
    parentPort.postMessage({ type: "refused", errors: e.payload });
  } else {
    parentPort.postMessage({ type: "failed", message: `configure trapped: ${describe(e)}` });
  }
  process.exit(1);
}

parentPort.on("message", (msg) => {
  if (msg?.type !== "call") return;
  const [iface, fn] = msg.fn.split(".");
  let value;
  try {
    value = guard[iface][fn](...msg.args);
  } catch (e) {
    if (e && Object.hasOwn(e, "payload")) {
      parentPort.postMessage({ type: "error", id: msg.id, payload: e.payload });
      return;
    }
    // A trap leaves the instance unusable: report it and end this worker; the
    // pool starts a fresh one.
    parentPort.postMessage({ type: "trap", id: msg.id, message: describe(e) });
    storage.close();
    process.exit(1);
  }
  parentPort.postMessage({ type: "result", id: msg.id, value });
});
