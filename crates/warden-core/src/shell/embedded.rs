//! Shell commands carried in the options or programs of tools that are not
//! shells: `git -c core.sshCommand='…'`, `tar --checkpoint-action=exec=…`,
//! `rsync -e '…'`, `ssh -o ProxyCommand='…'`, `awk 'BEGIN{system("…")}'`,
//! `sed '1e …'`, `vim -c ':!…'`, `less '+!…'`, `man -P '…'`, `zip -TT '…'`,
//! `tcpdump -z '…'`, `gdb -ex 'shell …'`, and the shell's own builtins that
//! take code in an option: `mapfile -C CALLBACK`, `compgen -C CMD`,
//! `complete -F FUNCTION`, the word list `compgen -W '$(…)'` expands,
//! `bind -x 'KEYS: CMD'`. Each runs that text with a
//! shell, so the analysis judges it as shell code ([`code`]); a value only
//! known at run time is code known only at run time. `enable -f FILE` loads
//! a shared object into the shell: a file of code it runs ([`Carried::Loads`]).
//!
//! What is not seen: commands built inside an awk or sed program at run
//! time, configuration files that carry commands (`.gitconfig`,
//! `~/.ssh/config`), and tools not in these tables.

use super::commands::Arg;
use crate::prelude::*;

/// Longest awk or sed program scanned for commands, in bytes; a longer one
/// is code known only at run time.
pub const MAX_PROGRAM_BYTES: usize = 16 * 1024;

/// Git settings whose value is a command (`!` before an alias or helper marks one).
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.fsmonitor",
    "core.askpass",
    "sequence.editor",
    "diff.external",
    "credential.helper",
    "gpg.program",
    "uploadpack.packobjectshook",
    "sendemail.smtpserver",
];

/// Options of `tar` whose value is a command (`=` form or the next word).
const TAR_COMMANDS: &[&str] =
    &["--to-command", "--use-compress-program", "-I", "--rsh-command", "--info-script", "--new-volume-script", "-F"];

/// Options of `ssh`-like clients whose setting is a command.
const SSH_COMMAND_SETTINGS: &[&str] = &["proxycommand", "localcommand", "knownhostscommand", "remotecommand"];

/// What a word carries: shell code it names, or code only known at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Carried {
    Code(String),
    /// A file of machine code loaded into the process (`enable -f ./x.so`).
    Loads(String),
    Unknown,
}

/// Options of `mapfile` and `readarray` that take a value; `-C` is the callback it runs.
pub(crate) const MAPFILE_VALUES: &str = "dnOsuCc";
/// Options of `compgen` and `complete` that take a value; `-C` is a command and `-F` a function it runs.
const COMPLETION_VALUES: &str = "oAGWPSXCF";
/// Options of `bind` that take a value; `-x` binds keys to a shell command.
const BIND_VALUES: &str = "mqurfx";
/// Options of `enable` that take a value; `-f` names the shared object it loads.
const ENABLE_VALUES: &str = "f";

/// The value of option `c`, found at byte `k` of the option cluster `word`:
/// the rest of the cluster (`-ofile`), else the next word, which `next`
/// (the index of the word after `word`) then steps past. `None` when the
/// value is only known at run time or missing.
pub(crate) fn cluster_value<'a>(
    argv: &'a [Arg],
    word: &'a str,
    k: usize,
    c: char,
    next: &mut usize,
) -> Option<&'a str> {
    let attached = word.get(k + c.len_utf8()..).unwrap_or("");
    if !attached.is_empty() {
        return Some(attached);
    }
    *next += 1;
    argv.get(*next - 1).and_then(Arg::known)
}

