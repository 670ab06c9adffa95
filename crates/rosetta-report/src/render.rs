//! Renderers over the report model. Text is for a person in a terminal: the
//! failure first, then the causes with their evidence and what to try, then
//! the timeline and the warnings; colour only when asked. Markdown is for
//! pasting into an upstream issue; HTML is one standalone page. Every format
//! ends the diagnosis with the similar reports: the thread, its one-line fix,
//! and how similar it is.

use crate::{Experiment, Hypothesis, Report, Similar, TimelineEntry};
use anstyle::{AnsiColor, Effects, Style as AStyle};
use rosetta_schema::human_bytes;
use rosetta_schema::Phase;
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

/// Writes the report in a format; text wraps to [`text_width`].
pub fn render(report: &Report, format: Format, style: Style, w: &mut dyn Write) -> io::Result<()> {
    render_width(report, format, style, text_width(), w)
}

/// Writes the report in a format, text wrapped to `width` columns.
pub fn render_width(
    report: &Report,
    format: Format,
    style: Style,
    width: usize,
    w: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, report).map_err(io::Error::other)?;
            writeln!(w)
        }
        Format::Text => text(report, style, width.max(40), w),
        Format::Markdown => markdown(report, style, w),
        Format::Html => html(report, w),
    }
}

struct Paint {
    on: bool,
}

