//! Inline code of other languages' interpreters, scanned for what it does.
//!
//! `python3 -c "import os; os.system('rm -rf /')"` deletes `/` as surely as
//! `rm -rf /`. The analysis finds the code an interpreter runs (its inline
//! code option, or a literal fed to its standard input: `echo ... | python3`,
//! `python3 - <<EOF`, a here-string; PowerShell's `-EncodedCommand` decoded
//! from base64 UTF-16LE) and [`scan`]s it with a light, bounded pass per
//! language, driven by the tables below:
//!
//! - process spawning ([`SPAWNS`]; backticks and `%x`/`qx` quoting too): a
//!   command given as a string literal is judged as the shell command it is,
//!   an argument list as the program and arguments it names, anything else
//!   as code only known at run time;
//! - recursive deletes ([`DELETES`]) of a literal path, judged like `rm -r`,
//!   and single-file removes ([`REMOVES`]), judged like `rm`;
//! - every string literal that looks like a path, passed to the path guard as
//!   a path the code reads;
//! - the whole environment read ([`ENVIRONMENT`]) and network clients
//!   ([`SENDERS`]), which together with a secret are exfiltration;
//! - fork calls in an endless loop ([`FORKS`], [`ENDLESS_LOOPS`]), and a
//!   network client with a spawned interactive shell (a reverse shell);
//! - evaluation of code built at run time ([`EVALS`]) and, in PowerShell,
//!   `Invoke-Expression` of a download, `Remove-Item -Recurse`, and each
//!   statement judged as the native command it may be.
//!
//! What it does not see: code obfuscated beyond string literals (names built
//! from pieces, `getattr(os, 'sys' + 'tem')`, escapes inside literals), code
//! built or downloaded at run time other than through the listed calls,
//! functions imported under aliases the import forms below do not cover, and
//! modules other than the listed ones that spawn processes or delete trees.
//!
//! Bounds: code longer than [`MAX_SCANNED_BYTES`] is not scanned (it counts
//! as code only known at run time); a call's arguments are read for at most
//! [`MAX_CALL_CHARS`] characters; PowerShell `Invoke-Expression` of a literal
//! is followed at most [`MAX_EVAL_NESTING`] levels deep and at most
//! [`MAX_POWERSHELL_STATEMENTS`] statements are judged. A literal that never
//! closes ends the scan of literals, so hostile code costs one pass.

use super::commands::Arg;
use super::wrappers::quote;
use crate::prelude::*;
use base64::Engine as _;

/// Longest inline code scanned, in bytes (32 KiB). Longer code is not
/// scanned and counts as code only known at run time.
pub const MAX_SCANNED_BYTES: usize = 32 * 1024;

/// Most levels of PowerShell `Invoke-Expression` of a string literal
/// followed; deeper code counts as code only known at run time.
pub const MAX_EVAL_NESTING: usize = 4;

/// Most characters of a call's arguments read (8 KiB); a literal argument
/// longer than this counts as a value only known at run time.
pub const MAX_CALL_CHARS: usize = 8 * 1024;

/// Most PowerShell statements judged as native commands (groups and script
/// blocks count once each); past it the code counts as only known at run time.
pub const MAX_POWERSHELL_STATEMENTS: usize = 256;

/// A language whose interpreter runs inline code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Perl,
    Ruby,
    Node,
    Php,
    PowerShell,
}
use Language::*;

/// Interpreter names (after version suffixes and `.exe` are dropped).
pub const LANGUAGES: &[(&str, Language)] = &[
    ("python", Python),
    ("pypy", Python),
    ("perl", Perl),
    ("ruby", Ruby),
    ("node", Node),
    ("nodejs", Node),
    ("bun", Node),
    ("deno", Node),
    ("php", Php),
    ("pwsh", PowerShell),
    ("powershell", PowerShell),
];

/// The language `program` interprets: `python3.12`, `pwsh.exe`, `PowerShell`.
pub fn language(program: &str) -> Option<Language> {
    // Dropping suffixes keeps the first letter: a name no language starts with is none.
    let first = program.bytes().next()?.to_ascii_lowercase();
    if !LANGUAGES.iter().any(|(n, _)| n.as_bytes().first() == Some(&first)) {
        return None;
    }
    let lower = if program.bytes().any(|b| b.is_ascii_uppercase()) {
        alloc::borrow::Cow::Owned(program.to_ascii_lowercase())
    } else {
        alloc::borrow::Cow::Borrowed(program)
    };
    let name = lower.strip_suffix(".exe").unwrap_or(&lower);
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    let versioned = stem.len() != name.len();
    // A row is compared only when it starts with the name's letter.
    LANGUAGES
        .iter()
        .find(|(n, _)| n.as_bytes().first() == Some(&first) && (*n == stem || (versioned && *n == name)))
        .map(|(_, l)| *l)
}

fn case_insensitive(lang: Language) -> bool {
    matches!(lang, Php | PowerShell)
}

/// Where an interpreter's code comes from, read from its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Inline code (`-c`, `-e`, `-r`, `-Command`); several `-e` are joined by newlines.
    Code(Arg),
    /// PowerShell's `-EncodedCommand`, still encoded.
    Encoded(Arg),
    /// Its standard input.
    Stdin,
    /// A script file, or (`None`) a module (`python -m`): code this command does not show.
    File(Option<Arg>),
}

/// Per language: letters of inline-code options, options taking a value, long code options.
struct Options {
    code_letters: &'static str,
    value_letters: &'static str,
    /// Letters whose value is the rest of the word, if any (Perl's `-MFile::Path`, `-i.bak`).
    attached_letters: &'static str,
    long_code: &'static [&'static str],
    long_values: &'static [&'static str],
    /// Options after which it runs a module or prints and exits.
    file_letters: &'static str,
}

fn options(lang: Language) -> Options {
    match lang {
        Python => Options {
            code_letters: "c",
            value_letters: "WX",
            attached_letters: "",
            long_code: &[],
            long_values: &["--check-hash-based-pycs"],
            file_letters: "m",
        },
        Perl => Options {
            code_letters: "eE",
            value_letters: "I",
            attached_letters: "MmidlxF0C",
            long_code: &[],
            long_values: &[],
            file_letters: "",
        },
        Ruby => Options {
            code_letters: "e",
            value_letters: "rICE",
            attached_letters: "",
            long_code: &[],
            long_values: &["--encoding", "--external-encoding", "--internal-encoding"],
            file_letters: "",
        },
        Node => Options {
            code_letters: "ep",
            value_letters: "rC",
            attached_letters: "",
            long_code: &["--eval", "--print"],
            long_values: &["--require", "--import", "--loader", "--experimental-loader", "--conditions", "--title"],
            file_letters: "",
        },
        Php => Options {
            code_letters: "rBRE",
            value_letters: "dczS",
            attached_letters: "",
            long_code: &["--run", "--process-begin", "--process-code", "--process-end"],
            long_values: &["--define", "--php-ini", "--zend-extension"],
            file_letters: "fF",
        },
        PowerShell => Options {
            code_letters: "",
            value_letters: "",
            attached_letters: "",
            long_code: &[],
            long_values: &[],
            file_letters: "",
        },
    }
}