/// The values a bash builtin's `letter` options are given, read as the
/// builtin reads its options: clusters (`-tC cb`, `-Ccb`), `--` and the
/// first operand end them. `None` is a value known only at run time.
fn builtin_values<'a>(argv: &'a [Arg], values: &str, letters: &[char]) -> Vec<Option<&'a str>> {
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(t) = a.known() else {
            // An option only known at run time may be any of them.
            if a.prefix().starts_with('-') {
                out.push(None);
            }
            break;
        };
        if t == "--" || !t.starts_with('-') || t.len() < 2 {
            break;
        }
        i += 1;
        for (k, c) in t.char_indices().skip(1) {
            if !values.contains(c) {
                continue;
            }
            if t.len() == k + c.len_utf8() && argv.get(i).is_none() {
                break;
            }
            let value = cluster_value(argv, t, k, c, &mut i);
            if letters.contains(&c) {
                out.push(value);
            }
            break;
        }
    }
    out
}

/// The command of a `bind -x` binding: `"\C-x": cmd` or `\C-x:cmd`.
fn bind_command(binding: &str) -> Option<&str> {
    let rest = binding.trim_start();
    let after_keys = if let Some(quoted) = rest.strip_prefix('"') {
        let mut escaped = false;
        let end = quoted.char_indices().find(|&(_, c)| {
            let close = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            close
        })?;
        quoted.get(end.0 + 1..)?.trim_start().strip_prefix(':')?
    } else {
        rest.split_once(':')?.1
    };
    // The command may itself be quoted: `"\C-x": "cmd"`, `"\C-x": 'cmd'`.
    let command = after_keys.trim();
    let unquoted = ['"', '\''].iter().find_map(|q| command.strip_prefix(*q).and_then(|c| c.strip_suffix(*q)));
    Some(unquoted.unwrap_or(command))
}

fn value_of<'a>(argv: &'a [Arg], i: usize, option: &str) -> Option<(Option<&'a str>, bool)> {
    let a = argv.get(i)?;
    let text = a.known();
    // `option=value`, matched without building the prefix.
    let after_eq = |t: &'a str| t.strip_prefix(option).and_then(|r| r.strip_prefix('='));
    // A word that starts with another byte is neither (most words are not options).
    if let (Some(t), Some(first)) = (text, option.as_bytes().first())
        && t.as_bytes().first() != Some(first)
    {
        return None;
    }
    if let Some(t) = text {
        if t == option {
            let next = argv.get(i + 1)?;
            return Some((next.known(), true));
        }
        if let Some(v) = after_eq(t) {
            return Some((Some(v), false));
        }
        return None;
    }
    after_eq(a.prefix()).map(|_| (None, false))
}

/// The code of `ssh`'s settings that run a command here (`-o ProxyCommand=…`,
/// `-oLocalCommand=…`) among `words` (the first is the program).
fn ssh_settings(words: &[Option<&str>], push: &mut impl FnMut(Option<&str>)) {
    for i in 1..words.len() {
        let setting = match words.get(i).copied().flatten() {
            Some("-o") => words.get(i + 1).copied().flatten(),
            Some(t) if t.starts_with("-o") && t.len() > 2 => t.get(2..),
            _ => None,
        };
        if let Some(s) = setting {
            let (key, value) = s.split_once(['=', ' ']).unwrap_or((s, ""));
            if SSH_COMMAND_SETTINGS.contains(&key.to_ascii_lowercase().as_str()) {
                push(Some(value.trim()));
            }
        }
    }
}

