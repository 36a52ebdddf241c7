//! The permission engine: compiled rules, mode and working directories.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use warden_config::{Scope, Settings};

use crate::bash;
use crate::fxhash::FxHashMap;
use crate::paths::{self, Anchors};
use crate::rules::{self, CommandIndex, Problem, RuleKind, RuleSet, Spec, first};
use crate::shell::{self, ParsedCommand, Redirect, SimpleCommand};

/// What happens to a tool call or capability use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse.
    Deny,
}

/// The outcome of a permission check.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Decision {
    /// Allow, ask or deny.
    pub decision: Verdict,
    /// Why, in words fit for a user.
    pub reason: String,
    /// The rule that decided, as written in settings.
    pub rule: Option<String>,
    /// Where that rule came from: a settings file path or a scope/flag name.
    pub source: Option<String>,
}

/// A PreToolUse hook's permission decision, combined with the rules by [`Permissions::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookDecision {
    /// The hook approved; deny and ask rules still apply.
    Allow,
    /// The hook wants the user asked.
    Ask,
    /// The hook blocked the call; nothing overrides this.
    Deny,
}

/// Permission mode (spec 2.6).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum Mode {
    /// Reads run; everything else asks.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// File edits and filesystem commands inside the working directories also run.
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// Read-only planning.
    #[serde(rename = "plan")]
    Plan,
    /// Anything that would ask is denied.
    #[serde(rename = "dontAsk")]
    DontAsk,
    /// Everything runs except deny rules, ask rules and the never-auto-approved list.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl Mode {
    /// Parses a settings/CLI mode name (`manual` is an alias of `default`). `auto` is not
    /// supported by Warden and is reported as unknown.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "default" | "manual" => Mode::Default,
            "acceptEdits" => Mode::AcceptEdits,
            "plan" => Mode::Plan,
            "dontAsk" => Mode::DontAsk,
            "bypassPermissions" => Mode::BypassPermissions,
            _ => return None,
        })
    }

    /// The name hooks and settings use.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
            Mode::DontAsk => "dontAsk",
            Mode::BypassPermissions => "bypassPermissions",
        }
    }
}

/// Kind of file access for [`Permissions::check_path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Reading.
    Read,
    /// Creating, modifying or deleting.
    Write,
}

/// A startup warning about a settings entry (spec 2.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The settings file (or flag) the entry came from.
    pub source: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

/// Errors building a [`Permissions`].
#[derive(Debug, thiserror::Error)]
pub enum PermissionsError {
    /// Bypass mode was requested on the command line but a settings file disables it.
    #[error(
        "bypassPermissions mode is disabled by {file} (permissions.disableBypassPermissionsMode); start without --dangerously-skip-permissions or pick another --permission-mode"
    )]
    BypassDisabled {
        /// The file that disables it.
        file: String,
    },
}

/// Session facts that are not in settings files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The original working directory (absolute).
    pub cwd: PathBuf,
    /// The user's home directory, for `~/` rules and critical-path checks.
    pub home: PathBuf,
    /// Mode from the command line; overrides `permissions.defaultMode`.
    pub mode: Option<Mode>,
    /// `--allowedTools` rules.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` rules.
    pub disallowed_tools: Vec<String>,
    /// `--add-dir` directories.
    pub add_dirs: Vec<PathBuf>,
    /// Whether the workspace is trusted; project `allow` and `additionalDirectories` wait for it.
    pub trusted: bool,
}

#[derive(Debug, Clone)]
struct Source {
    name: String,
}

/// Compiled permission state for a session. Construct once; every check is read-only.
#[derive(Debug)]
pub struct Permissions {
    mode: Mode,
    cwd: PathBuf,
    home: PathBuf,
    work_dirs: Vec<PathBuf>,
    extra_dirs: Vec<PathBuf>,
    deny: RuleSet,
    ask: RuleSet,
    allow: RuleSet,
    commands: CommandIndex,
    sources: Vec<Source>,
    warnings: Vec<Warning>,
    bypass_disabled: bool,
    parse_cache: ParseCache,
    /// `(configured, resolved)` forms of the working directories and home, deepest first;
    /// see [`Permissions::real_anchors`].
    real_anchors: std::sync::OnceLock<Vec<(PathBuf, PathBuf)>>,
    link_cache: LinkCache,
}

/// Symlink resolutions made in the last [`LinkCache::TTL`], by path as handed to the kernel.
///
/// Looking a path up costs a system call per component, which dwarfs the rule matching
/// itself, and a burst of tool calls tends to name the same files (a `Read` then an `Edit`,
/// a compound command repeating its arguments). An answer reused within the window is the
/// answer a check made that much earlier would have given; since any check already precedes
/// the access it guards by at least that long (the tool still has to start), the window adds
/// no race that was not there. [`Permissions::check_path`], whose caller opens the file right
/// after asking, always looks afresh.
#[derive(Debug, Default)]
struct LinkCache(
    // Keyed by the path's bytes: hashing a `Path` parses its components, which costs more
    // here than the lookup it serves.
    std::sync::Mutex<FxHashMap<std::ffi::OsString, (std::time::Instant, Target)>>,
);

impl LinkCache {
    const TTL: std::time::Duration = std::time::Duration::from_millis(1);
    const CAPACITY: usize = 1024;

    fn get(&self, raw: &Path) -> Option<Target> {
        let map = self.0.lock().ok()?;
        let (at, target) = map.get(raw.as_os_str())?;
        (at.elapsed() <= Self::TTL).then(|| target.clone())
    }

    fn put(&self, raw: &Path, target: &Target) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::CAPACITY {
                // Entries go stale within milliseconds anyway; starting over keeps it bounded.
                map.clear();
            }
            map.insert(
                raw.as_os_str().to_owned(),
                (std::time::Instant::now(), target.clone()),
            );
        }
    }
}

/// A parse result shared between decisions.
type CachedParse = std::sync::Arc<Result<Analysed, shell::ShellError>>;

/// Parsed command lines by text. An agent repeats the same commands (`cargo test`,
/// `git status`) many times per session, and parsing dominates the cost of a Bash decision.
#[derive(Debug, Default)]
struct ParseCache(std::sync::Mutex<FxHashMap<Box<str>, CachedParse>>);

impl ParseCache {
    const CAPACITY: usize = 4096;