/// What an interpreter run with `argv` runs.
pub fn source(lang: Language, argv: &[Arg]) -> Source {
    if lang == PowerShell {
        return powershell_source(argv);
    }
    // `deno eval CODE`
    if argv.first().and_then(Arg::known).is_some_and(|p| p.rsplit('/').next() == Some("deno")) {
        return match argv.get(1).and_then(Arg::known) {
            Some("eval") => {
                let code = argv.iter().skip(2).find(|a| !a.known().is_some_and(|t| t.starts_with('-')));
                code.cloned().map_or(Source::Stdin, Source::Code)
            }
            _ => Source::File(None),
        };
    }
    let o = options(lang);
    let mut codes: Vec<Arg> = Vec::new();
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(t) = a.known() else { break };
        if t == "--" || t == "-" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v)),
                None => (t.to_string(), None),
            };
            if o.long_code.contains(&name.as_str()) {
                match value {
                    Some(v) => codes.push(Arg::fixed(v)),
                    None => codes.push(argv.get(i + 1).cloned().unwrap_or_else(|| Arg::fixed(""))),
                }
                i += if value.is_some() { 1 } else { 2 };
                continue;
            }
            i += if value.is_none() && o.long_values.contains(&name.as_str()) { 2 } else { 1 };
            continue;
        }
        let Some(letters) = t.strip_prefix('-').filter(|l| !l.is_empty()) else { break };
        let mut next = 1;
        for (k, c) in letters.char_indices() {
            let rest = letters.get(k + c.len_utf8()..).unwrap_or("");
            if o.code_letters.contains(c) {
                if rest.is_empty() {
                    codes.push(argv.get(i + 1).cloned().unwrap_or_else(|| Arg::fixed("")));
                    next = 2;
                } else {
                    codes.push(Arg::fixed(rest));
                }
                break;
            }
            if o.file_letters.contains(c) {
                let file = if rest.is_empty() { argv.get(i + 1).cloned() } else { Some(Arg::fixed(rest)) };
                return Source::File(file.filter(|_| c != 'm'));
            }
            if o.value_letters.contains(c) {
                if rest.is_empty() {
                    next = 2;
                }
                break;
            }
            if o.attached_letters.contains(c) {
                break;
            }
        }
        i += next;
    }
    if !codes.is_empty() {
        if codes.len() == 1 {
            return Source::Code(codes.remove(0));
        }
        let texts: Option<Vec<&str>> = codes.iter().map(Arg::code).collect();
        return match texts {
            Some(t) => Source::Code(Arg::fixed(&t.join("\n"))),
            None => Source::Code(codes.into_iter().find(|c| c.code().is_none()).unwrap_or_default()),
        };
    }
    if argv.get(i).and_then(Arg::known) == Some("--") {
        i += 1;
    }
    match argv.get(i) {
        None => Source::Stdin,
        Some(a) if matches!(a.known(), Some("-" | "/dev/stdin")) => Source::Stdin,
        Some(a) => Source::File(Some(a.clone())),
    }
}

/// PowerShell parameter names, as it matches them: case-insensitive, any
/// unambiguous prefix, `-` or `/` (Windows PowerShell) before them.
const PS_VALUE_PARAMETERS: &[&str] = &[
    "executionpolicy",
    "windowstyle",
    "outputformat",
    "inputformat",
    "configurationname",
    "workingdirectory",
    "settingsfile",
    "custompipename",
    "version",
    "psconsolefile",
];

fn ps_parameter(word: &str) -> Option<String> {
    let name = word.strip_prefix('-').or_else(|| word.strip_prefix('/'))?;
    (!name.is_empty()).then(|| name.trim_end_matches(':').to_ascii_lowercase())
}

fn powershell_source(argv: &[Arg]) -> Source {
    let program = argv.first().and_then(Arg::known).unwrap_or("").to_ascii_lowercase();
    // Windows PowerShell runs its operands as a command; pwsh as a file.
    let operands_are_command = program.rsplit(['/', '\\']).next().unwrap_or("").starts_with("powershell");
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(t) = a.known() else {
            return if operands_are_command { joined(argv, i) } else { Source::File(Some(a.clone())) };
        };
        let Some(name) = ps_parameter(t) else {
            return if operands_are_command { joined(argv, i) } else { Source::File(Some(a.clone())) };
        };
        if name == "command" || (name.len() <= "command".len() && "command".starts_with(&name)) {
            return match argv.get(i + 1).and_then(Arg::known) {
                Some("-") => Source::Stdin,
                _ if argv.get(i + 1).is_none() => Source::Stdin,
                _ => joined(argv, i + 1),
            };
        }
        if matches!(name.as_str(), "e" | "ec" | "en") || (name.len() >= 3 && "encodedcommand".starts_with(&name)) {
            return match argv.get(i + 1) {
                Some(word) => Source::Encoded(word.clone()),
                None => Source::Stdin,
            };
        }
        if name == "f" || (name.len() >= 2 && "file".starts_with(&name)) {
            return match argv.get(i + 1) {
                Some(f) if f.known() == Some("-") => Source::Stdin,
                f => Source::File(f.cloned()),
            };
        }
        let takes_value = matches!(name.as_str(), "ex" | "ep" | "w" | "o" | "of" | "if" | "wd" | "v")
            || (name.len() >= 2 && PS_VALUE_PARAMETERS.iter().any(|p| p.starts_with(&name)));
        i += if takes_value { 2 } else { 1 };
    }
    Source::Stdin
}

/// The words from `from` on, joined with spaces, as PowerShell joins them.
fn joined(argv: &[Arg], from: usize) -> Source {
    let rest = argv.get(from..).unwrap_or(&[]);
    let texts: Option<Vec<&str>> = rest.iter().map(Arg::code).collect();
    match texts {
        Some(t) if !t.is_empty() => Source::Code(Arg::fixed(&t.join(" "))),
        Some(_) => Source::Stdin,
        None => Source::Code(rest.iter().find(|a| a.code().is_none()).cloned().unwrap_or_default()),
    }
}

/// PowerShell's `-EncodedCommand`: base64 of UTF-16LE text.
pub fn decode_powershell(encoded: &str) -> Option<String> {
    let compact: String = encoded.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT.decode(compact.as_bytes()).ok()?;
    if bytes.len() % 2 != 0 {
        return None;
    }
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|p| u16::from_le_bytes([p.first().copied().unwrap_or(0), p.get(1).copied().unwrap_or(0)]))
        .collect();
    let text: String = char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).collect();
    (text.len() <= MAX_SCANNED_BYTES).then_some(text)
}

/// How a spawning call takes its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A shell command string, or a list of words (`system('rm', '-rf', '/')`, `run(['rm', ...])`).
    Shell,
    /// A program, then a list of its arguments (`spawn('rm', ['-rf', '/'])`).
    ProgramThenList,
    /// A program, then a list that starts with `argv[0]` (`os.execv('/bin/rm', ['rm', ...])`).
    ProgramThenArgv,
    /// A program, `argv[0]`, then the arguments (`os.execl('/bin/rm', 'rm', '-rf', '/')`).
    ProgramThenWords,
}

/// A call of the table: its language, the module it belongs to (for Python:
/// the receivers and `from` imports that name it; elsewhere a word the code
/// must mention for the row to apply, or empty), and its name.
pub type Call = (Language, &'static str, &'static str, Takes);

