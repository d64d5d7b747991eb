// Warden's OpenClaw plugin: the hooks, wired to the guard.
//
//   before_prompt_build -> start-turn (pins the reply to the chat that woke the agent)
//                          then check-turn (safety text returned as appendContext,
//                          which OpenClaw puts right after the person's message)
//   before_tool_call    -> check-tool-call (deny: block with the reason; ask: requireApproval,
//                          the person's answer recorded with record-approval)
//   after_tool_call     -> observe-tool-result (what the tool returned, so destinations in it
//                          are known to come from content the agent read)
//   message_sending     -> check-outbound (deny or ask: cancel with the reason)
//   message_sent        -> record-outcome
//   agent_end           -> settle-turn
//
// OpenClaw imports this module several times per process (registration modes
// `full`, `discovery`, ...) and keeps `register` synchronous, so nothing is
// loaded while registering: the guard starts on the first hook that fires, or,
// in `full` mode, for the audit of OpenClaw's configuration started here; guards
// are shared through a process-wide registry keyed by configuration and database.

import fs from "node:fs";
import path from "node:path";
import { Guard, SRC_DIR, GuestFailure } from "./guard.js";
import * as hostContext from "./host-context.js";
import * as map from "./openclaw-map.js";
import { auditAtStart } from "./config-audit.js";

export const PLUGIN_ID = "warden";
/** Hook priority: Warden's refusal runs before other plugins' handlers. */
export const PRIORITY = 1000;
/** Rule of the refusal given when a run's reply pin could not be recorded. */
export const PIN_UNAVAILABLE_RULE = "host.pin-unavailable";
/** Runs remembered per process for pin failures and working directories. */
const MAX_REMEMBERED_RUNS = 1024;
/**
 * Longest a tool call waits for the observations of its session's earlier
 * results still being recorded, in milliseconds (OpenClaw does not await
 * after_tool_call). Past it the call is judged without them.
 */
export const OBSERVE_WAIT_MS = 5_000;

const GUEST_DIR = path.join(SRC_DIR, "..", "guest");
const REGISTRY = Symbol.for("warden.openclaw.guards");

function registry() {
  globalThis[REGISTRY] ??= new Map();
  return globalThis[REGISTRY];
}

