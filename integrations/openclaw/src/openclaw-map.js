// OpenClaw hook events and contexts -> Warden's WIT records, and Warden's
// answers -> OpenClaw hook results. Pure functions: no I/O, no guard.
//
// Session: every record uses `ctx.sessionKey`, the one conversation key that
// OpenClaw puts on the prompt, tool, agent_end and message_sending hooks alike
// (`ctx.sessionId` is missing on message_sending). Chats: OpenClaw prefixes
// some targets with the provider (`telegram:12345` on tool and delivery hooks,
// `12345` on prompt hooks); Warden compares chat IDs exactly, so the prefix of
// the turn's own provider is removed everywhere.

import { createHash } from "node:crypto";

/** History messages passed to `check-turn`; the component keeps at most `safety.historyMessages` (20) of them. */
export const MAX_HISTORY = 20;
/** OpenClaw's default per-handler budget for before_prompt_build, in milliseconds. */
export const DEFAULT_PROMPT_HOOK_TIMEOUT_MS = 15_000;

const nonEmpty = (v) => (typeof v === "string" && v.trim() !== "" ? v : typeof v === "number" ? String(v) : undefined);

/** `telegram:12345` -> `12345` when the prefix is the provider's own. */
export function stripProvider(id, provider) {
  const value = nonEmpty(id);
  if (value === undefined || !provider) return value;
  const prefix = `${String(provider).toLowerCase()}:`;
  return value.toLowerCase().startsWith(prefix) ? value.slice(prefix.length) : value;
}