/// Calls that spawn processes.
pub const SPAWNS: &[Call] = &[
    (Python, "os", "system", Takes::Shell),
    (Python, "os", "popen", Takes::Shell),
    (Python, "os", "execl", Takes::ProgramThenWords),
    (Python, "os", "execle", Takes::ProgramThenWords),
    (Python, "os", "execlp", Takes::ProgramThenWords),
    (Python, "os", "execlpe", Takes::ProgramThenWords),
    (Python, "os", "execv", Takes::ProgramThenArgv),
    (Python, "os", "execve", Takes::ProgramThenArgv),
    (Python, "os", "execvp", Takes::ProgramThenArgv),
    (Python, "os", "execvpe", Takes::ProgramThenArgv),
    (Python, "os", "spawnv", Takes::Shell),
    (Python, "os", "spawnvp", Takes::Shell),
    (Python, "os", "posix_spawn", Takes::ProgramThenArgv),
    (Python, "os", "posix_spawnp", Takes::ProgramThenArgv),
    (Python, "subprocess", "run", Takes::Shell),
    (Python, "subprocess", "call", Takes::Shell),
    (Python, "subprocess", "check_call", Takes::Shell),
    (Python, "subprocess", "check_output", Takes::Shell),
    (Python, "subprocess", "Popen", Takes::Shell),
    (Python, "subprocess", "getoutput", Takes::Shell),
    (Python, "subprocess", "getstatusoutput", Takes::Shell),
    (Python, "commands", "getoutput", Takes::Shell),
    (Python, "pty", "spawn", Takes::Shell),
    (Python, "asyncio", "create_subprocess_shell", Takes::Shell),
    (Python, "asyncio", "create_subprocess_exec", Takes::ProgramThenWords),
    (Perl, "", "system", Takes::Shell),
    (Perl, "", "exec", Takes::Shell),
    (Perl, "", "readpipe", Takes::Shell),
    (Ruby, "", "system", Takes::Shell),
    (Ruby, "", "exec", Takes::Shell),
    (Ruby, "", "spawn", Takes::Shell),
    (Ruby, "", "popen", Takes::Shell),
    (Ruby, "", "capture2", Takes::Shell),
    (Ruby, "", "capture2e", Takes::Shell),
    (Ruby, "", "capture3", Takes::Shell),
    (Ruby, "", "popen2", Takes::Shell),
    (Ruby, "", "popen2e", Takes::Shell),
    (Ruby, "", "popen3", Takes::Shell),
    (Node, "child_process", "exec", Takes::Shell),
    (Node, "child_process", "execSync", Takes::Shell),
    (Node, "child_process", "spawn", Takes::ProgramThenList),
    (Node, "child_process", "spawnSync", Takes::ProgramThenList),
    (Node, "child_process", "execFile", Takes::ProgramThenList),
    (Node, "child_process", "execFileSync", Takes::ProgramThenList),
    (Node, "Bun", "spawn", Takes::Shell),
    (Node, "Bun", "spawnSync", Takes::Shell),
    (Node, "Deno", "run", Takes::Shell),
    (Php, "", "system", Takes::Shell),
    (Php, "", "exec", Takes::Shell),
    (Php, "", "shell_exec", Takes::Shell),
    (Php, "", "passthru", Takes::Shell),
    (Php, "", "popen", Takes::Shell),
    (Php, "", "proc_open", Takes::Shell),
    (Php, "", "pcntl_exec", Takes::ProgramThenList),
];

/// Calls that delete a tree: the path is their first argument. Node's
/// `rm`-family calls count only with `recursive` among their arguments.
pub const DELETES: &[Call] = &[
    (Python, "shutil", "rmtree", Takes::Shell),
    (Perl, "", "rmtree", Takes::Shell),
    (Perl, "", "remove_tree", Takes::Shell),
    (Ruby, "", "rm_rf", Takes::Shell),
    (Ruby, "", "rm_r", Takes::Shell),
    (Ruby, "", "rmtree", Takes::Shell),
    (Ruby, "", "remove_dir", Takes::Shell),
    (Ruby, "", "remove_entry", Takes::Shell),
    (Ruby, "", "remove_entry_secure", Takes::Shell),
    (Node, "", "rmSync", Takes::Shell),
    (Node, "", "rmdirSync", Takes::Shell),
    (Node, "", "rm", Takes::Shell),
    (Node, "", "rmdir", Takes::Shell),
    (Node, "", "removeSync", Takes::Shell),
    (Node, "", "rimraf", Takes::Shell),
];

/// Calls that remove one file: the path is their first argument.
pub const REMOVES: &[Call] = &[
    (Python, "os", "remove", Takes::Shell),
    (Python, "os", "unlink", Takes::Shell),
    (Perl, "", "unlink", Takes::Shell),
    (Ruby, "", "File.delete", Takes::Shell),
    (Ruby, "", "File.unlink", Takes::Shell),
    (Node, "", "unlinkSync", Takes::Shell),
    (Node, "", "unlink", Takes::Shell),
    (Php, "", "unlink", Takes::Shell),
];

/// Node calls that delete a tree only when asked to (`{ recursive: true }`).
const NODE_RECURSIVE_ONLY: &[&str] = &["rmSync", "rmdirSync", "rm", "rmdir"];

/// Whole-environment reads: a dump when not followed by one of the suffixes
/// that read one variable.
pub const ENVIRONMENT: &[(Language, &str, &[&str])] = &[
    (
        Python,
        "os.environ",
        &["[", ".get(", ".setdefault(", ".pop(", ".__getitem__(", ".__setitem__(", ".__contains__("],
    ),
    (Python, "os.getenv()", &[]),
    (Node, "process.env", &[".", "["]),
    (Ruby, "ENV", &["[", ".fetch(", ".key?", ".has_key?", ".include?", ".delete(", ".store(", "_"]),
    (Perl, "%ENV", &[]),
    (Php, "getenv()", &[]),
    (Php, "$_ENV", &["["]),
    (Php, "$_SERVER", &["["]),
    (PowerShell, "env:", &[]),
    (PowerShell, "GetEnvironmentVariables(", &[]),
];

/// Network clients: code that uses one may send what it holds.
pub const SENDERS: &[(Language, &str)] = &[
    (Python, "requests"),
    (Python, "urllib"),
    (Python, "http.client"),
    (Python, "httpx"),
    (Python, "aiohttp"),
    (Python, "socket"),
    (Python, "smtplib"),
    (Python, "ftplib"),
    (Python, "paramiko"),
    (Python, "pycurl"),
    (Perl, "LWP"),
    (Perl, "HTTP::Tiny"),
    (Perl, "IO::Socket"),
    (Perl, "Net::"),
    (Perl, "Socket"),
    (Ruby, "Net::HTTP"),
    (Ruby, "TCPSocket"),
    (Ruby, "UDPSocket"),
    (Ruby, "Socket"),
    (Ruby, "open-uri"),
    (Ruby, "URI.open"),
    (Ruby, "Faraday"),
    (Ruby, "HTTParty"),
    (Ruby, "RestClient"),
    (Node, "fetch("),
    (Node, "http"),
    (Node, "net"),
    (Node, "dgram"),
    (Node, "tls"),
    (Node, "axios"),
    (Node, "XMLHttpRequest"),
    (Node, "WebSocket"),
    (Php, "curl_"),
    (Php, "fsockopen"),
    (Php, "stream_socket_client"),
    (Php, "socket_"),
    (Php, "stream_context_create"),
    (Php, "mail("),
    (PowerShell, "Invoke-WebRequest"),
    (PowerShell, "iwr"),
    (PowerShell, "Invoke-RestMethod"),
    (PowerShell, "irm"),
    (PowerShell, "WebClient"),
    (PowerShell, "HttpClient"),
    (PowerShell, "Send-MailMessage"),
    (PowerShell, "Net.Sockets"),
    (PowerShell, "curl"),
    (PowerShell, "wget"),
    (PowerShell, "Start-BitsTransfer"),
];

/// Calls that fork the process.
pub const FORKS: &[(Language, &str)] = &[
    (Python, "fork("),
    (Python, "forkpty("),
    (Perl, "fork"),
    (Ruby, "fork"),
    (Node, "fork("),
    (Php, "pcntl_fork("),
    (PowerShell, "Start-Process"),
    (PowerShell, "Start-Job"),
];

