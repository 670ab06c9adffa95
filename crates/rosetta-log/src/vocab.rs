//! The log layer's vocabulary as data: error signals, milestones, phase words, prose
//! phrases, named line shapes and the scanner's literal words, read from the TOML files
//! under `kb/vocab/` (embedded at build time) and from `--kb` folders at run time.
//!
//! This module owns the file format, its checks, and the compiled form the scanner and
//! the fact builder use (one `RegexSet` over every signal, one over every milestone,
//! phase words split into identifier words). It holds no words itself: what a signal
//! looks like, which class it names and which phase it implies are in the files, each
//! entry with lines it must match (`fires`) and near misses it must not (`quiet`).

use crate::lazy::{FilteredSet, LazyRegex, LazySet};
pub use crate::literals::{branch_literals, join_patterns, prefix_literals};
use rosetta_schema::{FailureClass, Phase};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::OnceLock;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_vocab.rs"));
}

mod embedded_literals {
    include!(concat!(env!("OUT_DIR"), "/vocab_literals.rs"));
}

/// What a signal says about the incident it is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A failure in its own right.
    Root,
    /// A failure, but one that usually follows another (`Killed`, a bare abort): wins only when nothing stronger is in the run.
    Weak,
    /// The consequence of a failure elsewhere (watchdog on a healthy rank, SIGTERM from the launcher).
    Cascade,
}

/// One error signal, compiled.
#[derive(Debug)]
pub struct Signal {
    /// A short name, for evidence and tests.
    pub id: &'static str,
    /// The class it names.
    pub class: FailureClass,
    /// Higher wins inside one incident; below 5 the signal only hints at the phase.
    pub strength: u8,
    /// Root, weak or cascade.
    pub role: Role,
    /// The phase it implies, if any.
    pub phase: Option<Phase>,
    /// The error is reported asynchronously (the traceback names a sync point).
    pub asynchronous: bool,
}

/// A milestone shape: its phase, whether it marks the end of that phase, and a label.
#[derive(Debug)]
pub struct MilestoneShape {
    /// Its id in the vocabulary.
    pub id: &'static str,
    /// The phase the line belongs to.
    pub phase: Phase,
    /// The line says the phase finished.
    pub done: bool,
    /// The line says the server accepts requests.
    pub ready: bool,
    /// A short label for the timeline.
    pub label: &'static str,
}

/// The named line shapes the machinery asks for; each is one entry of `kb/vocab/shapes.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeId {
    /// `NCCL WARN` notices that do not stop NCCL.
    BenignNcclWarn,
    /// Import failures a framework reports and carries on from.
    IgnoredImport,
    /// A Python `warnings.warn` line.
    PythonWarning,
    /// Words of model-config code.
    ConfigWords,
    /// Words that make an unlevelled line a warning.
    WarningWords,
    /// A compiler that runs at run time.
    JitBuild,
    /// A compiler line of an ahead-of-time build (nvcc's own temporary files).
    OfflineBuild,
    /// Lines that show or describe wrong output.
    WrongOutput,
    /// An in-progress line.
    Progress,
    /// Words that say a step finished.
    Done,
    /// Words that introduce generated text.
    OutputContext,
    /// A line that opens with an error banner (`ERROR:`, `error:`, `FATAL`, `[E]`, ...).
    ErrorLine,
    /// A collective that had already run many times (communication set up long before).
    LateCollective,
    /// The words of chat-template markers (`end_of_turn`, `im_start`, `eot`).
    ChatMarker,
    /// Python's words for a call whose arguments the callee does not take.
    CallSignature,
    /// A source path of code that runs on one platform or accelerator only (ROCm, XPU, NPU).
    PlatformPath,
    /// A frame of code that runs a compiler build (torch's extension builder running ninja).
    BuildFrames,
    /// Tensors of a forward pass (rotary tables, caches, indices) a shape error names.
    ForwardTensors,
    /// A collective being launched or run (NCCL's enqueue, a collective's kernel file).
    CollectiveCall,
    /// A library opened by name at its first use (cuDNN's sub-libraries), not at import.
    LoadedOnUse,
    /// Wrong numbers of a forward pass over given tokens (NaN tensors or scores, a perplexity).
    ForwardValues,
}

impl ShapeId {
    const ALL: [ShapeId; 21] = [
        ShapeId::BenignNcclWarn,
        ShapeId::IgnoredImport,
        ShapeId::PythonWarning,
        ShapeId::ConfigWords,
        ShapeId::WarningWords,
        ShapeId::JitBuild,
        ShapeId::OfflineBuild,
        ShapeId::WrongOutput,
        ShapeId::Progress,
        ShapeId::Done,
        ShapeId::OutputContext,
        ShapeId::ErrorLine,
        ShapeId::LateCollective,
        ShapeId::ChatMarker,
        ShapeId::CallSignature,
        ShapeId::PlatformPath,
        ShapeId::BuildFrames,
        ShapeId::ForwardTensors,
        ShapeId::CollectiveCall,
        ShapeId::LoadedOnUse,
        ShapeId::ForwardValues,
    ];
}

/// A word of a phase vocabulary: identifier words that must appear in a row; the last may
/// be a prefix (`detokeni*`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct PhaseWord {
    words: Vec<String>,
    prefix_last: bool,
}

impl PhaseWord {
    fn parse(s: &str) -> PhaseWord {
        let prefix_last = s.ends_with('*');
        let words = ident_words(s.trim_end_matches('*'));
        PhaseWord { words, prefix_last }
    }

