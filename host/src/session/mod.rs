//! A session: the one composition root.
//!
//! Every command that acts "as a session in DIR would" (`warden hook`, `check`, `tool`,
//! `context`, `skill`, `demo`) opens a [`Session`] and asks it for what it needs; none of them
//! wires settings, rules, runtimes or caches itself. The session is built in one direction:
//!
//! ```text
//! settings files ─▶ permission engine ─▶ one Policy ─▶ runtime (one per process)
//!                                                        ├─▶ hook runner (WASM hooks)
//!                                                        └─▶ tool registry (built-in + plugin WASM tools)
//! ```
//!
//! and every tool call goes through one pipeline, [`Session::call_tool`] (see [`pipeline`]).
//!
//! **One policy for every guest.** A hook's or tool's use of a capability (a file, a program,
//! a URL) is checked first against what its plugin was granted, then against the user's
//! permission rules through the session's [`PermissionPolicy`], on every path: the bridge
//! (`warden hook`), `check`, `tool`, `InstructionsLoaded`, skills and the demo. An access the
//! rules would *ask* about is refused for a hook (nobody can answer while it runs) and let
//! through for a tool call that was allowed (by the rules, a hook or the user, so what the
//! call does within its grant was approved); a deny rule stops every access. See
//! [`Session::guest_policy`].

mod hooks;
mod launched;
pub mod pipeline;
pub mod processes;
pub mod refusals;
mod registry;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use warden_config::{ClaudeConfig, Home, LoadOptions, Scope, Settings};
use warden_hooks::{DispatchOptions, HookConfig, HookConfigBuilder, PluginContext};
use warden_permissions::{Mode, Permissions, PermissionsError};
use warden_plugins::{LoadedPlugin, PluginManager};
use warden_vocab::GrantRoots;
use warden_vocab::fs::create_private_dir;

use crate::capability::{AskAt, PermissionPolicy};
use crate::mcp::McpHub;
use crate::runtime::{
    ComponentCache, Grant, Policy, PolicyError, ProcessConfinement, Runtime, RuntimeConfig,
    RuntimeError,
};

pub use hooks::{McpHookRunner, WasmRunner};
pub use pipeline::{
    AskAnswer, AskFuture, AskRequest, Asker, CallMeta, DenyAsker, LocalTool, LocalToolFuture, Step,
    ToolOutcome, ToolStatus, TraceStep,
};
pub use registry::{
    RegisteredTool, ToolDescription, ToolRegistry, ToolSource, check_tool_name,
    describe_plugin_tools, plugin_tool_name,
};

/// How to open a session. Every CLI command fills it from the same flattened arguments
/// (`--cwd`, `--settings`, `--plugin-dir`, `--mode`).
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
    /// Permission mode; `None` takes the settings' `defaultMode`.
    pub mode: Option<Mode>,
    /// Rules added like `--allowedTools`.
    pub allowed_tools: Vec<String>,
    /// Directory of managed settings (default: as [`LoadOptions::new`] finds it).
    pub managed_dir: Option<PathBuf>,
    /// Claude Code's user configuration directory, read beside Warden's home (default: as
    /// [`ClaudeConfig::from_env`] finds it). An embedder that wants only Warden's own
    /// configuration sets [`ClaudeConfig::Off`]; the `readClaudeConfig` setting can still
    /// turn it off, never on.
    pub claude_config: ClaudeConfig,
    /// The user's home directory, for `~/` rules (default: `$HOME`).
    pub user_home: Option<PathBuf>,
    /// Programs the built-in Bash tool may run beyond its default list.
    pub programs: Vec<String>,
    /// Engine settings of the runtime this session uses (shared with every other session of
    /// the process that asks for the same settings).
    pub runtime: RuntimeConfig,
    /// The session id given to hooks (default: a fresh UUID v4).
    pub session_id: Option<String>,
    /// Run no hooks at all (`warden check --no-hooks`: rules only).
    pub no_hooks: bool,
    /// Caps every tool call's deadline (`warden mcp serve --tool-timeout`).
    pub tool_deadline: Option<std::time::Duration>,
    /// Loaded components to use instead of a cache of the session's own: a long-lived
    /// process (`warden serve`) keeps one across sessions, so its engine, compiled code and
    /// instance templates outlive each session. `runtime` is then ignored.
    pub components: Option<Arc<ComponentCache>>,
}

