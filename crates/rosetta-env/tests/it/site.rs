//! A fake site-packages: packages from METADATA, owners from RECORD, torch's
//! CUDA from `torch/version.py`, judged against given GPUs; the JSON contract
//! round trip and the loader's error.

use super::fixture;
use rosetta_env::{
    probe, EnvReport, Gpu, GpuSource, Options, ProblemKind, PythonSource, Severity, Verdict,
};
use std::fs;
use std::path::Path;

fn dist(site: &Path, name: &str, version: &str, files: &[(&str, Option<&str>)]) {
    let info = site.join(format!("{}-{version}.dist-info", name.replace('-', "_")));
    fs::create_dir_all(&info).unwrap();
    fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA description.\n"),
    )
    .unwrap();
    let mut record = String::new();
    for (rel, copy_from) in files {
        let path = site.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        match copy_from {
            Some(src) => {
                fs::copy(fixture(src), &path).unwrap();
            }
            None => fs::write(&path, b"# python\n").unwrap(),
        }
        record.push_str(&format!("{rel},sha256=x,1\n"));
    }
    fs::write(info.join("RECORD"), record).unwrap();
}

fn gpu(name: &str, cc: &str, cuda: &str) -> Gpu {
    Gpu {
        index: Some(0),
        name: name.into(),
        compute_capability: cc.into(),
        driver: Some("570.86.15".into()),
        cuda_driver_version: Some(cuda.into()),
        memory_mib: Some(97887),
    }
}

fn make_site(root: &Path) {
    dist(
        root,
        "torch",
        "2.11.0+cu130",
        &[
            ("torch/__init__.py", None),
            ("torch/version.py", None),
            ("torch/lib/libtorch_cuda.so", Some("libk_sm90.so")),
        ],
    );
    fs::write(
        root.join("torch/version.py"),
        "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n",
    )
    .unwrap();
    dist(
        root,
        "flash-mla",
        "1.0.0",
        &[(
            "flash_mla/cuda.cpython-312-x86_64-linux-gnu.so",
            Some("libk_multi.so"),
        )],
    );
    dist(
        root,
        "nvidia-cublas-cu12",
        "12.8.4.1",
        &[("nvidia/cublas/__init__.py", None)],
    );
    // sgl-kernel style per-arch variants: only one is loaded per GPU.
    dist(
        root,
        "sgl-kernel",
        "0.3.0",
        &[
            ("sgl_kernel/sm90/common_ops.abi3.so", Some("libk_sm90.so")),
            ("sgl_kernel/sm100/common_ops.abi3.so", Some("libk_multi.so")),
        ],
    );
    // Not in any RECORD.
    fs::create_dir_all(root.join("stray")).unwrap();
    fs::copy(
        fixture("libk_multi_compressed.so"),
        root.join("stray/libstray.so"),
    )
    .unwrap();
}

fn site_report(gpus: Vec<Gpu>, named: &[&str]) -> (tempfile::TempDir, EnvReport) {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("lib/python3.12/site-packages");
    make_site(&site);
    let r = probe(&Options {
        python: PythonSource::SitePackages(site),
        gpus: GpuSource::Given(gpus),
        named: named
            .iter()
            .map(|a| rosetta_env::NamedGpu {
                cc: rosetta_env::ComputeCapability::parse(a).unwrap(),
                name: None,
            })
            .collect(),
        threads: Some(3),
        ..Options::default()
    })
    .unwrap();
    (d, r)
}

#[test]
fn packages_owners_and_torch() {
    let (_d, r) = site_report(
        vec![gpu("NVIDIA RTX PRO 6000 Blackwell", "12.0", "12.8")],
        &[],
    );
    let names: Vec<&str> = r.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["flash-mla", "nvidia-cublas-cu12", "sgl-kernel", "torch"]
    );
    assert_eq!(r.torch.as_ref().unwrap().cuda.as_deref(), Some("13.0"));
    let owner = |file: &str| {
        r.libraries
            .iter()
            .find(|l| l.path.ends_with(file))
            .and_then(|l| l.package.clone())
    };
    assert_eq!(owner("libtorch_cuda.so").as_deref(), Some("torch"));
    assert_eq!(
        owner("cuda.cpython-312-x86_64-linux-gnu.so").as_deref(),
        Some("flash-mla")
    );
    assert_eq!(owner("libstray.so"), None);
    assert_eq!(r.gpu_archs(), ["sm_120"]);
    assert_eq!(r.scan.libraries, 5);
}

#[test]
fn problems_on_an_sm120_box_with_an_old_driver() {
    let (_d, r) = site_report(
        vec![gpu("NVIDIA RTX PRO 6000 Blackwell", "12.0", "12.8")],
        &[],
    );
    let kinds: Vec<(Severity, ProblemKind)> =
        r.problems.iter().map(|p| (p.severity, p.kind)).collect();
    // flash-mla and the stray library have nothing for sm_120; torch (sm_90 +
    // compute_90 of ISA 9.0) would JIT, but a CUDA 12.8 driver cannot read ISA 9.0.
    let no_code = r.problems_of(ProblemKind::NoCodeForGpu);
    let who: Vec<Option<&str>> = no_code.iter().map(|p| p.package.as_deref()).collect();
    assert_eq!(
        who,
        [Some("flash-mla"), Some("sgl-kernel"), None],
        "{kinds:?}"
    );
    assert!(no_code[0]
        .message
        .contains("sm_120 (NVIDIA RTX PRO 6000 Blackwell)"));
    let too_new = r.problems_of(ProblemKind::PtxTooNewForDriver);
    assert!(
        too_new
            .iter()
            .any(|p| p.package.as_deref() == Some("torch")),
        "{kinds:?}"
    );
    assert!(
        too_new[0].message.contains("needs a CUDA 13.0 driver"),
        "{}",
        too_new[0].message
    );
    let torch = r.problems_of(ProblemKind::TorchCudaNewerThanDriver);
    assert_eq!(torch.len(), 1);
    assert_eq!(torch[0].severity, Severity::Error);
    // sgl-kernel: the sm90 variant has PTX that is too new and the sm100 one
    // has nothing: no sibling covers sm_120, so both are reported.
    assert!(r
        .problems
        .iter()
        .any(|p| p.package.as_deref() == Some("sgl-kernel")));
    // cu12 and cu13 packages together.
    assert_eq!(r.problems_of(ProblemKind::MixedCudaMajors).len(), 1);
    // Errors first.
    assert_eq!(r.problems[0].severity, Severity::Error);
    // The helper diagnose uses names the library.
    let libs = r.libraries_without_code_for("sm_120");
    assert!(libs
        .iter()
        .any(|l| l.package.as_deref() == Some("flash-mla")));
}

