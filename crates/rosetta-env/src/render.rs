//! Renders an [`EnvReport`] as compact terminal text, Markdown or JSON, to any
//! `&mut dyn Write`. Colour is the caller's choice (`color`); the binary
//! strips it for pipes.
//!
//! Decides nothing: every verdict and problem is already in the report.

use crate::report::{EnvReport, Library, Severity, TargetSource};
use crate::Verdict;
use anstyle::{AnsiColor, Style};
use rosetta_schema::human_bytes;
use std::io::{self, Write};

/// How to render text.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Emit ANSI colour.
    pub color: bool,
    /// Show cubin / PTX counts per arch (`sm_90×444`), as cuobjdump counts
    /// them, and modules without code for a target.
    pub counts: bool,
}

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const RED: Style = AnsiColor::Red.on_default().bold();
const YELLOW: Style = AnsiColor::Yellow.on_default();
const GREEN: Style = AnsiColor::Green.on_default();

struct Painter {
    color: bool,
}

impl Painter {
    fn paint(&self, style: Style, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    /// A section's name, bold, padded to the label column.
    fn head(&self, s: &str) -> String {
        self.paint(BOLD, &format!("{s:<10}"))
    }

    /// A section's title on a line of its own, bold.
    fn title(&self, s: &str) -> String {
        self.paint(BOLD, s)
    }
}

/// Writes the JSON contract, pretty-printed, with a final newline.
pub fn json(r: &EnvReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, r).map_err(io::Error::other)?;
    writeln!(w)
}

/// The path of a library relative to the scan root that holds it.
fn short_path<'a>(r: &EnvReport, path: &'a str) -> &'a str {
    r.scan
        .roots
        .iter()
        .filter_map(|root| path.strip_prefix(root.as_str()))
        .filter_map(|rest| rest.strip_prefix('/'))
        .min_by_key(|rest| rest.len())
        .unwrap_or(path)
}

fn code_list(lib: &Library, counts: bool) -> String {
    let mut parts: Vec<String> = lib
        .sass
        .iter()
        .map(|s| match (counts, lib.sass_counts.get(s)) {
            (true, Some(n)) => format!("{s}×{n}"),
            _ => s.clone(),
        })
        .collect();
    for p in &lib.ptx {
        let isa = lib
            .ptx_isa
            .get(p)
            .map(|v| format!(" (ISA {v})"))
            .unwrap_or_default();
        let n = match (counts, lib.ptx_counts.get(p)) {
            (true, Some(n)) => format!("×{n}"),
            _ => String::new(),
        };
        parts.push(format!("ptx {p}{n}{isa}"));
    }
    if let Some(e) = &lib.embedded {
        let mut all: Vec<String> = e
            .sass
            .iter()
            .map(|s| match (counts, e.sass_counts.get(s)) {
                (true, Some(n)) => format!("{s}×{n}"),
                _ => s.clone(),
            })
            .collect();
        all.extend(e.ptx.iter().map(|p| format!("ptx {p}")));
        parts.push(format!(
            "[embedded in {}, {} modules: {}]",
            e.sections.join(" "),
            e.modules,
            all.join(" ")
        ));
    }
    if let Some(rel) = &lib.relocatable {
        let mut all = rel.sass.clone();
        all.extend(rel.ptx.iter().cloned());
        parts.push(format!("[relocatable: {}]", all.join(" ")));
    }
    if lib.stub {
        parts.push("[no kernels: a registration stub, not judged]".to_string());
    }
    if lib.hip_fatbin_bytes > 0 {
        parts.push(format!(
            "[ROCm code: {}]",
            human_bytes(lib.hip_fatbin_bytes)
        ));
    }
    parts.join(" ")
}

fn verdict_style(v: Verdict) -> Style {
    match v {
        Verdict::Sass => GREEN,
        Verdict::PtxJit => YELLOW,
        Verdict::None => RED,
    }
}

/// Writes the terminal report.
pub fn text(r: &EnvReport, w: &mut dyn Write, opts: TextOptions) -> io::Result<()> {
    let p = Painter { color: opts.color };
    gpus_text(r, &p, w)?;
    python_text(r, &p, w)?;
    libraries_text(r, &p, opts, w)?;
    problems_text(r, &p, w)
}

