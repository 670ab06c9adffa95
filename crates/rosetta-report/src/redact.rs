//! `--redact`: tokens, keys, passwords, emails, home paths, IP addresses and
//! host names removed from every string of a report meant for sharing. Works
//! on the report, not on the log: what was never in the report cannot leak.
//!
//! Two passes over the whole report. Pass 1 learns the hosts it names, from
//! host contexts (URLs, `host:port`, NCCL line prefixes, `MASTER_ADDR=`,
//! `connect to X`, multi-node line prefixes, `user@X`) and from the shape of
//! dotted names (`hosts.rs`). Pass 2 rewrites every string: secrets and home
//! paths first, then each IP address and each learned host, wherever it occurs,
//! by an alias (`ip-1`, `host-1`) that is the same in every string of the report,
//! so that a multi-node story still reads. docs/redact.md says what stays.

mod hosts;

use crate::Report;
use regex::{Captures, Regex};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

/// What a string of the report holds, by the key it sits under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// Text from the log (messages, evidence, paths, labels, notes with captures).
    Log,
    /// Version strings: `9.1.0.70` is cuDNN, not an address.
    Version,
    /// Links and fixes from the knowledge base and the case library: public,
    /// checked for secrets only.
    Kb,
    /// Identifiers of the tool's own vocabulary (cause, class, rule ids).
    Fixed,
}

fn field(key: &str, parent: Field) -> Field {
    match key {
        "rosetta" | "rule" | "also_rules" | "case" | "cause" | "class" | "phase" | "reason"
        | "step" | "gpu_archs" => Field::Fixed,
        "references" | "source" | "fix" => Field::Kb,
        "versions" => Field::Version,
        _ => parent,
    }
}

fn walk(v: &mut Value, f: Field, each: &mut dyn FnMut(&mut String, Field)) {
    match v {
        Value::String(s) => each(s, f),
        Value::Array(a) => a.iter_mut().for_each(|x| walk(x, f, each)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| walk(x, field(k, f), each)),
        _ => {}
    }
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("redaction pattern compiles")
}

