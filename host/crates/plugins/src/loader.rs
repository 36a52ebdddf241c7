//! Loading a plugin directory: manifest, strict-mode merge with a marketplace entry, component
//! discovery, hooks/MCP/LSP configuration and the `warden` section.
//!
//! Discovery follows Claude Code's layout (`skills/<name>/SKILL.md`, `commands/**/*.md`,
//! `agents/**/*.md`, `output-styles/*.md`, `workflows/`, `hooks/hooks.json`, `.mcp.json`,
//! `.lsp.json`, `monitors/monitors.json`, `settings.json`, `bin/`, root `SKILL.md`).
//! `skills` paths *add* to the default scan; `commands`, `agents`, `outputStyles`, `workflows`
//! *replace* their default folder. Configuration files are read only at the plugin root or at
//! manifest-named paths, never globbed.
//!
//! Containment: every component path is canonicalised (following symlinks) and must stay inside
//! the canonical plugin root; anything else is refused with an error naming the path and skipped.
//!
//! Choices where Claude Code's docs are silent:
//! * A `SKILL.md` directly in the default `skills/` folder loads as one skill named after the
//!   plugin, with a warning (the layout expects `skills/<name>/SKILL.md`).
//! * `skill.md` in another case loads, with a warning (it would load on case-insensitive systems).
//! * Skills nested below another skill (`skills/a/b/SKILL.md`) are supporting files of `a`.
//! * Skill directories whose name starts with `_` load, with a warning (likely templates).
//! * A component path that does not exist is a warning, not an error.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::diag::Diagnostic;
use crate::hooks::{HookFlavor, check_hooks};
use crate::limits::MAX_MANIFEST_BYTES;
use crate::manifest::{
    ComponentSpec, ManifestSource, PluginManifest, declares_components, parse_manifest,
};
use crate::marketplace::{MarketplaceEntry, PluginSource};
use crate::util::{Src, locate_key, locate_key_path, read_limited};
use crate::warden::{WARDEN_TOML, WardenSection, parse_warden, read_warden_toml};
use warden_config::json_type_name;

/// Relative path of the manifest inside a plugin.
pub const MANIFEST_FILE: &str = ".claude-plugin/plugin.json";

/// A plugin could not be loaded at all.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot load plugin at {}: {}", root.display(), summary(diagnostics))]
pub struct LoadError {
    /// The plugin directory.
    pub root: PathBuf,
    /// Everything found, including the fatal errors.
    pub diagnostics: Vec<Diagnostic>,
}

fn summary(d: &[Diagnostic]) -> String {
    d.iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Context for loading a plugin that comes from a marketplace.
#[derive(Debug, Clone, Default)]
pub struct LoadContext<'a> {
    /// The marketplace entry (strict-mode merge, name, inline components).
    pub entry: Option<&'a MarketplaceEntry>,
    /// The marketplace file, for diagnostics about the entry.
    pub marketplace_file: Option<&'a Path>,
    /// The directory is the plugin's source (`plugin validate`), not an installed or staged
    /// copy: only there may a diagnostic suggest `warden build` on it.
    pub at_source: bool,
}

/// One skill: a directory holding `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillRef {
    /// The skill directory (its supporting files live here).
    pub dir: PathBuf,
    /// The `SKILL.md` file.
    pub file: PathBuf,
    /// Name used when the frontmatter has none: the directory name (the plugin name for a
    /// root or `skills/` level `SKILL.md`).
    pub default_name: String,
}

/// One markdown component file (command, agent, output style).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentFile {
    /// The file.
    pub path: PathBuf,
    /// Id segments: subdirectories below the component folder plus the file stem
    /// (`agents/review/security.md` → `["review", "security"]`).
    pub segments: Vec<String>,
}

impl ComponentFile {
    /// The segments joined with `:` (`review:security`).
    pub fn local_name(&self) -> String {
        self.segments.join(":")
    }
}

/// Resolved component locations (each a file or a directory inside the plugin root), for the
/// instruction layer to load skills, agents and commands from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ComponentPaths {
    /// Skill roots: directories that are a skill or hold `<name>/SKILL.md` skills.
    pub skills: Vec<PathBuf>,
    /// Command files or folders.
    pub commands: Vec<PathBuf>,
    /// Agent files or folders.
    pub agents: Vec<PathBuf>,
    /// Output-style files or folders.
    pub output_styles: Vec<PathBuf>,
    /// Workflow files or folders.
    pub workflows: Vec<PathBuf>,
    /// Theme files or folders.
    pub themes: Vec<PathBuf>,
}

/// Hooks from one file or inline object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookSet {
    /// The file (`None` for inline `hooks` in plugin.json or the entry).
    pub file: Option<PathBuf>,
    /// Event → matcher groups that passed validation.
    pub hooks: Map<String, Value>,
}

