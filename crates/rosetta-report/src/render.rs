//! Renderers over the report model. Text is for a person in a terminal: the
//! failure first, then the causes with their evidence and what to try, then
//! the timeline and the warnings; colour only when asked. Markdown is for
//! pasting into an upstream issue; HTML is one standalone page. Every format
//! ends the diagnosis with the similar reports: the thread, its one-line fix,
//! and how similar it is.

use crate::model::{Hypothesis, Report, Similar};
use anstyle::{AnsiColor, Effects, Style as AStyle};
use std::io::{self, Write};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal text.
    Text,
    /// The JSON contract.
    Json,
    /// Markdown.
    Markdown,
    /// HTML page.
    Html,
}

/// Layout options.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Use ANSI colour.
    pub color: bool,
    /// Causes to show in text / Markdown.
    pub top: usize,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            top: 5,
        }
    }
}

/// Writes the report in a format.
pub fn render(report: &Report, format: Format, style: Style, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, report).map_err(io::Error::other)?;
            writeln!(w)
        }
        Format::Text => text(report, style, w),
        Format::Markdown => markdown(report, style, w),
        Format::Html => html(report, w),
    }
}

struct Paint {
    on: bool,
}

impl Paint {
    fn s(&self, style: AStyle, text: &str) -> String {
        if self.on {
            format!("{}{}{}", style.render(), text, style.render_reset())
        } else {
            text.to_string()
        }
    }
    fn head(&self, t: &str) -> String {
        self.s(AStyle::new().effects(Effects::BOLD), t)
    }
    fn bad(&self, t: &str) -> String {
        self.s(
            AStyle::new()
                .fg_color(Some(AnsiColor::Red.into()))
                .effects(Effects::BOLD),
            t,
        )
    }
    fn dim(&self, t: &str) -> String {
        self.s(AStyle::new().effects(Effects::DIMMED), t)
    }
    fn cause(&self, t: &str) -> String {
        self.s(AStyle::new().fg_color(Some(AnsiColor::Cyan.into())), t)
    }
    fn good(&self, t: &str) -> String {
        self.s(AStyle::new().fg_color(Some(AnsiColor::Green.into())), t)
    }
    fn warn(&self, t: &str) -> String {
        self.s(AStyle::new().fg_color(Some(AnsiColor::Yellow.into())), t)
    }
}

