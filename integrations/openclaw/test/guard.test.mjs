// The guard: the real component in worker threads, with the sandbox rules of
// the Rust host, and a hostile guest (tests/guests/hostile) that spins, hoards
// memory and traps, to prove the plugin survives it and answers each check
// with its failure mode. Needs the built guests:
//   WARDEN_TEST_GUEST_DIR (the plugin's guest/) and WARDEN_TEST_HOSTILE_DIR.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Guard, CONFIG_REFUSED_RULE, GUEST_FAILURE_RULE } from "../src/guard.js";

const GUEST = process.env.WARDEN_TEST_GUEST_DIR;
const HOSTILE = process.env.WARDEN_TEST_HOSTILE_DIR;
if (!GUEST || !HOSTILE) throw new Error("set WARDEN_TEST_GUEST_DIR and WARDEN_TEST_HOSTILE_DIR (scripts/test.sh does)");

function recorder() {
  const lines = [];
  const at = (level) => (m) => lines.push({ level, m });
  return { lines, logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

const tempDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "warden-guard-")), "w.db");
const now = () => BigInt(Date.now());
const call = (toolName, over = {}) => ({
  toolName,
  arguments: "{}",
  callId: undefined,
  runId: "r1",
  sessionId: "s1",
  nowMs: now(),
  identity: {},
  cwd: undefined,
  derivedPaths: [],
  ...over,
});
const turn = { runId: "r1", sessionId: "s1", nowMs: now(), identity: {}, trigger: "user", message: "hi", context: { sinceLastReply: [] }, history: [] };
const outbound = { direction: "outbound", channel: "sms", recipient: "+1", body: new Uint8Array([104, 105]), nowMs: now(), identity: {} };

test("a_pin_is_enforced_and_survives_a_new_guard_on_the_same_database", async () => {
  const db = tempDb();
  const config = JSON.stringify({ pin: { tools: [{ name: "send", kind: "chat", chatParam: "to" }] } });
  const { logger, lines } = recorder();
  const first = new Guard({ guestDir: GUEST, dbPath: db, configText: config, logger });
  const pin = await first.call("policy.startTurn", { sessionId: "s1", runId: "r1", chatId: "C1", label: "Alice", nowMs: now() });
  assert.equal(pin.chatId, "C1");
  const other = await first.checkToolCall(call("send", { arguments: '{"to":"C2"}' }));
  assert.equal(other.decision, "deny");
  assert.equal(other.rule, "pin.other-chat");
  await first.close();
  assert.ok(lines.some((l) => l.m.includes("configured (policy sha256:") && l.m.includes("active: pin")), "the configuration report is logged");

  const second = new Guard({ guestDir: GUEST, dbPath: db, configText: config, logger });
  const same = await second.checkToolCall(call("send", { arguments: '{"to":"C1"}' }));
  assert.equal(same.decision, "allow");
  assert.equal(same.rule, "pin.pinned-chat");
  const again = await second.checkToolCall(call("send", { arguments: '{"to":"C2"}' }));
  assert.equal(again.rule, "pin.other-chat");
  await second.call("policy.settleTurn", { sessionId: "s1", runId: "r1", nowMs: now() });
  const settled = await second.checkToolCall(call("send", { arguments: '{"to":"C2"}' }));
  assert.equal(settled.decision, "allow");
  await second.close();
});

test("a_refused_configuration_fails_closed_for_tools_and_messages_and_open_for_turns", async () => {
  const { logger, lines } = recorder();
  const g = new Guard({
    guestDir: GUEST,
    dbPath: tempDb(),
    configText: JSON.stringify({ pin: { ttlMinutes: 2000, tools: [{ name: "a", kind: "new-chat" }, { name: "a", kind: "new-chat" }] } }),
    logger,
  });
  const tool = await g.checkToolCall(call("anything"));
  assert.equal(tool.decision, "deny");
  assert.equal(tool.rule, CONFIG_REFUSED_RULE);
  const message = await g.checkOutbound(outbound);
  assert.equal(message.decision, "deny");
  assert.equal(message.rule, CONFIG_REFUSED_RULE);
  const t = await g.checkTurn(turn);
  assert.equal(t.proceed, true);
  assert.equal(t.rule, CONFIG_REFUSED_RULE);
  const errors = lines.filter((l) => l.level === "error");
  assert.equal(errors.length, 1, "the refusal is logged once");
  assert.match(errors[0].m, /pin\.ttlMinutes: .*2000/);
  assert.match(errors[0].m, /pin\.tools\[1\]\.name/);
  await g.close();
});

