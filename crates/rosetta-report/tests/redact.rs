//! `--redact` against a corpus: host names (bare and fully qualified), IPv4 and
//! IPv6 addresses, tokens, bearer headers, emails, URL passwords and home paths,
//! embedded in log-like lines, spread over every part of a report and rendered
//! in every format. No input secret survives in any output; the same report
//! unredacted shows every one of them (so the check can fail).

use proptest::prelude::*;
use rosetta_report::{
    public_services, redact, redact_str, render_width, Evidence, Failure, Format, Hypothesis,
    OtherFailure, Report, Style, TimelineEntry, Warning,
};
use rosetta_schema::{Cause, FailureClass, Phase};

const FORMATS: [Format; 4] = [Format::Text, Format::Markdown, Format::Json, Format::Html];

/// One secret and the log lines that carry it.
#[derive(Debug, Clone)]
struct Item {
    secrets: Vec<String>,
    lines: Vec<String>,
}

fn pick(templates: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(templates)
}

/// A host appears once in a context that says it is a host, then anywhere.
const HOST_INTROS: &[&str] = &[
    "{h}:1234:5678 [0] NCCL INFO comm 0x55d rank 0 nranks 8 - Init COMPLETE",
    "init_method=tcp://{h}:29500 world_size=16",
    "MASTER_ADDR={h} MASTER_PORT=29500 torchrun --nnodes 2",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [{h}]:29500 (errno: 110 - Connection timed out).",
    "rendezvous at {h}:29400 failed",
    "curl http://{h}:8000/v1/completions",
    "--dist-init-addr {h}:5000 --nnodes 2",
];
const HOST_MENTIONS: &[&str] = &[
    "{h}: RuntimeError: CUDA error: an illegal memory access was encountered",
    "Connection to {h} timed out",
    "retrying {h} in 5 s",
    "[{h}] worker exited with code 1",
    "ssh admin@{h} nvidia-smi",
    "wrote /var/log/{h}.log",
    "Gloo connectFullMesh failed: peer {h} closed",
    "node {h} is rank 1 of 2",
];
const FQDN_ONLY: &[&str] = &["resolved {h} via DNS", "mirror {h} is slow"];
const IP4: &[&str] = &[
    "(RayWorkerWrapper pid=123, ip={ip}) INFO loaded",
    "NCCL WARN NET/Socket : Connect to {ip}<45678> failed",
    "--host {ip} --port 30000",
    "Connection closed by peer [{ip}]:52280",
    "bind {ip}:29500 and retry",
];
const IP6: &[&str] = &[
    "Connection closed by peer [{ip}]:52280",
    "socketStartConnect: Connect to {ip}%eth0<39281> failed",
    "listening on {ip} port 8000",
    "peer {ip} unreachable",
];
const TOKENS: &[&str] = &[
    "HF_TOKEN={t} python -m sglang.launch_server",
    "export OPENAI_API_KEY={t}",
    "using token {t} for the hub",
    "curl -H \"Authorization: Bearer {t}\" http://localhost:8000",
];
const BEARERS: &[&str] = &[
    "curl -H 'Authorization: Bearer {t}' http://localhost:8000",
    "header Bearer {t} rejected",
];
const EMAILS: &[&str] = &[
    "contact {e} for access",
    "git config user.email {e}",
    "Author: Someone <{e}>",
];
const HOMES: &[&str] = &[
    "File \"/home/{u}/venv/lib/python3.11/site-packages/torch/x.py\", line 12, in f",
    "cd /Users/{u}/work && ./run.sh",
    "loading /home/{u}/models/glm",
];

fn bare_host() -> impl Strategy<Value = String> {
    "(dgx|node|trn|box|srv|wrk)[0-9]{2,3}[a-z]{0,2}"
}

fn fqdn() -> impl Strategy<Value = String> {
    (
        "[a-z]{2,5}[0-9]{1,2}",
        proptest::collection::vec("[a-z][a-z0-9]{1,5}(-[a-z0-9]{1,3})?", 1..3),
        pick(&["com", "net", "org", "io", "ai", "internal", "corp", "co"]),
    )
        .prop_map(|(a, mid, tld)| format!("{a}.{}.{tld}", mid.join(".")))
        // A name under a public service (`cdn-lfs.hf.co`) says which service
        // failed, not where the user's machines are: kept on purpose.
        .prop_filter("not under a public service", |h| {
            !public_services()
                .iter()
                .any(|p| h.ends_with(&format!(".{p}")))
        })
}

