//! Disk destruction: formatting, partitioning and wiping a block device, and
//! raw writes to one.
//!
//! Formatters (`mkfs*`, `mke2fs`, `mkswap`, `wipefs`, `fdisk`, `parted`, ...)
//! work on image files as well as on disks: `mkfs.ext4 ./disk.img` and
//! `wipefs -a /tmp/x.img` change one file, which the path guard judges like
//! any other write, while `mkfs.ext4 /dev/sda1` destroys a file system. So a
//! formatter is disk destruction when one of its operands is a device (a
//! path under `/dev`, after the same normalization as every path, so
//! `/proc/self/root/dev/sda` is one), a link the same command made to one
//! (`ln -s /dev/sda x.img; mkfs.ext4 x.img`), only known at run time, or
//! absent. Writes (`dd of=`, `>`, `cp`, `shred`, `tee`) are raw device writes
//! when they reach a block device ([`BLOCK_DEVICES`], and any two-level
//! path under `/dev` such as an LVM volume `/dev/vg0/root`).

use super::Finding;
use super::exec::{operands, options, quote};
use super::rules;
use crate::paths;
use crate::prelude::*;
use crate::shell::commands::{Analysis, Arg, Invocation};

/// Block and memory devices, as globs.
pub const BLOCK_DEVICES: &[&str] = &[
    "/dev/sd*",
    "/dev/hd*",
    "/dev/vd*",
    "/dev/xvd*",
    "/dev/nvme*",
    "/dev/mmcblk*",
    "/dev/disk*",
    "/dev/disk/**",
    "/dev/rdisk*",
    "/dev/block/**",
    "/dev/mapper/**",
    "/dev/dm-*",
    "/dev/md*",
    "/dev/md/**",
    "/dev/loop*",
    "/dev/nbd*",
    "/dev/zram*",
    "/dev/ram*",
    "/dev/sr*",
    "/dev/bcache*",
    "/dev/rbd*",
    "/dev/zd*",
    "/dev/ubi*",
    "/dev/mtd*",
    "/dev/root",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
];

/// Directories under `/dev` that hold no block devices.
const NOT_BLOCK_DIRS: &[&str] =
    &["pts", "fd", "shm", "tcp", "udp", "mqueue", "hugepages", "net", "input", "snd", "dri", "bus", "char", "usb"];

/// Programs that format, partition or wipe what they are given.
pub const FORMATTERS: crate::shell::programs::Names = crate::shell::programs::Names::new(&[
    "mke2fs",
    "mkswap",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "parted",
    "gdisk",
    "sgdisk",
    "blkdiscard",
    "mkntfs",
]);

/// Whether a normalized path is a block or memory device.
pub fn is_block_device(path: &str) -> bool {
    // Every glob of `BLOCK_DEVICES` starts with the segment `dev`: other
    // paths are not compared with them at all.
    let under_dev = path.strip_prefix('/').is_some_and(|rest| paths::first_segment(rest) == Some("dev"));
    if !under_dev {
        return false;
    }
    if BLOCK_DEVICES.iter().any(|g| paths::glob_matches(g, path)) {
        return true;
    }
    let Some(rest) = path.strip_prefix("/dev/") else { return false };
    let mut segments = rest.split('/');
    let first = segments.next().unwrap_or("");
    segments.next().is_some() && !NOT_BLOCK_DIRS.contains(&first)
}

/// Whether a normalized path is a device of any kind.
fn is_device(path: &str) -> bool {
    path == "/dev" || path.starts_with("/dev/")
}

/// Whether a target only known at run time, of which `prefix` is known, may be a device.
fn may_be_device(prefix: &str) -> bool {
    prefix.is_empty() || "/dev/".starts_with(prefix) || prefix.starts_with("/dev/")
}

