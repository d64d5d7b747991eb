//! Programs that run their operand as a command or as code, as one table.
//!
//! Each row says how the program takes what it runs: which options take a
//! value (so the value is not mistaken for the command), how many operands
//! come before the command (`timeout`'s duration, `chroot`'s directory,
//! `flock`'s file), which options carry a shell command string (`su -c`,
//! `flock -c`, `script -c`), which options mean it runs nothing
//! (`command -v`, `at -l`), and how the rest runs: as a program and its
//! arguments, joined into shell code (`watch`, `sg GROUP CMD`), as code in
//! the first operand (`trap`), or from standard input (`su` without `-c`,
//! `at`, `batch`). The analysis unwraps every row the same way, so a
//! destructive command wrapped in any of them is judged as the bare one.
//!
//! Options are read as `getopt` reads them: `-uroot` and `-u root` are the
//! same, a cluster such as `-Eu root` ends with the option that takes the
//! value, `--user=root` carries its value, and `--` ends the options.

use super::commands::Arg;
use crate::prelude::*;

/// How a wrapper runs what follows its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// The first operand (after the leading ones) is a program, the words after it its arguments.
    Argv,
    /// The remaining words joined with spaces are shell code.
    Joined,
    /// The first operand is shell code; the words after it are not commands.
    FirstOperand,
    /// Commands come from standard input, or from a file given with an option in `file`.
    Input,
    /// Like [`Runs::Argv`] when one of these options is given, else like [`Runs::Input`].
    ArgvWith(&'static [&'static str]),
    /// `env`'s own syntax: assignments, `-u NAME`, `-C DIR`, `-S STRING`.
    Env,
    /// `xargs`: the command gets its input as arguments.
    Xargs,
    /// `find`: `-exec`, `-execdir`, `-ok`, `-okdir` up to `;` or `+`, and `-delete`.
    Find,
    /// GNU `parallel`: a command, then its arguments after `:::`.
    Parallel,
}

/// One program that runs other programs or code.
#[derive(Debug, Clone, Copy)]
pub struct Wrapper {
    pub name: &'static str,
    /// Options that take the next word as their value.
    pub values: &'static [&'static str],
    /// Operands before the command.
    pub leading: usize,
    /// Options whose value is shell code.
    pub code: &'static [&'static str],
    /// Options whose value is a file of commands it runs.
    pub file: &'static [&'static str],
    /// Options after which it runs no command.
    pub inert: &'static [&'static str],
    /// `NAME=VALUE` words before the command set its environment (`sudo X=1 cmd`).
    pub assigns: bool,
    /// Subcommands it runs a command through (`uv run`, `tmux new-session`):
    /// when some are listed, it runs one only after one of them, and its
    /// options before the subcommand are read with the same `values`.
    pub sub: &'static [&'static str],
    /// Options that, when no command follows, make it start a shell that
    /// reads its standard input (`sudo -s`, `sudo -i`).
    pub shell: &'static [&'static str],
    /// When some are listed, its operands before one of these words name
    /// tools or a container, not the command, which follows the word (`mise
    /// exec node@20 -- CMD`, `distrobox enter box -e CMD`); without one it
    /// starts a shell that reads its standard input.
    pub dashes: &'static [&'static str],
    pub runs: Runs,
}

const fn argv(name: &'static str, values: &'static [&'static str]) -> Wrapper {
    Wrapper {
        name,
        values,
        leading: 0,
        code: &[],
        file: &[],
        inert: &[],
        assigns: false,
        sub: &[],
        shell: &[],
        dashes: &[],
        runs: Runs::Argv,
    }
}

/// A runner that runs a command after subcommand `sub` (`poetry run CMD`);
/// a subcommand of several words is written with spaces (`uv tool run`).
const fn sub(mut w: Wrapper, sub: &'static [&'static str]) -> Wrapper {
    w.sub = sub;
    w
}

