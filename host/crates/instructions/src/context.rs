//! Context assembly: everything the instruction layer contributes to a session.
//!
//! The user scope has two directories: Warden's home and, unless turned off, Claude Code's
//! user directory (`CLAUDE_CONFIG_DIR` or `~/.claude`, see [`warden_config::claude`]). Both give
//! `User` memory (`CLAUDE.md`, `rules/`; Claude Code's first, see [`crate::memory`]), user
//! skills and commands, and user agents. On a name clash between the two, Warden's own wins,
//! as its user settings do, and the shadowed file is named in a warning.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use serde_json::Value;
use warden_config::{ClaudeConfig, Home, Scope, Settings};

use crate::agents::{self, Agent, AgentSource};
use crate::memory::{MemoryFile, MemoryLoader, MemoryOptions, MemoryType, ReadGate, RuleInfo};
use crate::skills::{
    self, RenderError, RenderOptions, RenderedSkill, ScanOptions, Skill, SkillKind, SkillSource,
};
use warden_vocab::Diagnostic;

/// A plugin's component directories, as resolved by the plugin loader.
#[derive(Debug, Clone, Default)]
pub struct PluginContent {
    /// The plugin name (namespace prefix).
    pub name: String,
    /// The plugin root (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// Directories of skills (each holding `<name>/SKILL.md`, or itself a skill).
    pub skills_dirs: Vec<PathBuf>,
    /// Directories (or single files) of legacy commands.
    pub commands_dirs: Vec<PathBuf>,
    /// Directories (or single files) of agents.
    pub agents_dirs: Vec<PathBuf>,
}

/// What to load.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// The working directory.
    pub cwd: PathBuf,
    /// Warden's home: user memory `CLAUDE.md`, `rules/`, `skills/`, `commands/`, `agents/`.
    pub home: Home,
    /// Claude Code's user directory, read for the same files below Warden's home (`None`: not
    /// read). A session sets it to where its settings read Claude Code's from
    /// ([`Settings::claude_config`]), so one opt-out covers both.
    pub claude_dir: Option<PathBuf>,
    /// The user's home directory for `@~/…` imports (default `$HOME`).
    pub user_home: Option<PathBuf>,
    /// Managed directory: `CLAUDE.md` and `.claude/{rules,skills,commands,agents}` in it.
    pub managed_dir: Option<PathBuf>,
    /// Settings of the session.
    pub settings: Settings,
    /// Enabled plugins.
    pub plugins: Vec<PluginContent>,
    /// Files already read or edited (absolute or relative to `cwd`).
    pub touched_files: Vec<PathBuf>,
    /// `--agents` JSON.
    pub cli_agents: Option<Value>,
    /// Imports outside the project were approved (`hasClaudeMdExternalIncludesApproved`).
    pub external_imports_approved: bool,
    /// Whether project and local files are read (`project` setting source).
    pub project_enabled: bool,
    /// Skill scanning switches.
    pub scan: ScanOptions,
    /// Listing budget in characters.
    pub listing_budget: usize,
    /// Screens `@path` imports of memory files before they are read (see [`ReadGate`]): called
    /// with the absolute path as written and again with its real path; an `Err(reason)` skips
    /// the import with a warning and the file's text never enters the context. It applies to
    /// imports only: memory files and rules are read unconditionally, as Claude Code does.
    pub read_gate: Option<ReadGate>,
}

impl ContextOptions {
    /// Options for `cwd` with defaults for everything else.
    pub fn new(cwd: impl Into<PathBuf>, home: Home) -> Self {
        ContextOptions {
            cwd: cwd.into(),
            home,
            claude_dir: None,
            user_home: warden_vocab::home_dir(),
            managed_dir: None,
            settings: Settings::default(),
            plugins: Vec::new(),
            touched_files: Vec::new(),
            cli_agents: None,
            external_imports_approved: false,
            project_enabled: true,
            scan: ScanOptions::default(),
            listing_budget: skills::DEFAULT_LISTING_BUDGET,
            read_gate: None,
        }
    }
}

