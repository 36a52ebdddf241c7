//! The MCP servers of one session: configured where Claude Code configures them (see
//! [`warden_config::mcp`]), expanded once, connected on first use, and shut down with the
//! session.
//!
//! Connecting is lazy and per server: `warden mcp call github …` or a call to
//! `mcp__github__create_issue` starts only `github`; listing every tool starts them all,
//! concurrently. A project server that is not approved, or disabled, is never started.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::Value;
use warden_config::mcp::{Approval, McpScope, McpServers, PluginServer, ServerEntry, ServerSpec};
use warden_config::{Home, Scope, Settings};

use super::client::{Connection, SpawnContext, startup_timeout};
use crate::session::processes::{ProcessOrigin, ProcessProfiles};

/// One configured server and its connection, once tried.
pub struct HubServer {
    /// The configuration entry.
    pub entry: ServerEntry,
    /// The entry after variable expansion, or why it could not be expanded.
    pub spec: Result<ServerSpec, String>,
    conn: tokio::sync::OnceCell<Result<Arc<Connection>, String>>,
}

impl std::fmt::Debug for HubServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubServer")
            .field("name", &self.entry.name)
            .field("scope", &self.entry.scope)
            .finish_non_exhaustive()
    }
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Connected; `tools` listed.
    Connected {
        /// How many tools it lists.
        tools: usize,
        /// `stdio`, `http` or `sse`.
        transport: &'static str,
    },
    /// Not tried yet.
    NotConnected,
    /// Tried and failed.
    Failed(String),
    /// A project (`.mcp.json`) server nobody approved.
    NeedsApproval,
    /// Listed in `disabledMcpjsonServers`.
    Disabled,
    /// Its entry is invalid or names an unset variable.
    Invalid(String),
}

impl ServerState {
    /// A word for listings.
    pub fn label(&self) -> &'static str {
        match self {
            ServerState::Connected { .. } => "connected",
            ServerState::NotConnected => "not connected",
            ServerState::Failed(_) => "failed",
            ServerState::NeedsApproval => "needs approval",
            ServerState::Disabled => "disabled",
            ServerState::Invalid(_) => "invalid",
        }
    }
}

/// A tool of a connected server, under the name rules and models use.
#[derive(Debug, Clone)]
pub struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// The server's tool-name prefix (`github`, `plugin_fmt_fmt`).
    pub server: String,
    /// The tool as the server listed it.
    pub tool: Tool,
}

/// The session's servers.
#[derive(Debug, Default)]
pub struct McpHub {
    servers: Vec<HubServer>,
    project: PathBuf,
    problems: Vec<String>,
    /// Confines plugin and project stdio servers (`None`: as Claude Code, unconfined).
    profiles: Option<Arc<ProcessProfiles>>,
}

impl McpHub {
    /// Reads the user, local and project servers, then adds each plugin's.
    pub fn load<'a>(
        cwd: &Path,
        home: &Home,
        settings: &Settings,
        plugins: impl IntoIterator<Item = (PluginServer, &'a serde_json::Map<String, Value>)>,
    ) -> McpHub {
        let mut config = McpServers::load(cwd, home, settings);
        for (p, servers) in plugins {
            config.add_plugin_servers(p, servers);
        }
        let McpServers { servers, problems } = config;
        let servers = servers
            .into_iter()
            .map(|entry| {
                let spec = resolve(&entry, cwd);
                HubServer {
                    entry,
                    spec,
                    conn: tokio::sync::OnceCell::new(),
                }
            })
            .collect();
        McpHub {
            servers,
            project: cwd.to_path_buf(),
            problems,
            profiles: None,
        }
    }

    /// Expands `${user_config.KEY}` in each plugin server's config with that plugin's values
    /// (`options` by plugin id), as Claude Code does.
    pub fn with_user_config(
        mut self,
        options: &std::collections::BTreeMap<String, serde_json::Map<String, Value>>,
    ) -> Self {
        for s in &mut self.servers {
            if let Some(o) = s
                .entry
                .plugin
                .as_ref()
                .and_then(|p| options.get(&p.plugin_id))
            {
                s.spec = resolve_with(&s.entry, &self.project, o);
            }
        }
        self
    }

    /// Confines the stdio servers of plugins and of the project's `.mcp.json` with
    /// `profiles`. The user's own servers (user and local scope, added by the user) run as
    /// the user configured them.
    pub fn confined_by(mut self, profiles: Arc<ProcessProfiles>) -> Self {
        self.profiles = Some(profiles);
        self
    }