impl Paint {
    fn s(&self, style: AStyle, text: &str) -> String {
        if self.on && !text.is_empty() {
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
    fn plain(&self, t: &str) -> String {
        t.to_string()
    }
}

/// Columns a string takes (one per character: the report's own marks are all narrow).
fn cols(s: &str) -> usize {
    s.chars().count()
}

/// Pads to `n` columns before any colour is added, so escape codes never shift a column.
fn pad(s: &str, n: usize) -> String {
    format!("{s}{}", " ".repeat(n.saturating_sub(cols(s))))
}

/// End-cut, for Markdown and HTML cells only (text never cuts what it does not quote).
fn cut(s: &str, n: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Shortens quoted log text to `n` columns by cutting its middle: the start says where the
/// line comes from, the end is the error itself, so both stay.
fn shorten_middle(s: &str, n: usize) -> String {
    let s = s.trim();
    let len = cols(s);
    if len <= n {
        return s.to_string();
    }
    // Two columns for the spaces around the mark.
    let n = n.max(14) - 2;
    // The error's own words (`CUDA error: …`, `…Error: …`) are kept whole when they fit
    // beside a short head.
    let chars: Vec<char> = s.chars().collect();
    let error_start = ["Error", "error:", "Exception", "Assertion", "assert"]
        .iter()
        .filter_map(|m| s.rfind(m))
        .max()
        .map(|b| s[..b].rfind(' ').map_or(0, |sp| sp + 1))
        .map(|b| s[..b].chars().count());
    let tail = match error_start {
        Some(start) if len - start <= n - 1 - n.min(40) / 4 && start > 0 => {
            // Start at the word before, when it fits (`CUDA error:`).
            let before = chars[..start - 1]
                .iter()
                .rposition(|c| *c == ' ')
                .map_or(0, |p| p + 1);
            if len - before <= n - 1 - n.min(40) / 4 {
                len - before
            } else {
                len - start
            }
        }
        _ => {
            // Half and half, each end cut at a word when one is near.
            let t = (n - 1) / 2;
            let from = len - t;
            chars[from..]
                .iter()
                .take(12)
                .position(|c| *c == ' ')
                .map_or(t, |k| t - k - 1)
        }
    };
    let mut head = n - 1 - tail;
    if let Some(k) = chars[..head].iter().rev().take(12).position(|c| *c == ' ') {
        head -= k + 1;
    }
    let h: String = chars[..head].iter().collect();
    let t: String = chars[len - tail..].iter().collect();
    format!("{} … {}", h.trim_end(), t.trim_start())
}

/// Greedy word wrap: the first line holds `first` columns, the others `rest`. Runs of spaces
/// inside a line are kept (`cmd  (one restart)`); a word longer than a line gets a line of
/// its own, whole.
fn wrap(text: &str, first: usize, rest: usize) -> Vec<String> {
    wrap_with(text, first, rest, false)
}

/// `wrap`, with words longer than a line (a long path in quoted log text) split after a
/// separator near the line's end (`/`, `_`, `.`, …), or at the width when none is near,
/// when `split_long`; kept whole otherwise (a command the user types).
fn wrap_with(text: &str, first: usize, rest: usize, split_long: bool) -> Vec<String> {
    let (first, rest) = (first.max(12), rest.max(12));
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut avail = first;
    // Words with the spaces that preceded them.
    let mut tokens: Vec<(String, String)> = Vec::new();
    let mut sep = String::new();
    let mut word = String::new();
    for c in text.trim().chars() {
        if c == ' ' {
            if !word.is_empty() {
                tokens.push((std::mem::take(&mut sep), std::mem::take(&mut word)));
            }
            sep.push(' ');
        } else if c == '\n' {
            if !word.is_empty() {
                tokens.push((std::mem::take(&mut sep), std::mem::take(&mut word)));
            }
            sep = " ".into();
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        tokens.push((sep, word));
    }
    for (sep, word) in tokens {
        let need = if cur.is_empty() {
            cols(&word)
        } else {
            cols(&sep) + cols(&word)
        };
        if cols(&cur) + need <= avail {
            if !cur.is_empty() {
                cur.push_str(&sep);
            }
            cur.push_str(&word);
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
            avail = rest;
        }
        // A word longer than a line (a path, a code expression) stays whole on its own
        // line where it must be copied; quoted text splits it.
        if cols(&word) > avail && split_long {
            let mut w = word.as_str();
            while cols(w) > avail {
                let (head, tail) = split_word(w, avail);
                lines.push(head.to_string());
                avail = rest;
                w = tail;
            }
            cur = w.to_string();
        } else if cols(&word) > avail {
            lines.push(word);
            avail = rest;
        } else {
            cur = word;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Splits a word longer than `avail` columns: after the last separator in the line's
/// last third, else at `avail` columns.
fn split_word(w: &str, avail: usize) -> (&str, &str) {
    let ends: Vec<usize> = w
        .char_indices()
        .map(|(b, c)| b + c.len_utf8())
        .take(avail.max(1))
        .collect();
    let hard = *ends.last().unwrap_or(&w.len());
    let soft = w
        .char_indices()
        .take(avail.max(1))
        .filter(|(_, c)| {
            matches!(
                c,
                '/' | '\\' | '_' | '.' | '-' | ',' | ':' | ';' | '=' | '&' | '?'
            )
        })
        .map(|(b, c)| b + c.len_utf8())
        .filter(|&e| e * 3 >= hard * 2 && e < w.len())
        .last();
    w.split_at(soft.unwrap_or(hard))
}

/// A paragraph laid out as `diagnose` lays out its own: `lead` (taking `lead_w` columns)
/// then `text` wrapped to `width` columns, later lines indented to `indent`. For the other
/// commands' text output (`config`, `preflight`), so that every command wraps alike.
pub fn paragraph(lead: &str, lead_w: usize, indent: usize, text: &str, width: usize) -> String {
    let mut out = String::new();
    let first = width.saturating_sub(lead_w);
    let rest = width.saturating_sub(indent);
    for (i, l) in wrap(text, first, rest).iter().enumerate() {
        if i == 0 {
            out.push_str(lead);
        } else {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(l);
    }
    out
}

/// Packs pieces joined by `sep` into lines of `first` then `rest` columns, breaking only
/// between pieces: a piece (a timestamp, a step) moves whole to the next line, and is
/// wrapped at its spaces only when it is longer than a line by itself. Each line is a list
/// of (piece index, text); separators carry no index.
fn pack(
    pieces: &[String],
    first: usize,
    rest: usize,
    sep: &str,
) -> Vec<Vec<(Option<usize>, String)>> {
    let mut lines: Vec<Vec<(Option<usize>, String)>> = Vec::new();
    let mut line: Vec<(Option<usize>, String)> = Vec::new();
    let mut line_w = 0;
    let mut avail = first;
    let sep_w = cols(sep.trim_end());
    for (k, piece) in pieces.iter().enumerate() {
        let last = k + 1 == pieces.len();
        let piece_w = cols(piece) + if last { 0 } else { sep_w };
        if line_w > 0 && line_w + piece_w > avail {
            lines.push(std::mem::take(&mut line));
            line_w = 0;
            avail = rest;
        }
        for (n, part) in wrap(piece, avail.saturating_sub(line_w), rest)
            .into_iter()
            .enumerate()
        {
            if n > 0 {
                lines.push(std::mem::take(&mut line));
                line_w = 0;
                avail = rest;
            }
            line_w += cols(&part);
            line.push((Some(k), part));
        }
        if !last {
            line.push((None, sep.to_string()));
            line_w += cols(sep);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    for l in &mut lines {
        // A separator that ends a line is trimmed.
        if let Some((None, s)) = l.last_mut() {
            *s = s.trim_end().to_string();
        }
    }
    lines
}

/// Text laid out to a width: a lead (a label, already painted) then a paragraph that wraps
/// with its continuation lines indented.
struct Out<'a> {
    w: &'a mut dyn Write,
    width: usize,
}

impl Out<'_> {
    /// `lead` is written as is and takes `lead_w` columns; `text` follows it, its later lines
    /// start at column `indent`; `paint` colours each piece after it is laid out.
    fn para(
        &mut self,
        lead: &str,
        lead_w: usize,
        indent: usize,
        text: &str,
        paint: &dyn Fn(&str) -> String,
    ) -> io::Result<()> {
        self.para_with(lead, lead_w, indent, text, paint, true)
    }

    /// `para`, but with `split_long` false for text the user types or looks up (a command,
    /// a sync point): a word longer than a line then stays whole.
    fn para_with(
        &mut self,
        lead: &str,
        lead_w: usize,
        indent: usize,
        text: &str,
        paint: &dyn Fn(&str) -> String,
        split_long: bool,
    ) -> io::Result<()> {
        let first = self.width.saturating_sub(lead_w);
        let rest = self.width.saturating_sub(indent);
        for (i, l) in wrap_with(text, first, rest, split_long).iter().enumerate() {
            if i == 0 {
                writeln!(self.w, "{lead}{}", paint(l))?;
            } else {
                writeln!(self.w, "{}{}", " ".repeat(indent), paint(l))?;
            }
        }
        Ok(())
    }

    /// A blank line.
    fn nl(&mut self) -> io::Result<()> {
        writeln!(self.w)
    }
}

/// The width text output wraps to: `COLUMNS` when set, else the terminal's width when
/// standard output is one, else 100. Never below 60.
pub fn text_width() -> usize {
    use std::io::IsTerminal;
    let w = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w > 0)
        .or_else(|| {
            let out = io::stdout();
            if out.is_terminal() {
                terminal_size::terminal_size_of(&out).map(|(w, _)| w.0 as usize)
            } else {
                None
            }
        })
        .unwrap_or(100);
    w.max(60)
}

/// `1 line`, `2 lines`: a count and its noun, plural when it is not one.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
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

/// `line 162`, or `node2.log:162` when several inputs were read; `env` for a machine fact.
fn line_ref(line: Option<u64>, file: &Option<String>) -> String {
    match (line, file) {
        (Some(l), Some(f)) => format!("{f}:{l}"),
        (Some(l), None) => format!("line {l}"),
        (None, _) => "env".to_string(),
    }
}

/// Rank, line and time of a failure, as every format words them.
fn rank_line_time(f: &crate::Failure) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(rank) = f.rank {
        if f.ranks.len() > 1 {
            out.push(format!(
                "rank {} first ({} ranks: {})",
                rank,
                f.ranks.len(),
                ranks_text(&f.ranks)
            ));
        } else {
            out.push(format!("rank {rank}"));
        }
    }
    out.push(line_ref(Some(f.line), &f.file));
    if let Some(t) = &f.time {
        out.push(t.clone());
    }
    out
}

/// The phase and why, in words: `decode: the traceback passes through …`.
fn phase_words(f: &crate::Failure) -> String {
    let phase = match f.phase {
        rosetta_schema::Phase::Unknown => "phase unknown".to_string(),
        ph => ph.to_string(),
    };
    format!("{phase}: {}", f.phase_reason)
}

/// What a log that stops inside a start-up step means, in words.
fn ends_during_words(e: &crate::EndsDuring) -> String {
    let at = line_ref(Some(e.line), &e.file);
    let what = if e.finished {
        format!(
            "the log ends during start-up, after {} ({} at {at}): the step a server takes next never begins",
            e.phase, e.step
        )
    } else {
        format!(
            "the log ends during {} ({}): {} began at {at} and nothing finishes it",
            e.phase,
            e.phase.about(),
            e.step
        )
    };
    let after = match e.lines_after {
        0 => String::new(),
        n => format!("; {} follow without an error", count(n, "line")),
    };
    let stuck = if e.finished {
        "before the next step"
    } else {
        "in that step"
    };
    format!(
        "{what}{after}. The log was cut off, or the process hung or was killed there; \
         if it still runs, it is stuck {stuck}."
    )
}

/// Column where the text after a cause's labels starts.
const LABEL_COL: usize = 15;

/// The terminal report: the failure (or why there is none), the causes, the notes, the
/// similar reports, then the timeline and the warnings.
fn text(r: &Report, style: Style, width: usize, w: &mut dyn Write) -> io::Result<()> {
    let p = Paint { on: style.color };
    let mut o = Out { w, width };
    let Some(f) = &r.failure else {
        text_no_failure(r, &p, &mut o)?;
        for n in &r.notes {
            o.para("   note  ", 9, 11, n, &|s| p.plain(s))?;
        }
        similar_text(&r.similar, &p, &mut o)?;
        return timeline_and_warnings(r, &p, &mut o);
    };
    failure_text(r, f, &p, &mut o)?;
    other_inputs_text(r, &p, &mut o)?;
    o.nl()?;
    top_causes_text(r, style, &p, &mut o)?;
    if !r.notes.is_empty() {
        writeln!(o.w, "{}", p.head("NOTES"))?;
        for n in &r.notes {
            o.para("   ", 3, 5, n, &|s| p.plain(s))?;
        }
        o.nl()?;
    }
    similar_text(&r.similar, &p, &mut o)?;
    timeline_and_warnings(r, &p, &mut o)
}

/// The head line when there is no failure: empty, unknown pattern, not in the log,
/// unfinished, or OK.
fn text_no_failure(r: &Report, p: &Paint, o: &mut Out) -> io::Result<()> {
    let lines: u64 = r.inputs.iter().map(|i| i.lines).sum();
    let nf = r.no_failure.as_ref();
    match nf.map(|n| n.reason.as_str()) {
        Some("empty") => {
            let head = p.warn(&p.head("EMPTY"));
            o.para(&format!("{head}  "), 7, 7, "the input is empty", &|s| {
                p.plain(s)
            })?;
        }
        Some("unknown-pattern") => unknown_pattern_text(nf, lines, p, o)?,
        Some("not-in-log") => {
            let head = p.warn(&p.head("NOT IN LOG"));
            o.para(
                &format!("{head}  "),
                12,
                12,
                &format!(
                    "the run failed (see above), but its {} show no error line",
                    count(lines, "line")
                ),
                &|s| p.plain(s),
            )?;
        }
        Some("unfinished") => {
            let head = p.warn(&p.head("UNFINISHED"));
            let e = nf.and_then(|n| n.ends_during.as_ref());
            o.para(
                &format!("{head}  "),
                12,
                12,
                &e.map_or_else(String::new, ends_during_words),
                &|s| p.plain(s),
            )?;
        }
        _ => {
            let ok = p.good(&p.head("OK"));
            o.para(
                &format!("{ok}  "),
                4,
                4,
                &format!("no failure found in {}", count(lines, "line")),
                &|s| p.plain(s),
            )?;
        }
    }
    Ok(())
}

/// No known failure pattern: the head, the last error-looking lines, and where the log ends.
fn unknown_pattern_text(
    nf: Option<&crate::NoFailure>,
    lines: u64,
    p: &Paint,
    o: &mut Out,
) -> io::Result<()> {
    let head = p.warn(&p.head("UNKNOWN"));
    o.para(
        &format!("{head}  "),
        9,
        9,
        &format!(
            "no known failure pattern in {}; the last error-looking lines:",
            count(lines, "line")
        ),
        &|s| p.plain(s),
    )?;
    for e in nf.map_or(&[][..], |n| &n.lines[..]) {
        let r = format!("{}  ", line_ref(e.line, &e.file));
        let room = o.width.saturating_sub(9 + cols(&r)).max(20);
        writeln!(
            o.w,
            "         {}{}",
            p.dim(&r),
            shorten_middle(&e.text, room)
        )?;
    }
    if let Some(e) = nf.and_then(|n| n.ends_during.as_ref()) {
        o.para("         ", 9, 9, &ends_during_words(e), &|s| p.plain(s))?;
    }
    Ok(())
}

/// The failure: its header, message, surfaced error, sync point, phase and first root input.
fn failure_text(r: &Report, f: &crate::Failure, p: &Paint, o: &mut Out) -> io::Result<()> {
    let mut where_ = vec![f.class.to_string(), f.phase.to_string()];
    where_.extend(rank_line_time(f));
    let ind = "         ";
    let width = o.width;
    let body = width.saturating_sub(ind.len()).max(20);
    // The header's pieces (class, phase, rank, line, time) move whole to the next line:
    // a timestamp is never broken between its date and its time.
    for (n, line) in pack(&where_, width - 9, width - 9, " · ")
        .iter()
        .enumerate()
    {
        let text: String = line.iter().map(|(_, t)| t.as_str()).collect();
        let lead = if n == 0 {
            format!("{}  ", p.bad("FAILURE"))
        } else {
            ind.to_string()
        };
        writeln!(o.w, "{lead}{}", p.head(&text))?;
    }
    // The failing line is quoted log text: at most three lines of it, cut in the middle.
    o.para(ind, 9, 9, &shorten_middle(&f.message, 3 * body), &|s| {
        p.plain(s)
    })?;
    if let Some(s) = &f.surfaced {
        let head = format!("then at {}: ", line_ref(Some(s.line), &f.file));
        let msg = shorten_middle(&s.message, 2 * body - cols(&head));
        o.para(ind, 9, 11, &format!("{head}{msg}"), &|s| p.dim(s))?;
    }
    if f.asynchronous {
        // The sync point is code the reader looks up: wrapped, never cut.
        let t = match &f.sync_point {
            Some(sp) => format!(
                "asynchronous: raised at the sync point {}, not where the kernel failed",
                sp.trim()
            ),
            None => {
                "asynchronous: reported at a later API call, not where the kernel failed".into()
            }
        };
        o.para_with(ind, 9, 11, &t, &|s| p.dim(s), false)?;
    }
    if !f.phase_reason.is_empty() {
        o.para(ind, 9, 11, &phase_words(f), &|s| p.dim(s))?;
    }
    if let Some(file) = &r.first_root_error_in {
        o.para(
            ind,
            9,
            11,
            &format!("{file} holds the first root error"),
            &|s| p.dim(s),
        )?;
    }
    Ok(())
}

/// One ALSO head and message per other input that failed too.
fn other_inputs_text(r: &Report, p: &Paint, o: &mut Out) -> io::Result<()> {
    let ind = "         ";
    let body = o.width.saturating_sub(ind.len()).max(20);
    for x in &r.other_inputs {
        let rank = x.rank.map(|k| format!(" · rank {k}")).unwrap_or_default();
        let head = format!("{} · {}{rank} · {}:{}", x.class, x.phase, x.file, x.line);
        o.para(&format!("{}     ", p.bad("ALSO")), 9, 9, &head, &|s| {
            p.head(s)
        })?;
        o.para(ind, 9, 9, &shorten_middle(&x.message, 2 * body), &|s| {
            p.plain(s)
        })?;
    }
    Ok(())
}

/// The top causes, their names padded to one column, then the lower ones in a line.
fn top_causes_text(r: &Report, style: Style, p: &Paint, o: &mut Out) -> io::Result<()> {
    if !r.hypotheses.is_empty() {
        writeln!(o.w, "{}", p.head("CAUSES"))?;
        let cause_w = r
            .hypotheses
            .iter()
            .take(style.top)
            .map(|h| cols(h.cause.as_str()))
            .max()
            .unwrap_or(0)
            .max(18);
        for i in 0..r.hypotheses.len().min(style.top) {
            hypothesis_text(&r.hypotheses, i, cause_w, p, o)?;
        }
        if let Some(rest) = lower_causes(r, style.top) {
            o.para("   ", 3, 5, &format!("also: {rest}"), &|s| p.dim(s))?;
        }
        o.nl()?;
    }
    Ok(())
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

fn similar_text(similar: &[Similar], p: &Paint, o: &mut Out) -> io::Result<()> {
    if similar.is_empty() {
        return Ok(());
    }
    let head = "SIMILAR REPORTS";
    o.para(
        &format!("{}  ", p.head(head)),
        cols(head) + 2,
        cols(head) + 2,
        "labelled upstream reports whose failure looks like this one",
        &|s| p.dim(s),
    )?;
    for s in similar {
        let cause = s.cause.as_str();
        let lead = format!("   {:.2}  {}  ", s.score, p.cause(cause));
        let lead_w = 3 + 4 + 2 + cols(cause) + 2;
        o.para(
            &lead,
            lead_w,
            9,
            &format!("{} · {}  {}", s.class, s.phase, s.source),
            &|x| p.plain(x),
        )?;
        if !s.fix.is_empty() {
            o.para("         fix  ", 14, 14, &s.fix, &|x| p.plain(x))?;
        }
    }
    o.nl()
}

/// Text repeated word for word under an earlier cause is printed once and referred back to
/// (a similar report that names two causes brings the same long fix to both); a short text
/// (a flag, an env var) reads better repeated than referred.
const REFER_BACK_AT: usize = 60;

/// The earlier cause (index) whose summary is this one's, when it is long.
fn same_summary_as(hyps: &[Hypothesis], i: usize) -> Option<usize> {
    let s = &hyps[i].summary;
    (cols(s) > REFER_BACK_AT)
        .then(|| hyps[..i].iter().position(|h| h.summary == *s))
        .flatten()
}

/// The earlier cause (index) that already shows this experiment, when it is long; `shown`
/// is how many experiments a cause shows in this format.
fn same_experiment_as(
    hyps: &[Hypothesis],
    i: usize,
    x: &Experiment,
    shown: usize,
) -> Option<usize> {
    (cols(&x.to_string()) > REFER_BACK_AT)
        .then(|| {
            hyps[..i]
                .iter()
                .position(|h| h.experiments.iter().take(shown).any(|y| y == x))
        })
        .flatten()
}

/// Experiments as a format shows them: each whole, or a reference to the earlier cause
/// that shows it.
fn experiments_shown(hyps: &[Hypothesis], i: usize, shown: usize) -> Vec<String> {
    hyps[i]
        .experiments
        .iter()
        .take(shown)
        .map(|x| match same_experiment_as(hyps, i, x, shown) {
            Some(j) => format!("the same as under cause {}", j + 1),
            None => x.to_string(),
        })
        .collect()
}

/// The summary as a format shows it.
fn summary_shown(hyps: &[Hypothesis], i: usize) -> String {
    match same_summary_as(hyps, i) {
        Some(j) => format!("the same as cause {}", j + 1),
        None => hyps[i].summary.clone(),
    }
}

/// What a cause with no evidence row says instead, in every format: no line points here,
/// and what ranks it then.
fn no_evidence_text(h: &Hypothesis) -> Option<&'static str> {
    if !h.evidence.is_empty() {
        return None;
    }
    Some(if h.rule == "similar-reports" {
        "no line of the log points here: the similar reports name this cause"
    } else if h.cases.is_empty() {
        "no line of the log points here: ranked by how often this failure has this cause"
    } else {
        "no line of the log points here: ranked by how often this failure has this cause, and by the similar reports"
    })
}

/// References, short: `owner/repo#N` for a GitHub thread, else as written; a thread the
/// `reports` row already names is not named again.
fn references_text(h: &Hypothesis) -> String {
    h.references
        .iter()
        .filter(|u| !h.cases.iter().any(|c| c.source == **u))
        .map(|u| thread_name(u))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn hypothesis_text(
    hyps: &[Hypothesis],
    i: usize,
    cause_w: usize,
    p: &Paint,
    o: &mut Out,
) -> io::Result<()> {
    let h = &hyps[i];
    let num = format!(" {} ", i + 1);
    let conf = format!(" {:.2}  ", h.confidence);
    // Pad the plain name, then colour it: escape codes take no column.
    let lead = format!("{num}{}{conf}", p.cause(&pad(h.cause.as_str(), cause_w)));
    let lead_w = cols(&num) + cause_w + cols(&conf);
    o.para(&lead, lead_w, lead_w, &summary_shown(hyps, i), &|s| {
        p.plain(s)
    })?;
    let label = |l: &str| format!("     {}", pad(l, LABEL_COL - 5));
    let shown: Vec<_> = h.evidence.iter().take(4).collect();
    let ref_w = shown
        .iter()
        .map(|e| cols(&line_ref(e.line, &e.file)))
        .max()
        .unwrap_or(0);
    for (i, e) in shown.iter().enumerate() {
        let lead = label(if i == 0 { "evidence" } else { "" });
        let r = pad(&line_ref(e.line, &e.file), ref_w);
        // Quoted log text: one line, cut in the middle so the error's end stays.
        let room = o.width.saturating_sub(LABEL_COL + ref_w + 2).max(20);
        let t = shorten_middle(&e.text, room);
        writeln!(o.w, "{lead}{}  {t}", p.dim(&r))?;
    }
    if let Some(t) = no_evidence_text(h) {
        o.para(&label("evidence"), LABEL_COL, LABEL_COL, t, &|s| p.dim(s))?;
    }
    if let Some(why) = &h.why {
        o.para(&label("why"), LABEL_COL, LABEL_COL, why, &|s| p.plain(s))?;
    }
    if !h.cases.is_empty() {
        o.para(
            &label("reports"),
            LABEL_COL,
            LABEL_COL,
            &cases_text(h),
            &|s| p.plain(s),
        )?;
    }
    for (k, x) in experiments_shown(hyps, i, 3).iter().enumerate() {
        let lead = label(if k == 0 { "try" } else { "" });
        // What the user types: wrapped, never cut.
        o.para_with(&lead, LABEL_COL, LABEL_COL + 2, x, &|s| p.plain(s), false)?;
    }
    let refs = references_text(h);
    if !refs.is_empty() {
        o.para(&label("refs"), LABEL_COL, LABEL_COL, &refs, &|s| p.dim(s))?;
    }
    Ok(())
}

/// The timeline's steps per input, in the order of the inputs (one group, with no name,
/// when one input was read).
fn timeline_groups(r: &Report) -> Vec<(Option<String>, Vec<TimelineEntry>)> {
    let mut groups: Vec<(Option<String>, Vec<TimelineEntry>)> = Vec::new();
    for e in &r.timeline {
        match groups.iter_mut().find(|(f, _)| *f == e.file) {
            Some((_, g)) => g.push(e.clone()),
            None => groups.push((e.file.clone(), vec![e.clone()])),
        }
    }
    groups
}

/// The failure that ends an input's steps: the report's failure for its own input (or
/// the only one), another input's failure for that input.
fn final_of(r: &Report, file: Option<&str>) -> Option<(String, Phase)> {
    match (&r.failure, file) {
        (Some(f), None) => Some((f.class.to_string(), f.phase)),
        (Some(f), Some(name)) if f.file.as_deref() == Some(name) => {
            Some((f.class.to_string(), f.phase))
        }
        (_, Some(name)) => r
            .other_inputs
            .iter()
            .find(|o| o.file == name)
            .map(|o| (o.class.to_string(), o.phase)),
        _ => None,
    }
}

/// `32`, or `node2.log:32` when several inputs were read: a warning's first line.
fn warning_ref(wn: &crate::Warning) -> String {
    match &wn.file {
        Some(f) => format!("{f}:{}", wn.line),
        None => wn.line.to_string(),
    }
}

/// Timeline steps for text: earlier runs that ended the same way fold into one step
/// (`runs 1-9: the same failure (device-side-assert) ×9`), a loop that alternates
/// (an OOM, then an assert, again and again) folds by its cycle, launches counted but not
/// kept are one step, and a long run keeps its first and last steps, so the timeline stays
/// a few lines whatever the log holds.
fn timeline_steps(t: &[TimelineEntry], fin: Option<(String, Phase)>) -> Vec<(String, bool)> {
    let text = |e: &TimelineEntry| {
        let lines = match e.end_line {
            Some(x) if x != e.line => format!("{}-{}", e.line, x),
            _ => e.line.to_string(),
        };
        format!("{}{} ({lines})", e.label, if e.failed { " ✗" } else { "" })
    };
    let mut steps = folded_steps(t, fin, &text);
    // Keep the head and the end of a long timeline.
    const KEEP_HEAD: usize = 4;
    const KEEP_TAIL: usize = 8;
    if steps.len() > KEEP_HEAD + KEEP_TAIL + 1 {
        let hidden = steps.len() - KEEP_HEAD - KEEP_TAIL;
        let tail = steps.split_off(steps.len() - KEEP_TAIL);
        steps.truncate(KEEP_HEAD);
        steps.push((format!("… {hidden} steps …"), false));
        steps.extend(tail);
    }
    steps
}

/// A piece of a folded timeline: one step, earlier runs folded by their cycle, or
/// launches counted but not kept.
enum Block {
    Step(String, bool),
    Runs {
        n: u64,
        /// What each run of the cycle ended with; one entry for a run of one failure.
        cycle: Vec<String>,
        same_as_final: bool,
        lines: (u64, u64),
        /// Launches counted, not kept, folded in: (first run offset, count).
        unseen: Vec<(u64, u64)>,
    },
    Unseen(u64),
}

/// The timeline's steps with earlier runs folded (every format shares the folding; `step`
/// writes one step of the diagnosed run in the format's own way).
fn folded_steps(
    t: &[TimelineEntry],
    fin: Option<(String, Phase)>,
    step: &dyn Fn(&TimelineEntry) -> String,
) -> Vec<(String, bool)> {
    let blocks = timeline_blocks(t, &fin, step);
    blocks_steps(merge_unseen(blocks))
}

/// The timeline's entries as blocks: this run's steps one by one, earlier runs folded by
/// the cycle that covers most of them.
fn timeline_blocks(
    t: &[TimelineEntry],
    fin: &Option<(String, Phase)>,
    step: &dyn Fn(&TimelineEntry) -> String,
) -> Vec<Block> {
    // The last failed step is this run's failure; failed steps before the first milestone
    // of the last run are earlier runs.
    let last_failed = t.iter().rposition(|e| e.failed);
    let earlier = |i: usize| t[i].failed && Some(i) != last_failed;
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let e = &t[i];
        if !earlier(i) {
            blocks.push(Block::Step(step(e), e.failed));
            i += 1;
            continue;
        }
        if let Some(n) = e.runs {
            blocks.push(Block::Unseen(n));
            i += 1;
            continue;
        }
        // The run of earlier steps from here, and the cycle that covers most of it.
        let mut end = i;
        while end < t.len() && earlier(end) && t[end].runs.is_none() {
            end += 1;
        }
        let (period, reps) = best_cycle(t, i, end);
        let last = i + period * reps - 1;
        let cycle: Vec<(String, bool)> =
            (0..period).map(|x| earlier_what(fin, &t[i + x])).collect();
        blocks.push(Block::Runs {
            n: (period * reps) as u64,
            same_as_final: period == 1 && cycle[0].1,
            cycle: cycle.into_iter().map(|c| c.0).collect(),
            lines: (e.line, t[last].line),
            unseen: Vec::new(),
        });
        i = last + 1;
    }
    blocks
}

/// The cycle (period of 1 to 3 steps, and its repetitions) from `i` that covers most of
/// the earlier steps up to `end`, the shorter period on a tie.
fn best_cycle(t: &[TimelineEntry], i: usize, end: usize) -> (usize, usize) {
    let same = |a: usize, b: usize| t[a].label == t[b].label && t[a].phase == t[b].phase;
    (1..=3usize)
        .map(|p| {
            let mut k = 1;
            while i + (k + 1) * p <= end && (0..p).all(|x| same(i + x, i + k * p + x)) {
                k += 1;
            }
            (p, k)
        })
        .filter(|&(p, k)| p == 1 || k >= 2)
        .max_by_key(|&(p, k)| (p * k, std::cmp::Reverse(p)))
        .unwrap_or((1, 1))
}

/// Launches counted but not kept between runs of one and the same failure are that
/// failure repeated (the scanner only stops keeping lines it has seen many times):
/// they fold into the runs around them.
fn merge_unseen(blocks: Vec<Block>) -> Vec<Block> {
    let mut merged: Vec<Block> = Vec::new();
    for b in blocks {
        let fold = match (&b, merged.as_slice()) {
            (Block::Runs { cycle, .. }, [.., Block::Runs { cycle: c0, .. }, Block::Unseen(_)]) => {
                cycle.len() == 1 && c0 == cycle
            }
            _ => false,
        };
        if !fold {
            merged.push(b);
            continue;
        }
        let Some(Block::Unseen(u)) = merged.pop() else {
            unreachable!("checked above")
        };
        if let (
            Some(Block::Runs {
                n, lines, unseen, ..
            }),
            Block::Runs {
                n: n2,
                lines: l2,
                unseen: u2,
                ..
            },
        ) = (merged.last_mut(), b)
        {
            unseen.push((*n, u));
            unseen.extend(u2.into_iter().map(|(at, k)| (*n + u + at, k)));
            *n += u + n2;
            lines.1 = l2.1;
        }
    }
    merged
}

/// The blocks as steps, each earlier run numbered from the first.
fn blocks_steps(merged: Vec<Block>) -> Vec<(String, bool)> {
    let mut steps: Vec<(String, bool)> = Vec::new();
    let mut run_no = 0u64;
    for b in merged {
        match b {
            Block::Step(s, failed) => steps.push((s, failed)),
            Block::Unseen(n) => {
                steps.push((
                    format!(
                        "runs {}-{}: counted, not kept (the same launch repeated)",
                        run_no + 1,
                        run_no + n
                    ),
                    true,
                ));
                run_no += n;
            }
            Block::Runs {
                n,
                cycle,
                same_as_final,
                lines,
                unseen,
            } => {
                let label = runs_label(run_no, n, &cycle, same_as_final, lines, &unseen);
                steps.push((label, true));
                run_no += n;
            }
        }
    }
    steps
}

/// One step for `n` earlier runs after `run_no`: which runs, what they ended with, and
/// their lines (with the launches counted but not read among them).
fn runs_label(
    run_no: u64,
    n: u64,
    cycle: &[String],
    same_as_final: bool,
    lines: (u64, u64),
    unseen: &[(u64, u64)],
) -> String {
    let mut where_ = if n > 1 {
        format!("lines {}-{}", lines.0, lines.1)
    } else {
        format!("line {}", lines.0)
    };
    for (at, k) in unseen {
        where_.push_str(&format!(
            "; runs {}-{} counted, not read",
            run_no + at + 1,
            run_no + at + k
        ));
    }
    let runs = if n > 1 {
        format!("runs {}-{}", run_no + 1, run_no + n)
    } else {
        format!("run {}", run_no + 1)
    };
    if cycle.len() == 1 {
        let times = if n > 1 {
            format!(", ×{n}")
        } else {
            " ✗".to_string()
        };
        match same_as_final {
            true => format!("{runs}: the same failure, {}{times} ({where_})", cycle[0]),
            false => format!("{runs}: {}{times} ({where_})", cycle[0]),
        }
    } else {
        let reps = n / cycle.len() as u64;
        format!("{runs}: {}, ×{reps} ({where_})", cycle.join(", then "))
    }
}

/// What an earlier run's step says (`device-side-assert in decode`), and whether it is
/// the same failure as the one this report is about.
fn earlier_what(fin: &Option<(String, Phase)>, e: &TimelineEntry) -> (String, bool) {
    let what = e.label.strip_prefix("earlier run: ").unwrap_or(&e.label);
    let phase = match e.phase {
        Phase::Unknown => String::new(),
        ph => format!(" in {ph}"),
    };
    let same = fin
        .as_ref()
        .is_some_and(|(class, ph)| class == what && (e.phase == Phase::Unknown || e.phase == *ph));
    (format!("{what}{phase}"), same)
}

/// The end of the text report: the timeline, the warnings, notes on the inputs, and what
/// was read.
fn timeline_and_warnings(r: &Report, p: &Paint, o: &mut Out) -> io::Result<()> {
    timeline_text(r, p, o)?;
    warnings_text(r, p, o)?;
    let lines: u64 = r.inputs.iter().map(|i| i.lines).sum();
    let bytes: u64 = r.inputs.iter().map(|i| i.bytes).sum();
    for i in &r.inputs {
        if let Some(n) = &i.note {
            o.para("", 0, 2, &format!("input {}: {}", i.path, n), &|s| p.bad(s))?;
        }
    }
    o.para(
        "",
        0,
        2,
        &format!(
            "read {} ({}) from {} · {}",
            count(lines, "line"),
            human_bytes(bytes),
            count(r.inputs.len() as u64, "input"),
            r.rosetta
        ),
        &|s| p.dim(s),
    )
}

/// The timeline, its steps packed into lines with failed steps painted.
fn timeline_text(r: &Report, p: &Paint, o: &mut Out) -> io::Result<()> {
    if !r.timeline.is_empty() {
        // Lay the plain steps out first, then colour each: a step is never split between
        // lines unless it is longer than a line by itself.
        // With several inputs, each input's steps on lines of their own, led by its name.
        let lead_w = 9;
        let avail = o.width.saturating_sub(lead_w).max(20);
        let mut first = true;
        for (file, entries) in timeline_groups(r) {
            let mut steps = timeline_steps(&entries, final_of(r, file.as_deref()));
            if let (Some(f), Some(s)) = (&file, steps.first_mut()) {
                s.0 = format!("{f}: {}", s.0);
            }
            let texts: Vec<String> = steps.iter().map(|(s, _)| s.clone()).collect();
            for line in pack(&texts, avail, avail, " · ") {
                let painted: String = line
                    .iter()
                    .map(|(k, part)| match k {
                        Some(k) if steps[*k].1 => p.bad(part),
                        _ => part.clone(),
                    })
                    .collect();
                if first {
                    writeln!(o.w, "{} {painted}", p.head("TIMELINE"))?;
                    first = false;
                } else {
                    writeln!(o.w, "{}{painted}", " ".repeat(lead_w))?;
                }
            }
        }
    }
    Ok(())
}

/// The first twelve warnings with their place, count, ranks and notes, and how many more.
fn warnings_text(r: &Report, p: &Paint, o: &mut Out) -> io::Result<()> {
    if !r.warnings.is_empty() {
        o.nl()?;
        writeln!(
            o.w,
            "{}",
            p.head(&format!(
                "WARNINGS ({} distinct of {})",
                r.warnings.len(),
                r.warning_total
            ))
        )?;
        let ref_w = r
            .warnings
            .iter()
            .take(12)
            .map(|wn| cols(&warning_ref(wn)))
            .max()
            .unwrap_or(0)
            .max(6);
        for wn in r.warnings.iter().take(12) {
            let ranks = if wn.ranks.len() > 1 {
                format!(" ranks {}", ranks_text(&wn.ranks))
            } else {
                String::new()
            };
            let lead = format!(" {:>ref_w$}  ×{:<5} ", warning_ref(wn), wn.count);
            let room = o.width.saturating_sub(cols(&lead) + cols(&ranks)).max(20);
            writeln!(
                o.w,
                "{lead}{}{}",
                shorten_middle(&wn.text, room),
                p.dim(&ranks)
            )?;
            if let Some(n) = &wn.note {
                o.para("         ", 9, 15, &format!("note: {n}"), &|s| p.dim(s))?;
            }
        }
        if r.warnings.len() > 12 {
            o.para(
                "         ",
                9,
                11,
                &format!("… {} more (--format json lists all)", r.warnings.len() - 12),
                &|s| p.dim(s),
            )?;
        }
    }
    Ok(())
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

/// The summary (as shown), and the similar reports that name the same cause.
fn summary_with_cases(hyps: &[Hypothesis], i: usize) -> String {
    let h = &hyps[i];
    if h.cases.is_empty() {
        summary_shown(hyps, i)
    } else {
        format!(
            "{} — similar reports: {}",
            summary_shown(hyps, i),
            cases_text(h)
        )
    }
}

/// The causes below the shown ones, as text's `also:` line words them.
fn lower_causes(r: &Report, top: usize) -> Option<String> {
    (r.hypotheses.len() > top).then(|| {
        r.hypotheses[top..]
            .iter()
            .map(|h| format!("{} {:.2}", h.cause, h.confidence))
            .collect::<Vec<_>>()
            .join(" · ")
    })
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The report's notes, then what each input says of its reading (a truncated file): the
/// text report prints the latter beside its read counts; Markdown and HTML list both here.
fn notes_with_inputs(r: &Report) -> Vec<String> {
    let inputs = r
        .inputs
        .iter()
        .filter_map(|i| i.note.as_ref().map(|n| format!("input {}: {n}", i.path)));
    r.notes.iter().cloned().chain(inputs).collect()
}

/// The report as GitHub-flavoured Markdown (an issue comment): the failure, the causes
/// with their evidence folded, notes, similar reports, the timeline and the warnings,
/// one section each.
fn markdown(r: &Report, style: Style, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "### rosetta diagnosis")?;
    writeln!(w)?;
    md_failure(r, w)?;
    md_other_inputs(r, w)?;
    md_hypotheses(r, style, w)?;
    md_notes(r, w)?;
    md_similar(r, w)?;
    md_timeline(r, w)?;
    md_warnings(r, w)?;
    writeln!(w)?;
    writeln!(w, "<sub>{}</sub>", r.rosetta)
}

/// The failure (or why there is none), with its message, phase and surfaced error.
fn md_failure(r: &Report, w: &mut dyn Write) -> io::Result<()> {
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
                if let Some(e) = &n.ends_during {
                    writeln!(w)?;
                    writeln!(w, "{}", ends_during_words(e))?;
                }
            }
            Some(n) if n.reason == "unfinished" => {
                let words = n
                    .ends_during
                    .as_ref()
                    .map_or_else(String::new, ends_during_words);
                writeln!(w, "**Unfinished:** {words}")?;
            }
            _ => writeln!(w, "No failure found.")?,
        },
        Some(f) => {
            writeln!(
                w,
                "**Failure:** `{}` in `{}` · {}",
                f.class,
                f.phase,
                rank_line_time(f).join(" · ")
            )?;
            writeln!(w)?;
            writeln!(w, "```")?;
            writeln!(w, "{}", shorten_middle(&f.message, 400))?;
            writeln!(w, "```")?;
            if let Some(s) = &f.surfaced {
                writeln!(w)?;
                writeln!(
                    w,
                    "Then at {}: `{}`",
                    line_ref(Some(s.line), &f.file),
                    shorten_middle(&s.message, 300).replace('`', "'")
                )?;
            }
            if f.asynchronous {
                writeln!(w)?;
                writeln!(w, "_Asynchronous CUDA error: the traceback names a sync point{}, not the failing kernel._", f.sync_point.as_ref().map(|s| format!(" (`{}`)", s.trim())).unwrap_or_default())?;
            }
            if !f.phase_reason.is_empty() {
                writeln!(w)?;
                writeln!(w, "Phase {}", md_escape(&phase_words(f)))?;
            }
            if let Some(file) = &r.first_root_error_in {
                writeln!(w)?;
                writeln!(
                    w,
                    "`{}` holds the first root error.",
                    file.replace('`', "'")
                )?;
            }
        }
    }
    Ok(())
}

/// Failures of the other inputs.
fn md_other_inputs(r: &Report, w: &mut dyn Write) -> io::Result<()> {
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
    Ok(())
}

/// The causes: a table, then each one's why, evidence and references folded.
fn md_hypotheses(r: &Report, style: Style, w: &mut dyn Write) -> io::Result<()> {
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
                md_escape(&summary_with_cases(&r.hypotheses, i)),
                experiments_shown(&r.hypotheses, i, usize::MAX)
                    .iter()
                    .map(|x| md_escape(x))
                    .collect::<Vec<_>>()
                    .join("<br>")
            )?;
        }
        if let Some(rest) = lower_causes(r, style.top) {
            writeln!(w)?;
            writeln!(w, "Also: {}", md_escape(&rest))?;
        }
        for (i, h) in r.hypotheses.iter().take(style.top).enumerate() {
            writeln!(w)?;
            writeln!(
                w,
                "<details><summary>{}. {} — {}</summary>",
                i + 1,
                h.cause,
                if !h.references.is_empty() && h.evidence.is_empty() {
                    "references"
                } else if h.why.is_some() && h.evidence.is_empty() {
                    "why"
                } else {
                    "evidence"
                }
            )?;
            if let Some(why) = &h.why {
                writeln!(w)?;
                writeln!(w, "Why: {}", md_escape(why))?;
            }
            if let Some(t) = no_evidence_text(h) {
                writeln!(w)?;
                writeln!(w, "_{}_", md_escape(t))?;
            }
            if !h.evidence.is_empty() {
                writeln!(w)?;
                writeln!(w, "```")?;
                for e in &h.evidence {
                    writeln!(
                        w,
                        "{}: {}",
                        line_ref(e.line, &e.file),
                        shorten_middle(&e.text, 300)
                    )?;
                }
                writeln!(w, "```")?;
            }
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
    Ok(())
}

/// The notes.
fn md_notes(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    let notes = notes_with_inputs(r);
    if !notes.is_empty() {
        writeln!(w)?;
        writeln!(w, "**Notes**")?;
        writeln!(w)?;
        for n in &notes {
            writeln!(w, "- {}", md_escape(n))?;
        }
    }
    Ok(())
}

/// The similar reports, as a table.
fn md_similar(r: &Report, w: &mut dyn Write) -> io::Result<()> {
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
    Ok(())
}

/// The timeline of each input, one line each.
fn md_timeline(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    for (file, entries) in timeline_groups(r) {
        writeln!(w)?;
        let step = |t: &TimelineEntry| {
            format!(
                "{}{} (line {})",
                t.label,
                if t.failed { " ✗" } else { "" },
                t.line
            )
        };
        let steps: Vec<String> = folded_steps(&entries, final_of(r, file.as_deref()), &step)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        match file {
            Some(f) => writeln!(w, "**Timeline of `{f}`:** {}", steps.join(" → "))?,
            None => writeln!(w, "**Timeline:** {}", steps.join(" → "))?,
        }
    }
    Ok(())
}

/// The warnings, folded.
fn md_warnings(r: &Report, w: &mut dyn Write) -> io::Result<()> {
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
            writeln!(
                w,
                "{:>6} ×{:<5} {}",
                warning_ref(wn),
                wn.count,
                cut(&wn.text, 200)
            )?;
        }
        writeln!(w, "```")?;
        writeln!(w)?;
        writeln!(w, "</details>")?;
    }
    Ok(())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The standalone HTML page: its head, then one section after another.
fn html(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>rosetta diagnosis</title>"
    )?;
    writeln!(w, "<style>body{{font:14px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em}}code,pre{{font:12px ui-monospace,monospace}}pre{{background:#f6f6f6;padding:.6em;overflow:auto}}.fail{{color:#b00}}table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}}</style></head><body>")?;
    writeln!(w, "<h1>rosetta diagnosis</h1>")?;
    match &r.failure {
        None => html_no_failure(r, w)?,
        Some(f) => html_failure(r, f, w)?,
    }
    html_other_inputs(r, w)?;
    html_hypotheses(r, w)?;
    html_notes(r, w)?;
    html_similar(r, w)?;
    html_timeline(r, w)?;
    html_warnings(r, w)?;
    writeln!(w, "<p><small>{}</small></p></body></html>", esc(&r.rosetta))
}

/// Why there is no failure: an empty input, the last error-looking lines, or an unfinished run.
fn html_no_failure(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    match r.no_failure.as_ref() {
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
            if let Some(e) = &n.ends_during {
                writeln!(w, "<p>{}</p>", esc(&ends_during_words(e)))?;
            }
        }
        Some(n) if n.reason == "unfinished" => {
            let words = n
                .ends_during
                .as_ref()
                .map_or_else(String::new, ends_during_words);
            writeln!(w, "<p><strong>Unfinished:</strong> {}</p>", esc(&words))?;
        }
        _ => writeln!(w, "<p>No failure found.</p>")?,
    }
    Ok(())
}

