//! The files a downloader writes, read from its words as it reads them:
//! `curl -o F`, `curl -so F` (options cluster), `curl -O URL` (the URL's
//! last segment, under `--output-dir`), `wget -qO F`, wget's default of the
//! URL's last segment under `-P DIR`, `aria2c -o F -d DIR`, `fetch -o F`,
//! `xh -d -o F`, `lwp-download URL FILE`. A download a later command runs is
//! judged as running downloaded code.

use super::commands::Arg;
use crate::prelude::*;

/// How one downloader names the files it writes.
struct Spec {
    /// Short options that take a value.
    values: &'static str,
    /// The short option naming the file written.
    output: Option<char>,
    /// The short option naming the folder remote names are written in.
    dir: Option<char>,
    /// The short option that writes each URL to its remote name.
    remote: Option<char>,
    /// Long options (without their `--`) naming the file written.
    long_output: &'static [&'static str],
    /// Long options naming the folder remote names are written in.
    long_dir: &'static [&'static str],
    /// Long options that write each URL to its remote name.
    long_remote: &'static [&'static str],
    /// Without an output option, each URL is written to its remote name.
    remote_by_default: bool,
    /// An operand after the URL names the file (`lwp-download URL FILE`).
    file_operand: bool,
    /// The folder option also holds a relative output file (`curl --output-dir D -o F`).
    dir_holds_output: bool,
}

const NONE: Spec = Spec {
    values: "",
    output: None,
    dir: None,
    remote: None,
    long_output: &[],
    long_dir: &[],
    long_remote: &[],
    remote_by_default: false,
    file_operand: false,
    dir_holds_output: false,
};

fn spec(program: &str) -> Option<Spec> {
    Some(match program {
        "curl" => Spec {
            values: "AbcCdDeEFHKmoPQrTuUwxXyYz",
            output: Some('o'),
            remote: Some('O'),
            long_output: &["output"],
            long_dir: &["output-dir"],
            long_remote: &["remote-name", "remote-name-all"],
            dir_holds_output: true,
            ..NONE
        },
        "wget" => Spec {
            values: "OoaePtTwQUiBlARDIX",
            output: Some('O'),
            dir: Some('P'),
            long_output: &["output-document"],
            long_dir: &["directory-prefix"],
            remote_by_default: true,
            ..NONE
        },
        "aria2c" => Spec {
            values: "odsxkjiUtlmCN",
            output: Some('o'),
            dir: Some('d'),
            long_output: &["out"],
            long_dir: &["dir"],
            remote_by_default: true,
            dir_holds_output: true,
            ..NONE
        },
        "fetch" => {
            Spec { values: "oBNST", output: Some('o'), long_output: &["output"], remote_by_default: true, ..NONE }
        }
        "http" | "https" | "xh" => Spec {
            values: "oaA",
            output: Some('o'),
            remote: Some('d'),
            long_output: &["output"],
            long_remote: &["download"],
            ..NONE
        },
        "lwp-download" => Spec { remote_by_default: true, file_operand: true, ..NONE },
        _ => return None,
    })
}

/// The files `program` writes what it downloads to, as written (not normalized).
pub fn files(program: &str, argv: &[Arg]) -> Vec<String> {
    let Some(spec) = spec(program) else { return Vec::new() };
    let mut outputs: Vec<&str> = Vec::new();
    let mut dir: Option<&str> = None;
    let mut remote = false;
    let mut operands: Vec<&str> = Vec::new();
    let mut options = true;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        i += 1;
        let Some(t) = a.known() else { continue };
        if !options || t == "-" || !t.starts_with('-') {
            operands.push(t);
            continue;
        }
        if t == "--" {
            options = false;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            let takes = spec.long_output.contains(&name) || spec.long_dir.contains(&name);
            let value = if takes && attached.is_none() {
                i += 1;
                argv.get(i - 1).and_then(Arg::known)
            } else {
                attached
            };
            if spec.long_output.contains(&name) {
                outputs.extend(value);
            } else if spec.long_dir.contains(&name) {
                dir = value.or(dir);
            } else if spec.long_remote.contains(&name) {
                remote = true;
            }
            continue;
        }
        for (k, c) in t.char_indices().skip(1) {
            if Some(c) == spec.remote {
                remote = true;
            }
            if !spec.values.contains(c) {
                continue;
            }
            let value = super::embedded::cluster_value(argv, t, k, c, &mut i);
            if Some(c) == spec.output {
                outputs.extend(value);
            } else if Some(c) == spec.dir {
                dir = value.or(dir);
            }
            break;
        }
    }
    let urls: Vec<&str> = operands.iter().copied().filter(|o| o.contains("://")).collect();
    if spec.file_operand
        && let Some(file) = operands.iter().find(|o| !o.contains("://"))
    {
        outputs.push(file);
    }
    let under = |name: &str| match dir {
        Some(d) if !name.starts_with('/') => format!("{}/{name}", d.trim_end_matches('/')),
        _ => name.to_string(),
    };
    let mut out: Vec<String> = outputs
        .iter()
        .filter(|f| **f != "-")
        .map(|f| if spec.dir_holds_output { under(f) } else { (*f).to_string() })
        .collect();
    if remote || (spec.remote_by_default && outputs.is_empty()) {
        for url in urls {
            let name = url.split(['?', '#']).next().unwrap_or("").rsplit('/').next().unwrap_or("");
            let name = if name.is_empty() { "index.html" } else { name };
            out.push(under(name));
        }
    }
    out
}

