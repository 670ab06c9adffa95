//! Which model types a transformers release registers, read from the text of
//! its `models/auto/configuration_auto.py` (and, from 5.6.0 on,
//! `models/auto/auto_mappings.py`, where the mapping moved).
//!
//! A model type is known when it is a key of `CONFIG_MAPPING_NAMES` (or of
//! the older `CONFIG_MAPPING`), literal or added by `CONFIG_MAPPING_NAMES.update`.
//! A folder under `models/` is not enough: the loader looks the key up in
//! that mapping. This is a small tokenizer over Python source (strings,
//! comments, brackets), not a Python parser; it never panics on any text.

use std::collections::BTreeSet;

/// The members to read, in the wheel's file list: the mapping file
/// (`models/auto/configuration_auto.py`, or `configuration_auto.py` at the
/// package root before 4.0) and, when present, `auto_mappings.py`. Empty when
/// the wheel has neither.
pub fn mapping_members<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut config_auto: Option<&str> = None;
    let mut auto_mappings: Option<&str> = None;
    for n in names {
        let shorter = |cur: Option<&str>| cur.is_none_or(|c| n.len() < c.len());
        // transformers 2.x-3.x kept it at the package root, 4.0 moved it under models/auto/.
        if (n.ends_with("/models/auto/configuration_auto.py")
            || n.matches('/').count() == 1 && n.ends_with("/configuration_auto.py"))
            && shorter(config_auto)
        {
            config_auto = Some(n);
        } else if n.ends_with("models/auto/auto_mappings.py") && shorter(auto_mappings) {
            auto_mappings = Some(n);
        }
    }
    auto_mappings
        .into_iter()
        .chain(config_auto)
        .map(str::to_string)
        .collect()
}

/// The model types registered by the given source texts; `None` when no
/// mapping was found in any of them.
pub fn registered_model_types(texts: &[&str]) -> Option<BTreeSet<String>> {
    let mut found = false;
    let mut out = BTreeSet::new();
    for text in texts {
        for name in ["CONFIG_MAPPING_NAMES", "CONFIG_MAPPING"] {
            let mut any = false;
            for block in assigned_blocks(text, name) {
                any = true;
                out.extend(keys_in_block(block));
            }
            if any {
                found = true;
                // The older name only counts when the newer one is absent.
                break;
            }
        }
    }
    found.then_some(out)
}

/// The bracketed blocks assigned to `name` (`name = X(...)`, `name: T = {...}`)
/// or passed to `name.update(...)`.
fn assigned_blocks<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
    let b = text.as_bytes();
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find(name) {
        let at = from + p;
        from = at + name.len();
        // Whole word only, at the start of a statement.
        let before_ok = at == 0 || b[at - 1] == b'\n';
        let after = b.get(from).copied();
        if !before_ok || after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            continue;
        }
        let rest = &text[from..];
        let open = if let Some(r) = rest.strip_prefix(".update") {
            let r2 = r.trim_start();
            r2.starts_with('(')
                .then(|| from + ".update".len() + (r.len() - r2.len()))
        } else {
            // `= ...(` or `: Type = ...(` on the same logical line.
            let line_end = rest.find('\n').unwrap_or(rest.len());
            let line = &rest[..line_end];
            match line.find('=') {
                Some(eq) if !line[eq + 1..].starts_with('=') => line[eq + 1..]
                    .find(['(', '{'])
                    .map(|q| from + eq + 1 + q)
                    .or_else(|| {
                        // The opening bracket may be on the next line.
                        rest[eq + 1..].find(['(', '{']).map(|q| from + eq + 1 + q)
                    }),
                _ => None,
            }
        };
        if let Some(open) = open {
            if let Some(close) = matching_close(text, open) {
                blocks.push(&text[open..=close]);
                from = close + 1;
            }
        }
    }
    blocks
}