/// Secrets whose shape alone gives them away, and the key-value forms that name
/// one; each (pattern, replacement).
fn secret_rules() -> &'static [(Regex, &'static str)] {
    static R: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    R.get_or_init(|| {
        vec![
            // Authorization: Bearer xyz (the scheme word stays)
            (
                re(r#"(?i)\b(authorization['"]?\s*[:=]\s*['"]?)((?:bearer|basic|token|digest)\s+)?[^\s'",;}<]+"#),
                "${1}${2}<redacted>",
            ),
            (re(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), "${1}<redacted>"),
            // Known token shapes: Hugging Face, OpenAI, GitHub, GitLab, Slack, AWS, NVIDIA, PyPI, npm.
            (
                re(r"\b(?:hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|nvapi-[A-Za-z0-9_-]{20,}|pypi-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{20,})"),
                "<token>",
            ),
            // --api-key VALUE, --hf-token=VALUE
            (
                re(r#"(?i)(--(?:[a-z0-9]+-)*(?:api-key|token|password|passwd|secret|secret-key|access-key))(\s+|=)(['"]?)[^\s'"<-][^\s'"]*"#),
                "${1}${2}${3}<redacted>",
            ),
        ]
    })
}

/// `KEY=value` where the key names a secret (`HF_TOKEN`, `WANDB_API_KEY`,
/// `aws_secret_access_key`, `password`): the value goes when it looks like one.
fn secret_values(s: &str) -> String {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| {
        re(r#"(?i)\b((?:[a-z0-9]+[_-])*(?:api[_-]?key|access[_-]?key|secret(?:[_-]?(?:access[_-]?)?key)?|token|password|passwd|pwd|credentials?)['"]?\s*[:=]\s*['"]?)([^\s'",;})\]]+)"#)
    });
    r.replace_all(s, |c: &Captures| {
        let v = &c[2];
        let plain = ["none", "null", "true", "false", "***"]
            .iter()
            .any(|x| v.eq_ignore_ascii_case(x));
        if v.len() < 4 || v.starts_with('<') || plain {
            c[0].to_string()
        } else {
            format!("{}<redacted>", &c[1])
        }
    })
    .into_owned()
}

/// `scheme://user:password@host`: the user and the password go.
fn url_credentials(s: &str) -> String {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| re(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/@:<>]+)(?::([^\s/@]*))?@"));
    r.replace_all(s, |c: &Captures| match c.get(3) {
        Some(_) => format!("{}<user>:<redacted>@", &c[1]),
        None => format!("{}<user>@", &c[1]),
    })
    .into_owned()
}

fn email_and_home_rules() -> &'static [(Regex, &'static str)] {
    static R: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    R.get_or_init(|| {
        vec![
            (
                re(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
                "<email>",
            ),
            (
                re(r#"(/home|/Users|/export/home)/[^/\s'"`:<>]+"#),
                "$1/<user>",
            ),
            (re(r#"(?i)\b([a-z]:\\Users\\)[^\\\s'"<>]+"#), "${1}<user>"),
            (re(r"(^|[^\w.~/-])/root\b"), "${1}/<user>"),
        ]
    })
}

/// Secrets, credentials, emails and home paths: no report-wide knowledge needed.
fn secrets(s: &str) -> String {
    let mut out = url_credentials(s);
    for (r, rep) in secret_rules() {
        if r.is_match(&out) {
            out = r.replace_all(&out, *rep).into_owned();
        }
    }
    out = secret_values(&out);
    for (r, rep) in email_and_home_rules() {
        if r.is_match(&out) {
            out = r.replace_all(&out, *rep).into_owned();
        }
    }
    out
}

/// Consistent aliases: the same key gets the same alias everywhere.
struct Aliases {
    prefix: &'static str,
    map: HashMap<String, String>,
}

impl Aliases {
    fn new(prefix: &'static str) -> Self {
        Aliases {
            prefix,
            map: HashMap::new(),
        }
    }

    fn of(&mut self, key: &str) -> String {
        let n = self.map.len() + 1;
        let prefix = self.prefix;
        self.map
            .entry(key.to_ascii_lowercase())
            .or_insert_with(|| format!("{prefix}-{n}"))
            .clone()
    }
}

fn word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Loopback and unspecified addresses stay: they name no machine.
fn kept_ipv4(ip: &str) -> bool {
    ip.starts_with("127.") || ip == "0.0.0.0"
}

/// IPv4 addresses not written as a version (`==9.1.0.70`, `version 10.0.1.6`,
/// `1.2.3.4+cu121`).
fn ipv4s(s: &str) -> Vec<(usize, usize)> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| {
        re(r"\b(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\b")
    });
    let b = s.as_bytes();
    let mut out = Vec::new();
    for m in r.find_iter(s) {
        let (a, z) = (m.start(), m.end());
        if a > 0 && b[a - 1] == b'.' {
            continue;
        }
        if b.get(z) == Some(&b'.') && b.get(z + 1).is_some_and(u8::is_ascii_digit)
            || b.get(z) == Some(&b'+')
        {
            continue;
        }
        let head = &s[..a];
        let near = head
            .char_indices()
            .rev()
            .nth(23)
            .map_or(head, |(i, _)| &head[i..])
            .to_ascii_lowercase();
        let op = ["==", ">=", "<=", "~=", "!="]
            .iter()
            .any(|o| head.trim_end().ends_with(o));
        if op || near.contains("version") || kept_ipv4(m.as_str()) {
            continue;
        }
        out.push((a, z));
    }
    out
}

/// IPv6 addresses, full (`2001:db8:0:0:0:0:0:1`) or compressed (`fe80::1`,
/// `[2001:db8::7]:29500`); `::` and `::1` stay. A zone (`%eth0`) stays.
fn ipv6s(s: &str) -> Vec<(usize, usize)> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| re(r"[0-9A-Fa-f:]*:[0-9A-Fa-f:]*"));
    let b = s.as_bytes();
    let mut out = Vec::new();
    for m in r.find_iter(s) {
        let (a, z) = (m.start(), m.end());
        if a > 0 && (word_byte(b[a - 1]) || b[a - 1] == b'.') {
            continue;
        }
        if b.get(z).is_some_and(|c| word_byte(*c) || *c == b'.') {
            continue;
        }
        if valid_ipv6(m.as_str()) {
            out.push((a, z));
        }
    }
    out
}

