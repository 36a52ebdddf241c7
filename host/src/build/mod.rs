//! `warden build`: builds a plugin's components from source with each language's toolchain.
//!
//! A component with a `build` key in `warden.toml` ([`warden_plugins::build_spec`]) is built
//! into its `path`. The WIT of `warden:plugin` and the guest SDKs of Python, JavaScript and C
//! are compiled into this binary, so a plugin directory needs nothing but its own sources:
//! they are written to a scratch directory for each build. Rust guests use the `warden-sdk`
//! crate their `Cargo.toml` names (`warden new` copies it into the plugin's `vendor/`), and
//! build in one target directory shared by all of them (`CARGO_TARGET_DIR`, else
//! `$WARDEN_HOME/cache/cargo-target`), outside the plugin.
//!
//! | lang | tool (looked up on `PATH`, or the variable) | what runs |
//! |---|---|---|
//! | rust | `cargo` (`CARGO`) with the `wasm32-wasip2` target | `cargo build --release --target wasm32-wasip2` |
//! | python | `componentize-py` (`WARDEN_COMPONENTIZE_PY`) | `componentize-py -d WIT -w WORLD componentize ...` |
//! | js | `node` (`WARDEN_NODE`) and the npm package `componentize-qjs` (`WARDEN_COMPONENTIZE_QJS`, else the plugin's `node_modules`) | `node build.mjs ...` |
//! | c | `clang-19` or `clang` (`WARDEN_CLANG`), wasi-libc, and rustup's `wasm-component-ld` (`WARDEN_WASM_COMPONENT_LD`) | `clang --target=wasm32-wasi ...` |
//!
//! When a tool is missing the error names it and says how to install it. The output is
//! checked to be a component exporting its world's functions, then moved into place in one
//! rename, so a failed build leaves the previous component working.

mod lang;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use warden_plugins::{BuildTarget, Diagnostic, GuestLang, World};

pub use lang::{ToolchainTool, toolchain_status};

/// The WIT package and guest SDK files compiled into the binary (path, bytes).
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));
}

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// `warden.toml` is missing, unreadable or wrong.
    #[error("{}", render_diags(.0))]
    Spec(Vec<Diagnostic>),
    /// The plugin has no component with a `build` key.
    #[error(
        "nothing to build: no component in {0}/warden.toml has a `build` key (e.g. `build = {{ lang = \"rust\" }}`)"
    )]
    NothingToBuild(PathBuf),
    /// `--component` named no buildable component.
    #[error("no component `{name}` with a `build` key in {root}/warden.toml (buildable: {known})")]
    UnknownComponent {
        /// The name asked for.
        name: String,
        /// The plugin root.
        root: PathBuf,
        /// The buildable components.
        known: String,
    },
    /// A tool the language needs is not installed.
    #[error("component `{component}` ({lang}): {tool} was not found; {install}")]
    MissingTool {
        /// The component.
        component: String,
        /// Its language.
        lang: GuestLang,
        /// The missing tool.
        tool: String,
        /// How to install it.
        install: String,
    },
    /// The toolchain ran and failed.
    #[error("component `{component}` ({lang}): `{tool}` failed ({status}):\n{output}")]
    Failed {
        /// The component.
        component: String,
        /// Its language.
        lang: GuestLang,
        /// The command that failed.
        tool: String,
        /// Its exit status.
        status: String,
        /// What it printed (the end of it).
        output: String,
    },
    /// The toolchain produced something that is not the expected component.
    #[error("component `{component}`: {path}: {message}")]
    BadOutput {
        /// The component.
        component: String,
        /// The file produced.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn render_diags(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What happens during a build, for a progress display.
#[derive(Debug, Clone)]
pub enum BuildEvent<'a> {
    /// A component's build starts (`index` of `total`, from 0).
    Started {
        /// The component.
        target: &'a BuildTarget,
        /// Its position.
        index: usize,
        /// How many will be built.
        total: usize,
    },
    /// A line the toolchain printed while building (cargo's `Compiling …`, for one), as it
    /// comes: a build of minutes shows where it is.
    Output {
        /// The component being built.
        target: &'a BuildTarget,
        /// The line, trimmed.
        line: &'a str,
    },
    /// A component was built and moved into place.
    Finished(&'a Built),
}

/// One component built.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Built {
    /// The component's name.
    pub name: String,
    /// Its language.
    pub lang: GuestLang,
    /// Where it was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its sha256, hex.
    pub sha256: String,
    /// How long the toolchain took.
    #[serde(serialize_with = "millis")]
    pub elapsed: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u128(d.as_millis())
}

