//! From the words a user types to a `LaunchCommand`: shell splitting
//! (`shell-words`), the shell around the launch (`VAR=value`, `env`,
//! `export ...;`, `nohup`, `| tee`, redirections, `bash -c '...'`), containers
//! (`docker run ... IMAGE [CMD]`), the launcher (`python -m MODULE`, a program
//! and its subcommand) and the engine's flags, read with the engine's flag
//! table from `kb/engines/`. Nothing here knows a particular engine.

use crate::command::{Container, Flag, FlagValue, LaunchCommand, ParseNote};
use crate::error::Error;
use crate::spec::{EngineSpec, Engines, Launcher, Takes};
use rosetta_schema::canonical_arg_key;
use std::collections::BTreeMap;

/// How deep `bash -c '...'` and containers may nest.
const MAX_DEPTH: usize = 4;
/// Longer command lines are refused (a launch command is a few kB at most).
const MAX_LEN: usize = 1 << 20;

/// Parses a command line as typed in a shell.
pub fn parse(line: &str, engines: &Engines) -> Result<LaunchCommand, Error> {
    let words = split(line)?;
    let mut env = BTreeMap::new();
    parse_line(&words, engines, &mut env, 0)
}

/// Parses words already split by the user's shell (`rosetta preflight -- CMD...`).
/// A single word holding a whole command line is split first.
pub fn parse_words<S: AsRef<str>>(words: &[S], engines: &Engines) -> Result<LaunchCommand, Error> {
    let mut words: Vec<String> = words.iter().map(|w| w.as_ref().to_string()).collect();
    if words.len() == 1 {
        words = split(&words[0])?;
    }
    if words.is_empty() {
        return Err(Error::Command("the command is empty".into()));
    }
    let mut env = BTreeMap::new();
    parse_line(&words, engines, &mut env, 0)
}

/// Splits a command line as a POSIX shell would (quotes, escapes, line continuations).
pub fn split(line: &str) -> Result<Vec<String>, Error> {
    if line.len() > MAX_LEN {
        return Err(Error::Command(format!(
            "the command is {} bytes long; a launch command is at most {MAX_LEN}",
            line.len()
        )));
    }
    if line.contains('\0') {
        return Err(Error::Command("the command holds a NUL byte".into()));
    }
    // A shell drops `\` + newline (a continuation line); CRLF files hold `\` + CR + LF.
    let line = line.replace("\\\r\n", "").replace("\\\n", "");
    let words =
        shell_words::split(&line).map_err(|_| Error::Command("a quote is not closed".into()))?;
    if words.is_empty() {
        return Err(Error::Command("the command is empty".into()));
    }
    Ok(words)
}

fn is_assignment(w: &str) -> Option<(&str, &str)> {
    let (k, v) = w.split_once('=')?;
    let mut chars = k.chars();
    let first = chars.next()?;
    if (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Some((k, v))
    } else {
        None
    }
}

/// Shell list separators split a line into commands.
fn is_separator(w: &str) -> bool {
    matches!(w, ";" | "&&" | "||" | "\n")
}

/// Words from which the rest of a command is shell plumbing, not the launch.
fn ends_command(w: &str) -> bool {
    matches!(w, "|" | "|&" | "&")
        || w.starts_with('>')
        || w.starts_with("&>")
        || w.starts_with('<')
        || (w.len() > 1
            && w.chars().next().is_some_and(|c| c.is_ascii_digit())
            && w.trim_start_matches(|c: char| c.is_ascii_digit())
                .starts_with(['>', '<']))
}

fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

