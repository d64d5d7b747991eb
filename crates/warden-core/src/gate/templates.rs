//! Approved routine wording. A template is compared with the message exactly
//! after `$name` and `${name}` are filled from the variables stored for the
//! recipient on the channel; `$$` is a literal dollar sign. A variable that is
//! not stored means the template does not match, so a half-filled template can
//! never pass as routine.
//!
//! `$name` takes the longest run of letters, digits and `_`, so `$names` is
//! the variable `names`; write `${name}s` to follow a variable with letters.
//! Matching walks the message once per template and never builds the filled
//! text, so work stays linear in the message whatever the variables hold.

use crate::prelude::*;

/// Longest variable name, in characters.
pub const MAX_VARIABLE_NAME_CHARS: usize = 64;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    Literal(String),
    Variable(&'a str),
}

/// Whether `name` is a variable name: a letter or `_`, then letters, digits or `_`.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= MAX_VARIABLE_NAME_CHARS
}

/// Parses a template, or says where its first `$` goes wrong (character offset, 0-based).
pub fn parse(template: &str) -> Result<Vec<Segment<'_>>, (usize, &'static str)> {
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut chars = template.char_indices().enumerate().peekable();
    while let Some((n, (i, c))) = chars.next() {
        if c != '$' {
            literal.push(c);
            continue;
        }
        let name = match chars.peek().map(|&(_, (_, c))| c) {
            Some('$') => {
                chars.next();
                literal.push('$');
                continue;
            }
            Some('{') => {
                let rest = template.get(i + 2..).unwrap_or_default();
                let Some(close) = rest.find('}') else {
                    return Err((n, "opens `${` without a closing `}`"));
                };
                let name = rest.get(..close).unwrap_or_default();
                if !is_variable_name(name) {
                    return Err((n, "has a `${…}` that does not hold a variable name"));
                }
                for _ in 0..name.chars().count() + 2 {
                    chars.next();
                }
                name
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let rest = template.get(i + 1..).unwrap_or_default();
                let len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
                let name = rest.get(..len).unwrap_or_default();
                if name.len() > MAX_VARIABLE_NAME_CHARS {
                    return Err((n, "has a variable name that is too long"));
                }
                for _ in 0..len {
                    chars.next();
                }
                name
            }
            _ => return Err((n, "has a `$` that starts no variable; write `$$` for a dollar sign")),
        };
        if !literal.is_empty() {
            out.push(Segment::Literal(core::mem::take(&mut literal)));
        }
        out.push(Segment::Variable(name));
    }
    if !literal.is_empty() {
        out.push(Segment::Literal(literal));
    }
    Ok(out)
}

/// Whether `body` is exactly `template` filled from `variables`.
pub fn matches(template: &str, variables: &BTreeMap<String, String>, body: &str) -> bool {
    let Ok(segments) = parse(template) else {
        return false;
    };
    let mut rest = body;
    for segment in &segments {
        let piece = match segment {
            Segment::Literal(text) => text.as_str(),
            Segment::Variable(name) => match variables.get(*name) {
                Some(value) => value.as_str(),
                None => return false,
            },
        };
        match rest.strip_prefix(piece) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The first template that `body` matches, by index.
pub fn first_match(templates: &[String], variables: &BTreeMap<String, String>, body: &str) -> Option<usize> {
    templates.iter().position(|t| matches(t, variables, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn templates_match_exactly_after_filling_variables() {
        let v = vars(&[("name", "Ada"), ("order", "A-17"), ("n", "3"), ("price", "$5")]);
        type Case = (&'static str, &'static str, bool);
        let cases: &[Case] = &[
            ("Hello $name, the build finished.", "Hello Ada, the build finished.", true),
            ("Hello ${name}, the build finished.", "Hello Ada, the build finished.", true),
            ("Hello $name, the build finished.", "Hello Ada, the build finished!", false),
            ("Hello $name, the build finished.", "Hello Ada, the build finished. ", false),
            ("Hello $name, the build finished.", "hello Ada, the build finished.", false),
            ("Order $order shipped", "Order A-17 shipped", true),
            // `$orders` is another variable, which is not stored.
            ("Your $orders shipped", "Your A-17s shipped", false),
            ("Your ${order}s shipped", "Your A-17s shipped", true),
            ("Costs $$5", "Costs $5", true),
            ("Costs $$$n", "Costs $3", true),
            ("Costs $price", "Costs $5", true),
            ("Costs $$price", "Costs $price", true),
            ("Hi $missing", "Hi ", false),
            ("Hi $missing", "Hi $missing", false),
            ("$name$n", "Ada3", true),
            ("", "", true),
            ("No variables here.", "No variables here.", true),
            // A value that holds `$name` is not filled again.
            ("Note: $note", "Note: Ada", false),
        ];
        let mut with_note = v.clone();
        with_note.insert("note".into(), "$name".into());
        for (template, body, expected) in cases {
            assert_eq!(matches(template, &v, body), *expected, "{template:?} vs {body:?}");
        }
        assert!(matches("Note: $note", &with_note, "Note: $name"));
    }

    #[test]
    fn malformed_templates_say_where_the_dollar_goes_wrong() {
        assert_eq!(
            parse("Pay 5$ now").map(|_| ()),
            Err((5, "has a `$` that starts no variable; write `$$` for a dollar sign"))
        );
        assert_eq!(
            parse("Trailing $").map(|_| ()),
            Err((9, "has a `$` that starts no variable; write `$$` for a dollar sign"))
        );
        assert_eq!(parse("Hi ${name").map(|_| ()), Err((3, "opens `${` without a closing `}`")));
        assert_eq!(parse("Hi ${9x}").map(|_| ()), Err((3, "has a `${…}` that does not hold a variable name")));
        assert_eq!(
            parse("Hi $1").map(|_| ()),
            Err((3, "has a `$` that starts no variable; write `$$` for a dollar sign"))
        );
        let long = format!("Hi ${}", "a".repeat(MAX_VARIABLE_NAME_CHARS + 1));
        assert!(parse(&long).is_err());
        let at_limit = format!("Hi ${}", "a".repeat(MAX_VARIABLE_NAME_CHARS));
        assert!(parse(&at_limit).is_ok());
        assert_eq!(
            parse("é $x ${y}z $$"),
            Ok(vec![
                Segment::Literal("é ".into()),
                Segment::Variable("x"),
                Segment::Literal(" ".into()),
                Segment::Variable("y"),
                Segment::Literal("z $".into())
            ])
        );
    }
}
