//! The supervisor of `rosetta run`: the launch command in its own process
//! group, its output copied unchanged to the terminal and to a log kept with
//! the attempt, one status line on a terminal showing the phase from the
//! milestones rosetta-log knows, readiness and the server's address read from
//! its own lines, the probe request (one short OpenAI-compatible chat
//! completion, streamed, only to that address), stall detection, signals
//! forwarded to the group, and nothing of the group left at the end.
//!
//! It decides how the launch ended (`ready`, `crashed`, `stalled`,
//! `probe-failed`, `interrupted`); diagnosing the log and recording the
//! attempt are the caller's. It never prints on its own: the child's bytes
//! go to the writers the caller passes.
#![warn(missing_docs)]

mod error;
pub mod fingerprint;
pub mod group;
pub mod monitor;
pub mod probe;
pub mod status;
mod supervise;

pub use error::RunError;
pub use monitor::{Address, AddressSource, Monitor};
pub use supervise::{supervise, Ending, Event, Options, StatusTarget, Terminal};