    fn matches(&self, ident: &[String]) -> bool {
        let n = self.words.len();
        if n == 0 || ident.len() < n {
            return false;
        }
        ident.windows(n).any(|w| {
            w.iter().zip(&self.words).enumerate().all(|(i, (a, b))| {
                if i + 1 == n && self.prefix_last {
                    a.starts_with(b.as_str())
                } else {
                    a == b
                }
            })
        })
    }
}

/// Splits an identifier (a function, a dotted name, a file path) into lower-case words at
/// `_ . / - :` and spaces, at digits, and at camelCase humps (`CUDAGraphRunner` ->
/// `cuda graph runner`).
pub fn ident_words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = ident.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphabetic() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur).to_lowercase());
            }
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let prev_lower = chars[i - 1].is_lowercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let prev_upper = chars[i - 1].is_uppercase();
            if prev_lower || (prev_upper && next_lower) {
                out.push(std::mem::take(&mut cur).to_lowercase());
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur.to_lowercase());
    }
    out
}

/// Phase words for identifiers, in precedence order.
#[derive(Debug)]
struct FramePhase {
    phase: Phase,
    words: Vec<PhaseWord>,
    unless: Vec<PhaseWord>,
    files: Vec<String>,
    /// Path pieces the frame's file must hold for `words` to count (`/models/`: a model's
    /// `__init__` is building it); with no words, any frame under them matches.
    within: Vec<String>,
    /// Path pieces that veto the entry (`/configuration_`: a config class's `__init__` under
    /// `models/` is not the model being built).
    outside: Vec<String>,
}

/// The compiled vocabulary.
pub struct Vocabulary {
    /// Signals, in load order.
    pub signals: Vec<Signal>,
    signal_set: FilteredSet,
    signal_patterns: Vec<Vec<String>>,
    /// Milestone shapes, in precedence order.
    pub milestones: Vec<MilestoneShape>,
    milestone_set: FilteredSet,
    frames: Vec<FramePhase>,
    serving: HashSet<String>,
    prose: Vec<(LazyRegex, Phase)>,
    shapes: Vec<(ShapeId, LazyRegex)>,
    banners: Vec<LazyRegex>,
    banner_set: Option<LazySet>,
    banner_patterns: Vec<String>,
    /// The scanner's literals, computed once (at build time for the built-in vocabulary).
    signal_lits: OnceLock<Vec<String>>,
    milestone_lits: OnceLock<Vec<String>>,
    /// Serving-loop literals (counted, not kept).
    pub scanner_serving: Vec<String>,
    /// Literal words that mark error lines.
    pub scanner_errors: Vec<String>,
    /// Literal words that mark context lines.
    pub scanner_context: Vec<String>,
    /// The entries as written, with their examples, for the harness and the lint.
    pub entries: Vec<Entry>,
    /// Libraries' error numbers (CUDA runtime, cuBLAS): where a message gives one, and what
    /// each means.
    code_tables: Vec<CodeTable>,
    /// The `[error_codes.*]` examples: (fires, quiet).
    pub error_code_examples: (Vec<String>, Vec<String>),
}

/// One library's error numbers: where a message gives one (each pattern has a group `code`),
/// and each number's name and text.
struct CodeTable {
    patterns: Vec<LazyRegex>,
    codes: HashMap<u32, (String, String)>,
}

impl std::fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocabulary")
            .field("signals", &self.signals.len())
            .field("milestones", &self.milestones.len())
            .finish()
    }
}

/// What kind of vocabulary entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// An error signal.
    Signal,
    /// A milestone.
    Milestone,
    /// Phase words for identifiers.
    Frame,
    /// A prose phrase for a phase.
    Prose,
    /// A named line shape.
    Shape,
    /// An engine's error banner: lines it matches are error lines.
    Banner,
}

/// A vocabulary entry as written, with its examples.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Signal, milestone, frame, prose or shape.
    pub kind: EntryKind,
    /// Its id (for frame and prose entries: the phase and position).
    pub id: String,
    /// The file it comes from.
    pub file: PathBuf,
    /// Lines (identifiers, for frame entries) it must match.
    pub fires: Vec<String>,
    /// Lines it must not match.
    pub quiet: Vec<String>,
    /// Its index among the entries of its kind.
    pub index: usize,
}

/// An error in a vocabulary file.
#[derive(Debug, thiserror::Error)]
pub enum VocabError {
    /// The TOML does not parse or has an unknown field or word.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
    /// A pattern does not compile.
    #[error("{path}: {what} `{id}`: pattern does not compile: {message}")]
    Pattern {
        /// The file.
        path: PathBuf,
        /// Signal, milestone, ...
        what: &'static str,
        /// The entry.
        id: String,
        /// The regex error.
        message: String,
    },
    /// Something else is wrong with an entry.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What.
        message: String,
    },
    /// A folder cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    #[serde(default)]
    signal: Vec<SignalDoc>,
    #[serde(default)]
    milestone: Vec<MilestoneDoc>,
    #[serde(default)]
    frame: Vec<FrameDoc>,
    #[serde(default)]
    prose: Vec<ProseDoc>,
    #[serde(default)]
    serving: Option<ServingDoc>,
    #[serde(default)]
    shape: Vec<ShapeDoc>,
    #[serde(default)]
    banner: Vec<BannerDoc>,
    #[serde(default)]
    scanner: Option<ScannerDoc>,
    #[serde(default)]
    error_codes: std::collections::BTreeMap<String, CodesDoc>,
}

