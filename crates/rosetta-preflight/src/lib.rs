//! `rosetta preflight`: the blockers and risks of a launch, before the
//! weights load. It puts together what the other crates know: the launch
//! command typed by `rosetta-launch` (flags, engine defaults from
//! `kb/engines/`), the model's config judged by `rosetta_kb::config_lint`,
//! the weights sized from safetensors headers (or estimated from the config),
//! the machine from `rosetta env` (or flags), and the knowledge base's own
//! rules, run in preflight mode (`Context::preflight`): the rules that explain
//! a crash predict it. It reads files but prints nothing; the report model and
//! renderers are `rosetta-report`'s.
#![warn(missing_docs)]

mod backends;
mod error;
mod findings;
mod memory;
pub mod weights;

pub use error::Error;

use rosetta_env::model_config::{self, ModelConfig};
use rosetta_env::EnvReport;
use rosetta_kb::config_lint::{self, parse_gpu, Gpu};
use rosetta_kb::{Context, KnowledgeBase, Machine};
use rosetta_launch::{EngineSpec, Engines, LaunchCommand};
use rosetta_log::extract::Located;
use rosetta_log::LogFacts;
use rosetta_report::{MemoryPlan, PreflightFacts, PreflightFinding, PreflightReport};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the launch will run on, as the user described it (flags override the env report).
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// `rosetta env` of the machine: probed here, or read from `--env`.
    pub env: Option<EnvReport>,
    /// Where `env` came from (`this machine`, a file), for the report.
    pub env_from: Option<String>,
    /// `--gpu`: an arch or a GPU name.
    pub gpu: Option<String>,
    /// `--gpus`: GPUs on the machine.
    pub gpus: Option<u64>,
    /// `--gpu-memory`: GiB per GPU.
    pub gpu_memory_gib: Option<f64>,
    /// `--transformers`: the transformers version.
    pub transformers: Option<String>,
    /// `--engine-version`.
    pub engine_version: Option<String>,
}

/// Everything preflight reads.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The launch command's words (one word holding a whole line is split).
    pub command: Vec<String>,
    /// `--model`: a folder or a config.json; else the command's model path when it is on disk.
    pub model: Option<PathBuf>,
    /// The machine.
    pub target: Target,
}

/// Runs every check. Bad input (command, model, target) is an error.
pub fn run(
    inputs: &Inputs,
    kb: &KnowledgeBase,
    engines: &Engines,
) -> Result<PreflightReport, Error> {
    let cmd = rosetta_launch::parse_words(&inputs.command, engines)?;
    let Some(spec) = cmd.spec(engines) else {
        return Err(unknown_engine(&cmd, engines));
    };
    let mut notes: Vec<String> = Vec::new();
    let t = &inputs.target;
    let m = resolve_target(t, spec)?;
    let config = read_model(inputs, &cmd, &mut notes)?;

    let context_length = cmd.context_length(engines);
    let mut found = Vec::new();

    // 1. The command itself.
    findings::from_parse(&cmd, spec, m.engine_version.as_deref(), &mut found);

    // 2. The model, by the config checker `rosetta config` uses.
    if let Some(cfg) = &config {
        notes.extend(lint_model(cfg, &cmd, spec, &m, context_length, &mut found));
    }
    if m.transformers.is_none() {
        notes.push("no transformers version (--transformers, or an env with it installed): model type and RoPE not checked against it".into());
    }
    if m.gpu.is_none() {
        notes.push(
            "no GPU (--gpu, --env, or one on this machine): arch and format checks skipped".into(),
        );
    }

    // 3. Memory.
    let plan = match &config {
        Some(cfg) => plan_memory(cfg, &cmd, spec, engines, m.gpu_mib, &mut found)?,
        None => None,
    };
    // 4. The kernels behind the backends the command picks.
    if let Some(g) = &m.gpu {
        backends::check(&cmd, spec, &g.arch, t.env.as_ref(), &mut found);
    }
    if m.gpu_mib.is_none() {
        notes.push(
            "no GPU memory (--gpu-memory, or an env that shows it): the memory budget not checked"
                .into(),
        );
    }
    check_gpu_count(&cmd, spec, m.gpus, &mut found);

    // 5. The knowledge base's rules, before launch.
    let args = cmd.args_with_defaults(engines);
    let log = rule_facts(&cmd, &args, spec, &m, config.as_ref(), context_length);
    let machine = target_machine(t, &m);
    let ctx = Context::preflight(&log, Some(&machine));
    findings::from_rules(kb, &ctx, spec, &mut found);

    let findings = findings::finish(
        found,
        config.as_ref(),
        m.transformers.as_deref(),
        &mut notes,
    );
    let facts = preflight_facts(&cmd, &args, spec, config.as_ref(), context_length, t, m);
    Ok(PreflightReport {
        rosetta: format!("rosetta {}", env!("CARGO_PKG_VERSION")),
        findings,
        memory: plan,
        facts,
        notes,
    })
}

