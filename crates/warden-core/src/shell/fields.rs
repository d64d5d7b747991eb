//! How bash turns an expanded word into the fields a program gets, and
//! which leading characters of a field are literal.
//!
//! Field splitting applies only to what unquoted expansions produced
//! (`$x`, `${x}`, `$(...)`), at the characters of `IFS`: with the default
//! `IFS` (space, tab, newline) runs of blanks separate fields and leading or
//! trailing blanks vanish; any other `IFS` character separates one field
//! from the next, so `IFS=,; c=rm,-rf,/; $c` runs `rm -rf /` and `a,,b` is
//! three fields, the middle one empty. `rm${IFS}-rf${IFS}/` is three fields
//! too. Quoted text and literal text are never split. An `IFS` only known at
//! run time makes every split word unknown.
//!
//! Tilde expansion happens only for an unquoted `~` that starts a word, so
//! `"~"`, `\~` and the second field of `a${IFS}~` are a directory named `~`;
//! and `$HOME` left in a value after expansion (`'$HOME'`) is literal text.
//! [`Arg::path`] gives a value as a path with those leading characters
//! kept literal.

use super::commands::Arg;
use super::text::Text;
use crate::prelude::*;
use core::ops::Range;

/// The `IFS` a shell starts with.
pub const DEFAULT_IFS: &str = " \t\n";

/// One field of a split word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub text: String,
    /// Whether the field starts where the word starts.
    pub at_start: bool,
    /// Whether its first character came from an expansion.
    pub expanded: bool,
}

fn in_ranges(ranges: &[Range<usize>], at: usize) -> bool {
    ranges.iter().any(|r| r.contains(&at))
}

/// Splits `text` at the characters of `ifs` that lie in `splittable` (byte
/// ranges of `text` produced by unquoted expansions), as POSIX field
/// splitting does.
pub fn split(text: &str, splittable: &[Range<usize>], ifs: &str) -> Vec<Field> {
    let mut out = Vec::new();
    let mut field: Option<(String, usize)> = None;
    let done =
        |f: String, start: usize| Field { text: f, at_start: start == 0, expanded: in_ranges(splittable, start) };
    // A blank ended the previous field; one non-blank separator may still belong to it.
    let mut after_blank = false;
    for (at, c) in text.char_indices() {
        let separator = !ifs.is_empty() && ifs.contains(c) && in_ranges(splittable, at);
        if !separator {
            field.get_or_insert_with(|| (String::new(), at)).0.push(c);
            after_blank = false;
            continue;
        }
        let blank = matches!(c, ' ' | '\t' | '\n');
        match field.take() {
            Some((f, start)) => {
                out.push(done(f, start));
                after_blank = blank;
            }
            None if blank => {}
            None if after_blank => after_blank = false,
            None => out.push(done(String::new(), at)),
        }
    }
    if let Some((f, start)) = field {
        out.push(done(f, start));
    }
    out
}

/// The arguments an expanded word becomes. `ifs` is `None` when `IFS` is
/// only known at run time; `literal` says whether the word has text that
/// is not an expansion (so an empty result is still one empty argument).
pub fn fields(arg: Arg, ifs: Option<&str>, literal: bool) -> Vec<Arg> {
    if !splits(&arg) {
        return vec![arg];
    }
    let Some(ifs) = ifs else {
        return vec![Arg { static_text: None, split: Vec::new(), ..arg.forget_text() }];
    };
    let text = arg.text.as_deref().unwrap_or_default();
    let pieces = split(text, &arg.split, ifs);
    if pieces.is_empty() {
        return if literal { vec![Arg { split: Vec::new(), ..arg }] } else { Vec::new() };
    }
    if let [only] = pieces.as_slice()
        && only.text == text
    {
        return vec![Arg { split: Vec::new(), ..arg }];
    }
    pieces
        .into_iter()
        .map(|piece| {
            // A `~` written after the word's start is not expanded; one an
            // expansion produced is the home it names.
            let literal_tilde =
                if piece.at_start { arg.literal_tilde } else { piece.text.starts_with('~') && !piece.expanded };
            let text = Text::from(piece.text);
            Arg {
                text: Some(text.clone()),
                static_text: Some(text),
                split: Vec::new(),
                literal_tilde,
                fed: None,
                ..arg.clone()
            }
        })
        .collect()
}

