//! Python package names as PEP 503 compares them.
//!
//! The one normaliser of distribution names in rosetta (index pages, installed
//! packages, version windows). Versions are `pep440_rs`'s, not this crate's.

/// PEP 503 normalisation, `re.sub(r"[-_.]+", "-", name).lower()`: runs of
/// `-`, `_` and `.` become one `-`, letters become lower case.
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !sep {
                out.push('-');
            }
            sep = true;
        } else {
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize_name;
    use proptest::prelude::*;

    #[test]
    fn normalises_like_pep_503() {
        assert_eq!(normalize_name("Flash_Attn"), "flash-attn");
        assert_eq!(normalize_name("nvidia.cublas--cu12"), "nvidia-cublas-cu12");
        assert_eq!(normalize_name("Foo.Bar__baz"), "foo-bar-baz");
        assert_eq!(normalize_name("sglang"), "sglang");
        // Exactly the regex: leading and trailing runs stay, as one `-`.
        assert_eq!(normalize_name("_foo-._"), "-foo-");
        assert_eq!(normalize_name(""), "");
    }

    proptest! {
        #[test]
        fn idempotent_and_separator_free(s in "[A-Za-z0-9._-]{0,16}") {
            let n = normalize_name(&s);
            prop_assert_eq!(normalize_name(&n), n.clone());
            prop_assert!(!n.contains("--") && !n.contains('_') && !n.contains('.'));
        }
    }
}
