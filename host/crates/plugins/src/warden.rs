//! Warden's part of a plugin: WASM components, their worlds and capability requests, WASM
//! hooks and tools. It lives in `warden.toml` at the plugin root:
//!
//! ```toml
//! [components.guard]
//! path = "wasm/guard.wasm"
//! world = "hook"
//! capabilities = { fs = [{ path = "${CLAUDE_PROJECT_DIR}", access = "read" }], net = ["https://api.example.com"], env = ["HOME"], exec = ["git"] }
//! build = { lang = "rust", source = "." }   # optional: what `warden build` runs (see `build_spec`)
//!
//! [[hooks.PreToolUse]]
//! matcher = "Bash"
//! hooks = [{ type = "wasm", component = "guard", timeout = 5, onFailure = "block" }]
//!
//! # tools = ["fmt"]   (components of world `tool`; top-level keys go before the first table)
//!
//! [processes]          # what the plugin's command hooks and stdio servers need beyond the default
//! fs = [{ path = "${CLAUDE_PROJECT_DIR}", access = "write" }]   # a formatter rewrites project files
//! network = true       # the kernel cannot limit programs to hosts: on means every host
//! ```
//!
//! Every program a plugin starts (command hooks, stdio MCP servers) runs confined by the OS
//! to a default profile: the system and toolchain directories, the plugin's own root and the
//! project (minus denied paths) readable, only the plugin's data directory and a private
//! temporary directory writable, no network. `[processes]` asks for more; like component
//! capabilities it is shown at install and granted only with consent, pinned to the plugin's
//! digest (stored under [`PROCESSES_GRANT_KEY`]).
//! Claude Code's validator refuses hooks it finds under an unknown key of `plugin.json`, so a
//! separate file is the only place where they leave the plugin valid there. The same content
//! under a `warden` key of `plugin.json` is still read (earlier versions put it there), with a
//! deprecation warning. Component paths may be written with or without `./` and must resolve
//! (symlinks included) to an existing file inside the plugin root.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::capability::{Capabilities, FsAccess, FsCapability};
use crate::diag::Diagnostic;
use crate::hooks::{HookFlavor, check_hooks};
use crate::limits::MAX_MANIFEST_BYTES;
use crate::util::{Src, did_you_mean, has_parent_segment, line_col, read_limited};

/// The file at the plugin root that holds Warden's part of a plugin.
pub const WARDEN_TOML: &str = "warden.toml";

/// The key a plugin's `[processes]` request and grant are kept under, beside its components'
/// (a component name must start with a letter or digit, so none can take it).
pub const PROCESSES_GRANT_KEY: &str = "@processes";

pub use warden_vocab::ANY_NETWORK;

pub use warden_vocab::World;

/// One WASM component declared by a plugin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WardenComponent {
    /// Its name (key of `{prefix}components`).
    pub name: String,
    /// Path as written, relative to the plugin root.
    pub rel_path: String,
    /// Absolute, canonical path of the `.wasm` file (inside the plugin root).
    pub path: PathBuf,
    /// The world it implements.
    pub world: World,
    /// The capabilities it requests (the runtime uses the *grant*, not this).
    pub capabilities: Capabilities,
    /// How `warden build` makes it from source, when the plugin says.
    pub build: Option<crate::build_spec::BuildSpec>,
}

/// The typed `warden` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WardenSection {
    /// Components by name.
    pub components: BTreeMap<String, WardenComponent>,
    /// Hooks in Claude Code's shape whose handlers are `{"type": "wasm", "component": "<name>"}`.
    pub hooks: Map<String, Value>,
    /// Names of components (world `tool`) exposed as tools.
    pub tools: Vec<String>,
    /// What the plugin's processes (command hooks, stdio servers) ask for beyond the default
    /// profile: `fs` paths and, as [`ANY_NETWORK`] in `net`, the network.
    pub processes: Option<Capabilities>,
}