/// Loops with no end, in any of the languages (compared without spaces).
pub const ENDLESS_LOOPS: &[&str] = &[
    "whileTrue",
    "while1",
    "while(1)",
    "while(true)",
    "while($true)",
    "for(;;)",
    "loop{",
    "loopdo",
    "until0",
    "until(0)",
    "whilefork",
    "untilfalse",
];

/// Evaluation of code: judged as code only known at run time unless its
/// argument is a string literal (whose text is part of what is scanned).
pub const EVALS: &[(Language, &str)] = &[
    (Python, "exec"),
    (Python, "eval"),
    (Python, "compile"),
    (Perl, "eval"),
    (Ruby, "eval"),
    (Ruby, "instance_eval"),
    (Ruby, "class_eval"),
    (Node, "eval"),
    (Node, "Function"),
    (Node, "runInNewContext"),
    (Node, "runInThisContext"),
    (Php, "eval"),
    (Php, "assert"),
    (Php, "create_function"),
    (PowerShell, "Invoke-Expression"),
    (PowerShell, "iex"),
    (PowerShell, "ScriptBlock]::Create"),
];

/// PowerShell's downloads, which `Invoke-Expression` of is download-and-run.
const PS_DOWNLOADS: &[&str] = &[
    "invoke-webrequest",
    "iwr",
    "invoke-restmethod",
    "irm",
    "downloadstring",
    "downloaddata",
    "downloadfile",
    "curl",
    "wget",
    "start-bitstransfer",
    "httpclient",
];

/// PowerShell's names for `Start-Process`.
const PS_START: &[&str] = &["start-process", "saps", "start"];

/// PowerShell's names for `Remove-Item`.
const PS_REMOVE: &[&str] = &["remove-item", "rm", "ri", "del", "erase", "rd", "rmdir"];

/// What inline code does that the exec gate judges on the interpreter's invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It uses a network client, so it may send what it holds.
    Sends,
    /// It forks in an endless loop.
    ForkLoop,
    /// It runs code it downloads.
    DownloadRun,
    /// It connects a shell to the network (a reverse shell).
    RemoteShell,
}

/// What inline code does, as far as the scan sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Shell commands it spawns; `None` for a command only known at run time.
    pub spawns: Vec<Option<String>>,
    /// Paths it deletes recursively; `None` for a path only known at run time.
    pub deletes: Vec<Option<String>>,
    /// String literals that look like paths.
    pub paths: Vec<String>,
    /// It reads the whole environment.
    pub environment: bool,
    /// It uses a network client.
    pub sends: bool,
    /// It forks in an endless loop.
    pub fork_loop: bool,
    /// It evaluates code built at run time.
    pub dynamic_eval: bool,
    /// It runs code it downloads (PowerShell `iex (iwr ...)`).
    pub download_run: bool,
    /// PowerShell statements that may run native commands, judged as shell.
    pub statements: Vec<String>,
    /// Files it removes (one by one, not trees); `None` for a path only known at run time.
    pub removes: Vec<Option<String>>,
    /// It connects to the network and spawns an interactive shell: a shell
    /// that reads its commands from the other end (a reverse shell).
    pub remote_shell: bool,
    /// Longer than [`MAX_SCANNED_BYTES`]: not scanned.
    pub too_long: bool,
}

/// Scans inline code of `lang`.
pub fn scan(lang: Language, code: &str) -> Scan {
    let mut out = Scan::default();
    scan_into(lang, code, 0, &mut out);
    out
}

fn scan_into(lang: Language, code: &str, depth: usize, out: &mut Scan) {
    if code.len() > MAX_SCANNED_BYTES {
        out.too_long = true;
        return;
    }
    let lits = literals(lang, code);
    for l in &lits {
        if l.interpolated {
            continue;
        }
        let t = l.text.as_str();
        let looks_like_path = (t.starts_with('/') || t.starts_with("~/") || t == "~" || t.starts_with("$HOME/"))
            && !t.contains(char::is_whitespace)
            && !t.contains("://")
            && t.len() <= crate::paths::MAX_PATH_CHARS;
        if looks_like_path && !out.paths.iter().any(|p| p == t) {
            out.paths.push(t.to_string());
        }
        if l.command {
            out.spawns.push(Some(l.text.clone()));
        }
    }
    out.spawns.extend(lits.iter().filter(|l| l.command && l.interpolated).map(|_| None));
    let lower;
    let hay = if case_insensitive(lang) {
        lower = code.to_ascii_lowercase();
        lower.as_str()
    } else {
        code
    };
    let needles = |module: &str, name: &str| -> Vec<String> {
        if lang == Python { python_needles(code, module, name) } else { vec![fold(lang, name)] }
    };
    for &(l, module, name, takes) in SPAWNS {
        if l != lang || (!module.is_empty() && lang != Python && !code.contains(module)) {
            continue;
        }
        for needle in needles(module, name) {
            for at in calls(hay, &needle, true) {
                out.spawns.push(spawned(lang, code, at + needle.len(), takes));
            }
        }
    }
    for &(l, module, name, _) in REMOVES {
        if l != lang {
            continue;
        }
        for needle in needles(module, name) {
            for at in calls(hay, &needle, true) {
                match arguments(lang, code, at + needle.len()).first() {
                    Some(Value::Str(p)) => out.removes.push(Some(p.clone())),
                    _ => out.removes.push(None),
                }
            }
        }
    }
    for &(l, module, name, _) in DELETES {
        if l != lang {
            continue;
        }
        for needle in needles(module, name) {
            for at in calls(hay, &needle, true) {
                let start = at + needle.len();
                if lang == Node && NODE_RECURSIVE_ONLY.contains(&name) && !call_text(code, start).contains("recursive")
                {
                    continue;
                }
                let args = arguments(lang, code, start);
                match args.first() {
                    Some(Value::Str(p)) => out.deletes.push(Some(p.clone())),
                    Some(Value::List(Some(items))) => out.deletes.extend(items.iter().cloned().map(Some)),
                    _ => out.deletes.push(None),
                }
            }
        }
    }
    for &(l, needle, specific) in ENVIRONMENT {
        if l != lang {
            continue;
        }
        let needle = fold(lang, needle);
        out.environment |= hay.match_indices(needle.as_str()).any(|(at, _)| {
            let before = hay.get(..at).and_then(|b| b.chars().next_back());
            let after = hay.get(at + needle.len()..).unwrap_or("");
            let bounded = before.is_none_or(|c| !is_ident(c) && c != '$')
                && after.chars().next().is_none_or(|c| !is_ident(c) || specific.is_empty());
            bounded && !specific.iter().any(|s| after.starts_with(&fold(lang, s)))
        });
    }
    out.sends |= SENDERS.iter().any(|(l, n)| *l == lang && words(hay, &fold(lang, n)));
    let squeezed: String = hay.chars().filter(|c| !c.is_whitespace()).collect();
    let endless = ENDLESS_LOOPS.iter().any(|l| squeezed.contains(&fold(lang, l)));
    out.fork_loop |= endless && FORKS.iter().any(|(l, n)| *l == lang && words(hay, &fold(lang, n)));
    for &(l, name) in EVALS {
        if l != lang {
            continue;
        }
        let needle = fold(lang, name);
        let methods = name.starts_with("run") || name.contains(']');
        for at in calls(hay, &needle, methods) {
            let start = at + needle.len();
            match arguments(lang, code, start).first() {
                Some(Value::Str(text)) if lang == PowerShell => {
                    if depth + 1 >= MAX_EVAL_NESTING {
                        out.dynamic_eval = true;
                    } else {
                        scan_into(lang, text, depth + 1, out);
                    }
                }
                Some(Value::Str(_)) => {}
                _ => out.dynamic_eval = true,
            }
        }
    }
    if lang == PowerShell {
        powershell(code, &lower_of(code), out);
    }
    out.remote_shell |= out.sends && out.spawns.iter().flatten().any(|c| interactive_shell(c));
}