/// What an archive or compression tool writes out of what it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unpacked {
    /// A folder the archive's files are extracted into (`tar x -C DIR`,
    /// `unzip -d DIR`, `7z x -oDIR`; the working directory by default).
    Into(String),
    /// The file a compressed file is decompressed to (`gunzip a.sh.gz` writes `a.sh`).
    File(String),
}

/// Short options of `tar` that take a value, the folder's (`-C`) among them.
const TAR_VALUES: &str = "bCfFgHIKLNTVX";
/// Long options of `tar` that take a value, which may be the next word.
const TAR_LONG_VALUES: &[&str] = &[
    "file",
    "exclude",
    "exclude-from",
    "files-from",
    "transform",
    "xform",
    "strip-components",
    "owner",
    "group",
    "mode",
    "format",
    "blocking-factor",
    "to-command",
    "use-compress-program",
    "newer",
    "after-date",
    "label",
    "checkpoint-action",
    "index-file",
    "record-size",
    "tape-length",
    "suffix",
    "mtime",
    "warning",
];
/// Short options of `unzip` that take a value, the folder's (`-d`) among them.
const UNZIP_VALUES: &str = "dx";
/// Compressed files' endings each decompressor takes off the name it writes.
const COMPRESSED: &[&str] = &[".gz", ".tgz", ".bz2", ".xz", ".zst", ".lz", ".lzma", ".Z", ".z"];

/// What `program` unpacks, as written (not normalized); nothing for a
/// program that does not unpack or is told to list, test or print instead.
pub fn unpacked(program: &str, argv: &[Arg]) -> Vec<Unpacked> {
    match program {
        "tar" | "bsdtar" | "gtar" => tar(argv),
        "unzip" => unzip(argv),
        "7z" | "7za" | "7zz" | "7zr" => seven_zip(argv).into_iter().collect(),
        "gunzip" | "bunzip2" | "unxz" | "unzstd" | "unlzma" | "uncompress" => decompressed(argv),
        "gzip" | "bzip2" | "xz" | "zstd" | "lzma" | "pigz" | "lzip"
            if argv.iter().skip(1).filter_map(Arg::known).any(decompresses) =>
        {
            decompressed(argv)
        }
        _ => Vec::new(),
    }
}

/// Whether a compressor's word asks it to decompress (`-d`, `-dc`, `--decompress`).
fn decompresses(word: &str) -> bool {
    matches!(word, "--decompress" | "--uncompress")
        || word.strip_prefix('-').is_some_and(|c| !c.starts_with('-') && c.contains('d'))
}

/// The files decompressed from the compressed operands, unless the output goes to standard output.
fn decompressed(argv: &[Arg]) -> Vec<Unpacked> {
    let words: Vec<&str> = argv.iter().skip(1).filter_map(Arg::known).collect();
    let to_stdout = |w: &&str| {
        matches!(*w, "--stdout" | "--to-stdout")
            || w.strip_prefix('-').is_some_and(|c| !c.starts_with('-') && c.contains('c'))
    };
    if words.iter().any(to_stdout) {
        return Vec::new();
    }
    words
        .iter()
        .filter(|w| !w.starts_with('-'))
        .filter_map(|w| {
            let ending = COMPRESSED.iter().find(|e| w.len() > e.len() && w.ends_with(**e))?;
            let stem = &w[..w.len() - ending.len()];
            Some(Unpacked::File(if *ending == ".tgz" { format!("{stem}.tar") } else { stem.to_string() }))
        })
        .collect()
}

