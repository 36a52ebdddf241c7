//! The core loop with the scripted model: one session per lifecycle path (allowed, denied by a
//! hook, denied by a rule, an ask nobody can answer, a failing tool, Stop hooks forcing
//! continuation up to the cap, a subagent, a prompt hook, an API error, a slash command,
//! parallel calls), and `warden run` end to end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

#[path = "support/messages_api.rs"]
mod messages_api;

use serde_json::{Value, json};
use warden::agent::model::ScriptedDriver;
use warden::agent::{Conversation, ConversationOptions, LoopEvent, Recorder, TurnEnd};
use warden::session::{DenyAsker, Session, SessionOptions, ToolStatus};
use warden_config::Home;
use warden_model::{Block, Role};

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dir: PathBuf,
}

impl Project {
    fn new(settings: Value) -> Project {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        let dir = root.join("project");
        std::fs::create_dir_all(dir.join(".claude")).expect("mkdir");
        std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).expect("write");
        std::fs::write(dir.join("README.md"), "hello from the readme\n").expect("write");
        Project {
            _tmp: tmp,
            root,
            dir,
        }
    }

    fn session(&self) -> Arc<Session> {
        let mut opts = SessionOptions::new(&self.dir, Home::new(self.root.join("home")));
        opts.user_home = Some(self.root.clone());
        opts.managed_dir = None;
        opts.runtime.cache_dir = None;
        opts.claude_config =
            warden_config::ClaudeConfig::Off(warden_config::ClaudeConfigOff::NotRequested);
        Arc::new(Session::load(&opts))
    }

    /// A project subagent `.claude/agents/<name>.md`.
    fn agent(&self, name: &str, description: &str, extra: &str, body: &str) {
        std::fs::create_dir_all(self.dir.join(".claude/agents")).expect("mkdir");
        std::fs::write(
            self.dir.join(format!(".claude/agents/{name}.md")),
            format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"),
        )
        .expect("agent");
    }

    /// A hook command that appends its stdin (one JSON line) to `log` and then runs `then`.
    fn logging_hook(&self, log: &str, then: &str) -> String {
        let path = self.dir.join(format!("{log}.sh"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n{then}\n",
                self.log_path(log).display()
            ),
        )
        .expect("write hook");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        path.display().to_string()
    }

    /// Inside the project: hooks from the project's settings run confined to it.
    fn log_path(&self, log: &str) -> PathBuf {
        let dir = self.dir.join(".hook-logs");
        let _ = std::fs::create_dir_all(&dir);
        dir.join(format!("{log}.jsonl"))
    }

    /// Every hook input `log` recorded.
    fn log(&self, log: &str) -> Vec<Value> {
        std::fs::read_to_string(self.log_path(log))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("hook input is JSON"))
            .collect()
    }
}

fn hook(command: &str) -> Value {
    json!([{"hooks": [{"type": "command", "command": command}]}])
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio")
}

struct Run {
    end: TurnEnd,
    events: Vec<LoopEvent>,
    messages: Vec<warden_model::Message>,
    transcript: PathBuf,
}

impl Run {
    fn tool_calls(&self) -> Vec<&warden::session::ToolOutcome> {
        self.events
            .iter()
            .filter_map(|e| match e {
                LoopEvent::ToolCall { outcome, .. } => Some(outcome.as_ref()),
                _ => None,
            })
            .collect()
    }

    /// The tool results the model got, in order: (content, is_error).
    fn results(&self) -> Vec<(String, bool)> {
        self.messages
            .iter()
            .filter(|m| m.role == Role::User)
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                Block::ToolResult {
                    content, is_error, ..
                } => Some((content.clone(), *is_error)),
                _ => None,
            })
            .collect()
    }
}

fn converse(p: &Project, script: &str, prompt: &str, opts: ConversationOptions) -> Run {
    let driver = Arc::new(ScriptedDriver::parse(script, "test script").expect("script"));
    let recorder = Arc::new(Recorder::default());
    let mut c = Conversation::new(p.session(), driver, Arc::new(DenyAsker), opts)
        .with_observer(recorder.clone());
    let rt = rt();
    let report = rt.block_on(c.send(prompt));
    rt.block_on(c.end("other"));
    Run {
        end: report.end,
        events: recorder.events(),
        messages: c.messages().to_vec(),
        transcript: c.transcript_path().to_path_buf(),
    }
}

