//! Path normalization and matching for the tool-call judge.
//!
//! Paths reach the judge as written by an agent: `~/.ssh/id_rsa`,
//! `$HOME/.ssh//id_rsa`, `/home/me/proj/../.ssh/./id_rsa/`. Each is
//! normalized before any rule looks at it: `~`, `$HOME` and `${HOME}` become
//! the home marker `~`; `~root` becomes `/root` and `~name` `/home/name`
//! (or a sibling of the configured home); relative paths are joined to the
//! working directory; `.`, `..`, duplicate and trailing slashes are resolved;
//! `/proc/self/root`, `/proc/<pid>/root` and `/proc/thread-self/root` are
//! the root directory and `/proc/self/cwd` the working directory.
//! The result is one of three forms:
//!
//! - absolute: `/etc/shadow`;
//! - home-relative: `~` or `~/.ssh/id_rsa` (the sandbox does not know where
//!   home is unless the configuration says so, and a path under a configured
//!   home is rewritten to this form);
//! - relative: `src/main.rs`, when no working directory is known.
//!
//! Normalization is textual. A symbolic link cannot be resolved inside the
//! sandbox, which has no filesystem: `ln -s ~/.ssh keys; cat keys/id_rsa`
//! reads a key through a path no rule here recognizes. Hosts that resolve
//! paths pass them as `derivedPaths` on the tool call, and the judge checks
//! those as well.
//!
//! Globs are matched per path segment: `*` and `?` within one segment, `**`
//! as a whole segment for zero or more segments. A glob starts with `/`,
//! `~/` or `**/`; `~/` globs also match `/root/...`, `/home/NAME/...` and
//! `/Users/NAME/...`, since any of those may be the agent's home.

use crate::prelude::*;
use alloc::borrow::Cow;

mod overlap;
pub use overlap::Dots;

/// Longest path a tool's path field may hold, in characters: Linux's
/// `PATH_MAX`, past which the system refuses to open a path at all (see
/// `tools::validate`). Normalization itself keeps every segment of a path
/// of any length: a cut would drop the very segments a rule like `**/.env`
/// is about, so a path is never cut, and the work on it stays linear in its
/// length (inputs are bounded where they enter, such as a shell command's
/// `shell::MAX_INPUT_CHARS`).
pub const MAX_PATH_CHARS: usize = 4096;

/// Where a normalized path is rooted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    Absolute,
    Home,
    Relative,
}

fn split(path: &str) -> (Root, &str) {
    if let Some(rest) = path.strip_prefix('/') {
        return (Root::Absolute, rest);
    }
    for home in ["$HOME", "${HOME}"] {
        if let Some(rest) = path.strip_prefix(home)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return (Root::Home, rest);
        }
    }
    if let Some(rest) = path.strip_prefix('~') {
        // `~user/...` that is not a login name (`~+`, `~..`): read as a home, the stricter reading.
        let rest = rest.bytes().position(|b| b == b'/').map_or("", |i| rest.get(i..).unwrap_or(""));
        return (Root::Home, rest);
    }
    (Root::Relative, path)
}

/// Whether `path` names the same place in any working directory: it starts
/// at `/`, `~` or `$HOME`, and does not mention `proc` (`/proc/self/cwd` is
/// the working directory).
pub fn is_rooted(path: &str) -> bool {
    split(path).0 != Root::Relative && !crate::bytes::contains_seq(path.as_bytes(), b"proc")
}

/// Normalizes `path`, resolving a relative one against `cwd` (itself any
/// path, normalized first) and rewriting paths under `home` to `~/...`.
pub fn normalize(path: &str, cwd: Option<&str>, home: Option<&str>) -> String {
    let home = Home::new(home);
    home.normalize(path, cwd)
}

/// A home directory normalized once, for every path normalized under it
/// ([`normalize`] normalizes its `home` again on every call).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Home(Option<String>);

/// No home configured.
pub static NO_HOME: Home = Home(None);

impl Home {
    pub fn new(home: Option<&str>) -> Home {
        Home(home.map(|h| normalized(h, None, None).into_owned()))
    }

    /// [`normalize`] with this home.
    pub fn normalize(&self, path: &str, cwd: Option<&str>) -> String {
        normalized(path, cwd.map(Cwd::new).as_ref(), self.0.as_deref()).into_owned()
    }

    /// [`normalize`] with this home, in a working directory prepared once
    /// for every path normalized in it.
    pub fn normalize_in(&self, path: &str, cwd: Option<&Cwd<'_>>) -> String {
        normalized(path, cwd, self.0.as_deref()).into_owned()
    }
}

/// A working directory as paths are resolved against it: its text, and how
/// many segments it has when it is already in normal form (absolute or under
/// `~/`, without empty, `.` or `..` segments, not under `/proc`), when that
/// was found before (else it is found only if a relative path needs it).
#[derive(Debug, Clone, Copy)]
pub struct Cwd<'a> {
    text: &'a str,
    plain: Option<Option<usize>>,
}