impl SessionOptions {
    /// A session in `cwd` with Warden's home `home`: managed settings where Claude Code finds
    /// them, the compile cache under the home, and a runtime sized for a short-lived process.
    pub fn new(cwd: impl Into<PathBuf>, home: Home) -> Self {
        let cwd = cwd.into();
        let load = LoadOptions::new(&cwd, home.clone());
        SessionOptions {
            runtime: RuntimeConfig {
                cache_dir: Some(home.cache_dir()),
                // One command per process: the on-demand allocator starts faster than a pool.
                pooling: false,
                max_instances: 64,
                ..RuntimeConfig::default()
            },
            cwd,
            home,
            cli_settings: Vec::new(),
            plugin_dirs: Vec::new(),
            mode: None,
            allowed_tools: Vec::new(),
            managed_dir: load.managed_dir,
            claude_config: load.claude_config,
            user_home: None,
            programs: Vec::new(),
            session_id: None,
            no_hooks: false,
            tool_deadline: None,
            components: None,
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

/// What kind of thing could not be loaded when the session was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadProblemKind {
    /// A settings file exists but could not be read or parsed; it was skipped.
    SettingsUnreadable,
    /// The installed-plugins state could not be read, so no installed plugin was loaded.
    InstalledPluginsUnreadable,
    /// An installed, enabled plugin failed to load.
    PluginNotLoaded,
    /// A `--plugin-dir` is missing or holds no plugin that loads.
    PluginDirNotLoaded,
}

/// Something the session could not load; none is fatal to loading, but a caller that guards
/// calls may refuse to run on a partial configuration (see `warden hook`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProblem {
    /// What could not be loaded.
    pub kind: LoadProblemKind,
    /// What went wrong, naming the file, plugin or directory.
    pub message: String,
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl LoadProblem {
    fn new(kind: LoadProblemKind, message: String) -> Self {
        LoadProblem { kind, message }
    }
}

/// Why a session cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The settings' permission rules cannot be used.
    #[error(transparent)]
    Permissions(#[from] PermissionsError),
    /// The session's permission rules could not be compiled when it was loaded.
    #[error("{0}")]
    Rules(String),
    /// The component runtime could not start.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// No tool of that name.
    #[error("unknown tool `{name}`{}; tools in this session: {}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default(), known.join(", "))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// Every registered tool.
        known: Vec<String>,
        /// The known name it is likely a typo of.
        suggestion: Option<String>,
    },
    /// A tool input that is not a JSON object.
    #[error("the input of {tool} must be a JSON object")]
    InputNotObject {
        /// The tool.
        tool: String,
    },
    /// An MCP tool whose server is configured but cannot be used (not approved, failed to
    /// start, or has no such tool).
    #[error("{tool}: {message}")]
    Mcp {
        /// The tool asked for.
        tool: String,
        /// Why it cannot be run.
        message: String,
    },
}

/// A loaded session.
pub struct Session {
    /// The starting directory.
    pub cwd: PathBuf,
    /// Warden's home.
    pub home: Home,
    /// Every settings file.
    pub settings: Settings,
    /// Enabled plugins.
    pub plugins: Vec<SessionPlugin>,
    /// The id hooks see as `session_id`.
    pub session_id: String,
    opts: SessionOptions,
    load_problems: Vec<LoadProblem>,
    permissions: OnceLock<Result<Arc<Permissions>, String>>,
    hook_config: OnceLock<HookConfig>,
    components: OnceLock<Result<Arc<ComponentCache>, String>>,
    registry: OnceLock<ToolRegistry>,
    processes: OnceLock<ProcessConfinement>,
    mcp: OnceLock<McpHub>,
    lsp: OnceLock<warden_lsp::LspManager>,
    model_runner: OnceLock<Arc<dyn warden_hooks::ModelHookRunner>>,
    wasm_slots: OnceLock<Arc<hooks::WasmSlots>>,
    dispatch_base: OnceLock<DispatchOptions>,
    process_profiles: OnceLock<Arc<processes::ProcessProfiles>>,
    monitors: OnceLock<crate::monitors::Monitors>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("cwd", &self.cwd)
            .field("plugins", &self.plugins.len())
            .field("load_problems", &self.load_problems)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// `plugin`'s `userConfig` values, from the files the user controls and the private file
    /// of sensitive ones (see [`crate::plugin_config::options`]).
    pub fn plugin_options(&self, plugin: &SessionPlugin) -> serde_json::Map<String, Value> {
        crate::plugin_config::options(
            &self.settings,
            &self.home,
            &plugin.id,
            &plugin.plugin.manifest.user_config,
        )
    }

