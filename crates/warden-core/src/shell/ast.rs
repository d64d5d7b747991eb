//! The syntax tree of a shell script.
//!
//! The tree keeps what decides what a script does (which programs run with
//! which words, how they are connected, where their input and output go) and
//! drops what does not (which separator ended a line, comments, spacing), so
//! that two spellings of the same command compare equal.

use super::text::Text;
use crate::prelude::*;
use alloc::rc::Rc;

/// A list of commands run one after the other.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script(pub Vec<Item>);

/// One entry of a list: an and-or list, possibly sent to the background (`&`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub list: AndOr,
    pub background: bool,
}

/// Pipelines joined by `&&` and `||`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

/// `&&` or `||`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    And,
    Or,
}

/// Commands joined by `|` (or `|&`), possibly negated with `!`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub negated: bool,
    pub commands: Vec<Command>,
}

/// One command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Shared, so that what the analysis finds can point back at the
    /// command it came from ([`super::segment::Segment`]).
    Simple(Rc<Simple>),
    /// `( list )`
    Subshell(Script, Vec<Redirect>),
    /// `{ list; }`
    Group(Script, Vec<Redirect>),
    /// `if c; then b; elif c; then b; else b; fi`
    If { branches: Vec<(Script, Script)>, otherwise: Option<Script>, redirects: Vec<Redirect> },
    /// `while c; do b; done`, or `until` when `until` is set.
    Loop { until: bool, condition: Script, body: Script, redirects: Vec<Redirect> },
    /// `for name in words; do b; done`; `words` is `None` for the positional parameters.
    For { name: String, words: Option<Vec<Word>>, body: Script, redirects: Vec<Redirect> },
    /// `case word in pattern | pattern) list ;; esac`
    Case { word: Word, arms: Vec<(Vec<Word>, Script)>, redirects: Vec<Redirect> },
    /// `for ((init; test; step)); do b; done`, with the header as written.
    ForArith { header: String, body: Script, redirects: Vec<Redirect> },
    /// `(( expression ))`, with the expression as written.
    Arith(String, Vec<Redirect>),
    /// `name() body`
    Function { name: String, body: Box<Command> },
}

/// A simple command: assignments, words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// `name=value`, `name+=value`, `name=(values)` or `name[index]=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assign {
    pub name: String,
    /// The subscript of `name[index]=value`, as written; the analysis
    /// expands it (and sees any command it runs) where it is assigned.
    pub index: Option<String>,
    pub append: bool,
    pub value: AssignValue,
}

/// The value of an assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssignValue {
    Scalar(Word),
    Array(Vec<Word>),
}

/// A redirection such as `2>&1`, `> out`, `<<EOF` or `<<< word`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator, if any.
    pub fd: Option<u32>,
    pub op: RedirectOp,
    pub target: RedirectTarget,
}

/// The operator of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    In,
    /// `>`
    Out,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `&>`
    OutErr,
    /// `&>>`
    AppendOutErr,
    /// `<<<`
    HereString,
    /// `<<` or `<<-`
    HereDoc,
}

impl RedirectOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::In => "<",
            RedirectOp::Out => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::DupIn => "<&",
            RedirectOp::DupOut => ">&",
            RedirectOp::OutErr => "&>",
            RedirectOp::AppendOutErr => "&>>",
            RedirectOp::HereString => "<<<",
            RedirectOp::HereDoc => "<<",
        }
    }

    /// Whether the target is a file the command writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            RedirectOp::Out
                | RedirectOp::Append
                | RedirectOp::Clobber
                | RedirectOp::ReadWrite
                | RedirectOp::OutErr
                | RedirectOp::AppendOutErr
        )
    }

    /// Whether the target is a file the command reads.
    pub fn reads(self) -> bool {
        matches!(self, RedirectOp::In | RedirectOp::ReadWrite)
    }
}

/// What a redirection points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectTarget {
    Word(Word),
    HereDoc(HereDoc),
}

/// A here-document. Its body is literal text when the delimiter was quoted,
/// and otherwise text with parameter, command and arithmetic expansions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HereDoc {
    pub delimiter: String,
    pub quoted: bool,
    pub body: Vec<Part>,
    /// Which body the parser reads for it; zero once parsing is done.
    pub(crate) slot: usize,
}

/// A word: the concatenation of its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word(pub Vec<Part>);

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text. `quoted` text came from quotes or a backslash, so it is
    /// not subject to tilde expansion, globbing or reserved-word recognition.
    Lit { text: Text, quoted: bool },
    /// `"..."`, holding literal text and expansions.
    Double(Vec<Part>),
    /// `$name`, `${name...}`.
    Param(Param),
    /// `$(...)` or a backquoted command.
    Sub(Script),
    /// `<(...)`, whose output the command reads as a file.
    ProcIn(Script),
    /// `>(...)`, whose input the command writes as a file.
    ProcOut(Script),
    /// `$((...))`, with the expression as written; command substitutions in
    /// it are found by parsing it again when a script is analysed.
    Arith(String),
}

/// A parameter expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The name: an identifier, a digit or one of `@*#?$!-`; empty when the
    /// braces start with an operator such as `#` or `!`.
    pub name: String,
    pub braced: bool,
    /// What follows the name inside the braces, such as `:-default`.
    pub rest: Vec<Part>,
}

impl Word {
    /// A word of one unquoted literal.
    pub fn lit(text: &str) -> Word {
        Word(vec![Part::Lit { text: Text::from(text), quoted: false }])
    }

    /// The word's text when it is one unquoted literal, as reserved words are.
    pub fn bare(&self) -> Option<&str> {
        match self.0.as_slice() {
            [Part::Lit { text, quoted: false }] => Some(text),
            _ => None,
        }
    }
}
