//! From a parsed script to the programs it runs.
//!
//! [`analyse`] walks the tree in execution order with a shell's state: the
//! working directory (`cd`), variables (`x=/`, `export`, `for x in`),
//! functions, and which files earlier commands downloaded. Each word is
//! expanded as far as it can be known statically; command and process
//! substitutions are analysed where they appear, because they run.
//! Programs that run other programs are unwrapped: `sudo`, `doas`, `env`,
//! `nohup`, `setsid`, `time`, `nice`, `ionice`, `timeout`, `stdbuf`,
//! `command`, `builtin`, `exec`, `chroot`, `busybox`, `flock`, `xargs` and
//! `find -exec` run their operand; `sh -c`, `bash -c`, `su -c`, `watch` and
//! `eval` run a string, which is parsed again when it is known and otherwise
//! remembered as code of unknown origin.
//!
//! Work is bounded: at most [`MAX_INVOCATIONS`] programs, [`MAX_STEPS`]
//! commands visited, [`MAX_CODE_NESTING`] levels of code in strings, and
//! [`MAX_LOOP_VALUES`] values per `for` loop walked one by one (a longer
//! list is walked once, the variable holding any of them) and
//! [`MAX_MAYBE_VALUES`] known values a variable may hold. Past a bound the analysis
//! stops and reports [`ProblemKind::TooComplex`].

use super::ast::*;
use super::decode;
use super::interpreters::Effect;
use super::print;
use super::programs::{Class, Table};
use super::secrets::{self, SecretOutput};
use super::segment::Segment;
use super::text::Text;
use super::wrappers::{self, Runs, Unwrap};
use crate::paths;
use crate::prelude::*;
use alloc::borrow::Cow;
use alloc::rc::Rc;
use core::cell::OnceCell;
use core::cell::RefCell;
use core::ops::Range;

mod branches;
mod environment;
mod foreign;
mod parameters;
#[cfg(test)]
mod path_candidate_tests;

/// Most programs one command may run before it is refused as too complex.
pub const MAX_INVOCATIONS: usize = 512;
/// Most simple commands visited, counting loop bodies once per value.
pub const MAX_STEPS: usize = 2048;
/// Most levels of code inside strings (`bash -c "eval '...'"`).
pub const MAX_CODE_NESTING: usize = 8;
/// Most values of a `for` loop analysed one by one; longer lists are
/// analysed once with an unknown value.
pub const MAX_LOOP_VALUES: usize = 8;
/// Most known values one variable is judged with where it is read (the
/// elements an array may hold, the values arms of an `if` leave, a long
/// loop's values); past it the analysis stops ([`ProblemKind::TooComplex`]).
pub const MAX_MAYBE_VALUES: usize = 64;
/// Most variables compared, over a whole script, where code that may not
/// run ends ([`branches::join`]); past it the analysis stops.
pub const MAX_JOIN_WORK: usize = 100_000;
/// Invocations the analysis makes room for before it starts.
const INITIAL_INVOCATIONS: usize = 4;
/// Most wrappers unwrapped around one program.
pub const MAX_WRAPPERS: usize = 16;

/// Shells, which run `-c` strings, script files or their input.
pub const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash"];
/// Interpreters of other languages: inline code flags and script files.
pub const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("pwsh", &["-c", "-Command"]),
    ("powershell", &["-c", "-Command"]),
    ("osascript", &["-e"]),
];
/// Programs that download.
pub const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lynx"];

/// A word after expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arg {
    /// The value when every part of the word is known.
    pub text: Option<Text>,
    /// The known text before the first unknown part, when [`Arg::text`] is
    /// `None` (else empty: the whole value is known). Read it with [`Arg::prefix`].
    pub partial: Text,
    /// The word as written (canonically printed).
    pub raw: Text,
    /// Invocations of the command substitutions in the word.
    pub subs: Vec<Range<usize>>,
    /// Invocations of the process substitutions in the word.
    pub procs: Vec<Range<usize>>,
    /// The value carries data read from a protected path.
    pub secret: bool,
    /// The value counting what its command substitutions print, when that is
    /// known statically (`"$(echo cm0= | base64 -d)"`); used where the word
    /// is run as code.
    pub static_text: Option<Text>,
    /// What the word's process substitution prints, when the word is one
    /// `<(...)` whose output is known statically.
    pub fed: Option<String>,
    /// Byte ranges of `text` that unquoted expansions produced, where `IFS` splits.
    pub split: Vec<Range<usize>>,
    /// A leading `~` of the value is text, not home (`"~"`, `\~`).
    pub literal_tilde: bool,
}

impl Arg {
    /// A known value that nobody wrote as a word (a synthesized argument).
    pub fn fixed(text: &str) -> Arg {
        Arg::plain(Text::from(text))
    }

    /// A known value that is also the word as written and the code it runs.
    fn plain(text: Text) -> Arg {
        Arg { text: Some(text.clone()), raw: text.clone(), static_text: Some(text), ..Arg::default() }
    }

    pub(crate) fn unknown(raw: &str) -> Arg {
        Arg { text: None, raw: Text::from(raw), ..Arg::default() }
    }

    /// The known value, or `None`.
    pub fn known(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The known text before the first unknown part: the whole value when it is known.
    pub fn prefix(&self) -> &str {
        self.text.as_deref().unwrap_or(&self.partial)
    }

    /// The same word with its value only known when it runs; what was known
    /// of it stays its prefix.
    pub(crate) fn forget_text(mut self) -> Arg {
        if let Some(text) = self.text.take() {
            self.partial = text;
        }
        self
    }

    /// The value as code: the known value, or else the value counting what
    /// its command substitutions print.
    pub fn code(&self) -> Option<&str> {
        self.text.as_deref().or(self.static_text.as_deref())
    }
}

/// A word while its parts are expanded: [`Arg`]'s texts, still growing.
#[derive(Default)]
struct Expanding {
    text: Option<String>,
    partial: String,
    subs: Vec<Range<usize>>,
    procs: Vec<Range<usize>>,
    secret: bool,
    static_text: Option<String>,
    fed: Option<String>,
    split: Vec<Range<usize>>,
    /// Where elements of an array were joined (`${p[@]}`): split into
    /// words even in double quotes.
    elements: Vec<Range<usize>>,
}

impl Expanding {
    /// The known text before the first unknown part.
    fn prefix(&self) -> &str {
        self.text.as_deref().unwrap_or(&self.partial)
    }

    /// From here on the value is only known when it runs.
    fn forget_text(&mut self) {
        if let Some(text) = self.text.take() {
            self.partial = text;
        }
    }

    /// The word, written as `raw`; `fed` keeps what a lone `<(...)` prints.
    fn into_arg(self, raw: Text, literal_tilde: bool, fed: bool) -> Arg {
        Arg {
            text: self.text.map(Text::from),
            partial: Text::from(self.partial),
            raw,
            subs: self.subs,
            procs: self.procs,
            secret: self.secret,
            static_text: self.static_text.map(Text::from),
            fed: if fed { self.fed } else { None },
            split: self.split,
            literal_tilde,
        }
    }
}

/// What a command reads on its standard input, as far as it is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Input {
    /// Nothing the command itself supplies (the caller's input).
    #[default]
    Nothing,
    /// Text known from the command: a here-string, a here-document, or what
    /// an earlier stage of the pipeline prints.
    Text(String),
    /// The file at this normalized path.
    File(String),
    /// Something only known when it runs.
    Unknown,
}

/// A redirection after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redir {
    pub fd: Option<u32>,
    pub op: RedirectOp,
    pub target: Arg,
    /// The target as a normalized path, for file redirections with a known target.
    pub path: Option<String>,
}

/// One program the script runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program and its arguments, after unwrapping.
    pub argv: Vec<Arg>,
    /// The program's name without its directory; empty when unknown or when
    /// the command only redirects.
    pub program: Text,
    /// What the analyser knows of [`Invocation::program`] (looked up once).
    pub class: Class,
    pub redirects: Vec<Redir>,
    /// The simple command it came from, printed canonically when read;
    /// shared by the invocations unwrapped from it.
    pub segment: Segment,
    /// The wrappers it was unwrapped from, outermost first (`sudo`, `bash -c`).
    pub via: Vec<String>,
    /// Working directory, normalized, when known.
    pub cwd: Option<Rc<str>>,
    /// Every pipeline it is a stage of: (pipeline, stage), outermost first.
    pub pipes: Vec<(usize, usize)>,
    pub background: bool,
    /// The function whose body it is in.
    pub function: Option<String>,
    /// Invocations whose output this one runs as code (`bash -c "$(...)"`,
    /// `eval "$(...)"`, `bash <(...)`, `source <(...)`).
    pub code_from: Vec<Range<usize>>,
    /// It runs its standard input as code (`curl ... | sh`).
    pub runs_stdin: bool,
    /// It runs code only known when the command runs: a shell reading input
    /// that is not fixed text (`sh <<< "$x"`, `cat f | sh`), or a code
    /// string that is not (`bash -c "$x"`).
    pub code_unknown: bool,
    /// Files it runs as code (`./x.sh`, `bash x.sh`, `source x`), normalized.
    pub runs_files: Vec<String>,
    /// Invocations feeding its standard input through redirections.
    pub stdin_from: Vec<Range<usize>>,
    /// Normalized paths it reads: file operands and `<` targets.
    pub reads: Vec<String>,
    /// Normalized paths it writes: `>` targets and operands of known writers.
    pub writes: Vec<String>,
    /// It handles data read from a protected path (through a variable or a substitution).
    pub secret_input: bool,
    /// What it prints that is secret (`env`, `gh auth token`, inline code reading the environment).
    pub secret_output: Option<SecretOutput>,
    /// What its inline code (of another language) does, judged by the exec gate.
    pub effects: Vec<Effect>,
    /// It runs on another machine or in a container (`ssh host CMD`,
    /// `docker exec c CMD`), where the workspace does not bound what it writes.
    pub elsewhere: bool,
}

/// Why part of a script could not be analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// Code in a string is not valid shell.
    Unparsable,
    /// A bound of the analysis was reached.
    TooComplex,
}

/// Part of a script that could not be analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub segment: String,
    pub detail: String,
}

/// What a script runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub invocations: Vec<Invocation>,
    /// Files written by downloaders: (normalized path, invocation).
    pub downloads: Vec<(String, usize)>,
    /// Folders a downloaded archive was extracted into: (normalized path, invocation).
    pub download_dirs: Vec<(String, usize)>,
    /// Functions defined, by name.
    pub functions: Vec<String>,
    pub problems: Vec<Problem>,
}

impl Analysis {
    /// The invocations in `range`.
    pub fn within(&self, range: &Range<usize>) -> &[Invocation] {
        self.invocations.get(range.clone()).unwrap_or(&[])
    }

    /// Whether `earlier` runs upstream of `later` in a pipeline they share.
    pub fn upstream(&self, earlier: &Invocation, later: &Invocation) -> bool {
        earlier.pipes.iter().any(|(p, s)| later.pipes.iter().any(|(q, t)| p == q && s < t))
    }

    /// Whether the normalized `path` holds downloaded content before
    /// invocation `before` runs: a file a downloader wrote, one copied or
    /// decompressed from it, or a file in a folder a downloaded archive was
    /// extracted into.
    pub fn downloaded(&self, path: &str, before: usize) -> bool {
        // What is read from bash's network sockets comes from the network.
        path.starts_with("/dev/tcp/")
            || path.starts_with("/dev/udp/")
            || self.downloads.iter().any(|(d, at)| *at < before && d == path)
            || self.download_dirs.iter().any(|(d, at)| {
                *at < before
                    && path
                        .strip_prefix(d.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || d.ends_with('/'))
            })
    }

    /// Whether the invocation at `index` puts out downloaded content: a
    /// downloader, or a program reading a downloaded file (`cat x.sh`).
    pub fn yields_download(&self, index: usize) -> bool {
        self.invocations
            .get(index)
            .is_some_and(|inv| inv.class.is(Table::Downloader) || inv.reads.iter().any(|p| self.downloaded(p, index)))
    }

    /// Whether `inv` reads downloaded content from a stage upstream of it in a pipeline.
    pub fn fed_download(&self, inv: &Invocation) -> bool {
        !inv.pipes.is_empty()
            && self.invocations.iter().enumerate().any(|(i, e)| self.upstream(e, inv) && self.yields_download(i))
    }
}

/// What the analysis needs to know about its surroundings.
pub struct Context<'a> {
    /// Working directory the script starts in.
    pub cwd: Option<&'a str>,
    /// The home directory, when configured, normalized.
    pub home: &'a paths::Home,
    /// Whether a normalized path is protected (its contents are secret).
    pub secret: &'a dyn Fn(&str) -> bool,
}

/// Analyses a parsed script.
pub fn analyse(script: &Script, context: &Context<'_>) -> Analysis {
    let mut walker = Walker {
        context,
        // Most scripts run a few programs: room for them from the start, not grown and copied.
        out: Analysis { invocations: Vec::with_capacity(INITIAL_INVOCATIONS), ..Analysis::default() },
        steps: 0,
        pipelines: 0,
        stopped: false,
        code_depth: 0,
        segment: Segment::default(),
        files: BTreeMap::new(),
        files_full: false,
        // What the whole script prints goes nowhere anyone reads.
        printed_wanted: false,
        cwd_seen: RefCell::new(None),
        nocase: false,
        join_work: 0,
    };
    let mut state = State::new(context, context.home);
    walker.script(script, &mut state, &Frame::default());
    walker.out
}

#[derive(Clone, PartialEq, Eq)]
struct Var {
    value: Option<String>,
    secret: bool,
}

#[derive(Clone)]
/// Cloned for every subshell, pipeline stage and program, so the maps are
/// shared and copied only when one of the clones changes them.
struct State {
    cwd: Option<Rc<str>>,
    /// Variables assigned in the script; those a shell starts with are in [`State::var`].
    vars: Rc<BTreeMap<String, Var>>,
    /// `PWD` when the script starts: the working directory it starts in.
    pwd: Option<Rc<str>>,
    /// Aliases defined earlier in the script, by name, with their text.
    aliases: Rc<BTreeMap<String, String>>,
    /// What variables of unknown value may hold ([`Maybe`]); `None` until
    /// the script gives one such a value.
    maybe: Option<Rc<Maybe>>,
}

/// What variables of unknown value may hold, judged where they are read.
/// Kept when a variable is assigned again: a known value then decides
/// alone, and an unknown one may still be it (the stricter reading).
#[derive(Clone, Default)]
struct Maybe {
    /// The default word of what a variable was assigned (`f=${x:-.env}`).
    values: BTreeMap<String, String>,
    /// The known elements of an array the script assigned (`p=(/etc/shadow)`,
    /// `declare -a p=(…)`), read as `${p[@]}`, `${p[i]}` or `$p`.
    arrays: BTreeMap<String, Vec<String>>,
    /// Arrays whose elements are all known, by index (`p=(a b)`, `p[3]=c`);
    /// `None` for an element only known at run time ([`parameters`]).
    indexed: BTreeMap<String, Vec<Option<String>>>,
    /// A variable was given more than [`MAX_MAYBE_VALUES`] known values.
    overflow: bool,
    /// Names whose values in [`Maybe::arrays`] are alternatives of one
    /// value (left by arms that may not run, a long loop, `${f:=word}`).
    alternatives: BTreeSet<String>,
}

impl State {
    /// Whether the script assigned an array some of whose elements it knows.
    #[inline]
    fn has_arrays(&self) -> bool {
        self.maybe.as_ref().is_some_and(|m| !m.arrays.is_empty())
    }

    fn new(context: &Context<'_>, home: &paths::Home) -> State {
        let cwd: Option<Rc<str>> = context.cwd.map(|c| Rc::from(home.normalize(c, None)));
        State { pwd: cwd.clone(), cwd, vars: Rc::default(), aliases: Rc::default(), maybe: None }
    }