/// Everything the instruction layer puts in context.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// Loaded memory files and rules, in context order, each with its load reason.
    pub memory: Vec<MemoryFile>,
    /// Every rule found, loaded or waiting for a matching file.
    pub rules: Vec<RuleInfo>,
    /// Skills, by invocation name.
    pub skills: Vec<Skill>,
    /// Legacy commands, by invocation name.
    pub commands: Vec<Skill>,
    /// Subagents, by name.
    pub agents: Vec<Agent>,
    /// The skill listing exactly as given to the model.
    pub skill_listing: String,
    /// Everything skipped, refused or read leniently.
    pub warnings: Vec<Diagnostic>,
    /// What was read of Claude Code's user configuration, or why nothing was.
    pub claude_config: ClaudeConfigReport,
    #[serde(skip)]
    loader: MemoryLoader,
    #[serde(skip)]
    claude_dir: Option<PathBuf>,
    #[serde(skip)]
    cwd: PathBuf,
    #[serde(skip)]
    shell_disabled: bool,
    #[serde(skip)]
    managed_shell_disabled: bool,
}

/// What a session read of Claude Code's user configuration (`warden context` shows it).
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaudeConfigReport {
    /// Whether the directory was read.
    pub read: bool,
    /// The directory, when it was read.
    pub dir: Option<PathBuf>,
    /// Why it was not read.
    pub reason: Option<String>,
    /// Its `settings.json`, when one was loaded.
    pub settings: Option<PathBuf>,
    /// Hooks of that file left out because they hand events to Warden, each with the reason.
    pub skipped_hooks: Vec<String>,
    /// Memory files, rules and their imports from it, in context order.
    pub memory: Vec<PathBuf>,
    /// Rules in its `rules/`, loaded or waiting for a matching file.
    pub rules: Vec<PathBuf>,
    /// Its `skills/`, `commands/` and `agents/` directories that exist.
    pub dirs: Vec<PathBuf>,
    /// Skills from it, by name.
    pub skills: Vec<String>,
    /// Legacy commands from it, by name.
    pub commands: Vec<String>,
    /// Agents from it, by name.
    pub agents: Vec<String>,
}

impl ClaudeConfigReport {
    /// The settings' side of the report: where the directory is, or why it is not read, the
    /// file and the skipped hooks.
    fn from_settings(settings: &Settings, dir: Option<&Path>) -> Self {
        let mut r = ClaudeConfigReport {
            read: dir.is_some(),
            dir: dir.map(Path::to_path_buf),
            settings: settings.claude_code_file().and_then(|f| f.path.clone()),
            skipped_hooks: settings
                .skipped_hooks
                .iter()
                .map(ToString::to_string)
                .collect(),
            ..ClaudeConfigReport::default()
        };
        if dir.is_none() {
            r.reason = Some(match &settings.claude_config {
                ClaudeConfig::Off(why) => why.to_string(),
                // The settings read it, but the caller did not ask for its instructions.
                ClaudeConfig::Dir(_) => "not requested by the embedding program".to_string(),
            });
        }
        if let Some(d) = dir {
            r.dirs = ["skills", "commands", "agents"]
                .iter()
                .map(|n| d.join(n))
                .filter(|p| p.is_dir())
                .collect();
        }
        r
    }
}