/// One line per GPU: name, arch, memory and driver, or that none was found.
fn gpus_text(r: &EnvReport, p: &Painter, w: &mut dyn Write) -> io::Result<()> {
    if r.gpus.is_empty() {
        writeln!(w, "{} none found", p.head("GPUS"))?;
    }
    for (i, g) in r.gpus.iter().enumerate() {
        let label = if i == 0 {
            p.head("GPUS")
        } else {
            " ".repeat(10)
        };
        let mut parts = vec![g.name.clone()];
        parts.push(g.arch().unwrap_or_else(|| "arch unknown".into()));
        if let Some(m) = g.memory_mib {
            parts.push(format!("{m} MiB"));
        }
        if let Some(d) = &g.driver {
            let cuda = g
                .cuda_driver_version
                .as_deref()
                .map(|c| format!(" (CUDA {c})"))
                .unwrap_or_default();
            parts.push(format!("driver {d}{cuda}"));
        }
        let idx = g.index.map(|i| format!("{i} ")).unwrap_or_default();
        writeln!(w, "{label} {idx}{}", parts.join(" · "))?;
    }
    Ok(())
}

/// The Python environment with its site-packages folders, and torch's build.
fn python_text(r: &EnvReport, p: &Painter, w: &mut dyn Write) -> io::Result<()> {
    if let Some(py) = &r.python {
        let mut parts = Vec::new();
        if let Some(e) = &py.executable {
            parts.push(e.clone());
        }
        if let Some(v) = &py.version {
            parts.push(format!("Python {v}"));
        }
        parts.push(format!("{} packages", r.packages.len()));
        writeln!(w, "{} {}", p.head("PYTHON"), parts.join(" · "))?;
        for s in &py.site_packages {
            writeln!(w, "{:10} {}", "", p.paint(DIM, s))?;
        }
    }
    if let Some(t) = &r.torch {
        let build = match (&t.cuda, &t.hip) {
            (Some(c), _) => format!("CUDA {c}"),
            (None, Some(h)) => format!("ROCm {h}"),
            (None, None) => "CPU only".into(),
        };
        writeln!(w, "{} {} · {build}", p.head("TORCH"), t.version)?;
    }
    Ok(())
}

/// The scan's figures, then a table of libraries: a verdict column per target, the
/// package and path, and the code each carries.
fn libraries_text(
    r: &EnvReport,
    p: &Painter,
    opts: TextOptions,
    w: &mut dyn Write,
) -> io::Result<()> {
    let s = &r.scan;
    writeln!(
        w,
        "{} {} with CUDA code among {} shared objects · {} of fat binaries · {} entries · {:.2} s",
        p.head("LIBRARIES"),
        s.libraries,
        s.shared_objects,
        human_bytes(s.fatbin_bytes),
        s.entries,
        s.elapsed_ms as f64 / 1000.0
    )?;
    if r.libraries.is_empty() {
        return Ok(());
    }
    let cols: Vec<String> = r
        .targets
        .iter()
        .map(|t| match t.source {
            TargetSource::Present => t.arch.clone(),
            TargetSource::Named => format!("{}*", t.arch),
        })
        .collect();
    let widths: Vec<usize> = cols.iter().map(|c| c.len().max(7)).collect();
    let names: Vec<String> = r
        .libraries
        .iter()
        .map(|l| {
            let path = short_path(r, &l.path);
            match &l.package {
                Some(pkg) => format!("{pkg}  {path}"),
                None => path.to_string(),
            }
        })
        .collect();
    let name_w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .min(64);
    let mut header = format!("{:10}", "");
    for (c, wd) in cols.iter().zip(&widths) {
        header.push_str(&format!(" {c:<wd$}"));
    }
    header.push_str(&format!(" {:<name_w$}  code", "package  library"));
    writeln!(w, "{}", p.paint(DIM, header.trim_end()))?;
    for (lib, name) in r.libraries.iter().zip(&names) {
        library_row(r, lib, name, (&widths, name_w), p, opts, w)?;
    }
    if r.targets.iter().any(|t| t.source == TargetSource::Named) {
        writeln!(w, "{:10} {}", "", p.paint(DIM, "* named with --gpu"))?;
    }
    Ok(())
}