    /// Every configured server, in precedence order.
    pub fn servers(&self) -> &[HubServer] {
        &self.servers
    }

    /// What could not be read, each naming its file.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The server whose tool names start `mcp__<prefix>__`.
    pub fn by_prefix(&self, prefix: &str) -> Option<&HubServer> {
        self.servers
            .iter()
            .find(|s| s.entry.tool_prefix_name() == prefix)
    }

    /// The server an `mcp_tool` hook handler or `warden mcp call` names: the configured name,
    /// `plugin:<plugin>:<server>`, or the tool-name prefix.
    pub fn by_name(&self, name: &str) -> Option<&HubServer> {
        self.servers
            .iter()
            .find(|s| s.entry.handler_name() == name)
            .or_else(|| self.by_prefix(name))
    }

    /// The connection to `server`, made on first use.
    pub async fn connect(&self, server: &HubServer) -> Result<Arc<Connection>, String> {
        match server.entry.approval {
            Approval::Approved => {}
            Approval::Pending => {
                return Err(format!(
                    "MCP server `{}` comes from the project's {} and is not approved: run `warden mcp approve {}` (or list it in `enabledMcpjsonServers` in your user settings; the project's own settings files, `.claude/settings.local.json` included, cannot approve it)",
                    server.entry.name, server.entry.origin, server.entry.name
                ));
            }
            Approval::Disabled => {
                return Err(format!(
                    "MCP server `{}` is disabled by `disabledMcpjsonServers`",
                    server.entry.name
                ));
            }
        }
        let spec = server.spec.as_ref().map_err(Clone::clone)?;
        server
            .conn
            .get_or_init(|| async {
                let origin = match (&server.entry.plugin, server.entry.scope) {
                    (Some(p), _) => Some(ProcessOrigin::Plugin {
                        id: p.plugin_id.clone(),
                        root: p.root.clone(),
                        data_dir: p.data_dir.clone(),
                    }),
                    (None, McpScope::Project) => Some(ProcessOrigin::Settings(Scope::Project)),
                    (None, _) => None,
                };
                let ctx = SpawnContext {
                    cwd: &self.project,
                    project_dir: &self.project,
                    confine: self.profiles.as_deref().zip(origin),
                };
                Connection::connect(spec, &ctx, startup_timeout())
                    .await
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .await
            .clone()
    }

    /// Connects every approved, valid server at once.
    pub async fn connect_all(&self) {
        let tries = self
            .servers
            .iter()
            .filter(|s| s.entry.approval == Approval::Approved && s.spec.is_ok())
            .map(|s| self.connect(s));
        futures::future::join_all(tries).await;
    }

    /// Where `server` stands, without connecting it.
    pub fn state(&self, server: &HubServer) -> ServerState {
        match server.entry.approval {
            Approval::Pending => return ServerState::NeedsApproval,
            Approval::Disabled => return ServerState::Disabled,
            Approval::Approved => {}
        }
        if let Err(e) = &server.spec {
            return ServerState::Invalid(e.clone());
        }
        match server.conn.get() {
            None => ServerState::NotConnected,
            Some(Ok(c)) => ServerState::Connected {
                tools: c.tools().len(),
                transport: c.transport,
            },
            Some(Err(e)) => ServerState::Failed(e.clone()),
        }
    }

    /// Every tool of every server that connects (connecting them all).
    pub async fn tools(&self) -> Vec<McpTool> {
        self.connect_all().await;
        let mut out = Vec::new();
        for s in &self.servers {
            if let Some(Ok(c)) = s.conn.get() {
                let prefix = s.entry.tool_prefix_name();
                for tool in c.tools() {
                    out.push(McpTool {
                        name: warden_config::mcp::tool_name(&prefix, &tool.name),
                        server: prefix.clone(),
                        tool,
                    });
                }
            }
        }
        out
    }

    /// The tool named `full_name` (`mcp__<server>__<tool>`), connecting only its server.
    /// `Ok(None)`: no configured server has that prefix. `Err`: the server's does, but it
    /// cannot be used or has no such tool.
    pub async fn find(
        &self,
        full_name: &str,
    ) -> Result<Option<(McpTool, Arc<Connection>)>, String> {
        let Some(rest) = full_name.strip_prefix("mcp__") else {
            return Ok(None);
        };
        // Server prefixes may themselves contain `__`; the longest configured one wins.
        let mut candidates: Vec<&HubServer> = self
            .servers
            .iter()
            .filter(|s| {
                let p = s.entry.tool_prefix_name();
                rest.len() > p.len() + 2
                    && rest.starts_with(&p)
                    && rest[p.len()..].starts_with("__")
            })
            .collect();
        candidates.sort_by_key(|s| std::cmp::Reverse(s.entry.tool_prefix_name().len()));
        let Some(server) = candidates.first() else {
            return Ok(None);
        };
        let conn = self.connect(server).await?;
        let prefix = server.entry.tool_prefix_name();
        let tool = conn
            .tools()
            .into_iter()
            .find(|t| warden_config::mcp::tool_name(&prefix, &t.name) == full_name)
            .ok_or_else(|| {
                let names: Vec<String> = conn.tools().iter().map(|t| t.name.to_string()).collect();
                format!(
                    "MCP server `{}` has no tool named like {full_name}; it offers: {}",
                    server.entry.name,
                    if names.is_empty() {
                        "nothing".to_string()
                    } else {
                        names.join(", ")
                    }
                )
            })?;
        Ok(Some((
            McpTool {
                name: full_name.to_string(),
                server: prefix,
                tool,
            },
            conn,
        )))
    }

    /// Ends every connection (and every stdio server's process group).
    pub async fn shutdown(&self) {
        for s in &self.servers {
            if let Some(Ok(c)) = s.conn.get() {
                c.shutdown().await;
            }
        }
    }
}

fn resolve(entry: &ServerEntry, project: &Path) -> Result<ServerSpec, String> {
    resolve_with(entry, project, &serde_json::Map::new())
}

/// `entry` with its variables expanded; a plugin server's `${user_config.KEY}` from `options`.
fn resolve_with(
    entry: &ServerEntry,
    project: &Path,
    options: &serde_json::Map<String, Value>,
) -> Result<ServerSpec, String> {
    let plugin = entry.plugin.clone();
    let project = project.display().to_string();
    let vars = move |name: &str| -> Option<String> {
        match (name, &plugin) {
            ("CLAUDE_PLUGIN_ROOT", Some(p)) => Some(p.root.display().to_string()),
            ("CLAUDE_PLUGIN_DATA", Some(p)) => Some(p.data_dir.display().to_string()),
            ("CLAUDE_PROJECT_DIR", _) => Some(project.clone()),
            (n, Some(_)) if n.starts_with("user_config.") => options
                .get(&n["user_config.".len()..])
                .map(crate::plugin_config::option_string),
            _ => std::env::var(name).ok(),
        }
    };
    warden_config::mcp::resolve(&entry.name, &entry.entry, &vars).map_err(|e| e.to_string())
}

#[cfg(test)]
mod user_config_tests {
    use super::*;
    use warden_config::mcp::{Approval, McpScope, PluginServer, Transport};

    fn entry(plugin: Option<&str>) -> ServerEntry {
        ServerEntry {
            name: "api".into(),
            scope: if plugin.is_some() {
                McpScope::Plugin
            } else {
                McpScope::Project
            },
            origin: "test".into(),
            entry: serde_json::json!({"command": "/bin/srv",
                "args": ["--url=https://${user_config.api_url}/mcp"]}),
            plugin: plugin.map(|id| PluginServer {
                plugin_id: id.into(),
                plugin_name: "cfg".into(),
                root: "/plugins/cfg".into(),
                data_dir: "/data/cfg".into(),
            }),
            approval: Approval::Approved,
        }
    }

    fn args(s: &HubServer) -> Vec<String> {
        match &s.spec {
            Ok(ServerSpec {
                transport: Transport::Stdio { args, .. },
                ..
            }) => args.clone(),
            other => panic!("not a stdio spec: {other:?}"),
        }
    }

    #[test]
    fn a_plugin_servers_user_config_is_expanded_and_no_other_servers() {
        let mut hub = McpHub::default();
        for e in [entry(Some("cfg@m")), entry(None)] {
            hub.servers.push(HubServer {
                spec: resolve(&e, Path::new("/p")),
                entry: e,
                conn: tokio::sync::OnceCell::new(),
            });
        }
        let options = std::collections::BTreeMap::from([(
            "cfg@m".to_string(),
            serde_json::Map::from_iter([("api_url".to_string(), serde_json::json!("good.test"))]),
        )]);
        let hub = hub.with_user_config(&options);
        assert_eq!(args(&hub.servers[0]), ["--url=https://good.test/mcp"]);
        // A project's server gets no plugin's values: the variable is unset there.
        assert!(hub.servers[1].spec.is_err(), "{:?}", hub.servers[1].spec);
    }
}
