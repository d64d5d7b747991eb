//! Commands whose harm is outside the files the path guard sees: containers
//! given the host, infrastructure torn down, traces erased, and code made to
//! run again later.
//!
//! Each family is a table of programs and the argument shapes that make them
//! harmful; the rest of the program's uses pass (`kubectl get`, `terraform
//! plan`, `docker run -v "$PWD":/app`, `crontab -l`, `git push`).

use super::Finding;
use super::exec::Quoted;
use super::rules;
use crate::prelude::*;
use crate::shell::commands::{Arg, Invocation};

/// Container engines whose `run` and `create` can hand a container the host.
const CONTAINER_ENGINES: crate::shell::programs::Names =
    crate::shell::programs::Names::new(&["docker", "podman", "nerdctl"]);

/// Host paths that give a container the host when mounted into it.
const HOST_MOUNTS: &[&str] = &[
    "/",
    "/etc",
    "/root",
    "/home",
    "/var",
    "/usr",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
];

/// Capabilities that give a container the host.
const HOST_CAPABILITIES: &[&str] = &[
    "ALL",
    "SYS_ADMIN",
    "CAP_SYS_ADMIN",
    "SYS_MODULE",
    "CAP_SYS_MODULE",
    "SYS_PTRACE",
    "CAP_SYS_PTRACE",
    // `open_by_handle_at` reads any file of the host's file system.
    "DAC_READ_SEARCH",
    "CAP_DAC_READ_SEARCH",
    "SYS_RAWIO",
    "CAP_SYS_RAWIO",
];

/// Judges one invocation for every family of this module.
pub fn check(inv: &Invocation, out: &mut Vec<Finding>) {
    let args: Vec<&str> = inv.argv.iter().skip(1).filter_map(Arg::known).collect();
    let program = inv.program.as_str();
    if let Some(why) = CONTAINER_ENGINES
        .has(program)
        .then(|| inv.argv.iter().skip(1).map(Arg::known).collect::<Vec<_>>())
        .and_then(|placed| container_escape(&placed))
    {
        out.push(Finding {
            rule: rules::EXEC_CONTAINER_ESCAPE,
            reason: format!("{} {why}, which gives the container the host.", Quoted(inv)),
        });
    }
    if let Some(what) = teardown(program, &args) {
        out.push(Finding {
            rule: rules::EXEC_INFRASTRUCTURE_DESTROY,
            reason: format!("{} {what}, which cannot be undone from here.", Quoted(inv)),
        });
    }
    if let Some(what) = erases_traces(inv, program, &args) {
        out.push(Finding {
            rule: rules::EXEC_ERASE_TRACES,
            reason: format!("{} {what}, which hides what was done.", Quoted(inv)),
        });
    }
    if let Some(what) = persistence(program, &args) {
        out.push(Finding {
            rule: rules::EXEC_PERSISTENCE,
            reason: format!("{} {what}, so code runs again later without being asked.", Quoted(inv)),
        });
    }
}

/// The source of a `-v`/`--volume` value (`/:/host:ro` is `/`).
fn volume_source(value: &str) -> &str {
    value.split(':').next().unwrap_or(value)
}

/// The `source=`/`src=` of a `--mount` value.
fn mount_source(value: &str) -> Option<&str> {
    value.split(',').find_map(|part| part.strip_prefix("source=").or_else(|| part.strip_prefix("src=")))
}

fn is_host_mount(source: &str) -> bool {
    let trimmed = if source.len() > 1 { source.trim_end_matches('/') } else { source };
    HOST_MOUNTS.contains(&trimmed)
}

/// Whether a `run`/`create`/`exec` gives the container the host, and how.
/// `args` are the words after the program, `None` where a word is only known
/// at run time (it still fills its place: `-v "$D" --privileged` is a volume
/// and then a privileged container).
fn container_escape(args: &[Option<&str>]) -> Option<&'static str> {
    // Global options (`-H tcp://…`, `--context x`) and `container` may come
    // before the subcommand: `docker -H x container run` is `docker run`.
    let at = args.iter().position(|a| matches!(*a, Some("run" | "create" | "exec")))?;
    let mut words = args.iter().skip(at + 1).copied();
    while let Some(word) = words.next() {
        // A word only known at run time may be an option or its value: skipped.
        let Some(word) = word else { continue };
        // Options end at the image name; `--` ends them too.
        if word == "--" || !word.starts_with('-') || word == "-" {
            break;
        }
        if word.starts_with("--") {
            let (flag, value) = match word.split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None if takes_value(word) => (word, words.next().flatten()),
                None => (word, None),
            };
            if let Some(why) = escape_option(flag, value) {
                return Some(why);
            }
            continue;
        }
        // A cluster of short options (`-it`, `-itv /:/h`, `-v/:/h`): the first
        // letter that takes a value takes the rest of the word, or the next word.
        for (i, letter) in word.char_indices().skip(1) {
            let short = format!("-{letter}");
            if takes_value(&short) {
                // `-v=/:/h` is `-v /:/h`, as the engines' option parser reads it.
                let rest = word.get(i + letter.len_utf8()..).unwrap_or_default();
                let rest = rest.strip_prefix('=').unwrap_or(rest);
                let value = if rest.is_empty() { words.next().flatten() } else { Some(rest) };
                if let Some(why) = escape_option(&short, value) {
                    return Some(why);
                }
                break;
            }
        }
    }
    None
}

