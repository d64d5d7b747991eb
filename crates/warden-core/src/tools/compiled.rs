//! What the judge derives from the `tools` section, computed once when the
//! section is read instead of on every call: the built-in taxonomy and input
//! schemas, the protected and writable path globs, indexed, and the home
//! directory, normalized.

use super::protected::{ProtectedPath, ProtectedSet};
use super::taxonomy::{self, ToolEntry};
use super::validate::{self, InputSchema};
use crate::paths::{Glob, GlobSet, Home};
use crate::prelude::*;

/// The `tools` section's derived tables. Nothing in it is configured
/// directly, so it is neither serialized nor part of the schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compiled {
    /// The built-in taxonomy ([`taxonomy::builtin`]).
    pub taxonomy: Vec<ToolEntry>,
    /// The built-in input schemas ([`validate::builtin`]).
    pub inputs: Vec<InputSchema>,
    /// `protectedPaths`, indexed.
    pub protected: ProtectedSet,
    /// `writablePaths`, indexed.
    pub writable: GlobSet,
    /// `home`, normalized once for every path normalized under it.
    pub home: Home,
}

impl Compiled {
    pub fn new(protected: &[ProtectedPath], writable: &[Glob], home: Option<&str>) -> Compiled {
        Compiled {
            taxonomy: taxonomy::builtin(),
            inputs: validate::builtin(),
            protected: ProtectedSet::new(protected),
            writable: GlobSet::new(writable.to_vec()),
            home: Home::new(home),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derived_tables_are_those_of_the_section_as_read() {
        let text = r#"{"tools": {"protectedPaths": ["/srv/secret/**", {"glob": "~/.bashrc", "protect": "writes"}],
            "writablePaths": ["/scratch/**"], "builtinTaxonomy": false}}"#;
        let config = crate::config::Config::parse(text).expect("valid");
        let tools = &config.tools;
        assert_eq!(tools.compiled, Compiled::new(&tools.protected_paths, &tools.writable_paths, tools.home.as_deref()));
        assert_eq!(tools.compiled.taxonomy, taxonomy::builtin());
        assert_eq!(tools.compiled.inputs, validate::builtin());
        assert_ne!(tools.compiled.protected, ProtectedSet::new(&super::super::ToolsConfig::default().protected_paths));
        assert!(tools.classify("Bash").is_none(), "the built-in taxonomy is off");
        assert!(tools.schema("Bash").is_some(), "the built-in schemas are on");
        let defaults = super::super::ToolsConfig::default();
        assert_eq!(
            defaults.compiled,
            Compiled::new(&defaults.protected_paths, &defaults.writable_paths, defaults.home.as_deref())
        );
    }
}