fn is_python(w: &str) -> bool {
    let b = basename(w);
    let rest = b.strip_prefix("python").or_else(|| b.strip_prefix("pypy"));
    rest.is_some_and(|r| r.is_empty() || r.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn parse_line(
    words: &[String],
    engines: &Engines,
    env: &mut BTreeMap<String, String>,
    depth: usize,
) -> Result<LaunchCommand, Error> {
    if depth > MAX_DEPTH {
        return Err(Error::Command("commands nest too deep".into()));
    }
    // Split into commands at `;`, `&&`, `||` (also a word ending in `;`).
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    for w in words {
        if is_separator(w) {
            commands.push(Vec::new());
            continue;
        }
        if let Some(stripped) = w.strip_suffix(';').filter(|s| !s.ends_with('\\')) {
            if let Some(c) = commands.last_mut().filter(|_| !stripped.is_empty()) {
                c.push(stripped.to_string());
            }
            commands.push(Vec::new());
            continue;
        }
        if let Some(c) = commands.last_mut() {
            c.push(w.clone());
        }
    }
    commands.retain(|c| !c.is_empty());
    let mut fallback: Option<LaunchCommand> = None;
    for cmd in &commands {
        // `export A=1 B=2` sets the environment of what follows.
        if cmd[0] == "export" {
            for w in &cmd[1..] {
                if let Some((k, v)) = is_assignment(w) {
                    env.insert(k.to_string(), v.to_string());
                }
            }
            continue;
        }
        let parsed = parse_command(cmd, engines, env.clone(), depth)?;
        if parsed.engine.is_some() {
            return Ok(parsed);
        }
        fallback = Some(parsed);
    }
    fallback.ok_or_else(|| Error::Command("no command to launch, only assignments".into()))
}

/// Parses one command: the shell plumbing cut off, the wrappers and assignments before the
/// launcher skipped (or a shell's `-c` script, or a container, parsed instead), then the launcher.
fn parse_command(
    words: &[String],
    engines: &Engines,
    mut env: BTreeMap<String, String>,
    depth: usize,
) -> Result<LaunchCommand, Error> {
    let mut notes = Vec::new();
    let words = cut_plumbing(words, &mut notes);
    let mut i = 0;
    loop {
        let Some(w) = words.get(i) else {
            return Err(Error::Command(
                "no program to launch after the environment assignments".into(),
            ));
        };
        if let Some((k, v)) = is_assignment(w) {
            env.insert(k.to_string(), v.to_string());
            i += 1;
            continue;
        }
        match basename(w) {
            "env" => i = skip_env(words, i + 1, &mut env),
            "nohup" | "exec" | "time" | "command" | "stdbuf" | "nice" | "numactl" | "taskset"
            | "sudo" | "timeout" => i = skip_wrapper(words, i),
            "uv" | "conda" | "micromamba" | "pixi" | "poetry"
                if words.get(i + 1).is_some_and(|s| s == "run") =>
            {
                i = skip_runner(words, i + 2);
            }
            "bash" | "sh" | "zsh" | "dash" => {
                return parse_shell(words, i, engines, env, notes, depth);
            }
            "docker" | "podman" | "nerdctl" => {
                return parse_container(&words[i..], engines, env, notes, depth);
            }
            _ => break,
        }
    }
    let rest = &words[i..];
    if rest.is_empty() {
        return Err(Error::Command("no program after the wrappers".into()));
    }
    // The launcher: `python [opts] -m MODULE` or a program [subcommand].
    if is_python(&rest[0]) {
        return parse_python(rest, engines, env, notes, depth);
    }
    Ok(parse_program(rest, engines, env, notes))
}

/// The words before the shell plumbing (pipes, background, redirections), noting what was cut.
fn cut_plumbing<'w>(words: &'w [String], notes: &mut Vec<ParseNote>) -> &'w [String] {
    let cut = words
        .iter()
        .position(|w| ends_command(w))
        .unwrap_or(words.len());
    if cut < words.len() {
        notes.push(ParseNote::IgnoredShell {
            words: words[cut..].join(" "),
        });
    }
    &words[..cut]
}

/// Skips `env`'s options from `i` (applying its `-u NAME`); returns the next word's index.
fn skip_env(words: &[String], mut i: usize, env: &mut BTreeMap<String, String>) -> usize {
    while let Some(o) = words.get(i) {
        match o.as_str() {
            "-u" | "--unset" => {
                if let Some(name) = words.get(i + 1) {
                    env.remove(name);
                }
                i += 2;
            }
            "-i" | "--ignore-environment" | "-" | "--" => i += 1,
            _ => break,
        }
    }
    i
}