/// Whether `flag` of a container engine's `run`/`exec` takes the next word.
fn takes_value(flag: &str) -> bool {
    crate::shell::remote::CONTAINER_VALUES.contains(&flag)
}

/// How one option and its value give the container the host, if they do.
fn escape_option(flag: &str, value: Option<&str>) -> Option<&'static str> {
    match flag {
        "--privileged" if value.is_none_or(|v| v != "false") => Some("runs a privileged container"),
        "-v" | "--volume" if value.is_some_and(|v| is_host_mount(volume_source(v))) => {
            Some("mounts a host system path into the container")
        }
        "--mount" if value.and_then(mount_source).is_some_and(is_host_mount) => {
            Some("mounts a host system path into the container")
        }
        "--pid" | "--ipc" | "--userns" if value == Some("host") => Some("shares the host's processes or namespaces"),
        "--cap-add" if value.is_some_and(|v| HOST_CAPABILITIES.contains(&v.to_ascii_uppercase().as_str())) => {
            Some("adds a capability that reaches the host")
        }
        "--device" if value.is_some_and(is_host_disk) => Some("hands the container a host disk or the host's memory"),
        _ => None,
    }
}

/// Whether a `--device` value (`/dev/sda:/dev/x:rwm`) is a disk or the host's memory.
fn is_host_disk(value: &str) -> bool {
    let source = value.split(':').next().unwrap_or(value);
    let Some(name) = source.strip_prefix("/dev/") else { return false };
    matches!(name, "mem" | "kmem" | "port")
        || ["sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "mapper/", "loop", "md"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// Whether the command deletes infrastructure, and what.
fn teardown(program: &str, args: &[&str]) -> Option<String> {
    let has = |w: &str| args.contains(&w);
    let first = args.iter().copied().find(|a| !a.starts_with('-'));
    match program {
        "terraform" | "tofu" | "terragrunt" => {
            let destroys = first == Some("destroy")
                || (first == Some("apply") && (has("-destroy") || has("--destroy")))
                || args.windows(2).any(|w| w == ["state", "rm"]);
            destroys.then(|| "destroys the infrastructure it manages".to_string())
        }
        "pulumi" | "cdk" => (first == Some("destroy")).then(|| "destroys the stack it manages".to_string()),
        "kubectl" | "oc" => {
            (first == Some("delete") || first == Some("drain")).then(|| "deletes cluster resources".to_string())
        }
        "helm" => matches!(first, Some("uninstall" | "delete" | "del" | "un"))
            .then(|| "uninstalls a release from the cluster".to_string()),
        "aws" => {
            let words: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
            let s3 = matches!(words.as_slice(), ["s3", "rb", ..])
                || (matches!(words.as_slice(), ["s3", "rm", ..]) && (has("--recursive") || has("-r")));
            let api = words.get(1).is_some_and(|op| {
                op.starts_with("delete-") || op.starts_with("terminate-") || op.starts_with("deregister-")
            });
            (s3 || api).then(|| "deletes cloud resources".to_string())
        }
        "gcloud" | "az" | "doctl" | "gsutil" => {
            let deletes = args.iter().any(|a| matches!(*a, "delete" | "rm" | "rb"))
                && !args.iter().any(|a| matches!(*a, "list" | "describe" | "show"));
            deletes.then(|| "deletes cloud resources".to_string())
        }
        "docker" | "podman" => {
            let prune_all = has("prune") && (has("-a") || has("--all") || has("--volumes"));
            let volumes = args.windows(2).any(|w| matches!(w, ["volume", "rm" | "prune"]));
            (prune_all || volumes).then(|| "deletes images, containers or volumes with their data".to_string())
        }
        "virsh" => matches!(first, Some("undefine" | "vol-delete" | "pool-delete"))
            .then(|| "deletes a virtual machine or its storage".to_string()),
        "dropdb" => Some("drops a database".to_string()),
        "psql" | "mysql" | "mariadb" | "sqlite3" | "sqlcmd" | "clickhouse-client" => {
            let sql: String = args.iter().map(|a| a.to_ascii_lowercase()).collect::<Vec<_>>().join(" ");
            let drops = ["drop database", "drop schema", "drop table", "truncate table", "truncate "]
                .iter()
                .any(|p| sql.contains(p));
            drops.then(|| "drops or empties database tables".to_string())
        }
        // Redis commands are words of their own, in any case (`redis-cli -h h FLUSHALL`).
        "redis-cli" | "valkey-cli" | "keydb-cli" => args
            .iter()
            .any(|a| a.eq_ignore_ascii_case("flushall") || a.eq_ignore_ascii_case("flushdb"))
            .then(|| "empties the database".to_string()),
        "mongo" | "mongosh" => {
            // Compared without spaces: `deleteMany( { } )` is `deleteMany({})`.
            let script: String = args.iter().flat_map(|a| a.chars()).filter(|c| !c.is_whitespace()).collect();
            let script = script.to_ascii_lowercase();
            ["dropdatabase", ".drop(", ".deletemany({})", ".remove({})"]
                .iter()
                .any(|p| script.contains(p))
                .then(|| "drops or empties database collections".to_string())
        }
        _ => None,
    }
}

/// Shell history and system logs.
fn is_trace_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, ".bash_history" | ".zsh_history" | ".history" | ".python_history" | ".lesshst" | "fish_history")
        || path.starts_with("/var/log/")
        || path == "/var/log"
}

