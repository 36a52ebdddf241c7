//! The language servers of a session's plugins ([`warden_lsp`]), confined like every other
//! program a plugin starts, and what the session does with them:
//!
//! - the `LSP` tool, registered only when some enabled plugin configures a server, and run
//!   through the session's one pipeline (hooks, rules, transcript);
//! - after a Write or Edit of a file a server handles (with `diagnostics` not false), the
//!   diagnostics it publishes are appended to the result in `<new-diagnostics>`;
//! - `warden lsp list` and `warden lsp diagnostics`.
//!
//! Servers are `plugin:<plugin>:<server>`; the first one registered for an extension wins.
//! `command`, `args`, `env` and `workspaceFolder` expand `${CLAUDE_PLUGIN_ROOT}`,
//! `${CLAUDE_PLUGIN_DATA}`, `${CLAUDE_PROJECT_DIR}`, `${user_config.KEY}` and `${VAR}` as a
//! plugin's MCP server does. A `.env` file, or one the Read rules deny, is never sent.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use warden_lsp::{FileGate, LaunchGuard, Launcher, LspManager, ServerSpec};

use crate::session::Session;
use crate::session::processes::{ProcessGuard, ProcessOrigin, ProcessProfiles};

/// How long a Write or Edit waits for the server's first diagnostics of the file.
pub const EDIT_DIAGNOSTICS_WAIT: Duration = Duration::from_secs(5);
/// How long `warden lsp diagnostics` waits for a file's first diagnostics (a cold server
/// analyses the project first).
pub const CLI_DIAGNOSTICS_WAIT: Duration = Duration::from_secs(30);
/// Once diagnostics came, how long more may still come before they count as settled.
pub const SETTLE: Duration = Duration::from_millis(250);

/// Whether any enabled plugin configures a language server (valid or not): cheap, so the
/// tool registry and the Write/Edit path ask it before building anything.
pub fn configured(session: &Session) -> bool {
    session
        .plugins
        .iter()
        .any(|p| p.plugin.lsp_servers.keys().any(|k| k != "$schema"))
}

