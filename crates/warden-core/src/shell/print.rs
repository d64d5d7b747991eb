//! Prints a syntax tree back to shell text that parses to the same tree.
//!
//! The printed form is canonical (one space between words, `;` between
//! commands, redirections after the words), so it serves both as the quoted
//! segment in a verdict and as the normalized form a remembered answer is
//! keyed by: two spellings of one command print alike.

use super::ast::*;
use crate::prelude::*;

/// Prints a script.
pub fn script(script: &Script) -> String {
    let mut p = Printer::default();
    p.script(script);
    p.out.trim_end_matches([' ', ';']).to_string()
}

/// Prints one simple command, as a verdict quotes it. Here-document bodies
/// are left out; the command shows where they go.
pub fn simple(simple: &Simple) -> String {
    let mut p = Printer::default();
    p.simple(simple);
    p.out
}

/// Prints one word.
pub fn word(word: &Word) -> String {
    let mut p = Printer::default();
    p.word(word);
    p.out
}

#[derive(Default)]
struct Printer<'a> {
    out: String,
    pending: Vec<&'a HereDoc>,
    /// Here-documents of the commands around a substitution being printed,
    /// still waiting for their bodies. A newline inside the substitution
    /// ends them too, as the parser reads it: their bodies come first.
    inherited: Vec<&'a HereDoc>,
}

impl<'a> Printer<'a> {
    fn script(&mut self, script: &'a Script) {
        for item in &script.0 {
            self.and_or(&item.list);
            if item.background {
                self.out.push_str(" &");
            }
            if self.pending.is_empty() {
                self.out.push_str(if item.background { " " } else { "; " });
            } else {
                self.out.push('\n');
                for doc in self.take_waiting() {
                    let mut body = Printer::default();
                    if doc.quoted {
                        for part in &doc.body {
                            if let Part::Lit { text, .. } = part {
                                body.out.push_str(text);
                            }
                        }
                    } else {
                        body.here_body(&doc.body);
                    }
                    self.out.push_str(&body.out);
                    self.pending.extend(body.pending);
                    self.out.push_str(&doc.delimiter);
                    self.out.push('\n');
                }
            }
        }
    }