/// A loaded plugin.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedPlugin {
    /// Namespace name (plugin.json `name`, else the entry name, else the directory name).
    pub name: String,
    /// Canonical plugin root (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// Whether `.claude-plugin/plugin.json` exists.
    pub has_manifest: bool,
    /// The effective manifest (after the strict-mode merge).
    pub manifest: PluginManifest,
    /// Resolved component locations.
    pub components: ComponentPaths,
    /// Skills found.
    pub skills: Vec<SkillRef>,
    /// Commands found.
    pub commands: Vec<ComponentFile>,
    /// Agents found.
    pub agents: Vec<ComponentFile>,
    /// Output styles found.
    pub output_styles: Vec<ComponentFile>,
    /// Hooks, per source.
    pub hooks: Vec<HookSet>,
    /// MCP servers by key (merged from `.mcp.json`, manifest paths and inline objects).
    pub mcp_servers: Map<String, Value>,
    /// LSP servers by key (merged from `.lsp.json`, manifest and entry).
    pub lsp_servers: Map<String, Value>,
    /// Monitors (`experimental.monitors`), typed; an entry of the wrong shape is an error
    /// diagnostic naming its file and is left out.
    #[serde(skip)]
    pub monitors: Vec<warden_vocab::schema::features::MonitorSpec>,
    /// The `subagentStatusLine` of its settings, when set and well formed.
    #[serde(skip)]
    pub subagent_status_line: Option<warden_vocab::schema::features::StatusLineSpec>,
    /// Root `settings.json` keys `agent` / `subagentStatusLine` (over manifest `settings`).
    pub settings: Map<String, Value>,
    /// `bin/`, added to the Bash tool's PATH while enabled.
    pub bin_dir: Option<PathBuf>,
    /// Warden's part, from `warden.toml` (or the deprecated `warden` key), when it passed its checks.
    pub warden: Option<WardenSection>,
    /// Whether the plugin declares a Warden part (`warden.toml` or the `warden` key), even one
    /// that failed its checks: a guard that was meant to run but cannot must not pass unseen.
    pub warden_declared: bool,
    /// Warnings and non-fatal errors (a refused component, an invalid hooks file).
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadedPlugin {
    /// Namespaced skill name (`plugin:skill`) given the frontmatter `name`, if any.
    pub fn skill_name(&self, skill: &SkillRef, frontmatter_name: Option<&str>) -> String {
        crate::namespace::skill(
            &self.name,
            frontmatter_name
                .filter(|s| !s.is_empty())
                .unwrap_or(&skill.default_name),
        )
    }

    /// Namespaced command name (`plugin:command`).
    pub fn command_name(&self, c: &ComponentFile) -> String {
        crate::namespace::command(&self.name, &c.local_name())
    }

    /// Namespaced agent name (`plugin:sub:agent`).
    pub fn agent_name(&self, a: &ComponentFile) -> String {
        crate::namespace::agent(&self.name, &a.local_name())
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Environment exported to the plugin's hook, MCP and LSP processes: `CLAUDE_PLUGIN_ROOT`,
    /// `CLAUDE_PLUGIN_DATA` and, when known, `CLAUDE_PROJECT_DIR`.
    pub fn env(&self, data_dir: &Path, project_dir: Option<&Path>) -> Vec<(String, String)> {
        let mut v = vec![
            (
                "CLAUDE_PLUGIN_ROOT".to_string(),
                self.root.display().to_string(),
            ),
            (
                "CLAUDE_PLUGIN_DATA".to_string(),
                data_dir.display().to_string(),
            ),
        ];
        if let Some(p) = project_dir {
            v.push(("CLAUDE_PROJECT_DIR".to_string(), p.display().to_string()));
        }
        v
    }

    /// Replaces `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` (and `${CLAUDE_PROJECT_DIR}`)
    /// in `text`; see [`crate::namespace::substitute`].
    pub fn substitute(&self, text: &str, data_dir: &Path, project_dir: Option<&Path>) -> String {
        let proj = project_dir.map(|p| p.display().to_string());
        crate::namespace::substitute(
            text,
            &self.root.display().to_string(),
            &data_dir.display().to_string(),
            proj.as_deref(),
        )
    }

    /// The `.wasm` path of a declared component.
    pub fn wasm_component(&self, name: &str) -> Option<&Path> {
        self.warden
            .as_ref()?
            .components
            .get(name)
            .map(|c| c.path.as_path())
    }
}

/// Loads the plugin at `root` with no marketplace context.
pub fn load_plugin(root: &Path) -> Result<LoadedPlugin, LoadError> {
    load_plugin_with(root, &LoadContext::default())
}

/// Loads the plugin at `root`. Fatal problems (unreadable or invalid `plugin.json`, wrong types on
/// known fields, missing `name`, a `strict: false` entry declaring components while plugin.json
/// also does) give `Err`; everything else is kept in [`LoadedPlugin::diagnostics`].
///
/// `strict: false`: an entry that declares components is the whole definition (plugin.json
/// gives only its name, version, `userConfig` and Warden part); an entry that declares none
/// leaves plugin.json's components in force, as under `strict: true`.
pub fn load_plugin_with(root: &Path, ctx: &LoadContext<'_>) -> Result<LoadedPlugin, LoadError> {
    let mut diags = Vec::new();
    let fail = |diags: Vec<Diagnostic>| LoadError {
        root: root.to_path_buf(),
        diagnostics: diags,
    };
    let root = match root.canonicalize() {
        Ok(r) if r.is_dir() => r,
        _ => {
            diags.push(Diagnostic::error(
                root,
                "plugin directory does not exist or is not a directory; check the path",
            ));
            return Err(fail(diags));
        }
    };
    let mfile = root.join(MANIFEST_FILE);
    let mut text_holder = None;
    let mut raw_manifest = None;
    if mfile.is_file() {
        let text = match read_limited(&mfile, MAX_MANIFEST_BYTES) {
            Ok(t) => t,
            Err(e) => {
                diags.push(Diagnostic::error(&mfile, format!("cannot read: {e}")));
                return Err(fail(diags));
            }
        };
        // A UTF-8 byte-order mark is tolerated (Node's JSON.parse rejects it; editors add it).
        let text = text
            .strip_prefix('\u{feff}')
            .map(str::to_string)
            .unwrap_or(text);
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => raw_manifest = Some(m),
            Ok(other) => {
                diags.push(Diagnostic::error(
                    &mfile,
                    format!(
                        "plugin.json must be a JSON object, found {}",
                        json_type_name(&other)
                    ),
                ));
                return Err(fail(diags));
            }
            Err(e) => {
                let msg = e.to_string();
                let msg = msg
                    .rfind(" at line ")
                    .map_or(msg.as_str(), |i| &msg[..i])
                    .to_string();
                diags.push(
                    Diagnostic::error(&mfile, format!("invalid JSON: {msg}"))
                        .at(Some((e.line(), e.column()))),
                );
                return Err(fail(diags));
            }
        }
        text_holder = Some(text);
    }
    let text = text_holder.as_deref();
    let file_manifest = match &raw_manifest {
        Some(m) => match parse_manifest(m, &mfile, text, ManifestSource::PluginJson, &mut diags) {
            Some(pm) => Some(pm),
            None => return Err(fail(diags)),
        },
        None => None,
    };
    // Strict-mode merge with the marketplace entry (spec 5.3).
    let mkt_file = ctx
        .marketplace_file
        .map(Path::to_path_buf)
        .unwrap_or_else(|| mfile.clone());
    let entry_manifest = match ctx.entry {
        Some(e) => {
            let mut em_diags = Vec::new();
            let em = parse_manifest(
                &e.raw,
                &mkt_file,
                None,
                ManifestSource::MarketplaceEntry,
                &mut em_diags,
            );
            for d in &mut em_diags {
                d.message = format!("entry `{}`: {}", e.name, d.message);
            }
            diags.extend(em_diags);
            match em {
                Some(em) => Some(em),
                None => return Err(fail(diags)),
            }
        }
        None => None,
    };
    let entry_root_sourced = ctx
        .entry
        .is_some_and(|e| matches!(&e.source, PluginSource::Relative { path } if path.is_empty()));
    // `strict: false` with a plugin.json that declares components (Claude Code ≥ 2.1.332): when
    // the entry declares none, plugin.json's components load, merged as under `strict: true`
    // (the entry adds nothing to them) — the shape of marketplaces whose entry only lists the
    // plugin while its plugin.json says what it holds, down to an empty `mcpServers`. Claude
    // Code installs and loads those; it reports "conflicting manifests" only when both the entry
    // and plugin.json declare components, and that stays an error here: no rule says which of
    // two component lists the author meant.
    let file_declares = raw_manifest.as_ref().is_some_and(declares_components);
    let entry_declares = ctx.entry.is_some_and(|e| declares_components(&e.raw));
    let mut manifest = match (file_manifest, entry_manifest, ctx.entry) {
        (Some(fm), Some(em), Some(e)) if !e.strict && (entry_declares || !file_declares) => {
            if file_declares {
                diags.push(
                    Diagnostic::error(
                        &mkt_file,
                        format!(
                            "entry `{}`: conflicting manifests: both the entry and {} declare components, and `strict: false` makes the entry the whole definition; remove the components from one of them, or drop `strict: false` to merge the entry's onto plugin.json's",
                            e.name,
                            mfile.display()
                        ),
                    )
                    .at(None),
                );
                return Err(fail(diags));
            }
            let mut m = em;
            m.name = fm.name;
            m.version = fm.version.or(m.version);
            m.warden = fm.warden.or(m.warden);
            m.user_config = if fm.user_config.is_empty() {
                m.user_config
            } else {
                fm.user_config
            };
            m
        }
        (Some(mut fm), Some(em), Some(_)) => {
            merge_paths(&mut fm.skills, em.skills);
            merge_paths(&mut fm.commands, em.commands);
            merge_paths(&mut fm.agents, em.agents);
            merge_paths(&mut fm.workflows, em.workflows);
            merge_paths(&mut fm.output_styles, em.output_styles);
            merge_paths(&mut fm.themes, em.themes);
            fm.hooks = merge_spec(fm.hooks, em.hooks);
            fm.mcp_servers = merge_spec(fm.mcp_servers, em.mcp_servers);
            fm.lsp_servers = merge_spec(fm.lsp_servers, em.lsp_servers);
            fm.monitors = fm.monitors.or(em.monitors);
            if fm.version.is_none() {
                fm.version = em.version;
            }
            fm
        }
        (Some(fm), _, _) => fm,
        (None, Some(em), Some(e)) => {
            let mut m = em;
            m.name = e.name.clone();
            m
        }
        (None, _, _) => PluginManifest::named(
            root.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("plugin"),
        ),
    };
    if manifest.name.is_empty() {
        manifest.name = ctx.entry.map(|e| e.name.clone()).unwrap_or_default();
    }

    let mut p = LoadedPlugin {
        name: manifest.name.clone(),
        root: root.clone(),
        has_manifest: raw_manifest.is_some(),
        manifest: PluginManifest::default(),
        components: ComponentPaths::default(),
        skills: Vec::new(),
        commands: Vec::new(),
        agents: Vec::new(),
        output_styles: Vec::new(),
        hooks: Vec::new(),
        mcp_servers: Map::new(),
        lsp_servers: Map::new(),
        monitors: Vec::new(),
        subagent_status_line: None,
        settings: Map::new(),
        bin_dir: None,
        warden: None,
        warden_declared: false,
        diagnostics: Vec::new(),
    };
    let mf = &mfile;

    // .claude-plugin/ holds only the manifest (and a marketplace file).
    if let Ok(rd) = std::fs::read_dir(root.join(".claude-plugin")) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if matches!(
                n.as_str(),
                "skills" | "commands" | "agents" | "hooks" | "output-styles"
            ) {
                diags.push(Diagnostic::warning(
                    e.path(),
                    format!(
                        "`{n}` inside .claude-plugin/ is not loaded; move it to the plugin root"
                    ),
                ));
            }
        }
    }
    if root.join("CLAUDE.md").exists() {
        diags.push(Diagnostic::warning(
            root.join("CLAUDE.md"),
            "CLAUDE.md at a plugin root is not loaded; put instructions in a skill or agent",
        ));
    }

    // Skills: default scan plus manifest paths (an entry's list replaces the scan for root-sourced
    // entries unless it names ./skills or the root).
    let mut skill_roots: Vec<(PathBuf, bool)> = Vec::new();
    let listed = manifest.skills.clone().unwrap_or_default();
    let replace_default = entry_root_sourced
        && ctx.entry.is_some_and(|e| e.raw.contains_key("skills"))
        && !listed.iter().any(|s| s.is_empty() || s == "skills")
        && listed.iter().any(|s| root.join(s).exists());
    let default_skills = root.join("skills");
    if default_skills.is_dir() && !replace_default {
        skill_roots.push((default_skills.clone(), true));
    }
    for s in &listed {
        skill_roots.push((root.join(s), false));
    }
    let mut seen = BTreeSet::new();
    for (path, is_default) in skill_roots {
        let Some(dir) = contained(&root, &path, "skills", mf, &mut diags) else {
            continue;
        };
        if !seen.insert(dir.clone()) {
            continue;
        }
        p.components.skills.push(dir.clone());
        collect_skills(
            &root,
            &dir,
            is_default,
            &manifest.name,
            &mut p.skills,
            &mut diags,
        );
    }
    if manifest.skills.is_none()
        && !default_skills.exists()
        && let Some(f) = find_skill_md(&root)
    {
        p.components.skills.push(root.clone());
        p.skills.push(SkillRef {
            dir: root.clone(),
            file: f,
            default_name: manifest.name.clone(),
        });
    }
    let mut dedup = BTreeSet::new();
    p.skills.retain(|s| dedup.insert(s.dir.clone()));

    // Commands, agents, output styles, workflows, themes: manifest paths replace the default folder.
    let md_kinds: [(&str, &str, &Option<Vec<String>>); 5] = [
        ("commands", "commands", &manifest.commands),
        ("agents", "agents", &manifest.agents),
        ("outputStyles", "output-styles", &manifest.output_styles),
        ("workflows", "workflows", &manifest.workflows),
        ("experimental.themes", "themes", &manifest.themes),
    ];
    for (key, default, spec) in md_kinds {
        let default_dir = root.join(default);
        let paths: Vec<PathBuf> = match spec {
            Some(list) => {
                if default_dir.is_dir()
                    && !list
                        .iter()
                        .any(|l| root.join(l).starts_with(&default_dir) || l.is_empty())
                {
                    diags.push(Diagnostic::warning(&default_dir, format!("folder `{default}/` is ignored because plugin.json sets `{key}`; add \"./{default}/\" to `{key}` to keep it")));
                }
                list.iter().map(|l| root.join(l)).collect()
            }
            None if default_dir.is_dir() => vec![default_dir],
            None => Vec::new(),
        };
        let mut seen = BTreeSet::new();
        for path in paths {
            let Some(c) = contained(&root, &path, key, mf, &mut diags) else {
                continue;
            };
            if !seen.insert(c.clone()) {
                continue;
            }
            let (list, files) = match key {
                "commands" => (&mut p.components.commands, Some(&mut p.commands)),
                "agents" => (&mut p.components.agents, Some(&mut p.agents)),
                "outputStyles" => (&mut p.components.output_styles, Some(&mut p.output_styles)),
                "workflows" => (&mut p.components.workflows, None),
                _ => (&mut p.components.themes, None),
            };
            list.push(c.clone());
            if let Some(files) = files {
                collect_md(&root, &c, key, files, &mut diags);
            }
        }
    }

    // Hooks: default file plus manifest paths or inline objects, each file once.
    let mut hook_files = Vec::new();
    let default_hooks = root.join("hooks/hooks.json");
    if default_hooks.is_file() {
        hook_files.push(default_hooks);
    }
    let mut inline_hooks = Vec::new();
    for spec in spec_parts(&manifest.hooks) {
        match spec {
            Part::Path(rel) => hook_files.push(root.join(rel)),
            Part::Inline(v) => inline_hooks.push(v),
        }
    }
    let mut seen = BTreeSet::new();
    for f in hook_files {
        let Some(c) = contained(&root, &f, "hooks", mf, &mut diags) else {
            continue;
        };
        if !seen.insert(c.clone()) {
            continue;
        }
        if let Some((v, text)) = read_json(&c, &mut diags) {
            let hooks = check_hooks(&v, &c, Src::Json(&text), HookFlavor::ClaudeCode, &mut diags);
            p.hooks.push(HookSet {
                file: Some(c),
                hooks,
            });
        }
    }
    for v in inline_hooks {
        let hooks = check_hooks(&v, mf, Src::json(text), HookFlavor::ClaudeCode, &mut diags);
        p.hooks.push(HookSet { file: None, hooks });
    }

    // MCP and LSP servers, merged by name.
    let mcp_default = root.join(".mcp.json");
    load_servers(
        &root,
        &mcp_default,
        "mcpServers",
        &manifest.mcp_servers,
        mf,
        text,
        &mut p.mcp_servers,
        &mut diags,
    );
    let lsp_default = root.join(".lsp.json");
    load_servers(
        &root,
        &lsp_default,
        "lspServers",
        &manifest.lsp_servers,
        mf,
        text,
        &mut p.lsp_servers,
        &mut diags,
    );
    for ch in &manifest.channels {
        if !p.mcp_servers.contains_key(&ch.server) {
            diags.push(
                Diagnostic::error(
                    mf,
                    format!(
                        "channel server `{}` is not one of the plugin's mcpServers",
                        ch.server
                    ),
                )
                .at(text.and_then(|t| locate_key(t, "channels"))),
            );
        }
    }

    // Monitors.
    let mon_default = root.join("monitors/monitors.json");
    let mon_parts = if manifest.monitors.is_some() {
        spec_parts(&manifest.monitors)
    } else if mon_default.is_file() {
        vec![Part::Path("monitors/monitors.json".into())]
    } else {
        Vec::new()
    };
    let mut mon_count = 0;
    for part in mon_parts {
        let v = match part {
            Part::Inline(v) => Some((v, mf.to_path_buf())),
            Part::Path(rel) => contained(&root, &root.join(rel), "monitors", mf, &mut diags)
                .and_then(|c| read_json(&c, &mut diags).map(|(v, _)| (v, c))),
        };
        if let Some((v, file)) = v {
            let (specs, errors) =
                warden_vocab::schema::features::parse_monitors(&v, &file, mon_count);
            mon_count += v.as_array().map_or(0, Vec::len);
            for e in errors {
                diags.push(Diagnostic::error(
                    &e.file,
                    format!("{}: {}", e.at, e.message),
                ));
            }
            for s in specs {
                if p.monitors.iter().any(|m| m.name == s.name) {
                    diags.push(Diagnostic::error(
                        &file,
                        format!(
                            "a monitor named `{}` is declared twice; names are unique within a plugin",
                            s.name
                        ),
                    ));
                } else {
                    p.monitors.push(s);
                }
            }
        }
    }

    // settings.json (only `agent` and `subagentStatusLine` are used) over manifest `settings`.
    if let Some(s) = &manifest.settings {
        p.settings = s.clone();
    }
    let sfile = root.join("settings.json");
    if sfile.is_file()
        && let Some((v, _)) = read_json(&sfile, &mut diags)
    {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    if matches!(k.as_str(), "agent" | "subagentStatusLine") {
                        p.settings.insert(k, v);
                    }
                }
            }
            other => diags.push(Diagnostic::error(
                &sfile,
                format!(
                    "settings.json must be an object, found {}",
                    json_type_name(&other)
                ),
            )),
        }
    }
    let settings_file = if sfile.is_file() {
        sfile.clone()
    } else {
        mf.to_path_buf()
    };
    match warden_vocab::schema::features::parse_status_line(
        &p.settings,
        "subagentStatusLine",
        &settings_file,
    ) {
        Some(Ok(s)) => p.subagent_status_line = Some(s),
        Some(Err(e)) => diags.push(Diagnostic::error(
            &e.file,
            format!("{}: {}", e.at, e.message),
        )),
        None => {}
    }
    let bin = root.join("bin");
    if bin.is_dir() {
        p.bin_dir = contained(&root, &bin, "bin", mf, &mut diags);
    }
    let toml_file = root.join(WARDEN_TOML);
    if toml_file.symlink_metadata().is_ok() {
        p.warden_declared = true;
        if manifest.warden.is_some() {
            diags.push(
                Diagnostic::warning(
                    mf,
                    format!(
                        "the `warden` key is ignored because {} exists; delete the key (Claude Code's validator refuses hooks under it)",
                        toml_file.display()
                    ),
                )
                .at(text.and_then(|t| locate_key(t, "warden"))),
            );
        }
        if let Some((v, ttext)) = read_warden_toml(&toml_file, &mut diags) {
            p.warden = parse_warden(
                &v,
                &root,
                &toml_file,
                Src::Toml(&ttext),
                "",
                ctx.at_source,
                &mut diags,
            );
        }
    } else if let Some(w) = &manifest.warden {
        p.warden_declared = true;
        diags.push(
            Diagnostic::warning(
                mf,
                format!(
                    "the `warden` key of plugin.json is deprecated: Claude Code's validator refuses hooks under it; move it to warden.toml at the plugin root ({})",
                    toml_file.display()
                ),
            )
            .at(text.and_then(|t| locate_key(t, "warden"))),
        );
        p.warden = parse_warden(
            w,
            &root,
            mf,
            Src::json(text),
            "warden.",
            ctx.at_source,
            &mut diags,
        );
    }
    p.manifest = manifest;
    p.diagnostics = diags;
    Ok(p)
}

