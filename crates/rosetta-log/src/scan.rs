//! The one pass over the bytes. A literal automaton (Aho-Corasick) runs over
//! whole blocks of lines, so only lines holding a candidate word are ever
//! looked at; those are normalised (ANSI codes stripped, carriage-return
//! progress bars collapsed), their prefixes parsed, and retained under a
//! memory budget, with indented continuation lines (traceback frames and
//! code) kept beside them. Serving-loop lines (`Decode batch`, vLLM's
//! throughput line) take a fast path that only counts them. Big blocks are
//! split at line boundaries and scanned on several threads.
//!
//! This module decides which lines are kept; it does not interpret them
//! (`events` does).

use crate::prefix::{self, Prefix};
use crate::scan_words::{scan_words, ScanWords, WordSources, KIND_CONTEXT, KIND_ERROR};
use crate::vocab::Vocabulary;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Lines longer than this are cut (the rest still counts as part of the line).
pub const MAX_LINE: usize = 64 * 1024;
/// Bytes read per block.
const BLOCK: usize = 8 << 20;
/// The first block's size: the buffer doubles up to `BLOCK` while the input fills it, so a
/// small log does not zero (and fault in) 8 MiB it never uses.
const FIRST_BLOCK: usize = 64 << 10;
/// Bytes kept from each end of a line longer than `MAX_LINE`.
const LONG_KEEP: usize = MAX_LINE / 2 - 8;

/// Why reading stopped, in words: a decoder's early end (its message is often a debug dump of
/// nested errors) is a truncated file.
fn read_error_words(e: &std::io::Error) -> String {
    let text = e.to_string();
    let early = e.kind() == std::io::ErrorKind::UnexpectedEof
        || text.contains("UnexpectedEof")
        || text.contains("failed to fill whole buffer")
        || text.to_ascii_lowercase().contains("incomplete");
    if early {
        "the compressed stream ends early: the file is truncated".to_string()
    } else {
        text.lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect()
    }
}

/// What one `fill` read.
struct Filled {
    bytes: usize,
    error: Option<String>,
}

/// Reads into `buf[from..]` until it is full or the input ends (`eof` set); a read error ends
/// the input too, and is returned in words.
fn fill(reader: &mut dyn Read, buf: &mut [u8], from: usize, eof: &mut bool) -> Filled {
    let mut at = from;
    let mut error = None;
    while at < buf.len() && !*eof {
        match reader.read(&mut buf[at..]) {
            Ok(0) => *eof = true,
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                error = Some(read_error_words(&e));
                *eof = true;
            }
        }
    }
    Filled {
        bytes: at - from,
        error,
    }
}

/// Appends `bytes` to `tail`, keeping only its last `LONG_KEEP` bytes.
fn keep_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    let bytes = &bytes[bytes.len().saturating_sub(LONG_KEEP)..];
    tail.extend_from_slice(bytes);
    if tail.len() > LONG_KEEP {
        tail.drain(..tail.len() - LONG_KEEP);
    }
}
/// Examples of one template kept per worker; later ones are only counted.
const KEEP_PER_TEMPLATE: u32 = 48;
/// Latest examples of one template kept per worker beyond the first ones: a restart loop
/// repeats the same lines, and the last run, the one diagnosed, must keep its own.
const KEEP_LAST_PER_TEMPLATE: usize = 48;
/// Budget of retained text, across the whole run.
const RETAIN_BUDGET: usize = 96 << 20;
/// Distinct templates tracked before new ones are only counted as "other".
const MAX_TEMPLATES: usize = 200_000;
/// Bytes a scanner reads with its quick-to-build automaton before it builds the
/// faster one: building the DFA costs about as long as the NFA takes over this
/// much more text, and most logs are far smaller (the DFA was half of start-up).
const DFA_AFTER: u64 = 32 << 20;
/// Longest run of continuation lines kept after one retained line.
const MAX_CONTINUATION: usize = 400;

/// What one hit word says about its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HitKind {
    Serving(usize),
    Error,
    Context,
}

impl HitKind {
    /// The kind a code of `scan_words` stands for.
    fn of(code: u32) -> HitKind {
        match code {
            KIND_ERROR => HitKind::Error,
            KIND_CONTEXT => HitKind::Context,
            i => HitKind::Serving(i as usize),
        }
    }
}

/// Counts of serving-loop lines (fast path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServingStats {
    /// Per kind (`Decode batch`, `Prefill batch`, throughput): count, first and last line.
    pub kinds: [(u64, u64, u64); 3],
}

impl ServingStats {
    fn note(&mut self, kind: usize, line: u64) {
        let k = &mut self.kinds[kind];
        if k.0 == 0 {
            k.1 = line;
        }
        k.0 += 1;
        k.2 = line;
    }

    fn merge(&mut self, other: &ServingStats, offset: u64) {
        for (i, o) in other.kinds.iter().enumerate() {
            if o.0 == 0 {
                continue;
            }
            let k = &mut self.kinds[i];
            if k.0 == 0 {
                k.1 = o.1 + offset;
            }
            k.0 += o.0;
            k.2 = o.2 + offset;
        }
    }

    /// Decode-batch lines: (count, first line, last line).
    pub fn decode(&self) -> (u64, u64, u64) {
        self.kinds[0]
    }
    /// Prefill-batch lines: (count, first line, last line).
    pub fn prefill(&self) -> (u64, u64, u64) {
        self.kinds[1]
    }
    /// vLLM throughput lines: (count, first line, last line).
    pub fn throughput(&self) -> (u64, u64, u64) {
        self.kinds[2]
    }
}

/// How often one message shape occurred.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateStat {
    /// Occurrences.
    pub count: u64,
    /// First line (1-based).
    pub first_line: u64,
    /// Ranks it was seen on (capped at 1024 distinct).
    pub ranks: Vec<u32>,
    /// The first occurrence's message.
    pub example: String,
    /// The first occurrence's level.
    pub level: Option<prefix::Level>,
}

/// One retained line.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Which input file (index into the inputs).
    pub source: usize,
    /// 1-based line number in its file.
    pub line: u64,
    /// The normalised text (ANSI stripped, progress bars collapsed, cut at `MAX_LINE`).
    pub text: String,
    /// Its parsed prefix.
    pub prefix: Prefix,
    /// The template it belongs to.
    pub template: u64,
    /// The line held an error word.
    pub errorish: bool,
    /// The line was cut at `MAX_LINE`.
    pub truncated: bool,
}

impl Record {
    /// The message after the prefix.
    pub fn message(&self) -> &str {
        self.text.get(self.prefix.msg_start..).unwrap_or("")
    }
}

