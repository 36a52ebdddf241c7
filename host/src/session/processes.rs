//! The OS confinement of every program a plugin or a project starts: command hooks (from
//! plugins, and from project, local, user, managed and `--settings` files), stdio MCP
//! servers of plugins and of a project's `.mcp.json`, and plugins' language servers.
//!
//! | who started it | reads | writes | network |
//! |---|---|---|---|
//! | a plugin | system and toolchain directories (`warden_confine::SYSTEM_READABLE`, `HOME_READABLE`), `sandbox.readablePaths`, its own root, the project minus `.env`, `.env.*` and Read-denied paths | its data directory (`CLAUDE_PLUGIN_DATA`, created 0700), a private temporary directory, and what it was granted (`[processes]` in `warden.toml`, `warden plugin grant NAME --write PATH`) | only when granted |
//! | a project's or the user's settings | the same, without a plugin root; user, managed and `--settings` hooks also read Claude Code's configuration directory and Warden's home (credentials hidden) | the project, as the Bash tool's programs: minus denied and protected paths (`.git/config`, `.claude/`, …) | `sandbox.network` |
//!
//! Credential stores in the home stay hidden from all of them, every process of a hook call
//! ends with the call (a server's with the session), and protected paths a call changed are
//! put back. A plugin never writes the project unless granted; a project's or the user's
//! formatter hook works as it did.
//!
//! **Opting out is the user's.** `"sandbox": {"confinePlugins": false}` runs all of them as
//! Claude Code does; `{"confinePlugins": {"name@marketplace": false}}` one plugin (its id or
//! its name). Only user, managed and `--settings` files count: a repository's
//! `.claude/settings.json` and `.claude/settings.local.json` cannot switch confinement off.
//! Where the kernel cannot confine, the program is not started and the reason is given,
//! unless the user set `sandbox.allowUnconfined`, as for the Bash tool.
//!
//! **Refusals explain themselves.** When a confined program fails and its stderr shows the
//! sandbox refused a path (`Permission denied`, `EACCES`, `Read-only file system`, …) or the
//! network, a line naming who was refused, what, and the exact command (or setting) that
//! would allow it is added to its stderr, which `warden hook --verbose`, the hook result and
//! `warden mcp list` show. A plugin's lines are also kept (the last 20, under Warden's home:
//! see [`super::refusals`]) for `warden plugin details`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use warden_config::Scope;
use warden_hooks::{ConfinedChild, ConfinedProcess, HookSource, Launch, ProcessConfiner};

use super::Session;

/// Grace the supervisor gives past a hook's own timeout before it ends everything itself, in
/// case the host lost track of the call.
const BACKSTOP_GRACE: Duration = Duration::from_secs(5);

/// How long a search for the paths the rules deny is reused by later programs of the session.
/// A new file matching a rule's glob is covered from the next search on; `.env` and `.env.*`
/// are matched anew at every start.
const DENIED_PATHS_TTL: Duration = Duration::from_secs(2);

/// Who a program is started for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessOrigin {
    /// An enabled plugin (or a `--plugin-dir` one): its id, root and data directory.
    Plugin {
        /// `name@marketplace`.
        id: String,
        /// `CLAUDE_PLUGIN_ROOT`.
        root: PathBuf,
        /// `CLAUDE_PLUGIN_DATA`.
        data_dir: PathBuf,
    },
    /// A settings file of this scope (its hooks), or a project `.mcp.json` (scope project).
    Settings(Scope),
}

impl ProcessOrigin {
    /// The origin of a hook handler.
    pub fn of_hook(source: &HookSource) -> ProcessOrigin {
        let plugin = match source {
            HookSource::Plugin(p) => Some(p),
            HookSource::Skill { plugin, .. } | HookSource::Agent { plugin, .. } => plugin.as_ref(),
            HookSource::Settings { .. } | HookSource::Session { .. } => None,
        };
        match (plugin, source) {
            (Some(p), _) => ProcessOrigin::Plugin {
                id: p.id.clone(),
                root: p.root.clone(),
                data_dir: p.data_dir.clone(),
            },
            (None, HookSource::Settings { scope, .. }) => ProcessOrigin::Settings(*scope),
            // A skill's or agent's own hooks come from project or user files; the project's
            // profile is the narrower of the two.
            (None, _) => ProcessOrigin::Settings(Scope::Project),
        }
    }