impl<'a> Cwd<'a> {
    pub fn new(text: &'a str) -> Cwd<'a> {
        Cwd { text, plain: None }
    }

    /// A working directory whose plainness was found before: `plain` is
    /// what [`Cwd::plain_segments_of`] gave for `text`.
    pub fn known(text: &'a str, plain: Option<usize>) -> Cwd<'a> {
        Cwd { text, plain: Some(plain) }
    }

    /// How many segments `text` has when it is in normal form, else `None`.
    pub fn plain_segments_of(text: &str) -> Option<usize> {
        if text == "/" || text == "~" {
            return Some(0);
        }
        let body = text.strip_prefix('/').filter(|b| *b != "proc" && !b.starts_with("proc/"));
        let body = body.or_else(|| text.strip_prefix("~/"))?;
        plain_segments(body)
    }
}

/// [`normalize`] with the home directory already normalized. A path without
/// `..` segments that is absolute, under `~/`, or relative to a working
/// directory in normal form is tidied (its empty and `.` segments dropped,
/// joined to the working directory) instead of being walked segment by
/// segment, and taken as it is when it is already in normal form; both give
/// what [`walked`] gives.
fn normalized<'p>(path: &'p str, cwd: Option<&Cwd<'_>>, home_normalized: Option<&str>) -> Cow<'p, str> {
    match tidied(path, cwd) {
        Some(tidy) => under_home(tidy, home_normalized),
        None => walked(path, cwd.map(|c| c.text), home_normalized),
    }
}

/// The segments of a path body, counted, when none is empty, `.` or `..`.
fn plain_segments(body: &str) -> Option<usize> {
    if let Some((count, _)) = plainly_segmented(body) {
        return Some(count);
    }
    let mut count = 0;
    for segment in body.as_bytes().split(|&b| b == b'/') {
        if matches!(segment, b"" | b"." | b"..") {
            return None;
        }
        count += 1;
    }
    Some(count)
}

/// The segments of a path body and its first segment, when the body shows
/// at once that none is empty, `.` or `..`: it does not start with `.` or
/// `/`, does not end with `/`, and holds neither `//` nor `/.`. `None`
/// says nothing (`a/.ssh` is plain too): the segments are then read one
/// by one.
///
/// Every path a check touches is normalized, and most are plain: this reads
/// their bytes eight at a time (a loop step costs an epoch check under
/// wasmtime besides its work).
fn plainly_segmented(body: &str) -> Option<(usize, &[u8])> {
    let bytes = body.as_bytes();
    let (&head, &tail) = (bytes.first()?, bytes.last()?);
    if matches!(head, b'.' | b'/') || tail == b'/' {
        return None;
    }
    let (mut slashes, mut first_slash) = (0usize, None);
    // The high bit of byte 0 set when the previous word ended with `/`.
    let mut carried = 0u64;
    for (i, word) in crate::bytes::words(bytes).enumerate() {
        let slash = crate::bytes::equal_to(word, b'/');
        // The bytes that follow a `/` (little endian: the next byte is 8 bits up).
        let after_slash = (slash << 8) | carried;
        if after_slash & (slash | crate::bytes::equal_to(word, b'.')) != 0 {
            return None;
        }
        carried = slash >> 56;
        if first_slash.is_none() && slash != 0 {
            first_slash = Some(i * 8 + (slash.trailing_zeros() / 8) as usize);
        }
        slashes += slash.count_ones() as usize;
    }
    Some((slashes + 1, bytes.get(..first_slash.unwrap_or(bytes.len()))?))
}

/// Whether an absolute path is its own normal form, home aside.
#[cfg(test)]
fn is_plain_absolute(path: &str) -> bool {
    path.starts_with('/') && Cwd::plain_segments_of(path).is_some()
}

/// A path body's segments other than empty and `.` ones: how many, the
/// first, and whether every segment is one (nothing to drop); `None` when
/// one is `..` (which only walking resolves).
fn kept_segments(body: &str) -> Option<(usize, Option<&[u8]>, bool)> {
    if let Some((count, first)) = plainly_segmented(body) {
        return Some((count, Some(first), true));
    }
    let (mut count, mut first, mut all) = (0, None, true);
    for segment in body.as_bytes().split(|&b| b == b'/') {
        match segment {
            b"" | b"." => all = false,
            b".." => return None,
            s => {
                first = first.or(Some(s));
                count += 1;
            }
        }
    }
    Some((count, first, all))
}

/// `root` (`"/"`, `"~"`, or a working directory in normal form) followed
/// by the segments of `body` other than empty and `.` ones (`all`: every
/// segment of a non-empty body is one).
fn joined(root: &str, body: &str, all: bool) -> String {
    let base = if root == "/" { "" } else { root };
    let mut out = String::with_capacity(base.len() + body.len() + 1);
    out.push_str(base);
    if all && !body.is_empty() {
        out.push('/');
        out.push_str(body);
    } else {
        for segment in segments_in(body).filter(|s| *s != ".") {
            out.push('/');
            out.push_str(segment);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// What [`walked`] gives, home aside, for a path without `..` segments that
/// is absolute (not under `/proc`), `~` or under `~/`, or relative to a
/// working directory in normal form; borrowed when the path is its own
/// normal form. `None` for any other path, which is walked.
fn tidied<'p>(path: &'p str, cwd: Option<&Cwd<'_>>) -> Option<Cow<'p, str>> {
    let (root, body, relative) = if let Some(body) = path.strip_prefix('/') {
        ("/", body, false)
    } else if path == "~" {
        return Some(Cow::Borrowed(path));
    } else if let Some(body) = path.strip_prefix("~/") {
        ("~", body, false)
    } else if path.starts_with(['~', '$']) {
        return None;
    } else {
        let cwd = cwd?;
        cwd.plain.unwrap_or_else(|| Cwd::plain_segments_of(cwd.text))?;
        (cwd.text, path, true)
    };
    let (_, first, all) = kept_segments(body)?;
    if root == "/" && first == Some(b"proc") {
        return None;
    }
    // Its own normal form: not relative, and nothing to drop (`/` alone, or every segment kept).
    let own = !relative && if body.is_empty() { root == "/" } else { all };
    Some(if own { Cow::Borrowed(path) } else { Cow::Owned(joined(root, body, all)) })
}

/// A normalized path under the normalized home, rewritten to `~/...`.
fn under_home<'p>(normalized: Cow<'p, str>, home_normalized: Option<&str>) -> Cow<'p, str> {
    match home_normalized {
        Some(h) if h.starts_with('/') && h != "/" => {
            if normalized == h {
                Cow::Borrowed("~")
            } else if let Some(rest) = normalized.strip_prefix(h).and_then(|r| r.strip_prefix('/')) {
                // Two copies, not the formatting machinery: every path under home comes here.
                let mut aliased = String::with_capacity(rest.len() + 2);
                aliased.push_str("~/");
                aliased.push_str(rest);
                Cow::Owned(aliased)
            } else {
                normalized
            }
        }
        _ => normalized,
    }
}

/// [`normalized`], segment by segment.
fn walked<'p>(path: &str, cwd: Option<&str>, home_normalized: Option<&str>) -> Cow<'p, str> {
    let other = other_users_home(path, home_normalized);
    let path = other.as_deref().unwrap_or(path);
    let (root, rest) = split(path);
    // The working directory, normalized the first time it is needed.
    let base: core::cell::OnceCell<Cow<'_, str>> = core::cell::OnceCell::new();
    let base_of = || cwd.map_or("", |c| base.get_or_init(|| normalized(c, None, home_normalized)).as_ref());
    let (mut root, mut segments): (Root, Vec<&str>) = match (root, cwd) {
        (Root::Relative, Some(_)) => {
            let (root, base_rest) = split(base_of());
            (root, segments_of(base_rest))
        }
        (root, _) => (root, Vec::new()),
    };
    for segment in segments_in(rest) {
        match segment {
            "." => {}
            ".." => {
                if segments.last().is_some_and(|s| *s == "..") {
                    segments.push("..");
                } else if segments.pop().is_none() {
                    match root {
                        // The parent of an unknown home is most likely `/home`.
                        Root::Home => {
                            root = Root::Absolute;
                            segments.push("home");
                        }
                        Root::Relative => segments.push(".."),
                        Root::Absolute => {}
                    }
                }
            }
            s => {
                segments.push(s);
                match proc_alias(root, &segments) {
                    Some(ProcAlias::Root) => segments.clear(),
                    Some(ProcAlias::Cwd) if cwd.is_some() => {
                        let (base_root, base_rest) = split(base_of());
                        root = base_root;
                        segments = segments_of(base_rest);
                    }
                    Some(ProcAlias::Cwd) | None => {}
                }
            }
        }
    }
    let joined_len = segments.iter().map(|s| s.len() + 1).sum::<usize>();
    let mut normalized = String::with_capacity(joined_len + 1);
    match root {
        Root::Absolute => normalized.push('/'),
        Root::Home if segments.is_empty() => normalized.push('~'),
        Root::Home => normalized.push_str("~/"),
        Root::Relative if segments.is_empty() => normalized.push('.'),
        Root::Relative => {}
    }
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            normalized.push('/');
        }
        normalized.push_str(s);
    }
    // A relative result that now begins with `~`, `~user` or `$HOME` (as in
    // `a/../~/.ssh`) would be read as home the next time it is normalized;
    // it is read so now, the stricter reading, so that normalizing twice
    // changes nothing.
    if root == Root::Relative && !segments.is_empty() && split(&normalized).0 != Root::Relative {
        return Cow::Owned(self::normalized(&normalized, None, home_normalized).into_owned());
    }
    under_home(Cow::Owned(normalized), home_normalized)
}

/// Whether `name` may be a login name: letters, digits, `_`, `.` and `-`,
/// not starting with `-` or `.`.
fn is_login_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['-', '.'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `~root/...` as `/root/...` and `~name/...` as `/home/name/...`, or under
/// the parent of the configured home (`/Users/name` when home is
/// `/Users/me`). `None` for `~`, `~/...` and what is not a login name.
fn other_users_home(path: &str, home_normalized: Option<&str>) -> Option<String> {
    let rest = path.strip_prefix('~')?;
    let end = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
    let (name, tail) = (rest.get(..end)?, rest.get(end..)?);
    if !is_login_name(name) {
        return None;
    }
    if name == "root" {
        return Some(format!("/root{tail}"));
    }
    let base = home_normalized
        .and_then(|h| h.rsplit_once('/'))
        .map(|(parent, _)| parent)
        .filter(|p| !p.is_empty() && *p != "/root")
        .unwrap_or("/home");
    Some(format!("{base}/{name}{tail}"))
}

/// What `/proc` entry a path's segments so far have reached.
enum ProcAlias {
    /// `/proc/self/root`, `/proc/<pid>/root`, `/proc/thread-self/root`,
    /// `/proc/<pid>/task/<tid>/root`: the root directory.
    Root,
    /// `/proc/self/cwd`, `/proc/thread-self/cwd`: the working directory.
    Cwd,
}

fn proc_alias(root: Root, segments: &[&str]) -> Option<ProcAlias> {
    if root != Root::Absolute || segments.first() != Some(&"proc") {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let own = |s: &str| s == "self" || s == "thread-self";
    match segments {
        ["proc", p, "root"] if own(p) || digits(p) => Some(ProcAlias::Root),
        ["proc", p, "task", t, "root"] if (own(p) || digits(p)) && digits(t) => Some(ProcAlias::Root),
        ["proc", p, "cwd"] if own(p) => Some(ProcAlias::Cwd),
        _ => None,
    }
}

/// The segments of a normalized path's body; `.` (an empty relative path) has none.
fn segments_of(rest: &str) -> Vec<&str> {
    segments_in(rest).filter(|s| *s != ".").collect()
}

/// The path as seen from a home directory: itself if it is home-relative,
/// or the part after `/root`, `/home/NAME` or `/Users/NAME`.
pub fn home_alias(path: &str) -> Option<String> {
    home_rest(path).map(|rest| format!("~{rest}"))
}

/// What follows `~` in [`home_alias`] of `path`, borrowed from it: `""` for
/// home itself, else `/...`.
fn home_rest(path: &str) -> Option<&str> {
    if path == "~" || path.starts_with("~/") {
        return path.get(1..);
    }
    let rest = if let Some(rest) = path.strip_prefix("/root") {
        rest
    } else if let Some(rest) = path.strip_prefix("/home/").or_else(|| path.strip_prefix("/Users/")) {
        let end = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
        if end == 0 {
            return None;
        }
        rest.get(end..).unwrap_or("")
    } else {
        return None;
    };
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// Most segments one glob may have; checked when globs are configured.
pub const MAX_GLOB_SEGMENTS: usize = 32;

/// Most `**` segments one glob may have; checked when globs are configured.
pub const MAX_GLOBSTARS: usize = 4;

/// Most wildcards (`*`, `?` and `**`, each counted once) one glob may have;
/// checked when globs are configured.
pub const MAX_GLOB_WILDCARDS: usize = 16;

/// A normalized path seen in the forms globs match against. It borrows the
/// path and allocates nothing: its segments are read as a glob walks them.
#[derive(Debug, Clone, Copy)]
pub struct SplitPath<'a> {
    /// The body of an absolute path, for `/`-anchored globs.
    rooted: Option<&'a str>,
    /// What follows `~` in the home alias, for `~/` globs.
    home: Option<&'a str>,
    /// The path without a leading `/` or `~`, for `**/` globs.
    body: &'a str,
    /// The last segment of `body`, found once for every `**/` glob that compares it.
    last: Option<&'a str>,
    /// The first segments of `rooted` and `home`, found once for every index that files globs by them.
    rooted_first: Option<&'a str>,
    home_first: Option<&'a str>,
    /// Whether the path holds `*`, `?` or `[`, found once a split: a path split
    /// for a check is asked this for every glob set it is matched with.
    pattern: bool,
}

/// `text` after its leading `/`s (a byte loop: a char pattern's searcher
/// costs more than these few bytes).
fn without_leading_slashes(text: &str) -> &str {
    let slashes = text.bytes().take_while(|&b| b == b'/').count();
    text.get(slashes..).unwrap_or_default()
}

/// The first non-empty segment of a path body.
pub fn first_segment(text: &str) -> Option<&str> {
    segments_in(text).next()
}

/// The non-empty segments of a path body.
fn segments_in(text: &str) -> Segments<'_> {
    Segments { rest: text }
}

/// The non-empty segments of a path body, from either end. It splits at `/`
/// bytes, which are never part of a longer UTF-8 character, so every piece
/// is a whole `str`; a path's few short segments are found by a plain loop
/// faster than by a character searcher.
#[derive(Debug, Clone)]
struct Segments<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let Some(start) = self.rest.bytes().position(|b| b != b'/') else {
            self.rest = "";
            return None;
        };
        let (_, rest) = self.rest.split_at_checked(start)?;
        let len = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
        let (segment, rest) = rest.split_at_checked(len)?;
        self.rest = rest;
        Some(segment)
    }
}