/// Shell code carried by the words of `program`.
pub fn code(program: &str, argv: &[Arg]) -> Vec<Carried> {
    if program == "enable" {
        return builtin_values(argv, ENABLE_VALUES, &['f'])
            .into_iter()
            .map(|v| v.map_or(Carried::Unknown, |f| Carried::Loads(f.to_string())))
            .collect();
    }
    let mut out = Vec::new();
    let mut push = |v: Option<&str>| match v {
        Some(t) => out.push(Carried::Code(t.trim_start_matches('!').to_string())),
        None => out.push(Carried::Unknown),
    };
    // Built only for the programs that look at them.
    let words = || -> Vec<Option<&str>> { argv.iter().map(Arg::known).collect() };
    match program {
        "git" => {
            let mut i = 1;
            while let Some(a) = argv.get(i) {
                let setting = match a.known() {
                    Some("-c") => {
                        i += 1;
                        argv.get(i)
                    }
                    Some(t) if t.starts_with("-c") && t.len() > 2 => Some(a),
                    Some(t) if !t.starts_with('-') => break,
                    _ => None,
                };
                if let Some(s) = setting {
                    let text = s.known().map(|t| t.strip_prefix("-c").unwrap_or(t));
                    let prefix = s.prefix().strip_prefix("-c").unwrap_or(s.prefix());
                    let (key, value) = match text {
                        Some(t) => t.split_once('=').map_or((t, None), |(k, v)| (k, Some(Some(v)))),
                        None => prefix.split_once('=').map_or((prefix, None), |(k, _)| (k, Some(None))),
                    };
                    let key = key.to_ascii_lowercase();
                    let alias = key.starts_with("alias.");
                    if let Some(value) = value
                        && (GIT_COMMAND_KEYS.contains(&key.as_str())
                            || (alias && value.is_none_or(|v| v.starts_with('!'))))
                    {
                        push(value);
                    }
                }
                i += 1;
            }
        }
        "tar" | "bsdtar" | "gtar" => {
            let words = words();
            for i in 1..argv.len() {
                if let Some(Some(t)) = words.get(i)
                    && let Some(action) = t.strip_prefix("--checkpoint-action=")
                {
                    if let Some(cmd) = action.strip_prefix("exec=") {
                        push(Some(cmd));
                    }
                    continue;
                }
                for option in TAR_COMMANDS {
                    if let Some((v, _)) = value_of(argv, i, option) {
                        push(v);
                    }
                }
            }
        }
        // `mosh --ssh=CMD` runs CMD here to reach the host (option names may be shortened).
        "mosh" => {
            for (i, a) in argv.iter().enumerate().skip(1) {
                match a.known().and_then(|t| super::remote::mosh_option(t, "ssh")) {
                    Some(Some(v)) => push(Some(v)),
                    Some(None) => push(argv.get(i + 1).and_then(Arg::known)),
                    None => {}
                }
            }
        }
        // `--init-hooks`/`--pre-init-hooks` run in the box, which shares the home folder.
        "distrobox" | "distrobox-create" | "distrobox-ephemeral" | "distrobox-enter" => {
            for i in 1..argv.len() {
                for option in ["--init-hooks", "--pre-init-hooks"] {
                    if let Some((v, _)) = value_of(argv, i, option) {
                        push(v);
                    }
                }
            }
        }
        "rsync" => {
            for i in 1..argv.len() {
                for option in ["-e", "--rsh", "--rsync-path"] {
                    if let Some((v, _)) = value_of(argv, i, option) {
                        push(v);
                    }
                }
            }
        }
        "ssh" | "scp" | "sftp" | "autossh" => ssh_settings(&words(), &mut push),
        // The `ssh` front-ends hand `ssh` the words after `--`, and gcloud its `--ssh-flag`/`--scp-flag` values.
        "vagrant" | "gcloud" => {
            let words = words();
            let mut handed: Vec<Option<&str>> = vec![None];
            let dashes = words.iter().position(|w| *w == Some("--"));
            for (i, w) in words.iter().enumerate().take(dashes.unwrap_or(words.len())) {
                match w {
                    Some("--ssh-flag" | "--scp-flag") => handed.push(words.get(i + 1).copied().flatten()),
                    Some(t) => {
                        handed.extend(t.strip_prefix("--ssh-flag=").or_else(|| t.strip_prefix("--scp-flag=")).map(Some))
                    }
                    None => {}
                }
            }
            handed.extend(dashes.map_or(&[][..], |d| words.get(d + 1..).unwrap_or_default()).iter().copied());
            // A flag given as one word (`--ssh-flag='-o ProxyCommand=…'`) is split as gcloud splits it.
            let split: Vec<Option<&str>> = handed
                .iter()
                .flat_map(|w| match w {
                    Some(t) if t.starts_with("-o ") => t.splitn(2, ' ').map(Some).collect::<Vec<_>>(),
                    other => vec![*other],
                })
                .collect();
            ssh_settings(&split, &mut push);
        }
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            let words = words();
            match first_program(&words, &["-f", "-v", "-F", "--file", "--assign", "--field-separator"]) {
                Some(p) if p.len() > MAX_PROGRAM_BYTES => out.push(Carried::Unknown),
                Some(p) => out.extend(awk_commands(p).into_iter().map(Carried::Code)),
                None => {}
            }
        }
        "sed" | "gsed" => {
            let words = words();
            let script = option_value(&words, &["-e", "--expression"])
                .or_else(|| first_program(&words, &["-e", "--expression", "-f", "--file", "-l"]));
            match script {
                Some(p) if p.len() > MAX_PROGRAM_BYTES => out.push(Carried::Unknown),
                Some(p) => out.extend(sed_commands(p).into_iter().map(Carried::Code)),
                None => {}
            }
        }
        "vim" | "vi" | "nvim" | "view" | "ex" | "gvim" | "rvim" => {
            let words = words();
            for (i, w) in words.iter().enumerate().skip(1) {
                let cmd = match w {
                    Some("-c" | "--cmd") => words.get(i + 1).copied().flatten(),
                    Some(t) if t.starts_with('+') => t.get(1..),
                    _ => None,
                };
                if let Some(c) = cmd.and_then(editor_shell) {
                    push(Some(c));
                }
            }
        }
        "less" | "more" => {
            let words = words();
            for w in words.iter().skip(1).flatten() {
                if let Some(c) = w.strip_prefix('+').and_then(|c| c.strip_prefix('!')) {
                    push(Some(c));
                }
            }
        }
        "man" => {
            for i in 1..argv.len() {
                for option in ["-P", "--pager", "-H", "--html"] {
                    if let Some((v, _)) = value_of(argv, i, option) {
                        push(v);
                    }
                }
            }
        }
        "zip" => {
            for i in 1..argv.len() {
                for option in ["-TT", "--unzip-command"] {
                    if let Some((v, _)) = value_of(argv, i, option) {
                        push(v);
                    }
                }
            }
        }
        "tcpdump" => {
            for i in 1..argv.len() {
                if let Some((v, _)) = value_of(argv, i, "-z") {
                    push(v);
                }
            }
        }
        "mapfile" | "readarray" => {
            for v in builtin_values(argv, MAPFILE_VALUES, &['C']) {
                push(v);
            }
        }
        "compgen" | "complete" => {
            for v in builtin_values(argv, COMPLETION_VALUES, &['C', 'F']) {
                push(v);
            }
            // The word list is expanded as the shell expands words: `-W '$(cmd)'` runs `cmd`.
            for v in builtin_values(argv, COMPLETION_VALUES, &['W']) {
                match v {
                    Some(list) if list.contains(['$', '`']) || list.contains("<(") || list.contains(">(") => {
                        push(Some(&format!(": {list}")));
                    }
                    Some(_) => {}
                    None => push(None),
                }
            }
        }
        "bind" => {
            for v in builtin_values(argv, BIND_VALUES, &['x']) {
                match v.map(bind_command) {
                    Some(Some(c)) => push(Some(c)),
                    _ => push(None),
                }
            }
        }
        "gdb" => {
            let words = words();
            for (i, w) in words.iter().enumerate().skip(1) {
                if matches!(w, Some("-ex" | "--eval-command" | "-iex")) {
                    let c = words.get(i + 1).copied().flatten().unwrap_or("");
                    let c = c.trim_start();
                    if let Some(rest) = c.strip_prefix("shell ").or_else(|| c.strip_prefix('!')) {
                        push(Some(rest));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// The value of the first of `options` present (`-e TEXT`).
fn option_value<'a>(words: &[Option<&'a str>], options: &[&str]) -> Option<&'a str> {
    let i = words.iter().position(|w| w.is_some_and(|t| options.contains(&t)))?;
    words.get(i + 1).copied().flatten()
}

/// The first operand that is a program: not an option, not an option's value.
fn first_program<'a>(words: &[Option<&'a str>], takes_value: &[&str]) -> Option<&'a str> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match w {
            Some(t) if takes_value.contains(t) => i += 2,
            Some(t) if t.starts_with('-') && t.len() > 1 => i += 1,
            Some(t) => return Some(*t),
            None => return None,
        }
    }
    None
}

