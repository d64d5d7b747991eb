//! Programs that look at files without reading what is in them.
//!
//! `ls -l ~/.ssh`, `stat ~/.ssh/id_rsa`, `test -e ~/.ssh/id_rsa`, `du -sh
//! ~/.ssh` and `find ~/.ssh -name '*.pub'` learn names, sizes, modes and
//! times, never contents, so their operands are not reads of a protected
//! path. What they run or delete is still judged: `find -exec cat {} \;`
//! runs `cat` on every file under the roots, `find -delete` deletes them,
//! and a redirection is a write wherever it points. The options that make
//! one of them read a file's contents (`--files0-from`, `du -X`, `tree
//! --fromfile`) are reads, and `find -fprint FILE`, `-fprintf`, `-fls` write.
//! `file` is not here: it reads the first bytes of a file and may print
//! strings found in them.

use super::commands::Arg;
use crate::prelude::*;

/// Programs whose operands are looked at, not read.
pub const METADATA_ONLY: &[&str] = &[
    "ls", "dir", "vdir", "stat", "du", "find", "test", "[", "[[", "tree", "realpath", "readlink", "namei", "lsattr",
    "getfacl", "exa", "eza", "lsd", "df",
];

/// Options whose value is a file these programs read the contents of.
const CONTENT_OPTIONS: &[&str] = &["--files0-from", "-files0-from", "--exclude-from", "-X", "--from-file"];

/// `find` options whose value is a file it writes.
const FIND_WRITES: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

/// Whether `program`'s operands are only looked at.
pub fn only_metadata(program: &str, argv: &[Arg]) -> bool {
    only_metadata_of(program, super::programs::Class::of(program), argv)
}

/// [`only_metadata`] of a program whose [`Class`](super::programs::Class) is known.
pub fn only_metadata_of(program: &str, class: super::programs::Class, argv: &[Arg]) -> bool {
    // `tree --fromfile` prints the lines of the files it is given.
    (class.is(super::programs::Table::MetadataOnly)
        && !(program == "tree" && argv.iter().any(|a| a.known() == Some("--fromfile"))))
        || (program == "git" && git_looks_only(argv))
}

/// `git` options before the subcommand that take the next word.
const GIT_GLOBAL_VALUES: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace"];