impl<'a> DoubleEndedIterator for Segments<'a> {
    fn next_back(&mut self) -> Option<&'a str> {
        let Some(last) = self.rest.bytes().rposition(|b| b != b'/') else {
            self.rest = "";
            return None;
        };
        let (rest, _) = self.rest.split_at_checked(last + 1)?;
        let start = rest.bytes().rposition(|b| b == b'/').map_or(0, |i| i + 1);
        let (rest, segment) = rest.split_at_checked(start)?;
        self.rest = rest;
        Some(segment)
    }
}

impl<'a> SplitPath<'a> {
    pub fn new(path: &'a str) -> SplitPath<'a> {
        // Home is `~` alone or before a `/`; a `~` glued to a name (`/~a`) is part of that name.
        let body = match path.strip_prefix('~') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => without_leading_slashes(rest),
            _ => without_leading_slashes(path),
        };
        let (rooted, home) = (path.strip_prefix('/'), home_rest(path));
        let first = |body: Option<&'a str>| body.and_then(|b| segments_in(b).next());
        SplitPath {
            rooted,
            home,
            body,
            last: segments_in(body).next_back(),
            rooted_first: first(rooted),
            home_first: first(home),
            pattern: overlap::has_wildcards(body),
        }
    }

    /// Whether the path holds `*`, `?` or `[`, and so names what a shell
    /// or a pathspec expands it to (see [`Glob::overlaps`]).
    pub fn is_pattern(&self) -> bool {
        self.pattern
    }

    /// Whether `glob` matches this path.
    pub fn matches(&self, glob: &Glob) -> bool {
        glob.matches(self)
    }

    /// The segments a glob of this anchor walks, if it can match at all.
    fn for_anchor(&self, anchor: Anchor) -> Option<&'a str> {
        match anchor {
            Anchor::Anywhere => Some(self.body),
            Anchor::Home => self.home,
            Anchor::Rooted => self.rooted,
        }
    }
}

/// Whether the glob text `glob` matches the normalized `path`; a malformed
/// glob matches nothing. Configured globs are compiled once instead ([`Glob`]).
pub fn glob_matches(glob: &str, path: &str) -> bool {
    Glob::new(glob).is_ok_and(|g| g.matches(&SplitPath::new(path)))
}

/// What a glob is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// `/...`: the segments of an absolute path.
    Rooted,
    /// `~` or `~/...`: the segments of the path's home alias.
    Home,
    /// `**/...`: the segments of any path, whatever its root.
    Anywhere,
}

/// One segment of a compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// `**`: zero or more whole segments.
    GlobStar,
    /// A segment without wildcards, compared exactly.
    Literal(String),
    /// A segment with `*` or `?`: the pieces between its stars, each a run of
    /// characters (`None` is `?`). One piece means no star at all.
    Wild(Vec<Vec<Option<char>>>),
}

/// A path glob compiled once, when the configuration is read.
///
/// Matching is a simulation of the glob as an automaton over the path's
/// segments: the set of glob positions still possible is carried from one
/// segment to the next, so `**` never backtracks. Within a segment, the
/// pieces between stars are found left to right, each at its first place,
/// which is exact for `*` and `?`. The work for one path is at most the
/// path's length times the glob's, and the glob's is bounded by
/// [`MAX_GLOB_SEGMENTS`] and [`MAX_GLOB_WILDCARDS`] and its length.
#[derive(Debug, Clone)]
pub struct Glob {
    text: String,
    exception: bool,
    anchor: Anchor,
    parts: Vec<Part>,
}

impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Glob {}

impl Glob {
    /// Compiles a glob: anchored at `/`, `~/` or `**/`, with `**` only as a
    /// whole segment, no `.` or `..` segments, and within the caps. The error
    /// says what is wrong, for `"`GLOB` " + error`.
    pub fn new(glob: &str) -> Result<Glob, String> {
        let (anchor, body) = if glob.starts_with("**/") {
            (Anchor::Anywhere, glob)
        } else if glob == "~" || glob.starts_with("~/") {
            (Anchor::Home, glob.get(1..).unwrap_or_default())
        } else if let Some(rest) = glob.strip_prefix('/') {
            (Anchor::Rooted, rest)
        } else {
            return Err("must start with `/`, `~/` or `**/`".to_string());
        };
        if glob.contains('\0') {
            return Err("must not contain NUL".to_string());
        }
        let mut parts = Vec::new();
        let (mut stars, mut wildcards) = (0usize, 0usize);
        for segment in body.split('/').filter(|s| !s.is_empty()) {
            if segment == "**" {
                stars += 1;
                wildcards += 1;
                // `**/**` matches what one `**` does.
                if parts.last() != Some(&Part::GlobStar) {
                    parts.push(Part::GlobStar);
                }
                continue;
            }
            if segment.contains("**") {
                return Err("may use `**` only as a whole path segment".to_string());
            }
            if segment == ".." || segment == "." {
                return Err("must not contain `.` or `..` segments".to_string());
            }
            let wild = segment.chars().filter(|c| matches!(c, '*' | '?')).count();
            wildcards += wild;
            parts.push(if wild == 0 {
                Part::Literal(segment.to_string())
            } else {
                Part::Wild(
                    segment.split('*').map(|piece| piece.chars().map(|c| (c != '?').then_some(c)).collect()).collect(),
                )
            });
        }
        let segments = body.split('/').filter(|s| !s.is_empty()).count();
        if segments > MAX_GLOB_SEGMENTS {
            return Err(format!("may have at most {MAX_GLOB_SEGMENTS} segments, got {segments}"));
        }
        if stars > MAX_GLOBSTARS {
            return Err(format!("may use `**` at most {MAX_GLOBSTARS} times"));
        }
        if wildcards > MAX_GLOB_WILDCARDS {
            return Err(format!("may have at most {MAX_GLOB_WILDCARDS} wildcards (`*`, `?`, `**`), got {wildcards}"));
        }
        Ok(Glob { text: glob.to_string(), exception: false, anchor, parts })
    }

    /// Compiles a glob of a list that allows exceptions: `!glob` is an exception.
    pub fn with_exception(text: &str) -> Result<Glob, String> {
        match text.strip_prefix('!') {
            Some(rest) => Glob::new(rest).map(|g| Glob { text: text.to_string(), exception: true, ..g }),
            None => Glob::new(text),
        }
    }