/// Skips the wrapper at `i` (`nohup`, `nice -n 10`, `timeout 60`...) with its options and
/// the one word some take; returns the next word's index.
fn skip_wrapper(words: &[String], mut i: usize) -> usize {
    let which = basename(&words[i]).to_string();
    i += 1;
    // Their own options: dashed words, plus the one value some take.
    while let Some(o) = words.get(i) {
        if o.starts_with('-') {
            let takes_value = matches!(
                (which.as_str(), o.as_str()),
                ("nice", "-n")
                    | ("sudo", "-u" | "-g")
                    | ("taskset", "-c")
                    | ("numactl", "-N" | "-m" | "-C" | "-p" | "-i")
                    | ("timeout", "-s" | "-k")
            );
            i += if takes_value { 2 } else { 1 };
        } else {
            break;
        }
    }
    // `taskset MASK CMD` and `timeout DURATION CMD` take one more word.
    if (which == "taskset" && !words[..i].iter().any(|x| x == "-c")) || which == "timeout" {
        i += 1;
    }
    i
}

/// Skips the options of an environment runner's `run` (`uv run --with X`, `conda run -n
/// NAME`) from `i`; returns the next word's index.
fn skip_runner(words: &[String], mut i: usize) -> usize {
    while let Some(o) = words.get(i) {
        if o.starts_with('-') {
            let takes_value = matches!(
                o.as_str(),
                "-n" | "--name"
                    | "-p"
                    | "--prefix"
                    | "--with"
                    | "--python"
                    | "-e"
                    | "--environment"
            );
            i += if takes_value { 2 } else { 1 };
        } else {
            break;
        }
    }
    i
}

/// A shell at `i`: its `-c` script parsed as a command line, else the shell run as a program.
fn parse_shell(
    words: &[String],
    i: usize,
    engines: &Engines,
    env: BTreeMap<String, String>,
    notes: Vec<ParseNote>,
    depth: usize,
) -> Result<LaunchCommand, Error> {
    let w = &words[i];
    let rest = &words[i + 1..];
    if let Some(pos) = rest
        .iter()
        .position(|a| a == "-c" || a == "-lc" || a == "-ic")
    {
        let Some(script) = rest.get(pos + 1) else {
            return Err(Error::Command(format!("`{w} -c` has no command")));
        };
        let inner = split(script)?;
        let mut env = env;
        let mut parsed = parse_line(&inner, engines, &mut env, depth + 1)?;
        parsed.notes.extend(notes);
        return Ok(parsed);
    }
    Ok(generic(words[i..].to_vec(), env, notes))
}

/// `python [opts] -m MODULE ARGS`: the engine whose launcher is that module, else a generic
/// command.
fn parse_python(
    rest: &[String],
    engines: &Engines,
    env: BTreeMap<String, String>,
    notes: Vec<ParseNote>,
    depth: usize,
) -> Result<LaunchCommand, Error> {
    let mut j = 1;
    while let Some(o) = rest.get(j) {
        match o.as_str() {
            "-m" => {
                let Some(module) = rest.get(j + 1) else {
                    return Err(Error::Command("`python -m` names no module".into()));
                };
                let program = rest[..j + 2].to_vec();
                let args = &rest[j + 2..];
                for spec in engines.all() {
                    if let Some(l) = spec
                        .launchers
                        .iter()
                        .find(|l| l.module.as_deref() == Some(module.as_str()))
                    {
                        return Ok(read_flags(spec, l, program, args, env, notes));
                    }
                }
                return Ok(generic_with_program(program, args, env, notes));
            }
            s if s.starts_with("-m") && s.len() > 2 => {
                // `-mMODULE`
                let mut expanded = rest[..j].to_vec();
                expanded.push("-m".into());
                expanded.push(s[2..].to_string());
                expanded.extend_from_slice(&rest[j + 1..]);
                return parse_command(&expanded, engines, env, depth);
            }
            "-W" | "-X" => j += 2,
            s if s.starts_with('-') && s != "-" && s != "-c" => j += 1,
            _ => break,
        }
    }
    Ok(generic(rest.to_vec(), env, notes))
}