impl WardenSection {
    /// The section as the hooks engine reads it: `{"components": {...}, "hooks": {...}}`,
    /// built from what was validated, whichever file it came from.
    pub fn to_hooks_value(&self) -> Value {
        let components: Map<String, Value> = self
            .components
            .iter()
            .map(|(n, c)| {
                let mut decl = Map::new();
                decl.insert("path".into(), Value::String(c.rel_path.clone()));
                decl.insert("world".into(), Value::String(c.world.name().into()));
                (n.clone(), Value::Object(decl))
            })
            .collect();
        let mut v = Map::new();
        v.insert("components".into(), Value::Object(components));
        v.insert("hooks".into(), Value::Object(self.hooks.clone()));
        Value::Object(v)
    }

    /// Capabilities requested per component, and the processes' request under
    /// [`PROCESSES_GRANT_KEY`].
    pub fn requests(&self) -> BTreeMap<String, Capabilities> {
        let mut out: BTreeMap<String, Capabilities> = self
            .components
            .iter()
            .map(|(n, c)| (n.clone(), c.capabilities.clone()))
            .collect();
        if let Some(p) = self.processes.as_ref().filter(|p| !p.is_empty()) {
            out.insert(PROCESSES_GRANT_KEY.to_string(), p.clone());
        }
        out
    }
}

/// The advice for a missing component outside a source directory (an installed or staged copy).
pub(crate) const REBUILD_HINT: &str = "build it in the plugin's source directory (`warden build <source dir>`) and install the plugin again";

/// Why the file of a declared component could not run (completing "the component …"), or
/// `Ok` when it is a WebAssembly component that validates. A core module, a truncated file or
/// bytes that only start like WebAssembly would make the plugin's guards drop out at the first
/// call, so install refuses them instead (the world's exports are checked when the component
/// is loaded).
pub fn check_component_file(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !bytes.starts_with(b"\0asm") {
        return Err("is not WebAssembly (it does not start with the `\\0asm` header)".into());
    }
    if !wasmparser::Parser::is_component(&bytes) {
        return Err(
            "is a core WebAssembly module or an unknown WebAssembly version, not a component"
                .into(),
        );
    }
    // Every proposal enabled: the check is for damage, not for features the runtime decides on.
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&bytes)
        .map(|_| ())
        .map_err(|e| {
            format!(
                "is not a valid WebAssembly component (at byte {}: {})",
                e.offset(),
                e.message()
            )
        })
}