fn merge_paths(dst: &mut Option<Vec<String>>, src: Option<Vec<String>>) {
    if let Some(src) = src {
        let d = dst.get_or_insert_with(Vec::new);
        for s in src {
            if !d.contains(&s) {
                d.push(s);
            }
        }
    }
}

fn merge_spec(a: Option<ComponentSpec>, b: Option<ComponentSpec>) -> Option<ComponentSpec> {
    match (a, b) {
        (None, b) => b,
        (a, None) => a,
        (Some(a), Some(b)) if a == b => Some(a),
        (Some(a), Some(b)) => {
            let to_vec = |s: ComponentSpec| match s {
                ComponentSpec::Paths(p) => p.into_iter().map(Value::String).collect::<Vec<_>>(),
                ComponentSpec::Inline(v) => vec![v],
            };
            let mut all = to_vec(a);
            all.extend(to_vec(b));
            Some(ComponentSpec::Inline(Value::Array(all)))
        }
    }
}

enum Part {
    Path(String),
    Inline(Value),
}

fn spec_parts(spec: &Option<ComponentSpec>) -> Vec<Part> {
    match spec {
        None => Vec::new(),
        Some(ComponentSpec::Paths(p)) => p.iter().cloned().map(Part::Path).collect(),
        // Merged specs (strict-mode merge) are arrays mixing path strings and inline objects.
        Some(ComponentSpec::Inline(Value::Array(a))) if a.iter().any(Value::is_string) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Part::Path(s.clone()),
                other => Part::Inline(other.clone()),
            })
            .collect(),
        Some(ComponentSpec::Inline(v)) => vec![Part::Inline(v.clone())],
    }
}

