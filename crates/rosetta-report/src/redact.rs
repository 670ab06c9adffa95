//! `--redact`: tokens, keys, IPs, hostnames and home paths removed from
//! every string of a report meant for sharing. Works on the report, not on
//! the log: what was never in the report cannot leak.

use crate::model::Report;
use regex::Regex;
use std::sync::OnceLock;

fn rules() -> &'static [(Regex, &'static str)] {
    static R: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    R.get_or_init(|| {
        [
            (r"\b(?:hf|sk|ghp|gho|github_pat|xox[abp]|glpat|AKIA)[-_A-Za-z0-9]{16,}\b", "<token>"),
            (r#"(?i)\b((?:api[_-]?key|token|secret|password|passwd|authorization|bearer)['"]?\s*[:=]\s*['"]?)[^\s'",}]+"#, "${1}<redacted>"),
            (r"(?i)\bBearer\s+[A-Za-z0-9._\-]{8,}", "Bearer <redacted>"),
            (r"\b(?:\d{1,3}\.){3}\d{1,3}\b", "<ip>"),
            (r"\b(?:[0-9a-fA-F]{1,4}:){4,7}[0-9a-fA-F]{1,4}\b", "<ip>"),
            (r"(/home|/Users)/[^/\s'\x22]+", "$1/<user>"),
            (r"/root/", "/<user>/"),
            (r"(?i)\b(host(?:name)?\s*[:=]\s*)[A-Za-z0-9][\w.\-]*", "${1}<host>"),
            (r"\b(?:ip-\d+-\d+-\d+-\d+|[a-z0-9][a-z0-9-]*\.(?:internal|local|lan|corp|cluster\.local|compute\.amazonaws\.com))\b", "<host>"),
        ]
        .iter()
        .map(|(p, r)| (Regex::new(p).expect("redaction pattern compiles"), *r))
        .collect()
    })
}

/// Redacts one string.
pub fn redact_str(s: &str) -> String {
    let mut out = s.to_string();
    for (re, rep) in rules() {
        if re.is_match(&out) {
            out = re.replace_all(&out, *rep).into_owned();
        }
    }
    out
}

fn walk(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => *s = redact_str(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
        serde_json::Value::Object(o) => o.values_mut().for_each(walk),
        _ => {}
    }
}

/// Redacts every string of a report.
pub fn redact(report: &Report) -> Report {
    let Ok(mut v) = serde_json::to_value(report) else {
        return report.clone();
    };
    walk(&mut v);
    serde_json::from_value(v).unwrap_or_else(|_| report.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_ips_hosts_and_homes_go() {
        let s = "token=hf_abcdefghijklmnopqrstuvwx at 10.1.2.3 in /home/alice/models host: gpu-node-7.cluster.local";
        let r = redact_str(s);
        assert!(!r.contains("hf_abc"), "{r}");
        assert!(!r.contains("10.1.2.3"), "{r}");
        assert!(!r.contains("alice"), "{r}");
        assert!(!r.contains("gpu-node-7"), "{r}");
        assert_eq!(
            redact_str("CUDA error: device-side assert triggered"),
            "CUDA error: device-side assert triggered"
        );
    }
}
