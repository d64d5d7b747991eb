//! Path normalization and matching for the tool-call judge.
//!
//! Paths reach the judge as written by an agent: `~/.ssh/id_rsa`,
//! `$HOME/.ssh//id_rsa`, `/home/me/proj/../.ssh/./id_rsa/`. Each is
//! normalized before any rule looks at it: `~`, `~user`, `$HOME` and
//! `${HOME}` become the home marker `~`; relative paths are joined to the
//! working directory; `.`, `..`, duplicate and trailing slashes are resolved.
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

/// Longest path normalized, in characters; longer ones are cut here, which
/// can only make them match fewer rules that end in a specific name, so the
/// judge refuses such paths elsewhere (see `tools::validate`).
pub const MAX_PATH_CHARS: usize = 4096;

/// Most segments a path keeps after normalization.
pub const MAX_SEGMENTS: usize = 256;

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
        // `~user/...` is another user's home: still a home.
        let rest = rest.find('/').map_or("", |i| rest.get(i..).unwrap_or(""));
        return (Root::Home, rest);
    }
    (Root::Relative, path)
}

/// Normalizes `path`, resolving a relative one against `cwd` (itself any
/// path, normalized first) and rewriting paths under `home` to `~/...`.
pub fn normalize(path: &str, cwd: Option<&str>, home: Option<&str>) -> String {
    let path: String = path.chars().take(MAX_PATH_CHARS).collect();
    let (root, rest) = split(&path);
    let (root, mut segments) = match (root, cwd) {
        (Root::Relative, Some(cwd)) => {
            let base = normalize(cwd, None, home);
            let (root, base_rest) = split(&base);
            (root, segments_of(base_rest))
        }
        (root, _) => (root, Vec::new()),
    };
    let mut root = root;
    for segment in rest.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.last().is_some_and(|s| s == "..") {
                    segments.push("..".to_string());
                } else if segments.pop().is_none() {
                    match root {
                        // The parent of an unknown home is most likely `/home`.
                        Root::Home => {
                            root = Root::Absolute;
                            segments.push("home".to_string());
                        }
                        Root::Relative => segments.push("..".to_string()),
                        Root::Absolute => {}
                    }
                }
            }
            s if segments.len() < MAX_SEGMENTS => segments.push(s.to_string()),
            _ => {}
        }
    }
    let joined = segments.join("/");
    let normalized = match root {
        Root::Absolute => format!("/{joined}"),
        Root::Home if joined.is_empty() => "~".to_string(),
        Root::Home => format!("~/{joined}"),
        Root::Relative if joined.is_empty() => ".".to_string(),
        Root::Relative => joined,
    };
    match home.map(|h| normalize(h, None, None)) {
        Some(h) if h.starts_with('/') && h != "/" => {
            if normalized == h {
                "~".to_string()
            } else if let Some(rest) = normalized.strip_prefix(&h).and_then(|r| r.strip_prefix('/')) {
                format!("~/{rest}")
            } else {
                normalized
            }
        }
        _ => normalized,
    }
}

