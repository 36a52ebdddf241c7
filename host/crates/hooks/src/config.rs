//! Hook configuration from every source (spec 1.1, 1.2), merged into one [`HookConfig`] with
//! each handler tagged by its source, after the policy gates.
//!
//! Nothing here fails: a malformed file, group or handler becomes a [`ConfigWarning`] naming
//! the file, and everything else still loads.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use warden_config::{Scope, Settings};

use crate::handler::{Handler, HandlerKind, ParseCtx, parse_handler};
use crate::matcher::Matcher;
use warden_vocab::Event;
use warden_vocab::schema::hooks::{EventMap, HooksDocument};

/// A plugin whose hooks are being registered.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginContext {
    /// Full id, `name@marketplace` (used for managed `enabledPlugins` matching).
    pub id: String,
    /// Install directory (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// Persistent data directory (`${CLAUDE_PLUGIN_DATA}`).
    pub data_dir: PathBuf,
    /// `userConfig` values: exported as `CLAUDE_PLUGIN_OPTION_<KEY>` and substituted for
    /// `${user_config.KEY}` in exec-form commands.
    pub options: Map<String, Value>,
}

impl PluginContext {
    /// A plugin with no user options.
    pub fn new(
        id: impl Into<String>,
        root: impl Into<PathBuf>,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        PluginContext {
            id: id.into(),
            root: root.into(),
            data_dir: data_dir.into(),
            options: Map::new(),
        }
    }
}

/// Where a handler was declared.
#[derive(Debug, Clone, PartialEq)]
pub enum HookSource {
    /// A settings file.
    Settings {
        /// Its scope.
        scope: Scope,
        /// Its path (`None` for inline `--settings` JSON).
        path: Option<PathBuf>,
    },
    /// A plugin's `hooks/hooks.json`, manifest `hooks` or `warden` section.
    Plugin(Arc<PluginContext>),
    /// A skill's frontmatter (registered when the skill is invoked).
    Skill {
        /// Skill name.
        name: String,
        /// Its `SKILL.md`.
        path: Option<PathBuf>,
        /// The plugin providing the skill, if any.
        plugin: Option<Arc<PluginContext>>,
    },
    /// A subagent's frontmatter (active while it runs).
    Agent {
        /// Agent type.
        name: String,
        /// Its `.md` file.
        path: Option<PathBuf>,
        /// The plugin providing the agent, if any.
        plugin: Option<Arc<PluginContext>>,
    },
    /// Registered in memory by the host (SDK-style in-process hooks).
    Session {
        /// Who registered them.
        name: String,
    },
}

impl HookSource {
    /// The label Claude Code shows in `/hooks` and `ask` prompts.
    pub fn label(&self) -> String {
        match self {
            HookSource::Settings {
                scope: Scope::User, ..
            } => "User Settings".into(),
            HookSource::Settings {
                scope: Scope::Project,
                ..
            } => "Project Settings".into(),
            HookSource::Settings {
                scope: Scope::Local,
                ..
            } => "Local Settings".into(),
            HookSource::Settings {
                scope: Scope::Cli, ..
            } => "CLI Settings".into(),
            HookSource::Settings {
                scope: Scope::Managed,
                ..
            } => "Managed Settings".into(),
            HookSource::Plugin(p) => format!("Plugin Hooks ({})", p.id),
            HookSource::Skill { name, .. } => format!("Skill ({name})"),
            HookSource::Agent { name, .. } => format!("Agent ({name})"),
            HookSource::Session { name } => format!("Session Hooks ({name})"),
        }
    }

    /// Where it was declared: the settings file, the plugin's directory, the skill's or
    /// agent's file (`None` for inline `--settings` JSON and host-registered hooks).
    pub fn origin(&self) -> Option<PathBuf> {
        match self {
            HookSource::Settings { path, .. } => path.clone(),
            HookSource::Plugin(p) => Some(p.root.clone()),
            HookSource::Skill { path, plugin, .. } | HookSource::Agent { path, plugin, .. } => path
                .clone()
                .or_else(|| plugin.as_ref().map(|p| p.root.clone())),
            HookSource::Session { .. } => None,
        }
    }

