//! How a plugin's components are built from source: the `build` key of a component in
//! `warden.toml`.
//!
//! ```toml
//! [components.guard]
//! path = "wasm/guard.wasm"
//! world = "hook"
//! build = { lang = "python", source = "hook.py" }
//! ```
//!
//! `lang` is `rust` (`source` is the crate directory holding `Cargo.toml`, default `.`),
//! `python` (one `.py` module), `js` (one `.js`/`.mjs` module) or `c` (one `.c` file or a
//! list of them). Every source must be a relative path inside the plugin root: a hostile
//! plugin must not get `warden build` to compile, or write, anything outside it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::diag::Diagnostic;
use crate::util::{Src, has_parent_segment};
use crate::warden::{WARDEN_TOML, World, read_warden_toml};

/// A guest language `warden build` knows how to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuestLang {
    /// Rust, with `cargo` for `wasm32-wasip2` and the `warden-sdk` crate.
    Rust,
    /// Python, with `componentize-py`.
    Python,
    /// JavaScript, with `node` and `componentize-qjs` (QuickJS).
    Js,
    /// C, with clang, wasi-libc and `wasm-component-ld`.
    C,
}

impl GuestLang {
    /// Every language, in the order `warden new --help` lists them.
    pub const ALL: [GuestLang; 4] = [
        GuestLang::Rust,
        GuestLang::Python,
        GuestLang::Js,
        GuestLang::C,
    ];

    /// The name written in `warden.toml`.
    pub fn name(self) -> &'static str {
        match self {
            GuestLang::Rust => "rust",
            GuestLang::Python => "python",
            GuestLang::Js => "js",
            GuestLang::C => "c",
        }
    }

    /// Parses the name written in `warden.toml` (`javascript` is accepted for `js`).
    pub fn parse(s: &str) -> Option<GuestLang> {
        match s {
            "rust" => Some(GuestLang::Rust),
            "python" => Some(GuestLang::Python),
            "js" | "javascript" => Some(GuestLang::Js),
            "c" => Some(GuestLang::C),
            _ => None,
        }
    }
}

impl std::fmt::Display for GuestLang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A component's `build` key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildSpec {
    /// The language.
    pub lang: GuestLang,
    /// The sources as written, relative to the plugin root (`rust`: one crate directory).
    pub sources: Vec<String>,
}

/// One component to build: where its sources are and where the component goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildTarget {
    /// The component's name.
    pub name: String,
    /// Its world.
    pub world: World,
    /// The output path as written (`path`).
    pub rel_path: String,
    /// The output path under the plugin root (not canonical: it may not exist yet).
    pub out: PathBuf,
    /// How to build it.
    pub spec: BuildSpec,
    /// The sources, canonical and inside the plugin root.
    pub source_paths: Vec<PathBuf>,
    /// The capabilities it asks for with a non-empty list, of `fs`, `net`, `exec`, `env`
    /// in that order: toolchains that import every interface of their world build against
    /// a world importing only these.
    pub capability_kinds: Vec<&'static str>,
}