    /// A variable's value (`None` when it is only known at run time) and
    /// whether it carries a secret: as the script assigned it, or as a shell
    /// starts with it (`HOME` is `~`, `IFS` the default, `PWD` where it starts).
    fn var(&self, name: &str) -> Option<(Option<&str>, bool)> {
        if let Some(v) = self.vars.get(name) {
            return Some((v.value.as_deref(), v.secret));
        }
        match name {
            "HOME" => Some((Some("~"), false)),
            "IFS" => Some((Some(super::fields::DEFAULT_IFS), false)),
            "PWD" => self.pwd.as_deref().map(|p| (Some(p), false)),
            _ => None,
        }
    }
}

/// Where a command sits: the pipelines around it, whether it runs in the
/// background, the function it is in and the wrappers it came through.
#[derive(Clone, Default)]
struct Frame {
    pipes: Vec<(usize, usize)>,
    background: bool,
    function: Option<String>,
    via: Vec<String>,
    /// What the command reads on its standard input unless it redirects it.
    stdin: Input,
    /// How many of `pipes` were there when the shell running it started:
    /// stages of pipelines inside it run in subshells of their own.
    pipes_base: usize,
    /// It runs on another machine or in a container ([`Invocation::elsewhere`]).
    elsewhere: bool,
}

struct Walker<'c, 'a> {
    context: &'c Context<'a>,
    out: Analysis,
    steps: usize,
    pipelines: usize,
    stopped: bool,
    code_depth: usize,
    /// The simple command being analysed.
    segment: Segment,
    /// Files this script wrote, by normalized path, with what they hold
    /// when that is known (`printf 'rm -rf /' > x.sh`), so a shell that
    /// later runs one is judged by that text. Files outlive subshells and
    /// pipeline stages, so they are kept here rather than in [`State`].
    files: BTreeMap<String, Held>,
    /// A file was written past [`MAX_WRITTEN_FILES`]: a script run from a
    /// file not remembered may be one of them, so its code is unknown.
    files_full: bool,
    /// Whether what the command being analysed prints is used (piped on, or
    /// substituted); when not, it is worked out only for a file it writes.
    printed_wanted: bool,
    /// The last working directory paths were resolved in, with whether it
    /// is in normal form (and its segments), found once for every path
    /// resolved there rather than for each.
    cwd_seen: RefCell<Option<(Rc<str>, Option<usize>)>>,
    /// Variables compared by [`Walker::join`] so far.
    join_work: usize,
    /// The script made pattern matching case-blind (`shopt -s nocasematch`):
    /// operators that match patterns are then only known when they run.
    nocase: bool,
}

fn basename(path: &str) -> &str {
    // Found by bytes: `/` is never part of another character in UTF-8.
    match path.bytes().rposition(|b| b == b'/') {
        Some(i) => path.get(i + 1..).unwrap_or(path),
        None => path,
    }
}

/// The inline-code flags of the interpreter of [`INTERPRETERS`] that
/// `program` names, with or without a version (`python3.12`).
pub(crate) fn interpreter(program: &str) -> Option<&'static [&'static str]> {
    // Dropping a version keeps the first letter: a row starting with another is not compared.
    let first = program.as_bytes().first()?;
    let stem = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let versioned = stem.len() != program.len();
    INTERPRETERS
        .iter()
        .find(|(name, _)| name.as_bytes().first() == Some(first) && (*name == stem || (versioned && *name == program)))
        .map(|(_, flags)| *flags)
}

/// Builtins whose meaning the analysis follows by name (the state a shell
/// keeps, code they run, `find -exec`): [`Walker::dispatch`] compares a
/// program's name with these only when its [`Class`] is [`Table::Builtin`],
/// so a name compared there must be listed here.
pub(crate) const ANALYSED_BUILTINS: &[&str] = &[
    "eval",
    "alias",
    "source",
    ".",
    "cd",
    "pushd",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unalias",
    "unset",
    "read",
    "mapfile",
    "readarray",
    "find",
    "printf",
    "shopt",
];

/// Variables whose value names code run before the program's own: the
/// loader preloads `LD_PRELOAD` and `LD_AUDIT` libraries into any program it
/// starts, bash first runs the script `BASH_ENV` names, and sh, dash and ksh
/// the one `ENV` names.
pub(crate) const LOADER_VARS: &[&str] = &["LD_PRELOAD", "LD_AUDIT", "BASH_ENV", "ENV"];

/// What a command's own assignments (`X=1 cmd`, `env X=1 cmd`) put in its
/// environment that the analysis follows.
#[derive(Default)]
struct Env {
    /// One of them carries a secret.
    secret: bool,
    /// The values given to [`LOADER_VARS`] and to variables that hold code
    /// ([`environment::COMMAND_VARS`], [`environment::PROMPT_VARS`]), by name.
    loads: Vec<(&'static str, Arg)>,
    /// The `IFS` the command sets for itself (`IFS=, read a b`), `Some(None)`
    /// when only known at run time.
    ifs: Option<Option<String>>,
}

impl Env {
    /// A `NAME=VALUE` word given to `env` or `sudo`.
    fn assign(&mut self, word: &Arg) {
        let Some((name, _)) = word.prefix().split_once('=') else { return };
        // The value as code: known, or what its substitutions print.
        match word.code().and_then(|c| c.get(name.len() + 1..)) {
            Some(value) => {
                let mut v = Arg::fixed(value);
                v.subs.clone_from(&word.subs);
                v.procs.clone_from(&word.procs);
                self.add(name, &v);
            }
            None => self.add(name, &Arg { text: None, static_text: None, ..word.clone() }),
        }
    }

    fn add(&mut self, name: &str, value: &Arg) {
        if name == "IFS" {
            self.ifs = Some(value.known().map(String::from));
        }
        let tables = [LOADER_VARS, environment::COMMAND_VARS, environment::PROMPT_VARS];
        if let Some(var) = tables.iter().flat_map(|t| t.iter()).find(|v| **v == name) {
            self.loads.push((var, value.clone()));
        }
    }
}

/// Programs whose written operands are not also read.
pub(crate) const WRITES_WITHOUT_READING: &[&str] = &[
    "cp", "install", "ln", "rsync", "tee", "dd", "truncate", "shred", "rm", "rmdir", "unlink", "chmod", "chown",
    "chgrp",
];

/// Programs whose operands are not files they read.
pub(crate) const NOT_READERS: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "test",
    "[",
    "[[",
    "basename",
    "dirname",
    "which",
    "type",
    "command",
    "export",
    "declare",
    "local",
    "readonly",
    "typeset",
    "unset",
    "alias",
    "cd",
    "pushd",
    "mkdir",
    "touch",
    "sleep",
    "kill",
    "pkill",
    "ssh-add",
    "read",
    "mapfile",
    "readarray",
];

/// Options of `read` that take a value; `-a` names the array it fills.
const READ_VALUES: &str = "adinNptu";

/// The variables `read`, `mapfile` or `readarray` assign: their operands
/// after the options (`read -r a b`), `read -a NAME`, and `MAPFILE` when
/// `mapfile` names none. A name only known at run time is left out.
fn assigned_names<'a>(program: &str, argv: &'a [Arg]) -> Vec<&'a str> {
    let values = if program == "read" { READ_VALUES } else { super::embedded::MAPFILE_VALUES };
    let mut names = Vec::new();
    let mut i = 1;
    while let Some(t) = argv.get(i).and_then(Arg::known) {
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t.len() < 2 {
            break;
        }
        i += 1;
        for (k, c) in t.char_indices().skip(1) {
            if values.contains(c) {
                let value = super::embedded::cluster_value(argv, t, k, c, &mut i);
                if c == 'a'
                    && program == "read"
                    && let Some(v) = value
                {
                    names.push(v);
                }
                break;
            }
        }
    }
    names.extend(argv.iter().skip(i).filter_map(Arg::known).filter(|t| super::is_name(t)));
    if names.is_empty() {
        names.push(if program == "read" { "REPLY" } else { "MAPFILE" });
    }
    names
}

/// What `read` gives its names from a known input (`read a b <<< ".env x"`,
/// `IFS=, read -r -a p <<< …`): the first line split at the characters of
/// `ifs` as bash splits it, one field a name and the rest of the line the
/// last one's, or every field an element of the `-a` array. `None` for
/// other options and for a backslash `read` without `-r` would take as an
/// escape.
#[inline(never)]
fn read_fields(argv: &[Arg], input: &Input, ifs: &str) -> Option<Read> {
    let Input::Text(text) = input else { return None };
    let (mut raw, mut array, mut names) = (false, None, Vec::new());
    let mut words = argv.iter().skip(1);
    while let Some(a) = words.next() {
        match a.known()? {
            "-r" => raw = true,
            "-a" | "-ra" | "-ar" => {
                raw |= a.known() != Some("-a");
                array = Some(words.next()?.known()?.to_string());
            }
            "--" => {
                names.extend(words.map(|w| w.known().map(String::from)).collect::<Option<Vec<_>>>()?);
                break;
            }
            t if t.starts_with('-') => return None,
            t => {
                names.push(t.to_string());
                names.extend(words.map(|w| w.known().map(String::from)).collect::<Option<Vec<_>>>()?);
                break;
            }
        }
    }
    let line = text.split('\n').next().unwrap_or_default();
    if !raw && line.contains('\\') {
        return None;
    }
    if let Some(name) = array {
        return Some(Read::Array(name, read_split(line, ifs, usize::MAX)));
    }
    if names.is_empty() {
        names.push("REPLY".to_string());
    }
    let mut values = read_split(line, ifs, names.len());
    values.resize(names.len(), String::new());
    Some(Read::Names(names.into_iter().zip(values).collect()))
}

/// A line split as `read` splits it at the characters of `ifs`: runs of
/// its blanks separate fields, each other character of it one field from
/// the next, and the `last`-th field is the rest of the line, without the
/// separators that end it.
fn read_split(line: &str, ifs: &str, last: usize) -> Vec<String> {
    let blank = |c: char| matches!(c, ' ' | '\t' | '\n') && ifs.contains(c);
    let other = |c: char| !matches!(c, ' ' | '\t' | '\n') && ifs.contains(c);
    let mut fields = Vec::new();
    let mut rest = line.trim_start_matches(blank);
    while !rest.is_empty() {
        if fields.len() + 1 == last {
            let mut tail = rest.trim_end_matches(blank);
            // One separator that ends the line goes, unless it ends an empty field.
            if let Some(t) = tail.strip_suffix(other).filter(|t| !t.ends_with(other)) {
                tail = t.trim_end_matches(blank);
            }
            fields.push(tail.to_string());
            break;
        }
        let end = rest.find(|c: char| blank(c) || other(c)).unwrap_or(rest.len());
        fields.push(rest.get(..end).unwrap_or_default().to_string());
        rest = rest.get(end..).unwrap_or_default().trim_start_matches(blank);
        if let Some(r) = rest.strip_prefix(other) {
            rest = r.trim_start_matches(blank);
        }
    }
    fields
}

/// What [`read_fields`] assigns.
enum Read {
    /// Each name with its value.
    Names(Vec<(String, String)>),
    /// The `-a` array with its elements.
    Array(String, Vec<String>),
}

impl<'c, 'a> Walker<'c, 'a> {
    /// The word as [`with_defaults`] makes it, and its expansion, each
    /// variable of [`State::maybe`] it reads taken with that value.
    fn defaulted(&mut self, word: &Word, state: &mut State, frame: &Frame) -> Option<(Word, Arg)> {
        let (alt, maybe) = with_defaults(word, state)?;
        if maybe.is_empty() {
            let arg = self.word(&alt, state, frame);
            return Some((alt, arg));
        }
        let mut taken = state.clone();
        for name in maybe {
            let value = state.maybe.as_ref().and_then(|m| m.values.get(&name)).cloned();
            Rc::make_mut(&mut taken.vars).insert(name, Var { value, secret: false });
        }
        let arg = self.word(&alt, &mut taken, frame);
        Some((alt, arg))
    }

    /// The word with each element an array it reads may hold, as more
    /// arguments ([`with_elements`]). Out of line: few scripts assign arrays.
    #[inline(never)]
    fn push_elements(&mut self, args: &mut Vec<Arg>, w: &Word, state: &mut State, frame: &Frame, ifs: Option<&str>) {
        for alt in with_elements(w, state) {
            let arg = self.word(&alt, state, frame);
            push_fields(args, arg, ifs, &alt);
        }
        // `${f/x/}` with `f` only known at run time but holding one of known
        // values: the word with each of them.
        if let Some((name, values)) = operated_alternatives(&w.0, state).filter(|_| !runs_commands(&w.0)) {
            for value in values {
                let mut taken = state.clone();
                Rc::make_mut(&mut taken.vars).insert(name.clone(), Var { value: Some(value), secret: false });
                parameters::forget_indexed(&mut taken, &name);
                let arg = self.word(w, &mut taken, frame);
                push_fields(args, arg, ifs, w);
            }
        }
    }

    /// The word's text with the first element an array it reads may hold.
    #[inline(never)]
    fn first_element(&mut self, w: &Word, state: &mut State, frame: &Frame) -> Option<String> {
        let alt = with_elements(w, state).into_iter().next()?;
        self.word(&alt, state, frame).text.map(|t| String::from(&*t))
    }

    fn stop(&mut self, detail: &str) {
        if !self.stopped {
            self.stopped = true;
            self.out.problems.push(Problem {
                kind: ProblemKind::TooComplex,
                segment: self.segment.to_string(),
                detail: detail.to_string(),
            });
        }
    }

