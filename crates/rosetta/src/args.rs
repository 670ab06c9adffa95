//! Command-line flags (clap derive), validated here and handed to the
//! subcommands in `commands/`.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

use crate::commands;
use crate::exit::Outcome;

const EXIT_CODES: &str = "\
Exit codes:
  0  success: the report or answer was written
  1  the check found problems (config findings; preflight blockers; versions: no release answers)
  2  bad input or usage (unreadable or malformed file, bad flag, bad rule file)
  3  the package index could not be reached
  4  run: rosetta stopped the launch (a stall, or a failed probe with the server still up)
  run passes the launch's own exit code through; 128+N when a signal N interrupted it";

/// Tells you why your GPU server crashed and what to try next.
#[derive(Debug, Parser)]
#[command(name = "rosetta", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// What broke, when, on which rank, why (ranked causes with evidence), what to try next.
    Diagnose(DiagnoseArgs),
    /// This machine: GPUs, driver, CUDA, the Python environment and the GPU archs of its CUDA libraries.
    Env(EnvArgs),
    /// Version archaeology on the package index: which releases contain a path or know a model type.
    Versions(VersionsArgs),
    /// A model's config.json against a transformers version, a context length and a GPU.
    Config(ConfigArgs),
    /// Before launch: the command, the model, memory and kernels against the knowledge base.
    Preflight(PreflightArgs),
    /// Wraps a server launch: output as it is, a status line, crash / stall / ready detected, one
    /// probe request, a diagnosis on the spot, the attempt recorded in the journal.
    Run(RunArgs),
    /// The journal of attempts: list, show, diff, note, export (FINDINGS.md), import old logs.
    Findings(FindingsArgs),
}

/// Output formats shared by the subcommands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For a person in a terminal.
    Text,
    /// The JSON contract (docs/report.md for diagnose).
    Json,
    /// For pasting into an upstream issue.
    Markdown,
    /// A standalone page.
    Html,
}

/// Output formats of `diagnose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiagnoseFormat {
    /// For a person in a terminal.
    Text,
    /// The JSON contract (docs/report.md); with `--each`, an array of `{"file", "report"}`.
    Json,
    /// One JSON object a line, `{"file": .., "report": ..}`, one line per input (implies `--each`).
    Jsonl,
    /// For pasting into an upstream issue.
    Markdown,
    /// A standalone page (one input set; not with `--each`).
    Html,
}

/// `--format` of the commands that write text, JSON and Markdown only: `--help` lists
/// exactly what they accept.
fn text_json_markdown() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["text", "json", "markdown"]).map(|s| {
        match s.as_str() {
            "json" => Format::Json,
            "markdown" => Format::Markdown,
            _ => Format::Text,
        }
    })
}

