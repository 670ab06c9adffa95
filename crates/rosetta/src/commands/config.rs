//! `rosetta config`: find and read a model's config (`rosetta_env::model_config`),
//! resolve the transformers version (the flag, else the active Python
//! environment's installed one), the context length and the GPU arch, run
//! `rosetta_kb::config_lint`, and render the findings. Exit 1 when there is
//! any finding, 0 for a clean config.

use crate::args::{ConfigArgs, Format};
use crate::exit::{self, Coded, Outcome};
use pep440_rs::Version;
use rosetta_env::model_config::{self, ConfigSource, ModelConfig};
use rosetta_env::python;
use rosetta_kb::config_lint::{self, Lint, Severity, Target};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Runs `rosetta config`.
pub fn run(args: ConfigArgs) -> Outcome {
    let env = |k: &str| std::env::var(k).ok();
    let cfg = model_config::read(&args.model, &env).map_err(|e| usage(&e.to_string()))?;

    let mut notes = Vec::new();
    let (transformers, tf_from) = match &args.transformers {
        Some(v) => {
            Version::from_str(v.trim())
                .map_err(|e| usage(&format!("--transformers `{v}`: {e}")))?;
            (Some(v.trim().to_string()), "--transformers".to_string())
        }
        None => match installed_transformers() {
            Some((v, path)) => (Some(v), format!("installed in {}", path.display())),
            None => {
                notes.push(
                    "no transformers in the active Python environment: version checks skipped (pass --transformers VERSION)"
                        .to_string(),
                );
                (None, String::new())
            }
        },
    };
    let gpu = match &args.gpu {
        Some(g) => Some(config_lint::parse_gpu(g).ok_or_else(|| {
            usage(&format!(
                "--gpu `{g}`: expected an arch (sm_120, 12.0) or a GPU name such as H200"
            ))
        })?),
        None => None,
    };
    let target = Target {
        transformers: transformers.clone(),
        context_length: args.context_length,
        gpu,
    };
    let mut lint = config_lint::lint(&cfg, &target);
    notes.append(&mut lint.notes);
    lint.notes = notes;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &json_report(&cfg, &target, &tf_from, &lint))?;
            writeln!(out)?;
        }
        Format::Markdown => render_markdown(&mut out, &cfg, &target, &tf_from, &lint)?,
        _ => render_text(
            &mut out,
            &cfg,
            &target,
            &tf_from,
            &lint,
            rosetta_report::text_width(),
        )?,
    }
    out.flush()?;
    Ok(if lint.findings.is_empty() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}

fn usage(msg: &str) -> anyhow::Error {
    anyhow::Error::new(Coded {
        code: exit::BAD_INPUT,
        message: msg.to_string(),
    })
}

/// The transformers version installed in the active Python environment (the
/// same one `rosetta env` reads: the active virtualenv's or conda env's
/// interpreter, else `python3` on PATH), from a `transformers-*.dist-info`
/// (or egg-info) in its site-packages.
fn installed_transformers() -> Option<(String, PathBuf)> {
    let py = python::default_interpreter()?;
    let info = python::ask_interpreter(&py).ok()?;
    info.site_packages
        .iter()
        .find_map(|p| transformers_in(Path::new(p)))
}

/// `transformers-X.dist-info/METADATA` (or an egg-info's `PKG-INFO`) in one folder.
fn transformers_in(dir: &Path) -> Option<(String, PathBuf)> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
        let meta = if name.starts_with("transformers-") && name.ends_with(".dist-info") {
            entry.path().join("METADATA")
        } else if name.starts_with("transformers") && name.ends_with(".egg-info") {
            entry.path().join("PKG-INFO")
        } else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&meta) else {
            continue;
        };
        match python::parse_metadata(&text) {
            Some((n, v)) if n.eq_ignore_ascii_case("transformers") => return Some((v, meta)),
            _ => {}
        }
    }
    None
}

fn source_text(cfg: &ModelConfig) -> String {
    match &cfg.source {
        ConfigSource::File => "file".into(),
        ConfigSource::Folder => "model folder".into(),
        ConfigSource::HfCache { repo, revision } => format!(
            "Hugging Face cache {}@{}",
            repo.as_deref().unwrap_or("?"),
            revision.as_deref().unwrap_or("?")
        ),
    }
}