    fn get(&self, text: &str) -> CachedParse {
        if let Ok(map) = self.0.lock()
            && let Some(hit) = map.get(text)
        {
            return hit.clone();
        }
        // Parse outside the lock so one slow command does not stall other threads' hits.
        let parsed = std::sync::Arc::new(shell::parse(text).map(Analysed::new));
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::CAPACITY {
                // Crude but bounded: a full cache starts over rather than tracking recency.
                map.clear();
            }
            map.insert(text.into(), parsed.clone());
        }
        parsed
    }
}

/// A parsed command line with everything about it that does not depend on rules, mode or
/// working directory worked out once, so cached decisions only do rule lookups.
#[derive(Debug)]
struct Analysed {
    parsed: ParsedCommand,
    /// One entry per simple command, in order.
    prepared: Vec<Prepared>,
    /// Some command runs `git` (after wrappers).
    has_git: bool,
}

/// The text forms one simple command is matched under.
#[derive(Debug)]
struct Prepared {
    /// How many leading wrapper words `strip_wrappers` removed.
    off: usize,
    /// Unquoted words after wrappers, joined by spaces: what allow rules see.
    allow_form: String,
    /// The same words as written.
    raw_form: String,
    /// Every plausible reading for deny and ask rules, without duplicates; `allow_form` first.
    forms: Vec<String>,
    /// An exec wrapper: only a full-command allow rule approves it.
    exact_only: bool,
    /// Every leading assignment is on the safe list.
    safe_env: bool,
    /// The program name itself is an expansion.
    dynamic_program: bool,
}

impl Analysed {
    fn new(parsed: ParsedCommand) -> Self {
        let has_git = parsed.commands.iter().any(|c| {
            bash::strip_wrappers(&c.words)
                .first()
                .is_some_and(|p| bash::basename(p) == "git")
        });
        let prepared = parsed.commands.iter().map(Prepared::new).collect();
        Analysed {
            parsed,
            prepared,
            has_git,
        }
    }
}

impl Prepared {
    fn new(cmd: &SimpleCommand) -> Self {
        let stripped = bash::strip_wrappers(&cmd.words);
        let off = cmd.words.len() - stripped.len();
        let allow_form = stripped.join(" ");
        let raw_form = cmd.raw_words[off..].join(" ");
        let mut forms: Vec<String> = vec![allow_form.clone()];
        let mut push = |s: String| {
            if !forms.contains(&s) {
                forms.push(s);
            }
        };
        push(raw_form.clone());
        push(cmd.words.join(" "));
        if let Some(p) = stripped.first()
            && p.contains('/')
        {
            let mut w = stripped.to_vec();
            w[0] = bash::basename(p).to_string();
            push(w.join(" "));
            if let Some(g) = bash::strip_git_globals(&w) {
                push(g.join(" "));
            }
        }
        if let Some(g) = bash::strip_git_globals(stripped) {
            push(g.join(" "));
        }
        if let Some(inner) = bash::strip_env(stripped) {
            push(bash::strip_wrappers(inner).join(" "));
        }
        if bash::runs_inner_command(stripped) {
            for i in 1..stripped.len() {
                if !stripped[i].starts_with('-') {
                    push(bash::strip_wrappers(&stripped[i..]).join(" "));
                }
            }
        }
        Prepared {
            off,
            allow_form,
            raw_form,
            forms,
            exact_only: bash::is_exec_wrapper(stripped),
            safe_env: cmd
                .assignments
                .iter()
                .all(|(n, _)| bash::SAFE_ENV_VARS.contains(&n.as_str())),
            dynamic_program: cmd.dynamic_in_program(),
        }
    }
}

/// A rule hit: which list and which rule.
type Hit = Option<usize>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auto {
    None,
    /// Runs without asking in every mode.
    ReadOnly,
    /// Runs without asking in `acceptEdits`.
    Edit,
}

#[derive(Debug, Clone)]
enum Guard {
    /// Removal of a critical path: never auto-approved.
    Critical(String),
    /// Write to a protected path: only bypass approves.
    Protected(PathBuf),
    /// Needs the user by nature.
    Interactive,
    /// Command the engine could not analyse: allow rules cannot approve it.
    Opaque(String),
}

#[derive(Debug, Default)]
struct Facts {
    deny: Hit,
    ask: Hit,
    allow: Hit,
    guard: Option<Guard>,
    auto: Option<Auto>,
}

impl Facts {
    fn deny(&mut self, h: Hit) {
        self.deny = first(self.deny, h);
    }
    fn ask(&mut self, h: Hit) {
        self.ask = first(self.ask, h);
    }
}

/// The names one file goes by (spec 2.4, symlinks): the path as written and, when the
/// filesystem resolves it somewhere else, the resolved target.
///
/// A deny or ask rule applies if it matches any name; an allow rule, and the automatic
/// approval inside the working directories, only if it matches both the written path and
/// the target. Otherwise a link inside an allowed area could hand out a file the rules
/// never allowed, and a link outside a denied one could read what they deny.
#[derive(Debug)]
struct Spellings {
    /// The path as written, made absolute and normalised lexically: what rules always saw.
    lexical: PathBuf,
    target: Target,
}

#[derive(Debug, Clone)]
enum Target {
    /// Resolving changes nothing: the written path is the file's only name.
    Same,
    /// The file's other names: the resolved target as resolved and, when it lies below a
    /// working directory or home that is itself reached through a symlink, under that
    /// directory's configured name (so a project opened through a linked path still matches
    /// its own `./` rules, whichever spelling a call uses). Matching any of them counts as
    /// matching the target.
    Elsewhere(Vec<PathBuf>),
    /// The links form a loop, so there is no target to check: nothing approves the path
    /// automatically and only its written form is checked against deny and ask rules.
    Unknown,
}

impl Spellings {
    /// A path taken as written, without consulting the filesystem.
    fn lexical(lexical: PathBuf) -> Self {
        Spellings {
            lexical,
            target: Target::Same,
        }
    }

    /// The first rule `hit` finds under any name: how deny and ask rules apply.
    fn any_hit(&self, hit: impl Fn(&Path) -> Hit) -> Hit {
        let mut h = hit(&self.lexical);
        if let Target::Elsewhere(names) = &self.target {
            for n in names {
                h = first(h, hit(n));
            }
        }
        h
    }

    /// The rule `hit` finds for the written path, provided it also finds one for the target:
    /// how allow rules apply.
    fn all_hit(&self, hit: impl Fn(&Path) -> Hit) -> Hit {
        let h = hit(&self.lexical)?;
        match &self.target {
            Target::Same => Some(h),
            Target::Elsewhere(names) => names.iter().any(|n| hit(n).is_some()).then_some(h),
            Target::Unknown => None,
        }
    }

