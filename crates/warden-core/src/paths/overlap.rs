//! Whether a path written as a pattern can name a path a glob matches.
//!
//! A shell expands an unquoted word holding `*`, `?` or `[...]` into the
//! names that match it before the program starts, so `cat .e*` reads
//! `.env` and `cat /etc/shado?` reads `/etc/shadow`, though neither word is
//! a protected path. Programs such as git expand patterns of their own
//! (`git diff -- '*env'`). So a path holding one of those characters is read
//! as a pattern, and a glob covers it when some path matches both: the two
//! are walked together segment by segment, and two segments overlap when
//! some name matches both, found by walking their characters together.
//!
//! A name starting with `.` is matched only by a pattern segment that starts
//! with a literal `.` ([`Dots::Hidden`], what shells do by default): `cat *`
//! does not read `.env`, `cat .*` does. A script that turns on `dotglob`,
//! `globdots` or `GLOBIGNORE` gets [`Dots::Matched`], where wildcards match a
//! leading dot too. A pattern segment `**` stands for any number of
//! segments, hidden folders included, as a recursive search or `find`
//! walks them (a shell's `globstar` skips them), which can only name more.
//!
//! The answer errs toward overlap where it approximates: a bracket set is
//! taken to hold some character other than `.`, a POSIX class
//! (`[[:alpha:]]`) any character, and letters are compared without case, as
//! a case-blind pattern (`nocaseglob`, `:(icase)`, `-iname`) or filesystem
//! (macOS's default) compares them.

use super::{Glob, Part, SplitPath, segments_in};
use crate::prelude::*;

/// Whether wildcards at the start of a name match a leading `.`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dots {
    /// They do not (the shells' default).
    #[default]
    Hidden,
    /// They do (`shopt -s dotglob`, `setopt globdots`, `GLOBIGNORE=...`).
    Matched,
    /// They do, as in git's pathspecs (`git diff -- '*env'`), except in a
    /// segment that is only `*`: that names everything in a folder, as `.`
    /// does, and is judged as a read of the whole folder.
    Pathspec,
}

impl Dots {
    /// How the patterns of a shell command match hidden names: a command
    /// that names any setting that makes wildcards match them is taken to
    /// set it, wherever the name appears.
    pub fn of_command(command: &str) -> Dots {
        // Without a wildcard the setting changes nothing (and most commands are read no further).
        // Every such setting's name holds `glob` (`dotglob`, `GLOB_DOTS`, `GLOBIGNORE`).
        let glob = |w: &[u8]| w.eq_ignore_ascii_case(b"glob");
        if !has_wildcards(command) || !command.as_bytes().windows(4).any(glob) {
            return Dots::Hidden;
        }
        let spelled = |c: &u8| *c != b'_';
        let folded: Vec<u8> = command.bytes().filter(spelled).map(|b| b.to_ascii_lowercase()).collect();
        let names = [&b"dotglob"[..], b"globdots", b"globignore"];
        if names.iter().any(|n| folded.windows(n.len()).any(|w| w == *n)) { Dots::Matched } else { Dots::Hidden }
    }
}

/// Whether a path holds a character a shell or a pathspec expands.
///
/// Asked of every path a check splits, so it reads eight bytes a step:
/// `memchr3` without SIMD (the guest's target) reads a `usize`, four bytes
/// there, and under wasmtime every loop step also checks the epoch.
#[inline]
pub fn has_wildcards(text: &str) -> bool {
    // The last word's zeros past the text are no wildcard.
    crate::bytes::words(text.as_bytes()).any(|word| {
        let equal = |byte| crate::bytes::equal_to(word, byte);
        equal(b'*') | equal(b'?') | equal(b'[') != 0
    })
}

/// One position of a name pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// This character.
    Char(char),
    /// `?`: any one character.
    Any,
    /// `[...]`: one character of a set (`[!...]`, `[^...]`: one not in it),
    /// ranges inclusive; `None` when the set holds a POSIX class.
    Set { negated: bool, ranges: Option<Vec<(char, char)>> },
    /// `*`: any run of characters.
    Star,
}

impl Token {
    fn is_wild(&self) -> bool {
        !matches!(self, Token::Char(_))
    }

