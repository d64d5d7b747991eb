// Request times: the plugin's clock check, at and past its tolerance, and the
// guard refusing a far `nowMs` before any worker starts (no guest needed).

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { admitAt, admitCall, span, ClockError, CLOCK_REFUSED_RULE, CLOCK_TOLERANCE_MS } from "../src/clock.js";
import { Guard, GuestFailure, GUEST_FAILURE_RULE } from "../src/guard.js";

const HOST = 1_764_590_400_000n; // 2025-12-01T12:00:00Z
const TOLERANCE = BigInt(CLOCK_TOLERANCE_MS);
const DAY = 86_400_000;

const refusal = (field, value, host = HOST) => {
  try {
    admitAt(field, value, host);
  } catch (e) {
    assert.ok(e instanceof ClockError);
    return e.message;
  }
  return undefined;
};

test("request_times_are_admitted_up_to_the_tolerance_either_way_and_not_one_millisecond_more", () => {
  assert.equal(CLOCK_TOLERANCE_MS, 300_000);
  for (const ok of [HOST, HOST + TOLERANCE, HOST - TOLERANCE]) assert.equal(refusal("nowMs", ok), undefined, `${ok}`);
  assert.equal(
    refusal("nowMs", HOST + TOLERANCE + 1n),
    `nowMs: \`${HOST + TOLERANCE + 1n}\` is 5 min 0 s (300001 ms) ahead of this host's clock; a request time may differ ` +
      "from it by at most 5 minutes (300000 ms). To replay recorded requests with their own times, set WARDEN_REPLAY=1.",
  );
  assert.match(refusal("nowMs", HOST - TOLERANCE - 1n), /^nowMs: `\d+` is 5 min 0 s \(300001 ms\) behind this host's clock/);
});

test("a_time_in_other_units_gets_a_hint", () => {
  const cases = [
    [HOST * 1000n, "looks like microseconds"],
    [HOST * 1000n + 999n, "looks like microseconds"],
    [HOST * 1_000_000n, "looks like nanoseconds"],
    [HOST / 1000n, "looks like seconds"],
  ];
  for (const [value, hint] of cases) {
    const e = refusal("nowMs", value);
    assert.ok(e.includes(hint) && e.includes(`\`${value}\``), e);
  }
  const e = refusal("nowMs", 1_700_000_000_000n);
  assert.ok(e.includes("is 747 days (64590400000 ms) behind") && !e.includes("looks like"), e);
  assert.ok(refusal("nowMs", 2n ** 64n - 1n));
  assert.ok(refusal("nowMs", 0));
});

test("spans_read_in_the_largest_unit_that_fits", () => {
  const cases = [[0n, "0 ms"], [999n, "999 ms"], [1000n, "1 s"], [60_000n, "1 minute"], [300_000n, "5 minutes"], [300_001n, "5 min 0 s"], [3_600_000n, "1 h 0 min"], [86_400_000n, "1 day"], [2n * 86_400_000n + 1n, "2 days"]];
  for (const [ms, text] of cases) assert.equal(span(ms), text, `${ms}`);
});

test("every_record_argument_of_a_guard_call_is_checked_and_replay_checks_none", () => {
  const now = () => Number(HOST);
  assert.doesNotThrow(() => admitCall("policy.checkToolCall", [{ toolName: "x", nowMs: HOST }], { now }));
  assert.doesNotThrow(() => admitCall("policy.diagnostics", [], { now }));
  assert.throws(() => admitCall("policy.recordOutcome", [{ nowMs: HOST * 1000n }], { now }), { name: "ClockError", message: /^policy\.recordOutcome: nowMs: `\d+` is .* It looks like microseconds/ });
  assert.throws(() => admitCall("policy.settleTurn", [{ nowMs: Number(HOST) + DAY }], { now }), ClockError);
  assert.doesNotThrow(() => admitCall("policy.settleTurn", [{ nowMs: 0n }], { now, replay: true }));
});

const tempDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "warden-clock-")), "w.db");
const missingGuest = () => path.join(os.tmpdir(), "warden-clock-no-guest");
const far = () => BigInt(Date.now() + DAY);
const toolCall = (nowMs) => ({ toolName: "send", arguments: "{}", runId: "r1", sessionId: "s1", nowMs, identity: {}, derivedPaths: [] });

test("the_guard_refuses_a_far_future_now_ms_before_any_worker_starts_and_each_check_keeps_its_failure_mode", async () => {
  const guard = new Guard({ guestDir: missingGuest(), dbPath: tempDb(), configText: "{}", env: {} });
  const t = far();
  const tool = await guard.checkToolCall(toolCall(t));
  assert.equal(tool.decision, "deny");
  assert.equal(tool.rule, CLOCK_REFUSED_RULE);
  assert.ok(tool.reason.includes(`policy.checkToolCall: nowMs: \`${t}\` is `) && tool.reason.includes("WARDEN_REPLAY=1"), tool.reason);
  const message = await guard.checkOutbound({ direction: "outbound", channel: "sms", recipient: "+1", body: new Uint8Array([104]), nowMs: t, identity: {} });
  assert.deepEqual([message.decision, message.rule], ["deny", CLOCK_REFUSED_RULE]);
  const turn = await guard.checkTurn({ sessionId: "s1", nowMs: t, identity: {}, trigger: "user", message: "hi", context: { sinceLastReply: [] }, history: [] });
  assert.deepEqual([turn.proceed, turn.rule], [true, CLOCK_REFUSED_RULE], "inbound checks fail open");
  await assert.rejects(guard.call("policy.startTurn", { sessionId: "s1", chatId: "C1", nowMs: t }), ClockError);
  await assert.rejects(guard.call("policy.recordOutcome", { channel: "sms", recipient: "+1", delivery: "sent", nowMs: BigInt(Date.now()) * 1000n }), /looks like microseconds/);
  // A time near the clock passes the check and reaches the (missing) component.
  const near = await guard.checkToolCall(toolCall(BigInt(Date.now())));
  assert.deepEqual([near.decision, near.rule], ["deny", GUEST_FAILURE_RULE]);
  await assert.rejects(guard.call("policy.startTurn", { sessionId: "s1", chatId: "C1", nowMs: BigInt(Date.now()) }), GuestFailure);
  await guard.close();
});

test("a_guard_started_with_warden_replay_passes_recorded_times_on", async () => {
  const guard = new Guard({ guestDir: missingGuest(), dbPath: tempDb(), configText: "{}", env: { WARDEN_REPLAY: "1" } });
  const tool = await guard.checkToolCall(toolCall(1_700_000_000_000n));
  assert.deepEqual([tool.decision, tool.rule], ["deny", GUEST_FAILURE_RULE], "checked by the component, not refused by the clock");
  await guard.close();
});
