//! A recursive-descent parser for POSIX shell with the bash extensions agents
//! use: `$(...)`, `<(...)`, `[[ ... ]]`, `((...))`, `$'...'`, here-strings,
//! `&>` and `|&`.
//!
//! Shell lexing depends on where it happens (a `#` starts a comment only at
//! the start of a word, `}` closes a group only in command position, `<(`
//! starts a process substitution only at the start of a word), so the parser
//! reads characters directly instead of a token stream. Recursion is bounded
//! by [`super::MAX_DEPTH`] and every loop consumes input, so hostile input
//! costs time linear in its length times the depth bound.

use super::ast::*;
use super::programs::{Names, first_bytes, in_first_bytes};
use super::text::Text;
use super::{ErrorKind, MAX_DEPTH, ParseError};
use crate::prelude::*;
use alloc::borrow::Cow;
use alloc::rc::Rc;

/// Where a word is being read; it decides which characters end it and what a
/// backslash escapes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    // The discriminants index [`PLAIN`].
    /// An ordinary word.
    Bare,
    /// Inside `"..."`.
    Double,
    /// The body of an unquoted here-document.
    HereBody,
    /// After the name inside `${...}`.
    Brace,
}

/// [`plain`] of every ASCII byte, by [`Mode`] (in declaration order).
const PLAIN: [[bool; 128]; 4] = {
    let modes = [Mode::Bare, Mode::Double, Mode::HereBody, Mode::Brace];
    let mut table = [[false; 128]; 4];
    let mut m = 0;
    while m < modes.len() {
        let mut b = 0;
        while b < 128 {
            table[m][b] = plain(modes[m], b as u8 as char);
            b += 1;
        }
        m += 1;
    }
    table
};

struct Pending {
    slot: usize,
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
}

/// The characters of a script, by index. Shell syntax is ASCII, and so is
/// nearly every command an agent writes: such text is read in place, a byte
/// a character, and its plain runs are sliced out of it without copying
/// character by character. Other text is decoded once.
enum Chars<'a> {
    Ascii(&'a str),
    Wide(Vec<char>),
}