/// What scanning one source produced.
#[derive(Debug, Default)]
pub struct ScanOutput {
    /// Lines in the source.
    pub lines: u64,
    /// Decoded bytes.
    pub bytes: u64,
    /// Retained lines, in order.
    pub records: Vec<Record>,
    /// Serving-loop line counts.
    pub serving: ServingStats,
    /// Message shapes with counts.
    pub templates: HashMap<u64, TemplateStat>,
    /// Lines not retained because the budget ran out.
    pub dropped: u64,
    /// Reading stopped early (truncated compressed stream, I/O error): why.
    pub read_error: Option<String>,
    /// The last non-empty lines (up to 20), oldest first: (line number, normalised text).
    pub tail: Vec<(u64, String)>,
    /// The first non-empty lines (up to `HEAD_LINES`, each cut at 512 bytes), where a
    /// pasted report says in words what it was doing; the scanner keeps no line for its
    /// prose alone.
    pub head: Vec<(u64, String)>,
    /// Per template, its first examples kept so far, over all blocks and pieces.
    kept: HashMap<u64, u32>,
    /// Per template, its latest examples beyond the first ones, over all blocks and pieces;
    /// they join `records` when the source ends.
    latest: HashMap<u64, VecDeque<Record>>,
}

/// How many first lines of a source `ScanOutput::head` keeps.
pub const HEAD_LINES: usize = 200;

/// The compiled scanner; cheap to share across threads.
pub struct Scanner {
    /// The literal automaton as a contiguous NFA: quick to build.
    ac: AhoCorasick,
    /// The same patterns as a DFA (same matches, faster on big inputs), built
    /// once `DFA_AFTER` bytes have been scanned, with the error words' DFA beside it;
    /// shared by `fresh` copies.
    dfa: Arc<OnceLock<(AhoCorasick, AhoCorasick)>>,
    words: Words,
    scanned: AtomicU64,
    /// The words that make a kept line an error line, as a contiguous NFA.
    errors: AhoCorasick,
    retained: AtomicUsize,
}

/// Maps keyed by a value that is already a hash (a template key, a line shape) or packed
/// bytes: one multiply spreads the key, where the default hasher would run SipHash on
/// every candidate line of a big log.
type Packed = std::hash::BuildHasherDefault<PackedHasher>;

/// A hasher for keys that are already packed bytes: one multiply spreads them.
#[derive(Default)]
struct PackedHasher(u64);

impl std::hash::Hasher for PackedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The scanner's word lists (`scan_words`): the built-in ones, worked out at build time, or
/// lists worked out at start-up (with `--kb` folders).
#[derive(Clone)]
enum Words {
    Built {
        pats: &'static [&'static str],
        kinds: &'static [u32],
        errors: &'static [&'static str],
    },
    Worked(Arc<ScanWords>),
}

impl Words {
    /// What a hit on word `i` means (`scan_words::KIND_*`, else a serving word).
    fn kind(&self, i: usize) -> HitKind {
        HitKind::of(match self {
            Words::Built { kinds, .. } => kinds[i],
            Words::Worked(w) => w.kinds[i],
        })
    }

    /// The automatons of the given kind: all words (leftmost-first), the error words (any
    /// match: they are only asked whether a line holds one).
    fn automata(&self, kind: aho_corasick::AhoCorasickKind) -> (AhoCorasick, AhoCorasick) {
        let errors = |words: &[&str]| {
            let mut b = AhoCorasickBuilder::new();
            if kind == aho_corasick::AhoCorasickKind::DFA {
                b.match_kind(MatchKind::LeftmostFirst);
            }
            b.kind(Some(kind))
                .build(words)
                .unwrap_or_else(|_| AhoCorasick::new(["rror"]).expect("static pattern builds"))
        };
        match self {
            Words::Built {
                pats, errors: e, ..
            } => (automaton(pats, kind), errors(e)),
            Words::Worked(w) => {
                let pats: Vec<&str> = w.pats.iter().map(String::as_str).collect();
                let errs: Vec<&str> = w.error_words.iter().map(String::as_str).collect();
                (automaton(&pats, kind), errors(&errs))
            }
        }
    }
}

/// The scanner's literal automaton, leftmost-first, of the given kind.
fn automaton(pats: &[&str], kind: aho_corasick::AhoCorasickKind) -> AhoCorasick {
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostFirst)
        .kind(Some(kind))
        .build(pats)
        .unwrap_or_else(|_| AhoCorasick::new(["Decode batch"]).expect("static pattern builds"))
}

impl Scanner {
    /// Builds the scanner; `extra` literals (from the knowledge base's line
    /// patterns) make more lines worth keeping. Its word lists are worked out here; the
    /// built-in ones are worked out at build time (`Scanner::from_lists`, through
    /// `rosetta-kb`).
    pub fn new(voc: &Vocabulary, extra: &[String]) -> Scanner {
        let words = scan_words(&WordSources {
            serving: &voc.scanner_serving,
            errors: &voc.scanner_errors,
            signal_words: &voc.signal_literals(),
            context: &voc.scanner_context,
            milestone_words: &voc.milestone_literals(),
            extra,
        });
        Scanner::with_words(Words::Worked(Arc::new(words)))
    }