fn cut(s: &str, n: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn ranks_text(ranks: &[u32]) -> String {
    if ranks.is_empty() {
        return String::new();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ranks[i], ranks[j])
        } else {
            ranks[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

fn line_ref(line: Option<u64>, file: &Option<String>) -> String {
    match (line, file) {
        (Some(l), Some(f)) => format!("{f}:{l}"),
        (Some(l), None) => l.to_string(),
        (None, _) => "env".to_string(),
    }
}

fn text(r: &Report, style: Style, w: &mut dyn Write) -> io::Result<()> {
    let p = Paint { on: style.color };
    let Some(f) = &r.failure else {
        let lines: u64 = r.inputs.iter().map(|i| i.lines).sum();
        let nf = r.no_failure.as_ref();
        match nf.map(|n| n.reason.as_str()) {
            Some("empty") => writeln!(w, "{}  the input is empty", p.warn(&p.head("EMPTY")))?,
            Some("unknown-pattern") => {
                writeln!(
                    w,
                    "{}  no known failure pattern in {} lines; the last error-looking lines:",
                    p.warn(&p.head("UNKNOWN")),
                    lines
                )?;
                for e in nf.map_or(&[][..], |n| &n.lines[..]) {
                    writeln!(
                        w,
                        "   line {}  {}",
                        line_ref(e.line, &e.file),
                        cut(&e.text, 200)
                    )?;
                }
            }
            _ => writeln!(
                w,
                "{}  no failure found in {} lines",
                p.good(&p.head("OK")),
                lines
            )?,
        }
        for n in &r.notes {
            writeln!(w, "   note  {}", n)?;
        }
        similar_text(&r.similar, &p, w)?;
        return timeline_and_warnings(r, &p, w);
    };
    let mut where_ = vec![f.class.to_string(), f.phase.to_string()];
    if let Some(rank) = f.rank {
        if f.ranks.len() > 1 {
            where_.push(format!(
                "rank {} first ({} ranks: {})",
                rank,
                f.ranks.len(),
                ranks_text(&f.ranks)
            ));
        } else {
            where_.push(format!("rank {rank}"));
        }
    }
    where_.push(format!("line {}", line_ref(Some(f.line), &f.file)));
    if let Some(t) = &f.time {
        where_.push(t.clone());
    }
    writeln!(w, "{}  {}", p.bad("FAILURE"), p.head(&where_.join(" · ")))?;
    writeln!(w, "         {}", cut(&f.message, 200))?;
    if let Some(s) = &f.surfaced {
        writeln!(
            w,
            "         {}",
            p.dim(&format!(
                "then at line {}: {}",
                s.line,
                cut(&s.message, 150)
            ))
        )?;
    }
    if f.asynchronous {
        match &f.sync_point {
            Some(sp) => writeln!(
                w,
                "         {}",
                p.dim(&format!(
                    "asynchronous: raised at the sync point {}, not where the kernel failed",
                    cut(sp, 120)
                ))
            )?,
            None => writeln!(
                w,
                "         {}",
                p.dim("asynchronous: reported at a later API call, not where the kernel failed")
            )?,
        }
    }
    writeln!(
        w,
        "         {}",
        p.dim(&format!("phase: {}", f.phase_reason))
    )?;
    if let Some(file) = &f.file {
        if !r.other_inputs.is_empty() {
            writeln!(
                w,
                "         {}",
                p.dim(&format!("{file} holds the first root error"))
            )?;
        }
    }
    for o in &r.other_inputs {
        let rank = o.rank.map(|k| format!(" · rank {k}")).unwrap_or_default();
        writeln!(
            w,
            "{}     {} · {}{} · line {}:{}",
            p.bad(&p.head("ALSO")),
            o.class,
            o.phase,
            rank,
            o.file,
            o.line
        )?;
        writeln!(w, "         {}", cut(&o.message, 200))?;
    }
    writeln!(w)?;
    if !r.hypotheses.is_empty() {
        writeln!(w, "{}", p.head("CAUSES"))?;
        for (i, h) in r.hypotheses.iter().take(style.top).enumerate() {
            hypothesis_text(i + 1, h, &p, w)?;
        }
        if r.hypotheses.len() > style.top {
            let rest: Vec<String> = r.hypotheses[style.top..]
                .iter()
                .map(|h| format!("{} {:.2}", h.cause, h.confidence))
                .collect();
            writeln!(w, "   {}", p.dim(&format!("also: {}", rest.join(" · "))))?;
        }
        writeln!(w)?;
    }
    if !r.notes.is_empty() {
        writeln!(w, "{}", p.head("NOTES"))?;
        for n in &r.notes {
            writeln!(w, "   {}", n)?;
        }
        writeln!(w)?;
    }
    similar_text(&r.similar, &p, w)?;
    timeline_and_warnings(r, &p, w)
}

/// `owner/repo#123` for a GitHub thread, else the address as given.
pub fn thread_name(url: &str) -> String {
    let rest = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("http://github.com/"));
    if let Some(rest) = rest {
        let parts: Vec<&str> = rest.split(['/', '#', '?']).collect();
        if parts.len() >= 4
            && matches!(parts[2], "issues" | "pull" | "discussions")
            && parts[3].bytes().all(|b| b.is_ascii_digit())
            && !parts[3].is_empty()
        {
            return format!("{}/{}#{}", parts[0], parts[1], parts[3]);
        }
    }
    url.to_string()
}

fn similar_text(similar: &[Similar], p: &Paint, w: &mut dyn Write) -> io::Result<()> {
    if similar.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "{}  {}",
        p.head("SIMILAR REPORTS"),
        p.dim("labelled upstream reports whose failure looks like this one")
    )?;
    for s in similar {
        writeln!(
            w,
            "   {:.2}  {}  {} · {}  {}",
            s.score,
            p.cause(s.cause.as_str()),
            s.class,
            s.phase,
            s.source
        )?;
        if !s.fix.is_empty() {
            writeln!(w, "         fix  {}", cut(&s.fix, 140))?;
        }
    }
    writeln!(w)
}

fn hypothesis_text(n: usize, h: &Hypothesis, p: &Paint, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        " {} {:<18} {:.2}  {}",
        n,
        p.cause(h.cause.as_str()),
        h.confidence,
        cut(&h.summary, 110)
    )?;
    for (i, e) in h.evidence.iter().take(4).enumerate() {
        let label = if i == 0 { "evidence" } else { "" };
        writeln!(
            w,
            "     {:<9} {}: {}",
            label,
            line_ref(e.line, &e.file),
            cut(&e.text, 100)
        )?;
    }
    if h.evidence.is_empty() && h.cases.is_empty() {
        writeln!(
            w,
            "     {:<9} {}",
            "evidence",
            p.dim(
                "no line of the log points here: ranked by how often this failure has this cause"
            )
        )?;
    }
    if let Some(why) = &h.why {
        writeln!(w, "     {:<9} {}", "why", cut(why, 160))?;
    }
    if !h.cases.is_empty() {
        writeln!(w, "     {:<9} {}", "reports", cut(&cases_text(h), 140))?;
    }
    for (i, x) in h.experiments.iter().take(3).enumerate() {
        let label = if i == 0 { "try" } else { "" };
        writeln!(w, "     {:<9} {}", label, cut(x, 140))?;
    }
    Ok(())
}