fn model_line(cfg: &ModelConfig) -> String {
    let mut parts = vec![cfg
        .model_type
        .clone()
        .unwrap_or_else(|| "no model_type".into())];
    if !cfg.architectures.is_empty() {
        parts.push(cfg.architectures.join(", "));
    }
    if let Some(d) = &cfg.dtype {
        parts.push(d.clone());
    }
    if let Some(q) = &cfg.quantization {
        parts.push(q.scheme.id().to_ascii_uppercase());
    }
    if let Some(m) = cfg.text.max_position_embeddings {
        parts.push(format!("{m} positions"));
    }
    parts.join(" · ")
}

fn target_line(t: &Target, tf_from: &str) -> String {
    let mut parts = Vec::new();
    match &t.transformers {
        Some(v) => parts.push(format!("transformers {v} ({tf_from})")),
        None => parts.push("transformers: unknown".into()),
    }
    if let Some(c) = t.context_length {
        parts.push(format!("context {c}"));
    }
    if let Some(g) = &t.gpu {
        parts.push(g.arch.clone());
    }
    parts.join(" · ")
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn render_text(
    out: &mut dyn Write,
    cfg: &ModelConfig,
    t: &Target,
    tf_from: &str,
    l: &Lint,
    width: usize,
) -> anyhow::Result<()> {
    // Wrapped to the width as `diagnose` wraps, by the same helper.
    let para = |lead: &str, text: &str| rosetta_report::paragraph(lead, 9, 9, text, width);
    let config = format!("{} ({})", cfg.path.display(), source_text(cfg));
    writeln!(out, "{}", para("config   ", &config))?;
    writeln!(out, "{}", para("model    ", &model_line(cfg)))?;
    writeln!(out, "{}", para("against  ", &target_line(t, tf_from)))?;
    writeln!(out)?;
    for f in &l.findings {
        writeln!(
            out,
            "{:<8} {:<17} {}",
            severity_word(f.severity),
            f.cause.as_str(),
            f.field
        )?;
        writeln!(out, "{}", para("         ", &f.reason))?;
    }
    for n in &l.notes {
        writeln!(out, "{}", para("note     ", n))?;
    }
    if !l.findings.is_empty() || !l.notes.is_empty() {
        writeln!(out)?;
    }
    match l.findings.len() {
        0 => writeln!(out, "no problems found")?,
        1 => writeln!(out, "1 problem found")?,
        n => writeln!(out, "{n} problems found")?,
    }
    Ok(())
}

fn render_markdown(
    out: &mut dyn Write,
    cfg: &ModelConfig,
    t: &Target,
    tf_from: &str,
    l: &Lint,
) -> anyhow::Result<()> {
    writeln!(out, "### `{}`", cfg.path.display())?;
    writeln!(out)?;
    writeln!(out, "- model: {}", model_line(cfg))?;
    writeln!(out, "- against: {}", target_line(t, tf_from))?;
    writeln!(out)?;
    for f in &l.findings {
        writeln!(
            out,
            "- **{}** `{}` ({}): {}",
            severity_word(f.severity),
            f.cause.as_str(),
            f.field,
            f.reason
        )?;
    }
    for n in &l.notes {
        writeln!(out, "- note: {n}")?;
    }
    if l.findings.is_empty() {
        writeln!(out, "- no problems found")?;
    }
    Ok(())
}

fn json_report(cfg: &ModelConfig, t: &Target, tf_from: &str, l: &Lint) -> serde_json::Value {
    serde_json::json!({
        "config": cfg.path,
        "source": cfg.source,
        "model_type": cfg.model_type,
        "architectures": cfg.architectures,
        "dtype": cfg.dtype,
        "quantization": cfg.quantization,
        "max_position_embeddings": cfg.text.max_position_embeddings,
        "transformers": t.transformers.as_ref().map(|v| serde_json::json!({"version": v, "from": tf_from})),
        "context_length": t.context_length,
        "gpu": t.gpu,
        "findings": l.findings,
        "notes": l.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_transformers_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let di = dir.path().join("transformers-5.2.0.dist-info");
        std::fs::create_dir_all(&di).unwrap();
        std::fs::write(
            di.join("METADATA"),
            "Metadata-Version: 2.1\nName: transformers\nVersion: 5.2.0\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("transformers_stream-1.0.dist-info")).unwrap();
        let (v, _) = transformers_in(dir.path()).unwrap();
        assert_eq!(v, "5.2.0");
        assert!(transformers_in(&dir.path().join("nope")).is_none());
    }
}