/// The failure: its heading, message, surfaced error, sync point, phase and first root input.
fn html_failure(r: &Report, f: &crate::Failure, w: &mut dyn Write) -> io::Result<()> {
    let mut head = vec![f.class.to_string(), f.phase.to_string()];
    head.extend(rank_line_time(f));
    writeln!(w, "<h2 class=\"fail\">{}</h2>", esc(&head.join(" · ")))?;
    writeln!(w, "<pre>{}</pre>", esc(&f.message))?;
    if let Some(s) = &f.surfaced {
        writeln!(
            w,
            "<p>Then at {}: <code>{}</code></p>",
            esc(&line_ref(Some(s.line), &f.file)),
            esc(&s.message)
        )?;
    }
    if f.asynchronous {
        writeln!(
            w,
            "<p>Asynchronous: the traceback names a sync point{}, not the failing kernel.</p>",
            f.sync_point
                .as_ref()
                .map(|s| format!(" (<code>{}</code>)", esc(s)))
                .unwrap_or_default()
        )?;
    }
    if !f.phase_reason.is_empty() {
        writeln!(w, "<p>Phase {}</p>", esc(&phase_words(f)))?;
    }
    if let Some(file) = &r.first_root_error_in {
        writeln!(
            w,
            "<p><code>{}</code> holds the first root error.</p>",
            esc(file)
        )?;
    }
    Ok(())
}

