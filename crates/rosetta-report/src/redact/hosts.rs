//! Which words of a report are hosts. Pass 1 of `--redact`: a name is a host
//! when a context says so (a URL, `host:port`, an NCCL line prefix, a
//! `MASTER_ADDR=` value, `connect to X`, a multi-node line prefix, `user@X`) or
//! when its shape does (a dotted name whose last label is a known top-level
//! domain). Pass 2 (in `redact.rs`) then replaces the learned names wherever
//! they occur. See docs/redact.md.

use regex::Regex;
use std::sync::OnceLock;

/// Top-level labels that make a dotted name a host on their own (`acme-ai.net`,
/// `a100-box.mycompany.io`, `ip-10-0-0-1.ec2.internal`).
const STRONG_TLDS: &[&str] = &[
    "com",
    "net",
    "org",
    "edu",
    "gov",
    "mil",
    "int",
    "io",
    "ai",
    "co",
    "biz",
    "us",
    "uk",
    "de",
    "fr",
    "nl",
    "se",
    "ch",
    "eu",
    "jp",
    "cn",
    "kr",
    "ru",
    "ca",
    "au",
    "br",
    "es",
    "it",
    "be",
    "dk",
    "fi",
    "il",
    "sg",
    "hk",
    "tw",
    "nz",
    "za",
    "ie",
    "cz",
    "internal",
    "lan",
    "corp",
    "intra",
    "localdomain",
];

/// Top-level labels that are also common words or file extensions
/// (`logger.info`, `subprocess.run`, `threading.local`, `self.app`): a host only
/// with three labels or more, one of them holding a digit or a hyphen
/// (`gpu-node-7.cluster.local`), or in a host context.
const WEAK_TLDS: &[&str] = &[
    "local", "cluster", "svc", "home", "host", "cloud", "dev", "app", "tech", "info", "run",
    "site", "online", "me", "tv", "xyz", "pl", "in", "at", "no",
];

/// Trailing labels that are file extensions: `config.json` is a file, and
/// `dgx07.log` is a file named after a host (the host part is kept as a
/// candidate).
const FILE_EXTS: &[&str] = &[
    "py",
    "pyc",
    "pyi",
    "pyx",
    "log",
    "txt",
    "json",
    "jsonl",
    "yaml",
    "yml",
    "toml",
    "cfg",
    "ini",
    "md",
    "rst",
    "sh",
    "bash",
    "c",
    "cc",
    "cpp",
    "cxx",
    "h",
    "hpp",
    "cu",
    "cuh",
    "so",
    "a",
    "o",
    "rs",
    "go",
    "js",
    "ts",
    "html",
    "htm",
    "css",
    "csv",
    "tsv",
    "gz",
    "zst",
    "bz2",
    "xz",
    "tar",
    "zip",
    "whl",
    "bin",
    "pt",
    "pth",
    "safetensors",
    "onnx",
    "engine",
    "plan",
    "npz",
    "npy",
    "pkl",
    "ckpt",
    "gguf",
    "ggml",
    "out",
    "err",
    "lock",
    "parquet",
    "arrow",
    "model",
    "tiktoken",
    "pid",
    "sock",
    "conf",
    "service",
];

/// First labels that make `x.net` a Python attribute, not a host.
const PY_RECEIVERS: &[&str] = &[
    "self", "cls", "super", "torch", "np", "nn", "os", "sys", "math", "json", "re", "logging",
    "logger", "log", "tf", "jax", "args", "config", "model", "module", "x", "y", "f", "m", "ctx",
    "req", "request", "response", "server", "client", "app", "engine", "worker", "obj",
];

/// Names a context may point at that are not hosts.
const NOT_HOSTS: &[&str] = &[
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "auto",
    "default",
    "unknown",
    "any",
    "all",
    "self",
    "args",
    "str",
    "int",
    "host",
    "hostname",
    "port",
    "addr",
    "address",
    "ip",
    "the",
    "a",
    "an",
    "server",
    "peer",
    "master",
    "store",
    "rank",
    "remote",
    "local",
    "env",
];

