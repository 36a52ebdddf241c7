//! The tools a session offers: the built-in WASM tools and the tool components of its enabled
//! plugins (MCP tools will join the same registry).
//!
//! A plugin's tool is named as Claude Code names a plugin's MCP tools, with `warden` as the
//! server and the name its component's `describe()` gives as the tool:
//! `mcp__plugin_<plugin>_warden__<name>`. So the rules Claude Code users already write for
//! plugin tools (`mcp__plugin_fmt_warden`, `mcp__plugin_fmt_warden__*`,
//! `mcp__plugin_fmt_warden__format`) apply to them unchanged.
//!
//! Naming a tool needs its description, so it is asked of the component once per digest and
//! recorded in the compile cache beside the compiled code (`tools/<sha256>.json`): `warden
//! build`, `plugin install`, `update` and `enable` record it, and a session finds it there by
//! the digest the cache recorded for the file, without loading or running the component. A
//! component with no record (built by its toolchain alone, or the cache disabled) is asked
//! when the session's tools are first listed, and recorded then. `describe()` runs with every
//! capability use refused and no environment, so what it answers depends on the component's
//! bytes alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Session;
use crate::runtime::{
    CallContext, DeniedPaths, DigestPin, Grant, Limits, LoadedComponent, Policy, PolicyError,
    Runtime, World,
};
use crate::tools::BuiltinTool;

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSource {
    /// A built-in tool, embedded in Warden.
    Builtin(BuiltinTool),
    /// A plugin's tool component.
    Plugin {
        /// `name@marketplace`.
        plugin_id: String,
        /// The component's name in the plugin's manifest.
        component: String,
        /// The component file.
        path: PathBuf,
    },
    /// The `LSP` tool, run by the host on the plugins' language servers (see [`crate::lsp`]).
    Lsp,
}

impl ToolSource {
    /// For traces: `built-in`, or the plugin id.
    pub fn label(&self) -> String {
        match self {
            ToolSource::Builtin(_) | ToolSource::Lsp => "built-in".to_string(),
            ToolSource::Plugin { plugin_id, .. } => format!("plugin {plugin_id}"),
        }
    }
}

/// What a tool says about itself (`describe()` of its component): kept once per session, and
/// for a plugin's tool recorded by the component's digest (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescription {
    /// The name it gives itself (for a plugin's tool, the last part of the name it is
    /// offered under).
    pub name: String,
    /// Its description for the model.
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
}

/// One tool of the registry.
pub struct RegisteredTool {
    /// The name models and rules use.
    pub name: String,
    /// Where it comes from.
    pub source: ToolSource,
    /// What its component may reach.
    pub grant: Grant,
    approved_digest: Option<String>,
    description: OnceLock<Result<ToolDescription, String>>,
    validator: OnceLock<Result<Arc<jsonschema::Validator>, String>>,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Longest a built-in tool call may run (the Bash tool enforces its own `timeout` within it).
pub const BUILTIN_DEADLINE: Duration = Duration::from_secs(630);
/// Longest a plugin tool call may run.
pub const PLUGIN_TOOL_DEADLINE: Duration = Duration::from_secs(120);
/// Longest `describe()` may run.
const DESCRIBE_DEADLINE: Duration = Duration::from_secs(5);

impl RegisteredTool {
    /// The component, loaded (and pinned to its approved digest, for a plugin's) on first use.
    pub(crate) fn component(&self, session: &Session) -> Result<Arc<LoadedComponent>, String> {
        let components = session.components().map_err(|e| e.to_string())?;
        let pin = match &self.approved_digest {
            Some(d) => DigestPin::Sha256(d),
            None => DigestPin::None,
        };
        match &self.source {
            ToolSource::Builtin(t) => components.bytes(
                t.name(),
                t.wasm(),
                World::Tool,
                &self.grant,
                DigestPin::Sha256(t.sha256()),
            ),
            ToolSource::Plugin { path, .. } => components.file(path, World::Tool, &self.grant, pin),
            ToolSource::Lsp => {
                return Err("the LSP tool is run by the host, not by a component".into());
            }
        }
        .map_err(|e| e.to_string())
    }