/// One heading and message per other input that failed too.
fn html_other_inputs(r: &Report, w: &mut dyn Write) -> io::Result<()> {
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
    Ok(())
}

/// The causes table, one row per hypothesis.
fn html_hypotheses(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    if !r.hypotheses.is_empty() {
        writeln!(w, "<h2>Causes</h2><table><tr><th>#</th><th>cause</th><th>confidence</th><th>summary and evidence</th><th>try</th></tr>")?;
        for (i, h) in r.hypotheses.iter().enumerate() {
            html_hypothesis_row(r, i, h, w)?;
        }
        writeln!(w, "</table>")?;
    }
    Ok(())
}

/// One cause's row: summary, why, evidence (or why there is none), references and what to try.
fn html_hypothesis_row(r: &Report, i: usize, h: &Hypothesis, w: &mut dyn Write) -> io::Result<()> {
    let ev: String = h
        .evidence
        .iter()
        .map(|e| {
            format!(
                "<br><code>{}: {}</code>",
                line_ref(e.line, &e.file),
                esc(&shorten_middle(&e.text, 300))
            )
        })
        .collect();
    let tries: String = experiments_shown(&r.hypotheses, i, usize::MAX)
        .iter()
        .map(|x| format!("<li>{}</li>", esc(x)))
        .collect();
    let ev = match no_evidence_text(h) {
        Some(t) => format!("<br><i>{}</i>{ev}", esc(t)),
        None => ev,
    };
    let refs: String = h
        .references
        .iter()
        .map(|u| {
            if u.starts_with("http") {
                format!("<br><a href=\"{}\">{}</a>", esc(u), esc(&thread_name(u)))
            } else {
                format!("<br>{}", esc(u))
            }
        })
        .collect();
    let why = h
        .why
        .as_ref()
        .map(|y| format!("<br><i>why: {}</i>", esc(y)))
        .unwrap_or_default();
    writeln!(w, "<tr><td>{}</td><td><code>{}</code></td><td>{:.2}</td><td>{}{}{}{}</td><td><ul>{}</ul></td></tr>", i + 1, h.cause, h.confidence, esc(&summary_with_cases(&r.hypotheses, i)), why, ev, refs, tries)
}

