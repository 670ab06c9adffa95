//! Matching rules against facts, and scoring the causes. A rule fires when
//! all its conditions hold; each condition that holds on a line brings that
//! line as evidence. A cause's score is the noisy-OR of the weights of its
//! fired rules, lowered by rules against it; confidences are the scores
//! normalised. Facts come in through `Context`; no rule reads a file.

use crate::fact::Fact;
use crate::rule::{Kind, Rule};
use crate::tables::{GpuTable, ModelTypeTable};
use crate::KnowledgeBase;
use pep440_rs::Version;
use rosetta_log::lazy::Captures;
use rosetta_log::lazy::LazyRegex;
use rosetta_log::scan::Record;
use rosetta_log::traceback::Frame;
use rosetta_log::vocab::ShapeId;
use rosetta_log::{LogFacts, Vocabulary};
use rosetta_schema::report::{Evidence, Experiment, Hypothesis};
use rosetta_schema::{Cause, FailureClass};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;

/// What `rosetta env` knows about the machine that crashed, reduced to what rules ask.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    /// GPUs present: (name, arch like `sm_90`).
    pub gpus: Vec<(String, String)>,
    /// Installed distributions: normalised name -> version.
    pub packages: BTreeMap<String, String>,
    /// Libraries with no code for a GPU present: (library path, package, arch missing, archs it has).
    pub no_code: Vec<(String, String, String, Vec<String>)>,
    /// torch's CUDA version when it is newer than the driver's (torch cuda, driver cuda).
    pub torch_cuda_newer_than_driver: Option<(String, String)>,
    /// Memory of the smallest GPU present (or described), MiB.
    pub gpu_memory_mib: Option<u64>,
}

/// A rule that fired, with what it saw.
#[derive(Debug, Clone)]
pub struct Firing<'k> {
    /// The rule.
    pub rule: &'k Rule,
    /// Lines (and machine facts) that support it.
    pub evidence: Vec<Evidence>,
    /// Named captures of its patterns, and the values its template may use.
    pub vars: HashMap<String, String>,
    /// How much of its weight counts: less than 1 when it rests on a GPU arch inferred
    /// from indirect evidence rather than named.
    pub scale: f64,
}

impl Firing<'_> {
    /// The rule's weight, scaled.
    pub fn weight(&self) -> f64 {
        self.rule.def.weight * self.scale
    }
}

/// How much an arch-gated rule counts when the arch is inferred, not named.
pub const INFERRED_ARCH_SCALE: f64 = 0.7;

/// A GPU arch the log (or the machine) shows, and how it is known.
struct GpuArch {
    /// `sm_90`, `gfx942`.
    arch: String,
    /// The GPU's name as given (`H200`), when a name gave it.
    name: Option<String>,
    /// The line (or machine fact) that shows it.
    evidence: Evidence,
    /// Inferred from indirect evidence (no GPU named): arch rules fire at reduced weight.
    inferred: bool,
}

/// Facts as rules see them.
pub struct Context<'a> {
    log: &'a LogFacts,
    /// The vocabulary the log was read with (its shapes name paths and words for facts).
    voc: &'a Vocabulary,
    machine: Option<&'a Machine>,
    /// Distinct lines (one record per template), in log order.
    lines: Vec<&'a Record>,
    gpu_archs: Vec<GpuArch>,
    /// Each GPU name the log gives, with its arch when the GPU table knows it.
    named_gpus: Vec<(String, Option<String>)>,
    versions: BTreeMap<String, (String, Option<Evidence>)>,
    failure_text: String,
    frames_text: Vec<String>,
    file_names: Vec<String>,
    multi_input: bool,
    /// Before launch: the failure's conditions are not asked, evidence has no line.
    preflight: bool,
}

/// Whether an arch in an error message is the GPU's own: not when the message
/// states it as a minimum (`requires GPUs with sm75 or higher`, `at least
/// sm_80`), which says what the library needs, not what the machine has.
fn names_this_gpu(msg: &str, arch: &str) -> bool {
    let lower = msg.to_ascii_lowercase();
    let arch = arch.to_ascii_lowercase();
    let Some(at) = lower.find(&arch) else {
        return false;
    };
    let after = &lower[at + arch.len()..];
    let after = &after[..after.len().min(24)];
    let before = &lower[at.saturating_sub(24)..at];
    let minimum_after = [
        "or higher",
        "or newer",
        "or above",
        "or later",
        "or greater",
        "+ ",
    ]
    .iter()
    .any(|w| after.contains(w));
    let minimum_before = ["at least", ">=", "minimum", "or newer than"]
        .iter()
        .any(|w| before.contains(w));
    !(minimum_after || minimum_before)
}

/// The GPU arch from what the log does say when it names no GPU: an arch the failure's own
/// message names (`sm_120 is not supported`), else a generation name together with the
/// memory of one GPU (`Blackwell` and a 95 GiB "total capacity": sm_120). The evidence says
/// it is inferred and how to make it certain.
fn infer_arch(
    log: &LogFacts,
    ev: &dyn Fn(usize, u64, String) -> Evidence,
) -> Option<(String, Evidence)> {
    let how = "inferred; to make it certain: rosetta env --format json > env.json, then diagnose --env env.json";
    if let Some(fl) = &log.failure {
        let msg = format!(
            "{} {}",
            fl.message,
            fl.surfaced.as_ref().map_or("", |s| s.1.as_str())
        );
        if let Some(a) = log
            .extracted
            .arch_mentions
            .iter()
            .find(|a| a.value.starts_with("sm") && names_this_gpu(&msg, &a.value))
        {
            let arch = format!(
                "sm_{}",
                a.value
                    .trim_start_matches("sm_")
                    .trim_start_matches("sm")
                    .trim_end_matches(['a', 'f'])
            );
            return Some((
                arch.clone(),
                ev(
                    a.source,
                    a.line,
                    format!("GPU arch {arch}: named by the error ({how})"),
                ),
            ));
        }
    }
    let table = GpuTable::embedded();
    let gib = log
        .extracted
        .gpu_memory_gib
        .first()
        .and_then(|m| m.value.parse::<f64>().ok().map(|g| (g, m)));
    for g in &log.extracted.generations {
        if let Some(band) = table.arch_of_generation(&g.value, gib.map(|x| x.0)) {
            let mem = gib.map_or(String::new(), |(v, m)| {
                format!(", {v:.0} GiB per GPU at line {}", m.line)
            });
            return Some((
                band.arch.clone(),
                ev(
                    g.source,
                    g.line,
                    format!(
                        "GPU arch {}: {}{mem}: {} ({how})",
                        band.arch, g.value, band.why
                    ),
                ),
            ));
        }
    }
    None
}

