//! From signatures to vectors: tokens (lower-cased words of the masked
//! templates, with the parts of `snake_case` and `CamelCase` identifiers),
//! bigrams of adjacent words, the class and phase as words of their own; then
//! TF-IDF (sublinear term frequency, smoothed inverse document frequency,
//! unit length) and cosine similarity. The alternatives measured in
//! `docs/cases.md` (no bigrams, no class words, Jaccard over templates) are
//! options of [`Features`]; the defaults are what measured best.

use crate::signature::Signature;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Term ids are already FNV hashes: the map uses them as they are.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// What a signature is turned into.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Features {
    /// Add bigrams of adjacent words within a line.
    pub bigrams: bool,
    /// Add the parts of `snake_case` / `CamelCase` identifiers as words.
    pub split_idents: bool,
    /// Add the class rosetta gave as a word.
    pub class_words: bool,
    /// Add the phase rosetta gave as a word.
    pub phase_words: bool,
    /// Add the framework and the GPU archs named as words.
    pub context_words: bool,
    /// Extra copies of the failure message's words (the signature's first line).
    pub message_boost: u32,
    /// Keep traceback frame headers (`File "...", line N, in f`).
    pub frames: bool,
    /// Score with the Jaccard index of the sets of masked templates instead of TF-IDF cosine.
    pub template_jaccard: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            bigrams: true,
            split_idents: true,
            class_words: true,
            phase_words: false,
            context_words: false,
            message_boost: 1,
            frames: true,
            template_jaccard: false,
        }
    }
}

/// Splits a line into words (runs of ASCII letters, digits and `_`, at least
/// two long, not all digits) and hands each to `word`, with its identifier
/// parts (`flash_fwd_kernel` -> `flash`, `fwd`, `kernel`; `AcceleratorError` ->
/// `Accelerator`, `Error`) to `part` when there are several.
fn words<'a>(
    line: &'a str,
    split: bool,
    word: &mut dyn FnMut(&'a str),
    part: &mut dyn FnMut(&'a str),
) {
    for raw in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let w = raw.trim_matches('_');
        if w.len() < 2 || w.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        word(w);
        if !split {
            continue;
        }
        let bytes = w.as_bytes();
        let boundary = |i: usize| {
            bytes[i] == b'_'
                || (i > 0
                    && bytes[i].is_ascii_uppercase()
                    && (bytes[i - 1].is_ascii_lowercase() || bytes[i - 1].is_ascii_digit()))
        };
        if !(1..bytes.len()).any(boundary) {
            continue;
        }
        let mut start = 0;
        for i in 1..=bytes.len() {
            if i == bytes.len() || boundary(i) {
                let piece = w[start..i].trim_matches('_');
                if piece.len() >= 2 {
                    part(piece);
                }
                start = i;
            }
        }
    }
}