/// Whether `word` is a `NAME=VALUE` assignment, by its known prefix.
pub fn is_assignment(word: &Arg) -> bool {
    word.prefix().split_once('=').is_some_and(|(n, _)| super::is_name(n))
}

const fn with(mut w: Wrapper, leading: usize, inert: &'static [&'static str]) -> Wrapper {
    w.leading = leading;
    w.inert = inert;
    w
}

const fn assigning(mut w: Wrapper) -> Wrapper {
    w.assigns = true;
    w
}

const fn coded(mut w: Wrapper, code: &'static [&'static str], runs: Runs) -> Wrapper {
    w.code = code;
    w.runs = runs;
    w
}

const SU_VALUES: &[&str] = &["-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"];
const SU_CODE: &[&str] = &["-c", "--command", "--session-command"];
const AT_VALUES: &[&str] = &["-q", "-t", "-f", "--file"];
const AT_INERT: &[&str] = &["-l", "-r", "-d", "-c", "-V", "--list", "--remove"];

/// Options of `uv run`/`uvx` (and `uv`'s own) that take a value.
const UV_VALUES: &[&str] = &[
    "--with",
    "-w",
    "--with-requirements",
    "--with-editable",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--package",
    "--extra",
    "--group",
    "--env-file",
    "--index",
    "--index-url",
    "--from",
    "--cache-dir",
    "--config-file",
    "--constraints",
    "--constraint",
    "-c",
    "--overrides",
    "--override",
    "--build-constraints",
    "--build-constraint",
    "-b",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--default-index",
    "--allow-insecure-host",
    "--upgrade-package",
    "-P",
    "--reinstall-package",
    "--refresh-package",
    "--no-binary-package",
    "--only-binary",
    "--no-build-isolation-package",
    "--no-build-package",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--config-setting",
    "-C",
    "--link-mode",
    "--keyring-provider",
    "--index-strategy",
    "--python-preference",
    "--python-platform",
    "--color",
    "--torch-backend",
    "--with-executables-from",
    "-i",
    "--exclude-newer-package",
    "--no-group",
    "--only-group",
    "--no-extra",
    "--module",
    "-m",
];
/// Options of `distrobox enter`/`ephemeral` that take a value.
const DISTROBOX_VALUES: &[&str] =
    &["-n", "--name", "-a", "--additional-flags", "-i", "--image", "--additional-packages", "--init-hooks"];
/// The words after which `distrobox` runs its command.
const DISTROBOX_DASHES: &[&str] = &["--", "-e", "--exec"];
/// Options of `conda run` and its look-alikes that take a value.
const CONDA_VALUES: &[&str] = &["-n", "--name", "-p", "--prefix", "--cwd", "--live-stream-to"];
/// Options of `tmux` and of its subcommands below that take a value.
const TMUX_VALUES: &[&str] =
    &["-L", "-S", "-f", "-T", "-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-l", "-p", "-b"];
/// The `tmux` subcommands that run a command (`new-session 'CMD'`, `run-shell 'CMD'`), long and short.
const TMUX_RUNS: &[&str] = &[
    "new-session",
    "new",
    "new-window",
    "neww",
    "split-window",
    "splitw",
    "respawn-pane",
    "respawnp",
    "respawn-window",
    "respawnw",
    "run-shell",
    "run",
    "send-keys",
    "send",
];