/// When to colour text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[derive(Debug, clap::Args)]
pub struct DiagnoseArgs {
    /// Log files (one per rank or node is fine), `-` for stdin; `.gz` and `.zst` are decompressed.
    /// With none, reads stdin.
    pub logs: Vec<PathBuf>,
    /// Output format; `jsonl` writes one line per input file (`{"file": .., "report": ..}`)
    /// and implies `--each`.
    #[arg(long, value_enum, default_value_t = DiagnoseFormat::Text)]
    pub format: DiagnoseFormat,
    /// Diagnose each file on its own (a fleet's collected logs), one report per file, on
    /// every core; reports come out in the order of the files. An unreadable file is
    /// reported and the others still are (exit code 2 at the end).
    #[arg(long)]
    pub each: bool,
    /// Extra rule folders, added to the built-in knowledge base.
    #[arg(long = "kb", value_name = "DIR")]
    pub kb: Vec<PathBuf>,
    /// Folders of your own labelled cases (`NAME/log.txt` + `NAME/expect.toml`), added to the
    /// built-in library of similar reports.
    #[arg(long = "cases", value_name = "DIR")]
    pub cases: Vec<PathBuf>,
    /// A `rosetta env --format json` file of the machine that crashed: its facts become evidence.
    #[arg(long, value_name = "FILE")]
    pub env: Option<PathBuf>,
    /// Remove tokens, keys, IPs, hostnames and home paths from the report.
    #[arg(long)]
    pub redact: bool,
    /// How many causes to show in text output.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, clap::Args)]
pub struct EnvArgs {
    /// The Python interpreter whose environment to inspect (default: `python3` on PATH, or the active venv).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// A site-packages folder to inspect instead of asking an interpreter.
    #[arg(long, value_name = "DIR", conflicts_with = "python")]
    pub site_packages: Option<PathBuf>,
    /// Scan these `.so` files or folders instead of a Python environment.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub scan: Vec<PathBuf>,
    /// Judge libraries against these GPU archs (e.g. `sm_120`, `12.0`, `H200`) as well as the GPUs present.
    #[arg(long, value_name = "ARCH")]
    pub gpu: Vec<String>,
    /// Output format.
    #[arg(long, value_parser = text_json_markdown(), default_value = "text")]
    pub format: Format,
    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Show how many cubins / PTX entries each arch has (`sm_90×444`), as `cuobjdump --list-elf` counts them.
    #[arg(long)]
    pub counts: bool,
    /// Files read in parallel (default: the number of CPUs, 16 to 64).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

#[derive(Debug, clap::Args)]
pub struct VersionsArgs {
    /// The package, e.g. `transformers`.
    pub package: String,
    /// Which releases register this transformers model type.
    #[arg(long, value_name = "TYPE", conflicts_with = "has_path")]
    pub has_model_type: Option<String>,
    /// Which releases contain this path inside the wheel.
    #[arg(long, value_name = "PATH")]
    pub has_path: Option<String>,
    /// Print the table model type -> first release (what `diagnose` embeds).
    #[arg(long, conflicts_with_all = ["has_model_type", "has_path"])]
    pub model_types: bool,
    /// Only ask releases from this version on (PEP 440), e.g. `4.45.0`.
    #[arg(long, value_name = "VERSION")]
    pub since: Option<String>,
    /// The index's simple API URL (default: PIP_INDEX_URL, UV_INDEX_URL, pip config files, then pip's own default).
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Answer from the cache only; never touch the network.
    #[arg(long)]
    pub offline: bool,
    /// Where to keep the cache (default: the platform cache folder).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Parallel requests.
    #[arg(long, default_value_t = 8)]
    pub jobs: usize,
    /// Show every release read, not only the releases around the answer.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_parser = text_json_markdown(), default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// A config.json, a model folder, or a Hugging Face cache path.
    pub model: PathBuf,
    /// The transformers version to check against (default: the one in the active Python environment).
    #[arg(long, value_name = "VERSION")]
    pub transformers: Option<String>,
    /// The context length you intend to serve.
    #[arg(long, value_name = "TOKENS")]
    pub context_length: Option<u64>,
    /// The GPU arch you intend to run on (e.g. `sm_120`).
    #[arg(long, value_name = "ARCH")]
    pub gpu: Option<String>,
    /// Output format.
    #[arg(long, value_parser = text_json_markdown(), default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  rosetta preflight --model /models/GLM-5-NVFP4 --gpu 'RTX PRO 6000' --gpus 8 --gpu-memory 96 \\\n    --transformers 5.2.0 -- python -m sglang.launch_server --model-path /models/GLM-5-NVFP4 --tp 8\n\nExit codes: 0 no blocker, 1 a blocker, 2 bad input (unparsable command, missing model, malformed config)."
)]
pub struct PreflightArgs {
    /// The launch command, as you would type it (after `--`), or one quoted string.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// A `rosetta env --format json` file of the target machine (default: probe this machine unless --gpu is given).
    #[arg(long, value_name = "FILE")]
    pub env: Option<PathBuf>,
    /// The target GPU: an arch (`sm_120`, `12.0`) or a name (`H200`, `RTX PRO 6000`).
    #[arg(long, value_name = "ARCH_OR_NAME")]
    pub gpu: Option<String>,
    /// GPUs on the target machine.
    #[arg(long, value_name = "N")]
    pub gpus: Option<u64>,
    /// Memory of one GPU, GiB.
    #[arg(long, value_name = "GIB")]
    pub gpu_memory: Option<f64>,
    /// The transformers version the server will run with.
    #[arg(long, value_name = "VER")]
    pub transformers: Option<String>,
    /// The engine's version (sglang, vLLM, ...).
    #[arg(long, value_name = "VER")]
    pub engine_version: Option<String>,
    /// The model folder or its config.json (default: the command's model path, when it is on disk).
    #[arg(long, value_name = "DIR_OR_CONFIG")]
    pub model: Option<PathBuf>,
    /// Extra rule folders, added to the built-in knowledge base.
    #[arg(long = "kb", value_name = "DIR")]
    pub kb: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The journal: a SQLite file or a postgres:// URL (default: $ROSETTA_JOURNAL, else
    /// $XDG_STATE_HOME/rosetta/journal.sqlite).
    #[arg(long, value_name = "PATH_OR_URL")]
    pub journal: Option<String>,
    /// Once the server says it is ready, send one short chat request (a prefill and a few decode steps).
    #[arg(long)]
    pub probe: bool,
    /// A note recorded with the attempt (what you are trying).
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Seconds without output before ready (or during the probe) that make a stall; 0: never.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub stall: u64,
    /// Seconds between SIGTERM and SIGKILL when stopping the launch's process group.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub grace: u64,
    /// Seconds the probe request may take.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub probe_timeout: u64,
    /// Stop the server once it is ready (and the probe, if asked, answered), and exit 0.
    #[arg(long)]
    pub stop_when_ready: bool,
    /// No status line, even on a terminal.
    #[arg(long)]
    pub no_status: bool,
    /// Extra rule folders for the diagnosis.
    #[arg(long = "kb", value_name = "DIR")]
    pub kb: Vec<PathBuf>,
    /// How many causes the report shows.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// When to use colour in the report.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The launch command, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct FindingsArgs {
    /// The journal: a SQLite file or a postgres:// URL (default: $ROSETTA_JOURNAL, else
    /// $XDG_STATE_HOME/rosetta/journal.sqlite).
    #[arg(long, global = true, value_name = "PATH_OR_URL")]
    pub journal: Option<String>,
    /// Output format (export: markdown).
    #[arg(long, global = true, value_parser = text_json_markdown())]
    pub format: Option<Format>,
    /// When to use colour (show).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// What to do (default: list).
    #[command(subcommand)]
    pub action: Option<FindingsAction>,
}

#[derive(Debug, Subcommand)]
pub enum FindingsAction {
    /// Every attempt: id, when, outcome, failure, top cause, what changed against the previous one.
    List,
    /// One attempt: its command, changes, probe, notes and full diagnosis, with the journal's rulings.
    Show {
        /// The attempt's id.
        id: i64,
        /// How many causes to show.
        #[arg(long, default_value_t = 5)]
        top: usize,
    },
    /// What differs between two attempts (args, env, versions, machine, model) and how the outcome moved.
    Diff {
        /// The earlier attempt.
        a: i64,
        /// The later attempt.
        b: i64,
    },
    /// Adds a note to an attempt.
    Note {
        /// The attempt's id.
        id: i64,
        /// The note.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Writes the FINDINGS.md a person would keep: the goal, each attempt, what is still open,
    /// what is ruled out and by which attempt.
    Export {
        /// The goal, in your words (default: the model, framework and GPUs of the attempts).
        #[arg(long, value_name = "TEXT")]
        goal: Option<String>,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Records old logs as attempts, by diagnosing them (in the order given).
    Import {
        /// Log files (`.gz`, `.zst` too).
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// Extra rule folders for the diagnosis.
        #[arg(long = "kb", value_name = "DIR")]
        kb: Vec<PathBuf>,
    },
}

/// Parses the command line and runs the subcommand.
pub fn parse_and_run() -> Outcome {
    let cli = Cli::parse();
    match cli.command {
        Command::Diagnose(a) => commands::diagnose::run(a),
        Command::Env(a) => commands::env::run(a),
        Command::Versions(a) => commands::versions::run(a),
        Command::Config(a) => commands::config::run(a),
        Command::Preflight(a) => commands::preflight::run(a),
        Command::Run(a) => commands::run::run(a),
        Command::Findings(a) => commands::findings::run(a),
    }
}
