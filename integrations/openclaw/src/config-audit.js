// The audit of OpenClaw's own configuration at start-up: the component's
// `runtime-config.audit` on the configuration the Gateway gave the plugin
// (`api.config`), so the plugin reports what keeps Warden from working
// (queue mode `steer`, conversation access missing, short hook timeouts, ...)
// when it starts, not at the first hook. The same rules as `warden audit-config`.

const AUDIT = Symbol.for("warden.openclaw.configAudit");

/** The latest audit: `{state: "pending" | "done" | "failed", findings, error}`. */
function state() {
  globalThis[AUDIT] ??= { state: "pending", findings: [], error: undefined };
  return globalThis[AUDIT];
}

/** What the plugin knows about its host's configuration, for diagnostics. */
export function diagnostics() {
  const s = state();
  return { configAudit: { state: s.state, findings: s.findings.map((f) => ({ ...f })), error: s.error } };
}

/** One log line for a finding. */
export function describe(f) {
  const fix = f.fix ? `fix: ${f.fix.action} ${f.fix.path}${f.fix.value === undefined ? "" : ` ${f.fix.value}`}` : "fix by hand";
  return `openclaw configuration: ${f.risk} ${f.rule} at ${f.path}: ${f.detail} (${fix}; \`warden harden\` applies the fixes)`;
}

/**
 * Audits `config` (the parsed openclaw.json) through the guard; never throws.
 * High and critical findings are warnings, the rest info. Returns the promise.
 */
export function auditAtStart(config, getGuard, logger) {
  const s = state();
  s.state = "pending";
  let text;
  try {
    text = JSON.stringify(config ?? {});
  } catch (e) {
    s.state = "failed";
    s.error = `the configuration cannot be read: ${e.message}`;
    return Promise.resolve(diagnostics());
  }
  return Promise.resolve()
    .then(() => getGuard().call("runtimeConfig.audit", "openclaw", text))
    .then((findings) => {
      s.state = "done";
      s.findings = Array.isArray(findings) ? findings : [];
      s.error = undefined;
      for (const f of s.findings) {
        const level = f.risk === "high" || f.risk === "critical" ? "warn" : "info";
        logger?.[level]?.(`warden: ${describe(f)}`);
      }
      if (s.findings.length === 0) logger?.info?.("warden: openclaw configuration: no finding");
      return diagnostics();
    })
    .catch((e) => {
      s.state = "failed";
      s.error = e?.message ?? String(e);
      logger?.warn?.(`warden: the openclaw configuration could not be audited (${s.error}); run \`warden audit-config\``);
      return diagnostics();
    });
}
