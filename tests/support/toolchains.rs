//! The guest-language toolchains `warden build` drives, pinned and installed on first use
//! under `<target>/toolchains` (beside the profile directory holding the warden binary):
//!
//! - `py/`: a virtual environment with `componentize-py==COMPONENTIZE_PY`;
//! - `js/`: `npm install` of `componentize-qjs@COMPONENTIZE_QJS`;
//! - `jco/`: jco's type generator (`JCO_TYPEGEN`), for the check of `sdk/js/types`;
//! - clang 19, wasi-libc and clang's wasm32 runtime from Debian (`apt-get`), when missing.
//!
//! [`env`] gives the variables that point `warden build` at them. Built components are
//! cached under `<target>/toolchains/cache`, keyed by the sha256 of everything that goes
//! into them, so a repeated run builds nothing. Threads serialise on a `OnceLock` per tool,
//! processes on a lock file, as in `peers.rs`.

#![allow(dead_code)]

#[path = "peers.rs"]
pub mod peers;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// PyPI `componentize-py`.
pub const COMPONENTIZE_PY: &str = "0.25.1";
/// npm `componentize-qjs`.
pub const COMPONENTIZE_QJS: &str = "0.4.5";
/// Debian's packages for C guests.
pub const C_PACKAGES: &[&str] = &[
    "clang-19",
    "lld-19",
    "wasi-libc",
    "libclang-rt-19-dev-wasm32",
];

/// `<target>/toolchains`.
pub fn root() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_warden"));
    let profile = bin.parent().expect("profile dir");
    let root = profile.parent().unwrap_or(profile).join("toolchains");
    std::fs::create_dir_all(&root).expect("create the toolchains dir");
    root
}

fn lock(name: &str) -> File {
    let file = File::create(root().join(format!("{name}.lock"))).expect("lock file");
    file.lock().expect("lock the toolchains dir");
    file
}

fn marker_matches(marker: &Path, expected: &str) -> bool {
    std::fs::read_to_string(marker).is_ok_and(|m| m == expected)
}

/// `componentize-py` in its pinned venv.
pub fn componentize_py() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let root = root();
        let venv = root.join("py");
        let bin = venv.join("bin/componentize-py");
        let marker = root.join("py.installed");
        let expected = format!("componentize-py=={COMPONENTIZE_PY}\n");
        let _lock = lock("py");
        if bin.exists() && marker_matches(&marker, &expected) {
            return bin;
        }
        let _ = std::fs::remove_file(&marker);
        let made = Command::new(peers::python3())
            .args(["-m", "venv", "--clear"])
            .arg(&venv)
            .output()
            .expect("run python3 -m venv");
        assert!(
            made.status.success(),
            "python3 -m venv: {}",
            peers::text(&made)
        );
        let pip = Command::new(venv.join("bin/python3"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("componentize-py=={COMPONENTIZE_PY}"))
            .output()
            .expect("run pip");
        assert!(
            pip.status.success(),
            "pip install componentize-py=={COMPONENTIZE_PY} failed (PyPI is needed once): {}",
            peers::text(&pip)
        );
        std::fs::write(&marker, expected).expect("write the marker");
        bin
    })
    .clone()
}

