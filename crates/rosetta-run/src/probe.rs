//! The probe: one short OpenAI-compatible chat request, streamed, to the
//! address the server itself announced (or its args give), never anywhere
//! else and never through a proxy. It asks for a few tokens, so the server
//! runs a prefill and then decode steps; it records the time to the first
//! token, how many came back, and, when the request fails, whether the server
//! died before the first token (prefill) or after it (decode).

use crate::monitor::Address;
use rosetta_journal::ProbeResult;
use rosetta_schema::Phase;
use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

/// The prompt of the origin story.
pub const PROMPT: &str = "Say hello in one sentence.";

/// How many tokens the probe asks for.
pub const MAX_TOKENS: u32 = 8;

fn agent(timeout: Duration) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_connect(Some(Duration::from_secs(5)))
        .timeout_global(Some(timeout))
        .user_agent(concat!("rosetta/", env!("CARGO_PKG_VERSION"), " (probe)"))
        .build();
    ureq::Agent::new_with_config(config)
}

/// Waits until something accepts TCP connections at `addr`, for at most `wait`.
pub fn wait_listening(addr: &Address, wait: Duration) -> bool {
    use std::net::ToSocketAddrs;
    let deadline = Instant::now() + wait;
    let host = addr.host.trim_matches(|c| c == '[' || c == ']');
    loop {
        let ok = (host, addr.port)
            .to_socket_addrs()
            .map(|mut it| {
                it.any(|sa| {
                    std::net::TcpStream::connect_timeout(&sa, Duration::from_millis(500)).is_ok()
                })
            })
            .unwrap_or(false);
        if ok {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The model name to send: the first id `/v1/models` lists, else `default`.
fn model_name(agent: &ureq::Agent, base: &str) -> String {
    let Ok(mut resp) = agent.get(&format!("{base}/v1/models")).call() else {
        return "default".into();
    };
    if resp.status() != 200 {
        return "default".into();
    }
    let mut body = String::new();
    if resp
        .body_mut()
        .as_reader()
        .take(1 << 20)
        .read_to_string(&mut body)
        .is_err()
    {
        return "default".into();
    }
    serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["data"][0]["id"].as_str().map(String::from))
        .unwrap_or_else(|| "default".into())
}

/// Progress the probe reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The request is sent.
    Sent,
    /// This many tokens have come back.
    Tokens(u32),
}

/// Sends the probe and reads the streamed answer.
pub fn probe(addr: &Address, timeout: Duration, progress: &mut dyn FnMut(Progress)) -> ProbeResult {
    let base = addr.base_url();
    let url = format!("{base}/v1/chat/completions");
    let mut out = ProbeResult {
        url: url.clone(),
        ..ProbeResult::default()
    };
    let agent = agent(timeout);
    let body = request_body(&model_name(&agent, &base));
    let start = Instant::now();
    progress(Progress::Sent);
    let resp = agent
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream")
        .send(body.as_str());
    let mut resp = match resp {
        Ok(r) => r,
        Err(e) => {
            out.died_in = Some(Phase::Prefill);
            out.error = Some(describe(&e));
            out.total_ms = Some(start.elapsed().as_millis() as u64);
            return out;
        }
    };
    let status = resp.status().as_u16();
    out.status = Some(status);
    let reader = resp.body_mut().as_reader();
    let mut lines = BufReader::new(reader.take(8 << 20));
    if status != 200 {
        let mut text = String::new();
        let _ = lines.read_to_string(&mut text);
        out.error = Some(format!(
            "HTTP {status}: {}",
            text.trim().chars().take(300).collect::<String>()
        ));
        out.died_in = Some(Phase::Prefill);
        out.total_ms = Some(start.elapsed().as_millis() as u64);
        return out;
    }
    let done = read_stream(&mut lines, start, &mut out, progress);
    out.total_ms = Some(start.elapsed().as_millis() as u64);
    settle(&mut out, done);
    out
}

/// The request: a short chat completion of [`PROMPT`] for `model`, streamed.
fn request_body(model: &str) -> String {
    serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "stream": true,
    })
    .to_string()
}

/// Reads the server-sent events of the answer into `out`; true when the answer finished.
fn read_stream(
    lines: &mut impl BufRead,
    start: Instant,
    out: &mut ProbeResult,
    progress: &mut dyn FnMut(Progress),
) -> bool {
    let mut done = false;
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                out.error = Some(format!("the stream broke: {e}"));
                break;
            }
        }
        let l = line.trim();
        let Some(data) = l.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
            continue;
        };
        if let Some(err) = v.get("error") {
            out.error = Some(format!(
                "the server sent an error: {}",
                err.get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or(&err.to_string())
            ));
            break;
        }
        if take_chunk(&v, start, out, progress) {
            done = true;
        }
    }
    done
}

/// Counts the token piece of one streamed chunk; true when the chunk names a finish reason.
fn take_chunk(
    v: &serde_json::Value,
    start: Instant,
    out: &mut ProbeResult,
    progress: &mut dyn FnMut(Progress),
) -> bool {
    let choice = &v["choices"][0];
    let piece = choice["delta"]["content"]
        .as_str()
        .or_else(|| choice["text"].as_str())
        .unwrap_or("");
    if !piece.is_empty() {
        if out.tokens == 0 {
            out.ttft_ms = Some(start.elapsed().as_millis() as u64);
        }
        out.tokens += 1;
        if out.text.len() < 400 {
            out.text.push_str(piece);
        }
        progress(Progress::Tokens(out.tokens));
    }
    choice["finish_reason"]
        .as_str()
        .is_some_and(|r| !r.is_empty())
}

/// Ok when the answer finished with tokens and no error; else the error and where the server died.
fn settle(out: &mut ProbeResult, done: bool) {
    if done && out.error.is_none() && out.tokens > 0 {
        out.ok = true;
    } else {
        if out.error.is_none() {
            out.error = Some(if out.tokens == 0 {
                "the stream ended without a token".into()
            } else {
                "the stream ended before the answer finished".into()
            });
        }
        out.died_in = Some(if out.tokens == 0 {
            Phase::Prefill
        } else {
            Phase::Decode
        });
    }
}

fn describe(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(t) => format!("no answer in time ({t})"),
        ureq::Error::Io(io) => format!("connection failed: {io}"),
        other => other.to_string(),
    }
}