/// The files of a repository whose committed contents a `git` command
/// prints, as written: `git show HEAD:.env`, `git cat-file -p main:.env`,
/// `git show :.env` (the index), `git log -L1,5:.env`.
pub fn git_blobs(argv: &[Arg]) -> Vec<&str> {
    let Some(at) = git_subcommand(argv) else { return Vec::new() };
    if !matches!(argv.get(at).and_then(Arg::known), Some("show" | "cat-file" | "log" | "grep")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for t in argv.iter().skip(at + 1).filter_map(Arg::known) {
        if let Some(range) = t.strip_prefix("-L") {
            out.extend(range.rsplit_once(':').map(|(_, file)| file));
        } else if !t.starts_with('-')
            && let Some((rev, file)) = t.split_once(':')
            && !rev.contains('/')
            && !file.starts_with("//")
        {
            // `:0:.env` names a stage of the index.
            let staged = file.strip_prefix(['0', '1', '2', '3']).and_then(|f| f.strip_prefix(':'));
            out.push(if rev.is_empty() { staged.unwrap_or(file) } else { file });
        }
    }
    out.retain(|f| !f.is_empty());
    out
}

/// The paths git's pathspecs with magic or backslashes name, as patterns: `:(glob).e*`,
/// `:(icase).ENV` (lowered, as the globs are written), `:/.env` and
/// `:(top).env` (from the top of the repository, taken here as from the
/// working directory). Exclusions (`:!x`, `:^x`, `:(exclude)x`) read nothing.
pub fn git_pathspecs(argv: &[Arg]) -> Vec<String> {
    let Some(at) = git_subcommand(argv) else { return Vec::new() };
    let mut out = Vec::new();
    for t in argv.iter().skip(at + 1).filter_map(Arg::known) {
        // A backslash quotes the next character in a pathspec (`'\.env'` is `.env`).
        if !t.starts_with(':') && t.contains('\\') {
            out.push(t.replace('\\', ""));
            continue;
        }
        let Some(spec) = t.strip_prefix(':') else { continue };
        let (magic, rest) = match spec.strip_prefix('(').and_then(|m| m.split_once(')')) {
            Some((long, rest)) => {
                (long.split(',').map(str::trim).map(str::to_ascii_lowercase).collect::<Vec<_>>(), rest)
            }
            None => {
                // Short magic: the signs before the pattern, up to an optional `:`.
                let signs = spec.bytes().take_while(|b| matches!(b, b'/' | b'!' | b'^')).count();
                let (signs, rest) = spec.split_at_checked(signs).unwrap_or((spec, ""));
                let rest = rest.strip_prefix(':').unwrap_or(rest);
                let magic = signs.chars().map(|c| if c == '/' { "top" } else { "exclude" }.to_string()).collect();
                (magic, rest)
            }
        };
        if rest.is_empty() || magic.iter().any(|m| m == "exclude") {
            continue;
        }
        out.push(if magic.iter().any(|m| m == "icase") { rest.to_lowercase() } else { rest.to_string() });
    }
    out
}

/// The index of `git`'s subcommand, the first word after its own options
/// (a word only known at run time included); `None` when there is none.
pub(crate) fn git_subcommand(argv: &[Arg]) -> Option<usize> {
    let mut i = 1;
    loop {
        match argv.get(i)?.known() {
            Some(t) if GIT_GLOBAL_VALUES.contains(&t) => i += 2,
            Some(t) if t.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
}

/// Whether a `git` subcommand only looks at the paths it is given, by name
/// and in the index, never printing, storing or writing their contents:
/// `ls-files`, `check-ignore`, `check-attr`, and, with no option but those
/// listed for them (an option git would read as a prefix of another, such
/// as `--patc`, is not listed, so it does not pass), `status`, `rm --cached`
/// (it leaves the file alone, which is how a committed `.env` is taken out
/// of the index), `restore --staged` and `reset` (the index only),
/// `update-index` marking entries (`--assume-unchanged`, `--skip-worktree`),
/// `diff` printing counts and names in place of the patch (`--stat`,
/// `--numstat`, `--name-only`, ...), and `log`/`shortlog` with names, counts
/// or commit fields only. A `-c`
/// setting before the subcommand (`diff.x.textconv`, `core.fsmonitor`) may
/// run code or print contents: then none passes.
fn git_looks_only(argv: &[Arg]) -> bool {
    let Some(i) = git_subcommand(argv) else { return false };
    let Some(sub) = argv.get(i).and_then(Arg::known) else { return false };
    let globals = argv.get(1..i).unwrap_or(&[]);
    if globals.iter().any(|a| a.known().is_none_or(|t| t.starts_with("-c") || t.starts_with("--config-env"))) {
        return false;
    }
    let words: Vec<&str> = match argv.get(i + 1..).unwrap_or(&[]).iter().map(Arg::known).collect() {
        Some(w) => w,
        None => return false,
    };
    // The option words, up to `--`.
    let options = || words.iter().copied().take_while(|w| *w != "--").filter(|w| w.starts_with('-') && w.len() > 1);
    let only_of = |allowed: &[&[&str]], valued: &[&str]| {
        options().all(|o| {
            allowed.iter().any(|list| list.contains(&o))
                || valued.iter().any(|v| o.strip_prefix(v).is_some_and(|r| r.starts_with('=')))
        })
    };
    let only = |allowed: &[&str], valued: &[&str]| only_of(&[allowed], valued);
    match sub {
        "ls-files" | "check-ignore" | "check-attr" => true,
        "status" => only(GIT_STATUS_OPTIONS, &["--porcelain", "--untracked-files", "--ignored", "--ignore-submodules"]),
        "rm" => options().any(|o| o == "--cached") && only(GIT_RM_OPTIONS, &[]),
        "restore" => options().any(|o| o == "--staged" || o == "-S") && only(GIT_RESTORE_OPTIONS, &["--source"]),
        "reset" => only(GIT_RESET_OPTIONS, &[]),
        // `--stat` and its kin print counts and names instead of the patch; `-p` beside them would print it.
        "diff" => {
            options()
                .any(|o| GIT_DIFF_SUMMARIES.contains(&o) || o.starts_with("--stat=") || o.starts_with("--dirstat="))
                && only_of(&[GIT_DIFF_SUMMARIES, GIT_DIFF_BESIDE], GIT_DIFF_VALUED)
        }
        "update-index" => options().next().is_some() && only(GIT_UPDATE_INDEX_OPTIONS, &[]),
        // `-5` limits the count; `--output=FILE` would write a file.
        "log" | "shortlog" => options().all(|o| {
            (GIT_LOG_OPTIONS.contains(&o)
                || GIT_LOG_VALUED.iter().any(|v| o.strip_prefix(v).is_some_and(|r| r.starts_with('='))))
                || o.get(1..).is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        }),
        _ => false,
    }
}

/// `git status` options that print no file's contents (`-v` prints the staged diff).
const GIT_STATUS_OPTIONS: &[&str] = &[
    "-s",
    "--short",
    "-b",
    "--branch",
    "--porcelain",
    "--long",
    "-z",
    "-u",
    "-uno",
    "-unormal",
    "-uall",
    "--untracked-files",
    "--ignored",
    "--no-renames",
    "--renames",
    "--show-stash",
    "--ahead-behind",
    "--no-ahead-behind",
];

/// `git rm` options besides `--cached` that keep it to the index.
const GIT_RM_OPTIONS: &[&str] = &[
    "--cached",
    "-r",
    "-q",
    "--quiet",
    "-f",
    "--force",
    "--ignore-unmatch",
    "-n",
    "--dry-run",
    "-rf",
    "-fr",
    "-rq",
    "-qr",
];

/// `git restore` options that keep it to the index (not `--worktree`, not `--patch`).
const GIT_RESTORE_OPTIONS: &[&str] = &["--staged", "-S", "-q", "--quiet", "-s"];

/// `git diff` options that print counts or names in place of the patch.
const GIT_DIFF_SUMMARIES: &[&str] = &[
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--dirstat",
    "--quiet",
    "--raw",
    "--no-patch",
    "-s",
    "--compact-summary",
];

/// `git diff` options allowed beside a summary besides the other summaries:
/// none prints a patch, runs a program (`--ext-diff`) or converts a file's
/// text (`--textconv`).
const GIT_DIFF_BESIDE: &[&str] = &[
    "--summary",
    "--cached",
    "--staged",
    "--no-color",
    "--exit-code",
    "-z",
    "-M",
    "--find-renames",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "-R",
    "--color",
    "-w",
    "--ignore-all-space",
    "-b",
    "--ignore-space-change",
    "--histogram",
    "--patience",
    "--minimal",
];

/// `git diff` options written `--name=value` beside a summary.
const GIT_DIFF_VALUED: &[&str] =
    &["--stat", "--dirstat", "--diff-filter", "--stat-width", "--stat-count", "--color", "--color-moved"];

/// `git update-index` options that only mark or refresh entries (not `--add`, `--cacheinfo`, `--chmod`).
const GIT_UPDATE_INDEX_OPTIONS: &[&str] = &[
    "--assume-unchanged",
    "--no-assume-unchanged",
    "--skip-worktree",
    "--no-skip-worktree",
    "--refresh",
    "--really-refresh",
    "-q",
    "--ignore-missing",
    "--unmerged",
];

/// `git reset` options that keep it to the index (not `--hard`, `--merge`, `--keep`, `--patch`).
const GIT_RESET_OPTIONS: &[&str] = &["-q", "--quiet", "--mixed", "--soft", "--no-refresh", "--refresh"];

/// `git log` options that print names, counts or commit fields, never a patch or a file.
const GIT_LOG_OPTIONS: &[&str] = &[
    "--oneline",
    "--stat",
    "--shortstat",
    "--numstat",
    "--summary",
    "--name-only",
    "--name-status",
    "--follow",
    "--graph",
    "--all",
    "--decorate",
    "--no-decorate",
    "--abbrev-commit",
    "--no-merges",
    "--merges",
    "--first-parent",
    "--reverse",
    "-z",
    "-n",
    "--no-color",
    "--no-patch",
    "-s",
    "-i",
    "--regexp-ignore-case",
    "--full-history",
    "--no-renames",
    "--relative-date",
];

/// `git log` options written `--name=value` whose value is no file and prints no contents.
const GIT_LOG_VALUED: &[&str] = &[
    "--format",
    "--pretty",
    "--max-count",
    "--skip",
    "--since",
    "--after",
    "--until",
    "--before",
    "--author",
    "--committer",
    "--grep",
    "--date",
    "--decorate",
    "--abbrev",
    "--diff-filter",
];

/// The files `find` writes with `-fprint FILE` and its kin, as written.
pub fn written(program: &str, argv: &[Arg]) -> Vec<String> {
    if program != "find" {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        if a.known().is_some_and(|t| FIND_WRITES.contains(&t))
            && let Some(file) = args.next().and_then(Arg::path)
        {
            out.push(file);
        }
    }
    out
}

/// The files a metadata-only program reads the contents of, as written.
pub fn content_read(program: &str, class: super::programs::Class, argv: &[Arg]) -> Vec<String> {
    if !only_metadata_of(program, class, argv) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        let Some(t) = a.known() else { continue };
        if CONTENT_OPTIONS.contains(&t) {
            if let Some(file) = args.next().and_then(Arg::path) {
                out.push(file);
            }
        } else if let Some((option, file)) = t.split_once('=')
            && CONTENT_OPTIONS.contains(&option)
        {
            out.push(file.to_string());
        }
    }
    out
}
