//! The child's process group: signals to every process in it, whether any is
//! left, and reaping them. rosetta makes itself a child subreaper, so that
//! processes the child started and left behind are re-parented to rosetta
//! (not to init) and can be reaped here; only processes of the child's group
//! are ever waited for, so other children of rosetta are left alone.

use rustix::process::{Pid, Signal, WaitOptions};

/// A process group led by the child.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pgid: Pid,
}

/// How a process ended: its exit code, or 128 + the signal that ended it.
pub fn exit_code(status: rustix::process::WaitStatus) -> Option<i32> {
    status
        .exit_status()
        .or_else(|| status.terminating_signal().map(|s| 128 + s))
}

impl Group {
    /// The group whose leader is `pid` (the child, spawned with `process_group(0)`).
    pub fn of_leader(pid: u32) -> Option<Group> {
        Pid::from_raw(i32::try_from(pid).ok()?).map(|pgid| Group { pgid })
    }

    /// Sends `sig` to every process of the group; false when none is left.
    pub fn signal(&self, sig: Signal) -> bool {
        rustix::process::kill_process_group(self.pgid, sig).is_ok()
    }

    /// Whether any process of the group is left (zombies of ours are reaped first).
    pub fn alive(&self) -> bool {
        match rustix::process::test_kill_process_group(self.pgid) {
            Ok(()) => true,
            Err(e) => e != rustix::io::Errno::SRCH,
        }
    }

    /// Reaps every exited process of the group that is our child (the leader,
    /// and orphans re-parented to us); returns their pids and exit codes.
    pub fn reap(&self) -> Vec<(i32, Option<i32>)> {
        let mut out = Vec::new();
        while let Ok(Some((pid, status))) =
            rustix::process::waitpgid(self.pgid, WaitOptions::NOHANG)
        {
            out.push((pid.as_raw_nonzero().get(), exit_code(status)));
        }
        out
    }

    /// The group id.
    pub fn id(&self) -> i32 {
        self.pgid.as_raw_nonzero().get()
    }
}

/// Makes this process the subreaper of its descendants (Linux); false where it cannot.
pub fn become_subreaper() -> bool {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

/// A signal by number, for forwarding what rosetta received.
pub fn signal_from(raw: i32) -> Signal {
    Signal::from_named_raw(raw).unwrap_or(Signal::TERM)
}