/// Every wrapper the analysis unwraps.
pub const WRAPPERS: &[Wrapper] = &[
    Wrapper { runs: Runs::Env, ..argv("env", &[]) },
    with(
        Wrapper {
            shell: &["-s", "--shell", "-i", "--login"],
            ..assigning(argv(
                "sudo",
                &[
                    "-u",
                    "-g",
                    "-h",
                    "-p",
                    "-C",
                    "-D",
                    "-r",
                    "-t",
                    "-T",
                    "-U",
                    "--user",
                    "--group",
                    "--host",
                    "--prompt",
                    "--chdir",
                    "--role",
                    "--type",
                    "--other-user",
                    "--close-from",
                    "--command-timeout",
                    "-R",
                    "--chroot",
                ],
            ))
        },
        0,
        &["-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-V", "--version", "-e", "--edit"],
    ),
    with(Wrapper { shell: &["-s"], ..argv("doas", &["-u", "-C"]) }, 0, &["-L"]),
    coded(argv("su", SU_VALUES), SU_CODE, Runs::Input),
    coded(
        argv(
            "runuser",
            &["-u", "--user", "-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"],
        ),
        SU_CODE,
        Runs::ArgvWith(&["-u", "--user"]),
    ),
    argv("pkexec", &["--user"]),
    argv("nice", &["-n", "--adjustment"]),
    argv("nohup", &[]),
    with(argv("timeout", &["-s", "--signal", "-k", "--kill-after"]), 1, &[]),
    with(argv("chroot", &["--userspec", "--groups"]), 1, &[]),
    with(argv("busybox", &[]), 0, &["--list", "--list-full", "--help"]),
    Wrapper {
        code: &["-c", "--command"],
        ..with(argv("flock", &["-w", "--timeout", "--wait", "-E", "--conflict-exit-code"]), 1, &[])
    },
    argv(
        "strace",
        &[
            "-o",
            "--output",
            "-p",
            "--attach",
            "-e",
            "-s",
            "--string-limit",
            "-u",
            "--user",
            "-E",
            "--env",
            "-a",
            "--columns",
            "-b",
            "--detach-on",
            "-I",
            "-P",
            "--trace-path",
            "-X",
            "-S",
            "--summary-sort-by",
            "-O",
            "-U",
            "--summary-columns",
        ],
    ),
    argv(
        "ltrace",
        &[
            "-o",
            "--output",
            "-p",
            "-e",
            "-s",
            "-u",
            "-n",
            "--indent",
            "-a",
            "--align",
            "-A",
            "-l",
            "--library",
            "-x",
            "-F",
            "-w",
            "--where",
            "-D",
            "--debug",
        ],
    ),
    Wrapper {
        runs: Runs::Parallel,
        ..argv(
            "parallel",
            &[
                "-j",
                "--jobs",
                "-S",
                "--sshlogin",
                "-N",
                "-n",
                "--max-args",
                "-L",
                "--max-lines",
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-I",
                "--joblog",
                "--tmpdir",
                "--results",
                "--timeout",
                "-P",
                "--env",
                "--colsep",
                "-C",
                "--workdir",
                "--wd",
            ],
        )
    },
    with(argv("taskset", &[]), 1, &["-p", "--pid"]),
    with(argv("ionice", &["-c", "--class", "-n", "--classdata"]), 0, &["-p", "--pid", "-P", "--pgid", "-u", "--uid"]),
    argv(
        "unshare",
        &[
            "-S",
            "--setuid",
            "-G",
            "--setgid",
            "-R",
            "--root",
            "-w",
            "--wd",
            "--propagation",
            "--setgroups",
            "--map-user",
            "--map-group",
        ],
    ),
    argv("nsenter", &["-t", "--target", "-S", "--setuid", "-G", "--setgid"]),
    argv("setsid", &[]),
    coded(
        argv(
            "script",
            &[
                "-E",
                "--echo",
                "-I",
                "--log-in",
                "-O",
                "--log-out",
                "-B",
                "--log-io",
                "-T",
                "--log-timing",
                "-m",
                "--logging-format",
                "-o",
                "--output-limit",
            ],
        ),
        &["-c", "--command"],
        Runs::Input,
    ),
    argv(
        "systemd-run",
        &[
            "-u",
            "--unit",
            "-p",
            "--property",
            "-E",
            "--setenv",
            "--description",
            "--slice",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
            "--on-active",
            "--on-boot",
            "--on-startup",
            "--on-unit-active",
            "--on-unit-inactive",
            "--on-calendar",
            "--timer-property",
            "--path-property",
            "--socket-property",
            "--service-type",
        ],
    ),
    Wrapper { leading: 1, ..coded(argv("sg", &[]), &["-c"], Runs::Joined) },
    Wrapper { runs: Runs::Joined, ..argv("watch", &["-n", "--interval", "-q", "--equexit"]) },
    Wrapper { file: &["-f", "--file"], inert: AT_INERT, runs: Runs::Input, ..argv("at", AT_VALUES) },
    Wrapper { file: &["-f", "--file"], inert: AT_INERT, runs: Runs::Input, ..argv("batch", AT_VALUES) },
    Wrapper { runs: Runs::Xargs, ..argv("xargs", &[]) },
    Wrapper { runs: Runs::Find, ..argv("find", &[]) },
    argv("exec", &["-a"]),
    with(argv("command", &[]), 0, &["-v", "-V"]),
    argv("builtin", &[]),
    argv("time", &["-f", "--format", "-o", "--output"]),
    // `coproc CMD ARGS`: a simple command runs as a coprocess (a compound one is parsed as one).
    argv("coproc", &[]),
    argv("stdbuf", &["-i", "-o", "-e", "--input", "--output", "--error"]),
    argv("caffeinate", &["-t", "-w"]),
    argv("unbuffer", &[]),
    argv("chronic", &[]),
    argv("eatmydata", &[]),
    argv("fakeroot", &["-l", "--lib", "--faked", "-s", "-i"]),
    argv("proxychains", &["-f"]),
    argv("proxychains4", &["-f"]),
    argv("torsocks", &["-u", "-p", "-a", "-P"]),
    argv("numactl", &["-C", "-N", "-m", "-p", "-i"]),
    argv("cgexec", &["-g"]),
    argv("dbus-run-session", &["--config-file", "--dbus-daemon"]),
    with(argv("chrt", &[]), 1, &["-p", "--pid"]),
    argv("ssh-agent", &["-a", "-E", "-t", "-P"]),
    // Project and environment runners: `uv run CMD`, `poetry run CMD`, `conda run -n ENV CMD`, ...
    sub(argv("uv", UV_VALUES), &["run", "tool run", "tool uvx"]),
    argv("uvx", UV_VALUES),
    sub(argv("poetry", &["-C", "--directory", "-P", "--project"]), &["run"]),
    sub(argv("pipenv", &[]), &["run"]),
    sub(argv("pdm", &["-p", "--project", "-r", "--root"]), &["run"]),
    sub(
        argv(
            "hatch",
            &[
                "-e",
                "--env",
                "-p",
                "--project",
                "-i",
                "--include",
                "-x",
                "--exclude",
                "-f",
                "--filter",
                "--data-dir",
                "--cache-dir",
                "--config",
                "--color",
            ],
        ),
        &["run", "env run"],
    ),
    sub(argv("rye", &["--pyproject"]), &["run"]),
    sub(argv("pixi", &["-e", "--environment", "--manifest-path"]), &["run", "exec"]),
    sub(argv("conda", CONDA_VALUES), &["run"]),
    sub(argv("mamba", CONDA_VALUES), &["run"]),
    sub(argv("micromamba", CONDA_VALUES), &["run"]),
    sub(argv("bundle", &["--gemfile"]), &["exec"]),
    sub(argv("bundler", &["--gemfile"]), &["exec"]),
    sub(argv("pnpm", &["-C", "--dir", "--filter", "-F"]), &["exec", "dlx"]),
    sub(argv("devbox", &["-c", "--config", "-e", "--env", "--env-file"]), &["run"]),
    Wrapper { leading: 1, ..sub(argv("direnv", &[]), &["exec"]) },
    coded(argv("npx", &["-p", "--package"]), &["-c", "--call"], Runs::Argv),
    argv("bunx", &["-p", "--package"]),
    sub(argv("bun", &["--cwd", "-c", "--config"]), &["x"]),
    coded(sub(argv("npm", &["-w", "--workspace", "--prefix"]), &["exec", "x"]), &["-c", "--call"], Runs::Argv),
    sub(argv("yarn", &[]), &["dlx", "exec"]),
    sub(argv("toolbox", &["-c", "--container", "-d", "--distro", "-r", "--release"]), &["run"]),
    argv("flatpak-spawn", &[]),
    // `mise exec node@20 -- CMD`, `mise x -c CODE`; `asdf exec CMD`.
    Wrapper {
        dashes: &["--"],
        code: &["-c", "--command"],
        ..sub(
            argv("mise", &["-C", "--cd", "-E", "--env", "-j", "--jobs", "-P", "--profile", "--log-level"]),
            &["exec", "x"],
        )
    },
    sub(argv("asdf", &[]), &["exec"]),
    // `podman unshare CMD` runs it in the user namespace, as root there; `distrobox-host-exec CMD` on the host.
    sub(argv("podman", &["--url", "--connection", "-c", "--root", "--runroot", "--log-level"]), &["unshare"]),
    argv("distrobox-host-exec", &[]),
    // `distrobox enter BOX -- CMD`: the container shares the home folder, so it is judged as here.
    // `-e`/`--exec` stand for `--`; `ephemeral` makes a box, runs the command in it and removes it.
    Wrapper { dashes: DISTROBOX_DASHES, ..sub(argv("distrobox", DISTROBOX_VALUES), &["enter", "ephemeral"]) },
    Wrapper { dashes: DISTROBOX_DASHES, ..argv("distrobox-enter", DISTROBOX_VALUES) },
    Wrapper { dashes: DISTROBOX_DASHES, ..argv("distrobox-ephemeral", DISTROBOX_VALUES) },
    argv("sshpass", &["-p", "-f", "-d", "-P"]),
    // `nix-shell -p PKGS --run CODE`: without a code option it is a shell reading its input.
    coded(
        argv("nix-shell", &["-I", "--arg", "--argstr", "-A", "--attr", "-E", "--expr"]),
        &["--run", "--command"],
        Runs::Input,
    ),
    Wrapper {
        runs: Runs::ArgvWith(&["-c", "--command"]),
        ..sub(argv("nix", &["-I", "--profile", "--override-input", "--expr", "--file", "-f"]), &["develop", "shell"])
    },
    // `tmux new-session -d 'CMD'`: the words after its options are shell code.
    Wrapper { runs: Runs::Joined, ..sub(argv("tmux", TMUX_VALUES), TMUX_RUNS) },
    argv("screen", &["-S", "-c", "-e", "-h", "-p", "-T", "-Logfile"]),
    Wrapper { runs: Runs::FirstOperand, ..with(argv("trap", &[]), 0, &["-l", "-p"]) },
];

