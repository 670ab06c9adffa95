//! The memory plan per GPU: the weights (from safetensors headers, else the
//! config estimate) split over tp x pp, against the GPU's memory times the
//! engine's fraction (typed, else the engine's own default from
//! `kb/engines/`), and what that leaves for the KV cache and for activations
//! and CUDA graphs. Weights that do not fit are a blocker found here; a
//! fraction that leaves too little room is the knowledge base's rule
//! (`static-fraction-leaves-no-graph-room`), which reads the same plan.

use crate::error::Error;
use crate::weights;
use rosetta_env::model_config::ModelConfig;
use rosetta_kb::plan::Headroom;
use rosetta_launch::spec::FractionCovers;
use rosetta_launch::{EngineSpec, Engines, LaunchCommand};
use rosetta_report::{MemoryPlan, PreflightFinding, Severity, WeightsSource};
use rosetta_schema::Cause;
use std::path::Path;

const MIB: u64 = 1 << 20;
const GIB: f64 = (1u64 << 30) as f64;

fn gib(b: f64) -> String {
    format!("{:.1} GiB", b / GIB)
}

/// Builds the plan and adds the findings that follow from it.
pub fn plan(
    cfg: &ModelConfig,
    dir: Option<&Path>,
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    engines: &Engines,
    gpu_mib: Option<u64>,
    out: &mut Vec<PreflightFinding>,
) -> Result<Option<MemoryPlan>, Error> {
    let Some(mut plan) = weights_plan(cfg, dir, cmd, gpu_mib)? else {
        return Ok(None);
    };
    let (Some(gpu_mib), Some(mem)) = (gpu_mib, spec.memory.as_ref()) else {
        return Ok(Some(plan));
    };
    let gpu = (gpu_mib * MIB) as f64;
    let key = spec.roles.memory_fraction.clone();
    let args = cmd.args();
    let headroom = rosetta_kb::plan::headroom(spec, gpu_mib as f64, &|k| args.get(k).cloned());
    let typed = cmd.memory_fraction(engines);
    let (fraction, from) = match (typed, &headroom) {
        (Some(f), _) => (Some(f), "flag"),
        (None, Some(h)) => (Some(h.default_fraction), "engine default"),
        (None, None) => (cmd.memory_fraction_or_default(engines), "engine default"),
    };
    let Some(f) = fraction.filter(|f| (0.0..=1.0).contains(f)) else {
        return Ok(Some(plan));
    };
    let w = plan.weights_per_gpu_bytes as f64;
    let (budget, kv) = match mem.fraction_covers {
        FractionCovers::WeightsAndKv | FractionCovers::Everything => (f * gpu, f * gpu - w),
        FractionCovers::KvOfFree => (w + f * (gpu - w).max(0.0), f * (gpu - w)),
    };
    let b = Budget {
        spec,
        covers: mem.fraction_covers,
        key,
        fraction: f,
        from,
        gpu,
        weights: w,
        budget,
        kv,
    };
    b.fill(&mut plan, headroom.as_ref());
    out.extend(b.finding(&plan));
    Ok(Some(plan))
}

/// The plan as far as the weights go: their size (headers, else the config's estimate) split over tp x pp.
fn weights_plan(
    cfg: &ModelConfig,
    dir: Option<&Path>,
    cmd: &LaunchCommand,
    gpu_mib: Option<u64>,
) -> Result<Option<MemoryPlan>, Error> {
    let headers = match dir {
        Some(d) => weights::from_headers(d)?,
        None => None,
    };
    let mut notes = Vec::new();
    let (source, files, params, bytes) = match headers {
        Some(h) => (
            WeightsSource::SafetensorsHeaders,
            Some(h.files),
            Some(h.parameters),
            h.bytes,
        ),
        None => {
            match weights::estimate(cfg) {
                Some(e) => {
                    notes.push("no safetensors files beside the config: weights estimated from config.json".into());
                    notes.extend(e.notes);
                    (
                        WeightsSource::ConfigEstimate,
                        None,
                        Some(e.parameters),
                        e.bytes,
                    )
                }
                None => return Ok(None),
            }
        }
    };
    let n = cmd.gpus_per_replica().max(1);
    notes.push(format!("weights split evenly over tp x pp = {n}"));
    Ok(Some(MemoryPlan {
        weights_source: source,
        weight_files: files,
        parameters: params,
        weights_bytes: bytes,
        gpus_per_replica: n,
        weights_per_gpu_bytes: bytes / n,
        gpu_memory_bytes: gpu_mib.map(|m| m * MIB),
        fraction: None,
        fraction_key: None,
        fraction_from: None,
        fraction_covers: None,
        budget_bytes: None,
        kv_cache_bytes: None,
        activations_bytes: None,
        engine_reserve_bytes: None,
        engine_default_fraction: None,
        notes,
    }))
}

/// The memory per GPU under the engine's fraction: what it gives, and what is left for the KV cache.
struct Budget<'a> {
    spec: &'a EngineSpec,
    covers: FractionCovers,
    /// The canonical key of the fraction.
    key: Option<String>,
    fraction: f64,
    /// `flag` or `engine default`.
    from: &'static str,
    /// GPU memory, bytes.
    gpu: f64,
    /// Weights per GPU, bytes.
    weights: f64,
    budget: f64,
    kv: f64,
}

