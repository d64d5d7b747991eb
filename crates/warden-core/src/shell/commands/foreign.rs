//! Interpreters of other languages: the code they run is scanned (see
//! [`crate::shell::interpreters`]) and what it does is recorded as a shell
//! command doing it would be: a spawned command is analysed as the shell
//! command it is, a recursive delete as `rm -r`, a path it names as a path
//! it reads.

use super::*;
use crate::shell::interpreters::{self, Language, Source};

impl Walker<'_, '_> {
    /// Records what interpreter `argv` of `lang` runs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn interpreter(
        &mut self,
        inv: &mut Invocation,
        lang: Language,
        argv: &[Arg],
        input: &Input,
        (state, frame): (&State, &Frame),
        segment: &Segment,
        label: &str,
    ) {
        let (code, via, from_stdin) = match interpreters::source(lang, argv) {
            Source::Code(word) => match word.code() {
                Some(t) => (t.to_string(), label.to_string(), false),
                None => return unknown_code(inv, &word),
            },
            Source::Encoded(word) => match word.code().and_then(interpreters::decode_powershell) {
                Some(t) => (t, format!("{} -EncodedCommand", inv.program), false),
                None => return unknown_code(inv, &word),
            },
            Source::Stdin => match input {
                Input::Text(t) => (t.clone(), format!("{} reading its input", inv.program), true),
                _ => return self.foreign_script(inv, None, state),
            },
            Source::File(file) => {
                let Some(f) = file else { return };
                // A script this command wrote (`printf … > x.py && python3 x.py`) is scanned as its text.
                // Text appended to a script of unknown content (`echo … >> x.py`) runs with it.
                let written = f.known().and_then(|t| {
                    let path = self.normalize(t, state);
                    written_text(&self.files, &path).or_else(|| appended_text(&self.files, &path))
                });
                self.foreign_script(inv, Some(&f), state);
                match written {
                    Some(text) => (text, format!("{}, written above", f.known().unwrap_or_default()), false),
                    None => return,
                }
            }
        };
        if self.code_depth >= MAX_CODE_NESTING {
            self.stop(&format!("it nests code in strings more than {MAX_CODE_NESTING} levels deep"));
            return;
        }
        let scan = interpreters::scan(lang, &code);
        if scan.too_long {
            inv.code_unknown = true;
            return;
        }
        for p in &scan.paths {
            let path = self.normalize(p, state);
            if !inv.reads.contains(&path) {
                inv.reads.push(path);
            }
        }
        if scan.environment {
            inv.secret_output = Some(SecretOutput { what: format!("the environment (read by {via})"), hosts: &[] });
        }
        for (on, effect) in [
            (scan.sends, Effect::Sends),
            (scan.fork_loop, Effect::ForkLoop),
            (scan.download_run, Effect::DownloadRun),
            (scan.remote_shell, Effect::RemoteShell),
        ] {
            if on {
                inv.effects.push(effect);
            }
        }
        if scan.dynamic_eval || scan.spawns.iter().any(Option::is_none) {
            inv.code_unknown = true;
        }
        let mut f = frame.clone();
        if from_stdin {
            // What the spawned commands read after the code is the rest of the input: unknown.
            f.stdin = Input::Unknown;
        }
        self.code_depth += 1;
        let spawned = format!("{via}, spawning");
        for command in scan.spawns.iter().flatten() {
            let mut sub = state.clone();
            self.code_string(&Arg::fixed(command), &[], &spawned, &mut sub, &f, segment);
        }
        let native = format!("{via}, a native command");
        for statement in scan.statements.iter().filter(|s| crate::shell::parse(s).is_ok()) {
            let mut sub = state.clone();
            self.code_string(&Arg::fixed(statement), &[], &native, &mut sub, &f, segment);
        }
        let mut deleting = f.clone();
        deleting.via.push(format!("{via}, deleting a tree"));
        for target in &scan.deletes {
            let path = match target {
                Some(p) => Arg::fixed(p),
                None => Arg::unknown("(a path only known when it runs)"),
            };
            let words = vec![Arg::fixed("rm"), Arg::fixed("-r"), Arg::fixed("--"), path];
            let mut sub = state.clone();
            self.dispatch(words, Vec::new(), Vec::new(), Env::default(), &mut sub, &deleting, segment);
        }
        let mut removing = f.clone();
        removing.via.push(format!("{via}, removing a file"));
        for target in scan.removes.iter().flatten() {
            let words = vec![Arg::fixed("rm"), Arg::fixed("--"), Arg::fixed(target)];
            let mut sub = state.clone();
            self.dispatch(words, Vec::new(), Vec::new(), Env::default(), &mut sub, &removing, segment);
        }
        self.code_depth -= 1;
    }
}