    /// The deadline of one call.
    pub fn deadline(&self) -> Duration {
        match self.source {
            ToolSource::Builtin(_) | ToolSource::Lsp => BUILTIN_DEADLINE,
            ToolSource::Plugin { .. } => PLUGIN_TOOL_DEADLINE,
        }
    }

    /// What the tool says about itself, asked of its component once (in a fresh sandbox of its
    /// own, with no capabilities in use).
    pub async fn describe(&self, session: &Arc<Session>) -> Result<&ToolDescription, String> {
        if let Some(d) = self.description.get() {
            return d.as_ref().map_err(Clone::clone);
        }
        if self.source == ToolSource::Lsp {
            let d = self.description.get_or_init(|| {
                Ok(ToolDescription {
                    name: LSP_TOOL.to_string(),
                    description: warden_lsp::ops::DESCRIPTION.to_string(),
                    input_schema: warden_lsp::ops::input_schema(),
                })
            });
            return d.as_ref().map_err(Clone::clone);
        }
        let described = async {
            let rt = session.runtime().map_err(|e| e.to_string())?;
            let c = self.component(session)?;
            let ctx = session.call_context(&session.cwd, &self.grant, session.guest_policy(false));
            let info = rt
                .describe_tool(&c, &Limits::with_deadline(DESCRIBE_DEADLINE), ctx)
                .await
                .map_err(|e| e.to_string())?;
            let input_schema: Value = serde_json::from_str(&info.input_schema).map_err(|e| {
                format!(
                    "{}: its input schema is not valid JSON: {e}",
                    self.source.label()
                )
            })?;
            Ok(ToolDescription {
                name: info.name,
                description: info.description,
                input_schema,
            })
        }
        .await;
        let d = self.description.get_or_init(|| described);
        d.as_ref().map_err(Clone::clone)
    }

    /// The compiled input schema.
    pub(crate) async fn validator(
        &self,
        session: &Arc<Session>,
    ) -> Result<Arc<jsonschema::Validator>, String> {
        if let Some(v) = self.validator.get() {
            return v.clone();
        }
        let schema = self.describe(session).await?.input_schema.clone();
        let v = jsonschema::validator_for(&schema)
            .map(Arc::new)
            .map_err(|e| format!("{}: its input schema is invalid: {e}", self.name));
        self.validator.get_or_init(|| v).clone()
    }
}

/// The name of the tool on the plugins' language servers.
pub const LSP_TOOL: &str = "LSP";

/// The session's tools, by name.
#[derive(Debug, Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
}

