//! Plugins' monitors (`experimental.monitors`, see [`warden_vocab::schema::features`]): shell
//! commands run in the background for the session's life, each line of whose standard output
//! is an event for the model.
//!
//! - **When**: a monitor with `when: "always"` starts when the conversation starts (before
//!   `SessionStart` fires); one with `when: "on-skill-invoke:<skill>"` the first time the
//!   plugin's skill `<plugin>:<skill>` is invoked. Claude Code runs monitors in the
//!   interactive CLI only; Warden runs them in `warden run` too (print mode included), which is
//!   the point of declaring them.
//! - **How**: `/bin/sh -c <command>` in the project directory, with `${CLAUDE_PLUGIN_ROOT}`,
//!   `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` replaced in the command and exported,
//!   `CLAUDECODE=1`, `CLAUDE_CODE_CHILD_SESSION=1` and `CLAUDE_CODE_SESSION_ID`; other
//!   `${VAR}` forms are left to the shell, which sees the same environment. As in Claude Code
//!   (≥ 2.1.207), a command naming `${user_config.…}` is refused and no
//!   `CLAUDE_PLUGIN_OPTION_*` variable is set. Unlike Claude Code, which runs monitors
//!   unsandboxed, every monitor runs confined with its plugin's profile
//!   ([`crate::session::processes`]: the plugin root and project readable, its
//!   `CLAUDE_PLUGIN_DATA` writable, no network unless granted), by a supervisor that ends every
//!   process it started with it.
//! - **Events**: each line of standard output (standard error is kept to explain what the
//!   sandbox refused) is queued; before the main conversation's next model request the queued
//!   lines are added to the last user message as one `<system-reminder>` naming the plugin, the
//!   monitor and its description (Claude Code delivers them as notifications in the chat; their
//!   exact wording is not documented). Lines still queued when the session ends are dropped.
//! - **End**: [`Monitors::stop`] (from `Session::close`, and on drop) ends every monitor and
//!   everything it started; nothing is left running.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use warden_vocab::schema::features::{MonitorSpec, MonitorWhen};

use crate::session::Session;
use crate::session::processes::{ProcessGuard, ProcessOrigin, ProcessProfiles};

/// Longest line kept of a monitor's output; the rest of the line is cut.
const MAX_LINE_CHARS: usize = 4_000;
/// Most events queued between two model requests; later ones are counted, not kept.
const MAX_QUEUED: usize = 200;
/// Most bytes of a monitor's standard error kept to explain a refusal.
const MAX_STDERR: usize = 16 * 1024;

/// One line a monitor printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorEvent {
    /// The plugin's name.
    pub plugin: String,
    /// The monitor's name.
    pub monitor: String,
    /// The monitor's description.
    pub description: String,
    /// The line, without its newline.
    pub line: String,
}

/// A monitor as configured, for listings (`warden context --json`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MonitorRow {
    /// `name@marketplace` of its plugin.
    pub plugin: String,
    /// Its name.
    pub name: String,
    /// Its command, as written.
    pub command: String,
    /// Its description.
    pub description: String,
    /// `always` or `on-skill-invoke:<skill>`.
    pub when: String,
}

/// The monitors of the enabled plugins, as configured (listing them starts none).
pub fn configured(session: &Session) -> Vec<MonitorRow> {
    session
        .plugins
        .iter()
        .flat_map(|p| {
            p.plugin.monitors.iter().map(|m| MonitorRow {
                plugin: p.id.clone(),
                name: m.name.clone(),
                command: m.command.clone(),
                description: m.description.clone(),
                when: m.when.as_written(),
            })
        })
        .collect()
}

/// What starting a plugin's monitors needs of it.
struct PluginMonitors {
    id: String,
    name: String,
    root: PathBuf,
    data_dir: PathBuf,
    specs: Vec<MonitorSpec>,
}

#[derive(Default)]
struct Queue {
    events: Vec<MonitorEvent>,
    dropped: usize,
}