/// Parses and checks a component's `build` value against the plugin `root` (canonical).
pub(crate) fn parse_build(
    comp: &str,
    v: &Value,
    root: &Path,
    file: &Path,
    src: Src<'_>,
    prefix: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<(BuildSpec, Vec<PathBuf>)> {
    let at = src.pos("build");
    let err = |diags: &mut Vec<Diagnostic>, msg: String| {
        diags.push(
            Diagnostic::error(file, format!("`{prefix}components.{comp}.build`: {msg}")).at(at),
        );
    };
    let Value::Object(o) = v else {
        err(
            diags,
            format!("must be {}, found {}", src.a_map(), src.type_name(v)),
        );
        return None;
    };
    for k in o.keys() {
        if !matches!(k.as_str(), "lang" | "source") {
            diags.push(
                Diagnostic::warning(
                    file,
                    format!("unknown key `{k}` in `{prefix}components.{comp}.build` is ignored (known: lang, source)"),
                )
                .at(at),
            );
        }
    }
    let lang = match o.get("lang") {
        Some(Value::String(s)) => match GuestLang::parse(s) {
            Some(l) => l,
            None => {
                err(
                    diags,
                    format!("unknown `lang` `{s}`; known: rust, python, js, c"),
                );
                return None;
            }
        },
        Some(other) => {
            err(
                diags,
                format!("`lang` must be a string, found {}", src.type_name(other)),
            );
            return None;
        }
        None => {
            err(
                diags,
                "needs `lang`: \"rust\", \"python\", \"js\" or \"c\"".into(),
            );
            return None;
        }
    };
    let sources: Vec<String> = match o.get("source") {
        None if lang == GuestLang::Rust => vec![".".into()],
        None => {
            err(diags, format!("needs `source`, the {lang} file to build"));
            return None;
        }
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) if lang == GuestLang::C && !items.is_empty() => {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => out.push(s.clone()),
                    other => {
                        err(
                            diags,
                            format!(
                                "every `source` must be a string, found {}",
                                src.type_name(other)
                            ),
                        );
                        return None;
                    }
                }
            }
            out
        }
        Some(other) => {
            let want = if lang == GuestLang::C {
                "a string or a non-empty array of strings"
            } else {
                "a string"
            };
            err(
                diags,
                format!("`source` must be {want}, found {}", src.type_name(other)),
            );
            return None;
        }
    };
    let mut paths = Vec::new();
    for s in &sources {
        if s.is_empty() || s.starts_with('/') || s.starts_with('\\') || has_parent_segment(s) {
            err(
                diags,
                format!("source `{s}` must be a path relative to the plugin root without `..`"),
            );
            return None;
        }
        let full = root.join(s.trim_start_matches("./"));
        let canon = match full.canonicalize() {
            Ok(c) => c,
            Err(_) => {
                err(diags, format!("source {} does not exist", full.display()));
                return None;
            }
        };
        if !canon.starts_with(root) {
            err(
                diags,
                format!(
                    "source {} resolves to {}, outside the plugin root {}; refusing it",
                    full.display(),
                    canon.display(),
                    root.display()
                ),
            );
            return None;
        }
        let ext = canon.extension().and_then(|e| e.to_str()).unwrap_or("");
        let shape_ok = match lang {
            GuestLang::Rust => canon.join("Cargo.toml").is_file(),
            GuestLang::Python => canon.is_file() && ext == "py",
            GuestLang::Js => canon.is_file() && matches!(ext, "js" | "mjs"),
            GuestLang::C => canon.is_file() && ext == "c",
        };
        if !shape_ok {
            let want = match lang {
                GuestLang::Rust => "a directory holding Cargo.toml",
                GuestLang::Python => "a .py file",
                GuestLang::Js => "a .js or .mjs file",
                GuestLang::C => "a .c file",
            };
            err(diags, format!("source {} must be {want}", full.display()));
            return None;
        }
        paths.push(canon);
    }
    Some((BuildSpec { lang, sources }, paths))
}

/// The components of the plugin at `root` that have a `build` key, read from its
/// `warden.toml` without requiring the outputs to exist yet.
///
/// Errors are the diagnostics of the file (bad TOML, a bad `build` or `path`); a plugin with
/// no `warden.toml`, or none with a `build` key, has nothing to build.
pub fn build_targets(root: &Path) -> Result<Vec<BuildTarget>, Vec<Diagnostic>> {
    let root = root.canonicalize().map_err(|e| {
        vec![Diagnostic::error(
            root,
            format!("cannot open the plugin: {e}"),
        )]
    })?;
    let file = root.join(WARDEN_TOML);
    if !file.is_file() {
        return Ok(Vec::new());
    }
    let mut diags = Vec::new();
    let Some((value, text)) = read_warden_toml(&file, &mut diags) else {
        return Err(diags);
    };
    let src = Src::Toml(&text);
    let mut targets = Vec::new();
    let components = value.get("components").and_then(Value::as_object);
    for (name, c) in components.into_iter().flatten() {
        let Some(b) = c.get("build") else { continue };
        if let Err(reason) = crate::names::check_path_name(name) {
            diags.push(
                Diagnostic::error(&file, format!("component name `{name}` {reason}"))
                    .at(src.pos(name)),
            );
            continue;
        }
        let world = match c.get("world").and_then(Value::as_str) {
            Some("hook") => World::Hook,
            Some("tool") => World::Tool,
            _ => {
                diags.push(
                    Diagnostic::error(
                        &file,
                        format!("`components.{name}` needs `world`: \"hook\" or \"tool\""),
                    )
                    .at(src.pos(name)),
                );
                continue;
            }
        };
        let Some(rel) = c.get("path").and_then(Value::as_str) else {
            diags.push(
                Diagnostic::error(
                    &file,
                    format!("`components.{name}` needs `path`, where the built component goes"),
                )
                .at(src.pos(name)),
            );
            continue;
        };
        let Some(out) = output_path(&root, rel) else {
            diags.push(
                Diagnostic::error(
                    &file,
                    format!("`components.{name}.path` `{rel}` must be a relative `.wasm` path inside the plugin root without `..`"),
                )
                .at(src.pos("path")),
            );
            continue;
        };
        if let Some((spec, source_paths)) = parse_build(name, b, &root, &file, src, "", &mut diags)
        {
            let caps = c.get("capabilities");
            let capability_kinds = ["fs", "net", "exec", "env"]
                .into_iter()
                .filter(|k| {
                    caps.and_then(|c| c.get(*k))
                        .and_then(Value::as_array)
                        .is_some_and(|a| !a.is_empty())
                })
                .collect();
            targets.push(BuildTarget {
                name: name.clone(),
                world,
                rel_path: rel.to_string(),
                out,
                spec,
                source_paths,
                capability_kinds,
            });
        }
    }
    if diags
        .iter()
        .any(|d| d.severity == crate::diag::Severity::Error)
    {
        return Err(diags);
    }
    Ok(targets)
}

