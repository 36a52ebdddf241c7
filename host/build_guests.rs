//! Building guest components for `wasm32-wasip2` from a build script, shared by `host/build.rs`
//! (built-in tools and example plugins) and `host/crates/test-artifacts/build.rs` (test
//! guests). Follows wasmtime's test-programs pattern: a nested cargo with its own target
//! directory (so it never waits on the outer build's lock) and a clean environment, plus
//! `rerun-if-changed` for every guest source.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The checkout root, from the manifest directory of the crate whose build script runs and
/// the number of directories it sits below the root.
pub fn root(levels: usize) -> PathBuf {
    let mut dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    for _ in 0..levels {
        dir = dir
            .parent()
            .expect("the manifest directory is inside the checkout")
            .to_path_buf();
    }
    dir
}

/// Where guests are built: `guests/` under the outer target directory.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("guests"),
        None => root.join("target").join("guests"),
    }
}

/// Builds `packages` (all of them if empty) of the guest workspace in `dir` for
/// wasm32-wasip2, into `target_dir`; returns the directory the components land in.
pub fn build(dir: &Path, target_dir: &Path, packages: &[&str]) -> PathBuf {
    ensure_wasm_target();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", target_dir);
    if packages.is_empty() {
        cmd.arg("--workspace");
    }
    for p in packages {
        cmd.args(["-p", p]);
    }
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("run cargo for the guest components");
    if !status.success() {
        panic!(
            "building the guest components in {} failed (see the cargo output above)",
            dir.display()
        );
    }
    target_dir.join("wasm32-wasip2").join("release")
}

/// The built component of crate `krate` (underscored) in `release`, which must exist.
pub fn component(release: &Path, krate: &str) -> PathBuf {
    let wasm = release.join(format!("{krate}.wasm"));
    assert!(
        wasm.exists(),
        "guest component {} was not produced",
        wasm.display()
    );
    wasm
}

pub fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("cargo sets {key}"))
}

/// Installs the wasm32-wasip2 standard library on first use, so a fresh machine needs no
/// setup step (rust-toolchain.toml names the target, but rustup does not add targets to a
/// toolchain that is already installed).
fn ensure_wasm_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(sysroot) = sysroot else { return };
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if sysroot.join("lib/rustlib/wasm32-wasip2").exists() {
        return;
    }
    let mut cmd = Command::new("rustup");
    cmd.args(["target", "add", "wasm32-wasip2"]);
    if let Ok(tc) = std::env::var("RUSTUP_TOOLCHAIN") {
        cmd.args(["--toolchain", &tc]);
    }
    match cmd.status() {
        Ok(s) if s.success() => {}
        _ => panic!(
            "the wasm32-wasip2 target is missing and `rustup target add wasm32-wasip2` failed; run it by hand"
        ),
    }
}

/// `rerun-if-changed` for every file under `path` (or `path` itself if it is a file).
pub fn rerun(path: &Path) {
    if path.is_file() {
        println!("cargo:rerun-if-changed={}", path.display());
        return;
    }
    let Ok(rd) = std::fs::read_dir(path) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name == "target" || name == "wasm" || name.starts_with('.') && name != ".claude-plugin" {
            continue;
        }
        rerun(&p);
    }
}