/// The row for `program`, if it is a wrapper.
pub fn find(program: &str) -> Option<&'static Wrapper> {
    super::programs::Class::of(program).wrapper()
}

/// What a wrapper runs, read from its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unwrap {
    /// The command starts at this index of the words.
    Program(usize),
    /// Shell code, and the words after it (`$0`, `$1`, ... for `sh -c`).
    Code(Arg),
    /// These words, joined with spaces, are shell code.
    Joined(usize),
    /// Commands from standard input.
    Input,
    /// Commands from this file.
    File(Arg),
    /// It runs no command.
    Nothing,
}

enum Opt {
    /// An ordinary option.
    Flag,
    /// An option taking the next word.
    TakesNext,
    /// A code option, with its value when attached.
    Code(Option<String>),
    /// A file option, with its value when attached.
    File(Option<String>),
    Inert,
}

fn classify(w: &Wrapper, t: &str) -> Opt {
    let kind = |opt: &str| -> Option<Opt> {
        if w.inert.contains(&opt) {
            Some(Opt::Inert)
        } else if w.code.contains(&opt) {
            Some(Opt::Code(None))
        } else if w.file.contains(&opt) {
            Some(Opt::File(None))
        } else if w.values.contains(&opt) {
            Some(Opt::TakesNext)
        } else {
            None
        }
    };
    if t.starts_with("--") {
        if let Some((name, value)) = t.split_once('=') {
            return match kind(name) {
                Some(Opt::Code(_)) => Opt::Code(Some(value.to_string())),
                Some(Opt::File(_)) => Opt::File(Some(value.to_string())),
                Some(Opt::Inert) => Opt::Inert,
                _ => Opt::Flag,
            };
        }
        return kind(t).unwrap_or(Opt::Flag);
    }
    // A cluster: each letter is a flag until one takes a value.
    let letters: Vec<char> = t.chars().skip(1).collect();
    for (k, c) in letters.iter().enumerate() {
        let opt = format!("-{c}");
        let attached: String = letters.get(k + 1..).unwrap_or(&[]).iter().collect();
        // `mise x -c='CODE'`: parsers such as clap drop the `=`; the code is
        // read without it (with it, it would run nothing).
        let attached = attached.strip_prefix('=').map_or(attached.clone(), str::to_string);
        match kind(&opt) {
            Some(Opt::Inert) => return Opt::Inert,
            Some(Opt::Code(_)) if attached.is_empty() => return Opt::Code(None),
            Some(Opt::Code(_)) => return Opt::Code(Some(attached)),
            Some(Opt::File(_)) if attached.is_empty() => return Opt::File(None),
            Some(Opt::File(_)) => return Opt::File(Some(attached)),
            Some(Opt::TakesNext) if attached.is_empty() => return Opt::TakesNext,
            Some(Opt::TakesNext) => return Opt::Flag,
            _ => {}
        }
    }
    Opt::Flag
}