#[test]
fn a_name_under_a_public_service_stays() {
    for p in public_services() {
        let line = format!("curl https://cdn-lfs.{p}/x failed; dgx07:1234:5678 [0] NCCL INFO x");
        let r = redact_str(&line);
        assert!(r.contains(&format!("cdn-lfs.{p}")), "{r}");
        assert!(!r.contains("dgx07"), "{r}");
    }
}

fn host_item(h: impl Strategy<Value = String>, fq: bool) -> impl Strategy<Value = Item> {
    let mentions: &'static [&'static str] = if fq { FQDN_ONLY } else { HOST_MENTIONS };
    (h, pick(HOST_INTROS), pick(HOST_MENTIONS), pick(mentions)).prop_map(|(h, a, b, c)| Item {
        lines: [a, b, c].iter().map(|t| t.replace("{h}", &h)).collect(),
        secrets: vec![h],
    })
}

fn ipv4() -> impl Strategy<Value = String> {
    (1u8..=223, any::<u8>(), any::<u8>(), 1u8..=254)
        .prop_filter("not loopback", |(a, ..)| *a != 127)
        .prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}"))
}

fn ipv6() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(1u16..=0xffff, 8).prop_map(|g| g
            .iter()
            .map(|x| format!("{x:x}"))
            .collect::<Vec<_>>()
            .join(":")),
        (1u16..=0xffff, 1u16..=0xffff).prop_map(|(a, b)| format!("fe80::{a:x}:{b:x}")),
        (1u16..=0xffff).prop_map(|a| format!("2001:db8::{a:x}")),
    ]
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        "hf_[A-Za-z0-9]{30,36}",
        "sk-(proj-)?[A-Za-z0-9]{40}",
        "ghp_[A-Za-z0-9]{36}",
        "AKIA[0-9A-Z]{16}",
    ]
}

fn items() -> impl Strategy<Value = Vec<Item>> {
    let one = prop_oneof![
        host_item(bare_host(), false),
        host_item(fqdn(), false),
        host_item(fqdn(), true),
        (ipv4(), pick(IP4)).prop_map(|(ip, t)| Item {
            lines: vec![t.replace("{ip}", &ip)],
            secrets: vec![ip],
        }),
        (ipv6(), pick(IP6)).prop_map(|(ip, t)| Item {
            lines: vec![t.replace("{ip}", &ip)],
            secrets: vec![ip],
        }),
        (token(), pick(TOKENS)).prop_map(|(t, l)| Item {
            lines: vec![l.replace("{t}", &t)],
            secrets: vec![t],
        }),
        ("[A-Za-z0-9]{24,40}", pick(BEARERS)).prop_map(|(t, l)| Item {
            lines: vec![l.replace("{t}", &t)],
            secrets: vec![t],
        }),
        (
            "[a-z]{3,8}\\.[a-z]{2,6}",
            "[a-z]{3,8}",
            pick(&["com", "io", "net", "ai"]),
            pick(EMAILS)
        )
            .prop_map(|(u, d, tld, l)| {
                let e = format!("{u}@{d}.{tld}");
                Item {
                    lines: vec![l.replace("{e}", &e)],
                    secrets: vec![e],
                }
            }),
        ("[a-z]{3,6}[0-9]{2}", pick(HOMES)).prop_map(|(u, l)| Item {
            lines: vec![l.replace("{u}", &u)],
            secrets: vec![format!("/{u}/")],
        }),
        ("[a-z]{4,8}", "[A-Za-z0-9]{10,14}", fqdn()).prop_map(|(u, pw, h)| Item {
            lines: vec![format!("journal at postgres://{u}:{pw}@{h}:5432/rosetta")],
            secrets: vec![pw, h, format!("{u}:")],
        }),
    ];
    proptest::collection::vec(one, 1..7)
}

fn hypothesis(cause: Cause) -> Hypothesis {
    Hypothesis {
        cause,
        rule: "some-rule".into(),
        confidence: 0.5,
        summary: "a summary".into(),
        why: None,
        evidence: vec![],
        experiments: vec![],
        references: vec!["https://github.com/NVIDIA/nccl/issues/1".into()],
        also_rules: vec![],
        cases: vec![],
    }
}

