//! Status lines: `statusLine` (a settings file's, the highest-precedence one that sets it) and
//! `subagentStatusLine` (a settings file's, else the first enabled plugin's `settings.json`
//! or manifest `settings`; Claude Code does not document which wins, Warden lets the user's
//! files win). Each is `{type: "command", command, padding?}`
//! ([`warden_vocab::schema::features::StatusLineSpec`]).
//!
//! - **Input**: the command gets Claude Code's status-line JSON on standard input
//!   ([`StatusInput`]: `hook_event_name: "Status"`, `session_id`, `transcript_path`, `cwd`,
//!   `model {id, display_name}`, `workspace {current_dir, project_dir}`, `version`,
//!   `output_style {name}`, `cost {…}`, `context_window {…}`, `exceeds_200k_tokens`).
//! - **Output**: its standard output without the final newline is the status line (Claude
//!   Code shows each line as a row; ANSI colours are kept). It runs for at most
//!   [`TIMEOUT`]; a failure or a timeout renders nothing and is reported.
//! - **Where**: `warden context --json` renders `statusLine` and lists both (`statusLines`);
//!   `warden run --verbose` renders `statusLine` after each turn and prints it on stderr.
//!   Warden has no subagent panel, so `subagentStatusLine` is listed, never run.
//! - **Confined** like every program a plugin or a settings file starts
//!   ([`crate::session::processes`]): a settings file's with its scope's profile, a plugin's
//!   with the plugin's. `disableAllHooks: true` turns the status line off, as in Claude Code.

use std::io::{Read as _, Write as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use warden_vocab::schema::features::{StatusLineSpec, parse_status_line};

use crate::session::Session;
use crate::session::processes::ProcessOrigin;

/// How long a status-line command may run.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Most bytes of a status line kept.
const MAX_OUTPUT: usize = 64 * 1024;
/// The Claude Code version Warden answers for in `version`.
pub const CLAUDE_CODE_VERSION: &str = "2.1.332";

/// A configured status line and where it comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusLine {
    /// `statusLine` or `subagentStatusLine`.
    pub key: &'static str,
    /// The settings file that sets it, or `plugin:<name@marketplace>`.
    pub source: String,
    /// The plugin it comes from, if any.
    pub plugin: Option<String>,
    /// Its command, as written.
    pub command: String,
    /// Its `padding`.
    pub padding: Option<u64>,
    #[serde(skip)]
    origin: Option<ProcessOrigin>,
    #[serde(skip)]
    env: Vec<(String, String)>,
}

/// The status lines of `session` as configured, and the problems of those that are not used
/// (a malformed setting names its file).
pub fn configured(session: &Session) -> (Vec<StatusLine>, Vec<String>) {
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for key in ["statusLine", "subagentStatusLine"] {
        let from_settings = session.settings.scalar(key).and_then(|(_, f)| {
            let path = f.display_name();
            parse_status_line(&f.value, key, std::path::Path::new(&path))
                .map(|r| (r, path, f.scope))
        });
        match from_settings {
            Some((Ok(spec), path, scope)) => lines.push(settings_line(key, spec, path, scope)),
            Some((Err(e), ..)) => problems.push(e.to_string()),
            None if key == "subagentStatusLine" => {
                if let Some(p) = session
                    .plugins
                    .iter()
                    .find(|p| p.plugin.subagent_status_line.is_some())
                    && let Some(spec) = &p.plugin.subagent_status_line
                {
                    lines.push(StatusLine {
                        key,
                        source: format!("plugin:{}", p.id),
                        plugin: Some(p.id.clone()),
                        command: spec.command.clone(),
                        padding: spec.padding,
                        origin: Some(ProcessOrigin::Plugin {
                            id: p.id.clone(),
                            root: p.plugin.root.clone(),
                            data_dir: p.data_dir.clone(),
                        }),
                        env: vec![
                            (
                                "CLAUDE_PLUGIN_ROOT".into(),
                                p.plugin.root.display().to_string(),
                            ),
                            (
                                "CLAUDE_PLUGIN_DATA".into(),
                                p.data_dir.display().to_string(),
                            ),
                        ],
                    });
                }
            }
            None => {}
        }
    }
    (lines, problems)
}

fn settings_line(
    key: &'static str,
    spec: StatusLineSpec,
    path: String,
    scope: warden_config::Scope,
) -> StatusLine {
    StatusLine {
        key,
        source: path,
        plugin: None,
        command: spec.command,
        padding: spec.padding,
        origin: Some(ProcessOrigin::Settings(scope)),
        env: Vec::new(),
    }
}

/// What the status-line command reads on standard input, in Claude Code's shape.
#[derive(Debug, Clone, Serialize)]
pub struct StatusInput {
    /// Always `Status`.
    pub hook_event_name: &'static str,
    /// The session's id.
    pub session_id: String,
    /// The transcript file.
    pub transcript_path: String,
    /// The working directory.
    pub cwd: String,
    /// The model.
    pub model: StatusModel,
    /// The directories.
    pub workspace: StatusWorkspace,
    /// The Claude Code version Warden answers for.
    pub version: &'static str,
    /// The output style.
    pub output_style: StatusOutputStyle,
    /// What the session cost so far.
    pub cost: StatusCost,
    /// The context window's use.
    pub context_window: StatusContextWindow,
    /// Whether the last request's input passed 200k tokens.
    pub exceeds_200k_tokens: bool,
}

/// `model`.
#[derive(Debug, Clone, Serialize)]
pub struct StatusModel {
    /// The model id.
    pub id: String,
    /// Its display name.
    pub display_name: String,
}