/// Canonicalises `path` and checks it stays inside `root`. Missing → warning; outside → error.
pub(crate) fn contained(
    root: &Path,
    path: &Path,
    key: &str,
    file: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<PathBuf> {
    match path.canonicalize() {
        Err(_) => {
            diags.push(Diagnostic::warning(
                file,
                format!(
                    "`{key}` path {} does not exist; it is skipped",
                    path.display()
                ),
            ));
            None
        }
        Ok(c) if !c.starts_with(root) => {
            diags.push(Diagnostic::error(
                path,
                format!("{} resolves to {}, outside the plugin root {}; refusing it (components must stay inside the plugin, symlinks included)", path.display(), c.display(), root.display()),
            ));
            None
        }
        Ok(c) => Some(c),
    }
}

fn find_skill_md(dir: &Path) -> Option<PathBuf> {
    let exact = dir.join("SKILL.md");
    if exact.is_file() {
        return Some(exact);
    }
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| n.eq_ignore_ascii_case("skill.md"))
        })
}

fn collect_skills(
    root: &Path,
    dir: &Path,
    is_default: bool,
    plugin: &str,
    out: &mut Vec<SkillRef>,
    diags: &mut Vec<Diagnostic>,
) {
    let check_case = |f: &Path, diags: &mut Vec<Diagnostic>| {
        if f.file_name().is_some_and(|n| n != "SKILL.md") {
            diags.push(Diagnostic::warning(f, "skill file should be named SKILL.md (upper case); it loads here but not on case-sensitive systems in Claude Code"));
        }
    };
    if let Some(f) = find_skill_md(dir) {
        if let Some(f) = contained(root, &f, "skills", &f, diags) {
            check_case(&f, diags);
            let default_name = if is_default || dir == root {
                if is_default {
                    diags.push(Diagnostic::warning(&f, "SKILL.md directly in skills/ loads as one skill named after the plugin; the layout expects skills/<name>/SKILL.md"));
                }
                plugin.to_string()
            } else {
                dir.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            };
            out.push(SkillRef {
                dir: dir.to_path_buf(),
                file: f,
                default_name,
            });
        }
        if !is_default {
            return;
        }
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut children: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    children.sort();
    for child in children {
        let Some(f) = find_skill_md(&child) else {
            continue;
        };
        let Some(cdir) = contained(root, &child, "skills", &child, diags) else {
            continue;
        };
        let Some(f) = contained(root, &f, "skills", &f, diags) else {
            continue;
        };
        check_case(&f, diags);
        let name = child
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if name.starts_with('_') {
            diags.push(Diagnostic::warning(&f, format!("skill directory `{name}` starts with `_` and looks like a template; it still loads")));
        }
        out.push(SkillRef {
            dir: cdir,
            file: f,
            default_name: name,
        });
    }
}

fn collect_md(
    root: &Path,
    path: &Path,
    key: &str,
    out: &mut Vec<ComponentFile>,
    diags: &mut Vec<Diagnostic>,
) {
    if path.is_file() {
        if path.extension().is_some_and(|e| e == "md") {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            out.push(ComponentFile {
                path: path.to_path_buf(),
                segments: vec![stem],
            });
        } else {
            diags.push(Diagnostic::warning(
                path,
                format!("`{key}` entries must be .md files or folders; this file is skipped"),
            ));
        }
        return;
    }
    let mut stack = vec![(path.to_path_buf(), Vec::<String>::new())];
    let mut found = Vec::new();
    // Resolved directories already walked: a symlink loop or DAG inside the plugin is walked
    // once, not forever or exponentially.
    let mut seen = std::collections::HashSet::new();
    while let Some((dir, prefix)) = stack.pop() {
        if !seen.insert(dir.canonicalize().unwrap_or_else(|_| dir.clone())) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            let Some(c) = contained(root, &p, key, &p, diags) else {
                continue;
            };
            if c.is_dir() {
                let mut np = prefix.clone();
                np.push(name);
                stack.push((c, np));
            } else if name.ends_with(".md") {
                let mut segs = prefix.clone();
                segs.push(name.trim_end_matches(".md").to_string());
                if name.to_ascii_lowercase().contains("readme") && !starts_with_frontmatter(&c) {
                    diags.push(Diagnostic::warning(&c, format!("{name} in `{key}` has no frontmatter and loads as a component; move documentation out of this folder")));
                }
                found.push(ComponentFile {
                    path: c,
                    segments: segs,
                });
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    out.extend(found);
}

fn starts_with_frontmatter(p: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 8];
    std::fs::File::open(p)
        .and_then(|mut f| f.read(&mut buf))
        .map(|n| buf[..n].starts_with(b"---"))
        .unwrap_or(false)
}

/// Reads and parses a JSON file; errors become diagnostics with line and column.
pub(crate) fn read_json(path: &Path, diags: &mut Vec<Diagnostic>) -> Option<(Value, String)> {
    let text = match read_limited(path, MAX_MANIFEST_BYTES) {
        Ok(t) => t,
        Err(e) => {
            diags.push(Diagnostic::error(path, format!("cannot read: {e}")));
            return None;
        }
    };
    let text = text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => Some((v, text)),
        Err(e) => {
            let msg = e.to_string();
            let msg = msg
                .rfind(" at line ")
                .map_or(msg.as_str(), |i| &msg[..i])
                .to_string();
            diags.push(
                Diagnostic::error(path, format!("invalid JSON: {msg}; the file is skipped"))
                    .at(Some((e.line(), e.column()))),
            );
            None
        }
    }
}

/// Reads the servers of `key` (`mcpServers` / `lspServers`) from the default file, the manifest's
/// paths and inline objects. `manifest_text` is the manifest's source, for positions of inline
/// servers.
#[allow(clippy::too_many_arguments)]
fn load_servers(
    root: &Path,
    default: &Path,
    key: &str,
    spec: &Option<ComponentSpec>,
    mf: &Path,
    manifest_text: Option<&str>,
    out: &mut Map<String, Value>,
    diags: &mut Vec<Diagnostic>,
) {
    let mut files = Vec::new();
    if default.is_file() {
        files.push(default.to_path_buf());
    }
    let mut inline = Vec::new();
    for part in spec_parts(spec) {
        match part {
            Part::Path(rel) => files.push(root.join(rel)),
            Part::Inline(v) => inline.push(v),
        }
    }
    let mut seen = BTreeSet::new();
    let mut sources: Vec<(Value, PathBuf, Option<String>)> = Vec::new();
    for f in files {
        let Some(c) = contained(root, &f, key, mf, diags) else {
            continue;
        };
        if !seen.insert(c.clone()) {
            continue;
        }
        if let Some((v, text)) = read_json(&c, diags) {
            sources.push((v, c, Some(text)));
        }
    }
    sources.extend(
        inline
            .into_iter()
            .map(|v| (v, mf.to_path_buf(), manifest_text.map(str::to_string))),
    );
    for (v, file, text) in sources {
        // Wrapped when `mcpServers`/`lspServers` holds an object; otherwise flat.
        let servers = match &v {
            Value::Object(o) => match o.get(key) {
                Some(Value::Object(inner)) => inner.clone(),
                _ => o.clone(),
            },
            other => {
                diags.push(Diagnostic::error(
                    &file,
                    format!(
                        "`{key}` must be an object of servers, found {}",
                        json_type_name(other)
                    ),
                ));
                continue;
            }
        };
        for (name, s) in servers {
            if name == "$schema" {
                continue;
            }
            if !s.is_object() {
                diags.push(Diagnostic::error(
                    &file,
                    format!(
                        "server `{name}` must be an object, found {}; it is skipped",
                        json_type_name(&s)
                    ),
                ));
                continue;
            }
            if key == "mcpServers" {
                check_mcp_server(&name, &s, &file, text.as_deref(), diags);
            }
            if key == "lspServers" && !check_lsp_server(&name, &s, &file, text.as_deref(), diags) {
                continue;
            }
            // First declaration wins; a second identical or differing one is merged away.
            out.entry(name).or_insert(s);
        }
    }
}

/// Turns [`warden_config::mcp::check_entry`]'s findings for one MCP server into diagnostics on
/// `file`, positioned at the field when `text` (the file's source) shows where it is.
fn check_mcp_server(
    name: &str,
    server: &Value,
    file: &Path,
    text: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    for problem in warden_config::mcp::check_entry(name, server) {
        let message = format!("MCP server `{name}`: {problem}");
        let d = if problem.error {
            Diagnostic::error(file, message)
        } else {
            Diagnostic::warning(file, message)
        };
        let pos = text.and_then(|t| {
            // The field's own key when it is written, else the server's key (a missing field).
            let mut path: Vec<&str> = Vec::new();
            if locate_key(t, "mcpServers").is_some() {
                path.push("mcpServers");
            }
            path.push(name);
            let server_pos = locate_key_path(t, &path);
            let field = problem.field.split('[').next().unwrap_or("");
            match field.split_once('.') {
                Some((top, sub)) => path.extend([top, sub]),
                None if !field.is_empty() => path.push(field),
                None => {}
            }
            locate_key_path(t, &path).or(server_pos)
        });
        diags.push(d.at(pos));
    }
}

/// Checks one LSP server against [`warden_lsp::config::check`]: each problem is an error on
/// `file`, at the field when `text` shows where it is. `false`: the server is invalid and
/// skipped, as Claude Code skips it.
fn check_lsp_server(
    name: &str,
    server: &Value,
    file: &Path,
    text: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let problems = warden_lsp::config::check(server);
    for problem in &problems {
        let pos = text.and_then(|t| {
            let mut path: Vec<&str> = Vec::new();
            if locate_key(t, "lspServers").is_some() {
                path.push("lspServers");
            }
            path.push(name);
            let server_pos = locate_key_path(t, &path);
            // `extensionToLanguage..py` names the key `.py` inside `extensionToLanguage`.
            match problem.field.split_once('.') {
                Some((top, sub)) => path.extend([top, sub]),
                None if !problem.field.is_empty() => path.push(&problem.field),
                None => {}
            }
            locate_key_path(t, &path).or(server_pos)
        });
        diags.push(
            Diagnostic::error(
                file,
                format!("LSP server `{name}`: {problem}; the server is skipped"),
            )
            .at(pos),
        );
    }
    problems.is_empty()
}