fn timeline_and_warnings(r: &Report, p: &Paint, w: &mut dyn Write) -> io::Result<()> {
    if !r.timeline.is_empty() {
        let steps: Vec<String> = r
            .timeline
            .iter()
            .map(|t| {
                let lines = match t.end_line {
                    Some(e) if e != t.line => format!("{}-{}", t.line, e),
                    _ => t.line.to_string(),
                };
                if t.failed {
                    p.bad(&format!("{} ✗ ({})", t.label, lines))
                } else {
                    format!("{} ({})", t.label, lines)
                }
            })
            .collect();
        writeln!(w, "{} {}", p.head("TIMELINE"), steps.join(" · "))?;
    }
    if !r.warnings.is_empty() {
        writeln!(w)?;
        writeln!(
            w,
            "{}",
            p.head(&format!(
                "WARNINGS ({} distinct of {})",
                r.warnings.len(),
                r.warning_total
            ))
        )?;
        for wn in r.warnings.iter().take(12) {
            let ranks = if wn.ranks.len() > 1 {
                format!(" ranks {}", ranks_text(&wn.ranks))
            } else {
                String::new()
            };
            writeln!(
                w,
                " {:>6}  ×{:<5} {}{}",
                wn.line,
                wn.count,
                cut(&wn.text, 110),
                p.dim(&ranks)
            )?;
            if let Some(n) = &wn.note {
                writeln!(w, "         {}", p.dim(&format!("note: {}", cut(n, 150))))?;
            }
        }
        if r.warnings.len() > 12 {
            writeln!(
                w,
                "         {}",
                p.dim(&format!(
                    "… {} more (--format json lists all)",
                    r.warnings.len() - 12
                ))
            )?;
        }
    }
    let lines: u64 = r.inputs.iter().map(|i| i.lines).sum();
    let bytes: u64 = r.inputs.iter().map(|i| i.bytes).sum();
    for i in &r.inputs {
        if let Some(n) = &i.note {
            writeln!(w, "{}", p.bad(&format!("input {}: {}", i.path, n)))?;
        }
    }
    writeln!(
        w,
        "{}",
        p.dim(&format!(
            "read {} lines ({}) from {} input(s) · {}",
            lines,
            human_bytes(bytes),
            r.inputs.len(),
            r.rosetta
        ))
    )
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The reports behind a hypothesis: thread (or case id) and similarity.
fn cases_text(h: &Hypothesis) -> String {
    h.cases
        .iter()
        .map(|c| {
            let name = if c.source.starts_with("http") {
                thread_name(&c.source)
            } else {
                c.case.clone()
            };
            format!("{name} ({:.2})", c.score)
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The summary, and the similar reports that name the same cause.
fn summary_with_cases(h: &Hypothesis) -> String {
    if h.cases.is_empty() {
        h.summary.clone()
    } else {
        format!("{} — similar reports: {}", h.summary, cases_text(h))
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown(r: &Report, style: Style, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "### rosetta diagnosis")?;
    writeln!(w)?;
    match &r.failure {
        None => match r.no_failure.as_ref() {
            Some(n) if n.reason == "empty" => writeln!(w, "The input is empty.")?,
            Some(n) if n.reason == "unknown-pattern" => {
                writeln!(w, "No known failure pattern; the last error-looking lines:")?;
                writeln!(w)?;
                writeln!(w, "```")?;
                for e in &n.lines {
                    writeln!(w, "{}: {}", line_ref(e.line, &e.file), cut(&e.text, 300))?;
                }
                writeln!(w, "```")?;
            }
            _ => writeln!(w, "No failure found.")?,
        },
        Some(f) => {
            let rank = f.rank.map(|r| format!(", rank {r}")).unwrap_or_default();
            writeln!(
                w,
                "**Failure:** `{}` in `{}`{} at line {}",
                f.class, f.phase, rank, f.line
            )?;
            writeln!(w)?;
            writeln!(w, "```")?;
            writeln!(w, "{}", cut(&f.message, 400))?;
            writeln!(w, "```")?;
            if f.asynchronous {
                writeln!(w)?;
                writeln!(w, "_Asynchronous CUDA error: the traceback names a sync point{}, not the failing kernel._", f.sync_point.as_ref().map(|s| format!(" (`{}`)", cut(s, 100))).unwrap_or_default())?;
            }
        }
    }
    for o in &r.other_inputs {
        writeln!(w)?;
        writeln!(
            w,
            "**Also failed:** `{}` in `{}` at `{}:{}`",
            o.class, o.phase, o.file, o.line
        )?;
        writeln!(w)?;
        writeln!(w, "```")?;
        writeln!(w, "{}", cut(&o.message, 400))?;
        writeln!(w, "```")?;
    }
    if !r.hypotheses.is_empty() {
        writeln!(w)?;
        writeln!(w, "| # | cause | confidence | summary | try |")?;
        writeln!(w, "|---|---|---|---|---|")?;
        for (i, h) in r.hypotheses.iter().take(style.top).enumerate() {
            writeln!(
                w,
                "| {} | `{}` | {:.2} | {} | {} |",
                i + 1,
                h.cause,
                h.confidence,
                md_escape(&summary_with_cases(h)),
                md_escape(&h.experiments.first().cloned().unwrap_or_default())
            )?;
        }
        for (i, h) in r.hypotheses.iter().take(style.top).enumerate() {
            if h.evidence.is_empty() {
                continue;
            }
            writeln!(w)?;
            writeln!(
                w,
                "<details><summary>{}. {} — evidence</summary>",
                i + 1,
                h.cause
            )?;
            writeln!(w)?;
            writeln!(w, "```")?;
            for e in &h.evidence {
                writeln!(w, "{}: {}", line_ref(e.line, &e.file), cut(&e.text, 300))?;
            }
            writeln!(w, "```")?;
            if !h.references.is_empty() {
                writeln!(w)?;
                for rf in &h.references {
                    writeln!(w, "- {rf}")?;
                }
            }
            writeln!(w)?;
            writeln!(w, "</details>")?;
        }
    }
    if !r.notes.is_empty() {
        writeln!(w)?;
        writeln!(w, "**Notes**")?;
        writeln!(w)?;
        for n in &r.notes {
            writeln!(w, "- {}", md_escape(n))?;
        }
    }
    if !r.similar.is_empty() {
        writeln!(w)?;
        writeln!(w, "**Similar reports**")?;
        writeln!(w)?;
        writeln!(w, "| similarity | thread | cause | fix |")?;
        writeln!(w, "|---|---|---|---|")?;
        for s in &r.similar {
            writeln!(
                w,
                "| {:.2} | {} | `{}` ({} in {}) | {} |",
                s.score,
                if s.source.starts_with("http") {
                    format!("[{}]({})", md_escape(&thread_name(&s.source)), s.source)
                } else {
                    md_escape(&s.source)
                },
                s.cause,
                s.class,
                s.phase,
                md_escape(&s.fix)
            )?;
        }
    }
    if !r.timeline.is_empty() {
        writeln!(w)?;
        let steps: Vec<String> = r
            .timeline
            .iter()
            .map(|t| {
                format!(
                    "{}{} (line {})",
                    t.label,
                    if t.failed { " ✗" } else { "" },
                    t.line
                )
            })
            .collect();
        writeln!(w, "**Timeline:** {}", steps.join(" → "))?;
    }
    if !r.warnings.is_empty() {
        writeln!(w)?;
        writeln!(
            w,
            "<details><summary>Warnings ({} distinct of {})</summary>",
            r.warnings.len(),
            r.warning_total
        )?;
        writeln!(w)?;
        writeln!(w, "```")?;
        for wn in r.warnings.iter().take(40) {
            writeln!(w, "{:>6} ×{:<5} {}", wn.line, wn.count, cut(&wn.text, 200))?;
        }
        writeln!(w, "```")?;
        writeln!(w)?;
        writeln!(w, "</details>")?;
    }
    writeln!(w)?;
    writeln!(w, "<sub>{}</sub>", r.rosetta)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>rosetta diagnosis</title>"
    )?;
    writeln!(w, "<style>body{{font:14px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em}}code,pre{{font:12px ui-monospace,monospace}}pre{{background:#f6f6f6;padding:.6em;overflow:auto}}.fail{{color:#b00}}table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}}</style></head><body>")?;
    writeln!(w, "<h1>rosetta diagnosis</h1>")?;
    match &r.failure {
        None => match r.no_failure.as_ref() {
            Some(n) if n.reason == "empty" => writeln!(w, "<p>The input is empty.</p>")?,
            Some(n) if n.reason == "unknown-pattern" => {
                writeln!(
                    w,
                    "<p>No known failure pattern; the last error-looking lines:</p><pre>"
                )?;
                for e in &n.lines {
                    writeln!(w, "{}: {}", esc(&line_ref(e.line, &e.file)), esc(&e.text))?;
                }
                writeln!(w, "</pre>")?;
            }
            _ => writeln!(w, "<p>No failure found.</p>")?,
        },
        Some(f) => {
            writeln!(
                w,
                "<h2 class=\"fail\">{} · {} · line {}</h2>",
                esc(f.class.as_str()),
                esc(f.phase.as_str()),
                f.line
            )?;
            writeln!(w, "<pre>{}</pre>", esc(&f.message))?;
            if f.asynchronous {
                writeln!(w, "<p>Asynchronous: the traceback names a sync point{}, not the failing kernel.</p>", f.sync_point.as_ref().map(|s| format!(" (<code>{}</code>)", esc(s))).unwrap_or_default())?;
            }
        }
    }
    for o in &r.other_inputs {
        writeln!(
            w,
            "<h2 class=\"fail\">also: {} · {} · {}:{}</h2><pre>{}</pre>",
            esc(o.class.as_str()),
            esc(o.phase.as_str()),
            esc(&o.file),
            o.line,
            esc(&o.message)
        )?;
    }
    if !r.hypotheses.is_empty() {
        writeln!(w, "<h2>Causes</h2><table><tr><th>#</th><th>cause</th><th>confidence</th><th>summary and evidence</th><th>try</th></tr>")?;
        for (i, h) in r.hypotheses.iter().enumerate() {
            let ev: String = h
                .evidence
                .iter()
                .map(|e| {
                    format!(
                        "<br><code>{}: {}</code>",
                        line_ref(e.line, &e.file),
                        esc(&cut(&e.text, 200))
                    )
                })
                .collect();
            let tries: String = h
                .experiments
                .iter()
                .map(|x| format!("<li>{}</li>", esc(x)))
                .collect();
            writeln!(w, "<tr><td>{}</td><td><code>{}</code></td><td>{:.2}</td><td>{}{}</td><td><ul>{}</ul></td></tr>", i + 1, h.cause, h.confidence, esc(&summary_with_cases(h)), ev, tries)?;
        }
        writeln!(w, "</table>")?;
    }
    if !r.notes.is_empty() {
        writeln!(w, "<h2>Notes</h2><ul>")?;
        for n in &r.notes {
            writeln!(w, "<li>{}</li>", esc(n))?;
        }
        writeln!(w, "</ul>")?;
    }
    if !r.similar.is_empty() {
        writeln!(w, "<h2>Similar reports</h2><table><tr><th>similarity</th><th>thread</th><th>cause</th><th>fix</th></tr>")?;
        for s in &r.similar {
            writeln!(
                w,
                "<tr><td>{:.2}</td><td>{}</td><td><code>{}</code> ({} in {})</td><td>{}</td></tr>",
                s.score,
                if s.source.starts_with("http") {
                    format!(
                        "<a href=\"{}\">{}</a>",
                        esc(&s.source),
                        esc(&thread_name(&s.source))
                    )
                } else {
                    esc(&s.source)
                },
                s.cause,
                s.class,
                s.phase,
                esc(&s.fix)
            )?;
        }
        writeln!(w, "</table>")?;
    }
    if !r.timeline.is_empty() {
        writeln!(w, "<h2>Timeline</h2><ol>")?;
        for t in &r.timeline {
            writeln!(
                w,
                "<li{}>{} — line {}{}</li>",
                if t.failed { " class=\"fail\"" } else { "" },
                esc(&t.label),
                t.line,
                t.time
                    .as_ref()
                    .map(|x| format!(" ({})", esc(x)))
                    .unwrap_or_default()
            )?;
        }
        writeln!(w, "</ol>")?;
    }
    if !r.warnings.is_empty() {
        writeln!(
            w,
            "<h2>Warnings ({} distinct of {})</h2><pre>",
            r.warnings.len(),
            r.warning_total
        )?;
        for wn in &r.warnings {
            writeln!(w, "{:>6} ×{:<5} {}", wn.line, wn.count, esc(&wn.text))?;
        }
        writeln!(w, "</pre>")?;
    }
    writeln!(w, "<p><small>{}</small></p></body></html>", esc(&r.rosetta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_compress_to_ranges() {
        assert_eq!(ranks_text(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
    }

    #[test]
    fn threads_get_short_names() {
        assert_eq!(
            thread_name("https://github.com/vllm-project/vllm/issues/12345"),
            "vllm-project/vllm#12345"
        );
        assert_eq!(
            thread_name("https://github.com/sgl-project/sglang/pull/77#issuecomment-1"),
            "sgl-project/sglang#77"
        );
        assert_eq!(thread_name("rosetta probe x.py"), "rosetta probe x.py");
        assert_eq!(
            thread_name("https://github.com/a/b/blob/main/x.py"),
            "https://github.com/a/b/blob/main/x.py"
        );
    }

    /// A report with similar reports and a cause only they name, in every format.
    fn with_similar() -> Report {
        use crate::model::{CaseRef, Failure, Similar};
        use rosetta_schema::{Cause, FailureClass, Phase};
        let case = |id: &str, url: &str, score: f64| CaseRef {
            case: id.into(),
            source: url.into(),
            score,
        };
        Report {
            rosetta: "rosetta test".into(),
            failure: Some(Failure {
                class: FailureClass::CommError,
                phase: Phase::CommInit,
                rank: Some(0),
                ranks: vec![0, 1],
                line: 12,
                file: None,
                time: None,
                message: "torch.distributed.DistBackendError: NCCL error: unhandled system error".into(),
                exception: None,
                surfaced: None,
                asynchronous: false,
                sync_point: None,
                phase_reason: "the first collective".into(),
                frames: vec![],
            }),
            hypotheses: vec![
                Hypothesis {
                    cause: Cause::CommSetup,
                    rule: "nccl-unhandled-system-error".into(),
                    confidence: 0.62,
                    summary: "NCCL could not set up its transport".into(),
                    why: None,
                    evidence: vec![],
                    experiments: vec!["NCCL_DEBUG=INFO  (env var + restart)".into()],
                    references: vec![],
                    also_rules: vec![],
                    cases: vec![case("rx-001", "https://github.com/pytorch/torchtitan/issues/853", 0.71)],
                },
                Hypothesis {
                    cause: Cause::DriverEnv,
                    rule: "similar-reports".into(),
                    confidence: 0.38,
                    summary: "seen in 1 similar report: Run the container with a larger /dev/shm".into(),
                    why: Some("no rule fired for driver-env; the labelled reports whose failure looks most like this one name it".into()),
                    evidence: vec![],
                    experiments: vec!["Run the container with a larger /dev/shm  (as in pytorch/torchtitan#853)".into()],
                    references: vec!["https://github.com/pytorch/torchtitan/issues/853".into()],
                    also_rules: vec![],
                    cases: vec![case("rx-001", "https://github.com/pytorch/torchtitan/issues/853", 0.71)],
                },
            ],
            similar: vec![
                Similar {
                    case: "rx-001".into(),
                    source: "https://github.com/pytorch/torchtitan/issues/853".into(),
                    class: FailureClass::HostOom,
                    phase: Phase::CommInit,
                    cause: Cause::CommSetup,
                    fix: "Run the container with a larger /dev/shm (--shm-size=1g).".into(),
                    score: 0.71,
                },
                Similar {
                    case: "h2-015".into(),
                    source: "rosetta probe corpus/probes/port_taken.py, run on an NVIDIA H200".into(),
                    class: FailureClass::CommError,
                    phase: Phase::CommInit,
                    cause: Cause::CommSetup,
                    fix: "Pick a free --master-port | <or> stop the old job.".into(),
                    score: 0.34,
                },
            ],
            ..Report::default()
        }
    }

    #[test]
    fn similar_reports_render_in_every_format() {
        let r = with_similar();
        for (name, f) in [
            ("text", Format::Text),
            ("markdown", Format::Markdown),
            ("html", Format::Html),
        ] {
            let mut out = Vec::new();
            render(&r, f, Style::default(), &mut out).unwrap();
            insta::assert_snapshot!(format!("similar_{name}"), String::from_utf8(out).unwrap());
        }
        let mut out = Vec::new();
        render(&r, Format::Json, Style::default(), &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["similar"][0]["case"], "rx-001");
        assert_eq!(v["similar"][0]["cause"], "comm-setup");
        assert_eq!(v["hypotheses"][1]["cases"][0]["score"], 0.71);
        assert!(v["hypotheses"][0].get("also_rules").is_none());
    }

    #[test]
    fn an_empty_report_renders_in_every_format() {
        let r = Report::default();
        for f in [Format::Text, Format::Json, Format::Markdown, Format::Html] {
            let mut out = Vec::new();
            render(&r, f, Style::default(), &mut out).unwrap();
            assert!(!out.is_empty());
        }
    }
}
