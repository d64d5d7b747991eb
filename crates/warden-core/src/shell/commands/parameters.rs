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

/// `${name<rest>}` with `value` the name's known value (if any) and `op`
/// what the rest expands to, quoted and expanded characters escaped (see
/// [`operators`]); `secret` is set when the value read carries a secret.
/// `patterns` is false once the script made matching case-blind
/// (`shopt -s nocasematch`), which these patterns do not follow.
#[inline(never)]
pub(super) fn expand(
    param: &Param,
    value: Option<String>,
    op: Option<&str>,
    state: &State,
    patterns: bool,
    secret: &mut bool,
) -> Option<Expanded> {
    let op = op?;
    let apply = |value: &str, op: &str| {
        if !patterns && op.starts_with(['#', '%', '/', '^', ',', '~']) {
            return None;
        }
        operators::apply(value, op)
    };
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
        return apply(value?, op).map(one);
    }
    let Some(subscript) = op.strip_prefix('[') else { return apply(&value?, op).map(one) };
    let close = subscript.find(']')?;
    let (index, op) = (subscript.get(..close)?, subscript.get(close + 1..)?);
    let Some(elements) = state.maybe.as_ref().and_then(|m| m.indexed.get(&param.name)) else {
        // `${s[0]}` of a variable of one known value, never an array.
        let unknown_array = state.maybe.as_ref().is_some_and(|m| m.arrays.contains_key(&param.name));
        return match (element_index(index, 1, state)?, unknown_array) {
            (0, false) => apply(&value?, op).map(one),
            (_, false) if value.is_some() => unset(op).map(one),
            _ => None,
        };
    };
    if matches!(index, "@" | "*") {
        let all: Vec<&str> = elements.iter().map(|e| e.as_deref()).collect::<Option<_>>()?;
        // `${p[@]:-/}` tests the whole array: no element is unset.
        if tests_set(op) {
            let ifs = state.var("IFS")?.0?;
            let joined = all.join(&ifs.chars().take(1).collect::<String>());
            return match all.is_empty() {
                true => unset(op).map(one),
                false => apply(&joined, op).map(|text| Expanded { text, elements: index == "@" }),
            };
        }
        let taken: Vec<String> = match op.strip_prefix(':').filter(|s| !s.starts_with(['-', '=', '?', '+'])) {
            // `${p[@]:1:2}` slices the elements, not their text.
            Some(spec) => slice(&all, spec)?,
            None => all.iter().map(|e| apply(e, op)).collect::<Option<_>>()?,
        };
        // Joined with the first separator character: `"${p[*]}"` is one word,
        // `"${p[@]}"` a word an element.
        let ifs = state.var("IFS")?.0?;
        let joint: String = ifs.chars().take(1).collect();
        return Some(Expanded { text: taken.join(&joint), elements: index == "@" });
    }
    let n = element_index(index, elements.len(), state)?;
    match elements.get(n) {
        Some(e) => apply(e.as_deref()?, op).map(one),
        // An element past the last is unset.
        None => unset(op).map(one),
    }
}

/// Whether the operator tests whether its parameter is set or empty
/// (`-`, `=`, `?`, `+`, with or without a colon).
fn tests_set(op: &str) -> bool {
    op.strip_prefix(':').unwrap_or(op).starts_with(['-', '=', '?', '+'])
}

/// What an operator gives for an unset parameter: the word of `-` and `=`,
/// nothing for `+` or no operator, an error (`None`) for `?`.
fn unset(op: &str) -> Option<String> {
    let bare = op.strip_prefix(':').unwrap_or(op);
    match bare.chars().next() {
        Some('-' | '=') => operators::apply("", &format!(":{bare}")),
        Some('?') => None,
        Some('+') | None => Some(String::new()),
        _ => operators::apply("", op),
    }
}

/// The element a subscript names: a number (negative ones from the end,
/// octal and hexadecimal ones as bash reads them), or a variable holding
/// one (`${p[i]}`, as arithmetic reads a bare name).
fn element_index(index: &str, len: usize, state: &State) -> Option<usize> {
    let index = index.trim();
    let index = match state.var(index) {
        Some((value, _)) if crate::shell::is_name(index) => value?.trim(),
        _ => index,
    };
    let (negative, digits) = match index.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, index),
    };
    let n = usize::try_from(operators::number(digits)?).ok()?;
    if negative { len.checked_sub(n) } else { Some(n) }
}

