//! What the variables hold after code that may or may not run: the arms of
//! `if` and `case`, a loop's body, and the later commands of an and-or
//! list (`[ -e x ] && f=/etc/shadow || f=ok`).
//!
//! The analysis walks every arm, each from the state it starts in, and
//! then joins what the arms left ([`join`]): a variable the arms leave with
//! different values is only known when it runs, and every known value it
//! may hold is kept in [`Maybe::arrays`], so that where the script reads
//! it each one is judged (`if c; then f=/etc/shadow; else f=ok; fi; cat
//! $f` reads `/etc/shadow`). The working directory and the aliases are
//! those of the last arm, as before.

use super::*;

/// The state after one of `outcomes` ran; `None` when there is none.
pub(super) fn join(mut outcomes: Vec<State>) -> Option<State> {
    let mut last = outcomes.pop()?;
    let same_maybe = |a: &State, b: &State| match (&a.maybe, &b.maybe) {
        (None, None) => true,
        (Some(x), Some(y)) => Rc::ptr_eq(x, y),
        _ => false,
    };
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
        assign_elements(&mut last, name, true, known);
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
