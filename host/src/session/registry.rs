//! The tools a session offers: the built-in WASM tools and the tool components of its enabled
//! plugins (MCP tools will join the same registry).
//!
//! A plugin's tool is named as Claude Code names a plugin's MCP tools, with `warden` as the
//! server: `mcp__plugin_<plugin>_warden__<component>`. So the rules Claude Code users already
//! write for plugin tools (`mcp__plugin_fmt_warden`, `mcp__plugin_fmt_warden__*`,
//! `mcp__plugin_fmt_warden__format`) apply to them unchanged.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;

use super::Session;
use crate::runtime::{DigestPin, Grant, Limits, LoadedComponent, World};
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

/// What a tool says about itself (`describe()` of its component), kept once per session.
#[derive(Debug, Clone)]
pub struct ToolDescription {
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
            for name in &w.tools {
                let Some(c) = w.components.get(name) else {
                    continue;
                };
                tools.push(RegisteredTool {
                    name: plugin_tool_name(&p.plugin.name, name),
                    source: ToolSource::Plugin {
                        plugin_id: p.id.clone(),
                        component: name.clone(),
                        path: c.path.clone(),
                    },
                    grant: session.component_grant(&p.id, name),
                    approved_digest: session.component_digest(&p.id, name),
                    description: OnceLock::new(),
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

/// `mcp__plugin_<plugin>_warden__<component>`, with characters outside `[A-Za-z0-9_-]` made
/// `_` as Claude Code does for MCP names.
pub fn plugin_tool_name(plugin: &str, component: &str) -> String {
    use warden_config::mcp::sanitize;
    format!(
        "mcp__plugin_{}_warden__{}",
        sanitize(plugin),
        sanitize(component)
    )
}