    fn step(&mut self) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.stop(&format!("it has more than {MAX_STEPS} commands to analyse"));
        }
        !self.stopped
    }

    /// Analyses a list; returns what it prints when that is known statically.
    fn script(&mut self, script: &Script, state: &mut State, frame: &Frame) -> Option<String> {
        let mut printed = Some(String::new());
        for item in &script.0 {
            if self.stopped {
                return None;
            }
            // Copied only when the item sends a command to the background.
            let f = if item.background && !frame.background {
                Cow::Owned(Frame { background: true, ..frame.clone() })
            } else {
                Cow::Borrowed(frame)
            };
            let out = self.pipeline(&item.list.first, state, &f);
            printed = concat(printed, out);
            if state.maybe.as_ref().is_some_and(|m| m.overflow) {
                self.stop(&format!("a variable may hold more than {MAX_MAYBE_VALUES} known values"));
            }
            if item.list.rest.is_empty() {
                continue;
            }
            // `a && b || c`: each later pipeline may not run, so each one starts, and the
            // list ends, after any of the ones before it.
            for (_, p) in &item.list.rest {
                let before = state.clone();
                let out = self.pipeline(p, state, &f);
                printed = concat(printed, out);
                if let Some(joined) = self.join(vec![before, state.clone()], true) {
                    *state = joined;
                }
            }
            if state.maybe.as_ref().is_some_and(|m| m.overflow) {
                self.stop(&format!("a variable may hold more than {MAX_MAYBE_VALUES} known values"));
            }
        }
        printed
    }

    fn pipeline(&mut self, pipeline: &Pipeline, state: &mut State, frame: &Frame) -> Option<String> {
        if pipeline.commands.len() == 1 {
            return pipeline.commands.first().and_then(|c| self.command(c, state, frame));
        }
        let id = self.pipelines;
        self.pipelines += 1;
        let mut last: Option<String> = None;
        let wanted = self.printed_wanted;
        let stages = pipeline.commands.len();
        for (stage, c) in pipeline.commands.iter().enumerate() {
            // Each stage but the last prints into the next one.
            self.printed_wanted = wanted || stage + 1 < stages;
            let mut f = frame.clone();
            f.pipes.push((id, stage));
            if stage > 0 {
                // Each stage reads what the one before it prints.
                f.stdin = last.take().map_or(Input::Unknown, Input::Text);
            }
            // Each stage runs in a subshell: its `cd` and variables stay there.
            let mut sub = state.clone();
            last = self.command(c, &mut sub, &f);
        }
        self.printed_wanted = wanted;
        last
    }

    /// The frame a compound command's body runs in: its input redirected.
    fn compound_frame(&self, redirects: &[Redirect], frame: &Frame, redirs: &[Redir]) -> Frame {
        let mut f = frame.clone();
        if !redirects.is_empty() {
            f.stdin = input_of(redirs, &frame.stdin);
        }
        f
    }

    fn command(&mut self, command: &Command, state: &mut State, frame: &Frame) -> Option<String> {
        if !self.step() {
            return None;
        }
        match command {
            Command::Simple(s) => self.simple(s, state, frame),
            Command::Subshell(body, redirects) => {
                let mut sub = state.clone();
                let redirs = self.compound_redirects(redirects, state, frame);
                let f = self.compound_frame(redirects, frame, &redirs);
                let out = self.script(body, &mut sub, &f);
                if prints_elsewhere(&redirs) { None } else { out }
            }
            Command::Group(body, redirects) => {
                let redirs = self.compound_redirects(redirects, state, frame);
                let f = self.compound_frame(redirects, frame, &redirs);
                let out = self.script(body, state, &f);
                if prints_elsewhere(&redirs) { None } else { out }
            }
            Command::If { branches, otherwise, redirects } => {
                let redirs = self.compound_redirects(redirects, state, frame);
                let f = self.compound_frame(redirects, frame, &redirs);
                // Each arm starts where the conditions before it left the state.
                let mut outcomes = Vec::with_capacity(branches.len() + 1);
                for (condition, body) in branches {
                    self.script(condition, state, &f);
                    let mut taken = state.clone();
                    self.script(body, &mut taken, &f);
                    outcomes.push(taken);
                }
                match otherwise {
                    Some(body) => {
                        let mut taken = state.clone();
                        self.script(body, &mut taken, &f);
                        outcomes.push(taken);
                    }
                    None => outcomes.push(state.clone()),
                }
                if let Some(joined) = self.join(outcomes, true) {
                    *state = joined;
                }
                None
            }
            Command::Loop { condition, body, redirects, .. } => {
                let redirs = self.compound_redirects(redirects, state, frame);
                let f = self.compound_frame(redirects, frame, &redirs);
                // The body may not run at all, or run again with what it left: two rounds.
                for _ in 0..2 {
                    self.script(condition, state, &f);
                    let before = state.clone();
                    self.script(body, state, &f);
                    if let Some(joined) = self.join(vec![before, state.clone()], true) {
                        *state = joined;
                    }
                }
                None
            }
            Command::For { name, words, body, redirects } => {
                self.compound_redirects(redirects, state, frame);
                let values: Vec<Arg> = match words {
                    Some(words) => {
                        let ifs = ifs_of(state);
                        let mut values = Vec::new();
                        for w in words {
                            let arg = self.word(w, state, frame);
                            values.extend(super::fields::fields(arg, ifs.as_deref(), has_literal(w)));
                        }
                        values
                    }
                    None => Vec::new(),
                };
                let known: Option<Vec<&str>> = values.iter().map(Arg::known).collect();
                match known {
                    Some(list) if !list.is_empty() && list.len() <= MAX_LOOP_VALUES => {
                        for value in list {
                            Rc::make_mut(&mut state.vars)
                                .insert(name.clone(), Var { value: Some(value.to_string()), secret: false });
                            self.script(body, state, frame);
                        }
                    }
                    _ => {
                        let secret = values.iter().any(|v| v.secret);
                        // `for f in "${p[@]}"` with `p` an array of known elements:
                        // the body is judged with each of them too.
                        let mut elements = Vec::new();
                        if state.has_arrays() {
                            let alternatives: Vec<Word> =
                                words.iter().flatten().flat_map(|w| with_elements(w, state)).collect();
                            for alt in alternatives {
                                let value = self.word(&alt, state, frame).known().map(String::from);
                                if let Some(value) = value.filter(|v| !elements.contains(v)) {
                                    elements.push(value);
                                }
                            }
                        }
                        // A longer list of known values: the body once, the variable holding any of them.
                        let many = match known {
                            Some(list) if list.len() > MAX_LOOP_VALUES => list.iter().map(|v| v.to_string()).collect(),
                            _ => Vec::new(),
                        };
                        for value in elements.iter().take(MAX_LOOP_VALUES) {
                            let value = Some(value.clone());
                            Rc::make_mut(&mut state.vars).insert(name.clone(), Var { value, secret });
                            self.script(body, state, frame);
                        }
                        Rc::make_mut(&mut state.vars).insert(name.clone(), Var { value: None, secret });
                        elements.extend(many);
                        branches::replaced(state, name);
                        branches::alternatives(state, name.clone(), elements);
                        self.script(body, state, frame);
                    }
                }
                None
            }
            Command::ForArith { header, body, redirects } => {
                self.compound_redirects(redirects, state, frame);
                self.arith(header, state, frame);
                self.script(body, state, frame);
                None
            }
            Command::Case { word, arms, redirects } => {
                self.compound_redirects(redirects, state, frame);
                self.word(word, state, frame);
                let mut outcomes = Vec::with_capacity(arms.len() + 1);
                let mut every_word = false;
                for (patterns, body) in arms {
                    for p in patterns {
                        self.word(p, state, frame);
                        every_word |= p.bare() == Some("*");
                    }
                    let mut taken = state.clone();
                    self.script(body, &mut taken, frame);
                    outcomes.push(taken);
                }
                // No arm may match.
                if !every_word {
                    outcomes.push(state.clone());
                }
                if let Some(joined) = self.join(outcomes, true) {
                    *state = joined;
                }
                None
            }
            Command::Arith(raw, redirects) => {
                self.compound_redirects(redirects, state, frame);
                self.arith(raw, state, frame);
                Some(String::new())
            }
            Command::Function { name, body } => {
                self.out.functions.push(name.clone());
                // The body is analysed where it is defined, as if it ran there:
                // what a function may do is decided before anyone calls it.
                let mut f = frame.clone();
                f.function = Some(name.clone());
                let mut sub = state.clone();
                self.command(body, &mut sub, &f);
                // What the function assigns (`IFS` among them) it assigns wherever it is called:
                // from here on a variable may hold what it held or what the function left.
                if let Some(joined) = self.join(vec![sub, state.clone()], false) {
                    *state = joined;
                }
                Some(String::new())
            }
        }
    }

    /// Redirections of a compound command apply to everything in it; they
    /// are recorded on an invocation of their own.
    fn compound_redirects(&mut self, redirects: &[Redirect], state: &mut State, frame: &Frame) -> Vec<Redir> {
        if redirects.is_empty() {
            return Vec::new();
        }
        let (redirs, stdin_from) = self.redirects(redirects, state, frame);
        let segment: Vec<String> = redirs.iter().map(|r| format!("{} {}", r.op.as_str(), r.target.raw)).collect();
        let mut inv = self.invocation(Vec::new(), redirs.clone(), state, frame, &Segment::text(&segment.join(" ")));
        inv.stdin_from = stdin_from;
        self.push(inv);
        redirs
    }

    fn arith(&mut self, raw: &str, state: &mut State, frame: &Frame) -> Vec<Range<usize>> {
        match super::parse_expansions(raw, 0) {
            Ok(parts) => {
                let arg = self.parts(&parts, state, frame);
                arg.subs
            }
            Err(e) => {
                self.out.problems.push(Problem {
                    kind: ProblemKind::Unparsable,
                    segment: format!("(({raw}))"),
                    detail: e.to_string(),
                });
                Vec::new()
            }
        }
    }

    fn word(&mut self, word: &Word, state: &mut State, frame: &Frame) -> Arg {
        // Plain text, the commonest word: what [`Walker::parts`] makes of it, built directly.
        if let [Part::Lit { text, quoted: false }] = word.0.as_slice() {
            let text = text.clone();
            if text.len() <= decode::MAX_DECODED_BYTES {
                return Arg::plain(text);
            }
            return Arg { text: Some(text.clone()), raw: text, ..Arg::default() };
        }
        let expanded = self.parts(&word.0, state, frame);
        let fed = matches!(word.0.as_slice(), [Part::ProcIn(_)]);
        expanded.into_arg(Text::from(print::word(word)), leading_text(&word.0), fed)
    }

    /// Expands parts.
    fn parts(&mut self, parts: &[Part], state: &mut State, frame: &Frame) -> Expanding {
        let mut arg = Expanding { text: Some(String::new()), static_text: Some(String::new()), ..Expanding::default() };
        let append = |arg: &mut Expanding, value: Option<&str>| match (&mut arg.text, value) {
            (Some(text), Some(v)) => text.push_str(v),
            (text @ Some(_), None) => arg.partial = text.take().unwrap_or_default(),
            (None, _) => {}
        };
        let append_static = |arg: &mut Expanding, value: Option<&str>| {
            arg.static_text = match (arg.static_text.take(), value) {
                (Some(mut t), Some(v)) if t.len() + v.len() <= decode::MAX_DECODED_BYTES => {
                    t.push_str(v);
                    Some(t)
                }
                _ => None,
            };
        };
        for part in parts {
            match part {
                Part::Lit { text, .. } => {
                    append(&mut arg, Some(text));
                    append_static(&mut arg, Some(text));
                }
                Part::Double(inner) => {
                    let sub = self.parts(inner, state, frame);
                    // `"${p[@]}"`: each element stays a word of its own.
                    if let (Some(at), Some(_)) = (arg.text.as_ref().map(String::len), &sub.text) {
                        for r in &sub.elements {
                            arg.split.push(r.start + at..r.end + at);
                            arg.elements.push(r.start + at..r.end + at);
                        }
                    }
                    append(&mut arg, Some(sub.prefix()));
                    append_static(&mut arg, sub.static_text.as_deref());
                    if sub.text.is_none() {
                        arg.forget_text();
                    }
                    arg.subs.extend(sub.subs);
                    arg.procs.extend(sub.procs);
                    arg.secret |= sub.secret;
                }
                Part::Param(param) => {
                    let op = if param.rest.is_empty() { None } else { self.operator(param, state, frame, &mut arg) };
                    let var = state.var(&param.name);
                    arg.secret |= var.is_some_and(|v| v.1);
                    let value = var.and_then(|v| v.0.map(String::from));
                    // `${HOME:?}`, `${f/x/}`, `${p[1]}`, `${!n}`: worked out on a known value.
                    let (known, elements) = if param.rest.is_empty() {
                        (value, false)
                    } else {
                        match parameters::expand(param, value, op.as_deref(), state, !self.nocase, &mut arg.secret) {
                            Some(e) => (Some(e.text), e.elements),
                            None => (None, false),
                        }
                    };
                    let at = arg.text.as_ref().map_or(0, String::len);
                    append(&mut arg, known.as_deref());
                    append_static(&mut arg, known.as_deref());
                    arg.split.push(at..arg.text.as_ref().map_or(at, String::len));
                    if elements {
                        arg.elements.push(at..arg.text.as_ref().map_or(at, String::len));
                    }
                }
                Part::Sub(script) => {
                    let (range, printed) = self.nested(script, state, frame);
                    // A command substitution drops the trailing newlines of what it prints.
                    let printed = printed.map(|p| p.trim_end_matches('\n').to_string());
                    // What it prints when that is known: `$(echo .env)`, `$(printf %s .env)`, `$(cat <<< .env)`.
                    let value = echo_value(script, state).or(printed);
                    arg.secret |= self.any_secret(&range);
                    let at = arg.text.as_ref().map_or(0, String::len);
                    append(&mut arg, value.as_deref());
                    arg.split.push(at..arg.text.as_ref().map_or(at, String::len));
                    append_static(&mut arg, value.as_deref());
                    arg.subs.push(range);
                }
                Part::ProcIn(script) | Part::ProcOut(script) => {
                    let (range, printed) = self.nested(script, state, frame);
                    append(&mut arg, None);
                    append_static(&mut arg, None);
                    if matches!(part, Part::ProcIn(_)) {
                        arg.fed = printed;
                    }
                    arg.procs.push(range);
                }
                Part::Arith(raw) => {
                    let subs = self.arith(raw, state, frame);
                    append(&mut arg, None);
                    append_static(&mut arg, None);
                    arg.subs.extend(subs);
                }
            }
        }
        arg
    }

    /// [`branches::join`], its work counted: past [`MAX_JOIN_WORK`]
    /// variables compared the analysis stops.
    #[inline(never)]
    fn join(&mut self, outcomes: Vec<State>, replaceable: bool) -> Option<State> {
        self.join_work +=
            outcomes.iter().map(|o| o.vars.len() + o.maybe.as_ref().map_or(0, |m| m.arrays.len())).sum::<usize>();
        if self.join_work > MAX_JOIN_WORK {
            self.stop(&format!("it assigns too many variables in code that may not run ({MAX_JOIN_WORK} compared)"));
            return None;
        }
        branches::join(outcomes, replaceable)
    }

    /// What follows a parameter's name (`:-word`, `/x/y`, `[1]`), expanded
    /// part by part: quoted characters and those an expansion produced are
    /// escaped by a backslash (but for the pattern characters of an
    /// unquoted expansion), as [`super::operators`] reads them. `None` when
    /// part of it is only known at run time. Out of line: few words have one.
    #[inline(never)]
    fn operator(&mut self, param: &Param, state: &mut State, frame: &Frame, arg: &mut Expanding) -> Option<String> {
        let mut op = Some(String::new());
        let escape = |out: &mut String, text: &str, glob: bool| {
            for c in text.chars() {
                if !(c.is_ascii_alphanumeric() || (glob && matches!(c, '*' | '?' | '[' | ']'))) {
                    out.push('\\');
                }
                out.push(c);
            }
        };
        for part in &param.rest {
            let e = self.parts(core::slice::from_ref(part), state, frame);
            arg.subs.extend(e.subs);
            arg.procs.extend(e.procs);
            arg.secret |= e.secret;
            match (&mut op, e.text) {
                (Some(out), Some(text)) => match part {
                    Part::Lit { quoted: false, .. } => out.push_str(&text),
                    Part::Lit { quoted: true, .. } | Part::Double(_) => escape(out, &text, false),
                    _ => escape(out, &text, true),
                },
                _ => op = None,
            }
        }
        // `${f:=word}`: a variable not known to be set may now hold the word.
        if let Some(word) = op.as_deref().and_then(|o| o.strip_prefix(':').unwrap_or(o).strip_prefix('='))
            && state.var(&param.name).is_none_or(|v| v.0.is_none())
            && super::is_name(&param.name)
        {
            let word: String = {
                let mut w = String::new();
                let mut chars = word.chars();
                while let Some(c) = chars.next() {
                    w.extend(if c == '\\' { chars.next() } else { Some(c) });
                }
                w
            };
            branches::alternatives(state, param.name.clone(), vec![word]);
        }
        op
    }

    /// An assigned element's subscript as the script gives it (`p[$i]=…`,
    /// `p["1"]=…`), what it runs analysed; `?` when only known at run time.
    #[inline(never)]
    fn subscript(&mut self, raw: &str, state: &mut State, frame: &Frame) -> String {
        if raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return raw.to_string();
        }
        match super::parse_expansions(raw, 0) {
            Ok(parts) => self.parts(&parts, state, frame).text.map_or_else(
                || "?".to_string(),
                |t| t.chars().filter(|c| !matches!(c, '"' | '\'' | ' ' | '\t')).collect(),
            ),
            Err(_) => "?".to_string(),
        }
    }

    /// Analyses a substituted script in a subshell and returns its invocations.
    fn nested(&mut self, script: &Script, state: &State, frame: &Frame) -> (Range<usize>, Option<String>) {
        let start = self.out.invocations.len();
        let mut sub = state.clone();
        let mut f = frame.clone();
        f.pipes.clear();
        f.pipes_base = 0;
        f.background = false;
        let saved = core::mem::take(&mut self.segment);
        let wanted = core::mem::replace(&mut self.printed_wanted, true);
        let printed = self.script(script, &mut sub, &f);
        self.printed_wanted = wanted;
        self.segment = saved;
        (start..self.out.invocations.len(), printed)
    }

    fn any_secret(&self, range: &Range<usize>) -> bool {
        let secret = self.context.secret;
        self.out.within(range).iter().any(|i| {
            i.secret_input
                || i.reads.iter().any(|p| secret(p))
                || i.secret_output.as_ref().is_some_and(|s| s.hosts.is_empty())
        })
    }

    fn redirects(
        &mut self,
        redirects: &[Redirect],
        state: &mut State,
        frame: &Frame,
    ) -> (Vec<Redir>, Vec<Range<usize>>) {
        // Sized up front: a vector's first push is a call (`grow_one`), its allocation is not.
        let mut out = Vec::with_capacity(redirects.len());
        let mut stdin_from = Vec::new();
        for r in redirects {
            match &r.target {
                RedirectTarget::Word(w) => {
                    let target = self.word(w, state, frame);
                    // `>& word` whose word is no descriptor (digits, `-`, or digits and `-`) sends both
                    // output and errors to that file, as `&> word` does: `bash -i >& /dev/tcp/h/p`.
                    let to_file = r.op == RedirectOp::DupOut
                        && r.fd.is_none_or(|fd| fd == 1)
                        && target.known().is_some_and(|t| {
                            let digits = t.strip_suffix('-').unwrap_or(t);
                            !digits.is_empty() && !digits.bytes().all(|b| b.is_ascii_digit())
                        });
                    let op = if to_file { RedirectOp::OutErr } else { r.op };
                    let file = !matches!(op, RedirectOp::DupIn | RedirectOp::DupOut | RedirectOp::HereString);
                    let path = file.then(|| target.path()).flatten().map(|t| self.normalize(&t, state));
                    let feeds_stdin = matches!(r.op, RedirectOp::In | RedirectOp::HereString | RedirectOp::ReadWrite)
                        && r.fd.is_none_or(|fd| fd == 0);
                    if feeds_stdin {
                        stdin_from.extend(target.subs.iter().cloned());
                        stdin_from.extend(target.procs.iter().cloned());
                    }
                    let unknown = file && path.is_none();
                    out.push(Redir { fd: r.fd, op, target, path });
                    // `< ${x:-.env}`: the file the default word names is redirected too,
                    // and `< "${p[0]}"` each file the array may hold.
                    let mut alternatives: Vec<Arg> = Vec::new();
                    if let Some((_, target)) = unknown.then(|| self.defaulted(w, state, frame)).flatten() {
                        alternatives.push(target);
                    }
                    if unknown && state.has_arrays() {
                        for alt in with_elements(w, state) {
                            alternatives.push(self.word(&alt, state, frame));
                        }
                    }
                    for target in alternatives {
                        let path = target.path().map(|t| self.normalize(&t, state));
                        if path.is_some() {
                            out.push(Redir { fd: r.fd, op, target, path });
                        }
                    }
                }
                RedirectTarget::HereDoc(doc) => {
                    let body = self.parts(&doc.body, state, frame);
                    stdin_from.extend(body.subs.iter().cloned());
                    let target = body.into_arg(Text::from(&doc.delimiter), false, true);
                    out.push(Redir { fd: r.fd, op: r.op, target, path: None });
                }
            }
        }
        (out, stdin_from)
    }

    fn simple(&mut self, simple: &Rc<Simple>, state: &mut State, frame: &Frame) -> Option<String> {
        self.segment = Segment::of(simple);
        let mut assigns = Vec::with_capacity(simple.assigns.len());
        let mut maybe = Vec::new();
        let mut arrays = Vec::new();
        let mut elements = Vec::new();
        for a in &simple.assigns {
            if let (Some(index), AssignValue::Scalar(w)) = (&a.index, &a.value) {
                // `p[1]=/etc/shadow`: one element.
                let index = self.subscript(index, state, frame);
                let value = self.word(w, state, frame);
                elements.push((a.name.clone(), index.clone(), a.append, value));
                continue;
            }
            let value = match &a.value {
                AssignValue::Scalar(w) => {
                    let value = self.word(w, state, frame);
                    if value.text.is_none()
                        && let Some(text) = self.defaulted(w, state, frame).and_then(|(_, arg)| arg.text)
                    {
                        maybe.push((a.name.clone(), String::from(&*text)));
                    } else if value.text.is_none()
                        && state.has_arrays()
                        // `x=${p[0]}`: `x` may hold the first element `p` may hold.
                        && let Some(text) = self.first_element(w, state, frame)
                    {
                        maybe.push((a.name.clone(), text));
                    }
                    value
                }
                AssignValue::Array(ws) => {
                    let values: Vec<Arg> = ws.iter().map(|w| self.word(w, state, frame)).collect();
                    let known: Vec<String> =
                        values.iter().filter_map(|v| v.text.as_deref().map(String::from)).collect();
                    let exact: Option<Vec<String>> = ws
                        .iter()
                        .zip(&values)
                        .map(|(w, v)| parameters::one_element(w, v).then(|| v.text.as_deref().map(String::from))?)
                        .collect();
                    // `$p` is the first element.
                    let first = match (&exact, a.append) {
                        (Some(all), false) => Some(Text::from(all.first().map_or("", String::as_str))),
                        _ => None,
                    };
                    arrays.push((a.name.clone(), a.append, known, exact));
                    Arg { text: first, secret: values.iter().any(|v| v.secret), ..Arg::default() }
                }
            };
            assigns.push((a.name.clone(), a.append, value));
        }
        // One argument a word, unless a word expands to several.
        let mut args: Vec<Arg> = Vec::with_capacity(simple.words.len());
        let ifs = ifs_of(state);
        for w in &simple.words {
            // Brace expansion comes first: `{rm,-rf,/}`.
            let braced = w.0.iter().any(|p| matches!(p, Part::Lit { text, quoted: false } if text.contains('{')));
            match if braced { super::fields::braces(&unquoted_text(w)) } else { super::fields::Braces::None } {
                super::fields::Braces::None => {}
                super::fields::Braces::Words(words) if w.bare().is_some() => {
                    for text in words {
                        let arg = self.word(&Word::lit(&text), state, frame);
                        args.push(Arg { raw: print::word(w).into(), ..arg });
                    }
                    continue;
                }
                // Braces around quoted text or expansions, or too many words: only known when it runs.
                _ => {
                    let arg = self.word(w, state, frame);
                    args.push(Arg { static_text: None, ..arg.forget_text() });
                    continue;
                }
            }
            // `"${p[@]}"` of an array of no elements is no word at all.
            if state.maybe.is_some() && parameters::vanishes(w, state) {
                continue;
            }
            // `${x:-.env}` with `x` unknown: the word as the default makes it
            // is one more argument, so that what it may name is judged too.
            // (Plain text, the commonest word, has none.)
            let defaulted = if expands(w) { self.defaulted(w, state, frame) } else { None };
            let arg = self.word(w, state, frame);
            push_fields(&mut args, arg, ifs.as_deref(), w);
            if let Some((d, arg)) = defaulted {
                push_fields(&mut args, arg, ifs.as_deref(), &d);
            }
            // `cat "${p[@]}"` with `p=(/etc/shadow)`: the word with each
            // element the array may hold is one more argument too.
            if state.has_arrays() && expands(w) {
                self.push_elements(&mut args, w, state, frame, ifs.as_deref());
            }
        }
        let (redirs, stdin_from) = self.redirects(&simple.redirects, state, frame);
        let segment = self.segment.clone();
        if args.is_empty() {
            if assigns.iter().any(|(name, _, _)| environment::holds_code(name)) {
                let mut inv = self.invocation(Vec::new(), Vec::new(), state, frame, &segment);
                for (name, _, value) in &assigns {
                    self.assigned_code(&mut inv, name, value, state, frame, &segment);
                }
                if inv.code_unknown || !inv.code_from.is_empty() {
                    self.push(inv);
                }
            }
            for (name, append, value) in assigns {
                let old = state.var(&name).and_then(|v| v.0.map(String::from));
                let text = match (append, old, value.text) {
                    (false, _, text) => text.map(String::from),
                    (true, Some(old), Some(new)) => Some(old + &new),
                    (true, _, _) => None,
                };
                if !arrays.iter().any(|(array, ..)| *array == name) {
                    parameters::assign_first(state, &name, text.clone());
                    branches::replaced(state, &name);
                }
                Rc::make_mut(&mut state.vars).insert(name, Var { value: text, secret: value.secret });
            }
            for (name, text) in maybe {
                Rc::make_mut(state.maybe.get_or_insert_default()).values.insert(name, text);
            }
            for (name, append, known, exact) in arrays {
                parameters::assign_indexed(state, &name, append, exact);
                assign_elements(state, name, append, known);
            }
            for (name, index, append, value) in elements {
                let mut text = value.text.as_deref().map(String::from);
                // `p[0]+=ow`: appended to the element it holds.
                if append {
                    text = text.and_then(|t| Some(parameters::element(state, &name, &index)? + &t));
                }
                parameters::assign_named(state, &format!("{name}[{index}]"), text, value.secret);
            }
            // `$(< file)` prints the file's contents (bash), only known at run time.
            let prints_file = redirs.iter().any(|r| r.op.reads() && r.fd.is_none_or(|fd| fd == 0));
            if !redirs.is_empty() {
                let mut inv = self.invocation(Vec::new(), redirs, state, frame, &segment);
                inv.stdin_from = stdin_from;
                self.push(inv);
            }
            return if prints_file { None } else { Some(String::new()) };
        }
        let mut env = Env { secret: assigns.iter().any(|(_, _, v)| v.secret), loads: Vec::new(), ifs: None };
        for (name, _, value) in &assigns {
            env.add(name, value);
        }
        self.dispatch(args, redirs, stdin_from, env, state, frame, &segment)
    }

    fn invocation(
        &self,
        argv: Vec<Arg>,
        redirects: Vec<Redir>,
        state: &State,
        frame: &Frame,
        segment: &Segment,
    ) -> Invocation {
        let program = argv.first().and_then(Arg::known).map(|t| Text::from(basename(t))).unwrap_or_default();
        Invocation {
            class: if program.is_empty() { Class::default() } else { Class::of(&program) },
            argv,
            program,
            redirects,
            segment: segment.clone(),
            via: frame.via.clone(),
            cwd: state.cwd.clone(),
            pipes: frame.pipes.clone(),
            background: frame.background,
            function: frame.function.clone(),
            code_from: Vec::new(),
            runs_stdin: false,
            code_unknown: false,
            runs_files: Vec::new(),
            stdin_from: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            secret_input: false,
            secret_output: None,
            effects: Vec::new(),
            elsewhere: frame.elsewhere,
        }
    }

    fn push(&mut self, mut inv: Invocation) -> Option<usize> {
        if self.out.invocations.len() >= MAX_INVOCATIONS {
            self.stop(&format!("it runs more than {MAX_INVOCATIONS} programs"));
            return None;
        }
        let secret = self.context.secret;
        for r in &inv.redirects {
            if let Some(path) = &r.path {
                if r.op.writes() {
                    inv.writes.push(path.clone());
                }
                if r.op.reads() && !inv.reads.contains(path) {
                    inv.reads.push(path.clone());
                }
            }
            inv.secret_input |= r.target.secret;
        }
        inv.secret_input |= inv.argv.iter().any(|a| a.secret);
        inv.secret_input |= inv.stdin_from.iter().any(|r| self.any_secret(r));
        inv.secret_input |= inv.program.is_empty() && inv.reads.iter().any(|p| secret(p));
        // A file written from a download (`mv x y`, `cp`, `install`, `cat x > y`) holds downloaded
        // code too, and so does the same name in a folder written (`cp x d/`, `mv -t d x`).
        // What a stage writes from downloaded content piped into it (`curl … | tee x.sh`) is downloaded too.
        let carries = !self.out.downloads.is_empty()
            || !self.out.download_dirs.is_empty()
            || inv.reads.iter().any(|p| p.starts_with("/dev/tcp/") || p.starts_with("/dev/udp/"));
        if !inv.writes.is_empty() && (carries || !inv.pipes.is_empty()) {
            let index = self.out.invocations.len();
            let names: Vec<String> =
                inv.reads.iter().filter(|p| self.out.downloaded(p, index)).map(|p| basename(p).to_string()).collect();
            let fed = self.out.fed_download(&inv);
            for w in &inv.writes {
                for name in &names {
                    self.out.downloads.push((format!("{}/{name}", w.trim_end_matches('/')), index));
                }
                if !names.is_empty() || fed {
                    self.out.downloads.push((w.clone(), index));
                }
            }
        }
        self.out.invocations.push(inv);
        Some(self.out.invocations.len() - 1)
    }

    fn normalize(&self, text: &str, state: &State) -> String {
        let Some(cwd) = &state.cwd else { return self.context.home.normalize(text, None) };
        let mut seen = self.cwd_seen.borrow_mut();
        let plain = match &*seen {
            // The same directory (a clone of the same `Rc`) as the last path's.
            Some((seen_cwd, plain)) if Rc::ptr_eq(seen_cwd, cwd) => *plain,
            _ => {
                let plain = paths::Cwd::plain_segments_of(cwd);
                *seen = Some((Rc::clone(cwd), plain));
                plain
            }
        };
        self.context.home.normalize_in(text, Some(&paths::Cwd::known(cwd, plain)))
    }

    /// Unwraps wrappers, then records the program and what it does. Returns
    /// what the command prints when that is known statically.
    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &mut self,
        mut argv: Vec<Arg>,
        redirs: Vec<Redir>,
        stdin_from: Vec<Range<usize>>,
        mut env: Env,
        state: &mut State,
        frame: &Frame,
        segment: &Segment,
    ) -> Option<String> {
        // An alias defined earlier runs its text with the words after it:
        // `alias x='rm -rf'` then `x /` is `rm -rf /`. Expanded whether or not
        // the shell has `expand_aliases` on, the stricter reading; an alias is
        // not expanded again inside its own text, as bash does not.
        if let Some(name) = argv.first().and_then(Arg::known).filter(|n| state.aliases.contains_key(*n)) {
            let name = name.to_string();
            let value = state.aliases.get(&name).cloned().unwrap_or_default();
            let rest: Vec<&str> = argv.iter().skip(1).map(|a| a.raw.as_str()).collect();
            let code = if rest.is_empty() { value } else { format!("{value} {}", rest.join(" ")) };
            let mut sub = state.clone();
            Rc::make_mut(&mut sub.aliases).remove(&name);
            let via = format!("alias {name}");
            if let Some(printed) = self.code_string(&Arg::fixed(&code), &[], &via, &mut sub, frame, segment) {
                return printed;
            }
            return None;
        }
        // Copied only when a wrapper adds itself to it.
        let mut frame: Cow<'_, Frame> = Cow::Borrowed(frame);
        let mut cwd_override: Option<Option<String>> = None;
        // A wrapper that runs code rather than a program: what it runs and how to name it.
        let mut runner: Option<(Unwrap, String)> = None;
        let mut unwrapped = 0;
        // What the analyser knows of the first word's name, looked up once a round;
        // when the loop ends it is the program's.
        let class_of =
            |argv: &[Arg]| argv.first().and_then(Arg::known).map_or_else(Class::default, |t| Class::of(basename(t)));
        let mut class;
        loop {
            class = class_of(&argv);
            if unwrapped == MAX_WRAPPERS {
                if class.wrapper().is_some() {
                    self.stop(&format!("it wraps a program in more than {MAX_WRAPPERS} wrappers"));
                    return None;
                }
                break;
            }
            unwrapped += 1;
            let Some(row) = class.wrapper() else {
                break;
            };
            let program = row.name.to_string();
            let start = match row.runs {
                Runs::Env => self.env_operand(&mut argv, state, &mut cwd_override, &mut env),
                Runs::Xargs => {
                    argv = self.xargs(&argv, &frame);
                    frame.to_mut().via.push(program);
                    continue;
                }
                Runs::Find => break,
                Runs::Parallel => {
                    let code = wrappers::parallel(row, &argv, MAX_LOOP_VALUES)
                        .map_or_else(|| Arg::unknown("(command of parallel)"), |c| Arg::fixed(&c));
                    runner = Some((Unwrap::Code(code), program));
                    break;
                }
                _ => match wrappers::unwrap(row, &argv) {
                    Unwrap::Program(i) => Some(i),
                    Unwrap::Nothing => None,
                    // `watch ls "$dir"`: words only known at run time run as a program and its arguments.
                    Unwrap::Joined(i) => match join_known(argv.get(i..).unwrap_or(&[])) {
                        Some(code) => {
                            runner = Some((Unwrap::Code(code), program));
                            break;
                        }
                        None => Some(i),
                    },
                    other => {
                        let label = match (row.runs, &other) {
                            (Runs::FirstOperand, _) => program.clone(),
                            (_, Unwrap::Code(_)) => format!("{program} -c"),
                            _ => program.clone(),
                        };
                        runner = Some((other, label));
                        break;
                    }
                },
            };
            match start {
                Some(i) if i < argv.len() => {
                    frame.to_mut().via.push(program);
                    if row.assigns {
                        for a in argv.get(1..i).unwrap_or(&[]).iter().filter(|a| wrappers::is_assignment(a)) {
                            env.secret |= a.secret;
                            env.assign(a);
                        }
                    }
                    argv.drain(..i);
                }
                _ => break,
            }
        }
        let mut state_for = state.clone();
        if let Some(cwd) = cwd_override {
            state_for.cwd = cwd.map(Rc::from);
        }
        let program: &str = argv.first().and_then(Arg::known).map(basename).unwrap_or_default();
        // Whether `program` is one of the builtins compared by name below; others are not compared.
        let builtin = class.is(Table::Builtin);
        let operands_from = 1;
        // The words go into the invocation when it is recorded; nothing reads them there before.
        let mut inv = self.invocation(Vec::new(), redirs, &state_for, &frame, segment);
        // The program's name shares the first word's text when it has no directory.
        inv.program = match argv.first().and_then(|a| a.text.as_ref()) {
            Some(first) if first.as_str() == program => first.clone(),
            _ => Text::from(program),
        };
        inv.class = class;
        inv.stdin_from = stdin_from;
        inv.secret_input |= env.secret;
        let input = input_of(&inv.redirects, &frame.stdin);
        // Code run by `-c` or `eval` reads the same input as the command; made when some code runs.
        let code_frame_cell = OnceCell::new();
        let code_frame = || {
            code_frame_cell.get_or_init(|| Frame {
                pipes: frame.pipes.clone(),
                background: frame.background,
                function: frame.function.clone(),
                via: frame.via.clone(),
                stdin: input.clone(),
                pipes_base: frame.pipes_base,
                elsewhere: frame.elsewhere,
            })
        };

        // Shell commands carried in a tool's options or program (`git -c core.sshCommand=…`, `awk 'BEGIN{system(…)}'`).
        for carried in super::embedded::code(program, &argv) {
            match carried {
                super::embedded::Carried::Code(text) => {
                    let mut scratch = state_for.clone();
                    let via = format!("{program}, as a command its options carry");
                    self.code_string(&Arg::fixed(&text), &[], &via, &mut scratch, code_frame(), segment);
                }
                super::embedded::Carried::Loads(file) => {
                    let path = self.normalize(&file, &state_for);
                    inv.runs_files.push(path);
                }
                super::embedded::Carried::Unknown => inv.code_unknown = true,
            }
        }
        // What it runs on another machine or in a container (`ssh host CMD`, `docker exec c CMD`).
        if let Some(code) = super::remote::command(program, &argv) {
            let mut scratch = state_for.clone();
            let mut there = code_frame().clone();
            there.elsewhere = true;
            let via = format!("{program}, on the host or container it reaches");
            self.code_string(&Arg::fixed(&code), &[], &via, &mut scratch, &there, segment);
        }
        if class.is(Table::Shell) {
            // `bash --rcfile FILE -i` reads FILE as it reads `BASH_ENV`.
            let at = argv.iter().position(|a| matches!(a.known(), Some("--rcfile" | "--init-file")));
            if let Some(file) = at.and_then(|i| argv.get(i + 1)) {
                env.loads.push(("BASH_ENV", file.clone()));
            }
        }
        self.loaded_by_environment(&env, class, &input, program, &state_for, &frame, segment);

        // Code that runs: wrappers that run code, shells, interpreters, eval, source.
        if let Some((run, label)) = runner {
            match run {
                Unwrap::Code(word) => {
                    if let Some(printed) = self.code_string(&word, &[], &label, state, code_frame(), segment) {
                        return printed;
                    }
                    unknown_code(&mut inv, &word);
                }
                Unwrap::Input => {
                    if let Some(printed) = self.run_input(&mut inv, &input, program, state, &frame, segment) {
                        return printed;
                    }
                }
                Unwrap::File(file) => {
                    if let Some(printed) =
                        self.script_operand(&mut inv, Some(&file), &input, program, &state_for, &frame, segment)
                    {
                        return printed;
                    }
                }
                Unwrap::Program(_) | Unwrap::Joined(_) | Unwrap::Nothing => {}
            }
        } else if class.is(Table::Shell) {
            match shell_runs(&argv) {
                ShellRuns::Code(word, positional) => {
                    let via = format!("{program} -c");
                    if let Some(printed) = self.code_string(&word, &positional, &via, state, code_frame(), segment) {
                        return printed;
                    }
                    unknown_code(&mut inv, &word);
                }
                ShellRuns::File(file) => {
                    if let Some(printed) =
                        self.script_operand(&mut inv, Some(&file), &input, program, &state_for, &frame, segment)
                    {
                        return printed;
                    }
                }
                ShellRuns::Input => {
                    if let Some(printed) = self.run_input(&mut inv, &input, program, state, &frame, segment) {
                        return printed;
                    }
                }
            }
        } else if builtin && program == "eval" {
            match join_known(argv.get(1..).unwrap_or(&[])).or_else(|| join_code(argv.get(1..).unwrap_or(&[]))) {
                Some(word) => {
                    if let Some(printed) = self.code_string(&word, &[], "eval", state, code_frame(), segment) {
                        return printed;
                    }
                }
                None => {
                    for a in argv.iter().skip(1) {
                        unknown_code(&mut inv, a);
                    }
                }
            }
        } else if builtin && program == "alias" {
            // An alias runs where it is used; what it may run is judged where it is defined.
            for a in argv.iter().skip(1) {
                if let Some((name, value)) = a.code().and_then(|t| t.split_once('='))
                    && !value.trim().is_empty()
                {
                    if state.aliases.len() < MAX_ALIASES || state.aliases.contains_key(name) {
                        Rc::make_mut(&mut state.aliases).insert(name.to_string(), value.to_string());
                    } else {
                        self.stop(&format!("it defines more than {MAX_ALIASES} aliases"));
                    }
                    let mut scratch = state.clone();
                    let via = format!("alias {name}");
                    self.code_string(&Arg::fixed(value), &[], &via, &mut scratch, code_frame(), segment);
                }
            }
        } else if builtin && (program == "source" || program == ".") {
            let script = argv.get(1).cloned();
            // Sourced code runs in this shell: an `IFS` it sets holds after it.
            let code = script.as_ref().and_then(|a| a.fed.clone()).or_else(|| match &input {
                Input::Text(t) => Some(t.clone()),
                _ => None,
            });
            if code.is_some_and(|c| c.contains("IFS")) {
                Rc::make_mut(&mut state.vars).insert("IFS".into(), Var { value: None, secret: false });
            }
            if let Some(printed) =
                self.script_operand(&mut inv, script.as_ref(), &input, program, &state_for, &frame, segment)
            {
                return printed;
            }
        } else if let Some(lang) = super::interpreters::language(program) {
            let label = format!("{program} inline code");
            self.interpreter(&mut inv, lang, &argv, &input, (&state_for, code_frame()), segment, &label);
        } else if let Some(flags) = interpreter(program) {
            let mut code = None;
            let mut script = None;
            let mut i = 1;
            while let Some(a) = argv.get(i) {
                match a.known() {
                    Some(t) if flags.contains(&t) => {
                        code = argv.get(i + 1).cloned();
                        break;
                    }
                    Some("-") => break,
                    Some(t) if t.starts_with('-') => i += 1,
                    _ => {
                        script = Some(a.clone());
                        break;
                    }
                }
            }
            match code {
                Some(word) => {
                    inv.code_from.extend(word.subs.iter().cloned());
                    inv.code_from.extend(word.procs.iter().cloned());
                }
                None => self.foreign_script(&mut inv, script.as_ref(), &state_for),
            }
        } else if let Some(t) = argv.first().and_then(Arg::known).filter(|t| t.as_bytes().contains(&b'/')) {
            let path = self.normalize(t, &state_for);
            // A script this command wrote, run by its path: judged by what it holds.
            if let Some(text) = written_text(&self.files, &path) {
                let via = format!("{t}, written above");
                let mut sub = state_for.clone();
                if let Some(printed) = self.code_string(
                    &Arg::fixed(&text),
                    argv.get(..).unwrap_or(&[]),
                    &via,
                    &mut sub,
                    code_frame(),
                    segment,
                ) {
                    return printed;
                }
            }
            // Text appended to a script of unknown content runs with it.
            if let Some(known) = appended_text(&self.files, &path) {
                let via = format!("{t}, appended to above");
                let mut sub = state_for.clone();
                let positional = argv.get(..).unwrap_or(&[]);
                let _ = self.code_string(&Arg::fixed(&known), positional, &via, &mut sub, code_frame(), segment);
            }
            if self.files_full && !self.files.contains_key(&path) {
                inv.code_unknown = true;
            }
            inv.runs_files.push(path);
        }

        // Paths read and written.
        let reads_operands = !class.is(Table::NotReader)
            && !program.is_empty()
            && !super::metadata::only_metadata_of(program, class, &argv);
        let mut skip_next = false;
        // Patterns, filters and excluded globs are data, not files (`grep -rn "/etc/shadow" .`).
        let data = if reads_operands { super::data_words::data_words(program, &argv) } else { Vec::new() };
        for (i, a) in argv.iter().enumerate().skip(operands_from) {
            if skip_next {
                skip_next = false;
                continue;
            }
            if data.contains(&i) {
                continue;
            }
            let Some(text) = a.known() else { continue };
            if text == "-i" && matches!(program, "ssh" | "scp" | "sftp") {
                // A key used to log in is not a key sent anywhere.
                skip_next = true;
                continue;
            }
            if reads_operands {
                for candidate in path_candidates(text) {
                    let whole = candidate.len() == text.len() && a.literal_tilde;
                    let path = self.normalize(&super::fields::literal_path(candidate, whole), &state_for);
                    if !inv.reads.contains(&path) {
                        inv.reads.push(path);
                    }
                }
            }
        }
        // Files of a name taken in under the folders read (`grep -r KEY . --include='.env*'`).
        let included = if reads_operands { super::data_words::included(program, &argv) } else { Vec::new() };
        if !included.is_empty() {
            // Without a folder, `rg` and a recursive `grep` search the working directory.
            let mut roots = inv.reads.clone();
            if roots.is_empty() {
                roots.push(self.normalize(".", &state_for));
            }
            // A folder filter (`*/`) names no file. Below the `**`, the glob's
            // wildcards take a leading `.` (see `paths::overlap`).
            let files = included.iter().filter(|g| !g.ends_with('/'));
            for (root, glob) in roots.iter().flat_map(|r| files.clone().map(move |g| (r, g))).take(MAX_LOOP_VALUES) {
                let root = root.trim_end_matches('/');
                let under = if glob.contains('/') { "" } else { "**/" };
                let path = format!("{root}/{under}{}", glob.trim_start_matches('/'));
                if !inv.reads.contains(&path) {
                    inv.reads.push(path);
                }
            }
        }
        for target in written_operands(program, &argv).into_iter().chain(super::metadata::written(program, &argv)) {
            let path = self.normalize(&target, &state_for);
            inv.writes.push(path);
        }
        if class.is(Table::WritesWithoutReading) {
            // `cp a dest`, `dd of=dest`, `rm x`: the destination is written, not read.
            inv.reads.retain(|p| !inv.writes.contains(p));
        }
        // The patterns of git's pathspecs with magic (`:(glob).e*`).
        if reads_operands && program == "git" {
            for spec in super::metadata::git_pathspecs(&argv) {
                let path = self.normalize(&spec, &state_for);
                if !inv.reads.contains(&path) {
                    inv.reads.push(path);
                }
            }
        }
        // What a repository holds of a file, printed (`git show HEAD:.env`).
        let blobs = if program == "git" { super::metadata::git_blobs(&argv) } else { Vec::new() };
        for file in blobs.into_iter().map(String::from).chain(super::metadata::content_read(program, class, &argv)) {
            let path = self.normalize(&file, &state_for);
            if !inv.reads.contains(&path) {
                inv.reads.push(path);
            }
        }

        // Downloads to files that may run later; a raw network client's output
        // redirected to a file is one too (`nc h p > x.sh`).
        if class.is(Table::Downloader) || matches!(program, "nc" | "ncat" | "netcat" | "socat" | "telnet" | "openssl") {
            let mut files: Vec<String> = super::downloads::files(program, &argv);
            for r in &inv.redirects {
                if r.op.writes()
                    && r.fd.is_none_or(|fd| fd == 1)
                    && let Some(p) = &r.path
                {
                    files.push(p.clone());
                }
            }
            let index = self.out.invocations.len();
            for f in files {
                let path = self.normalize(&f, &state_for);
                self.out.downloads.push((path, index));
            }
        }
        // An archive or compressed file holding downloaded content unpacks downloaded files:
        // `curl -O …/a.tgz && tar xzf a.tgz && ./a/install.sh`, `curl … | tar xz -C d`.
        let unpacked = super::downloads::unpacked(program, &argv);
        if !unpacked.is_empty() {
            let index = self.out.invocations.len();
            if inv.reads.iter().any(|p| self.out.downloaded(p, index)) || self.out.fed_download(&inv) {
                for u in unpacked {
                    match u {
                        super::downloads::Unpacked::Into(dir) => {
                            let path = self.normalize(&dir, &state_for);
                            self.out.download_dirs.push((path, index));
                        }
                        super::downloads::Unpacked::File(file) => {
                            let path = self.normalize(&file, &state_for);
                            self.out.downloads.push((path, index));
                        }
                    }
                }
            }
        }

        // State a shell keeps.
        if builtin {
            match program {
                // `cd` in a pipeline runs in a subshell and changes nothing after it.
                "cd" | "pushd" if frame.pipes.len() <= frame.pipes_base => {
                    let old = state.cwd.clone();
                    state.cwd = match argv.get(1) {
                        None => Some(Rc::from("~")),
                        Some(a) => match a.known() {
                            Some("-") => state.var("OLDPWD").and_then(|v| v.0).map(Rc::from),
                            None => None,
                            Some(_) => a.path().map(|t| Rc::from(self.normalize(&t, state))),
                        },
                    };
                    let pwd = state.cwd.as_deref().map(String::from);
                    Rc::make_mut(&mut state.vars).insert("PWD".into(), Var { value: pwd, secret: false });
                    let old = old.as_deref().map(String::from);
                    Rc::make_mut(&mut state.vars).insert("OLDPWD".into(), Var { value: old, secret: false });
                }
                "export" | "declare" | "typeset" | "local" | "readonly" => {
                    // `declare -n r=p`: what `r` changes is `p`, so no array is known by index any more.
                    let nameref = argv.iter().skip(1).filter_map(Arg::known).any(|t| {
                        t.strip_prefix('-').is_some_and(|o| o.contains('n'))
                            || t.strip_prefix('+').is_some_and(|o| o.contains('n'))
                    });
                    if nameref && let Some(maybe) = state.maybe.as_mut() {
                        Rc::make_mut(maybe).indexed.clear();
                    }
                    for a in argv.iter().skip(1) {
                        let text = a.prefix();
                        if let Some(name) = a.known().filter(|t| environment::holds_code(t)) {
                            // `export PAGER` after `read PAGER`: the value it has now is what runs.
                            let assigned = match state.var(name) {
                                Some((Some(value), _)) => Arg::fixed(value),
                                Some((None, _)) => Arg::unknown(name),
                                None => Arg::fixed(""),
                            };
                            self.assigned_code(&mut inv, name, &assigned, &state_for, code_frame(), segment);
                        }
                        // `export NAME+=VALUE` appends as `NAME+=VALUE` does.
                        let split = text.split_once('=').map(|(n, v)| match n.strip_suffix('+') {
                            Some(n) => (n, v, true),
                            None => (n, v, false),
                        });
                        // `declare 'p[1]=/'`: one element.
                        if let Some((name, value, append)) = split
                            && !append
                            && name.contains('[')
                        {
                            let value = a.known().map(|_| value.to_string());
                            parameters::assign_named(state, name, value, a.secret);
                            continue;
                        }
                        if let Some((name, value, append)) = split
                            && super::is_name(name)
                        {
                            if environment::holds_code(name) {
                                let assigned = match a.code().and_then(|c| c.split_once('=')) {
                                    Some((_, c)) => Arg::fixed(c),
                                    None => Arg { text: None, static_text: None, ..a.clone() },
                                };
                                self.assigned_code(&mut inv, name, &assigned, &state_for, code_frame(), segment);
                            }
                            let value = match (a.known(), append) {
                                (None, _) => None,
                                (Some(_), false) => Some(value.to_string()),
                                (Some(_), true) => match state.var(name) {
                                    None => Some(value.to_string()),
                                    Some((old, _)) => old.map(|old| format!("{old}{value}")),
                                },
                            };
                            // `declare -a p=(a b)`: the parser hands the array over as one word.
                            if let Some(inner) = value.as_deref().and_then(|v| v.strip_prefix('(')?.strip_suffix(')')) {
                                let elements = inner.split_ascii_whitespace().map(String::from).collect();
                                parameters::assign_indexed(state, name, append, None);
                                assign_elements(state, name.to_string(), append, elements);
                            } else {
                                parameters::assign_first(state, name, value.clone());
                            }
                            Rc::make_mut(&mut state.vars).insert(name.to_string(), Var { value, secret: a.secret });
                        }
                    }
                }
                "unalias" => {
                    if argv.iter().skip(1).any(|a| a.known() == Some("-a")) {
                        Rc::make_mut(&mut state.aliases).clear();
                    }
                    for a in argv.iter().skip(1).filter_map(Arg::known) {
                        Rc::make_mut(&mut state.aliases).remove(a);
                    }
                }
                "unset" => {
                    for a in argv.iter().skip(1).filter_map(Arg::known) {
                        // `unset 'p[0]'`: what the array holds is no longer known by index.
                        if let Some((base, _)) = a.split_once('[') {
                            parameters::forget_indexed(state, base);
                            if super::is_name(base) {
                                Rc::make_mut(&mut state.vars)
                                    .insert(base.to_string(), Var { value: None, secret: false });
                            }
                            continue;
                        }
                        // Without `IFS`, a shell splits as with the default.
                        let value = if a == "IFS" { super::fields::DEFAULT_IFS } else { "" };
                        Rc::make_mut(&mut state.vars)
                            .insert(a.to_string(), Var { value: Some(value.to_string()), secret: false });
                        parameters::forget_indexed(state, a);
                    }
                }
                "read" | "mapfile" | "readarray" => {
                    // What it reads: a redirected file (`< ~/.ssh/id_rsa`, `-u 3 … 3< key`), a here-string
                    // of a secret, or what a substitution feeding its input reads (`< <(cat key)`).
                    let is_secret = self.context.secret;
                    let secret = inv.secret_input
                        || matches!(&input, Input::File(p) if is_secret(p))
                        || inv
                            .redirects
                            .iter()
                            .any(|r| r.target.secret || (r.op.reads() && r.path.as_deref().is_some_and(is_secret)))
                        || inv.stdin_from.iter().any(|r| self.any_secret(r));
                    // `read 'p[1]'`: the array is no longer known by index.
                    for t in argv.iter().skip(1).filter_map(Arg::known) {
                        if let Some((base, _)) = t.split_once('[') {
                            parameters::forget_indexed(state, base);
                        }
                    }
                    let names = assigned_names(program, &argv);
                    for name in names {
                        Rc::make_mut(&mut state.vars).insert(name.to_string(), Var { value: None, secret });
                        parameters::forget_indexed(state, name);
                    }
                    // `read a b <<< ".env x"`: the names take the fields of a known input's first line.
                    // `IFS=, read a b` splits at the separators it sets for itself.
                    let ifs = match &env.ifs {
                        Some(own) => own.clone(),
                        None => state.var("IFS").and_then(|v| v.0.map(String::from)),
                    };
                    let fields = ifs.and_then(|ifs| read_fields(&argv, &input, &ifs));
                    match fields.filter(|_| program == "read") {
                        Some(Read::Names(values)) => {
                            for (name, value) in values {
                                Rc::make_mut(&mut state.vars).insert(name, Var { value: Some(value), secret });
                            }
                        }
                        Some(Read::Array(name, elements)) => {
                            let first = elements.first().cloned().unwrap_or_default();
                            Rc::make_mut(&mut state.vars).insert(name.clone(), Var { value: Some(first), secret });
                            parameters::assign_indexed(state, &name, false, Some(elements.clone()));
                            assign_elements(state, name, false, elements);
                        }
                        None => {}
                    }
                }
                // `printf -v f .env`: what it would print, kept in `f`.
                "printf" if argv.get(1).and_then(Arg::known) == Some("-v") => {
                    // `printf -v f .env`, `printf -v 'p[1]' %s /`.
                    if let Some(name) = argv.get(2).and_then(Arg::known) {
                        let printed: Vec<Arg> = argv.iter().take(1).chain(argv.iter().skip(3)).cloned().collect();
                        let value = decode::output("printf", &printed, &Input::Nothing);
                        let secret = argv.iter().skip(3).any(|a| a.secret);
                        parameters::assign_named(state, name, value, secret);
                    }
                }
                "shopt" => {
                    let on = argv.iter().any(|a| a.known() == Some("-s"));
                    if on && argv.iter().any(|a| a.known().is_none_or(|t| t == "nocasematch")) {
                        self.nocase = true;
                    }
                }
                _ => {}
            }
        }

        if inv.secret_output.is_none() {
            inv.secret_output = secrets::output_of(program, class, &argv);
        }
        // Output sent elsewhere may still reach the pipe (`>/dev/stdout`, `>&2 |&`): unknown.
        let to_file = inv.redirects.iter().any(|r| r.op.writes());
        let produced = if self.printed_wanted || to_file { decode::output(program, &argv, &input) } else { None };
        if !remember_written(&mut self.files, &inv, produced.as_deref()) {
            self.files_full = true;
        }
        let printed = if prints_elsewhere(&inv.redirects) { None } else { produced };
        let find = (builtin && program == "find").then(|| argv.clone());
        inv.argv = argv;
        if self.push(inv).is_some()
            && let Some(argv) = find
        {
            self.find(&argv, state, &frame, segment);
        }
        printed
    }

    /// Runs a `-c` string, `eval` text or the code a shell reads. Returns
    /// `None` when the code is only known at run time, else what it prints.
    /// `positional` are the words after a `-c` string: `$0`, `$1`, ...
    fn code_string(
        &mut self,
        word: &Arg,
        positional: &[Arg],
        via: &str,
        state: &mut State,
        frame: &Frame,
        segment: &Segment,
    ) -> Option<Option<String>> {
        let text = word.code()?;
        if self.code_depth >= MAX_CODE_NESTING {
            self.stop(&format!("it nests code in strings more than {MAX_CODE_NESTING} levels deep"));
            return Some(None);
        }
        match super::parse(text) {
            Ok(script) => {
                let mut f = frame.clone();
                f.via.push(via.to_string());
                self.code_depth += 1;
                // `bash -c` runs in a new process; `eval` in this shell.
                let printed = if via == "eval" {
                    self.script(&script, state, &f)
                } else {
                    f.pipes_base = f.pipes.len();
                    let mut sub = state.clone();
                    // A new shell starts with the default `IFS`, whatever its parent's was.
                    Rc::make_mut(&mut sub.vars)
                        .insert("IFS".into(), Var { value: Some(super::fields::DEFAULT_IFS.into()), secret: false });
                    for (n, a) in positional.iter().enumerate() {
                        Rc::make_mut(&mut sub.vars)
                            .insert(n.to_string(), Var { value: a.known().map(String::from), secret: a.secret });
                    }
                    if !positional.is_empty() {
                        let rest = positional.get(1..).unwrap_or(&[]);
                        let all: Option<Vec<&str>> = rest.iter().map(Arg::known).collect();
                        let secret = rest.iter().any(|a| a.secret);
                        let value = all.map(|v| v.join(" "));
                        Rc::make_mut(&mut sub.vars).insert("@".into(), Var { value: value.clone(), secret });
                        Rc::make_mut(&mut sub.vars).insert("*".into(), Var { value, secret });
                        Rc::make_mut(&mut sub.vars)
                            .insert("#".into(), Var { value: Some(rest.len().to_string()), secret: false });
                    }
                    self.script(&script, &mut sub, &f)
                };
                self.code_depth -= 1;
                Some(printed)
            }
            Err(e) => {
                self.out.problems.push(Problem {
                    kind: ProblemKind::Unparsable,
                    segment: segment.to_string(),
                    detail: format!(
                        "the code `{}` it runs ({via}) is not valid shell: {e}",
                        crate::config::reader::shorten(text)
                    ),
                });
                Some(None)
            }
        }
    }

    /// A shell (or `at`, `su`) that runs the commands on its standard input.
    /// Fixed text is judged as the script it is; input only known at run
    /// time is remembered as such. Returns what the code prints when it was
    /// judged.
    fn run_input(
        &mut self,
        inv: &mut Invocation,
        input: &Input,
        program: &str,
        state: &mut State,
        frame: &Frame,
        segment: &Segment,
    ) -> Option<Option<String>> {
        match input {
            Input::Text(text) => {
                let mut f = frame.clone();
                // What it reads after the script is the rest of its input: unknown.
                f.stdin = Input::Unknown;
                let via = format!("{program} reading its input");
                self.code_string(&Arg::fixed(text), &[], &via, state, &f, segment)
            }
            Input::File(path) => {
                // A script this command wrote, fed to the shell's input: judged by what it holds.
                if let Some(text) = written_text(&self.files, path) {
                    let mut f = frame.clone();
                    f.stdin = Input::Unknown;
                    let via = format!("{program} reading {path}, written above");
                    if let Some(printed) = self.code_string(&Arg::fixed(&text), &[], &via, state, &f, segment) {
                        return Some(printed);
                    }
                }
                if let Some(known) = appended_text(&self.files, path) {
                    let mut f = frame.clone();
                    f.stdin = Input::Unknown;
                    let via = format!("{program} reading {path}, appended to above");
                    let _ = self.code_string(&Arg::fixed(&known), &[], &via, state, &f, segment);
                }
                if self.files_full && !self.files.contains_key(path) {
                    inv.code_unknown = true;
                }
                inv.runs_files.push(path.clone());
                None
            }
            Input::Unknown => {
                inv.runs_stdin = true;
                inv.code_unknown = true;
                inv.code_from.extend(inv.stdin_from.iter().cloned());
                None
            }
            Input::Nothing => {
                inv.runs_stdin = true;
                inv.code_from.extend(inv.stdin_from.iter().cloned());
                None
            }
        }
    }

    /// A shell or `source` that runs a file operand, or its standard input
    /// when there is none. A process substitution that prints fixed text
    /// (`sh <(echo ...)`) is judged as the script it prints.
    #[allow(clippy::too_many_arguments)]
    fn script_operand(
        &mut self,
        inv: &mut Invocation,
        script: Option<&Arg>,
        input: &Input,
        program: &str,
        state: &State,
        frame: &Frame,
        segment: &Segment,
    ) -> Option<Option<String>> {
        match script {
            None => {
                let mut sub = state.clone();
                self.run_input(inv, input, program, &mut sub, frame, segment)
            }
            Some(a) if a.known().is_some_and(is_stdin) => {
                let mut sub = state.clone();
                self.run_input(inv, input, program, &mut sub, frame, segment)
            }
            Some(a) if a.fed.is_some() => {
                let text = a.fed.clone().unwrap_or_default();
                let mut f = frame.clone();
                f.stdin = input.clone();
                let via = format!("{program} <(...)");
                // `source` runs in this shell, a shell in a new process.
                let mut sub = state.clone();
                self.code_string(&Arg::fixed(&text), &[], &via, &mut sub, &f, segment)
            }
            Some(a) => {
                if let Some(text) = a.known().and_then(|t| written_text(&self.files, &self.normalize(t, state))) {
                    let via = format!("{program} running a file written above");
                    let mut sub = state.clone();
                    let mut f = frame.clone();
                    f.stdin = input.clone();
                    return self.code_string(&Arg::fixed(&text), &[], &via, &mut sub, &f, segment);
                }
                if let Some(known) = a.known().and_then(|t| appended_text(&self.files, &self.normalize(t, state))) {
                    let via = format!("{program} running a file appended to above");
                    let mut sub = state.clone();
                    let mut f = frame.clone();
                    f.stdin = input.clone();
                    let _ = self.code_string(&Arg::fixed(&known), &[], &via, &mut sub, &f, segment);
                }
                if self.files_full && a.known().is_some_and(|t| !self.files.contains_key(&self.normalize(t, state))) {
                    inv.code_unknown = true;
                }
                self.foreign_script(inv, Some(a), state);
                None
            }
        }
    }

    /// An interpreter that runs a file operand, or its standard input when
    /// there is none.
    fn foreign_script(&mut self, inv: &mut Invocation, script: Option<&Arg>, state: &State) {
        match script {
            None => {
                inv.runs_stdin = true;
                inv.code_from.extend(inv.stdin_from.iter().cloned());
            }
            Some(a) if a.known() == Some("-") || a.known() == Some("/dev/stdin") => {
                inv.runs_stdin = true;
                inv.code_from.extend(inv.stdin_from.iter().cloned());
            }
            Some(a) => {
                inv.code_from.extend(a.procs.iter().cloned());
                inv.code_from.extend(a.subs.iter().cloned());
                if let Some(t) = a.known() {
                    inv.runs_files.push(self.normalize(t, state));
                }
            }
        }
    }

    /// `env`: options, assignments, `-C dir` and `-S string`, then the program.
    fn env_operand(
        &self,
        argv: &mut Vec<Arg>,
        state: &State,
        cwd: &mut Option<Option<String>>,
        env: &mut Env,
    ) -> Option<usize> {
        let mut i = 1;
        let mut rounds = 0;
        // After `--`, assignments still come before the program.
        let mut options = true;
        while let Some(a) = argv.get(i) {
            rounds += 1;
            if rounds > MAX_INVOCATIONS {
                return None;
            }
            // `env X="$v" cmd`: an assignment, whether or not its value is known.
            if wrappers::is_assignment(a) {
                env.secret |= a.secret;
                env.assign(a);
                i += 1;
                continue;
            }
            let Some(t) = a.known() else { return Some(i) };
            if t == "-" {
                // `env -`, also after `--`: `-i`, an empty environment.
                i += 1;
                continue;
            }
            if !options {
                return Some(i);
            }
            if t == "--" {
                options = false;
                i += 1;
                continue;
            }
            // A cluster led by a flag (`-iS CMD`, `-iC DIR`, `-0u X`) is read one option at a time.
            if t.len() > 2
                && matches!(t.as_bytes().get(1), Some(b'i' | b'0' | b'v'))
                && let (Some(flag), Some(rest)) = (t.get(..2), t.get(2..))
            {
                let (flag, rest) = (Arg::fixed(flag), Arg::fixed(&format!("-{rest}")));
                if let Some(slot) = argv.get_mut(i) {
                    *slot = flag;
                }
                argv.insert(i + 1, rest);
                continue;
            }
            if t == "-u" || t == "--unset" || t == "-a" || t == "--argv0" {
                i += 2;
            } else if t == "-C" || t == "--chdir" {
                let dir = argv.get(i + 1).and_then(Arg::known).map(|d| self.normalize(d, state));
                *cwd = Some(dir);
                i += 2;
            } else if let Some(d) = t.strip_prefix("--chdir=") {
                *cwd = Some(Some(self.normalize(d, state)));
                i += 1;
            } else if t == "-S" || t == "--split-string" || t.starts_with("--split-string=") || t.starts_with("-S") {
                // `env -S 'rm -rf /'` splits its operand into words.
                let (text, used) = if let Some(v) = t.strip_prefix("--split-string=") {
                    (Some(v.to_string()), 1)
                } else if t.len() > 2 && t.starts_with("-S") {
                    (t.get(2..).map(str::to_string), 1)
                } else {
                    (argv.get(i + 1).and_then(Arg::known).map(str::to_string), 2)
                };
                let Some(text) = text else { return Some(i + used) };
                let words: Vec<Arg> = text.split_whitespace().map(Arg::fixed).collect();
                let tail = argv.split_off((i + used).min(argv.len()));
                argv.truncate(i);
                argv.extend(words);
                argv.extend(tail);
                // The split words start where the option was; keep scanning there.
            } else if t.starts_with('-') && t.len() > 1 {
                i += 1;
            } else {
                return Some(i);
            }
        }
        Some(i)
    }

    /// `xargs cmd args`: the command gets the input as extra arguments.
    fn xargs(&self, argv: &[Arg], frame: &Frame) -> Vec<Arg> {
        let with_value = ["-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"];
        let long = ["--replace", "--max-args", "--max-procs", "--max-lines", "--delimiter", "--eof", "--arg-file"];
        let mut replace: Option<String> = None;
        let mut i = 1;
        while let Some(a) = argv.get(i) {
            let Some(t) = a.known() else { break };
            if t == "--" {
                i += 1;
                break;
            }
            if !t.starts_with('-') || t.len() < 2 {
                break;
            }
            if t == "-I" {
                replace = argv.get(i + 1).and_then(Arg::known).map(str::to_string);
                i += 2;
            } else if let Some(r) = t.strip_prefix("--replace=").or_else(|| t.strip_prefix("-I")) {
                replace = Some(r.to_string());
                i += 1;
            } else if t == "-i" {
                replace = Some("{}".to_string());
                i += 1;
            } else if with_value.contains(&t) || long.contains(&t) {
                i += 2;
            } else {
                i += 1;
            }
        }
        let mut command: Vec<Arg> = argv.get(i..).map(<[Arg]>::to_vec).unwrap_or_default();
        if command.is_empty() {
            command.push(Arg::fixed("echo"));
        }
        let input = self.xargs_input(frame);
        match replace {
            Some(r) => {
                for a in command.iter_mut().skip(1) {
                    if let Some(t) = a.known()
                        && t.contains(r.as_str())
                    {
                        match &input {
                            Some(values) if values.len() == 1 => {
                                let v = values.first().map(String::as_str).unwrap_or("");
                                let replaced = t.replace(r.as_str(), v);
                                *a = Arg::fixed(&replaced);
                            }
                            _ => {
                                let partial = t.split(r.as_str()).next().unwrap_or("").to_string();
                                // Run as code (`sh -c 'wc -l {}'`), the input is a value no
                                // script can set: `$$`.
                                let static_text = Some(t.replace(r.as_str(), "$$"));
                                *a = Arg {
                                    text: None,
                                    partial: partial.into(),
                                    raw: a.raw.clone(),
                                    static_text: static_text.map(Text::from),
                                    ..Arg::default()
                                };
                            }
                        }
                    }
                }
            }
            None => match input {
                Some(values) => command.extend(values.iter().map(|v| Arg::fixed(v))),
                None => command.push(Arg::unknown("(input of xargs)")),
            },
        }
        command
    }

    /// The words an earlier `echo` or `printf` stage of the same pipeline
    /// feeds to `xargs`, when they are known.
    fn xargs_input(&self, frame: &Frame) -> Option<Vec<String>> {
        let &(pipe, stage) = frame.pipes.last()?;
        let before = (pipe, stage.checked_sub(1)?);
        let feeder = self.out.invocations.iter().rev().find(|i| i.pipes.last() == Some(&before))?;
        if feeder.program != "echo" && feeder.program != "printf" {
            return None;
        }
        let words: Option<Vec<&str>> = feeder.argv.iter().skip(1).map(Arg::known).collect();
        let words = words?;
        let words: Vec<String> = words
            .iter()
            .filter(|w| !w.starts_with('-'))
            .flat_map(|w| w.split_whitespace())
            .map(str::to_string)
            .collect();
        (!words.is_empty()).then_some(words)
    }

    /// `find`: `-delete` deletes the roots recursively; `-exec` runs a command
    /// on every file under them.
    fn find(&mut self, argv: &[Arg], state: &mut State, frame: &Frame, segment: &Segment) {
        let mut i = 1;
        while argv.get(i).and_then(Arg::known).is_some_and(|t| matches!(t, "-H" | "-L" | "-P")) {
            i += 1;
        }
        let mut roots = Vec::new();
        while let Some(a) = argv.get(i) {
            if a.known().is_some_and(|t| t.starts_with('-') || t == "(" || t == "!" || t == ")") {
                break;
            }
            roots.push(a.clone());
            i += 1;
        }
        if roots.is_empty() {
            roots.push(Arg::fixed("."));
        }
        // One name filter, not negated nor one of alternatives, narrows what is found to
        // files of that name anywhere under each root (`find /tmp -name '*.sock' -delete`).
        // Following links (`-L`, `-H`, `-follow`) leaves the roots: no narrowing then.
        let follows = argv.get(1..i).unwrap_or(&[]).iter().any(|a| matches!(a.known(), Some("-L" | "-H")));
        let named = selected_name(argv.get(i..).unwrap_or(&[])).filter(|_| !follows);
        // Below the `**`, find's wildcards take a leading `.` (see `paths::overlap`).
        let under = |root: &Arg| match (&named, root.path()) {
            (Some(name), Some(r)) => Arg::fixed(&format!("{}/**/{name}", r.trim_end_matches('/'))),
            _ => under(root),
        };
        let mut f = frame.clone();
        while let Some(a) = argv.get(i) {
            match a.known() {
                Some("-delete") => {
                    f.via = frame.via.clone();
                    f.via.push("find -delete".into());
                    // What it deletes is what is under each root.
                    let mut args = vec![Arg::fixed("rm"), Arg::fixed("-r")];
                    args.extend(roots.iter().map(under));
                    self.dispatch(args, Vec::new(), Vec::new(), Env::default(), state, &f, segment);
                    i += 1;
                }
                Some(action @ ("-exec" | "-execdir" | "-ok" | "-okdir")) => {
                    let end = argv
                        .iter()
                        .skip(i + 1)
                        .position(|a| matches!(a.known(), Some(";") | Some("+")))
                        .map_or(argv.len(), |p| i + 1 + p);
                    let command: Vec<Arg> = argv.get(i + 1..end).map(<[Arg]>::to_vec).unwrap_or_default();
                    f.via = frame.via.clone();
                    f.via.push(format!("find {action}"));
                    for root in roots.iter().take(MAX_LOOP_VALUES) {
                        let each = under(root);
                        let args: Vec<Arg> = command
                            .iter()
                            .map(|a| if a.known() == Some("{}") { each.clone() } else { a.clone() })
                            .collect();
                        if !args.is_empty() {
                            self.dispatch(args, Vec::new(), Vec::new(), Env::default(), state, &f, segment);
                        }
                    }
                    i = end + 1;
                }
                _ => i += 1,
            }
        }
    }
}

