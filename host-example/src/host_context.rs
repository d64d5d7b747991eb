//! What this host declares to the component about itself at start.
//!
//! **Approval secret.** Approval keys are authenticated with an HMAC under a
//! secret the agent cannot read. The host generates 32 random bytes once and
//! keeps them in a file beside the database, `<db>.key` (so `warden.db` has
//! `warden.db.key`), created readable by its owner only (mode 0600) and
//! never printed. Every `warden` process on the same database uses the same
//! file, so a key from `warden check tool` is recorded by `warden approve`;
//! a key from another database's secret is refused. The file is a protected
//! path, so the agent's own tool calls cannot read it, and the storage
//! import cannot reach it. A file of another size, or one group or others
//! may read, is refused with an error (fail closed); delete it to start over,
//! which invalidates every outstanding key.
//!
//! **Protected paths.** The database and its `-wal`, `-shm` and `-journal`
//! files; the key file; the configuration file; the component cache; and
//! Claude Code's hook settings (`.claude/settings.json` and
//! `.claude/settings.local.json` in any project, and `~/.claude/settings.json`).
//! Paths are made absolute against the working directory and, when they
//! exist, declared again with symbolic links resolved.
//!
//! **Admin programs.** `warden`, and the name this binary was started under.

use crate::bindings::exports::warden::guard::policy::HostContext;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Bytes of a generated approval secret.
pub const SECRET_BYTES: usize = 32;

/// The file holding the approval secret of the database `db`.
pub fn secret_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".key");
    db.with_file_name(name)
}

/// A fresh random secret, for a host whose storage does not outlive it.
pub fn ephemeral_secret() -> Result<Vec<u8>, String> {
    let mut secret = vec![0u8; SECRET_BYTES];
    getrandom::fill(&mut secret).map_err(|e| format!("cannot draw random bytes: {e}"))?;
    Ok(secret)
}

/// The approval secret of the database `db`: read from `<db>.key`, or
/// generated there once when the file does not exist.
pub fn approval_secret(db: &Path) -> Result<Vec<u8>, String> {
    let path = secret_path(db);
    match read_secret(&path) {
        Ok(secret) => return Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot use the approval secret {}: {e}", path.display())),
    }
    let secret = ephemeral_secret()?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let created = (|| -> std::io::Result<()> {
        let mut tmp = tempfile::Builder::new().prefix(".warden-key-").tempfile_in(dir)?;
        restrict(tmp.as_file())?;
        tmp.write_all(&secret)?;
        tmp.as_file().sync_all()?;
        tmp.persist_noclobber(&path).map_err(|e| e.error)?;
        Ok(())
    })();
    match created {
        Ok(()) => Ok(secret),
        // Another process created it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read_secret(&path).map_err(|e| format!("cannot use the approval secret {}: {e}", path.display()))
        }
        Err(e) => Err(format!("cannot create the approval secret {}: {e}", path.display())),
    }
}

#[cfg(unix)]
fn restrict(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn restrict(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

fn read_secret(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(std::io::Error::other(format!(
                "it may be read by group or others (mode {:o}); it must be readable by its owner only (`chmod 600`)",
                mode & 0o777
            )));
        }
    }
    let mut secret = Vec::new();
    file.take(SECRET_BYTES as u64 + 1).read_to_end(&mut secret)?;
    if secret.len() != SECRET_BYTES {
        return Err(std::io::Error::other(format!(
            "it holds {} bytes, not the {SECRET_BYTES} this host writes; delete it to generate a new one",
            secret.len()
        )));
    }
    Ok(secret)
}

/// `path` made absolute against the working directory, with `.` and `..`
/// resolved textually.
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The forms of a path the judge should know: absolute, and with links
/// resolved when it (or its folder) exists.
fn forms(path: &Path) -> Vec<String> {
    let abs = absolute(path);
    let mut out = vec![abs.to_string_lossy().into_owned()];
    let resolved = std::fs::canonicalize(&abs).ok().or_else(|| {
        let parent = std::fs::canonicalize(abs.parent()?).ok()?;
        Some(parent.join(abs.file_name()?))
    });
    if let Some(r) = resolved.map(|r| r.to_string_lossy().into_owned())
        && !out.contains(&r)
    {
        out.push(r);
    }
    out
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// Claude Code's hook settings, in any project and in the home directory.
pub const CLAUDE_CODE_SETTINGS: &[&str] =
    &["**/.claude/settings.json", "**/.claude/settings.local.json", "~/.claude/settings.json"];

/// The context of a `warden` process on database `db` with configuration
/// `config` and component cache `cache_dir`.
pub fn declare(db: &Path, config: Option<&Path>, cache_dir: Option<&Path>, secret: Vec<u8>) -> HostContext {
    let databases = ["", "-wal", "-shm", "-journal"].iter().flat_map(|s| forms(&with_suffix(db, s))).collect();
    let mut protected_paths: Vec<String> = forms(&secret_path(db));
    if let Some(config) = config {
        protected_paths.extend(forms(config));
    }
    if let Some(cache) = cache_dir {
        protected_paths.extend(forms(cache).into_iter().map(|p| format!("{}/**", p.trim_end_matches('/'))));
    }
    protected_paths.extend(CLAUDE_CODE_SETTINGS.iter().map(|s| s.to_string()));
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        protected_paths.extend(forms(&PathBuf::from(home).join(".claude").join("settings.json")));
    }
    let mut admin_programs = vec!["warden".to_string()];
    if let Some(name) =
        std::env::current_exe().ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        && !admin_programs.contains(&name)
    {
        admin_programs.push(name);
    }
    HostContext { approval_secret: secret, databases, protected_paths, admin_programs, log_level: None }
}

/// The context the `warden` binary declares when run with its default
/// paths (the database, the configuration in the XDG config folder and the
/// compile cache, each where the binary looks for it) and its default
/// `--log-level warn`. The benchmarks run the component with it, so they
/// measure the protected globs and the logging a user's binary pays.
pub fn as_the_binary_runs(secret: Vec<u8>) -> HostContext {
    use crate::cli::paths;
    // Without HOME or XDG folders the binary needs `--db`; the current folder stands in.
    let db = paths::default_db().unwrap_or_else(|_| PathBuf::from("warden.db"));
    // The last candidate is the XDG config folder's file (or `$WARDEN_CONFIG`, the only one then).
    let config = paths::config_candidates().pop().map(|(path, _)| path);
    let cache = crate::runtime::default_cache_dir();
    let mut context = declare(&db, config.as_deref(), cache.as_deref(), secret);
    context.log_level = Some(crate::bindings::warden::guard::log::Level::Warn);
    context
}