/// A program (`vllm serve`, `sglang.launch_server`...): the engine whose launcher it is,
/// with its subcommand when it takes one, else a generic command.
fn parse_program(
    rest: &[String],
    engines: &Engines,
    env: BTreeMap<String, String>,
    notes: Vec<ParseNote>,
) -> LaunchCommand {
    let prog = basename(&rest[0]);
    for spec in engines.all() {
        for l in &spec.launchers {
            if l.program.as_deref() != Some(prog) {
                continue;
            }
            match &l.subcommand {
                Some(sub) if rest.get(1) == Some(sub) => {
                    return read_flags(spec, l, rest[..2].to_vec(), &rest[2..], env, notes);
                }
                Some(_) if !l.subcommand_optional => continue,
                _ => return read_flags(spec, l, rest[..1].to_vec(), &rest[1..], env, notes),
            }
        }
    }
    generic(rest.to_vec(), env, notes)
}

/// Docker's `run` options that take a value; everything else dashed is a switch.
const CONTAINER_VALUE_OPTS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--gpus",
    "--ipc",
    "--shm-size",
    "--network",
    "--net",
    "-w",
    "--workdir",
    "-u",
    "--user",
    "--entrypoint",
    "--runtime",
    "--ulimit",
    "--cap-add",
    "--cap-drop",
    "-m",
    "--memory",
    "--cpus",
    "--cpuset-cpus",
    "--device",
    "--mount",
    "-l",
    "--label",
    "--platform",
    "--pull",
    "--restart",
    "-h",
    "--hostname",
    "--add-host",
    "--security-opt",
    "--log-driver",
    "--log-opt",
    "--pid",
    "--uts",
    "--userns",
    "--memory-swap",
    "--stop-signal",
    "--health-cmd",
    "--dns",
    "--tmpfs",
    "--group-add",
    "--cgroupns",
    "--expose",
    "--link",
    "--volumes-from",
    "--oom-score-adj",
    "--storage-opt",
    "--sysctl",
    "--label-file",
    "--cidfile",
    "--device-cgroup-rule",
    "--gpus-all",
    "--stop-timeout",
    "--memory-reservation",
    "--shm",
    "--annotation",
];

/// `docker run [OPTS] IMAGE [CMD]`: the container's settings, and the command inside it
/// parsed with the container's environment; without `run`, a generic command.
fn parse_container(
    words: &[String],
    engines: &Engines,
    mut env: BTreeMap<String, String>,
    mut notes: Vec<ParseNote>,
    depth: usize,
) -> Result<LaunchCommand, Error> {
    let runtime = basename(&words[0]).to_string();
    let Some(run_at) = words.iter().position(|w| w == "run") else {
        return Ok(generic(words.to_vec(), env, notes));
    };
    let mut c = Container {
        runtime,
        ..Container::default()
    };
    let (at, entrypoint) = container_options(words, run_at + 1, &mut c, &mut env)?;
    let image = words[at].clone();
    c.image = image.clone();
    let cmd = &words[at + 1..];
    let mut parsed = container_command(&image, cmd, entrypoint, engines, &env, depth)?;
    for (k, v) in env {
        parsed.env.entry(k).or_insert(v);
    }
    notes.append(&mut parsed.notes);
    parsed.notes = notes;
    parsed.container = Some(c);
    Ok(parsed)
}