fn opts() -> ConversationOptions {
    ConversationOptions {
        max_turns: 10,
        ..ConversationOptions::default()
    }
}

#[test]
fn an_allowed_call_runs_and_every_lifecycle_event_fires_in_order() {
    let p = Project::new(json!({}));
    let log = p.logging_hook("events", "true");
    let events = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "Stop",
        "SessionEnd",
    ];
    let mut hooks = serde_json::Map::new();
    for e in events {
        hooks.insert(e.into(), hook(&log));
    }
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Read"]}, "hooks": hooks}).to_string(),
    )
    .expect("settings");
    let run = converse(
        &p,
        r#"
turns:
  - text: Reading it.
    tool_use: [{ id: toolu_1, name: Read, input: { file_path: README.md } }]
  - text: It says hello.
"#,
        "What does the README say?",
        opts(),
    );
    assert_eq!(
        run.end,
        TurnEnd::Completed {
            text: "It says hello.".into()
        }
    );
    let (content, is_error) = &run.results()[0];
    assert!(
        !is_error && content.contains("hello from the readme"),
        "{content}"
    );
    let seen: Vec<String> = p
        .log("events")
        .iter()
        .map(|v| {
            v["hook_event_name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(seen, events);
    let log = p.log("events");
    let transcript = run.transcript.display().to_string();
    for v in &log {
        assert_eq!(v["transcript_path"], transcript.as_str());
        assert_eq!(v["session_id"], log[0]["session_id"]);
    }
    assert_eq!(log[1]["prompt"], "What does the README say?");
    // A prompt id from the first prompt on, the same for every event of its turn.
    assert!(log[0].get("prompt_id").is_none());
    let prompt_id = log[1]["prompt_id"].as_str().expect("prompt_id");
    assert!(
        log[2..6].iter().all(|v| v["prompt_id"] == prompt_id),
        "{log:?}"
    );
    assert_eq!(log[2]["tool_use_id"], "toolu_1");
    let batch = &log[4]["tool_calls"];
    assert_eq!(batch[0]["tool_name"], "Read");
    assert!(
        batch[0]["tool_response"]
            .as_str()
            .is_some_and(|r| r.contains("hello from the readme"))
    );
    assert_eq!(log[5]["stop_hook_active"], false);
    assert_eq!(log[5]["last_assistant_message"], "It says hello.");
    assert_eq!(log[6]["reason"], "other");

    // The transcript is JSONL a reader of Claude Code transcripts understands.
    let lines: Vec<Value> = std::fs::read_to_string(&run.transcript)
        .expect("transcript written")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(kinds, ["user", "assistant", "user", "assistant"]);
    assert_eq!(lines[1]["message"]["content"][1]["type"], "tool_use");
    assert_eq!(lines[2]["message"]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(lines[3]["parentUuid"], lines[2]["uuid"]);
}

#[test]
fn a_hook_denial_reaches_the_model_and_nothing_runs() {
    let p = Project::new(json!({}));
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "no shell today"}});
    let h = p.logging_hook("pre", &format!("echo '{deny}'"));
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash"]},
               "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": h}]}]}})
        .to_string(),
    )
    .expect("settings");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use: [{ name: Bash, input: { command: "touch made-it" } }]
  - text: Understood.
"#,
        "make a file",
        opts(),
    );
    assert!(matches!(run.end, TurnEnd::Completed { .. }));
    let (content, is_error) = &run.results()[0];
    assert!(*is_error && content.contains("no shell today"), "{content}");
    assert!(!p.dir.join("made-it").exists(), "the denied command ran");
    assert!(
        run.tool_calls()[0]
            .source
            .as_deref()
            .is_some_and(|s| s.contains("PreToolUse hook"))
    );
}