/// `[error_codes.LIBRARY]`: where a message gives one of a library's error numbers, and what
/// each number means.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CodesDoc {
    patterns: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
    codes: std::collections::BTreeMap<String, (String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BannerDoc {
    id: String,
    #[serde(default)]
    engine: Option<String>,
    patterns: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignalDoc {
    id: String,
    /// The engine whose idiom this is (documentation; signals apply to every log).
    #[serde(default)]
    #[allow(dead_code)]
    engine: Option<String>,
    class: String,
    strength: u8,
    role: Role,
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    asynchronous: bool,
    patterns: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MilestoneDoc {
    id: String,
    #[serde(default)]
    #[allow(dead_code)]
    engine: Option<String>,
    phase: String,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    ready: bool,
    label: String,
    patterns: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrameDoc {
    phase: String,
    #[serde(default)]
    #[allow(dead_code)]
    engine: Option<String>,
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    within: Vec<String>,
    #[serde(default)]
    outside: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProseDoc {
    phase: String,
    patterns: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServingDoc {
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeDoc {
    id: ShapeId,
    patterns: Vec<String>,
    #[serde(default)]
    fires: Vec<String>,
    #[serde(default)]
    quiet: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScannerDoc {
    #[serde(default)]
    serving: Vec<String>,
    #[serde(default)]
    error_words: Vec<String>,
    #[serde(default)]
    bpe_leak_words: Vec<String>,
    #[serde(default)]
    context_words: Vec<String>,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn parse_phase(path: &Path, s: &str) -> Result<Phase, VocabError> {
    Phase::from_str(s).map_err(|_| VocabError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "unknown phase `{s}` (one of: {})",
            Phase::ALL
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

fn parse_class(path: &Path, s: &str) -> Result<FailureClass, VocabError> {
    FailureClass::from_str(s).map_err(|_| VocabError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "unknown failure class `{s}` (one of: {})",
            FailureClass::ALL
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

fn compile(
    path: &Path,
    what: &'static str,
    id: &str,
    pats: &[String],
    check: bool,
) -> Result<LazyRegex, VocabError> {
    if pats.is_empty() {
        return Err(VocabError::Invalid {
            path: path.to_path_buf(),
            message: format!("{what} `{id}` has no patterns"),
        });
    }
    let joined = join_patterns(pats);
    if !check {
        return Ok(LazyRegex::trusted(&joined));
    }
    LazyRegex::checked(&joined).map_err(|e| VocabError::Pattern {
        path: path.to_path_buf(),
        what,
        id: id.to_string(),
        message: e.to_string().lines().last().unwrap_or_default().to_string(),
    })
}

/// Entries of patterns behind a literal prefilter, each pattern compiled on first
/// use. `check`: the patterns come from files (each was compiled when checked;
/// their literals are extracted now); else they are the built-in ones, whose
/// literals `build.rs` extracted (`embedded`, one per pattern, in the same order).
fn filtered(groups: Vec<Vec<String>>, check: bool, embedded: &[Option<&[&str]>]) -> FilteredSet {
    let flat: Vec<&String> = groups.iter().flatten().collect();
    let required: Vec<Option<Vec<String>>> = if check || embedded.len() != flat.len() {
        flat.iter().map(|p| crate::literals::needles(p)).collect()
    } else {
        embedded
            .iter()
            .map(|r| r.map(|w| w.iter().map(|x| x.to_string()).collect()))
            .collect()
    };
    FilteredSet::new(groups, required)
}

/// A set of many patterns: built now when `check`, else on first use.
fn big_set(pats: Vec<String>, check: bool) -> Result<LazySet, regex::Error> {
    if check {
        LazySet::checked(pats)
    } else {
        Ok(LazySet::trusted(pats))
    }
}

/// Reads one vocabulary file: its JSON twin when there is one that reads, else its TOML.
fn read_doc(path: &Path, text: &str, json: Option<&'static str>) -> Result<FileDoc, VocabError> {
    match json.and_then(|j| serde_json::from_str(j).ok()) {
        Some(doc) => Ok(doc),
        None => toml::from_str(text).map_err(|e| VocabError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().replace('\n', " "),
        }),
    }
}

/// Adds `item` read from `path` to `list`, in place of an earlier entry with the same id.
fn upsert<T, K: PartialEq>(
    list: &mut Vec<(T, PathBuf)>,
    item: T,
    path: &Path,
    id: impl Fn(&T) -> &K,
) {
    match list.iter().position(|(x, _)| id(x) == id(&item)) {
        Some(i) => list[i] = (item, path.to_path_buf()),
        None => list.push((item, path.to_path_buf())),
    }
}

/// The table of `[error_codes.LIBRARY]`: its patterns (each with a group `code`) and the
/// meaning of each number.
fn code_table(
    path: &Path,
    library: &str,
    patterns: &[String],
    codes: std::collections::BTreeMap<String, (String, String)>,
    check: bool,
) -> Result<CodeTable, VocabError> {
    let mut table = CodeTable {
        patterns: Vec::new(),
        codes: HashMap::new(),
    };
    for (i, p) in patterns.iter().enumerate() {
        let re = compile(
            path,
            "error code pattern",
            &format!("{library} {i}"),
            std::slice::from_ref(p),
            check,
        )?;
        if !re.as_str().contains("(?P<code>") {
            return Err(VocabError::Invalid {
                path: path.to_path_buf(),
                message: format!("error_codes.{library} pattern {i} has no group `code`"),
            });
        }
        table.patterns.push(re);
    }
    for (code, meaning) in codes {
        let n: u32 = code.parse().map_err(|_| VocabError::Invalid {
            path: path.to_path_buf(),
            message: format!("error_codes.{library} code `{code}` is not a number"),
        })?;
        table.codes.insert(n, meaning);
    }
    Ok(table)
}

/// The entries of every vocabulary file read so far, before compiling: a later signal,
/// milestone, shape or banner with an earlier one's id replaces it.
#[derive(Default)]
struct Gathered {
    signals: Vec<(SignalDoc, PathBuf)>,
    milestones: Vec<(MilestoneDoc, PathBuf)>,
    frames: Vec<(FrameDoc, PathBuf)>,
    prose: Vec<(ProseDoc, PathBuf)>,
    shapes: Vec<(ShapeDoc, PathBuf)>,
    banners: Vec<(BannerDoc, PathBuf)>,
    serving: HashSet<String>,
    sc_serving: Vec<String>,
    sc_errors: Vec<String>,
    sc_context: Vec<String>,
    code_tables: Vec<CodeTable>,
    error_code_examples: (Vec<String>, Vec<String>),
}

impl Gathered {
    /// Adds the entries of one file, read from `path`; its error-code tables are compiled now.
    fn add(&mut self, doc: FileDoc, path: &Path, check: bool) -> Result<(), VocabError> {
        for s in doc.signal {
            upsert(&mut self.signals, s, path, |x| &x.id);
        }
        for m in doc.milestone {
            upsert(&mut self.milestones, m, path, |x| &x.id);
        }
        let frames = doc.frame.into_iter().map(|f| (f, path.to_path_buf()));
        self.frames.extend(frames);
        let prose = doc.prose.into_iter().map(|p| (p, path.to_path_buf()));
        self.prose.extend(prose);
        for s in doc.shape {
            upsert(&mut self.shapes, s, path, |x| &x.id);
        }
        for b in doc.banner {
            upsert(&mut self.banners, b, path, |x| &x.id);
        }
        if let Some(s) = doc.serving {
            self.serving.extend(s.functions);
        }
        for (library, c) in doc.error_codes {
            let table = code_table(path, &library, &c.patterns, c.codes, check)?;
            self.code_tables.push(table);
            self.error_code_examples.0.extend(c.fires);
            self.error_code_examples.1.extend(c.quiet);
        }
        if let Some(s) = doc.scanner {
            self.sc_serving.extend(s.serving);
            self.sc_errors.extend(s.error_words);
            self.sc_errors.extend(s.bpe_leak_words);
            self.sc_context.extend(s.context_words);
        }
        Ok(())
    }

    /// Compiles the gathered entries into a vocabulary; with `check`, every pattern now.
    fn compile(self, check: bool) -> Result<Vocabulary, VocabError> {
        let mut entries = Vec::new();
        let (signals, signal_patterns) = compile_signals(self.signals, check, &mut entries)?;
        let signal_set = filtered(
            signal_patterns.clone(),
            check,
            embedded_literals::SIGNAL_REQUIRED,
        );
        let (milestones, milestone_set) = compile_milestones(self.milestones, check, &mut entries)?;
        let frames = compile_frames(self.frames, &mut entries)?;
        let prose = compile_prose(self.prose, check, &mut entries)?;
        let shapes = compile_shapes(self.shapes, check, &mut entries)?;
        let (banners, banner_patterns, banner_set) =
            compile_banners(self.banners, check, &mut entries)?;
        for id in ShapeId::ALL {
            if !shapes.iter().any(|(s, _)| *s == id) {
                return Err(VocabError::Invalid {
                    path: PathBuf::from("kb/vocab/shapes.toml"),
                    message: format!("shape `{}` is missing", kebab(&format!("{id:?}"))),
                });
            }
        }
        Ok(Vocabulary {
            signals,
            signal_set,
            signal_patterns,
            milestones,
            milestone_set,
            frames,
            serving: self.serving,
            prose,
            shapes,
            banners,
            banner_set,
            banner_patterns,
            scanner_serving: self.sc_serving,
            scanner_errors: self.sc_errors,
            scanner_context: self.sc_context,
            entries,
            code_tables: self.code_tables,
            error_code_examples: self.error_code_examples,
            signal_lits: OnceLock::new(),
            milestone_lits: OnceLock::new(),
        })
    }
}

/// Compiles the signals (each entry's patterns checked with `check`, else only that it has
/// some) and adds their entries; returns them with their patterns.
fn compile_signals(
    signals: Vec<(SignalDoc, PathBuf)>,
    check: bool,
    entries: &mut Vec<Entry>,
) -> Result<(Vec<Signal>, Vec<Vec<String>>), VocabError> {
    let mut out_signals = Vec::new();
    let mut signal_patterns = Vec::new();
    for (i, (s, path)) in signals.into_iter().enumerate() {
        if check {
            compile(&path, "signal", &s.id, &s.patterns, true)?;
        } else if s.patterns.is_empty() {
            compile(&path, "signal", &s.id, &s.patterns, false)?;
        }
        let phase = match &s.phase {
            Some(p) => Some(parse_phase(&path, p)?),
            None => None,
        };
        out_signals.push(Signal {
            id: leak(s.id.clone()),
            class: parse_class(&path, &s.class)?,
            strength: s.strength,
            role: s.role,
            phase,
            asynchronous: s.asynchronous,
        });
        signal_patterns.push(s.patterns.clone());
        entries.push(Entry {
            kind: EntryKind::Signal,
            id: s.id,
            file: path,
            fires: s.fires,
            quiet: s.quiet,
            index: i,
        });
    }
    Ok((out_signals, signal_patterns))
}

/// Compiles the milestones as `compile_signals` does the signals; returns them with their set.
fn compile_milestones(
    milestones: Vec<(MilestoneDoc, PathBuf)>,
    check: bool,
    entries: &mut Vec<Entry>,
) -> Result<(Vec<MilestoneShape>, FilteredSet), VocabError> {
    let mut out_ms = Vec::new();
    let mut ms_pats = Vec::new();
    for (i, (m, path)) in milestones.into_iter().enumerate() {
        if check {
            compile(&path, "milestone", &m.id, &m.patterns, true)?;
        } else if m.patterns.is_empty() {
            compile(&path, "milestone", &m.id, &m.patterns, false)?;
        }
        out_ms.push(MilestoneShape {
            id: leak(m.id.clone()),
            phase: parse_phase(&path, &m.phase)?,
            done: m.done,
            ready: m.ready,
            label: leak(m.label),
        });
        ms_pats.push(m.patterns.clone());
        entries.push(Entry {
            kind: EntryKind::Milestone,
            id: m.id,
            file: path,
            fires: m.fires,
            quiet: m.quiet,
            index: i,
        });
    }
    let milestone_set = filtered(ms_pats, check, embedded_literals::MILESTONE_REQUIRED);
    Ok((out_ms, milestone_set))
}

/// Reads the frame entries (each needs words, files or a `within`) and adds their entries.
fn compile_frames(
    frames: Vec<(FrameDoc, PathBuf)>,
    entries: &mut Vec<Entry>,
) -> Result<Vec<FramePhase>, VocabError> {
    let mut out_frames = Vec::new();
    for (i, (f, path)) in frames.into_iter().enumerate() {
        let phase = parse_phase(&path, &f.phase)?;
        if f.words.is_empty() && f.files.is_empty() && f.within.is_empty() {
            return Err(VocabError::Invalid {
                path,
                message: format!(
                    "frame entry for {} has no words, no files and no within",
                    f.phase
                ),
            });
        }
        entries.push(Entry {
            kind: EntryKind::Frame,
            id: format!("{}#{i}", f.phase),
            file: path,
            fires: f.fires,
            quiet: f.quiet,
            index: i,
        });
        out_frames.push(FramePhase {
            phase,
            words: f.words.iter().map(|w| PhaseWord::parse(w)).collect(),
            unless: f.unless.iter().map(|w| PhaseWord::parse(w)).collect(),
            files: f.files.iter().map(|s| s.to_ascii_lowercase()).collect(),
            within: f.within.iter().map(|s| s.to_ascii_lowercase()).collect(),
            outside: f.outside.iter().map(|s| s.to_ascii_lowercase()).collect(),
        });
    }
    Ok(out_frames)
}

/// Compiles the prose entries (a regex and its phase each) and adds their entries.
fn compile_prose(
    prose: Vec<(ProseDoc, PathBuf)>,
    check: bool,
    entries: &mut Vec<Entry>,
) -> Result<Vec<(LazyRegex, Phase)>, VocabError> {
    let mut out_prose = Vec::new();
    for (i, (p, path)) in prose.into_iter().enumerate() {
        let phase = parse_phase(&path, &p.phase)?;
        let id = format!("{}#{i}", p.phase);
        let re = compile(&path, "prose", &id, &p.patterns, check)?;
        out_prose.push((re, phase));
        entries.push(Entry {
            kind: EntryKind::Prose,
            id,
            file: path,
            fires: p.fires,
            quiet: p.quiet,
            index: i,
        });
    }
    Ok(out_prose)
}

/// Compiles the named shapes and adds their entries.
fn compile_shapes(
    shapes: Vec<(ShapeDoc, PathBuf)>,
    check: bool,
    entries: &mut Vec<Entry>,
) -> Result<Vec<(ShapeId, LazyRegex)>, VocabError> {
    let mut out_shapes = Vec::new();
    for (i, (s, path)) in shapes.into_iter().enumerate() {
        let name = format!("{:?}", s.id);
        let re = compile(&path, "shape", &name, &s.patterns, check)?;
        out_shapes.push((s.id, re));
        entries.push(Entry {
            kind: EntryKind::Shape,
            id: kebab(&name),
            file: path,
            fires: s.fires,
            quiet: s.quiet,
            index: i,
        });
    }
    Ok(out_shapes)
}

/// Compiles the banners and adds their entries; returns their regexes, their joined
/// patterns, and one set over all of them (none when there are no banners).
#[allow(clippy::type_complexity)]
fn compile_banners(
    banners: Vec<(BannerDoc, PathBuf)>,
    check: bool,
    entries: &mut Vec<Entry>,
) -> Result<(Vec<LazyRegex>, Vec<String>, Option<LazySet>), VocabError> {
    let mut out_banners = Vec::new();
    let mut banner_patterns = Vec::new();
    for (i, (b, path)) in banners.into_iter().enumerate() {
        let re = compile(&path, "banner", &b.id, &b.patterns, check)?;
        out_banners.push(re);
        banner_patterns.push(join_patterns(&b.patterns));
        let _ = &b.engine;
        entries.push(Entry {
            kind: EntryKind::Banner,
            id: b.id,
            file: path,
            fires: b.fires,
            quiet: b.quiet,
            index: i,
        });
    }
    let banner_set = if banner_patterns.is_empty() {
        None
    } else {
        Some(
            big_set(banner_patterns.clone(), check).map_err(|e| VocabError::Invalid {
                path: PathBuf::from("kb/vocab"),
                message: format!("the banner set does not compile: {e}"),
            })?,
        )
    };
    Ok((out_banners, banner_patterns, banner_set))
}

impl Vocabulary {
    /// The built-in vocabulary (`kb/vocab/`), compiled once.
    pub fn embedded() -> &'static Vocabulary {
        static V: OnceLock<Vocabulary> = OnceLock::new();
        V.get_or_init(|| {
            // Checked by the lint at test time; its regexes compile on first use and
            // its scanner literals were extracted at build time.
            let files = embedded::EMBEDDED
                .iter()
                .map(|(p, t, j)| (PathBuf::from("kb/vocab").join(p), (*t).to_string(), *j));
            let v = Vocabulary::build_with(files, false)
                .unwrap_or_else(|e| panic!("the built-in vocabulary is broken: {e}"));
            let own = |l: &[&str]| l.iter().map(|w| w.to_string()).collect::<Vec<_>>();
            let _ = v.signal_lits.set(own(embedded_literals::SIGNAL_LITERALS));
            let _ = v
                .milestone_lits
                .set(own(embedded_literals::MILESTONE_LITERALS));
            v
        })
    }

    /// The built-in vocabulary files: (path relative to the repository, text).
    pub fn embedded_files() -> Vec<(PathBuf, String)> {
        embedded::EMBEDDED
            .iter()
            .map(|(p, t, _)| (PathBuf::from("kb/vocab").join(p), t.to_string()))
            .collect()
    }

    /// The built-in vocabulary plus the vocabulary files under `dirs` (their `*.toml` files
    /// that hold vocabulary tables); an extra entry with a built-in id replaces it.
    pub fn with_extra(extra: Vec<(PathBuf, String)>) -> Result<&'static Vocabulary, VocabError> {
        if extra.is_empty() {
            return Ok(Vocabulary::embedded());
        }
        let mut files = Self::embedded_files();
        files.extend(extra);
        Ok(Box::leak(Box::new(Vocabulary::from_files(files)?)))
    }

    /// Whether a TOML text holds vocabulary tables (rather than a rule).
    pub fn is_vocabulary(text: &str) -> bool {
        text.lines().any(|l| {
            matches!(
                l.trim(),
                "[[signal]]"
                    | "[[milestone]]"
                    | "[[frame]]"
                    | "[[prose]]"
                    | "[[shape]]"
                    | "[[banner]]"
                    | "[serving]"
                    | "[scanner]"
            ) || l.trim().starts_with("[error_codes.")
        })
    }

    /// Compiles vocabulary files, checking every pattern. Later entries with the same id
    /// replace earlier ones.
    pub fn from_files(files: Vec<(PathBuf, String)>) -> Result<Vocabulary, VocabError> {
        Self::build(files, true)
    }

    /// Reads vocabulary files; with `check`, compiles every pattern now, else on first use.
    fn build(files: Vec<(PathBuf, String)>, check: bool) -> Result<Vocabulary, VocabError> {
        Self::build_with(files.into_iter().map(|(p, t)| (p, t, None)), check)
    }

    /// `build`, each file with the same data as JSON where the build script wrote it: 230 KB
    /// of TOML took most of the vocabulary's start-up, and JSON reads several times faster.
    /// A JSON text that does not read falls back to the TOML, which reports what is wrong.
    fn build_with(
        files: impl IntoIterator<Item = (PathBuf, String, Option<&'static str>)>,
        check: bool,
    ) -> Result<Vocabulary, VocabError> {
        let mut all = Gathered::default();
        for (path, text, json) in files {
            let doc = read_doc(&path, &text, json)?;
            all.add(doc, &path, check)?;
        }
        all.compile(check)
    }

    /// Indices of the signals a message matches.
    pub fn signal_matches(&self, msg: &str) -> Vec<usize> {
        self.signal_set.matches(msg)
    }

    /// The signals matching a message read with its error number's meaning (`cuBLAS API
    /// failed with status 15` also reads as `CUBLAS_STATUS_NOT_SUPPORTED: ...`).
    /// An exception raised with several strings prints them as a tuple (`('Quantization scheme
    /// is not supported for ', 'the current GPU. Min capability: 80. ', ...)`): the message
    /// is also read with the pieces joined.
    pub fn signal_matches_read(&self, msg: &str) -> Vec<usize> {
        let mut matched = self.signal_matches(msg);
        let also = |text: &str, matched: &mut Vec<usize>| {
            for s in self.signal_matches(text) {
                if !matched.contains(&s) {
                    matched.push(s);
                }
            }
        };
        if let Some(meaning) = self.error_code_meaning(msg) {
            also(&meaning, &mut matched);
        }
        if msg.contains("', '") {
            also(&msg.replace("', '", ""), &mut matched);
        }
        matched
    }

    /// Builds now what the first lines would otherwise build on demand (the signal and
    /// milestone prefilters): for a core that is idle while the rules load.
    pub fn warm(&self) {
        self.signal_set.warm();
        self.milestone_set.warm();
    }

    /// What a library's error given only by its number means (`CUDA error 98` ->
    /// `cudaErrorInvalidDeviceFunction: invalid device function`, `cuBLAS API failed with
    /// status 15` -> `CUBLAS_STATUS_NOT_SUPPORTED: ...`), when the message does not already
    /// say it.
    pub fn error_code_meaning(&self, msg: &str) -> Option<String> {
        self.code_tables.iter().find_map(|t| {
            let code: u32 = t
                .patterns
                .iter()
                .find_map(|re| re.captures(msg)?.name("code")?.as_str().parse().ok())?;
            let (name, text) = t.codes.get(&code)?;
            let lower = msg.to_ascii_lowercase();
            if lower.contains(&text.to_ascii_lowercase()) || msg.contains(name.as_str()) {
                return None;
            }
            Some(format!("{name}: {text}"))
        })
    }

    /// Whether one signal matches a message (for tests and the lint).
    pub fn signal_matches_one(&self, index: usize, msg: &str) -> bool {
        self.signal_set.matches_one(index, msg)
    }

    /// The signal with this id.
    pub fn signal(&self, id: &str) -> Option<usize> {
        self.signals.iter().position(|s| s.id == id)
    }

    /// The first milestone shape a message matches.
    pub fn milestone(&self, msg: &str) -> Option<&MilestoneShape> {
        let first = self.milestone_set.first(msg)?;
        self.milestones.get(first)
    }

    /// Whether milestone `index` matches a message (for tests and the lint).
    pub fn milestone_matches_one(&self, index: usize, msg: &str) -> bool {
        self.milestone_set.matches_one(index, msg)
    }

    /// A named line shape.
    pub fn shape(&self, id: ShapeId) -> &LazyRegex {
        // `from_files` checks that every id is present.
        &self
            .shapes
            .iter()
            .find(|(s, _)| *s == id)
            .expect("every shape is checked at load")
            .1
    }

    /// Whether a line opens with an engine's error banner.
    pub fn is_banner(&self, msg: &str) -> bool {
        self.banner_set
            .as_ref()
            .is_some_and(|s| s.get().is_match(msg))
    }

    /// Whether banner entry `index` matches (for tests and the lint).
    pub fn banner_matches_one(&self, index: usize, msg: &str) -> bool {
        self.banners.get(index).is_some_and(|r| r.is_match(msg))
    }

    /// Whether shape entry `index` matches (for tests and the lint).
    pub fn shape_matches_one(&self, index: usize, msg: &str) -> bool {
        self.shapes.get(index).is_some_and(|(_, r)| r.is_match(msg))
    }

    /// The phase an identifier (a function name, optionally with its file) names, by the
    /// first frame entry whose words it holds.
    pub fn phase_of_function(&self, func: &str, file: &str) -> Option<Phase> {
        let words = ident_words(func);
        let file = file.to_ascii_lowercase();
        self.frames
            .iter()
            .find(|f| frame_entry_matches(f, &words, &file))
            .map(|f| f.phase)
    }

    /// Whether frame entry `index` names this identifier (for tests and the lint). An
    /// example written `function @ path/to/file.py` gives the frame's file too.
    pub fn frame_matches_one(&self, index: usize, ident: &str) -> bool {
        let (func, file) = ident
            .split_once(" @ ")
            .map_or((ident, ""), |(f, p)| (f.trim(), p.trim()));
        let file = file.to_ascii_lowercase();
        self.frames
            .get(index)
            .is_some_and(|f| frame_entry_matches(f, &ident_words(func), &file))
    }

    /// A function of a serving loop.
    pub fn serving_function(&self, func: &str) -> bool {
        self.serving.contains(func)
    }

    /// The phase a prose phrase names.
    pub fn prose_phase(&self, msg: &str) -> Option<Phase> {
        self.prose
            .iter()
            .find(|(re, _)| re.is_match(msg))
            .map(|(_, p)| *p)
    }

    /// Whether prose entry `index` matches (for tests and the lint).
    pub fn prose_matches_one(&self, index: usize, msg: &str) -> bool {
        self.prose.get(index).is_some_and(|(r, _)| r.is_match(msg))
    }

    /// Literals (4+ bytes) that every match of some signal branch starts with, for the
    /// scanner.
    pub fn signal_literals(&self) -> Vec<String> {
        self.signal_lits
            .get_or_init(|| {
                // Banners and the wrong-output shape are looked for on kept lines too.
                let wrong_output = self
                    .shapes
                    .iter()
                    .find(|(id, _)| *id == ShapeId::WrongOutput)
                    .map(|(_, r)| r.as_str().to_string());
                let extra: Vec<String> = self
                    .banner_patterns
                    .iter()
                    .cloned()
                    .chain(wrong_output)
                    .collect();
                crate::literals::signal_literals(&self.signal_patterns, &extra)
            })
            .clone()
    }

    /// Prefix literals (4+ bytes) of the milestone shapes, for the scanner's context words.
    pub fn milestone_literals(&self) -> Vec<String> {
        self.milestone_lits
            .get_or_init(|| {
                let pats: Vec<String> = self.milestone_set.patterns().map(String::from).collect();
                crate::literals::milestone_literals(&pats)
            })
            .clone()
    }

    /// The patterns of signal `index`, as written.
    pub fn signal_patterns(&self, index: usize) -> &[String] {
        &self.signal_patterns[index]
    }
}

fn frame_entry_matches(f: &FramePhase, words: &[String], file: &str) -> bool {
    // A Windows path (`\venv\Lib\site-packages\torch\_inductor\...`) reads as its `/` form.
    let slashed;
    let file = if file.contains('\\') {
        slashed = file.replace('\\', "/");
        slashed.as_str()
    } else {
        file
    };
    let by_file = !file.is_empty() && f.files.iter().any(|s| file.ends_with(s.as_str()));
    let inside = f.within.is_empty() || f.within.iter().any(|s| file.contains(s.as_str()));
    let vetoed = f.unless.iter().any(|w| w.matches(words))
        || f.outside.iter().any(|s| file.contains(s.as_str()));
    let by_word = if f.words.is_empty() {
        // A `within`-only entry: any frame under those paths.
        !f.within.is_empty() && inside && !vetoed
    } else {
        inside && f.words.iter().any(|w| w.matches(words)) && !vetoed
    };
    by_file || by_word
}

fn kebab(camel: &str) -> String {
    ident_words(camel).join("-")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_json_reads_as_the_toml_it_was_written_from() {
        assert!(!embedded::EMBEDDED.is_empty());
        for (rel, text, json) in embedded::EMBEDDED {
            let json = json.unwrap_or_else(|| panic!("{rel}: no JSON embedded"));
            let from_json: FileDoc = serde_json::from_str(json).unwrap();
            let from_toml: FileDoc = toml::from_str(text).unwrap();
            assert_eq!(format!("{from_json:?}"), format!("{from_toml:?}"), "{rel}");
        }
    }

    #[test]
    fn error_numbers_are_read_as_their_text() {
        let v = Vocabulary::embedded();
        let (fires, quiet) = &v.error_code_examples;
        assert!(!fires.is_empty() && !quiet.is_empty());
        for f in fires {
            assert!(
                v.error_code_meaning(f).is_some(),
                "no meaning read from {f:?}"
            );
        }
        for q in quiet {
            assert_eq!(v.error_code_meaning(q), None, "a meaning read from {q:?}");
        }
        assert_eq!(
            v.error_code_meaning(
                "RuntimeError: Failed: CUDA runtime error csrc/jit/kernel_runtime.hpp:108 '98'"
            )
            .as_deref(),
            Some("cudaErrorInvalidDeviceFunction: invalid device function")
        );
        assert_eq!(
            v.error_code_meaning("CUDA error 700 at ggml-cuda.cu:1")
                .as_deref(),
            Some("cudaErrorIllegalAddress: an illegal memory access was encountered")
        );
        assert_eq!(
            v.error_code_meaning("test_modules.py cuBLAS API failed with status 15")
                .as_deref(),
            Some("CUBLAS_STATUS_NOT_SUPPORTED: the requested functionality is not supported")
        );
    }

    use super::*;

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(
            ident_words("CUDAGraphRunner.capture"),
            ["cuda", "graph", "runner", "capture"]
        );
        assert_eq!(
            ident_words("process_batch_result_decode"),
            ["process", "batch", "result", "decode"]
        );
        assert_eq!(ident_words("_load_w13"), ["load", "w"]);
        assert_eq!(
            ident_words("torch/cuda/graphs.py"),
            ["torch", "cuda", "graphs", "py"]
        );
    }

    #[test]
    fn phase_words_respect_word_boundaries() {
        let w = PhaseWord::parse("decode");
        assert!(w.matches(&ident_words("forward_decode")));
        assert!(!w.matches(&ident_words("decoder_layer_norm")));
        let p = PhaseWord::parse("detokeni*");
        assert!(p.matches(&ident_words("detokenize_incrementally")));
        let two = PhaseWord::parse("profile run");
        assert!(two.matches(&ident_words("_dummy_profile_run")));
        assert!(!two.matches(&ident_words("run_profile")));
    }

    #[test]
    fn the_embedded_vocabulary_loads() {
        let v = Vocabulary::embedded();
        assert!(v.signals.len() > 30);
        assert!(v.milestones.len() > 10);
        assert!(v.signal("cuda-assert").is_some());
    }

    #[test]
    fn literals_extracted_at_build_time_equal_those_extracted_now() {
        let now = Vocabulary::from_files(Vocabulary::embedded_files()).unwrap();
        let built = Vocabulary::embedded();
        assert!(!built.signal_literals().is_empty());
        assert_eq!(built.signal_literals(), now.signal_literals());
        assert_eq!(built.milestone_literals(), now.milestone_literals());
    }

    #[test]
    fn the_prefiltered_sets_match_what_a_regex_set_matches() {
        let v = Vocabulary::embedded();
        // As written (Unicode classes), hence the larger size limit.
        let signals =
            regex::RegexSetBuilder::new(v.signal_patterns.iter().map(|p| join_patterns(p)))
                .size_limit(256 << 20)
                .build()
                .unwrap();
        let milestones: Vec<String> = v.milestone_set.patterns().map(String::from).collect();
        let milestones = regex::RegexSet::new(&milestones).unwrap();
        let log = include_str!("../../../examples/glm5-sm120.log");
        let examples = v
            .entries
            .iter()
            .flat_map(|e| e.fires.iter().chain(&e.quiet))
            .map(String::as_str)
            .chain(log.lines());
        let mut hits = 0;
        for line in examples {
            let want: Vec<usize> = signals.matches(line).into_iter().collect();
            assert_eq!(v.signal_matches(line), want, "{line}");
            hits += want.len();
            let first = milestones.matches(line).into_iter().next();
            assert_eq!(
                v.milestone(line).map(|m| m.id),
                first.map(|i| v.milestones[i].id),
                "{line}"
            );
        }
        assert!(hits > 50, "{hits}");
    }

    #[test]
    fn the_embedded_vocabulary_compiles_on_first_use() {
        let v = Vocabulary::build(Vocabulary::embedded_files(), false).unwrap();
        assert!(!v.shapes[0].1.is_compiled());
        assert!(v.shape(ShapeId::ErrorLine).is_match("ERROR: boom"));
        let i = v.signal("cuda-assert").unwrap();
        assert!(v.signal_matches("nothing to see").is_empty());
        assert!(v.signal_matches_one(i, "device-side assert triggered"));
        assert!(v.signal_patterns(i).iter().all(|p| !p.is_empty()));
    }

    #[test]
    fn a_bad_file_is_an_error_naming_it() {
        let bad = vec![(PathBuf::from("x.toml"), "[[signal]]\nid = 3\n".to_string())];
        let e = Vocabulary::from_files(bad).unwrap_err().to_string();
        assert!(e.starts_with("x.toml:"), "{e}");
        let bad = vec![(
            PathBuf::from("y.toml"),
            "[[signal]]\nid = \"a\"\nclass = \"nope\"\nstrength = 1\nrole = \"root\"\npatterns = [\"x\"]\n".to_string(),
        )];
        let e = Vocabulary::from_files(bad).unwrap_err().to_string();
        assert!(e.contains("unknown failure class `nope`"), "{e}");
    }
}