/// Reads `run`'s options from `i` into the container and the environment (`-e`); returns
/// the image's index and the `--entrypoint` given.
fn container_options(
    words: &[String],
    mut i: usize,
    c: &mut Container,
    env: &mut BTreeMap<String, String>,
) -> Result<(usize, Option<String>), Error> {
    let mut entrypoint: Option<String> = None;
    loop {
        let Some(w) = words.get(i) else {
            return Err(Error::Command(format!(
                "`{} run` names no image",
                c.runtime
            )));
        };
        if !w.starts_with('-') {
            return Ok((i, entrypoint));
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if w.starts_with("--") => (n, Some(v.to_string())),
            _ => (w.as_str(), None),
        };
        let value = if inline.is_some() {
            i += 1;
            inline
        } else if CONTAINER_VALUE_OPTS.contains(&name) {
            i += 2;
            words.get(i - 1).cloned()
        } else {
            i += 1;
            None
        };
        let Some(value) = value else { continue };
        match name {
            "-e" | "--env" => {
                if let Some((k, v)) = value.split_once('=') {
                    env.insert(k.to_string(), v.to_string());
                }
            }
            "--gpus" => c.gpus = Some(value),
            "--shm-size" => c.shm_size = Some(value),
            "--ipc" => c.ipc = Some(value),
            "-v" | "--volume" => c.volumes.push(value),
            "--entrypoint" => entrypoint = Some(value),
            _ => {}
        }
    }
}

/// What the container runs: the `--entrypoint` with the command, the image's own engine
/// entrypoint given flags, or the command; an image with neither is an error.
fn container_command(
    image: &str,
    cmd: &[String],
    entrypoint: Option<String>,
    engines: &Engines,
    env: &BTreeMap<String, String>,
    depth: usize,
) -> Result<LaunchCommand, Error> {
    let image_name = image.split('@').next().unwrap_or(image);
    let by_image = engines.all().iter().find(|s| {
        s.images
            .prefixes
            .iter()
            .any(|p| image_name.starts_with(p.as_str()))
    });
    if let Some(ep) = entrypoint {
        let mut full = vec![ep];
        full.extend_from_slice(cmd);
        parse_line(&full, engines, &mut env.clone(), depth + 1)
    } else if let Some(spec) = by_image
        .filter(|s| s.images.entrypoint_is_engine && cmd.first().is_none_or(|w| w.starts_with('-')))
    {
        let l = &spec.launchers[0];
        let mut parsed = read_flags(spec, l, Vec::new(), cmd, env.clone(), Vec::new());
        // The image's own entrypoint takes the model as a flag, not positionally.
        parsed.program = vec![format!("({image} entrypoint)")];
        Ok(parsed)
    } else if cmd.is_empty() {
        Err(Error::Command(format!(
            "the image `{image}` is given no command, and rosetta does not know its entrypoint"
        )))
    } else {
        parse_line(cmd, engines, &mut env.clone(), depth + 1)
    }
}

fn generic(
    words: Vec<String>,
    env: BTreeMap<String, String>,
    notes: Vec<ParseNote>,
) -> LaunchCommand {
    let program = words.first().cloned().into_iter().collect();
    generic_with_program(program, words.get(1..).unwrap_or(&[]), env, notes)
}

/// A command no engine file recognises: flags are still read, by shape.
fn generic_with_program(
    program: Vec<String>,
    args: &[String],
    env: BTreeMap<String, String>,
    notes: Vec<ParseNote>,
) -> LaunchCommand {
    let mut flags = BTreeMap::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if w == "--" {
            positional.extend(args[i + 1..].iter().cloned());
            break;
        }
        if looks_like_flag(w) {
            let (name, inline) = split_inline(w);
            let value = if let Some(v) = inline {
                FlagValue::One(v)
            } else if let Some(next) = args.get(i + 1).filter(|n| !looks_like_flag(n)) {
                i += 1;
                FlagValue::One(next.clone())
            } else {
                FlagValue::Switch(true)
            };
            flags.insert(
                canonical_arg_key(name),
                Flag {
                    spelled: name.to_string(),
                    value,
                    known: false,
                    position: i,
                },
            );
        } else {
            positional.push(w.clone());
        }
        i += 1;
    }
    let model = flags.get("model_path").map(|f: &Flag| f.value.as_arg());
    LaunchCommand {
        engine: None,
        program,
        env,
        flags,
        model,
        positional,
        container: None,
        notes,
    }
}

fn is_number(w: &str) -> bool {
    w.parse::<f64>().is_ok()
}

