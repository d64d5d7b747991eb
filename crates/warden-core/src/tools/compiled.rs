//! What the judge derives from the `tools` section, computed once when the
//! section is read instead of on every call: the built-in taxonomy and input
//! schemas, indexed by tool name, the protected and writable path globs,
//! indexed, and the home directory, normalized.

use super::name_index::NameIndex;
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
    /// Where each tool of [`Self::taxonomy`] first appears.
    pub taxonomy_index: NameIndex,
    /// The built-in input schemas ([`validate::builtin`]).
    pub inputs: Vec<InputSchema>,
    /// Where each tool of [`Self::inputs`] first appears.
    pub inputs_index: NameIndex,
    /// `protectedPaths`, indexed.
    pub protected: ProtectedSet,
    /// `writablePaths`, indexed.
    pub writable: GlobSet,
    /// `home`, normalized once for every path normalized under it.
    pub home: Home,
}

impl Compiled {
    pub fn new(protected: &[ProtectedPath], writable: &[Glob], home: Option<&str>) -> Compiled {
        let taxonomy = taxonomy::builtin();
        let inputs = validate::builtin();
        Compiled {
            taxonomy_index: NameIndex::new(taxonomy.iter().map(|e| e.tool.as_str())),
            taxonomy,
            inputs_index: NameIndex::new(inputs.iter().map(|s| s.tool.as_str())),
            inputs,
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

    #[test]
    fn a_tool_is_classified_and_its_schema_found_as_scanning_every_entry_would() {
        let sections = [
            r#"{}"#,
            r#"{"tools": {"builtinTaxonomy": false, "builtinInputs": false}}"#,
            r#"{"tools": {"taxonomy": [{"tool": "Bash", "kind": "other"}, {"tool": "mcp__*__read_file", "kind": "read"},
                {"tool": "*", "kind": "fetch"}],
                "inputs": [{"tool": "Read", "fields": [{"name": "path", "type": "string"}]}]}}"#,
            r#"{"tools": {"taxonomy": [{"tool": "mcp__*", "kind": "message"}], "builtinInputs": false}}"#,
        ];
        for text in sections {
            let config = crate::config::Config::parse(text).expect("valid");
            let tools = &config.tools;
            let builtin_entries: &[ToolEntry] = if tools.builtin_taxonomy { &tools.compiled.taxonomy } else { &[] };
            let builtin_inputs: &[InputSchema] = if tools.builtin_inputs { &tools.compiled.inputs } else { &[] };
            let mut names: Vec<String> =
                ["", "bash", "BASH", "mcp__fs__read_file", "mcp__", "mcp", "unknown_tool", "é"]
                    .iter()
                    .map(|n| n.to_string())
                    .collect();
            for name in
                tools.compiled.taxonomy.iter().map(|e| &e.tool).chain(tools.compiled.inputs.iter().map(|s| &s.tool))
            {
                names.extend([name.clone(), name.to_lowercase(), format!("{name}x"), format!("mcp__{name}")]);
                names.push(name.get(1..).unwrap_or_default().to_string());
            }
            for name in &names {
                let scanned = taxonomy::classify(&tools.taxonomy, builtin_entries, name);
                assert_eq!(
                    tools.classify(name).map(|e| e as *const ToolEntry),
                    scanned.map(|e| e as *const _),
                    "{text}: {name}"
                );
                let scanned = tools.inputs.iter().chain(builtin_inputs).find(|s| s.tool == *name);
                assert_eq!(
                    tools.schema(name).map(|s| s as *const InputSchema),
                    scanned.map(|s| s as *const _),
                    "{text}: {name}"
                );
            }
        }
    }
}
