//! Builds the guest components the library embeds or points to: the built-in tools (their
//! bytes and sha256 are embedded, `warden::guests::TOOL_<NAME>_WASM` and `_SHA256`) and the
//! example plugins, which are also copied to `plugins/<plugin>/wasm/`, where their
//! `plugin.json` points, so the example marketplace works from a built checkout. The test
//! guests are built by `host/crates/test-artifacts`, only for the tests that use them.

#[path = "build_guests.rs"]
mod build_guests;

use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// (crate name, plugin directory) of the example plugins; each is a lean (`#![no_std]`) hook
/// in a cargo workspace of its own, so no std guest turns on `std` in the dependencies they
/// share.
const EXAMPLES: &[(&str, &str)] = &[("protect_secrets", "protect-secrets")];

/// Packages of the built-in tools in the std guest workspace.
const TOOLS: &[&str] = &[
    "tool-read",
    "tool-write",
    "tool-edit",
    "tool-glob",
    "tool-grep",
    "tool-bash",
];

fn main() {
    let root = build_guests::root(1);
    let plugins = root.join("plugins");
    let out_dir = PathBuf::from(build_guests::env("OUT_DIR"));

    build_guests::rerun(&root.join("sdk"));
    build_guests::rerun(&root.join("wit"));
    build_guests::rerun(&plugins.join("Cargo.toml"));
    build_guests::rerun(&plugins.join("Cargo.lock"));
    build_guests::rerun(&plugins.join("tools"));
    for (_, dir) in EXAMPLES {
        build_guests::rerun(&plugins.join(dir));
    }

    let target_dir = build_guests::target_dir(&root);
    let release = build_guests::build(&plugins, &target_dir, TOOLS);
    for (_, dir) in EXAMPLES {
        build_guests::build(&plugins.join(dir), &target_dir, &[]);
    }

    let mut generated = String::new();
    for (krate, dir) in EXAMPLES {
        let wasm = build_guests::component(&release, krate);
        let upper = krate.to_uppercase();
        generated.push_str(&format!(
            "/// Path of the `{krate}` component.\npub const {upper}: &str = {:?};\n",
            wasm.display().to_string()
        ));
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
    for package in TOOLS {
        let krate = package.replace('-', "_");
        let wasm = build_guests::component(&release, &krate);
        let bytes = std::fs::read(&wasm).expect("read a tool component");
        let upper = krate.to_uppercase();
        generated.push_str(&format!(
            "/// Bytes of the `{krate}` component.\npub const {upper}_WASM: &[u8] = include_bytes!({:?});\n\
             /// sha256 of [`{upper}_WASM`], the digest its grant is pinned to.\npub const {upper}_SHA256: &str = {:?};\n",
            wasm.display().to_string(),
            hex(&Sha256::digest(&bytes)),
        ));
    }
    generated.push_str(&format!(
        "/// The example plugins directory.\npub const PLUGINS_DIR: &str = {:?};\n",
        plugins.display().to_string()
    ));
    std::fs::write(out_dir.join("guests.rs"), generated).expect("write guests.rs");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
