//! Where `warden` finds its configuration and keeps its database when the
//! command line does not say.
//!
//! The configuration is the first that exists of `$WARDEN_CONFIG`,
//! `./warden.json`, `$XDG_CONFIG_HOME/warden/warden.json` (or
//! `~/.config/warden/warden.json`). `$WARDEN_CONFIG`, when set, is the only
//! candidate: a variable naming a missing file is an error, never a silent
//! fall-through to another file. When none exists the error lists every place
//! looked at.
//!
//! The database defaults to `$XDG_STATE_HOME/warden/warden.db` (or
//! `~/.local/state/warden/warden.db`), never the current folder. Missing
//! folders on the way to the default database are created owner-only (0700)
//! on first use; an existing folder's permissions are never changed. A
//! database named with `--db` is opened where it says: its folder must exist.

use std::path::{Path, PathBuf};

/// The environment variable naming the configuration file.
pub const CONFIG_ENV: &str = "WARDEN_CONFIG";
/// The configuration's file name in the current and the XDG config folder.
pub const CONFIG_FILE_NAME: &str = "warden.json";
/// The database's file name in the XDG state folder.
pub const DB_FILE_NAME: &str = "warden.db";
/// The folder under the XDG config and state folders.
pub const APP_DIR: &str = "warden";
/// Permissions of a folder `warden` creates for its database.
#[cfg(unix)]
pub const STATE_DIR_MODE: u32 = 0o700;

/// An environment variable, treated as unset when empty (as XDG says).
fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// An XDG base folder: `$<xdg>` when absolute, else `~/<fallback>`.
fn xdg_dir(xdg: &str, fallback: &str) -> Option<PathBuf> {
    // XDG: a relative path in these variables is invalid and is ignored.
    var(xdg).filter(|p| p.is_absolute()).or_else(|| var("HOME").map(|h| h.join(fallback)))
}

/// The places the configuration is looked for, in order, each with where it came from.
pub fn config_candidates() -> Vec<(PathBuf, &'static str)> {
    if let Some(path) = var(CONFIG_ENV) {
        return vec![(path, "$WARDEN_CONFIG")];
    }
    let mut out = vec![(PathBuf::from(CONFIG_FILE_NAME), "the current folder")];
    if let Some(dir) = xdg_dir("XDG_CONFIG_HOME", ".config") {
        out.push((dir.join(APP_DIR).join(CONFIG_FILE_NAME), "the XDG config folder"));
    }
    out
}

/// The configuration file: `explicit` when given, else the first candidate that exists.
pub fn find_config(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    let candidates = config_candidates();
    if let Some((path, _)) = candidates.iter().find(|(p, _)| p.is_file()) {
        return Ok(path.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|(p, from)| format!("{} ({from})", p.display())).collect();
    Err(format!(
        "--config: no configuration found; looked at {}; pass --config FILE, set {CONFIG_ENV}, or write one with \
         `warden init`",
        looked.join(", ")
    ))
}

/// The default database: `$XDG_STATE_HOME/warden/warden.db` or `~/.local/state/warden/warden.db`.
pub fn default_db() -> Result<PathBuf, String> {
    xdg_dir("XDG_STATE_HOME", ".local/state")
        .map(|d| d.join(APP_DIR).join(DB_FILE_NAME))
        .ok_or_else(|| "--db: no default database: neither XDG_STATE_HOME nor HOME is set; pass --db FILE".to_string())
}

/// The database file: `explicit` as it is, or the default with its missing folders created owner-only.
pub fn prepare_db(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let path = match explicit {
        // A database named on the command line is opened where it says: a
        // mistyped folder is an error, never created.
        Some(p) => return Ok(p.to_path_buf()),
        None => default_db()?,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir)
            .map_err(|e| format!("--db: cannot create the folder {} for the database: {e}", dir.display()))?;
    }
    Ok(path)
}

/// Creates `dir` and its missing parents, each new one 0700; leaves existing ones alone.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(STATE_DIR_MODE);
    }
    builder.create(dir)
}
