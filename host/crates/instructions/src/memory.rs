//! Memory files (`CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md`, `AGENTS.md`), their `@path`
//! imports, and rules (`.claude/rules/**/*.md`).
//!
//! Order at start (spec 8.1): managed file and managed-settings `claudeMd` text, managed rules;
//! the user files and user rules, Claude Code's (`CLAUDE_CONFIG_DIR` or `~/.claude`) before
//! Warden's own (`$WARDEN_HOME`), so Warden's, like its user settings, come later and closer to
//! the session; then every directory from the filesystem root down to the
//! working directory, each giving `CLAUDE.md`, `.claude/CLAUDE.md`, its unconditional rules and
//! finally `CLAUDE.local.md`. An imported file follows the file that imports it. Files below the
//! working directory, and rules with `paths`, load later through [`MemoryLoader::touch`].
//!
//! Choices where the spec is silent, following Claude Code:
//! * an `@path` that does not name an existing file is prose (an `@mention`), skipped silently;
//! * "the project" for external imports is the git repository holding the working directory
//!   (else the working directory itself);
//! * a file reached twice (two imports, or an import of a file already loaded) is loaded once; a
//!   file importing one of its own importers is reported as a cycle;
//! * only block-level HTML comments are stripped, as Claude Code's markdown lexer finds them: a
//!   comment that starts a line (up to three spaces of indentation; an indented `<!--` inside a
//!   paragraph continues the paragraph) up to the line holding its `-->`, with the blank lines
//!   after it. A comment that starts mid-line stays, even across lines, and so do comments in
//!   fenced code. `@path`s inside any comment are not imports;
//! * a file touched outside the working directory loads no rule with `paths`.
//!
//! A [`ReadGate`] screens `@path` imports only. The memory files themselves (`CLAUDE.md`,
//! `CLAUDE.local.md`, `AGENTS.md`, rules) are read whatever the gate says, as Claude Code reads
//! them: they are the instructions of the place the session runs in, chosen by where they are.
//! An import names an arbitrary file, so a checked-in `CLAUDE.md` saying `@.env` would
//! otherwise put a file the session may not read into the model's context.
//!
//! Every file, memory file or import, also passes [`crate::reach`]: a project's file that is a
//! link out of the project is not followed, and `.env` files and the user's credential stores
//! are never read, rule or no rule. An `@path` written inside the project that resolves outside
//! it through a link is refused even when external imports were approved.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

use crate::fields;
use crate::frontmatter;
use crate::glob::Matcher;
use crate::reach::Reach;
use warden_vocab::Diagnostic;

/// Files larger than this are skipped (Claude Code's limit).
pub const MAX_MEMORY_BYTES: u64 = 4 << 20;
/// Most import hops from a loaded memory file; a fifth nested import is refused.
pub const MAX_IMPORT_DEPTH: usize = 4;

/// The `memory_type` of the `InstructionsLoaded` hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum MemoryType {
    /// Managed (policy) memory.
    Managed,
    /// The user's own memory: in Claude Code's user directory and in `$WARDEN_HOME`.
    User,
    /// Checked-in project memory.
    Project,
    /// `CLAUDE.local.md`.
    Local,
}

/// The `load_reason` of the `InstructionsLoaded` hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadReason {
    /// Loaded when the session starts.
    SessionStart,
    /// A file below the working directory was touched, loading the memory of its directories.
    NestedTraversal,
    /// A rule's `paths` matched a touched file.
    PathGlobMatch,
    /// Imported with `@path` by another memory file.
    Include,
    /// Re-read after compaction.
    Compact,
}

impl LoadReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadReason::SessionStart => "session_start",
            LoadReason::NestedTraversal => "nested_traversal",
            LoadReason::PathGlobMatch => "path_glob_match",
            LoadReason::Include => "include",
            LoadReason::Compact => "compact",
        }
    }
}

/// What kind of file a memory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// `CLAUDE.md` or `.claude/CLAUDE.md`.
    ClaudeMd,
    /// `CLAUDE.local.md`.
    LocalMd,
    /// `AGENTS.md`, read because no `CLAUDE.md` exists (spec 8.4).
    AgentsMd,
    /// A `.claude/rules/**/*.md` file.
    Rule,
    /// A file brought in by an `@path` import.
    Import,
    /// The `claudeMd` string of managed settings (its `path` is the settings file).
    ManagedSetting,
}

