//! Times the steps of the case library in-process: parse the
//! embedded library, build its index, cut and search one signature.
//!
//! `cargo run --release -p rosetta-cases --example timing -- LOG`
use std::time::Instant;
fn main() {
    let log = std::path::PathBuf::from(std::env::args().nth(1).expect("a log"));
    let facts =
        rosetta_log::read_logs(&[log], rosetta_log::Vocabulary::embedded(), &[], &[]).unwrap();
    let t = Instant::now();
    let _ = rosetta_cases::signature::mask("x");
    println!(
        "mask patterns compiled in {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    for round in 0..3 {
        let t = Instant::now();
        let lib = rosetta_cases::Library::embedded().unwrap();
        let t1 = t.elapsed();
        let sig = rosetta_cases::signature::of(&facts);
        let t2 = t.elapsed();
        let hits = lib.search(&sig);
        let t3 = t.elapsed();
        let _ = lib.search(&sig);
        let t4 = t.elapsed();
        let t5 = Instant::now();
        let sigs: Vec<rosetta_cases::Signature> =
            lib.cases().iter().map(|c| c.signature()).collect();
        let t6 = t5.elapsed();
        let t8 = Instant::now();
        let n: usize = sigs
            .iter()
            .map(|s| {
                rosetta_cases::vector::terms(s, rosetta_cases::vector::Features::default()).len()
            })
            .sum();
        println!(
            "  {n} terms, as strings in {:.2} ms",
            t8.elapsed().as_secs_f64() * 1e3
        );
        let ix =
            rosetta_cases::vector::Index::build(&sigs, rosetta_cases::vector::Features::default());
        let t7 = t5.elapsed();
        println!(
            "  parse signatures {:.2} ms · build index {:.2} ms ({} docs)",
            t6.as_secs_f64() * 1e3,
            (t7 - t6).as_secs_f64() * 1e3,
            ix.len()
        );
        println!(
            "round {round}: load {:.2} ms · signature {:.2} ms · index + search {:.2} ms · second search {:.2} ms · {} hits",
            t1.as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            (t3 - t2).as_secs_f64() * 1e3,
            (t4 - t3).as_secs_f64() * 1e3,
            hits.len()
        );
    }
}
