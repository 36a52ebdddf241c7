//! `plugin details <plugin>`: everything Warden knows about one installed plugin.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use warden_config::Scope;

use super::PluginManager;
use crate::capability::Capabilities;
use crate::digest::file_sha256;
use crate::error::PluginError;
use crate::warden::World;

/// Output of `plugin details`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginDetails {
    /// Plugin id (`name@marketplace`).
    pub plugin_id: String,
    /// Namespace name (plugin.json `name`).
    pub name: String,
    /// Installed version.
    pub version: String,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Scope of the installation used here.
    pub scope: Scope,
    /// Effective enablement for the current directory.
    pub enabled: bool,
    /// Cache directory (`${CLAUDE_PLUGIN_ROOT}`).
    pub install_path: PathBuf,
    /// Tree digest recorded at install.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Whether the installed copy still hashes to [`PluginDetails::sha256`].
    pub intact: bool,
    /// WASM components.
    pub components: Vec<ComponentDetails>,
    /// Hook handlers, one per (event, matcher, handler).
    pub hooks: Vec<HookDetails>,
    /// Namespaced skill names.
    pub skills: Vec<String>,
    /// Namespaced agent names.
    pub agents: Vec<String>,
    /// Namespaced command names.
    pub commands: Vec<String>,
    /// MCP servers: name → how it is reached (`command …` or the URL).
    pub mcp_servers: Vec<ServerDetails>,
    /// LSP servers.
    pub lsp_servers: Vec<ServerDetails>,
    /// Parts of the plugin Warden does not act on yet (see [`crate::unsupported`]).
    pub unsupported: Vec<crate::unsupported::UnsupportedPart>,
    /// For a plugin pulled from an OCI registry: what was pulled and who signed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciDetails>,
    /// For a plugin installed from a git or directory marketplace under its signed index: the
    /// index and who signed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_index: Option<SignedIndexDetails>,
}

/// The signed index a plugin was installed under.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedIndexDetails {
    /// The marketplace whose index it is.
    pub marketplace: String,
    /// `sha256:<hex>` of the index.
    pub index_digest: String,
    /// Key id of the trusted signer verified at install.
    pub signer: String,
}

/// The registry origin of an installed plugin.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OciDetails {
    /// `HOST/REPO:TAG` as installed.
    pub reference: String,
    /// `sha256:<hex>` of the manifest installed.
    pub manifest_digest: String,
    /// Key id of the trusted signer verified at install.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// One WASM component.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentDetails {
    /// Name.
    pub name: String,
    /// Path relative to the plugin root.
    pub path: String,
    /// `hook` or `tool`.
    pub world: World,
    /// sha256 of the `.wasm` file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// What it requests.
    pub requested: Capabilities,
    /// What is granted for the installed digest (`None`: no grant; the component does not run).
    pub granted: Option<Capabilities>,
}

/// One hook handler.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookDetails {
    /// Event (`PreToolUse`, …).
    pub event: String,
    /// Matcher (`*` when absent).
    pub matcher: String,
    /// Handler type (`command`, `http`, `prompt`, `agent`, `wasm`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// What it runs: the command, URL, prompt or component.
    pub handler: String,
}

/// One MCP or LSP server.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetails {
    /// Name (key).
    pub name: String,
    /// The command line or URL.
    pub target: String,
}

impl PluginManager {
    /// `details <plugin>`: the installed plugin's version, location, digest, state, WASM
    /// components with their requested and granted capabilities, hooks, skills, agents,
    /// commands and servers.
    pub fn details(&self, spec: &str) -> Result<PluginDetails, PluginError> {
        let (req, loaded, rec) = self.installed_request(spec)?;
        let id = req.plugin_id.clone();
        // Read here rather than through `grant_for`, which takes a corrupt file for no grant.
        let grant = self.store.grants()?.get(&id, &req.digest).cloned();
        self.check_settings()?;
        let mut components = Vec::new();
        if let Some(w) = &loaded.warden {
            for (name, c) in &w.components {
                components.push(ComponentDetails {
                    name: name.clone(),
                    path: c.rel_path.clone(),
                    world: c.world,
                    sha256: file_sha256(&c.path).ok(),
                    requested: c.capabilities.clone(),
                    granted: grant.as_ref().and_then(|g| g.component(name).cloned()),
                });
            }
        }
        let mut hooks = Vec::new();
        for set in &loaded.hooks {
            flatten_hooks(&set.hooks, &mut hooks);
        }
        if let Some(w) = &loaded.warden {
            flatten_hooks(&w.hooks, &mut hooks);
        }
        let servers = |m: &serde_json::Map<String, Value>| -> Vec<ServerDetails> {
            m.iter()
                .map(|(name, v)| ServerDetails {
                    name: name.clone(),
                    target: server_target(v),
                })
                .collect()
        };
        let scope = self.installed_scope(&id, None).unwrap_or(rec.scope);
        Ok(PluginDetails {
            name: loaded.name.clone(),
            version: rec.version.clone(),
            description: loaded.manifest.description.clone(),
            scope,
            enabled: self.is_enabled(&id, true),
            intact: crate::digest::tree_digest(&rec.install_path)
                .ok()
                .is_some_and(|d| d == req.digest),
            sha256: rec.warden.as_ref().map(|w| w.sha256.clone()),
            install_path: rec.install_path.clone(),
            components,
            hooks,
            skills: loaded
                .skills
                .iter()
                .map(|s| loaded.skill_name(s, None))
                .collect(),
            agents: loaded.agents.iter().map(|a| loaded.agent_name(a)).collect(),
            commands: loaded
                .commands
                .iter()
                .map(|c| loaded.command_name(c))
                .collect(),
            mcp_servers: servers(&loaded.mcp_servers),
            lsp_servers: servers(&loaded.lsp_servers),
            unsupported: crate::unsupported::unsupported(&loaded),
            oci: super::oci::oci_record(&rec).map(|(reference, manifest_digest, sig)| OciDetails {
                reference,
                manifest_digest,
                signer: sig.map(|s| s.key_id),
            }),
            signed_index: super::signed_index::index_record(&rec).map(
                |(marketplace, index_digest, signer)| SignedIndexDetails {
                    marketplace,
                    index_digest,
                    signer,
                },
            ),
            plugin_id: id,
        })
    }
}