fn segments_of(rest: &str) -> Vec<String> {
    rest.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// The path as seen from a home directory: itself if it is home-relative,
/// or the part after `/root`, `/home/NAME` or `/Users/NAME`.
pub fn home_alias(path: &str) -> Option<String> {
    if path == "~" || path.starts_with("~/") {
        return Some(path.to_string());
    }
    let rest = if let Some(rest) = path.strip_prefix("/root") {
        rest
    } else if let Some(rest) = path.strip_prefix("/home/").or_else(|| path.strip_prefix("/Users/")) {
        let end = rest.find('/').unwrap_or(rest.len());
        if end == 0 {
            return None;
        }
        rest.get(end..).unwrap_or("")
    } else {
        return None;
    };
    match rest {
        "" => Some("~".to_string()),
        r if r.starts_with('/') => Some(format!("~{r}")),
        _ => None,
    }
}

/// A normalized path split once into the forms globs match against, so one
/// path can be tested against many globs without splitting it again.
pub struct SplitPath {
    /// Segments of an absolute path, for `/`-anchored globs.
    rooted: Option<Vec<String>>,
    /// Segments after `~` of the home alias, for `~/` globs.
    home: Option<Vec<String>>,
    /// Segments without a leading `/` or `~`, for `**/` globs.
    body: Vec<String>,
}

fn owned_segments(text: &str) -> Vec<String> {
    text.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

impl SplitPath {
    pub fn new(path: &str) -> SplitPath {
        SplitPath {
            rooted: path.strip_prefix('/').map(owned_segments),
            home: home_alias(path).map(|alias| owned_segments(alias.get(1..).unwrap_or_default())),
            body: owned_segments(path.trim_start_matches(['/', '~'])),
        }
    }

    /// Whether `glob` matches this path.
    pub fn matches(&self, glob: &str) -> bool {
        let (glob_body, path) = if glob.starts_with("**/") {
            (glob, Some(&self.body))
        } else if glob == "~" || glob.starts_with("~/") {
            (glob.get(1..).unwrap_or_default(), self.home.as_ref())
        } else if let Some(rest) = glob.strip_prefix('/') {
            (rest, self.rooted.as_ref())
        } else {
            return false;
        };
        let Some(path) = path else { return false };
        match_segments(&segments(glob_body), path, 0)
    }
}

/// Whether `glob` matches the normalized `path`.
pub fn glob_matches(glob: &str, path: &str) -> bool {
    SplitPath::new(path).matches(glob)
}

fn segments(text: &str) -> Vec<&str> {
    text.split('/').filter(|s| !s.is_empty()).collect()
}

/// Segment matching with `**`; `depth` bounds the recursion, which only
/// happens once per `**` in the glob.
fn match_segments(glob: &[&str], path: &[String], depth: usize) -> bool {
    if depth > MAX_GLOBSTARS {
        return false;
    }
    let mut g = 0;
    let mut p = 0;
    while g < glob.len() {
        let Some(&segment) = glob.get(g) else { return false };
        if segment == "**" {
            let rest = glob.get(g + 1..).unwrap_or(&[]);
            return (p..=path.len()).any(|start| match_segments(rest, path.get(start..).unwrap_or(&[]), depth + 1));
        }
        let Some(name) = path.get(p) else { return false };
        if !wildcard(segment, name) {
            return false;
        }
        g += 1;
        p += 1;
    }
    p == path.len()
}

/// Most `**` segments one glob may have; checked when globs are configured.
pub const MAX_GLOBSTARS: usize = 4;

/// `*` and `?` within one segment, by the linear two-pointer method. Most
/// segments are literal, and those compare without allocating.
fn wildcard(pattern: &str, text: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return pattern == text;
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || Some(&c) == text.get(t) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern.get(p..).unwrap_or(&[]).iter().all(|&c| c == '*')
}

/// Whether a glob is well formed: anchored at `/`, `~/` or `**/`, with `**`
/// only as a whole segment and at most [`MAX_GLOBSTARS`] of them.
pub fn glob_problem(glob: &str) -> Option<String> {
    let anchored = glob.starts_with('/') || glob == "~" || glob.starts_with("~/") || glob.starts_with("**/");
    if !anchored {
        return Some("must start with `/`, `~/` or `**/`".to_string());
    }
    if glob.contains('\0') {
        return Some("must not contain NUL".to_string());
    }
    let mut stars = 0;
    for segment in glob.split('/') {
        if segment == "**" {
            stars += 1;
        } else if segment.contains("**") {
            return Some("may use `**` only as a whole path segment".to_string());
        } else if segment == ".." || segment == "." {
            return Some("must not contain `.` or `..` segments".to_string());
        }
    }
    if stars > MAX_GLOBSTARS {
        return Some(format!("may use `**` at most {MAX_GLOBSTARS} times"));
    }
    None
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
    if let Some(alias) = home_alias(path) {
        let segs = segments(alias.get(1..).unwrap_or(""));
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

    #[test]
    fn normalization_resolves_every_spelling_of_a_path() {
        let cases: &[(&str, Option<&str>, Option<&str>, &str)] = &[
            ("~/.ssh/id_rsa", None, None, "~/.ssh/id_rsa"),
            ("$HOME/.ssh//id_rsa", None, None, "~/.ssh/id_rsa"),
            ("${HOME}/.ssh/./id_rsa/", None, None, "~/.ssh/id_rsa"),
            ("~bob/.ssh/id_rsa", None, None, "~/.ssh/id_rsa"),
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
    fn overlong_paths_are_cut_not_walked() {
        let long = "a/".repeat(MAX_PATH_CHARS);
        let n = normalize(&long, Some("/ws"), None);
        assert!(n.split('/').count() <= MAX_SEGMENTS + 2);
    }
}
