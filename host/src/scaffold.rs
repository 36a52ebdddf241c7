//! `warden new`: a plugin directory with one hook or tool component, ready for
//! `warden build` and `warden plugin validate`.
//!
//! Nothing generated names a path of the machine that built `warden`: a Rust plugin carries a
//! copy of the Rust SDK and its WIT in `vendor/`, the other languages' SDKs are handed over by
//! `warden build`. The directory is also a one-plugin marketplace
//! (`.claude-plugin/marketplace.json`). A tool is offered under the name its `describe()`
//! gives (`count` in the template), with the plugin's prefix:
//! `mcp__plugin_<plugin>_warden__count`.
//!
//! Like `cargo new`, it refuses a destination that already exists, and it writes the whole
//! tree into a temporary sibling first, so an error leaves nothing half-made.

use std::path::{Path, PathBuf};

use warden_plugins::{GuestLang, World};

/// Why a plugin could not be created.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The destination exists.
    #[error("destination {0} already exists; choose another name or remove it")]
    Exists(PathBuf),
    /// The name is not a valid plugin name.
    #[error("`{name}` is not a valid plugin name: {reason}")]
    BadName {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// What was created.
#[derive(Debug, Clone)]
pub struct Scaffolded {
    /// The plugin directory.
    pub dir: PathBuf,
    /// The plugin (and component) name.
    pub name: String,
    /// The files written, relative to `dir`.
    pub files: Vec<String>,
}

/// Checks a plugin name the way Claude Code's validator does, plus what makes it safe as a
/// directory and component name: lowercase letters, digits and `-`, starting with a letter.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".into());
    }
    if name.contains(' ') {
        return Err("plugin names cannot contain spaces".into());
    }
    if name.len() > 64 {
        return Err("it is longer than 64 characters".into());
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err("it must start with a lowercase letter".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "`{c}` is not allowed; use lowercase letters, digits and `-` (kebab-case)"
        ));
    }
    if name.ends_with('-') || name.contains("--") {
        return Err("dashes must separate words".into());
    }
    Ok(())
}

/// Creates the plugin at `dest` (its last segment is the name).
pub fn scaffold(dest: &Path, world: World, lang: GuestLang) -> Result<Scaffolded, ScaffoldError> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    check_name(&name).map_err(|reason| ScaffoldError::BadName {
        name: name.clone(),
        reason,
    })?;
    if dest.symlink_metadata().is_ok() {
        return Err(ScaffoldError::Exists(dest.to_path_buf()));
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|source| ScaffoldError::Io {
        path: parent.clone(),
        source,
    })?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.new-"))
        .tempdir_in(&parent)
        .map_err(|source| ScaffoldError::Io {
            path: parent.clone(),
            source,
        })?;
    let files = files(&name, world, lang);
    for (rel, text) in &files {
        let path = staging.path().join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| ScaffoldError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, text).map_err(|source| ScaffoldError::Io {
            path: path.clone(),
            source,
        })?;
    }
    let staged = staging.keep();
    // `rename` onto a path that appeared meanwhile fails for a non-empty directory; a file or
    // an empty directory there is still refused, as at the start.
    if dest.symlink_metadata().is_ok() {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(ScaffoldError::Exists(dest.to_path_buf()));
    }
    std::fs::rename(&staged, dest).map_err(|source| {
        let _ = std::fs::remove_dir_all(&staged);
        ScaffoldError::Io {
            path: dest.to_path_buf(),
            source,
        }
    })?;
    Ok(Scaffolded {
        dir: dest.to_path_buf(),
        name,
        files: files.into_iter().map(|(p, _)| p).collect(),
    })
}

/// The `warden-sdk` dependency line of a Rust guest: the copy of the SDK in the plugin (see
/// [`vendored_rust_sdk`]), so the plugin builds wherever it is put, with no path of the machine
/// that built `warden` and no network beyond crates.io.
const RUST_SDK_DEPENDENCY: &str =
    "warden_sdk = { package = \"warden-sdk\", path = \"vendor/warden-sdk\" }";