    /// Whether the token can stand for `c`.
    fn admits(&self, c: char) -> bool {
        match self {
            Token::Char(x) => x.eq_ignore_ascii_case(&c),
            Token::Any | Token::Star => true,
            Token::Set { ranges: None, .. } => true,
            Token::Set { negated, ranges: Some(ranges) } => {
                let held = |c: char| ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c));
                let any_case = held(c) || held(c.to_ascii_lowercase()) || held(c.to_ascii_uppercase());
                any_case != *negated
            }
        }
    }

    /// Whether one character can stand for both tokens, neither a star.
    fn meets(&self, other: &Token) -> bool {
        match (self, other) {
            (Token::Char(c), t) | (t, Token::Char(c)) => t.admits(*c),
            // Two sets, or a set and `?`: taken to share a character.
            _ => true,
        }
    }
}

/// The tokens of one segment of a shell pattern.
fn pattern_tokens(segment: &str) -> Vec<Token> {
    let chars: Vec<char> = segment.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        let token = match c {
            '*' if out.last() == Some(&Token::Star) => continue,
            '*' => Token::Star,
            '?' => Token::Any,
            '[' => match bracket(&chars, i) {
                Some((set, next)) => {
                    i = next;
                    set
                }
                None => Token::Char('['),
            },
            c => Token::Char(c),
        };
        out.push(token);
    }
    out
}

/// The set of a bracket expression whose `[` is just before `start`, and
/// where it ends; `None` when it does not close (then `[` is a character).
fn bracket(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Some(Vec::new());
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Token::Set { negated, ranges }, i + 1));
        }
        first = false;
        if let (Some('['), Some(&kind @ (':' | '=' | '.'))) = (Some(c), chars.get(i + 1)) {
            // A POSIX class, equivalence class or collating symbol (`[:alpha:]`,
            // `[=e=]`, `[.e.]`): up to its closing `:]`, `=]` or `.]`, taken as any character.
            let close =
                (i + 2..chars.len()).find(|&k| chars.get(k) == Some(&kind) && chars.get(k + 1) == Some(&']'))?;
            ranges = None;
            i = close + 2;
            continue;
        }
        let high = match (chars.get(i + 1), chars.get(i + 2)) {
            (Some('-'), Some(&h)) if h != ']' => {
                i += 3;
                h
            }
            _ => {
                i += 1;
                c
            }
        };
        if let Some(r) = ranges.as_mut() {
            r.push((c, high));
        }
    }
}

/// The tokens of one part of a glob that is not `**`.
fn glob_tokens(part: &Part) -> Vec<Token> {
    match part {
        Part::GlobStar => vec![Token::Star],
        Part::Literal(text) => text.chars().map(Token::Char).collect(),
        Part::Wild(pieces) => {
            let mut out = Vec::new();
            for (n, piece) in pieces.iter().enumerate() {
                if n > 0 {
                    out.push(Token::Star);
                }
                out.extend(piece.iter().map(|c| c.map_or(Token::Any, Token::Char)));
            }
            out
        }
    }
}

/// Longest name a filesystem holds, in bytes (Linux's `NAME_MAX`): a
/// pattern segment that needs more characters than this names no file, and
/// the walk of [`names_overlap`] stays bounded by it.
pub const MAX_NAME_CHARS: usize = 255;

/// A necessary condition of [`names_overlap`], checked first: every
/// character a side needs fits in a name, and where a side has no star, the
/// name has exactly its length, which the other side must be able to take.
fn lengths_agree(a: &[Token], b: &[Token]) -> bool {
    let needed = |t: &[Token]| t.iter().filter(|t| **t != Token::Star).count();
    let starred = |t: &[Token]| t.contains(&Token::Star);
    let (na, nb) = (needed(a), needed(b));
    if na > MAX_NAME_CHARS || nb > MAX_NAME_CHARS {
        return false;
    }
    match (starred(a), starred(b)) {
        (false, false) => na == nb,
        (false, true) => nb <= na,
        (true, false) => na <= nb,
        (true, true) => true,
    }
}

