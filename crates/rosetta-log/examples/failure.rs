//! Prints the failure the log layer picks for each file given: a tool for
//! working on the log layer without the knowledge base.

fn main() {
    for arg in std::env::args().skip(1) {
        match rosetta_log::read_logs(
            &[arg.clone().into()],
            rosetta_log::Vocabulary::embedded(),
            &[],
            &[
                "H200",
                "RTX PRO 6000",
                "RTX 2080 Ti",
                "MI300A",
                "H100",
                "RTX 4090",
                "V100",
            ],
        ) {
            Ok(f) => match &f.failure {
                Some(fl) => {
                    if std::env::var("DUMP").is_ok() {
                        dump(&f)
                    }
                    println!(
                        "{arg}: {} {} line {} rank {:?} [{}] {}",
                        fl.class,
                        fl.phase,
                        fl.line,
                        fl.rank,
                        fl.phase_reason,
                        fl.message.chars().take(100).collect::<String>()
                    )
                }
                None => println!("{arg}: none"),
            },
            Err(e) => println!("{arg}: error {e}"),
        }
    }
}

#[allow(dead_code)]
fn dump(f: &rosetta_log::LogFacts) {
    for r in &f.records {
        println!(
            "  {} err={} {:?}",
            r.line,
            r.errorish,
            r.text.chars().take(80).collect::<String>()
        );
    }
    for i in &f.incidents {
        println!(
            "  incident {}-{} {:?} {} {:?} frames={} signals={:?} {}",
            i.line,
            i.end_line,
            i.class,
            i.strength,
            i.role,
            i.frames.len(),
            i.signals,
            i.message.chars().take(60).collect::<String>()
        );
    }
    for m in &f.milestones {
        println!("  milestone {} {:?} {}", m.line, m.phase, m.label);
    }
}