    /// Whether `pred` holds for the written path and the target.
    fn all(&self, pred: impl Fn(&Path) -> bool) -> bool {
        pred(&self.lexical)
            && match &self.target {
                Target::Same => true,
                Target::Elsewhere(names) => names.iter().any(|n| pred(n)),
                Target::Unknown => false,
            }
    }

    /// The first name `pred` holds for.
    fn find(&self, pred: impl Fn(&Path) -> bool) -> Option<&Path> {
        if pred(&self.lexical) {
            return Some(&self.lexical);
        }
        match &self.target {
            Target::Elsewhere(names) => names.iter().map(PathBuf::as_path).find(|n| pred(n)),
            _ => None,
        }
    }
}

/// What a file tool does to its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileOp {
    /// `Read` rules.
    Read,
    /// `Edit` rules; a `Read` deny also blocks it.
    Write,
    /// `Edit` rules only: a `Read` deny does not cover NotebookEdit (2.4).
    Notebook,
}

impl From<Access> for FileOp {
    fn from(a: Access) -> FileOp {
        match a {
            Access::Read => FileOp::Read,
            Access::Write => FileOp::Write,
        }
    }
}

impl Permissions {
    /// Builds the engine from loaded settings. Problems with individual rules become
    /// [`Permissions::warnings`]; only a contradiction the user must resolve is an error.
    pub fn from_settings(
        settings: &Settings,
        opts: &Options,
    ) -> Result<Permissions, PermissionsError> {
        let mut b = Builder {
            opts,
            sources: Vec::new(),
            warnings: Vec::new(),
            lists: [Vec::new(), Vec::new(), Vec::new()],
            extra_dirs: Vec::new(),
        };
        let managed_only = settings.scope(Scope::Managed).any(|f| {
            f.value
                .get("allowManagedPermissionRulesOnly")
                .and_then(Value::as_bool)
                == Some(true)
        });
        let mut flags_added = false;
        for f in &settings.files {
            if f.scope != Scope::Managed && !flags_added {
                b.flags(managed_only);
                flags_added = true;
            }
            if managed_only && f.scope != Scope::Managed {
                continue;
            }
            let Some(perms) = f.value.get("permissions") else {
                continue;
            };
            let name = f.display_name();
            let Some(perms) = perms.as_object() else {
                b.warnings.push(Warning {
                    source: name,
                    message: "\"permissions\" must be an object; ignored".into(),
                });
                continue;
            };
            let root = match (f.scope, f.path.is_some()) {
                (Scope::Local, _) | (_, false) => opts.cwd.clone(),
                _ => f.base_dir().unwrap_or_else(|| opts.cwd.clone()),
            };
            let untrusted_project = f.scope == Scope::Project && !opts.trusted;
            let src = b.source(name.clone());
            for (kind, key) in [
                (RuleKind::Deny, "deny"),
                (RuleKind::Ask, "ask"),
                (RuleKind::Allow, "allow"),
            ] {
                let Some(list) = perms.get(key) else { continue };
                let Some(list) = list.as_array() else {
                    b.warnings.push(Warning {
                        source: name.clone(),
                        message: format!(
                            "permissions.{key} must be an array of rule strings; ignored"
                        ),
                    });
                    continue;
                };
                if untrusted_project && kind == RuleKind::Allow {
                    if !list.is_empty() {
                        b.warnings.push(Warning {
                            source: name.clone(),
                            message: format!("Ignoring {} permissions.allow entries from {name}: this workspace has not been trusted; trust it to apply them", list.len()),
                        });
                    }
                    continue;
                }
                for item in list {
                    match item.as_str() {
                        Some(text) => b.rule(text, kind, src, &root, false),
                        None => b.warnings.push(Warning {
                            source: name.clone(),
                            message: format!(
                                "permissions.{key} entry {item} is not a string; ignored"
                            ),
                        }),
                    }
                }
            }
            if let Some(dirs) = perms.get("additionalDirectories").and_then(Value::as_array) {
                if untrusted_project {
                    if !dirs.is_empty() {
                        b.warnings.push(Warning {
                            source: name.clone(),
                            message: format!("Ignoring {} permissions.additionalDirectories entries from {name}: this workspace has not been trusted; trust it to apply them", dirs.len()),
                        });
                    }
                } else {
                    for d in dirs.iter().filter_map(Value::as_str) {
                        b.extra_dirs.push(paths::resolve(d, &opts.cwd, &opts.home));
                    }
                }
            }
        }
        if !flags_added {
            b.flags(managed_only);
        }

        let bypass_disabled_by = settings.files.iter().find(|f| {
            f.value
                .get("permissions")
                .and_then(|p| p.get("disableBypassPermissionsMode"))
                .and_then(Value::as_str)
                == Some("disable")
        });
        let mut mode = Mode::Default;
        if let Some(m) = opts.mode {
            if m == Mode::BypassPermissions
                && let Some(f) = bypass_disabled_by
            {
                return Err(PermissionsError::BypassDisabled {
                    file: f.display_name(),
                });
            }
            mode = m;
        } else if let Some((v, f)) = settings.files.iter().find_map(|f| {
            f.value
                .get("permissions")
                .and_then(|p| p.get("defaultMode"))
                .map(|v| (v, f))
        }) {
            let name = f.display_name();
            match v.as_str().map(|s| (s, Mode::parse(s))) {
                Some((_, Some(Mode::BypassPermissions))) if bypass_disabled_by.is_some() => b.warnings.push(Warning {
                    source: name,
                    message: "defaultMode bypassPermissions is disabled by permissions.disableBypassPermissionsMode; using default".into(),
                }),
                Some((_, Some(m))) => mode = m,
                Some(("auto", None)) => b.warnings.push(Warning { source: name, message: "defaultMode \"auto\" is not supported by Warden; using default".into() }),
                _ => b.warnings.push(Warning {
                    source: name,
                    message: format!("defaultMode {v} is not one of default, acceptEdits, plan, dontAsk, bypassPermissions; using default"),
                }),
            }
        }
        for d in &opts.add_dirs {
            b.extra_dirs
                .push(paths::resolve(&d.to_string_lossy(), &opts.cwd, &opts.home));
        }
        let mut work_dirs = vec![paths::normalise(&opts.cwd)];
        work_dirs.extend(b.extra_dirs.iter().cloned());
        let [deny, ask, allow] = b.lists;
        Ok(Permissions {
            mode,
            cwd: paths::normalise(&opts.cwd),
            home: opts.home.clone(),
            work_dirs,
            extra_dirs: b.extra_dirs,
            commands: CommandIndex::new([&deny, &ask, &allow]),
            deny: RuleSet::new(deny),
            ask: RuleSet::new(ask),
            allow: RuleSet::new(allow),
            sources: b.sources,
            warnings: b.warnings,
            bypass_disabled: bypass_disabled_by.is_some(),
            parse_cache: ParseCache::default(),
            real_anchors: std::sync::OnceLock::new(),
            link_cache: LinkCache::default(),
        })
    }

