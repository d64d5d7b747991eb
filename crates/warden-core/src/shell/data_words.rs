//! Words that are data, not files, although a program's other operands are
//! files it reads: a search's pattern (`grep -rn "/etc/shadow" .`,
//! `rg '.env'`, `git grep`, `git log -S/-G/--grep`), a JSON filter (`jq
//! '.env' config.json`), and the globs an archiver, copier or search leaves
//! out (`tar --exclude=.env`, `rsync --exclude .env`, `zip -x .env`,
//! `grep --exclude=.env`). Reading them as paths made the careful command
//! (keeping a secret out of an archive) a read of the secret.
//!
//! Only the words are spared: a file a search reads (`grep -f FILE`, `jq
//! --slurpfile NAME FILE`, the files after the pattern) is still a read.
//! A glob a search, archiver or copier takes in ([`included`]) narrows the
//! folders it reads to the files of that name under them: `grep -r KEY .
//! --include='.env*'` reads `.env`.

use super::commands::Arg;
use crate::prelude::*;

/// Options of every search whose value is a pattern or a count, not a file.
const SEARCH_VALUES: &[&str] =
    &["-e", "--regexp", "-A", "-B", "-C", "--context", "--after-context", "--before-context", "-m", "--max-count"];
/// Options of `grep` alone that take a value (its `--color` takes one only after `=`).
const GREP_VALUES: &[&str] = &["-d", "--directories", "-D", "--devices", "--label"];
/// Options of `rg` alone that take a value.
const RG_VALUES: &[&str] =
    &["-g", "--glob", "--iglob", "-t", "--type", "--type-not", "-j", "--threads", "-M", "--max-columns", "--encoding"];

/// Options whose value is a glob of what to leave out or take in.
const GLOB_VALUES: &[&str] = &["--exclude", "--include", "--exclude-dir", "--include-dir", "--filter", "--ignore"];
/// `git log`-like options whose value is a pattern or a text.
const GIT_VALUES: &[&str] = &["-S", "-G", "--grep", "--author", "--committer", "--format", "--pretty", "-e"];

/// The indices of `argv`'s words that are data, not files.
pub fn data_words(program: &str, argv: &[Arg]) -> Vec<usize> {
    match program {
        "grep" | "egrep" | "fgrep" | "zgrep" => search(argv, 1, GREP_VALUES),
        // `rg --files` lists the files it would search: every operand is a path.
        "rg" if argv.iter().any(|a| matches!(a.known(), Some("--files" | "--type-list"))) => Vec::new(),
        "rg" => search(argv, 1, RG_VALUES),
        "ag" | "ack" | "ugrep" | "pcregrep" | "pcre2grep" => search(argv, 1, &[]),
        "git" => git(argv),
        "jq" | "gojq" | "jaq" | "yq" => filter(argv),
        "tar" | "bsdtar" | "gtar" | "rsync" | "zip" => globs(program, argv),
        _ => Vec::new(),
    }
}

/// The value of the option at `i`, attached (`--exclude=x`, `-ex`) or the next word: its index when it is the next word.
fn value_at(argv: &[Arg], i: usize, options: &[&str]) -> Option<Option<usize>> {
    let t = argv.get(i)?.known()?;
    // An option is compared only when its first byte is the word's (most words are paths, no option).
    if super::programs::listed(options, t) {
        return Some(Some(i + 1));
    }
    let first = t.as_bytes().first();
    let attached = options.iter().any(|o| {
        (o.is_empty() || o.as_bytes().first() == first)
            && t.strip_prefix(o)
                .is_some_and(|rest| if o.starts_with("--") { rest.starts_with('=') } else { !rest.is_empty() })
    });
    attached.then_some(None)
}

/// A search from word `from` on: option values, then the pattern (the first
/// operand) unless `-e`/`-f` named it.
fn search(argv: &[Arg], from: usize, own: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    let named = argv.iter().skip(from).filter_map(Arg::known).any(|t| {
        matches!(t, "-e" | "--regexp" | "-f" | "--file")
            || t.starts_with("--regexp=")
            || t.starts_with("--file=")
            || (t.starts_with('-') && !t.starts_with("--") && t.len() > 2 && t[1..].starts_with(['e', 'f']))
    });
    let mut pattern_found = named;
    let mut options = true;
    let mut i = from;
    while let Some(a) = argv.get(i) {
        let Some(t) = a.known() else {
            i += 1;
            continue;
        };
        if options && t == "--" {
            options = false;
        } else if options && t.starts_with('-') && t.len() > 1 {
            let values = value_at(argv, i, SEARCH_VALUES)
                .or_else(|| value_at(argv, i, own))
                .or_else(|| value_at(argv, i, GLOB_VALUES));
            if let Some(next) = values {
                out.push(i);
                if let Some(n) = next {
                    out.push(n);
                    i = n;
                }
            }
        } else if !pattern_found {
            pattern_found = true;
            out.push(i);
        }
        i += 1;
    }
    out
}

/// `git grep` is a search after its subcommand; `git log`, `show` and their
/// kin take patterns and texts as option values.
fn git(argv: &[Arg]) -> Vec<usize> {
    let Some(sub) = super::metadata::git_subcommand(argv) else { return Vec::new() };
    if argv.get(sub).and_then(Arg::known) == Some("grep") {
        return search(argv, sub + 1, &[]);
    }
    let mut out = Vec::new();
    for i in sub + 1..argv.len() {
        if let Some(next) = value_at(argv, i, GIT_VALUES) {
            out.push(i);
            out.extend(next);
        }
    }
    out
}