/// The notes, with those about the inputs, as a list.
fn html_notes(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    let notes = notes_with_inputs(r);
    if !notes.is_empty() {
        writeln!(w, "<h2>Notes</h2><ul>")?;
        for n in &notes {
            writeln!(w, "<li>{}</li>", esc(n))?;
        }
        writeln!(w, "</ul>")?;
    }
    Ok(())
}

/// The similar reports table: similarity, thread, cause and fix.
fn html_similar(r: &Report, w: &mut dyn Write) -> io::Result<()> {
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
    Ok(())
}

/// The timeline of every input, folded, as one ordered list.
fn html_timeline(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    if !r.timeline.is_empty() {
        writeln!(w, "<h2>Timeline</h2><ol>")?;
        let step = |t: &TimelineEntry| {
            format!(
                "{} — {}{}",
                t.label,
                line_ref(Some(t.line), &t.file),
                t.time
                    .as_ref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default()
            )
        };
        for (file, entries) in timeline_groups(r) {
            for (text, failed) in folded_steps(&entries, final_of(r, file.as_deref()), &step) {
                writeln!(
                    w,
                    "<li{}>{}</li>",
                    if failed { " class=\"fail\"" } else { "" },
                    esc(&text)
                )?;
            }
        }
        writeln!(w, "</ol>")?;
    }
    Ok(())
}

