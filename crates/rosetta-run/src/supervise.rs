//! The supervisor's loop: starts the launch command in its own process group
//! (stdin closed, stdout and stderr piped), copies every byte it writes to
//! the terminal unchanged and to the attempt's log, watches the lines for
//! milestones, readiness and the server's address, sends the probe, detects a
//! stall, forwards SIGINT / SIGTERM / SIGHUP to the whole group, and on the
//! way out makes sure nothing of the group is left: SIGTERM, then SIGKILL
//! after the grace period, every process reaped. What the attempt means is
//! the caller's business: this returns how it ended.

use crate::error::RunError;
use crate::group::{self, Group};
use crate::monitor::{Address, Monitor};
use crate::probe::{self, Progress};
use crate::status::{Size, StatusLine};
use rosetta_journal::{Outcome, ProbeResult};
use rosetta_schema::Phase;
use rustix::process::Signal;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The launch command, program first.
    pub command: Vec<String>,
    /// The log file kept with the attempt (created, or truncated).
    pub log_path: PathBuf,
    /// Send the probe request once the server is ready.
    pub probe: bool,
    /// How long the probe may take.
    pub probe_timeout: Duration,
    /// No output for this long before ready is a stall; `None` never.
    pub stall: Option<Duration>,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Stop the server once it is ready (and the probe, if asked, succeeded).
    pub stop_when_ready: bool,
    /// The address the launch command names, if the caller parsed one.
    pub command_address: Option<Address>,
    /// Environment variables to set for the child.
    pub env: Vec<(String, String)>,
}

/// Where the child's output goes, and the status line's terminal.
pub struct Terminal {
    /// The child's stdout goes here.
    pub stdout: Box<dyn Write + Send>,
    /// The child's stderr goes here.
    pub stderr: Box<dyn Write + Send>,
    /// The status line: where to draw it and the terminal's size now; `None` for no status line.
    pub status: Option<StatusTarget>,
}

/// The terminal the status line is drawn on.
pub struct StatusTarget {
    /// Its writer (the same terminal the child's output reaches).
    pub out: Box<dyn Write + Send>,
    /// Its size now (rows, columns); `None` when it cannot be read.
    pub size: Box<dyn Fn() -> Option<Size> + Send>,
}

/// What the caller hears while the launch runs.
#[derive(Debug, Clone)]
pub enum Event {
    /// The child started.
    Started {
        /// Its pid (and process group).
        pid: u32,
    },
    /// The server is ready (and the probe, if asked for, succeeded).
    Ready {
        /// The probe's result.
        probe: Option<ProbeResult>,
    },
}

/// How the launch ended.
#[derive(Debug, Clone)]
pub struct Ending {
    /// The outcome.
    pub outcome: Outcome,
    /// The child's exit code (128 + signal when a signal ended it), when it was reaped.
    pub exit_code: Option<i32>,
    /// The signal rosetta received (Ctrl-C, SIGTERM), when one was.
    pub interrupted_by: Option<i32>,
    /// rosetta stopped the server itself (a stall, a failed probe, `stop_when_ready`).
    pub stopped_by_rosetta: bool,
    /// SIGKILL was needed.
    pub killed: bool,
    /// Processes of the group still there at the end (in uninterruptible sleep, or gone to another group).
    pub leftover: bool,
    /// The probe's result.
    pub probe: Option<ProbeResult>,
    /// The phase of the last milestone.
    pub phase: Option<Phase>,
    /// The last status words (`weight load 31/81`).
    pub status: String,
    /// Time to ready.
    pub ready_after: Option<Duration>,
    /// Time in all.
    pub elapsed: Duration,
    /// For a stall: how long the output had been silent.
    pub silent_for: Option<Duration>,
    /// What rosetta did, for people (`SIGTERM to the group; SIGKILL after 10 s`).
    pub notes: Vec<String>,
}