struct Running {
    label: String,
    child: Child,
    /// Confined: the child is the supervisor, ended with SIGTERM. Unconfined: its own process
    /// group, killed.
    guard: Option<ProcessGuard>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

/// A session's running monitors and the events they queued.
pub struct Monitors {
    /// Taken from the session only when a plugin has monitors: gathering the profiles is
    /// work a session without monitors should not pay for.
    profiles: Option<Arc<ProcessProfiles>>,
    project: PathBuf,
    session_id: String,
    plugins: Vec<PluginMonitors>,
    started: Mutex<Vec<(String, String)>>,
    running: Mutex<Vec<Running>>,
    queue: Arc<Mutex<Queue>>,
    problems: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Monitors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitors")
            .field("plugins", &self.plugins.len())
            .finish_non_exhaustive()
    }
}

impl Monitors {
    /// The monitors of `session`'s enabled plugins; none runs yet.
    pub fn new(session: &Session) -> Monitors {
        let plugins: Vec<PluginMonitors> = session
            .plugins
            .iter()
            .filter(|p| !p.plugin.monitors.is_empty())
            .map(|p| PluginMonitors {
                id: p.id.clone(),
                name: p.plugin.name.clone(),
                root: p.plugin.root.clone(),
                data_dir: p.data_dir.clone(),
                specs: p.plugin.monitors.clone(),
            })
            .collect();
        Monitors {
            profiles: (!plugins.is_empty()).then(|| session.process_profiles().clone()),
            project: session.cwd.clone(),
            session_id: session.session_id.clone(),
            plugins,
            started: Mutex::new(Vec::new()),
            running: Mutex::new(Vec::new()),
            queue: Arc::new(Mutex::new(Queue::default())),
            problems: Mutex::new(Vec::new()),
        }
    }

    /// Starts every `when: "always"` monitor (once). Returns the problems of those that could
    /// not start.
    pub fn start_always(&self) -> Vec<String> {
        self.start_matching(|_, w| matches!(w, MonitorWhen::Always))
    }

    /// Starts the monitors waiting for the skill `name` (`plugin:skill`) to be invoked (once).
    pub fn skill_invoked(&self, name: &str) -> Vec<String> {
        self.start_matching(|plugin, w| match w {
            MonitorWhen::OnSkillInvoke(skill) => name == format!("{plugin}:{skill}"),
            MonitorWhen::Always => false,
        })
    }

    fn start_matching(&self, pick: impl Fn(&str, &MonitorWhen) -> bool) -> Vec<String> {
        let mut problems = Vec::new();
        for p in &self.plugins {
            for m in &p.specs {
                if !pick(&p.name, &m.when) {
                    continue;
                }
                let key = (p.id.clone(), m.name.clone());
                match self.started.lock() {
                    Ok(mut s) if !s.contains(&key) => s.push(key),
                    _ => continue,
                }
                match self.start(p, m) {
                    Ok(r) => {
                        if let Ok(mut running) = self.running.lock() {
                            running.push(r);
                        }
                    }
                    Err(e) => problems.push(format!(
                        "monitor `{}` of plugin `{}` not started: {e}",
                        m.name, p.id
                    )),
                }
            }
        }
        if let Ok(mut all) = self.problems.lock() {
            all.extend(problems.iter().cloned());
        }
        problems
    }

