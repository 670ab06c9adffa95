//! Reading logs: sources (files, stdin, gzip, zstd), the one scanning pass
//! over the bytes, line prefixes, message templates, Python tracebacks,
//! events (milestones, warnings, errors) and the log facts the knowledge base
//! reasons over.
#![warn(missing_docs)]

pub mod error;
pub mod extract;
pub mod facts;
pub mod lazy;
pub mod literals;
pub mod prefix;
pub mod scan;
pub mod scan_words;
pub mod source;
pub mod traceback;
pub mod vocab;

pub use error::LogError;
pub use facts::{Failure, Incident, LogFacts, Milestone, WarningLine};
pub use scan::Scanner;
pub use vocab::Vocabulary;

use std::path::{Path, PathBuf};

/// Reads and scans every input (stdin when `paths` is empty), then builds the facts.
/// `voc` is the vocabulary (`Vocabulary::embedded()` for the built-in one);
/// `extra_literals` (from the knowledge base) make more lines worth keeping;
/// `gpu_names` lets the extractor recognise GPUs.
pub fn read_logs(
    paths: &[PathBuf],
    voc: &Vocabulary,
    extra_literals: &[String],
    gpu_names: &[&str],
) -> Result<LogFacts, LogError> {
    read_logs_with(&Scanner::new(voc, extra_literals), paths, voc, gpu_names)
}

/// `read_logs` with a scanner built beforehand (from `voc`), for callers that read
/// many logs; each call should get its own budget (`Scanner::fresh`).
pub fn read_logs_with(
    scanner: &Scanner,
    paths: &[PathBuf],
    voc: &Vocabulary,
    gpu_names: &[&str],
) -> Result<LogFacts, LogError> {
    let stdin = [PathBuf::from("-")];
    let paths: &[PathBuf] = if paths.is_empty() { &stdin } else { paths };
    let mut scans = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let src = source::Source::open(Path::new(p))?;
        let decoded = src.encoding != source::Encoding::Plain;
        let mut reader = source::text_reader(Path::new(p), src.reader)?;
        let out = if decoded {
            scanner.scan_decoded(i, &mut reader)
        } else {
            scanner.scan_reader(i, &mut reader)
        };
        scans.push((p.clone(), out));
    }
    Ok(LogFacts::build(scans, voc, gpu_names))
}