/// Whether a spawned command is a shell with no command of its own (`/bin/sh -i`, `bash`).
fn interactive_shell(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().map(|w| w.trim_matches('\'')).collect();
    let Some(program) = words.first() else { return false };
    let name = program.rsplit('/').next().unwrap_or(program);
    super::programs::Class::of(name).is(super::programs::Table::Shell)
        && !words.iter().skip(1).any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
        && words.iter().skip(1).all(|w| {
            w.starts_with('-')
                || w.starts_with('<')
                || w.starts_with('>')
                || w.starts_with(|c: char| c.is_ascii_digit())
        })
}

fn lower_of(code: &str) -> String {
    code.to_ascii_lowercase()
}

fn fold(lang: Language, text: &str) -> String {
    if case_insensitive(lang) { text.to_ascii_lowercase() } else { text.to_string() }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `needle` occurs in `hay` as a whole word (or starts one, for names ending in punctuation).
fn words(hay: &str, needle: &str) -> bool {
    hay.match_indices(needle).any(|(at, _)| {
        let before = hay.get(..at).and_then(|b| b.chars().next_back());
        let after = hay.get(at + needle.len()..).and_then(|a| a.chars().next());
        let ends_word = needle.chars().next_back().is_some_and(is_ident);
        before.is_none_or(|c| !is_ident(c) && c != '-') && (!ends_word || after.is_none_or(|c| !is_ident(c)))
    })
}

/// Positions where `needle` is called: a whole name followed by `(`, a
/// space and an argument, or (Perl, Ruby, PowerShell) a literal.
fn calls(hay: &str, needle: &str, methods: bool) -> Vec<usize> {
    hay.match_indices(needle)
        .filter(|(at, _)| {
            let before = hay.get(..*at).and_then(|b| b.chars().next_back());
            let after = hay.get(at + needle.len()..).unwrap_or("");
            let starts = match before {
                None => true,
                Some(c) => !is_ident(c) && !matches!(c, '-' | '$' | '@' | '%' | '>') && (methods || c != '.'),
            };
            let next = after.chars().next();
            let called = match next {
                Some('(') => true,
                Some(' ' | '\t') => after
                    .trim_start()
                    .chars()
                    .next()
                    .is_some_and(|c| matches!(c, '(' | '\'' | '"' | '$' | '[' | 'q' | '%' | '@' | '-' | '`')),
                _ => false,
            };
            starts && called
        })
        .map(|(at, _)| at)
        .collect()
}

/// The text of a call's arguments: up to its closing parenthesis, or the end of the statement.
fn call_text(code: &str, start: usize) -> &str {
    let rest = code.get(start..).unwrap_or("");
    let trimmed = rest.trim_start();
    if let Some(inner) = trimmed.strip_prefix('(') {
        let mut depth = 1usize;
        for (k, c) in inner.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return inner.get(..k).unwrap_or(inner);
                    }
                }
                _ => {}
            }
        }
        return inner;
    }
    let end = rest.find([';', '\n']).unwrap_or(rest.len());
    rest.get(..end).unwrap_or(rest)
}

/// How a Python call of `module.name` is spelled: `os.system`,
/// `o.system` after `import os as o`, `__import__('os').system`, and the
/// bare name (or its alias) after `from os import system [as s]`.
fn python_needles(code: &str, module: &str, name: &str) -> Vec<String> {
    let mut out = vec![format!("{module}.{name}")];
    for q in ['\'', '"'] {
        out.push(format!("__import__({q}{module}{q}).{name}"));
        out.push(format!("import_module({q}{module}{q}).{name}"));
    }
    for statement in code.split(['\n', ';']) {
        let s = statement.trim();
        if let Some(rest) = s.strip_prefix("import ") {
            for item in rest.split(',') {
                let mut parts = item.split_whitespace();
                if parts.next() == Some(module)
                    && parts.next() == Some("as")
                    && let Some(alias) = parts.next()
                {
                    out.push(format!("{alias}.{name}"));
                }
            }
        } else if let Some(rest) = s.strip_prefix("from ") {
            let Some((from, names)) = rest.split_once(" import ") else { continue };
            if from.trim() != module {
                continue;
            }
            for item in names.trim_matches(|c| c == '(' || c == ')' || c == ' ').split(',') {
                let mut parts = item.split_whitespace();
                match (parts.next(), parts.next(), parts.next()) {
                    (Some("*"), _, _) => out.push(name.to_string()),
                    (Some(n), Some("as"), Some(alias)) if n == name => out.push(alias.to_string()),
                    (Some(n), None, _) if n == name => out.push(name.to_string()),
                    _ => {}
                }
            }
        }
    }
    out.dedup();
    out
}

/// A string literal of the code.
#[derive(Debug, Clone)]
struct Literal {
    text: String,
    /// It interpolates values only known at run time.
    interpolated: bool,
    /// It is a command the language runs (backticks, `qx`, `%x`).
    command: bool,
}

/// The string literals of `code`, in order.
fn literals(lang: Language, code: &str) -> Vec<Literal> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match literal_at(lang, &chars, i) {
            Some((lit, end)) => {
                out.push(lit);
                i = end.max(i + 1);
            }
            // A literal that never closes runs to the end: nothing after it is code.
            None if opens_literal(lang, &chars, i) => break,
            None => i += 1,
        }
    }
    out
}

/// Whether a literal would start at `i` (so `literal_at` found it unclosed).
fn opens_literal(lang: Language, chars: &[char], i: usize) -> bool {
    let Some(&c) = chars.get(i) else { return false };
    let next = chars.get(i + 1).copied();
    match lang {
        Python | PowerShell => {
            matches!(c, '\'' | '"') || (lang == PowerShell && c == '@' && matches!(next, Some('\'' | '"')))
        }
        Node => matches!(c, '\'' | '"' | '`'),
        Perl | Ruby | Php => {
            let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
            let prefixed = match (lang, c) {
                (Perl, 'q') => prev.is_none_or(|p| !is_ident(p)),
                (Ruby, '%') => true,
                _ => false,
            };
            let delimiter = |d: Option<char>| d.is_some_and(|d| "([{</|!#~".contains(d));
            matches!(c, '\'' | '"' | '`')
                || (prefixed
                    && (delimiter(next)
                        || (next.is_some_and(|n| "qQxwW".contains(n)) && delimiter(chars.get(i + 2).copied()))))
        }
    }
}

fn closing(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    }
}