    /// Loads settings, rules and enabled plugins. Broken files become [load problems](Self::load_problems); rules that
    /// cannot be compiled are reported by every call that needs them.
    pub fn load(opts: &SessionOptions) -> Session {
        let mut load = LoadOptions::new(&opts.cwd, opts.home.clone());
        load.cli_settings = opts.cli_settings.clone();
        load.managed_dir = opts.managed_dir.clone();
        load.claude_config = opts.claude_config.clone();
        let settings = Settings::load(&load);
        let mut load_problems: Vec<LoadProblem> = settings
            .errors
            .iter()
            .map(|e| LoadProblem::new(LoadProblemKind::SettingsUnreadable, e.message.clone()))
            .collect();
        let plugins = load_plugins(opts, &settings, &mut load_problems);
        Session {
            cwd: opts.cwd.clone(),
            home: opts.home.clone(),
            settings,
            plugins,
            session_id: opts
                .session_id
                .clone()
                .unwrap_or_else(crate::instructions::new_session_id),
            opts: opts.clone(),
            load_problems,
            permissions: OnceLock::new(),
            hook_config: OnceLock::new(),
            components: OnceLock::new(),
            registry: OnceLock::new(),
            processes: OnceLock::new(),
            mcp: OnceLock::new(),
            lsp: OnceLock::new(),
            model_runner: OnceLock::new(),
            wasm_slots: OnceLock::new(),
            dispatch_base: OnceLock::new(),
            process_profiles: OnceLock::new(),
            monitors: OnceLock::new(),
        }
    }

    /// What could not be loaded (each names its file, plugin or directory), in the order met:
    /// settings files, installed plugins, `--plugin-dir`s.
    pub fn load_problems(&self) -> &[LoadProblem] {
        &self.load_problems
    }

    /// The options the session was opened with.
    pub fn options(&self) -> &SessionOptions {
        &self.opts
    }

    /// The session's permission rules, compiled on first use (a `warden hook` whose guards
    /// touch no file, program or URL never compiles them): the workspace counts as trusted
    /// (starting a session there accepts it), the options' mode overrides the settings'
    /// `defaultMode`, and `allowed_tools` are added like `--allowedTools` rules.
    pub fn rules(&self) -> Result<Arc<Permissions>, SessionError> {
        match self.permissions.get_or_init(|| {
            build_permissions(&self.settings, &self.opts)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        }) {
            Ok(p) => Ok(p.clone()),
            Err(e) => Err(SessionError::Rules(e.clone())),
        }
    }

    /// The same rules with another mode and extra allowed tools (a skill's `allowed-tools`,
    /// a one-off `--mode`), compiled anew.
    pub fn permissions(
        &self,
        mode: Option<Mode>,
        allowed_tools: &[String],
    ) -> Result<Permissions, PermissionsError> {
        let mut opts = self.opts.clone();
        opts.mode = mode.or(self.opts.mode);
        opts.allowed_tools.extend(allowed_tools.iter().cloned());
        build_permissions(&self.settings, &opts)
    }