/// The log's lines as rules see them, in log order, leaving out other runs' lines.
fn distinct_lines(log: &LogFacts) -> Vec<&Record> {
    let mut seen = HashSet::new();
    let elsewhere = |r: &Record| {
        log.other_runs
            .iter()
            .any(|&(s, a, b)| r.source == s && a <= r.line && r.line <= b)
    };
    // One line per template and input, the first and the last: lines that differ only in
    // their numbers are one shape for most rules, but the last of them is the state the
    // log ended in (`Running: 8 reqs` and nothing generated, after a line that did).
    let mut last: HashMap<(u64, usize), usize> = HashMap::new();
    for (i, r) in log.records.iter().enumerate() {
        if !elsewhere(r) {
            last.insert((r.template, r.source), i);
        }
    }
    log.records
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !elsewhere(r)
                && (seen.insert((r.template, r.source))
                    || last.get(&(r.template, r.source)) == Some(i))
        })
        .map(|(_, r)| r)
        .collect()
}

/// Each GPU name the log gives, with its arch when the GPU table knows it.
fn lookup_named_gpus(log: &LogFacts) -> Vec<(String, Option<String>)> {
    let table = GpuTable::embedded();
    log.extracted
        .gpus
        .iter()
        .map(|g| {
            let arch = table.lookup(&g.value).and_then(|info| info.arch());
            (g.value.clone(), arch)
        })
        .collect()
}

/// The GPU archs shown, each once, first source first: named GPUs, compute capabilities,
/// the machine's GPUs; else one inferred from indirect evidence.
fn shown_gpu_archs(
    log: &LogFacts,
    machine: Option<&Machine>,
    named_gpus: &[(String, Option<String>)],
    ev: &dyn Fn(usize, u64, String) -> Evidence,
) -> Vec<GpuArch> {
    let mut gpu_archs: Vec<GpuArch> = Vec::new();
    let mut add = |g: GpuArch| {
        if !gpu_archs.iter().any(|x| x.arch == g.arch) {
            gpu_archs.push(g);
        }
    };
    for (g, (_, arch)) in log.extracted.gpus.iter().zip(named_gpus) {
        if let Some(arch) = arch.clone() {
            add(GpuArch {
                evidence: ev(g.source, g.line, format!("GPU {} = {}", g.value, arch)),
                name: Some(g.value.clone()),
                arch,
                inferred: false,
            });
        }
    }
    for cc in &log.extracted.compute_capabilities {
        if let Some(arch) = crate::tables::cc_to_sm(&cc.value) {
            add(GpuArch {
                evidence: ev(
                    cc.source,
                    cc.line,
                    format!("compute capability {} = {}", cc.value, arch),
                ),
                name: None,
                arch,
                inferred: false,
            });
        }
    }
    if let Some(m) = machine {
        for (name, arch) in &m.gpus {
            add(GpuArch {
                arch: arch.clone(),
                name: Some(name.clone()),
                evidence: Evidence {
                    line: None,
                    file: None,
                    text: format!("GPU {name} = {arch} (rosetta env)"),
                },
                inferred: false,
            });
        }
    }
    if gpu_archs.is_empty() {
        if let Some((arch, evidence)) = infer_arch(log, ev) {
            gpu_archs.push(GpuArch {
                arch,
                name: None,
                evidence,
                inferred: true,
            });
        }
    }
    gpu_archs
}

/// Package versions: the log's, then the machine's for packages the log does not give.
fn known_versions(
    log: &LogFacts,
    machine: Option<&Machine>,
    ev: &dyn Fn(usize, u64, String) -> Evidence,
) -> BTreeMap<String, (String, Option<Evidence>)> {
    let mut versions: BTreeMap<String, (String, Option<Evidence>)> = BTreeMap::new();
    for (k, v) in &log.extracted.versions {
        versions.insert(
            k.clone(),
            (
                v.value.clone(),
                Some(ev(v.source, v.line, format!("{k} {}", v.value))),
            ),
        );
    }
    if let Some(m) = machine {
        for (k, v) in &m.packages {
            versions.entry(k.clone()).or_insert((
                v.clone(),
                Some(Evidence {
                    line: None,
                    file: None,
                    text: format!("{k} {v} installed (rosetta env)"),
                }),
            ));
        }
    }
    versions
}

/// The failure's text (its message, the exception's extra lines, what it was the cause
/// of) and its frames as `file function code`, for the rules' patterns.
fn failure_texts(log: &LogFacts) -> (String, Vec<String>) {
    match log.failure_incident() {
        Some(inc) => {
            let mut t = inc.message.clone();
            if let Some(ex) = &inc.exception {
                for x in &ex.extra {
                    t.push('\n');
                    t.push_str(x);
                }
            }
            if let Some(c) = &inc.cause_of {
                t.push('\n');
                t.push_str(c);
            }
            let frames = inc
                .frames
                .iter()
                .map(|f| {
                    format!(
                        "{} {} {}",
                        f.file,
                        f.function,
                        f.code.as_deref().unwrap_or("")
                    )
                })
                .collect();
            (t, frames)
        }
        None => (
            log.failure
                .as_ref()
                .map(|f| f.message.clone())
                .unwrap_or_default(),
            Vec::new(),
        ),
    }
}

fn arch_number(arch: &str) -> Option<u32> {
    rosetta_schema::ComputeCapability::parse(arch).map(rosetta_schema::ComputeCapability::sm)
}

impl<'a> Context<'a> {
    /// The same view with the vocabulary the log was read with (the built-in one and any
    /// `--kb` folders' words); `new` takes the built-in one.
    pub fn with_vocabulary(mut self, voc: &'a Vocabulary) -> Context<'a> {
        self.voc = voc;
        self
    }

    /// Builds the rules' view of the facts.
    pub fn new(log: &'a LogFacts, machine: Option<&'a Machine>) -> Context<'a> {
        let file_names: Vec<String> = log
            .inputs
            .iter()
            .map(|i| i.name.display().to_string())
            .collect();
        let multi_input = log.inputs.len() > 1;
        let ev = |source: usize, line: u64, text: String| Evidence {
            line: Some(line),
            file: multi_input.then(|| file_names.get(source).cloned().unwrap_or_default()),
            text,
        };
        let lines = distinct_lines(log);
        let named_gpus = lookup_named_gpus(log);
        let gpu_archs = shown_gpu_archs(log, machine, &named_gpus, &ev);
        let versions = known_versions(log, machine, &ev);
        let (failure_text, frames_text) = failure_texts(log);
        Context {
            log,
            voc: Vocabulary::embedded(),
            machine,
            lines,
            gpu_archs,
            named_gpus,
            versions,
            failure_text,
            frames_text,
            file_names,
            multi_input,
            preflight: false,
        }
    }