    /// The plugin behind this source, for `CLAUDE_PLUGIN_*` variables.
    pub fn plugin(&self) -> Option<&PluginContext> {
        match self {
            HookSource::Plugin(p) => Some(p),
            HookSource::Skill { plugin, .. } | HookSource::Agent { plugin, .. } => {
                plugin.as_deref()
            }
            _ => None,
        }
    }

    /// Whether this is a settings file (identical handlers across settings files run once).
    pub fn is_settings(&self) -> bool {
        matches!(self, HookSource::Settings { .. })
    }
}

/// A configuration problem that did not stop loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The file (or other origin) it concerns.
    pub origin: String,
    /// What is wrong and what was done about it.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}

/// One handler registered for one event.
#[derive(Debug)]
pub struct RegisteredHook {
    /// The event.
    pub event: Event,
    /// The group's compiled matcher.
    pub matcher: Arc<Matcher>,
    /// The matcher as written.
    pub matcher_text: Option<String>,
    /// The handler.
    pub handler: Handler,
    /// Where it came from.
    pub source: Arc<HookSource>,
    /// The handler's label, made once for every report that names it.
    pub label: String,
    /// The source's label.
    pub source_label: String,
    /// Set once a `once` handler has run successfully.
    pub(crate) spent: AtomicBool,
}

/// How to parse one hooks object.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions<'a> {
    /// File or origin named in warnings.
    pub origin: &'a str,
    /// Accept `"type": "wasm"` (only for the `warden` section of `plugin.json`).
    pub allow_wasm: bool,
    /// `warden.components`, to resolve `wasm` handlers.
    pub components: Option<&'a Map<String, Value>>,
    /// Plugin root, to resolve component paths.
    pub plugin_root: Option<&'a Path>,
    /// The hooks belong to a plugin (affects the `${user_config.*}` check).
    pub is_plugin: bool,
    /// Honour `once` (skill frontmatter only).
    pub honour_once: bool,
    /// Register `Stop` as `SubagentStop` (agent frontmatter).
    pub stop_as_subagent_stop: bool,
}

/// A parsed matcher group.
#[derive(Debug, Clone)]
pub struct ParsedGroup {
    /// Its event.
    pub event: Event,
    /// Compiled matcher.
    pub matcher: Arc<Matcher>,
    /// Matcher as written.
    pub matcher_text: Option<String>,
    /// Valid handlers.
    pub handlers: Vec<Handler>,
}

/// Largest plugin hooks file read, in bytes (the same limit as the plugin loader's manifests).
pub const MAX_HOOKS_FILE_BYTES: u64 = 1 << 20;

/// Parses an object of `event name → [matcher group]` (the value of a `hooks` key).
pub fn parse_hooks(
    events: &Value,
    opts: &ParseOptions<'_>,
) -> (Vec<ParsedGroup>, Vec<ConfigWarning>) {
    match EventMap::from_value(events) {
        Some(map) => parse_event_map(&map, opts),
        None => (
            Vec::new(),
            vec![ConfigWarning {
                origin: opts.origin.to_string(),
                message: format!(
                    "`hooks` must be an object of event names, found {} (skipped)",
                    warden_vocab::text::a_json_type(events)
                ),
            }],
        ),
    }
}