    /// The policy every guest's capability use is checked against after its grant.
    ///
    /// `approved` says whether the call the guest runs for was allowed (a tool call that got
    /// past the rules, a hook or the asker). An access the rules would ask about is let
    /// through only then. Hooks always get `approved = false`: nobody can answer while one
    /// runs. The rules are compiled at the first check; rules that cannot be compiled refuse
    /// every access (fail closed).
    pub fn guest_policy(self: &Arc<Self>, approved: bool) -> Arc<dyn Policy> {
        Arc::new(SessionPolicy {
            session: self.clone(),
            ask: if approved { AskAt::Allow } else { AskAt::Deny },
            inner: OnceLock::new(),
        })
    }

    /// The hook configuration: settings hooks plus every enabled plugin's hooks (command,
    /// http and, from the `warden` section, wasm). Built once.
    pub fn hook_config(&self) -> &HookConfig {
        self.hook_config.get_or_init(|| {
            if self.opts.no_hooks {
                return HookConfig::default();
            }
            // A repository's files can tighten hooks, never loosen them: its `disableAllHooks`
            // turns off its own settings hooks (`for_hooks`) and the hooks of plugins the user
            // did not enable, never the user's (`--plugin-dir` plugins are the user's too).
            let mut builder = HookConfigBuilder::from_settings(&self.settings.for_hooks());
            let repo_off = self
                .settings
                .project_disables_hooks()
                .then(|| self.settings.user_plugin_choices());
            for p in &self.plugins {
                if let Some(user) = &repo_off
                    && user.get(&p.id) != Some(&true)
                    && !p.id.ends_with("@--plugin-dir")
                {
                    continue;
                }
                let mut manifest = read_manifest(&p.plugin.root);
                // The plugins crate decided which Warden part counts (warden.toml over the
                // deprecated key) and checked it; the hooks engine gets that, not the raw key.
                if let Some(Value::Object(m)) = &mut manifest {
                    m.remove("warden");
                }
                let mut ctx = PluginContext::new(&p.id, &p.plugin.root, &p.data_dir);
                ctx.options = self.plugin_options(p);
                builder.add_plugin(ctx.clone(), manifest.as_ref());
                if let Some(w) = &p.plugin.warden {
                    let origin = p.plugin.root.join(warden_plugins::WARDEN_TOML);
                    builder.add_warden_section(
                        Arc::new(ctx),
                        &w.to_hooks_value(),
                        &origin.display().to_string(),
                    );
                }
            }
            let mut config = builder.build();
            skip_bridges_to_warden(&mut config);
            config
        })
    }

    /// The components this session runs (hooks and tools share them), in the process's
    /// runtime for the session's engine settings, created on first use so a command that
    /// runs no component never pays for an engine.
    pub fn components(&self) -> Result<&Arc<ComponentCache>, SessionError> {
        match self.components.get_or_init(|| {
            if let Some(shared) = &self.opts.components {
                return Ok(shared.clone());
            }
            Runtime::shared(self.opts.runtime.clone())
                .map(|rt| Arc::new(ComponentCache::new(rt)))
                .map_err(|e| e.to_string())
        }) {
            Ok(c) => Ok(c),
            Err(e) => Err(SessionError::Runtime(RuntimeError::Engine(e.clone()))),
        }
    }

    /// The process's runtime for this session's engine settings (see
    /// [`Session::components`]).
    pub fn runtime(&self) -> Result<Arc<Runtime>, SessionError> {
        Ok(self.components()?.runtime().clone())
    }

    /// Dispatch options for this session's hooks: hook processes start in the session's
    /// directory (also `CLAUDE_PROJECT_DIR`), WASM hooks run with their plugin's grant under
    /// [`Session::guest_policy`]`(false)`.
    pub fn dispatch_options(self: &Arc<Self>) -> Result<DispatchOptions, SessionError> {
        let runner = Arc::new(WasmRunner::new(self.clone(), self.guest_policy(false)));
        // The environment is read once per session (`DispatchOptions::new` reads the stop-hook
        // cap), not on every tool call.
        let base = self
            .dispatch_base
            .get_or_init(|| DispatchOptions::new(&self.cwd));
        let mut opts = base
            .clone()
            .with_wasm_runner(runner)
            .with_mcp_runner(Arc::new(McpHookRunner::new(self.clone())))
            .with_process_confiner(Arc::new(processes::HookConfiner {
                profiles: self.process_profiles().clone(),
            }));
        if let Some(runner) = self.model_runner.get() {
            opts = opts.with_model_runner(runner.clone());
        }
        Ok(opts)
    }

