//! WASM hook handlers, run for the hooks crate's dispatcher with the session's runtime,
//! components and policy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use warden_hooks::{RawOutcome, WasmHookCall, WasmHookRunner};

use super::Session;
use warden_hooks::TypedHookResult;

use crate::runtime::{DigestPin, Grant, Limits, LoadedComponent, Policy, World};

/// Runs WASM hook handlers. The runtime is created on first use, so a process whose event
/// matches no WASM hook never pays for an engine.
pub struct WasmRunner {
    session: Arc<Session>,
    slots: Arc<WasmSlots>,
    policy: Arc<dyn Policy>,
}

/// The session's declared components, per plugin id, per component name: looked up by `&str`
/// on every call, without building an owned key. Built once per session and shared by every
/// runner it hands out, so a dispatch neither recomputes grants nor re-reads a component file.
pub(super) struct WasmSlots(HashMap<String, HashMap<String, ComponentSlot>>);

impl WasmSlots {
    pub(super) fn of(session: &Session) -> Self {
        let mut slots: HashMap<String, HashMap<String, ComponentSlot>> = HashMap::new();
        for p in &session.plugins {
            if let Some(w) = &p.plugin.warden {
                let by_name = slots.entry(p.id.clone()).or_default();
                for name in w.components.keys() {
                    by_name.insert(
                        name.clone(),
                        ComponentSlot {
                            grant: session.component_grant(&p.id, name),
                            approved_digest: session.component_digest(&p.id, name),
                            loaded: Mutex::new(None),
                        },
                    );
                }
            }
        }
        WasmSlots(slots)
    }
}

/// A declared component: its grant, the digest that grant was approved for, and the component
/// loaded for it (with the file it was loaded from).
///
/// Once loaded, a slot keeps its component for the rest of the session without looking at
/// the file again: the bytes whose digest was checked are the bytes that run, and a file
/// replaced later (an update, or tampering) takes effect in the next session, which checks it
/// anew. Claude Code likewise picks up plugin changes on restart.
struct ComponentSlot {
    grant: Grant,
    approved_digest: Option<String>,
    loaded: Mutex<Option<(PathBuf, Arc<LoadedComponent>)>>,
}

impl WasmRunner {
    /// A runner for `session`'s plugins; capability uses are checked by `policy` after the
    /// grant.
    pub fn new(session: Arc<Session>, policy: Arc<dyn Policy>) -> Self {
        let slots = session.wasm_slots().clone();
        WasmRunner {
            session,
            slots,
            policy,
        }
    }

    /// The component for `slot` at `path`, loading it on first use.
    fn slot_component(
        &self,
        slot: &ComponentSlot,
        path: &Path,
    ) -> Result<Arc<LoadedComponent>, String> {
        let mut loaded = slot.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((p, c)) = &*loaded
            && p == path
        {
            return Ok(c.clone());
        }
        let pin = match &slot.approved_digest {
            Some(d) => DigestPin::Sha256(d),
            None => DigestPin::None,
        };
        // Loaded under the slot's lock: concurrent first calls load (and verify) once.
        let c = self
            .session
            .components()
            .map_err(|e| e.to_string())?
            .file(path, World::Hook, &slot.grant, pin)
            .map_err(|e| e.to_string())?;
        *loaded = Some((path.to_path_buf(), c.clone()));
        Ok(c)
    }
}