fn looks_like_flag(w: &str) -> bool {
    w.len() > 1 && w.starts_with('-') && !is_number(w)
}

fn split_inline(w: &str) -> (&str, Option<String>) {
    match w.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (w, None),
    }
}

fn check_value(spec: &EngineSpec, key: &str, value: &FlagValue, notes: &mut Vec<ParseNote>) {
    let Some(f) = spec.flag(key) else { return };
    let values: Vec<&str> = match value {
        FlagValue::Switch(_) => return,
        FlagValue::One(v) => vec![v.as_str()],
        FlagValue::Many(v) => v.iter().map(String::as_str).collect(),
    };
    let choices = f.choice_strings();
    for v in values {
        if !choices.is_empty() && !choices.iter().any(|c| c == v) {
            notes.push(ParseNote::BadChoice {
                key: key.to_string(),
                value: v.to_string(),
                choices: choices.clone(),
            });
        }
        let ok = match f.value_type.as_deref() {
            Some("int") => v.parse::<i64>().is_ok(),
            Some("float") => v.parse::<f64>().is_ok(),
            _ => true,
        };
        if !ok {
            notes.push(ParseNote::BadType {
                key: key.to_string(),
                value: v.to_string(),
                expected: f.value_type.clone().unwrap_or_default(),
            });
        }
    }
}

/// Reads an engine's flags with its flag table: each spelling to its key, each value as the
/// flag takes it, with notes on what does not fit; then the model, positional or by flag.
fn read_flags(
    spec: &EngineSpec,
    launcher: &Launcher,
    program: Vec<String>,
    args: &[String],
    env: BTreeMap<String, String>,
    notes: Vec<ParseNote>,
) -> LaunchCommand {
    let reader = FlagReader {
        spec,
        args,
        i: 0,
        notes,
    };
    let (mut flags, mut positional, notes) = reader.read();
    let model_key = spec.roles.model.as_deref().unwrap_or("model_path");
    let mut model = flags.get(model_key).map(|f| f.value.as_arg());
    if launcher.model_positional && !positional.is_empty() {
        // `vllm serve MODEL`: the positional model wins over `--model`, as vLLM does.
        model = Some(positional.remove(0));
    }
    if model_key != "model_path" {
        if let Some(f) = flags.remove(model_key) {
            flags.insert("model_path".into(), f);
        }
    }
    LaunchCommand {
        engine: Some(spec.id.clone()),
        program,
        env,
        flags,
        model,
        positional,
        container: None,
        notes,
    }
}

/// Where `read_flags` is in an engine's arguments, and the notes it has made so far.
struct FlagReader<'a> {
    spec: &'a EngineSpec,
    args: &'a [String],
    /// The index of the next word to read.
    i: usize,
    notes: Vec<ParseNote>,
}

