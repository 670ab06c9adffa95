//! placeholder
#![warn(missing_docs)]
