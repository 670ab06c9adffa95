//! Times each part of `diagnose` once, in sequence, in a fresh process, then reads the
//! log a second time: the difference between the two reads is what first use costs
//! (patterns compiled on demand), the rest is the work itself.
//!
//! `cargo run --release -p rosetta --example startup_parts -- [LOG]`
use std::time::Instant;
fn main() {
    let log = std::path::PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "examples/glm5-sm120.log".into()),
    );
    let t = Instant::now();
    let mut last = 0.0;
    let mut lap = |what: &str| {
        let now = t.elapsed().as_secs_f64() * 1e3;
        println!("{what:<24} {:6.2} ms", now - last);
        last = now;
    };
    let v = rosetta_log::Vocabulary::embedded();
    lap("vocabulary");
    v.warm();
    lap("vocabulary warm");
    let s = rosetta_kb::KnowledgeBase::embedded_scanner();
    lap("scanner");
    let kb = rosetta_kb::KnowledgeBase::embedded().unwrap();
    lap("kb");
    let c = rosetta_cases::Cases::for_diagnose(&[]).unwrap();
    lap("cases load");
    c.warm();
    lap("cases warm");
    let names: Vec<&'static str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    lap("gpu names");
    for round in ["first", "second"] {
        let facts = rosetta_log::read_logs_with(&s, std::slice::from_ref(&log), v, &names)
            .expect("a readable log");
        lap(&format!("log facts, {round}"));
        let mut report = rosetta_report::build(&kb, &facts, None);
        lap(&format!("rules and report, {round}"));
        c.apply(&facts, &mut report);
        lap(&format!("case library, {round}"));
        let mut out = Vec::new();
        let style = rosetta_report::Style {
            color: false,
            top: 3,
        };
        rosetta_report::render(&report, rosetta_report::Format::Text, style, &mut out).unwrap();
        lap(&format!("render, {round}"));
        std::mem::forget((facts, report));
    }
    // `ROSETTA_LOOP=N`: N more reads of the log, for a profiler's steady state.
    let more: usize = std::env::var("ROSETTA_LOOP")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    for _ in 0..more {
        let facts = rosetta_log::read_logs_with(&s, std::slice::from_ref(&log), v, &names)
            .expect("a readable log");
        std::mem::forget(facts);
    }
    if more > 0 {
        lap(&format!("log facts, {more} more"));
    }
    std::mem::forget((s, kb, c, names));
}
