//! Self-protection: the agent may not turn Warden off through its own tool calls.
//!
//! The host declares at start (see [`crate::host`]) Warden's database and
//! its `-wal`/`-shm` files, its configuration, key material and component
//! cache, the runtime's hook settings, and the names of Warden's own command.
//! Three rules guard them, deny and critical:
//!
//! - `self.protected-file`: any tool, or any program a shell command runs,
//!   reads or writes one of those paths (after the same normalization as
//!   every path: `./`, `..`, `~`, `$HOME`, quotes, variables, the working
//!   directory, wrappers such as `sudo`, `env` and `sh -c`).
//! - `self.admin-command`: a shell command runs Warden's own command with a
//!   subcommand other than the read-only ones ([`READ_ONLY_SUBCOMMANDS`]),
//!   or with a subcommand only known when it runs: `warden approve`,
//!   `warden gate ...`, `warden serve`, `warden pin`; also through
//!   `cargo run --bin warden -- ...`.
//! - `self.database-client`: a database client ([`DATABASE_CLIENTS`]) opens
//!   one of Warden's database files, or inline code of an interpreter
//!   (`python3 -c`, `node -e`, a here-document fed to one) names one by its
//!   file name.
//!
//! The only way to turn a rule off is to name it in
//! `tools.selfProtection.allow`; `tools.rules` refuses `self.*` names.
//! What this cannot see: a link to a protected file under another name
//! unless the host resolves it (`derivedPaths`), a copy of Warden's command
//! under another name, and code that builds a file name at run time. It is a
//! guard on the agent's tool calls, not access control: file permissions are.

use super::Finding;
use super::path_guard::Places;
use super::rules;
use crate::config::reader::shorten;
use crate::prelude::*;
use crate::shell::ast::RedirectOp;
use crate::shell::commands::Invocation;

/// Subcommands of Warden's command that neither record answers nor change
/// state another process relies on.
pub const READ_ONLY_SUBCOMMANDS: &[&str] = &["check", "validate", "diagnostics", "demo", "help"];

/// Options of Warden's command that take a value before the subcommand.
const GLOBAL_OPTIONS_WITH_VALUE: &[&str] = &["--component", "--cache-dir", "--log-level", "--memory-mib", "--cpu-ms"];

/// Programs that open databases.
pub const DATABASE_CLIENTS: crate::shell::programs::Names = crate::shell::programs::Names::new(&[
    "sqlite3",
    "sqlite",
    "sqlite3_analyzer",
    "sqldiff",
    "sqlite3_rsync",
    "litecli",
    "sqlite-utils",
    "sqlitebrowser",
    "datasette",
    "duckdb",
    "usql",
    "psql",
    "pg_dump",
    "mysql",
]);

/// The host-declared glob a normalized path matches.
pub fn protected_by<'a>(places: &Places<'a>, path: &str) -> Option<&'a str> {
    protected_by_split(places, &crate::paths::SplitPath::new(path))
}

/// [`protected_by`] for a path already split.
pub fn protected_by_split<'a>(places: &Places<'a>, path: &crate::paths::SplitPath<'_>) -> Option<&'a str> {
    let globs = &places.host.globs;
    globs.first_cover(path, places.dots, |_| true).and_then(|i| globs.globs().get(i)).map(crate::paths::Glob::as_str)
}

/// A finding for a tool that names a protected path.
pub fn file_finding(
    places: &Places<'_>,
    tool: impl core::fmt::Display,
    verb: &str,
    raw: &str,
    path: &str,
) -> Option<Finding> {
    let glob = protected_by(places, path)?;
    Some(Finding {
        rule: rules::SELF_PROTECTED_FILE,
        reason: format!(
            "`{tool}` would {verb} `{}` (`{path}`), which is warden's own or the runtime's hook settings (`{glob}`); \
             the agent may not change what guards it.",
            shorten(raw)
        ),
    })
}

fn texts(inv: &Invocation) -> impl Iterator<Item = &str> {
    let args = inv.argv.iter().map(|a| a.prefix());
    let docs = inv
        .redirects
        .iter()
        .filter(|r| matches!(r.op, RedirectOp::HereDoc | RedirectOp::HereString))
        .map(|r| r.target.prefix());
    args.chain(docs)
}

