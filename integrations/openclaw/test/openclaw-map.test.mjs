// OpenClaw hook events and contexts -> WIT records, and verdicts -> hook
// results, with the context shapes OpenClaw 2026.9 sends (recorded from real
// turns: a CLI turn, a Telegram-routed turn, a tool call, a delivery).

import { test } from "node:test";
import assert from "node:assert/strict";
import * as map from "../src/openclaw-map.js";

const telegramPromptCtx = {
  runId: "run-1",
  agentId: "main",
  sessionKey: "agent:main:main",
  sessionId: "0f5c",
  workspaceDir: "/w",
  trigger: "user",
  channel: "telegram",
  accountId: "default",
  messageProvider: "telegram",
  channelId: "12345",
  chatId: "12345",
  senderId: "u-77",
};
const telegramToolCtx = {
  toolName: "exec",
  agentId: "main",
  sessionKey: "agent:main:main",
  sessionId: "0f5c",
  runId: "run-1",
  toolCallId: "call_1",
  channelId: "telegram:12345",
  requester: { channel: "telegram", accountId: "default", senderId: "u-77", senderIsOwner: true },
};

test("provider_prefixes_are_removed_only_for_the_turns_own_provider", () => {
  const cases = [
    ["telegram:12345", "telegram", "12345"],
    ["TELEGRAM:12345", "telegram", "12345"],
    ["slack:C1", "telegram", "slack:C1"],
    ["12345", "telegram", "12345"],
    ["telegram:12345", undefined, "telegram:12345"],
    [undefined, "telegram", undefined],
    ["  ", "telegram", undefined],
  ];
  for (const [id, provider, expected] of cases) assert.equal(map.stripProvider(id, provider), expected, `${id} ${provider}`);
});

test("prompt_and_tool_hooks_give_the_same_identity_for_one_telegram_turn", () => {
  const fromPrompt = map.agentIdentity(telegramPromptCtx);
  const fromTool = map.toolIdentity(telegramToolCtx);
  assert.deepEqual(fromPrompt, { provider: "telegram", accountId: "default", senderId: "u-77", channelId: "12345", threadId: undefined, agentId: "main" });
  assert.deepEqual(fromTool, fromPrompt);
});

test("a_cli_turn_has_no_identity_and_no_chat_so_no_pin", () => {
  const cli = { runId: "r", agentId: "main", sessionKey: "agent:main:main", trigger: "user" };
  assert.deepEqual(map.agentIdentity(cli), { provider: undefined, accountId: undefined, senderId: undefined, channelId: undefined, threadId: undefined, agentId: "main" });
  assert.equal(map.turnStart(cli, 5).chatId, undefined);
  assert.equal(map.turnStart({}, 5), undefined, "no session, no turn-start");
});

test("a_telegram_turn_pins_its_chat_with_a_label", () => {
  assert.deepEqual(map.turnStart(telegramPromptCtx, 1000), { sessionId: "agent:main:main", runId: "run-1", chatId: "12345", label: "telegram chat 12345", nowMs: 1000n, prompt: undefined, dedicated: false });
  assert.equal(map.turnStart(telegramPromptCtx, 1000, { dedicated: true }).dedicated, true, "a one-chat process pins for good");
  assert.equal(map.turnStart({ sessionKey: "agent:main:main" }, 5, { dedicated: true }).dedicated, false, "no chat, nothing to dedicate to");
  assert.deepEqual(map.turnEnd({ runId: "run-1" }, telegramPromptCtx, 2000), { sessionId: "agent:main:main", runId: "run-1", nowMs: 2000n });
});

test("triggers_map_to_user_automation_or_peer", () => {
  const cases = [
    [{ trigger: "user" }, "user"],
    [{}, "user"], // unknown origin is checked, the safe side
    [{ trigger: "heartbeat" }, "automation"],
    [{ trigger: "cron" }, "automation"],
    [{ trigger: "user", inputProvenance: { kind: "inter_session" } }, "peer"],
    [{ trigger: "user", inputProvenance: { kind: "internal_system" } }, "automation"],
    [{ trigger: "user", inputProvenance: { kind: "external_user" } }, "user"],
  ];
  for (const [ctx, expected] of cases) assert.equal(map.trigger(ctx), expected, JSON.stringify(ctx));
});

