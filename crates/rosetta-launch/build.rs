//! Embeds every engine file under `kb/engines/` into the binary, so that the
//! built-in engine knowledge needs no files at run time.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../kb/engines");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    let mut code = String::from(
        "/// Built-in engine files: (file name, text).\npub const EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let abs = f.canonicalize().unwrap_or(f.clone());
        let _ = writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            abs.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_engines.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
