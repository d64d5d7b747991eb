//! What the judge derives from the `tools` section, computed once when the
//! section is read instead of on every call: the built-in taxonomy and input
//! schemas, and the protected and writable path globs, indexed.

use super::protected::{ProtectedPath, ProtectedSet};
use super::taxonomy::{self, ToolEntry};
use super::validate::{self, InputSchema};
use crate::paths::{Glob, GlobSet};
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
}

impl Compiled {
    pub fn new(protected: &[ProtectedPath], writable: &[Glob]) -> Compiled {
        Compiled {
            taxonomy: taxonomy::builtin(),
            inputs: validate::builtin(),
            protected: ProtectedSet::new(protected),
            writable: GlobSet::new(writable.to_vec()),
        }
    }
}