/// Hands every term of a signature to `emit`, as the pieces it is made of
/// (one word, or the two words of a bigram), with repeats.
fn each_term<'a>(sig: &'a Signature, f: Features, emit: &mut dyn FnMut(&[&'a str])) {
    for t in tags(sig, f) {
        emit(&[t]);
    }
    let boost = if sig.is_fallback() {
        0
    } else {
        f.message_boost
    };
    let mut ws: Vec<&str> = Vec::new();
    let mut parts: Vec<&str> = Vec::new();
    for (i, line) in sig.lines.iter().enumerate() {
        if !f.frames && line.starts_with("File \"") {
            continue;
        }
        ws.clear();
        words(line, f.split_idents, &mut |w| ws.push(w), &mut |p| {
            parts.push(p)
        });
        let copies = if i == 0 { 1 + boost } else { 1 };
        for _ in 0..copies {
            if f.bigrams {
                for pair in ws.windows(2) {
                    emit(pair);
                }
            }
            for w in &ws {
                emit(&[w]);
            }
        }
    }
    for p in &parts {
        emit(&[p]);
    }
}

/// The terms of a signature, lower-cased, with repeats (term frequency counts them).
pub fn terms(sig: &Signature, f: Features) -> Vec<String> {
    let mut out = Vec::new();
    each_term(sig, f, &mut |pieces| {
        out.push(pieces.join(" ").to_ascii_lowercase());
    });
    out
}

/// FNV-1a over the lower-cased pieces joined by a space: the term's id. Terms
/// are never stored as strings; with 64 bits, two terms of the library share
/// an id with odds of about 1 in 10^10.
fn term_id(pieces: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            h ^= u64::from(b' ');
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for b in p.bytes() {
            h ^= u64::from(b.to_ascii_lowercase());
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Term ids with their counts, sorted by id.
pub type Counts = Vec<(u64, u32)>;

/// Term ids with their counts, sorted by id.
pub fn counts(sig: &Signature, f: Features) -> Counts {
    let mut ids: Vec<u64> = Vec::new();
    each_term(sig, f, &mut |pieces| ids.push(term_id(pieces)));
    ids.sort_unstable();
    let mut out: Vec<(u64, u32)> = Vec::with_capacity(ids.len());
    for id in ids {
        match out.last_mut() {
            Some((last, c)) if *last == id => *c += 1,
            _ => out.push((id, 1)),
        }
    }
    out
}

/// The term counts of several documents as bytes, for `build.rs` to embed:
/// per document a little-endian `u32` count of terms, then each term's `u64`
/// id and `u32` count.
pub fn pack_counts(docs: &[Counts]) -> Vec<u8> {
    let mut out = Vec::new();
    for doc in docs {
        out.extend_from_slice(&(doc.len() as u32).to_le_bytes());
        for &(id, c) in doc {
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    out
}

/// What [`pack_counts`] packed, or `None` when the bytes are not such a list
/// of exactly `docs` documents with ids in increasing order.
pub fn unpack_counts(mut bytes: &[u8], docs: usize) -> Option<Vec<Counts>> {
    fn take<const N: usize>(b: &mut &[u8]) -> Option<[u8; N]> {
        let (head, rest) = b.split_first_chunk::<N>()?;
        *b = rest;
        Some(*head)
    }
    let mut out = Vec::with_capacity(docs);
    while !bytes.is_empty() {
        let n = u32::from_le_bytes(take::<4>(&mut bytes)?) as usize;
        if n > bytes.len() / 12 {
            return None;
        }
        let mut doc: Counts = Vec::with_capacity(n);
        for _ in 0..n {
            let id = u64::from_le_bytes(take::<8>(&mut bytes)?);
            let c = u32::from_le_bytes(take::<4>(&mut bytes)?);
            if doc.last().is_some_and(|&(last, _)| last >= id) || c == 0 {
                return None;
            }
            doc.push((id, c));
        }
        out.push(doc);
    }
    (out.len() == docs).then_some(out)
}

/// A sparse unit vector: (term id, weight), sorted by term id.
pub type Sparse = Vec<(u64, f32)>;

/// TF-IDF vectors of a set of documents, and the document frequencies to place
/// queries among them.
#[derive(Debug, Default, PartialEq)]
pub struct Index {
    features: Option<Features>,
    /// Document frequency of each term, sorted by term id (a query looks up its few
    /// terms by binary search; a sorted list loads from the packed form as it is).
    df: Vec<(u64, u32)>,
    /// Inverse document frequency by document frequency (0..=n).
    idf: Vec<f32>,
    docs: Vec<Sparse>,
    templates: Vec<Vec<String>>,
    n: usize,
}

impl Index {
    /// Builds the index of `sigs`.
    pub fn build(sigs: &[Signature], f: Features) -> Index {
        if f.template_jaccard {
            return Index {
                features: Some(f),
                n: sigs.len(),
                templates: sigs.iter().map(|s| template_set(s, f)).collect(),
                ..Index::default()
            };
        }
        let per_doc: Vec<Counts> = sigs.iter().map(|s| counts(s, f)).collect();
        Index::from_counts(&per_doc, f)
    }

    /// Builds the TF-IDF index of documents whose term counts (with features `f`) are
    /// known. Jaccard scoring needs the templates: use [`Index::build`] for it.
    pub fn from_counts(per_doc: &[Counts], f: Features) -> Index {
        debug_assert!(!f.template_jaccard, "Jaccard scoring needs the signatures");
        let mut ix = Index {
            features: Some(f),
            n: per_doc.len(),
            ..Index::default()
        };
        ix.weigh(per_doc);
        ix
    }

    /// Document frequencies, inverse document frequencies and unit vectors.
    fn weigh(&mut self, per_doc: &[Counts]) {
        let ix = self;
        let n = per_doc.len() as f32;
        ix.idf = (0..=per_doc.len())
            .map(|df| ((1.0 + n) / (1.0 + df as f32)).ln() + 1.0)
            .collect();
        let mut df: IdMap<u32> = IdMap::default();
        df.reserve(per_doc.iter().map(Vec::len).sum::<usize>() / 2);
        for doc in per_doc {
            for (id, _) in doc {
                *df.entry(*id).or_default() += 1;
            }
        }
        let lookup = |id: u64| df.get(&id).copied().unwrap_or(0);
        ix.docs = per_doc.iter().map(|d| ix.vector(d, lookup)).collect();
        ix.df = df.into_iter().collect();
        ix.df.sort_unstable();
    }

    /// The document frequency of a term.
    fn df(&self, id: u64) -> u32 {
        self.df
            .binary_search_by_key(&id, |&(t, _)| t)
            .map_or(0, |i| self.df[i].1)
    }

    /// The index as bytes that [`Index::unpack`] reads back without weighing anything:
    /// how `build.rs` ships the embedded library's index ready to use. Little-endian:
    /// `RIX1`, the document count, then the inverse document frequencies, the document
    /// frequencies (id, count) and each document's vector (length, then id, weight).
    /// `None` for a Jaccard index (it has no vectors).
    pub fn pack(&self) -> Option<Vec<u8>> {
        let f = self.features?;
        if f != Features::default() {
            return None;
        }
        let mut out = b"RIX1".to_vec();
        let u32le = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
        u32le(&mut out, self.n);
        u32le(&mut out, self.idf.len());
        for w in &self.idf {
            out.extend_from_slice(&w.to_le_bytes());
        }
        u32le(&mut out, self.df.len());
        for &(id, n) in &self.df {
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&n.to_le_bytes());
        }
        for doc in &self.docs {
            u32le(&mut out, doc.len());
            for &(id, w) in doc {
                out.extend_from_slice(&id.to_le_bytes());
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        Some(out)
    }

    /// What [`Index::pack`] wrote (default features), or `None` when the bytes are not
    /// such an index of `docs` documents.
    pub fn unpack(bytes: &[u8], docs: usize) -> Option<Index> {
        let mut r = Reader(bytes.strip_prefix(b"RIX1")?);
        let n = r.len(usize::MAX)?;
        if n != docs {
            return None;
        }
        let n_idf = r.len(n + 1)?;
        let idf = (0..n_idf).map(|_| r.f32()).collect::<Option<Vec<f32>>>()?;
        let n_df = r.len(r.0.len() / 12)?;
        let df: Vec<(u64, u32)> = r
            .records(n_df)?
            .map(|b| (le_u64(&b[..8]), le_u32(&b[8..])))
            .collect();
        if !df.windows(2).all(|w| w[0].0 < w[1].0) || df.iter().any(|&(_, d)| d as usize > n) {
            return None;
        }
        let mut vectors = Vec::with_capacity(n);
        for _ in 0..n {
            let len = r.len(r.0.len() / 12)?;
            let v: Sparse = r
                .records(len)?
                .map(|b| (le_u64(&b[..8]), f32::from_bits(le_u32(&b[8..]))))
                .collect();
            vectors.push(v);
        }
        if !r.0.is_empty() || idf.len() != n + 1 {
            return None;
        }
        Some(Index {
            features: Some(Features::default()),
            df,
            idf,
            docs: vectors,
            templates: Vec::new(),
            n,
        })
    }

    /// Documents in the index.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the index holds no document.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The unit TF-IDF vector of term counts; terms no document holds weigh in
    /// the norm (a query made mostly of unknown words is like nothing) but not
    /// in any product.
    fn vector(&self, counts: &[(u64, u32)], df: impl Fn(u64) -> u32) -> Sparse {
        let mut v: Sparse = Vec::with_capacity(counts.len());
        let mut norm = 0.0f32;
        for &(id, c) in counts {
            let df = df(id);
            let tf = if c == 1 { 1.0 } else { 1.0 + (c as f32).ln() };
            let w = tf * self.idf[df as usize];
            norm += w * w;
            if df > 0 {
                v.push((id, w));
            }
        }
        let norm = norm.sqrt();
        if norm > 0.0 {
            for (_, w) in &mut v {
                *w /= norm;
            }
        }
        v
    }

    /// Similarity of `sig` to every document, in document order (0..=1).
    pub fn scores(&self, sig: &Signature) -> Vec<f32> {
        let Some(f) = self.features else {
            return Vec::new();
        };
        if f.template_jaccard {
            let q = template_set(sig, f);
            return self.templates.iter().map(|d| jaccard(&q, d)).collect();
        }
        let q = self.vector(&counts(sig, f), |id| self.df(id));
        self.docs.iter().map(|d| dot(&q, d)).collect()
    }
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap_or_default())
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().unwrap_or_default())
}

/// Reads little-endian numbers off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take::<4>().map(u32::from_le_bytes)
    }
    /// The next `n` records of 12 bytes (an id, then a count or a weight).
    fn records(&mut self, n: usize) -> Option<std::slice::ChunksExact<'_, u8>> {
        let (head, rest) = self.0.split_at_checked(n.checked_mul(12)?)?;
        self.0 = rest;
        Some(head.chunks_exact(12))
    }
    fn f32(&mut self) -> Option<f32> {
        self.take::<4>().map(f32::from_le_bytes)
    }
    /// A count, refused above `max` (so that a bad count cannot ask for memory).
    fn len(&mut self, max: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n <= max).then_some(n)
    }
}