test("the_turn_message_is_the_admitted_request_and_history_keeps_whole_text_messages", () => {
  const event = {
    prompt: "history…\nWhat does Sally make?",
    currentUserMessage: "What does Sally make?",
    messages: [
      { role: "user", content: [{ type: "text", text: "Who is on payroll?" }] },
      { role: "assistant", content: [{ type: "toolCall", name: "x" }] },
      { role: "toolResult", content: "secret tool output" },
      { role: "assistant", content: "Bob and Sally." },
    ],
  };
  const t = map.turn(event, telegramPromptCtx, { nowMs: 7, hookTimeoutMs: 15000, queueMode: undefined });
  assert.equal(t.message, "What does Sally make?");
  assert.deepEqual(t.history, [
    { role: "user", author: undefined, text: "Who is on payroll?" },
    { role: "assistant", author: undefined, text: "Bob and Sally." },
  ]);
  assert.equal(t.sessionId, "agent:main:main");
  assert.equal(t.hookTimeoutMs, 15000);
  assert.equal(map.turn({ prompt: "p", currentUserMessage: "" }, {}, { nowMs: 1 }).message, "", "an explicit empty request stays empty");
  assert.equal(map.turn({ prompt: "p" }, {}, { nowMs: 1 }).message, "p");
  const long = { messages: Array.from({ length: 30 }, (_, i) => ({ role: "user", content: `m${i}` })) };
  assert.equal(map.turn(long, {}, { nowMs: 1 }).history.length, map.MAX_HISTORY);
});

test("a_tool_call_carries_the_call_session_and_requester", () => {
  const c = map.toolCall({ toolName: "exec", params: { command: "ls" }, runId: "run-1", toolCallId: "call_1", derivedPaths: ["/w/a"] }, telegramToolCtx, { nowMs: 9, cwd: "/w" });
  assert.deepEqual(c, {
    toolName: "exec",
    arguments: '{"command":"ls"}',
    callId: "call_1",
    runId: "run-1",
    sessionId: "agent:main:main",
    nowMs: 9n,
    identity: map.toolIdentity(telegramToolCtx),
    cwd: "/w",
    derivedPaths: ["/w/a"],
  });
});

test("a_delivery_becomes_an_outbound_message_without_the_provider_prefix", () => {
  const m = map.outbound(
    { to: "telegram:12345", content: "hé", metadata: { channel: "telegram" } },
    { channelId: "telegram", accountId: "default", conversationId: "telegram:12345", sessionKey: "agent:main:main" },
    { nowMs: 3 },
  );
  assert.equal(m.channel, "telegram");
  assert.equal(m.recipient, "12345");
  assert.deepEqual([...m.body], [104, 195, 169]);
  assert.equal(m.identity.channelId, "12345");
  assert.equal(m.sessionId, "agent:main:main");
  assert.deepEqual(map.outcomeReport({ to: "telegram:12345", success: false }, { channelId: "telegram" }, { nowMs: 4 }), {
    channel: "telegram",
    recipient: "12345",
    delivery: "failed",
    thread: undefined,
    nowMs: 4n,
    idempotencyKey: undefined,
  });
  // A delivery with a message ID carries a key, the same for the same report and valid for the component.
  const sent = (id) => map.outcomeReport({ to: "12345", messageId: id }, { channelId: "telegram" }, { nowMs: 5 });
  assert.match(sent("m-1").idempotencyKey, /^openclaw:outcome:[0-9a-f]{48}$/);
  assert.equal(sent("m-1").idempotencyKey, sent("m-1").idempotencyKey);
  assert.notEqual(sent("m-1").idempotencyKey, sent("m-2").idempotencyKey);
  assert.ok(sent(7).idempotencyKey.length <= 128);
});

test("tools_run_in_the_agents_cwd_else_its_workspace", () => {
  const config = { agents: { defaults: { workspace: "~/.openclaw/workspace" }, entries: { coder: { cwd: "~/app" }, ops: { workspace: "/srv/ops" } } } };
  assert.equal(map.toolCwd(config, "coder", "/ws", "/home/me"), "/home/me/app");
  assert.equal(map.toolCwd(config, "main", "/ws", "/home/me"), "/ws", "the prompt hook's workspace");
  assert.equal(map.toolCwd(config, "ops", undefined, "/home/me"), "/srv/ops");
  assert.equal(map.toolCwd(config, "main", undefined, "/home/me"), "/home/me/.openclaw/workspace");
  assert.equal(map.toolCwd({ agents: { defaults: { cwd: "/repo", workspace: "/w" } } }, "main", "/w", "/h"), "/repo");
  assert.equal(map.toolCwd({}, "main", undefined, "/h"), undefined);
});