    /// Startup warnings (spec 2.8), each naming the settings file it came from.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The active mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches mode (for example on the user's request); bypass is refused when disabled.
    pub fn set_mode(&mut self, mode: Mode) -> Result<(), PermissionsError> {
        if mode == Mode::BypassPermissions && self.bypass_disabled {
            return Err(PermissionsError::BypassDisabled {
                file: "settings".into(),
            });
        }
        self.mode = mode;
        Ok(())
    }

    /// The launch directory followed by additional directories.
    pub fn working_dirs(&self) -> &[PathBuf] {
        &self.work_dirs
    }

    /// Whether a bare-name deny rule removes `tool` from the model's tool list
    /// (`EndConversation` is never removed).
    pub fn is_tool_removed(&self, tool: &str) -> bool {
        let tool = rules::canonical_tool(tool);
        tool != "EndConversation" && self.deny.tool_level(tool).is_some()
    }

    /// Decides a tool call: rules merged across scopes, deny → ask → allow, then the mode.
    /// `hook` is the merged PreToolUse decision, if any hook gave one.
    pub fn decide(
        &self,
        tool_name: &str,
        tool_input: &Value,
        hook: Option<HookDecision>,
    ) -> Decision {
        let tool = rules::canonical_tool(tool_name);
        if hook == Some(HookDecision::Deny) {
            return self.plain(Verdict::Deny, "blocked by a PreToolUse hook");
        }
        if tool == "EndConversation" {
            return self.plain(
                Verdict::Allow,
                "EndConversation cannot be denied or prompted for",
            );
        }
        let mut f = Facts::default();
        f.deny(self.deny.tool_level(tool));
        f.ask(self.ask.tool_level(tool));
        f.allow = self.allow.tool_level(tool);
        f.deny(self.deny.param(tool, tool_input));
        f.ask(self.ask.param(tool, tool_input));
        let str_field = |k: &str| tool_input.get(k).and_then(Value::as_str);
        match tool {
            "Bash" => {
                let command = str_field("command").unwrap_or("");
                self.bash_facts(command, &self.cwd, &mut f);
            }
            t if rules::READ_TOOLS.contains(&t) => {
                let p = str_field("file_path")
                    .or_else(|| str_field("notebook_path"))
                    .or_else(|| str_field("path"));
                let path = p.map_or_else(
                    || self.cwd.clone(),
                    |p| paths::resolve(p, &self.cwd, &self.home),
                );
                // The tools normalise the path before opening it, so the kernel resolves
                // links in the normalised form.
                let names = self.spellings(path.clone(), &path, false);
                self.path_facts(FileOp::Read, &names, &mut f);
            }
            t if rules::EDIT_TOOLS.contains(&t) => {
                let p = str_field("file_path")
                    .or_else(|| str_field("notebook_path"))
                    .unwrap_or("");
                let path = paths::resolve(p, &self.cwd, &self.home);
                let names = self.spellings(path.clone(), &path, false);
                let op = if t == "NotebookEdit" {
                    FileOp::Notebook
                } else {
                    FileOp::Write
                };
                self.path_facts(op, &names, &mut f);
            }
            "WebFetch" => match str_field("url").and_then(host_of) {
                Some(host) => {
                    f.deny(self.deny.domain(host));
                    f.ask(self.ask.domain(host));
                    f.allow = first(f.allow, self.allow.domain(host));
                }
                None => {
                    if f.deny.is_none() {
                        return self
                            .plain(Verdict::Deny, "WebFetch needs an http(s) URL with a host");
                    }
                }
            },
            "Agent" | "Skill" | "Cd" => {
                let text = match tool {
                    "Agent" => str_field("subagent_type").unwrap_or("").to_string(),
                    "Skill" => match (str_field("skill"), str_field("args")) {
                        (Some(s), Some(a)) if !a.is_empty() => format!("{s} {a}"),
                        (Some(s), _) => s.to_string(),
                        _ => String::new(),
                    },
                    _ => str_field("path").unwrap_or("").to_string(),
                };
                f.deny(self.deny.text(tool, &text));
                f.ask(self.ask.text(tool, &text));
                f.allow = first(f.allow, self.allow.text(tool, &text));
                if tool != "Cd" {
                    f.auto = Some(Auto::ReadOnly);
                }
            }
            "AskUserQuestion" => f.guard = Some(Guard::Interactive),
            "TodoWrite" | "ExitPlanMode" | "EnterPlanMode" | "BashOutput" | "KillShell"
            | "TaskOutput" | "TaskStop" | "ToolSearch" | "TaskCreate" | "TaskGet" | "TaskList"
            | "TaskUpdate" => f.auto = Some(Auto::ReadOnly),
            _ => {}
        }
        self.finish(f, hook)
    }

    /// Checks a filesystem access by a guest. `path` must be absolute.
    /// A `Read` deny also blocks writes.
    ///
    /// As for the file tools, an existing symlink on the way is resolved (spec 2.4): deny
    /// and ask rules apply if they match the path or its target, an allow needs both.
    pub fn check_path(&self, access: Access, path: &Path) -> Decision {
        let mut f = Facts::default();
        let path = paths::normalise(path);
        let names = self.spellings(path.clone(), &path, true);
        self.path_facts(access.into(), &names, &mut f);
        self.finish(f, None)
    }

