//! The crate graph stands in layers (docs/architecture.md): no crate depends on
//! a crate of its own layer or above, except where named here with the reason.
//! Read from each crate's `Cargo.toml`, so a new dependency that turns the
//! pipeline around fails here, not in review.

use super::repo;
use std::collections::BTreeMap;

/// Bottom to top: vocabulary and report model; readers of inputs; the
/// knowledge base; the report stage; what builds on a report; the supervisor;
/// the binary.
const LAYERS: &[&[&str]] = &[
    &["rosetta-schema"],
    &[
        "rosetta-log",
        "rosetta-env",
        "rosetta-index",
        "rosetta-launch",
    ],
    &["rosetta-kb"],
    &["rosetta-report"],
    &["rosetta-cases", "rosetta-preflight", "rosetta-journal"],
    &["rosetta-run"],
    &["rosetta"],
];

fn layer_of(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&name))
}

fn rosetta_deps(manifest: &toml::Table, section: &str) -> Vec<String> {
    manifest
        .get(section)
        .and_then(|d| d.as_table())
        .map(|t| {
            t.keys()
                .filter(|k| k.starts_with("rosetta"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn manifests() -> BTreeMap<String, toml::Table> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(repo().join("crates")).unwrap() {
        let path = entry.unwrap().path().join("Cargo.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_string();
        out.insert(name, manifest);
    }
    out
}

#[test]
fn every_crate_has_a_layer_and_depends_only_downwards() {
    let all = manifests();
    assert!(all.len() >= 12, "crates found: {:?}", all.keys());
    let mut wrong = Vec::new();
    for (name, manifest) in &all {
        let Some(mine) = layer_of(name) else {
            wrong.push(format!("{name} has no layer in tests/it/layers.rs"));
            continue;
        };
        for dep in rosetta_deps(manifest, "dependencies") {
            match layer_of(&dep) {
                Some(theirs) if theirs < mine => {}
                _ => wrong.push(format!("{name} (layer {mine}) depends on {dep}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_knowledge_base_imports_no_renderer() {
    let all = manifests();
    let kb = rosetta_deps(&all["rosetta-kb"], "dependencies");
    assert!(!kb.contains(&"rosetta-report".to_string()), "{kb:?}");
    // Its fires/quiet harness (tests/rules.rs) builds whole reports, so the
    // report stage is a dev-dependency only: tests may look up, code may not.
    let dev = rosetta_deps(&all["rosetta-kb"], "dev-dependencies");
    assert!(dev.contains(&"rosetta-report".to_string()), "{dev:?}");
}
