//! One file per subcommand: resolve flags into what the libraries take, call
//! them, render the result to stdout.

pub mod config;
pub mod diagnose;
pub mod env;
pub mod env_facts;
pub mod findings;
pub mod journal;
pub mod preflight;
pub mod run;
pub mod versions;