/// Turns the events of a hooks document, as read once, into matcher groups of handlers.
pub fn parse_event_map(
    map: &EventMap,
    opts: &ParseOptions<'_>,
) -> (Vec<ParsedGroup>, Vec<ConfigWarning>) {
    let mut warnings = Vec::new();
    let mut groups = Vec::new();
    let mut warn = |m: String| {
        warnings.push(ConfigWarning {
            origin: opts.origin.to_string(),
            message: m,
        })
    };
    for entry in &map.0 {
        let name = &entry.name;
        let Some(event) = entry.event else {
            let hint = Event::ALL
                .iter()
                .find(|e| e.as_str().eq_ignore_ascii_case(name))
                .map(|e| format!(" (did you mean `{e}`? event names are case-sensitive)"))
                .unwrap_or_default();
            warn(format!("unknown hook event `{name}`{hint} (skipped)"));
            continue;
        };
        let event = if opts.stop_as_subagent_stop && event == Event::Stop {
            Event::SubagentStop
        } else {
            event
        };
        let list = match &entry.groups {
            Ok(list) => list,
            Err(other) => {
                warn(format!(
                    "{name}: must be an array of matcher groups, found {} (skipped)",
                    warden_vocab::text::a_json_type(other)
                ));
                continue;
            }
        };
        for (gi, group) in list.iter().enumerate() {
            let at = format!("{name}[{gi}]");
            let group = match group {
                Ok(g) => g,
                Err(other) => {
                    warn(format!(
                        "{at}: matcher group must be an object, found {} (skipped)",
                        warden_vocab::text::a_json_type(other)
                    ));
                    continue;
                }
            };
            for k in &group.keys {
                if !matches!(k.as_str(), "matcher" | "hooks" | "description") {
                    warn(format!("{at}: unknown matcher-group key `{k}` (ignored)"));
                }
            }
            let matcher_text = group.matcher.valid().cloned();
            // On events without matcher support the matcher is ignored, so it is not compiled.
            let matcher = if event.matcher_field().is_some() {
                match Matcher::from_field(&group.matcher, event.narrow_matcher()) {
                    Ok(m) => m,
                    Err(e) => {
                        warn(format!("{at}: {e} (group skipped)"));
                        continue;
                    }
                }
            } else {
                Matcher::All
            };
            let Some(handlers_raw) = &group.hooks else {
                warn(format!(
                    "{at}: matcher group needs a `hooks` array (skipped)"
                ));
                continue;
            };
            let ctx = ParseCtx {
                event,
                allow_wasm: opts.allow_wasm,
                components: opts.components,
                plugin_root: opts.plugin_root,
                is_plugin: opts.is_plugin,
                honour_once: opts.honour_once,
            };
            let mut handlers = Vec::new();
            for (hi, h) in handlers_raw.iter().enumerate() {
                let mut hwarn = |m: String| warn(format!("{at}.hooks[{hi}]: {m}"));
                if let Some(parsed) = parse_handler(h, &ctx, &mut hwarn) {
                    handlers.push(parsed);
                }
            }
            groups.push(ParsedGroup {
                event,
                matcher: Arc::new(matcher),
                matcher_text,
                handlers,
            });
        }
    }
    (groups, warnings)
}

/// The events of a plugin hooks file or inline manifest value: `{"hooks": {...}}` (wrapped,
/// extra keys ignored) or `{"PreToolUse": [...]}` (bare).
fn events_of<'d>(
    doc: &'d HooksDocument,
    origin: &str,
    warnings: &mut Vec<ConfigWarning>,
) -> Option<&'d EventMap> {
    let message = match doc {
        HooksDocument::Wrapped { events, .. } | HooksDocument::Bare(events) => return Some(events),
        HooksDocument::NotObject(v) => format!(
            "hooks file must be a JSON object, found {} (its hooks are skipped)",
            warden_vocab::text::a_json_type(v)
        ),
        HooksDocument::HooksNotObject(v) => format!(
            "`hooks` must be an object of event names, found {} (its hooks are skipped)",
            warden_vocab::text::a_json_type(v)
        ),
    };
    warnings.push(ConfigWarning {
        origin: origin.to_string(),
        message,
    });
    None
}

/// Policy gates read from settings (spec 1.2, 3.3).
#[derive(Debug, Clone, Default)]
struct Gates {
    /// `disableAllHooks` after precedence, with the scope that set it.
    disable_all: Option<Scope>,
    managed_only: bool,
    strict_plugin_only: bool,
    force_enabled: HashSet<String>,
    allowed_http_urls: Option<Vec<String>>,
    http_env_vars: Option<Vec<String>>,
}

/// Collects hooks from every source, then applies the gates in [`HookConfigBuilder::build`].
#[derive(Debug, Default)]
pub struct HookConfigBuilder {
    groups: Vec<(ParsedGroup, Arc<HookSource>)>,
    warnings: Vec<ConfigWarning>,
    gates: Gates,
}

impl HookConfigBuilder {
    /// An empty builder (no gates).
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder holding the hooks of every settings file and the gates they set.
    pub fn from_settings(settings: &Settings) -> Self {
        let mut b = Self::new();
        b.add_settings(settings);
        b
    }

