//! Each guest language's toolchain: where its tools are found, how they are run, and what to
//! tell the user when one is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use warden_plugins::{BuildTarget, GuestLang, World};

use super::{BuildError, Sdk, run};

/// Pinned versions the SDKs are written and tested against.
pub const COMPONENTIZE_PY: &str = "0.25.1";
/// The npm package `componentize-qjs`.
pub const COMPONENTIZE_QJS: &str = "0.4.5";

/// Whether one tool a language needs is present.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolchainTool {
    /// The language.
    pub lang: GuestLang,
    /// The tool.
    pub tool: String,
    /// Where it was found.
    pub found: Option<PathBuf>,
    /// How to install it.
    pub install: String,
}

/// The tools each language needs, found or not, for `plugin_root` (JS looks in its
/// `node_modules`).
pub fn toolchain_status(plugin_root: &Path) -> Vec<ToolchainTool> {
    let mut out = Vec::new();
    for lang in GuestLang::ALL {
        for (tool, found, install) in tools(lang, plugin_root) {
            out.push(ToolchainTool {
                lang,
                tool,
                found,
                install,
            });
        }
    }
    out
}

type Tool = (String, Option<PathBuf>, String);

fn tools(lang: GuestLang, root: &Path) -> Vec<Tool> {
    match lang {
        GuestLang::Rust => vec![
            (
                "cargo".into(),
                find("CARGO", &["cargo"]),
                "install Rust with rustup (https://rustup.rs)".into(),
            ),
            (
                "the wasm32-wasip2 target".into(),
                wasm_target(),
                "run `rustup target add wasm32-wasip2`".into(),
            ),
        ],
        GuestLang::Python => vec![(
            "componentize-py".into(),
            find("WARDEN_COMPONENTIZE_PY", &["componentize-py"]),
            format!(
                "install it with `pip install componentize-py=={COMPONENTIZE_PY}` (or set WARDEN_COMPONENTIZE_PY to its path)"
            ),
        )],
        GuestLang::Js => vec![
            (
                "node".into(),
                find("WARDEN_NODE", &["node", "nodejs"]),
                "install Node.js 18 or newer (e.g. `apt-get install nodejs`)".into(),
            ),
            (
                format!("the npm package componentize-qjs {COMPONENTIZE_QJS}"),
                componentize_qjs(root),
                format!(
                    "run `npm install --save-dev componentize-qjs@{COMPONENTIZE_QJS}` in {} (or set WARDEN_COMPONENTIZE_QJS to the package's directory)",
                    root.display()
                ),
            ),
        ],
        GuestLang::C => vec![
            (
                "clang".into(),
                find("WARDEN_CLANG", &["clang-19", "clang"]),
                "install it with `apt-get install clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32`".into(),
            ),
            (
                "wasi-libc".into(),
                wasi_sysroot(),
                "install it with `apt-get install wasi-libc libclang-rt-19-dev-wasm32`".into(),
            ),
            (
                "wasm-component-ld".into(),
                wasm_component_ld(),
                "it ships with Rust's rustup toolchain (https://rustup.rs), or `cargo install wasm-component-ld@0.5.21 --locked`; or set WARDEN_WASM_COMPONENT_LD".into(),
            ),
        ],
    }
}