    /// The rules' view of facts known before launch (`rosetta preflight`): only
    /// rules with a `[preflight]` section fire, without their failure conditions.
    pub fn preflight(log: &'a LogFacts, machine: Option<&'a Machine>) -> Context<'a> {
        let mut c = Context::new(log, machine);
        c.preflight = true;
        c
    }

    fn evidence(&self, source: usize, line: u64, text: &str) -> Evidence {
        Evidence {
            line: (!self.preflight).then_some(line),
            file: self
                .multi_input
                .then(|| self.file_names.get(source).cloned().unwrap_or_default()),
            text: text.trim().chars().take(300).collect(),
        }
    }

    fn failure_evidence(&self) -> Option<Evidence> {
        let f = self.log.failure.as_ref()?;
        Some(self.evidence(f.source, f.line, &f.message))
    }

    /// A line matching `re`: the first one at or before the failure, else the first.
    fn find_line(&self, re: &LazyRegex) -> Option<(&'a Record, Captures<'a>)> {
        let limit = self
            .log
            .failure_incident()
            .map(|i| (i.source, i.end_line + 12));
        let mut first: Option<(&'a Record, Captures<'a>)> = None;
        for r in &self.lines {
            if let Some(c) = re.captures(r.message()) {
                let before = limit.is_none_or(|(s, l)| r.source != s || r.line <= l);
                if before {
                    return Some((r, c));
                }
                if first.is_none() {
                    first = Some((r, c));
                }
            }
        }
        // A failure whose message the log split over lines (a sentence written over two
        // source lines, a wrapped table cell) is matched whole, on the failure's line.
        first.or_else(|| {
            let inc = self.log.failure_incident()?;
            let c = re.captures(&inc.message)?;
            let r = self
                .lines
                .iter()
                .find(|r| r.source == inc.source && r.line == inc.line)?;
            Some((*r, c))
        })
    }

    fn arg(&self, key: &str) -> Option<&rosetta_log::extract::Located<String>> {
        self.log.extracted.args.get(key)
    }

    fn arg_true(&self, key: &str) -> bool {
        self.arg(key).is_some_and(|v| {
            matches!(
                v.value.to_ascii_lowercase().as_str(),
                "true" | "1" | "yes" | "on"
            )
        })
    }

    /// A derived fact, with the evidence for it.
    fn fact(&self, fact: Fact) -> (bool, Vec<Evidence>) {
        let log = self.log;
        let f = log.failure.as_ref();
        match fact {
            Fact::PositionOverflow => self.position_overflow(),
            Fact::MultiRank => (self.multi_rank(), vec![]),
            Fact::CudaGraphOn => (
                !(self.arg_true("disable_cuda_graph") || self.arg_true("enforce_eager")),
                vec![],
            ),
            Fact::Exception => (
                log.failure_incident()
                    .is_some_and(|i| i.exception.is_some())
                    || f.is_some_and(|f| f.exception.is_some()),
                vec![],
            ),
            Fact::Serving => self.serving(),
            Fact::NewArch => self.arch_fact(|n| n >= 100),
            Fact::OldArch => self.arch_fact(|n| n <= 75),
            Fact::EnvNoCodeForGpu => self.env_no_code_for_gpu(),
            Fact::EnvTorchCudaNewerThanDriver => self.env_torch_cuda_newer_than_driver(),
            Fact::RequestTokenBeyondVocab => self.request_token_beyond_vocab(),
            Fact::Fp16 => self.fp16(),
            Fact::ContextOverLimit => self.context_over_limit(),
            Fact::ShapeRatioTp => (self.shape_ratio_tp(), vec![]),
            Fact::MemoryHeadroomShort => self.memory_headroom_short(),
            Fact::ImportAcrossPackages => (self.import_across_packages(), vec![]),
            Fact::ImportOnPlatformPath => (self.import_on_platform_path(), vec![]),
            Fact::KeywordWithinCodebase => (self.keyword_within_codebase(), vec![]),
        }
    }

    /// Positions reach the model's limit: the limit, the highest position used, the
    /// planned length and any warning, as evidence.
    fn position_overflow(&self) -> (bool, Vec<Evidence>) {
        let p = &self.log.extracted.positions;
        let mut ev = Vec::new();
        if let Some(l) = &p.limit {
            ev.push(self.evidence(l.source, l.line, &format!("position limit {}", l.value)));
        }
        if let Some(s) = &p.max_seen {
            ev.push(self.evidence(s.source, s.line, &format!("position {} used", s.value)));
        }
        if let Some(pl) = &p.planned {
            ev.push(self.evidence(
                pl.source,
                pl.line,
                &format!("prompt + new tokens = {}", pl.value),
            ));
        }
        if let Some(w) = &p.exceeded_warning {
            ev.push(self.evidence(w.source, w.line, &w.value));
        }
        (p.overflow(), ev)
    }

    /// More than one rank: a parallel size above 1, a failure on several ranks, or a line
    /// from a rank other than 0.
    fn multi_rank(&self) -> bool {
        let log = self.log;
        let tp = [
            "tp_size",
            "dp_size",
            "ep_size",
            "pp_size",
            "world_size",
            "nproc_per_node",
        ]
        .iter()
        .any(|k| {
            self.arg(k)
                .is_some_and(|v| v.value.parse::<u32>().is_ok_and(|n| n > 1))
        });
        tp || log.failure.as_ref().is_some_and(|f| f.ranks.len() > 1)
            || log
                .records
                .iter()
                .any(|r| r.prefix.effective_rank().is_some_and(|x| x > 0))
    }

    /// The server was serving before the failure: a milestone before it (not cited), or
    /// the engine's dump of the batch it was running (cited).
    fn serving(&self) -> (bool, Vec<Evidence>) {
        let Some(f) = self.log.failure.as_ref() else {
            return (false, vec![]);
        };
        let started = self.log.milestones.iter().any(|m| {
            m.source == f.source
                && m.line < f.line
                && matches!(
                    m.label,
                    "ready" | "decode" | "prefill" | "request" | "serving"
                )
        });
        if started {
            // Context, not evidence: that the server had started bears on no
            // cause by itself, so its line is not cited.
            return (true, vec![]);
        }
        // vLLM dumps the scheduled batch when a step fails: it was serving.
        match self.find_line(step_dump_line()) {
            Some((r, _)) => (true, vec![self.evidence(r.source, r.line, r.message())]),
            None => (false, vec![]),
        }
    }

    /// (`--env`) Libraries with no code for a GPU present, the first three as evidence.
    fn env_no_code_for_gpu(&self) -> (bool, Vec<Evidence>) {
        match self.machine {
            Some(m) if !m.no_code.is_empty() => (
                true,
                m.no_code
                    .iter()
                    .take(3)
                    .map(|(lib, pkg, arch, have)| Evidence {
                        line: None,
                        file: None,
                        text: format!(
                            "{lib} ({pkg}) has no code for {arch}; it carries {}",
                            have.join(", ")
                        ),
                    })
                    .collect(),
            ),
            _ => (false, vec![]),
        }
    }

    /// (`--env`) torch built for a newer CUDA than the driver supports.
    fn env_torch_cuda_newer_than_driver(&self) -> (bool, Vec<Evidence>) {
        match self
            .machine
            .and_then(|m| m.torch_cuda_newer_than_driver.as_ref())
        {
            Some((t, d)) => (
                true,
                vec![Evidence {
                    line: None,
                    file: None,
                    text: format!(
                        "torch built for CUDA {t}, driver supports CUDA {d} (rosetta env)"
                    ),
                }],
            ),
            None => (false, vec![]),
        }
    }

    /// A requested token id at or above the vocabulary size, with both lines.
    fn request_token_beyond_vocab(&self) -> (bool, Vec<Evidence>) {
        let v = &self.log.extracted.vocab;
        let mut ev = Vec::new();
        if let (Some(s), Some(m)) = (&v.size, &v.max_request_id) {
            ev.push(self.evidence(m.source, m.line, &format!("token id {} requested", m.value)));
            ev.push(self.evidence(s.source, s.line, &format!("vocabulary size {}", s.value)));
        }
        (v.overflow(), ev)
    }

    /// The model runs in float16: a dtype flag, else a line saying so.
    fn fp16(&self) -> (bool, Vec<Evidence>) {
        let flag = ["dtype", "torch_dtype"].iter().find_map(|k| {
            self.arg(k).filter(|a| {
                matches!(
                    a.value
                        .trim_start_matches("torch.")
                        .to_ascii_lowercase()
                        .as_str(),
                    "half" | "float16" | "fp16"
                )
            })
        });
        if let Some(a) = flag {
            return (
                true,
                vec![self.evidence(a.source, a.line, &format!("dtype={}", a.value))],
            );
        }
        match self.find_line(fp16_line()) {
            Some((r, _)) => (true, vec![self.evidence(r.source, r.line, r.message())]),
            None => (false, vec![]),
        }
    }

    /// The configured context length is above the model's position limit.
    fn context_over_limit(&self) -> (bool, Vec<Evidence>) {
        let p = &self.log.extracted.positions;
        match (&p.configured, &p.limit) {
            (Some(c), Some(l)) if c.value > l.value => (
                true,
                vec![
                    self.evidence(c.source, c.line, &format!("context length {}", c.value)),
                    self.evidence(l.source, l.line, &format!("position limit {}", l.value)),
                ],
            ),
            _ => (false, vec![]),
        }
    }

    /// With tp above 1, two numbers of the failure (16 or more) of which one is the
    /// other times tp.
    fn shape_ratio_tp(&self) -> bool {
        let tp = self
            .arg("tp_size")
            .and_then(|a| a.value.parse::<u64>().ok())
            .filter(|&t| t > 1);
        let Some(tp) = tp else { return false };
        let nums: Vec<u64> = self
            .failure_text
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .filter(|&n| n >= 16)
            .collect();
        nums.iter().any(|&a| nums.iter().any(|&b| a == b * tp))
    }

    /// `No module named 'a.b'` (Python names the dotted path only when `a` imported) raised
    /// by code outside package `a` that asked for exactly that module: the importer was
    /// written for a version of `a` that had it. The same error inside `a` is `a`'s own
    /// install missing a part.
    fn import_across_packages(&self) -> bool {
        let Some((top, module, f, file)) = self.dotted_import() else {
            return false;
        };
        // `'a' is not a package`: the `a` found is a single-file module (a local file
        // shadowing the package), not another version of the package.
        if self
            .log
            .failure_incident()
            .is_some_and(|inc| inc.message.contains("is not a package"))
        {
            return false;
        }
        // The import asks for a deeper path than the one missing (`from a.b.c import`,
        // `No module named 'a.b'`): a whole subpackage of `a` is absent, a build or variant
        // of `a` without that part rather than another version's layout.
        let asked = f.code.as_deref().and_then(|c| {
            let c = c.trim();
            c.strip_prefix("from ")
                .or_else(|| c.strip_prefix("import "))
                .and_then(|r| r.split_whitespace().next())
        });
        let part_absent =
            asked.is_some_and(|a| a != module && a.starts_with(&format!("{module}.")));
        !file.contains(&format!("/{top}/")) && !part_absent
    }

    /// The failure's `No module named 'a.b'`: the package `a`, the dotted path, the frame
    /// that imported it (the innermost one outside the import machinery) and that frame's
    /// file with `/` separators.
    fn dotted_import(&self) -> Option<(&'a str, &'a str, &'a Frame, String)> {
        let inc = self.log.failure_incident()?;
        let (top, module) = missing_dotted_module(&inc.message)?;
        let importer = inc
            .frames
            .iter()
            .rev()
            .find(|f| !f.file.starts_with("<frozen") && !f.file.contains("/importlib/"))?;
        Some((top, module, importer, importer.file.replace('\\', "/")))
    }

    /// `No module named 'a.b'` raised by `a`'s own code (its file is under `a/`) where that
    /// file or its folder is named for one platform (`rocm_aiter_fusion.py`): the package
    /// imports a module it does not hold, on a path its main platform never runs, as after a
    /// refactor that moved the module and missed this importer.
    fn import_on_platform_path(&self) -> bool {
        let Some((top, _, _, file)) = self.dotted_import() else {
            return false;
        };
        let Some((_, inside)) = file.split_once(&format!("/{top}/")) else {
            return false;
        };
        self.voc.shape(ShapeId::PlatformPath).is_match(inside)
    }

    /// `Outer.f.<locals>.g() got an unexpected keyword argument`: `g` was made inside `f`
    /// (a lambda or a nested function handed to a helper). When `f`'s frame is in the
    /// traceback, its file is where `g` was written; the caller is the innermost frame.
    /// Both of one codebase means the program disagrees with itself, not with a dependency.
    fn keyword_within_codebase(&self) -> bool {
        let Some(inc) = self.log.failure_incident() else {
            return false;
        };
        let Some((head, _)) = inc
            .message
            .split_once("() got an unexpected keyword argument")
        else {
            return false;
        };
        let callee = head.rsplit([' ', ':']).next().unwrap_or("");
        let Some((definer, _)) = callee.split_once(".<locals>.") else {
            return false;
        };
        let mut parts = definer.rsplit('.');
        let function = parts.next().unwrap_or("");
        let owner = parts.next();
        let Some(caller) = inc.frames.last() else {
            return false;
        };
        // The definer's frame: its function by name and, for a method, a call of its class
        // in the frame just outside it (`Model(...)` runs `Model.__init__`).
        let defined_in = inc.frames.iter().enumerate().rev().find(|(i, fr)| {
            fr.function == function
                && owner.is_none_or(|c| {
                    i.checked_sub(1)
                        .and_then(|o| inc.frames[o].code.as_deref())
                        .is_some_and(|code| code.contains(&format!("{c}(")))
                })
        });
        defined_in.is_some_and(|(_, fr)| same_codebase(&fr.file, &caller.file))
    }

    /// The memory fraction leaves less room outside it than the engine's own default
    /// would, by more than the engine file's `risk_below` share (data in `kb/engines/`).
    fn memory_headroom_short(&self) -> (bool, Vec<Evidence>) {
        let Some(gpu_mib) = self.machine.and_then(|m| m.gpu_memory_mib) else {
            return (false, vec![]);
        };
        let engines = rosetta_launch::Engines::embedded();
        let Some(spec) = self
            .log
            .extracted
            .framework
            .as_deref()
            .and_then(|f| engines.get(f))
        else {
            return (false, vec![]);
        };
        let Some(h) = crate::plan::headroom(spec, gpu_mib as f64, &|k| {
            self.arg(k).map(|a| a.value.clone())
        }) else {
            return (false, vec![]);
        };
        let mut ev = Vec::new();
        if let Some(a) = self.arg(&h.key).filter(|_| !self.preflight) {
            ev.push(self.evidence(a.source, a.line, &format!("{}={}", h.key, a.value)));
        }
        ev.push(Evidence {
            line: None,
            file: None,
            text: h.describe(),
        });
        (h.short, ev)
    }

    fn arch_fact(&self, pred: impl Fn(u32) -> bool) -> (bool, Vec<Evidence>) {
        for g in &self.gpu_archs {
            if arch_number(&g.arch).is_some_and(&pred) {
                return (true, vec![g.evidence.clone()]);
            }
        }
        (false, vec![])
    }

    /// The GPUs the log names, in its order, each with its arch when the GPU table
    /// knows it: the one lookup the report's facts reuse.
    pub fn named_gpus(&self) -> &[(String, Option<String>)] {
        &self.named_gpus
    }

    /// Evaluates one rule: its gates, then each kind of condition in a fixed order (the
    /// order its evidence and captured values come in), then the values templates may use.
    pub fn eval<'k>(&self, rule: &'k Rule) -> Option<Firing<'k>> {
        if !self.admits(rule) {
            return None;
        }
        let mut m = Matched {
            evidence: Vec::new(),
            vars: HashMap::new(),
            scale: 1.0,
        };
        self.match_failure(rule, &mut m)?;
        self.match_gpu_and_model(rule, &mut m)?;
        self.match_args(rule, &mut m)?;
        self.match_versions_and_lines(rule, &mut m)?;
        self.match_facts(rule, &mut m)?;
        self.match_model_type_since(rule, &mut m)?;
        self.failure_vars(rule, &mut m.vars);
        self.extracted_vars(&mut m.vars);
        Some(Firing {
            scale: m.scale,
            rule,
            evidence: m.evidence,
            vars: m.vars,
        })
    }

    /// Whether the rule is asked here at all: its preflight section before launch, and
    /// the failure's class, phase and exception and the framework its `when` names.
    fn admits(&self, rule: &Rule) -> bool {
        let w = &rule.def.when;
        let log = self.log;
        let f = log.failure.as_ref();
        if self.preflight && rule.def.preflight.is_none() {
            return false;
        }
        // Before launch there is no failure: its conditions are not asked.
        let failure = !self.preflight;
        if failure && !w.class.is_empty() && !f.is_some_and(|f| w.class.contains(&f.class)) {
            return false;
        }
        if failure && !w.phase.is_empty() && !f.is_some_and(|f| w.phase.contains(&f.phase)) {
            return false;
        }
        if !w.framework.is_empty()
            && !log
                .extracted
                .framework
                .as_ref()
                .is_some_and(|fw| w.framework.iter().any(|x| x == fw))
        {
            return false;
        }
        if failure && !w.exception.is_empty() {
            let ex = log.failure_incident().and_then(|i| i.exception.as_ref());
            return ex.is_some_and(|e| {
                w.exception
                    .iter()
                    .any(|x| x == e.short_type() || *x == e.type_name)
            });
        }
        true
    }

    /// The failure's message and traceback frames the rule asks for (not before launch).
    fn match_failure(&self, rule: &Rule, m: &mut Matched) -> Option<()> {
        let failure = !self.preflight;
        if let Some(re) = rule.message.as_ref().filter(|_| failure) {
            let c = re.captures(&self.failure_text)?;
            take_captures(&c, re, &mut m.vars);
            m.evidence.extend(self.failure_evidence());
        }
        if let Some(re) = rule.frames.as_ref().filter(|_| failure) {
            let hit = self
                .frames_text
                .iter()
                .rev()
                .find_map(|t| re.captures(t).map(|c| (t, c)));
            let (t, c) = hit?;
            take_captures(&c, re, &mut m.vars);
            if let Some(inc) = self.log.failure_incident() {
                m.evidence.push(self.evidence(
                    inc.source,
                    inc.line,
                    &format!("frame: {}", t.trim()),
                ));
            }
        }
        Some(())
    }

    /// The GPU arch and the model type the rule names; an inferred arch scales it down.
    fn match_gpu_and_model(&self, rule: &Rule, m: &mut Matched) -> Option<()> {
        let w = &rule.def.when;
        if self
            .gpu_archs
            .iter()
            .any(|g| !g.inferred && w.not_gpu_arch.iter().any(|p| arch_matches(p, &g.arch)))
        {
            return None;
        }
        if !w.gpu_arch.is_empty() {
            let g = self
                .gpu_archs
                .iter()
                .find(|g| w.gpu_arch.iter().any(|p| arch_matches(p, &g.arch)))?;
            m.vars.insert("gpu_arch".into(), g.arch.clone());
            m.evidence.push(g.evidence.clone());
            if g.inferred {
                m.scale = INFERRED_ARCH_SCALE;
            }
        }
        if !w.model_type.is_empty() {
            let mt = self
                .log
                .extracted
                .model_types
                .iter()
                .find(|x| w.model_type.contains(&x.value))?;
            m.vars.insert("model_type".into(), mt.value.clone());
            m.evidence
                .push(self.evidence(mt.source, mt.line, &format!("model type {}", mt.value)));
        }
        Some(())
    }

    /// The launch flags the rule asks for: all of `args`, one of `any_args`, none of `no_args`.
    fn match_args(&self, rule: &Rule, m: &mut Matched) -> Option<()> {
        for (key, re) in &rule.args {
            let a = self.arg(key)?;
            if !re.is_match(&a.value) {
                return None;
            }
            m.vars.insert(format!("arg:{key}"), a.value.clone());
            m.evidence
                .push(self.evidence(a.source, a.line, &format!("{key}={}", a.value)));
        }
        if !rule.any_args.is_empty() {
            let (key, a) = rule.any_args.iter().find_map(|(k, re)| {
                self.arg(k)
                    .filter(|a| re.is_match(&a.value))
                    .map(|a| (k, a))
            })?;
            m.vars.insert("flag".into(), key.clone());
            m.vars.insert("value".into(), a.value.clone());
            m.evidence
                .push(self.evidence(a.source, a.line, &format!("{key}={}", a.value)));
        }
        for key in &rule.def.when.no_args {
            if self.arg(key).is_some_and(|v| {
                !matches!(
                    v.value.to_ascii_lowercase().as_str(),
                    "false" | "0" | "none" | "no"
                )
            }) {
                return None;
            }
        }
        Some(())
    }

    /// The package versions and the log lines the rule asks for (lines not before launch),
    /// and the lines it forbids.
    fn match_versions_and_lines(&self, rule: &Rule, m: &mut Matched) -> Option<()> {
        let failure = !self.preflight;
        for (pkg, spec) in &rule.versions {
            let (v, e) = self.versions.get(pkg)?;
            let ver = Version::from_str(v.split('+').next().unwrap_or(v)).ok()?;
            if !spec.contains(&ver) {
                return None;
            }
            m.vars.insert(format!("version:{pkg}"), v.clone());
            m.evidence.extend(e.clone());
        }
        for re in rule.lines.iter().filter(|_| failure) {
            let (r, c) = self.find_line(re)?;
            take_captures(&c, re, &mut m.vars);
            m.evidence
                .push(self.evidence(r.source, r.line, r.message()));
        }
        if failure && !rule.any_lines.is_empty() {
            let (r, c, re) = rule
                .any_lines
                .iter()
                .find_map(|re| self.find_line(re).map(|(r, c)| (r, c, re)))?;
            take_captures(&c, re, &mut m.vars);
            m.evidence
                .push(self.evidence(r.source, r.line, r.message()));
        }
        for re in &rule.not_lines {
            if self.lines.iter().any(|r| re.is_match(r.message())) {
                return None;
            }
        }
        Some(())
    }

    /// The derived facts the rule asks for (with the preflight section's before launch)
    /// and those it forbids; facts that need a run are not asked before launch.
    fn match_facts(&self, rule: &Rule, m: &mut Matched) -> Option<()> {
        let w = &rule.def.when;
        let before_launch: &[Fact] = match (&rule.def.preflight, self.preflight) {
            (Some(p), true) => &p.facts,
            _ => &[],
        };
        for &fact in w.facts.iter().chain(before_launch) {
            if self.preflight && fact.needs_run() {
                continue;
            }
            let (ok, e) = self.fact(fact);
            if !ok {
                return None;
            }
            m.evidence.extend(e);
        }
        for &fact in &w.not_facts {
            if self.preflight && fact.needs_run() {
                continue;
            }
            if self.fact(fact).0 {
                return None;
            }
        }
        Some(())
    }

    /// `model_type_since`: a model type (the one matched first, else any the log names)
    /// first released in the rule's version window.
    fn match_model_type_since(&self, rule: &Rule, m: &mut Matched) -> Option<()> {
        let Some(spec) = &rule.model_type_since else {
            return Some(());
        };
        let table = ModelTypeTable::embedded();
        let mut candidates: Vec<String> = self
            .log
            .extracted
            .model_types
            .iter()
            .map(|x| x.value.clone())
            .collect();
        if let Some(c) = m.vars.get("model_type") {
            candidates.insert(0, c.clone());
        }
        let hit = candidates.into_iter().find_map(|mt| {
            let first = table.first_release(&mt)?.to_string();
            let v = Version::from_str(&first).ok()?;
            spec.contains(&v).then_some((mt, first))
        })?;
        m.vars.insert("model_type".into(), hit.0);
        m.vars.insert("first_release".into(), hit.1);
        Some(())
    }

    /// Values templates may use, where the conditions left none: the failure's class and
    /// phase (before launch, the ones the rule predicts), the GPU, the model type.
    fn failure_vars(&self, rule: &Rule, vars: &mut HashMap<String, String>) {
        let w = &rule.def.when;
        if self.preflight {
            // The failure the rule explains is the one it predicts.
            if let Some(c) = w.class.first() {
                vars.entry("class".into()).or_insert_with(|| c.to_string());
            }
            if let Some(p) = w.phase.first() {
                vars.entry("phase".into()).or_insert_with(|| p.to_string());
            }
        }
        if let Some(f) = self.log.failure.as_ref() {
            vars.entry("class".into())
                .or_insert_with(|| f.class.to_string());
            vars.entry("phase".into())
                .or_insert_with(|| f.phase.to_string());
        }
        if let Some(g) = self.gpu_archs.first() {
            vars.entry("gpu_arch".into())
                .or_insert_with(|| g.arch.clone());
            vars.entry("gpu".into()).or_insert_with(|| {
                g.name
                    .clone()
                    .unwrap_or_else(|| format!("the {} GPU", g.arch))
            });
        }
        if let Some(mt) = self.log.extracted.model_types.first() {
            vars.entry("model_type".into())
                .or_insert_with(|| mt.value.clone());
        }
        if let Some(mt) = vars.get("model_type").cloned() {
            if let Some(first) = ModelTypeTable::embedded().first_release(&mt) {
                vars.entry("first_release".into())
                    .or_insert_with(|| first.to_string());
            }
        }
    }

    /// Values templates may use, where none is set yet: the vocabulary and position
    /// numbers, the machine's missing GPU code, every flag and every version.
    fn extracted_vars(&self, vars: &mut HashMap<String, String>) {
        let log = self.log;
        if let Some(m) = &log.extracted.vocab.max_request_id {
            vars.entry("max_id".into())
                .or_insert_with(|| m.value.to_string());
        }
        if let Some(v) = &log.extracted.vocab.size {
            vars.entry("vocab".into())
                .or_insert_with(|| v.value.to_string());
        }
        let p = &log.extracted.positions;
        if let Some(l) = &p.limit {
            vars.entry("limit".into())
                .or_insert_with(|| l.value.to_string());
        }
        if let Some(s) = &p.max_seen {
            vars.entry("max_position".into())
                .or_insert_with(|| s.value.to_string());
        }
        if let Some(c) = &p.configured {
            vars.entry("context".into())
                .or_insert_with(|| c.value.to_string());
        }
        if let Some(m) = self.machine {
            if let Some((lib, pkg, arch, _)) = m.no_code.first() {
                vars.entry("missing_arch".into())
                    .or_insert_with(|| arch.clone());
                vars.entry("library".into()).or_insert_with(|| lib.clone());
                vars.entry("package".into()).or_insert_with(|| pkg.clone());
            }
        }
        for (k, a) in &log.extracted.args {
            vars.entry(format!("arg:{k}"))
                .or_insert_with(|| a.value.clone());
        }
        for (k, (v, _)) in &self.versions {
            vars.entry(format!("version:{k}"))
                .or_insert_with(|| v.clone());
        }
    }
}