/// A JSON or YAML filter: the first operand unless `-f`/`--from-file` names
/// a filter file; `--arg`/`--argjson` values are data too.
fn filter(argv: &[Arg]) -> Vec<usize> {
    let mut out = Vec::new();
    let from_file = argv.iter().filter_map(Arg::known).any(|t| matches!(t, "-f" | "--from-file"));
    let mut found = from_file;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let t = a.known().unwrap_or("");
        match t {
            "--arg" | "--argjson" => {
                out.extend([i + 1, i + 2]);
                i += 3;
                continue;
            }
            "--slurpfile" | "--rawfile" => {
                // The name is data; the file is read.
                out.push(i + 1);
                i += 3;
                continue;
            }
            "--indent" | "--tab" => {}
            _ if t.starts_with('-') && t.len() > 1 => {}
            _ if !found && a.known().is_some() => {
                found = true;
                out.push(i);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The globs an archiver or copier leaves out or takes in.
fn globs(program: &str, argv: &[Arg]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        if let Some(next) = value_at(argv, i, GLOB_VALUES) {
            out.push(i);
            out.extend(next);
        } else if program == "zip"
            && matches!(argv.get(i).and_then(Arg::known), Some("-x" | "-i" | "--exclude" | "--include"))
        {
            // `zip … -x a b c`: every word after it up to the next option.
            let end = argv
                .iter()
                .skip(i + 1)
                .position(|a| a.known().is_none_or(|t| t.starts_with('-')))
                .map_or(argv.len(), |p| i + 1 + p);
            out.extend(i..end);
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// The globs of the files a search, archiver or copier takes in, with
/// `--iglob` ones lowered: `grep --include=G`, `rg -g G`/`--glob`/
/// `--iglob` (not a `!G` exclusion), `rsync --include G`, `zip -i G…`.
pub fn included(program: &str, argv: &[Arg]) -> Vec<String> {
    let options: &[&str] = match program {
        "grep" | "egrep" | "fgrep" | "zgrep" | "rsync" => &["--include"],
        "rg" => &["-g", "--glob", "--iglob"],
        "zip" => &["-i", "--include"],
        _ => return Vec::new(),
    };
    // rg leaves hidden files out unless told otherwise (`--hidden`, `-.`, `-uu`).
    let words = || argv.iter().filter_map(Arg::known);
    let short = |t: &str| t.strip_prefix('-').filter(|c| !c.starts_with('-')).map(str::to_string);
    let hidden =
        words().any(|t| t == "--hidden" || short(t).is_some_and(|c| c.contains('.') || c.matches('u').count() >= 2));
    if program == "rg" && !hidden {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(t) = argv.get(i).and_then(Arg::known) {
        i += 1;
        // rg's `-gGLOB`, `-g=GLOB` and `-uugGLOB`: the rest of a cluster after its `g`.
        let cluster = if program == "rg" { rg_glob_cluster(t) } else { None };
        let (option, attached) = match t.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ if cluster.is_some() => {
                let value = cluster.unwrap_or_default();
                let value = value.strip_prefix('=').unwrap_or(value);
                if value.is_empty() {
                    ("-g", None)
                } else {
                    if !value.starts_with('!') {
                        out.push(value.to_string());
                    }
                    continue;
                }
            }
            _ => (t, None),
        };
        if !options.contains(&option) {
            continue;
        }
        let fold = option == "--iglob";
        let mut take = |glob: &str| {
            if !glob.is_empty() && !glob.starts_with('!') {
                out.push(if fold { glob.to_lowercase() } else { glob.to_string() });
            }
        };
        match attached {
            Some(v) => take(v),
            None if program == "zip" => {
                // Every word after it up to the next option.
                while let Some(g) = argv.get(i).and_then(Arg::known).filter(|g| !g.starts_with('-')) {
                    take(g);
                    i += 1;
                }
            }
            None => {
                if let Some(g) = argv.get(i).and_then(Arg::known) {
                    take(g);
                    i += 1;
                }
            }
        }
    }
    out
}

/// What follows the `g` of an rg short-option cluster made of flags that
/// take no value and then `g` (`-g.env`, `-g=.env`, `-uug.env`; empty for
/// `-uug`, whose glob is the next word); `None` for any other word.
fn rg_glob_cluster(word: &str) -> Option<&str> {
    let cluster = word.strip_prefix('-').filter(|c| !c.starts_with('-'))?;
    let rest = cluster.trim_start_matches(['u', 'i', '.', 'L', 'n', 'S']);
    (rest.starts_with('g') && cluster.len() > 1).then(|| rest.get(1..).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_value_is_found_where_comparing_every_option_finds_it() {
        let tables: [&[&str]; 3] = [&["-e", "--exclude", "-g", "--glob"], &["", "-x"], &[]];
        let words =
            ["-e", "-ex", "--exclude", "--exclude=a", "--excludes", "-g*.rs", "src/main.rs", "", "-", "--", "e"];
        for options in tables {
            for word in words {
                let argv = [Arg::fixed("grep"), Arg::fixed(word), Arg::fixed("next")];
                let attached = |o: &&str| {
                    word.strip_prefix(*o)
                        .is_some_and(|rest| if o.starts_with("--") { rest.starts_with('=') } else { !rest.is_empty() })
                };
                let expected =
                    if options.contains(&word) { Some(Some(2)) } else { options.iter().any(attached).then_some(None) };
                assert_eq!(value_at(&argv, 1, options), expected, "{word:?} among {options:?}");
            }
        }
    }
}