/// Literal strings an awk program runs: `system("…")`, `"…" | getline`, `print | "…"`.
fn awk_commands(program: &str) -> Vec<String> {
    let mut out = Vec::new();
    let literals = string_literals(program);
    for (start, end, text) in &literals {
        let before = program.get(..*start).unwrap_or("").trim_end();
        let after = program.get(*end..).unwrap_or("").trim_start();
        let called = before.ends_with("system(") || before.ends_with("system (");
        let piped_from = after.starts_with('|') && after.get(1..).unwrap_or("").trim_start().starts_with("getline");
        let piped_to = before.ends_with('|') && !before.ends_with("||");
        if called || piped_from || piped_to {
            out.push(text.clone());
        }
    }
    out
}

/// Double-quoted string literals of an awk program, with their byte ranges (quotes included).
fn string_literals(program: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut chars = program.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut text = String::new();
        let mut end = None;
        while let Some((j, d)) = chars.next() {
            match d {
                '\\' => {
                    if let Some((_, e)) = chars.next() {
                        text.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    }
                }
                '"' => {
                    end = Some(j + 1);
                    break;
                }
                other => text.push(other),
            }
        }
        match end {
            Some(e) => out.push((i, e, text)),
            None => break,
        }
    }
    out
}

/// Commands a sed script runs with its `e` command (`1e rm -rf /`, `$e …`, `/re/e …`).
fn sed_commands(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in script.split(['\n', ';']) {
        let line = line.trim_start();
        // Skip an address: line numbers, `$`, `/regex/`, ranges.
        let mut rest = line;
        loop {
            let trimmed = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '$' || c == ',' || c == '~');
            if let Some(after) = trimmed.strip_prefix('/') {
                match after.find('/') {
                    Some(k) => rest = after.get(k + 1..).unwrap_or(""),
                    None => break,
                }
            } else {
                rest = trimmed;
                break;
            }
        }
        let rest = rest.trim_start().trim_start_matches('!').trim_start();
        if let Some(cmd) = rest.strip_prefix('e')
            && (cmd.starts_with(' ') || cmd.starts_with('\t'))
        {
            out.push(cmd.trim().to_string());
        }
    }
    out
}