    /// Adds the `hooks` of every settings file (highest precedence first) and reads the gates
    /// `disableAllHooks`, `allowManagedHooksOnly`, `strictPluginOnlyCustomization`,
    /// `enabledPlugins` (managed), `allowedHttpHookUrls` and `httpHookAllowedEnvVars`.
    pub fn add_settings(&mut self, settings: &Settings) {
        for file in &settings.files {
            let origin = file.display_name();
            if let Some(h) = file.value.get("hooks") {
                self.add_settings_hooks(file.scope, file.path.clone(), h, &origin);
            }
            for key in ["allowedHttpHookUrls", "httpHookAllowedEnvVars"] {
                let Some(v) = file.value.get(key) else {
                    continue;
                };
                let Some(items) = v.as_array() else {
                    self.warn(
                        &origin,
                        format!("`{key}` must be an array of strings (ignored)"),
                    );
                    continue;
                };
                let target = if key == "allowedHttpHookUrls" {
                    &mut self.gates.allowed_http_urls
                } else {
                    &mut self.gates.http_env_vars
                };
                let list = target.get_or_insert_with(Vec::new);
                for s in items.iter().filter_map(Value::as_str) {
                    if !list.iter().any(|x| x == s) {
                        list.push(s.to_string());
                    }
                }
            }
        }
        if let Some((v, f)) = settings.scalar("disableAllHooks")
            && v.as_bool() == Some(true)
        {
            self.gates.disable_all = Some(f.scope);
        }
        let managed: Vec<_> = settings.scope(Scope::Managed).collect();
        self.gates.managed_only = managed
            .iter()
            .find_map(|f| f.value.get("allowManagedHooksOnly"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.gates.strict_plugin_only = managed
            .iter()
            .find_map(|f| f.value.get("strictPluginOnlyCustomization"))
            .is_some_and(|v| {
                v.as_bool() == Some(true)
                    || v.as_array().is_some_and(|a| a.iter().any(|x| x == "hooks"))
            });
        for f in &managed {
            if let Some(ep) = f.value.get("enabledPlugins").and_then(Value::as_object) {
                for (id, on) in ep {
                    if on.as_bool() == Some(true) {
                        self.gates.force_enabled.insert(id.clone());
                    }
                }
            }
        }
    }

    /// Adds the `hooks` value of one settings file.
    pub fn add_settings_hooks(
        &mut self,
        scope: Scope,
        path: Option<PathBuf>,
        hooks: &Value,
        origin: &str,
    ) {
        let source = Arc::new(HookSource::Settings { scope, path });
        let opts = ParseOptions {
            origin,
            ..ParseOptions::default()
        };
        self.add_parsed(parse_hooks(hooks, &opts), &source);
    }

    /// Adds a plugin's hooks, reading `<root>/hooks/hooks.json` and the manifest's `hooks`
    /// (string path, array of paths or inline objects, or inline object) and `warden` section.
    ///
    /// The default file is always read and manifest paths add to it, as in Claude Code; a
    /// manifest path naming the default file is loaded once.
    pub fn add_plugin(&mut self, plugin: PluginContext, manifest: Option<&Value>) {
        let plugin = Arc::new(plugin);
        let mut seen: HashSet<PathBuf> = HashSet::new();
        let default = plugin.root.join("hooks").join("hooks.json");
        if default.is_file() {
            self.add_plugin_file(&plugin, &default, &mut seen);
        }
        let manifest_origin = plugin
            .root
            .join(".claude-plugin")
            .join("plugin.json")
            .display()
            .to_string();
        if let Some(h) = manifest.and_then(|m| m.get("hooks")) {
            let items: Vec<&Value> = match h {
                Value::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            for item in items {
                match item {
                    Value::String(rel) => match resolve_relative(&plugin.root, rel) {
                        Some(p) => self.add_plugin_file(&plugin, &p, &mut seen),
                        None => self.warn(
                            &manifest_origin,
                            format!("hooks path `{rel}` must be relative to the plugin root and stay inside it (skipped)"),
                        ),
                    },
                    Value::Object(_) => self.add_plugin_hooks(plugin.clone(), item, &format!("{manifest_origin} (inline hooks)")),
                    other => {
                        self.warn(&manifest_origin, format!("`hooks` entries must be paths or objects, found {} (skipped)", warden_vocab::text::a_json_type(other)))
                    }
                }
            }
        }
        if let Some(w) = manifest.and_then(|m| m.get("warden")) {
            self.add_warden_section(plugin, w, &format!("{manifest_origin} (warden)"));
        }
    }

    fn add_plugin_file(
        &mut self,
        plugin: &Arc<PluginContext>,
        path: &Path,
        seen: &mut HashSet<PathBuf>,
    ) {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if !seen.insert(key) {
            return;
        }
        let origin = path.display().to_string();
        // A plugin's hooks file is someone else's: its size is checked before it is read.
        if let Ok(m) = std::fs::metadata(path)
            && m.len() > MAX_HOOKS_FILE_BYTES
        {
            return self.warn(
                &origin,
                format!(
                    "hooks file is {} bytes, over the limit of {MAX_HOOKS_FILE_BYTES} bytes (skipped)",
                    m.len()
                ),
            );
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return self.warn(&origin, format!("cannot read hooks file: {e} (skipped)")),
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => self.add_plugin_hooks(plugin.clone(), &v, &origin),
            Err(e) => self.warn(
                &origin,
                format!(
                    "invalid JSON at line {} column {}: {e} (skipped)",
                    e.line(),
                    e.column()
                ),
            ),
        }
    }

    /// Adds an already-read plugin hooks value (a `hooks.json` document or inline manifest
    /// object; wrapped or bare). `type: "wasm"` is rejected here, as Claude Code would.
    pub fn add_plugin_hooks(&mut self, plugin: Arc<PluginContext>, value: &Value, origin: &str) {
        self.add_plugin_document(plugin, &HooksDocument::from_value(value), origin);
    }

    /// Adds a plugin hooks document already read (by the plugin loader, which reads each file
    /// once). `type: "wasm"` is rejected here, as Claude Code would.
    pub fn add_plugin_document(
        &mut self,
        plugin: Arc<PluginContext>,
        doc: &HooksDocument,
        origin: &str,
    ) {
        let mut w = Vec::new();
        let events = events_of(doc, origin, &mut w);
        self.warnings.extend(w);
        let Some(events) = events else { return };
        let root = plugin.root.clone();
        let opts = ParseOptions {
            origin,
            is_plugin: true,
            plugin_root: Some(&root),
            ..ParseOptions::default()
        };
        let source = Arc::new(HookSource::Plugin(plugin));
        self.add_parsed(parse_event_map(events, &opts), &source);
    }

    /// Adds the `warden` section of a `plugin.json`: `{"components": {...}, "hooks": {...}}`,
    /// the only place `type: "wasm"` handlers are accepted.
    pub fn add_warden_section(&mut self, plugin: Arc<PluginContext>, warden: &Value, origin: &str) {
        let Some(obj) = warden.as_object() else {
            return self.warn(origin, "`warden` must be an object (skipped)".to_string());
        };
        for k in obj.keys() {
            if !matches!(k.as_str(), "components" | "hooks") {
                self.warn(origin, format!("unknown key `warden.{k}` (ignored)"));
            }
        }
        let components = match obj.get("components") {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                self.warn(
                    origin,
                    "`warden.components` must be an object (ignored)".to_string(),
                );
                None
            }
        };
        let Some(hooks) = obj.get("hooks") else {
            return;
        };
        let doc = HooksDocument::from_value(hooks);
        let mut w = Vec::new();
        let events = events_of(&doc, origin, &mut w);
        self.warnings.extend(w);
        let Some(events) = events else { return };
        let root = plugin.root.clone();
        let opts = ParseOptions {
            origin,
            allow_wasm: true,
            components,
            plugin_root: Some(&root),
            is_plugin: true,
            ..ParseOptions::default()
        };
        let source = Arc::new(HookSource::Plugin(plugin));
        self.add_parsed(parse_event_map(events, &opts), &source);
    }

    /// Adds the `hooks` of a skill's frontmatter (as JSON). `once` is honoured here.
    pub fn add_skill_hooks(
        &mut self,
        name: &str,
        path: Option<PathBuf>,
        plugin: Option<PluginContext>,
        hooks: &Value,
    ) {
        self.add_frontmatter_hooks(false, name, path, plugin, hooks);
    }

    /// Adds the `hooks` of a subagent's frontmatter (as JSON); `Stop` becomes `SubagentStop`.
    /// Register them only while the subagent runs (build a separate config and
    /// [`HookConfig::extend`] it). Plugin agents' `hooks` are ignored by Claude Code; do not add them.
    pub fn add_agent_hooks(
        &mut self,
        name: &str,
        path: Option<PathBuf>,
        plugin: Option<PluginContext>,
        hooks: &Value,
    ) {
        self.add_frontmatter_hooks(true, name, path, plugin, hooks);
    }

    /// Skill (`agent == false`) or subagent frontmatter hooks: skills honour `once`, subagents
    /// turn `Stop` into `SubagentStop`.
    fn add_frontmatter_hooks(
        &mut self,
        agent: bool,
        name: &str,
        path: Option<PathBuf>,
        plugin: Option<PluginContext>,
        hooks: &Value,
    ) {
        let kind = if agent { "agent" } else { "skill" };
        let origin = path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| format!("{kind} {name}"));
        let opts = ParseOptions {
            origin: &origin,
            honour_once: !agent,
            stop_as_subagent_stop: agent,
            is_plugin: plugin.is_some(),
            ..ParseOptions::default()
        };
        let parsed = parse_hooks(hooks, &opts);
        let name = name.to_string();
        let plugin = plugin.map(Arc::new);
        let source = Arc::new(if agent {
            HookSource::Agent { name, path, plugin }
        } else {
            HookSource::Skill { name, path, plugin }
        });
        self.add_parsed(parsed, &source);
    }

    /// Adds in-memory hooks registered by the host.
    pub fn add_session_hooks(&mut self, name: &str, hooks: &Value) {
        let origin = format!("session hooks ({name})");
        let opts = ParseOptions {
            origin: &origin,
            ..ParseOptions::default()
        };
        let parsed = parse_hooks(hooks, &opts);
        self.add_parsed(
            parsed,
            &Arc::new(HookSource::Session {
                name: name.to_string(),
            }),
        );
    }

    fn add_parsed(
        &mut self,
        (groups, warnings): (Vec<ParsedGroup>, Vec<ConfigWarning>),
        source: &Arc<HookSource>,
    ) {
        self.warnings.extend(warnings);
        self.groups
            .extend(groups.into_iter().map(|g| (g, source.clone())));
    }

    fn warn(&mut self, origin: &str, message: String) {
        self.warnings.push(ConfigWarning {
            origin: origin.to_string(),
            message,
        });
    }

    /// Why `source` is disabled by policy, if it is.
    fn gate(&self, source: &HookSource) -> Option<&'static str> {
        let g = &self.gates;
        let managed = matches!(
            source,
            HookSource::Settings {
                scope: Scope::Managed,
                ..
            }
        );
        let force_enabled = source
            .plugin()
            .is_some_and(|p| g.force_enabled.contains(&p.id));
        let session = matches!(source, HookSource::Session { .. });
        match g.disable_all {
            Some(Scope::Managed) => return Some("disableAllHooks (managed)"),
            Some(_) if !(managed || force_enabled || session) => return Some("disableAllHooks"),
            _ => {}
        }
        if g.managed_only && !(managed || force_enabled || session) {
            return Some("allowManagedHooksOnly");
        }
        if g.strict_plugin_only && source.is_settings() && !managed {
            return Some("strictPluginOnlyCustomization");
        }
        None
    }

