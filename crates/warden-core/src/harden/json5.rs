//! A reader for JSON5 (OpenClaw's `openclaw.json`; plain JSON, as Claude Code
//! writes, is a subset) and for YAML's bracketed flow collections
//! (`plugins: {enabled: [warden]}`), that keeps the span of every key and
//! value. JSON5: `//` and `/* */` comments, trailing commas, unquoted keys,
//! single-quoted strings, hexadecimal numbers, `Infinity` and `NaN`.
//!
//! No maintained crate fits: the JSON5 and JSONC readers on crates.io either
//! need `std` or throw the positions away, and fixing a file without
//! rewriting it needs every position.

use super::tree::{Kind, Member, Node};
use super::{MAX_DEPTH, TextError};
use crate::prelude::*;

/// Which dialect the reader speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Json5,
    /// YAML flow collections: `#` comments, plain (unquoted) scalars.
    YamlFlow,
}

pub struct Reader<'a> {
    pub text: &'a str,
    pub pos: usize,
    dialect: Dialect,
}

/// Reads a whole JSON5 document; the text may start with a byte-order mark.
pub fn parse(text: &str) -> Result<Node, TextError> {
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let mut r = Reader { text, pos: start, dialect: Dialect::Json5 };
    r.skip_space()?;
    if r.pos >= text.len() {
        return Err(r.error("the file holds no value: expected `{`"));
    }
    let node = r.value(0)?;
    r.skip_space()?;
    if r.pos < text.len() {
        return Err(r.error("unexpected text after the end of the document"));
    }
    Ok(node)
}

/// Reads one YAML flow collection starting at `pos`; answers it and the
/// position just after it.
pub fn parse_flow(text: &str, pos: usize, depth: usize) -> Result<Node, TextError> {
    let mut r = Reader { text, pos, dialect: Dialect::YamlFlow };
    r.value(depth)
}

/// Line and column (both from 1) of a byte offset.
pub fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
    (line, col)
}

impl<'a> Reader<'a> {
    fn error(&self, message: &str) -> TextError {
        let (line, column) = line_col(self.text, self.pos);
        TextError { line, column, message: message.to_string() }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Skips white space and comments.
    pub fn skip_space(&mut self) -> Result<(), TextError> {
        loop {
            let Some(c) = self.peek() else { return Ok(()) };
            if c.is_whitespace() || c == '\u{feff}' {
                self.bump();
            } else if self.dialect == Dialect::Json5 && self.rest().starts_with("//") {
                let end = self.rest().find('\n').map_or(self.text.len(), |i| self.pos + i);
                self.pos = end;
            } else if self.dialect == Dialect::Json5 && self.rest().starts_with("/*") {
                let Some(end) = self.rest()[2..].find("*/") else {
                    return Err(self.error("a `/*` comment is never closed"));
                };
                self.pos += 2 + end + 2;
            } else if self.dialect == Dialect::YamlFlow
                && c == '#'
                && (self.pos == 0 || self.text[..self.pos].ends_with(char::is_whitespace))
            {
                let end = self.rest().find('\n').map_or(self.text.len(), |i| self.pos + i);
                self.pos = end;
            } else {
                return Ok(());
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, TextError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(&format!("values are nested more than {MAX_DEPTH} deep")));
        }
        let start = self.pos;
        let kind = match self.peek() {
            Some('{') => self.object(depth)?,
            Some('[') => self.array(depth)?,
            Some('"') | Some('\'') => Kind::Str(self.string()?),
            Some(_) if self.dialect == Dialect::YamlFlow => self.plain()?,
            Some(_) => self.word()?,
            None => return Err(self.error("the file ends where a value was expected")),
        };
        Ok(Node { kind, span: start..self.pos, entry: start..self.pos, block: false })
    }

    fn object(&mut self, depth: usize) -> Result<Kind, TextError> {
        self.bump();
        let mut members = Vec::new();
        loop {
            self.skip_space()?;
            match self.peek() {
                Some('}') => {
                    self.bump();
                    return Ok(Kind::Object(members));
                }
                None => return Err(self.error("an object is never closed: expected `}`")),
                _ => {}
            }
            let key_start = self.pos;
            let key = match self.peek() {
                Some('"') | Some('\'') => self.string()?,
                _ => self.bare_key()?,
            };
            let key_span = key_start..self.pos;
            self.skip_space()?;
            if self.peek() != Some(':') {
                return Err(self.error(&format!("expected `:` after the key `{key}`")));
            }
            self.bump();
            self.skip_space()?;
            let value = self.value(depth + 1)?;
            members.push(Member { key, key_span, value });
            self.skip_space()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {}
                _ => return Err(self.error("expected `,` or `}` after a value")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, TextError> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_space()?;
            match self.peek() {
                Some(']') => {
                    self.bump();
                    return Ok(Kind::Array(items));
                }
                None => return Err(self.error("an array is never closed: expected `]`")),
                _ => {}
            }
            items.push(self.value(depth + 1)?);
            self.skip_space()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {}
                _ => return Err(self.error("expected `,` or `]` after a value")),
            }
        }
    }

    fn bare_key(&mut self) -> Result<String, TextError> {
        if self.dialect == Dialect::YamlFlow {
            return match self.plain_text(true)? {
                t if t.is_empty() => Err(self.error("expected a key")),
                t => Ok(t),
            };
        }
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '$' {
                self.bump();
            } else {
                break;
            }
        }
        if self.pos == start {
            return Err(self.error("expected a key: a quoted string or a name"));
        }
        Ok(self.text[start..self.pos].to_string())
    }