impl ToolRegistry {
    pub(super) fn for_session(session: &Session) -> Self {
        let mut tools = Vec::new();
        for t in BuiltinTool::ALL {
            tools.push(RegisteredTool {
                name: t.name().to_string(),
                source: ToolSource::Builtin(t),
                grant: t.grant(&session.cwd, &session.options().programs),
                approved_digest: None,
                description: OnceLock::new(),
                validator: OnceLock::new(),
            });
        }
        for p in &session.plugins {
            let Some(w) = &p.plugin.warden else { continue };
            let described = w.tools.iter().filter_map(|component| {
                let c = w.components.get(component)?;
                let grant = session.component_grant(&p.id, component);
                let approved_digest = session.component_digest(&p.id, component);
                let pin = match &approved_digest {
                    Some(d) => DigestPin::Sha256(d),
                    None => DigestPin::None,
                };
                let description =
                    session
                        .components()
                        .map_err(|e| e.to_string())
                        .and_then(|cache| {
                            describe_file(cache.runtime(), &c.path, &session.cwd, || {
                                cache
                                    .file(&c.path, World::Tool, &grant, pin)
                                    .map_err(|e| e.to_string())
                            })
                        });
                Some((component, c, grant, approved_digest, description))
            });
            let named = name_tools(
                &p.id,
                &p.plugin.name,
                described.map(|(component, c, grant, digest, d)| {
                    (component.as_str(), d, (c, grant, digest))
                }),
            );
            for (component, name, description, (c, grant, approved_digest)) in named {
                tools.push(RegisteredTool {
                    name,
                    source: ToolSource::Plugin {
                        plugin_id: p.id.clone(),
                        component: component.to_string(),
                        path: c.path.clone(),
                    },
                    grant,
                    approved_digest,
                    description: OnceLock::from(description),
                    validator: OnceLock::new(),
                });
            }
        }
        // Only when a plugin configures a language server, as Claude Code offers it.
        if crate::lsp::configured(session) {
            tools.push(RegisteredTool {
                name: LSP_TOOL.to_string(),
                source: ToolSource::Lsp,
                grant: Grant::default(),
                approved_digest: None,
                description: OnceLock::new(),
                validator: OnceLock::new(),
            });
        }
        ToolRegistry { tools }
    }

    /// The tool named `name` (exactly, as rules and models spell it).
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every tool's name, in registry order (built-in first).
    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.clone()).collect()
    }

    /// Every tool.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter()
    }
}

/// `mcp__plugin_<plugin>_warden__<tool>`, with characters outside `[A-Za-z0-9_-]` made `_`
/// as Claude Code does for MCP names; `tool` is the name the component's `describe()` gives.
pub fn plugin_tool_name(plugin: &str, tool: &str) -> String {
    use warden_config::mcp::sanitize;
    format!(
        "mcp__plugin_{}_warden__{}",
        sanitize(plugin),
        sanitize(tool)
    )
}

/// Longest tool name `describe()` may give, as MCP bounds a tool's name.
pub const MAX_TOOL_NAME: usize = 128;

/// Checks a name `describe()` gave as MCP checks a tool's name: 1 to 128 characters of
/// `[A-Za-z0-9_.-]`.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("its describe() gives an empty tool name".into());
    }
    if name.chars().count() > MAX_TOOL_NAME {
        return Err(format!(
            "its describe() gives a tool name of {} characters, more than the {MAX_TOOL_NAME} MCP allows",
            name.chars().count()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "its describe() gives the tool name {name:?}, whose {bad:?} is not allowed in an MCP tool name (letters, digits, `_`, `-` and `.` only)"
        ));
    }
    Ok(())
}

/// Names the tools of one plugin from what their components' `describe()` gave: each is
/// offered as [`plugin_tool_name`] of its name, once it passes [`check_tool_name`], and the
/// first component (in the manifest's `tools` order) keeps a name two of them give. A tool that
/// cannot be named keeps its component's name and, as its description, the error saying why,
/// so listing it says what is wrong and calling it is refused; these come after the named ones,
/// so their names never shadow one. Yields `(component, name, description, extra)`.
pub fn name_tools<'a, T>(
    plugin_id: &str,
    plugin: &str,
    described: impl Iterator<Item = (&'a str, Result<ToolDescription, String>, T)>,
) -> Vec<(&'a str, String, Result<ToolDescription, String>, T)> {
    let mut named = Vec::new();
    let mut failed = Vec::new();
    let mut taken: HashMap<String, &str> = HashMap::new();
    for (component, d, extra) in described {
        let checked = d.and_then(|d| {
            check_tool_name(&d.name)?;
            Ok(d)
        });
        match checked {
            Ok(d) => {
                let name = plugin_tool_name(plugin, &d.name);
                if let Some(first) = taken.get(&name) {
                    let e = format!(
                        "plugin {plugin_id}: components `{first}` and `{component}` both describe a tool that is offered as `{name}`; only `{first}` is; give `{component}` another name in its describe()"
                    );
                    failed.push((
                        component,
                        plugin_tool_name(plugin, component),
                        Err(e),
                        extra,
                    ));
                } else {
                    taken.insert(name.clone(), component);
                    named.push((component, name, Ok(d), extra));
                }
            }
            Err(e) => failed.push((
                component,
                plugin_tool_name(plugin, component),
                Err(format!("plugin {plugin_id}: component `{component}`: {e}")),
                extra,
            )),
        }
    }
    named.extend(failed);
    named
}