/// The session's servers, configured from its enabled plugins, in plugin order.
pub fn manager(session: &Session) -> LspManager {
    let profiles = session.process_profiles().clone();
    let project = session.cwd.clone();
    let mut specs = Vec::new();
    for p in &session.plugins {
        let options = session.plugin_options(p);
        for (name, entry) in &p.plugin.lsp_servers {
            if name == "$schema" {
                continue;
            }
            let id = warden_lsp::server_id(&p.plugin.name, name);
            let root = p.plugin.root.display().to_string();
            let data = p.data_dir.display().to_string();
            let proj = project.display().to_string();
            let vars = |var: &str| -> Option<String> {
                match var {
                    "CLAUDE_PLUGIN_ROOT" => Some(root.clone()),
                    "CLAUDE_PLUGIN_DATA" => Some(data.clone()),
                    "CLAUDE_PROJECT_DIR" => Some(proj.clone()),
                    v => match v.strip_prefix("user_config.") {
                        Some(key) => options.get(key).map(crate::plugin_config::option_string),
                        None => std::env::var(v).ok(),
                    },
                }
            };
            let config = warden_lsp::config::parse(entry)
                .map_err(|problems| {
                    problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .and_then(|c| c.expand(&id, &vars))
                .map(|mut c| {
                    for (k, v) in [
                        ("CLAUDE_PLUGIN_ROOT", &root),
                        ("CLAUDE_PLUGIN_DATA", &data),
                        ("CLAUDE_PROJECT_DIR", &proj),
                    ] {
                        c.env.entry(k.to_string()).or_insert_with(|| v.clone());
                    }
                    c
                });
            specs.push(ServerSpec {
                id,
                config,
                launcher: Arc::new(Confined {
                    profiles: profiles.clone(),
                    origin: ProcessOrigin::Plugin {
                        id: p.id.clone(),
                        root: p.plugin.root.clone(),
                        data_dir: p.data_dir.clone(),
                    },
                }),
            });
        }
    }
    LspManager::new(&project, specs, Arc::new(Gate { profiles }))
}

/// Starts a plugin's server confined, with its plugin's profile (see
/// [`crate::session::processes`]).
struct Confined {
    profiles: Arc<ProcessProfiles>,
    origin: ProcessOrigin,
}

impl Launcher for Confined {
    fn prepare(
        &self,
        cmd: &mut std::process::Command,
    ) -> Result<Option<Box<dyn LaunchGuard>>, String> {
        Ok(self
            .profiles
            .confine(&self.origin, cmd, None)?
            .map(|g| Box::new(Guard(g)) as Box<dyn LaunchGuard>))
    }
}

struct Guard(ProcessGuard);

impl LaunchGuard for Guard {
    fn finish(self: Box<Self>, failed: bool, stderr: &str) -> Vec<String> {
        self.0.finish(failed, stderr)
    }
}

/// Refuses `.env` files and Read-denied paths before any `didOpen`.
struct Gate {
    profiles: Arc<ProcessProfiles>,
}

impl FileGate for Gate {
    fn check(&self, path: &Path) -> Result<(), String> {
        self.profiles.may_show(path)
    }
}

/// `path` made absolute against the session's directory.
pub fn absolute(session: &Session, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        session.cwd.join(p)
    }
}

/// `path` relative to the session's directory when inside it.
pub fn display(session: &Session, path: &Path) -> String {
    path.strip_prefix(&session.cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Runs one call of the `LSP` tool (already allowed by the pipeline).
pub async fn run_tool(
    session: &Session,
    input: &Value,
) -> Result<crate::runtime::ToolCallOutcome, String> {
    use crate::runtime::ToolCallOutcome;
    let input: warden_lsp::ToolInput = match serde_json::from_value(input.clone()) {
        Ok(i) => i,
        Err(e) => return Ok(ToolCallOutcome::InvalidInput(format!("LSP: {e}"))),
    };
    let path = absolute(session, &input.file_path);
    match warden_lsp::ops::run(session.lsp(), &input, &path).await {
        Ok(out) => Ok(ToolCallOutcome::Ok {
            content: out.result.clone(),
            structured: serde_json::to_string(&out).ok(),
        }),
        Err(e) => Ok(ToolCallOutcome::Failed(e)),
    }
}

/// The `<new-diagnostics>` block for a file a Write or Edit just changed, or `None` (no
/// server for it, `diagnostics: false`, nothing published, or the server failed: an edit
/// that succeeded is not turned into a failure by its language server).
pub async fn after_edit(session: &Session, file_path: &str) -> Option<String> {
    let path = absolute(session, file_path);
    let lsp = session.lsp();
    if !lsp.diagnoses(&path) {
        return None;
    }
    let (_, diags) = lsp
        .diagnostics(&path, true, EDIT_DIAGNOSTICS_WAIT, SETTLE)
        .await
        .ok()??;
    warden_lsp::ops::new_diagnostics_block(&display(session, &path), &diags)
}

/// `content`, the result of a built-in tool's call, with the `<new-diagnostics>` of the file
/// a Write or Edit changed appended. Costs nothing when no plugin configures a server.
pub async fn with_new_diagnostics(
    session: &Session,
    tool: crate::tools::BuiltinTool,
    input: &Value,
    mut content: String,
) -> String {
    use crate::tools::BuiltinTool;
    if !matches!(tool, BuiltinTool::Write | BuiltinTool::Edit) || !configured(session) {
        return content;
    }
    let Some(file) = input.get("file_path").and_then(Value::as_str) else {
        return content;
    };
    if let Some(block) = after_edit(session, file).await {
        content.push_str("\n\n");
        content.push_str(&block);
    }
    content
}
