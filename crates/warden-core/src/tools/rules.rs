//! The rules the judge decides with, and how each decides by default.

use super::config::{RuleDecision as D, RuleRisk as R, RuleScope as S, RuleSetting};

/// Deleting `/`, `/*`, a top-level directory, home or everything in it.
pub const EXEC_RECURSIVE_DELETE: &str = "exec.recursive-delete";
/// Deleting recursively outside the workspace and the writable paths.
pub const EXEC_RECURSIVE_DELETE_OUTSIDE: &str = "exec.recursive-delete-outside";
/// Deleting recursively a target only known when the command runs.
pub const EXEC_RECURSIVE_DELETE_DYNAMIC: &str = "exec.recursive-delete-dynamic";
/// Formatting or partitioning a disk.
pub const EXEC_DISK_FORMAT: &str = "exec.disk-format";
/// Writing to a raw block device or memory device.
pub const EXEC_RAW_DEVICE_WRITE: &str = "exec.raw-device-write";
/// Running downloaded code: piped, substituted or saved and then run.
pub const EXEC_DOWNLOAD_EXECUTE: &str = "exec.download-execute";
/// A function that spawns itself without end, or inline code forking in an endless loop.
pub const EXEC_FORK_BOMB: &str = "exec.fork-bomb";
/// Shutting down, rebooting or halting the machine.
pub const EXEC_SHUTDOWN: &str = "exec.shutdown";
/// A container given the host: privileged, host system paths or the engine's socket mounted, host namespaces.
pub const EXEC_CONTAINER_ESCAPE: &str = "exec.container-escape";
/// Tearing down infrastructure: `terraform destroy`, `kubectl delete`, cloud deletes, dropped databases.
pub const EXEC_INFRASTRUCTURE_DESTROY: &str = "exec.infrastructure-destroy";
/// Erasing shell history or system logs.
pub const EXEC_ERASE_TRACES: &str = "exec.erase-traces";
/// Installing code to run later: cron tables, enabled services, launch agents, logon keys, immutable files.
pub const EXEC_PERSISTENCE: &str = "exec.persistence";
/// Flushing or turning off the firewall.
pub const EXEC_FIREWALL_FLUSH: &str = "exec.firewall-flush";
/// World-writable or setuid modes, or new owners, on system paths.
pub const EXEC_SYSTEM_PERMISSIONS: &str = "exec.system-permissions";
/// Credential files, environment dumps and secret exports sent to a network command.
pub const EXEC_CREDENTIAL_EXFILTRATION: &str = "exec.credential-exfiltration";
/// A program whose name is only known when the command runs.
pub const EXEC_DYNAMIC_PROGRAM: &str = "exec.dynamic-program";
/// Code built at run time: piped into a shell, substituted into `eval` or
/// `bash -c`, or process-substituted, from something other than a download.
pub const EXEC_DYNAMIC_CODE: &str = "exec.dynamic-code";
/// A command that is not valid shell.
pub const EXEC_UNPARSABLE: &str = "exec.unparsable";
/// A command past the parser's or the analysis's bounds.
pub const EXEC_TOO_COMPLEX: &str = "exec.too-complex";
/// Reading or writing a protected path.
pub const PATH_PROTECTED: &str = "path.protected";
/// Reading a path protected from reads only (`"protect": "reads"`).
pub const PATH_PROTECTED_READ: &str = "path.protected-read";
/// Writing a path protected from writes only (`"protect": "writes"`).
pub const PATH_PROTECTED_WRITE: &str = "path.protected-write";
/// Writing outside the workspace and the writable paths.
pub const PATH_OUTSIDE_WORKSPACE: &str = "path.outside-workspace";
/// A required argument is absent, null or empty.
pub const INPUT_MISSING_FIELD: &str = "input.missing-field";
/// An argument has the wrong JSON type.
pub const INPUT_WRONG_TYPE: &str = "input.wrong-type";
/// A string argument is longer than its schema allows.
pub const INPUT_TOO_LONG: &str = "input.too-long";
/// An argument contains a NUL character.
pub const INPUT_NUL_BYTE: &str = "input.nul-byte";
/// The agent's token budget is spent.
pub const BUDGET_TOKENS: &str = "budget.tokens";
/// The agent's call budget is spent.
pub const BUDGET_CALLS: &str = "budget.calls";
/// A tool of a kind listed in `askKinds`.
pub const ASK_KIND: &str = "tools.ask-kind";
/// A tool listed in `askTools`.
pub const ASK_TOOL: &str = "tools.ask-tool";
/// A fetch of a host in `tools.fetch.denyHosts`.
pub const FETCH_DENIED_HOST: &str = "fetch.denied-host";
/// A fetch of a host on neither list, or of a URL whose host cannot be read;
/// decides as `tools.fetch.unlisted` says.
pub const FETCH_UNLISTED_HOST: &str = "fetch.unlisted-host";
/// With `tools.fetch.unlisted: allow` and a deny list, a fetch whose host
/// cannot be compared with `denyHosts` as the host it reaches.
pub const FETCH_UNCHECKED_HOST: &str = "fetch.unchecked-host";
/// A payment past `tools.payment.maxAmount`, `maxPerSession` or `maxPerRecipient`.
pub const PAYMENT_LIMIT: &str = "payment.limit";
/// A payment whose amount is not a plain non-negative number.
pub const PAYMENT_INVALID_AMOUNT: &str = "payment.invalid-amount";