/// One loaded memory file, with the fields of its `InstructionsLoaded` event.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryFile {
    /// The file as found (not symlink-resolved).
    pub path: PathBuf,
    /// Its scope.
    pub memory_type: MemoryType,
    /// Why it was loaded.
    pub load_reason: LoadReason,
    /// What kind of file it is.
    pub kind: MemoryKind,
    /// A rule's `paths`, when it was loaded because one matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub globs: Option<Vec<String>>,
    /// The touched file that caused a lazy load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_file_path: Option<PathBuf>,
    /// The importing file, for imports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_file_path: Option<PathBuf>,
    /// The text given to the model: frontmatter removed, HTML comments stripped; `@path`
    /// references stay as written (the imported files follow as their own entries).
    pub content: String,
}

impl MemoryFile {
    /// The JSON fields of the `InstructionsLoaded` hook event for this file (without the common
    /// fields such as `session_id`).
    pub fn hook_fields(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("hook_event_name".into(), "InstructionsLoaded".into());
        m.insert("file_path".into(), self.path.display().to_string().into());
        m.insert(
            "memory_type".into(),
            serde_json::to_value(self.memory_type).unwrap_or(Value::Null),
        );
        m.insert("load_reason".into(), self.load_reason.as_str().into());
        if let Some(g) = &self.globs {
            m.insert("globs".into(), g.clone().into());
        }
        if let Some(t) = &self.trigger_file_path {
            m.insert("trigger_file_path".into(), t.display().to_string().into());
        }
        if let Some(p) = &self.parent_file_path {
            m.insert("parent_file_path".into(), p.display().to_string().into());
        }
        m
    }
}

/// A discovered rule and whether it is in context yet.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleInfo {
    /// The rule file.
    pub path: PathBuf,
    /// Its scope.
    pub memory_type: MemoryType,
    /// Its `paths` globs (empty = unconditional).
    pub paths: Vec<String>,
    /// Whether it has been loaded.
    pub loaded: bool,
    #[serde(skip)]
    base: PathBuf,
    #[serde(skip)]
    matcher: Option<Matcher>,
}

/// Decides whether a file brought in by an `@path` import may be read.
///
/// Before any imported file is read, the gate is called with its absolute path as written
/// (lexically normalised, `~/` expanded) and, when that differs, again with its real path
/// (symlinks resolved), so a link to a refused file is refused too. `Err(reason)` skips the
/// import: a warning names the importing file, the line of the `@` reference, the imported
/// path and `reason`. Nothing of the refused file's text enters the context or the warning,
/// and the files it would import are never looked at.
///
/// Only imports are gated, never the memory files themselves (see the [module docs](self)).
#[derive(Clone)]
pub struct ReadGate(Arc<GateFn>);

type GateFn = dyn Fn(&Path) -> Result<(), String> + Send + Sync;

impl ReadGate {
    /// A gate calling `check` for each path.
    pub fn new(check: impl Fn(&Path) -> Result<(), String> + Send + Sync + 'static) -> Self {
        ReadGate(Arc::new(check))
    }

    /// Asks the gate about one path.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        (self.0)(path)
    }
}

impl fmt::Debug for ReadGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReadGate(..)")
    }
}

/// Inputs of the memory loader.
#[derive(Debug, Clone)]
pub struct MemoryOptions {
    /// The working directory.
    pub cwd: PathBuf,
    /// `$WARDEN_HOME`: user memory is `CLAUDE.md` and `rules/` there.
    pub warden_home: PathBuf,
    /// Claude Code's user directory (`CLAUDE_CONFIG_DIR` or `~/.claude`), when it is read: more
    /// user memory, `CLAUDE.md` and `rules/`, loaded before Warden's.
    pub claude_dir: Option<PathBuf>,
    /// The user's home directory, for `@~/…` imports.
    pub user_home: Option<PathBuf>,
    /// Managed memory directory (`CLAUDE.md` and `.claude/rules/` in it).
    pub managed_dir: Option<PathBuf>,
    /// The managed-settings `claudeMd` text and the file it came from.
    pub managed_text: Option<(PathBuf, String)>,
    /// `claudeMdExcludes` globs and absolute paths.
    pub excludes: Vec<String>,
    /// Whether imports from project files to files outside the project were approved.
    pub external_imports_approved: bool,
    /// Whether project and local memory is read at all (`project` setting source).
    pub project_enabled: bool,
    /// Screens every `@path` import before it is read (`None`: every import is read).
    pub read_gate: Option<ReadGate>,
}

/// Loads memory and rules, remembering what is loaded so later touches only add new files.
#[derive(Debug)]
pub struct MemoryLoader {
    opts: MemoryOptions,
    project_root: PathBuf,
    reach: Reach,
    excludes: GlobSet,
    processed: HashSet<PathBuf>,
    nested_done: HashSet<PathBuf>,
    agents_fallback: bool,
    /// Every rule discovered so far.
    pub rules: Vec<RuleInfo>,
    /// Warnings so far.
    pub warnings: Vec<Diagnostic>,
}

