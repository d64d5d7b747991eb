//! Protected paths and what each one protects: reads, writes or both.
//!
//! `tools.protectedPaths` holds globs as strings, which protect both ways,
//! or objects `{ "glob": "~/.bashrc", "protect": "writes" }` that protect
//! one way: an rc file nobody may change but anyone may read, or a drop
//! directory anyone may write but nobody may read back. An exception
//! (`!glob`) lifts the protection it names for the paths it matches.
//!
//! A path that is both-ways protected is decided by `path.protected`, as
//! before; a read of a read-protected path by `path.protected-read`, a write
//! of a write-protected path by `path.protected-write`. Only paths protected
//! from reads are secret: their contents sent over the network is exfiltration.

use super::rules;
use crate::config::reader::{Node, Reader, Text, shorten, shown};
use crate::paths::{Dots, Glob, GlobSet, SplitPath};
use crate::prelude::*;

/// What a program or a tool does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// What a protected path protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protect {
    Reads,
    Writes,
    Both,
}

impl Protect {
    /// Every value, as configured.
    pub const ALL: &'static [(&'static str, Protect)] =
        &[("reads", Protect::Reads), ("writes", Protect::Writes), ("both", Protect::Both)];

    pub fn as_str(self) -> &'static str {
        Protect::ALL.iter().find(|(_, p)| *p == self).map_or("both", |(n, _)| n)
    }

    fn covers(self, access: Access) -> bool {
        match self {
            Protect::Both => true,
            Protect::Reads => access == Access::Read,
            Protect::Writes => access == Access::Write,
        }
    }

    /// The rule that decides an access this protects.
    pub fn rule(self) -> &'static str {
        match self {
            Protect::Both => rules::PATH_PROTECTED,
            Protect::Reads => rules::PATH_PROTECTED_READ,
            Protect::Writes => rules::PATH_PROTECTED_WRITE,
        }
    }
}

/// One entry of `tools.protectedPaths`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    pub glob: Glob,
    pub protect: Protect,
}

/// The protection that decides one access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit<'a> {
    /// The glob as configured.
    pub glob: &'a str,
    pub protect: Protect,
}

impl Hit<'_> {
    pub fn rule(&self) -> &'static str {
        self.protect.rule()
    }

    /// How the reason names the path: "the protected path", "the read-protected path", ...
    pub fn what(&self) -> &'static str {
        match self.protect {
            Protect::Both => "the protected path",
            Protect::Reads => "the read-protected path",
            Protect::Writes => "the write-protected path",
        }
    }
}

impl ProtectedPath {
    /// A both-ways entry from a glob text (`!glob` for an exception).
    pub fn both(text: &str) -> Result<ProtectedPath, String> {
        Glob::with_exception(text).map(|glob| ProtectedPath { glob, protect: Protect::Both })
    }
}

/// `tools.protectedPaths` compiled once, when the configuration is read:
/// the protections and the exceptions each indexed (see [`GlobSet`]), and
/// the fixed leading part of every read-protected glob, for [`held_in`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedSet {
    /// The entries that are not exceptions, and what each protects.
    protections: GlobSet,
    protects: Vec<Protect>,
    /// The exceptions (`!glob`), and what each lifts.
    exceptions: GlobSet,
    lifts: Vec<Protect>,
    /// Read-protected globs anchored at `/` or `~`, with their fixed leading part.
    held: Vec<(String, String)>,
}

impl ProtectedSet {
    pub fn new(entries: &[ProtectedPath]) -> ProtectedSet {
        let (exceptions, protections): (Vec<&ProtectedPath>, Vec<&ProtectedPath>) =
            entries.iter().partition(|e| e.glob.is_exception());
        let held = protections
            .iter()
            .filter(|e| e.protect.covers(Access::Read))
            .map(|e| e.glob.as_str())
            .filter_map(|glob| {
                let fixed: Vec<&str> = glob.split('/').take_while(|s| !s.contains(['*', '?', '['])).collect();
                let fixed = fixed.join("/");
                let anchored = fixed == "~" || fixed.starts_with("~/") || fixed.starts_with('/');
                anchored.then(|| (glob.to_string(), fixed))
            })
            .collect();
        ProtectedSet {
            protects: protections.iter().map(|e| e.protect).collect(),
            protections: GlobSet::new(protections.iter().map(|e| e.glob.clone()).collect()),
            lifts: exceptions.iter().map(|e| e.protect).collect(),
            exceptions: GlobSet::new(exceptions.iter().map(|e| e.glob.clone()).collect()),
            held,
        }
    }
}