/** The text of a transcript message: a string, or the text parts of a part list. */
export function messageText(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part && (part.type === "text" || part.type === undefined) && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

function provider(ctx) {
  return nonEmpty(ctx?.channel) ?? nonEmpty(ctx?.messageProvider) ?? nonEmpty(ctx?.requester?.channel);
}

/** Identity from a prompt-hook context (`PluginHookAgentContext`). */
export function agentIdentity(ctx) {
  const prov = provider(ctx);
  return {
    provider: prov,
    accountId: nonEmpty(ctx?.accountId),
    senderId: nonEmpty(ctx?.senderId) ?? nonEmpty(ctx?.channelContext?.sender?.id),
    channelId: stripProvider(ctx?.chatId ?? ctx?.channelContext?.chat?.id ?? ctx?.channelId, prov),
    threadId: undefined,
    agentId: nonEmpty(ctx?.agentId),
  };
}

/** Identity from a tool-hook context (`PluginHookToolContext`, requester from trusted host metadata). */
export function toolIdentity(ctx) {
  const requester = ctx?.requester ?? {};
  const prov = nonEmpty(requester.channel);
  return {
    provider: prov,
    accountId: nonEmpty(requester.accountId),
    senderId: nonEmpty(requester.senderId),
    channelId: stripProvider(ctx?.channelId, prov),
    threadId: undefined,
    agentId: nonEmpty(ctx?.agentId),
  };
}

/** What started the turn. A missing trigger counts as a person: checking is the safe side. */
export function trigger(ctx) {
  const kind = ctx?.inputProvenance?.kind;
  if (kind === "inter_session") return "peer";
  if (kind === "internal_system") return "automation";
  const t = ctx?.trigger;
  if (t === undefined || t === null || t === "user") return "user";
  return "automation";
}

/** The chat a turn's answer is owed to: the native chat of a channel-originated run, else none. */
export function turnChat(ctx) {
  return stripProvider(ctx?.chatId ?? ctx?.channelContext?.chat?.id, provider(ctx));
}

const QUEUE_MODES = new Set(["steer", "followup", "collect", "interrupt"]);

/**
 * The queue mode OpenClaw applies to messages that arrive during a run on this
 * provider: `messages.queue.byChannel.<provider>`, else `messages.queue.mode`,
 * else OpenClaw's default, `steer` (such messages join the running turn without
 * a new prompt build, so Warden never sees them; the component warns).
 */
export function queueMode(config, providerId) {
  const queue = config?.messages?.queue ?? {};
  const byChannel = providerId ? queue.byChannel?.[providerId] : undefined;
  const mode = byChannel ?? queue.mode ?? "steer";
  return QUEUE_MODES.has(mode) ? mode : undefined;
}

function expandHome(p, home) {
  if (typeof p !== "string" || p.trim() === "") return undefined;
  if (p === "~") return home ?? p;
  return p.startsWith("~/") && home ? `${home.replace(/\/+$/, "")}/${p.slice(2)}` : p;
}

/**
 * The directory an agent's tools run in, for relative paths: OpenClaw's
 * `agents.entries.<id>.cwd`, else `agents.defaults.cwd`, else the workspace the
 * prompt hook reported for the session, else the configured workspace.
 */
export function toolCwd(config, agentId, sessionWorkspace, home) {
  const agents = config?.agents ?? {};
  const entry = agentId ? agents.entries?.[agentId] : undefined;
  return (
    expandHome(entry?.cwd, home) ??
    expandHome(agents.defaults?.cwd, home) ??
    nonEmpty(sessionWorkspace) ??
    expandHome(entry?.workspace, home) ??
    expandHome(agents.defaults?.workspace, home)
  );
}

/**
 * `turn-start` for a prompt build, or undefined when the run has no session.
 * The prompt build is the wake entering the transcript, so no prompt is queued;
 * `dedicated` pins a process that serves one chat for good.
 */
export function turnStart(ctx, nowMs, { dedicated = false } = {}) {
  const sessionId = nonEmpty(ctx?.sessionKey);
  if (!sessionId) return undefined;
  const chatId = turnChat(ctx);
  const prov = provider(ctx);
  return {
    sessionId,
    runId: nonEmpty(ctx?.runId),
    chatId,
    label: chatId === undefined ? undefined : prov ? `${prov} chat ${chatId}` : `chat ${chatId}`,
    nowMs: BigInt(nowMs),
    prompt: undefined,
    dedicated: dedicated === true && chatId !== undefined,
  };
}

/** `turn-end` for agent_end, or undefined when the run has no session. */
export function turnEnd(event, ctx, nowMs) {
  const sessionId = nonEmpty(ctx?.sessionKey);
  if (!sessionId) return undefined;
  return { sessionId, runId: nonEmpty(event?.runId) ?? nonEmpty(ctx?.runId), nowMs: BigInt(nowMs) };
}

/** `turn` for before_prompt_build. */
export function turn(event, ctx, { nowMs, hookTimeoutMs, queueMode }) {
  // `currentUserMessage` is the admitted request before history projection; an
  // explicit empty string means "no textual request" and must stay empty.
  const message = typeof event?.currentUserMessage === "string" ? event.currentUserMessage : String(event?.prompt ?? "");
  const history = [];
  for (const m of Array.isArray(event?.messages) ? event.messages : []) {
    if (m?.role !== "user" && m?.role !== "assistant") continue;
    const text = messageText(m);
    if (text.trim() === "") continue;
    history.push({ role: m.role, author: undefined, text });
  }
  return {
    runId: nonEmpty(ctx?.runId),
    sessionId: nonEmpty(ctx?.sessionKey),
    nowMs: BigInt(nowMs),
    identity: agentIdentity(ctx),
    trigger: trigger(ctx),
    message,
    context: { threadStarter: undefined, repliedTo: undefined, sinceLastReply: [] },
    history: history.slice(-MAX_HISTORY),
    queueMode,
    hookTimeoutMs,
  };
}

/** `tool-call` for before_tool_call. */
export function toolCall(event, ctx, { nowMs, cwd }) {
  let args;
  try {
    args = JSON.stringify(event?.params ?? {});
  } catch {
    args = "{}";
  }
  return {
    toolName: String(event?.toolName ?? ctx?.toolName ?? ""),
    arguments: args,
    callId: nonEmpty(event?.toolCallId) ?? nonEmpty(ctx?.toolCallId),
    runId: nonEmpty(event?.runId) ?? nonEmpty(ctx?.runId),
    sessionId: nonEmpty(ctx?.sessionKey),
    nowMs: BigInt(nowMs),
    identity: toolIdentity(ctx),
    cwd: nonEmpty(cwd),
    derivedPaths: Array.isArray(event?.derivedPaths) ? event.derivedPaths.map(String) : [],
  };
}

/**
 * The text of a tool's result as the model reads it: a string as it is, the
 * text parts of a `{content: [...]}` result (OpenClaw drops `details` before
 * the model sees it), anything else as its JSON text; an error's message after it.
 */
export function resultText(result, error) {
  let text;
  if (typeof result === "string") text = result;
  else if (result === undefined || result === null) text = "";
  else {
    text = Array.isArray(result.content) ? messageText(result) : "";
    if (text === "") {
      try {
        text = JSON.stringify(result) ?? "";
      } catch {
        text = String(result);
      }
    }
  }
  const why = nonEmpty(error);
  return why === undefined ? text : text === "" ? why : `${text}\n${why}`;
}

/**
 * `tool-result` for after_tool_call. Its context names no requester, so the
 * identity is the one the same call had in before_tool_call when known.
 */
export function toolResultReport(event, ctx, { nowMs, identity }) {
  return {
    toolName: String(event?.toolName ?? ctx?.toolName ?? ""),
    callId: nonEmpty(event?.toolCallId) ?? nonEmpty(ctx?.toolCallId),
    runId: nonEmpty(event?.runId) ?? nonEmpty(ctx?.runId),
    sessionId: nonEmpty(ctx?.sessionKey),
    nowMs: BigInt(nowMs),
    identity: identity ?? toolIdentity(ctx),
    content: resultText(event?.result, event?.error),
    isError: nonEmpty(event?.error) !== undefined,
  };
}

/** `outbound-message` for message_sending. */
export function outbound(event, ctx, { nowMs }) {
  const channel = nonEmpty(ctx?.channelId) ?? nonEmpty(event?.metadata?.channel) ?? "unknown";
  const threadId = event?.threadId;
  return {
    direction: "outbound",
    channel,
    recipient: stripProvider(event?.to, channel) ?? "",
    sender: nonEmpty(ctx?.accountId),
    body: new TextEncoder().encode(String(event?.content ?? "")),
    thread: threadId === undefined || threadId === null ? undefined : String(threadId),
    messageId: undefined,
    sessionId: nonEmpty(ctx?.sessionKey),
    nowMs: BigInt(nowMs),
    identity: {
      provider: channel,
      accountId: nonEmpty(ctx?.accountId),
      senderId: undefined,
      channelId: stripProvider(ctx?.conversationId, channel),
      threadId: threadId === undefined || threadId === null ? undefined : String(threadId),
      agentId: undefined,
    },
  };
}

/** `outcome-report` for message_sent. */
/**
 * An idempotency key for a write OpenClaw may deliver twice: a digest of what
 * names it (the component accepts only `A-Za-z0-9._:-`, at most 128).
 */
export function idempotencyKey(kind, ...parts) {
  const digest = createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 48);
  return `openclaw:${kind}:${digest}`;
}