impl WasmHookRunner for WasmRunner {
    fn run<'a>(
        &'a self,
        call: WasmHookCall<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = RawOutcome> + Send + 'a>> {
        Box::pin(async move {
            let failed = RawOutcome::error;
            let components = match self.session.components() {
                Ok(c) => c,
                Err(e) => return failed(e.to_string()),
            };
            let rt = components.runtime();
            let slot = self
                .slots
                .0
                .get(call.plugin_id)
                .and_then(|c| c.get(call.component_name));
            let no_grant = Grant::default();
            let (grant, component) = match slot {
                Some(slot) => (&slot.grant, self.slot_component(slot, call.component)),
                // A component no plugin declares gets nothing, so there is nothing to pin.
                None => (
                    &no_grant,
                    components
                        .file(call.component, World::Hook, &no_grant, DigestPin::None)
                        .map_err(|e| e.to_string()),
                ),
            };
            let component = match component {
                Ok(c) => c,
                Err(e) => return failed(e),
            };
            let limits = Limits::with_deadline(call.timeout.max(Duration::from_millis(1)));
            let policy = match self.session.own_data_dir(call.plugin_id, grant) {
                Some(dir) => Arc::new(OwnDataDir {
                    dir,
                    inside: self.session.guest_policy(true),
                    outside: self.policy.clone(),
                }) as Arc<dyn Policy>,
                None => self.policy.clone(),
            };
            let mut ctx = self.session.call_context(call.project_dir, grant, policy);
            self.session
                .add_plugin_env(&mut ctx, call.plugin_id, grant, call.project_dir);
            let event = call.event.as_str();
            match rt
                .call_hook(&component, event, call.input, &limits, ctx)
                .await
            {
                Ok(done) => {
                    let out = done.result.to_cc_output(event);
                    let stderr = match (out.stderr, done.stderr.text.is_empty()) {
                        (Some(reason), _) => reason,
                        (None, false) => done.stderr.text,
                        (None, true) => String::new(),
                    };
                    // The typed result goes to classification as the JSON object it renders
                    // to, not as text to be parsed again.
                    match out.json {
                        Value::Object(json) => RawOutcome::exited_json(out.exit_code, json, stderr),
                        other => RawOutcome::exited(out.exit_code, other.to_string(), stderr),
                    }
                }
                Err(e @ crate::runtime::RuntimeError::Deadline { .. }) => RawOutcome {
                    timed_out: true,
                    ..RawOutcome::error(e.to_string())
                },
                Err(e) => failed(e.to_string()),
            }
        })
    }
}

/// Runs `mcp_tool` hook handlers on the session's MCP servers. A server that is configured
/// and approved but not yet started is started for the handler (Warden has no start-up phase
/// that would have connected it); one that is not configured, not approved or fails to start
/// is "not connected", a non-blocking error as in Claude Code. The call is the handler's
/// own: it is not a model's tool call, so it does not pass the permission rules.
pub struct McpHookRunner {
    session: Arc<Session>,
}

impl McpHookRunner {
    /// A runner on `session`'s servers.
    pub fn new(session: Arc<Session>) -> Self {
        McpHookRunner { session }
    }
}

impl warden_hooks::McpToolRunner for McpHookRunner {
    fn call<'a>(
        &'a self,
        call: warden_hooks::McpToolCall<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = warden_hooks::McpToolReply> + Send + 'a>>
    {
        use warden_hooks::McpToolReply;
        Box::pin(async move {
            let hub = self.session.mcp();
            let Some(server) = hub.by_name(call.server) else {
                return McpToolReply::NotConnected(format!(
                    "no MCP server `{}` is configured",
                    call.server
                ));
            };
            let conn = match hub.connect(server).await {
                Ok(c) => c,
                Err(e) => return McpToolReply::NotConnected(e),
            };
            match conn
                .call(call.tool, call.arguments, Some(call.timeout))
                .await
            {
                Ok(r) if r.is_error == Some(true) => {
                    McpToolReply::ToolError(crate::mcp::client::result_text(&r))
                }
                Ok(r) => McpToolReply::Text(crate::mcp::client::result_text(&r)),
                Err(e) => McpToolReply::Failed(e.0),
            }
        })
    }
}

/// A plugin's data directory is its own: Claude Code's command hooks write there freely, so a
/// component granted its `${CLAUDE_PLUGIN_DATA}` is not asked about paths inside it (deny
/// rules still apply there, and everything outside is checked as usual).
struct OwnDataDir {
    dir: std::path::PathBuf,
    inside: Arc<dyn Policy>,
    outside: Arc<dyn Policy>,
}

impl Policy for OwnDataDir {
    fn check_path(
        &self,
        path: &std::path::Path,
        write: bool,
    ) -> Result<(), crate::runtime::PolicyError> {
        if path.starts_with(&self.dir) {
            self.inside.check_path(path, write)
        } else {
            self.outside.check_path(path, write)
        }
    }

    fn check_exec(
        &self,
        argv: &[String],
        cwd: &std::path::Path,
    ) -> Result<(), crate::runtime::PolicyError> {
        self.outside.check_exec(argv, cwd)
    }

    fn check_url(&self, url: &str) -> Result<(), crate::runtime::PolicyError> {
        self.outside.check_url(url)
    }

    fn denied_paths(
        &self,
        roots: &[std::path::PathBuf],
    ) -> Result<crate::runtime::DeniedPaths, crate::runtime::PolicyError> {
        self.outside.denied_paths(roots)
    }
}