/// The entry of `set` that protects `path` against `access`, unless an
/// exception for that access matches the path too.
///
/// A path holding `*`, `?` or `[` is a pattern, protected when some path it
/// names is (see [`crate::paths::Glob::overlaps`]); an exception lifts it
/// only when it matches the pattern as written (`~/.ssh/*.pub`).
pub fn protected_by<'a>(set: &'a ProtectedSet, path: &str, access: Access) -> Option<Hit<'a>> {
    protected_by_split(set, &SplitPath::new(path), access, Dots::Hidden)
}

/// [`protected_by`] for a path already split, with how its wildcards match hidden names.
pub fn protected_by_split<'a>(
    set: &'a ProtectedSet,
    split: &SplitPath<'_>,
    access: Access,
    dots: Dots,
) -> Option<Hit<'a>> {
    let covers = |protects: &[Protect], i: usize| protects.get(i).is_some_and(|p| p.covers(access));
    let hit = set.protections.first_cover(split, dots, |i| covers(&set.protects, i))?;
    let excepted = set.exceptions.first_match(split, |i| covers(&set.lifts, i)).is_some();
    let (glob, protect) = (set.protections.globs().get(hit)?, *set.protects.get(hit)?);
    (!excepted).then_some(Hit { glob: glob.as_str(), protect })
}

/// The read-protected glob that a whole-directory read of `dir` (a
/// normalized path) takes in: one whose fixed leading part lies inside `dir`
/// (`~` holds `~/.aws/credentials`, `/` holds everything). Globs that start
/// with a wildcard (`**/.env`) could be anywhere and are not counted here.
pub fn held_in<'a>(set: &'a ProtectedSet, dir: &str) -> Option<&'a str> {
    let dir = crate::paths::home_alias(dir).unwrap_or_else(|| dir.to_string());
    set.held.iter().find(|(_, fixed)| dir == "/" || crate::paths::is_within(fixed, &dir)).map(|(glob, _)| glob.as_str())
}

/// Reads one entry: a glob string, or `{ "glob": ..., "protect": ... }`.
pub fn read(r: &mut Reader, node: Node<'_>) -> Option<ProtectedPath> {
    if node.value.is_string() {
        return read_glob(r, node).map(|glob| ProtectedPath { glob, protect: Protect::Both });
    }
    if !node.value.is_object() {
        r.error(
            node.path.clone(),
            format!("must be a glob or an object with `glob` and `protect`, got `{}`", shown(node.value)),
        );
        return None;
    }
    let obj = r.object(&node, &["glob", "protect"])?;
    let glob = match obj.get("glob") {
        Some(n) => read_glob(r, n),
        None => {
            r.error(obj.path_of("glob"), "is required");
            None
        }
    };
    let protect = match obj.get("protect") {
        None => Some(Protect::Both),
        Some(n) => {
            let p = n.value.as_str().and_then(|t| Protect::ALL.iter().find(|(name, _)| *name == t)).map(|(_, p)| *p);
            if p.is_none() {
                let allowed: Vec<String> = Protect::ALL.iter().map(|(n, _)| format!("`{n}`")).collect();
                r.error(n.path, format!("must be one of {}, got `{}`", allowed.join(", "), shown(n.value)));
            }
            p
        }
    };
    Some(ProtectedPath { glob: glob?, protect: protect? })
}

fn read_glob(r: &mut Reader, node: Node<'_>) -> Option<Glob> {
    let text = r.string_value(&node, Text::non_blank(super::config::MAX_GLOB_CHARS))?;
    match Glob::with_exception(&text) {
        Ok(glob) => Some(glob),
        Err(problem) => {
            r.error(node.path, format!("`{}` {problem}", shorten(&text)));
            None
        }
    }
}