/// The components of the plugin at `root` that `warden build` would build.
pub fn targets(root: &Path) -> Result<Vec<BuildTarget>, BuildError> {
    let targets = warden_plugins::build_targets(root).map_err(BuildError::Spec)?;
    if targets.is_empty() {
        return Err(BuildError::NothingToBuild(root.to_path_buf()));
    }
    Ok(targets)
}

/// Builds the components of the plugin at `root` (all, or only `only`), reporting progress
/// to `observe`. Stops at the first failure; components built before it stay built.
pub fn build_plugin(
    root: &Path,
    only: Option<&str>,
    observe: &mut dyn FnMut(BuildEvent<'_>),
) -> Result<Vec<Built>, BuildError> {
    let mut targets = targets(root)?;
    if let Some(name) = only {
        let known = targets
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        targets.retain(|t| t.name == name);
        if targets.is_empty() {
            return Err(BuildError::UnknownComponent {
                name: name.to_string(),
                root: root.to_path_buf(),
                known,
            });
        }
    }
    let root = root.canonicalize().map_err(io(root))?;
    let scratch = tempfile::Builder::new()
        .prefix("warden-build-")
        .tempdir()
        .map_err(io(Path::new("<temp dir>")))?;
    let sdk = materialize(scratch.path())?;
    let total = targets.len();
    let mut built = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        observe(BuildEvent::Started {
            target,
            index,
            total,
        });
        let work = scratch.path().join("work").join(&target.name);
        std::fs::create_dir_all(&work).map_err(io(&work))?;
        let started = Instant::now();
        let produced = lang::build(target, &root, &sdk, &work, &mut |line| {
            observe(BuildEvent::Output { target, line })
        })?;
        let elapsed = started.elapsed();
        check_component(target, &produced)?;
        let (bytes, sha256) = install(&root, target, &produced)?;
        let b = Built {
            name: target.name.clone(),
            lang: target.spec.lang,
            path: target.out.clone(),
            bytes,
            sha256,
            elapsed,
        };
        observe(BuildEvent::Finished(&b));
        built.push(b);
    }
    Ok(built)
}

/// Where the embedded WIT and SDKs were written.
pub(crate) struct Sdk {
    /// `wit/v0.1`.
    pub wit: PathBuf,
    /// `sdk/`.
    pub dir: PathBuf,
}

fn materialize(scratch: &Path) -> Result<Sdk, BuildError> {
    for (rel, bytes) in embedded::SDK_FILES {
        let path = scratch.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, bytes).map_err(io(&path))?;
    }
    Ok(Sdk {
        wit: scratch.join("wit").join("v0.1"),
        dir: scratch.join("sdk"),
    })
}

/// The WIT package and SDK files compiled into this binary, by path (`wit/v0.1/…`,
/// `sdk/python/…`, …).
pub fn embedded_files() -> &'static [(&'static str, &'static [u8])] {
    embedded::SDK_FILES
}