/// The machine the checks plan for, from the flags first, then the env report.
struct Resolved {
    gpu: Option<Gpu>,
    gpu_name: Option<String>,
    gpu_mib: Option<u64>,
    gpus: Option<u64>,
    transformers: Option<String>,
    engine_version: Option<String>,
}

/// The error for a command no engine of `engines` launches, listing the launchers known.
fn unknown_engine(cmd: &LaunchCommand, engines: &Engines) -> Error {
    let known: Vec<String> = engines
        .all()
        .iter()
        .flat_map(|s| {
            s.launchers
                .iter()
                .map(|l| match (&l.module, &l.program, &l.subcommand) {
                    (Some(m), _, _) => format!("python -m {m}"),
                    (_, Some(p), Some(sub)) => format!("{p} {sub}"),
                    (_, Some(p), None) => p.clone(),
                    _ => String::new(),
                })
        })
        .collect();
    Error::UnknownEngine {
        command: cmd.program.join(" "),
        known: known.join(", "),
    }
}

/// Resolves the target's GPU, its memory and count, and the versions; a bad flag is an error.
fn resolve_target(t: &Target, spec: &EngineSpec) -> Result<Resolved, Error> {
    let gpu = match &t.gpu {
        Some(g) => Some(parse_gpu(g).ok_or_else(|| Error::Target {
            flag: "gpu",
            value: g.clone(),
            message: "not an arch (sm_120, 12.0), a GPU name rosetta knows (H200, RTX PRO 6000), or gfxNNN".into(),
        })?),
        None => t
            .env
            .as_ref()
            .and_then(|e| e.gpus.first())
            .and_then(|g| parse_gpu(&g.compute_capability).or_else(|| parse_gpu(&g.name))),
    };
    let gpu_name = t.gpu.clone().or_else(|| {
        t.env
            .as_ref()
            .and_then(|e| e.gpus.first())
            .map(|g| g.name.clone())
    });
    if let Some(m) = t.gpu_memory_gib {
        if !(m.is_finite() && m > 0.0 && m < 1.0e6) {
            return Err(Error::Target {
                flag: "gpu-memory",
                value: m.to_string(),
                message: "not a size in GiB".into(),
            });
        }
    }
    let gpu_mib = t.gpu_memory_gib.map(|g| (g * 1024.0) as u64).or_else(|| {
        t.env
            .as_ref()
            .and_then(|e| e.gpus.iter().filter_map(|g| g.memory_mib).min())
    });
    let gpus = t.gpus.or_else(|| {
        t.env
            .as_ref()
            .map(|e| e.gpus.len() as u64)
            .filter(|&n| n > 0)
    });
    let package = |name: &str| {
        t.env.as_ref().and_then(|e| {
            e.packages
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(name))
                .map(|p| p.version.clone())
        })
    };
    Ok(Resolved {
        gpu,
        gpu_name,
        gpu_mib,
        gpus,
        transformers: t.transformers.clone().or_else(|| package("transformers")),
        engine_version: t.engine_version.clone().or_else(|| package(&spec.id)),
    })
}

