//! Probes of the machine: GPUs, the Python environment and which GPU
//! architectures each CUDA library in it carries, and model configs.
//!
//! Probes return facts; they never print and never fail the whole run when a
//! part of the machine cannot be read (that becomes a note).
#![warn(missing_docs)]

pub mod model_config;