impl MemoryLoader {
    /// A loader for `opts`; nothing is read until [`MemoryLoader::load_start`].
    pub fn new(opts: MemoryOptions) -> Self {
        let reach = Reach::new(&opts.cwd, opts.user_home.as_deref());
        let project_root = reach.project_root().to_path_buf();
        let mut warnings = Vec::new();
        let mut b = GlobSetBuilder::new();
        for p in &opts.excludes {
            match GlobBuilder::new(p).literal_separator(true).build() {
                Ok(g) => {
                    b.add(g);
                }
                Err(e) => warnings.push(Diagnostic::warning(
                    Path::new("claudeMdExcludes"),
                    format!("pattern `{p}` ignored: {}", e.kind()),
                )),
            }
        }
        let excludes = b.build().unwrap_or_else(|_| GlobSet::empty());
        MemoryLoader {
            opts,
            project_root,
            reach,
            excludes,
            processed: HashSet::new(),
            nested_done: HashSet::new(),
            agents_fallback: false,
            rules: Vec::new(),
            warnings,
        }
    }

    /// The project root used for external-import checks.
    pub fn project_root(&self) -> &Path {
        &self.project_root
    }

    /// The containment and secret checks every file of the context passes (see
    /// [`crate::reach`]).
    pub fn reach(&self) -> &Reach {
        &self.reach
    }

    /// Whether a file of type `mt` found at `path` must resolve inside the project: the
    /// project's own files (not those of directories above it, nor the user's).
    fn contained(&self, mt: MemoryType, path: &Path) -> bool {
        matches!(mt, MemoryType::Project | MemoryType::Local) && self.reach.in_project(path)
    }

    /// Everything that loads at session start, in context order.
    pub fn load_start(&mut self) -> Vec<MemoryFile> {
        let mut out = Vec::new();
        let reason = LoadReason::SessionStart;
        if let Some(dir) = self.opts.managed_dir.clone() {
            self.load_file(
                &dir.join("CLAUDE.md"),
                MemoryType::Managed,
                MemoryKind::ClaudeMd,
                reason,
                None,
                &mut out,
            );
        }
        if let Some((path, text)) = self.opts.managed_text.clone() {
            let content = strip_comments_and_find_imports(&text).0;
            out.push(MemoryFile {
                path,
                memory_type: MemoryType::Managed,
                load_reason: reason,
                kind: MemoryKind::ManagedSetting,
                globs: None,
                trigger_file_path: None,
                parent_file_path: None,
                content,
            });
        }
        if let Some(dir) = self.opts.managed_dir.clone() {
            let base = self.project_root.clone();
            self.load_rules_dir(
                &dir.join(".claude").join("rules"),
                &base,
                MemoryType::Managed,
                reason,
                None,
                &mut out,
            );
        }
        // A file reached from both directories (a link, or one directory being the other) is
        // read once, as the first one.
        let user_dirs = self
            .opts
            .claude_dir
            .iter()
            .chain([&self.opts.warden_home])
            .cloned();
        for home in user_dirs.collect::<Vec<_>>() {
            self.load_file(
                &home.join("CLAUDE.md"),
                MemoryType::User,
                MemoryKind::ClaudeMd,
                reason,
                None,
                &mut out,
            );
            let base = self.project_root.clone();
            self.load_rules_dir(
                &home.join("rules"),
                &base,
                MemoryType::User,
                reason,
                None,
                &mut out,
            );
        }
        if !self.opts.project_enabled {
            return out;
        }
        let cwd = self.opts.cwd.clone();
        let dirs: Vec<PathBuf> = {
            let mut v: Vec<PathBuf> = cwd.ancestors().map(Path::to_path_buf).collect();
            v.reverse();
            v
        };
        self.agents_fallback = !dirs.iter().any(|d| {
            d.join("CLAUDE.md").is_file()
                || d.join(".claude").join("CLAUDE.md").is_file()
                || d.join("CLAUDE.local.md").is_file()
        });
        for d in &dirs {
            self.load_dir(d, reason, None, &mut out);
        }
        out
    }

    /// The memory of one directory: `CLAUDE.md`, `.claude/CLAUDE.md`, rules, `CLAUDE.local.md`
    /// (or `AGENTS.md` in fallback mode).
    fn load_dir(
        &mut self,
        d: &Path,
        reason: LoadReason,
        trigger: Option<&Path>,
        out: &mut Vec<MemoryFile>,
    ) {
        if self.agents_fallback {
            self.load_file(
                &d.join("AGENTS.md"),
                MemoryType::Project,
                MemoryKind::AgentsMd,
                reason,
                trigger,
                out,
            );
        }
        self.load_file(
            &d.join("CLAUDE.md"),
            MemoryType::Project,
            MemoryKind::ClaudeMd,
            reason,
            trigger,
            out,
        );
        self.load_file(
            &d.join(".claude").join("CLAUDE.md"),
            MemoryType::Project,
            MemoryKind::ClaudeMd,
            reason,
            trigger,
            out,
        );
        self.load_rules_dir(
            &d.join(".claude").join("rules"),
            d,
            MemoryType::Project,
            reason,
            trigger,
            out,
        );
        self.load_file(
            &d.join("CLAUDE.local.md"),
            MemoryType::Local,
            MemoryKind::LocalMd,
            reason,
            trigger,
            out,
        );
    }