/// Parses and validates `warden` against the plugin `root` (canonical).
///
/// `v` is the whole of `warden.toml` (`prefix` `""`) or the deprecated `warden` key of
/// `plugin.json` (`prefix` `"warden."`): both are checked here, so the two cannot drift.
/// `at_source` says `root` is the plugin's source (see [`crate::LoadContext::at_source`]), the
/// only place a missing component may be built.
pub(crate) fn parse_warden(
    v: &Value,
    root: &Path,
    file: &Path,
    src: Src<'_>,
    prefix: &str,
    at_source: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<WardenSection> {
    let pos = |k: &str| src.pos(k);
    let type_name = |v: &Value| src.type_name(v);
    let Value::Object(o) = v else {
        diags.push(
            Diagnostic::error(
                file,
                format!("`warden` must be an object, found {}", type_name(v)),
            )
            .at(pos("warden")),
        );
        return None;
    };
    let start = diags.len();
    for k in o.keys() {
        if !matches!(k.as_str(), "components" | "hooks" | "tools" | "processes") {
            let hint = did_you_mean(k, &["components", "hooks", "tools", "processes"])
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            diags.push(
                Diagnostic::warning(file, format!("unknown key `{prefix}{k}` is ignored{hint}"))
                    .at(pos(k)),
            );
        }
    }
    let mut sec = WardenSection::default();
    match o.get("components") {
        None => {}
        Some(Value::Object(comps)) => {
            for (name, c) in comps {
                if let Some(c) = parse_component(name, c, root, file, src, prefix, at_source, diags)
                {
                    sec.components.insert(name.clone(), c);
                }
            }
        }
        Some(other) => diags.push(
            Diagnostic::error(
                file,
                format!(
                    "`{prefix}components` must be {}, found {}",
                    src.a_map(),
                    type_name(other)
                ),
            )
            .at(pos("components")),
        ),
    }
    if let Some(h) = o.get("hooks") {
        let mut hd = Vec::new();
        let hooks = check_hooks(h, file, src, HookFlavor::Wasm, &mut hd);
        // Every wasm handler must name a declared hook component.
        for groups in hooks.values() {
            for g in groups.as_array().into_iter().flatten() {
                for hnd in g
                    .get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let comp = hnd
                        .get("component")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    match sec.components.get(comp) {
                        Some(c) if c.world == World::Hook => {}
                        Some(_) => hd.push(Diagnostic::error(file, format!("wasm hook names component `{comp}`, whose world is `tool`; hook handlers need world `hook`")).at(pos("component"))),
                        None if o.get("components").and_then(|c| c.get(comp)).is_some() => {}
                        None => hd.push(Diagnostic::error(file, format!("wasm hook names component `{comp}`, which is not declared in `{prefix}components`")).at(pos("component"))),
                    }
                }
            }
        }
        diags.extend(hd);
        sec.hooks = hooks;
    }
    match o.get("tools") {
        None => {}
        Some(Value::Array(a)) => {
            for t in a {
                let Some(t) = t.as_str() else {
                    diags.push(
                        Diagnostic::error(
                            file,
                            format!(
                                "`{prefix}tools` items must be component names, found {}",
                                type_name(t)
                            ),
                        )
                        .at(pos("tools")),
                    );
                    continue;
                };
                match sec.components.get(t) {
                    Some(c) if c.world == World::Tool => sec.tools.push(t.to_string()),
                    Some(_) => diags.push(Diagnostic::error(file, format!("`{prefix}tools` lists `{t}`, whose world is `hook`; tools need world `tool`")).at(pos("tools"))),
                    None if o.get("components").and_then(|c| c.get(t)).is_some() => {}
                    None => diags.push(Diagnostic::error(file, format!("`{prefix}tools` lists `{t}`, which is not declared in `{prefix}components`")).at(pos("tools"))),
                }
            }
        }
        Some(other) => diags.push(
            Diagnostic::error(
                file,
                format!(
                    "`{prefix}tools` must be an array of component names, found {}",
                    type_name(other)
                ),
            )
            .at(pos("tools")),
        ),
    }
    if let Some(p) = o.get("processes") {
        sec.processes = parse_processes(p, file, src, prefix, diags);
    }
    if diags[start..].iter().any(Diagnostic::is_error) {
        None
    } else {
        Some(sec)
    }
}