export function outcomeReport(event, ctx, { nowMs }) {
  const channel = nonEmpty(ctx?.channelId) ?? "unknown";
  const threadId = event?.threadId;
  const messageId = nonEmpty(event?.messageId === undefined ? undefined : String(event.messageId));
  const delivery = event?.success === false ? "failed" : "sent";
  return {
    channel,
    recipient: stripProvider(event?.to, channel) ?? "",
    delivery,
    thread: threadId === undefined || threadId === null ? undefined : String(threadId),
    nowMs: BigInt(nowMs),
    // A delivery OpenClaw reports twice for one message is recorded once.
    idempotencyKey: messageId === undefined ? undefined : idempotencyKey("outcome", channel, messageId, delivery),
  };
}

/** The text the model reads when Warden refuses a tool call. */
export function refusalText(verdict) {
  return `Warden refused this tool call (rule ${verdict.rule}, risk ${verdict.risk}): ${verdict.reason}`;
}

const SCOPE_TEXT = { once: "this call only", session: "the rest of this session", always: "until the policy changes" };
const SEVERITY = { low: "info", medium: "warning", high: "critical", critical: "critical" };

/** What an `ask` becomes: OpenClaw's `requireApproval`, or, where nobody can answer it, `pending` or `deny`. */
export const ASK_MODES = ["approval", "pending", "deny"];

/**
 * How asks are answered in this process: `WARDEN_ASKS` when it names one of
 * ASK_MODES; else `pending` in `openclaw agent --local` (a headless run, where
 * OpenClaw's approval fails closed at once and nobody is asked); else
 * `approval`. An invalid `WARDEN_ASKS` is reported and ignored.
 */
export function askMode(env, argv, logger) {
  const set = env?.WARDEN_ASKS;
  if (set !== undefined && set !== "") {
    if (ASK_MODES.includes(set)) return set;
    logger?.warn?.(`warden: WARDEN_ASKS must be one of ${ASK_MODES.join(", ")}, got ${JSON.stringify(set)}; ignored`);
  }
  const args = Array.isArray(argv) ? argv : [];
  return args.includes("agent") && args.includes("--local") ? "pending" : "approval";
}