/// Every warning with its place and count.
fn html_warnings(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    if !r.warnings.is_empty() {
        writeln!(
            w,
            "<h2>Warnings ({} distinct of {})</h2><pre>",
            r.warnings.len(),
            r.warning_total
        )?;
        for wn in &r.warnings {
            writeln!(
                w,
                "{:>6} ×{:<5} {}",
                esc(&warning_ref(wn)),
                wn.count,
                esc(&wn.text)
            )?;
        }
        writeln!(w, "</pre>")?;
    }
    Ok(())
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
        use crate::{CaseRef, Failure, Similar};
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
            render_width(&r, f, Style::default(), 100, &mut out).unwrap();
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

    fn text_of(r: &Report, color: bool, width: usize) -> String {
        let mut out = Vec::new();
        let style = Style {
            color,
            ..Style::default()
        };
        render_width(r, Format::Text, style, width, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn strip_ansi(s: &str) -> String {
        regex::Regex::new("\x1b\\[[0-9;]*m")
            .unwrap()
            .replace_all(s, "")
            .into_owned()
    }

    /// All the words of the output, one space apart: what a reader sees once wrapping is undone.
    fn words(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// A decode crash with long lines everywhere: the log text, the sync point, what to try.
    fn long_lines() -> Report {
        let mut r = with_similar();
        let f = r.failure.as_mut().unwrap();
        f.class = rosetta_schema::FailureClass::DeviceSideAssert;
        f.phase = rosetta_schema::Phase::Decode;
        f.line = 162;
        f.message = format!(
            "/sgl-workspace/sglang/sgl-kernel/csrc/attention/flashmla/flash_fwd_mla_kernel.h:112: {} Assertion `false && \"unsupported arch\"` failed.",
            "block: [3,0,0], thread: [64,0,0] ".repeat(12)
        );
        f.asynchronous = true;
        f.sync_point = Some("process_batch_result_decode (srt/managers/scheduler_output_processor_mixin.py:288): result.copy_done.synchronize_every_stream_of_the_batch_before_the_next_step(stream=torch.cuda.current_stream())".into());
        f.phase_reason = "the traceback passes through process_batch_result_decode".into();
        let h = &mut r.hypotheses[0];
        h.evidence = vec![
            crate::Evidence {
                line: Some(2),
                file: None,
                text: "GPU NVIDIA RTX PRO 6000 = sm_120".into(),
            },
            crate::Evidence {
                line: Some(163),
                file: None,
                text: format!(
                    "[2026-02-24 10:11:06 TP2] Scheduler hit an exception: {} torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
                    "Traceback frame text ".repeat(15)
                ),
            },
        ];
        h.experiments = vec![
            "compare the RoPE block of config.json (rope_scaling / rope_parameters) with what transformers 5.2.0 expects: rosetta config <model dir> --transformers 5.2.0 --context-length 131072  (look)".into(),
        ];
        r
    }

    #[test]
    fn what_the_user_types_is_wrapped_never_cut() {
        // Issue 12, point 4: "try" lines were cut mid-flag (`rosetta config <model dir> --tr…`).
        let r = long_lines();
        for width in [60, 80, 100, 140] {
            let out = text_of(&r, false, width);
            for l in out.lines() {
                // Only a single word longer than a line (the sync point's code) may run over.
                assert!(
                    l.chars().count() <= width || !l.trim().contains(' '),
                    "{width}: {l:?}"
                );
            }
            let all = words(&out);
            assert!(
                all.contains(&words(&r.hypotheses[0].experiments[0].to_string())),
                "{out}"
            );
            assert!(all.contains(&words(&r.hypotheses[0].summary)), "{out}");
            assert!(!out.contains("--tr…"), "{out}");
        }
    }

    #[test]
    fn quoted_log_text_is_cut_in_the_middle_keeping_its_end() {
        let r = long_lines();
        let out = text_of(&r, false, 100);
        let ev = out.lines().find(|l| l.contains("line 163")).unwrap();
        assert!(
            ev.ends_with("CUDA error: an illegal memory access was encountered"),
            "{ev}"
        );
        assert!(ev.contains('…'), "{ev}");
        assert!(ev.contains("line 163  [2026-02-24"), "{ev}");
        // The failing line keeps its end too.
        assert!(out.contains("failed."), "{out}");
    }

    #[test]
    fn colour_pads_before_painting() {
        // Issue 12, point 5: escape codes inside `{:<18}` shifted every column after them.
        let r = long_lines();
        let plain = text_of(&r, false, 100);
        let coloured = text_of(&r, true, 100);
        assert_ne!(plain, coloured);
        assert_eq!(strip_ansi(&coloured), plain);
    }

    #[test]
    fn words_a_person_reads() {
        // Issue 12, point 6: `line 162`, the phase named in words, the sync point whole.
        let r = long_lines();
        let out = text_of(&r, false, 100);
        assert!(out.contains("evidence  line 2  "), "{out}");
        assert!(!out.contains(" 2: GPU"), "{out}");
        assert!(out.contains("· line 162"), "{out}");
        assert!(
            out.contains(
                "\n         decode: the traceback passes through process_batch_result_decode"
            ),
            "{out}"
        );
        assert!(!out.contains("phase: "), "{out}");
        let sp = r.failure.as_ref().unwrap().sync_point.clone().unwrap();
        assert!(words(&out).contains(&words(&sp)), "{out}");
    }

    fn restart_loop(earlier: usize) -> Report {
        use crate::TimelineEntry;
        use rosetta_schema::Phase;
        let mut r = long_lines();
        let step = |phase, line, label: &str, failed| TimelineEntry {
            phase,
            line,
            file: None,
            end_line: None,
            label: label.into(),
            time: None,
            failed,
            runs: None,
        };
        for i in 0..earlier {
            r.timeline.push(step(
                Phase::Unknown,
                10 + i as u64 * 40,
                "earlier run: device-side-assert",
                true,
            ));
        }
        let base = 10 + earlier as u64 * 40;
        for (k, l) in ["start", "weight load", "KV cache sized", "ready", "decode"]
            .iter()
            .enumerate()
        {
            r.timeline
                .push(step(Phase::Startup, base + k as u64, l, false));
        }
        r.timeline.push(step(
            Phase::Decode,
            base + 9,
            "decode: device-side-assert",
            true,
        ));
        r
    }

    #[test]
    fn the_timeline_folds_runs_that_ended_the_same_way() {
        // Issue 12, point 1: 3,600 restarts made the TIMELINE one 38,000-character line.
        for n in [9, 3600] {
            let out = text_of(&restart_loop(n), false, 100);
            let tl: Vec<&str> = out
                .lines()
                .skip_while(|l| !l.starts_with("TIMELINE"))
                .take_while(|l| !l.is_empty() && !l.starts_with("read "))
                .collect();
            assert!(!tl.is_empty() && tl.len() <= 3, "{n}: {tl:#?}");
            let t = tl.join(" ");
            assert!(
                t.contains(&format!(
                    "runs 1-{n}: the same failure, device-side-assert, ×{n}"
                )),
                "{t}"
            );
            assert!(t.contains("decode: device-side-assert ✗"), "{t}");
        }
    }

    #[test]
    fn an_alternating_loop_folds_by_its_cycle_and_counts_runs_not_kept() {
        // 300 pasted copies of a two-launch log: OOM, assert, OOM, assert, ...; the
        // scanner kept the first 48 and the last 48 launches and counted the rest.
        let lines = kept_loop_timeline(96, 407, |k| {
            if k % 2 == 0 {
                "earlier run: gpu-oom"
            } else {
                "earlier run: device-side-assert"
            }
        });
        let t = lines.join(" ");
        assert!(
            t.contains("runs 1-48: gpu-oom, then device-side-assert, ×24"),
            "{t}"
        );
        assert!(t.contains("runs 49-455: counted, not kept"), "{t}");
        assert!(
            t.contains("runs 456-503: gpu-oom, then device-side-assert, ×24"),
            "{t}"
        );
        assert!(t.contains("decode: device-side-assert ✗"), "{t}");
        // A few lines whatever the count (the earlier test joined them first and so
        // could not fail).
        assert!(lines.len() <= 6, "{t}");
    }

    #[test]
    fn launches_not_kept_between_runs_of_one_failure_fold_into_them() {
        // 250 launches of one failure; the scanner kept the first 48 and the last 143.
        let lines = kept_loop_timeline(191, 58, |_| "earlier run: device-side-assert");
        let t = lines.join(" ");
        assert!(
            t.contains("runs 1-249: the same failure, device-side-assert, ×249"),
            "{t}"
        );
        let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("runs 49-106 counted, not read"), "{t}");
        assert!(!t.contains("runs 107-"), "{t}");
        // A few lines whatever the count (the earlier test joined them first and so
        // could not fail).
        assert!(lines.len() <= 6, "{t}");
    }

    /// The TIMELINE lines of a restart loop whose scanner kept `kept` earlier launches
    /// (labelled by `label`) and counted `unseen` more after the first 48 of them.
    fn kept_loop_timeline(
        kept: u64,
        unseen: u64,
        label: impl Fn(u64) -> &'static str,
    ) -> Vec<String> {
        use crate::TimelineEntry;
        use rosetta_schema::Phase;
        let mut r = restart_loop(0);
        let tail = r.timeline.split_off(0);
        let step = |line, label: String, runs| TimelineEntry {
            phase: Phase::Unknown,
            line,
            file: None,
            end_line: None,
            label,
            time: None,
            failed: true,
            runs,
        };
        for k in 0..kept {
            let line = 10 + k * 150;
            if k == 48 {
                r.timeline.push(step(
                    line,
                    format!("earlier runs not kept: {unseen}"),
                    Some(unseen),
                ));
            }
            r.timeline.push(step(line, label(k).to_string(), None));
        }
        r.timeline.extend(tail);
        text_of(&r, false, 100)
            .lines()
            .skip_while(|l| !l.starts_with("TIMELINE"))
            .take_while(|l| !l.is_empty() && !l.starts_with("read "))
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_long_timeline_keeps_its_head_and_end() {
        use crate::TimelineEntry;
        let mut r = long_lines();
        for i in 0..64 {
            r.timeline.push(TimelineEntry {
                phase: rosetta_schema::Phase::Decode,
                line: i,
                file: None,
                end_line: None,
                label: format!("step number {i}"),
                time: None,
                failed: i == 63,
                runs: None,
            });
        }
        let out = text_of(&r, false, 100);
        let tl = out
            .lines()
            .skip_while(|l| !l.starts_with("TIMELINE"))
            .take_while(|l| !l.is_empty() && !l.starts_with("read "))
            .count();
        assert!(tl <= 4, "{out}");
        assert!(
            out.contains("step number 0 (0)") && out.contains("step number 63 ✗ (63)"),
            "{out}"
        );
        assert!(out.contains("… 52 steps …"), "{out}");
    }

    #[test]
    fn wrap_keeps_every_character() {
        let s = "a  b ccccccccccccccccccccccccccccccc dd eeeeeeee f";
        let lines = wrap(s, 12, 14);
        assert_eq!(
            lines,
            vec!["a  b", "ccccccccccccccccccccccccccccccc", "dd eeeeeeee f"]
        );
        assert_eq!(wrap("x  (one restart)", 80, 80), vec!["x  (one restart)"]);
    }

    #[test]
    fn quoted_text_splits_a_word_longer_than_a_line() {
        let path = (0..20)
            .map(|i| format!("segment{i:02}_abcdefghij"))
            .collect::<Vec<_>>()
            .join("/");
        let text = format!("No such file or directory: /very/long/{path}/model.safetensors");
        let lines = wrap_with(&text, 60, 70, true);
        assert!(lines.iter().all(|l| cols(l) <= 70), "{lines:?}");
        assert!(lines[0].len() <= 60, "{lines:?}");
        // Every character is kept, and a split falls after a separator.
        assert_eq!(
            lines[1..].concat(),
            format!("/very/long/{path}/model.safetensors")
        );
        assert!(
            lines[1..lines.len() - 1]
                .iter()
                .all(|l| l.ends_with(['/', '_'])),
            "{lines:?}"
        );
        // With no separator, at the width; multi-byte text on character boundaries.
        let wide = "é".repeat(50);
        let lines = wrap_with(&wide, 20, 20, true);
        assert_eq!(lines.concat(), wide);
        assert!(lines.iter().all(|l| cols(l) <= 20));
        // A command keeps its long word whole.
        assert_eq!(wrap(&text, 60, 70).len(), 2);
    }

    #[test]
    fn shorten_middle_keeps_both_ends() {
        let s = format!("START {} END-OF-ERROR", "middle ".repeat(40));
        let t = shorten_middle(&s, 60);
        assert!(t.chars().count() <= 60, "{t}");
        assert!(t.starts_with("START") && t.ends_with("END-OF-ERROR") && t.contains('…'));
        assert_eq!(shorten_middle("short", 60), "short");
    }

    #[test]
    fn every_format_carries_the_same_facts() {
        // Issue 12, point 8: HTML lacked the rank, the time and the references.
        let mut r = long_lines();
        {
            let f = r.failure.as_mut().unwrap();
            f.rank = Some(2);
            f.ranks = vec![0, 1, 2, 3];
            f.time = Some("2026-02-24 10:11:06".into());
            f.surfaced = Some(crate::Surfaced {
                line: 163,
                message: "torch.AcceleratorError: CUDA error: device-side assert triggered".into(),
            });
        }
        r.hypotheses[0].references =
            vec!["https://github.com/sgl-project/sglang/issues/26087".into()];
        r.notes = vec!["the log holds 2 runs".into()];
        let facts = [
            "device-side-assert",
            "decode",
            "rank 2 first (4 ranks: 0-3)",
            "line 162",
            "2026-02-24 10:11:06",
            "line 163",
            "process_batch_result_decode",
            "the traceback passes through",
            "comm-setup",
            "0.62",
            "Run the container with a larger /dev/shm",
            "the log holds 2 runs",
            "pytorch/torchtitan#853",
        ];
        for f in [Format::Text, Format::Markdown, Format::Html] {
            let mut out = Vec::new();
            render_width(&r, f, Style::default(), 100, &mut out).unwrap();
            let out = String::from_utf8(out).unwrap();
            for fact in facts {
                assert!(out.contains(fact), "{f:?} lacks {fact:?}:\n{out}");
            }
            // Text too (the newcomer's pass, section 2: text had no references).
            assert!(
                out.contains("sgl-project/sglang"),
                "{f:?} lacks the references"
            );
        }
    }

    fn render_all(r: &Report, style: Style, width: usize) -> Vec<(Format, String)> {
        [Format::Text, Format::Markdown, Format::Html, Format::Json]
            .into_iter()
            .map(|f| {
                let mut out = Vec::new();
                render_width(r, f, style, width, &mut out).unwrap();
                (f, String::from_utf8(out).unwrap())
            })
            .collect()
    }

    /// The newcomer's pass (issue 12, section 2): Markdown lacked the lower causes (text's
    /// `also:` line), and Markdown, HTML and JSON did not say which input holds the first
    /// root error.
    #[test]
    fn lower_causes_and_the_first_root_input_in_every_format() {
        use rosetta_schema::Cause;
        let mut r = with_similar();
        for (cause, c) in [
            (Cause::KernelBug, 0.05),
            (Cause::CudaGraph, 0.04),
            (Cause::ModelConfig, 0.02),
            (Cause::FrameworkBug, 0.01),
        ] {
            let mut h = r.hypotheses[0].clone();
            h.cause = cause;
            h.confidence = c;
            h.summary = format!("summary of {cause}");
            r.hypotheses.push(h);
        }
        r.failure.as_mut().unwrap().file = Some("node1.log".into());
        r.first_root_error_in = Some("node1.log".into());
        let style = Style {
            top: 4,
            ..Style::default()
        };
        for (f, out) in render_all(&r, style, 100) {
            // Causes 5 and 6 are below the top 4: text and Markdown list them in a line.
            for fact in ["model-config", "framework-bug", "0.02", "0.01"] {
                assert!(out.contains(fact), "{f:?} lacks {fact:?}:\n{out}");
            }
            if f == Format::Json {
                assert!(
                    out.contains("\"first_root_error_in\": \"node1.log\""),
                    "{out}"
                );
            } else {
                let words = out.replace(['`', '<', '>'], " ");
                assert!(
                    words.contains("node1.log") && words.contains("holds the first root error"),
                    "{f:?}:\n{out}"
                );
            }
        }
        // Markdown names them in one line, as text does.
        let md = &render_all(&r, style, 100)[1].1;
        assert!(
            md.contains("Also: model-config 0.02 · framework-bug 0.01"),
            "{md}"
        );
    }

    /// The newcomer's pass (issue 12, section 6): a similar report naming two causes put its
    /// long fix word for word under both; and a prior with similar reports but no evidence
    /// row said nothing where others say "no line of the log points here".
    #[test]
    fn a_long_fix_under_two_causes_is_printed_once_and_no_evidence_is_said() {
        use rosetta_schema::Cause;
        let mut r = with_similar();
        let mut twin = r.hypotheses[1].clone();
        twin.cause = Cause::ModelConfig;
        twin.confidence = 0.1;
        r.hypotheses.push(twin);
        let fix = "Run the container with a larger /dev/shm  (as in pytorch/torchtitan#853)";
        for (f, out) in render_all(&r, Style::default(), 100) {
            if f == Format::Json {
                continue;
            }
            let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
            let fix_flat = fix.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(flat.matches(&fix_flat).count(), 1, "{f:?}:\n{out}");
            assert!(flat.contains("the same as under cause 2"), "{f:?}:\n{out}");
            assert!(flat.contains("the same as cause 2"), "{f:?}:\n{out}");
            // Every cause without an evidence row says so (three here), also the first,
            // which similar reports support.
            assert_eq!(
                flat.matches("no line of the log points here").count(),
                3,
                "{f:?}:\n{out}"
            );
        }
        // A short experiment repeated reads better whole than referred.
        r.hypotheses[2].experiments = vec!["NCCL_DEBUG=INFO  (env var + restart)".into()];
        let text = text_of(&r, false, 100);
        assert_eq!(text.matches("NCCL_DEBUG=INFO").count(), 2, "{text}");
    }

    /// The newcomer's pass (issue 12, section 11): at 100 columns the FAILURE header of a
    /// long report broke its timestamp between the date and the time.
    #[test]
    fn the_failure_header_keeps_its_timestamp_whole() {
        let mut r = long_lines();
        let f = r.failure.as_mut().unwrap();
        f.rank = Some(2);
        f.ranks = (0..8).collect();
        f.file = Some("/work/tmp/newcomer/copies300.log".into());
        f.line = 89_762;
        f.time = Some("2026-02-24 10:11:06".into());
        for width in 60..=130 {
            let text = text_of(&r, false, width);
            assert!(text.contains("2026-02-24 10:11:06"), "{width}:\n{text}");
        }
    }

    #[test]
    fn markdown_and_html_say_an_input_was_truncated() {
        let mut r = Report::default();
        r.inputs.push(crate::Input {
            path: "server.log.gz".into(),
            lines: 12,
            note: Some("reading stopped early: the file is truncated".into()),
            ..Default::default()
        });
        for format in [Format::Markdown, Format::Html] {
            let mut out = Vec::new();
            render_width(&r, format, Style::default(), 100, &mut out).unwrap();
            let out = String::from_utf8(out).unwrap();
            assert!(
                out.contains("input server.log.gz: reading stopped early: the file is truncated"),
                "{format:?}: {out}"
            );
        }
    }

    #[test]
    fn markdown_and_html_carry_every_try_and_the_why() {
        // The newcomer's second pass: markdown showed only the first experiment of a cause
        // and neither it nor HTML said why.
        let mut r = with_similar();
        let h = &mut r.hypotheses[0];
        h.experiments = vec![
            "CUDA_LAUNCH_BLOCKING=1  (env var + restart)".into(),
            "switch the attention backend  (restart)".into(),
        ];
        h.why = Some("a kernel indexed past its table".into());
        for f in [Format::Markdown, Format::Html] {
            let mut out = Vec::new();
            render_width(&r, f, Style::default(), 100, &mut out).unwrap();
            let out = String::from_utf8(out).unwrap();
            for fact in [
                "CUDA_LAUNCH_BLOCKING=1",
                "switch the attention backend",
                "a kernel indexed past its table",
            ] {
                assert!(out.contains(fact), "{f:?} lacks {fact:?}:\n{out}");
            }
        }
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