/// What a rule's conditions gathered while they held.
struct Matched {
    /// Lines (and machine facts) that support the rule, in condition order.
    evidence: Vec<Evidence>,
    /// Captured and derived values for its templates.
    vars: HashMap<String, String>,
    /// How much of its weight counts (see `Firing::scale`).
    scale: f64,
}

/// Keeps a match's captures as template values (named, then numbered), first one wins.
fn take_captures(c: &Captures, re: &LazyRegex, vars: &mut HashMap<String, String>) {
    for name in re.capture_names().into_iter().flatten() {
        if let Some(m) = c.name(name) {
            vars.entry(name.to_string())
                .or_insert_with(|| m.as_str().to_string());
        }
    }
    for i in 1..c.len() {
        if let Some(m) = c.get(i) {
            vars.entry(i.to_string())
                .or_insert_with(|| m.as_str().to_string());
        }
    }
}

fn step_dump_line() -> &'static LazyRegex {
    static R: std::sync::LazyLock<LazyRegex> = std::sync::LazyLock::new(|| {
        LazyRegex::trusted(
            r"Dumping input data for V1 LLM engine|Dumping scheduler output for model execution",
        )
    });
    &R
}

fn fp16_line() -> &'static LazyRegex {
    static R: std::sync::LazyLock<LazyRegex> = std::sync::LazyLock::new(|| {
        LazyRegex::trusted(
            r"(?i)\bdtype\s*[=:]\s*(?:torch\.)?(?:float16|half|fp16)\b|\bin float16\b|--dtype[ =](?:half|float16)|torch\.float16\b|\.half\(\)|(?:^|[^a-z0-9_])fp16(?:$|[^a-z0-9_])",
        )
    });
    &R
}

