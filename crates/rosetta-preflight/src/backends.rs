//! The kernels behind the backends a command selects, against the GPU's
//! arch: from the shared objects `rosetta env` found on the machine when they
//! are there, else from the engine file's table (`[[backend]]` in
//! `kb/engines/`). The arch judgment is `rosetta_env`'s (`Library::judge`).
//! A backend with no code for the GPU is a blocker, with the alternatives
//! for the same flag that do have code as the fix.

use rosetta_env::arch::{ComputeCapability, Verdict};
use rosetta_env::{EnvReport, Library};
use rosetta_launch::{Backend, EngineSpec, LaunchCommand};
use rosetta_report::{PreflightFinding, Severity};
use rosetta_schema::Cause;

/// How a backend's code meets the GPU, and where that was read.
fn verdict(b: &Backend, cc: ComputeCapability, env: Option<&EnvReport>) -> (Verdict, String) {
    if let Some(from) = b.jit_from.as_deref().and_then(ComputeCapability::parse) {
        return if cc >= from {
            (
                Verdict::Sass,
                format!("{} is compiled for the GPU at run time", b.library),
            )
        } else {
            (
                Verdict::None,
                format!("{} needs {} or newer", b.library, from.arch()),
            )
        };
    }
    let installed: Vec<&Library> = env
        .map(|e| {
            e.libraries
                .iter()
                .filter(|l| {
                    !b.files.is_empty() && b.files.iter().any(|f| l.path.contains(f.as_str()))
                })
                .collect()
        })
        .unwrap_or_default();
    if !installed.is_empty() {
        let driver = env.and_then(|e| e.driver_cuda());
        let best = installed
            .iter()
            .map(|l| (l.judge(cc, driver), *l))
            .max_by_key(|(v, _)| *v as u8)
            .expect("not empty");
        let mut have = best.1.sass.clone();
        have.extend(best.1.ptx.iter().cloned());
        return (
            best.0,
            format!(
                "{} (installed: {}) carries {}",
                b.library,
                best.1.path,
                have.join(", ")
            ),
        );
    }
    let lib = Library {
        sass: b.sass.clone(),
        ptx: b.ptx.clone(),
        ..Library::default()
    };
    let mut have = b.sass.clone();
    have.extend(b.ptx.iter().cloned());
    (
        lib.judge(cc, None),
        format!("{} ships {} (kb/engines table)", b.library, have.join(", ")),
    )
}

/// Checks every backend the command selects.
pub fn check(
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    arch: &str,
    env: Option<&EnvReport>,
    out: &mut Vec<PreflightFinding>,
) {
    let Some(cc) = ComputeCapability::parse(arch) else {
        return;
    };
    let args = cmd.args();
    let mut chosen: Vec<(String, String)> = Vec::new();
    for b in &spec.backends {
        for k in &b.flags {
            if let Some(v) = args.get(k) {
                chosen.push((k.clone(), v.clone()));
            }
        }
        for k in &b.env {
            if let Some(v) = cmd.env.get(k) {
                chosen.push((k.clone(), v.clone()));
            }
        }
    }
    chosen.sort();
    chosen.dedup();
    for (key, value) in chosen {
        let Some(b) = spec.backends.iter().find(|b| {
            (b.flags.contains(&key) || b.env.contains(&key)) && b.values.contains(&value)
        }) else {
            continue;
        };
        let (v, seen) = verdict(b, cc, env);
        if v != Verdict::None {
            continue;
        }
        // Values of the same flag whose code runs here.
        let mut alternatives: Vec<&str> = Vec::new();
        for other in spec
            .backends
            .iter()
            .filter(|o| o.flags.contains(&key) || o.env.contains(&key))
        {
            if verdict(other, cc, env).0 != Verdict::None {
                alternatives.extend(other.values.iter().map(String::as_str));
            }
        }
        let is_env = b.env.contains(&key) && !b.flags.contains(&key);
        let spelled = if is_env {
            format!("{key}=")
        } else {
            format!("{} ", spec.spelling(&key))
        };
        out.push(PreflightFinding {
            cause: Cause::ArchUnsupported,
            severity: Severity::Blocker,
            rule: format!("backend:{}", key),
            message: format!(
                "{key}={value} runs {}, which has no code for {arch}",
                b.library
            ),
            evidence: vec![format!("{key}={value}"), seen],
            fix: alternatives.first().map(|a| format!("{spelled}{a}")),
            crash: Some(
                "no-kernel-for-arch, or a device-side assert / illegal memory access once serving"
                    .into(),
            ),
            why: None,
            references: spec.references.clone(),
        });
    }
}