/// The name a `find` expression selects, when it is one `-name`/`-iname`
/// test that is neither negated nor one of alternatives (`-o`), and not `*`.
fn selected_name(expression: &[Arg]) -> Option<String> {
    let words: Vec<Option<&str>> = expression.iter().map(Arg::known).collect();
    if words.iter().any(|w| matches!(w, None | Some("-o" | "-or" | "!" | "-not" | "," | "-follow"))) {
        return None;
    }
    let mut names = words.iter().enumerate().filter(|(_, w)| matches!(w, Some("-name" | "-iname")));
    let (at, _) = names.next()?;
    if names.next().is_some() {
        return None;
    }
    // The test must come before the action: `find /tmp -delete -name x` deletes everything.
    let action = words.iter().position(|w| matches!(w, Some("-delete" | "-exec" | "-execdir" | "-ok" | "-okdir")));
    if action.is_some_and(|a| a < at) {
        return None;
    }
    let name = words.get(at + 1).copied().flatten()?;
    // A name of wildcards and dots (`?*`, `.*`, `*.*`) or a bracket set selects too much to narrow.
    let literal = name.chars().any(|c| !matches!(c, '*' | '?' | '.'));
    // `-iname` ignores case: lowered, as the globs it is matched against are written.
    let folded =
        if words.get(at).copied().flatten() == Some("-iname") { name.to_lowercase() } else { name.to_string() };
    (literal && !name.contains(['/', '['])).then_some(folded)
}

