//! The simple command an invocation came from, as a reason quotes it.
//!
//! Nearly every command is allowed and no reason ever quotes it, so a
//! segment holds the parsed command itself (shared with the syntax tree, a
//! count increment) and prints it canonically only when it is read. The few
//! segments that are not one simple command (the redirections of a compound
//! command) hold their text.

use super::ast::Simple;
use super::print;
use alloc::borrow::Cow;
use alloc::rc::Rc;
use core::fmt;

/// A segment: printed as [`print::simple`] prints its command.
#[derive(Clone, Default)]
pub struct Segment(Source);

#[derive(Clone, Default)]
enum Source {
    /// Outside any command (before the first one is reached).
    #[default]
    Nothing,
    /// A simple command of a parsed script.
    Command(Rc<Simple>),
    /// Text already written out.
    Text(Rc<str>),
}

impl Segment {
    /// The segment of a simple command, printed when it is read.
    pub fn of(simple: &Rc<Simple>) -> Segment {
        Segment(Source::Command(Rc::clone(simple)))
    }

    /// A segment of text written out already.
    pub fn text(text: &str) -> Segment {
        Segment(Source::Text(Rc::from(text)))
    }

    /// The segment's text.
    pub fn printed(&self) -> Cow<'_, str> {
        match &self.0 {
            Source::Nothing => Cow::Borrowed(""),
            Source::Command(simple) => Cow::Owned(print::simple(simple)),
            Source::Text(text) => Cow::Borrowed(text),
        }
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.printed())
    }
}

impl fmt::Debug for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.printed(), f)
    }
}

/// Segments are equal when they print alike, however they are held.
impl PartialEq for Segment {
    fn eq(&self, other: &Segment) -> bool {
        match (&self.0, &other.0) {
            (Source::Command(a), Source::Command(b)) if Rc::ptr_eq(a, b) => true,
            _ => self.printed() == other.printed(),
        }
    }
}

impl Eq for Segment {}

#[cfg(test)]
mod tests {
    use super::Segment;
    use crate::prelude::*;
    use crate::shell::ast::Command;
    use alloc::rc::Rc;

    fn first_simple(command: &str) -> Rc<crate::shell::ast::Simple> {
        let script = crate::shell::parse(command).unwrap_or_default();
        match script.0.first().map(|item| item.list.first.commands.first()) {
            Some(Some(Command::Simple(simple))) => Rc::clone(simple),
            _ => Rc::default(),
        }
    }

    #[test]
    fn a_command_segment_reads_as_the_command_printed_canonically() {
        let simple = first_simple("FOO=1   'rm'  -rf   \"/tmp/x\" 2>/dev/null");
        let segment = Segment::of(&simple);
        assert_eq!(segment.printed(), crate::shell::print::simple(&simple));
        assert_eq!(segment.to_string(), "FOO=1 'rm' -rf \"/tmp/x\" 2> /dev/null");
    }

    #[test]
    fn segments_compare_by_what_they_print_not_by_how_they_are_held() {
        let simple = first_simple("rm -rf /tmp/x");
        assert_eq!(Segment::of(&simple), Segment::text("rm -rf /tmp/x"));
        assert_eq!(Segment::of(&simple), Segment::of(&first_simple("rm  -rf  /tmp/x")));
        assert_ne!(Segment::of(&simple), Segment::text("rm -rf /tmp/y"));
        assert_eq!(Segment::default().printed(), "");
    }
}
