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
use signal_hook::iterator::Handle;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
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
    term: Terminal,
    on_event: &mut dyn FnMut(&Event),
) -> Result<Ending, RunError> {
    let program = opts.command.first().ok_or(RunError::NoCommand)?;
    let log = std::fs::File::create(&opts.log_path).map_err(|source| log_error(opts, source))?;
    let (tx, rx) = mpsc::channel::<Ev>();

    // Signals first, so that a Ctrl-C during the spawn is not lost.
    let sig_handle = listen_for_signals(&tx)?;
    let subreaper = group::become_subreaper();

    let mut child = spawn_child(opts, program).inspect_err(|_| sig_handle.close())?;
    let start = Instant::now();
    let pid = child.id();
    let Some(group) = Group::of_leader(pid) else {
        sig_handle.close();
        return Err(RunError::Spawn {
            program: program.clone(),
            source: std::io::Error::other("the child has no valid pid"),
        });
    };
    read_pipes(&mut child, &tx);
    on_event(&Event::Started { pid });

    let launch = Launch {
        child,
        pid,
        group,
        start,
    };
    let mut sup = Supervisor::new(opts, term, log, tx, launch, subreaper);
    sup.run(&rx, on_event)?;
    sup.drain(&rx)?;
    sig_handle.close();
    sup.finish()
}

/// The error for a failed write to (or creation of) the attempt's log.
fn log_error(opts: &Options, source: std::io::Error) -> RunError {
    RunError::Log {
        path: opts.log_path.clone(),
        source,
    }
}

/// Starts the thread that turns SIGINT, SIGTERM and SIGHUP into events; its handle closes it.
fn listen_for_signals(tx: &mpsc::Sender<Ev>) -> Result<Handle, RunError> {
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ])
    .map_err(RunError::Signals)?;
    let handle = signals.handle();
    let tx = tx.clone();
    std::thread::spawn(move || {
        for s in signals.forever() {
            if tx.send(Ev::Signal(s)).is_err() {
                break;
            }
        }
    });
    Ok(handle)
}

/// Spawns the launch command in its own process group, stdin closed, stdout and stderr piped.
fn spawn_child(opts: &Options, program: &str) -> Result<Child, RunError> {
    let mut cmd = Command::new(program);
    cmd.args(&opts.command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
    cmd.spawn().map_err(|source| RunError::Spawn {
        program: program.to_owned(),
        source,
    })
}

/// Starts one reader thread per pipe of the child (0 stdout, 1 stderr); a missing pipe is at its end.
fn read_pipes(child: &mut Child, tx: &mpsc::Sender<Ev>) {
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
            Some(p) => {
                std::thread::spawn(move || read_pipe(i, p, tx));
            }
            None => {
                let _ = tx.send(Ev::Eof(i));
            }
        }
    }
}

/// Sends what stream `i` yields as events, then its end (nothing more once the loop is gone).
fn read_pipe(i: usize, mut p: Box<dyn Read + Send>, tx: mpsc::Sender<Ev>) {
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
}

/// Starts the probe thread for `addr`: it waits for the port, sends the request and reports on `tx`.
fn spawn_probe(tx: mpsc::Sender<Ev>, addr: Address, timeout: Duration) {
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
}

/// The started child: its handle, pid, process group and start time.
struct Launch {
    child: Child,
    pid: u32,
    group: Group,
    start: Instant,
}

/// The supervisor's state between turns of its loop.
struct Supervisor<'a> {
    opts: &'a Options,
    term: Terminal,
    log: std::fs::File,
    tx: mpsc::Sender<Ev>,
    child: Child,
    pid: u32,
    group: Group,
    start: Instant,
    monitor: Monitor,
    status: Option<StatusLine>,
    terminal_ok: [bool; 2],
    eof: [bool; 2],
    child_code: Option<Option<i32>>,
    outcome: Option<Outcome>,
    ready_recorded: bool,
    ready_after: Option<Duration>,
    probe_state: ProbeState,
    probe_result: Option<ProbeResult>,
    probe_words: String,
    probe_failed_at: Option<Instant>,
    stopping: Option<Instant>,
    stopped_by_rosetta: bool,
    sigkill_sent: bool,
    interrupted_by: Option<i32>,
    silent_for: Option<Duration>,
    last_output: Instant,
    last_draw: Option<Instant>,
    redraw: bool,
    group_gone_at: Option<Instant>,
    notes: Vec<String>,
}