fn valid_ipv6(t: &str) -> bool {
    let hex = |g: &str| !g.is_empty() && g.len() <= 4 && g.bytes().all(|c| c.is_ascii_hexdigit());
    let groups: Vec<&str> = match t.split_once("::") {
        Some((l, r)) => {
            if r.contains("::") {
                return false;
            }
            let l: Vec<&str> = if l.is_empty() {
                vec![]
            } else {
                l.split(':').collect()
            };
            let r: Vec<&str> = if r.is_empty() {
                vec![]
            } else {
                r.split(':').collect()
            };
            if l.len() + r.len() > 7 {
                return false;
            }
            l.into_iter().chain(r).collect()
        }
        None => {
            let g: Vec<&str> = t.split(':').collect();
            if g.len() != 8 {
                return false;
            }
            g
        }
    };
    let loopback = groups.len() <= 1 && groups.iter().all(|g| g.trim_start_matches('0') == "1");
    groups.iter().all(|g| hex(g))
        && !loopback
        && !groups.is_empty()
        && (groups.len() >= 3 || groups.iter().any(|g| g.bytes().any(|c| c.is_ascii_digit())))
}

/// A phase, failure class or cause of the schema: words of the report, not of the log.
fn vocabulary_word(w: &str) -> bool {
    use rosetta_schema::{Cause, FailureClass, Phase};
    Phase::ALL.iter().any(|p| p.as_str() == w)
        || FailureClass::ALL.iter().any(|c| c.as_str() == w)
        || Cause::ALL.iter().any(|c| c.as_str() == w)
}

/// The report-wide state: the hosts learned in pass 1 and the aliases given.
struct Redactor {
    hosts: Aliases,
    ips: Aliases,
    host_re: Option<Regex>,
    /// User names learned from home paths (`/home/alice`), removed wherever they appear
    /// on their own (`(user alice, ...)`).
    users: Vec<String>,
    user_re: Option<Regex>,
}

impl Redactor {
    fn new() -> Self {
        Redactor {
            hosts: Aliases::new("host"),
            ips: Aliases::new("ip"),
            host_re: None,
            users: Vec::new(),
            user_re: None,
        }
    }