/// Reads the words of wrapper `w` (`argv[0]` is the wrapper itself).
pub fn unwrap(w: &Wrapper, argv: &[Arg]) -> Unwrap {
    let permute = matches!(w.runs, Runs::Input | Runs::ArgvWith(_));
    let mut leading = w.leading;
    let mut argv_mode = false;
    let mut shell = false;
    let mut i = match subcommand(w, argv) {
        Some(i) => i,
        None => return Unwrap::Nothing,
    };
    let mut options = true;
    while let Some(a) = argv.get(i) {
        if w.assigns && is_assignment(a) {
            // `sudo X=1 -u root cmd`: an assignment is not the command; options may follow it.
            i += 1;
            continue;
        }
        let Some(t) = a.known() else {
            if permute && !argv_mode {
                i += 1;
                continue;
            }
            return after_options(w, argv, i);
        };
        let lone_dash = t == "-" && w.runs != Runs::FirstOperand;
        if options && (t == "--" || w.dashes.contains(&t)) {
            options = false;
            i += 1;
            continue;
        }
        if options && (lone_dash || (t.starts_with('-') && t.len() > 1)) {
            if let Runs::ArgvWith(switches) = w.runs
                && switches.iter().any(|s| t == *s || t.strip_prefix(s).is_some_and(|r| r.starts_with('=')))
            {
                argv_mode = true;
            }
            shell |= starts_shell(w, t);
            match classify(w, t) {
                Opt::Inert => return Unwrap::Nothing,
                Opt::Code(Some(v)) => return Unwrap::Code(Arg::fixed(&v)),
                Opt::Code(None) => return argv.get(i + 1).cloned().map_or(Unwrap::Nothing, Unwrap::Code),
                Opt::File(Some(v)) => return Unwrap::File(Arg::fixed(&v)),
                Opt::File(None) => return argv.get(i + 1).cloned().map_or(Unwrap::Nothing, Unwrap::File),
                Opt::TakesNext => i += 2,
                Opt::Flag => i += 1,
            }
            continue;
        }
        if !w.dashes.is_empty() && options {
            // `mise exec node@20 -- CMD`: a tool, not the command.
            i += 1;
            continue;
        }
        if leading > 0 {
            leading -= 1;
            i += 1;
            // A code option may follow the leading operands (`flock FILE -c CMD`).
            if let Some(next) = argv.get(i).and_then(Arg::known)
                && w.code.contains(&next)
            {
                return argv.get(i + 1).cloned().map_or(Unwrap::Nothing, Unwrap::Code);
            }
            continue;
        }
        if permute && !argv_mode {
            // `su root -c CMD`: the operands are names, the options go on.
            i += 1;
            continue;
        }
        if shell {
            // `sudo -s CMD` runs `$SHELL -c 'CMD'`: the words are shell code.
            return Unwrap::Joined(i);
        }
        return after_options(w, argv, i);
    }
    if (permute && !argv_mode) || shell || (!w.dashes.is_empty() && options) { Unwrap::Input } else { Unwrap::Nothing }
}