impl serde::Serialize for ProtectedPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.protect == Protect::Both {
            return s.serialize_str(self.glob.as_str());
        }
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("glob", self.glob.as_str())?;
        map.serialize_entry("protect", self.protect.as_str())?;
        map.end()
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for ProtectedPath {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> alloc::borrow::Cow<'static, str> {
        "ProtectedPath".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let glob = schemars::json_schema!({
            "type": "string",
            "minLength": 1,
            "maxLength": super::config::MAX_GLOB_CHARS,
        });
        schemars::json_schema!({
            "anyOf": [
                glob,
                {
                    "type": "object",
                    "description": "A glob that protects one way: `reads`, `writes`, or `both` (the default).",
                    "properties": {
                        "glob": glob,
                        "protect": { "type": "string", "enum": ["reads", "writes", "both"], "default": "both" },
                    },
                    "required": ["glob"],
                    "additionalProperties": false,
                },
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Protection as it is defined: every entry tried in order, then every exception.
    fn protected_by_each_entry(entries: &[ProtectedPath], path: &str, access: Access) -> Option<(String, Protect)> {
        let split = SplitPath::new(path);
        let covering = |e: &&ProtectedPath| e.protect.covers(access) && split.matches(&e.glob);
        let hit = entries.iter().filter(|e| !e.glob.is_exception()).find(covering)?;
        let excepted = entries.iter().filter(|e| e.glob.is_exception()).any(|e| covering(&e));
        (!excepted).then(|| (hit.glob.as_str().to_string(), hit.protect))
    }

    #[test]
    fn the_indexed_protected_paths_decide_as_each_entry_in_order_does() {
        let mut list: Vec<ProtectedPath> =
            super::super::config::DEFAULT_PROTECTED.iter().map(|g| ProtectedPath::both(g).expect("valid")).collect();
        list.extend(entries(&[
            ("~/.bashrc", Protect::Writes),
            ("/srv/drop/**", Protect::Reads),
            ("/*/secret", Protect::Reads),
            ("!/srv/drop/public/**", Protect::Reads),
            ("**/id_*", Protect::Both),
        ]));
        let set = ProtectedSet::new(&list);
        let paths = [
            "~/.ssh/id_rsa",
            "~/.ssh/id_rsa.pub",
            "/home/alice/.ssh/config",
            "/root/.aws/credentials",
            "/Users/x/.config/gcloud/a/b",
            "~/.bashrc",
            "/etc/shadow",
            "/etc/sudoers.d/x",
            "/ws/app/.env",
            "/ws/app/.env.local",
            "/ws/app/.env.example",
            ".env",
            "src/.env.sample",
            "/srv/drop/x",
            "/srv/drop/public/x",
            "/opt/secret",
            "/tmp/id_ed25519",
            "/home/dev/project/src/main.rs",
            "/",
            "~",
            ".",
        ];
        for path in paths {
            for access in [Access::Read, Access::Write] {
                let indexed = protected_by(&set, path, access).map(|h| (h.glob.to_string(), h.protect));
                assert_eq!(indexed, protected_by_each_entry(&list, path, access), "{path} {access:?}");
            }
        }
        assert!(protected_by(&set, "/ws/app/.env", Access::Read).is_some(), "the table holds protected paths");
    }

    #[test]
    fn directories_hold_the_read_protected_globs_whose_fixed_part_they_contain() {
        let list = entries(&[
            ("~/.bashrc", Protect::Writes),
            ("**/.env", Protect::Both),
            ("~/.aws/credentials", Protect::Both),
            ("!~/.ssh/*.pub", Protect::Reads),
            ("/srv/drop/**", Protect::Reads),
        ]);
        let set = ProtectedSet::new(&list);
        assert_eq!(held_in(&set, "~"), Some("~/.aws/credentials"));
        assert_eq!(held_in(&set, "/home/me"), Some("~/.aws/credentials"));
        assert_eq!(held_in(&set, "~/.aws"), Some("~/.aws/credentials"));
        assert_eq!(held_in(&set, "/srv"), Some("/srv/drop/**"));
        assert_eq!(held_in(&set, "/"), Some("~/.aws/credentials"));
        assert_eq!(held_in(&set, "/srv/other"), None);
        assert_eq!(held_in(&set, "~/.ssh"), None, "an exception holds nothing");
    }

    fn entries(list: &[(&str, Protect)]) -> Vec<ProtectedPath> {
        list.iter()
            .map(|(g, protect)| ProtectedPath { glob: Glob::with_exception(g).expect("valid"), protect: *protect })
            .collect()
    }

    #[test]
    fn each_entry_protects_only_the_access_it_names_and_exceptions_lift_only_theirs() {
        let list = entries(&[
            ("~/.bashrc", Protect::Writes),
            ("/srv/drop/**", Protect::Reads),
            ("~/.ssh/**", Protect::Both),
            ("!~/.ssh/*.pub", Protect::Reads),
        ]);
        let set = ProtectedSet::new(&list);
        let rule = |path: &str, access| protected_by(&set, path, access).map(|h| h.rule());
        assert_eq!(rule("~/.bashrc", Access::Write), Some(rules::PATH_PROTECTED_WRITE));
        assert_eq!(rule("~/.bashrc", Access::Read), None);
        assert_eq!(rule("/srv/drop/x", Access::Read), Some(rules::PATH_PROTECTED_READ));
        assert_eq!(rule("/srv/drop/x", Access::Write), None);
        assert_eq!(rule("~/.ssh/id_rsa", Access::Read), Some(rules::PATH_PROTECTED));
        assert_eq!(rule("~/.ssh/id_rsa.pub", Access::Read), None);
        assert_eq!(rule("~/.ssh/id_rsa.pub", Access::Write), Some(rules::PATH_PROTECTED));
    }
}