/// `sm_120` matches `sm_120`; `sm_12x` matches `sm_120` and `sm_121`.
fn arch_matches(pattern: &str, arch: &str) -> bool {
    match pattern.strip_suffix('x') {
        Some(prefix) if pattern.starts_with("sm_") => arch.starts_with(prefix),
        _ => pattern == arch,
    }
}

/// Fills `{name}` placeholders; unknown names become `?`.
pub fn fill(template: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find('}') {
            Some(j) if j > 0 && !after[..j].split('|').next().unwrap_or(" ").contains(' ') => {
                let (key, default) = match after[..j].split_once('|') {
                    Some((k, d)) => (k, d),
                    None => (&after[..j], "?"),
                };
                match key.strip_prefix("window:").and_then(crate::windows::by_id) {
                    Some(w) => out.push_str(&w.label()),
                    None => out.push_str(vars.get(key).map(String::as_str).unwrap_or(default)),
                }
                rest = &after[j + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A fired rule's note, and the line it is about.
#[derive(Debug, Clone)]
pub struct Note {
    /// The filled text.
    pub text: String,
    /// The line of its first evidence.
    pub line: Option<u64>,
    /// That line's template (`rosetta_log::scan::template_key`): a note about a warning
    /// concerns every occurrence of it.
    pub template: Option<u64>,
}

/// What scoring produces.
#[derive(Debug, Default)]
pub struct Scored {
    /// Hypotheses, most likely first.
    pub hypotheses: Vec<Hypothesis>,
    /// Notes from fired rules (deduplicated).
    pub notes: Vec<Note>,
}

/// The ids of the rules that fire on these facts.
pub fn fired<'k>(kb: &'k KnowledgeBase, ctx: &Context) -> Vec<&'k str> {
    kb.rules
        .iter()
        .filter(|r| ctx.eval(r).is_some())
        .map(|r| r.id())
        .collect()
}

/// Evaluates every rule and scores the causes.
pub fn diagnose(kb: &KnowledgeBase, ctx: &Context) -> Scored {
    let firings: Vec<Firing> = kb.rules.iter().filter_map(|r| ctx.eval(r)).collect();
    let mut scored = Scored {
        notes: notes(&firings, ctx),
        ..Scored::default()
    };
    if ctx.log.failure.is_none() {
        return scored;
    }
    let rows = ranked_causes(&firings);
    let total: f64 = rows.iter().map(|r| r.0).sum();
    for (score, _, cause, fs) in rows {
        let confidence = if total > 0.0 {
            (score / total * 100.0).round() / 100.0
        } else {
            0.0
        };
        scored.hypotheses.push(hypothesis(cause, confidence, &fs));
    }
    if scored.hypotheses.is_empty() {
        scored.hypotheses.extend(no_rule_fired(ctx));
    }
    let _ = FailureClass::None;
    scored
}

/// The fired rules' notes, filled, each text once, with the line (and its template) of
/// the rule's first evidence that has a line.
fn notes(firings: &[Firing], ctx: &Context) -> Vec<Note> {
    let mut notes: Vec<Note> = Vec::new();
    for fi in firings {
        if let Some(n) = &fi.rule.def.note {
            let text = fill(n, &fi.vars);
            let first = fi.evidence.iter().find(|e| e.line.is_some());
            if !notes.iter().any(|n| n.text == text) {
                let template = first.and_then(|e| {
                    ctx.lines
                        .iter()
                        .find(|r| Some(r.line) == e.line && r.message() == e.text)
                        .map(|r| r.template)
                });
                notes.push(Note {
                    text,
                    line: first.and_then(|e| e.line),
                    template,
                });
            }
        }
    }
    notes
}

/// One cause's row: (score, top rule weight, cause, its firings heaviest first).
type CauseRow<'f, 'k> = (f64, f64, Cause, Vec<&'f Firing<'k>>);

/// The causes with a score above 0, most likely first: each the noisy-OR of its cause
/// rules, lowered by the noisy-OR of the rules against it.
fn ranked_causes<'f, 'k>(firings: &'f [Firing<'k>]) -> Vec<CauseRow<'f, 'k>> {
    let mut by_cause: BTreeMap<Cause, Vec<&Firing>> = BTreeMap::new();
    let mut against: HashMap<Cause, f64> = HashMap::new();
    for fi in firings {
        match fi.rule.def.kind {
            Kind::Cause => by_cause.entry(fi.rule.def.cause).or_default().push(fi),
            Kind::Against => {
                let a = against.entry(fi.rule.def.cause).or_insert(0.0);
                *a = 1.0 - (1.0 - *a) * (1.0 - fi.weight());
            }
            Kind::Note => {}
        }
    }
    let mut rows: Vec<CauseRow> = Vec::new();
    for (cause, mut fs) in by_cause {
        fs.sort_by(|a, b| {
            b.weight()
                .partial_cmp(&a.weight())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let miss: f64 = fs.iter().map(|f| 1.0 - f.weight()).product();
        let score = (1.0 - miss) * (1.0 - against.get(&cause).copied().unwrap_or(0.0));
        let top = fs[0].weight();
        rows.push((score, top, cause, fs));
    }
    rows.retain(|r| r.0 > 0.0);
    // Ties go to the more specific rule: the one whose `class` condition names fewer classes
    // (a rule for shape mismatches alone before one for any loading failure; none is the least).
    let breadth = |fs: &[&Firing]| match fs[0].rule.def.when.class.len() {
        0 => usize::MAX,
        n => n,
    };
    rows.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal))
            .then(breadth(&a.3).cmp(&breadth(&b.3)))
            .then(a.2.cmp(&b.2))
    });
    rows
}