    /// Whether this is an exception (`!glob`).
    pub fn is_exception(&self) -> bool {
        self.exception
    }

    /// The glob as written, with its `!` if it is an exception.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether this glob matches the path.
    pub fn matches(&self, path: &SplitPath) -> bool {
        self.matches_counting(path, &mut 0)
    }

    /// [`Glob::matches`], counting its work, for the fuzz targets.
    #[cfg(test)]
    pub(crate) fn matches_counting_for_tests(&self, path: &SplitPath, work: &mut usize) -> bool {
        self.matches_counting(path, work)
    }

    /// [`Glob::matches`], adding each character comparison and state step to `work`.
    fn matches_counting(&self, path: &SplitPath, work: &mut usize) -> bool {
        path.for_anchor(self.anchor).is_some_and(|body| self.run(segments_in(body), work))
    }

    /// The automaton: bit `i` of `states` means the first `i` parts have matched.
    fn run<'p>(&self, path: impl Iterator<Item = &'p str>, work: &mut usize) -> bool {
        let n = self.parts.len();
        let close = |mut states: u64| {
            for (i, part) in self.parts.iter().enumerate() {
                if *part == Part::GlobStar && states & (1 << i) != 0 {
                    states |= 1 << (i + 1);
                }
            }
            states
        };
        let mut states = close(1);
        for name in path {
            let mut next = 0u64;
            for (i, part) in self.parts.iter().enumerate() {
                if states & (1 << i) == 0 {
                    continue;
                }
                *work += 1;
                let advance = match part {
                    Part::GlobStar => {
                        next |= 1 << i;
                        false
                    }
                    Part::Literal(literal) => {
                        *work += literal.len().min(name.len());
                        literal == name
                    }
                    Part::Wild(pieces) => wild_matches(pieces, name, work),
                };
                if advance {
                    next |= 1 << (i + 1);
                }
            }
            states = close(next);
            if states == 0 {
                return false;
            }
        }
        states & (1 << n) != 0
    }

    /// The literal first part, which the first segment must equal.
    fn first_literal(&self) -> Option<&str> {
        match self.parts.first() {
            Some(Part::Literal(l)) => Some(l),
            _ => None,
        }
    }
}

/// Globs compiled once and indexed, so a path is matched only against the
/// globs that can match it, in their configured order.
///
/// A glob anchored at `/` or `~/` whose first segment has no wildcard is
/// filed under that segment: `/etc/shadow` is a candidate only for paths
/// whose first segment is `etc`. The others (`**/.env`, `/*/x`) are
/// candidates for every path. A candidate whose last segment is not `**`
/// is skipped without walking the path when that segment does not match
/// the path's last one. Both are necessary conditions of a match, so the set
/// answers exactly what matching every glob in order would.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobSet {
    globs: Vec<Glob>,
    /// Positions of `/`-anchored globs by their literal first segment, sorted by it.
    rooted: Index,
    /// Positions of `~/`-anchored globs by their literal first segment, sorted by it.
    home: Index,
    /// Positions of every other glob.
    unindexed: Vec<usize>,
}

/// Glob positions by literal first segment, sorted by it, with the set of
/// the segments' first bytes: a path whose first segment starts with none
/// of them is looked up no further (most paths, against the default globs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Index {
    by_first: Vec<(String, Vec<usize>)>,
    first_bytes: [u64; 4],
}

impl Index {
    fn new(by_first: BTreeMap<String, Vec<usize>>) -> Index {
        let mut first_bytes = [0u64; 4];
        for key in by_first.keys() {
            if let Some(&b) = key.as_bytes().first()
                && let Some(word) = first_bytes.get_mut(usize::from(b / 64))
            {
                *word |= 1 << (b % 64);
            }
        }
        Index { by_first: by_first.into_iter().collect(), first_bytes }
    }

    /// Whether some key starts with `b`.
    fn may_start(&self, b: u8) -> bool {
        self.first_bytes.get(usize::from(b / 64)).is_some_and(|w| w & (1 << (b % 64)) != 0)
    }
}

impl GlobSet {
    pub fn new(globs: Vec<Glob>) -> GlobSet {
        let (mut rooted, mut home) = (BTreeMap::<String, Vec<usize>>::new(), BTreeMap::<String, Vec<usize>>::new());
        let mut unindexed = Vec::new();
        for (i, glob) in globs.iter().enumerate() {
            match (glob.anchor, glob.first_literal()) {
                (Anchor::Rooted, Some(first)) => rooted.entry(first.to_string()).or_default().push(i),
                (Anchor::Home, Some(first)) => home.entry(first.to_string()).or_default().push(i),
                _ => unindexed.push(i),
            }
        }
        GlobSet { globs, rooted: Index::new(rooted), home: Index::new(home), unindexed }
    }

    /// The globs, in their configured order.
    pub fn globs(&self) -> &[Glob] {
        &self.globs
    }

    /// The position of the first glob, in configured order, that `keep`
    /// accepts and that matches `path`.
    pub fn first_match(&self, path: &SplitPath, keep: impl Fn(usize) -> bool) -> Option<usize> {
        let mut lists =
            [listed(&self.rooted, path.rooted_first), listed(&self.home, path.home_first), self.unindexed.as_slice()];
        loop {
            // The smallest position at the head of the three lists.
            let (list, &i) = lists
                .iter()
                .enumerate()
                .filter_map(|(l, list)| list.first().map(|i| (l, i)))
                .min_by_key(|(_, i)| *i)?;
            if let Some(rest) = lists.get_mut(list) {
                *rest = rest.get(1..).unwrap_or_default();
            }
            if keep(i) && self.globs.get(i).is_some_and(|g| g.matches_quickly(path)) {
                return Some(i);
            }
        }
    }

    /// [`GlobSet::first_match`], and for a path that is a pattern, the first
    /// glob `keep` accepts that some path it names matches ([`Glob::overlaps`]).
    pub fn first_cover(&self, path: &SplitPath, dots: Dots, keep: impl Fn(usize) -> bool) -> Option<usize> {
        self.first_match(path, &keep).or_else(|| {
            if !path.is_pattern() {
                return None;
            }
            self.globs.iter().enumerate().position(|(i, g)| keep(i) && g.overlaps(path, dots))
        })
    }

    /// The first glob, in configured order, that matches `path`.
    pub fn first_glob(&self, path: &SplitPath) -> Option<&Glob> {
        self.first_match(path, |_| true).and_then(|i| self.globs.get(i))
    }

    /// Whether any glob matches `path`.
    pub fn any_match(&self, path: &SplitPath) -> bool {
        self.first_match(path, |_| true).is_some()
    }
}

/// The positions filed under `first`, a path body's first segment.
fn listed<'m>(index: &'m Index, first: Option<&str>) -> &'m [usize] {
    if index.by_first.is_empty() {
        return &[];
    }
    let Some(first) = first else { return &[] };
    if !first.as_bytes().first().is_some_and(|&b| index.may_start(b)) {
        return &[];
    }
    let index = &index.by_first;
    index.binary_search_by(|(key, _)| key.as_str().cmp(first)).ok().and_then(|at| index.get(at)).map_or(&[], |(_, l)| l)
}

impl Glob {
    /// [`Glob::matches`], with the last segment compared before the path is
    /// walked: a last part that is not `**` matches only the last segment.
    fn matches_quickly(&self, path: &SplitPath) -> bool {
        let Some(body) = path.for_anchor(self.anchor) else { return false };
        // Every anchor's body ends where the path does and starts at a `/`
        // (or at the path's start), so its last segment is the path's, found
        // once, unless the body has no segment at all (home itself, `/`).
        let last = if body.bytes().all(|b| b == b'/') { None } else { path.last };
        let possible = match (self.parts.last(), last) {
            (None | Some(Part::GlobStar), _) => true,
            (Some(_), None) => false,
            (Some(Part::Literal(literal)), Some(name)) => literal == name,
            (Some(Part::Wild(pieces)), Some(name)) => wild_matches(pieces, name, &mut 0),
        };
        possible && self.head_matches(body) && self.run(segments_in(body), &mut 0)
    }

    /// Whether the path's first segments equal the glob's leading literal
    /// parts, each of which must match exactly one segment, in order: a
    /// necessary condition of a match, compared without the automaton
    /// (`/home/me/.cache/x/**` against `/home/me/project` stops at the
    /// third segment).
    fn head_matches(&self, body: &str) -> bool {
        let mut segments = segments_in(body);
        for part in &self.parts {
            let Part::Literal(literal) = part else { return true };
            if segments.next() != Some(literal.as_str()) {
                return false;
            }
        }
        true
    }
}

