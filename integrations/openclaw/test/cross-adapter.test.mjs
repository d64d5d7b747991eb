// The cross-adapter fixture (tests/fixtures/cross-adapter): one configuration
// and fifteen tool calls that every adapter must decide identically. Here they
// go through the plugin's before_tool_call handler with the real component:
// deny must block and ask must require approval, each naming the expected
// rule; allow must let the call through, with the rule the component logged.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const GUEST = process.env.WARDEN_TEST_GUEST_DIR;
if (!GUEST) throw new Error("set WARDEN_TEST_GUEST_DIR (scripts/test.sh does)");
process.env.WARDEN_GUEST_DIR = GUEST;
const { default: plugin } = await import("../src/index.js");

const FIXTURE = new URL("../../../tests/fixtures/cross-adapter/", import.meta.url);
const { cwd, cases } = JSON.parse(fs.readFileSync(new URL("cases.json", FIXTURE), "utf8"));
const config = JSON.parse(fs.readFileSync(new URL("config.json", FIXTURE), "utf8"));

test("the_plugin_gives_every_fixture_case_its_expected_decision_and_rule", async () => {
  let handler;
  const lines = [];
  plugin.register({
    id: "warden",
    registrationMode: "full",
    pluginConfig: config,
    // OpenClaw tells tools their working directory through the agent's configuration.
    config: { agents: { defaults: { cwd } } },
    runtime: { state: { resolveStateDir: () => fs.mkdtempSync(path.join(os.tmpdir(), "warden-cross-")) } },
    logger: { debug: (m) => lines.push(m), info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) },
    on: (name, h) => {
      if (name === "before_tool_call") handler = h;
    },
  });
  for (const [i, c] of cases.entries()) {
    const seen = lines.length;
    // No session: no pin or remembered answer applies, as the fixture says.
    const result = await handler({ toolName: c.tool, params: c.args, toolCallId: `call-${i}` }, { toolName: c.tool, agentId: "main" });
    const what = `${c.tool} ${JSON.stringify(c.args)}`;
    if (c.expect.decision === "deny") {
      assert.equal(result?.block, true, what);
      assert.match(result.blockReason, new RegExp(`\\(rule ${c.expect.rule.replaceAll(".", "\\.")},`), what);
    } else if (c.expect.decision === "ask") {
      assert.ok(result?.requireApproval, what);
      assert.match(result.requireApproval.description, new RegExp(`Rule: ${c.expect.rule.replaceAll(".", "\\.")}\\.`), what);
    } else {
      assert.equal(result, undefined, what);
      const logged = lines.slice(seen).join("\n");
      assert.match(logged, new RegExp(`allow by ${c.expect.rule.replaceAll(".", "\\.")}\\b`), `${what}\n${logged}`);
    }
  }
  console.log(`${cases.length} cross-adapter cases gave their expected decision and rule through the OpenClaw plugin`);
});
