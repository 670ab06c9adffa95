//! The distinct warnings of a log, each once, with its count.

use super::*;

pub(super) fn warnings(
    voc: &Vocabulary,
    templates: &[(usize, HashMap<u64, TemplateStat>)],
    total: &mut u64,
) -> Vec<WarningLine> {
    let mut out = Vec::new();
    for (source, map) in templates {
        for (&template, t) in map {
            let ex = t.example.as_str();
            let is_warning = t.level == Some(Level::Warning)
                || ex.contains("Warning:")
                || ex.starts_with("WARNING")
                || ex.contains("UserWarning")
                || ex.contains("FutureWarning")
                || ex.contains("DeprecationWarning")
                || ex.contains("friendly reminder")
                || (t.level.is_none() && voc.shape(ShapeId::WarningWords).is_match(ex));
            if !is_warning || ex.trim().is_empty() || ex.trim().chars().all(|c| c == '*') {
                continue;
            }
            *total += t.count;
            let mut ranks = t.ranks.clone();
            ranks.sort_unstable();
            out.push(WarningLine {
                text: ex.trim().chars().take(400).collect(),
                count: t.count,
                ranks,
                source: *source,
                line: t.first_line,
                template,
            });
        }
    }
    out.sort_by_key(|w| (w.source, w.line));
    out
}

#[cfg(test)]
mod tests {
    use crate::facts::facts_of;

    #[test]
    fn one_warning_repeated_is_one_entry_with_its_count() {
        let line =
            "WARNING 05-01 10:00:00 [config.py:1] Casting torch.bfloat16 to torch.float16.\n";
        let f = facts_of(&format!(
            "{line}{line}{line}INFO 05-01 10:00:01 [x.py:1] ok\n"
        ));
        let w: Vec<_> = f
            .warnings
            .iter()
            .filter(|w| w.text.contains("Casting"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", f.warnings);
        assert_eq!(w[0].count, 3);
        assert_eq!(w[0].line, 1);
        assert_eq!(f.warning_total, 3);
    }

    #[test]
    fn a_log_without_warnings_has_none() {
        let f = facts_of("INFO 05-01 10:00:00 [x.py:1] ok\n");
        assert!(f.warnings.is_empty());
    }
}