    fn string(&mut self) -> Result<String, TextError> {
        let Some(quote) = self.bump() else { return Err(self.error("expected a string")) };
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else { return Err(self.error("a string is never closed")) };
            if c == quote {
                // YAML's single-quoted strings write a quote as two.
                if self.dialect == Dialect::YamlFlow && quote == '\'' && self.peek() == Some('\'') {
                    self.bump();
                    out.push('\'');
                    continue;
                }
                return Ok(out);
            }
            if c == '\n' && self.dialect == Dialect::Json5 {
                return Err(self.error("a string may not span lines without a `\\` before the line end"));
            }
            if c != '\\' || (self.dialect == Dialect::YamlFlow && quote == '\'') {
                out.push(c);
                continue;
            }
            let Some(e) = self.bump() else { return Err(self.error("a string is never closed")) };
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                '0' => out.push('\0'),
                '\n' => {}
                '\r' => {
                    if self.peek() == Some('\n') {
                        self.bump();
                    }
                }
                'x' => out.push(self.hex_char(2)?),
                'u' => {
                    let first = self.hex_code(4)?;
                    if (0xD800..0xDC00).contains(&first) && self.rest().starts_with("\\u") {
                        self.pos += 2;
                        let second = self.hex_code(4)?;
                        let code = 0x10000 + ((first - 0xD800) << 10) + (second.wrapping_sub(0xDC00) & 0x3FF);
                        out.push(char::from_u32(code).ok_or_else(|| self.error("an invalid `\\u` escape"))?);
                    } else {
                        out.push(char::from_u32(first).ok_or_else(|| self.error("an invalid `\\u` escape"))?);
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn hex_code(&mut self, n: usize) -> Result<u32, TextError> {
        let digits = self.rest().get(..n).ok_or_else(|| self.error("a short hexadecimal escape"))?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.error("an invalid hexadecimal escape"))?;
        self.pos += n;
        Ok(code)
    }

    fn hex_char(&mut self, n: usize) -> Result<char, TextError> {
        let code = self.hex_code(n)?;
        char::from_u32(code).ok_or_else(|| self.error("an invalid hexadecimal escape"))
    }

    /// `true`, `false`, `null`, a number.
    fn word(&mut self) -> Result<Kind, TextError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || matches!(c, '.' | '+' | '-' | '_') {
                self.bump();
            } else {
                break;
            }
        }
        let word = &self.text[start..self.pos];
        match word {
            "true" => Ok(Kind::Bool(true)),
            "false" => Ok(Kind::Bool(false)),
            "null" => Ok(Kind::Null),
            "" => {
                let found = self.peek().map(String::from).unwrap_or_default();
                Err(self.error(&format!("unexpected `{found}` where a value was expected")))
            }
            w if is_json5_number(w) => Ok(Kind::Num(w.to_string())),
            w => {
                self.pos = start;
                Err(self.error(&format!(
                    "`{w}` is not a value: expected a string, number, object, array, true, false or null"
                )))
            }
        }
    }

    /// A YAML plain scalar inside a flow collection.
    fn plain(&mut self) -> Result<Kind, TextError> {
        let text = self.plain_text(false)?;
        if text.is_empty() {
            let found = self.peek().map(String::from).unwrap_or_default();
            return Err(self.error(&format!("unexpected `{found}` where a value was expected")));
        }
        Ok(yaml_scalar(&text))
    }

    /// Plain text up to a flow indicator; a key stops at `:` too.
    fn plain_text(&mut self, key: bool) -> Result<String, TextError> {
        let start = self.pos;
        let mut end = start;
        while let Some(c) = self.peek() {
            if matches!(c, ',' | ']' | '}' | '[' | '{') || c == '\n' {
                break;
            }
            if c == ':' {
                let next = self.text[self.pos + 1..].chars().next();
                if key || next.is_none_or(|n| n.is_whitespace() || matches!(n, ',' | ']' | '}')) {
                    break;
                }
            }
            if c == '#' && self.text[..self.pos].ends_with(char::is_whitespace) {
                break;
            }
            self.bump();
            if !c.is_whitespace() {
                end = self.pos;
            }
        }
        self.pos = end;
        Ok(self.text[start..end].to_string())
    }
}

fn is_json5_number(w: &str) -> bool {
    let body = w.strip_prefix(['+', '-']).unwrap_or(w);
    if matches!(body, "Infinity" | "NaN") {
        return true;
    }
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    !body.is_empty() && body.chars().any(|c| c.is_ascii_digit()) && body.parse::<f64>().is_ok()
}

/// What a YAML 1.1 plain scalar means, as PyYAML (Hermes' reader) resolves it.
pub fn yaml_scalar(text: &str) -> Kind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Kind::Null,
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Kind::Bool(true),
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Kind::Bool(false),
        t if (t.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.'))
            && t.parse::<f64>().is_ok() =>
        {
            Kind::Num(t.to_string())
        }
        t => Kind::Str(t.to_string()),
    }
}
