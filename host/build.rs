//! Builds the guest components in `plugins/` for `wasm32-wasip2` and tells the crate where
//! they are (`warden::guests`), following wasmtime's test-programs pattern: a nested cargo
//! with its own target directory (so it never waits on the outer build's lock) and a clean
//! environment, plus `rerun-if-changed` for every guest source.
//!
//! The example plugins' components are also copied to `plugins/<plugin>/wasm/`, where their
//! `plugin.json` points, so the example marketplace works from a built checkout.

use std::path::{Path, PathBuf};
use std::process::Command;

/// (crate name, plugin directory if the crate is an example plugin)
const GUESTS: &[(&str, Option<&str>)] = &[
    ("protect_secrets", Some("protect-secrets")),
    ("protect_secrets_std", None),
    ("lean_alloc", None),
    ("hostile", None),
    ("uses_exec", None),
    ("uses_wasi_fs", None),
    ("uses_http", None),
];

/// Lean (`#![no_std]`) hooks under `plugins/`, each a cargo workspace of its own.
const LEAN_GUESTS: &[&str] = &["protect-secrets", "testing/lean-alloc"];

/// Guest crates of the built-in tools; their bytes are embedded in the host
/// (`warden::guests::TOOL_<NAME>_WASM`).
const TOOLS: &[&str] = &[
    "tool_read",
    "tool_write",
    "tool_edit",
    "tool_glob",
    "tool_grep",
    "tool_bash",
];

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("host/ has a parent")
        .to_path_buf();
    let plugins = root.join("plugins");
    let out_dir = PathBuf::from(env("OUT_DIR"));

    for dir in ["plugins", "sdk", "wit"] {
        rerun_tree(&root.join(dir));
    }

    let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("guests"),
        None => root.join("target").join("guests"),
    };
    ensure_wasm_target();
    // The std guests share one workspace; each lean (`no_std`) hook is a workspace of its own,
    // so that no std guest turns on `std` in the dependencies it shares with them.
    build_guests(&plugins, &target_dir);
    for lean in LEAN_GUESTS {
        build_guests(&plugins.join(lean), &target_dir);
    }

    let release = target_dir.join("wasm32-wasip2").join("release");
    let mut generated = String::new();
    for (krate, plugin_dir) in GUESTS {
        let wasm = release.join(format!("{krate}.wasm"));
        assert!(
            wasm.exists(),
            "guest component {} was not produced",
            wasm.display()
        );
        let upper = krate.to_uppercase();
        generated.push_str(&format!(
            "/// Path of the `{krate}` component.\npub const {upper}: &str = {:?};\n",
            wasm.display().to_string()
        ));
        if let Some(dir) = plugin_dir {
            let dest_dir = plugins.join(dir).join("wasm");
            std::fs::create_dir_all(&dest_dir).expect("create plugin wasm dir");
            let dest = dest_dir.join(format!("{krate}.wasm"));
            if std::fs::read(&dest).ok() != std::fs::read(&wasm).ok() {
                std::fs::copy(&wasm, &dest).expect("copy component into its plugin");
            }
            generated.push_str(&format!(
                "/// Bytes of the `{krate}` component.\npub const {upper}_WASM: &[u8] = include_bytes!({:?});\n",
                wasm.display().to_string()
            ));
        }
    }
    for krate in TOOLS {
        let wasm = release.join(format!("{krate}.wasm"));
        assert!(
            wasm.exists(),
            "tool component {} was not produced",
            wasm.display()
        );
        generated.push_str(&format!(
            "/// Bytes of the `{krate}` component.\npub const {}_WASM: &[u8] = include_bytes!({:?});\n",
            krate.to_uppercase(),
            wasm.display().to_string()
        ));
    }
    generated.push_str(&format!(
        "/// The example plugins directory.\npub const PLUGINS_DIR: &str = {:?};\n",
        plugins.display().to_string()
    ));
    std::fs::write(out_dir.join("guests.rs"), generated).expect("write guests.rs");
}

/// Builds every guest of the workspace in `dir` for wasm32-wasip2, into `target_dir`.
fn build_guests(dir: &Path, target_dir: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--workspace",
        ])
        .env("CARGO_TARGET_DIR", target_dir);
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
}

fn env(key: &str) -> String {
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

fn rerun_tree(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name == "target" || name == "wasm" || name.starts_with('.') && name != ".claude-plugin" {
            continue;
        }
        if p.is_dir() {
            rerun_tree(&p);
        } else {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