/// The shell command of an editor command: `:!cmd`, `!cmd`, `:call system("cmd")`.
fn editor_shell(command: &str) -> Option<&str> {
    let c = command.trim_start().trim_start_matches(':').trim_start();
    if let Some(rest) = c.strip_prefix('!') {
        return Some(rest);
    }
    let rest = c.strip_prefix("call ").unwrap_or(c).trim_start();
    let inner = rest.strip_prefix("system(")?.trim_start();
    let quote = inner.chars().next().filter(|q| matches!(q, '"' | '\''))?;
    let body = inner.get(1..)?;
    body.find(quote).and_then(|k| body.get(..k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_value_is_read_where_comparing_the_whole_option_reads_it() {
        let words = ["-c", "-c=x", "-cx", "--config", "--config=a=b", "x", "", "src/-c", "-"];
        for option in ["-c", "--config", ""] {
            for word in words {
                let argv = [Arg::fixed("git"), Arg::fixed(word), Arg::fixed("next")];
                let expected = if word == option {
                    Some((Some("next"), true))
                } else {
                    word.strip_prefix(option).and_then(|r| r.strip_prefix('=')).map(|v| (Some(v), false))
                };
                assert_eq!(value_of(&argv, 1, option), expected, "{word:?} for {option:?}");
            }
            // A word known only in part is read by its known prefix.
            let mut partial = Arg::unknown("$x");
            partial.partial = format!("{option}=").into();
            let argv = [Arg::fixed("git"), partial];
            assert_eq!(value_of(&argv, 1, option), Some((None, false)), "prefix {option:?}=");
        }
    }
}