impl Budget<'_> {
    /// Writes the fraction, the budget and what it leaves into the plan.
    fn fill(&self, plan: &mut MemoryPlan, headroom: Option<&Headroom>) {
        let f = self.fraction;
        plan.fraction = Some(f);
        plan.fraction_key = self.key.clone();
        plan.fraction_from = Some(self.from.into());
        plan.fraction_covers = Some(
            match self.covers {
                FractionCovers::WeightsAndKv => "weights-and-kv",
                FractionCovers::Everything => "everything",
                FractionCovers::KvOfFree => "kv-of-free",
            }
            .into(),
        );
        plan.budget_bytes = Some(self.budget.max(0.0) as u64);
        plan.kv_cache_bytes = Some(self.kv as i64);
        if self.covers == FractionCovers::WeightsAndKv {
            plan.activations_bytes = Some(((1.0 - f) * self.gpu) as u64);
        }
        if self.covers == FractionCovers::Everything {
            plan.notes.push(format!(
                "{} covers everything {} allocates: activations and CUDA graphs come out of the KV share",
                self.key.as_deref().unwrap_or("the fraction"),
                self.spec.id
            ));
        }
        if let Some(h) = headroom {
            plan.engine_reserve_bytes = Some((h.reserve_mib * MIB as f64) as u64);
            plan.engine_default_fraction = Some(h.default_fraction);
        }
    }

    /// A blocker when the weights do not fit, else a risk when the KV cache is tiny; none when fine.
    fn finding(&self, plan: &MemoryPlan) -> Option<PreflightFinding> {
        let flag = self
            .key
            .as_deref()
            .map(|k| self.spec.spelling(k))
            .unwrap_or_default();
        let weights_src = match plan.weights_source {
            WeightsSource::SafetensorsHeaders => "safetensors headers",
            WeightsSource::ConfigEstimate => "estimated from config.json",
        };
        let over = match self.covers {
            FractionCovers::KvOfFree => self.weights > self.gpu,
            _ => self.kv <= 0.0,
        };
        if over {
            Some(self.weights_exceed_budget(plan, weights_src))
        } else if self.kv < 0.02 * self.gpu && !flag.is_empty() {
            Some(self.kv_cache_tiny(&flag, weights_src))
        } else {
            None
        }
    }

    /// The blocker: the weights' share per GPU does not fit in the budget.
    fn weights_exceed_budget(&self, plan: &MemoryPlan, weights_src: &str) -> PreflightFinding {
        let (f, gpu, w, bytes) = (self.fraction, self.gpu, self.weights, plan.weights_bytes);
        let n = plan.gpus_per_replica;
        let spec = self.spec;
        // The smallest tp x pp whose share fits in the budget with a tenth left for the KV cache.
        let cap = match self.covers {
            FractionCovers::KvOfFree => gpu,
            _ => f * gpu,
        } * 0.9;
        let need = if cap > 0.0 {
            (bytes as f64 / cap).ceil() as u64
        } else {
            0
        };
        let need = need.max(1).next_power_of_two();
        PreflightFinding {
            cause: Cause::MemoryBudget,
            severity: Severity::Blocker,
            rule: "memory:weights-exceed-budget".into(),
            message: format!(
                "the weights need {} per GPU but {} x {f} gives {} {}",
                gib(w),
                gib(gpu),
                gib(self.budget),
                if matches!(self.covers, FractionCovers::KvOfFree) { "of memory" } else { "for weights and KV cache" }
            ),
            evidence: vec![
                format!("weights {} over tp x pp = {n} ({weights_src})", gib(bytes as f64)),
                format!("GPU memory {}", gib(gpu)),
                format!("{}={f} ({})", self.key.clone().unwrap_or_default(), self.from),
            ],
            fix: Some(format!(
                "spread the weights over {need} GPUs ({} {need}), or use a smaller or more quantized checkpoint",
                spec.spelling("tp_size")
            )),
            crash: Some("gpu-oom in weight-load".into()),
            why: None,
            references: vec![],
        }
    }

    /// The risk: what the budget leaves for the KV cache is under 2% of the GPU.
    fn kv_cache_tiny(&self, flag: &str, weights_src: &str) -> PreflightFinding {
        let f = self.fraction;
        PreflightFinding {
            cause: Cause::MemoryBudget,
            severity: Severity::Risk,
            rule: "memory:kv-cache-tiny".into(),
            message: format!(
                "after the weights, {} is left for the KV cache per GPU: the engine may refuse to start or serve only short requests",
                gib(self.kv)
            ),
            evidence: vec![
                format!("weights {} per GPU ({weights_src})", gib(self.weights)),
                format!("budget {} = {} x {f}", gib(self.budget), gib(self.gpu)),
            ],
            fix: Some(format!("raise {flag} a little, or spread the weights over more GPUs")),
            crash: Some("gpu-oom in memory-plan".into()),
            why: None,
            references: vec![],
        }
    }
}