/// `[processes]`: `fs` as in a component's capabilities, `network` a boolean.
fn parse_processes(
    v: &Value,
    file: &Path,
    src: Src<'_>,
    prefix: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Capabilities> {
    let pos = |k: &str| src.pos(k);
    let Value::Object(o) = v else {
        diags.push(
            Diagnostic::error(
                file,
                format!(
                    "`{prefix}processes` must be {}, found {}",
                    src.a_map(),
                    src.type_name(v)
                ),
            )
            .at(pos("processes")),
        );
        return None;
    };
    let mut fs_only = Map::new();
    let mut network = false;
    for (k, val) in o {
        match (k.as_str(), val) {
            ("fs", _) => {
                fs_only.insert(k.clone(), val.clone());
            }
            ("network", Value::Bool(b)) => network = *b,
            ("network", other) => diags.push(
                Diagnostic::error(
                    file,
                    format!(
                        "`{prefix}processes.network` must be true or false, found {}",
                        src.type_name(other)
                    ),
                )
                .at(pos("network")),
            ),
            _ => diags.push(
                Diagnostic::warning(
                    file,
                    format!(
                        "unknown key `{k}` in `{prefix}processes` is ignored (known: fs, network)"
                    ),
                )
                .at(pos(k)),
            ),
        }
    }
    let mut caps = parse_capabilities(
        "processes",
        &Value::Object(fs_only),
        file,
        src,
        prefix,
        diags,
    )?;
    if network {
        caps.net.push(ANY_NETWORK.to_string());
    }
    Some(caps)
}

#[allow(clippy::too_many_arguments)]
fn parse_component(
    name: &str,
    c: &Value,
    root: &Path,
    file: &Path,
    src: Src<'_>,
    prefix: &str,
    at_source: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<WardenComponent> {
    let pos = |k: &str| src.pos(k);
    let type_name = |v: &Value| src.type_name(v);
    let here = pos(name);
    // Component names key grants and may name files of the runtime; same rule as other names.
    if let Err(reason) = crate::names::check_path_name(name) {
        diags.push(
            Diagnostic::error(
                file,
                format!("field \"{prefix}components\": component name `{name}` {reason}; the component is refused"),
            )
            .at(here),
        );
        return None;
    }
    let Value::Object(c) = c else {
        diags.push(
            Diagnostic::error(
                file,
                format!(
                    "`{prefix}components.{name}` must be {}, found {}",
                    src.a_map(),
                    type_name(c)
                ),
            )
            .at(here),
        );
        return None;
    };
    for k in c.keys() {
        if !matches!(k.as_str(), "path" | "world" | "capabilities" | "build") {
            diags.push(
                Diagnostic::warning(
                    file,
                    format!("unknown key `{k}` in `{prefix}components.{name}` is ignored"),
                )
                .at(pos(k)),
            );
        }
    }
    let mut ok = true;
    let world = match c.get("world").and_then(Value::as_str) {
        Some("hook") => Some(World::Hook),
        Some("tool") => Some(World::Tool),
        Some(w) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!("`{prefix}components.{name}.world` is `{w}`; known worlds: hook, tool"),
                )
                .at(pos("world")),
            );
            None
        }
        None => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!("`{prefix}components.{name}` needs `world`: \"hook\" or \"tool\""),
                )
                .at(here),
            );
            None
        }
    };
    let build = match c.get("build") {
        None => None,
        Some(b) => {
            let parsed = crate::build_spec::parse_build(name, b, root, file, src, prefix, diags);
            ok &= parsed.is_some();
            parsed.map(|(spec, _)| spec)
        }
    };
    // Building in an installed copy would change the tree its digest pins (`verify` then
    // reports it as tampered), so `warden build` is suggested only for a source directory.
    let build_hint = match (at_source, build.is_some()) {
        (true, true) => format!("run `warden build {}`", root.display()),
        (true, false) => "build the component or fix the path".to_string(),
        (false, _) => REBUILD_HINT.to_string(),
    };
    let path = match c.get("path").and_then(Value::as_str) {
        None => {
            diags.push(Diagnostic::error(file, format!("`{prefix}components.{name}` needs `path` to its .wasm file, relative to the plugin root")).at(here));
            None
        }
        Some(p) if p.starts_with('/') || has_parent_segment(p) => {
            diags.push(Diagnostic::error(file, format!("`{prefix}components.{name}.path` `{p}` must be relative to the plugin root without `..`")).at(pos("path")));
            None
        }
        Some(p) => {
            let rel = p.trim_start_matches("./");
            let full = root.join(rel);
            match full.canonicalize() {
                Err(_) => {
                    diags.push(
                        Diagnostic::error(
                            file,
                            format!(
                                "`{prefix}components.{name}.path`: {} does not exist; {build_hint}",
                                full.display()
                            ),
                        )
                        .at(pos("path")),
                    );
                    None
                }
                Ok(canon) if !canon.starts_with(root) => {
                    diags.push(Diagnostic::error(file, format!("`{prefix}components.{name}.path`: {} resolves to {}, outside the plugin root {}; refusing it", full.display(), canon.display(), root.display())).at(pos("path")));
                    None
                }
                Ok(canon) if !canon.is_file() => {
                    diags.push(
                        Diagnostic::error(
                            file,
                            format!(
                                "`{prefix}components.{name}.path`: {} is not a file",
                                full.display()
                            ),
                        )
                        .at(pos("path")),
                    );
                    None
                }
                Ok(canon) => Some((p.to_string(), canon)),
            }
        }
    };
    let caps = match c.get("capabilities") {
        None => Some(Capabilities::default()),
        Some(v) => parse_capabilities(
            &format!("components.{name}.capabilities"),
            v,
            file,
            src,
            prefix,
            diags,
        ),
    };
    ok &= world.is_some() && path.is_some() && caps.is_some();
    if !ok {
        return None;
    }
    let (rel_path, path) = path?;
    Some(WardenComponent {
        name: name.to_string(),
        rel_path,
        path,
        world: world?,
        capabilities: caps?,
        build,
    })
}