    /// Checks running a program with `argv` (never a shell string) in `cwd`.
    ///
    /// The program is reduced to its basename, wrappers and `env` are looked through, and
    /// shell `-c` code is parsed and checked command by command. Inline code for other
    /// interpreters (`python -c`, `node -e`, …) cannot be analysed and is refused unless an
    /// allow rule matches the whole command.
    pub fn check_exec(&self, argv: &[String], cwd: &Path) -> Decision {
        let Some(prog) = argv.first() else {
            return self.plain(Verdict::Deny, "empty argv");
        };
        let mut words: Vec<String> = Vec::with_capacity(argv.len());
        words.push(bash::basename(prog).to_string());
        words.extend(argv[1..].iter().cloned());
        let mut f = Facts::default();
        f.deny(self.deny.tool_level("Bash"));
        f.ask(self.ask.tool_level("Bash"));
        f.allow = self.allow.tool_level("Bash");
        // Peel wrappers and env until the real program shows.
        loop {
            let stripped = bash::strip_wrappers(&words);
            let stripped = match bash::strip_env(stripped) {
                Some(inner) => inner,
                None => stripped,
            };
            if stripped.len() == words.len() {
                break;
            }
            let mut next: Vec<String> = stripped.to_vec();
            if let Some(p) = next.first_mut() {
                *p = bash::basename(p).to_string();
            }
            words = next;
        }
        let cwd = paths::normalise(cwd);
        if let Some(code) = bash::shell_code(&words) {
            self.bash_facts(code, &cwd, &mut f);
            return self.finish(f, None);
        }
        if bash::has_inline_code(&words) {
            let full = words.join(" ");
            let keys = self.commands.keys(&full);
            f.deny(
                self.commands
                    .first(&self.deny, RuleKind::Deny, &keys, &full, false),
            );
            f.ask(
                self.commands
                    .first(&self.ask, RuleKind::Ask, &keys, &full, false),
            );
            f.allow = first(
                f.allow,
                self.commands
                    .first(&self.allow, RuleKind::Allow, &keys, &full, false),
            );
            if f.deny.is_none() && f.ask.is_none() && f.allow.is_none() {
                return self.plain(Verdict::Deny, "inline interpreter code cannot be checked; add an allow rule for this exact command to permit it");
            }
            f.guard = Some(Guard::Opaque("inline interpreter code".into()));
            if f.allow.is_some() {
                f.guard = None;
            }
            return self.finish(f, None);
        }
        let cmd = SimpleCommand {
            raw_words: words.clone(),
            globbed: vec![false; words.len()],
            words,
            ..SimpleCommand::default()
        };
        let parsed = ParsedCommand {
            commands: vec![cmd],
            ..ParsedCommand::default()
        };
        self.commands_facts(&Analysed::new(parsed), &cwd, &mut f);
        self.finish(f, None)
    }

    /// Checks fetching `url` against `WebFetch` rules.
    pub fn check_url(&self, url: &str) -> Decision {
        let Some(host) = host_of(url) else {
            return self.plain(Verdict::Deny, "not an http(s) URL with a host");
        };
        let mut f = Facts::default();
        f.deny(self.deny.tool_level("WebFetch"));
        f.ask(self.ask.tool_level("WebFetch"));
        f.allow = self.allow.tool_level("WebFetch");
        f.deny(self.deny.domain(host));
        f.ask(self.ask.domain(host));
        f.allow = first(f.allow, self.allow.domain(host));
        self.finish(f, None)
    }

    fn inside(&self, p: &Path) -> bool {
        self.work_dirs.iter().any(|d| paths::is_within(p, d))
    }

    /// The names `lexical` goes by: itself and, if symlinks send it elsewhere, its target.
    ///
    /// `raw` is the same path before lexical normalisation, as the program will hand it to
    /// the kernel: a Bash argument keeps its `..`, which climbs from a link's target. Only
    /// file checks call this, so URL and MCP decisions never touch the filesystem; the cost
    /// is one `symlink_metadata` per path component up to the first missing one, a link is
    /// read only when one is actually found (see [`paths::real_path`]), and unless `fresh`
    /// a resolution from the last millisecond is reused (see [`LinkCache`]).
    fn spellings(&self, lexical: PathBuf, raw: &Path, fresh: bool) -> Spellings {
        if !raw.is_absolute() {
            // Without an absolute working directory there is nothing meaningful to resolve
            // against; rules see the path as written, as before.
            return Spellings::lexical(lexical);
        }
        let target = match (!fresh).then(|| self.link_cache.get(raw)).flatten() {
            Some(t) => t,
            None => {
                let t = self.target(&lexical, raw);
                self.link_cache.put(raw, &t);
                t
            }
        };
        Spellings { lexical, target }
    }

    /// Resolves `raw` on the filesystem and names its target, if that is not `lexical`.
    fn target(&self, lexical: &Path, raw: &Path) -> Target {
        let anchors = self.real_anchors();
        let start = anchors
            .iter()
            .find(|(lex, _)| raw.starts_with(lex))
            .map(|(lex, real)| (lex.as_path(), real.as_path()));
        let Some(real) = paths::real_path(raw, start) else {
            return Target::Unknown;
        };
        // The deepest resolved anchor containing the target gives it back its configured
        // name, so `./` rules keep matching in a project reached through a linked path, and a
        // file named by the project's resolved path still meets the rules written for it.
        let renamed = anchors
            .iter()
            .filter(|(lex, r)| lex != r && real.path.starts_with(r))
            .max_by_key(|(_, r)| r.components().count())
            .and_then(|(lex, r)| {
                let rest = real.path.strip_prefix(r).ok()?;
                Some(if rest.as_os_str().is_empty() {
                    lex.clone()
                } else {
                    lex.join(rest)
                })
            });
        if real.path == lexical {
            return match renamed {
                Some(n) if n != lexical => Target::Elsewhere(vec![n]),
                _ => Target::Same,
            };
        }
        // The configured name is kept even when it is the written path: it is a name of the
        // target, so an allow matching the written path also matches the target.
        let mut names = vec![real.path];
        if let Some(n) = renamed
            && !names.contains(&n)
        {
            names.push(n);
        }
        Target::Elsewhere(names)
    }

    /// The resolved forms of the working directories and home, looked up once on the first
    /// file check: they are fixed for the session, and knowing them lets a path below one be
    /// resolved from there (fewer lookups) and renamed back to its configured form.
    /// Directories that do not exist yet are left out, so paths below them are resolved from
    /// the root each time.
    fn real_anchors(&self) -> &[(PathBuf, PathBuf)] {
        self.real_anchors.get_or_init(|| {
            let home = paths::normalise(&self.home);
            let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
            for d in self.work_dirs.iter().chain([&home]) {
                if !d.is_absolute() || out.iter().any(|(l, _)| l == d) {
                    continue;
                }
                if let Some(r) = paths::real_path(d, None)
                    && r.exists
                {
                    out.push((d.clone(), r.path));
                }
            }
            // Deepest first, so a path in a project under home starts from the project.
            out.sort_by_key(|(l, _)| std::cmp::Reverse(l.components().count()));
            out
        })
    }

