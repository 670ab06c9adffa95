//! Every command accepts every format its `--help` lists (issue 12, point 8: `env --help`
//! offered html and then refused it). The formats are read from the help itself, so a
//! format added to a command's help without being written is caught.

use super::{repo, rosetta, stderr, stdout};
use std::path::Path;

/// The values `-h` lists for `--format`.
fn formats_in_help(cmd: &[&str], home: &Path) -> Vec<String> {
    let mut args = cmd.to_vec();
    args.push("-h");
    let o = rosetta(&args, home, &[]);
    // Help text wraps anywhere: read it with whitespace collapsed.
    let help = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    let at = help
        .find("--format")
        .unwrap_or_else(|| panic!("{cmd:?} has no --format:\n{help}"));
    let rest = &help[at..];
    let open = rest
        .find("[possible values: ")
        .expect("the values are listed")
        + 18;
    let close = rest[open..].find(']').unwrap() + open;
    rest[open..close]
        .split(',')
        .map(|s| s.trim().to_string())
        .collect()
}

#[test]
fn every_command_accepts_every_format_its_help_lists() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path();
    let example = repo().join("examples/glm5-sm120.log");
    let example = example.to_str().unwrap();
    let cfg = home.join("model/config.json");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(
        &cfg,
        r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":2048,
"num_hidden_layers":16,"num_attention_heads":16,"vocab_size":32000,"max_position_embeddings":4096}"#,
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap();
    let journal = home.join("journal.sqlite");
    let journal = journal.to_str().unwrap();
    let scan = home.join("empty");
    std::fs::create_dir_all(&scan).unwrap();
    let scan = scan.to_str().unwrap();
    let idx = super::versions::serve();

    // (the subcommand, its other arguments, exit codes that mean "answered")
    let commands: Vec<(Vec<&str>, Vec<&str>, Vec<i32>)> = vec![
        (vec!["diagnose"], vec![example], vec![0]),
        (vec!["env"], vec!["--scan", scan], vec![0]),
        (
            vec!["versions"],
            vec![
                "transformers",
                "--has-model-type",
                "glm_moe_dsa",
                "--index-url",
                &idx.base,
            ],
            vec![0],
        ),
        (
            vec!["config"],
            vec![cfg, "--transformers", "4.57.1"],
            vec![0, 1],
        ),
        (
            vec!["preflight"],
            vec![
                "--gpu",
                "H100",
                "--transformers",
                "4.57.1",
                "--",
                "vllm",
                "serve",
                cfg,
            ],
            vec![0, 1],
        ),
        (
            vec!["findings"],
            vec!["--journal", journal, "list"],
            vec![0],
        ),
    ];
    for (cmd, rest, ok) in commands {
        let formats = formats_in_help(&cmd, home);
        assert!(formats.len() >= 3, "{cmd:?}: {formats:?}");
        for f in formats {
            let mut args = cmd.clone();
            args.extend(["--format", f.as_str()]);
            args.extend(rest.iter().copied());
            let o = rosetta(&args, home, &[]);
            let code = o.status.code().unwrap_or(-1);
            assert!(
                ok.contains(&code),
                "{args:?} exited {code}: {}{}",
                stderr(&o),
                stdout(&o)
            );
            assert!(!stdout(&o).trim().is_empty(), "{args:?} wrote nothing");
        }
    }
}