/// Describes every tool of a plugin (its `warden.toml` section; `root` is the plugin's
/// directory) and names them as a session will, recording each description, so the session
/// finds them without running the components: `(component, the name it is offered under, or
/// why it cannot be offered)`. A tool whose component file does not exist is left out. For
/// what prepares components ahead: `warden build`, `plugin install`, `update` and `enable`.
pub fn describe_plugin_tools(
    runtime: &Arc<Runtime>,
    plugin_id: &str,
    plugin_name: &str,
    section: &warden_plugins::warden::WardenSection,
    root: &Path,
) -> Vec<(String, Result<String, String>)> {
    let described = section.tools.iter().filter_map(|component| {
        let c = section.components.get(component)?;
        if !c.path.is_file() {
            return None;
        }
        let d = describe_file(runtime, &c.path, root, || {
            // Linked with the capabilities its manifest asks for, so it loads whatever it is
            // granted later; its bytes need no pin, since nothing can be reached while it
            // describes itself (see `describe_component`).
            let grant = c.capabilities.resolve(&warden_vocab::GrantRoots {
                plugin_root: root,
                data_dir: root,
                project: root,
                home: None,
            });
            runtime
                .load_file(&c.path, World::Tool, &grant, DigestPin::Unchecked)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        Some((component.as_str(), d, ()))
    });
    name_tools(plugin_id, plugin_name, described)
        .into_iter()
        .map(|(component, name, d, ())| (component.to_string(), d.map(|_| name)))
        .collect()
}

/// Where the description of the component whose wasm hashes to `digest` is recorded.
fn recorded_path(runtime: &Runtime, digest: &str) -> Option<PathBuf> {
    let dir = runtime.config().cache_dir.as_ref()?;
    Some(dir.join("tools").join(format!("{digest}.json")))
}

/// The description of the tool component at `path`: the one recorded for its digest, else
/// asked of the component `load` gives (see [`describe_component`]) and recorded.
pub fn describe_file(
    runtime: &Arc<Runtime>,
    path: &Path,
    cwd: &Path,
    load: impl FnOnce() -> Result<Arc<LoadedComponent>, String>,
) -> Result<ToolDescription, String> {
    if let Some(digest) = runtime.recorded_digest(path)
        && let Some(recorded) = recorded_path(runtime, &digest)
        && let Ok(text) = std::fs::read(&recorded)
        && let Ok(d) = serde_json::from_slice::<ToolDescription>(&text)
    {
        return Ok(d);
    }
    let component = load()?;
    describe_component(runtime, &component, cwd)
}

/// Asks a loaded tool component to describe itself, with every capability use refused and no
/// environment (so the answer is the bytes' alone), and records the answer by its digest in
/// the compile cache. Blocks: the call runs on a thread of its own, so this may be called
/// from synchronous code and from inside an async runtime alike.
pub fn describe_component(
    runtime: &Arc<Runtime>,
    component: &LoadedComponent,
    cwd: &Path,
) -> Result<ToolDescription, String> {
    let mut ctx = CallContext::with_policy(cwd, component.grant(), Arc::new(NothingGranted));
    ctx.env.clear();
    let info = std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a runtime to describe the tool: {e}"))?;
            rt.block_on(runtime.describe_tool(
                component,
                &Limits::with_deadline(DESCRIBE_DEADLINE),
                ctx,
            ))
            .map_err(|e| e.to_string())
        })
        .join()
        .unwrap_or_else(|_| Err("describing the tool panicked".into()))
    })?;
    let input_schema: Value = serde_json::from_str(&info.input_schema).map_err(|e| {
        format!(
            "component {}: the input schema its describe() gives is not valid JSON: {e}",
            component.name()
        )
    })?;
    let d = ToolDescription {
        name: info.name,
        description: info.description,
        input_schema,
    };
    // A record that cannot be written only means asking again next time.
    if let Some(path) = recorded_path(runtime, component.digest())
        && let Ok(bytes) = serde_json::to_vec(&d)
    {
        let _ = warden_vocab::fs::create_private_dir(path.parent().unwrap_or(Path::new(".")))
            .and_then(|()| warden_vocab::fs::write_atomic(&path, &bytes));
    }
    Ok(d)
}