/// `workspace`.
#[derive(Debug, Clone, Serialize)]
pub struct StatusWorkspace {
    /// The current directory.
    pub current_dir: String,
    /// The project directory.
    pub project_dir: String,
}

/// `output_style`.
#[derive(Debug, Clone, Serialize)]
pub struct StatusOutputStyle {
    /// Its name (`default`, or the style the `outputStyle` setting or a plugin chose: see
    /// [`crate::output_style`]).
    pub name: String,
}

/// `cost`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatusCost {
    /// USD so far.
    pub total_cost_usd: f64,
    /// Since the session started.
    pub total_duration_ms: u64,
    /// Waiting on the model.
    pub total_api_duration_ms: u64,
    /// Lines added by edits (not counted by Warden: 0).
    pub total_lines_added: u64,
    /// Lines removed by edits (not counted by Warden: 0).
    pub total_lines_removed: u64,
}

/// `context_window`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatusContextWindow {
    /// Input tokens so far.
    pub total_input_tokens: u64,
    /// Output tokens so far.
    pub total_output_tokens: u64,
    /// The window's size.
    pub context_window_size: u64,
    /// The last request's usage, `null` before the first.
    pub current_usage: Option<Value>,
    /// Of the window, used by the last request (`null` before the first).
    pub used_percentage: Option<f64>,
    /// Of the window, left (`null` before the first).
    pub remaining_percentage: Option<f64>,
}

impl StatusInput {
    /// The input for `session` before any request, with `model` and `transcript_path`.
    pub fn new(session: &Session, model: &str, transcript_path: &str) -> StatusInput {
        let cwd = session.cwd.display().to_string();
        StatusInput {
            hook_event_name: "Status",
            session_id: session.session_id.clone(),
            transcript_path: transcript_path.to_string(),
            cwd: cwd.clone(),
            model: StatusModel {
                id: model.to_string(),
                display_name: display_name(model),
            },
            workspace: StatusWorkspace {
                current_dir: cwd.clone(),
                project_dir: cwd,
            },
            version: CLAUDE_CODE_VERSION,
            output_style: StatusOutputStyle {
                name: crate::output_style::select(session)
                    .0
                    .map_or_else(|| crate::output_style::DEFAULT.to_string(), |s| s.name),
            },
            cost: StatusCost::default(),
            context_window: StatusContextWindow {
                context_window_size: 200_000,
                ..StatusContextWindow::default()
            },
            exceeds_200k_tokens: false,
        }
    }
}

/// `claude-sonnet-4-5` → `Sonnet 4.5`, as Claude Code names its models; other ids as they are.
pub fn display_name(model: &str) -> String {
    let Some(rest) = model.strip_prefix("claude-") else {
        return model.to_string();
    };
    let mut parts = rest.split('-');
    let Some(family) = parts.next() else {
        return model.to_string();
    };
    let version: Vec<&str> = parts
        .take_while(|p| p.len() <= 2 && p.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let mut name: String = family
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect();
    if !version.is_empty() {
        name.push(' ');
        name.push_str(&version.join("."));
    }
    name
}

/// Runs `line`'s command, confined, with `input` on its standard input: its output without
/// the final newline, or why there is none.
pub fn render(session: &Session, line: &StatusLine, input: &StatusInput) -> Result<String, String> {
    if session.settings.flag("disableAllHooks") {
        return Err("not run: `disableAllHooks` is set".into());
    }
    let stdin = serde_json::to_vec(input).map_err(|e| e.to_string())?;
    let project = session.cwd.display().to_string();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&line.command)
        .current_dir(&session.cwd)
        .env("CLAUDECODE", "1")
        .env("CLAUDE_CODE_CHILD_SESSION", "1")
        .env("CLAUDE_PROJECT_DIR", &project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &line.env {
        cmd.env(k, v);
    }
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let guard = match &line.origin {
        Some(origin) => session
            .process_profiles()
            .confine(origin, &mut cmd, Some(TIMEOUT))?,
        None => None,
    };
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", line.command))?;
    if let Some(mut w) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = w.write_all(&stdin);
        });
    }
    let collect = |r: Option<Box<dyn std::io::Read + Send>>| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let kept = buf.clone();
        let handle = r.map(|mut r| {
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut k) = kept.lock() {
                        let room = MAX_OUTPUT.saturating_sub(k.len());
                        k.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            })
        });
        (buf, handle)
    };
    let (out, out_h) = collect(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    );
    let (err, err_h) = collect(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    );
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                crate::session::processes::end_started(child.id(), guard.is_some());
                let _ = child.wait();
                break None;
            }
        }
    };
    for h in [out_h, err_h].into_iter().flatten() {
        let _ = h.join();
    }
    let text = |b: &Arc<Mutex<Vec<u8>>>| {
        b.lock()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let (stdout, stderr) = (text(&out), text(&err));
    let failed = !status.is_some_and(|s| s.success());
    let notes = guard.map(|g| g.finish(failed, &stderr)).unwrap_or_default();
    match status {
        None => Err(format!("timed out after {} s", TIMEOUT.as_secs())),
        Some(s) if !s.success() => {
            let mut why = format!(
                "`{}` failed ({s}): {}",
                line.command,
                warden_vocab::text::first_line(stderr.trim())
            );
            for n in notes {
                why.push_str("; ");
                why.push_str(&n);
            }
            Err(why)
        }
        Some(_) => Ok(stdout.trim_end_matches(['\n', '\r']).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_get_claude_codes_display_names() {
        assert_eq!(display_name("claude-sonnet-4-5"), "Sonnet 4.5");
        assert_eq!(display_name("claude-opus-4-1-20250805"), "Opus 4.1");
        assert_eq!(display_name("gpt-4o"), "gpt-4o");
    }
}
