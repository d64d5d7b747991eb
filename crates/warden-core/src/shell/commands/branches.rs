//! What the variables hold after code that may or may not run: the arms of
//! `if` and `case`, a loop's body, and the later commands of an and-or
//! list (`[ -e x ] && f=/etc/shadow || f=ok`).
//!
//! The analysis walks every arm, each from the state it starts in, and
//! then joins what the arms left ([`join`]): a variable the arms leave with
//! different values is only known when it runs, and every known value it
//! may hold is kept in [`Maybe::arrays`], so that where the script reads
//! it each one is judged (`if c; then f=/etc/shadow; else f=ok; fi; cat
//! $f` reads `/etc/shadow`). When the arms leave different working
//! directories, the rest is judged in one of them, outside the directory
//! the script starts in if one is (`if c; then cd /; fi; rm -rf *` deletes
//! `/*`); an alias any arm defines is defined.

use super::*;

/// The state after one of `outcomes` ran; `None` when there is none.
/// `replaceable` says whether a later plain assignment replaces the values
/// a variable may hold from here (not for a function's body, which may
/// run after it).
#[inline(never)]
pub(super) fn join(mut outcomes: Vec<State>, replaceable: bool) -> Option<State> {
    let mut last = outcomes.pop()?;
    let same_maybe = |a: &State, b: &State| match (&a.maybe, &b.maybe) {
        (None, None) => true,
        (Some(x), Some(y)) => Rc::ptr_eq(x, y),
        _ => false,
    };
    // Directories the arms leave different: any known one is judged at least as strictly
    // as an unknown one; one outside the directory the script starts in first, else the
    // first that differs from the last arm's.
    if outcomes.iter().any(|o| o.cwd != last.cwd) {
        let start = last.pwd.clone();
        let outside = |cwd: &Option<Rc<str>>| match (cwd.as_deref(), start.as_deref()) {
            (Some(c), Some(s)) => c != s && !c.strip_prefix(s).is_some_and(|r| r.starts_with('/')),
            _ => false,
        };
        let chosen = core::iter::once(&last)
            .chain(outcomes.iter())
            .find(|o| outside(&o.cwd))
            .or_else(|| outcomes.iter().find(|o| o.cwd != last.cwd))
            .map(|o| o.cwd.clone());
        if let Some(cwd) = chosen {
            last.cwd = cwd;
        }
    }
    // An alias an arm defined may be defined.
    for o in &outcomes {
        if Rc::ptr_eq(&o.aliases, &last.aliases) {
            continue;
        }
        for (name, text) in o.aliases.iter() {
            if !last.aliases.contains_key(name) {
                Rc::make_mut(&mut last.aliases).insert(name.clone(), text.clone());
            }
        }
    }
    // The commonest case: no arm assigned anything.
    if outcomes.iter().all(|o| Rc::ptr_eq(&o.vars, &last.vars) && same_maybe(o, &last)) {
        return Some(last);
    }
    let mut differing = BTreeSet::new();
    for o in outcomes.iter().filter(|o| !Rc::ptr_eq(&o.vars, &last.vars)) {
        for (name, var) in o.vars.iter() {
            if last.vars.get(name) != Some(var) {
                differing.insert(name.clone());
            }
        }
        for (name, var) in last.vars.iter() {
            if o.vars.get(name) != Some(var) {
                differing.insert(name.clone());
            }
        }
    }
    for name in differing {
        let held: Vec<&Var> =
            outcomes.iter().chain(core::iter::once(&last)).filter_map(|o| o.vars.get(&name)).collect();
        let secret = held.iter().any(|v| v.secret);
        let known: Vec<String> = held.iter().filter_map(|v| v.value.clone()).collect();
        Rc::make_mut(&mut last.vars).insert(name.clone(), Var { value: None, secret });
        parameters::forget_indexed(&mut last, &name);
        if replaceable {
            alternatives(&mut last, name, known);
        } else {
            assign_elements(&mut last, name, true, known);
        }
    }
    for o in &outcomes {
        let Some(maybe) = o.maybe.as_ref().filter(|_| !same_maybe(o, &last)) else { continue };
        for (name, value) in &maybe.values {
            let values = &mut Rc::make_mut(last.maybe.get_or_insert_default()).values;
            values.entry(name.clone()).or_insert_with(|| value.clone());
        }
        for (name, elements) in &maybe.arrays {
            assign_elements(&mut last, name.clone(), true, elements.clone());
        }
        for name in &maybe.alternatives {
            Rc::make_mut(last.maybe.get_or_insert_default()).alternatives.insert(name.clone());
        }
        let disagree: Vec<String> = last
            .maybe
            .as_ref()
            .map(|m| {
                m.indexed.iter().filter(|(n, e)| maybe.indexed.get(*n) != Some(e)).map(|(n, _)| n.clone()).collect()
            })
            .unwrap_or_default();
        for name in disagree {
            parameters::forget_indexed(&mut last, &name);
        }
    }
    Some(last)
}

/// Records `values` as values a scalar variable may hold
/// ([`Maybe::alternatives`]): a later plain assignment replaces them.
pub(super) fn alternatives(state: &mut State, name: String, values: Vec<String>) {
    if values.is_empty() {
        return;
    }
    Rc::make_mut(state.maybe.get_or_insert_default()).alternatives.insert(name.clone());
    assign_elements(state, name, true, values);
}

/// A plain assignment to `name` replaces the values it may have held as
/// alternatives of one value (not the elements an array may hold).
pub(super) fn replaced(state: &mut State, name: &str) {
    if let Some(maybe) = state.maybe.as_mut().filter(|m| m.alternatives.contains(name)) {
        let maybe = Rc::make_mut(maybe);
        maybe.alternatives.remove(name);
        maybe.arrays.remove(name);
    }
}