/// `${p[@]:offset:length}` over the elements.
fn slice(elements: &[&str], spec: &str) -> Option<Vec<String>> {
    Some(elements.get(operators::span(elements.len(), spec)?)?.iter().map(|e| e.to_string()).collect())
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
#[inline(never)]
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
#[inline(never)]
pub(super) fn assign_element(state: &mut State, name: &str, index: &str, value: Option<String>) {
    let scalar = state.var(name).map(|v| v.0.map(String::from));
    let unknown_array = state.maybe.as_ref().is_some_and(|m| m.arrays.contains_key(name));
    let n = element_index(index, 0, state).filter(|&n| n < MAX_INDEXED_ELEMENTS);
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
    // An element past the end leaves a gap, which slices skip: no longer held by index.
    if n > held.len() {
        maybe.indexed.remove(name);
        return;
    }
    match held.get_mut(n) {
        Some(slot) => *slot = value,
        None => held.push(value),
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

/// What an element holds now, when known: `None` for an array not held by
/// index (or an element only known at run time).
pub(super) fn element(state: &State, name: &str, index: &str) -> Option<String> {
    match state.maybe.as_ref().and_then(|m| m.indexed.get(name)) {
        Some(held) => {
            let n = element_index(index, held.len(), state)?;
            match held.get(n) {
                Some(e) => e.clone(),
                None => Some(String::new()),
            }
        }
        None if element_index(index, 1, state)? == 0 => state.var(name)?.0.map(String::from),
        None => None,
    }
}

/// Assigns `value` to `target`, a name or an element (`p[1]`), as `read`,
/// `printf -v` and `declare` do: an element is placed by index when its
/// subscript is known, and is one more value the array may hold.
#[inline(never)]
pub(super) fn assign_named(state: &mut State, target: &str, value: Option<String>, secret: bool) {
    if let Some((base, rest)) = target.split_once('[') {
        let Some(index) = rest.strip_suffix(']').filter(|_| crate::shell::is_name(base)) else { return };
        let at_first = element_index(index, 1, state) == Some(0);
        let unknown_array = state.maybe.as_ref().is_some_and(|m| m.arrays.contains_key(base));
        assign_element(state, base, index, value.clone());
        if at_first && !unknown_array {
            Rc::make_mut(&mut state.vars).insert(base.to_string(), Var { value: value.clone(), secret });
        } else if !state.maybe.as_ref().is_some_and(|m| m.indexed.contains_key(base)) {
            // Not held by index: `$p` may be anything it held or this.
            let old = state.var(base).and_then(|v| v.0.map(String::from));
            Rc::make_mut(&mut state.vars).insert(base.to_string(), Var { value: None, secret });
            assign_elements(state, base.to_string(), true, old.into_iter().collect());
        }
        assign_elements(state, base.to_string(), true, value.into_iter().collect());
        return;
    }
    if !crate::shell::is_name(target) {
        return;
    }
    assign_first(state, target, value.clone());
    super::branches::replaced(state, target);
    Rc::make_mut(&mut state.vars).insert(target.to_string(), Var { value, secret });
}

/// Whether the word is only `"${p[@]}"` (or `${p[@]}`, `${p[*]}`) of an
/// array held by index with no elements, which expands to no word.
pub(super) fn vanishes(word: &Word, state: &State) -> bool {
    let empty_all = |p: &Param, quoted: bool| {
        let all = match p.rest.as_slice() {
            [Part::Lit { text, .. }] => &**text == "[@]" || (!quoted && &**text == "[*]"),
            _ => false,
        };
        all && state.maybe.as_ref().and_then(|m| m.indexed.get(&p.name)).is_some_and(Vec::is_empty)
    };
    match word.0.as_slice() {
        [Part::Double(inner)] => matches!(inner.as_slice(), [Part::Param(p)] if empty_all(p, true)),
        [Part::Param(p)] => empty_all(p, false),
        _ => false,
    }
}