/// A cause's hypothesis: its heaviest rule's summary and why, the evidence, experiments
/// and references of all its rules.
fn hypothesis(cause: Cause, confidence: f64, fs: &[&Firing]) -> Hypothesis {
    let best = fs[0];
    Hypothesis {
        cause,
        rule: best.rule.id().to_string(),
        confidence,
        summary: fill(&best.rule.def.summary, &best.vars),
        why: best.rule.def.why.as_ref().map(|w| fill(w, &best.vars)),
        evidence: cause_evidence(fs),
        experiments: experiments(fs),
        references: references(fs),
        also_rules: fs[1..].iter().map(|f| f.rule.id().to_string()).collect(),
        cases: Vec::new(),
    }
}

/// The evidence of a cause's rules, each line once, at most 8.
fn cause_evidence(fs: &[&Firing]) -> Vec<Evidence> {
    let mut evidence: Vec<Evidence> = Vec::new();
    // A rule with a note says its line is not a diagnosis by itself (a warning printed
    // for every model): the note shows the line, the cause does not cite it.
    for f in fs.iter().filter(|f| f.rule.def.note.is_none()) {
        for e in &f.evidence {
            if !evidence
                .iter()
                .any(|x| x.line == e.line && x.text == e.text)
                && evidence.len() < 8
            {
                evidence.push(e.clone());
            }
        }
    }
    evidence
}

