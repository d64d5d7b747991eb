//! Code the environment makes a program run before its own: libraries the
//! loader preloads (`LD_PRELOAD=./x.so ls`, `LD_AUDIT`) and the startup
//! script a shell runs (`BASH_ENV=x.sh bash -c …`, `ENV=x.sh sh -i`). The
//! values come from the command's own assignments, from `env NAME=VALUE`,
//! and from what the script assigned or exported earlier; each file is
//! recorded as a file the program runs, so a downloaded or written one is
//! judged as running it by path would be. A value only known at run time is
//! code known only at run time.
//!
//! Variables whose value programs run as a shell command
//! ([`COMMAND_VARS`]: `GIT_SSH_COMMAND`, `PAGER`, `EDITOR`,
//! `PROMPT_COMMAND`, ...) and prompt strings a shell expands
//! ([`PROMPT_VARS`]: `PS4='$(…)' bash -x`) are judged where they are
//! assigned, as an alias is: whether or not the program that reads them is
//! seen to run.

use super::*;

/// Variables whose value a program runs as a shell command: git's
/// (`GIT_SSH_COMMAND`, its editors, pager and external diff), the pager and
/// editor many programs start (`kubectl edit`, `systemctl edit`, `fc`), the
/// browser `xdg-open` starts, bash's `PROMPT_COMMAND`, the askpass helpers
/// and `less`'s input preprocessors.
pub(crate) const COMMAND_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "SUDO_EDITOR",
    "KUBE_EDITOR",
    "SYSTEMD_EDITOR",
    "FCEDIT",
    "BROWSER",
    "PROMPT_COMMAND",
    "LESSOPEN",
    "LESSCLOSE",
];

/// Values a shell expands as words before it uses them: the prompt strings
/// (`PS4` before each traced command) and the startup file's name
/// (`BASH_ENV`, `ENV`). A command substitution in one runs.
pub(crate) const PROMPT_VARS: &[&str] = &["PS0", "PS1", "PS2", "PS3", "PS4", "BASH_ENV", "ENV"];

/// Whether `name` is a variable whose value is code ([`COMMAND_VARS`],
/// [`PROMPT_VARS`]); an element of one (`PROMPT_COMMAND[1]`) is too.
pub(crate) fn holds_code(name: &str) -> bool {
    let name = base_name(name);
    COMMAND_VARS.contains(&name) || PROMPT_VARS.contains(&name)
}

/// The variable an element assignment sets: `X` of `X[0]`.
fn base_name(name: &str) -> &str {
    name.split_once('[').map_or(name, |(n, _)| n)
}

