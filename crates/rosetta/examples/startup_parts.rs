//! Times each part of `diagnose`'s setup once, in sequence, in a fresh process.
use std::time::Instant;
fn main() {
    let t = Instant::now();
    let mut last = 0.0;
    let mut lap = |what: &str| {
        let now = t.elapsed().as_secs_f64() * 1e3;
        println!("{what:<24} {:6.2} ms", now - last);
        last = now;
    };
    let v = rosetta_log::Vocabulary::embedded();
    lap("vocabulary");
    let s = rosetta_kb::KnowledgeBase::embedded_scanner();
    lap("scanner");
    let _ = v;
    let kb = rosetta_kb::KnowledgeBase::embedded().unwrap();
    lap("kb");
    let c = rosetta_cases::Cases::for_diagnose(&[]).unwrap();
    lap("cases load");
    c.warm();
    lap("cases warm");
    let names: Vec<&'static str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    lap("gpu names");
    std::mem::forget((s, kb, c, names));
}