/// The literal starting at `i`, and the index after it.
fn literal_at(lang: Language, chars: &[char], i: usize) -> Option<(Literal, usize)> {
    let c = *chars.get(i)?;
    let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
    let word_start = prev.is_none_or(|p| !is_ident(p));
    // Perl `q(...)`, `qq{...}`, `qx/.../`, `qw`; Ruby `%q(...)`, `%Q`, `%x`, `%w`, `%(...)`.
    if lang == Perl && c == 'q' && word_start {
        let (kind, at) = match chars.get(i + 1) {
            Some(k @ ('q' | 'x' | 'w')) => (Some(*k), i + 2),
            _ => (None, i + 1),
        };
        let open = *chars.get(at)?;
        if matches!(open, '(' | '[' | '{' | '<' | '/' | '|' | '!' | '#' | '~') {
            let escapes = if matches!(kind, None | Some('w')) { Escapes::Raw } else { Escapes::Full };
            let (text, end) = delimited(chars, at + 1, open, closing(open), escapes)?;
            let interpolated = kind != Some('w') && kind.is_some() && has_interpolation(lang, &text);
            let text = if kind == Some('w') { text.split_whitespace().collect::<Vec<_>>().join(" ") } else { text };
            return Some((Literal { text, interpolated, command: kind == Some('x') }, end));
        }
        return None;
    }
    if lang == Ruby && c == '%' {
        let (kind, at) = match chars.get(i + 1) {
            Some(k @ ('q' | 'Q' | 'x' | 'w' | 'W')) => (Some(*k), i + 2),
            _ => (None, i + 1),
        };
        let open = *chars.get(at)?;
        if matches!(open, '(' | '[' | '{' | '<' | '|' | '!') {
            let escapes = if matches!(kind, Some('q' | 'w')) { Escapes::Raw } else { Escapes::Full };
            let (text, end) = delimited(chars, at + 1, open, closing(open), escapes)?;
            let interpolated = kind != Some('q') && kind != Some('w') && has_interpolation(lang, &text);
            return Some((Literal { text, interpolated, command: kind == Some('x') }, end));
        }
        return None;
    }
    if lang == PowerShell && c == '@' && matches!(chars.get(i + 1), Some('\'' | '"')) {
        let q = *chars.get(i + 1)?;
        let body_start = i + 2;
        let mut k = body_start;
        while k + 1 < chars.len() {
            if chars.get(k) == Some(&q) && chars.get(k + 1) == Some(&'@') {
                let text: String = chars.get(body_start..k)?.iter().collect();
                let text = text.trim_matches(|c| c == '\n' || c == '\r').to_string();
                let interpolated = q == '"' && has_interpolation(lang, &text);
                return Some((Literal { text, interpolated, command: false }, k + 2));
            }
            k += 1;
        }
        return None;
    }
    let quotes: &[char] = match lang {
        Python => &['\'', '"'],
        Perl | Ruby | Php => &['\'', '"', '`'],
        Node => &['\'', '"', '`'],
        PowerShell => &['\'', '"'],
    };
    if !quotes.contains(&c) {
        return None;
    }
    // Python prefixes: `r'..'`, `f"..."`, `b'..'`.
    let prefix = if lang == Python { python_prefix(chars, i) } else { String::new() };
    let triple = lang == Python && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
    let (text, end) = if triple {
        let start = i + 3;
        let mut k = start;
        loop {
            if k + 2 >= chars.len() + 2 && k >= chars.len() {
                return None;
            }
            if chars.get(k) == Some(&c) && chars.get(k + 1) == Some(&c) && chars.get(k + 2) == Some(&c) {
                break (chars.get(start..k)?.iter().collect::<String>(), k + 3);
            }
            k += 1;
        }
    } else {
        let escapes = if lang == PowerShell {
            Escapes::Doubled
        } else if prefix.contains('r') || (c == '\'' && matches!(lang, Perl | Ruby | Php)) {
            Escapes::Raw
        } else {
            Escapes::Full
        };
        delimited(chars, i + 1, c, c, escapes)?
    };
    let interpolated = match (lang, c) {
        (Python, _) => prefix.contains('f') && text.contains('{'),
        (Node, '`') => text.contains("${"),
        (Perl | Ruby | Php | PowerShell, '"') | (Perl | Ruby | Php, '`') => has_interpolation(lang, &text),
        _ => false,
    };
    let command = c == '`' && matches!(lang, Perl | Ruby | Php);
    Some((Literal { text, interpolated, command }, end))
}

fn python_prefix(chars: &[char], i: usize) -> String {
    let mut k = i;
    let mut out = String::new();
    while k > 0 {
        let Some(&p) = chars.get(k - 1) else { break };
        if matches!(p.to_ascii_lowercase(), 'r' | 'f' | 'b' | 'u') && out.len() < 2 {
            out.push(p.to_ascii_lowercase());
            k -= 1;
        } else {
            break;
        }
    }
    let before = k.checked_sub(1).and_then(|p| chars.get(p)).copied();
    if before.is_some_and(is_ident) { String::new() } else { out }
}

fn has_interpolation(lang: Language, text: &str) -> bool {
    match lang {
        Ruby => text.contains("#{"),
        Perl => {
            let chars: Vec<char> = text.chars().collect();
            chars.windows(2).any(|w| matches!(w, [s, n] if (*s == '$' || *s == '@') && (is_ident(*n) || *n == '{')))
        }
        Php | PowerShell => {
            let chars: Vec<char> = text.chars().collect();
            chars.windows(2).any(|w| matches!(w, [s, n] if *s == '$' && (is_ident(*n) || *n == '{' || *n == '(')))
        }
        Node => text.contains("${"),
        Python => false,
    }
}

/// How a literal spells characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escapes {
    /// Backslash escapes: `\n`, `\t`, `\xHH`, `\x{H..}`, `\uHHHH`, `\u{H..}`, `\0oo`, `\c` for any other `c`.
    Full,
    /// Backslashes kept, except before the delimiter or another backslash.
    Raw,
    /// No backslash escapes; a doubled delimiter is one (PowerShell).
    Doubled,
}

/// Text up to the closing delimiter, with its escapes resolved.
fn delimited(chars: &[char], start: usize, open: char, close: char, escapes: Escapes) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut k = start;
    let hex = |from: usize, max: usize| -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max
            && let Some(d) = chars.get(from + n).and_then(|c| c.to_digit(16))
        {
            value = value.saturating_mul(16).saturating_add(d);
            n += 1;
        }
        (value, n)
    };
    while let Some(&c) = chars.get(k) {
        if c == '\\' && escapes != Escapes::Doubled {
            let next = *chars.get(k + 1)?;
            k += 2;
            if escapes == Escapes::Raw {
                if next != close && next != '\\' {
                    out.push('\\');
                }
                out.push(next);
                continue;
            }
            match next {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'x' | 'u' | 'U' => {
                    let braced = chars.get(k) == Some(&'{');
                    let from = k + usize::from(braced);
                    let max = if braced {
                        8
                    } else if next == 'x' {
                        2
                    } else if next == 'u' {
                        4
                    } else {
                        8
                    };
                    let (value, n) = hex(from, max);
                    if n == 0 {
                        out.push(next);
                    } else {
                        out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                        k = from + n + usize::from(braced && chars.get(from + n) == Some(&'}'));
                    }
                }
                '0'..='7' => {
                    let mut value = next.to_digit(8).unwrap_or(0);
                    let mut n = 0;
                    while n < 2
                        && let Some(d) = chars.get(k).and_then(|c| c.to_digit(8))
                    {
                        value = value * 8 + d;
                        k += 1;
                        n += 1;
                    }
                    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                }
                other => out.push(other),
            }
            continue;
        }
        if c == close && depth == 0 {
            if escapes == Escapes::Doubled && chars.get(k + 1) == Some(&close) {
                out.push(close);
                k += 2;
                continue;
            }
            return Some((out, k + 1));
        }
        if open != close {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
            }
        }
        out.push(c);
        k += 1;
    }
    None
}

/// An argument of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Str(String),
    /// A list of literals; `None` when one of them is not a literal.
    List(Option<Vec<String>>),
    /// Anything else.
    Other,
}

