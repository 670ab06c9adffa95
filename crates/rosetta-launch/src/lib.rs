//! Launch commands of LLM servers, as users type them: `python -m
//! sglang.launch_server ...`, `vllm serve MODEL ...`, `trtllm-serve`,
//! `llama-server`, `text-generation-launcher`, with the shell around them
//! (`VAR=value`, `env`, `export`, `nohup`, `| tee`, `bash -c`) and containers
//! (`docker run ... IMAGE [CMD]`). `parse` turns one into a typed
//! `LaunchCommand` whose flags sit under the same canonical keys rules use
//! (`tp_size`, `context_length`, `mem_fraction_static`); `diff` compares two.
//! What each engine accepts and defaults to is data in `kb/engines/`
//! (`Engines::embedded()`); this crate holds the machinery only. It does not
//! judge a command: preflight does.
#![warn(missing_docs)]

mod command;
mod diff;
mod error;
mod parse;
pub mod spec;

pub use command::{Container, Flag, FlagValue, LaunchCommand, ParseNote};
pub use diff::{diff, Change, LaunchDiff, Setting};
pub use error::Error;
pub use parse::{parse, parse_words, split};
pub use spec::{EngineSpec, Engines};
