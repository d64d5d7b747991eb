//! Commands a program runs somewhere else: on the machine `ssh` logs in to
//! (`ssh HOST CMD...`, whose words the remote shell joins and runs), or in a
//! container (`docker exec C CMD...`, `docker run IMAGE CMD...`, `podman`,
//! `docker compose exec|run SERVICE CMD...`, `kubectl exec POD -- CMD...`),
//! and on the machines `mosh HOST CMD...`, `vagrant ssh -c CMD` and `gcloud
//! compute ssh --command=CMD` reach.
//!
//! The program itself stays the invocation the exec gate judges (a container
//! that mounts the host, `ssh` sending a secret), and what it runs is judged
//! as shell code too, marked as running elsewhere
//! ([`super::commands::Invocation::elsewhere`]): destroying `/` in a
//! container or on a server is as final as here, while the workspace, a
//! local notion, does not bound what it writes there.
//!
//! `ssh HOST` without a command starts the remote login shell, which reads
//! `ssh`'s standard input (`ssh host < setup.sh`, `curl … | ssh host`).

use super::commands::Arg;
use super::wrappers::quote;
use crate::prelude::*;

/// `ssh` options that take a value.
const SSH_VALUES: &str = "bcDEeFIiJLlmOopPQRSWwB";

/// `docker`/`podman` options, their own and those of `exec`/`run`/`compose`, that take a value.
const CONTAINER_VALUES: &[&str] = &[
    "-H",
    "--host",
    "--context",
    "--config",
    "--log-level",
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--project-directory",
    "--profile",
    "--env-file",
    "-e",
    "--env",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "--detach-keys",
    "-a",
    "--attach",
    "--index",
    "-v",
    "--volume",
    "--mount",
    "--publish",
    "--name",
    "--network",
    "--net",
    "-h",
    "--hostname",
    "--entrypoint",
    "-l",
    "--label",
    "--label-file",
    "--platform",
    "--add-host",
    "--cap-add",
    "--cap-drop",
    "--device",
    "--ulimit",
    "-m",
    "--memory",
    "--cpus",
    "--cpu-shares",
    "-c",
    "--restart",
    "--log-driver",
    "--log-opt",
    "--dns",
    "--expose",
    "--link",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--security-opt",
    "--tmpfs",
    "--gpus",
    "--shm-size",
    "--stop-signal",
    "--group-add",
    "--runtime",
    "--pull",
    "--cidfile",
    "--volumes-from",
    "--health-cmd",
    "-n",
    "--namespace",
];

/// `kubectl`/`oc` options that take a value.
const KUBE_VALUES: &[&str] = &[
    "-n",
    "--namespace",
    "-c",
    "--container",
    "--context",
    "--kubeconfig",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "-f",
    "--filename",
    "--pod-running-timeout",
    "--image",
    "--as",
    "-l",
    "--selector",
];

/// The shell code `program` runs elsewhere, when it runs some. A word only
/// known at run time is kept as written (`"$cmd"`), so the analysis reads it
/// as the value it expands to here.
pub fn command(program: &str, argv: &[Arg]) -> Option<String> {
    match program {
        "ssh" => ssh(argv, SSH_VALUES),
        // `autossh -M PORT` and then `ssh`'s own options.
        "autossh" => ssh(argv, "MbcDEeFIiJLlmOopPQRSWwB"),
        "docker" | "podman" | "nerdctl" => container(argv),
        "docker-compose" | "podman-compose" => compose(argv, 1),
        "kubectl" | "oc" => kube(argv),
        "mosh" => mosh(argv),
        "vagrant" => ssh_front_end(argv, &["ssh"]),
        // `gcloud compute ssh`, `gcloud cloud-shell ssh`, `gcloud workstations ssh`, `gcloud alpha … ssh`.
        "gcloud" => ssh_front_end(argv, &["ssh"]),
        _ => None,
    }
}

/// `mosh` options that take a value.
const MOSH_VALUES: &[&str] =
    &["-p", "--port", "--ssh", "--server", "--client", "--predict", "--family", "--bind-server"];

/// Whether `word` is `mosh`'s option `name` as its option parser reads it
/// (one or two dashes, any case, any prefix of two letters or more: `--ser`,
/// `-SERVER`): `Some(Some(value))` when written `=value`, `Some(None)` when
/// the value is the next word.
pub(crate) fn mosh_option<'w>(word: &'w str, name: &str) -> Option<Option<&'w str>> {
    let bare = word.strip_prefix("--").or_else(|| word.strip_prefix('-'))?;
    let (given, value) = bare.split_once('=').map_or((bare, None), |(g, v)| (g, Some(v)));
    let matches = given.len() >= 2
        && given.len() <= name.len()
        && name.get(..given.len()).is_some_and(|p| p.eq_ignore_ascii_case(given));
    matches.then_some(value)
}

