//! `warden profile ...`: agent profiles from the command line, through the
//! component's `profiles` exports.

use super::{Failure, HostArgs, call_failure, print_json, read_config, start};
use crate::bindings::exports::warden::guard::profiles::ProfileSummary;
use crate::json;
use clap::Subcommand;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub(super) struct Store {
    /// The Warden configuration (JSON) the component runs with.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The SQLite database that holds the profiles, or `--storage postgres://…`.
    #[arg(long, value_name = "FILE|URL", default_value = "warden.db", visible_alias = "storage")]
    db: PathBuf,
}

#[derive(Subcommand, Debug)]
pub(super) enum ProfileCommand {
    /// Print one agent's profile, or every agent's: counts of tools, kinds, hosts and folders, the busiest hour.
    Show {
        #[command(flatten)]
        store: Store,
        /// The agent id (`default` for calls without one); every agent when omitted.
        #[arg(long)]
        agent: Option<String>,
    },
    /// Forget one agent's profile (`--agent`), or every profile (`--all`): it learns again from its next call.
    Reset {
        #[command(flatten)]
        store: Store,
        /// The agent id (`default` for calls without one).
        #[arg(long, conflicts_with = "all", required_unless_present = "all")]
        agent: Option<String>,
        /// Every agent's profile.
        #[arg(long)]
        all: bool,
    },
}

fn summary_json(p: &ProfileSummary) -> Value {
    json!({
        "agent": p.agent,
        "calls": p.calls,
        "tools": p.tools,
        "kinds": p.kinds,
        "hosts": p.hosts,
        "paths": p.paths,
        "peakPerHour": p.peak_per_hour,
        "learning": p.learning,
    })
}

fn agent_arg(agent: Option<String>) -> Result<Option<String>, Failure> {
    match agent {
        Some(a) if a.trim().is_empty() => Err(Failure::invalid(String::from(
            "--agent: must name an agent, got an empty value; omit it for every agent",
        ))),
        other => Ok(other),
    }
}

pub(super) fn run(host: &HostArgs, command: ProfileCommand, stdout: &mut dyn Write) -> Result<(), Failure> {
    match command {
        ProfileCommand::Show { store, agent } => {
            let agent = agent_arg(agent)?;
            let config = read_config(&store.config)?;
            let runtime = start(host, &config, &store.db, Some(&store.config))?;
            let shown = runtime.profile_show(agent.as_deref(), json::now_ms()).map_err(call_failure)?;
            if let (Some(a), true) = (&agent, shown.is_empty()) {
                return Err(Failure::invalid(format!("--agent: no profile for `{a}`")));
            }
            print_json(stdout, &json!({"profiles": shown.iter().map(summary_json).collect::<Vec<_>>()}))
        }
        ProfileCommand::Reset { store, agent, all } => {
            let agent = if all { None } else { agent_arg(agent)? };
            let config = read_config(&store.config)?;
            let runtime = start(host, &config, &store.db, Some(&store.config))?;
            let removed = runtime.profile_reset(agent.as_deref()).map_err(call_failure)?;
            print_json(stdout, &json!({"removed": removed}))
        }
    }
}