    /// The declared components' grants and loaded components, shared by every WASM hook
    /// runner of this session.
    fn wasm_slots(&self) -> &Arc<hooks::WasmSlots> {
        self.wasm_slots
            .get_or_init(|| Arc::new(hooks::WasmSlots::of(self)))
    }

    /// How the programs plugins and the project start are confined (see [`processes`]).
    pub fn process_profiles(&self) -> &Arc<processes::ProcessProfiles> {
        self.process_profiles
            .get_or_init(|| Arc::new(processes::ProcessProfiles::of(self)))
    }

    /// Gives `prompt` and `agent` hook handlers a model (the conversation's); without one they
    /// are skipped with a notice. The first runner set stays.
    pub fn set_model_hook_runner(&self, runner: Arc<dyn warden_hooks::ModelHookRunner>) {
        let _ = self.model_runner.set(runner);
    }

    /// Ends what the session started that outlives a call: its MCP servers' connections (and
    /// the process groups of stdio servers), its language servers (`shutdown`, `exit`) and
    /// its plugins' monitors.
    /// Call it before the runtime that ran the calls goes away.
    pub async fn close(&self) {
        if let Some(hub) = self.mcp.get() {
            hub.shutdown().await;
        }
        if let Some(lsp) = self.lsp.get() {
            lsp.shutdown().await;
        }
        if let Some(m) = self.monitors.get() {
            for note in m.stop() {
                eprintln!("{note}");
            }
        }
    }

    /// The enabled plugins' monitors (see [`crate::monitors`]), none started until asked.
    pub fn monitors(&self) -> &crate::monitors::Monitors {
        self.monitors
            .get_or_init(|| crate::monitors::Monitors::new(self))
    }

    /// The language servers of the enabled plugins (see [`crate::lsp`]), read once; each
    /// starts, confined, on first use for a file of its extensions.
    pub fn lsp(&self) -> &warden_lsp::LspManager {
        self.lsp.get_or_init(|| crate::lsp::manager(self))
    }

    /// The MCP servers of this session (user, local, approved project servers and the
    /// enabled plugins' servers), read once; each connects on first use.
    pub fn mcp(&self) -> &McpHub {
        self.mcp.get_or_init(|| {
            McpHub::load(
                &self.cwd,
                &self.home,
                &self.settings,
                self.plugin_mcp_servers(),
            )
            .with_user_config(
                &self
                    .plugins
                    .iter()
                    .map(|p| (p.id.clone(), self.plugin_options(p)))
                    .collect(),
            )
            .confined_by(self.process_profiles().clone())
        })
    }

    /// The tools of this session: the built-in WASM tools and the enabled plugins' WASM tool
    /// components.
    pub fn tools(&self) -> &ToolRegistry {
        self.registry
            .get_or_init(|| ToolRegistry::for_session(self))
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
        // Claude Code creates the data directory the first time it is referenced.
        if caps
            .fs
            .iter()
            .any(|f| f.path.contains("${CLAUDE_PLUGIN_DATA}"))
        {
            let _ = create_private_dir(&p.data_dir);
        }
        resolve_grant(caps, &p.plugin.root, &p.data_dir, &self.cwd)
    }

    /// The data directory of `plugin_id`, canonical, when `grant` gives the component a path
    /// inside it.
    pub fn own_data_dir(&self, plugin_id: &str, grant: &Grant) -> Option<PathBuf> {
        let p = self.plugins.iter().find(|p| p.id == plugin_id)?;
        if !grant.fs.iter().any(|g| g.path.starts_with(&p.data_dir)) {
            return None;
        }
        create_private_dir(&p.data_dir).ok()?;
        p.data_dir.canonicalize().ok()
    }