/// Where a walk of [`names_overlap`] is: positions in both, whether a
/// character has been taken yet (for the rule on a leading `.`), and which
/// side's star has taken the other side's written character.
#[derive(Debug, Clone, Copy)]
struct Step {
    i: usize,
    j: usize,
    taken: bool,
    pattern_took_glob: bool,
    glob_took_pattern: bool,
}

/// Whether some name matches both the pattern segment `a` and the glob
/// segment `b`, found without the two crossing: a name where the pattern's
/// star covers written characters of the glob while the glob's star covers
/// written characters of the pattern (`*.rs` and `.env.*` meet only in
/// `.env.rs`) does not count, since neither was written to name the other.
/// `.env.p*` against `.env.*`, and `*env` against `.env` in a pathspec, do.
fn names_overlap(a: &[Token], b: &[Token], dots: Dots) -> bool {
    if !lengths_agree(a, b) {
        return false;
    }
    let (la, lb) = (a.len(), b.len());
    let at = |s: &Step| {
        (((s.i * (lb + 1) + s.j) * 2 + usize::from(s.taken)) * 2 + usize::from(s.pattern_took_glob)) * 2
            + usize::from(s.glob_took_pattern)
    };
    let mut seen = vec![false; (la + 1) * (lb + 1) * 8];
    let mut todo = vec![Step { i: 0, j: 0, taken: false, pattern_took_glob: false, glob_took_pattern: false }];
    // The first character, when a wildcard of the pattern takes it, is no `.`.
    let hides = match dots {
        Dots::Hidden => true,
        Dots::Matched => false,
        // A segment of only stars and dots (`*`, `*.*`) names a folder's entries, as `.` does.
        Dots::Pathspec => a.iter().all(|t| matches!(t, Token::Star | Token::Char('.'))),
    };
    // A pattern that starts with a wildcard names no hidden file, even where
    // its star stands for nothing (`*.env` does not name `.env`).
    let starts_wild = a.first().is_some_and(Token::is_wild);
    let hidden = |taken: bool, pattern: &Token, glob: &Token| {
        let dot = Token::Char('.');
        !taken && hides && starts_wild && (*pattern == dot || *glob == dot)
    };
    while let Some(s) = todo.pop() {
        let Some(slot) = seen.get_mut(at(&s)) else { continue };
        if *slot {
            continue;
        }
        *slot = true;
        if s.i == la && s.j == lb {
            return true;
        }
        let (ta, tb) = (a.get(s.i), b.get(s.j));
        if ta == Some(&Token::Star) {
            todo.push(Step { i: s.i + 1, ..s });
        }
        if tb == Some(&Token::Star) {
            todo.push(Step { j: s.j + 1, ..s });
        }
        match (ta, tb) {
            // Both stars take one character, any but a leading `.`.
            (Some(Token::Star), Some(Token::Star)) => todo.push(Step { taken: true, ..s }),
            // The pattern's star takes the glob's character.
            (Some(Token::Star), Some(g)) if *g != Token::Star => {
                let written = matches!(g, Token::Char(_));
                let blocked = hidden(s.taken, &Token::Star, g) || (written && s.glob_took_pattern);
                if !blocked {
                    todo.push(Step { j: s.j + 1, taken: true, pattern_took_glob: s.pattern_took_glob || written, ..s });
                }
            }
            // The glob's star takes the pattern's character (a set or `?`
            // at the start is taken to stand for a character other than `.`).
            (Some(p), Some(Token::Star)) if *p != Token::Star => {
                let written = matches!(p, Token::Char(_));
                let blocked = hidden(s.taken, p, &Token::Star) || (written && s.pattern_took_glob);
                if !blocked {
                    todo.push(Step { i: s.i + 1, taken: true, glob_took_pattern: s.glob_took_pattern || written, ..s });
                }
            }
            (Some(p), Some(g)) if *p != Token::Star && *g != Token::Star && p.meets(g) && !hidden(s.taken, p, g) => {
                todo.push(Step { i: s.i + 1, j: s.j + 1, taken: true, ..s });
            }
            _ => {}
        }
    }
    false
}

/// One segment of a pattern path.
enum Segment {
    /// `**`: any number of segments.
    Any,
    Name(Vec<Token>),
}