/// Everything under a `find` root, as a glob.
fn under(root: &Arg) -> Arg {
    match root.path().as_deref() {
        Some(r) => Arg::fixed(&format!("{}/*", r.trim_end_matches('/'))),
        None => Arg { text: None, partial: root.prefix().into(), raw: root.raw.clone(), ..Arg::default() },
    }
}

/// What a shell runs: a `-c` string with the words after it (`$0`, `$1`,
/// ...), a script file, or its standard input (`sh`, `sh -s`, `bash -`).
enum ShellRuns {
    Code(Arg, Vec<Arg>),
    File(Arg),
    Input,
}

fn shell_runs(argv: &[Arg]) -> ShellRuns {
    let mut code = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(t) = a.known() else { break };
        if t == "--" {
            i += 1;
            break;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if !t.starts_with("--") && t.contains('c') {
                code = true;
            }
            if !t.starts_with("--") && t.contains('s') && !code {
                return ShellRuns::Input;
            }
            i += 1;
            continue;
        }
        break;
    }
    match (code, argv.get(i)) {
        (true, Some(word)) => ShellRuns::Code(word.clone(), argv.get(i + 1..).unwrap_or(&[]).to_vec()),
        (false, Some(file)) => ShellRuns::File(file.clone()),
        (_, None) => ShellRuns::Input,
    }
}

