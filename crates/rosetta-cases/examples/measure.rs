//! Measures the case library leave-one-batch-out on `corpus/cases`: every
//! case is searched in a library that holds none of its batch. Prints, per
//! representation, how often the nearest case names a right cause and how
//! unrelated logs score; then tunes the blend by nested cross-validation and
//! prints the per-batch table of `docs/cases.md`.
//!
//! `cargo run --release -p rosetta-cases --example measure [-- --quick]`

use rosetta_cases::blend::{self, Mode, Tuning};
use rosetta_cases::case::{self, batch_of, Labels};
use rosetta_cases::signature::Scope;
use rosetta_cases::vector::Features;
use rosetta_cases::{signature, Case, Hit, Library, Signature};
use rosetta_kb::KnowledgeBase;
use rosetta_log::LogFacts;
use rosetta_report::Hypothesis;
use rosetta_schema::Cause;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

struct Query {
    id: String,
    batch: String,
    labels: Labels,
    sig: Signature,
    rules: Vec<Hypothesis>,
    facts: LogFacts,
    plain: LogFacts,
}

impl Query {
    fn right(&self, c: Cause) -> bool {
        c == self.labels.cause || self.labels.also.contains(&c)
    }
    fn at(&self, hyps: &[Hypothesis], k: usize) -> bool {
        hyps.iter().take(k).any(|h| self.right(h.cause))
    }
}

/// The facts `diagnose` sees (with the knowledge base's literals), the facts
/// `build.rs` sees (without), and the rules' hypotheses.
fn read(kb: &KnowledgeBase, gpus: &[&str], log: &Path) -> (LogFacts, LogFacts, Vec<Hypothesis>) {
    let facts = rosetta_log::read_logs(
        &[log.to_path_buf()],
        rosetta_log::Vocabulary::embedded(),
        &kb.literals(),
        gpus,
    )
    .unwrap();
    let plain = rosetta_log::read_logs(
        &[log.to_path_buf()],
        rosetta_log::Vocabulary::embedded(),
        &[],
        &[],
    )
    .unwrap();
    let report = rosetta_report::build(kb, &facts, None);
    (facts, plain, report.hypotheses)
}

fn library(queries: &[Query], scope: Scope, f: Features) -> Library {
    // As `build.rs`: a case whose log yields no signature is not in the library.
    let cases = queries
        .iter()
        .filter(|q| !signature::of_scope(&q.plain, scope).is_empty())
        .map(|q| Case {
            id: q.id.clone(),
            labels: q.labels.clone(),
            sig: signature::of_scope(&q.plain, scope).to_text(),
        })
        .collect();
    Library::from_cases(cases).with_features(f)
}

/// Every labelled failure of `corpus/cases` read as a query; prints how many
/// signatures differ with and without the knowledge base's literals.
fn read_queries(root: &Path, kb: &KnowledgeBase, gpus: &[&str]) -> Vec<Query> {
    let mut queries = Vec::new();
    let mut differ = Vec::new();
    for d in case::case_dirs(root).unwrap() {
        let labels = case::read_labels(&d.join("expect.toml")).unwrap();
        if labels.class == rosetta_schema::FailureClass::None {
            continue;
        }
        let id = d.file_name().unwrap().to_string_lossy().into_owned();
        let (facts, plain, rules) = read(kb, gpus, &d.join("log.txt"));
        let sig = signature::of(&facts);
        if sig != signature::of(&plain) {
            differ.push(id.clone());
        }
        queries.push(Query {
            batch: batch_of(&id).to_string(),
            id,
            labels,
            sig,
            rules,
            facts,
            plain,
        });
    }
    println!(
        "{} cases; signature with the knowledge base's literals differs from the library's in {}: {:?}",
        queries.len(),
        differ.len(),
        differ
    );
    queries
}

/// The unrelated logs (`tests/unrelated` and one clean run), named, with their facts.
fn read_negatives(root: &Path, kb: &KnowledgeBase, gpus: &[&str]) -> Vec<(String, LogFacts)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/unrelated");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v.push(root.join("h2-008/log.txt"));
    v.into_iter()
        .map(|p| {
            let (facts, _, _) = read(kb, gpus, &p);
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let name = if name == "log.txt" {
                "h2-008 (clean run)".to_string()
            } else {
                name
            };
            (name, facts)
        })
        .collect()
}

/// The queries' batches, sorted, each once.
fn batches_of(queries: &[Query]) -> Vec<String> {
    let mut b: Vec<String> = queries.iter().map(|q| q.batch.clone()).collect();
    b.dedup();
    b.sort();
    b.dedup();
    b
}