    /// Applies the gates and produces the configuration.
    ///
    /// Gate choices where the documentation is silent: `Session` hooks count as in-process SDK
    /// hooks (kept under `allowManagedHooksOnly` and non-managed `disableAllHooks`); skill
    /// frontmatter hooks are blocked by `allowManagedHooksOnly` unless their plugin is
    /// force-enabled; `--settings` hooks are treated like user/project/local ones.
    pub fn build(mut self) -> HookConfig {
        let mut by_event: HashMap<Event, Vec<Arc<RegisteredHook>>> = HashMap::new();
        let mut disabled: HashMap<&'static str, usize> = HashMap::new();
        let groups = std::mem::take(&mut self.groups);
        let mut url_warnings = Vec::new();
        for (group, source) in groups {
            if let Some(reason) = self.gate(&source) {
                *disabled.entry(reason).or_default() += group.handlers.len();
                continue;
            }
            for handler in group.handlers {
                if let (HandlerKind::Http(h), Some(allowed)) =
                    (&handler.kind, &self.gates.allowed_http_urls)
                    && !allowed.iter().any(|p| url_allowed(p, &h.url))
                {
                    url_warnings.push(format!(
                        "{}: http hook to {} is not allowed by allowedHttpHookUrls (skipped)",
                        source.label(),
                        h.url
                    ));
                    continue;
                }
                by_event
                    .entry(group.event)
                    .or_default()
                    .push(Arc::new(RegisteredHook {
                        event: group.event,
                        matcher: group.matcher.clone(),
                        matcher_text: group.matcher_text.clone(),
                        label: handler.label(),
                        source_label: source.label(),
                        handler,
                        source: source.clone(),
                        spent: AtomicBool::new(false),
                    }));
            }
        }
        for m in url_warnings {
            self.warn("allowedHttpHookUrls", m);
        }
        let mut reasons: Vec<_> = disabled.into_iter().collect();
        reasons.sort();
        for (reason, n) in reasons {
            self.warn(
                "policy",
                format!("{n} hook handler(s) disabled by {reason}"),
            );
        }
        HookConfig {
            by_event,
            warnings: self.warnings,
            http_allowed_env_vars: self.gates.http_env_vars,
            stop_blocks: Mutex::new(HashMap::new()),
        }
    }
}