#[test]
fn a_deny_rule_holds_and_an_ask_with_nobody_to_answer_is_a_denial() {
    let p = Project::new(json!({"permissions": {
        "deny": ["Read(./secret.txt)"], "ask": ["Bash(touch *)"]}}));
    std::fs::write(p.dir.join("secret.txt"), "s3cret\n").expect("write");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use:
      - { name: Read, input: { file_path: secret.txt } }
      - { name: Bash, input: { command: "touch asked" } }
  - text: Both refused.
"#,
        "go",
        opts(),
    );
    // The model is told in Claude Code's words; the trace keeps the rule.
    let results = run.results();
    assert_eq!(
        results[0],
        ("Permission to use Read has been denied.".into(), true)
    );
    assert_eq!(
        run.tool_calls()[0].rule.as_deref(),
        Some("Read(./secret.txt)")
    );
    assert_eq!(results[1], ("This command requires approval".into(), true));
    assert!(!p.dir.join("asked").exists());
}

#[test]
fn a_failing_tool_fires_post_tool_use_failure_and_the_model_sees_the_error() {
    let p = Project::new(json!({}));
    let h = p.logging_hook("failure", "true");
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash"]},
               "hooks": {"PostToolUseFailure": hook(&h)}})
        .to_string(),
    )
    .expect("settings");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use: [{ name: Bash, input: { command: "ls no-such-dir" } }]
  - text: It failed.
"#,
        "list",
        opts(),
    );
    assert!(run.results()[0].1);
    assert!(matches!(
        run.tool_calls()[0].status,
        ToolStatus::Failed { .. }
    ));
    let log = p.log("failure");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["tool_name"], "Bash");
    assert!(log[0]["error"].as_str().is_some_and(|e| !e.is_empty()));
}

#[test]
fn a_stop_hook_forces_continuation_until_the_cap() {
    let p = Project::new(json!({}));
    let h = p.logging_hook("stop", "echo 'keep going' >&2; exit 2");
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"hooks": {"Stop": hook(&h)}}).to_string(),
    )
    .expect("settings");
    let run = converse(
        &p,
        r#"
turns:
  - text: done 1
  - text: done 2
  - text: done 3
  - text: never used
"#,
        "finish",
        ConversationOptions {
            stop_block_cap: Some(2),
            ..opts()
        },
    );
    let blocked = run
        .events
        .iter()
        .filter(|e| matches!(e, LoopEvent::StopBlocked { .. }))
        .count();
    assert_eq!(blocked, 2);
    assert_eq!(
        run.end,
        TurnEnd::Completed {
            text: "done 3".into()
        }
    );
    let log = p.log("stop");
    let active: Vec<bool> = log
        .iter()
        .map(|v| v["stop_hook_active"].as_bool().expect("bool"))
        .collect();
    assert_eq!(active, [false, true, true]);
    // The reason went back to the model as the next user message.
    let fed: Vec<String> = run
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .collect();
    assert!(
        fed.iter()
            .any(|t| t.contains("Stop hook feedback:\nkeep going")),
        "{fed:?}"
    );
}

