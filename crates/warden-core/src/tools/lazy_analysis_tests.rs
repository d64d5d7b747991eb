//! The shell analyser works out what a command prints only where it is used
//! and shares variable state between subshells until one changes it. These
//! rows hold it to deciding as working everything out eagerly would: output
//! that reaches a shell by a pipe, a substitution, a file or a loop, variables
//! set in one scope and read in another, and protected files read through
//! redirections and builtins.

use super::exec_tests::{Row, check_rows};
use crate::model::Decision;

const LAZY: &[Row] = &[
    ("a group's output piped to sh", "{ echo 'rm -rf /'; } | sh", Decision::Deny, "exec.recursive-delete"),
    ("a subshell's output piped to sh", "(echo 'rm -rf /') | sh", Decision::Deny, "exec.recursive-delete"),
    ("the middle stage's output piped on", "echo 'rm -rf /' | cat | sh", Decision::Deny, "exec.recursive-delete"),
    ("bash -c output piped to sh", "bash -c \"echo 'rm -rf /'\" | sh", Decision::Deny, "exec.recursive-delete"),
    ("output substituted into eval", "eval \"$(echo 'rm -rf /')\"", Decision::Deny, "exec.recursive-delete"),
    (
        "output substituted into a variable",
        "x=$(echo 'rm -rf /'); eval \"$x\"",
        Decision::Deny,
        "exec.recursive-delete",
    ),
    ("output of a process substitution sourced", "source <(echo 'rm -rf /')", Decision::Deny, "exec.recursive-delete"),
    ("output written to a file then run", "echo 'rm -rf /' > x.sh; sh x.sh", Decision::Deny, "exec.recursive-delete"),
    (
        "a file written inside bash -c then run",
        "bash -c \"echo 'rm -rf /' > x.sh\"; sh x.sh",
        Decision::Deny,
        "exec.recursive-delete",
    ),
    ("a variable set before a subshell", "d=/; (rm -rf $d)", Decision::Deny, "exec.recursive-delete"),
    ("a variable set in a for loop", "for d in /; do rm -rf \"$d\"; done", Decision::Deny, "exec.recursive-delete"),
    (
        "a variable exported then used in a pipeline",
        "export d=/; true | rm -rf $d",
        Decision::Deny,
        "exec.recursive-delete",
    ),
    (
        "a variable set in a subshell stays there",
        "(d=/); rm -rf \"$d\"x",
        Decision::Ask,
        "exec.recursive-delete-dynamic",
    ),
    (
        "a variable set in a pipeline stage stays there",
        "d=/ | true; rm -rf \"${d}x\"",
        Decision::Ask,
        "exec.recursive-delete-dynamic",
    ),
    ("a variable set in a function body is seen", "f() { d=/; rm -rf $d; }", Decision::Deny, "exec.recursive-delete"),
    ("an alias defined then used", "alias x='rm -rf'; x /", Decision::Deny, "exec.recursive-delete"),
    ("an alias defined in a subshell, used after", "(alias x='rm -rf /'); x", Decision::Deny, "exec.recursive-delete"),
    ("a protected file read by cat", "cat ~/.ssh/id_rsa", Decision::Deny, "path.protected"),
    ("a protected file redirected into cat", "< ~/.ssh/id_rsa cat", Decision::Deny, "path.protected"),
    ("a protected file opened on a descriptor", "exec 3< ~/.aws/credentials", Decision::Deny, "path.protected"),
    ("a protected file read by read", "read x < ~/.ssh/id_rsa", Decision::Deny, "path.protected"),
    ("a protected file read by mapfile", "mapfile a < ~/.ssh/id_rsa", Decision::Deny, "path.protected"),
    ("a protected file sourced", "source ~/.aws/credentials", Decision::Deny, "path.protected"),
    ("a protected file dotted", ". ~/.aws/credentials", Decision::Deny, "path.protected"),
    ("a protected file in a here-string", "cat <<< \"$(cat ~/.ssh/id_rsa)\"", Decision::Deny, "path.protected"),
    ("a protected file read only by a redirection", "< ~/.ssh/id_rsa", Decision::Deny, "path.protected"),
    ("a plain read of the workspace passes", "cat src/main.rs | head -3", Decision::Allow, "tools.allow"),
];

#[test]
fn output_worked_out_only_where_used_and_shared_variables_decide_as_eager_analysis_does() {
    check_rows(LAZY);
}