/// Links the command makes with `ln -s TARGET LINK`: (link, target), both normalized.
fn links(analysis: &Analysis, home: &paths::Home) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for inv in analysis.invocations.iter().filter(|i| i.program == "ln") {
        let symbolic = options(&inv.argv).any(|o| o == "--symbolic" || (!o.starts_with("--") && o.contains('s')));
        let ops: Vec<&Arg> = operands(&inv.argv);
        if let (true, [target, link]) = (symbolic, ops.as_slice())
            && let (Some(target), Some(link)) = (target.path(), link.path())
        {
            let link = home.normalize(&link, inv.cwd.as_deref());
            let dir = link.rsplit_once('/').map(|(d, _)| d.to_string()).filter(|d| !d.is_empty());
            let target = home.normalize(&target, dir.as_deref().or(Some("/")));
            out.push((link, target));
        }
    }
    out
}

/// What a path is once the links the command made are followed (one level).
fn resolved<'a>(links: &'a [(String, String)], path: &'a str) -> &'a str {
    links.iter().rev().find(|(l, _)| l == path).map_or(path, |(_, t)| t.as_str())
}

/// Disk destruction by one program. Returns the image files a formatter
/// changes, for the path guard to judge as writes.
pub fn check(analysis: &Analysis, inv: &Invocation, home: &paths::Home, out: &mut Vec<Finding>) -> Vec<String> {
    let p = inv.program.as_str();
    let mut files = Vec::new();
    // A link's own path is what `ln` writes, not where it points.
    let links = if p != "ln" && (p.starts_with("mkfs") || FORMATTERS.has(p) || !inv.writes.is_empty()) {
        links(analysis, home)
    } else {
        Vec::new()
    };
    if p.starts_with("mkfs") || FORMATTERS.has(p) {
        let listing = options(&inv.argv).any(|o| o == "-l" || o == "--list")
            || inv.argv.iter().any(|a| a.known() == Some("print"));
        let ops = operands(&inv.argv);
        let device = ops.is_empty()
            || ops.iter().any(|a| match a.path() {
                Some(t) => is_device(resolved(&links, &home.normalize(&t, inv.cwd.as_deref()))),
                None => may_be_device(a.prefix()),
            });
        let targets: Vec<String> =
            ops.iter().filter_map(|a| a.path()).map(|t| home.normalize(&t, inv.cwd.as_deref())).collect();
        if device && !listing {
            out.push(finding(rules::EXEC_DISK_FORMAT, format!("{} formats or partitions a disk.", quote(inv))));
        } else if !listing {
            files.extend(targets);
        }
    }
    if p == "dd" {
        // `dd of=$DEV`: a target only known at run time may be a disk.
        for a in inv.argv.iter().skip(1).filter(|a| a.known().is_none()) {
            if let Some(prefix) = a.prefix().strip_prefix("of=")
                && may_be_device(prefix)
            {
                out.push(finding(
                    rules::EXEC_RAW_DEVICE_WRITE,
                    format!(
                        "{} writes to `{}`, which may be a device; it is only known when it runs.",
                        quote(inv),
                        a.raw
                    ),
                ));
            }
        }
    }
    for path in &inv.writes {
        let target = resolved(&links, path);
        if is_block_device(target) {
            out.push(finding(rules::EXEC_RAW_DEVICE_WRITE, format!("{} writes to the device `{target}`.", quote(inv))));
        }
    }
    files
}

fn finding(rule: &'static str, reason: String) -> Finding {
    Finding { rule, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_device_glob_lies_under_dev_so_other_paths_skip_them() {
        for glob in BLOCK_DEVICES {
            assert!(glob.starts_with("/dev/") && paths::glob_problem(glob).is_none(), "{glob}");
        }
        for (path, block) in [
            ("/dev/sda", true),
            ("/dev/nvme0n1p1", true),
            ("/dev/vg0/root", true),
            ("/dev/mapper/x", true),
            ("/dev/null", false),
            ("/dev/pts/0", false),
            ("/dev", false),
            ("/devices/sda", false),
            ("/tmp/dev/sda", false),
            ("dev/sda", false),
            ("~/dev/sda", false),
        ] {
            assert_eq!(is_block_device(path), block, "{path}");
        }
    }
}