/// Reads the model's config: --model, else the command's model path when it is on disk or in the HF cache.
fn read_model(
    inputs: &Inputs,
    cmd: &LaunchCommand,
    notes: &mut Vec<String>,
) -> Result<Option<ModelConfig>, Error> {
    let env_var = |k: &str| std::env::var(k).ok();
    Ok(match (&inputs.model, &cmd.model) {
        (Some(p), _) => Some(model_config::read(p, &env_var)?),
        (None, Some(m)) => match model_config::read(std::path::Path::new(m), &env_var) {
            Ok(c) => Some(c),
            Err(model_config::ModelConfigError::NotFound { .. }) => {
                notes.push(format!(
                    "the model `{m}` is not on this machine: model, memory and RoPE checks skipped (give --model DIR)"
                ));
                None
            }
            Err(e) => return Err(e.into()),
        },
        (None, None) => {
            notes.push("the command names no model: model checks skipped".into());
            None
        }
    })
}

/// Judges the model's config against the target; returns the checker's notes.
fn lint_model(
    cfg: &ModelConfig,
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    m: &Resolved,
    context_length: Option<u64>,
    out: &mut Vec<PreflightFinding>,
) -> Vec<String> {
    let lint = config_lint::lint(
        cfg,
        &config_lint::Target {
            transformers: m.transformers.clone(),
            context_length,
            gpu: m.gpu.clone(),
        },
    );
    findings::from_config_lint(&lint, cfg, cmd, spec, m.transformers.as_deref(), out);
    lint.notes
}

/// The memory plan for the model in the config's folder.
fn plan_memory(
    cfg: &ModelConfig,
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    engines: &Engines,
    gpu_mib: Option<u64>,
    out: &mut Vec<PreflightFinding>,
) -> Result<Option<MemoryPlan>, Error> {
    let model_dir = cfg.path.parent().map(PathBuf::from);
    memory::plan(cfg, model_dir.as_deref(), cmd, spec, engines, gpu_mib, out)
}

/// A blocker when the command needs more GPUs (tp x pp x dp) than the machine has.
fn check_gpu_count(
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    gpus: Option<u64>,
    out: &mut Vec<PreflightFinding>,
) {
    let (Some(n), true) = (
        gpus,
        cmd.gpus_per_replica() * cmd.dp_size().unwrap_or(1) > 0,
    ) else {
        return;
    };
    let need = cmd.gpus_per_replica() * cmd.dp_size().unwrap_or(1).max(1);
    if need > n {
        out.push(PreflightFinding {
            cause: rosetta_schema::Cause::BadLaunchArgs,
            severity: rosetta_report::Severity::Blocker,
            rule: "launch:more-ranks-than-gpus".into(),
            message: format!(
                "the command needs {need} GPUs (tp x pp x dp) but the machine has {n}"
            ),
            evidence: vec![
                format!("tp_size={}", cmd.tp_size().unwrap_or(1)),
                format!("{n} GPUs"),
            ],
            fix: Some(format!("{} {n}", spec.spelling("tp_size"))),
            crash: Some("startup: not enough devices".into()),
            why: None,
            references: vec![],
        });
    }
}

/// The facts the knowledge base's rules read, as a log would have given them.
fn rule_facts(
    cmd: &LaunchCommand,
    args: &BTreeMap<String, String>,
    spec: &EngineSpec,
    m: &Resolved,
    config: Option<&ModelConfig>,
    context_length: Option<u64>,
) -> LogFacts {
    let mut log = LogFacts::default();
    let x = &mut log.extracted;
    for (k, v) in args {
        x.args.insert(k.clone(), loc(v.clone()));
    }
    x.framework = Some(spec.id.clone());
    if let Some(v) = &m.transformers {
        x.versions.insert("transformers".into(), loc(v.clone()));
    }
    if let Some(v) = &m.engine_version {
        x.versions.insert(spec.id.clone(), loc(v.clone()));
    }
    if let Some(g) = &m.gpu {
        match m
            .gpu_name
            .as_deref()
            .filter(|n| rosetta_kb::tables::GpuTable::embedded().lookup(n).is_some())
        {
            Some(n) => x.gpus.push(loc(n.to_string())),
            None => {
                if let Some((a, b)) = g.cc {
                    x.compute_capabilities.push(loc(format!("{a}.{b}")));
                }
            }
        }
    }
    if let Some(cfg) = config {
        if let Some(mt) = &cfg.model_type {
            x.model_types.push(loc(mt.clone()));
        }
        for a in &cfg.architectures {
            x.architectures.push(loc(a.clone()));
        }
        x.positions.limit = cfg.text.max_position_embeddings.map(loc);
    }
    x.positions.configured = context_length.map(loc);
    x.model = cmd.model.clone().map(loc);
    log
}