fn dot(a: &Sparse, b: &Sparse) -> f32 {
    let (mut i, mut j, mut s) = (0, 0, 0.0f32);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    s.clamp(0.0, 1.0)
}

fn tags(sig: &Signature, f: Features) -> impl Iterator<Item = &str> {
    sig.tags.iter().map(String::as_str).filter(move |t| {
        let key = t.split('=').next().unwrap_or("");
        match key {
            "class" => f.class_words,
            "phase" => f.phase_words,
            _ => f.context_words,
        }
    })
}

fn template_set(sig: &Signature, f: Features) -> Vec<String> {
    let mut t: Vec<String> = sig.lines.clone();
    t.extend(tags(sig, f).map(str::to_string));
    t.sort();
    t.dedup();
    t
}

fn jaccard(a: &[String], b: &[String]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let inter = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
    inter as f32 / (a.len() + b.len() - inter) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(class: &str, lines: &[&str]) -> Signature {
        Signature {
            tags: vec![format!("class={class}")],
            lines: lines.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn identifiers_split_into_parts() {
        let t = terms(
            &sig("x", &["torch.AcceleratorError in flash_fwd_kernel"]),
            Features::default(),
        );
        for w in [
            "acceleratorerror",
            "accelerator",
            "error",
            "flash_fwd_kernel",
            "flash",
            "fwd",
            "in flash_fwd_kernel",
            "class=x",
        ] {
            assert!(t.iter().any(|x| x == w), "{w} missing from {t:?}");
        }
    }

    #[test]
    fn a_document_is_most_similar_to_itself() {
        let docs = vec![
            sig(
                "gpu-oom",
                &["CUDA out of memory. Tried to allocate <n> GiB"],
            ),
            sig(
                "comm-error",
                &["NCCL error: unhandled system error", "ncclSystemError"],
            ),
            sig(
                "import-error",
                &["ModuleNotFoundError: No module named 'vllm._C'"],
            ),
        ];
        for f in [
            Features::default(),
            Features {
                template_jaccard: true,
                ..Features::default()
            },
        ] {
            let ix = Index::build(&docs, f);
            for (i, d) in docs.iter().enumerate() {
                let s = ix.scores(d);
                let best = s
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(b.1))
                    .map(|(j, _)| j);
                assert_eq!(best, Some(i));
                assert!((s[i] - 1.0).abs() < 1e-4, "{s:?}");
            }
            let none = ix.scores(&sig("hang", &["completely unrelated words"]));
            assert!(none.iter().all(|&x| x < 0.2), "{none:?}");
        }
    }
}