/// Long because it is one flat table: each signature representation measured, with its name.
fn variants() -> Vec<(&'static str, Scope, Features)> {
    let d = Features::default();
    let plain_words = Features {
        bigrams: false,
        split_idents: false,
        class_words: false,
        message_boost: 0,
        ..d
    };
    vec![
        ("block: tf-idf words", Scope::Block, plain_words),
        (
            "block: + identifier parts",
            Scope::Block,
            Features {
                bigrams: false,
                class_words: false,
                message_boost: 0,
                ..d
            },
        ),
        (
            "block: + bigrams",
            Scope::Block,
            Features {
                class_words: false,
                message_boost: 0,
                ..d
            },
        ),
        (
            "block: + class word",
            Scope::Block,
            Features {
                message_boost: 0,
                ..d
            },
        ),
        ("block: + message words twice (default)", Scope::Block, d),
        (
            "block: + class and phase words",
            Scope::Block,
            Features {
                phase_words: true,
                ..d
            },
        ),
        (
            "block: + class, framework, arch words",
            Scope::Block,
            Features {
                context_words: true,
                ..d
            },
        ),
        (
            "block: Jaccard of templates",
            Scope::Block,
            Features {
                template_jaccard: true,
                ..d
            },
        ),
        (
            "block: message words three times",
            Scope::Block,
            Features {
                message_boost: 2,
                ..d
            },
        ),
        (
            "block: without frame headers",
            Scope::Block,
            Features { frames: false, ..d },
        ),
        ("all error lines: tf-idf words", Scope::Errors, plain_words),
        ("all error lines: default features", Scope::Errors, d),
        ("all kept lines: tf-idf words", Scope::Kept, plain_words),
        ("all kept lines: default features", Scope::Kept, d),
    ]
}

/// Section 1: the table of representations (its rows skipped with `--bare`).
fn print_representations(
    queries: &[Query],
    batches: &[String],
    negatives: &[(String, LogFacts)],
    bare_only: bool,
) {
    println!("\n| signature: representation | nearest case names a right cause | among those shown (>= floor) | shown | cases alone @1 / @3 | best unrelated score |");
    println!("|---|---|---|---|---|---|");
    for (name, scope, f) in variants().iter().filter(|_| !bare_only) {
        print_representation(queries, batches, negatives, name, *scope, *f);
    }
}

/// One row of the representations' table: leave one batch out with this scope and
/// these features, and the best score of an unrelated log.
fn print_representation(
    queries: &[Query],
    batches: &[String],
    negatives: &[(String, LogFacts)],
    name: &str,
    scope: Scope,
    f: Features,
) {
    let (mut right, mut shown, mut shown_right) = (0, 0, 0);
    let (mut c1, mut c3) = (0, 0);
    let t = Tuning::default();
    let all = library(queries, scope, f);
    for b in batches {
        let mut lib = Library::from_cases(all.cases().to_vec()).with_features(f);
        lib.exclude(&[b.as_str()]);
        for q in queries.iter().filter(|q| &q.batch == b) {
            let hits = lib.search(&signature::of_scope(&q.facts, scope));
            let mut hyps = q.rules.clone();
            blend::blend(&mut hyps, &hits, Mode::Cases, &t);
            c1 += q.at(&hyps, 1) as usize;
            c3 += q.at(&hyps, 3) as usize;
            if let Some(h) = hits.first() {
                let ok = q.right(h.case.labels.cause);
                right += ok as usize;
                if h.score >= t.show_floor {
                    shown += 1;
                    shown_right += ok as usize;
                }
            }
        }
    }
    let worst = negatives
        .iter()
        .map(|(n, s)| {
            (
                all.search(&signature::of_scope(s, scope))
                    .first()
                    .map_or(0.0, |h| h.score),
                n.as_str(),
            )
        })
        .fold((0.0f32, ""), |a, b| if b.0 > a.0 { b } else { a });
    let n = queries.len() as f64;
    println!(
        "| {name} | {:.0} % | {:.0} % | {:.0} % | {:.0} / {:.0} % | {:.2} ({}) |",
        100.0 * right as f64 / n,
        100.0 * shown_right as f64 / shown.max(1) as f64,
        100.0 * shown as f64 / n,
        100.0 * c1 as f64 / n,
        100.0 * c3 as f64 / n,
        worst.0,
        worst.1
    );
}