/// What a command reads on its standard input: its last input redirection,
/// else what it inherits.
fn input_of(redirs: &[Redir], inherited: &Input) -> Input {
    let mut input = inherited.clone();
    for r in redirs {
        if r.fd.is_some_and(|fd| fd != 0) {
            continue;
        }
        input = match r.op {
            RedirectOp::HereString => match r.target.code() {
                Some(t) => decode::bounded(format!("{t}\n")).map_or(Input::Unknown, Input::Text),
                None => Input::Unknown,
            },
            RedirectOp::HereDoc => match r.target.code() {
                Some(t) => Input::Text(t.to_string()),
                None => Input::Unknown,
            },
            RedirectOp::In | RedirectOp::ReadWrite => match (&r.target.fed, &r.path) {
                (Some(text), _) => Input::Text(text.clone()),
                _ if !r.target.procs.is_empty() || !r.target.subs.is_empty() => Input::Unknown,
                (None, Some(p)) if p == "/dev/null" => Input::Text(String::new()),
                (None, Some(p)) => Input::File(p.clone()),
                (None, None) => Input::Unknown,
            },
            RedirectOp::DupIn => Input::Unknown,
            _ => continue,
        };
    }
    input
}

/// Whether a script operand names standard input.
fn is_stdin(path: &str) -> bool {
    matches!(path, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// Most aliases one script may define; past it the script is too complex to judge.
pub const MAX_ALIASES: usize = 64;

/// Most files whose content one script's analysis remembers.
pub const MAX_WRITTEN_FILES: usize = 64;

/// What a file this script wrote holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Held {
    /// Exactly this text (`printf 'rm -rf /' > x.sh`).
    All(String),
    /// Text only known at run time, with the known text appended to it
    /// after, if any (`echo 'rm -rf /' >> x.sh` of a file that existed
    /// before the command): the appended text runs when the file does, so it
    /// is judged, and the rest is a script like any other.
    Partly(Option<String>),
}

/// Records what `inv` writes to files through its standard output: the text
/// when it is known, else that the file's content is unknown. Files it writes
/// any other way (`cp`, `tee`, `dd of=`) are unknown from then on, and text
/// appended to a file of unknown content is remembered as its known part.
/// Returns `false` when a file could not be remembered for the bound.
fn remember_written(files: &mut BTreeMap<String, Held>, inv: &Invocation, produced: Option<&str>) -> bool {
    let mut kept = true;
    for r in &inv.redirects {
        let Some(path) = &r.path else { continue };
        if !r.op.writes() {
            continue;
        }
        let stdout = r.fd.is_none_or(|fd| fd == 1) || matches!(r.op, RedirectOp::OutErr | RedirectOp::AppendOutErr);
        let text = match (stdout, r.op) {
            (false, RedirectOp::Append | RedirectOp::AppendOutErr) => match files.get(path) {
                // Unknown text after what is known: the known part still runs.
                Some(Held::All(t)) => Held::Partly(Some(t.clone())),
                Some(held) => held.clone(),
                None => Held::Partly(None),
            },
            (false, _) => Held::Partly(None),
            (true, RedirectOp::Append | RedirectOp::AppendOutErr) => match (files.get(path), produced) {
                (Some(Held::All(t)), Some(p)) => {
                    concat(Some(t.clone()), Some(p.to_string())).map_or(Held::Partly(None), Held::All)
                }
                (Some(Held::All(t)), None) => Held::Partly(Some(t.clone())),
                (Some(Held::Partly(known)), Some(p)) => Held::Partly(match known {
                    Some(k) => concat(Some(k.clone()), Some(format!("\n{p}"))),
                    None => Some(p.to_string()),
                }),
                (Some(Held::Partly(known)), None) => Held::Partly(known.clone()),
                (None, p) => Held::Partly(p.map(str::to_string)),
            },
            (true, _) => produced.map_or(Held::Partly(None), |p| Held::All(p.to_string())),
        };
        if files.len() < MAX_WRITTEN_FILES || files.contains_key(path) {
            files.insert(path.clone(), text);
        } else {
            kept = false;
        }
    }
    // Programs that change only a file's metadata leave what it holds.
    if matches!(inv.program.as_str(), "chmod" | "chown" | "chgrp" | "touch" | "chattr" | "setfacl") {
        return kept;
    }
    for path in &inv.writes {
        if inv.redirects.iter().all(|r| r.path.as_deref() != Some(path.as_str())) && files.contains_key(path) {
            files.insert(path.clone(), Held::Partly(None));
        }
    }
    kept
}

/// What a file this script wrote holds, when that is known.
fn written_text(files: &BTreeMap<String, Held>, path: &str) -> Option<String> {
    match files.get(path) {
        Some(Held::All(text)) => Some(text.clone()),
        _ => None,
    }
}

/// The known text appended to a file of otherwise unknown content.
fn appended_text(files: &BTreeMap<String, Held>, path: &str) -> Option<String> {
    match files.get(path) {
        Some(Held::Partly(known)) => known.clone(),
        _ => None,
    }
}

/// Whether the command's standard output goes somewhere else than the pipe.
fn prints_elsewhere(redirs: &[Redir]) -> bool {
    redirs.iter().any(|r| {
        r.fd.is_none_or(|fd| fd == 1)
            && (r.op.writes() || (r.op == RedirectOp::DupOut && r.target.known() != Some("1")))
    })
}

/// The `IFS` word splitting uses: `None` when it is only known at run time.
fn ifs_of(state: &State) -> Option<Cow<'static, str>> {
    match state.var("IFS") {
        None => Some(Cow::Borrowed(super::fields::DEFAULT_IFS)),
        Some((value, _)) => match value {
            Some(super::fields::DEFAULT_IFS) => Some(Cow::Borrowed(super::fields::DEFAULT_IFS)),
            value => value.map(|t| Cow::Owned(t.to_string())),
        },
    }
}

