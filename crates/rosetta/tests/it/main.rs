//! Integration tests of the `rosetta` binary: the `versions` and `config`
//! subcommands end to end (flags, output, exit codes). The package index is a
//! server on 127.0.0.1 started by the test; nothing touches the internet.

mod config;
mod versions;

use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary with a clean environment: no user config, cache or index leaks in.
pub fn rosetta(args: &[&str], home: &Path, extra_env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rosetta"));
    cmd.args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PIP_CONFIG_FILE", "/dev/null");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.output().expect("run rosetta")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
