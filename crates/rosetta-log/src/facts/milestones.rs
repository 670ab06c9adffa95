//! Milestones: the steps a run announces (model loaded, graphs captured,
//! server ready) and the prose that names the step under way.

use super::*;

/// The steps the log announces: its kept lines that match a milestone shape (outside
/// tracebacks, not lines that name a failure), and the serving counters' first and last
/// lines, in log order, one per line.
pub(super) fn milestones(
    voc: &Vocabulary,
    records: &[Record],
    serving: &[ServingStats],
    tbs: &[Traceback],
) -> Vec<Milestone> {
    let spans = TracebackSpans::new(tbs);
    let margin = paste_margins(records);
    let mut out: Vec<Milestone> = records
        .iter()
        .filter_map(|rec| {
            let msg = rec.message();
            let msg = msg
                .get(margin.get(&rec.source).copied().unwrap_or(0)..)
                .unwrap_or(msg);
            line_milestone(voc, rec, msg, &spans)
        })
        .collect();
    serving_milestones(serving, &mut out);
    out.sort_by_key(|m| (m.source, m.line));
    out.dedup_by_key(|m| (m.source, m.line));
    out
}

/// Tracebacks by where they start. The frames and code lines of a traceback name the
/// functions that were running, not a step the run announced (`self._dummy_run(...)`
/// inside a profile run's traceback).
struct TracebackSpans<'a>(Vec<&'a Traceback>);

impl<'a> TracebackSpans<'a> {
    fn new(tbs: &'a [Traceback]) -> Self {
        let mut spans: Vec<&Traceback> = tbs.iter().collect();
        spans.sort_by_key(|t| (t.source, t.start_line));
        TracebackSpans(spans)
    }

    /// Whether the record is a frame or code line of a traceback (not its exception line);
    /// a line looks back over the tracebacks that start shortly before it.
    fn covers(&self, rec: &Record) -> bool {
        let spans = &self.0;
        let i = spans.partition_point(|t| (t.source, t.start_line) < (rec.source, rec.line));
        spans[..i]
            .iter()
            .rev()
            .take_while(|t| t.source == rec.source && t.start_line + 5000 >= rec.line)
            .any(|t| {
                rec.line <= t.end_line
                    && t.exception.as_ref().is_none_or(|e| e.line != rec.line)
                    && (t.stream.is_empty() || t.stream == rec.prefix.stream_key())
            })
    }
}

/// Each source's margin: a log pasted with every line indented (a Markdown indented code
/// block, a quoted mail) carries that margin on each line; it is the paste's, not the line's.
fn paste_margins(records: &[Record]) -> HashMap<usize, usize> {
    let mut margin: HashMap<usize, usize> = HashMap::new();
    for rec in records {
        let msg = rec.message();
        if !msg.trim().is_empty() {
            let indent = msg.len() - msg.trim_start_matches(' ').len();
            margin
                .entry(rec.source)
                .and_modify(|m| *m = (*m).min(indent))
                .or_insert(indent);
        }
    }
    margin
}

/// The milestone a kept line marks (`msg` is its message without the paste's margin), if any.
fn line_milestone(
    voc: &Vocabulary,
    rec: &Record,
    msg: &str,
    spans: &TracebackSpans,
) -> Option<Milestone> {
    // A line that names a failure is not a milestone, whatever words it holds.
    if rec.errorish
        && rec.prefix.level.is_none_or(|l| l >= Level::Warning)
        && names_failure(voc, msg)
    {
        return None;
    }
    if msg.starts_with(' ') || msg.len() > 4000 {
        return None;
    }
    let shape = voc.milestone(msg).filter(|_| !spans.covers(rec))?;
    Some(Milestone {
        phase: shape.phase,
        done: shape.done,
        ready: shape.ready,
        label: shape.label,
        source: rec.source,
        line: rec.line,
        time: rec.prefix.time_text.clone(),
        rank: rec.prefix.effective_rank(),
    })
}

/// The serving counters' milestones: the first and last line of each kind of serving line
/// (prefill batches, decode batches, throughput reports) of each source.
fn serving_milestones(serving: &[ServingStats], out: &mut Vec<Milestone>) {
    for (source, s) in serving.iter().enumerate() {
        for (kind, phase, label) in [
            (s.prefill(), Phase::Prefill, "prefill"),
            (s.decode(), Phase::Decode, "decode"),
            (s.throughput(), Phase::Decode, "serving"),
        ] {
            if kind.0 > 0 {
                for line in [kind.1, kind.2] {
                    out.push(Milestone {
                        phase,
                        done: false,
                        ready: false,
                        label,
                        source,
                        line,
                        time: None,
                        rank: None,
                    });
                }
            }
        }
    }
}

/// The first phase a pasted report names in words, in its kept lines or its first lines.
pub(super) fn prose_phase(voc: &Vocabulary, f: &LogFacts, source: usize) -> Option<(Phase, u64)> {
    prose_phase_within(voc, f, source, 0, u64::MAX)
}

/// The first phase named in words on lines `from..=to` of `source`.
pub(super) fn prose_phase_within(
    voc: &Vocabulary,
    f: &LogFacts,
    source: usize,
    from: u64,
    to: u64,
) -> Option<(Phase, u64)> {
    let kept = f
        .records
        .iter()
        .filter(|r| r.source == source && r.line >= from && r.line <= to)
        .find_map(|r| voc.prose_phase(r.message()).map(|p| (p, r.line)));
    let first = f
        .first_lines
        .iter()
        .filter(|(s, l, _)| *s == source && *l >= from && *l <= to)
        .find_map(|(_, l, t)| voc.prose_phase(t).map(|p| (p, *l)));
    match (kept, first) {
        (Some(a), Some(b)) => Some(if b.1 < a.1 { b } else { a }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::facts_of;

    #[test]
    fn a_vllm_start_up_announces_its_steps_in_order() {
        let f = facts_of(
            "INFO 05-01 10:00:00 [model_runner.py:1] Starting to load model /m...\n\
             INFO 05-01 10:00:09 [model_runner.py:2] Loading weights took 8.90 GB\n\
             INFO 05-01 10:00:10 [gpu_executor.py:3] # GPU blocks: 9000, # CPU blocks: 2048\n\
             INFO 05-01 10:00:20 [model_runner.py:4] Graph capturing finished in 9 secs.\n\
             INFO:     Application startup complete.\n",
        );
        let phases: Vec<Phase> = f.milestones.iter().map(|m| m.phase).collect();
        assert!(phases.windows(2).all(|w| w[0] <= w[1]), "{phases:?}");
        assert!(phases.contains(&Phase::WeightLoad), "{phases:?}");
        assert!(phases.contains(&Phase::GraphCapture), "{phases:?}");
        assert_eq!(f.milestones.first().map(|m| m.line), Some(1));
    }

    #[test]
    fn prose_names_the_step_under_way() {
        let f = facts_of("The server starts.\nIt fails while capturing the graphs.\n");
        assert_eq!(
            prose_phase(Vocabulary::embedded(), &f, 0).map(|p| p.0),
            Some(Phase::GraphCapture)
        );
        let f = facts_of("hello\nworld\n");
        assert_eq!(prose_phase(Vocabulary::embedded(), &f, 0), None);
    }
}
