// The guard as the plugin sees it: the component, configured, behind a pool of
// worker threads (guard-worker.js), with the sandbox rules of the Rust host.
//
// - Each guest memory is capped (memory-cap.js; 64 MiB by default).
// - Each call runs on an idle worker under a CPU deadline. Time the worker
//   spends waiting for the main thread's HTTP answer does not count. A worker
//   that overruns is terminated (that is how a runaway guest is stopped), a
//   worker that traps ends itself, and the next call starts a fresh one.
// - When the guest cannot answer, each check answers with its failure mode:
//   tool calls and outbound messages fail closed, inbound turns fail open.
// - A configuration the component refuses is refused for good (this guard is
//   bound to one configuration); the refusal is logged once with every error.

import { ephemeral } from "./host-context.js";
import { Worker } from "node:worker_threads";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HttpGateway, destinationsFrom } from "./http-gateway.js";
import { newFlag, serveHttp } from "./http-bridge.js";
import { capMemory, DEFAULT_MEMORY_BYTES } from "./memory-cap.js";
import { admitCall, ClockError, CLOCK_REFUSED_RULE } from "./clock.js";

/** Default guest CPU time per call, host HTTP time excluded, in milliseconds. */
export const DEFAULT_CPU_MS = 2_000;
/** Default time a new worker may take to load, instantiate and configure the component, in milliseconds. */
export const DEFAULT_STARTUP_MS = 10_000;
/** Default most workers (guard instances) running at once. */
export const DEFAULT_POOL = 4;

/** Rule of an answer given because the guest failed. */
export const GUEST_FAILURE_RULE = "host.guest-failure";
/** Rule of an answer given because the component refused the configuration. */
export const CONFIG_REFUSED_RULE = "host.config-refused";

const WORKER_URL = new URL("./guard-worker.js", import.meta.url);

/** The guest could not answer; `rule` says why. */
export class GuestFailure extends Error {
  constructor(message, rule = GUEST_FAILURE_RULE) {
    super(message);
    this.rule = rule;
  }
}

/** The component answered with a typed `policy-error`. */
export class PolicyError extends Error {
  constructor(payload) {
    super(`${payload?.tag ?? "error"}${payload?.val ? `: ${payload.val}` : ""}`);
    this.payload = payload;
  }
}

/** A GuestFailure for any error a check met; a refused request time keeps its own rule. */
function asFailure(e) {
  if (e instanceof GuestFailure) return e;
  return new GuestFailure(e.message, e instanceof ClockError ? CLOCK_REFUSED_RULE : GUEST_FAILURE_RULE);
}

function failClosed(failure, what) {
  return {
    decision: "deny",
    rule: failure.rule ?? GUEST_FAILURE_RULE,
    reason: `the guard could not check this (${failure.message}); ${what} fail closed, so this one is refused`,
    risk: "high",
    scope: undefined,
    approvalKey: undefined,
    observed: undefined,
    signals: [],
  };
}

function failOpen(failure) {
  return {
    proceed: true,
    outcome: "failed",
    rule: failure.rule ?? GUEST_FAILURE_RULE,
    reason: `the guard could not check this turn (${failure.message}); inbound checks fail open, so it proceeds unchecked`,
    appendContext: undefined,
    scenarios: [],
    missingIdentity: false,
    reused: false,
    signals: [],
  };
}

/** One worker thread and the call it is running. */
class Slot {
  constructor(worker, httpPort) {
    this.worker = worker;
    this.httpPort = httpPort;
    this.pending = undefined;
    this.dead = false;
  }
}

export class Guard {
  #modules;
  #gateway;
  #idle = [];
  #all = new Set();
  #waiting = [];
  #refusal;
  #closed = false;
  #reported = false;
  #nextId = 1;

  /**
   * guestDir: folder of the jco output; dbPath: SQLite file; configText: the
   * configuration as JSON text; logger: OpenClaw's plugin logger;
   * hostContext: what the host declares about itself (host-context.js), a
   * fresh secret and no files when absent.
   */
  constructor({
    guestDir,
    dbPath,
    configText,
    logger,
    cpuMs = DEFAULT_CPU_MS,
    startupMs = DEFAULT_STARTUP_MS,
    pool = DEFAULT_POOL,
    memoryBytes = DEFAULT_MEMORY_BYTES,
    env = process.env,
    replay = env.WARDEN_REPLAY === "1",
    hostContext = ephemeral(),
  }) {
    this.hostContext = hostContext;
    this.guestDir = guestDir;
    this.dbPath = dbPath;
    this.configText = configText;
    this.logger = logger;
    this.cpuMs = cpuMs;
    this.startupMs = startupMs;
    this.pool = Math.max(1, pool);
    this.memoryBytes = memoryBytes;
    this.replay = replay;
    let parsed = {};
    try {
      parsed = JSON.parse(configText);
    } catch {
      // the component reports the syntax error when it is configured
    }
    // The gateway enforces only what the component accepted: a refused
    // configuration never starts a worker, so no request is ever made.
    this.#gateway = new HttpGateway(destinationsFrom(parsed), { env });
  }