/// `root/rel` when `rel` is a plain relative `.wasm` path; the builder still checks, when it
/// writes, that no symlink on the way leads out of the root.
fn output_path(root: &Path, rel: &str) -> Option<PathBuf> {
    if rel.is_empty()
        || rel.starts_with('/')
        || rel.starts_with('\\')
        || has_parent_segment(rel)
        || !rel.ends_with(".wasm")
    {
        return None;
    }
    Some(root.join(rel.trim_start_matches("./")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(toml: &str, files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("warden.toml"), toml).expect("write");
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, "x").expect("write");
        }
        dir
    }

    #[test]
    fn reads_targets_before_anything_is_built() {
        let dir = plugin(
            "[components.guard]\npath = \"wasm/guard.wasm\"\nworld = \"hook\"\nbuild = { lang = \"python\", source = \"hook.py\" }\n\n[components.other]\npath = \"wasm/other.wasm\"\nworld = \"tool\"\n",
            &["hook.py"],
        );
        let targets = build_targets(dir.path()).expect("targets");
        assert_eq!(targets.len(), 1);
        assert_eq!(targets[0].name, "guard");
        assert_eq!(targets[0].spec.lang, GuestLang::Python);
        assert_eq!(targets[0].world, World::Hook);
        assert!(targets[0].out.ends_with("wasm/guard.wasm"));
    }

    #[test]
    fn sources_and_outputs_stay_inside_the_plugin() {
        for (build, path) in [
            ("{ lang = \"c\", source = \"../evil.c\" }", "wasm/a.wasm"),
            ("{ lang = \"c\", source = \"/etc/passwd\" }", "wasm/a.wasm"),
            ("{ lang = \"c\", source = \"a.c\" }", "../out.wasm"),
            ("{ lang = \"c\", source = \"a.c\" }", "/tmp/out.wasm"),
            ("{ lang = \"cobol\", source = \"a.c\" }", "wasm/a.wasm"),
            ("{ lang = \"python\", source = \"a.c\" }", "wasm/a.wasm"),
            ("{ lang = \"python\" }", "wasm/a.wasm"),
        ] {
            let dir = plugin(
                &format!("[components.x]\npath = \"{path}\"\nworld = \"hook\"\nbuild = {build}\n"),
                &["a.c"],
            );
            let errs = build_targets(dir.path()).expect_err(build);
            assert!(
                errs.iter().any(|d| d.file.ends_with("warden.toml")),
                "{build} {path}: {errs:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_source_symlinked_out_of_the_plugin_is_refused() {
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(outside.path().join("secret.c"), "int x;").expect("write");
        let dir = plugin(
            "[components.x]\npath = \"wasm/x.wasm\"\nworld = \"hook\"\nbuild = { lang = \"c\", source = \"link.c\" }\n",
            &[],
        );
        std::os::unix::fs::symlink(outside.path().join("secret.c"), dir.path().join("link.c"))
            .expect("symlink");
        let errs = build_targets(dir.path()).expect_err("refused");
        assert!(
            errs.iter()
                .any(|d| d.message.contains("outside the plugin root")),
            "{errs:?}"
        );
    }
}
