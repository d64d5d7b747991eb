// The audit of OpenClaw's configuration at start-up, with the real component:
// the plugin registered in `full` mode logs the component's findings on the
// configuration the Gateway gave it and keeps them for diagnostics().

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const GUEST = process.env.WARDEN_TEST_GUEST_DIR;
if (!GUEST) throw new Error("set WARDEN_TEST_GUEST_DIR (scripts/test.sh does)");
process.env.WARDEN_GUEST_DIR = GUEST;
const { default: plugin, diagnostics } = await import("../src/index.js");
const { auditAtStart, describe } = await import("../src/config-audit.js");

function register(config, registrationMode = "full") {
  const lines = [];
  const at = (level) => (m) => lines.push(`${level} ${m}`);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-audit-"));
  plugin.register({
    id: "warden",
    registrationMode,
    pluginConfig: {},
    config,
    runtime: { state: { resolveStateDir: () => stateDir } },
    logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") },
    on: () => {},
  });
  return lines;
}

async function settled() {
  for (let i = 0; i < 200 && diagnostics().configAudit.state === "pending"; i++) await new Promise((r) => setTimeout(r, 25));
  return diagnostics().configAudit;
}

test("a_configuration_without_conversation_access_is_reported_at_start_with_its_fix", async () => {
  const lines = register({ plugins: { entries: { warden: { enabled: true, hooks: { timeoutMs: 3000 } } } } });
  const audit = await settled();
  assert.equal(audit.state, "done", audit.error);
  const rules = audit.findings.map((f) => f.rule);
  assert.ok(rules.includes("config.openclaw.conversation-access"), rules.join());
  assert.ok(rules.includes("config.openclaw.hook-timeout"), rules.join());
  assert.ok(rules.includes("config.openclaw.queue-steer"), rules.join());
  const access = audit.findings.find((f) => f.rule === "config.openclaw.conversation-access");
  assert.equal(access.risk, "high");
  assert.equal(access.path, "plugins.entries.warden.hooks.allowConversationAccess");
  assert.deepEqual(access.fix, { action: "set", path: "plugins.entries.warden.hooks.allowConversationAccess", value: "true" });
  assert.ok(lines.some((l) => l.startsWith("warn warden: openclaw configuration: high config.openclaw.conversation-access")), lines.join("\n"));
  assert.ok(lines.some((l) => l.startsWith("info warden: openclaw configuration: medium config.openclaw.queue-steer")), lines.join("\n"));
});

test("a_configuration_warden_needs_nothing_in_is_reported_clean", async () => {
  const lines = register({
    messages: { queue: { mode: "followup" } },
    plugins: { entries: { warden: { enabled: true, hooks: { allowConversationAccess: true } } } },
  });
  const audit = await settled();
  assert.equal(audit.state, "done", audit.error);
  assert.deepEqual(audit.findings, []);
  assert.ok(lines.includes("info warden: openclaw configuration: no finding"), lines.join("\n"));
});

test("discovery_registrations_audit_nothing", async () => {
  await settled();
  const before = diagnostics().configAudit;
  const lines = register({ plugins: { enabled: false } }, "discovery");
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(diagnostics().configAudit, before);
  assert.ok(!lines.some((l) => l.includes("openclaw configuration")), lines.join("\n"));
});

test("a_guard_that_cannot_start_leaves_the_audit_failed_with_a_warning", async () => {
  const lines = [];
  const logger = { warn: (m) => lines.push(m), info: () => {} };
  const result = await auditAtStart({}, () => ({ call: () => Promise.reject(new Error("it did not start within its deadline")) }), logger);
  assert.equal(result.configAudit.state, "failed");
  assert.match(result.configAudit.error, /did not start/);
  assert.ok(lines.some((l) => /could not be audited .*warden audit-config/.test(l)), lines.join("\n"));
});

test("a_finding_is_described_with_rule_path_and_fix", () => {
  const line = describe({ rule: "config.openclaw.plugin-disabled", risk: "critical", path: "plugins.entries.warden.enabled", detail: "off", fix: { action: "set", path: "plugins.entries.warden.enabled", value: "true" } });
  assert.equal(line, "openclaw configuration: critical config.openclaw.plugin-disabled at plugins.entries.warden.enabled: off (fix: set plugins.entries.warden.enabled true; `warden harden` applies the fixes)");
});
