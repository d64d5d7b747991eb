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
const GIT_GLOBAL_VALUES: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"];

/// Options that make `git log` print what changed in the files it names.
const GIT_LOG_CONTENT: &[&str] = &["-p", "-u", "--patch", "--patch-with-stat", "--patch-with-raw", "--cc", "-L"];

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
            out.push(file);
        }
    }
    out.retain(|f| !f.is_empty());
    out
}

/// The index of `git`'s subcommand, after its own options.
fn git_subcommand(argv: &[Arg]) -> Option<usize> {
    let mut i = 1;
    loop {
        let t = argv.get(i).and_then(Arg::known)?;
        if GIT_GLOBAL_VALUES.contains(&t) {
            i += 2;
        } else if t.starts_with('-') {
            i += 1;
        } else {
            return Some(i);
        }
    }
}

/// Whether a `git` subcommand only looks at the paths it is given, by name
/// and in the index, never printing or storing their contents: `status`,
/// `ls-files`, `check-ignore`, `check-attr`, `rm --cached` (it leaves the
/// file alone, which is how a committed `.env` is taken out of the index),
/// `restore --staged` and `reset` (the index only), and `log` without a
/// patch.
fn git_looks_only(argv: &[Arg]) -> bool {
    let Some(i) = git_subcommand(argv) else { return false };
    let Some(sub) = argv.get(i).and_then(Arg::known) else { return false };
    let rest = || argv.iter().skip(i + 1).filter_map(Arg::known);
    match sub {
        "status" | "ls-files" | "check-ignore" | "check-attr" => true,
        "rm" => rest().any(|a| a == "--cached"),
        "restore" => rest().any(|a| a == "--staged" || a == "-S") && !rest().any(|a| a == "--worktree" || a == "-W"),
        "reset" => !rest().any(|a| matches!(a, "--hard" | "--merge" | "--keep" | "-p" | "--patch")),
        "log" | "shortlog" => !rest().any(|a| GIT_LOG_CONTENT.contains(&a) || (a.starts_with("-L") && a.len() > 2)),
        _ => false,
    }
}

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