/// `mosh [options] HOST [--] CMD...`: `mosh-server` runs the words after the
/// host as a program and its arguments (each word stays one word), and the
/// remote login shell runs `--server`'s text. Without either it is an
/// interactive session that reads no script.
fn mosh(argv: &[Arg]) -> Option<String> {
    let server = argv.iter().enumerate().find_map(|(k, a)| match mosh_option(a.known()?, "server")? {
        Some(v) => Some(v),
        None => argv.get(k + 1).map(|v| v.known().unwrap_or(&v.raw)),
    });
    let host = operand(argv, 1, MOSH_VALUES)?;
    let mut from = host + 1;
    if argv.get(from).and_then(Arg::known) == Some("--") {
        from += 1;
    }
    let command = argv_code(argv, from);
    match (server, command) {
        (Some(s), Some(c)) => Some(format!("{s}\n{c}")),
        (Some(s), None) => Some(s.to_string()),
        (None, c) => c,
    }
}

/// What the remote login shell runs for a front-end of `ssh` (`vagrant ssh
/// [NAME]`, `gcloud compute ssh VM`) after the subcommand words `path`: the
/// code of its `-c`/`--command` option (`-cCODE` and `--command=CODE` too),
/// and the words it hands `ssh` after `--` (their leading options skipped,
/// the rest joined as `ssh` joins them). With neither, the login shell
/// reads the program's input, as `ssh HOST` does.
fn ssh_front_end(argv: &[Arg], path: &[&str]) -> Option<String> {
    let mut at = 1;
    for word in path {
        at += argv.get(at..)?.iter().position(|a| a.known() == Some(word))? + 1;
    }
    let rest = argv.get(at..)?;
    let dashes = rest.iter().position(|a| a.known() == Some("--"));
    let options = rest.get(..dashes.unwrap_or(rest.len())).unwrap_or_default();
    let mut code: Vec<String> = Vec::new();
    for (k, a) in options.iter().enumerate() {
        let Some(t) = a.known() else { continue };
        let value = match t {
            "-c" | "--command" => options.get(k + 1).map(|v| v.known().unwrap_or(&v.raw)),
            _ => t.strip_prefix("--command=").or_else(|| t.strip_prefix("-c").filter(|v| !v.is_empty())),
        };
        code.extend(value.map(str::to_string));
    }
    if let Some(d) = dashes {
        let extra = rest.get(d + 1..).unwrap_or_default();
        // `-t`, `-o X`: options of `ssh`, not the command.
        let mut i = 0;
        while let Some(t) = extra.get(i).and_then(Arg::known).filter(|t| is_option(t)) {
            let last = t.chars().last().unwrap_or_default();
            i += if t.len() == 2 && SSH_VALUES.contains(last) { 2 } else { 1 };
        }
        if let Some(words) = extra.get(i..).filter(|w| !w.is_empty()) {
            code.push(joined(words));
        }
    }
    if code.is_empty() {
        return Some("sh".to_string());
    }
    Some(code.join("\n"))
}

/// Whether `t` is an option word, not an operand.
fn is_option(t: &str) -> bool {
    t.starts_with('-') && t.len() > 1
}

/// `ssh [options] HOST [CMD...]`: the words after the host, joined as the
/// remote shell reads them; without any, the login shell reading input.
fn ssh(argv: &[Arg], values: &str) -> Option<String> {
    let mut i = 1;
    let mut no_command = false;
    while let Some(a) = argv.get(i) {
        // A word only known at run time is the host.
        let Some(t) = a.known() else { break };
        if t == "--" {
            i += 1;
            break;
        }
        if !is_option(t) {
            break;
        }
        // The letters up to the first that takes a value; the rest of the word is that value (`-oUser=x`).
        let letters = t.get(1..).unwrap_or("");
        let takes = letters.char_indices().find(|(_, c)| values.contains(*c));
        let flags = letters.get(..takes.map_or(letters.len(), |(k, _)| k)).unwrap_or("");
        // `-N` runs no command, `-s` a subsystem, `-W` forwards a port: none is a shell.
        no_command |= flags.contains(['N', 's']) || takes.is_some_and(|(_, c)| c == 'W');
        i += match takes {
            Some((k, c)) if k + c.len_utf8() == letters.len() => 2,
            _ => 1,
        };
    }
    if no_command {
        return None;
    }
    // The host, then the command (`ssh host -- CMD`: the `--` is not part of it).
    let mut words = argv.get(i + 1..).unwrap_or(&[]);
    if words.first().and_then(Arg::known) == Some("--") {
        words = words.get(1..).unwrap_or(&[]);
    }
    if words.is_empty() {
        return Some("sh".to_string());
    }
    Some(joined(words))
}

