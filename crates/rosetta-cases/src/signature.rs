//! The signature of a log: the failure block that `rosetta-log` found, as
//! masked line templates (numbers, hex, addresses, paths and ids replaced by
//! placeholders), plus the class and phase it was given. Both sides of the
//! similarity search go through [`of`]: `build.rs` compiles this file into the
//! build script, so the library's signatures and a user's log are cut and
//! masked by the same code. This module depends on `rosetta-log`'s public
//! facts only (`LogFacts`, `Failure`, `Incident`, `Record`), never on how they
//! are found; it does not tokenise or weigh (see `vector.rs`).

use regex_lite::Regex;
use rosetta_log::LogFacts;
use std::sync::OnceLock;

/// Lines of a failure block kept in a signature (templates, after de-duplication).
pub const MAX_LINES: usize = 48;
/// Characters kept of one masked line.
pub const MAX_LINE_CHARS: usize = 240;
/// Error-looking lines taken when rosetta found no failure.
pub const FALLBACK_LINES: usize = 12;
/// Error-looking lines before the failure block that join it (a kernel's
/// assertion printed before the traceback it causes).
const LEAD_LINES: u64 = 6;

/// A log's failure, as the similarity search sees it. With a failure, the
/// first line is its message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signature {
    /// Facts about the failure as `key=value` words: `class=`, `phase=` (absent
    /// without a failure), `framework=`, `arch=`.
    pub tags: Vec<String>,
    /// Masked line templates of the failure block, in log order, each once.
    pub lines: Vec<String>,
}

/// Which lines make a signature (the alternatives measured in `docs/cases.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The failure's incident and the error-looking lines just before it.
    #[default]
    Block,
    /// The block, then the other error-looking lines of the log.
    Errors,
    /// Every line the scanner kept.
    Kept,
}

impl Signature {
    /// No failure block and no error-looking line: nothing to compare.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The value of a tag (`class`, `phase`, `framework`).
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find_map(|t| t.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }

    /// True when rosetta found no failure and the lines are the log's last
    /// error-looking lines.
    pub fn is_fallback(&self) -> bool {
        self.tag("class").is_none()
    }