    /// Names of a Bash file argument `a` relative to the command's `cwd`.
    fn arg_spellings(&self, a: &str, cwd: &Path) -> Spellings {
        let raw = paths::join(a, cwd, &self.home);
        self.spellings(paths::normalise(&raw), &raw, false)
    }

    fn path_facts(&self, op: FileOp, names: &Spellings, f: &mut Facts) {
        match op {
            FileOp::Read => {
                f.deny(names.any_hit(|p| self.deny.read_path(p)));
                f.ask(names.any_hit(|p| self.ask.read_path(p)));
                f.allow = first(f.allow, names.all_hit(|p| self.allow.read_path(p)));
                f.auto = Some(if names.all(|p| self.inside(p)) {
                    Auto::ReadOnly
                } else {
                    Auto::None
                });
            }
            FileOp::Write | FileOp::Notebook => {
                let read_deny = op == FileOp::Write;
                f.deny(names.any_hit(|p| {
                    let edit = self.deny.edit_path(p);
                    if read_deny {
                        first(edit, self.deny.read_path(p))
                    } else {
                        edit
                    }
                }));
                f.ask(names.any_hit(|p| self.ask.edit_path(p)));
                if let Some(p) = names.find(paths::is_protected) {
                    f.guard = Some(Guard::Protected(p.to_path_buf()));
                }
                f.allow = first(f.allow, names.all_hit(|p| self.allow.edit_path(p)));
                f.auto = Some(if names.all(|p| self.inside(p)) {
                    Auto::Edit
                } else {
                    Auto::None
                });
            }
        }
    }

    fn bash_facts(&self, command: &str, cwd: &Path, f: &mut Facts) {
        match &*self.parse_cache.get(command) {
            Ok(analysed) => self.commands_facts(analysed, cwd, f),
            Err(e) => {
                // Deny and ask rules still see the text; nothing can approve it but the
                // user, a hook or a bare `Bash` allow.
                let text = command.trim();
                self.command_rules(text, f);
                // A shell runs the lines and list elements before a syntax error, so deny and
                // ask also see each piece between control operators, as best the text shows.
                for piece in text.split(['\n', ';', '&', '|']) {
                    let piece = piece.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !piece.is_empty() && piece != text {
                        self.command_rules(&piece, f);
                    }
                }
                if f.allow.is_none() {
                    f.guard = Some(Guard::Opaque(e.to_string()));
                }
            }
        }
    }

    /// Deny and ask rules for one command form.
    fn command_rules(&self, form: &str, f: &mut Facts) {
        let keys = self.commands.keys(form);
        f.deny(
            self.commands
                .first(&self.deny, RuleKind::Deny, &keys, form, false),
        );
        f.ask(
            self.commands
                .first(&self.ask, RuleKind::Ask, &keys, form, false),
        );
    }

    fn commands_facts(&self, analysed: &Analysed, start_cwd: &Path, f: &mut Facts) {
        let parsed = &analysed.parsed;
        let mut cwd = start_cwd.to_path_buf();
        let mut cd_elsewhere = false;
        let mut all_covered = true;
        let mut needs_edit_mode = false;
        let mut allow_hit: Hit = None;
        let tool_allow = f.allow;
        let has_git = analysed.has_git;
        for (cmd, prep) in parsed.commands.iter().zip(&analysed.prepared) {
            let stripped = &cmd.words[prep.off..];
            let allow_form = &prep.allow_form;
            let raw_form = &prep.raw_form;
            let mut allow_keys = None;
            for (n, form) in prep.forms.iter().enumerate() {
                let keys = self.commands.keys(form);
                f.deny(
                    self.commands
                        .first(&self.deny, RuleKind::Deny, &keys, form, false),
                );
                f.ask(
                    self.commands
                        .first(&self.ask, RuleKind::Ask, &keys, form, false),
                );
                if n == 0 {
                    // `forms[0]` is the allow form; its keys serve the allow list below.
                    allow_keys = Some(keys);
                }
            }
            let allow_keys = allow_keys.unwrap_or_else(|| self.commands.keys(&prep.allow_form));

            let program = stripped.first().map(|p| bash::basename(p)).unwrap_or("");
            // Recognised file readers: their file arguments are reads (2.4).
            if bash::FILE_READERS.contains(&program) {
                for a in file_args(stripped, cmd) {
                    let names = self.arg_spellings(a, &cwd);
                    f.deny(names.any_hit(|p| self.deny.read_path(p)));
                    f.ask(names.any_hit(|p| self.ask.read_path(p)));
                }
            }
            if matches!(program, "rm" | "rmdir")
                && let Some(why) = self.critical_removal(stripped, cmd, &cwd)
            {
                f.guard = Some(Guard::Critical(why));
            }

            // Coverage for allow: a rule, the read-only set, or acceptEdits.
            let exact_only = prep.exact_only;
            let safe_env = prep.safe_env;
            let rule = if safe_env {
                let by_raw = if raw_form == allow_form {
                    None
                } else {
                    self.commands
                        .command(&self.allow, RuleKind::Allow, raw_form, exact_only)
                };
                let by_allow = self.commands.first(
                    &self.allow,
                    RuleKind::Allow,
                    &allow_keys,
                    allow_form,
                    exact_only,
                );
                first(by_allow, by_raw)
            } else {
                None
            };
            let mut covered = rule.is_some();
            if rule.is_some() && allow_hit.is_none() {
                allow_hit = rule;
            }
            if !covered && safe_env && !exact_only && !prep.dynamic_program {
                if self.read_only(stripped, cmd, &cwd, cd_elsewhere && has_git) {
                    covered = true;
                } else if self.accept_edits_command(stripped, cmd, &cwd, f) {
                    covered = true;
                    needs_edit_mode = true;
                }
            }
            if program == "cd" {
                match stripped.get(1) {
                    Some(t) if !cmd.dynamic => {
                        let next = paths::resolve(t, &cwd, &self.home);
                        if next != cwd {
                            cd_elsewhere = true;
                        }
                        cwd = next;
                    }
                    _ => cd_elsewhere = true,
                }
            }
            for r in &cmd.redirects {
                match self.redirect_cover(r, &cwd, f) {
                    Cover::Rule(h) => {
                        if allow_hit.is_none() {
                            allow_hit = h;
                        }
                    }
                    Cover::Edit => needs_edit_mode = true,
                    Cover::Free => {}
                    Cover::None => all_covered = false,
                }
            }
            all_covered &= covered;
        }
        for r in &parsed.orphan_redirects {
            match self.redirect_cover(r, &cwd, f) {
                Cover::Rule(h) => allow_hit = first(allow_hit, h),
                Cover::Edit => needs_edit_mode = true,
                Cover::Free => {}
                Cover::None => all_covered = false,
            }
        }
        if tool_allow.is_some() {
            return;
        }
        if all_covered {
            if needs_edit_mode {
                f.auto = Some(Auto::Edit);
            } else if let Some(h) = allow_hit {
                f.allow = Some(h);
            } else {
                f.auto = Some(Auto::ReadOnly);
            }
        }
    }