    /// Registers a file as touched (read or edited): loads the memory of directories between the
    /// working directory and the file, and every pending rule whose `paths` match it. Returns
    /// what was newly loaded, in context order.
    pub fn touch(&mut self, file: &Path) -> Vec<MemoryFile> {
        let mut out = Vec::new();
        let file = normalize(&self.opts.cwd.join(file));
        if self.opts.project_enabled
            && let Ok(rel) = file.strip_prefix(&self.opts.cwd)
        {
            let mut dir = self.opts.cwd.clone();
            let comps: Vec<_> = rel.components().collect();
            for c in comps.iter().take(comps.len().saturating_sub(1)) {
                dir.push(c);
                if self.nested_done.insert(dir.clone()) {
                    self.load_dir(
                        &dir.clone(),
                        LoadReason::NestedTraversal,
                        Some(&file),
                        &mut out,
                    );
                }
            }
        }
        let real = std::fs::canonicalize(&file).ok();
        // Claude Code loads rules with `paths` only for files in the working directory.
        let inside = [Some(&file), real.as_ref()].into_iter().flatten().any(|f| {
            f.starts_with(&self.opts.cwd) || f.starts_with(canonical_or_self(&self.opts.cwd))
        });
        if !inside {
            return out;
        }
        for i in 0..self.rules.len() {
            let r = &self.rules[i];
            if r.loaded || r.matcher.is_none() {
                continue;
            }
            if !self.opts.project_enabled
                && matches!(r.memory_type, MemoryType::Project | MemoryType::Local)
            {
                continue;
            }
            let matched = [Some(&file), real.as_ref()].into_iter().flatten().any(|f| {
                let bases = [r.base.clone(), canonical_or_self(&r.base)];
                bases.iter().any(|b| {
                    f.strip_prefix(b).is_ok_and(|rel| {
                        r.matcher
                            .as_ref()
                            .is_some_and(|m| m.is_match(&slash_path(rel)))
                    })
                })
            });
            if matched {
                let path = r.path.clone();
                let mt = r.memory_type;
                let globs = r.paths.clone();
                self.rules[i].loaded = true;
                let start = out.len();
                self.load_file(
                    &path,
                    mt,
                    MemoryKind::Rule,
                    LoadReason::PathGlobMatch,
                    Some(&file),
                    &mut out,
                );
                if let Some(m) = out.get_mut(start) {
                    m.globs = Some(globs);
                }
            }
        }
        out
    }

    fn excluded(&self, path: &Path, real: &Path) -> bool {
        if self.opts.excludes.is_empty() {
            return false;
        }
        let abs = |p: &Path| self.opts.excludes.iter().any(|e| Path::new(e) == p);
        self.excludes.is_match(path) || self.excludes.is_match(real) || abs(path) || abs(real)
    }

