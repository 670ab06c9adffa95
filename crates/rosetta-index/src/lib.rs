//! The package index client: the simple API (PEP 691 JSON, PEP 503 HTML),
//! range reads of wheels' zip directories, an on-disk cache, and version
//! archaeology (which releases contain a path or know a model type).
#![warn(missing_docs)]