/// Whether word splitting can change `arg`: its value is known and an
/// unquoted expansion produced part of it. When not, [`fields`] gives the
/// word back as it is.
pub fn splits(arg: &Arg) -> bool {
    arg.text.is_some() && arg.split.iter().any(|r| !r.is_empty())
}

/// Most words one brace expansion may produce; past it the word is unknown.
pub const MAX_BRACE_WORDS: usize = 64;

/// What brace expansion makes of a word's unquoted text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Braces {
    /// No brace expression: the word stays as it is.
    None,
    /// The words it expands to, in order.
    Words(Vec<String>),
    /// More than [`MAX_BRACE_WORDS`] words.
    TooMany,
}

/// The first brace expression of `text`: (`{` index, `}` index, alternatives).
fn first_brace(text: &str) -> Option<(usize, usize, Vec<String>)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (n, &(open, c)) in chars.iter().enumerate() {
        if c != '{' || (n > 0 && chars.get(n - 1).is_some_and(|(_, p)| *p == '$')) {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for &(at, d) in chars.iter().skip(n + 1) {
            match d {
                '{' => depth += 1,
                '}' if depth > 0 => depth -= 1,
                '}' => {
                    let body = text.get(open + 1..at)?;
                    if !commas.is_empty() {
                        let mut alternatives = Vec::new();
                        let mut from = open + 1;
                        for comma in &commas {
                            alternatives.push(text.get(from..*comma)?.to_string());
                            from = comma + 1;
                        }
                        alternatives.push(text.get(from..at)?.to_string());
                        return Some((open, at, alternatives));
                    }
                    if let Some(sequence) = sequence(body) {
                        return Some((open, at, sequence));
                    }
                    break;
                }
                ',' if depth == 0 => commas.push(at),
                _ => {}
            }
        }
    }
    None
}

/// `a..e` and `1..5`: the letters or numbers between, at most [`MAX_BRACE_WORDS`] + 1.
fn sequence(body: &str) -> Option<Vec<String>> {
    let (from, to) = body.split_once("..")?;
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let step = if a <= b { 1 } else { -1 };
        let count = usize::try_from((b - a).unsigned_abs()).ok()?.saturating_add(1).min(MAX_BRACE_WORDS + 1);
        return Some((0..count).map(|i| (a + step * i as i64).to_string()).collect());
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    let (Some(x), None, Some(y), None) = (a.next(), a.next(), b.next(), b.next()) else { return None };
    if !(x.is_ascii_alphabetic() && y.is_ascii_alphabetic()) {
        return None;
    }
    let (lo, hi) = (x.min(y) as u8, x.max(y) as u8);
    let mut out: Vec<String> = (lo..=hi).map(|c| (c as char).to_string()).collect();
    if x > y {
        out.reverse();
    }
    Some(out)
}

/// Brace expansion of unquoted text, as bash does it before any other
/// expansion: `{rm,-rf,/}` is `rm -rf /`, `/{etc,usr}` is `/etc /usr`.
pub fn braces(text: &str) -> Braces {
    if !text.contains('{') {
        return Braces::None;
    }
    let mut words = Vec::new();
    match expand_into(text, &mut words, 0) {
        Ok(true) => Braces::Words(words),
        Ok(false) => Braces::None,
        Err(()) => Braces::TooMany,
    }
}

fn expand_into(text: &str, out: &mut Vec<String>, depth: usize) -> Result<bool, ()> {
    let Some((open, close, alternatives)) = first_brace(text) else {
        if out.len() >= MAX_BRACE_WORDS {
            return Err(());
        }
        out.push(text.to_string());
        return Ok(false);
    };
    if depth > MAX_BRACE_WORDS || alternatives.len() > MAX_BRACE_WORDS {
        return Err(());
    }
    let (prefix, suffix) = (text.get(..open).unwrap_or(""), text.get(close + 1..).unwrap_or(""));
    for alternative in alternatives {
        expand_into(&format!("{prefix}{alternative}{suffix}"), out, depth + 1)?;
    }
    Ok(true)
}