    fn read_only(
        &self,
        words: &[String],
        cmd: &SimpleCommand,
        cwd: &Path,
        cd_then_git: bool,
    ) -> bool {
        let Some(p) = words.first() else { return false };
        if p.contains('/') || !bash::read_only_flags_ok(words) {
            return false;
        }
        if p == "git" {
            // `cd elsewhere && git …` and `git -C dir` act on another repository.
            return !cd_then_git
                && bash::git_dir_option(words).is_none()
                && !cmd.dynamic
                && self.inside(cwd);
        }
        if bash::NON_PATH_ARGS.contains(&p.as_str()) {
            return true;
        }
        if cmd.dynamic {
            return false;
        }
        let args = file_args(words, cmd);
        if args.is_empty() {
            return self.inside(cwd);
        }
        args.iter().all(|a| {
            let names = self.arg_spellings(a, cwd);
            names.all(|p| self.inside(p)) && names.any_hit(|p| self.deny.read_path(p)).is_none()
        })
    }

    fn accept_edits_command(
        &self,
        words: &[String],
        cmd: &SimpleCommand,
        cwd: &Path,
        f: &mut Facts,
    ) -> bool {
        let Some(p) = words.first() else { return false };
        if !bash::ACCEPT_EDITS_COMMANDS.contains(&p.as_str())
            || cmd.dynamic
            || cmd.globbed.iter().any(|g| *g)
        {
            return false;
        }
        let args = file_args(words, cmd);
        if args.is_empty() {
            return false;
        }
        let mut ok = true;
        for a in args {
            // `rm link` and `mv link` act on the link itself, but `cp x link`, `touch link`
            // and `sed -i` reach the target; checking both is the safe reading for all.
            let names = self.arg_spellings(a, cwd);
            if p != "sed" {
                f.deny(names.any_hit(|q| first(self.deny.edit_path(q), self.deny.read_path(q))));
                f.ask(names.any_hit(|q| self.ask.edit_path(q)));
                if let Some(q) = names.find(paths::is_protected) {
                    f.guard = Some(Guard::Protected(q.to_path_buf()));
                    ok = false;
                }
            }
            ok &= names.all(|q| self.inside(q));
        }
        ok
    }

    fn redirect_cover(&self, r: &Redirect, cwd: &Path, f: &mut Facts) -> Cover {
        if matches!(
            r.target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) {
            return Cover::Free;
        }
        // A target the parser could not pin down (an expansion) names no real file, so it
        // is checked as written only.
        let names = if r.unknown {
            Spellings::lexical(paths::resolve(&r.target, cwd, &self.home))
        } else {
            self.arg_spellings(&r.target, cwd)
        };
        if r.write {
            f.deny(names.any_hit(|p| first(self.deny.edit_path(p), self.deny.read_path(p))));
            f.ask(names.any_hit(|p| self.ask.edit_path(p)));
            if r.unknown {
                return Cover::None;
            }
            if let Some(p) = names.find(paths::is_protected) {
                f.guard = Some(Guard::Protected(p.to_path_buf()));
                return Cover::None;
            }
            match names.all_hit(|p| self.allow.edit_path(p)) {
                Some(h) => Cover::Rule(Some(h)),
                None if names.all(|p| self.inside(p)) => Cover::Edit,
                None => Cover::None,
            }
        } else {
            f.deny(names.any_hit(|p| self.deny.read_path(p)));
            f.ask(names.any_hit(|p| self.ask.read_path(p)));
            if r.unknown {
                return Cover::None;
            }
            match names.all_hit(|p| self.allow.read_path(p)) {
                Some(h) => Cover::Rule(Some(h)),
                None if names.all(|p| self.inside(p)) => Cover::Free,
                None => Cover::None,
            }
        }
    }

    /// `rm`/`rmdir` of a critical path (spec 2.6): root, top-level dirs, home, the working
    /// directory and its parents, globs directly under an additional directory, globs under
    /// `"$VAR"/`.
    fn critical_removal(
        &self,
        words: &[String],
        cmd: &SimpleCommand,
        cwd: &Path,
    ) -> Option<String> {
        let off = cmd.words.len() - words.len();
        for (i, a) in words.iter().enumerate().skip(1) {
            if a.starts_with('-') {
                continue;
            }
            let globbed = cmd.globbed.get(off + i).copied().unwrap_or(false);
            let raw = cmd.raw_words.get(off + i).map(String::as_str).unwrap_or("");
            if globbed && (raw.starts_with('$') || raw.starts_with("\"$")) {
                return Some(format!("removing a glob under a variable ({raw})"));
            }
            let target = if globbed {
                let head: String = a
                    .split('/')
                    .take_while(|s| !s.contains(['*', '?', '[']))
                    .collect::<Vec<_>>()
                    .join("/");
                let head = if head.is_empty() && a.starts_with('/') {
                    "/".to_string()
                } else {
                    head
                };
                let dir =
                    paths::resolve(if head.is_empty() { "." } else { &head }, cwd, &self.home);
                if self.extra_dirs.contains(&dir) {
                    return Some(format!(
                        "removing a glob under additional directory {}",
                        dir.display()
                    ));
                }
                dir
            } else {
                paths::resolve(a, cwd, &self.home)
            };
            let depth = target.components().count();
            if depth <= 2
                || target == self.home
                || self
                    .work_dirs
                    .first()
                    .is_some_and(|w| w.starts_with(&target))
            {
                return Some(format!("removing critical path {}", target.display()));
            }
        }
        None
    }