/// The full library without each batch, by batch.
fn lobo_libraries(full: &Library, batches: &[String]) -> BTreeMap<String, Library> {
    batches
        .iter()
        .map(|b| {
            let mut lib = Library::from_cases(full.cases().to_vec());
            lib.exclude(&[b.as_str()]);
            (b.clone(), lib)
        })
        .collect()
}

/// The queries with their nearest cases (leave one batch out, default features).
struct Measured<'a> {
    queries: &'a [Query],
    hits: &'a [Vec<Hit<'a>>],
}

impl Measured<'_> {
    /// Section 2: how often the nearest case names a right cause, by band of its score.
    fn print_score_bands(&self) {
        println!("\nnearest-case score: right cause / wrong cause (LOBO), by band");
        for lo in [0.0f32, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8] {
            let hi = lo + if lo >= 0.6 { 0.2 } else { 0.1 };
            let (mut r, mut w) = (0, 0);
            for (q, h) in self.queries.iter().zip(self.hits) {
                if let Some(h) = h.first().filter(|h| h.score >= lo && h.score < hi) {
                    if q.right(h.case.labels.cause) {
                        r += 1
                    } else {
                        w += 1
                    }
                }
            }
            println!("  [{lo:.1}, {hi:.1}): {r} right, {w} wrong");
        }
    }

    /// Section 2: at each show floor, how many logs get a similar case and how often it is right.
    fn print_floors(&self) {
        println!(
            "\n| floor | logs with a similar case shown | nearest shown names a right cause |"
        );
        println!("|---|---|---|");
        for floor in [0.2f32, 0.25, 0.3, 0.35, 0.4, 0.5] {
            let (mut shown, mut right) = (0, 0);
            for (q, h) in self.queries.iter().zip(self.hits) {
                if let Some(h) = h.first().filter(|h| h.score >= floor) {
                    shown += 1;
                    right += q.right(h.case.labels.cause) as usize;
                }
            }
            println!(
                "| {floor:.2} | {:.0} % | {:.0} % |",
                100.0 * shown as f64 / self.queries.len() as f64,
                100.0 * right as f64 / shown.max(1) as f64
            );
        }
    }

    /// The queries `only` keeps, ranked by `mode` at `t`: how many have a right cause
    /// first, in the first three, and how many there are.
    fn score(
        &self,
        t: &Tuning,
        mode: Mode,
        only: &dyn Fn(&Query) -> bool,
    ) -> (usize, usize, usize) {
        let (mut a1, mut a3, mut n) = (0, 0, 0);
        for (q, h) in self.queries.iter().zip(self.hits) {
            if !only(q) {
                continue;
            }
            let mut hyps = q.rules.clone();
            blend::blend(&mut hyps, h, mode, t);
            a1 += q.at(&hyps, 1) as usize;
            a3 += q.at(&hyps, 3) as usize;
            n += 1;
        }
        (a1, a3, n)
    }

    /// `MEASURE_DUMP=FILE`: each case's rules and cases rankings (leave one batch
    /// out), in the format of `scripts/blend-heldout collect`, to replay other
    /// blend policies on the same data.
    fn dump(&self, path: &str) {
        let rank = |v: &[Hypothesis]| {
            v.iter()
                .map(|h| {
                    serde_json::json!([h.cause.to_string(), h.confidence, !h.evidence.is_empty()])
                })
                .collect::<Vec<_>>()
        };
        let mut out = serde_json::Map::new();
        for (q, h) in self.queries.iter().zip(self.hits) {
            let mut cases = q.rules.clone();
            blend::blend(&mut cases, h, Mode::Cases, &Tuning::default());
            let mut ok = vec![q.labels.cause.to_string()];
            ok.extend(q.labels.also.iter().map(|c| c.to_string()));
            out.insert(
                q.id.clone(),
                serde_json::json!({
                    "ok": ok,
                    "batch": q.batch,
                    "rules": rank(&q.rules),
                    "cases": rank(&cases),
                    "near": h.first().map(|x| x.score),
                }),
            );
        }
        std::fs::write(path, serde_json::Value::Object(out).to_string()).unwrap();
        println!("dumped {} cases to {path}", self.queries.len());
    }

    /// Section 3: the share of the cases when no rule cites a line (bare: only the
    /// class's prior ranks), overall and per batch for the gates of `.ci/run`.
    fn print_bare_weights(&self, batches: &[String]) {
        let bare = |q: &Query| q.rules.iter().all(|h| h.evidence.is_empty());
        println!(
            "\nbare logs (no rule cites a line), leave one batch out: {} of {}",
            self.queries.iter().filter(|q| bare(q)).count(),
            self.queries.len()
        );
        println!("| bare weight | bare @1 / @3 | all @1 / @3 |");
        println!("|---|---|---|");
        for b in [0.05, 0.15, 0.25, 0.35, 0.5, 0.65, 0.8, 0.9, 1.0] {
            let t = Tuning {
                bare: b,
                ..Tuning::default()
            };
            let x = self.score(&t, Mode::Blend, &bare);
            let y = self.score(&t, Mode::Blend, &|_| true);
            println!(
                "| {b:.2} | {} / {} of {} | {} / {} of {} |",
                x.0, x.1, x.2, y.0, y.1, y.2
            );
        }
        // Per batch, for the gates of `.ci/run`: `batch @1/@3` at each bare weight.
        for b in [0.05, 0.35, 0.5, 0.8] {
            let t = Tuning {
                bare: b,
                ..Tuning::default()
            };
            let row: Vec<String> = batches
                .iter()
                .map(|bt| {
                    let x = self.score(&t, Mode::Blend, &|q: &Query| &q.batch == bt);
                    format!("{bt}={}/{}/{}", x.0, x.1, x.2)
                })
                .collect();
            println!("per batch at bare {b:.2}: {}", row.join(" "));
        }
    }

    /// The point of `grid` with the best cause@1 + cause@3 over the queries `only`
    /// keeps, each point judged with its neighbours on the weight axis.
    fn best_on(&self, grid: &[Tuning], only: &dyn Fn(&Query) -> bool) -> Tuning {
        let raw: Vec<usize> = grid
            .iter()
            .map(|t| {
                let (a1, a3, _) = self.score(t, Mode::Blend, only);
                a1 + a3
            })
            .collect();
        let mut best = (f64::MIN, Tuning::default());
        for (i, t) in grid.iter().enumerate() {
            let near: Vec<usize> = (i.saturating_sub(1)..=(i + 1).min(grid.len() - 1))
                .filter(|&j| grid[j].third == t.third && grid[j].power == t.power)
                .map(|j| raw[j])
                .collect();
            let smooth = near.iter().sum::<usize>() as f64 / near.len() as f64;
            if smooth > best.0 {
                best = (smooth, *t);
            }
        }
        best.1
    }

    /// The per-batch table of `docs/cases.md`: rules, cases, blended, and blended with
    /// the tuning chosen without the batch.
    fn print_batch_table(&self, grid: &[Tuning], batches: &[String], chosen: &Tuning) {
        println!("\n| batch | cases | rules alone @1 / @3 | cases alone @1 / @3 | blended @1 / @3 | blended, weight tuned without the batch @1 / @3 |");
        println!("|---|---|---|---|---|---|");
        let pct = |x: usize, n: usize| 100.0 * x as f64 / n.max(1) as f64;
        let mut totals = [0usize; 9];
        let mut beats = 0;
        for b in batches {
            let only = |q: &Query| &q.batch == b;
            let r = self.score(chosen, Mode::Rules, &only);
            let c = self.score(chosen, Mode::Cases, &only);
            let x = self.score(chosen, Mode::Blend, &only);
            let nested = self.best_on(grid, &|q: &Query| &q.batch != b);
            let y = self.score(&nested, Mode::Blend, &only);
            for (i, v) in [r.0, r.1, c.0, c.1, x.0, x.1, y.0, y.1, r.2]
                .iter()
                .enumerate()
            {
                totals[i] += v;
            }
            beats += (x.1 > r.1) as usize;
            println!(
                "| {b} | {} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} (weight {:.2}) |",
                r.2,
                pct(r.0, r.2), pct(r.1, r.2),
                pct(c.0, c.2), pct(c.1, c.2),
                pct(x.0, x.2), pct(x.1, x.2),
                pct(y.0, y.2), pct(y.1, y.2), nested.weight
            );
        }
        let n = totals[8];
        println!(
            "| all | {n} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} |",
            pct(totals[0], n),
            pct(totals[1], n),
            pct(totals[2], n),
            pct(totals[3], n),
            pct(totals[4], n),
            pct(totals[5], n),
            pct(totals[6], n),
            pct(totals[7], n)
        );
        println!(
            "blended beats rules alone on cause@3 in {beats} of {} batches",
            batches.len()
        );
    }

    /// The cases whose cause@3 the blend changes, and those `MEASURE_SHOW` names (by id,
    /// or by batch where the blend misses), with both rankings and the nearest cases.
    fn print_changes(&self, chosen: &Tuning) {
        let show: Vec<String> = std::env::var("MEASURE_SHOW")
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect();
        for (q, h) in self.queries.iter().zip(self.hits) {
            let mut hyps = q.rules.clone();
            blend::blend(&mut hyps, h, Mode::Blend, chosen);
            let (r3, b3) = (q.at(&q.rules, 3), q.at(&hyps, 3));
            if r3 != b3 || show.contains(&q.id) || show.contains(&q.batch) && !b3 {
                print_change(q, h, &hyps, r3, b3);
            }
        }
    }
}