/// The Rust SDK as a Rust plugin keeps it: `vendor/warden-sdk/` (sources, build script and a
/// manifest that stands alone) beside `vendor/wit/v0.1/`, the WIT package the SDK's build
/// script and bindings read from `../wit/v0.1`. Both are the files compiled into this binary.
pub fn vendored_rust_sdk() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (rel, bytes) in crate::build::embedded_files() {
        let text = String::from_utf8_lossy(bytes).into_owned();
        if *rel == "sdk/Cargo.toml" {
            out.push((
                "vendor/warden-sdk/Cargo.toml".to_string(),
                standalone_manifest(&text),
            ));
        } else if *rel == "sdk/build.rs" || rel.starts_with("sdk/src/") {
            let rest = rel.trim_start_matches("sdk/");
            out.push((format!("vendor/warden-sdk/{rest}"), text));
        } else if rel.starts_with("wit/v0.1/") {
            out.push((format!("vendor/{rel}"), text));
        }
    }
    out.sort();
    out
}

/// The SDK's manifest without what it inherits from Warden's workspace, which a plugin does
/// not have: the inherited keys get this build's values, and the workspace lints go.
fn standalone_manifest(text: &str) -> String {
    let mut out = format!(
        "# Warden's Rust SDK (warden-sdk {}), copied here by `warden new` so this plugin builds\n# without a Warden checkout. Replace this directory to move to another SDK version.\n",
        env!("CARGO_PKG_VERSION")
    );
    let mut in_lints = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_lints = trimmed == "[lints]";
        }
        if in_lints {
            continue;
        }
        let inherited = match trimmed {
            "version.workspace = true" => {
                Some(format!("version = \"{}\"", env!("CARGO_PKG_VERSION")))
            }
            "edition.workspace = true" => Some("edition = \"2024\"".to_string()),
            "rust-version.workspace = true" => Some(format!(
                "rust-version = \"{}\"",
                env!("CARGO_PKG_RUST_VERSION")
            )),
            "license.workspace = true" => {
                Some(format!("license = \"{}\"", env!("CARGO_PKG_LICENSE")))
            }
            "publish.workspace = true" => Some("publish = false".to_string()),
            _ => None,
        };
        out.push_str(inherited.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// `.claude-plugin/marketplace.json`: the plugin directory is also a marketplace of one
/// plugin (itself, `./`), so `warden plugin marketplace add DIR` and Claude Code's
/// `/plugin marketplace add DIR` install it as they install any other.
fn marketplace_json(name: &str, description: &str) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "name": name,
        "owner": { "name": author() },
        "description": format!("The {name} plugin, under development."),
        "plugins": [{
            "name": name,
            "source": "./",
            "description": description,
        }],
    }))
    .unwrap_or_default()
        + "\n"
}

