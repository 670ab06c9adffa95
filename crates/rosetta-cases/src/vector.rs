//! From signatures to vectors: tokens (lower-cased words of the masked
//! templates, with the parts of `snake_case` and `CamelCase` identifiers),
//! bigrams of adjacent words, the class and phase as words of their own; then
//! TF-IDF (sublinear term frequency, smoothed inverse document frequency,
//! unit length) and cosine similarity. The alternatives measured in
//! `docs/cases.md` (no bigrams, no class words, Jaccard over templates) are
//! options of [`Features`]; the defaults are what measured best.

use crate::signature::Signature;
use std::collections::HashMap;

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

fn words(line: &str, split: bool, out: &mut Vec<String>, parts: &mut Vec<String>) {
    for raw in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let w = raw.trim_matches('_');
        if w.len() < 2 || w.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        out.push(w.to_ascii_lowercase());
        if split {
            let mut cur = String::new();
            let mut prev_lower = false;
            let mut pieces = Vec::new();
            for c in w.chars() {
                if c == '_' || (c.is_ascii_uppercase() && prev_lower) {
                    if !cur.is_empty() {
                        pieces.push(std::mem::take(&mut cur));
                    }
                }
                if c != '_' {
                    cur.push(c.to_ascii_lowercase());
                }
                prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            }
            if !cur.is_empty() {
                pieces.push(cur);
            }
            if pieces.len() > 1 {
                parts.extend(pieces.into_iter().filter(|p| p.len() >= 2));
            }
        }
    }
}

/// The terms of a signature, with repeats (term frequency counts them).
pub fn terms(sig: &Signature, f: Features) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(tags(sig, f).map(str::to_string));
    let mut ws = Vec::new();
    let mut parts = Vec::new();
    let boost = if sig.is_fallback() { 0 } else { f.message_boost };
    for (i, line) in sig.lines.iter().enumerate() {
        if !f.frames && line.starts_with("File \"") {
            continue;
        }
        ws.clear();
        words(line, f.split_idents, &mut ws, &mut parts);
        if i == 0 {
            for _ in 0..boost {
                out.extend(ws.iter().cloned());
            }
        }
        if f.bigrams {
            for pair in ws.windows(2) {
                out.push(format!("{} {}", pair[0], pair[1]));
            }
        }
        out.append(&mut ws);
    }
    out.append(&mut parts);
    out
}

/// A sparse unit vector: (term id, weight), sorted by term id.
pub type Sparse = Vec<(u32, f32)>;

/// TF-IDF vectors of a set of documents, and the vocabulary to place queries in it.
#[derive(Debug, Default)]
pub struct Index {
    features: Option<Features>,
    ids: HashMap<String, u32>,
    idf: Vec<f32>,
    docs: Vec<Sparse>,
    templates: Vec<Vec<String>>,
    n: usize,
}

fn counts(terms: Vec<String>) -> HashMap<String, u32> {
    let mut m: HashMap<String, u32> = HashMap::new();
    for t in terms {
        *m.entry(t).or_default() += 1;
    }
    m
}

impl Index {
    /// Builds the index of `sigs`.
    pub fn build(sigs: &[Signature], f: Features) -> Index {
        let mut ix = Index {
            features: Some(f),
            n: sigs.len(),
            ..Index::default()
        };
        if f.template_jaccard {
            ix.templates = sigs.iter().map(|s| template_set(s, f)).collect();
            return ix;
        }
        let per_doc: Vec<HashMap<String, u32>> =
            sigs.iter().map(|s| counts(terms(s, f))).collect();
        let mut df: Vec<u32> = Vec::new();
        for doc in &per_doc {
            for t in doc.keys() {
                let next = ix.ids.len() as u32;
                let id = *ix.ids.entry(t.clone()).or_insert(next);
                if id as usize == df.len() {
                    df.push(0);
                }
                df[id as usize] += 1;
            }
        }
        let n = sigs.len() as f32;
        ix.idf = df
            .iter()
            .map(|&d| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
            .collect();
        ix.docs = per_doc.into_iter().map(|d| ix.vector(d).0).collect();
        ix
    }

    /// Documents in the index.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the index holds no document.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// (known-term vector, squared weight of unknown terms) before normalising together.
    fn vector(&self, counts: HashMap<String, u32>) -> (Sparse, f32) {
        let unknown_idf = ((1.0 + self.n as f32) / 1.0).ln() + 1.0;
        let mut v: Sparse = Vec::with_capacity(counts.len());
        let mut unknown = 0.0f32;
        for (t, c) in counts {
            let w = 1.0 + (c as f32).ln();
            match self.ids.get(&t) {
                Some(&id) => v.push((id, w * self.idf[id as usize])),
                None => unknown += (w * unknown_idf).powi(2),
            }
        }
        let norm = (v.iter().map(|(_, w)| w * w).sum::<f32>() + unknown).sqrt();
        if norm > 0.0 {
            for (_, w) in &mut v {
                *w /= norm;
            }
        }
        v.sort_unstable_by_key(|(id, _)| *id);
        (v, unknown)
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
        let (q, _) = self.vector(counts(terms(sig, f)));
        self.docs.iter().map(|d| dot(&q, d)).collect()
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
        for w in ["acceleratorerror", "accelerator", "error", "flash_fwd_kernel", "flash", "fwd", "in flash_fwd_kernel", "class=x"] {
            assert!(t.iter().any(|x| x == w), "{w} missing from {t:?}");
        }
    }

    #[test]
    fn a_document_is_most_similar_to_itself() {
        let docs = vec![
            sig("gpu-oom", &["CUDA out of memory. Tried to allocate <n> GiB"]),
            sig("comm-error", &["NCCL error: unhandled system error", "ncclSystemError"]),
            sig("import-error", &["ModuleNotFoundError: No module named 'vllm._C'"]),
        ];
        for f in [Features::default(), Features { template_jaccard: true, ..Features::default() }] {
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