fn settings_strings(settings: &Settings, key: &str) -> Vec<String> {
    match settings.merged().get(key) {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// Loads the whole context for a session (see the module docs of [`crate::memory`],
/// [`crate::skills`] and [`crate::agents`] for the rules followed).
pub fn load_context(opts: &ContextOptions) -> Context {
    let settings = &opts.settings;
    let managed_text = settings.scope(Scope::Managed).find_map(|f| {
        f.value.get("claudeMd").and_then(Value::as_str).map(|t| {
            (
                f.path
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("managed-settings")),
                t.to_string(),
            )
        })
    });
    let approved =
        opts.external_imports_approved || settings.user_flag("hasClaudeMdExternalIncludesApproved");
    let mut loader = MemoryLoader::new(MemoryOptions {
        cwd: opts.cwd.clone(),
        warden_home: opts.home.root().to_path_buf(),
        claude_dir: opts.claude_dir.clone(),
        user_home: opts.user_home.clone(),
        managed_dir: opts.managed_dir.clone(),
        managed_text,
        excludes: settings_strings(settings, "claudeMdExcludes"),
        external_imports_approved: approved,
        project_enabled: opts.project_enabled,
        read_gate: opts.read_gate.clone(),
    });
    let mut memory = loader.load_start();
    let mut warnings = Vec::new();
    for e in &settings.errors {
        warnings.push(Diagnostic::warning(
            Path::new(&e.scope.to_string()),
            format!("settings: {}", e.message),
        ));
    }

    let (skills_all, commands_all) = load_skills(opts, &loader, &mut warnings);
    let agents = load_agents(opts, &loader, &mut warnings);
    let managed_shell_disabled = settings.scope(Scope::Managed).any(|f| {
        f.value
            .get("disableSkillShellExecution")
            .and_then(Value::as_bool)
            == Some(true)
    });
    let shell_disabled = managed_shell_disabled || settings.flag("disableSkillShellExecution");

    let mut ctx = Context {
        memory: Vec::new(),
        rules: Vec::new(),
        skills: skills_all,
        commands: commands_all,
        agents,
        skill_listing: String::new(),
        warnings,
        claude_config: ClaudeConfigReport::from_settings(settings, opts.claude_dir.as_deref()),
        loader,
        claude_dir: opts.claude_dir.clone(),
        cwd: opts.cwd.clone(),
        shell_disabled,
        managed_shell_disabled,
    };
    ctx.skill_listing = ctx.build_listing(settings, opts.listing_budget);
    for f in &opts.touched_files {
        memory.extend(ctx.loader.touch(f));
    }
    ctx.memory = memory;
    ctx.sync();
    ctx
}

impl Context {
    fn sync(&mut self) {
        self.rules = self.loader.rules.clone();
        let new: Vec<Diagnostic> = self.loader.warnings.drain(..).collect();
        self.warnings.extend(new);
        self.sync_claude_report();
    }

    /// The files of the report that come from Claude Code's directory: what lies in it, and
    /// what its memory files import from elsewhere.
    fn sync_claude_report(&mut self) {
        let Some(dir) = &self.claude_dir else {
            return;
        };
        let r = &mut self.claude_config;
        r.memory.clear();
        for m in &self.memory {
            let imported = m
                .parent_file_path
                .as_ref()
                .is_some_and(|p| r.memory.contains(p));
            if m.path.starts_with(dir) || imported {
                r.memory.push(m.path.clone());
            }
        }
        r.rules = self
            .rules
            .iter()
            .filter(|x| x.path.starts_with(dir))
            .map(|x| x.path.clone())
            .collect();
        let from = |path: &Path| path.starts_with(dir);
        r.skills = self
            .skills
            .iter()
            .filter(|s| from(&s.path))
            .map(|s| s.name.clone())
            .collect();
        r.commands = self
            .commands
            .iter()
            .filter(|s| from(&s.path))
            .map(|s| s.name.clone())
            .collect();
        r.agents = self
            .agents
            .iter()
            .filter(|a| a.path.as_deref().is_some_and(from))
            .map(|a| a.name.clone())
            .collect();
    }

    /// Registers a file read or edited later in the session; returns the memory files and rules
    /// this loads (fire `InstructionsLoaded` for each).
    pub fn touch(&mut self, file: &Path) -> Vec<MemoryFile> {
        let new = self.loader.touch(file);
        self.memory.extend(new.iter().cloned());
        self.sync();
        new
    }

    /// The `InstructionsLoaded` payload fields of every loaded file, in order.
    pub fn instructions_loaded_events(&self) -> Vec<serde_json::Map<String, Value>> {
        self.memory.iter().map(MemoryFile::hook_fields).collect()
    }

    /// The memory text as delivered to the model: each file introduced by its path and scope.
    pub fn memory_text(&self) -> String {
        let mut out = String::new();
        for m in &self.memory {
            let what = match m.memory_type {
                MemoryType::Managed => "managed instructions, set by the administrator",
                MemoryType::User => "user's private global instructions for all projects",
                MemoryType::Project => "project instructions, checked into the codebase",
                MemoryType::Local => "user's private project instructions, not checked in",
            };
            let _ = write!(
                out,
                "Contents of {} ({what}):\n\n{}\n\n",
                m.path.display(),
                m.content.trim_end()
            );
        }
        out
    }

    /// Finds a skill or command by name: exact (`plugin:name` or bare), else a plugin skill whose
    /// bare name is unique. A leading `/` is ignored.
    pub fn find_skill(&self, name: &str) -> Result<&Skill, RenderError> {
        let name = name.strip_prefix('/').unwrap_or(name);
        let all = || self.skills.iter().chain(self.commands.iter());
        if let Some(s) = all().find(|s| s.name == name) {
            return Ok(s);
        }
        let cands: Vec<&Skill> = all()
            .filter(|s| s.name.rsplit(':').next() == Some(name))
            .collect();
        match cands.as_slice() {
            [one] => Ok(one),
            [] => Err(RenderError::NotFound(name.to_string())),
            many => Err(RenderError::Ambiguous {
                name: name.to_string(),
                candidates: many.iter().map(|s| s.name.clone()).collect(),
            }),
        }
    }

    /// Renders a skill or command for `warden skill show NAME [ARGS…]` or an invocation.
    /// `opts.shell_disabled` is forced on when settings disable skill shell execution.
    pub fn render_skill(
        &self,
        name: &str,
        args: &str,
        opts: &RenderOptions<'_>,
    ) -> Result<RenderedSkill, RenderError> {
        let skill = self.find_skill(name)?;
        let mut o = RenderOptions {
            runner: opts.runner,
            session_id: opts.session_id.clone(),
            effort: opts.effort.clone(),
            project_dir: opts
                .project_dir
                .clone()
                .or_else(|| Some(self.loader.project_root().to_path_buf())),
            plugin_data: opts.plugin_data.clone(),
            cwd: if opts.cwd.as_os_str().is_empty() {
                self.cwd.clone()
            } else {
                opts.cwd.clone()
            },
            shell_disabled: opts.shell_disabled || self.shell_disabled,
        };
        // Managed skills are exempt unless the policy itself comes from managed settings.
        if matches!(skill.source, SkillSource::Managed)
            && !self.managed_shell_disabled
            && !opts.shell_disabled
        {
            o.shell_disabled = false;
        }
        skills::render(skill, args, &o)
    }

    fn build_listing(&self, settings: &Settings, budget: usize) -> String {
        let merged = settings.merged();
        let max_desc = merged
            .get("skillListingMaxDescChars")
            .and_then(Value::as_u64)
            .map_or(skills::DEFAULT_MAX_DESC_CHARS, |n| n as usize);
        let overrides: HashMap<String, String> = match merged.get("skillOverrides") {
            Some(Value::Object(m)) => m
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect(),
            _ => HashMap::new(),
        };
        let mut entries: Vec<(&Skill, bool)> = Vec::new();
        for s in self.skills.iter().chain(self.commands.iter()) {
            if s.disable_model_invocation {
                continue;
            }
            let state = if matches!(s.source, SkillSource::Plugin(_)) {
                None
            } else {
                overrides.get(&s.name).map(String::as_str)
            };
            match state {
                Some("off") | Some("user-invocable-only") => continue,
                Some("name-only") => entries.push((s, false)),
                _ => entries.push((s, true)),
            }
        }
        let mut lines: Vec<String> = entries
            .iter()
            .map(|(s, d)| skills::listing_line(s, max_desc, *d))
            .collect();
        let total = |ls: &[String]| ls.iter().map(|l| l.chars().count() + 1).sum::<usize>();
        let mut i = lines.len();
        while total(&lines) > budget && i > 0 {
            i -= 1;
            lines[i] = format!("- {}", entries[i].0.name);
        }
        lines.join("\n")
    }

    /// A human-readable rendering (the `warden context` text output).
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Memory ({} files):", self.memory.len())?;
        for (i, m) in self.memory.iter().enumerate() {
            write!(
                f,
                "  {:>3}. [{:?}, {}] {}",
                i + 1,
                m.memory_type,
                m.load_reason.as_str(),
                m.path.display()
            )?;
            if let Some(p) = &m.parent_file_path {
                write!(f, " (imported by {})", p.display())?;
            }
            if let Some(t) = &m.trigger_file_path {
                write!(f, " (for {})", t.display())?;
            }
            writeln!(f)?;
        }
        let pending: Vec<&RuleInfo> = self.rules.iter().filter(|r| !r.loaded).collect();
        writeln!(
            f,
            "\nConditional rules waiting for a matching file ({}):",
            pending.len()
        )?;
        for r in pending {
            writeln!(f, "  {} [{}]", r.path.display(), r.paths.join(", "))?;
        }
        writeln!(
            f,
            "\nSkills ({}), commands ({}); listing given to the model:",
            self.skills.len(),
            self.commands.len()
        )?;
        for l in self.skill_listing.lines() {
            writeln!(f, "  {l}")?;
        }
        writeln!(f, "\nAgents ({}):", self.agents.len())?;
        for a in &self.agents {
            let first = a.description.lines().next().unwrap_or("");
            writeln!(f, "  {}: {}", a.name, skills::truncate_chars(first, 100))?;
        }
        let cc = &self.claude_config;
        match (&cc.dir, &cc.reason) {
            (Some(d), _) => writeln!(
                f,
                "\nClaude Code user configuration: read from {}",
                d.display()
            )?,
            (None, Some(why)) => writeln!(f, "\nClaude Code user configuration: not read ({why})")?,
            (None, None) => writeln!(f, "\nClaude Code user configuration: not read")?,
        }
        if cc.read {
            match &cc.settings {
                Some(p) => writeln!(f, "  settings: {}", p.display())?,
                None => writeln!(f, "  settings: none")?,
            }
            for h in &cc.skipped_hooks {
                writeln!(f, "  skipped hook: {h}")?;
            }
            for m in &cc.memory {
                writeln!(f, "  memory: {}", m.display())?;
            }
            for r in cc.rules.iter().filter(|r| !cc.memory.contains(r)) {
                writeln!(f, "  rule (waiting): {}", r.display())?;
            }
            for d in &cc.dirs {
                writeln!(f, "  directory: {}", d.display())?;
            }
            let names: Vec<String> = cc
                .skills
                .iter()
                .chain(&cc.commands)
                .map(|n| format!("/{n}"))
                .chain(cc.agents.iter().map(|a| format!("agent {a}")))
                .collect();
            if !names.is_empty() {
                writeln!(f, "  loaded: {}", names.join(", "))?;
            }
        }
        writeln!(f, "\nWarnings ({}):", self.warnings.len())?;
        for w in &self.warnings {
            writeln!(f, "  {}", w.located())?;
        }
        Ok(())
    }
}