/// One library's row (its verdicts painted, its name padded to `name_w`, its code), then
/// its modules without code (with counts) and its notes.
fn library_row(
    r: &EnvReport,
    lib: &Library,
    name: &str,
    (widths, name_w): (&[usize], usize),
    p: &Painter,
    opts: TextOptions,
    w: &mut dyn Write,
) -> io::Result<()> {
    let mut line = format!("{:10}", "");
    for (t, wd) in r.targets.iter().zip(widths) {
        let v = lib.targets.get(&t.arch).copied();
        let word = v.map(|v| v.as_str()).unwrap_or("-");
        let cell = format!("{word:<wd$}");
        line.push(' ');
        line.push_str(&match v {
            Some(v) => p.paint(verdict_style(v), &cell),
            None => cell,
        });
    }
    line.push_str(&format!(
        " {name:<name_w$}  {}",
        code_list(lib, opts.counts)
    ));
    writeln!(w, "{}", line.trim_end())?;
    let modules = lib.modules_without_code.iter().filter(|_| opts.counts);
    for (arch, n) in modules {
        writeln!(
            w,
            "{:10} {}",
            "",
            p.paint(
                DIM,
                &format!("  {n} of {} modules have no code for {arch}", lib.modules)
            )
        )?;
    }
    for note in &lib.notes {
        writeln!(
            w,
            "{:10} {}",
            "",
            p.paint(YELLOW, &format!("  note: {note}"))
        )?;
    }
    Ok(())
}

/// The problems by severity (or none), then the notes.
fn problems_text(r: &EnvReport, p: &Painter, w: &mut dyn Write) -> io::Result<()> {
    if r.problems.is_empty() {
        writeln!(w, "{} none", p.head("PROBLEMS"))?;
    } else {
        writeln!(w, "{}", p.title("PROBLEMS"))?;
        for pr in &r.problems {
            let (style, word) = match pr.severity {
                Severity::Error => (RED, "error  "),
                Severity::Warning => (YELLOW, "warning"),
                Severity::Info => (DIM, "info   "),
            };
            writeln!(w, "  {} {}", p.paint(style, word), pr.message)?;
        }
    }
    if !r.notes.is_empty() {
        writeln!(w, "{}", p.title("NOTES"))?;
        for n in &r.notes {
            writeln!(w, "  {n}")?;
        }
    }
    Ok(())
}

/// Writes the report as Markdown, for pasting into an issue.
pub fn markdown(r: &EnvReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "### rosetta env\n")?;
    if r.gpus.is_empty() {
        writeln!(w, "- GPUs: none found")?;
    }
    for g in &r.gpus {
        writeln!(
            w,
            "- GPU {}: {} ({}), driver {} (CUDA {}), {} MiB",
            g.index.map(|i| i.to_string()).unwrap_or_default(),
            g.name,
            g.arch().unwrap_or_default(),
            g.driver.as_deref().unwrap_or("?"),
            g.cuda_driver_version.as_deref().unwrap_or("?"),
            g.memory_mib
                .map(|m| m.to_string())
                .unwrap_or_else(|| "?".into())
        )?;
    }
    if let Some(py) = &r.python {
        writeln!(
            w,
            "- Python: {} {} ({} packages)",
            py.executable.as_deref().unwrap_or("?"),
            py.version.as_deref().unwrap_or(""),
            r.packages.len()
        )?;
    }
    if let Some(t) = &r.torch {
        writeln!(
            w,
            "- torch {} (CUDA {})",
            t.version,
            t.cuda.as_deref().unwrap_or("none")
        )?;
    }
    if !r.libraries.is_empty() {
        writeln!(w)?;
        let archs: Vec<&str> = r.targets.iter().map(|t| t.arch.as_str()).collect();
        writeln!(w, "| package | library | {} | code |", archs.join(" | "))?;
        writeln!(w, "|---|---|{}---|", "---|".repeat(archs.len()))?;
        for lib in &r.libraries {
            let verdicts: Vec<&str> = archs
                .iter()
                .map(|a| lib.targets.get(*a).map(|v| v.as_str()).unwrap_or("-"))
                .collect();
            writeln!(
                w,
                "| {} | `{}` | {} | {} |",
                lib.package.as_deref().unwrap_or(""),
                short_path(r, &lib.path),
                verdicts.join(" | "),
                code_list(lib, false)
            )?;
        }
    }
    if !r.problems.is_empty() {
        writeln!(w, "\n**Problems**\n")?;
        for pr in &r.problems {
            let sev = match pr.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            writeln!(w, "- **{sev}** {}", pr.message)?;
        }
    }
    if !r.notes.is_empty() {
        writeln!(w, "\n**Notes**\n")?;
        for n in &r.notes {
            writeln!(w, "- {n}")?;
        }
    }
    Ok(())
}