/// One case of [`Measured::print_changes`]: its labels, both rankings, its nearest cases.
fn print_change(q: &Query, h: &[Hit], hyps: &[Hypothesis], r3: bool, b3: bool) {
    println!(
        "  {} cause@3 {} -> {}  (label {} {:?})",
        q.id, r3, b3, q.labels.cause, q.labels.also
    );
    let fmt = |v: &[Hypothesis]| {
        v.iter()
            .take(5)
            .map(|h| format!("{} {:.2}", h.cause, h.confidence))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("     rules: {}", fmt(&q.rules));
    println!("     blend: {}", fmt(hyps));
    let near: Vec<String> = h
        .iter()
        .take(7)
        .map(|x| {
            format!(
                "{} {:.2} {}{:?}",
                x.case.id, x.score, x.case.labels.cause, x.case.labels.also
            )
        })
        .collect();
    println!("     near:  {}", near.join(" | "));
}

/// The tunings searched. Few free numbers, so that the choice does not fit the noise of
/// six small batches: the share of the votes, the lift to third place, how sharply
/// similarity counts. Each point is judged with its neighbours on the weight axis, so
/// that a lone lucky weight does not win.
fn grid(quick: bool) -> Vec<Tuning> {
    let mut grid = Vec::new();
    let weights: Vec<f64> = if quick {
        vec![0.2, 0.3, 0.4]
    } else {
        (1..=18)
            .map(|i| (i as f64 * 0.05 * 100.0).round() / 100.0)
            .collect()
    };
    for &third in &[0.3, 0.4, 0.5, 2.0] {
        for &power in &[1.0, 2.0] {
            for &weight in &weights {
                grid.push(Tuning {
                    weight,
                    third,
                    power,
                    ..Tuning::default()
                });
            }
        }
    }
    grid
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let bare_only = std::env::args().any(|a| a == "--bare");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/cases");
    let kb = KnowledgeBase::embedded().unwrap();
    let gpus: Vec<&str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    let queries = read_queries(&root, &kb, &gpus);
    let negatives = read_negatives(&root, &kb, &gpus);
    let batches = batches_of(&queries);
    let full = Library::embedded().unwrap();
    let built = library(&queries, Scope::Block, Features::default());
    assert_eq!(
        full.cases(),
        built.cases(),
        "the embedded library is not what build.rs would build now"
    );

    // 1. Representations.
    print_representations(&queries, &batches, &negatives, bare_only);

    // 2. Scores of right and wrong nearest cases and of unrelated logs (default features).
    let libs = lobo_libraries(&full, &batches);
    let hits: Vec<Vec<Hit>> = queries
        .iter()
        .map(|q| libs[&q.batch].search(&q.sig))
        .collect();
    let m = Measured {
        queries: &queries,
        hits: &hits,
    };
    m.print_score_bands();
    m.print_floors();
    print_unrelated(&full, &negatives);

    // 3. Tuning by nested leave-one-batch-out.
    if let Ok(path) = std::env::var("MEASURE_DUMP") {
        m.dump(&path);
    }
    m.print_bare_weights(&batches);
    if bare_only {
        return;
    }
    let grid = grid(quick);
    let chosen = m.best_on(&grid, &|_| true);
    println!("\nchosen on all batches (each scored without its own batch): {chosen:?}");
    println!(
        "the built-in tuning is the chosen one: {}",
        chosen == Tuning::default()
    );
    m.print_batch_table(&grid, &batches, &chosen);
    m.print_changes(&chosen);
}

/// Section 2: each unrelated log's best score in the full library.
fn print_unrelated(full: &Library, negatives: &[(String, LogFacts)]) {
    let full_lib = Library::from_cases(full.cases().to_vec());
    println!("\nunrelated logs, best score in the full library:");
    for (n, facts) in negatives {
        let s = &signature::of(facts);
        let best = full_lib.search(s);
        println!(
            "  {n}: {} ({}, fallback {})",
            best.first()
                .map_or("none".into(), |h| format!("{:.2} {}", h.score, h.case.id)),
            s.lines.len(),
            s.is_fallback()
        );
    }
}