/// `text` as a path whose leading `~` or `$` is literal: `./~`, `./$HOME`.
pub(crate) fn literal_path(text: &str, literal_tilde: bool) -> String {
    if (literal_tilde && text.starts_with('~')) || text.starts_with('$') {
        format!("./{text}")
    } else {
        text.to_string()
    }
}

impl Arg {
    /// The known value as a path: a leading `~` that was quoted, escaped or
    /// produced by an expansion, and a leading `$` (expansions are already
    /// done, so `$HOME` here is text), name files in the working directory.
    pub fn path(&self) -> Option<String> {
        self.known().map(|t| literal_path(t, self.literal_tilde))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str, ranges: &[Range<usize>], ifs: &str) -> Vec<String> {
        split(text, ranges, ifs).into_iter().map(|f| f.text).collect()
    }

    #[test]
    fn field_splitting_follows_posix_for_blank_and_other_separators() {
        let all = |t: &str| core::iter::once(0..t.len()).collect::<Vec<_>>();
        let cases: &[(&str, &str, &[&str])] = &[
            ("rm -rf /", DEFAULT_IFS, &["rm", "-rf", "/"]),
            ("  a \t b\n", DEFAULT_IFS, &["a", "b"]),
            ("rm,-rf,/", ",", &["rm", "-rf", "/"]),
            ("a,,b", ",", &["a", "", "b"]),
            ("a,,", ",", &["a", ""]),
            (",a", ",", &["", "a"]),
            ("a , b", ", ", &["a", "b"]),
            (" ,a", " ,", &["", "a"]),
            ("a ,,b", " ,", &["a", "", "b"]),
            ("a:b", ":", &["a", "b"]),
            ("a b", "", &["a b"]),
            ("a b", ",", &["a b"]),
            ("", DEFAULT_IFS, &[]),
        ];
        for (text, ifs, want) in cases {
            assert_eq!(texts(text, &all(text), ifs), *want, "{text:?} with IFS {ifs:?}");
        }
    }

    #[test]
    fn only_the_expanded_parts_of_a_word_are_split() {
        // `"a b"$x` with x=" c": the quoted blank stays.
        let expanded: Vec<Range<usize>> = core::iter::once(3..5).collect();
        assert_eq!(texts("a b c", &expanded, DEFAULT_IFS), ["a b", "c"]);
        // `rm${IFS}-rf${IFS}/`.
        assert_eq!(texts("rm \t\n-rf \t\n/", &[2..5, 8..11], DEFAULT_IFS), ["rm", "-rf", "/"]);
    }

    #[test]
    fn brace_expressions_expand_as_bash_expands_them() {
        let words = |t: &str| match braces(t) {
            Braces::Words(w) => w,
            other => panic!("{t}: {other:?}"),
        };
        assert_eq!(words("{rm,-rf,/}"), ["rm", "-rf", "/"]);
        assert_eq!(words("/{etc,usr}"), ["/etc", "/usr"]);
        assert_eq!(words("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(words("x{3..1}"), ["x3", "x2", "x1"]);
        assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        for plain in ["{}", "{a}", "@{u}", "a,b", "{a..}", "${x}"] {
            assert_eq!(braces(plain), Braces::None, "{plain}");
        }
        let at = format!("{{{}}}", (0..MAX_BRACE_WORDS).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
        assert!(matches!(braces(&at), Braces::Words(w) if w.len() == MAX_BRACE_WORDS));
        let past = format!("{{{}}}", (0..=MAX_BRACE_WORDS).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
        assert_eq!(braces(&past), Braces::TooMany);
        assert_eq!(braces("{1..100000000000}"), Braces::TooMany);
    }

    #[test]
    fn a_leading_tilde_or_dollar_that_is_text_stays_a_name_in_the_working_directory() {
        assert_eq!(literal_path("~", true), "./~");
        assert_eq!(literal_path("~", false), "~");
        assert_eq!(literal_path("$HOME/x", false), "./$HOME/x");
        assert_eq!(literal_path("/etc/$x", false), "/etc/$x");
    }
}