/// The experiments of a cause's rules, filled, each once, cheapest first.
fn experiments(fs: &[&Firing]) -> Vec<Experiment> {
    let mut tries: Vec<Experiment> = Vec::new();
    for f in fs {
        for x in &f.rule.def.experiments {
            let mut e = Experiment::new(fill(&x.action, &f.vars), x.cost);
            e.tells = x.tells.as_ref().map(|t| fill(t, &f.vars));
            if !tries.contains(&e) {
                tries.push(e);
            }
        }
    }
    tries.sort_by_key(|e| e.cost);
    tries
}

/// The references of a cause's rules, each once, in rule order.
fn references(fs: &[&Firing]) -> Vec<String> {
    let mut references: Vec<String> = Vec::new();
    for f in fs {
        for r in &f.rule.def.references {
            if !references.contains(r) {
                references.push(r.clone());
            }
        }
    }
    references
}

/// The hypothesis when a failure has no rule that explains it.
fn no_rule_fired(ctx: &Context) -> Option<Hypothesis> {
    let f = ctx.log.failure.as_ref()?;
    Some(Hypothesis {
        cause: Cause::Unknown,
        rule: "no-rule-fired".into(),
        confidence: 1.0,
        summary: format!(
            "no rule of the knowledge base explains a {} in {}",
            f.class, f.phase
        ),
        why: None,
        evidence: ctx.failure_evidence().into_iter().collect(),
        experiments: vec![],
        references: vec![],
        also_rules: vec![],
        cases: vec![],
    })
}

