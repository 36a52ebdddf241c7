//! Builds the guest components the library embeds or points to: the built-in tools (their
//! bytes and sha256 are embedded, `warden::guests::TOOL_<NAME>_WASM` and `_SHA256`) and the
//! example plugins, which are also copied to `plugins/<plugin>/wasm/`, where their
//! `plugin.json` points, so the example marketplace works from a built checkout. The test
//! guests are built by `host/crates/test-artifacts`, only for the tests that use them.

#[path = "build_guests.rs"]
mod build_guests;

use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// (crate name, plugin directory) of the example plugins written in Rust, each in a cargo
/// workspace of its own, so a std guest never turns on `std` in the dependencies a lean
/// (`#![no_std]`) one shares. Every plugin the example marketplace lists is built here (or has
/// no component), so each is ready to install after the first build; the examples in other
/// languages need their toolchains and are built with `warden build`.
const EXAMPLES: &[(&str, &str)] = &[
    ("protect_secrets", "protect-secrets"),
    ("audit_log", "audit-log"),
    ("json_query", "json-query"),
];

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

    embed_sdk(&root, &out_dir);
}

/// `sdk_files.rs`: the WIT package and the Python, JavaScript and C SDKs, which `warden build`
/// writes to a scratch directory, so a plugin needs nothing of the Warden checkout; and the
/// Rust SDK, which `warden new` copies into a Rust plugin.
fn embed_sdk(root: &std::path::Path, out_dir: &std::path::Path) {
    let mut files = Vec::new();
    // `sdk/src`, `sdk/build.rs` and `sdk/Cargo.toml` are the Rust SDK, which `warden new`
    // copies into a Rust plugin so it builds without this checkout.
    for dir in [
        "wit",
        "sdk/python",
        "sdk/js",
        "sdk/c",
        "sdk/src",
        "sdk/build.rs",
        "sdk/Cargo.toml",
    ] {
        let path = root.join(dir);
        // A directory as well as its files: cargo then notices files added to it.
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_file() {
            files.push((dir.to_string(), path));
        } else {
            collect(root, &path, &mut files);
        }
    }
    for (_, abs) in &files {
        build_guests::rerun(abs);
    }
    // Not watched: they are written by this script, and derive from `wit/`, which is.
    files.extend(c_bindings(root, out_dir));
    files.sort();
    let mut generated = String::from(
        "/// (path, bytes) of the embedded WIT and SDK files.\npub static SDK_FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, abs) in files {
        generated.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    generated.push_str("];\n");
    std::fs::write(out_dir.join("sdk_files.rs"), generated).expect("write sdk_files.rs");
}

/// The C SDK's bindings of each world (`<world>.c`, `<world>.h` and the object file carrying
/// the world's component type), generated from `wit/v0.1` with wit-bindgen's C generator into
/// `OUT_DIR/sdk-c-gen/`, as (`sdk/c/gen/<world>/<file>`, path) for the embedded SDK. Generated
/// here rather than committed, so they can never lag behind the WIT.
fn c_bindings(root: &std::path::Path, out_dir: &std::path::Path) -> Vec<(String, PathBuf)> {
    let wit = root.join("wit").join("v0.1");
    let mut out = Vec::new();
    for world in ["hook", "tool"] {
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve
            .push_dir(&wit)
            .unwrap_or_else(|e| panic!("{}: {e:?}", wit.display()));
        let id = resolve
            .select_world(&[package], Some(world))
            .unwrap_or_else(|e| panic!("{}: world {world}: {e:?}", wit.display()));
        let mut files = Default::default();
        wit_bindgen_c::Opts::default()
            .build()
            .generate(&mut resolve, id, &mut files)
            .unwrap_or_else(|e| panic!("C bindings of world {world}: {e:?}"));
        let dir = out_dir.join("sdk-c-gen").join(world);
        std::fs::create_dir_all(&dir).expect("create the C bindings directory");
        for (name, bytes) in files.iter() {
            let path = dir.join(name);
            std::fs::write(&path, bytes).expect("write a C binding file");
            out.push((format!("sdk/c/gen/{world}/{name}"), path));
        }
    }
    out
}

fn collect(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if matches!(name.as_str(), "__pycache__" | "node_modules" | "target")
            || name.starts_with('.')
        {
            continue;
        }
        let Ok(ty) = entry.file_type() else { continue };
        if ty.is_dir() {
            collect(root, &path, out);
        } else if ty.is_file() && !name.ends_with(".pyc") {
            let rel = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
