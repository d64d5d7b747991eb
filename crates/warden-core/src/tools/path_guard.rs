//! The path guard: protected paths and workspace confinement for the paths
//! a tool call names.
//!
//! Paths come from the taxonomy's path fields, from the file headers of
//! patches, from `file://` URLs, and from the `derivedPaths` the host
//! resolved (symlinks followed) for the call. Every path is normalized first
//! (see [`crate::paths`]). A protected path may be neither read nor written,
//! or only not read or not written when its entry says so (see
//! [`super::protected`]; `Edit` and tools of unknown kind count as both);
//! a tool that writes may write only inside the workspace (`tools.workspace`,
//! else the call's `cwd`) or a writable path. Without a known workspace,
//! confinement is off and only protected paths are checked. Paths inside
//! shell commands are checked by the exec gate with the same [`Places`].

use super::Finding;
use super::protected::{Access, Hit, ProtectedSet};
use super::rules;
use super::taxonomy::{self, Kind, ToolEntry};
use crate::config::reader::shorten;
use crate::paths;
use crate::prelude::*;
use serde_json::Value;

/// Where a call may read and write.
pub struct Places<'a> {
    /// Directory relative paths are resolved against, normalized.
    pub cwd: Option<String>,
    /// Workspace root, normalized.
    pub workspace: Option<String>,
    /// The configured home, normalized.
    pub home: &'a paths::Home,
    /// Protected-path globs, compiled and indexed at configure; exceptions (`!glob`) among them.
    pub protected: &'a ProtectedSet,
    /// Writable-path globs, compiled and indexed at configure.
    pub writable: &'a paths::GlobSet,
    /// What the host declared about itself: Warden's own files and command.
    pub host: &'a crate::host::Prepared,
    /// Whether the wildcards of a path that is a pattern match hidden names
    /// (the shell command being judged turns `dotglob` on).
    pub dots: paths::Dots,
}

impl Places<'_> {
    /// The protected path that forbids `access` to a normalized path, unless
    /// an exception (`!glob`) for that access matches it too.
    pub fn protected_by(&self, path: &str, access: Access) -> Option<Hit<'_>> {
        self.protected_by_split(&paths::SplitPath::new(path), access)
    }

    /// [`Places::protected_by`] for a path already split.
    pub fn protected_by_split(&self, path: &paths::SplitPath<'_>, access: Access) -> Option<Hit<'_>> {
        self.protected_by_split_with(path, access, self.dots)
    }

    /// [`Places::protected_by_split`], with how the path's wildcards match
    /// hidden names, when its program expands them itself (git's pathspecs).
    pub fn protected_by_split_with(
        &self,
        path: &paths::SplitPath<'_>,
        access: Access,
        dots: paths::Dots,
    ) -> Option<Hit<'_>> {
        super::protected::protected_by_split(self.protected, path, access, dots)
    }

    /// Whether a normalized path may be written.
    pub fn writable(&self, path: &str) -> bool {
        let Some(workspace) = &self.workspace else { return true };
        if !(path.starts_with('/') || path.starts_with('~')) {
            // Relative to an unknown directory: nothing to confine it to.
            return true;
        }
        if paths::is_within(path, workspace) {
            return true;
        }
        self.writable.any_match(&paths::SplitPath::new(path))
    }

    /// Whether a normalized path is strictly inside a workspace that is
    /// neither `/` nor a home directory (deleting inside those is not
    /// confined to anything).
    pub fn strictly_inside_workspace(&self, path: &str) -> bool {
        let Some(ws) = &self.workspace else { return false };
        let broad = ws == "/" || paths::home_alias(ws).is_some_and(|a| a == "~");
        !broad && path != ws && paths::is_within(path, ws)
    }

    pub fn normalize(&self, path: &str) -> String {
        self.home.normalize(path, self.cwd.as_deref())
    }
}

fn texts(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Checks the paths a call names.
pub fn check(
    places: &Places<'_>,
    entry: Option<&ToolEntry>,
    tool: &str,
    args: &Value,
    derived: &[String],
) -> Vec<Finding> {
    let kind = entry.map_or(Kind::Other, |e| e.kind);
    let tool = crate::config::reader::Shortened(tool);
    let mut named: Vec<String> = Vec::new();
    if let Some(e) = entry {
        for f in &e.path_fields {
            named.extend(texts(args.get(f.as_str())).into_iter().map(str::to_string));
        }
        for f in &e.patch_fields {
            for patch in texts(args.get(f.as_str())) {
                named.extend(taxonomy::patch_paths(patch));
            }
        }
        for f in &e.url_fields {
            for url in texts(args.get(f.as_str())) {
                if let Some(path) = url.strip_prefix("file://") {
                    named.push(path.strip_prefix("localhost").unwrap_or(path).to_string());
                }
            }
        }
    }
    let mut out = Vec::new();
    let verb = if kind.writes() { "write" } else { "read" };
    // Edits show what they change; a tool of unknown kind may do either.
    let accesses: &[(Access, &str)] = match kind {
        // A shared or attached file is read and sent.
        Kind::Read | Kind::Fetch | Kind::Message | Kind::Share | Kind::Invite | Kind::Payment => {
            &[(Access::Read, "read")]
        }
        Kind::Write => &[(Access::Write, "write")],
        Kind::Edit => &[(Access::Write, "write"), (Access::Read, "read")],
        Kind::Shell | Kind::Other => &[(Access::Read, "read"), (Access::Write, "write")],
    };
    let mut check_one = |raw: &str, path: String, confine: bool| {
        out.extend(super::self_guard::file_finding(places, tool, verb, raw, &path));
        if let Some((hit, verb)) = accesses.iter().find_map(|(a, v)| places.protected_by(&path, *a).map(|h| (h, *v))) {
            out.push(Finding {
                rule: hit.rule(),
                reason: format!(
                    "`{tool}` would {verb} `{}` (`{path}`), which matches {} `{}`.",
                    shorten(raw),
                    hit.what(),
                    hit.glob
                ),
            });
        }
        if confine && !places.writable(&path) {
            out.push(Finding {
                rule: rules::PATH_OUTSIDE_WORKSPACE,
                reason: format!("`{tool}` would write `{path}`, outside the workspace."),
            });
        }
    };
    for raw in &named {
        check_one(raw, places.normalize(raw), kind.writes());
    }
    for raw in derived {
        check_one(raw, places.normalize(raw), kind.writes());
    }
    out
}