/// The policy `describe()` runs under: a tool describes itself without reaching anything.
struct NothingGranted;

impl NothingGranted {
    const WHY: &str = "nothing may be reached while a tool describes itself";
}

impl Policy for NothingGranted {
    fn check_path(&self, _path: &Path, _write: bool) -> Result<(), PolicyError> {
        Err(PolicyError::NothingReachable(Self::WHY))
    }

    fn check_exec(&self, _argv: &[String], _cwd: &Path) -> Result<(), PolicyError> {
        Err(PolicyError::NothingReachable(Self::WHY))
    }

    fn check_url(&self, _url: &str) -> Result<(), PolicyError> {
        Err(PolicyError::NothingReachable(Self::WHY))
    }

    fn denied_paths(&self, _roots: &[PathBuf]) -> Result<DeniedPaths, PolicyError> {
        Err(PolicyError::NothingReachable(Self::WHY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(name: &str) -> Result<ToolDescription, String> {
        Ok(ToolDescription {
            name: name.to_string(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
        })
    }

    #[test]
    fn tool_names_are_checked_as_mcp_checks_them() {
        for good in ["count", "json_query", "a.b-c_9", &"x".repeat(MAX_TOOL_NAME)] {
            assert_eq!(check_tool_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "two words",
            "slash/y",
            "é",
            "tab\t",
            &"x".repeat(MAX_TOOL_NAME + 1),
        ] {
            assert!(check_tool_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_tool_is_named_by_its_describe_and_a_shared_name_names_both_components() {
        let named = name_tools(
            "fmt@market",
            "fmt",
            [
                ("format", described("format.all"), 1),
                ("second", described("format_all"), 2),
                ("broken", described("no spaces"), 3),
                ("lint", described("lint"), 4),
            ]
            .into_iter(),
        );
        let row = |component: &str| {
            named
                .iter()
                .find(|(c, ..)| *c == component)
                .unwrap_or_else(|| panic!("{component} not named"))
        };
        let (_, name, d, _) = row("format");
        assert_eq!(name, "mcp__plugin_fmt_warden__format_all");
        assert!(d.is_ok());
        assert_eq!(row("lint").1, "mcp__plugin_fmt_warden__lint");
        // `.` is made `_` in the offered name, so both would be offered under one name.
        let (_, _, d, _) = row("second");
        let e = d.as_ref().expect_err("a shared name");
        assert!(
            e.contains("`format`") && e.contains("`second`") && e.contains("fmt@market"),
            "{e}"
        );
        let (_, name, d, _) = row("broken");
        assert_eq!(name, "mcp__plugin_fmt_warden__broken");
        let e = d.as_ref().expect_err("an invalid name");
        assert!(e.contains("`broken`") && e.contains("\"no spaces\""), "{e}");
        // The named tools come first, so a failed one's fallback name never shadows one.
        let order: Vec<&str> = named.iter().map(|(c, ..)| *c).collect();
        assert_eq!(order, ["format", "lint", "second", "broken"]);
    }
}