  /** Compiles the core modules once per guard; every worker instantiates from them. */
  #compile() {
    this.#modules ??= (async () => {
      const names = (await fs.readdir(this.guestDir)).filter((n) => n.endsWith(".wasm"));
      const modules = {};
      for (const name of names) {
        const bytes = await fs.readFile(path.join(this.guestDir, name));
        modules[name] = await WebAssembly.compile(capMemory(bytes, this.memoryBytes));
      }
      return modules;
    })().catch((e) => {
      this.#modules = undefined;
      throw new GuestFailure(`cannot load the component from ${this.guestDir}: ${e.message}`);
    });
    return this.#modules;
  }

  #log(level, message) {
    const write = this.logger?.[level] ?? (level === "debug" ? undefined : this.logger?.info);
    try {
      write?.call(this.logger, `warden: ${message}`);
    } catch {
      // a broken logger must not break a check
    }
  }

  async #spawn() {
    const coreModules = await this.#compile();
    const { port1, port2 } = new MessageChannel();
    const flag = newFlag();
    const worker = new Worker(WORKER_URL, {
      workerData: {
        guestModule: path.join(this.guestDir, "warden_component.js"),
        coreModules,
        dbPath: this.dbPath,
        config: this.configText,
        hostContext: this.hostContext,
        httpPort: port2,
        httpFlag: flag,
      },
      transferList: [port2],
    });
    const slot = new Slot(worker, port1);
    serveHttp(port1, flag, this.#gateway, { onBusy: (busy) => this.#hostTime(slot, busy), alive: () => !slot.dead });
    this.#all.add(slot);
    const ready = new Promise((resolve, reject) => {
      slot.pending = { resolve, reject, startup: true };
    });
    this.#arm(slot, this.startupMs, "it did not start within its deadline");
    worker.on("message", (msg) => this.#onMessage(slot, msg));
    worker.on("error", (e) => this.#bury(slot, `the worker failed: ${e?.message ?? e}`));
    worker.on("exit", (code) => this.#bury(slot, `the worker exited (code ${code})`));
    const report = await ready;
    if (!this.#reported) {
      this.#reported = true;
      const active = report.checks.filter((c) => c.active).map((c) => (c.mode === "observe" ? `${c.check} (observe)` : c.check));
      const inactive = report.checks.filter((c) => !c.active).map((c) => `${c.check} (${c.reason ?? "off"})`);
      this.#log(
        "info",
        `configured (policy ${report.policyVersion}; active: ${active.join(", ") || "none"}; not active: ${inactive.join(", ") || "none"})`,
      );
      for (const warning of report.warnings) this.#log("warn", `configuration warning: ${warning}`);
    }
    return slot;
  }

  #onMessage(slot, msg) {
    if (msg?.type === "log") {
      this.#log(msg.level === "warn" ? "warn" : msg.level, msg.message);
      return;
    }
    const pending = slot.pending;
    if (!pending) return;
    if (msg.id !== undefined && msg.id !== pending.id) return;
    switch (msg.type) {
      case "ready":
        this.#settle(slot).resolve(msg.report);
        return;
      case "refused":
        this.#settle(slot).reject(new GuestFailure(this.#refuse(msg.errors), CONFIG_REFUSED_RULE));
        return;
      case "failed":
        this.#settle(slot).reject(new GuestFailure(msg.message));
        return;
      case "result":
        this.#settle(slot).resolve(msg.value);
        return;
      case "error":
        this.#settle(slot).reject(new PolicyError(msg.payload));
        return;
      case "trap":
        slot.dead = true;
        // An out-of-bounds access is the guest runtime's own trap for an
        // allocation the memory cap refused (crates/guest-rt).
        this.#settle(slot).reject(
          new GuestFailure(
            /out of bounds memory access|memory access out of bounds/.test(msg.message)
              ? `it trapped: it hit its memory cap of ${Math.floor(this.memoryBytes / 1048576)} MiB (${msg.message})`
              : `it trapped: ${msg.message}`,
          ),
        );
        return;
      default:
    }
  }

  #refuse(errors) {
    const list = Array.isArray(errors) ? errors : [];
    if (!this.#refusal) {
      const text = list.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
      this.#log("error", `the configuration was refused with ${list.length} error(s): ${text}. Tool calls and outbound messages are refused until it is fixed.`);
      this.#refusal = `its configuration was refused with ${list.length} error(s); see the plugin log`;
    }
    return this.#refusal;
  }

  /** Takes the pending call off a slot and stops its deadline. */
  #settle(slot) {
    const pending = slot.pending;
    slot.pending = undefined;
    clearTimeout(pending.timer);
    return pending;
  }

  /** Starts (or restarts) a deadline of `ms` for the slot's pending call. */
  #arm(slot, ms, why) {
    const pending = slot.pending;
    pending.remaining = ms;
    pending.startedAt = Date.now();
    pending.why = why;
    pending.timer = setTimeout(() => {
      slot.dead = true;
      this.#settle(slot).reject(new GuestFailure(why));
      slot.worker.terminate().catch(() => {});
    }, ms);
  }

  /** Host time does not count against the guest: the deadline pauses while the main thread works for it. */
  #hostTime(slot, busy) {
    const pending = slot.pending;
    if (!pending) return;
    if (busy && pending.timer) {
      clearTimeout(pending.timer);
      pending.timer = undefined;
      pending.remaining -= Date.now() - pending.startedAt;
    } else if (!busy && !pending.timer) {
      this.#arm(slot, Math.max(pending.remaining, 1), pending.why);
    }
  }

  #bury(slot, why) {
    slot.dead = true;
    this.#all.delete(slot);
    this.#idle = this.#idle.filter((s) => s !== slot);
    slot.httpPort.close();
    if (slot.pending) this.#settle(slot).reject(new GuestFailure(why));
    this.#wake();
  }

  #wake() {
    while (this.#waiting.length > 0 && (this.#idle.length > 0 || this.#all.size < this.pool)) {
      this.#waiting.shift()();
    }
  }

  async #acquire() {
    for (;;) {
      if (this.#closed) throw new GuestFailure("the guard is shutting down");
      if (this.#refusal) throw new GuestFailure(this.#refusal, CONFIG_REFUSED_RULE);
      const idle = this.#idle.pop();
      if (idle && !idle.dead) return idle;
      if (this.#all.size < this.pool) return this.#spawn();
      await new Promise((resolve) => this.#waiting.push(resolve));
    }
  }

  #release(slot) {
    if (slot.dead || this.#closed) {
      if (!slot.dead) slot.worker.terminate().catch(() => {});
    } else {
      slot.worker.unref();
      this.#idle.push(slot);
    }
    this.#wake();
  }

  /** Runs `policy.<fn>` or `gate.<fn>` on a worker; rejects with GuestFailure or PolicyError,
   * or ClockError (before anything runs) when a `nowMs` is far from this host's clock. */
  async call(fn, ...args) {
    admitCall(fn, args, { replay: this.replay });
    const slot = await this.#acquire();
    slot.worker.ref();
    try {
      return await new Promise((resolve, reject) => {
        const id = this.#nextId++;
        slot.pending = { id, resolve, reject };
        this.#arm(slot, this.cpuMs, `it ran past its CPU deadline of ${this.cpuMs} ms`);
        slot.worker.postMessage({ type: "call", id, fn, args });
      });
    } finally {
      this.#release(slot);
    }
  }

  /** Judges a tool call. Fails closed. */
  async checkToolCall(call) {
    try {
      return await this.call("policy.checkToolCall", call);
    } catch (e) {
      return failClosed(asFailure(e), "tool calls");
    }
  }

  /** Checks an outbound message. Fails closed. */
  async checkOutbound(message) {
    try {
      return await this.call("policy.checkOutbound", message);
    } catch (e) {
      return failClosed(asFailure(e), "messages");
    }
  }

  /** Checks an inbound turn. Fails open. */
  async checkTurn(turn) {
    try {
      return await this.call("policy.checkTurn", turn);
    } catch (e) {
      return failOpen(asFailure(e));
    }
  }

  /** Stops every worker; in-flight calls answer with their failure mode. */
  async close() {
    this.#closed = true;
    const slots = [...this.#all];
    this.#idle = [];
    for (const wake of this.#waiting.splice(0)) wake();
    await Promise.all(slots.filter((s) => !s.pending).map((s) => s.worker.terminate().catch(() => {})));
  }
}

/** The folder of this module, for locating the guest next to it. */
export const SRC_DIR = path.dirname(fileURLToPath(import.meta.url));