    /// Pass 1, one string.
    fn learn(&mut self, s: &str) {
        static HOME: OnceLock<Regex> = OnceLock::new();
        let home = HOME.get_or_init(|| {
            re(r#"(?:/home|/Users|/export/home)/([^/\s'"`:<>]+)|(?i:\b[a-z]:\\Users\\)([^\\\s'"<>]+)"#)
        });
        for c in home.captures_iter(s) {
            let name = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
            if name.len() >= 3 && !name.starts_with('<') && !self.users.iter().any(|u| u == name) {
                self.users.push(name.to_string());
            }
        }
        let s = secrets(s);
        let mut found: Vec<String> = Vec::new();
        hosts::learn(&s, &mut |h| found.push(h.to_ascii_lowercase()));
        // Aliases follow the order in which the hosts appear.
        let low = s.to_ascii_lowercase();
        found.sort_by_key(|h| low.find(h.as_str()).unwrap_or(usize::MAX));
        // The tool's own words (`comm-init: comm-error` in a timeline label) are no hosts.
        found.retain(|h| !vocabulary_word(h));
        for h in found {
            self.hosts.of(&h);
        }
    }

    /// Between the passes: one pattern for every learned host, longest first
    /// (so that `dgx07.corp.example.com` goes whole before `dgx07` is tried).
    fn compile(&mut self) {
        if !self.users.is_empty() {
            let names: Vec<String> = self.users.iter().map(|u| regex::escape(u)).collect();
            self.user_re = Regex::new(&format!(r"(?i)\b(?:{})\b", names.join("|"))).ok();
        }
        let mut names: Vec<&String> = self.hosts.map.keys().collect();
        if names.is_empty() {
            return;
        }
        names.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let alt: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
        self.host_re = Some(re(&format!("(?i)(?:{})", alt.join("|"))));
    }

    /// Every IP address, aliased in the order they appear.
    fn replace_ips(&mut self, s: &str) -> String {
        let mut spans = ipv6s(s);
        for (a, z) in ipv4s(s) {
            if !spans.iter().any(|&(x, y)| a < y && x < z) {
                spans.push((a, z));
            }
        }
        if spans.is_empty() {
            return s.to_string();
        }
        spans.sort_unstable();
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for (a, z) in spans {
            out.push_str(&s[last..a]);
            out.push_str(&self.ips.of(&s[a..z]));
            last = z;
        }
        out.push_str(&s[last..]);
        out
    }

    /// Every learned host, word-bounded (a host is not part of a longer name:
    /// letters, digits and hyphens around it keep it).
    fn replace_hosts(&self, s: &str) -> String {
        let Some(r) = &self.host_re else {
            return s.to_string();
        };
        let b = s.as_bytes();
        let inner = |c: u8| c.is_ascii_alphanumeric() || c == b'-';
        let mut out = String::with_capacity(s.len());
        let (mut last, mut at) = (0, 0);
        while let Some(m) = r.find_at(s, at) {
            let free_before = m.start() == 0 || !inner(b[m.start() - 1]);
            let free_after = b.get(m.end()).is_none_or(|c| !inner(*c));
            if free_before && free_after {
                out.push_str(&s[last..m.start()]);
                match self.hosts.map.get(&m.as_str().to_ascii_lowercase()) {
                    Some(alias) => out.push_str(alias),
                    None => out.push_str(m.as_str()),
                }
                last = m.end();
                at = m.end();
            } else {
                at = m.start() + s[m.start()..].chars().next().map_or(1, char::len_utf8);
            }
            if at >= s.len() {
                break;
            }
        }
        out.push_str(&s[last..]);
        out
    }

    /// Pass 2, one string.
    fn rewrite(&mut self, s: &str, f: Field) -> String {
        let out = secrets(s);
        match f {
            Field::Fixed | Field::Kb => out,
            Field::Version => self.replace_hosts(&out),
            Field::Log => {
                let out = self.replace_ips(&out);
                let out = self.replace_hosts(&out);
                let out = match &self.user_re {
                    Some(r) => r.replace_all(&out, "<user>").into_owned(),
                    None => out,
                };
                user_at_alias(&out)
            }
        }
    }
}

/// `alice@host-1`, `bob@[ip-2]`: the user goes too once the host is an alias.
fn user_at_alias(s: &str) -> String {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| re(r"(^|[^\w.+<>-])[A-Za-z_][\w.-]{0,31}@((?:host|ip)-\d+\b|\[)"));
    r.replace_all(s, "${1}<user>@${2}").into_owned()
}

/// The public services kept by name, subdomains included (docs/redact.md).
pub fn public_services() -> &'static [&'static str] {
    hosts::PUBLIC_HOSTS
}

/// Redacts one string on its own (the hosts it names learned from it alone).
pub fn redact_str(s: &str) -> String {
    let mut r = Redactor::new();
    r.learn(s);
    r.compile();
    r.rewrite(s, Field::Log)
}

/// Redacts every string of a report: hosts learned anywhere in it are replaced
/// everywhere, each by the same alias.
pub fn redact(report: &Report) -> Report {
    let Ok(mut v) = serde_json::to_value(report) else {
        return withheld();
    };
    let mut r = Redactor::new();
    // Fleet logs are named after their host (`dgx07.log`): a file name shaped like a host
    // (with a digit, `dgx07`, `gpu-node-17`) is one, even when the log never names it.
    for input in &report.inputs {
        let name = input.path.rsplit(['/', '\\']).next().unwrap_or("");
        let stem = name.split('.').next().unwrap_or("");
        if stem.bytes().any(|b| b.is_ascii_digit())
            && hosts::hostish(stem)
            && !vocabulary_word(stem)
        {
            r.hosts.of(&stem.to_ascii_lowercase());
        }
    }
    walk(&mut v, Field::Log, &mut |s, f| {
        if f == Field::Log {
            r.learn(s);
        }
    });
    r.compile();
    walk(&mut v, Field::Log, &mut |s, f| {
        if f != Field::Fixed {
            *s = r.rewrite(s, f);
        }
    });
    serde_json::from_value(v).unwrap_or_else(|_| withheld())
}

