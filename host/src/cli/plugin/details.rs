//! `warden plugin details <plugin>` (alias `info`; Claude Code calls the verb `details`),
//! with what the plugin's programs (command hooks, stdio MCP servers) run under: what they
//! may read and write, the network, the `[processes]` grant and whether it still applies,
//! the user's opt-out, and the refusals they met lately with the command that allows each.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;
use warden::session::processes::{PluginSandboxSettings, ProcessOrigin};
use warden::session::refusals::{self, Refusal};
use warden_config::{Home, Scope};
use warden_plugins::{Capabilities, FsAccess, PROCESSES_GRANT_KEY, PluginDetails, PluginManager};

/// Prints the details of an installed plugin: text, or one JSON object with `--json`.
pub(super) fn run(mgr: &PluginManager, plugin: &str, json: bool) -> ExitCode {
    let details = match mgr.details(plugin) {
        Ok(d) => d,
        Err(e) => {
            return super::fail(
                json,
                "details",
                &format!("Failed to show plugin \"{plugin}\": {e}"),
            );
        }
    };
    let programs = match programs(mgr, plugin, &details) {
        Ok(p) => p,
        Err(e) => {
            return super::fail(
                json,
                "details",
                &format!("Failed to show plugin \"{plugin}\": {e}"),
            );
        }
    };
    super::print_pretty(json, &Details { details, programs });
    ExitCode::SUCCESS
}

/// The output: the plugin's details, then its programs.
#[derive(Serialize)]
struct Details {
    #[serde(flatten)]
    details: PluginDetails,
    programs: Programs,
}

/// What the plugin's programs run under.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Programs {
    /// Whether they run confined (the user's `sandbox.confinePlugins` can opt a plugin out).
    confined: bool,
    /// What they may read.
    read: Vec<String>,
    /// What they may write.
    write: Vec<String>,
    /// Whether they reach the network.
    network: bool,
    /// What `[processes]` in `warden.toml` asks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    requested: Option<Capabilities>,
    /// What is granted under `@processes` for the installed digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    granted: Option<Capabilities>,
    /// `none`, `pinned` (the grant applies to the installed copy), or `dropped` (the copy
    /// changed since: the default profile applies).
    grant: &'static str,
    /// The digest a grant is pinned to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pinned_to: Option<String>,
    /// Refusals its programs met lately, oldest first.
    refusals: Vec<Refusal>,
    /// Where they are kept.
    refusal_log: Option<PathBuf>,
    /// Its language servers, `plugin:<plugin>:<server>`, with the extensions each handles.
    language_servers: Vec<String>,
}

fn programs(mgr: &PluginManager, plugin: &str, d: &PluginDetails) -> anyhow::Result<Programs> {
    let home = Home::from_env()?;
    let cwd = std::env::current_dir()?;
    let settings =
        warden_config::Settings::load(&warden_config::LoadOptions::new(&cwd, home.clone()));
    let data_dir = mgr.data_dir(&d.plugin_id);
    let origin = ProcessOrigin::Plugin {
        id: d.plugin_id.clone(),
        root: d.install_path.clone(),
        data_dir: data_dir.clone(),
    };
    let confined = !PluginSandboxSettings::from_settings(&settings).opted_out(&origin);
    let req = mgr.capability_request(plugin)?;
    let requested = req
        .components
        .get(PROCESSES_GRANT_KEY)
        .filter(|c| !c.is_empty())
        .cloned();
    let granted = mgr
        .grant_for(&req.plugin_id, &req.digest)
        .and_then(|g| g.component(PROCESSES_GRANT_KEY).cloned())
        .filter(|c| !c.is_empty());
    // As the session decides: a grant holds only for the bytes that were approved.
    let grant = match (&granted, d.intact) {
        (None, _) => "none",
        (Some(_), true) => "pinned",
        (Some(_), false) => "dropped",
    };
    let applied = granted.as_ref().filter(|_| d.intact);

    let mut read = vec![
        "system and toolchain directories".to_string(),
        format!("its root {}", d.install_path.display()),
        "the project, minus .env, .env.* and the paths the rules deny".to_string(),
    ];
    read.extend(
        readable_paths(&settings)
            .into_iter()
            .map(|p| format!("{p} (sandbox.readablePaths)")),
    );
    let mut write = vec![
        format!("its data directory {}", data_dir.display()),
        "a private temporary directory".to_string(),
    ];
    for f in applied.iter().flat_map(|c| &c.fs) {
        match f.access {
            FsAccess::Read => read.push(format!("{} (granted)", f.path)),
            FsAccess::Write if f.path.trim_end_matches('/') == "${CLAUDE_PROJECT_DIR}" => write
                .push(format!(
                    "{} (granted; the project's protected paths stay read-only)",
                    f.path
                )),
            FsAccess::Write => write.push(format!("{} (granted)", f.path)),
        }
    }
    let network = applied.is_some_and(|c| c.net.iter().any(|n| n == warden_plugins::ANY_NETWORK));
    let refusal_log = data_dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| refusals::log_path(home.root(), n));
    Ok(Programs {
        confined,
        read,
        write,
        network,
        requested,
        granted,
        grant,
        pinned_to: (grant != "none").then(|| req.digest.clone()),
        refusals: refusal_log
            .as_deref()
            .map(refusals::read)
            .unwrap_or_default(),
        refusal_log,
        language_servers: language_servers(&d.install_path),
    })
}

