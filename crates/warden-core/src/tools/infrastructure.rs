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
const CONTAINER_ENGINES: crate::shell::programs::Names = crate::shell::programs::Names::new(&[
    "docker",
    "podman",
    "nerdctl",
    "podman-remote",
    "docker-compose",
    "podman-compose",
    "finch",
]);

/// Host folders whose whole tree gives a container the host when mounted
/// into it (the host's root, its configuration, boot files, devices, kernel
/// interfaces, programs, and the folders of runtime sockets and container
/// state), except [`HARMLESS_MOUNTS`].
const HOST_TREES: &[&str] = &[
    "/etc",
    "/root",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/run",
    "/var/run",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/var/lib/containers",
    "/var/lib/kubelet",
    "/var/lib/rancher",
    "/var/spool/cron",
    // Desktop engines keep their sockets and credentials here.
    "~/.docker",
    "~/.colima",
    "~/.rd",
];

/// Host folders that give the host only when mounted whole (`/home` and a
/// user's home in it, `/var`); a project folder under them does not.
const HOST_FOLDERS: &[&str] = &["/", "~", "/home", "/var"];

/// Host paths under [`HOST_TREES`] commonly mounted that give nothing of the host away.
const HARMLESS_MOUNTS: &[&str] = &[
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/pki/ca-trust",
    "/usr/share/zoneinfo",
    "/usr/share/fonts",
    "/usr/share/ca-certificates",
    "/dev/null",
    "/dev/shm",
    "/dev/snd",
    "/dev/dri",
    "/dev/log",
    "/dev/bus/usb",
    "/usr/local/share/ca-certificates",
    "/run/user/1000/pulse",
];

/// Host files anyone may read, harmless to mount read-only (`:ro`), not writable.
const READABLE_MOUNTS: &[&str] =
    &["/etc/passwd", "/etc/group", "/etc/hosts", "/etc/resolv.conf", "/etc/os-release", "/etc/machine-id", "/etc/pki"];

/// Words in a socket's path that make it a container runtime's API.
const RUNTIME_SOCKETS: &[&str] = &["docker", "containerd", "podman", "crio", "buildkit", "k3s", "dockershim"];

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
        .and_then(|placed| container_escape(&placed, inv.cwd.as_deref()))
        .or_else(|| distrobox_escape(program, &args, inv.cwd.as_deref()))
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

/// The host source of a `-v`/`--volume` value (`/:/host:ro` is `/`) and
/// whether it is mounted read-only; `None` for a value without a `:`, an
/// anonymous volume made inside the container.
fn volume_source(value: &str) -> Option<(&str, bool)> {
    let (source, rest) = value.split_once(':')?;
    let read_only = rest.split_once(':').is_some_and(|(_, mode)| mode.split(',').any(|m| m == "ro"));
    Some((source, read_only))
}