/// Whether a word starts with quoted or escaped text (`"~"`, `'~'`, `\~`),
/// which no tilde expansion touches; `"$HOME"` starts with an expansion.
fn leading_text(parts: &[Part]) -> bool {
    match parts.first() {
        Some(Part::Lit { quoted, .. }) => *quoted,
        Some(Part::Double(inner)) => matches!(inner.first(), Some(Part::Lit { .. })),
        _ => false,
    }
}

/// A word's unquoted literal text, with every other part as a NUL: what
/// brace expansion looks at.
fn unquoted_text(word: &Word) -> String {
    word.0
        .iter()
        .map(|p| match p {
            Part::Lit { text, quoted: false } => text.as_str(),
            _ => "\0",
        })
        .collect()
}

/// The word with each `${x:-word}`, `${x-word}`, `${x:=word}`, `${x=word}`,
/// `${x:+word}` and `${x+word}` whose variable the script does not know, or
/// knows to be empty, replaced by its `word` (and each `$f` assigned such an
/// expansion by the value it may have, [`State::maybe`]): what it expands to
/// when the variable is unset or empty (or, for `+`, set). `None` when the word holds no such expansion, or
/// when a default runs a command (`${x:-$(...)}`), which the expansion's own
/// reading has judged already.
fn with_defaults(word: &Word, state: &State) -> Option<(Word, Vec<String>)> {
    if !expands(word) || runs_commands(&word.0) {
        return None;
    }
    let (mut changed, mut maybe) = (false, Vec::new());
    let parts = defaulted_parts(&word.0, state, &mut changed, &mut maybe)?;
    (changed && !parts.is_empty()).then_some((Word(parts), maybe))
}

