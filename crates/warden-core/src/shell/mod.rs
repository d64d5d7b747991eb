//! A shell command parser and the analysis that turns a script into the
//! programs it would run.
//!
//! Guards that match command prefixes are bypassed by shell syntax:
//! `rm -r -f /`, `/bin/rm -rf /`, `\rm -rf /`, `r''m -rf /`,
//! `bash -c "rm -rf /"`, `sudo env X=1 rm -rf /`, `x=/; rm -rf $x`. So the
//! exec gate parses the command like a shell would ([`parse`]), then
//! [`commands::analyse`] walks the tree with the state a shell keeps (the
//! working directory after `cd`, variables assigned earlier, functions
//! defined earlier) and unwraps the programs that run other programs (`sudo`,
//! `env`, `nohup`, `time`, `command`, `xargs`, `find -exec`, `sh -c`, `eval`,
//! ...), until it has the list of programs with their arguments, their
//! redirections and how they are piped together.
//!
//! No maintained `no_std` shell parser exists, so this one is written for the
//! job. It covers POSIX shell plus the bash syntax agents write (`$(...)`,
//! `<(...)`, `[[ ]]`, `(( ))`, `$'...'`, here-documents and here-strings),
//! keeps the tree free of spelling (quotes that change nothing, spacing,
//! separators), and prints it back canonically ([`print`]), so that
//! `parse(print(tree)) == tree`.
//!
//! Bounds: input longer than [`MAX_INPUT_CHARS`] and nesting deeper than
//! [`MAX_DEPTH`] are refused with a [`ParseError`] rather than parsed, so a
//! hostile command costs bounded time and stack.

pub mod ast;
pub mod commands;
pub mod data_words;
pub mod decode;
pub mod downloads;
pub mod embedded;
pub mod fields;
pub mod interpreters;
pub mod metadata;
pub mod operators;
mod parse;
pub mod print;
pub mod programs;
pub mod remote;
pub mod secrets;
pub mod segment;
#[cfg(test)]
mod tests;
pub mod text;
pub mod wrappers;

pub use ast::*;
pub use parse::is_name;

use crate::prelude::*;

/// Longest script parsed, in characters (64 Ki). Agents' commands are far
/// shorter; a longer one is refused instead of parsed.
pub const MAX_INPUT_CHARS: usize = 64 * 1024;

/// Deepest nesting of lists, commands, quotes and substitutions parsed.
/// Each `$(...)` level costs two.
pub const MAX_DEPTH: usize = 64;

/// Why a script could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Not valid shell syntax.
    Syntax,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Longer than [`MAX_INPUT_CHARS`].
    TooLong,
}

/// A script that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub kind: ErrorKind,
    /// Character offset where the problem was found.
    pub offset: usize,
    pub message: String,
}

impl core::fmt::Display for ParseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} at character {}", self.message, self.offset)
    }
}

/// Parses a script.
pub fn parse(text: &str) -> Result<Script, ParseError> {
    parse_at_depth(text, 0)
}

/// Parses a script found inside another one, `depth` levels down.
pub(crate) fn parse_at_depth(text: &str, depth: usize) -> Result<Script, ParseError> {
    // A text of at most `MAX_INPUT_CHARS` bytes has at most as many characters: counted only when longer.
    let chars = if text.len() > MAX_INPUT_CHARS { text.chars().count() } else { 0 };
    if chars > MAX_INPUT_CHARS {
        return Err(ParseError {
            kind: ErrorKind::TooLong,
            offset: MAX_INPUT_CHARS,
            message: format!("the command is {chars} characters long; at most {MAX_INPUT_CHARS} are parsed"),
        });
    }
    parse::Parser::new(text, depth).parse_all()
}

/// Parses text with expansions but no commands (an arithmetic expression, a
/// here-document body) into its parts, to find the commands it substitutes.
pub(crate) fn parse_expansions(text: &str, depth: usize) -> Result<Vec<Part>, ParseError> {
    if text.chars().count() > MAX_INPUT_CHARS {
        return Err(ParseError { kind: ErrorKind::TooLong, offset: MAX_INPUT_CHARS, message: "too long".into() });
    }
    parse::Parser::new(text, depth).here_body()
}