/// The sources of a `--mount` value: its `source=`/`src=` field (keys in any
/// case, a field in CSV quotes) and the `device=` a local volume binds; and
/// whether it is read-only.
fn mount_sources(value: &str) -> (Vec<String>, bool) {
    let mut fields = Vec::new();
    let (mut field, mut quoted) = (String::new(), false);
    for c in value.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(core::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    let mut read_only = false;
    let sources = fields
        .iter()
        .filter_map(|f| {
            let (key, v) = f.split_once('=').unwrap_or((f, "true"));
            let key = key.trim().to_ascii_lowercase();
            match key.as_str() {
                "source" | "src" => Some(v.to_string()),
                "volume-opt" | "volume-driver-opt" => v.strip_prefix("device=").map(str::to_string),
                "readonly" | "ro" => {
                    read_only = !matches!(v, "false" | "0");
                    None
                }
                _ => None,
            }
        })
        .collect();
    (sources, read_only)
}

/// Whether mounting host path `source` gives the container the host. A
/// source starting with `.` is a folder here (the engines resolve it), read
/// against `cwd`; without one, a source that climbs out (`..`) is taken as
/// reaching anywhere. A glob (`type=glob,src=/*`) is read as the folder
/// before its first wildcard.
fn is_host_mount(source: &str, read_only: bool, cwd: Option<&str>) -> bool {
    let source = source.find(['*', '?', '[']).map_or(source, |i| source.get(..i).unwrap_or(source));
    let relative = source.starts_with('.');
    if !(relative || source.starts_with('/') || source.starts_with('~') || source.starts_with("$HOME")) {
        return false;
    }
    let path = crate::paths::normalize(source, cwd, None);
    if relative && cwd.is_none() {
        return path == ".." || path.starts_with("../");
    }
    let path = if path.len() > 1 { path.trim_end_matches('/') } else { path.as_str() };
    let under = |tree: &str| path == tree || (path.starts_with(tree) && path.as_bytes().get(tree.len()) == Some(&b'/'));
    // `/home/ada` is a user's home; `/home/ada/project` a folder of it.
    let whole_home = path.strip_prefix("/home/").is_some_and(|user| !user.contains('/'));
    if HOST_FOLDERS.contains(&path) || whole_home {
        return true;
    }
    let name = path.rsplit('/').next().unwrap_or_default();
    if name.ends_with(".sock") && RUNTIME_SOCKETS.iter().any(|r| path.contains(r)) {
        return true;
    }
    HOST_TREES.iter().any(|t| under(t))
        && !HARMLESS_MOUNTS.iter().any(|h| under(h))
        && !(read_only && READABLE_MOUNTS.iter().any(|h| under(h)))
}

/// Whether a `run`/`create`/`exec` gives the container the host, and how.
/// `args` are the words after the program, `None` where a word is only known
/// at run time.
///
/// Options are read as the engines read them: a long option takes the next
/// word as its value unless it is one of [`ENGINE_FLAGS`] (an option this
/// table does not know is read as taking a value, so an option added by a
/// new release cannot hide the ones after it), and a cluster of short
/// options (`-itv /:/h`, `-v/:/h`, `-v=/:/h`) gives the rest of the word or
/// the next word to its first letter that is not a flag. A word only known at
/// run time may be any option, or the image: after one, every later word is
/// looked at (`docker run $X alpine --privileged`).
fn container_escape(args: &[Option<&str>], cwd: Option<&str>) -> Option<&'static str> {
    // Global options (`-H tcp://…`, `--context x`) and `container` may come
    // before the subcommand: `docker -H x container run` is `docker run`.
    if let Some(v) = args.windows(2).position(|w| w == [Some("volume"), Some("create")]) {
        return volume_escape(args.get(v + 2..).unwrap_or_default(), cwd);
    }
    let at = args.iter().position(|a| matches!(*a, Some("run" | "create" | "exec")))?;
    let mut words = args.iter().skip(at + 1).copied().peekable();
    let mut blind = false;
    let mut rootfs = false;
    while let Some(word) = words.next() {
        let Some(word) = word else {
            blind = true;
            continue;
        };
        // Options end at the image name, or at `--`.
        if word == "--" || !is_option_word(word) {
            // `podman run --rootfs / sh`: the image is a folder of the host.
            if rootfs && word != "--" && is_host_mount(word.split(':').next().unwrap_or(word), false, cwd) {
                return Some("runs a container whose root is a host system path");
            }
            if blind {
                continue;
            }
            break;
        }
        if word.starts_with("--") {
            let (flag, value) = match word.split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None if ENGINE_FLAGS.contains(&word) => (word, None),
                None => (word, value_of(&mut words)),
            };
            rootfs |= flag == "--rootfs";
            if let Some(why) = escape_option(flag, value, cwd) {
                return Some(why);
            }
            continue;
        }
        for (i, letter) in word.char_indices().skip(1) {
            if ENGINE_SHORT_FLAGS.contains(letter) {
                continue;
            }
            // `-v=/:/h` is `-v /:/h`.
            let rest = word.get(i + letter.len_utf8()..).unwrap_or_default();
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            let value = if rest.is_empty() { value_of(&mut words) } else { Some(rest) };
            let flag = format!("-{letter}");
            if let Some(why) = escape_option(&flag, value, cwd) {
                return Some(why);
            }
            break;
        }
    }
    None
}

/// Whether `volume create` makes a volume of a host system path (`-o type=none
/// -o o=bind -o device=/`): a later `-v NAME:/h` mounts it. Its options may
/// come before or after the volume's name, in every spelling (`-odevice=/`,
/// `--opt=device=/`).
fn volume_escape(args: &[Option<&str>], cwd: Option<&str>) -> Option<&'static str> {
    let mut words = args.iter().copied();
    while let Some(word) = words.next() {
        let Some(t) = word else { continue };
        let value = match t {
            "-o" | "--opt" => words.next().flatten(),
            _ => t
                .strip_prefix("--opt=")
                .or_else(|| t.strip_prefix("-o").filter(|v| !v.is_empty() && !t.starts_with("--"))),
        };
        let value = value.map(|v| v.strip_prefix('=').unwrap_or(v));
        if value.and_then(|v| v.strip_prefix("device=")).is_some_and(|d| is_host_mount(d, false, cwd)) {
            return Some("makes a volume of a host system path");
        }
    }
    None
}

/// The next word as an option's value: never one that is itself an option
/// (a flag this table does not know then leaves the next option alone).
fn value_of<'a, I: Iterator<Item = Option<&'a str>>>(words: &mut core::iter::Peekable<I>) -> Option<&'a str> {
    match words.peek() {
        Some(Some(next)) if is_option_word(next) => None,
        _ => words.next().flatten(),
    }
}

/// Whether a word is an option (`-v`, `--rm`), not a value or an operand.
fn is_option_word(word: &str) -> bool {
    word.starts_with('-') && word.len() > 1
}