/// Resolves a manifest path against the plugin root, refusing absolute paths and `..`.
fn resolve_relative(root: &Path, rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    if p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    Some(root.join(p))
}

/// Splits a URL (or URL pattern) into a normalised `scheme://host[:port]` prefix and the rest:
/// the host is lowercased and a trailing dot removed, as Claude Code compares hostnames.
fn normalise_url(u: &str) -> String {
    let (scheme, rest) = match u.find("://") {
        Some(i) => (&u[..i + 3], &u[i + 3..]),
        None => ("", u),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => authority.split_at(i + 1),
        None => ("", authority),
    };
    let (host, port) = match hostport.rfind(':') {
        Some(i) if !hostport[i + 1..].contains(']') => hostport.split_at(i),
        _ => (hostport, ""),
    };
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    format!(
        "{}{userinfo}{host}{port}{tail}",
        scheme.to_ascii_lowercase()
    )
}

/// Whether `url` matches an `allowedHttpHookUrls` pattern (`*` matches any run of characters).
pub fn url_allowed(pattern: &str, url: &str) -> bool {
    wildcard(
        normalise_url(pattern).as_bytes(),
        normalise_url(url).as_bytes(),
    )
}

fn wildcard(p: &[u8], s: &[u8]) -> bool {
    // Iterative glob with single-star backtracking: linear enough for URL-sized inputs.
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

/// The merged, gated hook configuration of a session.
#[derive(Debug, Default)]
pub struct HookConfig {
    by_event: HashMap<Event, Vec<Arc<RegisteredHook>>>,
    /// Every problem found while loading, each naming its file.
    pub warnings: Vec<ConfigWarning>,
    /// `httpHookAllowedEnvVars` merged across settings files (`None` = unset).
    pub http_allowed_env_vars: Option<Vec<String>>,
    /// Consecutive Stop / SubagentStop blocks, for the loop cap.
    pub(crate) stop_blocks: Mutex<HashMap<String, u32>>,
}

impl HookConfig {
    /// Handlers registered for `event`, in registration order.
    pub fn hooks(&self, event: Event) -> &[Arc<RegisteredHook>] {
        self.by_event.get(&event).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every registered handler.
    pub fn all(&self) -> impl Iterator<Item = &Arc<RegisteredHook>> {
        Event::ALL.iter().flat_map(|e| self.hooks(*e).iter())
    }

    /// Number of registered handlers.
    pub fn len(&self) -> usize {
        self.by_event.values().map(Vec::len).sum()
    }

    /// Whether no handler is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds the handlers and warnings of `other` (e.g. a subagent's frontmatter hooks).
    pub fn extend(&mut self, other: HookConfig) {
        for (e, hooks) in other.by_event {
            self.by_event.entry(e).or_default().extend(hooks);
        }
        self.warnings.extend(other.warnings);
    }

    /// Keeps only handlers for which `keep` returns true (e.g. to drop a finished subagent's).
    pub fn retain(&mut self, mut keep: impl FnMut(&RegisteredHook) -> bool) {
        for hooks in self.by_event.values_mut() {
            hooks.retain(|h| keep(h));
        }
    }
}