    /// Every here-document waiting for its body, the outer ones first: what
    /// the next newline ends, in the order the parser reads the bodies.
    fn take_waiting(&mut self) -> Vec<&'a HereDoc> {
        let mut waiting = core::mem::take(&mut self.inherited);
        waiting.append(&mut self.pending);
        waiting
    }

    fn here_body(&mut self, parts: &'a [Part]) {
        for part in parts {
            match part {
                Part::Lit { text, quoted: _ } => {
                    for c in text.chars() {
                        if matches!(c, '\\' | '$' | '`') {
                            self.out.push('\\');
                        }
                        self.out.push(c);
                    }
                }
                other => self.part(other),
            }
        }
    }

    fn and_or(&mut self, list: &'a AndOr) {
        self.pipeline(&list.first);
        for (connector, pipeline) in &list.rest {
            self.out.push_str(match connector {
                Connector::And => " && ",
                Connector::Or => " || ",
            });
            self.pipeline(pipeline);
        }
    }

    fn pipeline(&mut self, pipeline: &'a Pipeline) {
        if pipeline.negated {
            self.out.push_str("! ");
        }
        for (i, command) in pipeline.commands.iter().enumerate() {
            if i > 0 {
                self.out.push_str(" | ");
            }
            self.command(command);
        }
    }

    fn command(&mut self, command: &'a Command) {
        match command {
            Command::Simple(s) => self.simple(s),
            Command::Subshell(body, redirects) => {
                self.out.push_str("( ");
                self.script(body);
                self.out.push(')');
                self.redirects(redirects);
            }
            Command::Group(body, redirects) => {
                self.out.push_str("{ ");
                self.script(body);
                self.out.push('}');
                self.redirects(redirects);
            }
            Command::If { branches, otherwise, redirects } => {
                for (i, (condition, body)) in branches.iter().enumerate() {
                    self.out.push_str(if i == 0 { "if " } else { "elif " });
                    self.script(condition);
                    self.out.push_str("then ");
                    self.script(body);
                }
                if let Some(body) = otherwise {
                    self.out.push_str("else ");
                    self.script(body);
                }
                self.out.push_str("fi");
                self.redirects(redirects);
            }
            Command::Loop { until, condition, body, redirects } => {
                self.out.push_str(if *until { "until " } else { "while " });
                self.script(condition);
                self.out.push_str("do ");
                self.script(body);
                self.out.push_str("done");
                self.redirects(redirects);
            }
            Command::For { name, words, body, redirects } => {
                self.out.push_str("for ");
                self.out.push_str(name);
                if let Some(words) = words {
                    self.out.push_str(" in");
                    for w in words {
                        self.out.push(' ');
                        self.word(w);
                    }
                }
                self.out.push_str("; do ");
                self.script(body);
                self.out.push_str("done");
                self.redirects(redirects);
            }
            Command::ForArith { header, body, redirects } => {
                self.out.push_str("for ((");
                self.out.push_str(header);
                self.out.push_str(")); do ");
                self.script(body);
                self.out.push_str("done");
                self.redirects(redirects);
            }
            Command::Case { word, arms, redirects } => {
                self.out.push_str("case ");
                self.word(word);
                self.out.push_str(" in ");
                for (patterns, body) in arms {
                    self.out.push('(');
                    for (i, p) in patterns.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(" | ");
                        }
                        self.word(p);
                    }
                    self.out.push_str(") ");
                    self.script(body);
                    self.out.push_str(";; ");
                }
                self.out.push_str("esac");
                self.redirects(redirects);
            }
            Command::Arith(raw, redirects) => {
                self.out.push_str("((");
                self.out.push_str(raw);
                self.out.push_str("))");
                self.redirects(redirects);
            }
            Command::Function { name, body } => {
                self.out.push_str(name);
                self.out.push_str("() ");
                self.command(body);
            }
        }
    }

    fn simple(&mut self, simple: &'a Simple) {
        let mut first = true;
        let mut space = |out: &mut String| {
            if !first {
                out.push(' ');
            }
            first = false;
        };
        for assign in &simple.assigns {
            space(&mut self.out);
            self.out.push_str(&assign.name);
            if let Some(index) = &assign.index {
                self.out.push('[');
                self.out.push_str(index);
                self.out.push(']');
            }
            self.out.push_str(if assign.append { "+=" } else { "=" });
            match &assign.value {
                AssignValue::Scalar(w) => self.word(w),
                AssignValue::Array(words) => {
                    self.out.push('(');
                    for (i, w) in words.iter().enumerate() {
                        if i > 0 {
                            self.out.push(' ');
                        }
                        self.word(w);
                    }
                    self.out.push(')');
                }
            }
        }
        for w in &simple.words {
            space(&mut self.out);
            self.word(w);
        }
        for (i, r) in simple.redirects.iter().enumerate() {
            if i > 0 || !first {
                self.out.push(' ');
            }
            self.redirect(r);
        }
    }

    fn redirects(&mut self, redirects: &'a [Redirect]) {
        for r in redirects {
            self.out.push(' ');
            self.redirect(r);
        }
    }

    fn redirect(&mut self, redirect: &'a Redirect) {
        if let Some(fd) = redirect.fd {
            self.out.push_str(&fd.to_string());
        }
        self.out.push_str(redirect.op.as_str());
        self.out.push(' ');
        match &redirect.target {
            RedirectTarget::Word(w) => self.word(w),
            RedirectTarget::HereDoc(doc) => {
                if doc.quoted {
                    single_quoted(&mut self.out, &doc.delimiter);
                } else {
                    self.out.push_str(&doc.delimiter);
                }
                self.pending.push(doc);
            }
        }
    }

    fn word(&mut self, word: &'a Word) {
        for part in &word.0 {
            self.part(part);
        }
    }

    fn part(&mut self, part: &'a Part) {
        match part {
            Part::Lit { text, quoted: false } => self.out.push_str(text),
            Part::Lit { text, quoted: true } => single_quoted(&mut self.out, text),
            Part::Double(inner) => {
                self.out.push('"');
                for p in inner {
                    match p {
                        Part::Lit { text, .. } => {
                            for c in text.chars() {
                                if matches!(c, '\\' | '$' | '`' | '"') {
                                    self.out.push('\\');
                                }
                                self.out.push(c);
                            }
                        }
                        other => self.part(other),
                    }
                }
                self.out.push('"');
            }
            Part::Param(param) => {
                self.out.push('$');
                if param.braced {
                    self.out.push('{');
                    self.out.push_str(&param.name);
                    for p in &param.rest {
                        self.part(p);
                    }
                    self.out.push('}');
                } else {
                    self.out.push_str(&param.name);
                }
            }
            Part::Sub(s) => self.substitution("$( ", s),
            Part::ProcIn(s) => self.substitution("<( ", s),
            Part::ProcOut(s) => self.substitution(">( ", s),
            Part::Arith(raw) => {
                self.out.push_str("$((");
                self.out.push_str(raw);
                self.out.push_str("))");
            }
        }
    }

    fn substitution(&mut self, open: &str, script: &'a Script) {
        self.out.push_str(open);
        let own = self.pending.len();
        let mut inner = Printer { inherited: self.take_waiting(), ..Printer::default() };
        inner.script(script);
        self.out.push_str(&inner.out);
        // A newline inside wrote every waiting body; else they all still wait, in order.
        let mut waiting = inner.inherited;
        self.pending = waiting.split_off(waiting.len().saturating_sub(own));
        self.inherited = waiting;
        self.out.push(')');
    }
}

fn single_quoted(out: &mut String, text: &str) {
    out.push('\'');
    out.push_str(&text.replace('\'', "'\\''"));
    out.push('\'');
}