/// Builds `target` into a file under `work`, returning its path.
pub(super) fn build(
    target: &BuildTarget,
    root: &Path,
    sdk: &Sdk,
    work: &Path,
    on_line: &mut dyn FnMut(&str),
) -> Result<PathBuf, BuildError> {
    let mut found = Vec::new();
    for (tool, path, install) in tools(target.spec.lang, root) {
        match path {
            Some(p) => found.push(p),
            None => {
                return Err(BuildError::MissingTool {
                    component: target.name.clone(),
                    lang: target.spec.lang,
                    tool,
                    install,
                });
            }
        }
    }
    let world = match target.world {
        World::Hook => "hook",
        World::Tool => "tool",
    };
    let out = work.join(format!("{}.wasm", target.name));
    match target.spec.lang {
        GuestLang::Rust => rust(target, &found[0], work, on_line),
        GuestLang::Python => {
            python(target, &found[0], sdk, work, world, &out, on_line).map(|()| out)
        }
        GuestLang::Js => {
            let mut cmd = Command::new(&found[0]);
            cmd.arg(sdk.dir.join("js").join("build.mjs"))
                .arg("--wit")
                .arg(&sdk.wit)
                .arg("--world")
                .arg(world)
                .arg("--source")
                .arg(&target.source_paths[0])
                .arg("--out")
                .arg(&out)
                .arg("--componentize-qjs")
                .arg(&found[1])
                .current_dir(work);
            run(target, "node", &mut cmd, on_line)?;
            Ok(out)
        }
        GuestLang::C => {
            let sdk_c = sdk.dir.join("c");
            let gen_dir = sdk_c.join("gen").join(world);
            let mut cmd = Command::new(&found[0]);
            cmd.arg("--target=wasm32-wasi")
                .arg(format!("--sysroot={}", found[1].display()))
                .arg("-O2")
                .arg("-mexec-model=reactor")
                .arg(format!("-fuse-ld={}", found[2].display()))
                .arg("-Wl,--wasi-adapter=reactor")
                // Debian's libc.a carries debug info: stripping it takes a hook from ~144 KB to ~30 KB.
                .arg("-Wl,--strip-debug")
                .arg(format!("-I{}", sdk_c.display()))
                .arg(format!("-I{}", gen_dir.display()))
                .arg("-o")
                .arg(&out);
            for s in &target.source_paths {
                cmd.arg(s);
            }
            // The SDK, the glue of this world, and the bindings generated for it (the `.o`
            // carries the component type of the world).
            cmd.arg(sdk_c.join("warden.c"))
                .arg(sdk_c.join(format!("warden_{world}.c")))
                .arg(gen_dir.join(format!("{world}.c")))
                .arg(gen_dir.join(format!("{world}_component_type.o")))
                .current_dir(work);
            run(target, "clang", &mut cmd, on_line)?;
            Ok(out)
        }
    }
}

/// Python names componentize-py or the guest's runtime claim, so a module of that name would
/// be shadowed or would shadow them.
const PY_RESERVED: &[&str] = &[
    "warden_sdk",
    "wit_world",
    "componentize_py_types",
    "componentize_py_runtime",
    "componentize_py_async_support",
    "poll_loop",
];

/// componentize-py imports every interface of its world, and the host refuses ungranted
/// imports, so the component is built against the SDK's world that imports only `log` and
/// the capabilities the component asks for (`hook`, `hook-fs`, `tool-fs-exec`, ...). The
/// sources and the SDK are copied into `work`, which Python litters with `__pycache__`,
/// and `VIRTUAL_ENV` points at an empty site-packages so the build sees no other packages.
fn python(
    target: &BuildTarget,
    exe: &Path,
    sdk: &Sdk,
    work: &Path,
    world: &str,
    out: &Path,
    on_line: &mut dyn FnMut(&str),
) -> Result<(), BuildError> {
    let source = &target.source_paths[0];
    let module = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let valid = module
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && module
            .chars()
            .all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid || PY_RESERVED.contains(&module.as_str()) {
        return Err(BuildError::BadOutput {
            component: target.name.clone(),
            path: source.clone(),
            message: format!(
                "`{module}` cannot be the module name: name the file like a Python module that is not {} (e.g. hook.py)",
                PY_RESERVED.join(", ")
            ),
        });
    }
    let copy = |from: &Path, to: &Path| -> Result<(), BuildError> {
        std::fs::copy(from, to).map(|_| ()).map_err(super::io(from))
    };
    let app = work.join("app");
    std::fs::create_dir_all(&app).map_err(super::io(&app))?;
    // The module and its sibling modules (a hook may split its code across files).
    let src_dir = source.parent().unwrap_or(source);
    for entry in std::fs::read_dir(src_dir)
        .map_err(super::io(src_dir))?
        .flatten()
    {
        let p = entry.path();
        let is_py = p.extension().is_some_and(|e| e == "py");
        // Regular files only: a symlink in the plugin must not pull files from elsewhere.
        if is_py && entry.file_type().is_ok_and(|t| t.is_file()) {
            copy(&p, &app.join(entry.file_name()))?;
        }
    }
    let pysdk = work.join("sdk").join("warden_sdk");
    std::fs::create_dir_all(&pysdk).map_err(super::io(&pysdk))?;
    let from = sdk.dir.join("python").join("warden_sdk");
    for entry in std::fs::read_dir(&from)
        .map_err(super::io(&from))?
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "py") {
            copy(&entry.path(), &pysdk.join(entry.file_name()))?;
        }
    }
    let site = work.join("site");
    let packages = site.join("lib").join("site-packages");
    std::fs::create_dir_all(&packages).map_err(super::io(&packages))?;
    let mut world_name = world.to_string();
    for kind in &target.capability_kinds {
        world_name.push('-');
        world_name.push_str(kind);
    }
    let mut cmd = Command::new(exe);
    cmd.arg("-d")
        .arg(&sdk.wit)
        .arg("-d")
        .arg(sdk.dir.join("python").join("wit"))
        .arg("-w")
        .arg(format!("warden:python/{world_name}@0.1.0"))
        .arg("componentize")
        .arg(&module)
        .arg("-p")
        .arg(&app)
        .arg("-p")
        .arg(work.join("sdk"))
        .arg("-o")
        .arg(out)
        .env("VIRTUAL_ENV", &site)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .current_dir(work);
    run(target, "componentize-py", &mut cmd, on_line).map(|_| ())
}