    /// Builds the scanner from word lists worked out beforehand (`scan_words::scan_words`):
    /// the automaton's words, their kinds, and the error words.
    pub fn from_lists(
        pats: &'static [&'static str],
        kinds: &'static [u32],
        error_words: &'static [&'static str],
    ) -> Scanner {
        debug_assert_eq!(pats.len(), kinds.len());
        Scanner::with_words(Words::Built {
            pats,
            kinds,
            errors: error_words,
        })
    }

    fn with_words(words: Words) -> Scanner {
        let (ac, errors) = words.automata(aho_corasick::AhoCorasickKind::ContiguousNFA);
        Scanner {
            ac,
            dfa: Arc::new(OnceLock::new()),
            words,
            scanned: AtomicU64::new(0),
            errors,
            retained: AtomicUsize::new(0),
        }
    }

    /// The automatons (all words, error words) for the next `len` bytes: the NFAs until
    /// the scanner has read `DFA_AFTER` bytes, then the DFAs (both find the same matches).
    fn automata(&self, len: usize) -> (&AhoCorasick, &AhoCorasick) {
        let before = self.scanned.fetch_add(len as u64, Ordering::Relaxed);
        if before + len as u64 <= DFA_AFTER {
            return (&self.ac, &self.errors);
        }
        let (ac, errors) = self
            .dfa
            .get_or_init(|| self.words.automata(aho_corasick::AhoCorasickKind::DFA));
        (ac, errors)
    }

    /// The same scanner with its own retained-text budget, for a run of its own
    /// (`diagnose --each` diagnoses each input as if it were alone); the
    /// automatons are shared, not rebuilt.
    pub fn fresh(&self) -> Scanner {
        Scanner {
            ac: self.ac.clone(),
            dfa: Arc::clone(&self.dfa),
            words: self.words.clone(),
            scanned: AtomicU64::new(0),
            errors: self.errors.clone(),
            retained: AtomicUsize::new(0),
        }
    }

    /// Scans a whole source whose reading is a copy (a file, a pipe): each block is read,
    /// then scanned on every core.
    pub fn scan_reader(&self, source: usize, reader: &mut dyn Read) -> ScanOutput {
        self.scan(source, reader, false)
    }

    /// Scans a whole source whose reading is work of its own (decompressing gzip or zstd):
    /// the next block is decoded on this thread while the last one is scanned. On a plain
    /// file the same overlap was slower (a 1.1 GB log on 2 cores: 1.0 s against 0.88 s,
    /// the copy competing with the scan's threads); on gzip it hides the decoding (0.44 s
    /// against 0.62 s for 300 MB).
    pub fn scan_decoded(&self, source: usize, reader: &mut dyn Read) -> ScanOutput {
        self.scan(source, reader, true)
    }

    fn scan(&self, source: usize, reader: &mut dyn Read, overlap: bool) -> ScanOutput {
        let mut out = ScanOutput::default();
        // One fixed buffer: bytes [0, filled) are read and not yet scanned.
        let mut buf: Vec<u8> = vec![0; FIRST_BLOCK];
        let mut filled = 0usize;
        let mut skipping_long = false;
        // An over-long line keeps its head and its tail (where a progress bar's last state
        // or the error that ends it is); the middle is skipped.
        let mut long_head: Vec<u8> = Vec::new();
        let mut long_tail: Vec<u8> = Vec::new();
        let mut eof = false;
        // The next block is read into `spare` while this one is scanned.
        let mut spare: Vec<u8> = Vec::new();
        loop {
            loop {
                let read = fill(reader, &mut buf, filled, &mut eof);
                filled += read.bytes;
                out.bytes += read.bytes as u64;
                if read.error.is_some() {
                    out.read_error = read.error;
                }
                if eof || filled < buf.len() || buf.len() >= BLOCK {
                    break;
                }
                buf.resize((2 * buf.len()).min(BLOCK), 0);
            }
            if skipping_long {
                let nl = memchr::memchr(b'\n', &buf[..filled]);
                keep_tail(&mut long_tail, &buf[..nl.unwrap_or(filled)]);
                match nl {
                    Some(nl) => {
                        buf.copy_within(nl + 1..filled, 0);
                        filled -= nl + 1;
                        skipping_long = false;
                        self.scan_long_line(source, &long_head, &long_tail, &mut out);
                    }
                    None => {
                        filled = 0;
                        if eof {
                            self.scan_long_line(source, &long_head, &long_tail, &mut out);
                            break;
                        }
                        continue;
                    }
                }
            }
            if eof {
                if filled > 0 {
                    buf.truncate(filled);
                    if buf.last() != Some(&b'\n') {
                        buf.push(b'\n');
                    }
                    self.scan_block(source, &buf, &mut out);
                }
                break;
            }
            match split_point(&buf[..filled]) {
                Some(end) if !overlap => {
                    self.scan_block(source, &buf[..end], &mut out);
                    buf.copy_within(end..filled, 0);
                    filled -= end;
                }
                Some(end) => {
                    // The unfinished last line starts the next block, which is read while
                    // this block's complete lines are scanned (reading is a copy the kernel
                    // makes on this thread; scanning keeps the other cores busy).
                    spare.resize(buf.len(), 0);
                    let rest = filled - end;
                    spare[..rest].copy_from_slice(&buf[end..filled]);
                    let read = std::thread::scope(|s| {
                        let block = &buf[..end];
                        let out = &mut out;
                        s.spawn(move || self.scan_block(source, block, out));
                        fill(reader, &mut spare, rest, &mut eof)
                    });
                    std::mem::swap(&mut buf, &mut spare);
                    filled = rest + read.bytes;
                    out.bytes += read.bytes as u64;
                    if read.error.is_some() {
                        out.read_error = read.error;
                    }
                }
                None => {
                    // One line longer than a block: keep its head and, once its end is
                    // read, its tail; skip the middle.
                    long_head = buf[..LONG_KEEP.min(filled)].to_vec();
                    long_tail.clear();
                    keep_tail(&mut long_tail, &buf[LONG_KEEP.min(filled)..filled]);
                    filled = 0;
                    skipping_long = true;
                }
            }
        }
        if !out.latest.is_empty() {
            for (_, ring) in out.latest.drain() {
                out.records.extend(ring);
            }
            out.records.sort_by_key(|r| r.line);
        }
        out
    }

    /// Scans an over-long line from its head and tail, marked as cut.
    fn scan_long_line(&self, source: usize, head: &[u8], tail: &[u8], out: &mut ScanOutput) {
        let mut line = Vec::with_capacity(head.len() + tail.len() + 8);
        line.extend_from_slice(head);
        line.extend_from_slice(" \u{2026} ".as_bytes());
        line.extend_from_slice(tail);
        line.push(b'\n');
        let before = out.lines;
        self.scan_block(source, &line, out);
        // The line's record is the last one kept, or the newest of its template's latest.
        let newest = out.latest.values_mut().filter_map(|ring| ring.back_mut());
        if let Some(r) = out
            .records
            .last_mut()
            .into_iter()
            .chain(newest)
            .find(|r| r.line == before + 1)
        {
            r.truncated = true;
        }
    }

    /// Scans a block of complete lines, in parallel when it is big.
    fn scan_block(&self, source: usize, block: &[u8], out: &mut ScanOutput) {
        if out.lines == 0 {
            let mut no = 0u64;
            for line in block.split(|&b| b == b'\n') {
                no += 1;
                if out.head.len() >= HEAD_LINES || no > 4 * HEAD_LINES as u64 {
                    break;
                }
                if line.iter().any(|b| !b.is_ascii_whitespace()) {
                    let (text, _) = normalize(&line[..line.len().min(512)]);
                    out.head.push((no, text));
                }
            }
        }
        self.scan_block_lines(source, block, out);
        // Remember the block's last non-empty lines (how a log ends says whether it stopped mid-way).
        let trimmed = block.strip_suffix(b"\n").unwrap_or(block);
        let mut end = trimmed.len();
        let mut back = 0u64;
        let mut tail = Vec::new();
        while end > 0 && tail.len() < 20 && back < 200 {
            let start = memchr::memrchr(b'\n', &trimmed[..end]).map_or(0, |i| i + 1);
            let line = &trimmed[start..end];
            if line.iter().any(|b| !b.is_ascii_whitespace()) {
                let (text, _) = normalize(&line[..line.len().min(4096)]);
                tail.push((out.lines - back, text));
            }
            if start == 0 {
                break;
            }
            end = start - 1;
            back += 1;
        }
        if !tail.is_empty() {
            tail.reverse();
            out.tail = tail;
        }
    }

    fn scan_block_lines(&self, source: usize, block: &[u8], out: &mut ScanOutput) {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let pieces = if block.len() >= (2 << 20) && threads > 1 {
            split_even(block, threads)
        } else {
            vec![(0, block.len())]
        };
        let results: Vec<Piece> = if pieces.len() == 1 {
            vec![self.scan_piece(source, &block[..pieces[0].1])]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = pieces
                    .iter()
                    .map(|&(a, b)| s.spawn(move || self.scan_piece(source, &block[a..b])))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        };
        for piece in results {
            let offset = out.lines;
            // Each piece keeps a template's first and latest examples of its own; over the
            // whole source, only the first ones of all and the latest ones of all stay, as
            // if it were one piece (so what is kept does not depend on the block size or the
            // number of cores, and the facts are not built from thousands of repeats).
            for mut r in piece.records {
                r.line += offset;
                let kept = out.kept.entry(r.template).or_insert(0);
                if *kept < KEEP_PER_TEMPLATE {
                    *kept += 1;
                    out.records.push(r);
                    continue;
                }
                let ring = out.latest.entry(r.template).or_default();
                if ring.len() == KEEP_LAST_PER_TEMPLATE {
                    if let Some(old) = ring.pop_front() {
                        let size = old.text.len();
                        let _ =
                            self.retained
                                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                                    Some(u.saturating_sub(size))
                                });
                        out.dropped += 1;
                    }
                }
                ring.push_back(r);
            }
            out.serving.merge(&piece.serving, offset);
            for (k, mut t) in piece.templates {
                t.first_line += offset;
                if let Some(have) = out.templates.get_mut(&k) {
                    have.count += t.count;
                    for r in t.ranks {
                        if have.ranks.len() < 1024 && !have.ranks.contains(&r) {
                            have.ranks.push(r);
                        }
                    }
                } else if out.templates.len() < MAX_TEMPLATES {
                    out.templates.insert(k, t);
                }
            }
            out.dropped += piece.dropped;
            out.lines += piece.lines;
        }
    }

    /// Scans one piece of a log: finds each word hit, counts serving lines, keeps the hit
    /// line with its continuation and context lines, and counts the newlines in between.
    ///
    /// Long because it is one pass with one cursor (the line number and how far newlines
    /// are counted) that the hit, its continuation lines and the skipped bytes all move;
    /// split, that cursor and the piece's maps would pass through every call on the hot
    /// path of a gigabyte log.
    fn scan_piece(&self, source: usize, data: &[u8]) -> Piece {
        let mut p = Piece::default();
        let mut kept_per_template: HashMap<u64, u32, Packed> = HashMap::default();
        let mut pos = 0usize; // search position
        let mut counted_to = 0usize; // newlines counted in data[..counted_to]
        let mut line_no = 0u64; // 0-based line number of the line starting at counted_to
        let (ac, errors) = self.automata(data.len());
        while pos < data.len() {
            let Some(m) = ac.find(aho_corasick::Input::new(data).span(pos..data.len())) else {
                break;
            };
            let hit = m.start();
            let line_start = memchr::memrchr(b'\n', &data[..hit]).map_or(0, |i| i + 1);
            let line_end = memchr::memchr(b'\n', &data[hit..]).map_or(data.len(), |i| hit + i);
            line_no += count_newlines(&data[counted_to..line_start]);
            counted_to = line_start;
            let kind = self.words.kind(m.pattern().as_usize());
            if let HitKind::Serving(k) = kind {
                p.serving.note(k, line_no + 1);
                // The line is consumed whole: the next one starts after its newline, so
                // its bytes need not be counted again.
                if line_end < data.len() {
                    line_no += 1;
                    counted_to = line_end + 1;
                }
            } else {
                let errorish = kind == HitKind::Error;
                let decided = self.keep(
                    source,
                    data,
                    (line_start, line_end),
                    line_no + 1,
                    (errorish, errors),
                    &mut p,
                    &mut kept_per_template,
                );
                // Indented continuation lines (frames, code, carets) and, after
                // an error line, one more line of context.
                let mut next = line_end + 1;
                // Whether the hit line is an error line, searched for only when a
                // context line would hang on it.
                let mut extra_ctx = decided;
                let hit_line = &data[line_start..line_end];
                let mut n = 0;
                while next < data.len() && n < MAX_CONTINUATION {
                    let end = memchr::memchr(b'\n', &data[next..]).map_or(data.len(), |i| next + i);
                    let line = &data[next..end];
                    let cont = is_continuation(line);
                    // A context line that holds a word of its own is left to the main loop.
                    let context_line = extra_ctx != Some(false)
                        && !line.is_empty()
                        && !ac.is_match(line)
                        && *extra_ctx.get_or_insert_with(|| errors.is_match(hit_line));
                    if !(cont || context_line) {
                        break;
                    }
                    if !cont {
                        extra_ctx = Some(false);
                    }
                    line_no += 1;
                    counted_to = next;
                    self.keep(
                        source,
                        data,
                        (next, end),
                        line_no + 1,
                        (false, errors),
                        &mut p,
                        &mut kept_per_template,
                    );
                    next = end + 1;
                    n += 1;
                }
                // The last line taken is consumed whole (as above).
                if next <= data.len() {
                    line_no += 1;
                    counted_to = next;
                }
                pos = next.min(data.len());
                continue;
            }
            pos = line_end + 1;
        }
        line_no += count_newlines(&data[counted_to..]);
        p.lines = line_no;
        if !p.latest.is_empty() {
            for (_, ring) in p.latest.drain() {
                p.records
                    .extend(ring.into_iter().map(|l| l.record(source, data, errors)));
            }
            p.records.sort_by_key(|r| r.line);
        }
        p
    }

    /// Counts one candidate line under its template and retains it while the
    /// template's first examples and the budget allow; beyond them, the line
    /// may join its template's ring of latest examples, held as a byte range
    /// and made text only when the piece ends (most lines of a big log that
    /// reach here are repeats, and building their text would be the scan's
    /// main cost). Whether the line is an error line is the hit word's kind or, failing
    /// that, a search for an error word: on a repeat bound for the ring that search waits
    /// until the piece ends, when only the ring's lines are left. Returns whether the line
    /// is an error line, or `None` where that was left undecided.
    ///
    /// Long because its steps share the line's text, prefix and template, each made once
    /// and only when the line is not a known repeat: the fast path for repeats comes first,
    /// then counting, then keeping, in the order that spends least on a big log's repeats.
    #[allow(clippy::too_many_arguments)]
    fn keep(
        &self,
        source: usize,
        data: &[u8],
        (start, end): (usize, usize),
        line: u64,
        (hit_error, errors): (bool, &AhoCorasick),
        p: &mut Piece,
        kept: &mut HashMap<u64, u32, Packed>,
    ) -> Option<bool> {
        let raw = &data[start..end];
        let shape = raw_shape(raw);
        // A repeat of a line shape whose first examples are kept needs no text: its
        // template and size are known from the shape alone.
        if let Some(template) = shape.and_then(|k| p.shapes.get(&k).copied()) {
            if kept.get(&template).is_some_and(|&k| k >= KEEP_PER_TEMPLATE) {
                if let Some(t) = p.templates.get_mut(&template) {
                    t.count += 1;
                    let k = kept.entry(template).or_insert(0);
                    *k += 1;
                    let used = self.retained.load(Ordering::Relaxed);
                    self.keep_latest(p, (start, end), line, template, hit_error, used, raw.len());
                    return hit_error.then_some(true);
                }
            }
        }
        let errorish = hit_error || errors.is_match(raw);
        let (text, truncated) = normalize_cow(raw);
        let prefix = prefix::parse(&text);
        let msg = text.get(prefix.msg_start..).unwrap_or("");
        let template = template_key(msg);
        let rank = prefix.effective_rank();
        // The shape stands for its template only when the text is the bytes as they are
        // (normalising depends on the shape alone) and no rank is read from the digits.
        if let Some(k) = shape {
            if rank.is_none() && matches!(text, Cow::Borrowed(_)) && p.shapes.len() < MAX_SHAPES {
                p.shapes.insert(k, template);
            }
        }
        match p.templates.get_mut(&template) {
            Some(t) => {
                t.count += 1;
                if let Some(r) = rank {
                    if t.ranks.len() < 1024 && !t.ranks.contains(&r) {
                        t.ranks.push(r);
                    }
                }
            }
            None => {
                if p.templates.len() >= MAX_TEMPLATES {
                    self.count_only(p);
                    return Some(errorish);
                }
                p.templates.insert(
                    template,
                    TemplateStat {
                        count: 1,
                        first_line: line,
                        ranks: rank.into_iter().collect(),
                        example: msg.chars().take(2000).collect(),
                        level: prefix.level,
                    },
                );
            }
        }
        let k = kept.entry(template).or_insert(0);
        *k += 1;
        let size = text.len();
        let used = self.retained.load(Ordering::Relaxed);
        let first_of_kind = *k == 1;
        let within = *k <= KEEP_PER_TEMPLATE && used + size <= RETAIN_BUDGET;
        // Past the budget, still keep the first example of each error shape.
        let over_but_new = first_of_kind && errorish && used + size <= 2 * RETAIN_BUDGET;
        if within || over_but_new {
            self.retained.fetch_add(size, Ordering::Relaxed);
            p.records.push(Record {
                source,
                line,
                text: text.into_owned(),
                prefix,
                template,
                errorish,
                truncated,
            });
        } else if *k > KEEP_PER_TEMPLATE {
            self.keep_latest(p, (start, end), line, template, errorish, used, size);
        } else {
            p.dropped += 1;
        }
        Some(errorish)
    }

    /// Beyond a template's first examples, the line joins its ring of latest ones (as
    /// a byte range, made text when the piece ends) while the budget allows.
    #[allow(clippy::too_many_arguments)]
    fn keep_latest(
        &self,
        p: &mut Piece,
        range: (usize, usize),
        line: u64,
        template: u64,
        errorish: bool,
        used: usize,
        size: usize,
    ) {
        if used + size > RETAIN_BUDGET {
            p.dropped += 1;
            return;
        }
        let ring = p.latest.entry(template).or_default();
        // A full ring swaps its oldest line for this one: the budget moves by the difference
        // only (the counter is shared by the threads, and a repeat is often the same size).
        let freed = if ring.len() == KEEP_LAST_PER_TEMPLATE {
            p.dropped += 1;
            ring.pop_front().map_or(0, |old| old.size)
        } else {
            0
        };
        if size > freed {
            self.retained.fetch_add(size - freed, Ordering::Relaxed);
        } else if freed > size {
            self.retained.fetch_sub(freed - size, Ordering::Relaxed);
        }
        ring.push_back(Latest {
            line,
            range,
            size,
            template,
            errorish,
        });
    }
}

