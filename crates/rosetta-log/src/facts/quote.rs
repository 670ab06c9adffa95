//! Quoting a line: long lines keep their head and their error words.

/// Longest message quoted from a line.
pub(super) const QUOTE_MAX: usize = 600;

/// A line's text as a failure quotes it: whole when short; when long (a request's
/// payload, a megabyte of tensor dump), its head and the error's own words, which may
/// sit at the line's end or in its middle.
pub(crate) fn quote(text: &str) -> String {
    let t = text.trim();
    let n = t.chars().count();
    if n <= QUOTE_MAX {
        return t.to_string();
    }
    const HEAD: usize = 150;
    let rest = QUOTE_MAX - HEAD - 3;
    // Where the error's words begin: the first error word after the head.
    let head_end = t.char_indices().nth(HEAD).map_or(t.len(), |(b, _)| b);
    let words = [
        "Error",
        "error",
        "Exception",
        "exception",
        "Assert",
        "assert",
        "FAILED",
        "failed",
        "fault",
    ];
    let at = words
        .iter()
        .filter_map(|w| t[head_end..].find(w).map(|b| b + head_end))
        .min();
    let from = match at {
        // A few words before it (`RuntimeError: CUDA error` starts at `RuntimeError`).
        Some(b) => {
            let back = t[..b]
                .char_indices()
                .rev()
                .nth(40)
                .map_or(head_end, |(i, _)| i.max(head_end));
            let from = t[back..b].find(' ').map_or(back, |sp| back + sp + 1);
            // The window must not run past the end: then the end is kept whole.
            let tail_start = t
                .char_indices()
                .rev()
                .nth(rest - 1)
                .map_or(head_end, |(i, _)| i);
            from.min(tail_start).max(head_end)
        }
        None => t
            .char_indices()
            .rev()
            .nth(rest - 1)
            .map_or(head_end, |(i, _)| i),
    };
    let window: String = t[from..].chars().take(rest).collect();
    format!("{} … {}", &t[..head_end], window)
}

#[cfg(test)]
mod quote_tests {
    use super::quote;

    #[test]
    fn a_short_line_is_quoted_whole() {
        assert_eq!(quote("  RuntimeError: boom "), "RuntimeError: boom");
    }

    #[test]
    fn a_long_line_keeps_its_head_and_the_error_at_its_end() {
        let line = format!(
            "request payload: {} RuntimeError: CUDA error: an illegal memory access was encountered",
            "x".repeat(5_000_000)
        );
        let q = quote(&line);
        assert!(q.chars().count() <= 600, "{}", q.len());
        assert!(q.starts_with("request payload: xxx"), "{q}");
        assert!(
            q.ends_with("RuntimeError: CUDA error: an illegal memory access was encountered"),
            "{q}"
        );
    }

    #[test]
    fn a_long_line_keeps_the_error_in_its_middle() {
        let line = format!(
            "{} ValueError: prompt too long for the context {}",
            "a".repeat(300),
            "y".repeat(100_000)
        );
        let q = quote(&line);
        assert!(q.chars().count() <= 600);
        assert!(
            q.contains("ValueError: prompt too long for the context"),
            "{q}"
        );
    }

    #[test]
    fn a_long_line_without_error_words_keeps_its_end() {
        let line = format!("{}END", "z ".repeat(10_000));
        let q = quote(&line);
        assert!(q.ends_with("END") && q.contains(" … "), "{q}");
        // Multi-byte text is cut on character boundaries.
        let wide = "é".repeat(5000) + " Error: é";
        assert!(quote(&wide).ends_with("Error: é"));
    }
}