/// The machine the rules see: the env report's, with the flags' GPU and memory over it.
fn target_machine(t: &Target, m: &Resolved) -> Machine {
    let mut machine = t.env.as_ref().map(Machine::from_env).unwrap_or_default();
    if t.gpu_memory_gib.is_some() || machine.gpu_memory_mib.is_none() {
        machine.gpu_memory_mib = m.gpu_mib;
    }
    if let (Some(g), true) = (&m.gpu, t.gpu.is_some()) {
        // A GPU named by flag replaces the machine's: the target is what is planned.
        machine.gpus = vec![(
            m.gpu_name.clone().unwrap_or_else(|| g.arch.clone()),
            g.arch.clone(),
        )];
        if t.env
            .as_ref()
            .is_some_and(|e| e.gpus.first().and_then(|x| x.arch()) != Some(g.arch.clone()))
        {
            machine.no_code.clear();
        }
    }
    machine
}

/// The engine defaults the checks read that the command did not type.
fn defaults_used(
    args: &BTreeMap<String, String>,
    typed: &BTreeMap<String, String>,
    spec: &EngineSpec,
) -> BTreeMap<String, String> {
    let mut defaults_used = BTreeMap::new();
    for (k, v) in args {
        if !typed.contains_key(k) {
            defaults_used.insert(k.clone(), v.clone());
        }
    }
    // Only the defaults the checks read, not the whole table.
    let read_keys = [
        "tp_size",
        "pp_size",
        "dp_size",
        "ep_size",
        "kv_cache_dtype",
        "port",
        "host",
    ];
    defaults_used.retain(|k, _| {
        read_keys.contains(&k.as_str()) || spec.roles.memory_fraction.as_deref() == Some(k)
    });
    defaults_used
}

/// The facts section of the report: what the checks read, and where the machine came from.
fn preflight_facts(
    cmd: &LaunchCommand,
    args: &BTreeMap<String, String>,
    spec: &EngineSpec,
    config: Option<&ModelConfig>,
    context_length: Option<u64>,
    t: &Target,
    m: Resolved,
) -> PreflightFacts {
    let typed = cmd.args();
    PreflightFacts {
        engine: Some(spec.id.clone()),
        program: cmd.program.join(" "),
        model: cmd.model.clone(),
        defaults_used: defaults_used(args, &typed, spec),
        args: typed,
        env: cmd.env.clone(),
        model_type: config.and_then(|c| c.model_type.clone()),
        architectures: config.map(|c| c.architectures.clone()).unwrap_or_default(),
        quantization: config
            .and_then(|c| c.quantization.as_ref())
            .map(|q| q.scheme.id().to_string()),
        max_position_embeddings: config.and_then(|c| c.text.max_position_embeddings),
        context_length: context_length
            .or_else(|| config.and_then(|c| c.text.max_position_embeddings)),
        gpu: m.gpu_name,
        gpu_arch: m.gpu.as_ref().map(|g| g.arch.clone()),
        gpus: m.gpus,
        gpu_memory_gib: m.gpu_mib.map(|m| (m as f64 / 1024.0 * 10.0).round() / 10.0),
        transformers: m.transformers,
        engine_version: m.engine_version,
        machine_from: machine_from(t),
    }
}

/// Where the report says the machine's facts came from.
fn machine_from(t: &Target) -> String {
    match (
        &t.env_from,
        t.gpu.is_some() || t.gpu_memory_gib.is_some() || t.transformers.is_some(),
    ) {
        (Some(e), true) => format!("{e}, with the flags given over it"),
        (Some(e), false) => e.clone(),
        (None, true) => "the flags (--gpu, --gpus, --gpu-memory, --transformers)".into(),
        (None, false) => {
            "nowhere: no --env or --gpu given, and this machine could not be probed".into()
        }
    }
}

/// A fact as if read from a log (no source file, no line).
fn loc<T>(value: T) -> Located<T> {
    Located {
        value,
        source: 0,
        line: 0,
    }
}

/// The launch command as preflight reads it (for callers that want it too).
pub fn parse_command(words: &[String], engines: &Engines) -> Result<LaunchCommand, Error> {
    Ok(rosetta_launch::parse_words(words, engines)?)
}