/// Line shapes remembered per worker (beyond them, lines take the full path).
const MAX_SHAPES: usize = 50_000;

/// A short line of printable ASCII, hashed with each run of digits replaced by its length:
/// two lines of one shape differ only in the values of their numbers, so they parse to the
/// same prefix (less any rank, which is read from the digits) and the same template.
/// `None` for other lines (control bytes, non-ASCII, long), which take the full path.
fn raw_shape(raw: &[u8]) -> Option<u64> {
    if raw.len() > 400 {
        return None;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut run = 0u64;
    let mut put = |c: u64| {
        h ^= c;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    for &b in raw {
        if b.is_ascii_digit() {
            run += 1;
            continue;
        }
        if !(b == b'\t' || (0x20..0x7f).contains(&b)) {
            return None;
        }
        if run > 0 {
            put(0x100 + run);
            run = 0;
        }
        put(u64::from(b));
    }
    if run > 0 {
        put(0x100 + run);
    }
    Some(h)
}

impl Scanner {
    fn count_only(&self, p: &mut Piece) {
        p.dropped += 1;
    }
}

#[derive(Default)]
struct Piece {
    lines: u64,
    records: Vec<Record>,
    /// The latest examples of templates seen more than `KEEP_PER_TEMPLATE` times.
    latest: HashMap<u64, std::collections::VecDeque<Latest>, Packed>,
    serving: ServingStats,
    templates: HashMap<u64, TemplateStat, Packed>,
    /// Line shapes (`raw_shape`) whose template is known.
    shapes: HashMap<u64, u64, Packed>,
    dropped: u64,
}

/// A line in a template's ring of latest examples, before it is made text.
struct Latest {
    line: u64,
    range: (usize, usize),
    size: usize,
    template: u64,
    /// The hit word was an error word; otherwise the line is searched when made text.
    errorish: bool,
}

impl Latest {
    fn record(self, source: usize, data: &[u8], errors: &AhoCorasick) -> Record {
        let raw = &data[self.range.0..self.range.1];
        let errorish = self.errorish || errors.is_match(raw);
        let (text, truncated) = normalize(raw);
        let prefix = prefix::parse(&text);
        Record {
            source,
            line: self.line,
            text,
            prefix,
            template: self.template,
            errorish,
            truncated,
        }
    }
}

fn count_newlines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

/// A line that continues the one before: indented (frames, code), carets,
/// or the same behind a `[rankN]:` tag.
fn is_continuation(line: &[u8]) -> bool {
    let body = if line.starts_with(b"[rank") {
        match memchr::memchr(b']', line) {
            Some(i) if line.get(i + 1) == Some(&b':') => &line[i + 2..],
            _ => line,
        }
    } else {
        line
    };
    // `rich` (and IPython-style boxes) draw a traceback inside a box: every line of it opens
    // with the box's vertical bar.
    let boxed = body.starts_with("│".as_bytes()) && body.len() > 4;
    boxed
        || (matches!(body.first(), Some(b' ') | Some(b'\t'))
            && body.iter().any(|b| !b.is_ascii_whitespace()))
}

/// Where to cut a buffer so that the kept part ends a line and the next
/// line does not continue it: the last newline followed by a non-indented line.
fn split_point(buf: &[u8]) -> Option<usize> {
    let last = memchr::memrchr(b'\n', buf)?;
    let mut end = last;
    // Walk back over newlines whose next line is indented, a bounded number of times.
    for _ in 0..MAX_CONTINUATION {
        let next = buf.get(end + 1).copied();
        if next.is_none() || !matches!(next, Some(b' ') | Some(b'\t')) {
            return Some(end + 1);
        }
        match memchr::memrchr(b'\n', &buf[..end]) {
            Some(p) => end = p,
            None => return Some(last + 1),
        }
    }
    Some(last + 1)
}

/// Splits a block of whole lines into `n` pieces at line starts that do not continue the line before.
fn split_even(block: &[u8], n: usize) -> Vec<(usize, usize)> {
    let mut cuts = vec![0usize];
    for i in 1..n {
        let target = block.len() * i / n;
        let prev = *cuts.last().unwrap_or(&0);
        if target <= prev {
            continue;
        }
        let cut = split_point(&block[..target]).unwrap_or(prev);
        if cut > prev && cut < block.len() {
            cuts.push(cut);
        }
    }
    let mut out = Vec::new();
    for (i, &a) in cuts.iter().enumerate() {
        let b = cuts.get(i + 1).copied().unwrap_or(block.len());
        if b > a {
            out.push((a, b));
        }
    }
    out
}

/// Bytes of one line to text: lossy UTF-8, ANSI escapes removed, a carriage
/// return progress bar reduced to its last state, cut at `MAX_LINE`.
pub fn normalize(raw: &[u8]) -> (String, bool) {
    let (text, truncated) = normalize_cow(raw);
    (text.into_owned(), truncated)
}

/// `normalize`, borrowing the bytes when they are already clean text (the
/// common case: no allocation).
fn normalize_cow(raw: &[u8]) -> (Cow<'_, str>, bool) {
    if raw.len() > MAX_LINE {
        // A line over the cap keeps its head and its tail: the end of a long line is where a
        // progress bar's last state, or the error that closes it, is.
        let mut v = Vec::with_capacity(2 * LONG_KEEP + 8);
        v.extend_from_slice(&raw[..LONG_KEEP]);
        v.extend_from_slice(" \u{2026} ".as_bytes());
        v.extend_from_slice(&raw[raw.len() - LONG_KEEP..]);
        let (text, _) = normalize_cow(&v);
        return (Cow::Owned(text.into_owned()), true);
    }
    let mut raw = raw;
    if raw.last() == Some(&b'\r') {
        raw = &raw[..raw.len() - 1];
    }
    // Progress bars rewrite the line with `\r`: keep the last non-empty state.
    if let Some(i) = memchr::memrchr(b'\r', raw) {
        let tail = &raw[i + 1..];
        if tail.iter().any(|b| !b.is_ascii_whitespace()) {
            raw = tail;
        } else {
            let head = &raw[..i];
            let j = memchr::memrchr(b'\r', head).map_or(0, |j| j + 1);
            raw = &head[j..];
        }
    }
    let text = String::from_utf8_lossy(raw);
    let text = if text.contains('\x1b') {
        Cow::Owned(strip_ansi(&text))
    } else {
        text
    };
    // The same codes pasted in caret notation, ESC written `^[` (`cat -v`, `less`, some
    // terminals' copy): `^[[1;36m(EngineCore_2 pid=304)^[[0;0m ERROR ...`.
    let text = if memchr::memchr(b'^', text.as_bytes()).is_some() && text.contains("^[[") {
        Cow::Owned(strip_ansi(&text.replace("^[[", "\x1b[")))
    } else {
        text
    };
    // Colour codes whose ESC byte was lost when the log was pasted.
    let text = if text.starts_with('[') && bare_code_len(&text).is_some() {
        Cow::Owned(strip_bare_colour(&text))
    } else {
        text
    };
    // A log copied from a web page may carry no-break spaces (U+00A0) where the program
    // printed spaces (`TypeError:\u{a0}EngineArgs...`): words are read across them.
    let text = if memchr::memmem::find(text.as_bytes(), "\u{a0}".as_bytes()).is_some() {
        Cow::Owned(text.replace('\u{a0}', " "))
    } else {
        text
    };
    (text, false)
}

/// Removes `[1;36m`-style colour codes that lost their ESC, at the start of a line
/// and right around a process tag.
fn strip_bare_colour(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut stripped_any = false;
    while let Some(code_len) = bare_code_len(rest) {
        rest = &rest[code_len..];
        stripped_any = true;
        // a tag like `(Worker pid=1)` may sit between two codes
        if let Some(close) = rest.find(')').filter(|_| rest.starts_with('(')) {
            if bare_code_len(&rest[close + 1..]).is_some() {
                out.push_str(&rest[..=close]);
                rest = &rest[close + 1..];
            }
        }
    }
    if !stripped_any {
        return s.to_string();
    }
    out.push_str(rest);
    out
}

/// Length of a `[N;Nm` colour code at the start of `s`.
fn bare_code_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut i = 1;
    while i < b.len() && i < 9 && (b[i].is_ascii_digit() || b[i] == b';') {
        i += 1;
    }
    (i > 1 && b.get(i) == Some(&b'm')).then_some(i + 1)
}

/// Removes ANSI CSI / OSC escape sequences.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // parameters and intermediates, then one final byte @..~
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// A message's shape: digits and hex runs masked, hashed (FNV-1a over the
/// bytes of `template_text`, streamed: no allocation on the scan's hot path).
pub fn template_key(msg: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    masked(msg, |c| {
        h ^= u64::from(c);
        h = h.wrapping_mul(0x0100_0000_01b3);
    });
    h
}

/// A message with numbers masked as `#` (for grouping, not for display).
pub fn template_text(msg: &str) -> String {
    let mut out = Vec::with_capacity(msg.len().min(512));
    masked(msg, |c| out.push(c));
    String::from_utf8_lossy(&out).into_owned()
}

/// Feeds the first 512 bytes of a message's shape to `put`: a run of digits, or
/// a `0x` hex run, becomes one `#`.
fn masked(msg: &str, mut put: impl FnMut(u8)) {
    let b = msg.as_bytes();
    let mut in_num = false;
    let mut n = 0;
    let mut i = 0;
    while i < b.len() && n < 512 {
        let c = b[i];
        if c == b'0' && b.get(i + 1) == Some(&b'x') {
            put(b'#');
            n += 1;
            i += 2;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
            in_num = true;
            continue;
        }
        if c.is_ascii_digit() {
            if !in_num {
                put(b'#');
                n += 1;
                in_num = true;
            }
        } else {
            in_num = false;
            put(c);
            n += 1;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_holding_another_word_is_left_out() {
        let words = [
            "rror",
            "Error:",
            "CUDA error",
            "xception",
            "RuntimeException",
            "abc",
        ];
        // Only eligible words count, as keys and as candidates.
        let drop = crate::scan_words::contained_elsewhere(&words, |i| i != 0);
        assert_eq!(drop, [false, false, false, false, true, false]);
        let drop = crate::scan_words::contained_elsewhere(&words, |_| true);
        assert_eq!(drop, [false, true, true, false, true, false]);
        // Byte-exact: case differs, so nothing holds another.
        let drop = crate::scan_words::contained_elsewhere(&["ERROR", "error", "Error"], |_| true);
        assert_eq!(drop, [false, false, false]);
        // A word is never dropped for itself, and keys longer than 8 bytes are not looked for.
        let drop =
            crate::scan_words::contained_elsewhere(&["segmentation", "segmentation fault"], |_| {
                true
            });
        assert_eq!(drop, [false, false]);
    }

    #[test]
    fn pruning_keeps_exactly_the_lines_the_full_word_list_keeps() {
        // The same vocabulary with every word in the automaton (no pruning) keeps the same
        // lines: built here by hand from the same lists.
        let v = Vocabulary::embedded();
        let scanner = Scanner::new(v, &[]);
        let mut all: Vec<String> = v.scanner_serving.clone();
        all.extend(v.scanner_errors.iter().cloned());
        all.extend(v.signal_literals());
        all.extend(v.scanner_context.iter().cloned());
        all.extend(v.milestone_literals());
        let bytes: usize = all.iter().map(String::len).sum();
        assert!(
            match &scanner.words {
                Words::Worked(w) => w.pats.iter().map(String::len).sum::<usize>(),
                Words::Built { .. } => unreachable!("Scanner::new works its lists out"),
            } * 2
                < bytes,
            "pruning should leave out most of the automaton's bytes"
        );
        let full = AhoCorasick::new(&all).expect("builds");
        let lines = [
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "[2026-01-02 10:00:00] INFO: Load weight end. type=Glm, dtype=torch.bfloat16",
            "ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (3).",
            "a quiet line about nothing at all",
            "Decode batch. #running-req: 1, #token: 100, gen throughput (token/s): 40.0",
            "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc",
        ];
        for line in lines {
            assert_eq!(
                scanner.ac.is_match(line),
                full.is_match(line),
                "line {line:?}"
            );
        }
    }

    #[test]
    fn the_nfa_and_the_dfa_keep_the_same_lines() {
        let log = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/glm5-sm120.log"
        ))
        .unwrap();
        let nfa = Scanner::new(Vocabulary::embedded(), &[]);
        let dfa = nfa.fresh();
        dfa.scanned.store(DFA_AFTER + 1, Ordering::Relaxed);
        let a = nfa.scan_reader(0, &mut log.as_slice());
        let b = dfa.scan_reader(0, &mut log.as_slice());
        assert!(nfa.dfa.get().is_some(), "the copy built the DFA, shared");
        assert!(a.records.len() > 20);
        assert_eq!(a.records, b.records);
        assert_eq!(a.serving, b.serving);
        assert_eq!(a.lines, b.lines);
    }

    fn scan(text: &str) -> ScanOutput {
        Scanner::new(crate::Vocabulary::embedded(), &[]).scan_reader(0, &mut text.as_bytes())
    }

    /// Lines of strong signals' `fires` examples (each rewritten by `variants`, which may
    /// drop a variant) that the scanner does not keep as error lines on their own.
    fn strong_signal_lines_not_kept(variants: impl Fn(usize, &str) -> Vec<String>) -> Vec<String> {
        let v = crate::Vocabulary::embedded();
        let scanner = Scanner::new(v, &[]);
        let mut missed: Vec<String> = Vec::new();
        for e in v
            .entries
            .iter()
            .filter(|e| e.kind == crate::vocab::EntryKind::Signal)
        {
            let i = v.signal(&e.id).unwrap();
            if v.signals[i].strength < 5 {
                continue;
            }
            for line in e.fires.iter().flat_map(|l| variants(i, l)) {
                let out = scanner
                    .fresh()
                    .scan_reader(0, &mut format!("{line}\n").as_bytes());
                if !out.records.iter().any(|r| r.line == 1 && r.errorish) {
                    missed.push(format!("{}: {line}", e.id));
                }
            }
        }
        missed
    }

    #[test]
    fn every_signal_example_is_kept_as_an_error_line() {
        // The scanner looks at a line only when it holds a literal; a signal whose literals
        // were lost (an extraction that fell back to stubs) would never see its own lines.
        let missed = strong_signal_lines_not_kept(|_, line| vec![line.to_string()]);
        assert!(missed.is_empty(), "{missed:#?}");
    }

    #[test]
    fn case_insensitive_signals_keep_lines_in_any_common_case() {
        // A `(?i)` branch has no prefix literals of its own; its words in lower, capitalised
        // and upper case stand in. An example line rewritten in lower or upper case that the
        // signal still matches must still be kept, with no other error word to help.
        let v = crate::Vocabulary::embedded();
        let compiled = std::cell::RefCell::new(std::collections::HashMap::new());
        let missed = strong_signal_lines_not_kept(|i, line| {
            let mut compiled = compiled.borrow_mut();
            let re = compiled.entry(i).or_insert_with(|| {
                regex::Regex::new(&crate::literals::join_patterns(v.signal_patterns(i))).unwrap()
            });
            [line.to_lowercase(), line.to_uppercase()]
                .into_iter()
                .filter(|variant| re.is_match(variant))
                .collect()
        });
        assert!(missed.is_empty(), "{missed:#?}");
        let scanner = Scanner::new(v, &[]);
        let out = scanner.fresh().scan_reader(
            0,
            &mut "ggml was not compiled with any CUDA arch <= 750\n".as_bytes(),
        );
        assert!(out.records.iter().any(|r| r.line == 1 && r.errorish));
    }

    #[test]
    fn counts_lines_and_keeps_errors_with_their_frames() {
        let log = "hello\nworld\nTraceback (most recent call last):\n  File \"a.py\", line 3, in f\n    x = y()\nKeyError: 'type'\nbye\n";
        let out = scan(log);
        assert_eq!(out.lines, 7);
        let kept: Vec<u64> = out.records.iter().map(|r| r.line).collect();
        assert_eq!(kept, vec![3, 4, 5, 6, 7]);
        assert_eq!(out.records[2].text, "    x = y()");
    }

    #[test]
    fn serving_lines_are_counted_not_kept() {
        let mut log = String::new();
        for i in 0..100 {
            log.push_str(&format!(
                "[2026-01-01 00:00:{:02} TP0] Decode batch, #running-req: {i}, cuda graph: True\n",
                i % 60
            ));
        }
        let out = scan(&log);
        assert_eq!(out.serving.decode(), (100, 1, 100));
        assert!(out.records.is_empty());
    }

    #[test]
    fn no_break_spaces_from_a_web_page_are_spaces() {
        let (t, _) =
            normalize("TypeError:\u{a0}f() got an unexpected keyword argument\u{a0}'x'".as_bytes());
        assert_eq!(t, "TypeError: f() got an unexpected keyword argument 'x'");
    }

    #[test]
    fn colour_codes_in_caret_notation_are_removed() {
        let (t, _) = normalize(
            b"^[[1;36m(EngineCore_2 pid=304)^[[0;0m ERROR 08-10 16:16:12 [core.py:683] x",
        );
        assert_eq!(
            t,
            "(EngineCore_2 pid=304) ERROR 08-10 16:16:12 [core.py:683] x"
        );
        let (t, _) = normalize(b"x ^ y [1] ^[");
        assert_eq!(t, "x ^ y [1] ^[");
    }

    #[test]
    fn ansi_and_progress_bars_are_normalised() {
        let (t, _) = normalize(b"\x1b[1;36m(EngineCore_DP0 pid=1)\x1b[0;0m ERROR x");
        assert_eq!(t, "(EngineCore_DP0 pid=1) ERROR x");
        let (t, _) = normalize(b"[1;36m(VllmWorker rank=7 pid=26)[0;0m ERROR x");
        assert_eq!(t, "(VllmWorker rank=7 pid=26) ERROR x");
        let (t, _) = normalize(b"Loading: 10%\rLoading: 50%\rLoading: 100%\r");
        assert_eq!(t, "Loading: 100%");
    }

    #[test]
    fn a_huge_line_is_cut_and_counted_once() {
        let mut log = String::from("first error line\n");
        log.push_str(&"x".repeat(20 << 20));
        log.push_str(" error at the end\nlast error\n");
        let out = scan(&log);
        assert_eq!(out.lines, 3);
        assert_eq!(out.records.last().unwrap().line, 3);
        // The cut line keeps its end, where the error that closes it is.
        let cut = out
            .records
            .iter()
            .find(|r| r.line == 2)
            .expect("line 2 kept");
        assert!(cut.truncated);
        assert!(
            cut.text.ends_with(" error at the end"),
            "{}",
            &cut.text[cut.text.len() - 40..]
        );
        assert!(cut.text.len() <= MAX_LINE);
    }

    #[test]
    fn a_line_over_the_cap_but_inside_a_block_keeps_its_end_too() {
        let mut raw = b"start ".to_vec();
        raw.extend(std::iter::repeat_n(b'x', 100_000));
        raw.extend_from_slice(b" torch.OutOfMemoryError: CUDA out of memory");
        let (t, cut) = normalize(&raw);
        assert!(cut);
        assert!(t.starts_with("start "));
        assert!(t.ends_with("CUDA out of memory"));
        assert!(t.len() <= MAX_LINE);
    }

    #[test]
    fn a_line_shape_is_its_text_with_each_number_reduced_to_its_length() {
        let a = raw_shape(b"INFO:     10.0.3.17:50412 - \"POST /v1/chat HTTP/1.1\" 200 OK");
        let b = raw_shape(b"INFO:     10.0.9.44:61577 - \"POST /v1/chat HTTP/1.1\" 200 OK");
        assert!(a.is_some());
        assert_eq!(a, b);
        // Another number of digits, another word, or the same bytes cut shorter: another shape.
        for other in [
            &b"INFO:     10.0.9.144:61577 - \"POST /v1/chat HTTP/1.1\" 200 OK"[..],
            b"INFO:     10.0.9.44:61577 - \"POST /v1/chat HTTP/1.1\" 200 O",
            b"INFO:     10.0.9.44:61577 - \"POST /v1/chats HTTP/1.1\" 200 OK",
        ] {
            assert_ne!(raw_shape(other), a, "{}", String::from_utf8_lossy(other));
        }
        // A run of 200 digits and two runs of 100 differ; text around them matters.
        let long: Vec<u8> = std::iter::repeat_n(b'7', 200).collect();
        let split: Vec<u8> = [&[b'7'; 100][..], b"x", &[b'7'; 100][..]].concat();
        assert_ne!(raw_shape(&long), raw_shape(&split));
        assert_eq!(
            raw_shape(b"1x1x1x1x1x1x1x1x1x1x"),
            raw_shape(b"9x8x7x6x5x4x3x2x1x0x")
        );
        // Control bytes, other than a tab, and non-ASCII take the full path; so do long lines.
        assert_eq!(raw_shape(b"a\x1b[0mb"), None);
        assert_eq!(raw_shape("caf\u{e9}".as_bytes()), None);
        assert!(raw_shape(b"a\tb").is_some());
        assert_eq!(raw_shape(&[b'a'; 401]), None);
        assert!(raw_shape(&[b'1'; 400]).is_some());
    }

    #[test]
    fn big_blocks_split_across_threads_keep_numbering() {
        let mut log = String::new();
        for i in 0..200_000 {
            if i % 50_000 == 7 {
                log.push_str(&format!("RuntimeError: boom {i}\n"));
            } else {
                log.push_str("some quiet line that says nothing at all\n");
            }
        }
        let out = scan(&log);
        assert_eq!(out.lines, 200_000);
        let lines: Vec<u64> = out.records.iter().map(|r| r.line).collect();
        // each error keeps the next line as context
        assert_eq!(
            lines,
            vec![8, 9, 50_008, 50_009, 100_008, 100_009, 150_008, 150_009]
        );
    }

    fn template_holding<'a>(out: &'a ScanOutput, word: &str) -> &'a TemplateStat {
        out.templates
            .values()
            .find(|t| t.example.contains(word))
            .expect("the template")
    }

    #[test]
    fn repeats_of_one_shape_are_counted_and_their_latest_kept() {
        // Access-log lines: one template, many shapes (addresses of different widths); past
        // the first examples the shape alone stands for the template.
        let text: String = (0..300)
            .map(|i| {
                format!(
                    "INFO:     10.0.{}.{}:{} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
                    i % 7,
                    i % 256,
                    1000 + i
                )
            })
            .collect();
        let out = scan(&text);
        let t = template_holding(&out, "POST /v1");
        assert_eq!(t.count, 300);
        let kept: Vec<u64> = out.records.iter().map(|r| r.line).collect();
        let want: Vec<u64> = (1..=48).chain(253..=300).collect();
        assert_eq!(kept, want);
        let last = out.records.last().expect("a record");
        assert_eq!(last.text, text.lines().last().expect("a line"));
        assert_eq!(
            last.template,
            template_key(&last.text[last.prefix.msg_start..])
        );
    }

    #[test]
    fn a_decoded_source_read_while_scanning_gives_what_a_plain_one_gives() {
        // Three blocks and a bit, with errors and a traceback across the block ends.
        let mut text = String::new();
        let mut i = 0u64;
        while text.len() < 3 * BLOCK + 1000 {
            i += 1;
            if i.is_multiple_of(50_000) {
                text.push_str("Traceback (most recent call last):\n  File \"/x/a.py\", line 3, in f\n    g()\nRuntimeError: CUDA error: an illegal memory access was encountered\n");
            }
            text.push_str(&format!(
                "[2026-02-24 10:00:{:02} TP0] Decode batch, #running-req: {}, #token: {}\n",
                i % 60,
                i % 256,
                i * 7 % 400_000
            ));
        }
        let s = Scanner::new(Vocabulary::embedded(), &[]);
        let plain = s.fresh().scan_reader(0, &mut text.as_bytes());
        let decoded = s.fresh().scan_decoded(0, &mut text.as_bytes());
        assert_eq!(plain.lines, decoded.lines);
        assert_eq!(plain.bytes, decoded.bytes);
        assert_eq!(plain.serving.decode(), decoded.serving.decode());
        let lines = |o: &ScanOutput| {
            o.records
                .iter()
                .map(|r| (r.line, r.text.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(&plain), lines(&decoded));
        assert!(plain
            .records
            .iter()
            .any(|r| r.text.contains("illegal memory access")));
        assert_eq!(plain.tail, decoded.tail);
    }

    #[test]
    fn repeats_over_blocks_and_threads_keep_the_first_and_latest_of_all() {
        // Over 8 MiB: two blocks, each split between threads where there are several. What is
        // kept is what one piece would keep: the first examples of all, the latest of all.
        let n = 130_000u64;
        let text: String = (0..n)
            .map(|i| {
                format!(
                    "INFO:     10.0.{}.{}:{} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
                    i % 7,
                    i % 256,
                    1000 + i % 60_000
                )
            })
            .collect();
        assert!(text.len() > BLOCK);
        let out = scan(&text);
        assert_eq!(out.lines, n);
        assert_eq!(template_holding(&out, "POST /v1").count, n);
        let kept: Vec<u64> = out.records.iter().map(|r| r.line).collect();
        let want: Vec<u64> = (1..=48).chain(n - 47..=n).collect();
        assert_eq!(kept, want);
        assert_eq!(
            out.records.last().map(|r| r.text.as_str()),
            text.lines().last()
        );
    }

    #[test]
    fn a_shape_holding_a_rank_is_read_each_time() {
        let text: String = (0..200)
            .map(|i| {
                format!(
                    "[2026-02-24 10:00:00 TP{}] Retract requests. #retracted_reqs: {}\n",
                    i % 8,
                    i
                )
            })
            .collect();
        let out = scan(&text);
        let t = template_holding(&out, "Retract");
        assert_eq!(t.count, 200);
        let mut ranks = t.ranks.clone();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..8).collect::<Vec<u32>>());
    }

    #[test]
    fn templates_collapse_numbers() {
        assert_eq!(
            template_text("rank 3 took 12.5s at 0xdeadbeef"),
            "rank # took #.#s at #"
        );
    }
}
