//! The README tells the truth (issue 12, point 7): its sample is the real output of the
//! binary on the bundled example, and its links stay inside the repository.
//!
//! Regenerate the sample with `UPDATE_README=1 cargo test --release -p rosetta --test it readme`.

use super::repo;
use std::process::Command;

/// What the README says it shows, and what the test runs.
const SAMPLE_MARK: &str =
    "<!-- sample: `COLUMNS=100 rosetta diagnose examples/glm5-sm120.log --color never` -->";

fn example_output() -> String {
    let out = Command::new(super::bin())
        .args(["diagnose", "examples/glm5-sm120.log", "--color", "never"])
        .current_dir(repo())
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .output()
        .expect("rosetta runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The README with its sample block replaced by `sample`, and the block it held.
fn with_sample(readme: &str, sample: &str) -> (String, String) {
    let at = readme
        .find(SAMPLE_MARK)
        .expect("README.md marks its sample block");
    let open = at
        + readme[at..]
            .find("```\n")
            .expect("a code block follows the mark")
        + 4;
    let close = open + readme[open..].find("\n```").expect("the block ends") + 1;
    let old = readme[open..close].to_string();
    let new = format!("{}{}{}", &readme[..open], sample, &readme[close..]);
    (new, old)
}

#[test]
fn readme_sample_is_the_real_output() {
    let path = repo().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let real = example_output();
    let (updated, shown) = with_sample(&readme, &real);
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        shown == real,
        "README.md's sample differs from the binary's output; regenerate it with \
         `UPDATE_README=1 cargo test --release -p rosetta --test it readme`\n--- README\n{shown}\n--- binary\n{real}"
    );
}

#[test]
fn readme_links_stay_inside_the_repository() {
    let root = repo().canonicalize().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut checked = 0;
    for (i, _) in readme.match_indices("](") {
        let rest = &readme[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = &rest[..end];
        if target.starts_with('#') {
            continue;
        }
        assert!(
            !target.contains("://"),
            "README.md links outside the repository: {target}"
        );
        let file = target.split('#').next().unwrap();
        let p = root.join(file);
        let p = p
            .canonicalize()
            .unwrap_or_else(|_| panic!("README.md links to a missing file: {target}"));
        assert!(
            p.starts_with(&root),
            "README.md links outside the repository: {target}"
        );
        checked += 1;
    }
    assert!(checked > 5, "only {checked} links found");
}