/// Parses a `capabilities` object, checking the syntax of every entry.
/// `comp` is where the table sits, without `prefix`: `components.<name>.capabilities`, or
/// `processes`.
pub(crate) fn parse_capabilities(
    comp: &str,
    v: &Value,
    file: &Path,
    src: Src<'_>,
    prefix: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Capabilities> {
    let pos = |k: &str| src.pos(k);
    let type_name = |v: &Value| src.type_name(v);
    let Value::Object(o) = v else {
        diags.push(
            Diagnostic::error(
                file,
                format!(
                    "`{prefix}{comp}` must be {}, found {}",
                    src.a_map(),
                    type_name(v)
                ),
            )
            .at(pos("capabilities")),
        );
        return None;
    };
    let start = diags.len();
    let mut caps = Capabilities::default();
    let err = |diags: &mut Vec<Diagnostic>, key: &str, msg: String| {
        diags.push(Diagnostic::error(file, format!("`{prefix}{comp}.{key}`: {msg}")).at(pos(key)));
    };
    for (k, val) in o {
        let Value::Array(items) = val else {
            if matches!(k.as_str(), "fs" | "net" | "env" | "exec") {
                err(
                    diags,
                    k,
                    format!("must be an array, found {}", type_name(val)),
                );
            } else {
                diags.push(Diagnostic::warning(file, format!("unknown capability `{k}` in `{comp}` is ignored (known: fs, net, env, exec)")).at(pos(k)));
            }
            continue;
        };
        match k.as_str() {
            "fs" => {
                for it in items {
                    let path = it.get("path").and_then(Value::as_str);
                    let access = match it.get("access").and_then(Value::as_str) {
                        Some("read") => Some(FsAccess::Read),
                        Some("write") => Some(FsAccess::Write),
                        _ => None,
                    };
                    match (path, access) {
                        (Some(p), Some(a)) if !p.is_empty() && !p.contains('\0') => {
                            if let Some(var) = unknown_var(p) {
                                diags.push(Diagnostic::warning(file, format!("fs path `{p}` of `{comp}` uses `{var}`; only ${{CLAUDE_PLUGIN_ROOT}}, ${{CLAUDE_PLUGIN_DATA}} and ${{CLAUDE_PROJECT_DIR}} are expanded")).at(pos("fs")));
                            }
                            caps.fs.push(FsCapability { path: p.to_string(), access: a })
                        }
                        _ => err(diags, "fs", format!("each item must be {{\"path\": \"<non-empty>\", \"access\": \"read\"|\"write\"}}, found {it}")),
                    }
                }
            }
            "net" => {
                for it in items {
                    match it.as_str() {
                        Some(s) => match check_origin(s) {
                            Ok(()) => caps.net.push(s.to_string()),
                            Err(m) => err(diags, "net", format!("`{s}` {m}")),
                        },
                        None => err(diags, "net", format!("items must be strings like \"https://host[:port]\", found {}", type_name(it))),
                    }
                }
            }
            "env" => {
                for it in items {
                    match it.as_str() {
                        Some(s) if !s.is_empty() && !s.starts_with(|c: char| c.is_ascii_digit()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => caps.env.push(s.to_string()),
                        _ => err(diags, "env", format!("{it} is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")),
                    }
                }
            }
            "exec" => {
                for it in items {
                    match it.as_str() {
                        Some(s) if !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == '\0') => caps.exec.push(s.to_string()),
                        _ => err(diags, "exec", format!("{it} is not a program name (no spaces; arguments are not part of the grant)")),
                    }
                }
            }
            _ => diags.push(Diagnostic::warning(file, format!("unknown capability `{k}` in `{comp}` is ignored (known: fs, net, env, exec)")).at(pos(k))),
        }
    }
    if diags[start..].iter().any(Diagnostic::is_error) {
        None
    } else {
        Some(caps)
    }
}

/// Reads `warden.toml` as the JSON value [`parse_warden`] checks, with its text for positions.
/// A file over [`MAX_MANIFEST_BYTES`] or that does not parse is an error with its position.
pub(crate) fn read_warden_toml(
    path: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Value, String)> {
    let text = match read_limited(path, MAX_MANIFEST_BYTES) {
        Ok(t) => t,
        Err(e) => {
            diags.push(Diagnostic::error(path, format!("cannot read: {e}")));
            return None;
        }
    };
    match text.parse::<toml::Table>() {
        Ok(t) => Some((toml_to_json(toml::Value::Table(t)), text)),
        Err(e) => {
            let at = e.span().map(|r| line_col(&text, r.start));
            let msg = e.message().trim_end().to_string();
            diags.push(
                Diagnostic::error(
                    path,
                    format!("invalid TOML: {msg}; Warden's part of the plugin is not loaded"),
                )
                .at(at),
            );
            None
        }
    }
}

/// TOML has dates and non-finite floats, JSON has neither: they become strings, which the
/// checks then report as the wrong type where a number or name was expected.
fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

fn unknown_var(p: &str) -> Option<String> {
    let mut rest = p;
    while let Some(i) = rest.find("${") {
        let end = rest[i..].find('}')? + i;
        let var = &rest[i + 2..end];
        if !matches!(
            var,
            "CLAUDE_PLUGIN_ROOT" | "CLAUDE_PLUGIN_DATA" | "CLAUDE_PROJECT_DIR"
        ) {
            return Some(format!("${{{var}}}"));
        }
        rest = &rest[end + 1..];
    }
    None
}

/// Checks `http(s)://host[:port]` (no path, query, credentials or wildcard other than a leading `*.`).
pub fn check_origin(s: &str) -> Result<(), String> {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .ok_or("must start with https:// or http://")?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#', '@']) {
        return Err("must be an origin only (scheme, host and optional port), without path, query or credentials".into());
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || rest.starts_with('[') => (h, Some(p)),
        _ => (rest, None),
    };
    if let Some(p) = port
        && p.parse::<u16>().map_or(true, |n| n == 0)
    {
        return Err(format!("has an invalid port `{p}` (1-65535)"));
    }
    let h = host.strip_prefix("*.").unwrap_or(host);
    let valid = !h.is_empty()
        && (h.starts_with('[') && h.ends_with(']')
            || h.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'));
    if !valid {
        return Err(format!("has an invalid host `{host}`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        assert!(check_origin("https://api.example.com").is_ok());
        assert!(check_origin("http://127.0.0.1:8080").is_ok());
        assert!(check_origin("https://*.example.com").is_ok());
        assert!(check_origin("ftp://x").is_err());
        assert!(check_origin("https://x.com/path").is_err());
        assert!(check_origin("https://x.com:99999").is_err());
        assert!(check_origin("https://").is_err());
    }
}