/// The installed package a Python file belongs to: the folder right under `site-packages`
/// or `dist-packages` (`.../site-packages/vllm/config.py` -> `vllm`).
fn installed_package(file: &str) -> Option<String> {
    let file = file.replace('\\', "/");
    let (_, rest) = file
        .split_once("/site-packages/")
        .or_else(|| file.split_once("/dist-packages/"))?;
    let top = rest.split('/').next()?;
    (top.len() < rest.len()).then(|| top.to_string())
}

/// Two Python files of one codebase: the same installed package, or, outside any
/// installed package, one source tree (their folders share at least four levels, as
/// `/home/me/src/engine/...` does; fewer is a shared home or system folder).
fn same_codebase(a: &str, b: &str) -> bool {
    match (installed_package(a), installed_package(b)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => {
            let (a, b) = (a.replace('\\', "/"), b.replace('\\', "/"));
            let da: Vec<&str> = a.split('/').filter(|s| !s.is_empty()).collect();
            let db: Vec<&str> = b.split('/').filter(|s| !s.is_empty()).collect();
            let shared = da[..da.len().saturating_sub(1)]
                .iter()
                .zip(&db[..db.len().saturating_sub(1)])
                .take_while(|(x, y)| x == y)
                .count();
            shared >= 4
        }
        _ => false,
    }
}

/// The package and the whole dotted path of `No module named 'a.b'`; `None` for a top-level
/// module (`No module named 'a'`).
fn missing_dotted_module(message: &str) -> Option<(&str, &str)> {
    let rest = message.split("No module named '").nth(1)?;
    let module = rest.split('\'').next().unwrap_or("");
    let (top, _) = module.split_once('.')?;
    Some((top, module))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_belongs_to_its_installed_package_or_its_source_tree() {
        assert_eq!(
            installed_package("/opt/venv/lib/python3.12/site-packages/vllm/config.py").as_deref(),
            Some("vllm")
        );
        assert_eq!(
            installed_package(r"C:\venv\Lib\site-packages\torch\nn\modules\module.py").as_deref(),
            Some("torch")
        );
        // A single-file module directly under site-packages is no package folder.
        assert_eq!(
            installed_package("/usr/lib/python3/dist-packages/six.py"),
            None
        );
        assert!(same_codebase(
            "/home/me/src/sglang/python/sglang/srt/utils.py",
            "/home/me/src/sglang/python/sglang/srt/models/phi3_small.py"
        ));
        assert!(!same_codebase("/home/me/a/x.py", "/home/me/b/y.py"));
        assert!(!same_codebase(
            "/usr/lib/python3/site-packages/vllm/a.py",
            "/usr/lib/python3/site-packages/transformers/b.py"
        ));
        assert!(!same_codebase(
            "/app/serve.py",
            "/usr/lib/python3/site-packages/vllm/a.py"
        ));
    }

    #[test]
    fn an_arch_stated_as_a_minimum_is_not_the_gpu() {
        assert!(!names_this_gpu(
            "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
            "sm75"
        ));
        assert!(!names_this_gpu("needs at least sm_80 for bf16", "sm_80"));
        assert!(names_this_gpu(
            "no kernel image is available for sm_120 in this build",
            "sm_120"
        ));
        assert!(names_this_gpu("Unsupported arch sm_89", "sm_89"));
    }

    #[test]
    fn templates_fill_and_survive_braces() {
        let mut v = HashMap::new();
        v.insert("arg:tp_size".to_string(), "8".to_string());
        assert_eq!(
            fill("tp={arg:tp_size} {missing} {not a key}", &v),
            "tp=8 ? {not a key}"
        );
        assert_eq!(fill("{gpu_arch|this GPU}", &v), "this GPU");
    }

    #[test]
    fn a_tie_goes_to_the_rule_that_names_fewer_classes() {
        let rule = |id: &str, cause: &str, classes: &str| {
            let text = format!(
                "id = \"{id}\"\ncause = \"{cause}\"\nweight = 0.15\nsummary = \"{id}\"\n\n\
                 [when]\nclass = [{classes}]\n\n[[try]]\ndo = \"look\"\ncost = \"look\"\n"
            );
            crate::rule::Rule::parse(std::path::Path::new(&format!("{id}.toml")), &text).unwrap()
        };
        let log = std::env::temp_dir().join(format!("rosetta-tie-{}.log", std::process::id()));
        std::fs::write(
            &log,
            "RuntimeError: The size of tensor a (4096) must match the size of tensor b (2048) at non-singleton dimension 1\n",
        )
        .unwrap();
        let facts = rosetta_log::read_logs(
            std::slice::from_ref(&log),
            rosetta_log::Vocabulary::embedded(),
            &[],
            &[],
        )
        .unwrap();
        std::fs::remove_file(&log).unwrap();
        assert_eq!(
            facts.failure.as_ref().map(|f| f.class),
            Some(rosetta_schema::FailureClass::ShapeMismatch)
        );
        // The broad rules' causes sort first by name; equal weights, no evidence either.
        let mut kb = KnowledgeBase::default();
        kb.rules = vec![
            rule("any-class", "bad-launch-args", ""),
            rule(
                "two-classes",
                "model-config",
                "\"shape-mismatch\", \"missing-weights\"",
            ),
            rule("one-class", "weight-layout", "\"shape-mismatch\""),
        ];
        let causes: Vec<Cause> = diagnose(&kb, &Context::new(&facts, None))
            .hypotheses
            .iter()
            .map(|h| h.cause)
            .collect();
        assert_eq!(
            causes,
            [
                Cause::WeightLayout,
                Cause::ModelConfig,
                Cause::BadLaunchArgs
            ]
        );
    }

    #[test]
    fn arch_patterns() {
        assert!(arch_matches("sm_12x", "sm_120"));
        assert!(arch_matches("sm_12x", "sm_121"));
        assert!(!arch_matches("sm_12x", "sm_100"));
        assert!(arch_matches("sm_90", "sm_90"));
    }
}
