//! What a session in a directory sees: its settings, its enabled plugins (installed, or given
//! with `--plugin-dir`), and the hook configuration, permission engine and WASM runner built
//! from them. The CLI commands that act "as a session in DIR would" all start here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use warden_config::{Home, LoadOptions, Settings};
use warden_hooks::{
    HookConfig, HookConfigBuilder, PluginContext, RawOutcome, WasmHookCall, WasmHookRunner,
};
use warden_plugins::{LoadedPlugin, PluginManager};

use crate::runtime::{
    CallContext, DigestPin, FsGrant, Grant, Limits, LoadedComponent, Policy, Runtime,
    RuntimeConfig, World,
};
use warden_hooks::TypedHookResult;

/// How to open a session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The starting directory.
    pub cwd: PathBuf,
    /// Warden's home.
    pub home: Home,
    /// `--settings` arguments (paths or inline JSON).
    pub cli_settings: Vec<String>,
    /// Plugin directories loaded for this session only (`--plugin-dir`), as Claude Code's
    /// flag of the same name. Their WASM components get no capabilities.
    pub plugin_dirs: Vec<PathBuf>,
}

impl SessionOptions {
    /// A session in `cwd` with the home from `WARDEN_HOME`.
    pub fn new(cwd: impl Into<PathBuf>, home: Home) -> Self {
        SessionOptions {
            cwd: cwd.into(),
            home,
            cli_settings: Vec::new(),
            plugin_dirs: Vec::new(),
        }
    }
}

/// A plugin the session uses.
#[derive(Debug)]
pub struct SessionPlugin {
    /// `name@marketplace` (`name@--plugin-dir` for session-only plugins).
    pub id: String,
    /// The loaded plugin.
    pub plugin: LoadedPlugin,
    /// `${CLAUDE_PLUGIN_DATA}`.
    pub data_dir: PathBuf,
    /// The capabilities granted to its components (none for `--plugin-dir` plugins).
    pub grant: Option<warden_plugins::capability::Grant>,
}

/// A loaded session.
#[derive(Debug)]
pub struct Session {
    /// The starting directory.
    pub cwd: PathBuf,
    /// Warden's home.
    pub home: Home,
    /// Every settings file.
    pub settings: Settings,
    /// Enabled plugins.
    pub plugins: Vec<SessionPlugin>,
    /// Problems found while loading (each names its file); none is fatal.
    pub warnings: Vec<String>,
}

impl Session {
    /// Loads settings and enabled plugins. Broken files become warnings.
    pub fn load(opts: &SessionOptions) -> Session {
        let mut load = LoadOptions::new(&opts.cwd, opts.home.clone());
        load.cli_settings = opts.cli_settings.clone();
        let settings = Settings::load(&load);
        let mut warnings: Vec<String> = settings.errors.iter().map(|e| e.message.clone()).collect();
        let mut plugins = Vec::new();
        let manager = PluginManager::new(opts.home.clone(), &opts.cwd).quiet(true);
        match manager.load_active() {
            Ok(active) => {
                for (a, loaded) in active {
                    match loaded {
                        Ok(plugin) => {
                            let grant = a
                                .sha256
                                .as_deref()
                                .and_then(|d| manager.grant_for(&a.plugin_id, d));
                            plugins.push(SessionPlugin {
                                id: a.plugin_id,
                                plugin,
                                data_dir: a.data_dir,
                                grant,
                            });
                        }
                        Err(e) => warnings.push(format!("plugin {} not loaded: {e}", a.plugin_id)),
                    }
                }
            }
            Err(e) => warnings.push(format!("installed plugins not read: {e}")),
        }
        for dir in &opts.plugin_dirs {
            let dir = opts.cwd.join(dir);
            match warden_plugins::load_plugin(&dir) {
                Ok(plugin) => {
                    let id = format!("{}@--plugin-dir", plugin.name);
                    let data_dir = opts
                        .home
                        .plugins_dir()
                        .join("data")
                        .join(format!("{}-inline", plugin.name));
                    plugins.push(SessionPlugin {
                        id,
                        plugin,
                        data_dir,
                        grant: None,
                    });
                }
                Err(e) => warnings.push(format!("--plugin-dir {}: {e}", dir.display())),
            }
        }
        Session {
            cwd: opts.cwd.clone(),
            home: opts.home.clone(),
            settings,
            plugins,
            warnings,
        }
    }

    /// The hook configuration: settings hooks plus every enabled plugin's hooks (command,
    /// http and, from the `warden` section, wasm).
    pub fn hook_config(&self) -> HookConfig {
        let mut builder = HookConfigBuilder::from_settings(&self.settings);
        for p in &self.plugins {
            let manifest = read_manifest(&p.plugin.root);
            builder.add_plugin(
                PluginContext::new(&p.id, &p.plugin.root, &p.data_dir),
                manifest.as_ref(),
            );
        }
        builder.build()
    }

    /// The session's permission rules, as a session started in its directory has them: the
    /// workspace counts as trusted (starting a session there accepts it), `mode` overrides the
    /// settings' `defaultMode`, and `allowed_tools` are added like `--allowedTools` rules.
    pub fn permissions(
        &self,
        mode: Option<warden_permissions::Mode>,
        allowed_tools: &[String],
    ) -> Result<warden_permissions::Permissions, warden_permissions::PermissionsError> {
        let opts = warden_permissions::Options {
            cwd: self.cwd.clone(),
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
            mode,
            allowed_tools: allowed_tools.to_vec(),
            trusted: true,
            ..warden_permissions::Options::default()
        };
        warden_permissions::Permissions::from_settings(&self.settings, &opts)
    }