/// Reading or writing Warden's own files (database, configuration, key
/// material, component cache) or the runtime's hook settings.
pub const SELF_PROTECTED_FILE: &str = "self.protected-file";
/// Running Warden's own administrative commands (`warden approve`, `gate`, `serve`, ...).
pub const SELF_ADMIN_COMMAND: &str = "self.admin-command";
/// Opening Warden's database with a database client or inline code.
pub const SELF_DATABASE_CLIENT: &str = "self.database-client";
/// The self-protection rules: always deny, critical; turned off only by
/// naming them in `tools.selfProtection.allow`, never through `tools.rules`.
pub const SELF_RULES: &[&str] = &[SELF_PROTECTED_FILE, SELF_ADMIN_COMMAND, SELF_DATABASE_CLIENT];

/// A person denied this call before, in a scope that still holds.
pub const MEMORY_DENY: &str = "memory.deny";
/// A person allowed this call before, in a scope that still holds.
pub const MEMORY_ALLOW: &str = "memory.allow";
/// Nothing objected.
pub const ALLOW: &str = "tools.allow";
/// Decision memory or budgets could not be read or written: fail closed.
pub const STORAGE_UNAVAILABLE: &str = "tools.storage-unavailable";

/// Signal: 80% (or the configured share) of the token budget is spent.
pub const SIGNAL_TOKENS_WARNING: &str = "budget.tokens-warning";
/// Signal: 80% (or the configured share) of the call budget is spent.
pub const SIGNAL_CALLS_WARNING: &str = "budget.calls-warning";

/// A configurable rule and its default.
#[derive(Debug, Clone, Copy)]
pub struct RuleInfo {
    pub name: &'static str,
    pub default: RuleSetting,
}

const fn rule(name: &'static str, decision: D, risk: R, scope: S) -> RuleInfo {
    RuleInfo { name, default: RuleSetting { decision, risk, scope } }
}