/// Event → matcher groups → handlers, one row per handler.
fn flatten_hooks(hooks: &serde_json::Map<String, Value>, out: &mut Vec<HookDetails>) {
    for (event, groups) in hooks {
        for g in groups.as_array().into_iter().flatten() {
            let matcher = g
                .get("matcher")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or("*")
                .to_string();
            for h in g
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let kind = h
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command")
                    .to_string();
                let handler = ["command", "url", "component", "prompt", "agent"]
                    .iter()
                    .find_map(|k| h.get(*k).and_then(Value::as_str))
                    .unwrap_or("")
                    .to_string();
                out.push(HookDetails {
                    event: event.clone(),
                    matcher: matcher.clone(),
                    kind,
                    handler,
                });
            }
        }
    }
}

/// `command args…` for a process server, else its URL.
fn server_target(v: &Value) -> String {
    if let Some(url) = v.get("url").and_then(Value::as_str) {
        return url.to_string();
    }
    let mut parts: Vec<String> = v
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_string)
        .into_iter()
        .collect();
    parts.extend(
        v.get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string),
    );
    parts.join(" ")
}

impl fmt::Display for PluginDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} {}", self.plugin_id, self.version)?;
        if let Some(d) = &self.description {
            writeln!(f, "  Description: {d}")?;
        }
        writeln!(
            f,
            "  Status: {} (scope: {})",
            if self.enabled { "enabled" } else { "disabled" },
            self.scope
        )?;
        writeln!(f, "  Install path: {}", self.install_path.display())?;
        for u in &self.unsupported {
            writeln!(f, "  warning: {u}")?;
        }
        writeln!(
            f,
            "  Digest: {}{}",
            self.sha256.as_deref().unwrap_or("(none recorded)"),
            if self.sha256.is_some() && !self.intact {
                " (the installed copy no longer matches: run `warden plugin verify`)"
            } else {
                ""
            }
        )?;
        if let Some(o) = &self.oci {
            writeln!(
                f,
                "  From: {} (manifest {}), {}",
                o.reference,
                o.manifest_digest,
                match &o.signer {
                    Some(k) => format!("signed by {k}"),
                    None => "unsigned".to_string(),
                }
            )?;
        }
        if let Some(s) = &self.signed_index {
            writeln!(
                f,
                "  Signed index: marketplace {} (index {}), signed by {}",
                s.marketplace, s.index_digest, s.signer
            )?;
        }
        writeln!(f, "\nWASM components ({})", self.components.len())?;
        for c in &self.components {
            writeln!(
                f,
                "  {} [{}] {}",
                c.name,
                match c.world {
                    World::Hook => "hook",
                    World::Tool => "tool",
                },
                c.path
            )?;
            if let Some(s) = &c.sha256 {
                writeln!(f, "    sha256: {s}")?;
            }
            writeln!(f, "    requested: {}", c.requested)?;
            match &c.granted {
                Some(g) => writeln!(f, "    granted: {g}")?,
                None => writeln!(
                    f,
                    "    granted: nothing (it does not run; `warden plugin grant {}`)",
                    self.plugin_id
                )?,
            }
        }
        writeln!(f, "\nHooks ({})", self.hooks.len())?;
        for h in &self.hooks {
            writeln!(f, "  {} {} {}: {}", h.event, h.matcher, h.kind, h.handler)?;
        }
        for (title, items) in [
            ("Skills", &self.skills),
            ("Agents", &self.agents),
            ("Commands", &self.commands),
        ] {
            writeln!(f, "\n{title} ({})", items.len())?;
            for i in items {
                writeln!(f, "  {i}")?;
            }
        }
        for (title, items) in [
            ("MCP servers", &self.mcp_servers),
            ("LSP servers", &self.lsp_servers),
        ] {
            writeln!(f, "\n{title} ({})", items.len())?;
            for s in items {
                writeln!(f, "  {}: {}", s.name, s.target)?;
            }
        }
        Ok(())
    }
}
