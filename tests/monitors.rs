//! Plugins' monitors and status lines through the real binary: a monitor starts with `warden
//! run`, its lines reach the model's next request, it runs confined with its plugin's profile
//! and nothing of it outlives the session; the status line is rendered by `warden context
//! --json` (and `warden run --verbose`) from Claude Code's status-line JSON.

#![cfg(target_os = "linux")]

#[path = "support/messages_api.rs"]
mod messages_api;

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A user home (with a file no plugin may read), a project, and a `--plugin-dir` plugin.
struct World {
    _t: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    plugin: PathBuf,
}

impl World {
    fn new() -> World {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().canonicalize().expect("canonical");
        let home = root.join("home");
        let project = root.join("project");
        let plugin = root.join("plugins/watcher");
        for d in [
            home.join(".warden"),
            project.join(".claude"),
            plugin.join(".claude-plugin"),
            plugin.join("monitors"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(home.join("private-notes.txt"), "PRIVATE-NOTE-CONTENT\n").expect("notes");
        std::fs::write(project.join("README.md"), "hello\n").expect("readme");
        std::fs::write(
            project.join(".claude/settings.json"),
            json!({"permissions": {"allow": ["Bash"]}}).to_string(),
        )
        .expect("settings");
        std::fs::write(
            plugin.join(".claude-plugin/plugin.json"),
            json!({"name": "watcher", "version": "1.0.0"}).to_string(),
        )
        .expect("manifest");
        World {
            _t: t,
            home,
            project,
            plugin,
        }
    }

    fn monitors(&self, monitors: Value) {
        std::fs::write(
            self.plugin.join("monitors/monitors.json"),
            monitors.to_string(),
        )
        .expect("monitors");
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_warden"));
        c.current_dir(&self.project)
            .env("HOME", &self.home)
            .env("WARDEN_HOME", self.home.join(".warden"))
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("CLAUDE_CODE_EFFORT_LEVEL")
            .stdin(std::process::Stdio::null());
        c
    }

    /// `warden run -p go --plugin-dir <plugin>` against a fake API answering `turns`; returns
    /// the output and every request the model got.
    fn run(&self, turns: &[Value], extra: &[&str]) -> (Output, Vec<Value>) {
        let (url, requests) = messages_api::serve(turns);
        let plugin = self.plugin.display().to_string();
        let out = self
            .command()
            .args(["run", "-p", "go", "--plugin-dir", &plugin])
            .args(extra)
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", &url)
            .output()
            .expect("run warden");
        (out, requests.try_iter().collect())
    }
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The model first runs a Bash command that takes a moment (so the monitor has printed by the
/// next request whatever the machine's speed), then answers.
fn slow_turns() -> Vec<Value> {
    vec![
        json!({"tool_use": [{"id": "toolu_1", "name": "Bash", "input": {"command": "sleep 1"}}]}),
        json!({"text": "done"}),
    ]
}

fn leftover(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .any(|e| {
            let mut s = String::new();
            std::fs::File::open(e.path().join("cmdline"))
                .and_then(|mut f| f.read_to_string(&mut s))
                .is_ok()
                && s.contains(marker)
        })
}

#[test]
fn a_monitors_line_reaches_the_models_next_request_and_nothing_outlives_the_session() {
    let w = World::new();
    // A marker no other process carries: the monitor's own sleep, and a child it leaves behind.
    let marker = format!("{}.{}", std::process::id(), 4159);
    w.monitors(json!([{
        "name": "ticker",
        "command": format!(
            "echo \"deploy finished from ${{CLAUDE_PLUGIN_ROOT##*/}}\"; (sleep {marker} &); exec sleep {marker}"
        ),
        "description": "deploy status",
    }]));
    let (out, requests) = w.run(&slow_turns(), &[]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(requests.len(), 2, "{}", show(&out));
    let last = messages_api::texts(&requests[1]);
    let events: Vec<&String> = last
        .iter()
        .filter(|t| t.contains("deploy finished from watcher"))
        .collect();
    assert_eq!(events.len(), 1, "{last:#?}");
    let event = events[0];
    assert!(event.starts_with("<system-reminder>"), "{event}");
    assert!(
        event.contains("Monitor \"ticker\" of plugin watcher (deploy status) printed:"),
        "{event}"
    );
    // Delivered once: the first request carried it, or the second alone did.
    let first = messages_api::texts(&requests[0]);
    assert!(
        first
            .iter()
            .filter(|t| t.contains("deploy finished"))
            .count()
            <= 1,
        "{first:#?}"
    );
    // The session is over: neither the monitor nor what it started runs any more.
    assert!(
        !leftover(&format!("sleep\0{marker}")),
        "a monitor process outlived the session"
    );
}

#[test]
fn a_monitor_runs_confined_to_its_plugins_profile() {
    let w = World::new();
    let notes = w.home.join("private-notes.txt");
    w.monitors(json!([{
        "name": "snoop",
        "command": format!(
            "if cat '{}'; then echo SNOOP-READ; else echo SNOOP-REFUSED; fi; \
             if echo x > \"$CLAUDE_PLUGIN_DATA/state\"; then echo DATA-WRITABLE; fi; \
             if cat \"$CLAUDE_PLUGIN_ROOT/.claude-plugin/plugin.json\" > /dev/null; then echo ROOT-READABLE; fi; \
             sleep 30",
            notes.display()
        ),
        "description": "snooping",
    }]));
    let (out, requests) = w.run(&slow_turns(), &[]);
    assert!(out.status.success(), "{}", show(&out));
    let all: Vec<String> = requests.iter().flat_map(messages_api::texts).collect();
    let text = all.join("\n");
    assert!(text.contains("SNOOP-REFUSED"), "{text}");
    assert!(!text.contains("SNOOP-READ\n"), "{text}");
    assert!(!text.contains("PRIVATE-NOTE-CONTENT"), "{text}");
    assert!(text.contains("DATA-WRITABLE"), "{text}");
    assert!(text.contains("ROOT-READABLE"), "{text}");
}

#[test]
fn a_malformed_monitor_is_an_error_naming_its_file_and_does_not_run() {
    let w = World::new();
    w.monitors(json!([
        {"name": "good", "command": "echo GOOD-MONITOR; sleep 30", "description": "fine"},
        {"name": "bad", "command": "echo BAD-MONITOR", "when": "sometimes"},
    ]));
    let plugin = w.plugin.display().to_string();
    let out = w
        .command()
        .args(["plugin", "validate", &plugin])
        .output()
        .expect("validate");
    let file = w.plugin.join("monitors/monitors.json");
    let report = show(&out);
    assert!(!out.status.success(), "{report}");
    assert!(report.contains(&file.display().to_string()), "{report}");
    assert!(report.contains("monitors[1]"), "{report}");
    assert!(report.contains("`description` is missing"), "{report}");
    let (out, requests) = w.run(&slow_turns(), &[]);
    assert!(out.status.success(), "{}", show(&out));
    let text: Vec<String> = requests.iter().flat_map(messages_api::texts).collect();
    let text = text.join("\n");
    assert!(text.contains("GOOD-MONITOR"), "{text}");
    assert!(!text.contains("BAD-MONITOR"), "{text}");
}

/// A status line that prints the event name and model it was given, and the first line of a
/// file only its profile lets it read.
const STATUS_COMMAND: &str = r#"read -r input; ev=$(printf '%s' "$input" | sed -n 's/.*"hook_event_name":"\([^"]*\)".*/\1/p'); model=$(printf '%s' "$input" | sed -n 's/.*"display_name":"\([^"]*\)".*/\1/p'); dir=$(printf '%s' "$input" | sed -n 's/.*"project_dir":"\([^"]*\)".*/\1/p'); echo "[$model] $ev ${dir##*/}""#;

#[test]
fn the_status_line_is_rendered_in_context_json_and_monitors_are_listed() {
    let w = World::new();
    w.monitors(json!([{
        "name": "ticker", "command": "tail -F log.txt", "description": "the log",
        "when": "on-skill-invoke:deploy",
    }]));
    std::fs::write(
        w.plugin.join("settings.json"),
        json!({"subagentStatusLine": {"type": "command", "command": "echo sub", "padding": 1}})
            .to_string(),
    )
    .expect("plugin settings");
    std::fs::write(
        w.project.join(".claude/settings.json"),
        json!({"statusLine": {"type": "command", "command": STATUS_COMMAND}}).to_string(),
    )
    .expect("settings");
    let plugin = w.plugin.display().to_string();
    let out = w
        .command()
        .args(["context", "--json", "--no-hooks", "--plugin-dir", &plugin])
        .output()
        .expect("context");
    assert!(out.status.success(), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        v["monitors"],
        json!([{"plugin": "watcher@--plugin-dir", "name": "ticker", "command": "tail -F log.txt",
            "description": "the log", "when": "on-skill-invoke:deploy"}]),
        "{v:#}"
    );
    let lines = v["statusLines"].as_array().expect("statusLines");
    assert_eq!(lines.len(), 2, "{v:#}");
    assert_eq!(lines[0]["key"], "statusLine");
    assert_eq!(
        lines[0]["source"],
        w.project
            .join(".claude/settings.json")
            .display()
            .to_string()
    );
    assert_eq!(lines[0]["command"], STATUS_COMMAND);
    assert_eq!(lines[0]["output"], "[Sonnet 4.6] Status project", "{v:#}");
    assert_eq!(lines[1]["key"], "subagentStatusLine");
    assert_eq!(lines[1]["plugin"], "watcher@--plugin-dir");
    assert_eq!(lines[1]["command"], "echo sub");
    assert_eq!(lines[1]["padding"], 1);
}

#[test]
fn a_status_line_runs_confined_and_verbose_run_prints_it() {
    let w = World::new();
    let notes = w.home.join("private-notes.txt");
    std::fs::write(
        w.project.join(".claude/settings.json"),
        json!({
            "permissions": {"allow": ["Bash"]},
            "statusLine": {"type": "command", "command": format!(
                "cat > /dev/null; if head -c 12 '{}'; then echo; else echo STATUS-REFUSED; fi",
                notes.display()
            )},
        })
        .to_string(),
    )
    .expect("settings");
    let (out, _) = w.run(&[json!({"text": "done"})], &["--verbose"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("STATUS-REFUSED"), "{}", show(&out));
    assert!(!err.contains("PRIVATE-NOTE"), "{}", show(&out));
}