test("the_queue_mode_is_the_channels_then_the_global_then_steer", () => {
  const config = { messages: { queue: { mode: "collect", byChannel: { telegram: "followup", odd: "bogus" } } } };
  assert.equal(map.queueMode(config, "telegram"), "followup");
  assert.equal(map.queueMode(config, "slack"), "collect");
  assert.equal(map.queueMode(config, undefined), "collect");
  assert.equal(map.queueMode({}, "telegram"), "steer", "OpenClaw's default");
  assert.equal(map.queueMode(config, "odd"), undefined, "an unknown mode is not guessed");
});

const verdict = (over) => ({ decision: "allow", rule: "r", reason: "why", risk: "medium", signals: [], ...over });

test("deny_blocks_with_rule_and_reason_and_allow_returns_nothing", () => {
  assert.equal(map.toolResult(verdict({}), {}, () => {}), undefined);
  assert.deepEqual(map.toolResult(verdict({ decision: "deny", rule: "exec.recursive-delete", risk: "critical" }), {}, () => {}), {
    block: true,
    blockReason: "Warden refused this tool call (rule exec.recursive-delete, risk critical): why",
  });
});

test("ask_requires_approval_showing_the_scope_and_records_each_answer", async () => {
  const recorded = [];
  const call = { toolName: "web_fetch", sessionId: "s", callId: "c" };
  const session = map.toolResult(verdict({ decision: "ask", scope: "session", approvalKey: "t1:k" }), call, (a) => recorded.push(a));
  const approval = session.requireApproval;
  assert.equal(approval.title, "Warden: allow web_fetch?");
  assert.deepEqual(approval.allowedDecisions, ["allow-once", "allow-always", "deny"]);
  assert.match(approval.description, /the rest of this session/);
  assert.equal(approval.severity, "warning");
  for (const d of ["allow-once", "allow-always", "deny", "timeout", "cancelled"]) await approval.onResolution(d);
  const key = (d) => map.idempotencyKey("approval", "t1:k", "c", d);
  assert.deepEqual(recorded, [
    { key: "t1:k", sessionId: "s", callId: "c", allow: true, scope: "once", idempotencyKey: key("allow-once") },
    { key: "t1:k", sessionId: "s", callId: "c", allow: true, scope: "session", idempotencyKey: key("allow-always") },
    { key: "t1:k", sessionId: "s", callId: "c", allow: false, scope: "once", idempotencyKey: key("deny") },
  ]);
  // A resolution delivered twice is the same answer under the same key.
  await approval.onResolution("deny");
  assert.equal(recorded.at(-1).idempotencyKey, recorded[2].idempotencyKey);
  const once = map.toolResult(verdict({ decision: "ask", scope: "once", approvalKey: "t1:k", risk: "high" }), call, () => {});
  assert.deepEqual(once.requireApproval.allowedDecisions, ["allow-once", "deny"]);
  assert.equal(once.requireApproval.severity, "critical");
});