    /// How the user refers to it in messages.
    pub fn describe(&self) -> String {
        match self {
            ProcessOrigin::Plugin { id, .. } => format!("plugin `{id}`"),
            ProcessOrigin::Settings(scope) => {
                format!("a hook from {} settings", scope_name(*scope))
            }
        }
    }
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Cli => "--settings",
        other => other.as_str(),
    }
}

/// The `sandbox.confinePlugins` setting, from the files the user controls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginSandboxSettings {
    /// `confinePlugins: false`: nothing is confined.
    pub off: bool,
    /// `confinePlugins: {"<id or name>": false}`: these plugins are not confined.
    pub unconfined: BTreeSet<String>,
}

impl PluginSandboxSettings {
    /// Reads it from user, managed and `--settings` files, highest precedence first.
    pub fn from_settings(settings: &warden_config::Settings) -> Self {
        let mut out = PluginSandboxSettings::default();
        let mut flag_seen = false;
        for f in settings
            .files
            .iter()
            .filter(|f| matches!(f.scope, Scope::User | Scope::Managed | Scope::Cli))
        {
            match f.value.get("sandbox").and_then(|s| s.get("confinePlugins")) {
                Some(Value::Bool(b)) if !flag_seen => {
                    out.off = !b;
                    flag_seen = true;
                }
                Some(Value::Object(m)) => {
                    for (k, v) in m {
                        if v == &Value::Bool(false) {
                            out.unconfined.insert(k.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Whether programs of `origin` run unconfined by the user's choice.
    pub fn opted_out(&self, origin: &ProcessOrigin) -> bool {
        if self.off {
            return true;
        }
        match origin {
            ProcessOrigin::Plugin { id, .. } => {
                let name = id.split('@').next().unwrap_or(id);
                self.unconfined.contains(id) || self.unconfined.contains(name)
            }
            ProcessOrigin::Settings(_) => false,
        }
    }
}

/// Everything needed to confine the programs of one session, gathered once from its
/// settings, rules and plugins (a server started late in the session sees the same).
pub struct ProcessProfiles {
    project: PathBuf,
    sandbox: crate::runtime::ProcessConfinement,
    plugins: PluginSandboxSettings,
    claude_dir: Option<PathBuf>,
    warden_home: PathBuf,
    /// Plugin id → what the user granted its programs.
    grants: std::collections::HashMap<String, crate::runtime::Grant>,
    rules: Result<Arc<warden_permissions::Permissions>, String>,
    denied: Mutex<Option<(Instant, Arc<warden_permissions::DeniedPaths>)>>,
}

impl std::fmt::Debug for ProcessProfiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessProfiles")
            .field("project", &self.project)
            .field("plugins", &self.plugins)
            .finish_non_exhaustive()
    }
}

impl ProcessProfiles {
    pub(super) fn of(session: &Session) -> Self {
        let grants = session
            .plugins
            .iter()
            .filter_map(|p| {
                let grant = p.grant.as_ref()?;
                let caps = grant.component(warden_plugins::PROCESSES_GRANT_KEY)?;
                // The grant was for the bytes the user approved: a copy changed since (what
                // `warden plugin verify` reports as tampered) gets the default profile only.
                if warden_plugins::digest::tree_digest(&p.plugin.root).ok()? != grant.digest {
                    return None;
                }
                Some((
                    p.id.clone(),
                    super::resolve_grant(caps, &p.plugin.root, &p.data_dir, &session.cwd),
                ))
            })
            .collect();
        ProcessProfiles {
            project: resolved(&session.cwd),
            sandbox: session.process_confinement().clone(),
            plugins: PluginSandboxSettings::from_settings(&session.settings),
            claude_dir: session.opts.claude_config.dir().map(Path::to_path_buf),
            warden_home: session.home.root().to_path_buf(),
            grants,
            rules: session.rules().map_err(|e| e.to_string()),
            denied: Mutex::new(None),
        }
    }

    /// The `sandbox.confinePlugins` setting.
    pub fn plugin_sandbox(&self) -> &PluginSandboxSettings {
        &self.plugins
    }

    /// The paths the rules deny in the project (Read and Edit deny and ask rules: nobody can
    /// answer while a hook or server runs).
    fn denied(&self) -> Result<Arc<warden_permissions::DeniedPaths>, String> {
        if let Ok(last) = self.denied.lock()
            && let Some((at, d)) = last.as_ref()
            && at.elapsed() < DENIED_PATHS_TTL
        {
            return Ok(d.clone());
        }
        let rules = self.rules.as_ref().map_err(Clone::clone)?;
        let found = rules
            .denied_paths(std::slice::from_ref(&self.project), true)
            .map_err(|e| e.to_string())?;
        let found = Arc::new(found);
        if let Ok(mut last) = self.denied.lock() {
            *last = Some((Instant::now(), found.clone()));
        }
        Ok(found)
    }

    /// Whether the contents of `path` may be handed to a plugin's program (a language server's
    /// `didOpen`): never a `.env` or `.env.*` file, nor a path the rules deny reading (Read
    /// deny and ask rules, as for the programs' own sandbox). `Err` says why not.
    pub fn may_show(&self, path: &Path) -> Result<(), String> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == ".env" || name.starts_with(".env.") {
            return Err(format!(
                "{} is a .env file, which plugin programs are never shown",
                path.display()
            ));
        }
        let path = resolved(path);
        let denied = self
            .denied()
            .map_err(|e| format!("cannot work out which paths the rules deny: {e}"))?;
        if denied.read.iter().any(|d| path.starts_with(resolved(d))) {
            return Err(format!(
                "{}: the permission rules deny reading it, so plugin programs are not shown it",
                path.display()
            ));
        }
        Ok(())
    }

    /// Builds the confinement of a program started for `origin`, `None` when the user opted
    /// it out. `timeout` bounds every process of the call (none for a server).
    #[cfg(target_os = "linux")]
    ///
    /// `named` are files the program's own command line names, made readable for a program
    /// of the user's own settings (their hook scripts, wherever they keep them); ignored for
    /// any other origin, so a repository cannot read a file by naming it.
    pub fn profile(
        &self,
        origin: &ProcessOrigin,
        timeout: Option<Duration>,
        named: &[PathBuf],
    ) -> Result<Option<warden_confine::Confinement>, String> {
        use warden_confine::{Confinement, PROJECT_DENIED};

        if self.plugins.opted_out(origin) {
            return Ok(None);
        }
        let sandbox = &self.sandbox;
        let project = &self.project;
        let mut c = Confinement::new().system_defaults();
        if let Some(home) = &sandbox.home {
            c = c.home_defaults(home);
        }
        for p in &sandbox.readable {
            c = c.read(p);
        }
        let denied = self
            .denied()
            .map_err(|e| format!("cannot work out which paths the rules deny: {e}"))?;
        let (network, project_writable) = match origin {
            ProcessOrigin::Plugin { id, root, data_dir } => {
                c = c.read(root);
                warden_vocab::fs::create_private_dir(data_dir).map_err(|e| {
                    format!(
                        "cannot create the data directory {}: {e}",
                        data_dir.display()
                    )
                })?;
                c = c.write(data_dir);
                let none = crate::runtime::Grant::default();
                let grant = self.grants.get(id).unwrap_or(&none);
                let mut project_writable = false;
                for g in &grant.fs {
                    let path = resolved(&g.path);
                    if g.write && project.starts_with(&path) {
                        // The project or a directory above it: the project's protections hold
                        // however wide the grant is written.
                        project_writable = true;
                        if &path != project {
                            c = c.write(&path);
                        }
                    } else if g.write {
                        c = c.write(&path);
                    } else {
                        c = c.read(&path);
                    }
                }
                let network = grant.net.iter().any(|n| n == warden_plugins::ANY_NETWORK);
                (network, project_writable)
            }
            ProcessOrigin::Settings(scope) => {
                if matches!(scope, Scope::User | Scope::Managed | Scope::Cli) {
                    // The user's own hook scripts live beside their settings, or where the
                    // command names them.
                    if let Some(dir) = &self.claude_dir {
                        c = c.read(dir).deny(dir.join(".credentials.json"));
                    }
                    c = c.read(&self.warden_home);
                    for f in named.iter().filter(|f| f.is_file()) {
                        c = c.read(f);
                    }
                }
                (sandbox.network, true)
            }
        };
        c = if project_writable {
            c.project(project)
        } else {
            let mut c = c.read(project);
            for d in PROJECT_DENIED {
                c = c.deny(project.join(d));
            }
            c
        };
        for p in &denied.read {
            c = c.deny(p);
        }
        for p in &denied.write {
            c = c.read(p);
        }
        // The scripts hooks and servers start: a hook must not leave the next one a payload.
        for p in &sandbox.read_only {
            c = c.read_only(p);
        }
        c = c.network(network);
        if let Some(t) = timeout {
            c = c.timeout(t.saturating_add(BACKSTOP_GRACE));
        }
        Ok(Some(c))
    }

    /// Confines `cmd`, a program started for `origin`. `Ok(None)`: it runs unconfined (the
    /// user opted it out, or allowed unconfined programs where the kernel cannot confine).
    pub fn confine(
        &self,
        origin: &ProcessOrigin,
        cmd: &mut std::process::Command,
        timeout: Option<Duration>,
    ) -> Result<Option<ProcessGuard>, String> {
        #[cfg(target_os = "linux")]
        {
            use warden_confine::ConfineError;
            let words: Vec<&std::ffi::OsStr> = std::iter::once(cmd.get_program())
                .chain(cmd.get_args())
                .collect();
            let named = self.named_paths(origin, &words);
            let Some(profile) = self.profile(origin, timeout, &named)? else {
                return Ok(None);
            };
            match profile.confine(cmd) {
                Ok(guard) => Ok(Some(ProcessGuard {
                    guard: Some(guard),
                    explainer: self.explainer(origin),
                })),
                Err(ConfineError::Unsupported { .. } | ConfineError::NoSeccomp)
                    if self.sandbox.allow_unconfined =>
                {
                    Ok(None)
                }
                Err(e) => Err(format!(
                    "{} cannot be confined, so it was not started: {e}",
                    origin.describe()
                )),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (cmd, timeout);
            if self.plugins.opted_out(origin) || self.sandbox.allow_unconfined {
                return Ok(None);
            }
            Err(format!(
                "{} cannot be confined on this operating system (Warden confines programs on Linux 6.2 or later), so it was not started; set `sandbox.allowUnconfined: true` in your user settings to run it unconfined",
                origin.describe()
            ))
        }
    }

    /// Files outside the usual profile that a user-settings program names (its script, and
    /// `~/…`/`$HOME/…` paths the shell will expand): they become readable for it.
    fn named_paths(&self, origin: &ProcessOrigin, words: &[&std::ffi::OsStr]) -> Vec<PathBuf> {
        match origin {
            ProcessOrigin::Settings(Scope::User | Scope::Managed | Scope::Cli) => {
                let words = || words.iter().filter_map(|a| a.to_str());
                let home = self.sandbox.home.as_ref().map(|h| resolved(h));
                let anchors = super::launched::Anchors {
                    project: &self.project,
                    home: home.as_deref(),
                    plugin_root: None,
                };
                let mut in_home = std::collections::BTreeSet::new();
                for w in words() {
                    anchors.files_in_shell(w, &mut in_home);
                }
                words().flat_map(absolute_paths).chain(in_home).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Starts `program` for `origin`, confined, without copying this process's memory (see
    /// `warden_confine::Confinement::spawn`). `Ok(None)`: it runs unconfined (the user opted it
    /// out, or allowed unconfined programs where the kernel cannot confine); the caller
    /// starts it.
    #[cfg(target_os = "linux")]
    pub fn spawn(
        &self,
        origin: &ProcessOrigin,
        program: &warden_confine::Program,
        timeout: Option<Duration>,
    ) -> Result<Option<(warden_confine::Child, ProcessGuard)>, String> {
        use warden_confine::{ConfineError, SpawnError};
        let words: Vec<&std::ffi::OsStr> = std::iter::once(program.get_program())
            .chain(program.get_args())
            .collect();
        let named = self.named_paths(origin, &words);
        let Some(profile) = self.profile(origin, timeout, &named)? else {
            return Ok(None);
        };
        match profile.spawn(program) {
            Ok((child, guard)) => Ok(Some((
                child,
                ProcessGuard {
                    guard: Some(guard),
                    explainer: self.explainer(origin),
                },
            ))),
            Err(SpawnError::Confine(
                ConfineError::Unsupported { .. } | ConfineError::NoSeccomp,
            )) if self.sandbox.allow_unconfined => Ok(None),
            Err(SpawnError::Confine(e)) => Err(format!(
                "{} cannot be confined, so it was not started: {e}",
                origin.describe()
            )),
            Err(SpawnError::Start(e)) => Err(format!(
                "cannot start `{}`: {e}",
                program.get_program().to_string_lossy()
            )),
        }
    }

    /// What explains a refusal of the sandbox to a program of `origin`.
    pub fn explainer(&self, origin: &ProcessOrigin) -> Explainer {
        let mut readable: Vec<PathBuf> = vec![self.project.clone()];
        #[cfg(target_os = "linux")]
        readable.extend(warden_confine::SYSTEM_READABLE.iter().map(PathBuf::from));
        if let ProcessOrigin::Plugin { root, .. } = origin {
            readable.push(root.clone());
        }
        readable.extend(self.sandbox.readable.iter().cloned());
        let log = match origin {
            ProcessOrigin::Plugin { data_dir, .. } => data_dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| super::refusals::log_path(&self.warden_home, n)),
            ProcessOrigin::Settings(_) => None,
        };
        Explainer {
            origin: origin.clone(),
            readable,
            log,
        }
    }
}

/// Turns a confined program's stderr into lines that say what the sandbox refused and how to
/// allow it.
#[derive(Debug, Clone)]
pub struct Explainer {
    origin: ProcessOrigin,
    /// Where the program could read: a refusal there was a write.
    readable: Vec<PathBuf>,
    /// A plugin's refusal log, which `warden plugin details` shows.
    log: Option<PathBuf>,
}

/// Phrases programs print when the kernel refused a path.
const PATH_REFUSALS: &[&str] = &[
    "Permission denied",
    "permission denied",
    "EACCES",
    "EPERM",
    "Operation not permitted",
    "Read-only file system",
    "EROFS",
];

/// Phrases programs print when they could not reach the network.
const NETWORK_REFUSALS: &[&str] = &[
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "Network is unreachable",
    "ENETUNREACH",
    "Failed to connect",
    "Failed to establish a new connection",
    "socket.gaierror",
    "connect EACCES",
    "connect EPERM",
];

impl Explainer {
    /// Lines for `stderr`, empty when nothing in it looks like the sandbox's doing. A
    /// plugin's lines are added to its refusal log.
    pub fn explain(&self, stderr: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        let mut network = false;
        for line in stderr.lines() {
            if NETWORK_REFUSALS.iter().any(|p| line.contains(p))
                || (line.contains("connect") && PATH_REFUSALS.iter().any(|p| line.contains(p)))
            {
                network = true;
                continue;
            }
            if !PATH_REFUSALS.iter().any(|p| line.contains(p)) {
                continue;
            }
            let mut paths = absolute_paths(line);
            // A program reporting a refusal names itself first (`/bin/sh: 1: /srv/tc/tool:
            // Permission denied`): the refused path is a later one, and the program's own
            // path must not be offered as something to grant.
            if paths.len() > 1 && line.starts_with(&format!("{}:", paths[0].display())) {
                paths.remove(0);
            }
            for path in paths {
                if seen.insert(path.clone()) {
                    out.push(self.path_line(&path));
                }
            }
        }
        if network {
            out.push(self.network_line());
        }
        if let Some(log) = &self.log {
            // Best effort: the explanation reaches the user whether or not it could be kept.
            let _ = super::refusals::record(log, &out);
        }
        out
    }

    fn path_line(&self, path: &Path) -> String {
        let write = self.readable.iter().any(|r| path.starts_with(r));
        let what = if write { "writing" } else { "reading" };
        let how = match (&self.origin, toolchain_hint(path, write)) {
            // A toolchain outside the readable list is no plugin's business: the user's
            // setting opens it to every program; a grant stays the narrower way.
            (ProcessOrigin::Plugin { id, .. }, Some(hint)) => format!(
                "{hint}; or, for this plugin only: {}",
                grant_hint(id, &format!("--read {}", shell_word(&path.display().to_string())))
                    .trim_start_matches("to allow it: ")
            ),
            (ProcessOrigin::Settings(_), Some(hint)) => hint,
            _ => match &self.origin {
            ProcessOrigin::Plugin { id, .. } => grant_hint(
                id,
                &format!(
                    "--{} {}",
                    if write { "write" } else { "read" },
                    shell_word(&path.display().to_string())
                ),
            ),
            ProcessOrigin::Settings(_) if !write => format!(
                "to allow it, add {} to `sandbox.readablePaths` in your user settings (warden's settings.json)",
                shell_word(&path.display().to_string())
            ),
            ProcessOrigin::Settings(_) => "only the project (minus protected paths), the hook's private temporary directory and `sandbox.readablePaths` (read) are open to hooks from settings; `\"sandbox\": {\"confinePlugins\": false}` in your user settings runs them unconfined".to_string(),
            },
        };
        format!(
            "warden: the sandbox refused {} {what} {}; {how}",
            self.origin.describe(),
            path.display()
        )
    }

    fn network_line(&self) -> String {
        let how = match &self.origin {
            ProcessOrigin::Plugin { id, .. } => grant_hint(id, "--network"),
            ProcessOrigin::Settings(_) => {
                "to allow it, set `\"sandbox\": {\"network\": true}` in your user settings"
                    .to_string()
            }
        };
        format!(
            "warden: the sandbox refused {} the network; {how}",
            self.origin.describe()
        )
    }
}

/// The `sandbox.readablePaths` hint for a read of `path` that only the readable list refused
/// (see [`warden_confine::hint`]); `None` for a write, and for paths the setting must not open.
fn toolchain_hint(path: &Path, write: bool) -> Option<String> {
    #[cfg(target_os = "linux")]
    if !write {
        let home = warden_vocab::home_dir();
        return warden_confine::hint::readable_paths_hint(path, home.as_deref());
    }
    let _ = (path, write);
    None
}

/// The command that grants `flags` to plugin `id`. A plugin loaded with `--plugin-dir` has
/// no grant to add to: it has to be installed first.
fn grant_hint(id: &str, flags: &str) -> String {
    match id.strip_suffix("@--plugin-dir") {
        Some(name) => format!(
            "a plugin loaded with --plugin-dir gets the default profile only; to allow it, install it (warden plugin install) and run: warden plugin grant {name} {flags}"
        ),
        None => format!("to allow it: warden plugin grant {id} {flags}"),
    }
}

/// Absolute paths named in a line of an error message (`cat: /x: Permission denied`,
/// `PermissionError: [Errno 13] Permission denied: '/x y'`, `EACCES: permission denied, open
/// '/x'`): quoted ones whole, others up to the next space or punctuation.
fn absolute_paths(line: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut rest = line;
    let mut push = |w: &str| {
        let w = w.trim_end_matches([':', '.', ';', ',']);
        if w.starts_with('/') && w.len() > 1 {
            out.push(PathBuf::from(w));
        }
    };
    while let Some(i) = rest.find(['\'', '"', '`', '/']) {
        let c = rest[i..].chars().next().unwrap_or('/');
        if c == '/' {
            // An unquoted path, unless it is inside a word (`a/b`).
            let before = rest[..i].chars().next_back();
            let end = rest[i..]
                .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ')' | ']'))
                .map_or(rest.len(), |e| i + e);
            if before.is_none_or(|b| b.is_whitespace() || matches!(b, '(' | '[' | '=')) {
                push(&rest[i..end]);
            }
            rest = &rest[end..];
        } else {
            let body = &rest[i + 1..];
            match body.find(c) {
                Some(e) => {
                    push(&body[..e]);
                    rest = &body[e + 1..];
                }
                None => rest = body,
            }
        }
    }
    out
}

/// `path` with symlinks and `..` resolved where it exists (Landlock rules follow them anyway),
/// as given otherwise.
fn resolved(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | '~'))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Ends a program started with [`ProcessProfiles::confine`] in its own process group (the
/// caller still waits for it): a confined one through its supervisor, which kills every
/// process of the call (`warden_confine::end_call`); an unconfined one by killing its group.
pub fn end_started(pid: u32, confined: bool) {
    #[cfg(target_os = "linux")]
    if confined {
        let _ = warden_confine::end_call(pid);
        return;
    }
    let _ = confined;
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: killpg(2) only sends a signal, to the group the caller started for this
        // program (not yet reaped, so its number is still the caller's).
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// A confined program's confinement, until it has ended.
pub struct ProcessGuard {
    #[cfg(target_os = "linux")]
    guard: Option<warden_confine::Guard>,
    #[cfg(not(target_os = "linux"))]
    guard: Option<std::convert::Infallible>,
    explainer: Explainer,
}

impl ProcessGuard {
    /// Call once every process has ended (the supervisor was waited for): puts protected
    /// paths back, and returns lines for the user: what was restored, and, when the program
    /// failed, what the sandbox refused it.
    pub fn finish(mut self, failed: bool, stderr: &str) -> Vec<String> {
        let mut notes = Vec::new();
        #[cfg(target_os = "linux")]
        if let Some(g) = self.guard.take() {
            match g.finish() {
                Ok(restored) => notes.extend(restored.iter().map(|p| {
                    format!(
                        "warden: {} changed {}, which is protected; it was put back",
                        self.explainer.origin.describe(),
                        p.display()
                    )
                })),
                Err(e) => notes.push(format!(
                    "warden: after {} ran, a protected path could not be put back: {e}",
                    self.explainer.origin.describe()
                )),
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = self.guard.take();
        if failed {
            notes.extend(self.explainer.explain(stderr));
        }
        notes
    }

    /// What explains refusals to this program.
    pub fn explainer(&self) -> &Explainer {
        &self.explainer
    }
}

impl ConfinedProcess for ProcessGuard {
    fn finish(self: Box<Self>, exit_code: Option<i32>, stderr: &str) -> Vec<String> {
        ProcessGuard::finish(*self, exit_code != Some(0), stderr)
    }
}

/// Confines a session's command hooks.
pub(crate) struct HookConfiner {
    pub(crate) profiles: Arc<ProcessProfiles>,
}

/// A hook's confined process, for the dispatcher.
#[cfg(target_os = "linux")]
struct HookChild(warden_confine::Child);

#[cfg(target_os = "linux")]
impl ConfinedChild for HookChild {
    fn take_stdio(&mut self) -> [Option<std::os::fd::OwnedFd>; 3] {
        [
            self.0.stdin.take(),
            self.0.stdout.take(),
            self.0.stderr.take(),
        ]
    }

    fn wait(
        &mut self,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = std::io::Result<std::process::ExitStatus>> + Send + '_,
        >,
    > {
        Box::pin(self.0.wait_async())
    }

    fn end(&mut self) {
        let _ = self.0.end();
    }
}

impl ProcessConfiner for HookConfiner {
    #[cfg(target_os = "linux")]
    fn spawn(
        &self,
        source: &HookSource,
        launch: &Launch<'_>,
        timeout: Duration,
    ) -> Result<Option<(Box<dyn ConfinedChild>, Box<dyn ConfinedProcess>)>, String> {
        use warden_confine::{Program, Stdio};
        let origin = ProcessOrigin::of_hook(source);
        let mut program = Program::new(launch.program);
        program
            .args(launch.args)
            .current_dir(launch.cwd)
            .stdin(Stdio::Piped)
            .stdout(Stdio::Piped)
            .stderr(Stdio::Piped);
        for (k, v) in launch.env {
            program.env(k, v);
        }
        Ok(self
            .profiles
            .spawn(&origin, &program, Some(timeout))?
            .map(|(child, guard)| {
                (
                    Box::new(HookChild(child)) as Box<dyn ConfinedChild>,
                    Box::new(guard) as Box<dyn ConfinedProcess>,
                )
            }))
    }

    #[cfg(not(target_os = "linux"))]
    fn spawn(
        &self,
        source: &HookSource,
        _launch: &Launch<'_>,
        timeout: Duration,
    ) -> Result<Option<(Box<dyn ConfinedChild>, Box<dyn ConfinedProcess>)>, String> {
        let origin = ProcessOrigin::of_hook(source);
        let mut cmd = std::process::Command::new("true");
        self.profiles
            .confine(&origin, &mut cmd, Some(timeout))
            .map(|_| None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin() -> ProcessOrigin {
        ProcessOrigin::Plugin {
            id: "fmt@market".into(),
            root: "/plugins/fmt".into(),
            data_dir: "/data/fmt".into(),
        }
    }

    #[test]
    fn refusals_name_the_grant_that_allows_them() {
        let e = Explainer {
            origin: plugin(),
            readable: vec!["/work/project".into()],
            log: None,
        };
        let lines = e.explain(
            "cat: /root/.ssh/id_rsa: Permission denied\n\
             bash: /work/project/out.txt: Permission denied\n\
             PermissionError: [Errno 13] Permission denied: '/opt/x y'\n\
             curl: (6) Could not resolve host: example.com\n",
        );
        assert_eq!(
            lines,
            [
                "warden: the sandbox refused plugin `fmt@market` reading /root/.ssh/id_rsa; to allow it: warden plugin grant fmt@market --read /root/.ssh/id_rsa",
                "warden: the sandbox refused plugin `fmt@market` writing /work/project/out.txt; to allow it: warden plugin grant fmt@market --write /work/project/out.txt",
                "warden: the sandbox refused plugin `fmt@market` reading /opt/x y; to allow it: warden plugin grant fmt@market --read '/opt/x y'",
                "warden: the sandbox refused plugin `fmt@market` the network; to allow it: warden plugin grant fmt@market --network",
            ]
        );
        assert!(e.explain("all good\n").is_empty());
    }

    #[test]
    fn the_program_reporting_a_refusal_is_not_what_was_refused() {
        let e = Explainer {
            origin: plugin(),
            readable: vec!["/bin".into()],
            log: None,
        };
        let lines = e.explain(
            "/bin/sh: 1: /opt/tc/bin/tool: Permission denied\n\
             /root/private: Permission denied\n",
        );
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].contains("reading /opt/tc/bin/tool;") && !lines[0].contains("/bin/sh"),
            "{lines:#?}"
        );
        assert!(lines[1].contains("reading /root/private;"), "{lines:#?}");
    }

    #[test]
    fn only_user_controlled_files_opt_out() {
        let s = PluginSandboxSettings {
            off: false,
            unconfined: ["fmt".to_string()].into_iter().collect(),
        };
        assert!(s.opted_out(&plugin()));
        assert!(!s.opted_out(&ProcessOrigin::Settings(Scope::Project)));
    }
}