/// Whether `text` names the file `name` as a whole word: `'warden.db'` and
/// `/x/warden.db` do, `warden.db.bak` and `mywarden.db` do not.
fn names_file(text: &str, name: &str) -> bool {
    let part_of_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    text.match_indices(name).any(|(at, _)| {
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text.get(at + name.len()..).and_then(|t| t.chars().next());
        before.is_none_or(|c| !part_of_name(c)) && after.is_none_or(|c| !part_of_name(c))
    })
}

fn is_interpreter(program: &str) -> bool {
    crate::shell::commands::interpreter(program).is_some()
}

/// The `self.*` findings of one program a shell command runs, other than
/// the paths it touches (see [`touched`]).
pub fn invocation(places: &Places<'_>, inv: &Invocation, quoted: &super::exec::Quoted<'_>, out: &mut Vec<Finding>) {
    admin_command(places, inv, quoted, out);
    database_client(places, inv, quoted, out);
}

/// `self.protected-file` for a path a program reads or writes, split once
/// by the caller for every check of that path.
pub fn touched(
    places: &Places<'_>,
    quoted: &super::exec::Quoted<'_>,
    path: &str,
    split: &crate::paths::SplitPath<'_>,
) -> Option<Finding> {
    let glob = protected_by_split(places, split)?;
    Some(Finding {
        rule: rules::SELF_PROTECTED_FILE,
        reason: format!(
            "{quoted} touches `{path}`, which is warden's own or the runtime's hook settings (`{glob}`); \
             the agent may not change what guards it."
        ),
    })
}

/// The arguments Warden's command gets from `cargo run ... --bin warden -- ARGS`.
fn cargo_run_args<'i>(places: &Places<'_>, inv: &'i Invocation) -> Option<&'i [crate::shell::commands::Arg]> {
    if inv.program != "cargo" || !inv.argv.iter().any(|a| a.known() == Some("run")) {
        return None;
    }
    let dashes = inv.argv.iter().position(|a| a.known() == Some("--"))?;
    let names_warden = inv.argv.get(..dashes)?.iter().filter_map(|a| a.known()).any(|t| {
        let value = t.rsplit('=').next().unwrap_or(t);
        places.host.admin_programs.iter().any(|p| p == value || value == format!("{p}-host"))
    });
    names_warden.then(|| inv.argv.get(dashes..)).flatten()
}

fn admin_command(places: &Places<'_>, inv: &Invocation, quoted: &super::exec::Quoted<'_>, out: &mut Vec<Finding>) {
    let argv = if places.host.admin_programs.iter().any(|p| inv.program == *p) {
        inv.argv.as_slice()
    } else if let Some(args) = cargo_run_args(places, inv) {
        args
    } else {
        return;
    };
    let mut args = argv.iter().skip(1);
    let subcommand = loop {
        let Some(arg) = args.next() else { return };
        match arg.known() {
            None => break None,
            Some("--help" | "-h" | "--version" | "-V") => return,
            Some(t) if GLOBAL_OPTIONS_WITH_VALUE.contains(&t) => {
                args.next();
            }
            Some(t) if t.starts_with('-') => {}
            Some(t) => break Some(t),
        }
    };
    match subcommand {
        Some(s) if READ_ONLY_SUBCOMMANDS.contains(&s) => {}
        Some(s) => out.push(Finding {
            rule: rules::SELF_ADMIN_COMMAND,
            reason: format!(
                "{quoted} runs warden's own `{}` command; approvals, the ledger and the service are for the operator, not the agent.",
                shorten(s)
            ),
        }),
        None => out.push(Finding {
            rule: rules::SELF_ADMIN_COMMAND,
            reason: format!("{quoted} runs warden's own command with a subcommand only known when it runs."),
        }),
    }
}

fn database_client(places: &Places<'_>, inv: &Invocation, quoted: &super::exec::Quoted<'_>, out: &mut Vec<Finding>) {
    let client = DATABASE_CLIENTS.has(&inv.program);
    if !client && !is_interpreter(&inv.program) {
        return;
    }
    let db = &places.host.database_globs;
    let opens_path = inv.reads.iter().chain(&inv.writes).find(|p| db.any_match(&crate::paths::SplitPath::new(p)));
    let named = || texts(inv).find_map(|t| places.host.database_names.iter().find(|n| names_file(t, n)).cloned());
    let hit = if client { opens_path.cloned().or_else(named) } else { named() };
    if let Some(what) = hit {
        out.push(Finding {
            rule: rules::SELF_DATABASE_CLIENT,
            reason: format!(
                "{quoted} opens warden's database (`{}`); its approvals, ledger and counters are not the agent's to read or change.",
                shorten(&what)
            ),
        });
    }
}