    fn start(&self, p: &PluginMonitors, m: &MonitorSpec) -> Result<Running, String> {
        if m.command.contains("${user_config.") {
            return Err(
                "its command names `${user_config.…}`, which monitors may not use (Claude Code refuses it too)"
                    .into(),
            );
        }
        let root = p.root.display().to_string();
        let data = p.data_dir.display().to_string();
        let project = self.project.display().to_string();
        let vars = [
            ("CLAUDE_PLUGIN_ROOT", &root),
            ("CLAUDE_PLUGIN_DATA", &data),
            ("CLAUDE_PROJECT_DIR", &project),
        ];
        let mut command = m.command.clone();
        for (k, v) in vars {
            command = command.replace(&format!("${{{k}}}"), v);
        }
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&command)
            .current_dir(&self.project)
            .env_remove("CLAUDE_ENV_FILE")
            .env("CLAUDECODE", "1")
            .env("CLAUDE_CODE_CHILD_SESSION", "1")
            .env("CLAUDE_CODE_SESSION_ID", &self.session_id)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        {
            use std::os::unix::process::CommandExt as _;
            cmd.process_group(0);
        }
        let origin = ProcessOrigin::Plugin {
            id: p.id.clone(),
            root: p.root.clone(),
            data_dir: p.data_dir.clone(),
        };
        let profiles = self
            .profiles
            .as_ref()
            .ok_or("the session gathered no process profiles")?;
        let guard = profiles.confine(&origin, &mut cmd, None)?;
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start `/bin/sh -c {command}`: {e}"))?;
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let queue = self.queue.clone();
            let plugin = p.name.clone();
            let monitor = m.name.clone();
            let description = m.description.clone();
            readers.push(std::thread::spawn(move || {
                let mut reader = BufReader::new(out);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    let text = String::from_utf8_lossy(&buf);
                    let line = text.trim_end_matches(['\n', '\r']);
                    if line.trim().is_empty() {
                        continue;
                    }
                    let line: String = line.chars().take(MAX_LINE_CHARS).collect();
                    if let Ok(mut q) = queue.lock() {
                        if q.events.len() < MAX_QUEUED {
                            q.events.push(MonitorEvent {
                                plugin: plugin.clone(),
                                monitor: monitor.clone(),
                                description: description.clone(),
                                line,
                            });
                        } else {
                            q.dropped += 1;
                        }
                    }
                }
            }));
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut err) = child.stderr.take() {
            let kept = stderr.clone();
            readers.push(std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = err.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut k) = kept.lock() {
                        let room = MAX_STDERR.saturating_sub(k.len());
                        k.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            }));
        }
        Ok(Running {
            label: format!("monitor `{}` of plugin `{}`", m.name, p.id),
            child,
            guard,
            stderr,
            readers,
        })
    }

    /// The events queued since the last call, and how many were dropped past the queue's
    /// limit.
    pub fn take_events(&self) -> (Vec<MonitorEvent>, usize) {
        match self.queue.lock() {
            Ok(mut q) => (
                std::mem::take(&mut q.events),
                std::mem::take(&mut q.dropped),
            ),
            Err(_) => (Vec::new(), 0),
        }
    }

    /// The problems met starting monitors so far.
    pub fn problems(&self) -> Vec<String> {
        self.problems.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// How many monitors run (or ran and were not stopped yet).
    pub fn running(&self) -> usize {
        self.running.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Ends every monitor and everything it started, and waits for them. Returns lines for the
    /// user: protected paths put back, and for a monitor that had failed on its own, what the
    /// sandbox refused it.
    pub fn stop(&self) -> Vec<String> {
        let running = match self.running.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(_) => return Vec::new(),
        };
        let mut notes = Vec::new();
        for mut r in running {
            // Exited on its own before the session ended: a failure is worth explaining.
            let failed = matches!(r.child.try_wait(), Ok(Some(s)) if !s.success());
            end(&mut r.child, r.guard.is_some());
            let _ = r.child.wait();
            for h in r.readers {
                let _ = h.join();
            }
            let stderr = r
                .stderr
                .lock()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            if let Some(g) = r.guard {
                notes.extend(g.finish(failed, &stderr));
            } else if failed && !stderr.trim().is_empty() {
                notes.push(format!(
                    "warden: {} failed: {}",
                    r.label,
                    warden_vocab::text::first_line(&stderr)
                ));
            }
        }
        notes
    }
}

impl Drop for Monitors {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Ends a monitor: a confined one through its supervisor (which kills every process of it),
/// an unconfined one by killing its process group.
fn end(child: &mut Child, confined: bool) {
    if matches!(child.try_wait(), Ok(Some(_))) && confined {
        return;
    }
    crate::session::processes::end_started(child.id(), confined);
}

/// The reminder that carries queued events to the model.
pub fn reminder(events: &[MonitorEvent], dropped: usize) -> String {
    let mut text = String::new();
    let mut last: Option<(&str, &str)> = None;
    for e in events {
        if last != Some((e.plugin.as_str(), e.monitor.as_str())) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "Monitor \"{}\" of plugin {} ({}) printed:\n",
                e.monitor, e.plugin, e.description
            ));
            last = Some((e.plugin.as_str(), e.monitor.as_str()));
        }
        text.push_str(&e.line);
        text.push('\n');
    }
    if dropped > 0 {
        text.push_str(&format!(
            "({dropped} more monitor lines were dropped: at most {MAX_QUEUED} are kept between two requests)\n"
        ));
    }
    crate::agent::prompt::reminder(&text)
}