#[test]
fn a_subagent_runs_its_own_loop_with_its_prompt_and_tools() {
    let p = Project::new(json!({"permissions": {"allow": ["Read", "Bash"]}}));
    p.agent("reader", "Reads files", "tools: Read\n", "You only read.");
    let h = p.logging_hook("sub", "true");
    let mut settings: Value = serde_json::from_str(
        &std::fs::read_to_string(p.dir.join(".claude/settings.json")).expect("read"),
    )
    .expect("json");
    settings["hooks"] = json!({
        "SubagentStart": hook(&h), "SubagentStop": hook(&h), "PreToolUse": hook(&h)});
    std::fs::write(p.dir.join(".claude/settings.json"), settings.to_string()).expect("write");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use:
      - name: Agent
        input: { description: read it, prompt: "Summarise README.md", subagent_type: reader }
  - for: agent:reader
    tool_use:
      - { name: Read, input: { file_path: README.md } }
      - { name: Bash, input: { command: "touch from-agent" } }
  - for: agent:reader
    text: The README greets you.
  - text: The reader says it greets you.
"#,
        "summarise",
        opts(),
    );
    assert!(
        matches!(run.end, TurnEnd::Completed { .. }),
        "{:?}",
        run.end
    );
    let (content, is_error) = &run.results()[0];
    assert!(!is_error);
    assert_eq!(content, "The README greets you.");
    // Bash is not among the agent's tools, whatever the rules allow.
    assert!(!p.dir.join("from-agent").exists());
    let log = p.log("sub");
    let names: Vec<(&str, &str)> = log
        .iter()
        .map(|v| {
            (
                v["hook_event_name"].as_str().unwrap_or_default(),
                v["agent_type"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("PreToolUse", ""),
            ("SubagentStart", "reader"),
            ("PreToolUse", "reader"),
            ("SubagentStop", "reader"),
        ]
    );
    let agent_id = log[1]["agent_id"].as_str().expect("agent_id");
    assert_eq!(log[2]["agent_id"], agent_id);
    assert_eq!(log[3]["last_assistant_message"], "The README greets you.");
    let sub = PathBuf::from(log[3]["agent_transcript_path"].as_str().expect("path"));
    let text = std::fs::read_to_string(&sub).expect("subagent transcript");
    assert!(text.contains("\"isSidechain\":true") && text.contains("Summarise README.md"));
}

#[test]
fn a_prompt_hook_is_answered_by_the_model_and_its_block_ends_the_turn() {
    let p = Project::new(json!({"permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "prompt", "prompt": "Is this command safe? $ARGUMENTS"}]}]}}));
    let run = converse(
        &p,
        r#"
turns:
  - tool_use: [{ name: Bash, input: { command: "touch by-model" } }]
  - for: hook:PreToolUse
    text: '```json
      {"ok": false, "reason": "touching files is not allowed"}
      ```'
  - text: never reached
"#,
        "touch it",
        opts(),
    );
    assert_eq!(
        run.end,
        TurnEnd::HookStopped {
            reason: "touching files is not allowed".into()
        }
    );
    assert!(!p.dir.join("by-model").exists());
}

#[test]
fn an_api_error_fires_stop_failure_instead_of_stop() {
    let p = Project::new(json!({}));
    let h = p.logging_hook("fail", "true");
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"hooks": {"StopFailure": [{"matcher": "overloaded",
            "hooks": [{"type": "command", "command": h}]}], "Stop": hook(&h)}})
        .to_string(),
    )
    .expect("settings");
    let run = converse(
        &p,
        "turns: [{error: {kind: overloaded, message: Overloaded}}]",
        "hi",
        opts(),
    );
    assert_eq!(
        run.end,
        TurnEnd::StopFailure {
            error: "overloaded".into(),
            message: "Overloaded".into()
        }
    );
    let log = p.log("fail");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["hook_event_name"], "StopFailure");
    assert_eq!(log[0]["error"], "overloaded");
}

#[test]
fn a_slash_command_is_expanded_with_its_arguments() {
    let p = Project::new(json!({}));
    std::fs::create_dir_all(p.dir.join(".claude/commands")).expect("mkdir");
    std::fs::write(
        p.dir.join(".claude/commands/greet.md"),
        "---\ndescription: Greets\n---\nSay hello to $ARGUMENTS.\n",
    )
    .expect("command");
    let h = p.logging_hook("expand", "true");
    let mut s: Value = json!({});
    s["hooks"] = json!({"UserPromptExpansion": hook(&h)});
    std::fs::write(p.dir.join(".claude/settings.json"), s.to_string()).expect("write");
    let run = converse(
        &p,
        "turns: [{text: \"Hello, world.\"}]",
        "/greet the world",
        opts(),
    );
    assert!(matches!(run.end, TurnEnd::Completed { .. }));
    let prompt = run.messages[0].text();
    assert!(prompt.contains("Say hello to the world."), "{prompt}");
    let log = p.log("expand");
    assert_eq!(log[0]["command_name"], "greet");
    assert_eq!(log[0]["command_args"], "the world");
    let unknown = converse(&p, "turns: [{text: x}]", "/nope", opts());
    assert!(matches!(unknown.end, TurnEnd::PromptBlocked { .. }));
}

#[test]
fn the_calls_of_one_turn_run_concurrently() {
    // Each call waits for the file the other one creates: run one after the other, the
    // first would wait until its timeout and fail.
    let p = Project::new(json!({"permissions": {"allow": ["Bash"]}}));
    let run = converse(
        &p,
        r#"
turns:
  - tool_use:
      - { name: Bash, input: { command: "touch a; timeout 20 sh -c 'until test -f b; do sleep 0.05; done' && echo saw-b", timeout: 30000 } }
      - { name: Bash, input: { command: "touch b; timeout 20 sh -c 'until test -f a; do sleep 0.05; done' && echo saw-a", timeout: 30000 } }
  - text: both done
"#,
        "go",
        opts(),
    );
    let results = run.results();
    assert!(
        !results[0].1 && results[0].0.contains("saw-b"),
        "{results:?}"
    );
    assert!(
        !results[1].1 && results[1].0.contains("saw-a"),
        "{results:?}"
    );
}

fn warden(p: &Project, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warden"));
    c.args(args)
        .current_dir(&p.dir)
        .env("WARDEN_HOME", p.root.join("home"))
        .env("HOME", &p.root)
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run warden")
}

#[test]
fn warden_run_prints_json_lines_and_exits_by_how_the_turn_ended() {
    let p = Project::new(json!({"permissions": {"allow": ["Read"]}}));
    let script = p.root.join("s.yaml");
    std::fs::write(
        &script,
        "prompt: read it\nturns:\n  - tool_use: [{name: Read, input: {file_path: README.md}}]\n  - text: done\n",
    )
    .expect("script");
    let out = warden(
        &p,
        &["run", "--script", script.to_str().expect("utf-8"), "--json"],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(
        types,
        [
            "sessionStarted",
            "prompt",
            "toolCall",
            "text",
            "turnEnded",
            "sessionEnded"
        ]
    );
    assert_eq!(lines[2]["outcome"]["status"], "ok");
    assert_eq!(lines[4]["report"]["end"], "completed");

    let short = p.root.join("short.yaml");
    std::fs::write(&short, "turns: []\n").expect("script");
    let out = warden(
        &p,
        &[
            "run",
            "--script",
            short.to_str().expect("utf-8"),
            "-p",
            "hi",
        ],
        &[],
    );
    // As `claude -p`: an error leaves stdout empty, says why on stderr and exits 1.
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no turn left"));
}

#[test]
fn warden_run_without_a_key_names_the_variable() {
    let p = Project::new(json!({}));
    let out = warden(&p, &["run", "-p", "hello"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
}

#[test]
fn warden_run_dry_run_shows_memory_skills_and_tools() {
    let p = Project::new(json!({}));
    std::fs::write(p.dir.join("CLAUDE.md"), "Always answer in French.\n").expect("memory");
    std::fs::create_dir_all(p.dir.join(".claude/skills/tidy")).expect("mkdir");
    std::fs::write(
        p.dir.join(".claude/skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidies files\n---\nTidy.\n",
    )
    .expect("skill");
    let script = p.root.join("s.yaml");
    std::fs::write(&script, "turns: [{text: x}]\n").expect("script");
    let out = warden(
        &p,
        &[
            "run",
            "--script",
            script.to_str().expect("utf-8"),
            "-p",
            "hi",
            "--dry-run",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let req: Value = serde_json::from_slice(&out.stdout).expect("request JSON");
    let first = req["messages"][0]["content"].to_string();
    assert!(first.contains("Always answer in French."), "{first}");
    assert!(first.contains("tidy: Tidies files"), "{first}");
    let tools: Vec<&str> = req["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for t in ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "Skill"] {
        assert!(tools.contains(&t), "{t} missing from {tools:?}");
    }
    assert!(req["tools"][0]["input_schema"]["properties"].is_object());
    assert!(Path::new(&p.dir).join("CLAUDE.md").exists());
}

#[test]
fn the_task_alias_does_not_get_past_a_rule_on_agent() {
    let p = Project::new(json!({"permissions": {"deny": ["Agent(reader)"]}}));
    p.agent("reader", "Reads files", "", "You read.");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use:
      - { name: Task, input: { description: x, prompt: y, subagent_type: reader } }
      - { name: Agent, input: { description: x, prompt: y, subagent_type: reader } }
  - text: refused twice
  - for: agent:reader
    text: must not run
"#,
        "go",
        opts(),
    );
    let results = run.results();
    assert_eq!(results.len(), 2);
    for (content, is_error) in &results {
        assert!(
            *is_error
                && content.starts_with("Permission to use ")
                && content.ends_with(" has been denied."),
            "{content}"
        );
    }
    for call in run.tool_calls() {
        assert_eq!(call.rule.as_deref(), Some("Agent(reader)"));
    }
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, LoopEvent::SubagentStarted { .. }))
    );
}

#[test]
fn at_the_depth_limit_a_subagent_has_no_agent_tool() {
    let p = Project::new(json!({"permissions": {"allow": ["Agent"]}}));
    p.agent("nester", "Starts agents", "", "Delegate.");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use: [{ name: Agent, input: { description: a, prompt: b, subagent_type: nester } }]
  - for: agent:nester
    tool_use: [{ name: Agent, input: { description: c, prompt: d, subagent_type: nester } }]
  - for: agent:nester
    text: could not nest
  - text: done
"#,
        "go",
        ConversationOptions {
            max_subagent_depth: 1,
            ..opts()
        },
    );
    assert!(
        matches!(run.end, TurnEnd::Completed { .. }),
        "{:?}",
        run.end
    );
    let started = run
        .events
        .iter()
        .filter(|e| matches!(e, LoopEvent::SubagentStarted { .. }))
        .count();
    assert_eq!(started, 1);
    assert_eq!(run.results()[0].0, "could not nest");
}

#[test]
fn an_agent_hook_reads_the_project_without_firing_itself_again() {
    let p = Project::new(json!({"permissions": {"allow": ["Read"]}}));
    let h = p.logging_hook("pre", "true");
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Read"]},
               "hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
                   {"type": "agent", "prompt": "Check the read is harmless: $ARGUMENTS"},
                   {"type": "command", "command": h}]}]}})
        .to_string(),
    )
    .expect("settings");
    let run = converse(
        &p,
        r#"
turns:
  - tool_use: [{ name: Read, input: { file_path: README.md } }]
  - for: hook
    tool_use: [{ name: Read, input: { file_path: README.md } }]
  - for: hook
    text: '{"ok": true}'
  - text: read
"#,
        "read the readme",
        opts(),
    );
    assert!(
        matches!(run.end, TurnEnd::Completed { .. }),
        "{:?}",
        run.end
    );
    assert!(run.results()[0].0.contains("hello from the readme"));
    // Only the model's own Read fired PreToolUse; the hook's read did not.
    assert_eq!(p.log("pre").len(), 1);
}

use messages_api::serve_responses as fake_messages_api;

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}

#[test]
fn warden_run_talks_to_the_messages_api_with_streaming_and_tool_results() {
    let p = Project::new(json!({"permissions": {"allow": ["Read"]}}));
    let start = |id: &str| {
        json!({"type": "message_start", "message": {"id": id, "type": "message",
        "role": "assistant", "model": "claude-test", "content": [], "usage": {"input_tokens": 10, "output_tokens": 0}}})
    };
    let first = sse(&[
        start("m1"),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"READ"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "ME.md\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
        json!({"type": "message_stop"}),
    ]);
    let second = sse(&[
        start("m2"),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It says "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hello."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ]);
    let (url, requests) = fake_messages_api(vec![(200, first), (200, second)]);
    let out = warden(
        &p,
        &["run", "-p", "What does the README say?", "--json"],
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", &url),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let call = lines
        .iter()
        .find(|l| l["type"] == "toolCall")
        .expect("a tool call");
    assert_eq!(call["outcome"]["input"]["file_path"], "README.md");
    assert_eq!(call["outcome"]["status"], "ok");
    let text = lines.iter().find(|l| l["type"] == "text").expect("text");
    assert_eq!(text["text"], "It says hello.");
    let first: Value = requests.recv().expect("first request");
    assert_eq!(first["stream"], true);
    assert!(
        first["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "Read"))
    );
    let second: Value = requests.recv().expect("second request");
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_a");
    assert!(
        result["content"]
            .as_str()
            .is_some_and(|c| c.contains("hello from the readme"))
    );
}

#[test]
fn an_api_error_from_the_messages_api_ends_the_run_with_stop_failure() {
    let p = Project::new(json!({}));
    let h = p.logging_hook("fail", "true");
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"hooks": {"StopFailure": hook(&h)}}).to_string(),
    )
    .expect("settings");
    let body = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "max_tokens: too large"}})
    .to_string();
    let (url, _requests) = fake_messages_api(vec![(400, body)]);
    let out = warden(
        &p,
        &["run", "-p", "hi", "--json"],
        &[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_BASE_URL", &url)],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"end\":\"stopFailure\"") && stdout.contains("max_tokens: too large"),
        "{stdout}"
    );
    let log = p.log("fail");
    assert_eq!(log[0]["error"], "invalid_request");
}

fn compacting(p: &Project, script: &str) -> Run {
    let log = p.logging_hook("compact", "true");
    let block = p.logging_hook("block", "echo 'keep it all' >&2; exit 2");
    let pre = if script.contains("for: compact") && p.dir.join("block-compaction").exists() {
        block
    } else {
        log.clone()
    };
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Read"]}, "hooks": {
            "PreCompact": hook(&pre), "PostCompact": hook(&log), "SessionStart": hook(&log)}})
        .to_string(),
    )
    .expect("settings");
    converse(
        p,
        script,
        "read the README",
        ConversationOptions {
            auto_compact_tokens: Some(1),
            ..opts()
        },
    )
}

const COMPACTED: &str = r#"
turns:
  - tool_use: [{ id: toolu_1, name: Read, input: { file_path: README.md } }]
  - for: compact
    text: "SUMMARY: the README says hello."
  - text: done
"#;

#[test]
fn a_conversation_past_the_limit_is_compacted_between_pre_and_post_compact() {
    let p = Project::new(json!({}));
    let run = compacting(&p, COMPACTED);
    assert_eq!(
        run.end,
        TurnEnd::Completed {
            text: "done".into()
        }
    );
    let log = p.log("compact");
    let seen: Vec<(&str, &str)> = log
        .iter()
        .map(|v| {
            (
                v["hook_event_name"].as_str().unwrap_or_default(),
                v["source"]
                    .as_str()
                    .or(v["trigger"].as_str())
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("SessionStart", "startup"),
            ("PreCompact", "auto"),
            ("PostCompact", "auto"),
            ("SessionStart", "compact"),
        ]
    );
    assert_eq!(log[1]["custom_instructions"], "");
    assert_eq!(log[2]["compact_summary"], "SUMMARY: the README says hello.");
    // The summary replaced the messages: the model goes on from it alone.
    assert_eq!(run.messages.len(), 2, "{:?}", run.messages);
    let first = run.messages[0].text();
    assert!(
        first.contains("SUMMARY: the README says hello.")
            && first.contains("continued from a previous conversation"),
        "{first}"
    );
    assert!(run.events.iter().any(|e| matches!(
        e,
        LoopEvent::Compacted { trigger, .. } if trigger == "auto"
    )));
}

#[test]
fn a_blocking_pre_compact_hook_keeps_the_messages() {
    let p = Project::new(json!({}));
    std::fs::write(p.dir.join("block-compaction"), "").expect("marker");
    let run = compacting(&p, COMPACTED);
    assert!(
        matches!(run.end, TurnEnd::Completed { .. }),
        "{:?}",
        run.end
    );
    assert_eq!(p.log("block").len(), 1);
    assert!(
        !p.log("compact")
            .iter()
            .any(|v| v["hook_event_name"] == "PostCompact")
    );
    assert!(run.messages[0].text().contains("read the README"));
    assert!(
        run.messages[1].tool_uses().count() == 1,
        "{:?}",
        run.messages
    );
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, LoopEvent::Compacted { .. }))
    );
}