/// Every configurable rule with its default decision, risk and approval scope.
pub const RULES: &[RuleInfo] = &[
    rule(EXEC_RECURSIVE_DELETE, D::Deny, R::Critical, S::Once),
    rule(EXEC_RECURSIVE_DELETE_OUTSIDE, D::Deny, R::High, S::Once),
    rule(EXEC_RECURSIVE_DELETE_DYNAMIC, D::Ask, R::High, S::Once),
    rule(EXEC_DISK_FORMAT, D::Deny, R::Critical, S::Once),
    rule(EXEC_RAW_DEVICE_WRITE, D::Deny, R::Critical, S::Once),
    rule(EXEC_DOWNLOAD_EXECUTE, D::Deny, R::Critical, S::Once),
    rule(EXEC_FORK_BOMB, D::Deny, R::Critical, S::Once),
    rule(EXEC_SHUTDOWN, D::Deny, R::High, S::Once),
    rule(EXEC_FIREWALL_FLUSH, D::Deny, R::High, S::Once),
    rule(EXEC_CONTAINER_ESCAPE, D::Deny, R::Critical, S::Once),
    rule(EXEC_INFRASTRUCTURE_DESTROY, D::Ask, R::High, S::Once),
    rule(EXEC_ERASE_TRACES, D::Ask, R::High, S::Once),
    rule(EXEC_PERSISTENCE, D::Ask, R::High, S::Once),
    rule(EXEC_SYSTEM_PERMISSIONS, D::Deny, R::High, S::Once),
    rule(EXEC_CREDENTIAL_EXFILTRATION, D::Deny, R::Critical, S::Once),
    rule(EXEC_DYNAMIC_PROGRAM, D::Ask, R::Medium, S::Once),
    rule(EXEC_DYNAMIC_CODE, D::Ask, R::High, S::Once),
    rule(EXEC_UNPARSABLE, D::Ask, R::High, S::Once),
    rule(EXEC_TOO_COMPLEX, D::Deny, R::High, S::Once),
    rule(PATH_PROTECTED, D::Deny, R::High, S::Once),
    rule(PATH_PROTECTED_READ, D::Deny, R::High, S::Once),
    rule(PATH_PROTECTED_WRITE, D::Deny, R::High, S::Once),
    rule(PATH_OUTSIDE_WORKSPACE, D::Ask, R::Medium, S::Session),
    rule(INPUT_MISSING_FIELD, D::Deny, R::Medium, S::Once),
    rule(INPUT_WRONG_TYPE, D::Deny, R::Medium, S::Once),
    rule(INPUT_TOO_LONG, D::Deny, R::Medium, S::Once),
    rule(INPUT_NUL_BYTE, D::Deny, R::High, S::Once),
    rule(BUDGET_TOKENS, D::Deny, R::Medium, S::Once),
    rule(BUDGET_CALLS, D::Deny, R::Medium, S::Once),
    rule(ASK_KIND, D::Ask, R::Medium, S::Session),
    rule(ASK_TOOL, D::Ask, R::Medium, S::Session),
    rule(FETCH_DENIED_HOST, D::Deny, R::High, S::Once),
    rule(FETCH_UNLISTED_HOST, D::Ask, R::Medium, S::Session),
    rule(FETCH_UNCHECKED_HOST, D::Ask, R::Medium, S::Once),
    rule(PAYMENT_LIMIT, D::Deny, R::High, S::Once),
    rule(PAYMENT_INVALID_AMOUNT, D::Deny, R::High, S::Once),
    rule(crate::session::USER_STOP, D::Deny, R::High, S::Once),
    rule(crate::session::TOOL_LOOP, D::Ask, R::Medium, S::Session),
    rule(crate::session::AFTER_ERROR, D::Ask, R::Medium, S::Once),
    rule(crate::session::CONFIRMATION_REQUIRED, D::Ask, R::Medium, S::Once),
    rule(crate::session::drift::SENSITIVE_TARGET, D::Ask, R::High, S::Once),
    rule(crate::session::drift::VERB_MISMATCH, D::Ask, R::Medium, S::Once),
    rule(crate::session::drift::TOPIC_DIVERGENCE, D::Ask, R::Medium, S::Once),
    rule(crate::profile::rules::NEW_TOOL, D::Ask, R::Medium, S::Session),
    rule(crate::profile::rules::NEW_HOST, D::Ask, R::Medium, S::Session),
    rule(crate::profile::rules::NEW_PATH, D::Ask, R::Medium, S::Session),
    rule(crate::profile::rules::RATE, D::Ask, R::Medium, S::Session),
    rule(crate::risk::RECURRING_PATTERN, D::Ask, R::High, S::Once),
];