const quote = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

/**
 * The tool result of an ask nobody can answer in this run: `pending` leaves it
 * to a person and tells the model the approval key, how a person approves it
 * and to retry the same call then (which `memory.allow` allows once approved);
 * `deny` refuses it.
 */
export function unaskableText(verdict, call, mode, dbPath) {
  if (mode === "deny" || !verdict.approvalKey) {
    const why = mode === "deny" ? "WARDEN_ASKS is deny" : "the ask carries no approval key";
    return `Warden refused this tool call (rule ${verdict.rule}, risk ${verdict.risk}): it needs a person's approval (${verdict.reason}) and nobody can be asked in this run (${why}). Do not retry it.`;
  }
  const scope = verdict.scope ?? "once";
  let approve = `warden approve --config <your Warden configuration> --db ${quote(dbPath ?? "<the plugin's database>")} --key ${quote(verdict.approvalKey)} --scope ${scope}`;
  if (scope === "session" && call.sessionId) approve += ` --session ${quote(call.sessionId)}`;
  else if (scope === "once" && call.callId) approve += ` --call ${quote(call.callId)}`;
  return (
    `Warden is holding this tool call for a person's approval (rule ${verdict.rule}, risk ${verdict.risk}: ${verdict.reason}); ` +
    `nobody can be asked in this run, so it did not run. Approval key: ${verdict.approvalKey} (scope ${scope}). ` +
    "Tell the user it waits for approval: a person approves it in `warden asks` or the inbox page of `warden serve`, " +
    `or with \`${approve}\`. Once it is approved, retry exactly the same call and it will be allowed; do not retry before that.`
  );
}

/**
 * before_tool_call result for a verdict: nothing for allow, `block` for deny,
 * `requireApproval` for ask (or, with an ask mode other than `approval`, a
 * `block` saying so at once). `record(answer)` is called with the person's
 * answer as a WIT `approval` minus `nowMs`.
 */
export function toolResult(verdict, call, record, { asks = "approval", dbPath } = {}) {
  if (verdict.decision === "deny") return { block: true, blockReason: refusalText(verdict) };
  if (verdict.decision !== "ask") return undefined;
  if (asks !== "approval") return { block: true, blockReason: unaskableText(verdict, call, asks, dbPath) };
  const scope = verdict.scope ?? "once";
  const remembered = scope !== "once";
  const allowedDecisions = remembered ? ["allow-once", "allow-always", "deny"] : ["allow-once", "deny"];
  const lines = [
    verdict.reason,
    "",
    `Rule: ${verdict.rule}. Risk: ${verdict.risk}.`,
    remembered
      ? `"Allow always" remembers your answer for ${SCOPE_TEXT[scope]}; "Allow once" and "Deny" apply to this call only.`
      : "Your answer applies to this call only.",
  ];
  return {
    requireApproval: {
      title: `Warden: allow ${call.toolName}?`,
      description: lines.join("\n"),
      severity: SEVERITY[verdict.risk] ?? "warning",
      allowedDecisions,
      onResolution: async (decision) => {
        if (!verdict.approvalKey) return;
        // One resolution of one call is one answer, however often it is delivered.
        const keyed = (answer) => ({
          ...answer,
          idempotencyKey: call.callId ? idempotencyKey("approval", verdict.approvalKey, call.callId, decision) : undefined,
        });
        const base = { key: verdict.approvalKey, sessionId: call.sessionId, callId: call.callId };
        if (decision === "allow-once") await record(keyed({ ...base, allow: true, scope: "once" }));
        else if (decision === "allow-always") await record(keyed({ ...base, allow: true, scope }));
        else if (decision === "deny") await record(keyed({ ...base, allow: false, scope: "once" }));
        // timeout and cancelled: nobody answered, nothing is remembered.
      },
    },
  };
}

/** message_sending result for a verdict. No approval exists on delivery, so `ask` cancels too. */
export function sendingResult(verdict) {
  if (verdict.decision === "allow") return undefined;
  const why =
    verdict.decision === "ask" ? `needs a person's approval, which delivery cannot ask for: ${verdict.reason}` : verdict.reason;
  return { cancel: true, cancelReason: `Warden stopped this message (rule ${verdict.rule}): ${why}` };
}
