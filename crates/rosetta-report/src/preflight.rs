//! The report of `rosetta preflight` and its renderers: findings (blocker,
//! risk, info) with evidence and fix, the memory plan, and the facts the
//! findings were judged on. JSON is the contract
//! `{"findings": [...], "memory": {...}, "facts": {...}}`; text, Markdown and
//! HTML lay out the same model. Nothing here decides a finding.

use crate::render::Format;
use rosetta_schema::{Cause, Severity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreflightFinding {
    /// The cause it would be after the crash.
    pub cause: Cause,
    /// Blocker, risk or info.
    pub severity: Severity,
    /// What found it: a knowledge-base rule id, or the check (`config:model_type`, `memory:weights`, `launch:unknown-flag`).
    pub rule: String,
    /// One line.
    pub message: String,
    /// The flags, config keys, libraries and figures it rests on.
    pub evidence: Vec<String>,
    /// What to change: a flag, a version, a package.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fix: Option<String>,
    /// The failure it would cause (`gpu-oom in graph-capture`), for risks and blockers from rules.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub crash: Option<String>,
    /// Why, when the rule says.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why: Option<String>,
    /// Where the knowledge comes from.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub references: Vec<String>,
}

/// Where the weight bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightsSource {
    /// Summed from the safetensors files' headers (exact).
    SafetensorsHeaders,
    /// Estimated from config.json (parameter count x bytes per parameter).
    ConfigEstimate,
}

/// The memory plan per GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPlan {
    /// How the weight bytes were found.
    pub weights_source: WeightsSource,
    /// Files read (headers only), when from safetensors.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub weight_files: Option<u64>,
    /// Parameters, when estimated or counted.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parameters: Option<u64>,
    /// All weights, bytes.
    pub weights_bytes: u64,
    /// GPUs the weights are split over (tp x pp).
    pub gpus_per_replica: u64,
    /// Weights per GPU, bytes.
    pub weights_per_gpu_bytes: u64,
    /// Memory of one GPU, bytes, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gpu_memory_bytes: Option<u64>,
    /// The memory fraction in force, and its key.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fraction: Option<f64>,
    /// The fraction's flag (canonical key).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fraction_key: Option<String>,
    /// `flag` or `engine default`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fraction_from: Option<String>,
    /// What the fraction covers (`weights-and-kv`, `everything`, `kv-of-free`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fraction_covers: Option<String>,
    /// Bytes the engine may take under its fraction.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub budget_bytes: Option<u64>,
    /// What is left of it for the KV cache after the weights (negative: weights do not fit).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kv_cache_bytes: Option<i64>,
    /// Left outside the budget for activations and CUDA graphs (engines whose fraction covers weights and KV).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub activations_bytes: Option<u64>,
    /// What the engine's own default keeps for activations and CUDA graphs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub engine_reserve_bytes: Option<u64>,
    /// The engine's own default fraction on this GPU.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub engine_default_fraction: Option<f64>,
    /// How the estimate was made, and what it leaves out.
    pub notes: Vec<String>,
}

/// The facts the findings were judged on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreflightFacts {
    /// The engine (`sglang`, `vllm`, ...).
    pub engine: Option<String>,
    /// The words that start it.
    pub program: String,
    /// The model path or name.
    pub model: Option<String>,
    /// Launch args under canonical keys, as typed.
    pub args: BTreeMap<String, String>,
    /// Engine defaults used where a flag was absent.
    pub defaults_used: BTreeMap<String, String>,
    /// Environment the command sets.
    pub env: BTreeMap<String, String>,
    /// `model_type` from config.json.
    pub model_type: Option<String>,
    /// Architectures from config.json.
    pub architectures: Vec<String>,
    /// Quantization scheme (`nvfp4`, `fp8`, ...).
    pub quantization: Option<String>,
    /// `max_position_embeddings` (or its like).
    pub max_position_embeddings: Option<u64>,
    /// The context length to serve (typed, else the model's).
    pub context_length: Option<u64>,
    /// GPU name, as given or found.
    pub gpu: Option<String>,
    /// Its arch (`sm_120`).
    pub gpu_arch: Option<String>,
    /// GPUs on the machine (or given).
    pub gpus: Option<u64>,
    /// Memory of one GPU, GiB.
    pub gpu_memory_gib: Option<f64>,
    /// transformers version.
    pub transformers: Option<String>,
    /// The engine's version.
    pub engine_version: Option<String>,
    /// Where the machine facts come from (`this machine`, an env.json, flags).
    pub machine_from: String,
}