/// Project directories from the working directory up to the repository root, closest first.
/// A session started in the home directory would find Claude Code's user directory as its
/// project's `.claude/`; it is left out here, having been read as the user's.
fn project_dirs(opts: &ContextOptions, root: &Path) -> Vec<PathBuf> {
    let claude = opts
        .claude_dir
        .as_deref()
        .map(crate::memory::canonical_or_self);
    let mut out = Vec::new();
    for d in opts.cwd.ancestors() {
        let user_dir = claude.as_deref()
            == Some(crate::memory::canonical_or_self(&d.join(".claude")).as_path());
        if !user_dir {
            out.push(d.to_path_buf());
        }
        if d == root || crate::memory::canonical_or_self(d) == root {
            break;
        }
    }
    out
}

fn load_skills(
    opts: &ContextOptions,
    loader: &MemoryLoader,
    warnings: &mut Vec<Diagnostic>,
) -> (Vec<Skill>, Vec<Skill>) {
    let (root, reach) = (loader.project_root(), loader.reach());
    // A project's files must resolve inside it; every file is checked for secrets.
    let unreachable = |file: &Path, contained: bool, warnings: &mut Vec<Diagnostic>| {
        reach
            .check(file, contained)
            .map_err(|why| warnings.push(Diagnostic::warning(file, why.to_string())))
            .is_err()
    };
    // Highest precedence first; the first of a name wins.
    let mut scopes: Vec<(SkillSource, PathBuf, PathBuf)> = Vec::new();
    if let Some(m) = &opts.managed_dir {
        scopes.push((
            SkillSource::Managed,
            m.join(".claude/skills"),
            m.join(".claude/commands"),
        ));
    }
    // Warden's home before Claude Code's: the first of a name wins.
    for user in std::iter::once(opts.home.root()).chain(opts.claude_dir.as_deref()) {
        scopes.push((
            SkillSource::User,
            user.join("skills"),
            user.join("commands"),
        ));
    }
    if opts.project_enabled {
        for d in project_dirs(opts, root) {
            scopes.push((
                SkillSource::Project,
                d.join(".claude/skills"),
                d.join(".claude/commands"),
            ));
        }
    }
    let mut skills_by: BTreeMap<String, Skill> = BTreeMap::new();
    let mut commands_by: BTreeMap<String, Skill> = BTreeMap::new();
    let shadow = |map: &mut BTreeMap<String, Skill>, s: Skill, warnings: &mut Vec<Diagnostic>| {
        if let Some(prev) = map.get(&s.name) {
            warnings.push(Diagnostic::warning(
                &s.path,
                format!("`{}` is shadowed by {}", s.name, prev.path.display()),
            ));
        } else {
            map.insert(s.name.clone(), s);
        }
    };
    for (source, sdir, cdir) in &scopes {
        let contained = *source == SkillSource::Project;
        for (dir, file, name) in skills::scan_skill_dirs(sdir, opts.scan, warnings) {
            if unreachable(&file, contained, warnings) {
                continue;
            }
            let Some(doc) = skills::read_doc(&file, warnings) else {
                continue;
            };
            let s = skills::build(
                doc,
                &file,
                &dir,
                SkillKind::Skill,
                source.clone(),
                name,
                None,
                warnings,
            );
            shadow(&mut skills_by, s, warnings);
        }
        for (file, _segs, stem) in skills::scan_command_files(cdir, warnings) {
            if unreachable(&file, contained, warnings) {
                continue;
            }
            let Some(doc) = skills::read_doc(&file, warnings) else {
                continue;
            };
            let dir = file.parent().unwrap_or(cdir).to_path_buf();
            let s = skills::build(
                doc,
                &file,
                &dir,
                SkillKind::Command,
                source.clone(),
                stem,
                None,
                warnings,
            );
            shadow(&mut commands_by, s, warnings);
        }
    }
    for p in &opts.plugins {
        for sdir in &p.skills_dirs {
            for (dir, file, dirname) in skills::scan_skill_dirs(sdir, opts.scan, warnings) {
                if unreachable(&file, false, warnings) {
                    continue;
                }
                let Some(doc) = skills::read_doc(&file, warnings) else {
                    continue;
                };
                let base = crate::fields::string(&doc, "name").unwrap_or(if dirname == "skills" {
                    p.name.clone()
                } else {
                    dirname
                });
                let name = format!("{}:{base}", p.name);
                let s = skills::build(
                    doc,
                    &file,
                    &dir,
                    SkillKind::Skill,
                    SkillSource::Plugin(p.name.clone()),
                    name,
                    Some(&p.root),
                    warnings,
                );
                shadow(&mut skills_by, s, warnings);
            }
        }
        for cdir in &p.commands_dirs {
            for (file, segs, stem) in skills::scan_command_files(cdir, warnings) {
                if unreachable(&file, false, warnings) {
                    continue;
                }
                let Some(doc) = skills::read_doc(&file, warnings) else {
                    continue;
                };
                let mut name = p.name.clone();
                for s in segs.iter().chain(std::iter::once(&stem)) {
                    name.push(':');
                    name.push_str(s);
                }
                let dir = file.parent().unwrap_or(cdir).to_path_buf();
                let s = skills::build(
                    doc,
                    &file,
                    &dir,
                    SkillKind::Command,
                    SkillSource::Plugin(p.name.clone()),
                    name,
                    Some(&p.root),
                    warnings,
                );
                shadow(&mut commands_by, s, warnings);
            }
        }
    }
    // A skill beats a command of the same name.
    let commands: Vec<Skill> = commands_by
        .into_values()
        .filter(|c| {
            if let Some(s) = skills_by.get(&c.name) {
                warnings.push(Diagnostic::warning(
                    &c.path,
                    format!(
                        "command `{}` is shadowed by the skill {}",
                        c.name,
                        s.path.display()
                    ),
                ));
                false
            } else {
                true
            }
        })
        .collect();
    let mut skills: Vec<Skill> = skills_by.into_values().collect();
    skills.sort_by(|a, b| b.source.cmp(&a.source).then_with(|| a.name.cmp(&b.name)));
    let mut commands = commands;
    commands.sort_by(|a, b| b.source.cmp(&a.source).then_with(|| a.name.cmp(&b.name)));
    (skills, commands)
}

