//! Builds the test guests under `plugins/testing/` and generates a path constant for each
//! (`warden_test_artifacts::HOSTILE`, ...), in the manner of wasmtime's
//! `crates/test-programs/artifacts`. Only crates that list this one as a dev-dependency build
//! them, so building the library never does.

#[path = "../../build_guests.rs"]
mod build_guests;

use std::path::PathBuf;

/// Packages of the std guest workspace (`plugins/`) that are test guests.
const STD_GUESTS: &[&str] = &[
    "hostile",
    "hostile-tool",
    "protect-secrets-std",
    "uses-exec",
    "uses-http",
    "uses-wasi-fs",
];

/// Lean (`#![no_std]`) test guests, each a cargo workspace of its own under `plugins/`.
const LEAN_GUESTS: &[(&str, &str)] = &[("lean-alloc", "testing/lean-alloc")];

fn main() {
    let root = build_guests::root(3);
    let plugins = root.join("plugins");
    let out_dir = PathBuf::from(build_guests::env("OUT_DIR"));

    build_guests::rerun(&root.join("sdk"));
    build_guests::rerun(&root.join("wit"));
    build_guests::rerun(&plugins.join("Cargo.toml"));
    build_guests::rerun(&plugins.join("Cargo.lock"));
    build_guests::rerun(&plugins.join("testing"));

    let target_dir = build_guests::target_dir(&root);
    let release = build_guests::build(&plugins, &target_dir, STD_GUESTS);
    for (_, dir) in LEAN_GUESTS {
        build_guests::build(&plugins.join(dir), &target_dir, &[]);
    }

    let mut generated = String::new();
    let packages = STD_GUESTS.iter().chain(LEAN_GUESTS.iter().map(|(p, _)| p));
    for package in packages {
        let krate = package.replace('-', "_");
        let wasm = build_guests::component(&release, &krate);
        generated.push_str(&format!(
            "/// Path of the `{package}` test guest component.\npub const {}: &str = {:?};\n",
            krate.to_uppercase(),
            wasm.display().to_string()
        ));
    }
    std::fs::write(out_dir.join("artifacts.rs"), generated).expect("write artifacts.rs");
}