    /// The runtime grant of one component of one plugin: nothing unless the user granted it.
    /// Paths in the grant may use `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}`,
    /// `${CLAUDE_PROJECT_DIR}` and `~`.
    pub fn component_grant(&self, plugin_id: &str, component: &str) -> Grant {
        let Some(p) = self.plugins.iter().find(|p| p.id == plugin_id) else {
            return Grant::default();
        };
        let Some(caps) = p.grant.as_ref().and_then(|g| g.component(component)) else {
            return Grant::default();
        };
        to_runtime_grant(caps, &p.plugin.root, &p.data_dir, &self.cwd)
    }
}

fn read_manifest(root: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(root.join(".claude-plugin").join("plugin.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Converts a plugin grant to the runtime's form, expanding the path variables.
pub fn to_runtime_grant(
    caps: &warden_plugins::capability::Capabilities,
    plugin_root: &Path,
    data_dir: &Path,
    project: &Path,
) -> Grant {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let expand = |p: &str| -> PathBuf {
        let p = p
            .replace("${CLAUDE_PLUGIN_ROOT}", &plugin_root.display().to_string())
            .replace("${CLAUDE_PLUGIN_DATA}", &data_dir.display().to_string())
            .replace("${CLAUDE_PROJECT_DIR}", &project.display().to_string());
        match (p.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => project.join(p),
        }
    };
    Grant {
        fs: caps
            .fs
            .iter()
            .map(|f| FsGrant {
                path: expand(&f.path),
                write: matches!(f.access, warden_plugins::capability::FsAccess::Write),
            })
            .collect(),
        net: caps.net.clone(),
        env: caps.env.clone(),
        exec: caps.exec.clone(),
    }
}

/// Runs WASM hook handlers with the component runtime, creating the runtime on first use so a
/// process whose event matches no WASM hook never pays for an engine.
pub struct WasmRunner {
    config: RuntimeConfig,
    runtime: OnceLock<Result<Arc<Runtime>, String>>,
    /// Per plugin id, per component name: looked up by `&str` on every call, without building
    /// an owned key.
    components: HashMap<String, HashMap<String, ComponentSlot>>,
    /// Loaded components by file and grant, so components sharing a file compile once.
    loaded: Mutex<HashMap<(PathBuf, Grant), Arc<LoadedComponent>>>,
    policy: Arc<dyn Policy>,
}

/// A declared component: its grant, and the component last loaded for it (with the file it
/// was loaded from).
struct ComponentSlot {
    grant: Grant,
    loaded: Mutex<Option<(PathBuf, Arc<LoadedComponent>)>>,
}

impl WasmRunner {
    /// A runner for `session`'s plugins; capability uses are also checked by `policy`.
    pub fn new(session: &Session, config: RuntimeConfig, policy: Arc<dyn Policy>) -> Self {
        let mut components: HashMap<String, HashMap<String, ComponentSlot>> = HashMap::new();
        for p in &session.plugins {
            if let Some(w) = &p.plugin.warden {
                let slots = components.entry(p.id.clone()).or_default();
                for name in w.components.keys() {
                    slots.insert(
                        name.clone(),
                        ComponentSlot {
                            grant: session.component_grant(&p.id, name),
                            loaded: Mutex::new(None),
                        },
                    );
                }
            }
        }
        WasmRunner {
            config,
            runtime: OnceLock::new(),
            components,
            loaded: Mutex::new(HashMap::new()),
            policy,
        }
    }

    fn runtime(&self) -> Result<&Runtime, &str> {
        match self
            .runtime
            .get_or_init(|| Runtime::shared(self.config.clone()).map_err(|e| e.to_string()))
        {
            Ok(rt) => Ok(rt),
            Err(e) => Err(e),
        }
    }

    fn component(
        &self,
        rt: &Runtime,
        path: &Path,
        grant: &Grant,
    ) -> Result<Arc<LoadedComponent>, String> {
        let key = (path.to_path_buf(), grant.clone());
        if let Some(c) = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(c.clone());
        }
        let c = Arc::new(
            // Unchecked: a plugin grant records the plugin tree's digest, not each component's,
            // so there is no file digest to pin to yet.
            rt.load_file(path, World::Hook, grant, DigestPin::Unchecked)
                .map_err(|e| e.to_string())?,
        );
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, c.clone());
        Ok(c)
    }

    /// The component for `slot` at `path`, loading it on first use (or when the file changed).
    fn slot_component(
        &self,
        rt: &Runtime,
        slot: &ComponentSlot,
        path: &Path,
    ) -> Result<Arc<LoadedComponent>, String> {
        if let Some((p, c)) = &*slot.loaded.lock().unwrap_or_else(|p| p.into_inner())
            && p == path
        {
            return Ok(c.clone());
        }
        let c = self.component(rt, path, &slot.grant)?;
        *slot.loaded.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((path.to_path_buf(), c.clone()));
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
            let rt = match self.runtime() {
                Ok(rt) => rt,
                Err(e) => return failed(e.to_string()),
            };
            let slot = self
                .components
                .get(call.plugin_id)
                .and_then(|c| c.get(call.component_name));
            let no_grant = Grant::default();
            let (grant, component) = match slot {
                Some(slot) => (&slot.grant, self.slot_component(rt, slot, call.component)),
                None => (&no_grant, self.component(rt, call.component, &no_grant)),
            };
            let component = match component {
                Ok(c) => c,
                Err(e) => return failed(e),
            };
            let limits = Limits::with_deadline(call.timeout.max(Duration::from_millis(1)));
            let ctx = CallContext::with_policy(call.project_dir, grant, self.policy.clone());
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