fn rust(
    target: &BuildTarget,
    cargo: &Path,
    work: &Path,
    on_line: &mut dyn FnMut(&str),
) -> Result<PathBuf, BuildError> {
    let dir = &target.source_paths[0];
    let manifest = dir.join("Cargo.toml");
    let krate = crate_name(&manifest).ok_or_else(|| BuildError::BadOutput {
        component: target.name.clone(),
        path: manifest.clone(),
        message: "has no `[package] name` (or `[lib] name`) to find the built component by".into(),
    })?;
    // One target directory for every guest (CARGO_TARGET_DIR, else Warden's cache) builds
    // their common dependencies once, so a second plugin builds in seconds; and it keeps
    // `target/` out of the plugin, which an install would otherwise copy whole.
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            warden_config::Home::from_env()
                .ok()
                .map(|h| h.cache_dir().join("cargo-target"))
        })
        .unwrap_or_else(|| dir.join("target"));
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "--manifest-path",
    ])
    .arg(&manifest)
    .env("CARGO_TARGET_DIR", &target_dir)
    .current_dir(work);
    // A guest build must not inherit flags meant for the host (or for an outer cargo).
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
    run(target, "cargo build", &mut cmd, on_line)?;
    Ok(target_dir
        .join("wasm32-wasip2")
        .join("release")
        .join(format!("{krate}.wasm")))
}

/// The library's file name stem: `[lib] name`, else `[package] name` with `-` as `_`.
fn crate_name(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let lib = table
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str());
    let package = table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str());
    lib.or(package).map(|n| n.replace('-', "_"))
}

/// `$var` if set, else the first of `names` on `PATH`.
fn find(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.components().count() > 1 {
            p.is_file().then_some(p)
        } else {
            on_path(&p.to_string_lossy())
        };
    }
    names.iter().find_map(|n| on_path(n))
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// `rustc --print sysroot`.
fn sysroot() -> Option<PathBuf> {
    let rustc = find("RUSTC", &["rustc"])?;
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn wasm_target() -> Option<PathBuf> {
    let dir = sysroot()?.join("lib/rustlib/wasm32-wasip2");
    dir.is_dir().then_some(dir)
}

/// rustup ships `wasm-component-ld` beside the host's `rust-lld`.
fn wasm_component_ld() -> Option<PathBuf> {
    if let Some(p) = find("WARDEN_WASM_COMPONENT_LD", &["wasm-component-ld"]) {
        return Some(p);
    }
    let rustlib = sysroot()?.join("lib/rustlib");
    std::fs::read_dir(&rustlib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin").join("wasm-component-ld"))
        .find(|p| is_executable(p))
}

/// Debian's wasi-libc installs its headers under `/usr/include/wasm32-wasi`, so the sysroot
/// is `/usr`; `WASI_SYSROOT` names another (e.g. wasi-sdk's).
fn wasi_sysroot() -> Option<PathBuf> {
    let candidates = std::env::var_os("WASI_SYSROOT")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/usr")]);
    candidates.into_iter().find(|root| {
        root.join("include/wasm32-wasi/stdlib.h").is_file()
            || root.join("include/stdlib.h").is_file() && root.join("lib/wasm32-wasi").is_dir()
    })
}

/// The `componentize-qjs` package directory: `$WARDEN_COMPONENTIZE_QJS`, else the plugin's
/// `node_modules`.
fn componentize_qjs(root: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WARDEN_COMPONENTIZE_QJS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return p.join("package.json").is_file().then_some(p);
    }
    let p = root.join("node_modules").join("componentize-qjs");
    p.join("package.json").is_file().then_some(p)
}
