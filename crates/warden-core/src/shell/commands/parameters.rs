//! What a parameter expansion with something after its name gives when the
//! script assigned the variable a known value: an operator applied to it
//! ([`operators::apply`]: `${f/x/}`, `${c,,}`), an element of an array
//! whose elements the script assigned by index (`p=(a /etc/shadow)`,
//! `p[1]=…`, read as `${p[1]}`, `${p[@]}`, `${p[@]:1:1}`), or the variable
//! another one names (`${!n}`). `None` when any of it is only known at run
//! time, as for any word the analysis cannot read.
//!
//! Arrays are held in [`Maybe::indexed`] only while every element is
//! known and sits at a known index; otherwise an array's reads fall back to
//! trying each element it may hold ([`Maybe::arrays`]).

use super::*;
use crate::shell::operators;

/// Most elements an array is held with by index; past it only the
/// elements it may hold are kept.
pub const MAX_INDEXED_ELEMENTS: usize = 64;

/// What an expansion gives: its text, and whether it joined the elements
/// of an array (`${p[@]}`), which stay separate words even in quotes.
pub(super) struct Expanded {
    pub text: String,
    pub elements: bool,
}

/// `${name<rest>}` with `value` the name's known value (if any) and
/// `expanded` what the rest expands to; `secret` is set when the value
/// read carries a secret.
pub(super) fn expand(
    param: &Param,
    value: Option<String>,
    expanded: Option<&str>,
    state: &State,
    secret: &mut bool,
) -> Option<Expanded> {
    let expanded = expanded?;
    let escaped = escaped(&param.rest);
    let op = escaped.as_deref().unwrap_or(expanded);
    let one = |text: String| Expanded { text, elements: false };
    // `${!n}`: the variable `n` names (the parser reads `!` as the name `$!`).
    let indirect = match param.name.as_str() {
        "!" => Some(op),
        "" => op.strip_prefix('!'),
        _ => None,
    };
    if let Some(r) = indirect {
        let end = r.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(r.len());
        let (pointer, op) = r.split_at(end);
        let target = state.var(pointer)?.0?;
        if !crate::shell::is_name(target) {
            return None;
        }
        let (value, carries) = state.var(target)?;
        *secret |= carries;
        return operators::apply(value?, op).map(one);
    }
    if let Some(subscript) = op.strip_prefix('[') {
        let close = subscript.find(']')?;
        let (index, op) = (subscript.get(..close)?, subscript.get(close + 1..)?);
        let elements = state.maybe.as_ref()?.indexed.get(&param.name)?;
        if matches!(index, "@" | "*") {
            let all: Vec<&str> = elements.iter().map(|e| e.as_deref()).collect::<Option<_>>()?;
            let taken: Vec<String> = match op.strip_prefix(':').filter(|s| !s.starts_with(['-', '=', '?', '+'])) {
                // `${p[@]:1:2}` slices the elements, not their text.
                Some(spec) => slice(&all, spec)?,
                None => all.iter().map(|e| operators::apply(e, op)).collect::<Option<_>>()?,
            };
            return Some(Expanded { text: taken.join(" "), elements: true });
        }
        let n = element_index(index, elements.len())?;
        // An element never assigned is empty.
        let element = match elements.get(n) {
            Some(e) => e.as_deref()?,
            None => "",
        };
        return operators::apply(element, op).map(one);
    }
    operators::apply(&value?, op).map(one)
}

/// The element a subscript names: a number, negative ones from the end.
fn element_index(index: &str, len: usize) -> Option<usize> {
    let index = index.trim();
    let (negative, digits) = match index.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, index),
    };
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: usize = digits.parse().ok()?;
    if negative { len.checked_sub(n) } else { Some(n) }
}

/// `${p[@]:offset:length}` over the elements.
fn slice(elements: &[&str], spec: &str) -> Option<Vec<String>> {
    Some(elements.get(operators::span(elements.len(), spec)?)?.iter().map(|e| e.to_string()).collect())
}

