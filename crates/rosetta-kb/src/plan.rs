//! The memory plan rules may ask about: how much of a GPU an engine's memory
//! fraction leaves for activations and CUDA graphs, against the reserve the
//! engine's own default would keep (the engine's heuristic is data in
//! `kb/engines/`). Launch args come in through a getter so that log dumps and
//! typed command lines are read alike. It does not size weights or KV caches;
//! preflight does that.

use rosetta_launch::spec::FractionCovers;
use rosetta_launch::EngineSpec;

/// Room outside the memory fraction, against the engine's own reserve.
#[derive(Debug, Clone, PartialEq)]
pub struct Headroom {
    /// The canonical key of the fraction (`mem_fraction_static`).
    pub key: String,
    /// The fraction in force.
    pub fraction: f64,
    /// It was typed (else the engine's default).
    pub given: bool,
    /// GPU memory, MiB.
    pub gpu_mib: f64,
    /// Left outside the fraction, MiB.
    pub left_mib: f64,
    /// What the engine's default keeps outside it, MiB.
    pub reserve_mib: f64,
    /// The engine's default fraction.
    pub default_fraction: f64,
    /// The chunked prefill size and the largest CUDA-graph batch the reserve assumes.
    pub chunked_prefill_size: u64,
    /// The largest CUDA-graph batch size assumed.
    pub cuda_graph_max_bs: u64,
    /// Left is below the engine file's `risk_below` share of the reserve.
    pub short: bool,
}

fn gib(mib: f64) -> String {
    format!("{:.1} GiB", mib / 1024.0)
}

impl Headroom {
    /// One line of evidence.
    pub fn describe(&self) -> String {
        format!(
            "{}={} leaves {} of {} per GPU for activations and CUDA graphs; the engine's own default ({}) keeps {} (chunked prefill {}, graphs up to batch {})",
            self.key,
            self.fraction,
            gib(self.left_mib),
            gib(self.gpu_mib),
            self.default_fraction,
            gib(self.reserve_mib),
            self.chunked_prefill_size,
            self.cuda_graph_max_bs
        )
    }
}

/// The headroom of a launch on a GPU of `gpu_mib`, for an engine whose fraction
/// covers weights and KV only and whose default is known; `None` otherwise.
pub fn headroom(
    spec: &EngineSpec,
    gpu_mib: f64,
    arg: &dyn Fn(&str) -> Option<String>,
) -> Option<Headroom> {
    let mem = spec.memory.as_ref()?;
    if mem.fraction_covers != FractionCovers::WeightsAndKv {
        return None;
    }
    let d = mem.default_fraction.as_ref()?;
    let key = spec.roles.memory_fraction.clone()?;
    let num = |k: &str| arg(k).and_then(|v| v.trim().parse::<u64>().ok());
    let tp = num("tp_size").unwrap_or(1);
    let pp = num("pp_size").unwrap_or(1);
    let chunked = num("chunked_prefill_size").filter(|&c| c > 0);
    let graph_bs = num("cuda_graph_max_bs");
    let default = d.evaluate(gpu_mib, tp, pp, chunked, graph_bs)?;
    let given = arg(&key).and_then(|v| v.trim().parse::<f64>().ok());
    let fraction = given.unwrap_or(default.fraction);
    if !(0.0..=1.0).contains(&fraction) {
        return None;
    }
    let left = (1.0 - fraction) * gpu_mib;
    Some(Headroom {
        key,
        fraction,
        given: given.is_some(),
        gpu_mib,
        left_mib: left,
        reserve_mib: default.reserved_mib,
        default_fraction: default.fraction,
        chunked_prefill_size: default.chunked_prefill_size,
        cuda_graph_max_bs: default.cuda_graph_max_bs,
        short: left < default.reserved_mib * d.risk_below,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_story_fraction_is_short_and_the_default_is_not() {
        let sg = rosetta_launch::Engines::embedded().get("sglang").unwrap();
        let args = |f: &'static str| {
            move |k: &str| match k {
                "tp_size" => Some("8".to_string()),
                "mem_fraction_static" => Some(f.to_string()),
                _ => None,
            }
        };
        let h = headroom(sg, 98304.0, &args("0.95")).unwrap();
        assert!(h.short, "{}", h.describe());
        assert!(
            h.describe().contains("leaves 4.8 GiB of 96.0 GiB"),
            "{}",
            h.describe()
        );
        assert!(!headroom(sg, 98304.0, &args("0.85")).unwrap().short);
        // No fraction typed: the default is never short.
        let h = headroom(sg, 98304.0, &|k: &str| (k == "tp_size").then(|| "8".into())).unwrap();
        assert!(!h.short && !h.given);
        // vLLM's utilisation covers everything: not this check.
        let v = rosetta_launch::Engines::embedded().get("vllm").unwrap();
        assert!(headroom(v, 98304.0, &|_| None).is_none());
    }
}
