//! A database and a configuration file in a private folder, the way an
//! operator runs `warden`, and the `warden` binary run on them as a subprocess.

use crate::binary::run_warden_in;
use crate::{CliOutput, TempDb};
use serde_json::Value;
use std::path::Path;

pub struct Setup {
    pub db: TempDb,
    /// The path of the configuration file.
    pub config: String,
    /// The path of the database.
    pub db_path: String,
}

impl Setup {
    /// `config` written to `config.json` next to an empty database path.
    pub fn new(config: &Value) -> Setup {
        let db = TempDb::new();
        let path = db.dir.path().join("config.json");
        std::fs::write(&path, config.to_string()).expect("write config");
        let db_path = db.path().display().to_string();
        Setup { config: path.display().to_string(), db_path, db }
    }

    /// The private folder.
    pub fn dir(&self) -> &Path {
        self.db.dir.path()
    }

    /// `--config` and `--db` of this setup.
    pub fn policy(&self) -> [&str; 4] {
        ["--config", self.config.as_str(), "--db", self.db_path.as_str()]
    }

    /// Runs `warden` with `args`, then `--config` and `--db`.
    pub fn run(&self, args: &[&str], stdin: &str) -> CliOutput {
        run_warden_in(&[args, &self.policy()[..]].concat(), stdin, None)
    }

    /// Runs `warden` with `args`, then `--config` and `--db`, in the private folder.
    pub fn run_in_dir(&self, args: &[&str], stdin: &str) -> CliOutput {
        run_warden_in(&[args, &self.policy()[..]].concat(), stdin, Some(self.dir()))
    }

    /// `warden check tool --replay` on `call`, in the private folder: its verdict.
    pub fn check_tool(&self, call: &Value) -> Value {
        let out = self.run_in_dir(&["check", "tool", "--replay"], &call.to_string());
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
    }
}
