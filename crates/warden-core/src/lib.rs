//! Warden's policy logic.
//!
//! Everything that decides lives here; the component only converts WIT types
//! to these and back, and hosts only speak the WIT world. The core reaches the
//! outside world only through the ports in [`ports`], and reads time only from
//! the `now_ms` of each request, so a decision is a pure function of
//! configuration, stored state and request.
//!
//! The crate is `no_std` + `alloc` so that the component it is built into
//! imports nothing but its own world: no filesystem, sockets, clocks or
//! environment.

#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod asks;
pub mod audit;
mod bytes;
pub mod config;
pub mod counters;
pub mod digest;
pub mod dlp;
mod engine;
#[cfg(any(test, feature = "fakes"))]
pub mod fakes;
pub mod flow;
#[cfg(test)]
mod fuzz;
pub mod gate;
pub mod harden;
pub mod host;
pub mod idempotency;
pub mod mcp_review;
pub mod model;
pub mod name_table;
pub mod outbound;
pub mod paths;
pub mod pin;
pub mod ports;
pub mod profile;
pub mod risk;
pub mod safety;
pub mod scan;
#[cfg(feature = "schema")]
pub mod schema;
pub mod session;
pub mod shell;
pub mod store;
#[cfg(test)]
mod test_support;
pub mod time;
pub mod tools;

pub use config::Config;
pub use config::reader::ConfigError;
pub use engine::{Warden, unconfigured};
pub use host::HostContext;

/// Rule names shared by every check family.
pub mod rules {
    /// A check family with nothing configured, which therefore checked nothing.
    pub const NOT_CONFIGURED: &str = "not-configured";
    /// The tool-call arguments are not a JSON object.
    pub const INVALID_ARGUMENTS: &str = "input.invalid-arguments";
}

#[allow(unused_imports)]
pub(crate) mod prelude {
    pub use alloc::borrow::ToOwned;
    pub use alloc::boxed::Box;
    pub use alloc::collections::{BTreeMap, BTreeSet};
    pub use alloc::format;
    pub use alloc::string::{String, ToString};
    pub use alloc::vec;
    pub use alloc::vec::Vec;
}