impl<'a> Chars<'a> {
    fn new(text: &'a str) -> Chars<'a> {
        if text.is_ascii() { Chars::Ascii(text) } else { Chars::Wide(text.chars().collect()) }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<char> {
        match self {
            Chars::Ascii(text) => text.as_bytes().get(i).map(|&b| char::from(b)),
            Chars::Wide(chars) => chars.get(i).copied(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        match self {
            Chars::Ascii(text) => text.len(),
            Chars::Wide(chars) => chars.len(),
        }
    }

    /// The characters from `start` to `end` (clamped to the text).
    fn text(&self, start: usize, end: usize) -> Cow<'a, str> {
        match self {
            Chars::Ascii(text) => Cow::Borrowed(text.get(start.min(text.len())..end.min(text.len())).unwrap_or("")),
            Chars::Wide(chars) => Cow::Owned(chars.get(start..end.min(chars.len())).unwrap_or(&[]).iter().collect()),
        }
    }

    /// The end of the run of characters from `start` that are plain in
    /// `mode` ([`plain`]); ASCII text is read a byte at a time from a table.
    fn plain_run(&self, start: usize, mode: Mode) -> usize {
        match self {
            Chars::Ascii(text) => {
                let table = &PLAIN[mode as usize];
                let rest = text.as_bytes().get(start..).unwrap_or_default();
                start
                    + rest
                        .iter()
                        .position(|&b| !table.get(usize::from(b)).copied().unwrap_or(false))
                        .unwrap_or(rest.len())
            }
            Chars::Wide(chars) => {
                let rest = chars.get(start..).unwrap_or_default();
                start + rest.iter().position(|&c| !plain(mode, c)).unwrap_or(rest.len())
            }
        }
    }

    /// Whether the characters from `start` to `end` spell `word`.
    fn spells(&self, start: usize, end: usize, word: &str) -> bool {
        match self {
            Chars::Ascii(text) => text.as_bytes().get(start..end) == Some(word.as_bytes()),
            Chars::Wide(chars) => chars.get(start..end).is_some_and(|c| c.iter().copied().eq(word.chars())),
        }
    }
}

pub(super) struct Parser<'a> {
    chars: Chars<'a>,
    pos: usize,
    depth: usize,
    pending: Vec<Pending>,
    bodies: Vec<Vec<Part>>,
}

/// Whether `word` is a reserved word of the shell.
fn reserved(word: &str) -> bool {
    matches!(
        word,
        "if" | "then"
            | "elif"
            | "else"
            | "fi"
            | "do"
            | "done"
            | "while"
            | "until"
            | "for"
            | "case"
            | "esac"
            | "function"
            | "{"
            | "}"
            | "!"
    )
}

const RESERVED_CLOSERS: &[&str] = &["then", "elif", "else", "fi", "do", "done", "esac", "}", "in"];

/// The words that decide what a command in command position is: those that
/// open a compound command, and the closers that cannot start one.
const COMMAND_WORDS: &[&str] = &[
    "{", "if", "while", "until", "for", "case", "function", "then", "elif", "else", "fi", "do", "done", "esac", "}",
    "coproc", "time",
];

/// The length of the longest reserved word (`function`); a longer bare run
/// is looked up among the candidates only if one of them is longer still.
const LONGEST_KEYWORD: usize = 8;

/// The words that open a compound command.
const COMPOUND_OPENERS: &[&str] = &["{", "if", "while", "until", "for", "case"];

/// The first characters of [`COMMAND_WORDS`]: a word that starts with no other is not one.
const COMMAND_FIRSTS: u128 = first_bytes(COMMAND_WORDS);

/// [`COMMAND_WORDS`] with their filter: a word whose length and end bytes
/// pick a bit no reserved word sets is not one.
const COMMAND_NAMES: Names = Names::new(COMMAND_WORDS);

/// Whether `c` is in a set made by [`first_bytes`].
#[inline]
fn starts_one(set: u128, c: char) -> bool {
    in_first_bytes(set, c as u32)
}

#[inline]
const fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r'
}

#[inline]
const fn is_meta(c: char) -> bool {
    is_blank(c) || matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_special_param(c: char) -> bool {
    matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-')
}

/// Whether `text` is a name a variable can have.
pub fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

fn push_lit(parts: &mut Vec<Part>, text: &str, quoted: bool) {
    push_text(parts, Cow::Borrowed(text), quoted);
}

/// [`push_lit`] of text that may already be owned, which is then kept as it is.
fn push_text(parts: &mut Vec<Part>, text: Cow<'_, str>, quoted: bool) {
    if let Some(Part::Lit { text: last, quoted: q }) = parts.last_mut()
        && *q == quoted
    {
        let mut joined = String::with_capacity(last.len() + text.len());
        joined.push_str(last);
        joined.push_str(&text);
        *last = Text::from(joined);
        return;
    }
    parts.push(Part::Lit { text: Text::from(text.as_ref()), quoted });
}

/// Whether `c` is literal text in `mode`: read by no arm of
/// [`Parser::parts`] but the last.
#[inline]
const fn plain(mode: Mode, c: char) -> bool {
    match mode {
        Mode::Bare => !is_meta(c) && !matches!(c, '\'' | '"' | '\\' | '$' | '`'),
        Mode::Brace => !matches!(c, '}' | '{' | '\'' | '"' | '\\' | '$' | '`'),
        Mode::Double => !matches!(c, '"' | '\\' | '$' | '`'),
        Mode::HereBody => !matches!(c, '\\' | '$' | '`'),
    }
}

fn push_char(parts: &mut Vec<Part>, c: char, quoted: bool) {
    let mut buf = [0u8; 4];
    push_lit(parts, c.encode_utf8(&mut buf), quoted);
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str, depth: usize) -> Parser<'a> {
        Parser { chars: Chars::new(text), pos: 0, depth, pending: Vec::new(), bodies: Vec::new() }
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError { kind: ErrorKind::Syntax, offset: self.pos, message: message.into() })
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError {
                kind: ErrorKind::TooDeep,
                offset: self.pos,
                message: format!("nested more than {MAX_DEPTH} levels deep"),
            });
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    #[inline]
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos)
    }

    #[inline]
    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset)
    }

    /// Whether the input continues with `text`, an ASCII operator or keyword
    /// of a few characters: compared a character at a time, no call needed.
    #[inline]
    fn at(&self, text: &str) -> bool {
        text.bytes().enumerate().all(|(i, b)| self.peek_at(i) == Some(char::from(b)))
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eof(&self) -> bool {
        self.pos >= self.chars.len()
    }

    /// Parses a whole script.
    pub(super) fn parse_all(mut self) -> Result<Script, ParseError> {
        let script = self.script(&[])?;
        self.skip_space();
        if !self.eof() {
            let c = self.peek().unwrap_or(' ');
            return self.error(format!("unexpected `{c}`"));
        }
        self.read_pending_bodies();
        let mut script = script;
        let mut bodies = core::mem::take(&mut self.bodies);
        // Without a here-document of its own, no slot in the tree is this
        // parser's to fill (a nested parser filled its own): not walked.
        if !bodies.is_empty() {
            fill_script(&mut script, &mut bodies);
        }
        Ok(script)
    }

    /// The parts of an unquoted here-document body.
    pub(super) fn here_body(mut self) -> Result<Vec<Part>, ParseError> {
        let mut parts = self.parts(Mode::HereBody)?;
        self.read_pending_bodies();
        let mut bodies = core::mem::take(&mut self.bodies);
        if !bodies.is_empty() {
            fill_parts(&mut parts, &mut bodies);
        }
        Ok(parts)
    }

    /// Skips blanks, line continuations and comments.
    #[inline(always)]
    fn skip_blanks(&mut self) {
        // Most words are followed by one space and then the next word.
        if self.peek() == Some(' ') {
            self.pos += 1;
        }
        if matches!(self.peek(), Some(' ' | '\t' | '\r' | '\\' | '#')) {
            self.skip_more_blanks();
        }
    }

    fn skip_more_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if is_blank(c) {
                self.pos += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.pos += 2;
            } else if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Skips blanks, comments and newlines, reading here-document bodies.
    fn skip_space(&mut self) {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.newline();
            } else {
                break;
            }
        }
    }

    /// Consumes a newline and the bodies of the here-documents it ends.
    fn newline(&mut self) {
        self.pos += 1;
        self.read_pending_bodies();
    }

    fn read_pending_bodies(&mut self) {
        let pending = core::mem::take(&mut self.pending);
        for doc in pending {
            let mut text = String::new();
            while !self.eof() {
                if doc.strip_tabs {
                    while self.peek() == Some('\t') {
                        self.pos += 1;
                    }
                }
                let line = text.len();
                self.body_line(&mut text, !doc.quoted);
                if text[line..] == *doc.delimiter {
                    text.truncate(line);
                    break;
                }
                text.push('\n');
            }
            let body = if doc.quoted {
                if text.is_empty() { Vec::new() } else { vec![Part::Lit { text: text.into(), quoted: true }] }
            } else {
                // An error inside a body (an unclosed `$(`) makes its text literal:
                // the shell would refuse the whole script, which runs nothing.
                Parser::new(&text, self.depth)
                    .here_body()
                    .unwrap_or_else(|_| vec![Part::Lit { text: Text::from(&text), quoted: true }])
            };
            if let Some(slot) = doc.slot.checked_sub(1).and_then(|i| self.bodies.get_mut(i)) {
                *slot = body;
            }
        }
    }

    /// Reads one line of a here-document body into `text`, consuming its
    /// newline. In an unquoted body a backslash before a newline joins the
    /// next line to this one, as the shell reads it: the delimiter is looked
    /// for in the joined line. A backslash before any other character keeps
    /// both (`\\` at the end of a line escapes the backslash, not the
    /// newline), and one at the end of the text is dropped.
    fn body_line(&mut self, text: &mut String, joins: bool) {
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\n' => return,
                '\\' if joins => match self.peek() {
                    Some('\n') => self.pos += 1,
                    Some(next) => {
                        self.pos += 1;
                        text.push('\\');
                        text.push(next);
                    }
                    None => {}
                },
                c => text.push(c),
            }
        }
    }

    /// The upcoming word if it is one unquoted literal, without consuming it.
    fn peek_bare(&self) -> Option<String> {
        let mut out = String::new();
        let mut i = self.pos;
        while let Some(c) = self.chars.get(i) {
            if is_meta(c) {
                break;
            }
            if matches!(c, '\'' | '"' | '\\' | '$' | '`') {
                return None;
            }
            out.push(c);
            i += 1;
        }
        (!out.is_empty()).then_some(out)
    }

    /// Which of `candidates` the bare word at the current position is, if
    /// any: [`Self::peek_bare`] compared to each, without building it.
    fn peek_keyword<'w>(&self, candidates: &[&'w str]) -> Option<&'w str> {
        // A few candidates: their first bytes compared directly, no set built.
        let first = self.peek()?;
        if !candidates.iter().any(|k| k.as_bytes().first().is_some_and(|&b| char::from(b) == first)) {
            return None;
        }
        self.keyword_at(candidates, first, None)
    }

    /// [`Self::peek_keyword`], with the candidates' first characters known
    /// ([`first_bytes`]) and their filter ([`Names`]).
    fn peek_keyword_in(&self, candidates: &Names, firsts: u128) -> Option<&'static str> {
        // The bare run up to the next metacharacter, read once and only as
        // far as the longest candidate: no candidate holds a metacharacter.
        let first = self.peek()?;
        // Most words start with a letter no candidate starts with (candidates are ASCII).
        if !starts_one(firsts, first) {
            return None;
        }
        self.keyword_at(candidates.rows(), first, Some(candidates))
    }

    /// Which of `candidates` the bare word starting with `first` at the
    /// current position is, if any. With `filter` (the candidates' own), a
    /// run whose length and end characters pick a bit no candidate sets is
    /// none of them, with no candidate compared.
    fn keyword_at<'w>(&self, candidates: &[&'w str], first: char, filter: Option<&Names>) -> Option<&'w str> {
        let starts = |k: &str| k.as_bytes().first().is_some_and(|&b| char::from(b) == first);
        // The run is read no further than the grammar's longest keyword; the
        // candidates' own longest is worked out only for a longer run, which
        // spares a loop over them for nearly every word.
        let mut longest = LONGEST_KEYWORD;
        let mut end = self.pos;
        while let Some(c) = self.chars.get(end) {
            if is_meta(c) {
                break;
            }
            end += 1;
            if end - self.pos > longest {
                let theirs = candidates.iter().map(|k| k.len()).max()?;
                if theirs <= longest {
                    return None;
                }
                longest = theirs;
            }
        }
        if end == self.pos {
            return None;
        }
        let len = end - self.pos;
        if let Some(names) = filter {
            // A candidate is ASCII: the run spells one only if its end
            // characters are bytes, and then they are that candidate's.
            let last = self.chars.get(end - 1)?;
            let (Ok(first), Ok(last)) = (u8::try_from(first), u8::try_from(last)) else { return None };
            if !names.may_hold(first, last, len) {
                return None;
            }
        }
        candidates.iter().copied().find(|k| k.len() == len && starts(k) && self.chars.spells(self.pos, end, k))
    }

    fn at_word(&self, word: &str) -> bool {
        self.peek_keyword(&[word]).is_some()
    }

    fn expect_word(&mut self, word: &str) -> Result<(), ParseError> {
        self.skip_space();
        if self.at_word(word) {
            self.pos += word.chars().count();
            Ok(())
        } else {
            self.error(format!("expected `{word}`"))
        }
    }

    /// A list of commands, up to `)`, the end of input, `;;` or one of the
    /// reserved words in `terms`.
    fn script(&mut self, terms: &[&str]) -> Result<Script, ParseError> {
        self.enter()?;
        // Most scripts are one list; sized up front, the first push is no call (`grow_one`).
        let mut items = Vec::with_capacity(1);
        loop {
            self.skip_space();
            match self.peek() {
                None | Some(')') | Some(';') => break,
                _ => {}
            }
            if self.peek_keyword(terms).is_some() {
                break;
            }
            let list = self.and_or()?;
            self.skip_blanks();
            let mut background = false;
            match self.peek() {
                Some('&') => {
                    self.pos += 1;
                    background = true;
                }
                Some(';') if !matches!(self.peek_at(1), Some(';') | Some('&')) => self.pos += 1,
                Some(';') => {}
                Some('\n') => self.newline(),
                None | Some(')') => {}
                Some(c) => return self.error(format!("unexpected `{c}` after a command")),
            }
            items.push(Item { list, background });
        }
        self.leave();
        Ok(Script(items))
    }

    fn and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            self.skip_blanks();
            let connector = if self.at("&&") {
                Connector::And
            } else if self.at("||") {
                Connector::Or
            } else {
                break;
            };
            self.pos += 2;
            self.skip_space();
            rest.push((connector, self.pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&mut self) -> Result<Pipeline, ParseError> {
        let mut negated = false;
        loop {
            self.skip_blanks();
            if self.at_word("!") {
                self.pos += 1;
                negated = !negated;
            } else {
                break;
            }
        }
        let mut commands = vec![self.command()?];
        loop {
            self.skip_blanks();
            if self.peek() == Some('|') && self.peek_at(1) != Some('|') {
                self.pos += 1;
                if self.peek() == Some('&') {
                    self.pos += 1;
                }
                self.skip_space();
                commands.push(self.command()?);
            } else {
                break;
            }
        }
        Ok(Pipeline { negated, commands })
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        self.enter()?;
        self.skip_blanks();
        let command = self.command_inner();
        self.leave();
        command
    }

    fn command_inner(&mut self) -> Result<Command, ParseError> {
        if self.at("((")
            && let Some(end) = self.arith_end(self.pos + 2)
        {
            let raw = self.chars.text(self.pos + 2, end).into_owned();
            self.pos = end + 2;
            let redirects = self.redirects()?;
            return Ok(Command::Arith(raw, redirects));
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            let body = self.body(&[])?;
            self.skip_space();
            if self.bump() != Some(')') {
                return self.error("expected `)`");
            }
            let redirects = self.redirects()?;
            return Ok(Command::Subshell(body, redirects));
        }
        match self.peek_keyword_in(&COMMAND_NAMES, COMMAND_FIRSTS) {
            Some("{") => {
                self.pos += 1;
                let body = self.body(&["}"])?;
                self.expect_word("}")?;
                let redirects = self.redirects()?;
                Ok(Command::Group(body, redirects))
            }
            Some("if") => self.if_command(),
            Some(word @ ("while" | "until")) => {
                let until = word == "until";
                self.pos += word.len();
                let condition = self.body(&["do"])?;
                self.expect_word("do")?;
                let body = self.body(&["done"])?;
                self.expect_word("done")?;
                let redirects = self.redirects()?;
                Ok(Command::Loop { until, condition, body, redirects })
            }
            Some("for") => self.for_command(),
            Some("case") => self.case_command(),
            Some("function") => {
                self.pos += "function".len();
                self.skip_blanks();
                let Some(name) = self.peek_bare() else {
                    return self.error("expected a function name");
                };
                self.pos += name.chars().count();
                self.skip_blanks();
                if self.at("()") {
                    self.pos += 2;
                } else if self.peek() == Some('(') {
                    self.pos += 1;
                    self.skip_blanks();
                    if self.bump() != Some(')') {
                        return self.error("expected `)`");
                    }
                }
                self.function_body(name)
            }
            Some(word @ ("coproc" | "time")) => match self.prefixed_compound(word) {
                Some(command) => command,
                None => self.simple(),
            },
            Some(word) if RESERVED_CLOSERS.contains(&word) && word != "in" => {
                self.error(format!("unexpected `{word}`"))
            }
            _ => self.simple(),
        }
    }

    /// `coproc [NAME] COMPOUND` and `time [-p] [--] [!] COMMAND`: the
    /// command they run, which is what is judged. `None`, with nothing
    /// consumed, when a simple command follows: `coproc` and `time` are
    /// then read as programs that run their operands.
    fn prefixed_compound(&mut self, word: &str) -> Option<Result<Command, ParseError>> {
        let start = self.pos;
        self.pos += word.len();
        if !self.peek().is_some_and(is_blank) {
            self.pos = start;
            return None;
        }
        self.skip_blanks();
        // `time -p -- ! ! cmd`: what follows the options and negations is the command timed.
        let mut rest_is_command = false;
        let timed = word == "time";
        loop {
            if !timed {
                break;
            }
            if (self.at("-p") || self.at("--")) && self.peek_at(2).is_none_or(is_meta) {
                self.pos += 2;
            } else if self.peek() == Some('!') && self.peek_at(1).is_none_or(is_meta) {
                self.pos += 1;
                rest_is_command = true;
            } else {
                break;
            }
            self.skip_blanks();
        }
        if timed && self.peek_keyword(&["coproc", "time"]).is_some() {
            rest_is_command = true;
        }
        if rest_is_command {
            return Some(self.command());
        }
        if word == "coproc"
            && !self.opens_compound()
            && let Some(name) = self.peek_bare()
        {
            let after_name = self.pos;
            self.pos += name.chars().count();
            if !self.peek().is_some_and(is_blank) {
                self.pos = after_name;
            } else {
                self.skip_blanks();
            }
        }
        if self.opens_compound() {
            return Some(self.command());
        }
        self.pos = start;
        None
    }

    /// Whether a compound command starts here: `(`, `((`, `{`, `if`, a loop or `case`.
    fn opens_compound(&self) -> bool {
        self.peek() == Some('(') || self.peek_keyword(COMPOUND_OPENERS).is_some()
    }

    /// A non-empty command list, as compound commands require.
    fn body(&mut self, terms: &[&str]) -> Result<Script, ParseError> {
        let script = self.script(terms)?;
        if script.0.is_empty() {
            return self.error("expected a command");
        }
        Ok(script)
    }

    fn function_body(&mut self, name: String) -> Result<Command, ParseError> {
        self.skip_space();
        let body = self.command()?;
        if matches!(body, Command::Simple(_) | Command::Function { .. }) {
            return self.error(format!("the body of function `{name}` must be a compound command"));
        }
        Ok(Command::Function { name, body: Box::new(body) })
    }

    fn if_command(&mut self) -> Result<Command, ParseError> {
        self.pos += 2;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let condition = self.body(&["then"])?;
            self.expect_word("then")?;
            let body = self.body(&["elif", "else", "fi"])?;
            branches.push((condition, body));
            self.skip_space();
            if self.at_word("elif") {
                self.pos += 4;
                continue;
            }
            if self.at_word("else") {
                self.pos += 4;
                otherwise = Some(self.body(&["fi"])?);
            }
            self.expect_word("fi")?;
            break;
        }
        let redirects = self.redirects()?;
        Ok(Command::If { branches, otherwise, redirects })
    }

    fn for_command(&mut self) -> Result<Command, ParseError> {
        self.pos += 3;
        self.skip_blanks();
        if self.at("((") {
            let Some(end) = self.arith_end(self.pos + 2) else {
                return self.error("unterminated `((`");
            };
            let header = self.chars.text(self.pos + 2, end).into_owned();
            self.pos = end + 2;
            self.skip_blanks();
            if self.peek() == Some(';') {
                self.pos += 1;
            }
            self.expect_word("do")?;
            let body = self.body(&["done"])?;
            self.expect_word("done")?;
            let redirects = self.redirects()?;
            return Ok(Command::ForArith { header, body, redirects });
        }
        let Some(name) = self.peek_bare().filter(|n| is_name(n)) else {
            return self.error("expected a variable name after `for`");
        };
        self.pos += name.len();
        self.skip_space();
        let mut words = None;
        if self.at_word("in") {
            self.pos += 2;
            let mut list = Vec::new();
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some(';') | Some('\n') => break,
                    None => return self.error("expected `do`"),
                    Some(c) if is_meta(c) => return self.error(format!("unexpected `{c}` in a `for` list")),
                    _ => list.push(self.word()?),
                }
            }
            words = Some(list);
        }
        self.skip_blanks();
        if self.peek() == Some(';') {
            self.pos += 1;
        }
        self.expect_word("do")?;
        let body = self.body(&["done"])?;
        self.expect_word("done")?;
        let redirects = self.redirects()?;
        Ok(Command::For { name, words, body, redirects })
    }

    fn case_command(&mut self) -> Result<Command, ParseError> {
        self.pos += 4;
        self.skip_blanks();
        if self.peek().is_none_or(is_meta) {
            return self.error("expected a word after `case`");
        }
        let word = self.word()?;
        self.expect_word("in")?;
        let mut arms = Vec::new();
        loop {
            self.skip_space();
            if self.at_word("esac") {
                self.pos += 4;
                break;
            }
            if self.peek() == Some('(') {
                self.pos += 1;
            }
            let mut patterns = Vec::new();
            loop {
                self.skip_blanks();
                if self.peek().is_none_or(is_meta) {
                    return self.error("expected a pattern");
                }
                patterns.push(self.word()?);
                self.skip_blanks();
                match self.bump() {
                    Some('|') => continue,
                    Some(')') => break,
                    _ => return self.error("expected `)` after a pattern"),
                }
            }
            let body = self.script(&["esac"])?;
            arms.push((patterns, body));
            self.skip_space();
            if self.at(";;&") {
                self.pos += 3;
            } else if self.at(";;") || self.at(";&") {
                self.pos += 2;
            } else if !self.at_word("esac") {
                return self.error("expected `;;` or `esac`");
            }
        }
        let redirects = self.redirects()?;
        Ok(Command::Case { word, arms, redirects })
    }

    /// Redirections after a compound command.
    fn redirects(&mut self) -> Result<Vec<Redirect>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_blanks();
            if self.redirect_ahead() {
                out.push(self.redirect()?);
            } else {
                return Ok(out);
            }
        }
    }

    #[inline(always)]
    fn redirect_ahead(&self) -> bool {
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        match (self.chars.get(i), self.chars.get(i + 1)) {
            (Some('<' | '>'), Some('(')) => i > self.pos,
            (Some('<' | '>'), _) => true,
            (Some('&'), Some('>')) => i == self.pos,
            _ => false,
        }
    }

    fn redirect(&mut self) -> Result<Redirect, ParseError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let fd = if self.pos > start {
            let n = (start..self.pos)
                .try_fold(0u32, |n, i| n.checked_mul(10)?.checked_add(self.chars.get(i)?.to_digit(10)?));
            match n {
                Some(n) => Some(n),
                None => return self.error("file descriptor too large"),
            }
        } else {
            None
        };
        const OPS: &[(&str, RedirectOp)] = &[
            ("&>>", RedirectOp::AppendOutErr),
            ("&>", RedirectOp::OutErr),
            ("<<<", RedirectOp::HereString),
            ("<<-", RedirectOp::HereDoc),
            ("<<", RedirectOp::HereDoc),
            ("<>", RedirectOp::ReadWrite),
            ("<&", RedirectOp::DupIn),
            ("<", RedirectOp::In),
            (">>", RedirectOp::Append),
            (">|", RedirectOp::Clobber),
            (">&", RedirectOp::DupOut),
            (">", RedirectOp::Out),
        ];
        let Some(&(text, op)) = OPS.iter().find(|(text, _)| self.at(text)) else {
            return self.error("expected a redirection");
        };
        self.pos += text.len();
        self.skip_blanks();
        if self.peek().is_none_or(|c| is_meta(c) && !self.at("<(") && !self.at(">(")) {
            return self.error(format!("expected a word after `{text}`"));
        }
        let word = self.word()?;
        let target = if op == RedirectOp::HereDoc {
            let mut quoted = false;
            let mut delimiter = String::new();
            for part in &word.0 {
                match part {
                    Part::Lit { text, quoted: q } => {
                        quoted |= *q;
                        delimiter.push_str(text);
                    }
                    Part::Double(inner) => {
                        quoted = true;
                        for p in inner {
                            match p {
                                Part::Lit { text, .. } => delimiter.push_str(text),
                                _ => return self.error("a here-document delimiter must be literal text"),
                            }
                        }
                    }
                    _ => return self.error("a here-document delimiter must be literal text"),
                }
            }
            if delimiter.contains('\n') {
                return self.error("a here-document delimiter must be on one line");
            }
            self.bodies.push(Vec::new());
            let slot = self.bodies.len();
            self.pending.push(Pending { slot, delimiter: delimiter.clone(), quoted, strip_tabs: text == "<<-" });
            RedirectTarget::HereDoc(HereDoc { delimiter, quoted, body: Vec::new(), slot })
        } else {
            RedirectTarget::Word(word)
        };
        Ok(Redirect { fd, op, target })
    }

    fn simple(&mut self) -> Result<Command, ParseError> {
        // Room for a few words up front, as the first push would make (without its call).
        let mut simple = Simple { words: Vec::with_capacity(4), ..Simple::default() };
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            if self.redirect_ahead() {
                simple.redirects.push(self.redirect()?);
                continue;
            }
            if c == '(' {
                let close = self.empty_parens_ahead();
                let definition = simple.assigns.is_empty() && simple.redirects.is_empty() && simple.words.len() == 1;
                let (Some(close), true) = (close, definition) else {
                    return self.error("unexpected `(`");
                };
                let name = simple.words.first().and_then(Word::bare).map(str::to_string);
                let Some(name) = name else {
                    return self.error("a function name must be plain text");
                };
                self.pos = close + 1;
                return self.function_body(name);
            }
            if is_meta(c) && !self.at("<(") && !self.at(">(") {
                break;
            }
            if simple.words.is_empty()
                && let Some(assign) = self.assignment()?
            {
                simple.assigns.push(assign);
                continue;
            }
            // `declare -a x=(a b)`, `local files=(*.txt)`: an array assignment as an operand.
            if simple.words.first().and_then(Word::bare).is_some_and(declares)
                && self.array_ahead()
                && let Some(Assign { name, append, value: AssignValue::Array(values), .. }) = self.assignment()?
            {
                simple.words.push(array_word(&name, append, values));
                continue;
            }
            let word = self.word()?;
            // A line continuation can hide the `=` from the check above.
            if simple.words.is_empty()
                && let Some(assign) = as_assignment(&word)
            {
                simple.assigns.push(assign);
                continue;
            }
            if simple.words.is_empty()
                && let Some(reserved) = word.bare().filter(|w| reserved(w))
            {
                // Only a line continuation inside it kept it from being read as reserved.
                return self.error(format!("`{reserved}` is split by a line continuation"));
            }
            let test = simple.words.is_empty() && word.bare() == Some("[[");
            simple.words.push(word);
            if test {
                self.test_words(&mut simple.words)?;
            }
        }
        if simple.assigns.is_empty() && simple.words.is_empty() && simple.redirects.is_empty() {
            return match self.peek() {
                Some(c) => self.error(format!("expected a command, got `{c}`")),
                None => self.error("expected a command"),
            };
        }
        Ok(Command::Simple(Rc::new(simple)))
    }

    /// Where the `)` of a `( )` at the current position is.
    fn empty_parens_ahead(&self) -> Option<usize> {
        let mut i = self.pos + 1;
        while self.chars.get(i).is_some_and(is_blank) {
            i += 1;
        }
        (self.chars.get(i) == Some(')')).then_some(i)
    }

    /// The words of `[[ ... ]]`, where `<`, `>`, `&&`, `||`, `(` and `)` are
    /// operators of the test rather than redirections and lists.
    fn test_words(&mut self, words: &mut Vec<Word>) -> Result<(), ParseError> {
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return self.error("expected `]]`");
            };
            if c == '\n' {
                self.newline();
                continue;
            }
            if matches!(c, ';') {
                return self.error("expected `]]`");
            }
            if is_meta(c) {
                let mut op = String::new();
                while let Some(c) = self.peek().filter(|c| matches!(c, '<' | '>' | '&' | '|' | '(' | ')' | '!')) {
                    op.push(c);
                    self.pos += 1;
                }
                words.push(Word::lit(&op));
                continue;
            }
            let word = self.word()?;
            let end = word.bare() == Some("]]");
            words.push(word);
            if end {
                return Ok(());
            }
        }
    }

    /// Whether `name=(` or `name+=(` starts here.
    fn array_ahead(&self) -> bool {
        let mut i = self.pos;
        if !self.chars.get(i).is_some_and(is_name_start) {
            return false;
        }
        while self.chars.get(i).is_some_and(is_name_char) {
            i += 1;
        }
        if self.chars.get(i) == Some('+') {
            i += 1;
        }
        self.chars.get(i) == Some('=') && self.chars.get(i + 1) == Some('(')
    }

    fn assignment(&mut self) -> Result<Option<Assign>, ParseError> {
        let mut i = self.pos;
        if !self.chars.get(i).is_some_and(is_name_start) {
            return Ok(None);
        }
        while self.chars.get(i).is_some_and(is_name_char) {
            i += 1;
        }
        let name_end = i;
        // `p[0]=value`: an element of an array.
        let mut index = None;
        if self.chars.get(i) == Some('[') {
            let Some(close) = self.subscript_end(i + 1) else { return Ok(None) };
            index = Some(self.chars.text(i + 1, close).into_owned());
            i = close + 1;
        }
        let append = self.chars.get(i) == Some('+');
        let eq = if append { i + 1 } else { i };
        if self.chars.get(eq) != Some('=') {
            return Ok(None);
        }
        let name = self.chars.text(self.pos, name_end).into_owned();
        self.pos = eq + 1;
        if self.peek() == Some('(') {
            if index.is_some() {
                return self.error("an array element cannot be assigned an array");
            }
            self.pos += 1;
            let mut values = Vec::new();
            loop {
                self.skip_space();
                match self.peek() {
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    None => return self.error("expected `)` to end the array"),
                    Some(c) if is_meta(c) => return self.error(format!("unexpected `{c}` in an array")),
                    _ => values.push(self.word()?),
                }
            }
            return Ok(Some(Assign { name, index, append, value: AssignValue::Array(values) }));
        }
        let value = if self.peek().is_none_or(|c| is_meta(c) && !self.at("<(") && !self.at(">(")) {
            Word::default()
        } else {
            self.word()?
        };
        Ok(Some(Assign { name, index, append, value: AssignValue::Scalar(value) }))
    }

    /// Where the `]` that closes an assignment's subscript starting at
    /// `from` is, as bash finds it: brackets nest, quotes and `$(…)` hide
    /// what they hold, and a newline or the end means it is no subscript.
    fn subscript_end(&self, from: usize) -> Option<usize> {
        let (mut depth, mut quote, mut parens) = (0usize, None, 0usize);
        let mut j = from;
        loop {
            let c = self.chars.get(j)?;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') => j += 1,
                (Some(_), _) => {}
                (None, '\n') => return None,
                (None, '\\') => j += 1,
                (None, '\'' | '"' | '`') => quote = Some(c),
                (None, '(') => parens += 1,
                (None, ')') => parens = parens.checked_sub(1)?,
                (None, '[') if parens == 0 => depth += 1,
                (None, ']') if parens == 0 && depth == 0 => return (j > from).then_some(j),
                (None, ']') if parens == 0 => depth -= 1,
                _ => {}
            }
            j += 1;
        }
    }

    /// One word in ordinary context.
    fn word(&mut self) -> Result<Word, ParseError> {
        // The commonest word, plain characters up to a metacharacter or the
        // end, read at once: what `parts` makes of it, one unquoted literal.
        let end = self.chars.plain_run(self.pos, Mode::Bare);
        if end > self.pos && self.chars.get(end).is_none_or(is_meta) {
            let text = Text::from(self.chars.text(self.pos, end).as_ref());
            self.pos = end;
            return Ok(Word(vec![Part::Lit { text, quoted: false }]));
        }
        let mut parts = Vec::new();
        if self.at("<(") || self.at(">(") {
            let out = self.peek() == Some('>');
            self.pos += 2;
            let script = self.script(&[])?;
            self.skip_space();
            if self.bump() != Some(')') {
                return self.error("expected `)` to end the process substitution");
            }
            parts.push(if out { Part::ProcOut(script) } else { Part::ProcIn(script) });
            parts.extend(self.parts(Mode::Bare)?);
            return Ok(Word(parts));
        }
        Ok(Word(self.parts(Mode::Bare)?))
    }

    /// Reads parts until the end of the word in `mode`. For `Double` the
    /// closing quote, and for `Brace` the closing brace, is consumed.
    fn parts(&mut self, mode: Mode) -> Result<Vec<Part>, ParseError> {
        let mut parts = Vec::new();
        let quoted_text = matches!(mode, Mode::Double | Mode::HereBody);
        let mut braces = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return match mode {
                    Mode::Bare | Mode::HereBody => Ok(parts),
                    Mode::Double => self.error("unterminated double quote"),
                    Mode::Brace => self.error("unterminated `${`"),
                };
            };
            match (mode, c) {
                (Mode::Bare, c) if is_meta(c) => return Ok(parts),
                (Mode::Double, '"') => {
                    self.pos += 1;
                    return Ok(parts);
                }
                (Mode::Brace, '}') if braces == 0 => {
                    self.pos += 1;
                    return Ok(parts);
                }
                (Mode::Brace, '}') => {
                    braces -= 1;
                    self.pos += 1;
                    push_char(&mut parts, '}', false);
                }
                (Mode::Brace, '{') => {
                    braces += 1;
                    self.pos += 1;
                    push_char(&mut parts, '{', false);
                }
                (Mode::Bare | Mode::Brace, '\'') => {
                    self.pos += 1;
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                    if self.eof() {
                        return self.error("unterminated single quote");
                    }
                    let text = self.chars.text(start, self.pos);
                    self.pos += 1;
                    push_text(&mut parts, text, true);
                }
                (Mode::Bare | Mode::Brace, '"') => {
                    self.pos += 1;
                    self.enter()?;
                    let inner = self.parts(Mode::Double);
                    self.leave();
                    parts.push(Part::Double(inner?));
                }
                (_, '\\') => {
                    self.pos += 1;
                    match (mode, self.peek()) {
                        (_, None) => push_char(&mut parts, '\\', true),
                        (Mode::HereBody, Some(n @ ('$' | '`' | '\\'))) => {
                            self.pos += 1;
                            push_char(&mut parts, n, true);
                        }
                        (Mode::HereBody, Some(_)) => push_char(&mut parts, '\\', true),
                        (Mode::Double | Mode::Bare | Mode::Brace, Some('\n')) => self.pos += 1,
                        (Mode::Double, Some(n @ ('$' | '`' | '"' | '\\'))) => {
                            self.pos += 1;
                            push_char(&mut parts, n, true);
                        }
                        (Mode::Double, Some(_)) => push_char(&mut parts, '\\', true),
                        (_, Some(n)) => {
                            self.pos += 1;
                            push_char(&mut parts, n, true);
                        }
                    }
                }
                (_, '$') => self.dollar(mode, &mut parts)?,
                (_, '`') => {
                    let script = self.backquoted()?;
                    parts.push(Part::Sub(script));
                }
                (_, _) => {
                    // A run of characters no arm above reads specially, taken at once.
                    let start = self.pos;
                    self.pos = self.chars.plain_run(self.pos + 1, mode);
                    let text = self.chars.text(start, self.pos);
                    push_text(&mut parts, text, quoted_text);
                }
            }
        }
    }

    /// Where the `))` that closes an arithmetic expression starting at `from`
    /// is, counting parentheses; `None` if a `)` closes it alone first.
    fn arith_end(&self, from: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut i = from;
        while let Some(c) = self.chars.get(i) {
            match c {
                '(' => depth += 1,
                ')' if depth > 0 => depth -= 1,
                ')' => return (self.chars.get(i + 1) == Some(')')).then_some(i),
                _ => {}
            }
            i += 1;
        }
        None
    }

    fn dollar(&mut self, mode: Mode, parts: &mut Vec<Part>) -> Result<(), ParseError> {
        self.pos += 1;
        // Line continuations are removed before expansions are read:
        // `$\<newline>HOME` is `$HOME`.
        self.skip_continuations();
        let bare = matches!(mode, Mode::Bare | Mode::Brace);
        match self.peek() {
            Some('\'') if bare => {
                self.pos += 1;
                let text = self.ansi_c()?;
                push_lit(parts, &text, true);
            }
            Some('"') if bare => {
                self.pos += 1;
                self.enter()?;
                let inner = self.parts(Mode::Double);
                self.leave();
                parts.push(Part::Double(inner?));
            }
            Some('(') => {
                if self.peek_at(1) == Some('(')
                    && let Some(end) = self.arith_end(self.pos + 2)
                {
                    let raw = self.chars.text(self.pos + 2, end).into_owned();
                    self.pos = end + 2;
                    parts.push(Part::Arith(raw));
                    return Ok(());
                }
                self.pos += 1;
                let script = self.script(&[])?;
                self.skip_space();
                if self.bump() != Some(')') {
                    return self.error("expected `)` to end `$(`");
                }
                parts.push(Part::Sub(script));
            }
            Some('{') => {
                self.pos += 1;
                self.enter()?;
                // `${\<newline>if}` is `${if}`.
                self.skip_continuations();
                let name = self.param_name(true);
                let rest = self.parts(Mode::Brace);
                self.leave();
                let rest = rest?;
                if name.is_empty() && rest.first().is_some_and(|p| !matches!(p, Part::Lit { .. })) {
                    return self.error("bad substitution: `${` must start with a name");
                }
                parts.push(Part::Param(Param { name, braced: true, rest }));
            }
            Some(c) if is_name_start(c) || c.is_ascii_digit() || is_special_param(c) => {
                let name = self.param_name(false);
                parts.push(Part::Param(Param { name, braced: false, rest: Vec::new() }));
            }
            // A `$` that starts nothing is literal text.
            _ => push_char(parts, '$', true),
        }
        Ok(())
    }

    /// Skips line continuations (a backslash before a newline) at the current position.
    fn skip_continuations(&mut self) {
        while self.peek() == Some('\\') && self.peek_at(1) == Some('\n') {
            self.pos += 2;
        }
    }

    fn param_name(&mut self, braced: bool) -> String {
        let mut name = String::new();
        match self.peek() {
            Some(c) if is_name_start(c) => loop {
                match self.peek() {
                    Some(c) if is_name_char(c) => {
                        name.push(c);
                        self.pos += 1;
                    }
                    // A line continuation does not end a name.
                    Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                    _ => break,
                }
            },
            Some(c) if c.is_ascii_digit() => {
                name.push(c);
                self.pos += 1;
                while braced && let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    name.push(c);
                    self.pos += 1;
                }
            }
            Some(c) if is_special_param(c) => {
                name.push(c);
                self.pos += 1;
            }
            _ => {}
        }
        name
    }

    /// The text of `$'...'` with its escapes resolved.
    fn ansi_c(&mut self) -> Result<String, ParseError> {
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return self.error("unterminated `$'`");
            };
            match c {
                '\'' => return Ok(out),
                '\\' => {
                    let Some(e) = self.bump() else {
                        return self.error("unterminated `$'`");
                    };
                    match e {
                        'a' => out.push('\u{7}'),
                        'b' => out.push('\u{8}'),
                        'e' | 'E' => out.push('\u{1b}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'v' => out.push('\u{b}'),
                        'x' => out.push(self.code_point(16, 2).unwrap_or('x')),
                        'u' => out.push(self.code_point(16, 4).unwrap_or('u')),
                        'U' => out.push(self.code_point(16, 8).unwrap_or('U')),
                        '0'..='7' => {
                            self.pos -= 1;
                            out.push(self.code_point(8, 3).unwrap_or('0'));
                        }
                        other => {
                            if !matches!(other, '\\' | '\'' | '"' | '?') {
                                out.push('\\');
                            }
                            out.push(other);
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn code_point(&mut self, radix: u32, max_digits: usize) -> Option<char> {
        let mut value: u32 = 0;
        let mut digits = 0;
        while digits < max_digits
            && let Some(d) = self.peek().and_then(|c| c.to_digit(radix))
        {
            value = value.saturating_mul(radix).saturating_add(d);
            self.pos += 1;
            digits += 1;
        }
        if digits == 0 {
            return None;
        }
        Some(char::from_u32(value).unwrap_or('\u{fffd}'))
    }

    /// A backquoted command, parsed as a script of its own.
    fn backquoted(&mut self) -> Result<Script, ParseError> {
        self.pos += 1;
        let mut text = String::new();
        loop {
            match self.bump() {
                None => return self.error("unterminated backquote"),
                Some('`') => break,
                Some('\\') => match self.bump() {
                    Some(n @ ('`' | '\\' | '$')) => text.push(n),
                    Some(n) => {
                        text.push('\\');
                        text.push(n);
                    }
                    None => return self.error("unterminated backquote"),
                },
                Some(c) => text.push(c),
            }
        }
        let offset = self.pos;
        let inner = Parser::new(&text, self.depth);
        inner.parse_all().map_err(|mut e| {
            e.offset = offset;
            e
        })
    }
}

/// Builtins that take assignments as operands, arrays among them.
fn declares(word: &str) -> bool {
    matches!(word, "declare" | "typeset" | "local" | "export" | "readonly")
}

/// An array assignment given to [`declares`] as one word: `name=(`, the
/// values' parts with a space between them, `)`. Expansions in the values
/// stay parts of the word, so what they run is still seen.
fn array_word(name: &str, append: bool, values: Vec<Word>) -> Word {
    let lit = |t: &str| Part::Lit { text: Text::from(t), quoted: true };
    let mut parts = vec![lit(&format!("{name}{}=(", if append { "+" } else { "" }))];
    for (k, value) in values.into_iter().enumerate() {
        if k > 0 {
            parts.push(lit(" "));
        }
        parts.extend(value.0);
    }
    parts.push(lit(")"));
    Word(parts)
}

/// The assignment a word spells, when its first part is unquoted text that
/// starts with `name=` or `name+=`.
fn as_assignment(word: &Word) -> Option<Assign> {
    let Some(Part::Lit { text, quoted: false }) = word.0.first() else {
        return None;
    };
    let eq = crate::bytes::find(text.as_bytes(), b'=')?;
    let head = text.get(..eq)?;
    let (name, append) = match head.strip_suffix('+') {
        Some(name) => (name, true),
        None => (head, false),
    };
    if !is_name(name) {
        return None;
    }
    let mut parts = Vec::new();
    let rest = text.get(eq + 1..).unwrap_or("");
    if !rest.is_empty() {
        parts.push(Part::Lit { text: Text::from(rest), quoted: false });
    }
    parts.extend(word.0.iter().skip(1).cloned());
    Some(Assign { name: name.to_string(), index: None, append, value: AssignValue::Scalar(Word(parts)) })
}

fn fill_script(script: &mut Script, bodies: &mut [Vec<Part>]) {
    for item in &mut script.0 {
        fill_pipeline(&mut item.list.first, bodies);
        for (_, p) in &mut item.list.rest {
            fill_pipeline(p, bodies);
        }
    }
}

fn fill_pipeline(pipeline: &mut Pipeline, bodies: &mut [Vec<Part>]) {
    for c in &mut pipeline.commands {
        fill_command(c, bodies);
    }
}

fn fill_redirects(redirects: &mut [Redirect], bodies: &mut [Vec<Part>]) {
    for r in redirects {
        match &mut r.target {
            RedirectTarget::Word(w) => fill_parts(&mut w.0, bodies),
            RedirectTarget::HereDoc(doc) => {
                // Slot zero was filled by the parser of an enclosing backquote or body.
                if let Some(body) = doc.slot.checked_sub(1).and_then(|i| bodies.get_mut(i)) {
                    doc.body = core::mem::take(body);
                }
                doc.slot = 0;
                fill_parts(&mut doc.body, bodies);
            }
        }
    }
}

fn fill_words(words: &mut [Word], bodies: &mut [Vec<Part>]) {
    for w in words {
        fill_parts(&mut w.0, bodies);
    }
}

fn fill_command(command: &mut Command, bodies: &mut [Vec<Part>]) {
    match command {
        Command::Simple(s) => {
            // Not yet shared while the parser fills it: made mutable in place.
            let s = Rc::make_mut(s);
            for a in &mut s.assigns {
                match &mut a.value {
                    AssignValue::Scalar(w) => fill_parts(&mut w.0, bodies),
                    AssignValue::Array(ws) => fill_words(ws, bodies),
                }
            }
            fill_words(&mut s.words, bodies);
            fill_redirects(&mut s.redirects, bodies);
        }
        Command::Subshell(body, r) | Command::Group(body, r) => {
            fill_script(body, bodies);
            fill_redirects(r, bodies);
        }
        Command::If { branches, otherwise, redirects } => {
            for (c, b) in branches {
                fill_script(c, bodies);
                fill_script(b, bodies);
            }
            if let Some(o) = otherwise {
                fill_script(o, bodies);
            }
            fill_redirects(redirects, bodies);
        }
        Command::Loop { condition, body, redirects, .. } => {
            fill_script(condition, bodies);
            fill_script(body, bodies);
            fill_redirects(redirects, bodies);
        }
        Command::For { words, body, redirects, .. } => {
            if let Some(ws) = words {
                fill_words(ws, bodies);
            }
            fill_script(body, bodies);
            fill_redirects(redirects, bodies);
        }
        Command::ForArith { body, redirects, .. } => {
            fill_script(body, bodies);
            fill_redirects(redirects, bodies);
        }
        Command::Case { word, arms, redirects } => {
            fill_parts(&mut word.0, bodies);
            for (patterns, body) in arms {
                fill_words(patterns, bodies);
                fill_script(body, bodies);
            }
            fill_redirects(redirects, bodies);
        }
        Command::Arith(_, redirects) => fill_redirects(redirects, bodies),
        Command::Function { body, .. } => fill_command(body, bodies),
    }
}

fn fill_parts(parts: &mut [Part], bodies: &mut [Vec<Part>]) {
    for part in parts {
        match part {
            Part::Double(inner) => fill_parts(inner, bodies),
            Part::Param(p) => fill_parts(&mut p.rest, bodies),
            Part::Sub(s) | Part::ProcIn(s) | Part::ProcOut(s) => fill_script(s, bodies),
            Part::Lit { .. } | Part::Arith(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_table_says_what_plain_says_of_every_ascii_character_in_every_mode() {
        for mode in [Mode::Bare, Mode::Double, Mode::HereBody, Mode::Brace] {
            for b in 0u8..128 {
                assert_eq!(PLAIN[mode as usize][usize::from(b)], plain(mode, char::from(b)), "byte {b}");
            }
        }
    }

    #[test]
    fn a_plain_run_ends_at_the_first_character_that_is_not_plain_in_ascii_and_wide_text() {
        let cases: &[(&str, usize, Mode, usize)] = &[
            ("git status", 0, Mode::Bare, 3),
            ("git", 0, Mode::Bare, 3),
            ("a'b", 0, Mode::Bare, 1),
            ("x$y", 1, Mode::Bare, 1),
            ("a b\"c", 0, Mode::Double, 3),
            ("a}b", 0, Mode::Brace, 1),
            ("a}b", 0, Mode::Bare, 3),
            ("é; x", 0, Mode::Bare, 1),
            ("aé b", 0, Mode::Bare, 2),
            ("ab", 5, Mode::Bare, 5),
        ];
        for (text, start, mode, end) in cases {
            assert_eq!(Chars::new(text).plain_run(*start, *mode), *end, "`{text}` from {start}");
        }
    }

    #[test]
    fn a_reserved_word_is_recognised_where_comparing_every_one_recognises_it() {
        let mut words: Vec<String> = COMMAND_WORDS.iter().map(|w| w.to_string()).collect();
        let near: Vec<String> = words
            .iter()
            .flat_map(|w| [format!("{w}x"), format!("x{w}"), w.to_uppercase(), w[..w.len() - 1].to_string()])
            .collect();
        words.extend(near);
        // Words that share a reserved word's length and end bytes, wide
        // characters (Latin-1 ones are a byte wide as numbers), and the
        // grammar's longest word and longer.
        words.extend(
            [
                "tail",
                "tame",
                "cargo",
                "dose",
                "fo",
                "ifi",
                "é",
                "éf",
                "fé",
                "iñ",
                "thé",
                "function",
                "functions",
                "do\u{e9}",
            ]
            .map(String::from),
        );
        for word in words {
            for text in [word.clone(), format!("{word} x"), format!("{word};"), format!("é; {word}")] {
                let mut parser = Parser::new(&text, 0);
                if text.starts_with('é') {
                    parser.pos = 3;
                }
                let first = parser.peek();
                let filtered = parser.peek_keyword_in(&COMMAND_NAMES, COMMAND_FIRSTS);
                let compared = first.and_then(|f| parser.keyword_at(COMMAND_WORDS, f, None));
                assert_eq!(filtered, compared, "`{text}`");
            }
        }
    }
}