    /// Reads one file; `Some(text)` unless it is missing, excluded, too large or unreadable.
    fn read(&mut self, path: &Path, memory_type: MemoryType) -> Option<(PathBuf, String)> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let real = match std::fs::canonicalize(path) {
            Ok(r) => r,
            Err(e) => {
                self.warnings.push(Diagnostic::warning(
                    path,
                    format!("cannot resolve the real path ({e}); skipped"),
                ));
                return None;
            }
        };
        if memory_type != MemoryType::Managed && self.excluded(path, &real) {
            return None;
        }
        if let Err(why) = self
            .reach
            .check_resolved(path, &real, self.contained(memory_type, path))
        {
            self.warnings
                .push(Diagnostic::warning(path, why.to_string()));
            return None;
        }
        if meta.len() > MAX_MEMORY_BYTES {
            self.warnings.push(Diagnostic::warning(
                path,
                format!(
                    "file is {} bytes, over the {MAX_MEMORY_BYTES}-byte limit; skipped",
                    meta.len()
                ),
            ));
            return None;
        }
        match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(s) => Some((real, s)),
                Err(e) => {
                    self.warnings.push(Diagnostic::warning(
                        path,
                        format!("not UTF-8 (byte {}); skipped", e.utf8_error().valid_up_to()),
                    ));
                    None
                }
            },
            Err(e) => {
                self.warnings.push(Diagnostic::warning(
                    path,
                    format!("cannot read: {e}; skipped"),
                ));
                None
            }
        }
    }

    fn load_file(
        &mut self,
        path: &Path,
        mt: MemoryType,
        kind: MemoryKind,
        reason: LoadReason,
        trigger: Option<&Path>,
        out: &mut Vec<MemoryFile>,
    ) {
        let mut chain = Vec::new();
        self.load_inner(path, mt, kind, reason, trigger, None, 0, &mut chain, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn load_inner(
        &mut self,
        path: &Path,
        mt: MemoryType,
        kind: MemoryKind,
        reason: LoadReason,
        trigger: Option<&Path>,
        parent: Option<&Path>,
        depth: usize,
        chain: &mut Vec<PathBuf>,
        out: &mut Vec<MemoryFile>,
    ) {
        let Some((real, text)) = self.read(path, mt) else {
            return;
        };
        if !self.processed.insert(real.clone()) {
            return;
        }
        let body = if kind == MemoryKind::Rule {
            match frontmatter::parse(&text, path) {
                Ok(doc) => doc.body,
                Err(_) => frontmatter_body(&text).to_string(),
            }
        } else {
            text
        };
        let (content, imports) = strip_comments_and_find_imports(&body);
        out.push(MemoryFile {
            path: path.to_path_buf(),
            memory_type: mt,
            load_reason: reason,
            kind,
            globs: None,
            trigger_file_path: trigger.map(Path::to_path_buf),
            parent_file_path: parent.map(Path::to_path_buf),
            content,
        });
        chain.push(real);
        let base_dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut external = Vec::new();
        for imp in imports {
            let Some(target) = self.resolve_import(&imp.path, &base_dir) else {
                continue;
            };
            if !target.is_file() {
                continue;
            }
            let target_real = match std::fs::canonicalize(&target) {
                Ok(r) => r,
                Err(e) => {
                    self.warnings.push(Diagnostic::warning_at(
                        path,
                        imp.line,
                        format!("import @{} cannot be resolved ({e}); skipped", imp.path),
                    ));
                    continue;
                }
            };
            // The session's Read deny rules first, so a refusal names the rule; then the
            // default protection, which holds without any rule.
            let reached = self.gate(&target, &target_real).and_then(|()| {
                self.reach
                    .check_resolved(&target, &target_real, self.contained(mt, &target))
                    .map_err(|e| e.to_string())
            });
            if let Err(why) = reached {
                self.warnings.push(Diagnostic::warning_at(
                    path,
                    imp.line,
                    format!("import @{} skipped: {why}", imp.path),
                ));
                continue;
            }
            if matches!(mt, MemoryType::Project | MemoryType::Local)
                && !self.opts.external_imports_approved
                && !target_real.starts_with(&self.project_root)
            {
                external.push(target.display().to_string());
                continue;
            }
            if depth + 1 > MAX_IMPORT_DEPTH {
                self.warnings.push(Diagnostic::warning_at(
                    path,
                    imp.line,
                    format!(
                        "import @{} refused: more than {MAX_IMPORT_DEPTH} nested imports",
                        imp.path
                    ),
                ));
                continue;
            }
            if chain.contains(&target_real) {
                let names: Vec<String> = chain
                    .iter()
                    .chain(std::iter::once(&target_real))
                    .map(|p| p.display().to_string())
                    .collect();
                self.warnings.push(Diagnostic::warning_at(
                    path,
                    imp.line,
                    format!("import cycle skipped: {}", names.join(" -> ")),
                ));
                continue;
            }
            self.load_inner(
                &target,
                mt,
                MemoryKind::Import,
                LoadReason::Include,
                trigger,
                Some(path),
                depth + 1,
                chain,
                out,
            );
        }
        chain.pop();
        if !external.is_empty() {
            self.warnings.push(Diagnostic::warning(
                path,
                format!(
                    "imports outside the project {} were not approved and are skipped: {}",
                    self.project_root.display(),
                    external.join(", ")
                ),
            ));
        }
    }

    /// The read gate on an import's path as written and its real path; the error says which
    /// path was refused and why.
    fn gate(&self, target: &Path, real: &Path) -> Result<(), String> {
        let Some(gate) = &self.opts.read_gate else {
            return Ok(());
        };
        gate.check(target)
            .map_err(|why| format!("reading {} is refused ({why})", target.display()))?;
        if real != target {
            gate.check(real).map_err(|why| {
                format!(
                    "reading {}, a link to {}, is refused ({why})",
                    target.display(),
                    real.display()
                )
            })?;
        }
        Ok(())
    }

    fn resolve_import(&self, raw: &str, base: &Path) -> Option<PathBuf> {
        let p = if let Some(rest) = raw.strip_prefix("~/") {
            self.opts.user_home.as_ref()?.join(rest)
        } else if raw.starts_with('/') {
            PathBuf::from(raw)
        } else {
            base.join(raw)
        };
        Some(normalize(&p))
    }

    fn load_rules_dir(
        &mut self,
        dir: &Path,
        base: &Path,
        mt: MemoryType,
        reason: LoadReason,
        trigger: Option<&Path>,
        out: &mut Vec<MemoryFile>,
    ) {
        if !dir.is_dir() {
            return;
        }
        let mut files = Vec::new();
        let mut seen = HashSet::new();
        collect_md(dir, &mut files, &mut seen, &mut self.warnings);
        for path in files {
            if self.rules.iter().any(|r| r.path == path) {
                continue;
            }
            if let Err(why) = self.reach.check(&path, self.contained(mt, &path)) {
                self.warnings
                    .push(Diagnostic::warning(&path, why.to_string()));
                continue;
            }
            let text = match crate::frontmatter::read_file(&path) {
                Ok(t) => t,
                Err(e) => {
                    self.warnings.push(Diagnostic::warning(
                        &path,
                        format!("cannot read rule: {e}; skipped"),
                    ));
                    continue;
                }
            };
            let paths = match frontmatter::parse(&text, &path) {
                Ok(doc) => {
                    if doc.lenient {
                        let at = doc.strict_error.clone().unwrap_or_default();
                        self.warnings.push(Diagnostic::warning(
                            &path,
                            format!("frontmatter is not valid YAML ({at}); read with auto-quoting"),
                        ));
                    }
                    doc.frontmatter
                        .get("paths")
                        .map(fields::glob_list)
                        .unwrap_or_default()
                }
                Err(e) => {
                    self.warnings.push(Diagnostic::warning_at(
                        &path,
                        e.line(),
                        format!("{e}; frontmatter ignored and the rule loads unconditionally"),
                    ));
                    Vec::new()
                }
            };
            let matcher = (!paths.is_empty()).then(|| Matcher::new(&paths));
            if let Some(m) = &matcher {
                for (p, why) in &m.rejected {
                    self.warnings.push(Diagnostic::warning(
                        &path,
                        format!("paths pattern `{p}` matches nothing: {why}"),
                    ));
                }
            }
            let conditional = matcher.is_some();
            self.rules.push(RuleInfo {
                path: path.clone(),
                memory_type: mt,
                paths,
                loaded: !conditional,
                base: base.to_path_buf(),
                matcher,
            });
            if !conditional {
                self.load_file(&path, mt, MemoryKind::Rule, reason, trigger, out);
            }
        }
    }
}

/// Recursively collects `*.md` files, following symlinks once per real directory.
fn collect_md(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    warnings: &mut Vec<Diagnostic>,
) {
    let real = match std::fs::canonicalize(dir) {
        Ok(r) => r,
        Err(e) => {
            warnings.push(Diagnostic::warning(
                dir,
                format!("cannot resolve directory ({e}); skipped"),
            ));
            return;
        }
    };
    if !seen.insert(real) {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_md(&p, out, seen, warnings);
        } else if p.extension().is_some_and(|e| e == "md") && p.is_file() {
            out.push(p);
        }
    }
}