enum Ev {
    Out(usize, Vec<u8>),
    Eof(usize),
    Signal(i32),
    Probe(ProbeResult),
    ProbeProgress(Progress),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ProbeState {
    Off,
    Waiting(Instant),
    Running,
    Done,
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        signal_hook::consts::SIGINT => "SIGINT",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Runs the launch to its end.
pub fn supervise(
    opts: &Options,
    mut term: Terminal,
    on_event: &mut dyn FnMut(&Event),
) -> Result<Ending, RunError> {
    let program = opts.command.first().ok_or(RunError::NoCommand)?;
    let log_err = |source| RunError::Log {
        path: opts.log_path.clone(),
        source,
    };
    let mut log = std::fs::File::create(&opts.log_path).map_err(log_err)?;
    let (tx, rx) = mpsc::channel::<Ev>();

    // Signals first, so that a Ctrl-C during the spawn is not lost.
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ])
    .map_err(RunError::Signals)?;
    let sig_handle = signals.handle();
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for s in signals.forever() {
                if tx.send(Ev::Signal(s)).is_err() {
                    break;
                }
            }
        });
    }
    let subreaper = group::become_subreaper();

    let mut cmd = Command::new(program);
    cmd.args(&opts.command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|source| {
        sig_handle.close();
        RunError::Spawn {
            program: program.clone(),
            source,
        }
    })?;
    let start = Instant::now();
    let pid = child.id();
    let Some(group) = Group::of_leader(pid) else {
        sig_handle.close();
        return Err(RunError::Spawn {
            program: program.clone(),
            source: std::io::Error::other("the child has no valid pid"),
        });
    };
    for (i, pipe) in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let tx = tx.clone();
        match pipe {
            Some(mut p) => {
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match p.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                if tx.send(Ev::Out(i, buf[..n].to_vec())).is_err() {
                                    return;
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                    let _ = tx.send(Ev::Eof(i));
                });
            }
            None => {
                let _ = tx.send(Ev::Eof(i));
            }
        }
    }
    on_event(&Event::Started { pid });

    let mut monitor = Monitor::new(opts.command_address.clone());
    let mut status: Option<StatusLine> = None;
    let mut terminal_ok = [true, true];
    let mut eof = [false, false];
    let mut child_code: Option<Option<i32>> = None;
    let mut outcome: Option<Outcome> = None;
    let mut ready_recorded = false;
    let mut ready_after = None;
    let mut probe_state = if opts.probe {
        ProbeState::Off
    } else {
        ProbeState::Done
    };
    let mut probe_result: Option<ProbeResult> = None;
    let mut probe_words = String::new();
    let mut probe_failed_at: Option<Instant> = None;
    let mut stopping: Option<Instant> = None;
    let mut stopped_by_rosetta = false;
    let mut sigkill_sent = false;
    let mut interrupted_by: Option<i32> = None;
    let mut silent_for = None;
    let mut last_output = Instant::now();
    let mut last_draw: Option<Instant> = None;
    let mut redraw = true;
    let mut group_gone_at: Option<Instant> = None;
    let mut notes: Vec<String> = Vec::new();
    if !subreaper {
        notes.push(
            "could not become the subreaper: processes the child orphans are reaped by init".into(),
        );
    }
    let grace = opts.grace;

    let stop = |sig: Signal, stopping: &mut Option<Instant>, notes: &mut Vec<String>, why: &str| {
        if stopping.is_none() {
            *stopping = Some(Instant::now());
            if group.signal(sig) {
                notes.push(format!(
                    "{why}: sent {} to the process group {}",
                    sig_label(sig),
                    group.id()
                ));
            }
        }
    };

    loop {
        let ev = rx.recv_timeout(Duration::from_millis(100));
        let now = Instant::now();
        match ev {
            Ok(Ev::Out(i, bytes)) => {
                let w: &mut dyn Write = if i == 0 {
                    &mut *term.stdout
                } else {
                    &mut *term.stderr
                };
                if terminal_ok[i] && (w.write_all(&bytes).is_err() || w.flush().is_err()) {
                    terminal_ok[i] = false;
                }
                log.write_all(&bytes).map_err(log_err)?;
                let seen = monitor.feed(i, &bytes);
                if seen.moved || seen.ready {
                    redraw = true;
                }
                last_output = now;
            }
            Ok(Ev::Eof(i)) => eof[i] = true,
            Ok(Ev::Signal(sig)) => {
                if interrupted_by.is_some() {
                    // A second signal: no more waiting.
                    group.signal(Signal::KILL);
                    sigkill_sent = true;
                    notes.push(format!(
                        "{} again: sent SIGKILL to the group",
                        signal_name(sig)
                    ));
                } else {
                    interrupted_by = Some(sig);
                    if !ready_recorded && outcome.is_none() {
                        outcome = Some(Outcome::Interrupted);
                    }
                    // Forwarded as received: the server shuts down as it would at a Ctrl-C.
                    let s = group::signal_from(sig);
                    if stopping.is_none() {
                        stopping = Some(now);
                        if group.signal(s) {
                            notes.push(format!(
                                "{} received: forwarded to the process group {}",
                                signal_name(sig),
                                group.id()
                            ));
                        }
                    } else {
                        group.signal(s);
                    }
                }
                redraw = true;
            }
            Ok(Ev::ProbeProgress(p)) => {
                last_output = now;
                probe_words = match p {
                    Progress::Sent => "probe: prefill".into(),
                    Progress::Tokens(n) => format!("probe: decode, {n} token(s)"),
                };
                redraw = true;
            }
            Ok(Ev::Probe(r)) => {
                probe_state = ProbeState::Done;
                if r.ok {
                    probe_words = format!(
                        "probe ok: {} token(s), first after {} ms",
                        r.tokens,
                        r.ttft_ms.unwrap_or(0)
                    );
                    if outcome.is_none() {
                        outcome = Some(Outcome::Ready);
                        ready_recorded = true;
                        on_event(&Event::Ready {
                            probe: Some(r.clone()),
                        });
                        if opts.stop_when_ready {
                            stopped_by_rosetta = true;
                            stop(Signal::TERM, &mut stopping, &mut notes, "ready");
                        }
                    }
                } else {
                    probe_words = format!(
                        "probe failed{}",
                        r.died_in.map(|p| format!(" in {p}")).unwrap_or_default()
                    );
                    if outcome.is_none() || outcome == Some(Outcome::Crashed) {
                        outcome = Some(Outcome::ProbeFailed);
                    }
                    probe_failed_at = Some(now);
                }
                probe_result = Some(r);
                redraw = true;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {}
        }

        for (p, code) in group.reap() {
            if p as u32 == pid {
                child_code = Some(code);
            }
        }

        // Ready: record it, or start the probe.
        if monitor.ready && ready_after.is_none() {
            ready_after = Some(start.elapsed());
            if stopping.is_none() && child_code.is_none() {
                if opts.probe {
                    probe_state = ProbeState::Waiting(now);
                } else if outcome.is_none() {
                    outcome = Some(Outcome::Ready);
                    ready_recorded = true;
                    on_event(&Event::Ready { probe: None });
                    if opts.stop_when_ready {
                        stopped_by_rosetta = true;
                        stop(Signal::TERM, &mut stopping, &mut notes, "ready");
                    }
                }
            }
        }
        if let ProbeState::Waiting(since) = probe_state {
            if stopping.is_some() || child_code.is_some() {
                probe_state = ProbeState::Done;
            } else if let Some((addr, _)) = monitor.address.clone() {
                probe_state = ProbeState::Running;
                let tx = tx.clone();
                let timeout = opts.probe_timeout;
                std::thread::spawn(move || {
                    let r = if probe::wait_listening(&addr, Duration::from_secs(60)) {
                        probe::probe(&addr, timeout, &mut |p| {
                            let _ = tx.send(Ev::ProbeProgress(p));
                        })
                    } else {
                        ProbeResult {
                            url: format!("{}/v1/chat/completions", addr.base_url()),
                            error: Some(format!(
                                "nothing accepts connections at {}:{} after the server said it was ready",
                                addr.host, addr.port
                            )),
                            died_in: Some(Phase::Prefill),
                            ..ProbeResult::default()
                        }
                    };
                    let _ = tx.send(Ev::Probe(r));
                });
                redraw = true;
            } else if now - since > Duration::from_secs(15) {
                let r = ProbeResult {
                    error: Some(
                        "the server announced no address and its args name none: nothing to probe"
                            .into(),
                    ),
                    ..ProbeResult::default()
                };
                probe_result = Some(r);
                probe_state = ProbeState::Done;
                outcome = Some(Outcome::ProbeFailed);
                stopped_by_rosetta = true;
                stop(
                    Signal::TERM,
                    &mut stopping,
                    &mut notes,
                    "no address to probe",
                );
            }
        }
        // A failed probe: let the server die by itself (its traceback reaches the log), then stop it.
        if let Some(t) = probe_failed_at {
            if child_code.is_none() && stopping.is_none() && now - t >= grace {
                stopped_by_rosetta = true;
                stop(
                    Signal::TERM,
                    &mut stopping,
                    &mut notes,
                    "probe failed, server still up",
                );
            }
        }
        // A stall: silent for too long before ready.
        if let Some(limit) = opts.stall {
            // Before ready every phase should progress; so should a probe request.
            let should_progress = !monitor.ready
                || matches!(probe_state, ProbeState::Waiting(_) | ProbeState::Running);
            if should_progress
                && stopping.is_none()
                && child_code.is_none()
                && now - last_output >= limit
            {
                outcome = Some(Outcome::Stalled);
                silent_for = Some(now - last_output);
                stopped_by_rosetta = true;
                stop(
                    Signal::TERM,
                    &mut stopping,
                    &mut notes,
                    &format!(
                        "stalled: no output for {} s in {}{}",
                        limit.as_secs(),
                        monitor.status(),
                        if probe_words.is_empty() {
                            String::new()
                        } else {
                            format!(" ({probe_words})")
                        }
                    ),
                );
            }
        }
        // The child exited by itself.
        if child_code.is_some() && stopping.is_none() {
            let code = child_code.flatten();
            match outcome {
                None => {
                    outcome = Some(if probe_state == ProbeState::Running {
                        Outcome::ProbeFailed
                    } else {
                        Outcome::Crashed
                    })
                }
                Some(Outcome::Ready) if code != Some(0) && interrupted_by.is_none() => {
                    outcome = Some(Outcome::Crashed)
                }
                _ => {}
            }
            // Whatever it started goes with it.
            stopping = Some(now);
            if group.signal(Signal::TERM) {
                notes.push(format!(
                    "the child exited; sent SIGTERM to what was left of its process group {}",
                    group.id()
                ));
            }
        }
        if let Some(t0) = stopping {
            if !sigkill_sent && now - t0 >= grace && group.alive() {
                group.signal(Signal::KILL);
                sigkill_sent = true;
                notes.push(format!(
                    "the group was still there {} s after the signal: sent SIGKILL",
                    grace.as_secs()
                ));
            }
        }

        // Status line.
        if let Some(target) = term.status.as_mut() {
            let due = last_draw.is_none_or(|t| now - t >= Duration::from_secs(1));
            if redraw || due {
                if let Some(size) = (target.size)() {
                    let mut text = format!("rosetta · {}", monitor.status());
                    if !probe_words.is_empty() {
                        text.push_str(&format!(" · {probe_words}"));
                    }
                    if stopping.is_some() {
                        text.push_str(" · stopping");
                    }
                    text.push_str(&format!(" · {}", clock(start.elapsed())));
                    let s = status.get_or_insert_with(|| StatusLine::new(size));
                    let _ = s.draw(&mut *target.out, size, &text);
                }
                last_draw = Some(now);
                redraw = false;
            }
        }

        // The end: the child reaped, the group empty, its output drained.
        if child_code.is_some() && stopping.is_some() {
            if group.alive() {
                group_gone_at = None;
                // SIGKILL sent long ago and still there: uninterruptible sleep or another group.
                if sigkill_sent && now - stopping.unwrap_or(now) >= grace + Duration::from_secs(5) {
                    notes.push(
                        "processes of the group survived SIGKILL (uninterruptible sleep?)".into(),
                    );
                    break;
                }
            } else {
                let gone = *group_gone_at.get_or_insert(now);
                let drained = eof[0] && eof[1];
                let probe_settled =
                    probe_state != ProbeState::Running || now - gone >= Duration::from_secs(3);
                if (drained || now - gone >= Duration::from_secs(2)) && probe_settled {
                    break;
                }
            }
        }
        // The child was not reaped but the group is empty (reaped elsewhere): do not spin forever.
        if child_code.is_none() && !group.alive() {
            child_code = Some(child.try_wait().ok().flatten().and_then(|s| s.code()));
        }
    }
    // Drain what is already queued (a last traceback line), without waiting.
    while let Ok(ev) = rx.try_recv() {
        match ev {
            Ev::Out(i, bytes) => {
                let w: &mut dyn Write = if i == 0 {
                    &mut *term.stdout
                } else {
                    &mut *term.stderr
                };
                if terminal_ok[i] {
                    let _ = w.write_all(&bytes);
                    let _ = w.flush();
                }
                log.write_all(&bytes).map_err(log_err)?;
                monitor.feed(i, &bytes);
            }
            Ev::Probe(r) => {
                if !r.ok
                    && outcome != Some(Outcome::Interrupted)
                    && outcome != Some(Outcome::Stalled)
                {
                    outcome = Some(Outcome::ProbeFailed);
                }
                probe_result = Some(r);
            }
            _ => {}
        }
    }
    sig_handle.close();
    if let (Some(s), Some(target)) = (status.as_mut(), term.status.as_mut()) {
        let _ = s.clear(&mut *target.out);
    }
    log.flush().map_err(log_err)?;
    if opts.probe && probe_result.is_none() && ready_after.is_some() {
        notes.push("the server was ready but stopped before the probe could run".into());
    }
    let leftover = group.alive();
    Ok(Ending {
        outcome: outcome.unwrap_or(Outcome::Crashed),
        exit_code: child_code.flatten(),
        interrupted_by,
        stopped_by_rosetta,
        killed: sigkill_sent,
        leftover,
        probe: probe_result,
        phase: monitor.phase,
        status: monitor.status(),
        ready_after,
        elapsed: start.elapsed(),
        silent_for,
        notes,
    })
}

fn sig_label(s: Signal) -> &'static str {
    if s == Signal::KILL {
        "SIGKILL"
    } else if s == Signal::INT {
        "SIGINT"
    } else if s == Signal::HUP {
        "SIGHUP"
    } else {
        "SIGTERM"
    }
}