function intFromEnv(env, name, fallback) {
  const n = Number.parseInt(env[name] ?? "", 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** A small bounded map: the oldest entry goes first. */
class Recent extends Map {
  set(key, value) {
    super.delete(key);
    super.set(key, value);
    if (this.size > MAX_REMEMBERED_RUNS) super.delete(this.keys().next().value);
    return this;
  }
}

function hookTimeout(api, hook, fallback) {
  const hooks = api.config?.plugins?.entries?.[api.id ?? PLUGIN_ID]?.hooks ?? {};
  const value = hooks.timeouts?.[hook] ?? hooks.timeoutMs;
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

const WARNED = Symbol.for("warden.openclaw.hostControlsWarned");

/**
 * The host controls Warden needs that OpenClaw's configuration leaves out,
 * each as one sentence: what is missing and what it costs. OpenClaw drops the
 * affected registrations with at most a line of its own, and in
 * `openclaw agent --local` without any, so the plugin says so in every mode.
 */
export function missingHostControls(config, id = PLUGIN_ID) {
  const hooks = config?.plugins?.entries?.[id]?.hooks ?? {};
  const missing = [];
  if (hooks.allowConversationAccess !== true) {
    missing.push(
      `plugins.entries.${id}.hooks.allowConversationAccess is not true: OpenClaw drops Warden's before_prompt_build and agent_end hooks, so replies are not pinned and safety scenarios are not checked (set it to true)`,
    );
  }
  if (hooks.allowPromptInjection === false) {
    missing.push(`plugins.entries.${id}.hooks.allowPromptInjection is false: Warden's safety text cannot be added to a turn (remove it)`);
  }
  return missing;
}

function warnMissingHostControls(api, logger) {
  globalThis[WARNED] ??= new Set();
  const id = api.id ?? PLUGIN_ID;
  const hooks = JSON.stringify(api.config?.plugins?.entries?.[id]?.hooks ?? {});
  for (const m of missingHostControls(api.config, id)) {
    // Once per process and configuration, however often OpenClaw registers the plugin.
    if (globalThis[WARNED].has(`${hooks}\n${m}`)) continue;
    globalThis[WARNED].add(`${hooks}\n${m}`);
    logger?.warn?.(`warden: ${m}`);
  }
}

function register(api) {
  if (typeof api.on !== "function") return;
  const env = process.env;
  const logger = api.logger;
  warnMissingHostControls(api, logger);
  const configText = JSON.stringify(api.pluginConfig ?? {});
  const asks = map.askMode(env, process.argv, logger);
  let guard;
  let guardDb;

  // The guard for this registration, started on first use. A new `full`
  // registration with another configuration (a hot reload) replaces the old
  // guard; in-flight calls on the old one still finish.
  const getGuard = () => {
    if (guard) return guard;
    const stateDir = api.runtime?.state?.resolveStateDir?.(env) ?? path.join(env.HOME ?? ".", ".openclaw");
    const dbPath = env.WARDEN_DB ?? path.join(stateDir, "warden", "warden.db");
    guardDb = dbPath;
    const key = `${dbPath}\n${configText}`;
    const guards = registry();
    guard = guards.get(key);
    if (!guard) {
      for (const [otherKey, other] of guards) {
        guards.delete(otherKey);
        other.close();
      }
      // The secret beside the database, and the files the agent may not touch:
      // Warden's database, OpenClaw's config file (the plugin entry) and this plugin.
      // A secret that cannot be read leaves it empty: the component refuses
      // that context, the guard cannot start, and checks fail closed.
      let secret = new Uint8Array(0);
      try {
        fs.mkdirSync(path.dirname(dbPath), { recursive: true });
        secret = hostContext.approvalSecret(dbPath);
      } catch (e) {
        logger?.error?.(`warden: ${e.message}; tool calls and messages are refused until it is fixed`);
      }
      const declared = hostContext.declare({
        dbPath,
        secret,
        openclawConfig: env.OPENCLAW_CONFIG_PATH ?? path.join(stateDir, "openclaw.json"),
        pluginDir: path.join(SRC_DIR, ".."),
      });
      guard = new Guard({
        hostContext: declared,
        guestDir: env.WARDEN_GUEST_DIR ?? GUEST_DIR,
        dbPath,
        configText,
        logger,
        cpuMs: intFromEnv(env, "WARDEN_CPU_MS", undefined),
        startupMs: intFromEnv(env, "WARDEN_STARTUP_MS", undefined),
        pool: intFromEnv(env, "WARDEN_POOL", undefined),
        memoryBytes: env.WARDEN_MEMORY_MIB ? intFromEnv(env, "WARDEN_MEMORY_MIB", 64) * 1024 * 1024 : undefined,
        env,
      });
      guards.set(key, guard);
      logger?.info?.(`warden: guard database ${dbPath}`);
    }
    return guard;
  };

  // OpenClaw's own configuration, audited by the component once the Gateway
  // loads the plugin for real (not in discovery): findings are logged and
  // kept for `diagnostics()`.
  if (api.registrationMode === "full") auditAtStart(api.config, getGuard, logger);

  const now = () => Date.now();
  // Session -> run whose reply pin could not be recorded: its tool calls fail closed.
  const pinFailures = new Recent();
  // Working directory per session, from the prompt hook (tool hooks lack it).
  const workspaces = new Recent();
  // Identity per tool call, from before_tool_call (after_tool_call names no requester).
  const callIdentities = new Recent();
  // Session -> the observations of its tool results still being recorded.
  const observing = new Recent();

  api.on(
    "before_prompt_build",
    async (event, ctx) => {
      const g = getGuard();
      if (ctx?.sessionKey && ctx?.workspaceDir) workspaces.set(ctx.sessionKey, ctx.workspaceDir);
      const start = map.turnStart(ctx, now(), { dedicated: env.WARDEN_DEDICATED_CHAT === "1" });
      if (start?.chatId !== undefined) {
        try {
          await g.call("policy.startTurn", start);
          pinFailures.delete(start.sessionId);
        } catch (e) {
          pinFailures.set(start.sessionId, start.runId ?? "");
          logger?.error?.(`warden: the reply pin for ${start.label} could not be recorded (${e.message}); tool calls of this run are refused`);
        }
      }
      const outcome = await g.checkTurn(
        map.turn(event, ctx, {
          nowMs: now(),
          hookTimeoutMs: hookTimeout(api, "before_prompt_build", map.DEFAULT_PROMPT_HOOK_TIMEOUT_MS),
          queueMode: map.queueMode(api.config, map.agentIdentity(ctx).provider),
        }),
      );
      if (outcome.rule.startsWith("host.")) logger?.warn?.(`warden: turn proceeds unchecked (rule ${outcome.rule}): ${outcome.reason}`);
      return outcome.appendContext ? { appendContext: outcome.appendContext } : undefined;
    },
    { priority: PRIORITY },
  );

  api.on(
    "before_tool_call",
    async (event, ctx) => {
      const g = getGuard();
      const cwd = map.toolCwd(api.config, ctx?.agentId, workspaces.get(ctx?.sessionKey), env.HOME);
      const call = map.toolCall(event, ctx, { nowMs: now(), cwd });
      if (call.callId) callIdentities.set(call.callId, call.identity);
      await settled(observing.get(call.sessionId), OBSERVE_WAIT_MS);
      let verdict = await g.checkToolCall(call);
      // A run whose reply pin could not be recorded gets no tool call the
      // guard would allow: pinning fails closed.
      const failedRun = call.sessionId ? pinFailures.get(call.sessionId) : undefined;
      const pinFailed = failedRun !== undefined && (failedRun === "" || !call.runId || failedRun === call.runId);
      if (verdict.decision !== "deny" && pinFailed) {
        verdict = {
          ...verdict,
          decision: "deny",
          rule: PIN_UNAVAILABLE_RULE,
          risk: "high",
          reason: "the chat this run must answer could not be recorded, so no tool may run until it can",
        };
      }
      logHostVerdict(logger, `tool ${call.toolName}`, verdict);
      if (verdict.decision === "ask" && asks !== "approval") {
        logger?.warn?.(`warden: ask ${asks} (${verdict.rule}, key ${verdict.approvalKey}): nobody can answer it in this run`);
      }
      return map.toolResult(
        verdict,
        call,
        (answer) =>
          g.call("policy.recordApproval", { ...answer, nowMs: BigInt(now()) }).catch((e) => {
            logger?.error?.(`warden: could not record the answer to ${verdict.rule}: ${e.message}`);
          }),
        { asks, dbPath: guardDb },
      );
    },
    { priority: PRIORITY },
  );

  api.on("after_tool_call", (event, ctx) => {
    const callId = event?.toolCallId ?? ctx?.toolCallId;
    const report = map.toolResultReport(event, ctx, { nowMs: now(), identity: callIdentities.get(callId) });
    if (report.callId) callIdentities.delete(report.callId);
    const key = report.sessionId ?? "";
    const before = observing.get(key);
    const done = settled(before, OBSERVE_WAIT_MS)
      .then(() => getGuard().call("policy.observeToolResult", report))
      .then(() => undefined)
      .catch((e) => {
        // The result reaches the model anyway; its destinations stay unknown, which asks by default.
        logger?.warn?.(`warden: the result of ${report.toolName} was not recorded (${e.message}); its destinations stay unknown to later checks`);
      })
      .finally(() => {
        if (observing.get(key) === done) observing.delete(key);
      });
    observing.set(key, done);
    return done;
  });

  api.on(
    "message_sending",
    async (event, ctx) => {
      const g = getGuard();
      const message = map.outbound(event, ctx, { nowMs: now() });
      const verdict = await g.checkOutbound(message);
      logHostVerdict(logger, `message on ${message.channel}`, verdict);
      return map.sendingResult(verdict);
    },
    { priority: PRIORITY },
  );

  api.on("message_sent", async (event, ctx) => {
    try {
      await getGuard().call("policy.recordOutcome", map.outcomeReport(event, ctx, { nowMs: now() }));
    } catch (e) {
      if (!(e instanceof GuestFailure)) logger?.debug?.(`warden: delivery outcome not recorded: ${e.message}`);
      else logger?.warn?.(`warden: delivery outcome not recorded: ${e.message}`);
    }
  });

  api.on("agent_end", async (event, ctx) => {
    const end = map.turnEnd(event, ctx, now());
    if (!end) return;
    pinFailures.delete(end.sessionId);
    try {
      await getGuard().call("policy.settleTurn", end);
    } catch (e) {
      // The pin then expires after its TTL.
      logger?.warn?.(`warden: the turn could not be settled (${e.message}); its pin expires after pin.ttlMinutes`);
    }
  });
}

/** Waits for `promise` (when there is one) at most `ms` milliseconds; never rejects. */
function settled(promise, ms) {
  if (!promise) return Promise.resolve();
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
  return Promise.race([promise.catch(() => {}), timeout]).finally(() => clearTimeout(timer));
}

// The component logs its own decisions (rules and outcomes, never message
// text unless `debug` is on); the plugin logs only the answers it gave itself
// because the guard could not (rules `host.*`).
function logHostVerdict(logger, what, verdict) {
  if (verdict.rule.startsWith("host.")) logger?.warn?.(`warden: ${what} ${verdict.decision} (rule ${verdict.rule}): ${verdict.reason}`);
}

export { diagnostics } from "./config-audit.js";

export default {
  id: PLUGIN_ID,
  name: "Warden",
  description: "Policy engine for agents that act for people: tool calls, reply pinning, safety scenarios and outbound messages.",
  register,
};