/// A prompt string as the double-quoted word it is expanded as: its own
/// `"` and `\` escaped, what is inside a `$(…)` or backquotes kept as written.
fn prompt_word(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 12);
    out.push_str("printf %s \"");
    let mut depth = 0usize;
    let mut backquoted = false;
    // A quote open inside a substitution, where parentheses do not count.
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quote) {
            (q, Some(open)) if q == open => quote = None,
            (_, Some(_)) => {}
            ('"' | '\'', None) if depth > 0 => quote = Some(c),
            ('$', None) if chars.peek() == Some(&'(') => {
                depth += 1;
                out.push(c);
                if let Some(p) = chars.next() {
                    out.push(p);
                }
                continue;
            }
            (')', None) if depth > 0 => depth -= 1,
            ('`', None) => backquoted = !backquoted,
            ('"' | '\\', None) if depth == 0 && !backquoted => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl Walker<'_, '_> {
    /// Records the files `env` and earlier assignments make `program` run.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn loaded_by_environment(
        &mut self,
        env: &Env,
        class: Class,
        input: &Input,
        program: &str,
        state: &State,
        frame: &Frame,
        segment: &Segment,
    ) {
        if env.loads.is_empty() && (program.is_empty() || state.vars.is_empty()) {
            return;
        }
        // Recorded as an invocation of its own: a shell that runs a `-c`
        // string or a script is not recorded itself, only what it runs.
        let mut loads = self.invocation(Vec::new(), Vec::new(), state, frame, segment);
        let inv = &mut loads;
        for (name, value) in &env.loads {
            self.assigned_code(inv, name, value, state, frame, segment);
        }
        for var in LOADER_VARS {
            let given = env.loads.iter().rev().find(|(name, _)| name == var).map(|(_, v)| Cow::Borrowed(v));
            let value = given.or_else(|| {
                state.vars.get(*var).map(|v| {
                    Cow::Owned(v.value.as_deref().map_or_else(|| Arg::unknown(&format!("${var}")), Arg::fixed))
                })
            });
            let Some(value) = value else { continue };
            match *var {
                "LD_PRELOAD" | "LD_AUDIT" => self.preloaded(inv, &value, state),
                "BASH_ENV" if matches!(program, "bash" | "rbash") => {
                    self.startup_script(inv, &value, input, program, state, frame, segment);
                }
                "ENV" if class.is(Table::Shell) => {
                    self.startup_script(inv, &value, input, program, state, frame, segment);
                }
                _ => {}
            }
        }
        if !loads.runs_files.is_empty() || loads.code_unknown || !loads.code_from.is_empty() || loads.runs_stdin {
            self.push(loads);
        }
    }

    /// Libraries named in a preload list: separated by colons or spaces.
    fn preloaded(&mut self, inv: &mut Invocation, value: &Arg, state: &State) {
        inv.code_from.extend(value.subs.iter().cloned());
        inv.code_from.extend(value.procs.iter().cloned());
        match value.known() {
            Some(list) => {
                for library in list.split([':', ' ']).filter(|l| !l.is_empty()) {
                    let path = self.normalize(library, state);
                    inv.runs_files.push(path);
                }
            }
            None => inv.code_unknown = true,
        }
    }

    /// A script a shell runs when it starts, judged as `bash FILE` would be.
    #[allow(clippy::too_many_arguments)]
    fn startup_script(
        &mut self,
        inv: &mut Invocation,
        value: &Arg,
        input: &Input,
        program: &str,
        state: &State,
        frame: &Frame,
        segment: &Segment,
    ) {
        if value.known().is_some_and(str::is_empty) {
            return;
        }
        if value.known().is_none() && value.fed.is_none() && value.subs.is_empty() && value.procs.is_empty() {
            inv.code_unknown = true;
            return;
        }
        let _ = self.script_operand(inv, Some(value), input, program, state, frame, segment);
    }

    /// Judges the code variable `name` is assigned, if it names one
    /// ([`COMMAND_VARS`], [`PROMPT_VARS`]); code only known at run time is
    /// recorded on `inv`.
    pub(super) fn assigned_code(
        &mut self,
        inv: &mut Invocation,
        name: &str,
        value: &Arg,
        state: &State,
        frame: &Frame,
        segment: &Segment,
    ) {
        if !holds_code(name) {
            return;
        }
        let name = base_name(name);
        let command = COMMAND_VARS.contains(&name);
        let Some(text) = value.code() else {
            // A prompt or prompt command only runs in an interactive shell:
            // one built from a value only known at run time (`"…$PS1"`) is let be.
            if command && name != "PROMPT_COMMAND" {
                unknown_code(inv, value);
            }
            return;
        };
        let code = if command {
            // `less` runs `LESSOPEN='|lesspipe %s'` (also `||`, `|-`) with the file for `%s`.
            text.trim_start_matches(['|', '-']).replace("%s", "file")
        } else if text.contains(['$', '`']) {
            // A prompt string is expanded as a double-quoted word is.
            prompt_word(text)
        } else {
            return;
        };
        if code.trim().is_empty() {
            return;
        }
        let via = format!("{name}, a command the environment names");
        let mut scratch = state.clone();
        if self.code_string(&Arg::fixed(&code), &[], &via, &mut scratch, frame, segment).is_none() {
            unknown_code(inv, value);
        }
    }
}