fn files(name: &str, world: World, lang: GuestLang) -> Vec<(String, String)> {
    let snake = name.replace('-', "_");
    let camel: String = name
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    let world_name = match world {
        World::Hook => "hook",
        World::Tool => "tool",
    };
    let template = templates::get(lang, world);
    let fill = |s: &str| {
        s.replace("{{name}}", name)
            .replace("{{snake}}", &snake)
            .replace("{{camel}}", &camel)
            .replace("{{sdk}}", RUST_SDK_DEPENDENCY)
    };
    let source = template.source_path;
    let build = match lang {
        GuestLang::Rust => "{ lang = \"rust\", source = \".\" }".to_string(),
        _ => format!("{{ lang = \"{}\", source = \"{source}\" }}", lang.name()),
    };
    let wiring = match world {
        World::Hook => format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n# A guard that cannot run must not let the call through.\nhooks = [{{ type = \"wasm\", component = \"{name}\", timeout = 5, onFailure = \"block\" }}]\n"
        ),
        World::Tool => String::new(),
    };
    let tools_line = match world {
        World::Hook => String::new(),
        World::Tool => {
            format!("# The components exposed to the model as tools.\ntools = [\"{name}\"]\n\n")
        }
    };
    let warden_toml = format!(
        "# Warden's part of this plugin. Claude Code reads only .claude-plugin/plugin.json and\n# leaves this file alone; Warden runs the component below in a WebAssembly sandbox.\n{tools_line}[components.{name}]\npath = \"wasm/{name}.wasm\"\nworld = \"{world_name}\"\n# Nothing outside the sandbox: no files, network, environment or programs. Ask only for\n# what the component needs; the user grants it at install.\ncapabilities = {{ fs = [], net = [], env = [], exec = [] }}\n# `warden build` runs this language's toolchain to make `path`.\nbuild = {build}\n\n{wiring}"
    );
    let what = match world {
        World::Hook => "A PreToolUse hook on Bash that denies `rm -rf /` and asks before `sudo`",
        World::Tool => "A tool that counts the lines, words and bytes of a text",
    };
    let description = format!("{what}, as a sandboxed WebAssembly component.");
    let plugin_json = serde_json::to_string_pretty(&serde_json::json!({
        "name": name,
        "version": "0.1.0",
        "description": description,
        "author": { "name": author() },
        "keywords": ["warden", "wasm", world_name],
    }))
    .unwrap_or_default()
        + "\n";
    let readme = format!(
        "# {name}\n\n{what}, written in {lang_title} and run by Warden as a WebAssembly component in a fresh sandbox\nfor every {call}: it gets no files, network, environment or programs unless `warden.toml` asks\nfor them and the user grants them.\n\n## Build\n\n```sh\nwarden build            # writes wasm/{name}.wasm\nwarden plugin validate .\n```\n\n{toolchain}\n\n## Try it\n\n{try_it}\n\n## Install\n\nThis directory is also a marketplace of one plugin (`.claude-plugin/marketplace.json`):\n\n```sh\nwarden plugin marketplace add .\nwarden plugin install {name}@{name}\n```\n\nTo try it without installing: `warden run --plugin-dir . ...`.\n",
        lang_title = match lang {
            GuestLang::Rust => "Rust",
            GuestLang::Python => "Python",
            GuestLang::Js => "JavaScript",
            GuestLang::C => "C",
        },
        call = match world {
            World::Hook => "event",
            World::Tool => "call",
        },
        toolchain = template.toolchain,
        try_it = match world {
            World::Hook => format!(
                "```sh\necho '{{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"sudo ls\"}},\"cwd\":\"/tmp\",\"session_id\":\"s\",\"transcript_path\":\"/tmp/t.jsonl\"}}' \\\n  | warden hook-wasm wasm/{name}.wasm PreToolUse\n```"
            ),
            World::Tool => format!(
                "Install the plugin, then call the tool; `warden mcp serve` and `warden run` offer it too.\nIts name is the one its `describe()` gives (`count`), under the plugin's prefix:\n\n```sh\nwarden tool mcp__plugin_{name}_warden__count --input '{{\"text\":\"one two\\nthree\\n\"}}'\n```"
            ),
        },
    );
    let mut out = vec![
        (".claude-plugin/plugin.json".to_string(), plugin_json),
        ("warden.toml".to_string(), warden_toml),
        (
            ".claude-plugin/marketplace.json".to_string(),
            marketplace_json(name, &description),
        ),
        ("README.md".to_string(), readme),
        (
            ".gitignore".to_string(),
            "/wasm/\n/target/\n/node_modules/\n__pycache__/\n".to_string(),
        ),
    ];
    for (path, text) in template.files {
        out.push((fill(path), fill(text)));
    }
    if lang == GuestLang::Rust {
        out.extend(vendored_rust_sdk());
    }
    out
}