impl<'a> Supervisor<'a> {
    /// The state at the start of the loop.
    fn new(
        opts: &'a Options,
        term: Terminal,
        log: std::fs::File,
        tx: mpsc::Sender<Ev>,
        launch: Launch,
        subreaper: bool,
    ) -> Self {
        let mut notes: Vec<String> = Vec::new();
        if !subreaper {
            notes.push(
                "could not become the subreaper: processes the child orphans are reaped by init"
                    .into(),
            );
        }
        Supervisor {
            opts,
            term,
            log,
            tx,
            child: launch.child,
            pid: launch.pid,
            group: launch.group,
            start: launch.start,
            monitor: Monitor::new(opts.command_address.clone()),
            status: None,
            terminal_ok: [true, true],
            eof: [false, false],
            child_code: None,
            outcome: None,
            ready_recorded: false,
            ready_after: None,
            probe_state: if opts.probe {
                ProbeState::Off
            } else {
                ProbeState::Done
            },
            probe_result: None,
            probe_words: String::new(),
            probe_failed_at: None,
            stopping: None,
            stopped_by_rosetta: false,
            sigkill_sent: false,
            interrupted_by: None,
            silent_for: None,
            last_output: Instant::now(),
            last_draw: None,
            redraw: true,
            group_gone_at: None,
            notes,
        }
    }