    /// `CLAUDE_PLUGIN_ROOT`, `CLAUDE_PLUGIN_DATA` and `CLAUDE_PROJECT_DIR` for a component of
    /// `plugin_id`, as Claude Code sets them for a plugin's command hooks; the guest sees
    /// each only if its grant names it, like any other variable.
    pub fn add_plugin_env(
        &self,
        ctx: &mut crate::runtime::CallContext,
        plugin_id: &str,
        grant: &Grant,
        project: &Path,
    ) {
        let Some(p) = self.plugins.iter().find(|p| p.id == plugin_id) else {
            return;
        };
        for (key, value) in [
            ("CLAUDE_PLUGIN_ROOT", p.plugin.root.as_path()),
            ("CLAUDE_PLUGIN_DATA", p.data_dir.as_path()),
            ("CLAUDE_PROJECT_DIR", project),
        ] {
            if grant.env.iter().any(|g| g == key) {
                if key == "CLAUDE_PLUGIN_DATA" {
                    let _ = create_private_dir(value);
                }
                ctx.env.retain(|(k, _)| k != key);
                ctx.env.push((key.to_string(), value.display().to_string()));
            }
        }
    }

    /// The sha256 the user's grant was approved for, for one component of one plugin (`None`
    /// when nothing was granted or the grant predates per-component digests).
    pub fn component_digest(&self, plugin_id: &str, component: &str) -> Option<String> {
        let p = self.plugins.iter().find(|p| p.id == plugin_id)?;
        p.grant
            .as_ref()?
            .component_digest(component)
            .map(str::to_string)
    }
}

impl Session {
    /// Each enabled plugin's MCP servers, with the plugin they come from.
    pub(crate) fn plugin_mcp_servers(
        &self,
    ) -> impl Iterator<
        Item = (
            warden_config::mcp::PluginServer,
            &serde_json::Map<String, serde_json::Value>,
        ),
    > {
        self.plugins.iter().map(|p| {
            (
                warden_config::mcp::PluginServer {
                    plugin_id: p.id.clone(),
                    plugin_name: p.plugin.name.clone(),
                    root: p.plugin.root.clone(),
                    data_dir: p.data_dir.clone(),
                },
                &p.plugin.mcp_servers,
            )
        })
    }

    /// What a guest call sees of the session: `cwd`, the grant's environment, `policy`, and
    /// how the programs it starts are confined.
    pub fn call_context(
        &self,
        cwd: &Path,
        grant: &Grant,
        policy: Arc<dyn Policy>,
    ) -> crate::runtime::CallContext {
        crate::runtime::CallContext::confined(
            cwd,
            grant,
            policy,
            self.process_confinement().clone(),
        )
    }

