//! Turns the frozen WIT package into the literal the export macros hand to `wit_bindgen`,
//! so a guest crate generates its world's bindings itself (one world per component) without
//! needing a copy of the WIT files.

use std::path::Path;

fn main() {
    // A `#![no_std]` guest still needs `memcpy`, `memcmp` and friends, which on WASI come from
    // wasi-libc (a std guest links it anyway). None of them imports anything from the host.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("wasi") {
        println!("cargo:rustc-link-lib=c");
    }
    let wit_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/v0.1");
    println!("cargo:rerun-if-changed={}", wit_dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&wit_dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", wit_dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wit"))
        .collect();
    files.sort();
    let mut wit = String::from("package warden:plugin@0.1.0;\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let text = std::fs::read_to_string(f)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
        for line in text.lines() {
            if !line.trim_start().starts_with("package ") {
                wit.push_str(line);
                wit.push('\n');
            }
        }
    }
    let imports = ["log", "fs", "exec", "http", "env"]
        .iter()
        .map(|i| format!("\"warden:plugin/{i}@0.1.0\": warden_sdk::bindings::warden::plugin::{i},"))
        .collect::<String>();
    let mut out = String::new();
    for world in ["hook", "tool"] {
        out.push_str(&format!(
            "#[doc(hidden)]\n#[macro_export]\nmacro_rules! __generate_{world} {{\n    () => {{\n        warden_sdk::__private::wit_bindgen::generate!({{\n            inline: r####\"{wit}\"####,\n            world: \"warden:plugin/{world}\",\n            runtime_path: \"warden_sdk::__private::wit_bindgen::rt\",\n            with: {{ {imports} }},\n            generate_all,\n        }});\n    }};\n}}\n"
        ));
    }
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("generate.rs"), out).expect("write generate.rs");
}