/// Where the words after a runner's subcommand start (`poetry -C d run CMD`:
/// at `CMD`); the word after the program for a wrapper without subcommands;
/// `None` when the first operand is not one of its subcommands, or is only
/// known at run time.
fn subcommand(w: &Wrapper, argv: &[Arg]) -> Option<usize> {
    if w.sub.is_empty() {
        return Some(1);
    }
    let mut i = 1;
    loop {
        let t = argv.get(i)?.known()?;
        if t.starts_with('-') && t.len() > 1 && t != "--" {
            i += if matches!(classify(w, t), Opt::TakesNext) { 2 } else { 1 };
            continue;
        }
        return w.sub.iter().find_map(|s| {
            let mut words = s.split(' ');
            if words.next() != Some(t) {
                return None;
            }
            let mut at = i + 1;
            for word in words {
                if argv.get(at)?.known()? != word {
                    return None;
                }
                at += 1;
            }
            Some(at)
        });
    }
}

/// Whether option word `t` is one of `w`'s options that start a shell, alone
/// or in a cluster (`sudo -Es`).
fn starts_shell(w: &Wrapper, t: &str) -> bool {
    if w.shell.is_empty() {
        return false;
    }
    if t.starts_with("--") {
        return w.shell.contains(&t);
    }
    t.chars().skip(1).any(|c| w.shell.iter().any(|s| s.len() == 2 && s.ends_with(c)))
}