/// Words joined with spaces, as a remote login shell reads them; a word only
/// known at run time is kept as written.
fn joined(words: &[Arg]) -> String {
    let code: Vec<&str> = words.iter().map(|w| w.known().unwrap_or(&w.raw)).collect();
    code.join(" ")
}

/// The words from `i`, each quoted: a command and its arguments, run without a shell.
fn argv_code(argv: &[Arg], i: usize) -> Option<String> {
    let words = argv.get(i..).unwrap_or(&[]);
    if words.is_empty() {
        return None;
    }
    let mut code = Vec::new();
    for w in words {
        match w.known() {
            Some(t) if !t.is_empty() && t.bytes().all(plain) => code.push(t.to_string()),
            Some(t) => code.push(quote(t)),
            None => code.push(w.raw.to_string()),
        }
    }
    Some(code.join(" "))
}

/// Whether a byte means the same to a shell quoted or not.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b)
}

/// Skips options (and their values) from `i`; the index of the first operand.
fn operand(argv: &[Arg], mut i: usize, values: &[&str]) -> Option<usize> {
    loop {
        // A word only known at run time is an operand (`docker exec "$c" …`).
        let Some(t) = argv.get(i)?.known() else { return Some(i) };
        if t == "--" {
            return Some(i + 1);
        }
        if !is_option(t) {
            return Some(i);
        }
        // `-u root`, and a cluster ending with a letter that takes a value (`-itu root`).
        let last = t.as_bytes().last().copied();
        let takes = !t.contains('=')
            && (values.contains(&t)
                || (!t.starts_with("--")
                    && values.iter().any(|v| v.len() == 2 && v.as_bytes().last().copied() == last)));
        i += if takes { 2 } else { 1 };
    }
}

/// `docker [options] [container] exec|run [options] NAME CMD...`, and `docker compose …`.
fn container(argv: &[Arg]) -> Option<String> {
    let mut i = operand(argv, 1, CONTAINER_VALUES)?;
    if matches!(argv.get(i)?.known()?, "container") {
        i = operand(argv, i + 1, CONTAINER_VALUES)?;
    }
    match argv.get(i)?.known()? {
        "compose" => compose(argv, i + 1),
        "exec" | "run" => {
            let name = operand(argv, i + 1, CONTAINER_VALUES)?;
            run_code(argv, i + 1, name)
        }
        _ => None,
    }
}

/// What `run`/`exec` runs: the words after the container or image at `name`,
/// behind the `--entrypoint` given among the options from `from` (`docker
/// run --entrypoint sh alpine -c CMD` runs `sh -c CMD`).
fn run_code(argv: &[Arg], from: usize, name: usize) -> Option<String> {
    let options = argv.get(from..name).unwrap_or(&[]);
    let entrypoint = options.iter().enumerate().find_map(|(k, a)| match a.known() {
        Some("--entrypoint") => Some(options.get(k + 1).map_or("", |v| v.known().unwrap_or(&v.raw))),
        Some(t) => t.strip_prefix("--entrypoint="),
        None => None,
    });
    let command = argv_code(argv, name + 1);
    match entrypoint.filter(|e| !e.is_empty()) {
        Some(e) => {
            let e = if e.bytes().all(plain) { e.to_string() } else { quote(e) };
            Some(command.map_or(e.clone(), |c| format!("{e} {c}")))
        }
        None => command,
    }
}

/// `compose [options] exec|run [options] SERVICE CMD...`, from word `i`.
fn compose(argv: &[Arg], i: usize) -> Option<String> {
    let i = operand(argv, i, CONTAINER_VALUES)?;
    match argv.get(i)?.known()? {
        "exec" | "run" => {
            let service = operand(argv, i + 1, CONTAINER_VALUES)?;
            run_code(argv, i + 1, service)
        }
        _ => None,
    }
}

/// `kubectl [options] exec [options] POD [--] CMD...`; `kubectl run NAME … -- CMD...`.
fn kube(argv: &[Arg]) -> Option<String> {
    let i = operand(argv, 1, KUBE_VALUES)?;
    match argv.get(i)?.known()? {
        "exec" | "rsh" => {
            let pod = operand(argv, i + 1, KUBE_VALUES)?;
            let rest = operand(argv, pod + 1, KUBE_VALUES)?;
            argv_code(argv, rest)
        }
        "run" | "debug" => {
            let dashes = argv.iter().skip(i + 1).position(|a| a.known() == Some("--"))?;
            argv_code(argv, i + 1 + dashes + 1)
        }
        _ => None,
    }
}