/// `tar` extracts (`x` in its first word's key letters, an `-x` cluster,
/// `--extract`, `--get`) into `-C DIR` / `--directory DIR`, else here.
fn tar(argv: &[Arg]) -> Vec<Unpacked> {
    let mut extract = false;
    let mut dir: Option<&str> = None;
    let mut members: Vec<&str> = Vec::new();
    // Old-style key letters take their values from the words after them, in order.
    let mut old_values = 0;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        i += 1;
        let Some(t) = a.known() else { continue };
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "extract" | "get" => extract = true,
                "directory" => {
                    dir = attached.or_else(|| {
                        i += 1;
                        argv.get(i - 1).and_then(Arg::known)
                    })
                }
                // A long option's value apart from it is no member.
                _ if attached.is_none() && TAR_LONG_VALUES.contains(&name) => i += 1,
                _ => {}
            }
            continue;
        }
        // The first word's key letters need no dash (`tar xzf a.tgz`).
        let (cluster, from) = match t.strip_prefix('-') {
            Some(_) if t.len() > 1 => (t, 1),
            None if i == 2 => (t, 0),
            _ if old_values > 0 => {
                old_values -= 1;
                continue;
            }
            _ => {
                members.push(t);
                continue;
            }
        };
        for (k, c) in cluster.char_indices().skip(from) {
            if c == 'x' {
                extract = true;
            }
            if !TAR_VALUES.contains(c) {
                continue;
            }
            if from == 0 {
                old_values += 1;
                continue;
            }
            let value = super::embedded::cluster_value(argv, cluster, k, c, &mut i);
            if c == 'C' {
                dir = value.or(dir);
            }
            break;
        }
    }
    if !extract {
        return Vec::new();
    }
    into(dir.unwrap_or("."), &members)
}

/// The folder an archive is extracted into, or only the members named of it
/// (`tar xzf a.tgz data.csv`, `unzip a.zip 'data/*'`): each member a file or
/// folder under it, a member with a wildcard the folder before its first one.
fn into(dir: &str, members: &[&str]) -> Vec<Unpacked> {
    let dir = dir.trim_end_matches('/');
    let dir = if dir.is_empty() { "/" } else { dir };
    if members.is_empty() {
        return vec![Unpacked::Into(dir.to_string())];
    }
    members
        .iter()
        .map(|m| {
            let literal: Vec<&str> =
                m.split('/').take_while(|seg| !seg.contains(['*', '?', '['])).filter(|s| !s.is_empty()).collect();
            Unpacked::Into(
                format!("{}/{}", dir.trim_end_matches('/'), literal.join("/")).trim_end_matches('/').to_string(),
            )
        })
        .collect()
}

/// `unzip` extracts into `-d DIR`, else here; `-l`, `-t`, `-v`, `-p`, `-c`
/// and `-Z` list, test or print instead.
fn unzip(argv: &[Arg]) -> Vec<Unpacked> {
    let mut dir: Option<&str> = None;
    let mut operands: Vec<&str> = Vec::new();
    let mut excluding = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        i += 1;
        let Some(t) = a.known() else { continue };
        if t == "-x" {
            // The names after `-x` are left out, up to the next option.
            excluding = true;
            continue;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty() && !c.starts_with('-')) else {
            if !excluding || t.starts_with('-') {
                excluding = false;
                operands.push(t);
            }
            continue;
        };
        excluding = false;
        for (k, c) in t.char_indices().skip(1) {
            if matches!(c, 'l' | 't' | 'v' | 'p' | 'c' | 'Z') && !cluster[..k - 1].contains(['d', 'x']) {
                return Vec::new();
            }
            if !UNZIP_VALUES.contains(c) {
                continue;
            }
            let value = super::embedded::cluster_value(argv, t, k, c, &mut i);
            if c == 'd' {
                dir = value.or(dir);
            }
            break;
        }
    }
    // The first operand is the archive; the rest name the members extracted.
    into(dir.unwrap_or("."), operands.get(1..).unwrap_or(&[]))
}

/// `7z x` and `7z e` extract into `-oDIR`, else here.
fn seven_zip(argv: &[Arg]) -> Option<Unpacked> {
    if !matches!(argv.get(1).and_then(Arg::known), Some("x" | "e")) {
        return None;
    }
    let dir = argv.iter().skip(2).filter_map(Arg::known).find_map(|t| t.strip_prefix("-o")).filter(|d| !d.is_empty());
    Some(Unpacked::Into(dir.unwrap_or(".").to_string()))
}
