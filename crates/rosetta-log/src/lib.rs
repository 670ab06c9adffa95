//! Reading logs: sources (files, stdin, gzip, zstd), the one scanning pass
//! over the bytes, line prefixes, message templates, Python tracebacks,
//! events (milestones, warnings, errors) and the log facts the knowledge base
//! reasons over.
#![warn(missing_docs)]

pub mod error;
pub mod prefix;
pub mod scan;
pub mod source;

pub use error::LogError;
