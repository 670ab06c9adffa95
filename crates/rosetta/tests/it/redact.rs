//! `rosetta diagnose --redact` on a two-node log (issue 12, point 10): NCCL
//! line prefixes, `dgx07:29500`, fully qualified names, IPv4 and IPv6, a token,
//! an email and home paths are gone from every format, and each host keeps one
//! alias across the report so the multi-node story still reads.

use super::*;

const NODE7: &str = r#"dgx07: [2026-01-01 10:00:00] torchrun --nnodes 2 --rdzv_endpoint dgx07:29500 -m torch.distributed.run serve.py --model /home/alice/models/glm
dgx07: [2026-01-01 10:00:01] MASTER_ADDR=gpu17.prod.acme-ai.net MASTER_PORT=29500 HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123
dgx07: dgx07:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.7<0>
dgx07: dgx07:1234:5678 [0] NCCL WARN NET/Socket : Connect to gpu-node-17.corp.example.com<45678> failed : Connection refused
dgx07: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
dgx07: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
dgx07: Last error:
dgx07: socketStartConnect: Connect to [fe80::1a2b%eth0]:39281 failed : Connection refused; contact alice@acme-ai.net
"#;

const NODE8: &str = r#"dgx08: [2026-01-01 10:00:02] init_method=tcp://dgx07:29500 rank=1 world_size=2
dgx08: dgx08:2234:5679 [1] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.8<0>
dgx08: [W socket.cpp:663] [c10d] The client socket has failed to connect to [a100-box.mycompany.io]:29500 from 10.1.2.8 (errno: 110 - Connection timed out).
dgx08: Traceback (most recent call last):
dgx08:   File "/home/alice/venv/lib/python3.11/site-packages/torch/distributed/rendezvous.py", line 190, in _create_c10d_store
dgx08:     return TCPStore(host=hostname, port=port)
dgx08: torch.distributed.DistNetworkError: Connection to dgx07:29500 timed out after 1800 s (user alice, Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz012345)
"#;

/// Strings of the log that must not reach a shared report.
const SECRETS: &[&str] = &[
    "dgx07",
    "dgx08",
    "gpu17.prod.acme-ai.net",
    "a100-box.mycompany.io",
    "gpu-node-17.corp.example.com",
    "example.com",
    "10.1.2.7",
    "10.1.2.8",
    "fe80::1a2b",
    "alice",
    "acme-ai.net",
    "hf_abcdefghij",
    "sk-abcdefghij",
];

fn logs() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, text) in [("dgx07.log", NODE7), ("dgx08.log", NODE8)] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        paths.push(p.display().to_string());
    }
    (dir, paths)
}

fn diagnose(format: &str, redact: bool, paths: &[String]) -> String {
    let mut args = vec!["diagnose", "--format", format];
    if redact {
        args.push("--redact");
    }
    args.extend(paths.iter().map(String::as_str));
    let out = run(&args);
    assert!(
        out.status.success(),
        "{format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn redact_removes_every_host_ip_and_secret_in_every_format() {
    let (_dir, paths) = logs();
    // The report does carry them: without --redact they show.
    let plain = diagnose("json", false, &paths);
    for s in [
        "dgx07",
        "dgx08",
        "gpu-node-17.corp.example.com",
        "10.1.2.8",
        "fe80::1a2b",
        "alice",
    ] {
        assert!(
            plain.contains(s),
            "{s} is not in the report at all:\n{plain}"
        );
    }
    for format in ["text", "markdown", "json", "jsonl", "html"] {
        let out = diagnose(format, true, &paths).to_ascii_lowercase();
        for s in SECRETS {
            assert!(!out.contains(s), "{format} leaks {s}:\n{out}");
        }
        assert!(out.contains("host-1"), "{format}:\n{out}");
        assert!(
            out.contains("comm-error"),
            "{format}: the diagnosis stays:\n{out}"
        );
    }
    // One report per file: the `==> FILE <==` headers and `"file"` keys too.
    let mut args = vec!["diagnose", "--each", "--redact"];
    args.extend(paths.iter().map(String::as_str));
    let out = String::from_utf8(run(&args).stdout)
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        out.contains("==> ") && out.contains("host-1.log <=="),
        "{out}"
    );
    for s in SECRETS {
        assert!(!out.contains(s), "--each leaks {s}:\n{out}");
    }
}

#[test]
fn redact_keeps_one_alias_per_host() {
    let (_dir, paths) = logs();
    let v: serde_json::Value = serde_json::from_str(&diagnose("json", true, &paths)).unwrap();
    let f = &v["failure"];
    let file = f["file"].as_str().unwrap();
    let name = file.rsplit('/').next().unwrap();
    let alias = name.strip_suffix(".log").unwrap();
    assert!(alias.starts_with("host-"), "{file}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("{alias}: {alias}:1234:5678 [0] NCCL WARN")),
        "{msg}"
    );
    // The FQDN goes whole, never as `<host>.example.com`.
    assert!(
        msg.contains("Connect to host-") && !msg.contains(".com"),
        "{msg}"
    );
    let other = &v["other_inputs"][0];
    let alias8 = other["file"].as_str().unwrap().rsplit('/').next().unwrap();
    let alias8 = alias8.strip_suffix(".log").unwrap();
    assert_ne!(alias, alias8);
    assert!(
        other["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{alias8}: ")),
        "{other}"
    );
    // Not hosts: code locations and versions stay.
    let all = v.to_string();
    assert!(all.contains("ProcessGroupNCCL.cpp:1970"), "{all}");
    assert!(all.contains("NCCL version 2.21.5"), "{all}");
}