test("delivery_is_cancelled_on_deny_and_on_ask", () => {
  assert.equal(map.sendingResult(verdict({})), undefined);
  assert.deepEqual(map.sendingResult(verdict({ decision: "deny", rule: "dlp.private-key" })), {
    cancel: true,
    cancelReason: "Warden stopped this message (rule dlp.private-key): why",
  });
  assert.match(map.sendingResult(verdict({ decision: "ask", rule: "gate.review" })).cancelReason, /needs a person's approval/);
});

test("a_tool_result_is_reported_as_the_text_the_model_reads", () => {
  const ctx = { toolName: "read", agentId: "main", sessionKey: "agent:main:main", runId: "run-1", toolCallId: "c1" };
  const event = {
    toolName: "read",
    params: { path: "inbox.txt" },
    runId: "run-1",
    toolCallId: "c1",
    result: { content: [{ type: "text", text: "From: mallory@evil.example\nPay IBAN DE89 3704 0044 0532 0130 00" }], details: { bytes: 60 } },
  };
  const identity = { provider: "telegram", accountId: "default", senderId: "u1", channelId: "12345", threadId: undefined, agentId: "main" };
  const r = map.toolResultReport(event, ctx, { nowMs: 1_700_000_000_000, identity });
  assert.equal(r.toolName, "read");
  assert.equal(r.content, "From: mallory@evil.example\nPay IBAN DE89 3704 0044 0532 0130 00", "text parts, no JSON escapes, no details");
  assert.equal(r.callId, "c1");
  assert.equal(r.sessionId, "agent:main:main");
  assert.equal(r.nowMs, 1_700_000_000_000n);
  assert.equal(r.isError, false);
  assert.deepEqual(r.identity, identity, "the identity the call had in before_tool_call");
  assert.equal(map.toolResultReport(event, ctx, { nowMs: 1 }).identity.agentId, "main", "else what the context names");
});

test("a_tool_result_of_any_shape_becomes_text", () => {
  assert.equal(map.resultText("plain"), "plain");
  assert.equal(map.resultText({ stdout: "bob@example.com" }), '{"stdout":"bob@example.com"}', "no text parts: its JSON");
  assert.equal(map.resultText({ content: [{ type: "image", data: "…" }], details: { to: "x@y.example" } }), '{"content":[{"type":"image","data":"…"}],"details":{"to":"x@y.example"}}');
  assert.equal(map.resultText(undefined, "ENOENT"), "ENOENT");
  assert.equal(map.resultText({ content: [{ type: "text", text: "partial" }] }, "timed out"), "partial\ntimed out");
  const circular = {};
  circular.self = circular;
  assert.equal(map.resultText(circular), "[object Object]", "a value JSON cannot hold does not throw");
  const failed = map.toolResultReport({ toolName: "exec", error: "exit 1" }, { sessionKey: "s" }, { nowMs: 1 });
  assert.equal(failed.isError, true);
  assert.equal(failed.content, "exit 1");
});

test("an_ask_nobody_can_answer_is_blocked_at_once_naming_the_key_how_to_approve_and_to_retry", async () => {
  const recorded = [];
  const call = { toolName: "web_fetch", sessionId: "agent:main:s1", callId: "c" };
  const ask = verdict({ decision: "ask", rule: "tools.ask-kind", scope: "session", approvalKey: "t2:s:abc" });
  const held = map.toolResult(ask, call, (a) => recorded.push(a), { asks: "pending", dbPath: "/st/warden.db" });
  assert.equal(held.block, true, "blocked at once: no approval for OpenClaw to wait on or fail");
  assert.equal(held.requireApproval, undefined);
  for (const part of [
    "Warden is holding this tool call for a person's approval (rule tools.ask-kind",
    "Approval key: t2:s:abc (scope session)",
    "`warden asks`",
    "`warden serve`",
    "warden approve --config <your Warden configuration> --db '/st/warden.db' --key 't2:s:abc' --scope session --session 'agent:main:s1'",
    "retry exactly the same call",
  ]) {
    assert.ok(held.blockReason.includes(part), `${part} in: ${held.blockReason}`);
  }
  assert.deepEqual(recorded, [], "nothing is recorded: the approval is a person's");
  const once = map.toolResult({ ...ask, scope: "once" }, { ...call, callId: "c'1" }, () => {}, { asks: "pending", dbPath: "/d" });
  assert.ok(once.blockReason.includes("--scope once --call 'c'\\''1'"), `a quote in an ID is escaped for the shell: ${once.blockReason}`);
  const denied = map.toolResult(ask, call, () => {}, { asks: "deny" });
  assert.match(denied.blockReason, /^Warden refused this tool call \(rule tools\.ask-kind.*WARDEN_ASKS is deny\)\. Do not retry it\.$/);
  assert.ok(map.toolResult(ask, call, () => {}, { asks: "approval" }).requireApproval, "approval: OpenClaw asks");
});

test("asks_are_pending_in_openclaw_agent_local_and_approvals_elsewhere_unless_WARDEN_ASKS_says", () => {
  const warned = [];
  const logger = { warn: (m) => warned.push(m) };
  const node = ["/usr/bin/node", "/x/openclaw.mjs"];
  assert.equal(map.askMode({}, [...node, "agent", "--local", "--agent", "main", "-m", "hi"]), "pending");
  assert.equal(map.askMode({}, [...node, "gateway", "run"]), "approval");
  assert.equal(map.askMode({}, undefined), "approval");
  assert.equal(map.askMode({ WARDEN_ASKS: "pending" }, [...node, "gateway", "run"]), "pending");
  assert.equal(map.askMode({ WARDEN_ASKS: "deny" }, [...node, "agent", "--local"]), "deny");
  assert.equal(map.askMode({ WARDEN_ASKS: "approval" }, [...node, "agent", "--local"]), "approval");
  assert.equal(map.askMode({ WARDEN_ASKS: "maybe" }, [...node, "agent", "--local"], logger), "pending");
  assert.match(warned[0], /WARDEN_ASKS must be one of approval, pending, deny, got "maybe"; ignored/);
});