fn after_options(w: &Wrapper, argv: &[Arg], i: usize) -> Unwrap {
    match w.runs {
        Runs::Joined => Unwrap::Joined(i),
        Runs::FirstOperand => match argv.get(i) {
            Some(a) if a.known().is_some_and(|t| t.is_empty() || t == "-") => Unwrap::Nothing,
            Some(a) => Unwrap::Code(a.clone()),
            None => Unwrap::Nothing,
        },
        Runs::Input => Unwrap::Input,
        _ => Unwrap::Program(i),
    }
}

/// GNU `parallel CMD ::: ARGS`: the shell code it runs, one line per
/// argument, `{}` replaced by the argument or the argument appended. An
/// argument read from its input is `"$1"`, a value known only when it runs.
pub fn parallel(w: &Wrapper, argv: &[Arg], max_values: usize) -> Option<String> {
    let start = match unwrap(&Wrapper { runs: Runs::Argv, ..*w }, argv) {
        Unwrap::Program(i) => i,
        _ => return None,
    };
    let words = argv.get(start..).unwrap_or(&[]);
    let sep = words.iter().position(|a| matches!(a.known(), Some(":::" | ":::+" | "::::" | "::::+")));
    let command: Vec<&str> = words.get(..sep.unwrap_or(words.len()))?.iter().map(Arg::known).collect::<Option<_>>()?;
    if command.is_empty() {
        return None;
    }
    let command = command.join(" ");
    let values: Vec<String> = match sep.and_then(|s| words.get(s..)) {
        Some([first, rest @ ..]) if first.known() == Some(":::") => rest
            .iter()
            .map(|a| a.known().map(quote))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_else(|| vec!["\"$1\"".to_string()]),
        _ => vec!["\"$1\"".to_string()],
    };
    let lines: Vec<String> = values
        .iter()
        .take(max_values)
        .map(|v| if command.contains("{}") { command.replace("{}", v) } else { format!("{command} {v}") })
        .collect();
    Some(lines.join("\n"))
}

/// `text` as one single-quoted shell word.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
