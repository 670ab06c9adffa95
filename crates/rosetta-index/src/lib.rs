//! The package index client: the simple API (PEP 691 JSON, PEP 503 HTML),
//! range reads of wheels' zip directories, an on-disk cache, and version
//! archaeology (which releases contain a path or know a model type), with the
//! knowledge base's regression windows beside the answers.
//!
//! Nothing here prints: functions return values and typed errors
//! ([`IndexError`]); the `rosetta versions` command renders them.
#![warn(missing_docs)]

pub mod archaeology;
pub mod cache;
pub mod error;
pub mod http;
pub mod registry;
pub mod simple;
pub mod source;
pub mod wheel;
pub mod zip;

pub use archaeology::{Question, Sweep, Sweeper};
pub use error::IndexError;