/// [`with_defaults`] over parts; the variables read with the value they may
/// have are added to `maybe` (and left in the parts, as `$f`).
fn defaulted_parts(parts: &[Part], state: &State, changed: &mut bool, maybe: &mut Vec<String>) -> Option<Vec<Part>> {
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        match part {
            // Unknown, or known to be empty: a known value decides by itself.
            Part::Param(param) if state.var(&param.name).is_none_or(|(v, _)| v.is_none_or(str::is_empty)) => {
                if param.rest.is_empty() && state.maybe.as_ref().is_some_and(|m| m.values.contains_key(&param.name)) {
                    *changed = true;
                    maybe.push(param.name.clone());
                    out.push(part.clone());
                    continue;
                }
                match default_of(param) {
                    Some(default) => {
                        *changed = true;
                        out.extend(defaulted_parts(default.as_slice(), state, changed, maybe)?);
                    }
                    None => out.push(part.clone()),
                }
            }
            Part::Double(inner) => out.push(Part::Double(defaulted_parts(inner, state, changed, maybe)?)),
            _ => out.push(part.clone()),
        }
    }
    Some(out)
}

/// Records the known elements an array may hold: replaced by a plain
/// assignment, added to by `+=`, and kept when none is known.
fn assign_elements(state: &mut State, name: String, append: bool, elements: Vec<String>) {
    if elements.is_empty() {
        return;
    }
    let maybe = Rc::make_mut(state.maybe.get_or_insert_default());
    let held = maybe.arrays.entry(name).or_default();
    if !append {
        held.clear();
    }
    for e in elements {
        if held.contains(&e) {
            continue;
        }
        if held.len() >= MAX_MAYBE_VALUES {
            maybe.overflow = true;
            return;
        }
        held.push(e);
    }
}

/// The word once for each element an array it reads may hold
/// ([`Maybe::arrays`]): every `$p`, `${p}` and `${p[i]}` (`@` and `*`
/// included) of such an array replaced by that element, as quoted text.
/// Empty when the word reads no such array.
fn with_elements(word: &Word, state: &State) -> Vec<Word> {
    let Some(arrays) = state.maybe.as_deref().map(|m| &m.arrays) else { return Vec::new() };
    let Some(elements) = array_read(&word.0, arrays) else { return Vec::new() };
    elements.iter().map(|e| Word(replaced_elements(&word.0, arrays, e))).collect()
}

/// The elements of the first array the parts read.
fn array_read<'s>(parts: &[Part], arrays: &'s BTreeMap<String, Vec<String>>) -> Option<&'s Vec<String>> {
    parts.iter().find_map(|p| match p {
        Part::Param(param) if reads_element(param) => arrays.get(&param.name),
        Part::Double(inner) => array_read(inner, arrays),
        _ => None,
    })
}

/// The first variable the parts read through an operator (`${f/x/}`) whose
/// value is only known at run time but which may hold known values
/// ([`Maybe::arrays`]), with those values.
fn operated_alternatives(parts: &[Part], state: &State) -> Option<(String, Vec<String>)> {
    let arrays = &state.maybe.as_ref()?.arrays;
    parts.iter().find_map(|p| match p {
        Part::Param(param)
            if !param.rest.is_empty()
                && !matches!(param.rest.first(), Some(Part::Lit { text, .. }) if text.starts_with('['))
                && state.var(&param.name).is_none_or(|v| v.0.is_none()) =>
        {
            arrays.get(&param.name).map(|values| (param.name.clone(), values.clone()))
        }
        Part::Double(inner) => operated_alternatives(inner, state),
        _ => None,
    })
}

/// Whether an expansion reads an element as it is: `$p`, `${p}` or
/// `${p[i]}`, the subscript perhaps only known when it runs (`${p[$i]}`).
fn reads_element(param: &Param) -> bool {
    let closes = |text: &str| text.ends_with(']') && text.matches(']').count() == 1;
    match param.rest.as_slice() {
        [] => true,
        [Part::Lit { text, .. }] => text.starts_with('[') && closes(text),
        [Part::Lit { text: first, .. }, middle @ .., Part::Lit { text: last, .. }] => {
            first.starts_with('[')
                && !first.contains(']')
                && closes(last)
                && middle.iter().all(|p| matches!(p, Part::Param(_) | Part::Arith(_) | Part::Sub(_)))
        }
        _ => false,
    }
}

/// The parts with every element read of a known array replaced by `element`.
fn replaced_elements(parts: &[Part], arrays: &BTreeMap<String, Vec<String>>, element: &str) -> Vec<Part> {
    parts
        .iter()
        .map(|p| match p {
            Part::Param(param) if reads_element(param) && arrays.contains_key(&param.name) => {
                Part::Lit { text: Text::from(element), quoted: true }
            }
            Part::Double(inner) => Part::Double(replaced_elements(inner, arrays, element)),
            other => other.clone(),
        })
        .collect()
}

/// An argument as the words it makes: an unquoted expansion is split into
/// words (`x="rm -rf /"; $x`, `IFS=,; $c`). Inlined: it runs for every
/// word that expands a parameter, and a call would copy the `Arg` twice.
#[inline(always)]
fn push_fields(args: &mut Vec<Arg>, arg: Arg, ifs: Option<&str>, word: &Word) {
    if super::fields::splits(&arg) {
        args.extend(super::fields::fields(arg, ifs, has_literal(word)));
    } else {
        args.push(arg);
    }
}

/// Whether the word holds a parameter expansion, perhaps in double quotes.
fn expands(word: &Word) -> bool {
    word.0.iter().any(|p| matches!(p, Part::Param(_) | Part::Double(_)))
}

/// Whether expanding the parts runs a command (or an arithmetic expression, which may).
fn runs_commands(parts: &[Part]) -> bool {
    parts.iter().any(|p| match p {
        Part::Sub(_) | Part::ProcIn(_) | Part::ProcOut(_) | Part::Arith(_) => true,
        Part::Double(inner) => runs_commands(inner),
        Part::Param(param) => runs_commands(&param.rest),
        Part::Lit { .. } => false,
    })
}

/// The word after the operator of `${x:-word}` and its kin, as parts.
fn default_of(param: &Param) -> Option<Vec<Part>> {
    let (Part::Lit { text, quoted }, tail) = param.rest.split_first()? else { return None };
    let operator = text.strip_prefix(':').unwrap_or(text);
    let word = operator.strip_prefix(['-', '=', '+'])?;
    let mut parts = Vec::with_capacity(param.rest.len());
    if !word.is_empty() {
        parts.push(Part::Lit { text: Text::from(word), quoted: *quoted });
    }
    parts.extend(tail.iter().cloned());
    Some(parts)
}

/// Whether a word has text that is not an unquoted expansion.
fn has_literal(word: &Word) -> bool {
    word.0.iter().any(|p| matches!(p, Part::Lit { .. } | Part::Double(_)))
}

/// Two texts one after the other, unless either is unknown or the result is too long.
fn concat(a: Option<String>, b: Option<String>) -> Option<String> {
    let mut a = a?;
    a.push_str(&b?);
    decode::bounded(a)
}

/// Code only known at run time: remember where it comes from.
fn unknown_code(inv: &mut Invocation, word: &Arg) {
    inv.code_unknown = true;
    inv.code_from.extend(word.subs.iter().cloned());
    inv.code_from.extend(word.procs.iter().cloned());
}

/// Words joined with spaces, counting what their substitutions print.
fn join_code(args: &[Arg]) -> Option<Arg> {
    let texts: Option<Vec<&str>> = args.iter().map(Arg::code).collect();
    let texts = texts?;
    if texts.is_empty() {
        return None;
    }
    Some(Arg::fixed(&texts.join(" ")))
}

/// Known arguments joined with spaces, as `eval` and `watch` join them.
fn join_known(args: &[Arg]) -> Option<Arg> {
    let texts: Option<Vec<&str>> = args.iter().map(Arg::known).collect();
    let texts = texts?;
    if texts.is_empty() {
        return None;
    }
    Some(Arg::fixed(&texts.join(" ")))
}

/// The value of `$(echo words)`, which agents use to obscure a word.
/// What `mktemp` prints: the new file or folder it makes, named from its
/// template (`tmp.XXXXXXXXXX` by default) under `-p DIR`, `--tmpdir=DIR` or
/// `$TMPDIR` (`/tmp` when not known) when it has no template or is given
/// `-t`/`--tmpdir`, else the template as written. Its random part stays
/// `X`s: what matters is the folder it is made in.
fn mktemp_value(words: &[Word], state: &State) -> Option<String> {
    let (mut dir, mut in_tmp, mut template) = (None::<String>, false, None::<&str>);
    let mut words = words.iter();
    while let Some(w) = words.next() {
        let t = w.bare()?;
        match t {
            "-p" => dir = Some(words.next()?.bare()?.to_string()),
            "--tmpdir" => in_tmp = true,
            _ if t.starts_with("--tmpdir=") => dir = t.strip_prefix("--tmpdir=").map(String::from),
            "--directory" | "--quiet" | "--dry-run" => {}
            _ if t.len() > 1 && t.starts_with('-') && t[1..].chars().all(|c| matches!(c, 'd' | 'q' | 'u' | 't')) => {
                in_tmp |= t.contains('t');
            }
            _ if !t.starts_with('-') && template.is_none() => template = Some(t),
            _ => return None,
        }
    }
    let name = template.unwrap_or("tmp.XXXXXXXXXX");
    if template.is_some() && !in_tmp && dir.is_none() {
        return Some(name.to_string());
    }
    let tmp = state.var("TMPDIR").and_then(|v| v.0).filter(|d| !d.is_empty()).unwrap_or("/tmp");
    Some(format!("{}/{name}", dir.as_deref().unwrap_or(tmp).trim_end_matches('/')))
}

fn echo_value(script: &Script, state: &State) -> Option<String> {
    let [item] = script.0.as_slice() else { return None };
    if !item.list.rest.is_empty() {
        return None;
    }
    let [Command::Simple(simple)] = item.list.first.commands.as_slice() else { return None };
    let (first, rest) = simple.words.split_first()?;
    if first.bare() == Some("pwd") && simple.redirects.is_empty() {
        // `$(pwd)`, `` `pwd` ``, `$(pwd -P)`: the working directory, when known.
        return match rest {
            [] => state.cwd.as_deref().map(String::from),
            [flag] if matches!(flag.bare(), Some("-L" | "-P")) => state.cwd.as_deref().map(String::from),
            _ => None,
        };
    }
    if first.bare() == Some("mktemp") && simple.redirects.is_empty() {
        return mktemp_value(rest, state);
    }
    if first.bare() != Some("echo") || !simple.redirects.is_empty() {
        return None;
    }
    let mut words = Vec::new();
    for w in rest {
        let mut text = String::new();
        for part in &w.0 {
            match part {
                Part::Lit { text: t, .. } => text.push_str(t),
                Part::Double(inner) => {
                    for p in inner {
                        match p {
                            Part::Lit { text: t, .. } => text.push_str(t),
                            _ => return None,
                        }
                    }
                }
                Part::Param(p) if p.rest.is_empty() => text.push_str(state.var(&p.name)?.0?),
                _ => return None,
            }
        }
        if text.starts_with('-') {
            return None;
        }
        words.push(text);
    }
    Some(words.join(" "))
}

/// The parts of an argument that may name a file: the argument, the value of
/// `--opt=value`, and the file of curl's `@file` and `name=@file`.
fn path_candidates(text: &str) -> impl Iterator<Item = &str> {
    let mut out: [Option<&str>; 2] = [None, None];
    if let Some(file) = text.strip_prefix('@').or_else(|| text.strip_prefix('<')) {
        out[0] = Some(file);
    } else if text.starts_with("--") {
        if let Some((_, value)) = text.split_once('=') {
            out[0] = Some(value.trim_start_matches('@'));
        }
    } else if !text.starts_with('-') {
        out[0] = Some(text);
        // What follows the first `=@`, else the first `=<`, else `key=value`
        // with no `/` in the key. Most operands hold no `=`, which one scan
        // of eight bytes a step tells.
        if crate::bytes::contains(text.as_bytes(), b'=') {
            let after = |mark: u8| {
                let at = text.as_bytes().windows(2).position(|w| w == [b'=', mark])?;
                text.get(at + 2..)
            };
            let marked = after(b'@').or_else(|| after(b'<'));
            out[1] = match marked {
                Some(value) => Some(value),
                None => {
                    text.split_once('=').filter(|(key, value)| !key.contains('/') && !value.is_empty()).map(|(_, v)| v)
                }
            };
        }
    }
    out.into_iter().flatten().filter(|s| !s.is_empty() && !has_scheme_separator(s))
}

/// Whether `text` holds `://`, as a URL does: `contains("://")` without
/// setting up a substring searcher for each of the few short words it sees,
/// and read three bytes at a time only when it holds a `:`.
fn has_scheme_separator(text: &str) -> bool {
    crate::bytes::contains(text.as_bytes(), b':') && text.as_bytes().windows(3).any(|w| w == b"://")
}

/// The operands a known writer writes.
fn written_operands(program: &str, argv: &[Arg]) -> Vec<String> {
    // The operands as paths, worked out only for the programs below.
    let operands =
        || -> Vec<String> { argv.iter().skip(1).filter_map(Arg::path).filter(|t| !t.starts_with('-')).collect() };
    match program {
        "rm" | "rmdir" | "unlink" | "touch" | "mkdir" | "truncate" | "shred" | "tee" | "mv" => operands(),
        "chmod" | "chown" | "chgrp" => {
            let reference = argv.iter().any(|a| a.known().is_some_and(|t| t.starts_with("--reference")));
            operands().into_iter().skip(usize::from(!reference)).collect()
        }
        "cp" | "install" | "ln" | "rsync" => {
            if let Some(i) = argv.iter().position(|a| matches!(a.known(), Some("-t") | Some("--target-directory"))) {
                return argv.get(i + 1).and_then(Arg::known).map(|t| vec![t.to_string()]).unwrap_or_default();
            }
            let mut operands = operands();
            if operands.len() >= 2 { operands.pop().map(|last| vec![last]).unwrap_or_default() } else { Vec::new() }
        }
        "dd" => operands().iter().filter_map(|t| t.strip_prefix("of=")).map(str::to_string).collect(),
        "sed" | "perl" => {
            let in_place = argv
                .iter()
                .any(|a| a.known().is_some_and(|t| t.starts_with("-i") || t.starts_with("--in-place") || t == "-pi"));
            let scripted = argv.iter().any(|a| matches!(a.known(), Some("-e") | Some("-f")));
            if in_place { operands().into_iter().skip(usize::from(!scripted)).collect() } else { Vec::new() }
        }
        _ => Vec::new(),
    }
}