/// Expressions that name the home directory, and calls whose string argument is a path.
const HOME_EXPRESSIONS: &[&str] = &[
    "Path.home()",
    "os.homedir()",
    "Dir.home",
    "process.env.HOME",
    "os.environ['HOME']",
    "os.environ[\"HOME\"]",
    "os.getenv('HOME')",
    "os.getenv(\"HOME\")",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "getenv('HOME')",
    "$env:USERPROFILE",
    "$env:HOME",
    "$HOME",
];
const PATH_WRAPPERS: &[&str] =
    &["os.path.expanduser(", "expanduser(", "File.expand_path(", "pathlib.Path(", "Path(", "path.resolve("];

/// The arguments of the call whose name ends at `start`: literals and lists
/// of literals, up to the first argument that is neither.
fn arguments(lang: Language, code: &str, start: usize) -> Vec<Value> {
    let chars: Vec<char> = code.get(start..).unwrap_or("").chars().take(MAX_CALL_CHARS).collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while chars.get(*i).is_some_and(|c| *c == ' ' || *c == '\t') {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if chars.get(i) == Some(&'(') {
        i += 1;
    }
    loop {
        skip_ws(&mut i);
        let rest: String = chars.get(i..).unwrap_or(&[]).iter().take(64).collect();
        if let Some(h) = HOME_EXPRESSIONS.iter().find(|h| rest.starts_with(**h)) {
            out.push(Value::Str("~".to_string()));
            i += h.chars().count();
        } else if let Some(w) = PATH_WRAPPERS.iter().find(|w| rest.starts_with(**w)) {
            let at = i + w.chars().count();
            match literal_at(lang, &chars, at) {
                Some((lit, end)) if !lit.interpolated && chars.get(end) == Some(&')') => {
                    out.push(Value::Str(lit.text));
                    i = end + 1;
                }
                _ => {
                    out.push(Value::Other);
                    break;
                }
            }
        } else if chars.get(i) == Some(&'[') {
            let mut items = Some(Vec::new());
            i += 1;
            loop {
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match chars.get(i) {
                    Some(']') => {
                        i += 1;
                        break;
                    }
                    None => break,
                    _ => {}
                }
                match literal_at(lang, &chars, i) {
                    Some((lit, end)) if !lit.interpolated => {
                        if let Some(v) = items.as_mut() {
                            v.push(lit.text);
                        }
                        i = end;
                    }
                    _ => {
                        items = None;
                        // Skip to the end of the list.
                        while chars.get(i).is_some_and(|c| *c != ']') {
                            i += 1;
                        }
                    }
                }
            }
            out.push(Value::List(items));
        } else {
            match literal_at(lang, &chars, i) {
                Some((lit, end)) if !lit.interpolated => {
                    // `'a' + x` is not a literal.
                    let mut k = end;
                    while chars.get(k).is_some_and(|c| *c == ' ') {
                        k += 1;
                    }
                    if matches!(chars.get(k), Some('+' | '.' | '%' | '*')) && lang != Perl
                        || (lang == Perl && matches!(chars.get(k), Some('.' | 'x')))
                        || (lang == Python && chars.get(k) == Some(&'.'))
                    {
                        out.push(Value::Other);
                        break;
                    }
                    out.push(Value::Str(lit.text));
                    i = end;
                }
                _ => {
                    if !matches!(chars.get(i), Some(')' | ';' | '\n') | None) {
                        out.push(Value::Other);
                    }
                    break;
                }
            }
        }
        skip_ws(&mut i);
        if chars.get(i) == Some(&',') {
            i += 1;
            // A keyword argument ends the positional ones.
            let mut k = i;
            while chars.get(k).is_some_and(|c| *c == ' ') {
                k += 1;
            }
            let mut n = k;
            while chars.get(n).is_some_and(|c| is_ident(*c)) {
                n += 1;
            }
            if n > k && chars.get(n) == Some(&'=') && chars.get(n + 1) != Some(&'=') {
                break;
            }
            if matches!(chars.get(k), Some('{')) {
                break;
            }
            continue;
        }
        break;
    }
    out
}

/// The shell command a spawning call runs, when its arguments are literals.
fn spawned(lang: Language, code: &str, start: usize, takes: Takes) -> Option<String> {
    let args = arguments(lang, code, start);
    let strings = |from: usize| -> Option<Vec<String>> {
        args.get(from..)?
            .iter()
            .map(|v| match v {
                Value::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    };
    let words: Vec<String> = match (takes, args.first()?) {
        (Takes::Shell, Value::Str(s)) => {
            let rest = strings(1).unwrap_or_default();
            if rest.is_empty() {
                return Some(s.clone());
            }
            let mut w = vec![s.clone()];
            w.extend(rest);
            w
        }
        (Takes::Shell, Value::List(Some(items))) => items.clone(),
        (Takes::ProgramThenList | Takes::ProgramThenArgv, Value::Str(program)) => match args.get(1) {
            None | Some(Value::Other) if takes == Takes::ProgramThenList => return Some(program.clone()),
            Some(Value::List(Some(items))) => {
                let skip = usize::from(takes == Takes::ProgramThenArgv);
                let mut w = vec![program.clone()];
                w.extend(items.iter().skip(skip).cloned());
                w
            }
            _ => return None,
        },
        (Takes::ProgramThenWords, Value::Str(program)) => {
            let rest = strings(1)?;
            let mut w = vec![program.clone()];
            // Python's `execl` repeats `argv[0]`; PowerShell's `Start-Process` does not.
            w.extend(rest.into_iter().skip(usize::from(lang == Python && !program.is_empty())));
            w
        }
        _ => return None,
    };
    if words.is_empty() {
        return None;
    }
    Some(words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "))
}

/// PowerShell: `Invoke-Expression` of a download, `Remove-Item -Recurse`,
/// and statements that may run native commands.
fn powershell(code: &str, lower: &str, out: &mut Scan) {
    let evaluates = ["invoke-expression", "iex"].iter().any(|n| words(lower, n))
        || lower.contains("scriptblock]::create")
        || lower.contains("| &")
        || lower.contains("|&");
    if evaluates && PS_DOWNLOADS.iter().any(|d| words(lower, d)) {
        out.download_run = true;
    }
    // Bare words are strings too: `Get-Content ~/.ssh/id_rsa`.
    for word in code.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | ';' | '|' | '=')) {
        let w = word.trim_matches(['\'', '"']);
        let lower = w.to_ascii_lowercase();
        let home =
            ["~/", "~\\", "$home/", "$home\\", "$env:userprofile", "$env:home"].iter().any(|h| lower.starts_with(h));
        if (home || (w.starts_with('/') && w.len() > 1))
            && let Some(path) = ps_path(w)
            && !out.paths.contains(&path)
        {
            out.paths.push(path);
        }
    }
    let mut pending = statements(code);
    let mut judged = 0;
    while let Some(statement) = pending.pop() {
        judged += 1;
        if judged > MAX_POWERSHELL_STATEMENTS {
            out.dynamic_eval = true;
            break;
        }
        let mut trimmed = statement.trim().trim_start_matches("& ").trim_start_matches('&').trim();
        // A group, subexpression or script block: the statements inside it (a block may be invoked later).
        let inner = trimmed.strip_prefix("$(").or_else(|| trimmed.strip_prefix('(')).and_then(|t| t.strip_suffix(')'));
        if let Some(inner) = inner.or_else(|| trimmed.strip_prefix('{').and_then(|t| t.strip_suffix('}'))) {
            pending.extend(statements(inner));
            continue;
        }
        // `$x = Get-Content ...`: what is assigned runs.
        if let Some(rest) = trimmed.strip_prefix('$')
            && let Some((name, value)) = rest.split_once('=')
            && !name.trim().is_empty()
            && name.trim().chars().all(|c| is_ident(c) || c == ':')
            && !value.starts_with('=')
        {
            trimmed = value.trim();
        }
        let mut parts = trimmed.split_whitespace();
        let Some(first) = parts.next() else { continue };
        let first_lower = first.trim_matches(['\'', '"']).to_ascii_lowercase();
        if PS_REMOVE.contains(&first_lower.as_str()) {
            remove_item(parts.clone().collect(), out);
        }
        if PS_START.contains(&first_lower.as_str()) {
            out.spawns.push(start_process(parts.clone().collect()));
        }
        if first.starts_with(['$', '[', '(', '@', '{', '#', '}']) {
            continue;
        }
        out.statements.push(trimmed.to_string());
    }
}

/// The statements of PowerShell code: split at `;` and line ends outside quotes, braces and parentheses.
fn statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    for c in code.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                current.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    current.push(c);
                }
                '(' | '{' => {
                    depth += 1;
                    current.push(c);
                }
                ')' | '}' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ';' | '\n' if depth == 0 => out.push(core::mem::take(&mut current)),
                _ => current.push(c),
            },
        }
    }
    out.push(current);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// `Remove-Item` with `-Recurse` (any prefix, any case): the targets it deletes.