/// The operator text with quoted characters escaped by a backslash, so that
/// a quoted pattern character matches itself (`${f/"*"/}`); `None` when the
/// text holds an expansion, whose expanded text is used as it is.
fn escaped(parts: &[Part]) -> Option<String> {
    let mut out = String::new();
    let quote = |out: &mut String, text: &str| {
        for c in text.chars() {
            if !c.is_alphanumeric() {
                out.push('\\');
            }
            out.push(c);
        }
    };
    for part in parts {
        match part {
            Part::Lit { text, quoted: false } => out.push_str(text),
            Part::Lit { text, quoted: true } => quote(&mut out, text),
            Part::Double(inner) => {
                for p in inner {
                    let Part::Lit { text, .. } = p else { return None };
                    quote(&mut out, text);
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Whether a word assigned as an array element is exactly one known
/// element: known text that no splitting, globbing or brace expansion can
/// turn into several words or none.
pub(super) fn one_element(word: &Word, arg: &Arg) -> bool {
    fn plain(parts: &[Part]) -> bool {
        parts.iter().all(|p| match p {
            Part::Lit { text, quoted: false } => !text.contains(['*', '?', '[', '{']),
            _ => true,
        })
    }
    arg.text.is_some() && !crate::shell::fields::splits(arg) && plain(&word.0)
}

/// Records an array assignment in [`Maybe::indexed`]: `exact` holds every
/// element when each one is known; an array assigned anything else, or too
/// many elements, is no longer held by index.
pub(super) fn assign_indexed(state: &mut State, name: &str, append: bool, exact: Option<Vec<String>>) {
    let fresh = state.var(name).is_none() && !state.maybe.as_ref().is_some_and(|m| m.arrays.contains_key(name));
    let Some(elements) = exact else {
        forget_indexed(state, name);
        return;
    };
    let maybe = Rc::make_mut(state.maybe.get_or_insert_default());
    let held = match (append, maybe.indexed.get_mut(name)) {
        (false, _) => maybe.indexed.entry(name.to_string()).or_default(),
        (true, Some(held)) => held,
        (true, None) if fresh => maybe.indexed.entry(name.to_string()).or_default(),
        (true, None) => return,
    };
    if !append {
        held.clear();
    }
    held.extend(elements.into_iter().map(Some));
    if held.len() > MAX_INDEXED_ELEMENTS {
        maybe.indexed.remove(name);
    }
}

/// Records `name[index]=value` in [`Maybe::indexed`]: a number places the
/// value there (elements between stay empty); any other subscript leaves
/// the array no longer held by index.
pub(super) fn assign_element(state: &mut State, name: &str, index: &str, value: Option<String>) {
    let scalar = state.var(name).map(|v| v.0.map(String::from));
    let unknown_array = state.maybe.as_ref().is_some_and(|m| m.arrays.contains_key(name));
    let n = element_index(index, 0).filter(|&n| n < MAX_INDEXED_ELEMENTS);
    let maybe = Rc::make_mut(state.maybe.get_or_insert_default());
    let Some(n) = n else {
        maybe.indexed.remove(name);
        return;
    };
    let held = match maybe.indexed.get_mut(name) {
        Some(held) => held,
        // An array of unknown elements stays unknown by index.
        None if unknown_array => return,
        // A variable of one value is the array of that one element.
        None => maybe.indexed.entry(name.to_string()).or_insert_with(|| match scalar {
            Some(value) => vec![value],
            None => Vec::new(),
        }),
    };
    if held.len() <= n {
        held.resize(n + 1, Some(String::new()));
    }
    if let Some(slot) = held.get_mut(n) {
        *slot = value;
    }
}

/// A scalar assignment to a name held by index sets its first element.
pub(super) fn assign_first(state: &mut State, name: &str, value: Option<String>) {
    if let Some(maybe) = state.maybe.as_mut().filter(|m| m.indexed.contains_key(name))
        && let Some(held) = Rc::make_mut(maybe).indexed.get_mut(name)
    {
        match held.first_mut() {
            Some(first) => *first = value,
            None => held.push(value),
        }
    }
}

/// The array is no longer held by index.
pub(super) fn forget_indexed(state: &mut State, name: &str) {
    if let Some(maybe) = state.maybe.as_mut().filter(|m| m.indexed.contains_key(name)) {
        Rc::make_mut(maybe).indexed.remove(name);
    }
}