/// Lexical normalisation that keeps a `..` it cannot fold (an import may climb above the
/// file that names it).
pub(crate) use warden_vocab::paths::normalise_keeping_leading_parents as normalize;

pub(crate) fn canonical_or_self(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn slash_path(p: &Path) -> PathBuf {
    PathBuf::from(
        p.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// The text after a closed frontmatter block (the whole text when there is none).
fn frontmatter_body(text: &str) -> &str {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = t.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {
            let mut pos = first.len();
            for l in lines {
                pos += l.len();
                if l.trim_end() == "---" {
                    return &t[pos..];
                }
            }
            t
        }
        _ => t,
    }
}

/// An `@path` reference found in a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRef {
    /// The path, with `#fragment` removed and `\ ` unescaped.
    pub path: String,
    /// 1-based line in the scanned text.
    pub line: usize,
}

/// Strips block-level HTML comments (see [`strip_block_comments`]) and finds `@path` imports
/// outside code spans, fenced code blocks and comments. Returns the stripped text and the
/// imports in order.
pub fn strip_comments_and_find_imports(text: &str) -> (String, Vec<ImportRef>) {
    (strip_block_comments(text), find_imports(text))
}

/// Whether a line (without its indentation) is an ATX heading.
fn is_heading(trimmed: &str) -> bool {
    let n = trimmed.bytes().take_while(|&c| c == b'#').count();
    (1..=6).contains(&n) && trimmed[n..].chars().next().is_none_or(char::is_whitespace)
}

/// `block` with every closed `<!-- … -->` removed.
fn remove_comments(block: &str) -> String {
    let mut out = String::with_capacity(block.len());
    let mut rest = block;
    while let Some(start) = rest.find("<!--") {
        match rest[start + 4..].find("-->") {
            Some(end) => {
                out.push_str(&rest[..start]);
                rest = &rest[start + 4 + end + 3..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Removes block-level HTML comments as Claude Code does: a top-level HTML block that starts
/// with `<!--` (at most three spaces in; a line indented further is code or continues a
/// paragraph, and an indented `<!--` never interrupts a paragraph) runs to the end of the line
/// holding the first `-->`, and takes the empty lines right after it. Its comments are
/// removed; what else it held stays, and a block that held nothing else goes with its empty
/// lines. A comment that starts mid-line, one never closed, and everything in fenced code
/// stay as written.
pub fn strip_block_comments(text: &str) -> String {
    if !text.contains("<!--") {
        return text.to_string();
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let blank = |l: &str| l.trim().is_empty();
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<(char, usize)> = None;
    let mut paragraph = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        i += 1;
        if let Some((ch, n)) = fence {
            out.push_str(line);
            let t = line.trim_start();
            let run = t.chars().take_while(|&c| c == ch).count();
            if run >= n && t[run * ch.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if blank(line) {
            paragraph = false;
            out.push_str(line);
            continue;
        }
        if indent > 3 {
            out.push_str(line);
            continue;
        }
        let ch = trimmed.chars().next().unwrap_or(' ');
        if (ch == '`' || ch == '~') && trimmed.chars().take_while(|&c| c == ch).count() >= 3 {
            fence = Some((ch, trimmed.chars().take_while(|&c| c == ch).count()));
            paragraph = false;
            out.push_str(line);
            continue;
        }
        if trimmed.starts_with("<!--") && !(paragraph && indent > 0) {
            // The block ends on the line that closes the comment.
            let end = if trimmed[4..].contains("-->") {
                Some(i)
            } else {
                (i..lines.len())
                    .find(|&j| lines[j].contains("-->"))
                    .map(|j| j + 1)
            };
            if let Some(mut end) = end {
                while end < lines.len() && lines[end].trim_end_matches('\r') == "\n" {
                    end += 1;
                }
                let residue = remove_comments(&lines[i - 1..end].concat());
                if !residue.trim().is_empty() {
                    out.push_str(&residue);
                }
                i = end;
                paragraph = false;
                continue;
            }
        }
        paragraph = !is_heading(trimmed);
        out.push_str(line);
    }
    out
}

/// The `@path` imports of a memory file, outside code spans, fenced code blocks and HTML
/// comments (block-level or inline), in order.
fn find_imports(text: &str) -> Vec<ImportRef> {
    let mut imports = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut in_comment = false;
    for (idx, line) in text.split_inclusive('\n').enumerate() {
        let line_no = idx + 1;
        let trimmed = line.trim_start();
        if let Some((ch, n)) = fence {
            let run = trimmed.chars().take_while(|&c| c == ch).count();
            if run >= n && trimmed[run * ch.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if !in_comment {
            let ch = trimmed.chars().next().unwrap_or(' ');
            if ch == '`' || ch == '~' {
                let run = trimmed.chars().take_while(|&c| c == ch).count();
                if run >= 3 {
                    fence = Some((ch, run));
                    continue;
                }
            }
        }
        let b = line.as_bytes();
        let mut i = 0;
        while i < line.len() {
            if in_comment {
                match line[i..].find("-->") {
                    Some(j) => {
                        i += j + 3;
                        in_comment = false;
                    }
                    None => i = line.len(),
                }
                continue;
            }
            if line[i..].starts_with("<!--") {
                in_comment = true;
                i += 4;
                continue;
            }
            if b[i] == b'`' {
                let n = line[i..].bytes().take_while(|&c| c == b'`').count();
                let after = i + n;
                let close = find_tick_run(&line[after..], n).map(|j| after + j);
                i = match close {
                    Some(c) => c + n,
                    None => after,
                };
                continue;
            }
            let Some(c) = line[i..].chars().next() else {
                break;
            };
            if c == '@'
                && (i == 0
                    || line[..i]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_whitespace))
            {
                let (path, len) = read_import_token(&line[i + 1..]);
                if !path.is_empty() && looks_like_path(&path) {
                    imports.push(ImportRef {
                        path,
                        line: line_no,
                    });
                }
                i += 1 + len;
                continue;
            }
            i += c.len_utf8();
        }
    }
    imports
}

fn find_tick_run(s: &str, n: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let run = s[i..].bytes().take_while(|&c| c == b'`').count();
            if run == n {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// Reads an import token: up to whitespace, `\ ` being an escaped space. Returns the cleaned
/// path (fragment removed) and the number of bytes consumed.
fn read_import_token(s: &str) -> (String, usize) {
    let mut path = String::new();
    let mut consumed = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|&(_, n)| n == ' ') {
            path.push(' ');
            chars.next();
            consumed = i + 2;
            continue;
        }
        if c.is_whitespace() {
            break;
        }
        path.push(c);
        consumed = i + c.len_utf8();
    }
    let path = match path.find('#') {
        Some(h) => path[..h].to_string(),
        None => path,
    };
    (path, consumed)
}

fn looks_like_path(p: &str) -> bool {
    let first = p.chars().next().unwrap_or(' ');
    if p.starts_with('@') || p.starts_with("//") {
        return false;
    }
    first.is_alphanumeric() || matches!(first, '.' | '_' | '-' | '/' | '~')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_imports_outside_code_and_comments() {
        let text = "See @a.md and @dir/b\\ c.md#Sec.\n`@code.md` <!-- @hidden.md -->\n```\n@fenced.md\n```\nmail me@x.com\n<!--\n@multi.md\n-->\n@~/home.md\n";
        let (out, imports) = strip_comments_and_find_imports(text);
        let paths: Vec<_> = imports.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["a.md", "dir/b c.md", "~/home.md"]);
        // A comment that starts mid-line stays in the text (its `@path` is still no import);
        // one that starts a line goes.
        assert!(out.contains("`@code.md` <!-- @hidden.md -->"));
        assert!(!out.contains("multi"));
        assert!(out.contains("@fenced.md"));
        assert!(out.contains("`@code.md`"));
        assert_eq!(imports[2].line, 10);
    }

    #[test]
    fn only_block_level_comments_are_stripped() {
        let strip = |t: &str| strip_comments_and_find_imports(t).0;
        // A comment starting a line goes, indented or not, up to its `-->` across lines, with
        // the empty lines after it.
        assert_eq!(strip("a\n\n<!-- note -->\n\nb\n"), "a\n\nb\n");
        assert_eq!(strip("  <!-- one\ntwo -->\nb\n"), "b\n");
        assert_eq!(strip("# T\n<!--\nhidden\n-->\nb\n"), "# T\nb\n");
        // It interrupts a paragraph when it starts the line.
        assert_eq!(strip("para\n<!-- c -->\nmore\n"), "para\nmore\n");
        // What follows the `-->` on its line stays.
        assert_eq!(strip("<!-- c --> kept\nb\n"), " kept\nb\n");
        // A comment starting mid-line stays, even across lines.
        assert_eq!(strip("x <!-- c --> y\n"), "x <!-- c --> y\n");
        assert_eq!(strip("x <!-- c\nd --> y\n"), "x <!-- c\nd --> y\n");
        // An indented `<!--` continues a paragraph; four spaces in is code; never closed
        // stays.
        assert_eq!(strip("para\n  <!-- c -->\n"), "para\n  <!-- c -->\n");
        assert_eq!(strip("\n    <!-- c -->\n"), "\n    <!-- c -->\n");
        assert_eq!(strip("<!-- open\nb\n"), "<!-- open\nb\n");
        // Fenced code keeps its comments.
        assert_eq!(
            strip("~~~\n<!-- keep -->\n~~~\n<!-- drop -->\n"),
            "~~~\n<!-- keep -->\n~~~\n"
        );
    }

    #[test]
    fn comments_are_stripped_as_claude_code_strips_them() {
        // The memory file and what Claude Code 2.1.332 sent the model for it.
        let file = "Top line\n\n<!-- BLOCK_A -->\n\n  <!-- BLOCK_INDENTED\nspans -->\nafter x <!-- MIDLINE_B --> y\nmid <!-- MIDLINE_C\nacross --> z\npara\n<!-- INTERRUPT_D -->\nmore\npara2\n  <!-- INDENT_PARA_E -->\n\n<!-- F --> TAIL_F\n```\n<!-- FENCED_G -->\n```\nend\n";
        let claude_code = "Top line\n\nafter x <!-- MIDLINE_B --> y\nmid <!-- MIDLINE_C\nacross --> z\npara\nmore\npara2\n  <!-- INDENT_PARA_E -->\n\n TAIL_F\n```\n<!-- FENCED_G -->\n```\nend\n";
        assert_eq!(strip_comments_and_find_imports(file).0, claude_code);
    }

    #[test]
    fn comments_in_code_blocks_are_kept() {
        let (out, _) =
            strip_comments_and_find_imports("```html\n<!-- keep -->\n```\n<!-- drop -->\ntext\n");
        assert_eq!(out, "```html\n<!-- keep -->\n```\ntext\n");
    }
}