    fn finish(&self, f: Facts, hook: Option<HookDecision>) -> Decision {
        let dont_ask = self.mode == Mode::DontAsk;
        if let Some(i) = f.deny {
            return self.ruled(Verdict::Deny, &self.deny, i, "denied by a deny rule");
        }
        if let Some(i) = f.ask {
            return if dont_ask {
                self.ruled(
                    Verdict::Deny,
                    &self.ask,
                    i,
                    "an ask rule matches and dontAsk mode denies prompts",
                )
            } else {
                self.ruled(Verdict::Ask, &self.ask, i, "an ask rule matches")
            };
        }
        if hook == Some(HookDecision::Ask) {
            return self.prompt("a PreToolUse hook asked for confirmation");
        }
        match &f.guard {
            Some(Guard::Critical(why)) => {
                return self.prompt(&format!("{why}: never approved automatically"));
            }
            Some(Guard::Interactive) => return self.prompt("this tool always needs the user"),
            Some(Guard::Protected(p)) if self.mode != Mode::BypassPermissions => {
                return self.prompt(&format!(
                    "{} is a protected path; writes to it are never approved automatically",
                    p.display()
                ));
            }
            _ => {}
        }
        if self.mode == Mode::BypassPermissions {
            return self.plain(Verdict::Allow, "bypassPermissions mode");
        }
        if hook == Some(HookDecision::Allow) {
            return self.plain(Verdict::Allow, "approved by a PreToolUse hook");
        }
        if let Some(Guard::Opaque(why)) = &f.guard {
            return self.prompt(&format!("cannot analyse this command ({why})"));
        }
        if let Some(i) = f.allow {
            return self.ruled(Verdict::Allow, &self.allow, i, "allowed by an allow rule");
        }
        match f.auto {
            Some(Auto::ReadOnly) => {
                return self.plain(Verdict::Allow, "read-only inside the working directories");
            }
            Some(Auto::Edit) if self.mode == Mode::AcceptEdits => {
                return self.plain(
                    Verdict::Allow,
                    "acceptEdits mode: edit inside the working directories",
                );
            }
            _ => {}
        }
        match self.mode {
            Mode::Plan => self.plain(Verdict::Ask, "plan mode: only reads run without asking"),
            _ => self.prompt("no rule allows this"),
        }
    }

    fn prompt(&self, reason: &str) -> Decision {
        if self.mode == Mode::DontAsk {
            self.plain(
                Verdict::Deny,
                &format!("{reason}; dontAsk mode denies anything that would prompt"),
            )
        } else {
            self.plain(Verdict::Ask, reason)
        }
    }

    fn plain(&self, decision: Verdict, reason: &str) -> Decision {
        Decision {
            decision,
            reason: reason.to_string(),
            rule: None,
            source: None,
        }
    }

    fn ruled(&self, decision: Verdict, set: &RuleSet, i: usize, reason: &str) -> Decision {
        let r = &set.rules[i];
        Decision {
            decision,
            reason: format!("{reason}: {}", r.text),
            rule: Some(r.text.clone()),
            source: self.sources.get(r.source).map(|s| s.name.clone()),
        }
    }
}

enum Cover {
    Rule(Hit),
    Edit,
    Free,
    None,
}

impl SimpleCommand {
    fn dynamic_in_program(&self) -> bool {
        self.raw_words
            .first()
            .is_some_and(|w| w.contains(['$', '`']))
    }
}

/// Non-option arguments of a command (after its name), excluding dynamic ones.
fn file_args<'a>(words: &'a [String], cmd: &SimpleCommand) -> Vec<&'a str> {
    let _ = cmd;
    let mut out = Vec::new();
    let mut after_dashdash = false;
    let program = words.first().map(String::as_str).unwrap_or("");
    // grep/rg/sed take a pattern or script first.
    let mut skip_first = matches!(program, "grep" | "egrep" | "fgrep" | "rg" | "sed");
    for a in words.iter().skip(1) {
        if !after_dashdash && a == "--" {
            after_dashdash = true;
            continue;
        }
        if !after_dashdash && a.starts_with('-') && a.len() > 1 {
            if program == "sed" && (a == "-e" || a == "-f") {
                skip_first = false;
            }
            continue;
        }
        if skip_first {
            skip_first = false;
            continue;
        }
        out.push(a.as_str());
    }
    out
}

/// The host of an http(s) URL.
fn host_of(url: &str) -> Option<&str> {
    let rest = url
        .trim()
        .split_once("://")
        .map(|(scheme, rest)| (scheme.to_ascii_lowercase(), rest))?;
    if rest.0 != "http" && rest.0 != "https" {
        return None;
    }
    let authority = rest.1.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}

struct Builder<'o> {
    opts: &'o Options,
    sources: Vec<Source>,
    warnings: Vec<Warning>,
    lists: [Vec<rules::Rule>; 3],
    extra_dirs: Vec<PathBuf>,
}

impl Builder<'_> {
    fn source(&mut self, name: String) -> usize {
        self.sources.push(Source { name });
        self.sources.len() - 1
    }

    fn flags(&mut self, managed_only: bool) {
        let cwd = self.opts.cwd.clone();
        if !self.opts.disallowed_tools.is_empty() {
            let src = self.source("--disallowedTools".into());
            for r in self.opts.disallowed_tools.clone() {
                self.rule(&r, RuleKind::Deny, src, &cwd, false);
            }
        }
        if !self.opts.allowed_tools.is_empty() && !managed_only {
            let src = self.source("--allowedTools".into());
            for r in self.opts.allowed_tools.clone() {
                self.rule(&r, RuleKind::Allow, src, &cwd, true);
            }
        }
    }

    fn rule(&mut self, text: &str, kind: RuleKind, src: usize, root: &Path, from_flag: bool) {
        let anchors = Anchors {
            cwd: &self.opts.cwd,
            home: &self.opts.home,
            source_root: root,
        };
        let name = self.sources[src].name.clone();
        let warn = |ws: &mut Vec<Warning>, p: Problem| {
            if !p.message.is_empty() {
                ws.push(Warning {
                    source: name.clone(),
                    message: format!("Permission {} rule ({name}): {}", kind.as_str(), p.message),
                });
            }
        };
        match rules::compile(text, kind, src, &anchors, from_flag) {
            Ok((rule, problem)) => {
                if let Some(p) = problem {
                    warn(&mut self.warnings, p);
                }
                if let Spec::Path { globs, .. } = &rule.spec
                    && !globs.iter().all(|g| rules::glob_ok(g))
                {
                    warn(
                        &mut self.warnings,
                        Problem {
                            message: format!("{text}: invalid glob; rule ignored"),
                            kept: false,
                        },
                    );
                    return;
                }
                let idx = match kind {
                    RuleKind::Deny => 0,
                    RuleKind::Ask => 1,
                    RuleKind::Allow => 2,
                };
                self.lists[idx].push(rule);
            }
            Err(p) => warn(&mut self.warnings, p),
        }
    }
}