/// Public services named by their host, kept: they say which service failed
/// (`huggingface.co` unreachable), not where your machines are.
pub const PUBLIC_HOSTS: &[&str] = &[
    "github.com",
    "githubusercontent.com",
    "huggingface.co",
    "hf.co",
    "pypi.org",
    "pythonhosted.org",
    "pytorch.org",
    "nvidia.com",
    "docker.io",
    "docker.com",
    "nvcr.io",
    "ghcr.io",
    "vllm.ai",
    "sglang.ai",
    "python.org",
    "anaconda.org",
    "conda.io",
];

fn lower_in(list: &[&str], s: &str) -> bool {
    list.iter().any(|x| x.eq_ignore_ascii_case(s))
}

/// A name kept whatever the context: loopback, unspecified, public services.
pub fn kept(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    lower_in(NOT_HOSTS, &n)
        || PUBLIC_HOSTS
            .iter()
            .any(|p| n == *p || n.ends_with(&format!(".{p}")))
}

fn valid_label(l: &str) -> bool {
    !l.is_empty()
        && l.len() <= 63
        && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !l.starts_with('-')
        && !l.ends_with('-')
}

/// Syntactically a host name (labels of letters, digits and hyphens), not a
/// number, not an IPv4 address, not one of the names kept.
pub fn valid(name: &str) -> bool {
    name.len() >= 2
        && name.len() <= 253
        && name.split('.').all(valid_label)
        && name.bytes().any(|b| b.is_ascii_alphabetic())
        && !name
            .rsplit('.')
            .next()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
        && !kept(name)
}

/// Short names that are not hosts even next to a port or at a line start: GPU
/// models (`a100`, `h100`), ranks and parallel groups (`tp0`, `rank3`),
/// devices (`cuda0`, `gpu3`), network interfaces (`eth0`, `ib0`), CUDA arches.
fn stop_shaped(name: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r"(?i)^(?:(?:tp|dp|ep|pp|cp|sp|rank|gpu|cuda|cpu|xpu|npu|hpu|sm|compute|layer|step|epoch|iter|python|py|cu|eth|ib|en|lo|bond|docker|veth|virbr|mlx|nvme|sd|[a-z])\d+[-_]?)+$|^(?:fp|bf|int|uint|float|e\d?m)\d+",
        )
        .expect("stop pattern compiles")
    })
    .is_match(name)
}

/// A bare name given by a weaker context (`dgx07:29500`, `dgx07: ...`,
/// `Connection to dgx07`): it must look like a machine name, with a digit or a
/// hyphen, and not like a GPU, a rank or an interface.
pub fn hostish(name: &str) -> bool {
    valid(name) && name.bytes().any(|b| b.is_ascii_digit() || b == b'-') && !stop_shaped(name)
        || name.contains('.') && valid(name) && fqdn_shape(name, false)
}

/// A dotted name is a host by shape alone: its last label is a known top-level
/// domain (a weak one needs three labels and a digit or hyphen in one of them),
/// and a two-label name does not start like a Python receiver (`self.net`).
/// `call` says the name is followed by `(` (a Python call: `logger.info(`).
pub fn fqdn_shape(name: &str, call: bool) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 || !labels.iter().all(|l| valid_label(l)) {
        return false;
    }
    let last = labels[labels.len() - 1];
    if !last.bytes().all(|b| b.is_ascii_alphabetic()) || last.len() < 2 {
        return false;
    }
    if labels.len() == 2 && (call || lower_in(PY_RECEIVERS, labels[0])) {
        return false;
    }
    if lower_in(STRONG_TLDS, last) && !lower_in(WEAK_TLDS, last) {
        return true;
    }
    if lower_in(WEAK_TLDS, last) || lower_in(STRONG_TLDS, last) {
        return labels.len() >= 3
            && labels[..labels.len() - 1]
                .iter()
                .any(|l| l.bytes().any(|b| b.is_ascii_digit() || b == b'-'));
    }
    false
}