/// Long options of the engines' `run`/`create`/`exec` (and `compose run`)
/// that take no value.
const ENGINE_FLAGS: &[&str] = &[
    "--privileged",
    "--rm",
    "--detach",
    "--interactive",
    "--tty",
    "--init",
    "--read-only",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--publish-all",
    "--disable-content-trust",
    "--quiet",
    "--help",
    "--use-api-socket",
    "--sig-proxy",
    "--replace",
    "--rmi",
    "--no-hosts",
    "--env-host",
    "--http-proxy",
    "--read-only-tmpfs",
    "--tls-verify",
    "--no-deps",
    "--service-ports",
    "--use-aliases",
    "--build",
    "--remove-orphans",
    "--quiet-pull",
    "--no-TTY",
    "--unsetenv-all",
    "--no-hostname",
    "--passwd",
    "--rootfs",
    "--latest",
    "--quiet-build",
];

/// Short options of the engines' `run`/`create`/`exec` that take no value.
const ENGINE_SHORT_FLAGS: &str = "ditPqT";

/// How one option and its value give the container the host, if they do.
fn escape_option(flag: &str, value: Option<&str>, cwd: Option<&str>) -> Option<&'static str> {
    // A Go boolean written as false (`--privileged=0`, `=f`, `=FALSE`).
    let off = value.is_some_and(|v| matches!(v, "0" | "f" | "F" | "false" | "False" | "FALSE"));
    match flag {
        "--privileged" if !off => Some("runs a privileged container"),
        "--use-api-socket" if !off => Some("hands the container the engine's API socket"),
        "-v" | "--volume" if value.and_then(volume_source).is_some_and(|(s, ro)| is_host_mount(s, ro, cwd)) => {
            Some("mounts a host system path into the container")
        }
        "--mount"
            if value.is_some_and(|v| {
                let (sources, ro) = mount_sources(v);
                sources.iter().any(|s| is_host_mount(s, ro, cwd))
            }) =>
        {
            Some("mounts a host system path into the container")
        }
        "--pid" | "--ipc" | "--userns" if value == Some("host") => Some("shares the host's processes or namespaces"),
        "--cap-add"
            if value.is_some_and(|v| {
                v.split(',').any(|cap| HOST_CAPABILITIES.contains(&cap.trim().to_ascii_uppercase().as_str()))
            }) =>
        {
            Some("adds a capability that reaches the host")
        }
        // `/proc` unmasked and `/proc/sys` writable: the kernel's core pattern runs a program on the host.
        "--security-opt" if value.is_some_and(|v| v.replace(':', "=") == "systempaths=unconfined") => {
            Some("unmasks the kernel's interfaces")
        }
        "--device" if value.is_some_and(is_host_disk) => Some("hands the container a host disk or the host's memory"),
        // `a *:* rwm` or `b 8:* rwm`: the container may make and use the host's block devices.
        "--device-cgroup-rule"
            if value.is_some_and(|v| matches!(v.trim_start().as_bytes().first(), Some(b'a' | b'b'))) =>
        {
            Some("lets the container use the host's disks")
        }
        _ => None,
    }
}

/// Whether `distrobox` hands its box the host: the engine options it passes
/// on (`-a`/`--additional-flags '--privileged'`) and its `--volume`s are read
/// as the engine's.
fn distrobox_escape(program: &str, args: &[&str], cwd: Option<&str>) -> Option<&'static str> {
    if !program.starts_with("distrobox") {
        return None;
    }
    let mut engine: Vec<Option<&str>> = vec![Some("run")];
    let mut words = args.iter().copied();
    while let Some(w) = words.next() {
        match w {
            "--" | "-e" | "--exec" => break,
            "-a" | "--additional-flags" => {
                engine.extend(words.next().into_iter().flat_map(str::split_whitespace).map(Some))
            }
            "--volume" => engine.extend([Some("-v"), words.next()]),
            _ => {
                if let Some(v) = w.strip_prefix("--additional-flags=") {
                    engine.extend(v.split_whitespace().map(Some));
                } else if let Some(v) = w.strip_prefix("--volume=") {
                    engine.extend([Some("-v"), Some(v)]);
                }
            }
        }
    }
    container_escape(&engine, cwd)
}

/// Whether a `--device` value (`/dev/sda:/dev/x:rwm`) is a disk or the host's memory.
fn is_host_disk(value: &str) -> bool {
    let source = value.split(':').next().unwrap_or(value);
    let source = crate::paths::normalize(source, None, None);
    let Some(name) = source.strip_prefix("/dev/") else { return false };
    matches!(name, "mem" | "kmem" | "port")
        || (name.starts_with("loop") && name != "loop-control")
        || [
            "sd", "sg", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "mapper/", "md", "nbd", "disk/", "block/", "char/",
            "bsg/",
        ]
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
            // The words after `--` go to another program (`gcloud compute ssh vm -- rm -rf /tmp/x`).
            let args = args.split(|a| *a == "--").next().unwrap_or_default();
            let deletes = !args.contains(&"ssh")
                && args.iter().any(|a| matches!(*a, "delete" | "rm" | "rb"))
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