/// The directory of the pinned `componentize-qjs` package.
pub fn componentize_qjs() -> PathBuf {
    static QJS: OnceLock<PathBuf> = OnceLock::new();
    QJS.get_or_init(|| {
        let dir = root().join("js");
        let package = dir.join("node_modules/componentize-qjs");
        let marker = root().join("js.installed");
        let expected = format!("componentize-qjs@{COMPONENTIZE_QJS}\n");
        let _lock = lock("js");
        if package.join("package.json").is_file() && marker_matches(&marker, &expected) {
            return package;
        }
        let _ = std::fs::remove_file(&marker);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the js toolchain dir");
        std::fs::write(
            dir.join("package.json"),
            format!(
                "{{\"name\":\"warden-js-toolchain\",\"private\":true,\"dependencies\":{{\"componentize-qjs\":\"{COMPONENTIZE_QJS}\"}}}}\n"
            ),
        )
        .expect("write package.json");
        let out = Command::new(peers::npm())
            .args(["install", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("run npm");
        assert!(
            out.status.success(),
            "npm install componentize-qjs@{COMPONENTIZE_QJS} failed (the npm registry is needed once):\n{}",
            peers::text(&out)
        );
        std::fs::write(&marker, expected).expect("write the marker");
        package
    })
    .clone()
}

/// The type generator `sdk/js/gen-types.mjs` runs: jco's `@bytecodealliance/jco-transpile`
/// and the WASI shim it runs on, at the versions jco 1.35.0 resolves them to.
pub const JCO_TYPEGEN: &[(&str, &str)] =
    &[("jco-transpile", "0.15.0"), ("preview2-shim", "0.26.0")];

/// The directory of the pinned `@bytecodealliance/jco-transpile`, with only the WASI shim
/// beside it: `npm pack` and unpack rather than `npm install`, since the type generator
/// needs neither its optimiser (binaryen, ~90 MB) nor its minifier.
pub fn jco_typegen() -> PathBuf {
    static JCO: OnceLock<PathBuf> = OnceLock::new();
    JCO.get_or_init(|| {
        let dir = root().join("jco");
        let scope = dir.join("node_modules/@bytecodealliance");
        let marker = root().join("jco.installed");
        let expected = format!("{JCO_TYPEGEN:?}\n");
        let _lock = lock("jco");
        if marker_matches(&marker, &expected) {
            return scope.join("jco-transpile");
        }
        let _ = std::fs::remove_file(&marker);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&scope).expect("create the jco dir");
        for (name, version) in JCO_TYPEGEN {
            let out = Command::new(peers::npm())
                .args(["pack", "--silent", &format!("@bytecodealliance/{name}@{version}")])
                .current_dir(&dir)
                .output()
                .expect("run npm");
            assert!(
                out.status.success(),
                "npm pack @bytecodealliance/{name}@{version} failed (the npm registry is needed once):\n{}",
                peers::text(&out)
            );
            let tarball = dir.join(format!("bytecodealliance-{name}-{version}.tgz"));
            let dest = scope.join(name);
            std::fs::create_dir_all(&dest).expect("create the package dir");
            let out = Command::new("tar")
                .arg("xzf")
                .arg(&tarball)
                .arg("-C")
                .arg(&dest)
                .arg("--strip-components=1")
                .output()
                .expect("run tar");
            assert!(out.status.success(), "unpack {}: {}", tarball.display(), peers::text(&out));
        }
        std::fs::write(&marker, expected).expect("write the marker");
        scope.join("jco-transpile")
    })
    .clone()
}

fn c_present() -> bool {
    Path::new("/usr/bin/clang-19").exists()
        && Path::new("/usr/include/wasm32-wasi/stdlib.h").exists()
        && Path::new("/usr/lib/llvm-19/lib/clang/19/lib/wasi").exists()
}

/// clang 19 with wasi-libc, installed with `apt-get` when missing.
pub fn clang() -> PathBuf {
    static CLANG: OnceLock<PathBuf> = OnceLock::new();
    CLANG
        .get_or_init(|| {
            if !c_present() {
                peers::apt_install(C_PACKAGES, || !c_present())
                    .unwrap_or_else(|e| panic!("the C toolchain: {e}"));
            }
            PathBuf::from("/usr/bin/clang-19")
        })
        .clone()
}

/// The variables that point `warden build` at the pinned toolchains (installing them first).
pub fn env() -> Vec<(&'static str, PathBuf)> {
    vec![
        ("WARDEN_COMPONENTIZE_PY", componentize_py()),
        ("WARDEN_COMPONENTIZE_QJS", componentize_qjs()),
        ("WARDEN_NODE", peers::node()),
        ("WARDEN_CLANG", clang()),
        // Rust guests share one target directory, so their dependencies build once.
        ("CARGO_TARGET_DIR", root().join("cargo-target")),
    ]
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

fn hash_tree(h: &mut Sha256, base: &Path, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if matches!(
            name.as_str(),
            "wasm" | "target" | "node_modules" | "__pycache__"
        ) {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            hash_tree(h, base, &path);
        } else if let Ok(bytes) = std::fs::read(&path) {
            h.update(
                path.strip_prefix(base)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .as_bytes(),
            );
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
}

/// Runs `warden build` on the plugin at `dir`, unless the cache holds components built from
/// exactly these sources, SDKs, WIT and tool pins; returns each component's path.
pub fn build(dir: &Path) -> Vec<PathBuf> {
    let mut h = Sha256::new();
    h.update(format!("{COMPONENTIZE_PY} {COMPONENTIZE_QJS} {C_PACKAGES:?}\n").as_bytes());
    hash_tree(&mut h, dir, dir);
    let repo = repo();
    for part in ["wit", "sdk"] {
        hash_tree(&mut h, &repo, &repo.join(part));
    }
    let key = hex::encode(h.finalize());
    let cache = root().join("cache").join(&key);
    let toml: toml::Table = std::fs::read_to_string(dir.join("warden.toml"))
        .expect("read warden.toml")
        .parse()
        .expect("parse warden.toml");
    let outputs: Vec<(String, PathBuf)> = toml
        .get("components")
        .and_then(|c| c.as_table())
        .into_iter()
        .flatten()
        .filter(|(_, c)| c.get("build").is_some())
        .map(|(name, c)| {
            let rel = c.get("path").and_then(|p| p.as_str()).expect("path");
            (name.clone(), dir.join(rel))
        })
        .collect();
    // One build of a plugin at a time, across threads and test processes.
    let _lock = lock(&format!("build-{}", &key[..16]));
    let cached = outputs
        .iter()
        .all(|(name, _)| cache.join(format!("{name}.wasm")).is_file());
    if cached {
        for (name, out) in &outputs {
            std::fs::create_dir_all(out.parent().expect("parent")).expect("mkdir");
            std::fs::copy(cache.join(format!("{name}.wasm")), out).expect("copy from the cache");
        }
    } else {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
        cmd.arg("build").arg(dir);
        for (k, v) in env() {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run warden build");
        assert!(
            out.status.success(),
            "warden build {} failed:\n{}",
            dir.display(),
            peers::text(&out)
        );
        std::fs::create_dir_all(&cache).expect("create the cache entry");
        for (name, out) in &outputs {
            std::fs::copy(out, cache.join(format!("{name}.wasm"))).expect("fill the cache");
        }
    }
    outputs.into_iter().map(|(_, p)| p).collect()
}