    /// The `sandbox` settings: how programs started through `exec` are confined. Each of them
    /// widens what a program may do, so only files the user controls count (user, managed,
    /// `--settings`; the user's are Warden's own and Claude Code's, which sit in the user's
    /// home as well); a project's own `.claude/settings*.json` cannot turn confinement off,
    /// add readable paths or give programs the network. The files configured hooks and MCP
    /// servers start are read-only to programs and refused to the file tools (see
    /// [`launched`]).
    pub fn process_confinement(&self) -> &ProcessConfinement {
        self.processes.get_or_init(|| {
            let user_home = self
                .opts
                .user_home
                .clone()
                .or_else(warden_vocab::home_dir)
                .filter(|h| h.is_absolute());
            let launched = launched::launched_files(self, user_home.as_deref());
            ProcessConfinement {
                read_only: launched,
                ..sandbox_settings(&self.settings, user_home)
            }
        })
    }
}

/// Reads `sandbox.allowUnconfined`, `sandbox.network` and `sandbox.readablePaths` (absolute,
/// or `~/…`) from the files the user controls, highest precedence first for the flags;
/// readable paths add up.
fn sandbox_settings(settings: &Settings, home: Option<PathBuf>) -> ProcessConfinement {
    let trusted = settings
        .files
        .iter()
        .filter(|f| matches!(f.scope, Scope::User | Scope::Managed | Scope::Cli));
    let mut out = ProcessConfinement {
        home: home.clone(),
        ..ProcessConfinement::default()
    };
    let mut flags_seen = (false, false);
    for f in trusted {
        let Some(sb) = f.value.get("sandbox").and_then(|v| v.as_object()) else {
            continue;
        };
        if !flags_seen.0
            && let Some(b) = sb.get("allowUnconfined").and_then(|v| v.as_bool())
        {
            out.allow_unconfined = b;
            flags_seen.0 = true;
        }
        if !flags_seen.1
            && let Some(b) = sb.get("network").and_then(|v| v.as_bool())
        {
            out.network = b;
            flags_seen.1 = true;
        }
        for p in sb
            .get("readablePaths")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
        {
            let path = match (p.strip_prefix("~/"), &home) {
                (Some(rest), Some(h)) => h.join(rest),
                (Some(_), None) => continue,
                (None, _) => PathBuf::from(p),
            };
            if path.is_absolute() && !out.readable.contains(&path) {
                out.readable.push(path);
            }
        }
    }
    out
}

fn build_permissions(
    settings: &Settings,
    opts: &SessionOptions,
) -> Result<Permissions, PermissionsError> {
    let home = opts
        .user_home
        .clone()
        .or_else(warden_vocab::home_dir)
        .unwrap_or_else(|| PathBuf::from("/"));
    let popts = warden_permissions::Options {
        cwd: opts.cwd.clone(),
        home,
        mode: opts.mode,
        allowed_tools: opts.allowed_tools.clone(),
        trusted: true,
        ..warden_permissions::Options::default()
    };
    Permissions::from_settings(settings, &popts)
}

fn load_plugins(
    opts: &SessionOptions,
    settings: &Settings,
    problems: &mut Vec<LoadProblem>,
) -> Vec<SessionPlugin> {
    let mut plugins = Vec::new();
    // A plugin the user enabled in managed or `--settings` files stays on whatever the
    // repository's files say, as one enabled in the user settings file does.
    let manager = PluginManager::new(opts.home.clone(), &opts.cwd)
        .quiet(true)
        .with_user_choices(settings.user_plugin_choices());
    match manager.load_active() {
        Ok(active) => {
            for (a, loaded) in active {
                match loaded {
                    Ok(plugin) => {
                        if let Some(problem) = broken_warden_part(&plugin) {
                            problems.push(LoadProblem::new(
                                LoadProblemKind::PluginNotLoaded,
                                format!("plugin {}: {problem}", a.plugin_id),
                            ));
                        }
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
                    Err(e) => problems.push(LoadProblem::new(
                        LoadProblemKind::PluginNotLoaded,
                        format!("plugin {} not loaded: {e}", a.plugin_id),
                    )),
                }
            }
        }
        Err(e) => problems.push(LoadProblem::new(
            LoadProblemKind::InstalledPluginsUnreadable,
            format!("installed plugins not read: {e}"),
        )),
    }
    for dir in &opts.plugin_dirs {
        let dir = opts.cwd.join(dir);
        match warden_plugins::load_plugin(&dir) {
            Ok(plugin) => {
                if let Some(problem) = broken_warden_part(&plugin) {
                    problems.push(LoadProblem::new(
                        LoadProblemKind::PluginDirNotLoaded,
                        format!("--plugin-dir {}: {problem}", dir.display()),
                    ));
                }
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
            Err(e) => problems.push(LoadProblem::new(
                LoadProblemKind::PluginDirNotLoaded,
                format!("--plugin-dir {}: {e}", dir.display()),
            )),
        }
    }
    plugins
}

/// A plugin that declares WASM components or hooks whose declaration failed its checks: its
/// guards would silently not run.
fn broken_warden_part(plugin: &LoadedPlugin) -> Option<String> {
    if !plugin.warden_declared || plugin.warden.is_some() {
        return None;
    }
    let errors: Vec<String> = plugin
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    Some(format!(
        "its WASM components and hooks are not loaded: {}",
        if errors.is_empty() {
            "their declaration is invalid".to_string()
        } else {
            errors.join("; ")
        }
    ))
}

fn read_manifest(root: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(root.join(".claude-plugin").join("plugin.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// `caps` resolved against a plugin's directories, the project and this process's `$HOME`.
fn resolve_grant(
    caps: &warden_plugins::capability::Capabilities,
    plugin_root: &Path,
    data_dir: &Path,
    project: &Path,
) -> Grant {
    let home = warden_vocab::home_dir();
    caps.resolve(&GrantRoots {
        plugin_root,
        data_dir,
        project,
        home: home.as_deref(),
    })
}

/// The session's rules as a [`Policy`], compiled on the first capability check.
struct SessionPolicy {
    session: Arc<Session>,
    ask: AskAt,
    inner: OnceLock<Result<PermissionPolicy, String>>,
}

impl SessionPolicy {
    fn policy(&self) -> Result<&PermissionPolicy, PolicyError> {
        self.inner
            .get_or_init(|| {
                self.session
                    .rules()
                    .map(|r| PermissionPolicy::new(r, self.ask))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| PolicyError::RulesUnusable(e.clone()))
    }
}

impl Policy for SessionPolicy {
    fn check_path(&self, path: &Path, write: bool) -> Result<(), PolicyError> {
        self.policy()?.check_path(path, write)
    }

    fn check_exec(&self, argv: &[String], cwd: &Path) -> Result<(), PolicyError> {
        self.policy()?.check_exec(argv, cwd)
    }

    fn check_url(&self, url: &str) -> Result<(), PolicyError> {
        self.policy()?.check_url(url)
    }

    fn denied_paths(&self, roots: &[PathBuf]) -> Result<crate::runtime::DeniedPaths, PolicyError> {
        self.policy()?.denied_paths(roots)
    }
}

/// Drops the handlers that hand an event to Warden itself: a command running `warden hook` or
/// `warden serve` (the `warden-bridge` plugins, or the same lines copied into Claude Code's
/// settings, which Warden also reads), or an `http` hook posting to a loopback `/hook/<event>`
/// (`warden serve`'s route). They exist so that Claude Code runs Warden's hooks; in Warden's
/// own session the hooks they would reach run directly, and the bridge would only start a second
/// Warden inside the sandbox, where it cannot read Warden's home, and block every tool call. Each
/// dropped handler is named in the configuration warnings.
fn skip_bridges_to_warden(config: &mut HookConfig) {
    let mut skipped = Vec::new();
    config.retain(|h| {
        let bridge = bridges_to_warden(&h.handler.kind, h.event);
        if bridge {
            skipped.push(warden_hooks::ConfigWarning {
                origin: h.source_label.clone(),
                message: format!(
                    "{} hands events to Warden itself; not run in Warden's own sessions, which run Warden's hooks directly",
                    h.label
                ),
            });
        }
        !bridge
    });
    config.warnings.extend(skipped);
}

fn bridges_to_warden(kind: &warden_hooks::HandlerKind, event: warden_hooks::Event) -> bool {
    match kind {
        warden_hooks::HandlerKind::Command(c) => {
            let mut words = c.command.split_whitespace();
            let program = words.next().unwrap_or("");
            let program = program.rsplit('/').next().unwrap_or(program);
            let verb = match &c.args {
                Some(args) => args.first().map(String::as_str),
                None => words.next(),
            };
            program == "warden" && matches!(verb, Some("hook" | "serve"))
        }
        warden_hooks::HandlerKind::Http(h) => {
            let Some(rest) = h.url.strip_prefix("http://") else {
                return false;
            };
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = match authority.strip_prefix('[') {
                Some(v6) => v6.split(']').next().unwrap_or(""),
                None => authority.split(':').next().unwrap_or(""),
            };
            let loopback = host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback());
            loopback && path == format!("hook/{}", event.as_str())
        }
        _ => false,
    }
}