#[test]
fn per_arch_variants_are_judged_together_on_hopper() {
    let (_d, r) = site_report(vec![gpu("NVIDIA H200", "9.0", "13.0")], &["sm_100"]);
    // On sm_90 the sm90 variant has SASS: sgl-kernel's sm100 folder (sm_90a too) fine.
    // On sm_100 (named) the sm100 variant covers it, so the sm90 variant's
    // ptx-jit is no problem.
    assert!(
        r.problems_of(ProblemKind::NoCodeForGpu).is_empty(),
        "{:#?}",
        r.problems
    );
    assert!(r
        .problems_of(ProblemKind::TorchCudaNewerThanDriver)
        .is_empty());
    let torch = r
        .libraries
        .iter()
        .find(|l| l.package.as_deref() == Some("torch"))
        .unwrap();
    assert_eq!(torch.targets["sm_90"], Verdict::Sass);
    assert_eq!(torch.targets["sm_100"], Verdict::PtxJit);
}

#[test]
fn json_round_trip_and_contract_fields() {
    let (d, r) = site_report(vec![gpu("NVIDIA H200", "9.0", "13.0")], &["sm_120"]);
    let mut buf = Vec::new();
    rosetta_env::render::json(&r, &mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let g = &v["gpus"][0];
    for k in [
        "name",
        "compute_capability",
        "driver",
        "cuda_driver_version",
        "memory_mib",
    ] {
        assert!(!g[k].is_null(), "gpus[].{k}");
    }
    assert_eq!(g["compute_capability"], "9.0");
    assert!(v["packages"][0]["name"].is_string() && v["packages"][0]["version"].is_string());
    let lib = &v["libraries"][0];
    for k in ["path", "package", "sass", "ptx", "targets", "sass_counts"] {
        assert!(lib.get(k).is_some(), "libraries[].{k}");
    }
    assert!(["sass", "ptx-jit", "none"].contains(&lib["targets"]["sm_90"].as_str().unwrap()));
    assert!(v["problems"].is_array());
    let path = d.path().join("env.json");
    fs::write(&path, &buf).unwrap();
    let back = EnvReport::from_json_file(&path).unwrap();
    assert_eq!(back, r);
    // A bad file: the error names it.
    fs::write(&path, b"{ not json").unwrap();
    let e = EnvReport::from_json_file(&path).unwrap_err();
    assert!(e.to_string().starts_with("parse env report "), "{e}");
    assert!(e.to_string().contains("env.json"));
    let e = EnvReport::from_json_file(&d.path().join("missing.json")).unwrap_err();
    assert!(e.to_string().contains("missing.json"));
}

#[test]
fn text_and_markdown_render() {
    let (_d, r) = site_report(vec![gpu("NVIDIA H200", "9.0", "13.0")], &["sm_120"]);
    let mut buf = Vec::new();
    rosetta_env::render::text(
        &r,
        &mut buf,
        rosetta_env::render::TextOptions {
            color: false,
            counts: true,
        },
    )
    .unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(
        text.contains("NVIDIA H200 · sm_90 · 97887 MiB · driver 570.86.15 (CUDA 13.0)"),
        "{text}"
    );
    assert!(
        text.contains("flash-mla  flash_mla/cuda.cpython-312-x86_64-linux-gnu.so"),
        "{text}"
    );
    assert!(text.contains("sm_90a×2"), "{text}");
    assert!(text.contains("sm_120*"), "{text}");
    assert!(!text.contains('\x1b'));
    let mut buf = Vec::new();
    rosetta_env::render::markdown(&r, &mut buf).unwrap();
    let md = String::from_utf8(buf).unwrap();
    assert!(
        md.contains("| package | library | sm_90 | sm_120 | code |"),
        "{md}"
    );
}

#[test]
fn fake_nvidia_smi() {
    let d = tempfile::tempdir().unwrap();
    let smi = d.path().join("nvidia-smi");
    fs::write(
        &smi,
        "#!/bin/sh\nif [ -n \"$1\" ]; then echo '0, NVIDIA H200, 9.0, 580.159.04, 143771'; else echo '| NVIDIA-SMI 580.159.04  Driver Version: 580.159.04  CUDA Version: 13.0 |'; fi\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&smi, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Only this test probes GPUs, so setting the variable races with nothing.
    std::env::set_var("ROSETTA_NVIDIA_SMI", &smi);
    let p = rosetta_env::gpu::probe();
    std::env::remove_var("ROSETTA_NVIDIA_SMI");
    assert_eq!(p.gpus.len(), 1, "{:?}", p.notes);
    assert_eq!(p.gpus[0].cuda_driver_version.as_deref(), Some("13.0"));
    assert_eq!(p.gpus[0].memory_mib, Some(143771));
    assert_eq!(p.source.as_deref(), Some("nvidia-smi"));
}