/// A report with the lines spread over its parts by `slots`.
fn report(lines: &[String], slots: &[u8]) -> Report {
    let mut r = Report {
        rosetta: "rosetta 0.1.0".into(),
        failure: Some(Failure {
            class: FailureClass::CommError,
            phase: Phase::CommInit,
            rank: Some(1),
            ranks: vec![1],
            line: 7,
            file: None,
            time: None,
            message: "NCCL error".into(),
            exception: None,
            surfaced: None,
            asynchronous: false,
            sync_point: None,
            phase_reason: "the error message names it".into(),
            frames: vec![],
        }),
        hypotheses: vec![hypothesis(Cause::CommSetup), hypothesis(Cause::DriverEnv)],
        ..Report::default()
    };
    // What every format shows of each part: three lines (one experiment, the
    // Markdown table's "try" column); a full part passes the line on.
    const ROOM: [usize; 7] = [3, 3, 3, 3, 3, 1, 3];
    let mut used = [0; 7];
    for (i, l) in lines.iter().enumerate() {
        let line = Some(10 + i as u64);
        let mut slot = usize::from(slots.get(i).copied().unwrap_or(0)) % 7;
        while used[slot] == ROOM[slot] {
            slot = (slot + 1) % 7;
        }
        used[slot] += 1;
        match slot {
            0 => r.hypotheses[0].evidence.push(Evidence {
                line,
                file: None,
                text: l.clone(),
            }),
            1 => r.hypotheses[1].evidence.push(Evidence {
                line,
                file: None,
                text: l.clone(),
            }),
            2 => r.notes.push(l.clone()),
            3 => r.timeline.push(TimelineEntry {
                phase: Phase::CommInit,
                line: 10 + i as u64,
                file: None,
                end_line: None,
                label: l.clone(),
                time: None,
                failed: false,
                runs: None,
            }),
            4 => r.warnings.push(Warning {
                text: l.clone(),
                count: 2,
                ranks: vec![0, 1],
                line: 10 + i as u64,
                file: None,
                note: None,
            }),
            5 => r.hypotheses[0].experiments.push(l.clone().into()),
            _ => r.other_inputs.push(OtherFailure {
                file: format!("node{i}.log"),
                class: FailureClass::CommError,
                phase: Phase::CommInit,
                line: 3,
                time: None,
                rank: None,
                message: l.clone(),
            }),
        }
    }
    if let (Some(f), Some(first)) = (r.failure.as_mut(), lines.first()) {
        f.message.clone_from(first);
    }
    r
}

fn rendered(r: &Report, format: Format) -> String {
    let mut out = Vec::new();
    let style = Style {
        color: false,
        top: 10,
    };
    render_width(r, format, style, 10_000, &mut out).expect("renders");
    String::from_utf8(out).expect("utf-8")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_secret_survives_in_any_format(
        items in items(),
        slots in proptest::collection::vec(any::<u8>(), 32),
    ) {
        let lines: Vec<String> = items.iter().flat_map(|i| i.lines.clone()).collect();
        let secrets: Vec<&String> = items.iter().flat_map(|i| &i.secrets).collect();
        let raw = report(&lines, &slots);
        let red = redact(&raw);
        for format in FORMATS {
            let plain = rendered(&raw, format).to_ascii_lowercase();
            let out = rendered(&red, format).to_ascii_lowercase();
            for s in &secrets {
                let s = s.to_ascii_lowercase();
                prop_assert!(plain.contains(&s), "{format:?} does not show {s} even unredacted");
                prop_assert!(!out.contains(&s), "{format:?} leaks {s}:\n{out}");
            }
        }
    }
}

#[test]
fn the_same_host_gets_the_same_alias_in_every_part() {
    let lines: Vec<String> = [
        "dgx07:1234:5678 [0] NCCL INFO Init COMPLETE",
        "dgx08: Connection to dgx07 timed out",
        "retrying dgx07 in 5 s",
        "MASTER_ADDR=gpu17.prod.acme-ai.net on dgx08",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let r = redact(&report(&lines, &[0, 2, 3, 4]));
    let f = &r.failure.as_ref().unwrap().message;
    assert_eq!(f, "host-1:1234:5678 [0] NCCL INFO Init COMPLETE");
    assert_eq!(r.notes, ["host-2: Connection to host-1 timed out"]);
    assert_eq!(r.timeline[0].label, "retrying host-1 in 5 s");
    assert_eq!(r.warnings[0].text, "MASTER_ADDR=host-3 on host-2");
}