/// `plugin:<plugin>:<server> (.py python, …)` for each language server the plugin declares.
fn language_servers(root: &std::path::Path) -> Vec<String> {
    let Ok(p) = warden_plugins::loader::load_plugin(root) else {
        return Vec::new();
    };
    p.lsp_servers
        .iter()
        .filter_map(|(name, v)| {
            let exts = v.get("extensionToLanguage")?.as_object()?;
            let exts: Vec<String> = exts
                .iter()
                .map(|(e, l)| format!("{e} {}", l.as_str().unwrap_or("")))
                .collect();
            let id = warden_lsp::server_id(&p.name, name);
            Some(format!("{id} ({})", exts.join(", ")))
        })
        .collect()
}

/// `sandbox.readablePaths` of the files the user controls, as written.
fn readable_paths(settings: &warden_config::Settings) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in settings
        .files
        .iter()
        .filter(|f| matches!(f.scope, Scope::User | Scope::Managed | Scope::Cli))
    {
        let paths = f
            .value
            .get("sandbox")
            .and_then(|s| s.get("readablePaths"))
            .and_then(Value::as_array);
        for p in paths.into_iter().flatten().filter_map(Value::as_str) {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

impl fmt::Display for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.details.to_string().trim_end())?;
        let p = &self.programs;
        let id = &self.details.plugin_id;
        if p.confined {
            writeln!(f, "\nPrograms (command hooks, stdio MCP servers): confined")?;
        } else {
            writeln!(
                f,
                "\nPrograms (command hooks, stdio MCP servers): NOT confined: the user's `sandbox.confinePlugins` setting runs them as Claude Code does, with everything the user can reach; the profile below applies when it is removed"
            )?;
        }
        writeln!(f, "  read: {}", p.read.join("; "))?;
        writeln!(f, "  write: {}", p.write.join("; "))?;
        if !p.language_servers.is_empty() {
            writeln!(f, "  language servers: {}", p.language_servers.join("; "))?;
        }
        writeln!(
            f,
            "  network: {}",
            if p.network { "yes (granted)" } else { "no" }
        )?;
        match &p.requested {
            Some(r) => writeln!(f, "  warden.toml [processes] asks for: {r}")?,
            None => writeln!(f, "  warden.toml [processes] asks for: nothing")?,
        }
        let digest = p.pinned_to.as_deref().map_or("", short);
        match (&p.granted, p.grant) {
            (Some(g), "pinned") => writeln!(
                f,
                "  granted ({PROCESSES_GRANT_KEY}): {g}; pinned to the installed copy (sha256 {digest}…)"
            )?,
            (Some(g), _) => writeln!(
                f,
                "  granted ({PROCESSES_GRANT_KEY}): {g}; DROPPED: the installed copy changed since it was granted (sha256 {digest}…), so the default profile applies; run `warden plugin verify` and reinstall {id}"
            )?,
            (None, _) if p.requested.is_some() => writeln!(
                f,
                "  granted ({PROCESSES_GRANT_KEY}): nothing; `warden plugin grant {id}` grants what it asks for"
            )?,
            (None, _) => writeln!(f, "  granted ({PROCESSES_GRANT_KEY}): nothing")?,
        }
        writeln!(f, "\nRecent refusals ({})", p.refusals.len())?;
        for r in &p.refusals {
            writeln!(f, "  {} {}", printable(&r.at), printable(&r.message))?;
        }
        Ok(())
    }
}

/// `s` with control characters escaped (`\u{1b}`): a refusal's path is what the plugin's
/// program printed, and must not drive the terminal.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}
