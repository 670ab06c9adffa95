//! Runs the outside programs the probes ask (`nvidia-smi`, a Python
//! interpreter) with a deadline, and finds programs on `PATH`.
//!
//! A GPU in a bad state can make `nvidia-smi` hang; a crash-diagnosis tool
//! must not hang with it. Parsing the output is the caller's.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why a program gave no usable output.
#[derive(Debug)]
pub enum RunError {
    /// Not found.
    NotFound,
    /// Still running at the deadline; killed.
    TimedOut(Duration),
    /// Exited unsuccessfully; the first line it printed.
    Failed(String),
    /// Could not be started or read.
    Io(std::io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NotFound => f.write_str("not found"),
            RunError::TimedOut(d) => write!(f, "no answer within {} s; killed", d.as_secs()),
            RunError::Failed(line) => write!(f, "failed: {line}"),
            RunError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A started program whose output is collected in the background.
pub struct Running {
    child: std::process::Child,
    out: std::thread::JoinHandle<Vec<u8>>,
    err: std::thread::JoinHandle<Vec<u8>>,
    started: Instant,
}

/// Starts `program args`, stdin closed, output captured.
pub fn start(program: &Path, args: &[&str]) -> Result<Running, RunError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                RunError::NotFound
            } else {
                RunError::Io(e)
            }
        })?;
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = so.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = se.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    Ok(Running {
        child,
        out,
        err,
        started: Instant::now(),
    })
}

impl Running {
    /// Waits until the program exits or `deadline` has passed since it started.
    pub fn finish(mut self, deadline: Duration) -> Result<String, RunError> {
        let mut nap = Duration::from_millis(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) => {}
                Err(e) => return Err(RunError::Io(e)),
            }
            if self.started.elapsed() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(RunError::TimedOut(deadline));
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(20));
        };
        let out = self.out.join().unwrap_or_default();
        let err = self.err.join().unwrap_or_default();
        let out = String::from_utf8_lossy(&out).into_owned();
        if status.success() {
            Ok(out)
        } else {
            let err = String::from_utf8_lossy(&err);
            let line = err
                .lines()
                .chain(out.lines())
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("no output")
                .to_string();
            Err(RunError::Failed(format!("{line} ({status})")))
        }
    }
}

/// Runs a program to the end with a deadline; its standard output.
pub fn run(program: &Path, args: &[&str], deadline: Duration) -> Result<String, RunError> {
    start(program, args)?.finish(deadline)
}

/// The first executable called `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(m) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        m.is_file()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn runs_and_times_out() {
        let sh = Path::new("/bin/sh");
        assert_eq!(
            run(sh, &["-c", "echo hi"], Duration::from_secs(5)).unwrap(),
            "hi\n"
        );
        assert!(matches!(
            run(sh, &["-c", "echo oops >&2; exit 3"], Duration::from_secs(5)),
            Err(RunError::Failed(l)) if l.starts_with("oops")
        ));
        assert!(matches!(
            run(sh, &["-c", "sleep 5"], Duration::from_millis(100)),
            Err(RunError::TimedOut(_))
        ));
        assert!(matches!(
            run(
                Path::new("/nonexistent/nvidia-smi"),
                &[],
                Duration::from_secs(1)
            ),
            Err(RunError::NotFound)
        ));
        assert!(which("sh").is_some());
    }
}