impl Glob {
    /// Whether some path matches both this glob and `path` read as a shell
    /// pattern (see the module's comment). As within a name, a meeting where
    /// the pattern's `**` covers a written segment of the glob while the
    /// glob's `**` covers a written segment of the pattern does not count:
    /// `/tmp/**/*.sock` (what `find /tmp -name '*.sock'` reaches) does not
    /// meet `/tmp/cache/**`.
    pub fn overlaps(&self, path: &SplitPath, dots: Dots) -> bool {
        let Some(body) = path.for_anchor(self.anchor) else { return false };
        let pattern: Vec<Segment> = segments_in(body)
            .map(|s| if s == "**" { Segment::Any } else { Segment::Name(pattern_tokens(s)) })
            .collect();
        let parts: Vec<Option<Vec<Token>>> =
            self.parts.iter().map(|p| (*p != Part::GlobStar).then(|| glob_tokens(p))).collect();
        let written = |tokens: &[Token]| tokens.iter().any(|t| !t.is_wild());
        let (lp, lg) = (pattern.len(), parts.len());
        // Positions in both, whether the pattern's `**` took a written glob
        // segment, and whether the glob's `**` took a written pattern segment.
        let at =
            |p: usize, g: usize, pt: bool, gt: bool| ((p * (lg + 1) + g) * 2 + usize::from(pt)) * 2 + usize::from(gt);
        let mut seen = vec![false; (lp + 1) * (lg + 1) * 4];
        // Whether pattern segment `p` and glob segment `g` meet, found once each.
        let mut met: Vec<Option<bool>> = vec![None; lp * lg];
        // Below a `**` of the pattern, its names are matched as a recursive
        // search or `find` matches them, whose wildcards take a leading `.`
        // (`find . -name '*env'`, `grep -r --include='?env'`).
        let below: Vec<bool> = pattern
            .iter()
            .scan(false, |seen, s| {
                let was = *seen;
                *seen |= matches!(s, Segment::Any);
                Some(was)
            })
            .collect();
        let dots_at = |p: usize| match dots {
            Dots::Hidden if below.get(p).copied().unwrap_or(false) => Dots::Pathspec,
            dots => dots,
        };
        let mut meets = |p: usize, g: usize, tokens: &[Token], name: &[Token]| match met.get_mut(p * lg + g) {
            Some(Some(known)) => *known,
            Some(slot) => *slot.insert(names_overlap(tokens, name, dots_at(p))),
            None => names_overlap(tokens, name, dots_at(p)),
        };
        let mut todo = vec![(0usize, 0usize, false, false)];
        while let Some((p, g, pt, gt)) = todo.pop() {
            let Some(slot) = seen.get_mut(at(p, g, pt, gt)) else { continue };
            if *slot {
                continue;
            }
            *slot = true;
            if p == lp && g == lg {
                return true;
            }
            let (segment, part) = (pattern.get(p), parts.get(g));
            match part {
                // The glob's `**` ends, or takes the pattern's segment.
                Some(None) => {
                    todo.push((p, g + 1, pt, gt));
                    match segment {
                        // Not when the pattern's `**` has taken a written glob segment.
                        Some(Segment::Name(tokens)) if written(tokens) => {
                            todo.extend((!pt).then_some((p + 1, g, pt, true)))
                        }
                        Some(_) => todo.push((p + 1, g, pt, gt)),
                        None => {}
                    }
                }
                Some(Some(name)) => match segment {
                    // The pattern's `**` takes the glob's segment, hidden ones too:
                    // a recursive search or `find` walks into hidden folders.
                    Some(Segment::Any) => {
                        let took = written(name);
                        if !(took && gt) {
                            todo.push((p, g + 1, pt || took, gt));
                        }
                    }
                    // A lone `*` names a folder's every entry: it meets a glob's
                    // written name (`/etc/*`, `/etc/shadow`), not a glob's pattern
                    // (`*`, `**/*.pem`), which a read of the whole folder does not.
                    Some(Segment::Name(tokens))
                        if tokens.as_slice() == [Token::Star] && name.iter().any(Token::is_wild) => {}
                    Some(Segment::Name(tokens)) if meets(p, g, tokens, name) => {
                        todo.push((p + 1, g + 1, pt, gt));
                    }
                    Some(Segment::Name(_)) => {}
                    None => {}
                },
                None => {}
            }
            if matches!(segment, Some(Segment::Any)) {
                todo.push((p + 1, g, pt, gt));
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row: what it shows, the path as written (normalized), the glob, how
    /// hidden names are matched, and whether the two can name one path.
    type Row = (&'static str, &'static str, &'static str, Dots, bool);

    const ROWS: &[Row] = &[
        ("a star after a name's start reaches the rest of it", "/ws/.e*", "**/.env", Dots::Hidden, true),
        ("a question mark stands for one character", "/ws/.en?", "**/.env", Dots::Hidden, true),
        ("a question mark does not stand for two", "/ws/.e?", "**/.env", Dots::Hidden, false),
        ("a bracket set holding the character", "/etc/shado[vw]", "/etc/shadow", Dots::Hidden, true),
        ("letters meet in either case", "/ws/.E[N]?", "**/.env", Dots::Hidden, true),
        ("a pattern needing more characters than the name has", "/ws/.e*zzzzzzzz", "**/.env", Dots::Hidden, false),
        ("a bracket set without it", "/etc/shado[xy]", "/etc/shadow", Dots::Hidden, false),
        ("a negated set without the character", "/etc/shado[!x]", "/etc/shadow", Dots::Hidden, true),
        ("a negated set of the character", "/etc/shado[^w]", "/etc/shadow", Dots::Hidden, false),
        ("a range holding the character", "/etc/sh[a-c]dow", "/etc/shadow", Dots::Hidden, true),
        ("a POSIX class stands for any character", "/etc/sh[[:alpha:]]dow", "/etc/shadow", Dots::Hidden, true),
        ("an equivalence class stands for any character", "/ws/.[[=e=]]nv", "**/.env", Dots::Hidden, true),
        ("a collating symbol stands for any character", "/etc/sha[[.d.]]ow", "/etc/shadow", Dots::Hidden, true),
        ("below a pattern's globstar a leading wildcard takes a dot", "/ws/**/?env", "**/.env", Dots::Hidden, true),
        ("below it a star standing for nothing leaves the dot", "/ws/**/*.env", "**/.env", Dots::Hidden, true),
        ("below it stars and dots still name a folder's entries", "/ws/**/*.*", "**/.env", Dots::Hidden, false),
        ("a bracket that never closes is a character", "/etc/shadow[", "/etc/shadow", Dots::Hidden, false),
        ("a wildcard in a folder's name", "~/.ss?/id_rsa", "~/.ssh/**", Dots::Hidden, true),
        ("a lone star names a written file", "/etc/*", "/etc/shadow", Dots::Hidden, true),
        ("a lone star does not name a hidden file", "/ws/*", "**/.env", Dots::Hidden, false),
        ("with dotglob it does", "/ws/*", "**/.env", Dots::Matched, true),
        ("a lone star is a folder's read, not a glob's pattern", "/ws/*", "**/*.pem", Dots::Hidden, false),
        ("a written dot then a star names hidden files", "/ws/.*", "**/.env", Dots::Hidden, true),
        ("a leading star does not take a leading dot", "/ws/*env", "**/.env", Dots::Hidden, false),
        (
            "a leading star names no hidden file even when it stands for nothing",
            "/ws/*.env",
            "**/.env",
            Dots::Hidden,
            false,
        ),
        ("nor does a leading set of the dot", "/ws/[.]env", "**/.env", Dots::Hidden, false),
        ("in a pathspec it does", "/ws/*env", "**/.env", Dots::Pathspec, true),
        ("in a pathspec a lone star still names the folder", "/ws/*", "**/.env", Dots::Pathspec, false),
        ("an extension meets a glob's tail only by crossing", "/ws/*.rs", "**/.env.*", Dots::Pathspec, false),
        ("a written head meets a glob's tail", "/ws/.env.p*", "**/.env.*", Dots::Hidden, true),
        ("two stars before one written tail", "/ws/*.p*", "**/*.pem", Dots::Hidden, true),
        ("different extensions never meet", "/ws/*.txt", "**/*.pem", Dots::Hidden, false),
        ("a pattern's globstar reaches a file deep down", "/ws/**/.e*", "**/.env", Dots::Hidden, true),
        (
            "a pattern's globstar and a glob's tree meet only by crossing",
            "~/**/id_rsa",
            "~/.ssh/**",
            Dots::Hidden,
            false,
        ),
        (
            "a pattern's globstar walks into hidden folders",
            "~/**/credentials",
            "~/.aws/credentials",
            Dots::Hidden,
            true,
        ),
        ("a written hidden folder then a globstar", "~/.ssh/**", "~/.ssh/**", Dots::Hidden, true),
        ("a glob anchored elsewhere does not meet", "/ws/sh*", "/etc/shadow", Dots::Hidden, false),
        ("more segments than the glob has do not meet", "/etc/*/shadow", "/etc/shadow", Dots::Hidden, false),
        ("a home pattern meets a home glob", "~/.aws/cred*", "~/.aws/credentials", Dots::Hidden, true),
        (
            "a pattern's globstar reaches a glob's folder",
            "~/.config/**/hosts.yml",
            "~/.config/gh/hosts.yml",
            Dots::Hidden,
            true,
        ),
        ("two globstars that only meet by crossing", "/tmp/**/*.sock", "/tmp/cache/**", Dots::Hidden, false),
        ("a glob's globstar over the pattern's folders", "/srv/app/**/.e*", "**/.env", Dots::Hidden, true),
    ];

    #[test]
    fn a_wildcard_is_found_at_every_position_and_length_and_nothing_else_is_taken_for_one() {
        let by_bytes = |t: &str| t.bytes().any(|b| matches!(b, b'*' | b'?' | b'['));
        // Neighbours of the three bytes, and bytes whose borrow could spill into the next byte.
        let others = ['a', ')', '+', '>', '@', 'Z', '\\', ']', '\u{0}', '\u{1}', '\u{7f}', 'é', '\u{aa}'];
        for len in 0..20 {
            for filler in others {
                let base: String = core::iter::repeat_n(filler, len).collect();
                assert!(!has_wildcards(&base), "{base:?}");
                for wild in ['*', '?', '['] {
                    for at in 0..len {
                        let text: String =
                            base.chars().enumerate().map(|(i, c)| if i == at { wild } else { c }).collect();
                        assert_eq!(has_wildcards(&text), by_bytes(&text), "{text:?}");
                        assert!(has_wildcards(&text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_path_written_as_a_pattern_meets_the_globs_some_path_it_names_matches() {
        let mut failures = Vec::new();
        for (name, path, glob, dots, want) in ROWS {
            let Ok(compiled) = Glob::new(glob) else {
                failures.push(format!("{name}: `{glob}` does not compile"));
                continue;
            };
            let got = compiled.overlaps(&SplitPath::new(path), *dots);
            if got != *want {
                failures.push(format!("{name}: `{path}` against `{glob}` ({dots:?}) want {want}, got {got}"));
            }
        }
        assert!(failures.is_empty(), "{} of {} rows wrong:\n{}", failures.len(), ROWS.len(), failures.join("\n"));
    }

    #[test]
    fn a_pattern_segment_needing_more_characters_than_a_name_holds_names_nothing() {
        let Ok(glob) = Glob::new("/ws/*") else { panic!("the glob compiles") };
        let at_bound = format!("/ws/x{}", "?".repeat(MAX_NAME_CHARS - 1));
        let past_bound = format!("/ws/x{}", "?".repeat(MAX_NAME_CHARS));
        assert!(glob.overlaps(&SplitPath::new(&at_bound), Dots::Hidden), "{MAX_NAME_CHARS} characters fit a name");
        assert!(!glob.overlaps(&SplitPath::new(&past_bound), Dots::Hidden), "one more does not");
    }

    #[test]
    fn a_command_naming_a_setting_that_shows_hidden_names_matches_them() {
        let rows = [
            ("shopt -s dotglob; cat *", Dots::Matched),
            ("setopt GLOB_DOTS; cat *", Dots::Matched),
            ("GLOBIGNORE=x; cat *", Dots::Matched),
            ("cat *", Dots::Hidden),
            ("echo dotglob", Dots::Hidden),
        ];
        for (command, want) in rows {
            assert_eq!(Dots::of_command(command), want, "{command}");
        }
    }
}