impl serde::Serialize for Glob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Glob {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> alloc::borrow::Cow<'static, str> {
        "Glob".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "minLength": 1,
            "maxLength": crate::tools::config::MAX_GLOB_CHARS,
        })
    }
}

/// Whether `piece` matches the start of `text` (`None` matches any
/// character): `Ok` with the bytes it covers, `Err(true)` when `text` has
/// fewer characters than the piece, `Err(false)` when a character differs.
fn piece_at(piece: &[Option<char>], text: &str, work: &mut usize) -> Result<usize, bool> {
    let mut chars = text.char_indices();
    for p in piece {
        let Some((_, c)) = chars.next() else { return Err(true) };
        *work += 1;
        if p.is_some_and(|p| p != c) {
            return Err(false);
        }
    }
    Ok(chars.next().map_or(text.len(), |(i, _)| i))
}

/// Whether a segment with wildcards matches `text`: the first piece at the
/// start, the last at the end, and the pieces between stars each at the
/// first place they fit, in order.
fn wild_matches(pieces: &[Vec<Option<char>>], text: &str, work: &mut usize) -> bool {
    let (Some(first), Some(last)) = (pieces.first(), pieces.last()) else { return false };
    if pieces.len() == 1 {
        return piece_at(first, text, work) == Ok(text.len());
    }
    // Where the last piece starts: as many characters before the end as it has.
    let end = match last.len().checked_sub(1) {
        None => text.len(),
        Some(back) => match text.char_indices().nth_back(back) {
            Some((i, _)) => i,
            None => return false,
        },
    };
    let (Some(head), Some(tail)) = (text.get(..end), text.get(end..)) else { return false };
    let Ok(mut at) = piece_at(first, head, work) else { return false };
    if piece_at(last, tail, work).is_err() {
        return false;
    }
    for piece in pieces.get(1..pieces.len() - 1).unwrap_or_default() {
        loop {
            let rest = head.get(at..).unwrap_or_default();
            match piece_at(piece, rest, work) {
                Ok(len) => {
                    at += len;
                    break;
                }
                Err(true) => return false,
                Err(false) => at += rest.chars().next().map_or(1, char::len_utf8),
            }
        }
    }
    true
}

/// Whether a glob is well formed (see [`Glob::new`]), and if not, why.
pub fn glob_problem(glob: &str) -> Option<String> {
    Glob::new(glob).err()
}

fn segments(text: &str) -> Vec<&str> {
    segments_in(text).collect()
}

/// Whether `path` is `root` or inside it. Both are normalized paths.
pub fn is_within(path: &str, root: &str) -> bool {
    if root == "/" {
        return path.starts_with('/');
    }
    path == root || path.strip_prefix(root).is_some_and(|rest| rest.starts_with('/'))
}