    /// The serialised form embedded in the binary: the tags on the first line,
    /// then one template a line.
    pub fn to_text(&self) -> String {
        let mut s = self.tags.join(" ");
        s.push('\n');
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// Reads what [`Signature::to_text`] wrote.
    pub fn from_text(text: &str) -> Signature {
        let mut it = text.lines();
        let tags = it
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        Signature {
            tags,
            lines: it.map(str::to_string).collect(),
        }
    }
}

/// The signature of a log, cut as `diagnose` and the library cut it ([`Scope::Block`]).
pub fn of(facts: &LogFacts) -> Signature {
    of_scope(facts, Scope::Block)
}

/// Cuts the signature of a log out of its facts: the failure's incident (its
/// lines as kept by the scanner, up to [`MAX_LINES`] distinct templates), the
/// error-looking lines just before it, the failure message and the Python
/// error it surfaced as. Without a failure, the last [`FALLBACK_LINES`]
/// error-looking lines of the log.
pub fn of_scope(facts: &LogFacts, scope: Scope) -> Signature {
    let mut sig = Signature::default();
    let cap = match scope {
        Scope::Block => MAX_LINES,
        Scope::Errors => 2 * MAX_LINES,
        Scope::Kept => 8 * MAX_LINES,
    };
    let push = |sig: &mut Signature, text: &str| {
        let m = mask(text);
        if !m.is_empty() && sig.lines.len() < cap && !sig.lines.contains(&m) {
            sig.lines.push(m);
        }
    };
    if let Some(f) = &facts.failure {
        sig.tags.push(format!("class={}", f.class));
        sig.tags.push(format!("phase={}", f.phase));
    }
    if let Some(fw) = &facts.extracted.framework {
        sig.tags.push(format!(
            "framework={}",
            fw.to_ascii_lowercase().replace(' ', "-")
        ));
    }
    for a in &facts.extracted.arch_mentions {
        let t = format!("arch={}", a.value.to_ascii_lowercase());
        if !sig.tags.contains(&t) && sig.tags.len() < 8 {
            sig.tags.push(t);
        }
    }
    let Some(f) = &facts.failure else {
        let errors: Vec<&str> = facts
            .records
            .iter()
            .filter(|r| r.errorish)
            .map(|r| r.message())
            .collect();
        let from = errors.len().saturating_sub(FALLBACK_LINES);
        for e in &errors[from..] {
            push(&mut sig, e);
        }
        return sig;
    };
    // The failure's own message first: `vector.rs` may weigh it more.
    push(&mut sig, &f.message);
    let (first, last) = match facts.failure_incident() {
        Some(inc) => (inc.line.min(f.line), inc.end_line.max(f.line)),
        None => (f.line, f.line),
    };
    let in_source = facts.records.iter().filter(|r| r.source == f.source);
    for r in in_source {
        let lead = r.line + LEAD_LINES >= first && r.line < first && r.errorish;
        if lead || (first..=last).contains(&r.line) {
            push(&mut sig, r.message());
        }
    }
    if let Some((_, m)) = &f.surfaced {
        push(&mut sig, m);
    }
    match scope {
        Scope::Block => {}
        Scope::Errors => {
            for r in facts.records.iter().filter(|r| r.errorish) {
                push(&mut sig, r.message());
            }
        }
        Scope::Kept => {
            for r in &facts.records {
                push(&mut sig, r.message());
            }
        }
    }
    sig
}

fn masks() -> &'static [(Regex, &'static str)] {
    static M: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    M.get_or_init(|| {
        [
            // URLs first: their paths and numbers are one thing.
            (r"\b[a-z][a-z0-9+.-]*://\S+", "<url>"),
            // A path keeps its last component (`flash_fwd_mla_kernel.h`), which names the code.
            (
                r#"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][^\s/\\:'",()\[\]{}<>|]+){2,}"#,
                "<path>",
            ),
            (
                r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
                "<id>",
            ),
            (r"\b0[xX][0-9a-fA-F]+\b", "<hex>"),
            (r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b", "<ip>"),
            // Long hex or mixed runs: hashes, container and request ids.
            (
                r"\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*\d[0-9a-f]*\b",
                "<hexword>",
            ),
            // Numbers standing alone (`sm_120`, `fp8`, `TP3` keep theirs).
            (r"\b\d+(?:\.\d+)*", "<n>"),
        ]
        .iter()
        .map(|(p, r)| {
            // regex-lite: its classes and word boundaries are ASCII, as these patterns
            // mean, and it compiles them in a fraction of the time `regex` takes, which
            // was a twentieth of a small log's run; they run on a handful of lines.
            (Regex::new(p).expect("mask pattern compiles"), *r)
        })
        .collect()
    })
}

fn last_component(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Masks one line into its template: URLs, paths (down to their last
/// component), ids, hex, addresses and numbers replaced, whitespace
/// collapsed, cut at [`MAX_LINE_CHARS`].
pub fn mask(line: &str) -> String {
    let m = masks();
    let mut s = m[0].0.replace_all(line.trim(), m[0].1).into_owned();
    s = m[1]
        .0
        .replace_all(&s, |c: &regex_lite::Captures| {
            format!("<path>/{}", last_component(&c[0]))
        })
        .into_owned();
    for (re, rep) in &m[2..] {
        if *rep == "<hexword>" {
            s = re
                .replace_all(&s, |c: &regex_lite::Captures| {
                    if c[0].len() >= 8 {
                        "<hex>".to_string()
                    } else {
                        c[0].to_string()
                    }
                })
                .into_owned();
        } else {
            s = re.replace_all(&s, *rep).into_owned();
        }
    }
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.chars().count() > MAX_LINE_CHARS {
        out = out.chars().take(MAX_LINE_CHARS).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_numbers_hex_paths_and_ids_but_keeps_arch_words() {
        assert_eq!(
            mask("  File \"/usr/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 312, in _lazy_init"),
            "File \"<path>/__init__.py\", line <n>, in _lazy_init"
        );
        assert_eq!(
            mask("CUDA out of memory. Tried to allocate 2.50 GiB (GPU 3; 79.11 GiB total)"),
            "CUDA out of memory. Tried to allocate <n> GiB (GPU <n>; <n> GiB total)"
        );
        assert_eq!(
            mask("no kernel image for sm_120 at 0x7f3a2b, request 3f2c1a9e-1b2c-4d5e-8f90-1234567890ab"),
            "no kernel image for sm_120 at <hex>, request <id>"
        );
        assert_eq!(
            mask("connect to 10.0.0.12:29500 failed"),
            "connect to <ip> failed"
        );
        assert_eq!(mask("commit deadbeef12 fp8 TP3"), "commit <hex> fp8 TP3");
        assert_eq!(
            mask("see https://github.com/a/b/issues/1 now"),
            "see <url> now"
        );
    }

    #[test]
    fn text_form_round_trips() {
        let s = Signature {
            tags: vec!["class=gpu-oom".into(), "framework=vllm".into()],
            lines: vec!["a <n>".into(), "b".into()],
        };
        assert_eq!(Signature::from_text(&s.to_text()), s);
        assert_eq!(s.tag("class"), Some("gpu-oom"));
        assert!(!s.is_fallback());
        assert!(Signature::from_text("\n").is_empty());
    }
}