/// The index of the bracket closing the one at `open`, skipping strings and comments.
fn matching_close(text: &str, open: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'#' => {
                i = text[i..].find('\n').map_or(b.len(), |p| i + p);
                continue;
            }
            b'"' | b'\'' => {
                i = skip_string(b, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index just past the string literal starting at `i` (handles triple quotes and escapes).
fn skip_string(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        if b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == q {
            if !triple {
                return j + 1;
            }
            if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                return j + 3;
            }
        } else if b[j] == b'\n' && !triple {
            return j + 1;
        }
        j += 1;
    }
    b.len()
}

/// Keys in a mapping block: a string right after `(` and before `,` (tuple
/// form), or a string followed by `:` (dict form).
fn keys_in_block(block: &str) -> Vec<String> {
    let b = block.as_bytes();
    let mut keys = Vec::new();
    let mut prev: u8 = 0; // last significant byte outside strings
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            i = block[i..].find('\n').map_or(b.len(), |p| i + p);
            continue;
        }
        if c == b'"' || c == b'\'' {
            let end = skip_string(b, i);
            let inner = block.get(i + 1..end.saturating_sub(1)).unwrap_or("");
            let next = block[end.min(b.len())..]
                .bytes()
                .find(|x| !x.is_ascii_whitespace());
            let tuple_key = prev == b'(' && next == Some(b',');
            let dict_key = (prev == b'{' || prev == b',') && next == Some(b':');
            if (tuple_key || dict_key) && !inner.is_empty() && !inner.contains(['\n', '"', '\'']) {
                keys.push(inner.to_string());
            }
            prev = b'"';
            i = end;
            continue;
        }
        if !c.is_ascii_whitespace() {
            prev = c;
        }
        i += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn v4_tuple_mapping() {
        let t = r#"
CONFIG_MAPPING_NAMES = OrderedDict[str, str](
    [
        # Add configs here
        ("albert", "AlbertConfig"),
        ("audio-spectrogram-transformer", "ASTConfig"),
        ("glm4_moe", "Glm4MoeConfig"),
    ]
)
MODEL_NAMES_MAPPING = OrderedDict([("albert", "ALBERT"), ("zzz", "Z")])
x = [k for k in CONFIG_MAPPING_NAMES]
"#;
        let got = registered_model_types(&[t]).unwrap();
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            ["albert", "audio-spectrogram-transformer", "glm4_moe"]
        );
    }

    #[test]
    fn v5_split_mapping_with_update() {
        let auto = "from collections import OrderedDict\n\nCONFIG_MAPPING_NAMES = OrderedDict(\n    [\n        (\"glm_moe_dsa\", \"GlmMoeDsaConfig\"),\n    ]\n)\n";
        let conf = "from .auto_mappings import CONFIG_MAPPING_NAMES\n\nCONFIG_MAPPING_NAMES.update(\n    {\n        \"EvollaModel\": \"EvollaConfig\",\n        'mlcd': \"MLCDVisionConfig\",\n    }\n)\n";
        let got = registered_model_types(&[auto, conf]).unwrap();
        assert!(got.contains("glm_moe_dsa") && got.contains("EvollaModel") && got.contains("mlcd"));
        assert!(!got.contains("EvollaConfig"));
    }

    #[test]
    fn old_config_mapping_with_classes() {
        let t = "CONFIG_MAPPING = OrderedDict(\n    [\n        (\"t5\", T5Config,),\n        (\"bert\", BertConfig),\n    ]\n)\n";
        let got = registered_model_types(&[t]).unwrap();
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn no_mapping_is_none() {
        assert_eq!(registered_model_types(&["print('hello')"]), None);
    }

    #[test]
    fn members_prefer_the_package_root() {
        let names = [
            "transformers/models/auto/configuration_auto.py",
            "transformers/models/auto/auto_mappings.py",
            "transformers/vendored/x/models/auto/configuration_auto.py",
        ];
        let old = [
            "transformers/configuration_auto.py",
            "transformers/x/configuration_auto.py",
        ];
        assert_eq!(
            mapping_members(old.into_iter()),
            ["transformers/configuration_auto.py"]
        );
        assert_eq!(
            mapping_members(names.into_iter()),
            [
                "transformers/models/auto/auto_mappings.py",
                "transformers/models/auto/configuration_auto.py"
            ]
        );
    }

    proptest! {
        #[test]
        fn never_panics(s in r##"(CONFIG_MAPPING_NAMES|CONFIG_MAPPING|\.update|[=(){}\[\],:'"#\n ]|"[a-z_]{0,6}"|'''|"""|[a-z]{1,5}){0,60}"##) {
            let _ = registered_model_types(&[&s]);
        }

        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let s = String::from_utf8_lossy(&bytes);
            let _ = registered_model_types(&[&s]);
        }
    }
}
