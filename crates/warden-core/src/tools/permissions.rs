//! Permissions and owners of system paths (`exec.system-permissions`).
//!
//! On a system path (absolute, not under a home, outside the workspace and
//! the writable paths) these are denied:
//!
//! - a mode that makes it world-writable or setuid/setgid (`chmod 777`,
//!   `chmod o+w`, `chmod u+s`);
//! - a new owner or group (`chown`, `chgrp`);
//! - on a system tree (`/`, a top-level directory, everything in one, or a
//!   directory one level below `/usr` or `/var`): a mode that takes read or execute permission from
//!   anyone (`chmod -R 000 /`, `chmod a-rwx /etc`, `chmod 000 /usr/bin`,
//!   `chmod -x /usr/bin`), which leaves a system as unusable as an open one
//!   leaves it unsafe, and, recursively, any absolute mode (`chmod -R 755
//!   /usr`), which resets every file's mode and clears setuid bits.
//!
//! GNU chmod reads `-x`, `-w` and `-rwx` as modes, not options; so does this.

use super::Finding;
use super::exec::quote;
use super::path_guard::Places;
use super::rules;
use crate::paths;
use crate::prelude::*;
use crate::shell::commands::{Arg, Invocation};

/// Whether a chmod mode makes files world-writable or setuid/setgid.
fn opens(mode: &str) -> bool {
    if let Some(bits) = numeric(mode) {
        return bits & 0o002 != 0 || bits & 0o6000 != 0;
    }
    mode.split(',').any(|clause| {
        let (who, op, perms) = clause_parts(clause);
        if !matches!(op, Some('+' | '=')) {
            return false;
        }
        // Without `ugoa`, `+w` follows the umask: not world-writable.
        let world = who.contains('o') || who.contains('a');
        (world && perms.contains('w')) || perms.contains('s')
    })
}

/// Whether a chmod mode takes read or execute permission from anyone.
fn removes(mode: &str) -> bool {
    if let Some(bits) = numeric(mode) {
        return bits & 0o555 != 0o555;
    }
    mode.split(',').any(|clause| {
        let (_, op, perms) = clause_parts(clause);
        match op {
            Some('-') => perms.contains('r') || perms.contains('x') || perms.contains('X'),
            // `=` sets exactly what it lists for the classes it names.
            Some('=') => !(perms.contains('r') && (perms.contains('x') || perms.contains('X'))),
            _ => false,
        }
    })
}

/// Whether a mode sets every bit rather than adding or removing some.
fn absolute(mode: &str) -> bool {
    numeric(mode).is_some() || mode.split(',').any(|c| clause_parts(c).1 == Some('='))
}

fn numeric(mode: &str) -> Option<u32> {
    if mode.is_empty() || mode.len() > 5 || !mode.chars().all(|c| c.is_ascii_digit() && c < '8') {
        return None;
    }
    u32::from_str_radix(mode, 8).ok()
}

/// A symbolic clause: who (`ugoa`), the first operator, and the permissions after it.
fn clause_parts(clause: &str) -> (&str, Option<char>, &str) {
    let who_len = clause.chars().take_while(|c| "ugoa".contains(*c)).count();
    let who = clause.get(..who_len).unwrap_or("");
    let rest = clause.get(who_len..).unwrap_or("");
    let op = rest.chars().next().filter(|c| matches!(c, '+' | '-' | '='));
    let perms = rest.get(op.map_or(0, char::len_utf8)..).unwrap_or("");
    (who, op, perms)
}

/// Whether a word is a chmod mode spelled like an option (`-x`, `-rwx`, `-w,o-r`).
fn dash_mode(text: &str) -> bool {
    text.len() > 1 && text.starts_with('-') && text.chars().skip(1).all(|c| "rwxXstugoa,+-=".contains(c))
}