/// Whether deleting `path` recursively would wipe a whole system or home:
/// `/`, a top-level directory, everything in one (`/usr/*`), home itself or
/// everything in it (`~/*`).
pub fn is_critical_target(path: &str) -> bool {
    let globbed = |s: &str| !s.is_empty() && s.chars().all(|c| matches!(c, '*' | '?' | '.'));
    if let Some(rest) = home_rest(path) {
        let segs = segments(rest);
        return match segs.as_slice() {
            [] => true,
            [only] => globbed(only) || only.starts_with('*'),
            _ => false,
        };
    }
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let segs = segments(rest);
    match segs.as_slice() {
        [] | [_] => true,
        [_, last] => globbed(last),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deep path's segments: far more than anyone nests folders, and what
    /// a path field of `MAX_PATH_CHARS` holds at most, one-letter names.
    const DEEP: usize = MAX_PATH_CHARS / 2;

    #[test]
    fn a_body_read_eight_bytes_at_a_time_is_plain_only_when_every_segment_is() {
        // Every body of up to 10 characters over `a`, `.` and `/` (words
        // end and start inside `..`, `//` and `/.`), and longer ones.
        fn by_segments(body: &str) -> Option<(usize, &[u8])> {
            let segments: Vec<&[u8]> = body.as_bytes().split(|&b| b == b'/').collect();
            let plain = segments.iter().all(|s| !matches!(*s, b"" | b"." | b".."));
            plain.then(|| (segments.len(), segments.first().copied().unwrap_or_default()))
        }
        let mut bodies = vec![String::new()];
        let mut seen = 0;
        for _ in 0..10 {
            let mut longer = Vec::new();
            for body in &bodies {
                for c in ['a', '.', '/'] {
                    longer.push(format!("{body}{c}"));
                }
            }
            for body in &longer {
                let quick = plainly_segmented(body);
                if let Some((count, first)) = quick {
                    assert_eq!(Some((count, first)), by_segments(body), "{body:?}");
                    seen += 1;
                }
                assert_eq!(plain_segments(body), by_segments(body).map(|(n, _)| n), "{body:?}");
                let kept = kept_segments(body).map(|(n, f, all)| (n, f.unwrap_or_default(), all));
                if let Some((n, first)) = by_segments(body) {
                    assert_eq!(kept, Some((n, first, true)), "{body:?}");
                }
            }
            bodies = longer;
        }
        assert!(seen > 1000, "the quick reading answers most plain bodies ({seen})");
        for body in ["src/main.rs", "a/b/c/d/e/f/g/h/i/j/k", "home/dev/project/tests/a.rs", "12345678/.x"] {
            let slow = by_segments(body);
            assert_eq!(plainly_segmented(body).or(slow), slow, "{body:?}");
        }
        assert_eq!(plainly_segmented("1234567/.x"), None, "a `/` ending one word and `.` starting the next");
        assert_eq!(plainly_segmented("1234567//x"), None);
        assert_eq!(plainly_segmented("ééé/ü/x"), Some((3, "ééé".as_bytes())));
    }

    #[test]
    fn normalization_resolves_every_spelling_of_a_path() {
        let cases: &[(&str, Option<&str>, Option<&str>, &str)] = &[
            ("~/.ssh/id_rsa", None, None, "~/.ssh/id_rsa"),
            ("$HOME/.ssh//id_rsa", None, None, "~/.ssh/id_rsa"),
            ("${HOME}/.ssh/./id_rsa/", None, None, "~/.ssh/id_rsa"),
            ("~bob/.ssh/id_rsa", None, None, "/home/bob/.ssh/id_rsa"),
            ("~root/.ssh/id_rsa", None, None, "/root/.ssh/id_rsa"),
            ("~me/.ssh", None, Some("/home/me"), "~/.ssh"),
            ("~bob/x", None, Some("/Users/me"), "/Users/bob/x"),
            ("~+/x", None, None, "~/x"),
            ("~../x", None, None, "~/x"),
            ("/proc/self/root/etc/shadow", None, None, "/etc/shadow"),
            ("/proc/1/root/etc//shadow/", None, None, "/etc/shadow"),
            ("/proc/thread-self/root/etc/shadow", None, None, "/etc/shadow"),
            ("/proc/self/task/12/root/etc/shadow", None, None, "/etc/shadow"),
            ("/proc/self/root/proc/self/root/root/.ssh", None, None, "/root/.ssh"),
            ("/proc/self/root/../etc/shadow", None, None, "/etc/shadow"),
            ("/proc/self/../1/root/etc/shadow", None, None, "/etc/shadow"),
            ("/proc/self/root", None, None, "/"),
            ("/proc/self/cwd/.env", Some("/ws/app"), None, "/ws/app/.env"),
            ("/proc/self/cwd/../x", Some("/ws/app"), None, "/ws/x"),
            ("/proc/self/cwd/.env", None, None, "/proc/self/cwd/.env"),
            ("/proc/1/cwd/.env", Some("/ws"), None, "/proc/1/cwd/.env"),
            ("/proc/self/fd/3", None, None, "/proc/self/fd/3"),
            ("/proc/selfish/root/x", None, None, "/proc/selfish/root/x"),
            ("/etc/./shadow/.", None, None, "/etc/shadow"),
            ("/home/me/proj/../.ssh/id_rsa", None, Some("/home/me"), "~/.ssh/id_rsa"),
            ("/home/me", None, Some("/home/me/"), "~"),
            ("/home/meat/x", None, Some("/home/me"), "/home/meat/x"),
            ("src/../../x", Some("/ws/app"), None, "/ws/x"),
            ("../../../../..", Some("/ws"), None, "/"),
            ("x/./y//", None, None, "x/y"),
            ("../x", None, None, "../x"),
            (".", None, None, "."),
            ("/", None, None, "/"),
            ("//etc///shadow", None, None, "/etc/shadow"),
            ("~/../alice/.ssh", None, None, "/home/alice/.ssh"),
            ("../../x", None, None, "../../x"),
            ("notes.md", Some("~/proj"), None, "~/proj/notes.md"),
            ("$HOMEDIR/x", Some("/ws"), None, "/ws/$HOMEDIR/x"),
        ];
        for (path, cwd, home, expected) in cases {
            assert_eq!(normalize(path, *cwd, *home), *expected, "{path} in {cwd:?} with home {home:?}");
        }
    }

    #[test]
    fn globs_match_by_segment_with_globstar() {
        let cases: &[(&str, &str, bool)] = &[
            ("~/.ssh/**", "~/.ssh/id_rsa", true),
            ("~/.ssh/**", "~/.ssh", true),
            ("~/.ssh/**", "/home/alice/.ssh/keys/id_ed25519", true),
            ("~/.ssh/**", "/root/.ssh/id_rsa", true),
            ("~/.ssh/**", "/Users/a/.ssh/config", true),
            ("~/.ssh/**", "~/.sshx/id_rsa", false),
            ("~/.ssh/**", "/srv/.ssh/id_rsa", false),
            ("~/.ssh/*.pub", "~/.ssh/id_rsa.pub", true),
            ("~/.ssh/*.pub", "~/.ssh/id_rsa", false),
            ("**/.env", "/ws/app/.env", true),
            ("**/.env", ".env", true),
            ("**/.env", "/ws/.env.example", false),
            ("**/.env.*", "/ws/.env.local", true),
            ("/etc/sudoers.d/**", "/etc/sudoers.d/90-agent", true),
            ("/etc/shadow", "/etc/shadow", true),
            ("/etc/shadow", "/etc/shadow-", false),
            ("/etc/shadow", "etc/shadow", false),
            ("/tmp/**", "/tmp", true),
            ("/a/**/b/**/c", "/a/x/y/b/c", true),
            ("/a/**/b/**/c", "/a/x/y/c", false),
            ("/dev/fd/**", "/dev/fd/3", true),
            ("/a?c", "/abc", true),
            ("/a*c*e", "/abXcYe", true),
            ("/a*c*e", "/abXcY", false),
        ];
        for (glob, path, expected) in cases {
            assert_eq!(glob_matches(glob, path), *expected, "{glob} vs {path}");
        }
    }

    /// The work of matching `glob` against `path`, and whether it matched.
    fn work(glob: &str, path: &str) -> (bool, usize) {
        let glob = Glob::new(glob).unwrap_or_else(|e| panic!("`{glob}` {e}"));
        let mut work = 0;
        let matched = glob.matches_counting(&SplitPath::new(path), &mut work);
        (matched, work)
    }

    /// Globs at the caps that a backtracking matcher takes exponential or
    /// quadratic time on, with the longest paths that defeat them.
    fn adversarial_cases(path_segments: usize, segment_chars: usize) -> Vec<(String, String)> {
        let deep = format!("/{}", ["a"; DEEP].iter().take(path_segments).copied().collect::<Vec<_>>().join("/"));
        let stars = format!("/{}", "*a".repeat(MAX_GLOB_WILDCARDS / 2 - 1) + "*b");
        let one_segment = format!("/{}", "a".repeat(segment_chars));
        let mut many = vec!["**"; MAX_GLOBSTARS];
        many.push("x");
        let interleaved = format!("/**/a/**/a/**/a/**/{}", "?".repeat(MAX_GLOB_WILDCARDS - MAX_GLOBSTARS));
        vec![
            (format!("{}/x", "**/**/**/**"), format!("{deep}/y")),
            (format!("/{}", many.join("/")), format!("{deep}/y")),
            (interleaved, format!("{deep}/y")),
            (stars.clone(), one_segment.clone()),
            (format!("**/{}", stars.trim_start_matches('/')), format!("{deep}{one_segment}")),
        ]
    }

    #[test]
    fn matching_work_grows_linearly_with_the_path_even_for_adversarial_globs() {
        for ((glob, short), (_, long)) in adversarial_cases(64, 1024).into_iter().zip(adversarial_cases(128, 2048)) {
            let (short_hit, short_work) = work(&glob, &short);
            let (long_hit, long_work) = work(&glob, &long);
            assert!(!short_hit && !long_hit, "`{glob}` is built not to match");
            // Twice the path, at most a little over twice the work (quadratic would be four times).
            assert!(long_work <= short_work * 5 / 2, "`{glob}`: {short_work} then {long_work} steps");
            // And never more than the path's length times the glob's.
            let bound = (long.chars().count() + 1) * (glob.chars().count() + 1);
            assert!(long_work <= bound, "`{glob}`: {long_work} steps over {bound}");
        }
    }

    #[test]
    fn the_worst_glob_at_every_cap_against_the_longest_path_is_cheap() {
        let (one_segment, deep) = (MAX_PATH_CHARS - 1, DEEP);
        for (glob, path) in adversarial_cases(deep, one_segment) {
            let (hit, steps) = work(&glob, &path);
            assert!(!hit, "`{glob}`");
            // A few hundred thousand comparisons: well under a millisecond.
            assert!(steps <= 200_000, "`{glob}` took {steps} steps on a path of {} characters", path.len());
        }
    }

    #[test]
    fn glob_caps_hold_exactly_at_their_bound_and_refuse_one_past() {
        let segments = |n: usize| format!("/{}", vec!["s"; n].join("/"));
        assert_eq!(glob_problem(&segments(MAX_GLOB_SEGMENTS)), None);
        assert_eq!(
            glob_problem(&segments(MAX_GLOB_SEGMENTS + 1)),
            Some(format!("may have at most {MAX_GLOB_SEGMENTS} segments, got {}", MAX_GLOB_SEGMENTS + 1))
        );
        let wild = |n: usize| format!("/{}", "*a".repeat(n));
        assert_eq!(glob_problem(&wild(MAX_GLOB_WILDCARDS)), None);
        assert_eq!(
            glob_problem(&wild(MAX_GLOB_WILDCARDS + 1)),
            Some(format!("may have at most {MAX_GLOB_WILDCARDS} wildcards (`*`, `?`, `**`), got 17"))
        );
        // `?` and `**` count as wildcards too, across segments.
        let mixed = format!("/**/{}/{}", "?".repeat(MAX_GLOB_WILDCARDS - 2), "*");
        assert_eq!(glob_problem(&mixed), None);
        assert!(glob_problem(&format!("{mixed}?")).is_some());
        // The 120 `*a` of one segment that once put every long path over the deadline.
        assert!(glob_problem(&format!("/{}", "*a".repeat(120))).is_some_and(|p| p.contains("wildcards")));
    }

    #[test]
    fn repeated_globstars_match_what_one_does() {
        for path in ["/x", "/a/x", "/a/b/c/x", "/a/b/c/x/y", "x", "~/x"] {
            assert_eq!(glob_matches("**/**/**/**/x", path), glob_matches("**/x", path), "{path}");
        }
    }

    #[test]
    fn exceptions_are_compiled_with_their_mark() {
        let g = Glob::with_exception("!~/.ssh/*.pub").expect("valid");
        assert!(g.is_exception());
        assert_eq!(g.as_str(), "!~/.ssh/*.pub");
        assert!(g.matches(&SplitPath::new("~/.ssh/id_rsa.pub")));
        assert_eq!(Glob::with_exception("!.env").err(), Some("must start with `/`, `~/` or `**/`".into()));
        assert!(Glob::new("!~/.ssh/*.pub").is_err(), "no exceptions where none are allowed");
    }

    #[test]
    fn malformed_globs_are_explained() {
        assert!(glob_problem("~/.ssh/**").is_none());
        assert!(glob_problem("**/.env").is_none());
        assert!(glob_problem(".env").is_some());
        assert!(glob_problem("/a**/b").is_some());
        assert!(glob_problem("/a/../b").is_some());
        let at = format!("/{}", ["**"; MAX_GLOBSTARS].join("/"));
        assert!(glob_problem(&at).is_none());
        let past = format!("{at}/**");
        assert!(glob_problem(&past).is_some());
    }

    #[test]
    fn critical_targets_are_roots_top_levels_and_homes() {
        let cases: &[(&str, bool)] = &[
            ("/", true),
            ("/*", true),
            ("/etc", true),
            ("/usr/*", true),
            ("/usr/lib", false),
            ("~", true),
            ("~/*", true),
            ("~/.*", true),
            ("/home/alice", true),
            ("/root", true),
            ("~/proj", false),
            ("/ws/build", false),
            ("build", false),
        ];
        for (path, expected) in cases {
            assert_eq!(is_critical_target(path), *expected, "{path}");
        }
    }

    #[test]
    fn containment_respects_segment_boundaries() {
        assert!(is_within("/ws/a", "/ws"));
        assert!(is_within("/ws", "/ws"));
        assert!(!is_within("/wsx/a", "/ws"));
        assert!(is_within("/anything", "/"));
        assert!(!is_within("~/x", "/"));
    }

    #[test]
    fn a_path_of_any_depth_or_length_keeps_every_segment_a_rule_could_name() {
        let deep = |unit: &str, n: usize| unit.repeat(n);
        let cases = [
            ("three hundred folders deep", format!("{}.env", deep("a/", 300)), format!("/ws/{}.env", deep("a/", 300))),
            (
                "longer than a path field may be",
                format!("{}.env", deep("a/", MAX_PATH_CHARS)),
                format!("/ws/{}.env", deep("a/", MAX_PATH_CHARS)),
            ),
            ("down and back up again", format!("{}{}.env", deep("a/", 300), deep("../", 300)), "/ws/.env".into()),
            ("thousands of dots", format!("{}.env", deep("./", 3000)), "/ws/.env".into()),
            ("thousands of slashes", format!("{}.env", deep("/", 3000)), "/.env".into()),
            (
                "deep under home and back",
                format!("~/{}{}.ssh/id_rsa", deep("a/", 300), deep("../", 300)),
                "~/.ssh/id_rsa".into(),
            ),
            (
                "deep from the root and back",
                format!("/{}{}etc/shadow", deep("x/", 5000), deep("../", 5000)),
                "/etc/shadow".into(),
            ),
            ("wide characters", format!("{}.env", deep("é/", 3000)), format!("/ws/{}.env", deep("é/", 3000))),
            (
                "a pattern past the old cut",
                format!("{}.e*", deep("[a]/", 1500)),
                format!("/ws/{}.e*", deep("[a]/", 1500)),
            ),
        ];
        for (what, path, expected) in cases {
            assert_eq!(normalize(&path, Some("/ws"), None), expected, "{what}");
            assert_eq!(walked(&path, Some("/ws"), None), expected, "{what}, walked");
        }
    }

    /// The glob as a regular expression over the path's segments, each
    /// followed by `/`: an independent statement of what a glob means.
    fn as_regex(glob: &str) -> Option<regex::Regex> {
        let body = glob.strip_prefix("**/").map(|_| glob).or_else(|| glob.strip_prefix('/'))?;
        let mut re = String::from("^");
        for segment in body.split('/').filter(|s| !s.is_empty()) {
            if segment == "**" {
                re.push_str("(?:[^/]+/)*");
                continue;
            }
            for c in segment.chars() {
                match c {
                    '*' => re.push_str("[^/]*"),
                    '?' => re.push_str("[^/]"),
                    c => re.push_str(&regex::escape(&c.to_string())),
                }
            }
            re.push('/');
        }
        re.push('$');
        regex::Regex::new(&re).ok()
    }

    fn segment_strategy() -> impl Strategy<Value = String> {
        prop_oneof!["[ab]{1,4}", "[ab.]{1,3}", Just("é".to_string()), Just("a*".to_string()), "[~a]{1,3}"]
    }

    fn glob_segment_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("**".to_string()),
            "[ab*?]{1,5}".prop_filter("`**` is a whole segment", |s| !s.contains("**")),
            "[ab.é]{1,3}".prop_filter("no dot segments", |s| s != "." && s != ".."),
        ]
    }

    use proptest::prelude::*;

    fn anchored_glob_strategy() -> impl Strategy<Value = String> {
        let anchor = prop_oneof![Just("/"), Just("~/"), Just("**/"), Just("!/"), Just("!**/")];
        (anchor, proptest::collection::vec(glob_segment_strategy(), 0..4))
            .prop_map(|(anchor, segments)| format!("{anchor}{}", segments.join("/")))
    }

    fn path_strategy() -> impl Strategy<Value = String> {
        // `~` glued to a segment (`/~a`, `~~a`) is a name, not home, in every anchored form.
        let root = prop_oneof![
            Just("/"),
            Just("~/"),
            Just(""),
            Just("/home/me/"),
            Just("/root/"),
            Just("/Users/x/"),
            Just("/~"),
            Just("~"),
            Just("//~/")
        ];
        (root, proptest::collection::vec(segment_strategy(), 0..6))
            .prop_map(|(root, segments)| format!("{root}{}", segments.join("/")))
    }

    #[test]
    fn a_tilde_glued_to_a_name_stays_part_of_the_name_for_anywhere_globs() {
        // `/~.env` is a file named `~.env`, not `.env`; `~/.env` is `.env` in home.
        assert!(!glob_matches("**/.env", "/~.env"));
        assert!(glob_matches("**/~.env", "/~.env"));
        assert!(glob_matches("**/.env", "~/.env"));
        assert!(glob_matches("**/.env", "/srv/app/.env"));
        assert!(glob_matches("**/*?a/**", "/~a/b"));
        assert!(glob_matches("**/x", "~/x") && !glob_matches("**/x", "/~x"));
        assert!(glob_matches("**/~", "/~") && !glob_matches("**/~", "~"));
    }

    #[test]
    fn a_glob_set_skips_only_globs_that_cannot_match() {
        let globs: Vec<Glob> =
            ["/etc/shadow", "~/.ssh/**", "**/.env", "**/.env.*", "/*/x", "~", "/", "/tmp/**", "~/.ssh/*.pub"]
                .iter()
                .map(|g| Glob::new(g).expect("valid"))
                .collect();
        let set = GlobSet::new(globs.clone());
        for path in
            ["/etc/shadow", "~/.ssh/id", "/root/.ssh", "/a/.env", ".env", "/ws/.env.local", "/q/x", "~", "/", "/tmp"]
        {
            let split = SplitPath::new(path);
            let expected = globs.iter().position(|g| g.matches(&split));
            assert!(expected.is_some(), "`{path}` is meant to match one of the globs");
            assert_eq!(set.first_match(&split, |_| true), expected, "{path}");
        }
        for path in ["/srv/a", "/etc", "/etc/shadow/x", "~/.sshx", "/a/.envx"] {
            assert_eq!(set.first_match(&SplitPath::new(path), |_| true), None, "{path}");
        }
        // `keep` passes over a glob that matches, to the next one that does.
        assert_eq!(set.first_match(&SplitPath::new("~/.ssh/k.pub"), |i| i != 1), Some(8));
    }

    #[test]
    fn globs_sharing_a_literal_head_are_told_apart_by_the_segments_after_it() {
        // A host declares several files under one folder; only the glob whose
        // every leading literal equals the path's segments may match.
        let texts = [
            "/home/me/.local/w/w.db",
            "/home/me/.local/w/w.db-wal",
            "/home/me/.cache/w/**",
            "~/.config/w/*.json",
            "/home/me/**/.env",
            "~",
            "/home/me",
        ];
        let globs: Vec<Glob> = texts.iter().map(|g| Glob::new(g).expect("valid")).collect();
        let set = GlobSet::new(globs.clone());
        let cases: [(&str, Option<usize>); 15] = [
            ("/home/me/.local/w/w.db", Some(0)),
            ("/home/me/.local/w/w.db-wal", Some(1)),
            ("/home/me/.local/w", None),
            ("/home/me/.local/w/w.db/x", None),
            ("/home/me/.cache/w", Some(2)),
            ("/home/me/.cache", None),
            ("/home/me/.cache/w/a/b", Some(2)),
            ("/home/me//.cache/w/a", Some(2)),
            ("~/.config/w/k.json", Some(3)),
            ("~/.config/w/k.toml", None),
            ("/home/me/project", None),
            ("/home/me/project/.env", Some(4)),
            ("~", Some(5)),
            // `/home/me` is a home: `~` is the first glob that matches it.
            ("/home/me", Some(5)),
            ("/home/you/.cache/w/a", None),
        ];
        for (path, expected) in cases {
            let split = SplitPath::new(path);
            let linear = globs.iter().position(|g| g.matches(&split));
            assert_eq!(linear, expected, "`{path}` matched one by one");
            assert_eq!(set.first_match(&split, |_| true), expected, "`{path}` through the set");
        }
    }

    fn spelling_strategy() -> impl Strategy<Value = String> {
        let segment = prop_oneof![
            Just("a"),
            Just("b.c"),
            Just(""),
            Just("."),
            Just(".."),
            Just("proc"),
            Just("self"),
            Just("root"),
            Just("cwd"),
            Just("1"),
            Just("~"),
            Just("~bob"),
            Just("$HOME"),
            Just("home"),
            Just("me"),
            Just("é"),
        ];
        let root = prop_oneof![Just(""), Just("/"), Just("~/"), Just("$HOME/"), Just("/home/me/")];
        (root, proptest::collection::vec(segment, 0..7))
            .prop_map(|(root, segments)| format!("{root}{}", segments.join("/")))
    }

    #[test]
    fn paths_already_in_normal_form_are_taken_as_they_are() {
        let cases: &[(&str, Option<&str>, Option<&str>, &str)] = &[
            ("/etc/shadow", None, None, "/etc/shadow"),
            ("/", None, None, "/"),
            ("src/main.rs", Some("/ws"), None, "/ws/src/main.rs"),
            ("src/main.rs", Some("/"), None, "/src/main.rs"),
            ("proc/self/root/etc/shadow", Some("/"), None, "/etc/shadow"),
            ("/home/me/x", None, Some("/home/me"), "~/x"),
            ("x", Some("/home/me"), Some("/home/me"), "~/x"),
            ("me/x", Some("/home"), Some("/home/me"), "~/x"),
            ("src/main.rs", Some("~/project"), Some("/home/me"), "~/project/src/main.rs"),
            ("src/main.rs", Some("~"), None, "~/src/main.rs"),
            ("src/main.rs", Some("~/"), None, "~/src/main.rs"),
            ("~/project/docs", Some("/ws"), Some("/home/me"), "~/project/docs"),
            ("~", None, None, "~"),
        ];
        for (path, cwd, home, expected) in cases {
            assert_eq!(normalize(path, *cwd, *home), *expected, "{path} in {cwd:?} with home {home:?}");
            let home = home.map(|h| walked(h, None, None).into_owned());
            assert_eq!(walked(path, *cwd, home.as_deref()), *expected, "{path} walked");
        }
        let deep = format!("/{}", vec!["a"; DEEP].join("/"));
        assert!(is_plain_absolute(&deep));
        assert!(is_plain_absolute(&format!("{deep}/a")), "no depth is too deep to be taken as it is");
        assert_eq!(normalize(&format!("{deep}/.env"), None, None), format!("{deep}/.env"));
        assert_eq!(Cwd::plain_segments_of(&deep), Some(DEEP));
        assert!(tidied(".env", Some(&Cwd::new(&deep))).is_some(), "a path under a deep folder is tidied, not walked");
        assert_eq!(normalize(".env", Some(&deep), None), format!("{deep}/.env"));
    }

    #[test]
    fn only_paths_that_name_one_place_in_every_working_directory_are_rooted() {
        for path in ["/etc", "~", "~/x", "$HOME/x", "${HOME}", "/a/../b", "~bob/x"] {
            assert!(is_rooted(path), "{path}");
        }
        for path in ["x", "./x", "", "../x", "/proc/self/cwd", "/proc/self/cwd/..", "/a/../proc/thread-self/cwd/x"] {
            assert!(!is_rooted(path), "{path}");
        }
        assert_eq!(normalize("/proc/self/cwd/..", Some("/ws/a"), None), "/ws");
    }

    #[test]
    fn paths_without_parent_segments_are_tidied_instead_of_walked() {
        // (path, working directory, tidied without walking, normalized)
        let cases: &[(&str, Option<&str>, bool, &str)] = &[
            ("./target/debug", Some("/ws"), true, "/ws/target/debug"),
            ("build/out/", Some("/ws"), true, "/ws/build/out"),
            ("a//b/./c", Some("~/p"), true, "~/p/a/b/c"),
            (".", Some("~/p"), true, "~/p"),
            ("./", Some("/"), true, "/"),
            ("", Some("/ws"), true, "/ws"),
            ("/tmp//a/./b/", None, true, "/tmp/a/b"),
            ("//", None, true, "/"),
            ("~/", None, true, "~"),
            ("~/.//x/", None, true, "~/x"),
            // What only walking resolves: parents, `/proc` aliases, other homes, `$HOME`.
            ("./docs/../README.md", Some("/ws"), false, "/ws/README.md"),
            ("./proc/self/root/etc", Some("/"), false, "/etc"),
            ("/./proc/1/root/etc/shadow", None, false, "/etc/shadow"),
            ("~bob/.ssh", None, false, "/home/bob/.ssh"),
            ("$HOME/./x", None, false, "~/x"),
            ("x/y", Some("/ws/../other"), false, "/other/x/y"),
            ("x/y", None, false, "x/y"),
        ];
        for (path, cwd, tidy, expected) in cases {
            let prepared = cwd.map(Cwd::new);
            assert_eq!(tidied(path, prepared.as_ref()).is_some(), *tidy, "{path} in {cwd:?}");
            assert_eq!(normalize(path, *cwd, None), *expected, "{path} in {cwd:?}");
            assert_eq!(walked(path, *cwd, None), *expected, "{path} in {cwd:?}, walked");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz::cases(4000)))]

        #[test]
        fn taking_a_normal_form_as_it_is_gives_what_walking_it_does(
            path in spelling_strategy(),
            cwd in proptest::option::of(spelling_strategy()),
            home in proptest::option::of(prop_oneof![Just("/home/me"), Just("/home"), Just("/"), Just("/root/")]),
        ) {
            let home = home.map(|h| walked(h, None, None).into_owned());
            let (cwd, home) = (cwd.as_deref(), home.as_deref());
            prop_assert_eq!(normalized(&path, cwd.map(Cwd::new).as_ref(), home), walked(&path, cwd, home), "{} in {:?} with home {:?}", path, cwd, home);
        }

        #[test]
        fn tidying_agrees_with_walking_on_deep_paths(
            root in prop_oneof![Just(""), Just("/"), Just("~/")],
            kept in (DEEP - 4)..(DEEP + 4),
            dots in proptest::collection::vec(0..(DEEP + 4), 0..6),
            cwd_depth in 0usize..6,
        ) {
            let mut segments = vec!["a"; kept];
            for at in dots {
                segments.insert(at.min(segments.len()), if at % 2 == 0 { "." } else { "" });
            }
            let path = format!("{root}{}", segments.join("/"));
            let cwd = format!("/{}", vec!["w"; cwd_depth].join("/"));
            prop_assert_eq!(normalized(&path, Some(&Cwd::new(&cwd)), None), walked(&path, Some(&cwd), None), "{} segments in {}", kept, cwd);
        }

        #[test]
        fn a_rooted_path_normalizes_alike_in_every_working_directory(
            path in spelling_strategy(),
            cwd in proptest::option::of(spelling_strategy()),
            home in proptest::option::of(prop_oneof![Just("/home/me"), Just("/root/")]),
        ) {
            if is_rooted(&path) {
                let alone = normalize(&path, None, home);
                prop_assert_eq!(normalize(&path, Some(&alone), home), alone.clone(), "{} in itself", path);
                prop_assert_eq!(normalize(&path, cwd.as_deref(), home), alone, "{} in {:?}", path, cwd);
            }
        }

        #[test]
        fn path_segments_are_the_non_empty_pieces_between_slashes_from_either_end(
            text in "[/a~é.]{0,12}",
            from_back in proptest::collection::vec(any::<bool>(), 0..8),
        ) {
            let mut plain = text.split('/').filter(|s| !s.is_empty());
            let mut ours = segments_in(&text);
            for back in from_back {
                if back {
                    prop_assert_eq!(ours.next_back(), plain.next_back(), "`{}` from the back", text);
                } else {
                    prop_assert_eq!(ours.next(), plain.next(), "`{}` from the front", text);
                }
            }
            prop_assert_eq!(ours.collect::<Vec<_>>(), plain.collect::<Vec<_>>(), "`{}`", text);
        }

        #[test]
        fn a_glob_set_answers_what_matching_each_glob_in_order_does(
            texts in proptest::collection::vec(anchored_glob_strategy(), 0..12),
            path in path_strategy(),
            skip in 0usize..12,
        ) {
            let globs: Vec<Glob> = texts.iter().filter_map(|t| Glob::with_exception(t).ok()).collect();
            let set = GlobSet::new(globs.clone());
            let split = SplitPath::new(&path);
            let expected = globs.iter().enumerate().position(|(i, g)| i != skip && g.matches(&split));
            prop_assert_eq!(set.first_match(&split, |i| i != skip), expected, "`{}` against {:?}", path, texts);
            prop_assert_eq!(set.any_match(&split), globs.iter().any(|g| g.matches(&split)));
        }

        #[test]
        fn the_compiled_matcher_agrees_with_a_regular_expression(
            anywhere in any::<bool>(),
            glob_segments in proptest::collection::vec(glob_segment_strategy(), 0..6),
            path_segments in proptest::collection::vec(segment_strategy(), 0..8),
        ) {
            let glob = if anywhere {
                format!("**/{}", glob_segments.join("/"))
            } else {
                format!("/{}", glob_segments.join("/"))
            };
            prop_assume!(Glob::new(&glob).is_ok());
            let path = format!("/{}", path_segments.join("/"));
            let re = as_regex(&glob).expect("a valid regex");
            let expected = re.is_match(&format!("{}{}", path_segments.join("/"), if path_segments.is_empty() { "" } else { "/" }));
            prop_assert_eq!(glob_matches(&glob, &path), expected, "`{}` against `{}` ({})", glob, path, re.as_str());
        }
    }
}