/// `git config user.name`, else a placeholder to edit.
fn author() -> String {
    std::process::Command::new("git")
        .args(["config", "user.name"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "Your Name".to_string())
}

mod templates {
    use warden_plugins::{GuestLang, World};

    /// One language's files for one world.
    pub struct Template {
        /// The `source` written in the `build` key.
        pub source_path: &'static str,
        /// (path, text) with `{{name}}`, `{{snake}}`, `{{camel}}` and `{{sdk}}` to fill.
        pub files: &'static [(&'static str, &'static str)],
        /// The README's paragraph on the toolchain.
        pub toolchain: &'static str,
    }

    pub fn get(lang: GuestLang, world: World) -> Template {
        match (lang, world) {
            (GuestLang::Rust, World::Hook) => Template {
                source_path: ".",
                files: &[
                    ("Cargo.toml", RUST_CARGO),
                    ("src/lib.rs", include_str!("templates/rust_hook.rs")),
                ],
                toolchain: RUST_TOOLCHAIN,
            },
            (GuestLang::Rust, World::Tool) => Template {
                source_path: ".",
                files: &[
                    ("Cargo.toml", RUST_CARGO),
                    ("src/lib.rs", include_str!("templates/rust_tool.rs")),
                ],
                toolchain: RUST_TOOLCHAIN,
            },
            (GuestLang::Python, World::Hook) => Template {
                source_path: "hook.py",
                files: &[("hook.py", include_str!("templates/python_hook.py"))],
                toolchain: PYTHON_TOOLCHAIN,
            },
            (GuestLang::Python, World::Tool) => Template {
                source_path: "tool.py",
                files: &[("tool.py", include_str!("templates/python_tool.py"))],
                toolchain: PYTHON_TOOLCHAIN,
            },
            (GuestLang::Js, World::Hook) => Template {
                source_path: "hook.js",
                files: &[
                    ("hook.js", include_str!("templates/js_hook.js")),
                    ("package.json", JS_PACKAGE),
                ],
                toolchain: JS_TOOLCHAIN,
            },
            (GuestLang::Js, World::Tool) => Template {
                source_path: "tool.js",
                files: &[
                    ("tool.js", include_str!("templates/js_tool.js")),
                    ("package.json", JS_PACKAGE),
                ],
                toolchain: JS_TOOLCHAIN,
            },
            (GuestLang::C, World::Hook) => Template {
                source_path: "hook.c",
                files: &[("hook.c", include_str!("templates/c_hook.c"))],
                toolchain: C_TOOLCHAIN,
            },
            (GuestLang::C, World::Tool) => Template {
                source_path: "tool.c",
                files: &[("tool.c", include_str!("templates/c_tool.c"))],
                toolchain: C_TOOLCHAIN,
            },
        }
    }

    const RUST_CARGO: &str = "[package]\nname = \"{{name}}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\n{{sdk}}\nserde_json = \"1\"\n\n# Its own workspace, so it builds wherever the directory is put.\n[workspace]\n\n[profile.release]\n# Small components compile and instantiate faster.\nopt-level = \"s\"\nlto = true\ncodegen-units = 1\nstrip = true\npanic = \"abort\"\n";
    const RUST_TOOLCHAIN: &str = "It needs Rust with the `wasm32-wasip2` target (`rustup target add wasm32-wasip2`);\n`warden build` runs `cargo build --release --target wasm32-wasip2` and copies the component.\nWarden's Rust SDK is in `vendor/` (a copy `warden new` wrote), so the plugin builds anywhere.";
    const PYTHON_TOOLCHAIN: &str = "It needs `componentize-py` (`pip install componentize-py==0.25.1`). Warden's Python SDK\n(`warden_sdk`) is built into `warden` and handed to it by `warden build`.";
    const JS_TOOLCHAIN: &str = "It needs Node.js and the npm package `componentize-qjs` (`npm install`, which reads\n`package.json`). Warden's JavaScript SDK is built into `warden` and handed to it by `warden build`.";
    const C_TOOLCHAIN: &str = "It needs clang with wasi-libc (`apt-get install clang-19 lld-19 wasi-libc\nlibclang-rt-19-dev-wasm32`) and Rust's `wasm-component-ld` (it ships with rustup). Warden's C SDK\n(`warden.h` and the generated bindings) is built into `warden` and handed to clang by `warden build`.";
    const JS_PACKAGE: &str = "{\n  \"name\": \"{{name}}\",\n  \"private\": true,\n  \"type\": \"module\",\n  \"devDependencies\": {\n    \"componentize-qjs\": \"0.4.5\"\n  }\n}\n";
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORLDS: [World; 2] = [World::Hook, World::Tool];

    #[test]
    fn no_generated_file_names_a_path_of_the_build_machine() {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the checkout")
            .to_string_lossy()
            .into_owned();
        for lang in GuestLang::ALL {
            for world in WORLDS {
                for (path, text) in files("word-count", world, lang) {
                    assert!(
                        !text.contains(&checkout),
                        "{lang} {path} names the checkout {checkout}"
                    );
                    // The SDK's own sources are copied as they are (its build script writes `{{`).
                    assert!(
                        path.starts_with("vendor/") || !text.contains("{{"),
                        "{lang} {path} has a placeholder left"
                    );
                }
            }
        }
    }

    #[test]
    fn a_rust_plugin_carries_a_standalone_sdk_and_its_wit() {
        let files = files("word-count", World::Tool, GuestLang::Rust);
        let get = |p: &str| {
            files
                .iter()
                .find(|(path, _)| path == p)
                .map(|(_, t)| t.clone())
                .unwrap_or_else(|| panic!("{p} is not generated"))
        };
        assert!(get("Cargo.toml").contains("path = \"vendor/warden-sdk\""));
        let manifest: toml::Table = get("vendor/warden-sdk/Cargo.toml")
            .parse()
            .expect("the vendored manifest parses");
        assert!(manifest.get("lints").is_none(), "{manifest:?}");
        let package = manifest["package"].as_table().expect("[package]");
        for key in ["version", "edition", "rust-version", "license", "publish"] {
            assert!(
                !package[key].is_table(),
                "{key} is still inherited from a workspace: {package:?}"
            );
        }
        assert_eq!(package["name"].as_str(), Some("warden-sdk"));
        get("vendor/warden-sdk/build.rs");
        get("vendor/warden-sdk/src/lib.rs");
        for wit in ["log", "fs", "exec", "http", "env"] {
            get(&format!("vendor/wit/v0.1/{wit}.wit"));
        }
    }

    #[test]
    fn the_plugin_is_a_marketplace_of_itself_and_its_readme_names_the_tool_describe_names() {
        for lang in GuestLang::ALL {
            let files = files("word-count", World::Tool, lang);
            let mkt = files
                .iter()
                .find(|(p, _)| p == ".claude-plugin/marketplace.json")
                .expect("marketplace.json");
            let mkt: serde_json::Value = serde_json::from_str(&mkt.1).expect("JSON");
            assert_eq!(mkt["plugins"][0]["name"], "word-count");
            assert_eq!(mkt["plugins"][0]["source"], "./");
            assert_eq!(mkt["plugins"].as_array().map(Vec::len), Some(1));
            let source = &files
                .iter()
                .find(|(p, _)| p.contains("tool") || p == "src/lib.rs");
            let (path, text) = source.expect("the tool's source");
            assert!(
                text.contains("\"count\""),
                "{lang} {path}: describe() does not name the tool count"
            );
            let readme = &files
                .iter()
                .find(|(p, _)| p == "README.md")
                .expect("README.md")
                .1;
            assert!(
                readme.contains("warden tool mcp__plugin_word-count_warden__count "),
                "{lang}: {readme}"
            );
        }
    }
}