/// chmod's mode and targets, with `-R` and a mode spelled like an option understood.
fn chmod_parts(argv: &[Arg]) -> (bool, Option<&Arg>, Vec<&Arg>) {
    let mut recursive = false;
    let mut mode: Option<&Arg> = None;
    let mut targets = Vec::new();
    let mut reference = false;
    let mut after_dashes = false;
    for a in argv.iter().skip(1) {
        match a.known() {
            Some("--") if !after_dashes => after_dashes = true,
            Some("--recursive") if !after_dashes => recursive = true,
            Some(t) if !after_dashes && t.starts_with("--reference") => reference = true,
            Some(t) if !after_dashes && t.starts_with("--") => {}
            Some(t) if !after_dashes && mode.is_none() && dash_mode(t) => mode = Some(a),
            Some(t) if !after_dashes && t.starts_with('-') && t.len() > 1 => {
                recursive |= t.contains('R');
            }
            _ if mode.is_none() && !reference => mode = Some(a),
            _ => targets.push(a),
        }
    }
    (recursive, mode, targets)
}

/// Whether a normalized system path is a tree a system needs to run.
fn system_tree(path: &str) -> bool {
    if paths::is_critical_target(path) {
        return true;
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    matches!(segments.as_slice(), [top, _] if matches!(*top, "usr" | "var"))
}

fn is_system(places: &Places<'_>, path: &str) -> bool {
    path.starts_with('/') && paths::home_alias(path).is_none() && !places.writable(path)
}

/// `exec.system-permissions` for one program.
pub fn check(places: &Places<'_>, inv: &Invocation, out: &mut Vec<Finding>) {
    let p = inv.program.as_str();
    if !matches!(p, "chmod" | "chown" | "chgrp") {
        return;
    }
    let (recursive, mode, targets) = if p == "chmod" {
        chmod_parts(&inv.argv)
    } else {
        let ops = super::exec::operands(&inv.argv);
        let reference = inv.argv.iter().any(|a| a.known().is_some_and(|t| t.starts_with("--reference")));
        let targets = ops.iter().skip(usize::from(!reference)).copied().collect();
        (false, None, targets)
    };
    let mode_text = mode.and_then(Arg::known);
    for t in targets {
        let Some(t) = t.path() else { continue };
        let path = places.home.normalize(&t, inv.cwd.as_deref());
        if !is_system(places, &path) {
            continue;
        }
        let what = match (p, mode_text) {
            ("chmod", Some(m)) if opens(m) => "opens the permissions of",
            ("chmod", Some(m)) if system_tree(&path) && removes(m) => "takes permissions away from",
            ("chmod", Some(m)) if system_tree(&path) && recursive && absolute(m) => "resets every mode under",
            ("chmod", _) => continue,
            _ => "changes the owner of",
        };
        out.push(Finding {
            rule: rules::EXEC_SYSTEM_PERMISSIONS,
            reason: format!("{} {what} the system path `{path}`.", quote(inv)),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_read_as_chmod_reads_them() {
        for (mode, open, remove) in [
            ("777", true, false),
            ("0777", true, false),
            ("4755", true, false),
            ("755", false, false),
            ("000", false, true),
            ("0", false, true),
            ("700", false, true),
            ("644", false, true),
            ("o+w", true, false),
            ("a+w", true, false),
            ("+w", false, false),
            ("u+s", true, false),
            ("a-rwx", false, true),
            ("-x", false, true),
            ("go-w", false, false),
            ("a=", false, true),
            ("u=rwx,go=rx", false, false),
            ("u+x", false, false),
        ] {
            assert_eq!((opens(mode), removes(mode)), (open, remove), "{mode}");
        }
    }

    #[test]
    fn system_trees_are_roots_top_levels_and_their_first_level() {
        for (path, tree) in [
            ("/", true),
            ("/etc", true),
            ("/usr/bin", true),
            ("/var/lib", true),
            ("/usr/local/bin", false),
            ("/etc/ssl/private/key.pem", false),
            ("/etc/hosts", false),
            ("/opt/app", false),
        ] {
            assert_eq!(system_tree(path), tree, "{path}");
        }
    }
}
