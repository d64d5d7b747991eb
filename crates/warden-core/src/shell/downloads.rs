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
