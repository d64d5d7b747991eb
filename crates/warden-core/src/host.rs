//! What the host tells the component about itself when it starts.
//!
//! The host knows things the policy cannot: a secret to authenticate the
//! approval keys it hands out, where Warden's own database, configuration and
//! key material live, which files hold the runtime's hook settings, and under
//! what name Warden's own command runs. The agent must not read or change any
//! of them through its tool calls, or it could approve its own asks, erase
//! Warden's memory or unhook Warden; the tool-call judge denies that with the
//! `self.*` rules (see [`crate::tools::self_guard`]).
//!
//! Until a host declares a context, approval answers cannot be recorded
//! (their keys cannot be authenticated) and nothing is protected beyond the
//! configured `protectedPaths`.

use crate::model::PolicyError;
use crate::paths;
use crate::prelude::*;

/// Fewest bytes of an approval secret.
pub const MIN_SECRET_BYTES: usize = 32;
/// Most bytes of an approval secret.
pub const MAX_SECRET_BYTES: usize = 1024;
/// Most protected paths (databases included) a host declares.
pub const MAX_HOST_PATHS: usize = 256;
/// Longest protected path, in characters.
pub const MAX_HOST_PATH_CHARS: usize = 1024;
/// Most names of Warden's own command.
pub const MAX_ADMIN_PROGRAMS: usize = 16;
/// Longest name of Warden's own command, in characters.
pub const MAX_ADMIN_PROGRAM_CHARS: usize = 128;

/// The host's context, as declared.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HostContext {
    /// Secret the approval keys are authenticated with.
    pub approval_secret: Vec<u8>,
    /// Warden's own database files (the database and its `-wal`/`-shm` files).
    pub databases: Vec<String>,
    /// Other files and folders of Warden and the runtime's hook settings, as
    /// absolute paths or globs (`/`, `~/` or `**/` anchored).
    pub protected_paths: Vec<String>,
    /// Names Warden's own command runs under, such as `warden`.
    pub admin_programs: Vec<String>,
}

impl core::fmt::Debug for HostContext {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HostContext")
            .field("approval_secret", &format_args!("({} bytes)", self.approval_secret.len()))
            .field("databases", &self.databases)
            .field("protected_paths", &self.protected_paths)
            .field("admin_programs", &self.admin_programs)
            .finish()
    }
}

fn invalid(message: String) -> PolicyError {
    PolicyError::InvalidInput(message)
}

fn check_path(field: &str, index: usize, path: &str) -> Result<(), PolicyError> {
    let chars = path.chars().count();
    if chars == 0 || chars > MAX_HOST_PATH_CHARS {
        return Err(invalid(format!("{field}[{index}]: must be 1 to {MAX_HOST_PATH_CHARS} characters, got {chars}")));
    }
    if let Some(problem) = paths::glob_problem(path) {
        return Err(invalid(format!("{field}[{index}]: `{}` {problem}", crate::config::reader::shorten(path))));
    }
    Ok(())
}

impl HostContext {
    /// Checks every field; the first problem is named with its field.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let n = self.approval_secret.len();
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&n) {
            return Err(invalid(format!(
                "approvalSecret: must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes, got {n}"
            )));
        }
        let total = self.databases.len() + self.protected_paths.len();
        if total > MAX_HOST_PATHS {
            return Err(invalid(format!(
                "protectedPaths: at most {MAX_HOST_PATHS} paths, databases included, got {total}"
            )));
        }
        for (i, p) in self.databases.iter().enumerate() {
            check_path("databases", i, p)?;
        }
        for (i, p) in self.protected_paths.iter().enumerate() {
            check_path("protectedPaths", i, p)?;
        }
        if self.admin_programs.len() > MAX_ADMIN_PROGRAMS {
            return Err(invalid(format!(
                "adminPrograms: at most {MAX_ADMIN_PROGRAMS} names, got {}",
                self.admin_programs.len()
            )));
        }
        for (i, name) in self.admin_programs.iter().enumerate() {
            let chars = name.chars().count();
            let ok = (1..=MAX_ADMIN_PROGRAM_CHARS).contains(&chars)
                && !name.contains('/')
                && !name.chars().any(|c| c.is_whitespace() || c.is_control());
            if !ok {
                return Err(invalid(format!(
                    "adminPrograms[{i}]: `{}` must be a program name of 1 to {MAX_ADMIN_PROGRAM_CHARS} characters without `/` or spaces",
                    crate::config::reader::shorten(name)
                )));
            }
        }
        Ok(())
    }

    /// The context prepared for the judge.
    pub fn prepare(&self) -> Prepared {
        Prepared {
            secret: self.approval_secret.clone(),
            mac: crate::digest::MacKey::new(&self.approval_secret),
            globs: compiled(with_home_aliases(self.databases.iter().chain(&self.protected_paths))),
            database_globs: compiled(with_home_aliases(self.databases.iter())),
            database_names: self
                .databases
                .iter()
                .filter_map(|p| p.rsplit('/').next())
                .filter(|n| !n.is_empty() && !n.contains(['*', '?', '[']))
                .map(str::to_string)
                .collect(),
            admin_programs: self.admin_programs.clone(),
        }
    }
}

/// The globs compiled once. Every declared path passed [`HostContext::validate`],
/// which compiles it, and a home alias only shortens a valid glob.
fn compiled(globs: Vec<String>) -> paths::GlobSet {
    paths::GlobSet::new(globs.iter().filter_map(|g| paths::Glob::new(g).ok()).collect())
}

/// Each glob, with its home-relative form when it lies under a home
/// directory, so `~/.warden/warden.db` and `/home/me/.warden/warden.db` are
/// one file.
fn with_home_aliases<'a>(globs: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in globs {
        if !out.contains(p) {
            out.push(p.clone());
        }
        if let Some(alias) = paths::home_alias(p).filter(|a| a != p)
            && !out.contains(&alias)
        {
            out.push(alias);
        }
    }
    out
}

/// The host context as the judge uses it.
#[derive(Clone, Default)]
pub struct Prepared {
    /// The approval secret; empty when the host declared none.
    pub secret: Vec<u8>,
    /// The approval secret as a key to MAC with (the keyed hashes of the optional sections).
    pub mac: crate::digest::MacKey,
    /// Every protected glob, databases included, compiled and indexed.
    pub globs: paths::GlobSet,
    /// The globs of Warden's database files, compiled and indexed.
    pub database_globs: paths::GlobSet,
    /// The file names of Warden's database files, for code that names them inline.
    pub database_names: Vec<String>,
    /// Names Warden's own command runs under.
    pub admin_programs: Vec<String>,
}

impl core::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Prepared")
            .field("secret", &format_args!("({} bytes)", self.secret.len()))
            .field("globs", &self.globs.globs())
            .field("admin_programs", &self.admin_programs)
            .finish()
    }
}