/// Host contexts: (pattern, strong). The host is capture group 1. A strong
/// context learns any valid name; a weak one only a `hostish` one.
fn contexts() -> &'static [(Regex, bool)] {
    static R: OnceLock<Vec<(Regex, bool)>> = OnceLock::new();
    R.get_or_init(|| {
        const NAME: &str = r"([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])";
        let keys = r"master[_-]?addr(?:ess)?|dist[_-]init[_-]addr(?:ess)?|rdzv[_-]endpoint|init[_-]addr|host(?:[_-]?name)?|node[_-]?name|node[_-]ip(?:[_-]address)?|coordinator[_-]address|server[_-]address|head[_-]node(?:[_-]address)?|slurmd?_nodename|ip";
        [
            // scheme://[user[:pass]@]host[:port]
            (format!(r"(?i)\b[a-z][a-z0-9+.-]*://(?:[^\s/@]*@)?{NAME}"), true),
            // MASTER_ADDR=host, "hostname": "host", rdzv_endpoint : host:port
            (format!(r#"(?i)\b(?:{keys})\b['"]?\s*[:=]\s*['"]?{NAME}"#), true),
            // --master-addr host, --host=host
            (format!(r#"(?i)--(?:{keys})(?:=|\s+)['"]?{NAME}"#), true),
            // NCCL: hostname:pid:tid [rank] NCCL INFO ...
            (r"(?:^|[\s\]>|])([A-Za-z0-9][A-Za-z0-9.-]*):\d+:\d+ \[\d+\]".to_string(), true),
            // torch c10d / Gloo: [host]:port
            (format!(r"\[{NAME}\]:\d{{1,5}}\b"), true),
            // OpenMPI: [host:pid]
            (format!(r"^\s*\[{NAME}:\d+\]"), false),
            // pdsh / deepspeed / mpirun: `dgx07: ...` at a line start; `[dgx07] ...`
            (format!(r"^\s*{NAME}:\s"), false),
            (format!(r"^\s*\[{NAME}\]\s"), false),
            // slurm: srun: error: dgx07: task 3: ...
            (format!(r"(?i)\b(?:srun|slurmstepd)(?::\s*error)?:\s+{NAME}:"), false),
            // Connection to X, connect to X, connected from X, peer X
            (format!(r#"(?i)\b(?:connect(?:ion|ed|ing)?(?:\s+(?:refused|closed|reset|timed out))?\s+(?:to|from|by|with)|peer)\s+\[?['"]?{NAME}"#), false),
            // Could not resolve host: X, failed to resolve 'X'
            (format!(r#"(?i)\bresolv(?:e|ing)(?:\s+host(?:name)?)?:?\s+['"]?{NAME}"#), false),
            // ssh user@host, user@host:~$
            (format!(r"(?:^|[^\w.+<-])[A-Za-z_][\w.-]*@{NAME}"), false),
        ]
        .into_iter()
        .map(|(p, strong)| (Regex::new(&p).expect("host context compiles"), strong))
        .collect()
    })
}

/// `name:port` with a port of 2 to 5 digits, not inside a path, a version, a
/// time, or a `file.py:123` reference.
fn host_ports(s: &str, found: &mut dyn FnMut(&str)) {
    static R: OnceLock<Regex> = OnceLock::new();
    let re = R.get_or_init(|| {
        Regex::new(r"([A-Za-z][A-Za-z0-9.-]*[A-Za-z0-9]):(\d{2,5})").expect("host:port compiles")
    });
    let b = s.as_bytes();
    for c in re.captures_iter(s) {
        let (m, port) = (c.get(1).expect("group 1"), c.get(2).expect("group 2"));
        let before = m.start().checked_sub(1).map(|i| b[i]);
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || b"_./:@-\\".contains(&c)) {
            continue;
        }
        let after = &b[port.end()..];
        if after
            .first()
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b':' || *c == b'_')
            || after.first() == Some(&b'.') && after.get(1).is_some_and(u8::is_ascii_digit)
        {
            continue;
        }
        if port.as_str().parse::<u32>().map_or(true, |p| p > 65535) {
            continue;
        }
        let name = m.as_str();
        let last = name.rsplit('.').next().unwrap_or(name);
        if name.contains('.') && lower_in(FILE_EXTS, last) {
            continue;
        }
        if hostish(name) {
            found(name);
        }
    }
}

/// Dotted names anywhere whose shape makes them hosts (`gpu17.prod.acme-ai.net`).
/// A trailing file extension is dropped first (`dgx07.corp.acme.com.log`).
fn shaped(s: &str, found: &mut dyn FnMut(&str)) {
    static R: OnceLock<Regex> = OnceLock::new();
    let re = R.get_or_init(|| Regex::new(r"[A-Za-z0-9_.-]+").expect("word run compiles"));
    let b = s.as_bytes();
    for m in re.find_iter(s) {
        let w = m.as_str().trim_end_matches(['.', '-']);
        if w.contains('_') || !w.contains('.') {
            continue;
        }
        // `@x.com` is an email's domain, handled as an email.
        if m.start() > 0 && b[m.start() - 1] == b'@' {
            continue;
        }
        let mut name = w.trim_start_matches(['.', '-']);
        if let Some((head, ext)) = name.rsplit_once('.') {
            if lower_in(FILE_EXTS, ext) {
                name = head;
            }
        }
        let end = m.start() + w.len();
        let call = b.get(end) == Some(&b'(');
        if fqdn_shape(name, call) && valid(name) {
            found(name);
        }
    }
}

/// Every host name the string names, by context or by shape.
pub fn learn(s: &str, found: &mut dyn FnMut(&str)) {
    for line in s.lines() {
        for (re, strong) in contexts() {
            for c in re.captures_iter(line) {
                let Some(m) = c.get(1) else { continue };
                let name = m.as_str().trim_end_matches(['.', '-']);
                let ok = if *strong { valid(name) } else { hostish(name) };
                if ok {
                    found(name);
                }
            }
        }
        host_ports(line, found);
        shaped(line, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        learn(s, &mut |h| {
            if !v.iter().any(|x: &String| x.eq_ignore_ascii_case(h)) {
                v.push(h.to_string());
            }
        });
        v
    }

    #[track_caller]
    fn fires(s: &str, host: &str) {
        let h = hosts(s);
        assert!(
            h.iter().any(|x| x == host),
            "{host} not learned from {s:?}: {h:?}"
        );
    }

    #[track_caller]
    fn quiet(s: &str) {
        assert_eq!(hosts(s), Vec::<String>::new(), "from {s:?}");
    }

    #[test]
    fn urls() {
        fires("init_method=tcp://dgx07:29500", "dgx07");
        fires("GET http://inference-gw/v1/models", "inference-gw");
        fires("postgres://u:p@db1.corp:5432/x", "db1.corp");
        quiet("see file:///tmp/x and http://localhost:8000/health");
        quiet("https://github.com/sgl-project/sglang/issues/1");
    }

    #[test]
    fn host_port() {
        fires("rdzv at dgx07:29500 failed", "dgx07");
        fires("gpu17.prod.acme-ai.net:29500", "gpu17.prod.acme-ai.net");
        quiet("File scheduler.py:2345 raised");
        quiet("at ProcessGroupNCCL.cpp:1970, unhandled system error");
        quiet("device cuda:0 and cuda:10; at 10:00:00; eth0:10.1.2.3<0>");
        quiet("H100:80 TP0:123 rank3:1234");
        quiet("/opt/x/lib:1234 and foo.bar.baz:12:34");
    }

    #[test]
    fn nccl_and_torch_distributed() {
        fires(
            "dgx07:1234:5678 [0] NCCL INFO Bootstrap : Using eth0",
            "dgx07",
        );
        fires("node1: node1:22:33 [3] NCCL WARN x", "node1");
        fires("MASTER_ADDR=trainer MASTER_PORT=29500", "trainer");
        fires("--master-addr gpu-a --master_port 1", "gpu-a");
        fires("rdzv_endpoint : head7:29400", "head7");
        fires(
            "failed to connect to [gpuhost]:29500 (errno: 110)",
            "gpuhost",
        );
        fires("Connection closed by peer [worker-3]:52280", "worker-3");
        fires(
            "Gloo connectFullMesh failed: Connection to dgx08 refused",
            "dgx08",
        );
        fires("ServerArgs(host='srv-a', port=30000)", "srv-a");
        quiet("ServerArgs(host='127.0.0.1', dist_init_addr=None, port=30000)");
        quiet("connect to the server; connection to master lost; connect to 10.0.0.1");
        quiet("[rank0]:[W socket.cpp:663] [c10d] The server socket on [::]:29500");
    }

    #[test]
    fn multi_node_prefixes() {
        fires("dgx07: [2026-01-01 10:00:00] INFO ready", "dgx07");
        fires("[gpu-node-1] RuntimeError: x", "gpu-node-1");
        fires("[dgx03:12345] *** Process received signal ***", "dgx03");
        fires(
            "srun: error: dgx12: task 3: Exited with exit code 1",
            "dgx12",
        );
        fires("ssh alice@dgx09 nvidia-smi", "dgx09");
        quiet("RuntimeError: CUDA error: an illegal memory access");
        quiet("INFO: Started server process [1]");
        quiet("[TP0] Load weight begin. [2026-01-01 10:00:00]");
        quiet("[INFO] x\nH100: 80GB\nsm90: no kernel\nTP3: decode");
        quiet("pip install torch@2.1 and sglang@main");
    }

    #[test]
    fn fqdn_shape_vs_python_and_files() {
        fires("resolved a100-box.mycompany.io", "a100-box.mycompany.io");
        fires(
            "on gpu-node-17.corp.example.com now",
            "gpu-node-17.corp.example.com",
        );
        fires("host ip-10-0-0-1.ec2.internal", "ip-10-0-0-1.ec2.internal");
        fires("x gpu-node-7.cluster.local y", "gpu-node-7.cluster.local");
        fires("wrote dgx07.prod.acme.com.log", "dgx07.prod.acme.com");
        fires("mirror acme-ai.net is down", "acme-ai.net");
        quiet("python -m torch.distributed.run --nproc 8 serve.py");
        quiet("sglang.srt.managers.scheduler and vllm.model_executor.layers");
        quiet("loading model.safetensors, config.json, tokenizer.model");
        quiet("CUDA 12.4.1 driver 550.54.15 torch 2.5.1+cu124");
        quiet("out = self.net(x); logger.info(msg); subprocess.run(cmd)");
        quiet("threading.local() and asyncio.run(main()) and Path.home()");
        quiet("transformers.models.llama4.modeling_llama4.forward");
        quiet("tf.io.gfile and torch.cuda.OutOfMemoryError");
        quiet("https://huggingface.co/zai-org/GLM-5 via cdn-lfs.huggingface.co");
    }

    #[test]
    fn shapes() {
        assert!(fqdn_shape("gpu17.prod.acme-ai.net", false));
        assert!(!fqdn_shape("torch.distributed.run", false));
        assert!(!fqdn_shape("self.net", false));
        assert!(!fqdn_shape("mirror.net", true));
        assert!(fqdn_shape("mirror.net", false));
        assert!(hostish("dgx07") && !hostish("a100") && !hostish("eth0") && !hostish("tp0"));
        assert!(!valid("localhost") && !valid("12.4") && !valid("huggingface.co"));
    }
}
