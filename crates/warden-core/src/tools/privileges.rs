//! Accounts and capabilities that give administrator rights
//! (`exec.system-permissions`), denied like a setuid bit on a system path:
//!
//! - a user added to a group that is root in all but name (`usermod -aG sudo
//!   bob`, `gpasswd -a bob wheel`, `adduser bob sudo`, `useradd -G docker`);
//! - an account given user or group id 0 (`useradd -o -u 0 x`, `usermod -u 0`), or a group
//!   id 0 (`groupmod -g 0 staff`);
//! - an account's password removed (`passwd -d root`);
//! - a file capability that amounts to root (`setcap cap_setuid+ep
//!   /usr/bin/python3`, or every capability with `=ep`).

use super::Finding;
use super::exec::quote;
use super::rules;
use crate::prelude::*;
use crate::shell::commands::{Arg, Invocation};
use crate::shell::programs::Names;

/// Groups whose members can become root: sudo rights, the container and
/// virtual machine daemons, raw disks, the shadow file.
const ADMIN_GROUPS: &[&str] =
    &["sudo", "wheel", "admin", "root", "docker", "lxd", "libvirt", "disk", "shadow", "kvm", "podman"];

/// Capabilities a program can turn into root.
const ROOT_CAPABILITIES: &[&str] = &[
    "cap_setuid",
    "cap_setgid",
    "cap_sys_admin",
    "cap_dac_override",
    "cap_dac_read_search",
    "cap_sys_ptrace",
    "cap_sys_module",
    "cap_chown",
    "cap_fowner",
    "cap_setfcap",
    "cap_sys_rawio",
    "all",
];

/// Programs [`check`] reads.
const PROGRAMS: Names =
    Names::new(&["usermod", "useradd", "groupadd", "groupmod", "gpasswd", "adduser", "addgroup", "passwd", "setcap"]);

/// The values of an option of `argv`: `-G x`, `-Gx`, `-aG x` (the letter in
/// a cluster), `--groups x`, `--groups=x`.
fn values<'a>(argv: &'a [Arg], short: char, long: &str) -> Vec<&'a str> {
    let words: Vec<&str> = argv.iter().skip(1).map(|a| a.known().unwrap_or("")).collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if *w == long {
            out.extend(words.get(i + 1).copied());
        } else if let Some(v) = w.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            out.push(v);
        } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.starts_with('-'))
            && let Some(at) = cluster.find(short)
        {
            match cluster.get(at + short.len_utf8()..) {
                Some(rest) if !rest.is_empty() => out.push(rest),
                _ => out.extend(words.get(i + 1).copied()),
            }
        }
    }
    out
}

/// Whether a group list (`a,b`) names an administrator group or id 0.
fn names_admin(list: &str) -> bool {
    list.split(',').any(|g| ADMIN_GROUPS.iter().any(|a| a.eq_ignore_ascii_case(g)) || g == "0")
}

/// Whether an option cluster of `argv` holds `letter` (`-aG`, `-dl`).
fn has_short(argv: &[Arg], letter: char) -> bool {
    super::exec::options(argv).any(|o| !o.starts_with("--") && o.chars().skip(1).any(|c| c == letter))
}

/// What the invocation grants, when it makes an account or a program root.
fn grants(inv: &Invocation) -> Option<&'static str> {
    let argv = &inv.argv;
    let operands: Vec<&str> = super::exec::operands(argv).iter().filter_map(|a| a.known()).collect();
    match inv.program.as_str() {
        "usermod" | "useradd" => {
            let groups = values(argv, 'G', "--groups").into_iter().any(names_admin)
                || values(argv, 'g', "--gid").into_iter().any(names_admin);
            let uid = values(argv, 'u', "--uid").contains(&"0");
            if uid {
                Some("gives an account user id 0")
            } else if groups {
                Some("adds an account to an administrator group")
            } else {
                None
            }
        }
        // A group given id 0 shares root's group (`groupadd -o -g 0 g2`, `groupmod -g 0 staff`).
        "groupadd" | "groupmod" => values(argv, 'g', "--gid").contains(&"0").then_some("gives a group id 0"),
        "gpasswd" => {
            // `-a USER`, `-M USERS`, and `-A USERS`, which makes them the group's administrators.
            let add = !values(argv, 'a', "--add").is_empty()
                || !values(argv, 'M', "--members").is_empty()
                || !values(argv, 'A', "--administrators").is_empty();
            (add && operands.last().is_some_and(|g| names_admin(g)))
                .then_some("adds an account to an administrator group")
        }
        // Debian's `adduser USER GROUP`, busybox's `addgroup USER GROUP`, `--ingroup GROUP`.
        "adduser" | "addgroup" => {
            let pair = operands.len() == 2 && operands.last().is_some_and(|g| names_admin(g));
            let words: Vec<&str> = argv.iter().filter_map(Arg::known).collect();
            let ingroup = words.windows(2).any(|w| w[0] == "--ingroup" && names_admin(w[1]))
                || words.iter().any(|w| w.strip_prefix("--ingroup=").is_some_and(names_admin));
            (pair || ingroup).then_some("adds an account to an administrator group")
        }
        "passwd" => (has_short(argv, 'd') || super::exec::options(argv).any(|o| o == "--delete"))
            .then_some("removes an account's password"),
        "setcap" => {
            // `setcap CAPS FILE`; `-r` removes them, `-v` only checks.
            if super::exec::options(argv).any(|o| o == "-r" || o == "-v") {
                return None;
            }
            // `-n ROOTID` takes a value; the capabilities are the first other operand.
            let words: Vec<&str> = argv.iter().skip(1).filter_map(Arg::known).collect();
            let caps = words
                .iter()
                .enumerate()
                .find(|(k, w)| !w.starts_with('-') && (*k == 0 || words.get(k - 1) != Some(&"-n")))
                .map(|(_, c)| c.to_ascii_lowercase())?;
            let every = caps.starts_with('=') || caps.split(',').any(|c| c.starts_with('='));
            let root = caps.split([',', '+', '=', '-']).any(|c| ROOT_CAPABILITIES.contains(&c));
            (every || root).then_some("gives a program a capability that amounts to root")
        }
        _ => None,
    }
}

/// Judges one invocation.
pub fn check(inv: &Invocation, out: &mut Vec<Finding>) {
    if !PROGRAMS.has(&inv.program) {
        return;
    }
    if let Some(what) = grants(inv) {
        out.push(Finding { rule: rules::EXEC_SYSTEM_PERMISSIONS, reason: format!("{} {what}.", quote(inv)) });
    }
}
