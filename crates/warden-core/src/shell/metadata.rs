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
    class.is(super::programs::Table::MetadataOnly)
        && !(program == "tree" && argv.iter().any(|a| a.known() == Some("--fromfile")))
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