    /// The loop: one event (or 100 ms), then every check, until the child and its group are gone.
    fn run(
        &mut self,
        rx: &mpsc::Receiver<Ev>,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<(), RunError> {
        loop {
            let ev = rx.recv_timeout(Duration::from_millis(100));
            let now = Instant::now();
            if let Ok(ev) = ev {
                self.handle(ev, now, on_event)?;
            }
            for (p, code) in self.group.reap() {
                if p as u32 == self.pid {
                    self.child_code = Some(code);
                }
            }
            self.on_ready(now, on_event);
            self.advance_probe(now);
            self.stop_after_failed_probe(now);
            self.watch_for_stall(now);
            self.on_child_exit(now);
            self.escalate_to_sigkill(now);
            self.draw_status(now);
            if self.ended(now) {
                return Ok(());
            }
            // The child was not reaped but the group is empty (reaped elsewhere): do not spin forever.
            if self.child_code.is_none() && !self.group.alive() {
                self.child_code = Some(self.child.try_wait().ok().flatten().and_then(|s| s.code()));
            }
        }
    }

    /// Takes in one event of the loop.
    fn handle(
        &mut self,
        ev: Ev,
        now: Instant,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<(), RunError> {
        match ev {
            Ev::Out(i, bytes) => self.on_output(i, &bytes, now)?,
            Ev::Eof(i) => self.eof[i] = true,
            Ev::Signal(sig) => self.on_signal(sig, now),
            Ev::ProbeProgress(p) => {
                self.last_output = now;
                self.probe_words = match p {
                    Progress::Sent => "probe: prefill".into(),
                    Progress::Tokens(n) => format!("probe: decode, {n} token(s)"),
                };
                self.redraw = true;
            }
            Ev::Probe(r) => self.on_probe_result(r, now, on_event),
        }
        Ok(())
    }

    /// The writer of stream `i` on the terminal (0 stdout, otherwise stderr).
    fn terminal(&mut self, i: usize) -> &mut dyn Write {
        if i == 0 {
            &mut *self.term.stdout
        } else {
            &mut *self.term.stderr
        }
    }

    /// Copies output to the terminal (until it fails) and to the log, and feeds it to the monitor.
    fn on_output(&mut self, i: usize, bytes: &[u8], now: Instant) -> Result<(), RunError> {
        let ok = self.terminal_ok[i];
        let w = self.terminal(i);
        if ok && (w.write_all(bytes).is_err() || w.flush().is_err()) {
            self.terminal_ok[i] = false;
        }
        self.log
            .write_all(bytes)
            .map_err(|source| log_error(self.opts, source))?;
        let seen = self.monitor.feed(i, bytes);
        if seen.moved || seen.ready {
            self.redraw = true;
        }
        self.last_output = now;
        Ok(())
    }

    /// A signal rosetta received: forwarded to the group; a second one sends SIGKILL.
    fn on_signal(&mut self, sig: i32, now: Instant) {
        if self.interrupted_by.is_some() {
            // A second signal: no more waiting.
            self.group.signal(Signal::KILL);
            self.sigkill_sent = true;
            self.notes.push(format!(
                "{} again: sent SIGKILL to the group",
                signal_name(sig)
            ));
        } else {
            self.interrupted_by = Some(sig);
            if !self.ready_recorded && self.outcome.is_none() {
                self.outcome = Some(Outcome::Interrupted);
            }
            // Forwarded as received: the server shuts down as it would at a Ctrl-C.
            let s = group::signal_from(sig);
            if self.stopping.is_none() {
                self.stopping = Some(now);
                if self.group.signal(s) {
                    self.notes.push(format!(
                        "{} received: forwarded to the process group {}",
                        signal_name(sig),
                        self.group.id()
                    ));
                }
            } else {
                self.group.signal(s);
            }
        }
        self.redraw = true;
    }

    /// The probe's result: ready when it succeeded, a failed probe (and its time) when not.
    fn on_probe_result(&mut self, r: ProbeResult, now: Instant, on_event: &mut dyn FnMut(&Event)) {
        self.probe_state = ProbeState::Done;
        if r.ok {
            self.probe_words = format!(
                "probe ok: {} token(s), first after {} ms",
                r.tokens,
                r.ttft_ms.unwrap_or(0)
            );
            if self.outcome.is_none() {
                self.record_ready(Some(r.clone()), on_event);
            }
        } else {
            self.probe_words = format!(
                "probe failed{}",
                r.died_in.map(|p| format!(" in {p}")).unwrap_or_default()
            );
            if self.outcome.is_none() || self.outcome == Some(Outcome::Crashed) {
                self.outcome = Some(Outcome::ProbeFailed);
            }
            self.probe_failed_at = Some(now);
        }
        self.probe_result = Some(r);
        self.redraw = true;
    }

    /// Records the outcome ready, tells the caller, and stops the server if asked to.
    fn record_ready(&mut self, probe: Option<ProbeResult>, on_event: &mut dyn FnMut(&Event)) {
        self.outcome = Some(Outcome::Ready);
        self.ready_recorded = true;
        on_event(&Event::Ready { probe });
        if self.opts.stop_when_ready {
            self.stopped_by_rosetta = true;
            self.stop(Signal::TERM, "ready");
        }
    }

    /// Sends `sig` to the group and notes why, unless it is already being stopped.
    fn stop(&mut self, sig: Signal, why: &str) {
        if self.stopping.is_none() {
            self.stopping = Some(Instant::now());
            if self.group.signal(sig) {
                self.notes.push(format!(
                    "{why}: sent {} to the process group {}",
                    sig_label(sig),
                    self.group.id()
                ));
            }
        }
    }

    /// Ready seen for the first time: record it, or have the probe wait for an address.
    fn on_ready(&mut self, now: Instant, on_event: &mut dyn FnMut(&Event)) {
        if self.monitor.ready && self.ready_after.is_none() {
            self.ready_after = Some(self.start.elapsed());
            if self.stopping.is_none() && self.child_code.is_none() {
                if self.opts.probe {
                    self.probe_state = ProbeState::Waiting(now);
                } else if self.outcome.is_none() {
                    self.record_ready(None, on_event);
                }
            }
        }
    }

    /// A waiting probe: started once there is an address, failed after 15 s without one.
    fn advance_probe(&mut self, now: Instant) {
        let ProbeState::Waiting(since) = self.probe_state else {
            return;
        };
        if self.stopping.is_some() || self.child_code.is_some() {
            self.probe_state = ProbeState::Done;
        } else if let Some((addr, _)) = self.monitor.address.clone() {
            self.probe_state = ProbeState::Running;
            spawn_probe(self.tx.clone(), addr, self.opts.probe_timeout);
            self.redraw = true;
        } else if now - since > Duration::from_secs(15) {
            let r = ProbeResult {
                error: Some(
                    "the server announced no address and its args name none: nothing to probe"
                        .into(),
                ),
                ..ProbeResult::default()
            };
            self.probe_result = Some(r);
            self.probe_state = ProbeState::Done;
            self.outcome = Some(Outcome::ProbeFailed);
            self.stopped_by_rosetta = true;
            self.stop(Signal::TERM, "no address to probe");
        }
    }

    /// A failed probe: let the server die by itself (its traceback reaches the log), then stop it.
    fn stop_after_failed_probe(&mut self, now: Instant) {
        if let Some(t) = self.probe_failed_at {
            if self.child_code.is_none() && self.stopping.is_none() && now - t >= self.opts.grace {
                self.stopped_by_rosetta = true;
                self.stop(Signal::TERM, "probe failed, server still up");
            }
        }
    }

    /// A stall: silent for too long before ready (or during the probe); the server is stopped.
    fn watch_for_stall(&mut self, now: Instant) {
        let Some(limit) = self.opts.stall else {
            return;
        };
        // Before ready every phase should progress; so should a probe request.
        let should_progress = !self.monitor.ready
            || matches!(
                self.probe_state,
                ProbeState::Waiting(_) | ProbeState::Running
            );
        if should_progress
            && self.stopping.is_none()
            && self.child_code.is_none()
            && now - self.last_output >= limit
        {
            self.outcome = Some(Outcome::Stalled);
            self.silent_for = Some(now - self.last_output);
            self.stopped_by_rosetta = true;
            let why = format!(
                "stalled: no output for {} s in {}{}",
                limit.as_secs(),
                self.monitor.status(),
                if self.probe_words.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", self.probe_words)
                }
            );
            self.stop(Signal::TERM, &why);
        }
    }

    /// The child exited by itself: settle the outcome and stop whatever it started.
    fn on_child_exit(&mut self, now: Instant) {
        if self.child_code.is_none() || self.stopping.is_some() {
            return;
        }
        let code = self.child_code.flatten();
        match self.outcome {
            None => {
                self.outcome = Some(if self.probe_state == ProbeState::Running {
                    Outcome::ProbeFailed
                } else {
                    Outcome::Crashed
                })
            }
            Some(Outcome::Ready) if code != Some(0) && self.interrupted_by.is_none() => {
                self.outcome = Some(Outcome::Crashed)
            }
            _ => {}
        }
        // Whatever it started goes with it.
        self.stopping = Some(now);
        if self.group.signal(Signal::TERM) {
            self.notes.push(format!(
                "the child exited; sent SIGTERM to what was left of its process group {}",
                self.group.id()
            ));
        }
    }

    /// Sends SIGKILL when the group is still there a grace period after it was signalled.
    fn escalate_to_sigkill(&mut self, now: Instant) {
        if let Some(t0) = self.stopping {
            let grace = self.opts.grace;
            if !self.sigkill_sent && now - t0 >= grace && self.group.alive() {
                self.group.signal(Signal::KILL);
                self.sigkill_sent = true;
                self.notes.push(format!(
                    "the group was still there {} s after the signal: sent SIGKILL",
                    grace.as_secs()
                ));
            }
        }
    }

    /// Redraws the status line when something moved, or once a second.
    fn draw_status(&mut self, now: Instant) {
        let Some(target) = self.term.status.as_mut() else {
            return;
        };
        let due = self
            .last_draw
            .is_none_or(|t| now - t >= Duration::from_secs(1));
        if self.redraw || due {
            if let Some(size) = (target.size)() {
                let mut text = format!("rosetta · {}", self.monitor.status());
                if !self.probe_words.is_empty() {
                    text.push_str(&format!(" · {}", self.probe_words));
                }
                if self.stopping.is_some() {
                    text.push_str(" · stopping");
                }
                text.push_str(&format!(" · {}", clock(self.start.elapsed())));
                let s = self.status.get_or_insert_with(|| StatusLine::new(size));
                let _ = s.draw(&mut *target.out, size, &text);
            }
            self.last_draw = Some(now);
            self.redraw = false;
        }
    }

    /// The end: the child reaped, the group empty, its output drained (or the group unkillable).
    fn ended(&mut self, now: Instant) -> bool {
        if self.child_code.is_none() || self.stopping.is_none() {
            return false;
        }
        let grace = self.opts.grace;
        if self.group.alive() {
            self.group_gone_at = None;
            // SIGKILL sent long ago and still there: uninterruptible sleep or another group.
            if self.sigkill_sent
                && now - self.stopping.unwrap_or(now) >= grace + Duration::from_secs(5)
            {
                self.notes.push(
                    "processes of the group survived SIGKILL (uninterruptible sleep?)".into(),
                );
                return true;
            }
        } else {
            let gone = *self.group_gone_at.get_or_insert(now);
            let drained = self.eof[0] && self.eof[1];
            let probe_settled =
                self.probe_state != ProbeState::Running || now - gone >= Duration::from_secs(3);
            if (drained || now - gone >= Duration::from_secs(2)) && probe_settled {
                return true;
            }
        }
        false
    }

    /// Takes in what is already queued (a last traceback line), without waiting.
    fn drain(&mut self, rx: &mpsc::Receiver<Ev>) -> Result<(), RunError> {
        while let Ok(ev) = rx.try_recv() {
            match ev {
                Ev::Out(i, bytes) => {
                    let ok = self.terminal_ok[i];
                    let w = self.terminal(i);
                    if ok {
                        let _ = w.write_all(&bytes);
                        let _ = w.flush();
                    }
                    self.log
                        .write_all(&bytes)
                        .map_err(|source| log_error(self.opts, source))?;
                    self.monitor.feed(i, &bytes);
                }
                Ev::Probe(r) => {
                    if !r.ok
                        && self.outcome != Some(Outcome::Interrupted)
                        && self.outcome != Some(Outcome::Stalled)
                    {
                        self.outcome = Some(Outcome::ProbeFailed);
                    }
                    self.probe_result = Some(r);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Clears the status line, flushes the log and tells how the launch ended.
    fn finish(mut self) -> Result<Ending, RunError> {
        if let (Some(s), Some(target)) = (self.status.as_mut(), self.term.status.as_mut()) {
            let _ = s.clear(&mut *target.out);
        }
        self.log
            .flush()
            .map_err(|source| log_error(self.opts, source))?;
        if self.opts.probe && self.probe_result.is_none() && self.ready_after.is_some() {
            self.notes
                .push("the server was ready but stopped before the probe could run".into());
        }
        let leftover = self.group.alive();
        Ok(Ending {
            outcome: self.outcome.unwrap_or(Outcome::Crashed),
            exit_code: self.child_code.flatten(),
            interrupted_by: self.interrupted_by,
            stopped_by_rosetta: self.stopped_by_rosetta,
            killed: self.sigkill_sent,
            leftover,
            probe: self.probe_result,
            phase: self.monitor.phase,
            status: self.monitor.status(),
            ready_after: self.ready_after,
            elapsed: self.start.elapsed(),
            silent_for: self.silent_for,
            notes: self.notes,
        })
    }
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