/// The whole preflight report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreflightReport {
    /// The tool and version.
    pub rosetta: String,
    /// Findings, blockers first.
    pub findings: Vec<PreflightFinding>,
    /// The memory plan, when the weights could be sized.
    pub memory: Option<MemoryPlan>,
    /// The facts.
    pub facts: PreflightFacts,
    /// What could not be checked, and why.
    pub notes: Vec<String>,
}

impl PreflightReport {
    /// Some finding is a blocker.
    pub fn has_blocker(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Blocker)
    }

    /// Nothing beyond the launch flags was known: no model config, GPU, versions or
    /// memory plan. No finding then means nothing, not "OK".
    pub fn checked_nothing(&self) -> bool {
        let f = &self.facts;
        self.findings.is_empty()
            && self.memory.is_none()
            && f.model_type.is_none()
            && f.architectures.is_empty()
            && f.gpu.is_none()
            && f.gpu_arch.is_none()
            && f.transformers.is_none()
            && f.engine_version.is_none()
    }

    fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }
}

/// Writes a preflight report in a format; text wraps to [`crate::text_width`].
pub fn render_preflight(
    r: &PreflightReport,
    format: Format,
    color: bool,
    w: &mut dyn Write,
) -> io::Result<()> {
    render_preflight_width(r, format, color, crate::text_width(), w)
}

/// Writes a preflight report in a format, text wrapped to `width` columns.
pub fn render_preflight_width(
    r: &PreflightReport,
    format: Format,
    color: bool,
    width: usize,
    w: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, r).map_err(io::Error::other)?;
            writeln!(w)
        }
        Format::Text => text(r, color, width.max(40), w),
        Format::Markdown => markdown(r, w),
        Format::Html => html(r, w),
    }
}

/// Bytes as GiB with one decimal.
fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