impl FlagReader<'_> {
    /// Reads every word: each flag under its key (a repeated key noted, the last one kept),
    /// the other words and those after `--` as positional; returns them with the notes.
    fn read(mut self) -> (BTreeMap<String, Flag>, Vec<String>, Vec<ParseNote>) {
        let args = self.args;
        let mut flags: BTreeMap<String, Flag> = BTreeMap::new();
        let mut positional = Vec::new();
        while self.i < args.len() {
            let w = &args[self.i];
            let at = self.i;
            self.i += 1;
            if w == "--" {
                positional.extend(args[self.i..].iter().cloned());
                break;
            }
            if !looks_like_flag(w) {
                positional.push(w.clone());
                continue;
            }
            let (name, inline) = if w.starts_with("--") {
                split_inline(w)
            } else {
                (w.as_str(), None)
            };
            let (key, value, known) = match self.key_of(name) {
                (Some(key), negated) => {
                    let Some(value) = self.known_value(&key, name, inline, negated) else {
                        continue;
                    };
                    (key, value, true)
                }
                (None, _) => {
                    let value = self.unknown_value(name, inline);
                    (canonical_arg_key(name), value, false)
                }
            };
            if known {
                check_value(self.spec, &key, &value, &mut self.notes);
            }
            if flags.contains_key(&key) {
                self.notes.push(ParseNote::Repeated { key: key.clone() });
            }
            flags.insert(
                key,
                Flag {
                    spelled: name.to_string(),
                    value,
                    known,
                    position: at,
                },
            );
        }
        (flags, positional, self.notes)
    }

    /// The next word when it is a value rather than a flag (not consumed).
    fn next_value(&self) -> Option<String> {
        self.args
            .get(self.i)
            .filter(|n| !looks_like_flag(n))
            .cloned()
    }

    /// The key a spelling names: exact, then `--no-NAME` of a switch (negated), then a unique
    /// prefix.
    fn key_of(&self, name: &str) -> (Option<String>, bool) {
        let spec = self.spec;
        let mut negated = false;
        let key = spec.key_of(name).map(str::to_string).or_else(|| {
            let k = spec.key_of_prefix(name).map(str::to_string);
            if k.is_some() {
                return k;
            }
            if spec.negatable_switches {
                let positive = format!("--{}", name.strip_prefix("--no-")?);
                let k = spec.key_of(&positive)?;
                if spec.flag(k).is_some_and(|f| f.takes == Takes::Switch) {
                    negated = true;
                    return Some(k.to_string());
                }
            }
            None
        });
        (key, negated)
    }

    /// The value of a listed flag as it takes one, consuming the words it reads; `None`, with
    /// a note, when it needs a value and has none. Notes a deprecated spelling.
    fn known_value(
        &mut self,
        key: &str,
        name: &str,
        inline: Option<String>,
        negated: bool,
    ) -> Option<FlagValue> {
        let spec = self.spec;
        let f = spec.flag(key).map(|f| f.takes).unwrap_or(Takes::Value);
        if spec.flag(key).is_some_and(|f| f.deprecated) {
            self.notes.push(ParseNote::Deprecated {
                spelled: name.to_string(),
            });
        }
        let missing = ParseNote::MissingValue {
            spelled: name.to_string(),
        };
        Some(match (f, inline) {
            (Takes::Switch, Some(v)) => FlagValue::Switch(!matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "0" | "no" | "off"
            )),
            (Takes::Switch, None) => FlagValue::Switch(!negated),
            (Takes::List, Some(v)) => FlagValue::Many(vec![v]),
            (Takes::List, None) => {
                let mut vals = Vec::new();
                while let Some(v) = self.next_value() {
                    vals.push(v);
                    self.i += 1;
                }
                if vals.is_empty() {
                    self.notes.push(missing);
                    return None;
                }
                FlagValue::Many(vals)
            }
            (_, Some(v)) => FlagValue::One(v),
            (Takes::Value, None) => match self.args.get(self.i) {
                // argparse takes a dashed word only when it reads as a number.
                Some(v) if !looks_like_flag(v) => {
                    self.i += 1;
                    FlagValue::One(v.clone())
                }
                _ => {
                    self.notes.push(missing);
                    return None;
                }
            },
            (Takes::Optional, None) => {
                let choices = spec
                    .flag(key)
                    .map(|f| f.choice_strings())
                    .unwrap_or_default();
                match self.next_value() {
                    Some(v) if choices.is_empty() || choices.contains(&v) => {
                        self.i += 1;
                        FlagValue::One(v)
                    }
                    _ => FlagValue::Switch(true),
                }
            }
        })
    }

    /// The value of a flag the engine file does not list, read by shape; noted as unknown
    /// (the file is complete) or unlisted.
    fn unknown_value(&mut self, name: &str, inline: Option<String>) -> FlagValue {
        self.notes.push(if self.spec.complete {
            ParseNote::UnknownFlag {
                spelled: name.to_string(),
            }
        } else {
            ParseNote::UnlistedFlag {
                spelled: name.to_string(),
            }
        });
        match inline {
            Some(v) => FlagValue::One(v),
            None => match self.next_value() {
                Some(v) => {
                    self.i += 1;
                    FlagValue::One(v)
                }
                None => FlagValue::Switch(true),
            },
        }
    }
}