fn remove_item(args: Vec<&str>, out: &mut Scan) {
    let mut recursive = false;
    let mut targets: Vec<Option<String>> = Vec::new();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        let word = a.trim_end_matches([',']);
        if let Some(name) = word.strip_prefix('-').map(|n| n.trim_end_matches(':').to_ascii_lowercase()) {
            if !name.is_empty() && "recurse".starts_with(&name) {
                recursive = true;
            } else if !name.is_empty()
                && ("path".starts_with(&name) || "literalpath".starts_with(&name) || name == "lp")
                && let Some(v) = args.get(k)
            {
                targets.push(ps_path(v));
                k += 1;
            }
            continue;
        }
        if word == "|" {
            break;
        }
        targets.push(ps_path(word));
    }
    if recursive {
        out.deletes.extend(targets);
    }
}

/// `Start-Process FILE ARGS` (or `-FilePath`, `-ArgumentList`): the command it runs, when its words are literals.
fn start_process(args: Vec<&str>) -> Option<String> {
    let mut file: Option<&str> = None;
    let mut list: Vec<&str> = Vec::new();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        if let Some(name) = a.strip_prefix('-').map(str::to_ascii_lowercase) {
            if !name.is_empty() && "filepath".starts_with(&name) {
                file = args.get(k).copied();
                k += 1;
            } else if !name.is_empty() && ("argumentlist".starts_with(&name) || name == "args") {
                list.extend(args.get(k..).unwrap_or(&[]).iter().take_while(|w| !w.starts_with('-')));
                k = args.len();
            } else if matches!(name.as_str(), "wait" | "nonewwindow" | "passthru" | "nonew" | "wa" | "pa" | "nnw") {
            } else {
                k += 1;
            }
            continue;
        }
        if *a == "|" {
            break;
        }
        if file.is_none() {
            file = Some(a);
        } else {
            list.push(a);
        }
    }
    let mut words = vec![file?.trim_matches(['\'', '"']).to_string()];
    for item in list.iter().flat_map(|w| w.split(',')) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if item.contains('$') || item.contains('(') {
            return None;
        }
        words.push(item.trim_matches(['\'', '"']).to_string());
    }
    if words.iter().any(|w| w.contains('$')) {
        return None;
    }
    Some(words.join(" "))
}

/// A PowerShell path word as the analysis names paths: `C:\` is a root,
/// `$env:USERPROFILE` and `$HOME` are home, variables are unknown.
fn ps_path(word: &str) -> Option<String> {
    let w = word.trim_matches(['\'', '"']);
    let lower = w.to_ascii_lowercase();
    for home in ["$env:userprofile", "$env:home", "$home", "~"] {
        if let Some(rest) = lower.strip_prefix(home) {
            let rest = w.get(w.len() - rest.len()..).unwrap_or("");
            return Some(format!("~{}", rest.replace('\\', "/")));
        }
    }
    if lower.starts_with("$env:systemdrive") || lower.starts_with("$env:systemroot") || lower.starts_with("$env:windir")
    {
        return Some("/".to_string());
    }
    if w.contains('$') || w.contains('(') {
        return None;
    }
    let bytes = w.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_alphabetic) && bytes.get(1) == Some(&b':') {
        let rest = w.get(2..).unwrap_or("").replace('\\', "/");
        return Some(if rest.is_empty() { "/".to_string() } else { rest });
    }
    Some(w.replace('\\', "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(lang: Language, text: &str) -> Scan {
        scan(lang, text)
    }

    #[test]
    fn a_language_is_found_by_its_interpreter_in_any_spelling_as_a_scan_of_every_row_finds_it() {
        let scanned = |program: &str| {
            let lower = program.to_ascii_lowercase();
            let name = lower.strip_suffix(".exe").unwrap_or(&lower);
            let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
            LANGUAGES.iter().find(|(n, _)| *n == stem || *n == name).map(|(_, l)| *l)
        };
        let mut names: Vec<String> =
            ["", ".exe", "3", "cargo", "git", "tail", "p", "PowerShell", "PWSH.EXE"].map(String::from).to_vec();
        for (row, _) in LANGUAGES {
            for suffix in ["", "3", "3.12", "-3", ".exe", "3.exe", "x", "3x", "2.7.18"] {
                names.push(format!("{row}{suffix}"));
                names.push(format!("{}{suffix}", row.to_ascii_uppercase()));
            }
            names.push(row[..row.len() - 1].to_string());
            names.push(format!("x{row}"));
        }
        for name in names {
            assert_eq!(language(&name), scanned(&name), "`{name}`");
        }
        assert_eq!(language("python3.12"), Some(Python));
        assert_eq!(language("pwsh.exe"), Some(PowerShell));
    }

    #[test]
    fn python_receivers_follow_import_aliases() {
        let s = code(Python, "import subprocess as sp; sp.run(['rm', '-rf', '/'])");
        assert_eq!(s.spawns, vec![Some("'rm' '-rf' '/'".to_string())]);
        let s = code(Python, "from os import system as s; s('rm -rf /')");
        assert_eq!(s.spawns, vec![Some("rm -rf /".to_string())]);
        let s = code(Python, "__import__('os').system('ls')");
        assert_eq!(s.spawns, vec![Some("ls".to_string())]);
    }

    #[test]
    fn a_command_built_at_run_time_is_unknown() {
        assert_eq!(code(Python, "import os; os.system(cmd)").spawns, vec![None]);
        assert_eq!(code(Python, "import os; os.system('rm ' + p)").spawns, vec![None]);
        assert_eq!(code(Perl, "system \"rm -rf $dir\"").spawns, vec![None]);
    }

    #[test]
    fn powershell_encoded_commands_decode_from_utf16() {
        let text = "Remove-Item -Recurse C:\\";
        let units: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(units);
        assert_eq!(decode_powershell(&b64).as_deref(), Some(text));
        assert_eq!(decode_powershell("!!"), None);
    }

    #[test]
    fn powershell_remove_item_takes_prefixes_and_aliases() {
        assert_eq!(code(PowerShell, "rm -r -fo C:\\").deletes, vec![Some("/".to_string())]);
        assert_eq!(code(PowerShell, "Remove-Item -Path $env:USERPROFILE -Recurse").deletes, vec![Some("~".into())]);
        assert!(code(PowerShell, "Remove-Item C:\\temp\\x.txt").deletes.is_empty());
    }
}