/// Whether the command erases its traces, and how.
fn erases_traces(inv: &Invocation, program: &str, args: &[&str]) -> Option<&'static str> {
    let has = |w: &str| args.contains(&w);
    let hit = match program {
        "history" => has("-c") || args.iter().any(|a| a.starts_with("-d")) || (has("-w") && has("/dev/null")),
        "unset" => has("HISTFILE"),
        "export" | "declare" | "typeset" | "local" => {
            args.iter().any(|a| matches!(*a, "HISTFILE=/dev/null" | "HISTSIZE=0" | "HISTFILESIZE=0" | "HISTFILE="))
        }
        "journalctl" => args.iter().any(|a| a.starts_with("--vacuum")),
        "wevtutil" => matches!(args.first(), Some(&"cl" | &"clear-log")),
        "shred" | "truncate" | "rm" | "srm" | "wipe" => operands(args).iter().any(|p| is_trace_file(p)),
        _ => false,
    };
    if hit {
        return Some("erases shell history or system logs");
    }
    // `> ~/.bash_history`, `: > /var/log/auth.log`, `ln -sf /dev/null ~/.bash_history`.
    let emptied = inv.redirects.iter().any(|r| r.op.writes() && r.path.as_deref().is_some_and(is_trace_file))
        && matches!(program, ":" | "true" | "echo" | "printf" | "cat" | "")
        && args.iter().all(|a| a.is_empty() || *a == "-n" || *a == "/dev/null");
    let linked = program == "ln" && has("/dev/null") && operands(args).iter().any(|p| is_trace_file(p));
    (emptied || linked).then_some("erases shell history or system logs")
}

fn operands<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().filter(|a| !a.starts_with('-')).collect()
}

/// Whether the command installs code to run later, and how.
fn persistence(program: &str, args: &[&str]) -> Option<&'static str> {
    let has = |w: &str| args.contains(&w);
    match program {
        // Reading (`-l`) and editing by hand (`-e`) are the person's own; a
        // table from a file or the input replaces every job, `-r` removes them.
        "crontab" => {
            let reads = has("-l") || has("-e");
            (!reads && !args.is_empty()).then_some("replaces or removes the user's scheduled jobs")
        }
        "systemctl" => {
            let enables = args.iter().any(|a| matches!(*a, "enable" | "link" | "preset" | "set-default"));
            (enables && !has("--help")).then_some("enables a service to start on its own")
        }
        "launchctl" => matches!(operands(args).first(), Some(&"load" | &"bootstrap" | &"submit"))
            .then_some("loads a launch agent that starts on its own"),
        "schtasks" => args.iter().any(|a| a.eq_ignore_ascii_case("/create")).then_some("creates a scheduled task"),
        "reg" => {
            let adds = args.first().is_some_and(|a| a.eq_ignore_ascii_case("add"));
            // Separators dropped: unquoted in a shell, `\` escapes the next letter.
            let run_key = args.iter().any(|a| {
                let a: String = a.chars().filter(|c| !matches!(c, '\\' | '/')).collect::<String>().to_ascii_lowercase();
                a.contains("currentversionrun") || a.contains("winlogon")
            });
            (adds && run_key).then_some("adds a program that starts at logon")
        }
        "chattr" => args
            .iter()
            .any(|a| (a.starts_with('+') || a.starts_with('-')) && a.contains('i') && a.len() <= 4)
            .then_some("changes whether a file can be changed or removed"),
        _ => None,
    }
}