/// Checks that `path` is a component exporting what `target`'s world exports.
fn check_component(target: &BuildTarget, path: &Path) -> Result<(), BuildError> {
    let bad = |message: String| BuildError::BadOutput {
        component: target.name.clone(),
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(format!("was not produced: {e}")))?;
    if !wasmparser::Parser::is_component(&bytes) {
        return Err(bad(
            "is not a WebAssembly component (a core module needs componentizing)".into(),
        ));
    }
    let mut exports = Vec::new();
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        match payload.map_err(|e| bad(format!("is not valid WebAssembly: {e}")))? {
            wasmparser::Payload::Version { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentExportSection(section) if depth == 1 => {
                for export in section {
                    let export =
                        export.map_err(|e| bad(format!("is not valid WebAssembly: {e}")))?;
                    exports.push(export.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    let wanted: &[&str] = match target.world {
        World::Hook => &["handle"],
        World::Tool => &["describe", "invoke"],
    };
    for w in wanted {
        if !exports.iter().any(|e| e == w) {
            return Err(bad(format!(
                "does not export `{w}`, so it is not a `{}` component (exports: {})",
                match target.world {
                    World::Hook => "hook",
                    World::Tool => "tool",
                },
                if exports.is_empty() {
                    "none".to_string()
                } else {
                    exports.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// Moves the built component to its `path` in one rename, after checking that the directory
/// it goes to is inside the plugin (a symlinked `wasm/` must not send it elsewhere).
fn install(
    root: &Path,
    target: &BuildTarget,
    produced: &Path,
) -> Result<(u64, String), BuildError> {
    use sha2::Digest;
    let dir = target.out.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let canon = dir.canonicalize().map_err(io(dir))?;
    if !canon.starts_with(root) {
        return Err(BuildError::BadOutput {
            component: target.name.clone(),
            path: target.out.clone(),
            message: format!(
                "its directory resolves to {}, outside the plugin root {}; refusing to write there",
                canon.display(),
                root.display()
            ),
        });
    }
    let bytes = std::fs::read(produced).map_err(io(produced))?;
    let file_name = target
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{}.wasm", target.name));
    let tmp = canon.join(format!(".{file_name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(io(&tmp))?;
    let dest = canon.join(&file_name);
    if let Err(e) = std::fs::rename(&tmp, &dest) {
        let _ = std::fs::remove_file(&tmp);
        return Err(BuildError::Io {
            path: dest,
            source: e,
        });
    }
    Ok((
        bytes.len() as u64,
        hex::encode(sha2::Sha256::digest(&bytes)),
    ))
}

/// Runs `cmd`, returning its combined output (stdout, then stderr) and handing each line of
/// its stderr, where toolchains report progress, to `on_line` as it comes; a failure becomes
/// [`BuildError::Failed`].
pub(crate) fn run(
    target: &BuildTarget,
    tool: &str,
    cmd: &mut Command,
    on_line: &mut dyn FnMut(&str),
) -> Result<String, BuildError> {
    use std::io::{BufRead, Read};
    let failed = |e: std::io::Error| BuildError::Failed {
        component: target.name.clone(),
        lang: target.spec.lang,
        tool: tool.to_string(),
        status: "could not start".into(),
        output: e.to_string(),
    };
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(failed)?;
    // stdout is drained on its own thread, so a toolchain that fills that pipe while this
    // one reads stderr never blocks.
    let stdout = child.stdout.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    });
    let mut err = Vec::new();
    if let Some(pipe) = child.stderr.take() {
        let mut reader = std::io::BufReader::new(pipe);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let text = String::from_utf8_lossy(&line);
            let shown = text.trim();
            if !shown.is_empty() {
                on_line(shown);
            }
            err.extend_from_slice(&line);
            line.clear();
        }
    }
    let status = child.wait().map_err(failed)?;
    let out_bytes = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
    let mut text = String::from_utf8_lossy(&out_bytes).into_owned();
    text.push_str(&String::from_utf8_lossy(&err));
    if status.success() {
        return Ok(text);
    }
    // The end of a toolchain's output is where the error is.
    const KEEP: usize = 8 << 10;
    let output = if text.len() > KEEP {
        let mut cut = text.len() - KEEP;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        format!("…\n{}", &text[cut..])
    } else {
        text
    };
    Err(BuildError::Failed {
        component: target.name.clone(),
        lang: target.spec.lang,
        tool: tool.to_string(),
        status: status.to_string(),
        output: output.trim_end().to_string(),
    })
}