fn load_agents(
    opts: &ContextOptions,
    loader: &MemoryLoader,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<Agent> {
    let (root, reach) = (loader.project_root(), loader.reach());
    let mut all: Vec<Agent> = Vec::new();
    if let Some(m) = &opts.managed_dir {
        all.extend(agents::load_dir(
            &m.join(".claude/agents"),
            AgentSource::Managed,
            reach,
            warnings,
        ));
    }
    if let Some(j) = &opts.cli_agents {
        all.extend(agents::load_cli(j, warnings));
    }
    if opts.project_enabled {
        for d in project_dirs(opts, root) {
            all.extend(agents::load_dir(
                &d.join(".claude/agents"),
                AgentSource::Project,
                reach,
                warnings,
            ));
        }
    }
    for user in std::iter::once(opts.home.root()).chain(opts.claude_dir.as_deref()) {
        all.extend(agents::load_dir(
            &user.join("agents"),
            AgentSource::User,
            reach,
            warnings,
        ));
    }
    for p in &opts.plugins {
        for d in &p.agents_dirs {
            all.extend(agents::load_plugin_dir(d, &p.name, reach, warnings));
        }
    }
    let mut out: Vec<Agent> = Vec::new();
    for a in all {
        if let Some(prev) = out.iter().find(|o| o.name == a.name) {
            let here = a.path.as_deref().unwrap_or(Path::new("--agents"));
            let there = prev
                .path
                .as_ref()
                .map_or_else(|| "--agents".to_string(), |p| p.display().to_string());
            warnings.push(Diagnostic::warning(
                here,
                format!("agent `{}` is shadowed by {there}", a.name),
            ));
            continue;
        }
        out.push(a);
    }
    out
}