fn gib_signed(b: i64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

fn verdict(r: &PreflightReport) -> String {
    let (b, k, i) = (
        r.count(Severity::Blocker),
        r.count(Severity::Risk),
        r.count(Severity::Info),
    );
    if r.checked_nothing() {
        return "NOTHING CHECKED  only the launch flags were read (see NOT CHECKED)".to_string();
    }
    let word = if b > 0 {
        "WILL FAIL"
    } else if k > 0 {
        "MAY FAIL"
    } else {
        "OK"
    };
    format!("{word}  {b} blocker(s) · {k} risk(s) · {i} info")
}

fn what(f: &PreflightFacts) -> String {
    let mut parts = Vec::new();
    if let Some(e) = &f.engine {
        parts.push(e.clone());
    }
    if let Some(m) = &f.model {
        parts.push(m.clone());
    }
    if let Some(mt) = &f.model_type {
        parts.push(format!("model_type {mt}"));
    }
    let gpu = match (&f.gpus, &f.gpu, &f.gpu_arch) {
        (Some(n), Some(g), Some(a)) => Some(format!("{n}x {g} ({a})")),
        (None, Some(g), Some(a)) => Some(format!("{g} ({a})")),
        (_, None, Some(a)) => Some(a.clone()),
        _ => None,
    };
    parts.extend(gpu);
    if let Some(t) = &f.transformers {
        parts.push(format!("transformers {t}"));
    }
    parts.join(" · ")
}

fn memory_lines(m: &MemoryPlan) -> Vec<String> {
    let src = match m.weights_source {
        WeightsSource::SafetensorsHeaders => format!(
            "safetensors headers ({} files)",
            m.weight_files.unwrap_or(0)
        ),
        WeightsSource::ConfigEstimate => "estimated from config.json".to_string(),
    };
    let mut out = vec![format!(
        "weights {} in all, {} per GPU over {} ({src})",
        gib(m.weights_bytes),
        gib(m.weights_per_gpu_bytes),
        m.gpus_per_replica
    )];
    if let (Some(g), Some(f), Some(b)) = (m.gpu_memory_bytes, m.fraction, m.budget_bytes) {
        out.push(format!(
            "budget {} = {} x {} ({} {})",
            gib(b),
            gib(g),
            f,
            m.fraction_key.as_deref().unwrap_or("fraction"),
            m.fraction_from.as_deref().unwrap_or("")
        ));
    }
    if let Some(kv) = m.kv_cache_bytes {
        out.push(format!("KV cache {}", gib_signed(kv)));
    }
    if let Some(a) = m.activations_bytes {
        let reserve = match (m.engine_reserve_bytes, m.engine_default_fraction) {
            (Some(r), Some(d)) => format!("; the engine's default ({d}) keeps {}", gib(r)),
            _ => String::new(),
        };
        out.push(format!("activations and CUDA graphs {}{reserve}", gib(a)));
    }
    out
}

/// Text laid out for a terminal: colour when asked, every line wrapped to `width`.
struct TextLayout {
    color: bool,
    width: usize,
}

impl TextLayout {
    /// `s` in the ANSI style `code`, or as is without colour.
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Every line wraps to the width as `diagnose` wraps its own; the painted lead is laid
    /// out by its plain width, so colour never shifts a column.
    fn para(&self, lead: &str, lead_w: usize, indent: usize, text: &str) -> String {
        crate::render::paragraph(lead, lead_w, indent, text, self.width)
    }
}

/// The terminal report: the verdict and what was checked, the findings, the memory plan
/// and what was not checked.
fn text(r: &PreflightReport, color: bool, width: usize, w: &mut dyn Write) -> io::Result<()> {
    let t = TextLayout { color, width };
    text_head(r, &t, w)?;
    if !r.findings.is_empty() {
        writeln!(w)?;
        writeln!(w, "{}", t.paint("1", "FINDINGS"))?;
    }
    for f in &r.findings {
        text_finding(f, &t, w)?;
    }
    if let Some(m) = &r.memory {
        writeln!(w)?;
        writeln!(w, "{}", t.paint("1", "MEMORY (per GPU)"))?;
        for l in memory_lines(m) {
            writeln!(w, "{}", t.para("   ", 3, 5, &l))?;
        }
        for n in &m.notes {
            writeln!(w, "{}", t.para("   ", 3, 5, &format!("note: {n}")))?;
        }
    }
    if !r.notes.is_empty() {
        writeln!(w)?;
        writeln!(w, "{}", t.paint("1", "NOT CHECKED"))?;
        for n in &r.notes {
            writeln!(w, "{}", t.para("   ", 3, 5, n))?;
        }
    }
    Ok(())
}

/// The verdict, painted by its worst finding, then what was checked and where the
/// machine's facts came from.
fn text_head(r: &PreflightReport, t: &TextLayout, w: &mut dyn Write) -> io::Result<()> {
    let v = verdict(r);
    let v = if r.has_blocker() {
        t.paint("1;31", &v)
    } else if r.count(Severity::Risk) > 0 || r.checked_nothing() {
        t.paint("1;33", &v)
    } else {
        t.paint("1;32", &v)
    };
    writeln!(w, "PREFLIGHT {v}")?;
    let about = what(&r.facts);
    if !about.is_empty() {
        writeln!(w, "{}", t.para("          ", 10, 10, &about))?;
    }
    if !r.facts.machine_from.is_empty() {
        writeln!(
            w,
            "{}",
            t.para(
                "          ",
                10,
                12,
                &format!("machine facts from {}", r.facts.machine_from)
            )
        )?;
    }
    Ok(())
}

/// One finding: severity, cause and message, then its evidence, crash, why, fix and rule.
fn text_finding(f: &PreflightFinding, t: &TextLayout, w: &mut dyn Write) -> io::Result<()> {
    let tag = format!("{:<7}", f.severity.as_str());
    let tag_w = tag.chars().count();
    let tag = match f.severity {
        Severity::Blocker => t.paint("1;31", &tag),
        Severity::Risk => t.paint("33", &tag),
        Severity::Info => t.paint("2", &tag),
    };
    let lead = format!(" {tag} {:<17} ", f.cause.as_str());
    let lead_w = 1 + tag_w + 1 + f.cause.as_str().chars().count().max(17) + 1;
    writeln!(w, "{}", t.para(&lead, lead_w, lead_w, &f.message))?;
    let label = |l: &str| format!("     {l:<10}");
    for e in &f.evidence {
        writeln!(w, "{}", t.para(&label("evidence"), 15, 17, e))?;
    }
    if let Some(c) = &f.crash {
        writeln!(w, "{}", t.para(&label("crash"), 15, 15, c))?;
    }
    if let Some(y) = &f.why {
        writeln!(w, "{}", t.para(&label("why"), 15, 15, y))?;
    }
    if let Some(x) = &f.fix {
        // What the user types: wrapped at spaces, never cut.
        writeln!(w, "{}", t.para(&label("fix"), 15, 17, x))?;
    }
    writeln!(w, "{}", t.para(&label("rule"), 15, 15, &f.rule))
}

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown(r: &PreflightReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "## rosetta preflight: {}", verdict(r))?;
    writeln!(w)?;
    let about = what(&r.facts);
    if !about.is_empty() {
        writeln!(w, "{}", md(&about))?;
        writeln!(w)?;
    }
    if !r.findings.is_empty() {
        writeln!(w, "| severity | cause | finding | fix |")?;
        writeln!(w, "|---|---|---|---|")?;
        for f in &r.findings {
            writeln!(
                w,
                "| {} | `{}` | {} | {} |",
                f.severity.as_str(),
                f.cause,
                md(&f.message),
                f.fix
                    .as_deref()
                    .map(|x| format!("`{}`", md(x)))
                    .unwrap_or_default()
            )?;
        }
        writeln!(w)?;
        for f in &r.findings {
            writeln!(w, "### {} · {}", f.severity.as_str(), md(&f.message))?;
            writeln!(w)?;
            for e in &f.evidence {
                writeln!(w, "- evidence: `{}`", e.replace('`', "'"))?;
            }
            if let Some(c) = &f.crash {
                writeln!(w, "- crash it predicts: {}", md(c))?;
            }
            if let Some(y) = &f.why {
                writeln!(w, "- why: {}", md(y))?;
            }
            writeln!(w, "- rule: `{}`", f.rule)?;
            for u in &f.references {
                writeln!(w, "- <{u}>")?;
            }
            writeln!(w)?;
        }
    }
    if let Some(m) = &r.memory {
        writeln!(w, "### Memory per GPU")?;
        writeln!(w)?;
        for l in memory_lines(m) {
            writeln!(w, "- {}", md(&l))?;
        }
        for n in &m.notes {
            writeln!(w, "- note: {}", md(n))?;
        }
        writeln!(w)?;
    }
    if !r.notes.is_empty() {
        writeln!(w, "### Not checked")?;
        writeln!(w)?;
        for n in &r.notes {
            writeln!(w, "- {}", md(n))?;
        }
        writeln!(w)?;
    }
    writeln!(w, "<sub>{}</sub>", r.rosetta)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html(r: &PreflightReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rosetta preflight</title>")?;
    writeln!(w, "<style>body{{font:14px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}.blocker{{color:#b00020}}.risk{{color:#a15c00}}.info{{color:#555}}code{{background:#f3f3f3;padding:0 .2em}}li{{margin:.2em 0}}</style></head><body>")?;
    writeln!(
        w,
        "<h1>rosetta preflight</h1>\n<p><strong>{}</strong></p>",
        esc(&verdict(r))
    )?;
    let about = what(&r.facts);
    if !about.is_empty() {
        writeln!(w, "<p>{}</p>", esc(&about))?;
    }
    for f in &r.findings {
        writeln!(
            w,
            "<section><h2 class=\"{}\">{} · <code>{}</code> · {}</h2><ul>",
            f.severity.as_str(),
            f.severity.as_str(),
            f.cause,
            esc(&f.message)
        )?;
        for e in &f.evidence {
            writeln!(w, "<li>evidence: <code>{}</code></li>", esc(e))?;
        }
        if let Some(c) = &f.crash {
            writeln!(w, "<li>crash it predicts: {}</li>", esc(c))?;
        }
        if let Some(y) = &f.why {
            writeln!(w, "<li>why: {}</li>", esc(y))?;
        }
        if let Some(x) = &f.fix {
            writeln!(w, "<li>fix: <code>{}</code></li>", esc(x))?;
        }
        writeln!(w, "<li>rule: <code>{}</code></li>", esc(&f.rule))?;
        for u in &f.references {
            writeln!(w, "<li><a href=\"{0}\">{0}</a></li>", esc(u))?;
        }
        writeln!(w, "</ul></section>")?;
    }
    if let Some(m) = &r.memory {
        writeln!(w, "<h2>Memory per GPU</h2><ul>")?;
        for l in memory_lines(m).iter().chain(&m.notes) {
            writeln!(w, "<li>{}</li>", esc(l))?;
        }
        writeln!(w, "</ul>")?;
    }
    if !r.notes.is_empty() {
        writeln!(w, "<h2>Not checked</h2><ul>")?;
        for n in &r.notes {
            writeln!(w, "<li>{}</li>", esc(n))?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(
        w,
        "<footer><small>{}</small></footer></body></html>",
        esc(&r.rosetta)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PreflightReport {
        PreflightReport {
            rosetta: "rosetta test".into(),
            findings: vec![
                PreflightFinding {
                    cause: Cause::BackendSelection,
                    severity: Severity::Blocker,
                    rule: "dsa-backend-without-sm120-code".into(),
                    message: "the NSA/DSA attention backend (nsa_decode_backend=flashmla_kv) has no code for sm_120".into(),
                    evidence: vec!["nsa_decode_backend=flashmla_kv".into(), "GPU RTX PRO 6000 = sm_120".into()],
                    fix: Some("--nsa-decode-backend tilelang".into()),
                    crash: Some("device-side-assert".into()),
                    why: None,
                    references: vec!["https://example.invalid/issue".into()],
                },
                PreflightFinding {
                    cause: Cause::MemoryBudget,
                    severity: Severity::Risk,
                    rule: "static-fraction-leaves-no-graph-room".into(),
                    message: "mem_fraction_static leaves too little <memory> & graphs".into(),
                    evidence: vec!["mem_fraction_static=0.95".into()],
                    fix: Some("--mem-fraction-static 0.849".into()),
                    crash: Some("gpu-oom in graph-capture".into()),
                    why: None,
                    references: vec![],
                },
            ],
            memory: Some(MemoryPlan {
                weights_source: WeightsSource::SafetensorsHeaders,
                weight_files: Some(2),
                parameters: None,
                weights_bytes: 400 << 30,
                gpus_per_replica: 8,
                weights_per_gpu_bytes: 50 << 30,
                gpu_memory_bytes: Some(96 << 30),
                fraction: Some(0.95),
                fraction_key: Some("mem_fraction_static".into()),
                fraction_from: Some("flag".into()),
                fraction_covers: Some("weights-and-kv".into()),
                budget_bytes: Some(97_935_770_419),
                kv_cache_bytes: Some(44_248_675_123),
                activations_bytes: Some(5_153_960_755),
                engine_reserve_bytes: Some(15_569_256_448),
                engine_default_fraction: Some(0.849),
                notes: vec!["weights are split evenly over tp x pp".into()],
            }),
            facts: PreflightFacts {
                engine: Some("sglang".into()),
                program: "python -m sglang.launch_server".into(),
                model: Some("/models/GLM-5-NVFP4".into()),
                model_type: Some("glm_moe_dsa".into()),
                gpu: Some("RTX PRO 6000".into()),
                gpu_arch: Some("sm_120".into()),
                gpus: Some(8),
                transformers: Some("5.2.0".into()),
                machine_from: "the flags (--gpu, --gpus, --gpu-memory, --transformers)".into(),
                ..PreflightFacts::default()
            },
            notes: vec!["no engine version given: version windows not checked".into()],
        }
    }

    fn out(format: Format) -> String {
        let mut v = Vec::new();
        render_preflight(&sample(), format, false, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    /// The newcomer's pass (issue 12, section 11): preflight lines reached 356 characters
    /// at COLUMNS=80 while diagnose wrapped; and `machine: flags` said nothing.
    #[test]
    fn text_wraps_to_the_width_and_says_where_the_machine_comes_from() {
        let mut r = sample();
        r.findings[0].why = Some("word ".repeat(60));
        for width in [60, 80, 100] {
            let mut v = Vec::new();
            render_preflight_width(&r, Format::Text, false, width, &mut v).unwrap();
            let t = String::from_utf8(v).unwrap();
            for l in t.lines() {
                // Only a word longer than a line (a path, a flag) may overflow.
                let longest_word = l.split(' ').map(|x| x.chars().count()).max().unwrap_or(0);
                assert!(
                    l.chars().count() <= width || longest_word > width / 2,
                    "{width}: {l}"
                );
            }
            assert!(t.contains("machine facts from the flags"), "{t}");
            assert!(!t.contains("machine: flags"), "{t}");
            // Nothing was lost in wrapping: every word of the why is there.
            assert_eq!(t.matches("word").count(), 60, "{t}");
        }
    }

    #[test]
    fn text_snapshot() {
        insta::assert_snapshot!(out(Format::Text));
    }

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(out(Format::Json));
    }

    #[test]
    fn markdown_snapshot() {
        insta::assert_snapshot!(out(Format::Markdown));
    }

    #[test]
    fn html_snapshot() {
        let h = out(Format::Html);
        assert!(h.contains("&lt;memory&gt; &amp; graphs"), "escaped");
        insta::assert_snapshot!(h);
    }
}