test("a_spinning_guest_is_stopped_at_its_deadline_and_replaced", async () => {
  const g = new Guard({ guestDir: HOSTILE, dbPath: tempDb(), configText: "{}", logger: recorder().logger, cpuMs: 300, pool: 1 });
  assert.equal((await g.checkToolCall(call("warmup"))).rule, "hostile.ok");
  const started = Date.now();
  const spun = await g.checkToolCall(call("spin"));
  const elapsed = Date.now() - started;
  assert.equal(spun.decision, "deny");
  assert.equal(spun.rule, GUEST_FAILURE_RULE);
  assert.match(spun.reason, /CPU deadline of 300 ms/);
  assert.ok(elapsed >= 280 && elapsed < 2_000, `stopped after ${elapsed} ms`);
  const after = await g.checkToolCall(call("fine"));
  assert.equal(after.decision, "allow");
  assert.equal(after.rule, "hostile.ok");
  await g.close();
});

test("a_spinning_turn_check_fails_open", async () => {
  const g = new Guard({ guestDir: HOSTILE, dbPath: tempDb(), configText: "{}", logger: recorder().logger, cpuMs: 200 });
  const t = await g.checkTurn(turn);
  assert.equal(t.proceed, true);
  assert.equal(t.outcome, "failed");
  assert.equal(t.rule, GUEST_FAILURE_RULE);
  await g.close();
});

test("a_trapping_guest_fails_closed_and_the_next_call_gets_a_fresh_instance", async () => {
  const g = new Guard({ guestDir: HOSTILE, dbPath: tempDb(), configText: "{}", logger: recorder().logger, pool: 1 });
  const crashed = await g.checkToolCall(call("crash"));
  assert.equal(crashed.decision, "deny");
  assert.equal(crashed.rule, GUEST_FAILURE_RULE);
  assert.match(crashed.reason, /trapped/);
  const message = await g.checkOutbound(outbound);
  assert.equal(message.decision, "deny");
  assert.equal(message.rule, GUEST_FAILURE_RULE);
  assert.equal((await g.checkToolCall(call("fine"))).rule, "hostile.ok");
  await g.close();
});

test("a_hoarding_guest_is_stopped_by_the_memory_cap_not_the_deadline", async () => {
  const g = new Guard({
    guestDir: HOSTILE,
    dbPath: tempDb(),
    configText: "{}",
    logger: recorder().logger,
    cpuMs: 20_000,
    memoryBytes: 32 * 1024 * 1024,
  });
  const started = Date.now();
  const hoarded = await g.checkToolCall(call("hoard"));
  assert.equal(hoarded.decision, "deny");
  assert.equal(hoarded.rule, GUEST_FAILURE_RULE);
  assert.match(hoarded.reason, /trapped: it hit its memory cap of 32 MiB/);
  assert.ok(Date.now() - started < 10_000, "the cap, not the 20 s deadline, stopped it");
  assert.equal((await g.checkToolCall(call("fine"))).rule, "hostile.ok");
  await g.close();
});

test("the_pool_answers_other_calls_while_one_instance_is_stuck", async () => {
  const g = new Guard({ guestDir: HOSTILE, dbPath: tempDb(), configText: "{}", logger: recorder().logger, cpuMs: 1_500, pool: 2 });
  const stuck = g.checkToolCall(call("spin"));
  const started = Date.now();
  const quick = await g.checkToolCall(call("fine"));
  assert.equal(quick.rule, "hostile.ok");
  assert.ok(Date.now() - started < 1_200, "answered before the stuck call's deadline");
  assert.equal((await stuck).rule, GUEST_FAILURE_RULE);
  await g.close();
});

test("typed_policy_errors_reach_the_caller", async () => {
  const g = new Guard({ guestDir: HOSTILE, dbPath: tempDb(), configText: "{}", logger: recorder().logger });
  await assert.rejects(g.call("policy.diagnostics"), (e) => e.name === "Error" && e.payload?.tag === "other" && e.payload.val === "hostile guest");
  await g.close();
});

test("a_missing_component_fails_closed", async () => {
  const g = new Guard({ guestDir: path.join(os.tmpdir(), "no-such-guest"), dbPath: tempDb(), configText: "{}", logger: recorder().logger });
  const v = await g.checkToolCall(call("x"));
  assert.equal(v.decision, "deny");
  assert.equal(v.rule, GUEST_FAILURE_RULE);
  assert.match(v.reason, /cannot load the component/);
  await g.close();
});