/// What is shown if the report cannot be rewritten: nothing of the log.
fn withheld() -> Report {
    Report {
        rosetta: format!("rosetta {}", env!("CARGO_PKG_VERSION")),
        notes: vec!["--redact could not rewrite this report; it is withheld".into()],
        ..Report::default()
    }
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

    #[test]
    fn issue_12_hosts_become_whole_aliases() {
        let r = redact_str(
            "gpu17.prod.acme-ai.net a100-box.mycompany.io dgx07:29500 gpu-node-17.corp.example.com",
        );
        assert_eq!(r, "host-1 host-2 host-3:29500 host-4", "{r}");
        let r = redact_str("dgx07:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.7<0>");
        assert_eq!(
            r,
            "host-1:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:ip-1<0>"
        );
    }

    #[test]
    fn a_bare_name_goes_once_seen_as_a_host() {
        assert_eq!(redact_str("retrying dgx07 soon"), "retrying dgx07 soon");
        assert_eq!(
            redact_str("retrying dgx07 soon; MASTER_ADDR=dgx07; DGX07.log"),
            "retrying host-1 soon; MASTER_ADDR=host-1; host-1.log"
        );
        // Part of a longer name: not the host.
        assert_eq!(
            redact_str("dgx07:29500 dgx07-ib0 xdgx07"),
            "host-1:29500 dgx07-ib0 xdgx07"
        );
    }

    #[test]
    fn a_user_named_by_a_home_path_goes_everywhere() {
        let mut r = Redactor::new();
        let lines = [
            "File \"/home/alice/venv/lib/python3.11/site-packages/torch/x.py\", line 1",
            "DistNetworkError: timed out (user alice, pid 7)",
            r"C:\Users\bobby\AppData\ollama.exe failed for bobby",
        ];
        for l in lines {
            r.learn(l);
        }
        r.compile();
        let out: Vec<String> = lines.iter().map(|l| r.rewrite(l, Field::Log)).collect();
        let all = out.join("\n");
        assert!(!all.contains("alice") && !all.contains("bobby"), "{all}");
        assert!(all.contains("(user <user>, pid 7)"), "{all}");
    }

    #[test]
    fn not_hosts_stay() {
        for s in [
            "python -m torch.distributed.run --nproc-per-node 8",
            "loading model.safetensors and config.json",
            "CUDA 12.4.1, cuDNN version 9.1.0.70, nvidia-cudnn-cu12==9.1.0.70",
            "File \"scheduler.py\", line 2345, in event_loop_overlap",
            "c10::Error at ProcessGroupNCCL.cpp:1970 std::vector at::native::foo",
            "http://localhost:8000/v1 and 127.0.0.1:30000 and [::1]:29500 and 0.0.0.0",
            "device cuda:0 at 10:00:00.123 TP0 rank3 H100:80 sm_120",
            "out = self.net(x); logger.info(msg)",
            "see https://github.com/sgl-project/sglang/issues/1 and huggingface.co",
            "--max-tokens 1024 pad_token=<pad> max_new_tokens=512",
        ] {
            assert_eq!(redact_str(s), s);
        }
    }

    #[test]
    fn ips_v4_and_v6() {
        assert_eq!(
            redact_str("10.0.0.1 and [fe80::1%eth0]:29500, 2001:db8::7 and 10.0.0.1"),
            "ip-1 and [ip-2%eth0]:29500, ip-3 and ip-1"
        );
        assert_eq!(
            redact_str("peer 2001:0db8:85a3:0000:0000:8a2e:0370:7334 down"),
            "peer ip-1 down"
        );
        assert_eq!(redact_str("::ffff:10.9.8.7"), "::ffff:ip-1");
        assert_eq!(redact_str("aa:bb:cc:dd:ee:ff"), "aa:bb:cc:dd:ee:ff");
    }

    #[test]
    fn tokens_and_credentials() {
        for (s, want) in [
            (
                "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123",
                "HF_TOKEN=<token>",
            ),
            ("key sk-proj-abcdefghijklmnopqrstuvwxyz", "key <token>"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "<token>"),
            ("AKIAIOSFODNN7EXAMPLE", "<token>"),
            (
                "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG",
                "aws_secret_access_key=<redacted>",
            ),
            (
                "Authorization: Bearer abc.def.ghi-123",
                "Authorization: Bearer <redacted>",
            ),
            (
                "-H 'authorization: xyz12345'",
                "-H 'authorization: <redacted>'",
            ),
            (
                "--api-key mysecret123 --port 8000",
                "--api-key <redacted> --port 8000",
            ),
            (
                "WANDB_API_KEY: 0123456789abcdef",
                "WANDB_API_KEY: <redacted>",
            ),
        ] {
            assert_eq!(redact_str(s), want, "{s}");
        }
    }

    #[test]
    fn users_emails_homes_and_urls() {
        assert_eq!(
            redact_str("postgres://team:s3cret@db1.corp:5432/x"),
            "postgres://<user>:<redacted>@host-1:5432/x"
        );
        assert_eq!(redact_str("ssh alice@dgx09 ls"), "ssh <user>@host-1 ls");
        assert_eq!(redact_str("mail bob.smith@acme-ai.net"), "mail <email>");
        assert_eq!(
            redact_str("/home/alice/x /Users/bob/y /root/.cache C:\\Users\\carol\\z"),
            "/home/<user>/x /Users/<user>/y /<user>/.cache C:\\Users\\<user>\\z"
        );
    }

    #[test]
    fn a_file_named_after_its_host_and_the_tools_own_words() {
        // `dgx07.log` names a host the log never prints; a timeline label's phase
        // (`comm-init: comm-error`) is the tool's word, not a multi-node prefix.
        let mut rep = Report {
            notes: vec!["comm-init: comm-error ✗ (9) · graph-capture: gpu-oom ✗ (12)".into()],
            ..Report::default()
        };
        rep.inputs.push(crate::Input {
            path: "/logs/dgx07.log".into(),
            ..Default::default()
        });
        let r = redact(&rep);
        let all = serde_json::to_string(&r).unwrap();
        assert!(!all.contains("dgx07"), "{all}");
        assert_eq!(r.inputs[0].path, "/logs/host-1.log");
        assert_eq!(
            r.notes[0],
            "comm-init: comm-error ✗ (9) · graph-capture: gpu-oom ✗ (12)"
        );
    }

    #[test]
    fn one_alias_per_host_across_the_report() {
        let mut rep = Report {
            notes: vec!["rank 1 on dgx08 lost MASTER_ADDR=dgx07".into()],
            ..Report::default()
        };
        rep.inputs.push(crate::Input {
            path: "/logs/dgx07.log".into(),
            ..Default::default()
        });
        rep.warnings.push(crate::Warning {
            text: "dgx08:2234:5679 [1] NCCL WARN Connect to dgx07<45678> failed".into(),
            count: 1,
            ranks: vec![],
            line: 3,
            file: None,
            note: None,
        });
        let r = redact(&rep);
        let all = serde_json::to_string(&r).unwrap();
        assert!(!all.contains("dgx0"), "{all}");
        let a07 = if r.notes[0].ends_with("host-1") {
            "host-1"
        } else {
            "host-2"
        };
        assert_eq!(r.inputs[0].path, format!("/logs/{a07}.log"));
        assert!(
            r.warnings[0].text.contains(&format!("to {a07}<45678>")),
            "{all}"
        );
        assert!(!r.notes[0].contains(&format!("on {a07}")), "{all}");
    }

    #[test]
    fn knowledge_base_links_and_vocabulary_stay() {
        let mut rep = Report::default();
        rep.hypotheses.push(crate::Hypothesis {
            cause: rosetta_schema::Cause::CommSetup,
            rule: "nccl-network".into(),
            confidence: 1.0,
            summary: "Connection to dgx07:29500".into(),
            why: None,
            evidence: vec![],
            experiments: vec![],
            references: vec![
                "https://docs.nvidia.com/x".into(),
                "https://wiki.acme.net/nccl".into(),
            ],
            also_rules: vec![],
            cases: vec![],
        });
        let r = redact(&rep);
        assert_eq!(r.hypotheses[0].summary, "Connection to host-1:29500");
        assert_eq!(r.hypotheses[0].references, rep.hypotheses[0].references);
        assert_eq!(r.hypotheses[0].rule, "nccl-network");
    }
}
