//! What the main conversation is told, checked on what a fake Messages API received from
//! `warden run`.
//!
//! Run as an agent, as Claude Code's `--agent` and `agent` setting: the agent's prompt in place
//! of the default system prompt, its `tools` as the tools offered and its `model` as the model
//! asked. A plugin's `agent` setting names only that plugin's agents; a path or another
//! plugin's agent is left out with a warning naming the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/messages_api.rs"]
mod messages_api;

use serde_json::{Value, json};

const DEFAULT_PROMPT: &str = "You are an agent working in a software project, run by Warden";

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
        Project {
            _tmp: tmp,
            root,
            dir,
        }
    }

    /// A project agent `.claude/agents/<name>.md`.
    fn agent(&self, name: &str, extra: &str, body: &str) {
        write_agent(&self.dir.join(".claude/agents"), name, extra, body);
    }

    /// A plugin `<root>/plugins/<name>` with `settings.json` (when given) and agents.
    fn plugin(&self, name: &str, settings: Option<Value>, agents: &[(&str, &str)]) -> PathBuf {
        let dir = self.root.join("plugins").join(name);
        std::fs::create_dir_all(dir.join(".claude-plugin")).expect("mkdir");
        std::fs::write(
            dir.join(".claude-plugin/plugin.json"),
            json!({"name": name, "version": "1.0.0"}).to_string(),
        )
        .expect("manifest");
        if let Some(s) = settings {
            std::fs::write(dir.join("settings.json"), s.to_string()).expect("settings");
        }
        for (agent, body) in agents {
            write_agent(&dir.join("agents"), agent, "", body);
        }
        dir
    }

    /// `warden run -p hi` against a fake Messages API answering `done`: its output and the
    /// request the model received.
    fn run(&self, args: &[&str]) -> (Output, Option<Value>) {
        let (out, requests) = self.run_turns(&[json!({"text": "done"})], args);
        (out, requests.into_iter().next())
    }

    /// `warden run -p hi` against a fake Messages API answering `turns` in order: its output
    /// and every request the models (main and subagents) received.
    fn run_turns(&self, turns: &[Value], args: &[&str]) -> (Output, Vec<Value>) {
        let (url, requests) = messages_api::serve(turns);
        let out = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["run", "-p", "hi"])
            .args(args)
            .current_dir(&self.dir)
            .env("WARDEN_HOME", self.root.join("home"))
            .env("HOME", &self.root)
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", url)
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("OPENAI_BASE_URL")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run warden");
        (out, requests.try_iter().collect())
    }
}

fn write_agent(dir: &Path, name: &str, extra: &str, body: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join(format!("{name}.md")),
        format!("---\nname: {name}\ndescription: the {name} agent\n{extra}---\n{body}\n"),
    )
    .expect("agent");
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn system(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A project with a read-only `reviewer` agent on its own model.
fn with_reviewer(settings: Value) -> Project {
    let p = Project::new(settings);
    p.agent(
        "reviewer",
        "tools: Read, Grep\nmodel: claude-haiku-4-5\n",
        "You are the reviewer. Read code and report problems; change nothing.",
    );
    p
}

#[test]
fn the_agent_flag_gives_the_main_conversation_the_agents_prompt_tools_and_model() {
    let p = with_reviewer(json!({}));

    // Without it: the default prompt, every tool, the default model.
    let (out, request) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = request.expect("a request");
    assert!(system(&request).contains(DEFAULT_PROMPT), "{request:#}");
    let tools = tool_names(&request);
    assert!(tools.iter().any(|t| t == "Bash"), "{tools:?}");
    assert_ne!(request["model"], "claude-haiku-4-5");

    let (out, request) = p.run(&["--agent", "reviewer", "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = request.expect("a request");
    let sys = system(&request);
    assert!(sys.starts_with("You are the reviewer."), "{sys}");
    assert!(!sys.contains(DEFAULT_PROMPT), "{sys}");
    assert!(
        sys.contains("Working directory:"),
        "the environment follows: {sys}"
    );
    let mut tools = tool_names(&request);
    tools.sort();
    assert_eq!(tools, ["Grep", "Read"], "{request:#}");
    assert_eq!(request["model"], "claude-haiku-4-5", "{request:#}");
    // The init line reports the model and tools the conversation has.
    let init: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .expect("init line");
    assert_eq!(init["model"], "claude-haiku-4-5", "{init:#}");
    assert_eq!(init["tools"], json!(["Read", "Grep"]), "{init:#}");

    // An explicit --model wins over the agent's.
    let (out, request) = p.run(&["--agent", "reviewer", "--model", "claude-opus-4-1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(request.expect("a request")["model"], "claude-opus-4-1");
}

/// The text of the tool results a request carries back to the model.
fn tool_results(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                out.push(match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            }
        }
    }
    out
}

/// Run as an agent whose `tools` lists `Agent(worker)`, the main conversation starts the
/// `worker` subagent and no other, as Claude Code's `--agent` does.
#[test]
fn an_agent_run_as_the_main_conversation_starts_only_the_subagents_it_lists() {
    let p = Project::new(json!({}));
    p.agent("lead", "tools: Read, Agent(worker)\n", "You are the lead.");
    p.agent("worker", "", "You are the worker.");
    p.agent("other", "", "You are the other one.");
    let call = |ty: &str| {
        json!({"tool_use": [{"id": "toolu_1", "name": "Agent",
            "input": {"subagent_type": ty, "prompt": "look", "description": "a look"}}]})
    };

    let (out, requests) = p.run_turns(
        &[call("other"), json!({"text": "done"})],
        &["--agent", "lead"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert!(tool_names(&requests[0]).iter().any(|t| t == "Agent"));
    let results = tool_results(&requests[1]);
    assert!(
        results.iter().any(
            |r| r.contains("Agent type 'other' is not one this agent may start")
                && r.contains("worker")
        ),
        "{results:?}"
    );
    assert!(
        !requests
            .iter()
            .any(|r| system(r).contains("You are the other one.")),
        "the other agent never ran"
    );

    // The listed one runs: its own request comes between the main conversation's two.
    let (out, requests) = p.run_turns(
        &[
            call("worker"),
            json!({"text": "found it"}),
            json!({"text": "done"}),
        ],
        &["--agent", "lead"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert!(
        system(&requests[1]).contains("You are the worker."),
        "{:#}",
        requests[1]
    );

    // Without --agent the main conversation may start any of them.
    let (out, requests) = p.run_turns(
        &[
            call("other"),
            json!({"text": "seen"}),
            json!({"text": "done"}),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert!(system(&requests[1]).contains("You are the other one."));
}

#[test]
fn an_unknown_agent_flag_is_an_error_naming_the_agents() {
    let p = with_reviewer(json!({}));
    let (out, request) = p.run(&["--agent", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--agent nope: no agent named `nope`") && err.contains("reviewer"),
        "{err}"
    );
    assert!(request.is_none(), "nothing is asked");
    let (out, _) = p.run(&["--agent", "../reviewer"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_project_agent_setting_applies_and_the_flag_overrides_it() {
    let p = with_reviewer(json!({"agent": "reviewer"}));
    p.agent("writer", "", "You are the writer.");
    let (out, request) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = request.expect("a request");
    assert!(
        system(&request).starts_with("You are the reviewer."),
        "{request:#}"
    );
    assert_eq!(request["model"], "claude-haiku-4-5");

    let (out, request) = p.run(&["--agent", "writer"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = request.expect("a request");
    assert!(
        system(&request).starts_with("You are the writer."),
        "{request:#}"
    );
    assert!(tool_names(&request).iter().any(|t| t == "Bash"));
}

#[test]
fn an_agent_setting_naming_no_agent_is_a_warning_naming_the_file() {
    let p = with_reviewer(json!({"agent": "ghost"}));
    let (out, request) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let file = p.dir.join(".claude/settings.json");
    assert!(
        err.contains(&format!(
            "{}: `agent` setting ignored: no agent named `ghost`",
            file.display()
        )),
        "{err}"
    );
    assert!(system(&request.expect("a request")).contains(DEFAULT_PROMPT));
}

#[test]
fn a_plugins_agent_setting_runs_the_main_conversation_as_its_own_agent() {
    let p = Project::new(json!({}));
    let plugin = p.plugin(
        "helpers",
        Some(json!({"agent": "guide"})),
        &[("guide", "You are the guide of the helpers plugin.")],
    );
    let plugin = plugin.display().to_string();
    let (out, request) = p.run(&["--plugin-dir", &plugin]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = request.expect("a request");
    assert!(
        system(&request).starts_with("You are the guide of the helpers plugin."),
        "{}\n{request:#}",
        stderr(&out)
    );

    // The user's settings come first.
    p.agent("mine", "", "You are mine.");
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"agent": "mine"}).to_string(),
    )
    .expect("settings");
    let (out, request) = p.run(&["--plugin-dir", &plugin]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(system(&request.expect("a request")).starts_with("You are mine."));

    // --agent names plugin agents by their namespaced name.
    let (out, request) = p.run(&["--plugin-dir", &plugin, "--agent", "helpers:guide"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(system(&request.expect("a request")).starts_with("You are the guide"));
}

#[test]
fn a_plugins_agent_setting_cannot_reach_a_path_or_another_plugins_agent() {
    let p = Project::new(json!({}));
    p.agent("local", "", "You are the project's own agent.");
    let other = p.plugin(
        "other",
        None,
        &[("spy", "You are the other plugin's agent.")],
    );
    for (n, value) in ["../local", "other:spy", "/etc/passwd", "local"]
        .iter()
        .enumerate()
    {
        let name = format!("sly{n}");
        let sly = p.plugin(&name, Some(json!({"agent": value})), &[]);
        let (out, request) = p.run(&[
            "--plugin-dir",
            &other.display().to_string(),
            "--plugin-dir",
            &sly.display().to_string(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "{}: `agent` setting ignored",
                sly.join("settings.json").display()
            )),
            "{value}: {err}"
        );
        let sys = system(&request.expect("a request"));
        assert!(sys.contains(DEFAULT_PROMPT), "{value}: {sys}");
    }
}

// ---------------------------------------------------------------------------------------------
// Output styles: the `outputStyle` setting, plugins' styles as `plugin:name`, project styles,
// `keep-coding-instructions` and `force-for-plugin`.

const CODING: &str = "Prefer small, verifiable steps.";

fn write_style(dir: &Path, name: &str, frontmatter: &str, body: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join(format!("{name}.md")),
        format!("---\ndescription: the {name} style\n{frontmatter}---\n{body}\n"),
    )
    .expect("style");
}

fn init_line(out: &Output) -> Value {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .expect("init line")
}

#[test]
fn the_output_style_setting_adds_a_plugins_style_to_the_system_prompt() {
    let p = Project::new(json!({"outputStyle": "helpers:terse"}));
    let plugin = p.plugin("helpers", None, &[]);
    write_style(
        &plugin.join("output-styles"),
        "terse",
        "",
        "Answer in one short sentence.",
    );
    write_style(
        &plugin.join("output-styles"),
        "teacher",
        "keep-coding-instructions: true\n",
        "Explain each step.",
    );
    let dir = plugin.display().to_string();
    let (out, request) = p.run(&["--plugin-dir", &dir, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sys = system(&request.expect("a request"));
    assert!(sys.contains("Answer in one short sentence."), "{sys}");
    assert!(
        !sys.contains(CODING),
        "a custom style drops the coding instructions: {sys}"
    );
    assert_eq!(init_line(&out)["output_style"], "helpers:terse");

    // `keep-coding-instructions: true` keeps them.
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"outputStyle": "helpers:teacher"}).to_string(),
    )
    .expect("settings");
    let (out, request) = p.run(&["--plugin-dir", &dir]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sys = system(&request.expect("a request"));
    assert!(
        sys.contains("Explain each step.") && sys.contains(CODING),
        "{sys}"
    );

    // Without the setting: the default prompt, reported as `default`.
    std::fs::write(p.dir.join(".claude/settings.json"), "{}").expect("settings");
    let (out, request) = p.run(&["--plugin-dir", &dir, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sys = system(&request.expect("a request"));
    assert!(
        sys.contains(DEFAULT_PROMPT) && !sys.contains("Explain each step."),
        "{sys}"
    );
    assert_eq!(init_line(&out)["output_style"], "default");
}

#[test]
fn a_plugin_style_forced_for_its_plugin_applies_without_the_setting() {
    let p = Project::new(json!({}));
    let plugin = p.plugin("helpers", None, &[]);
    write_style(
        &plugin.join("output-styles"),
        "house",
        "force-for-plugin: true\n",
        "Speak as the house style says.",
    );
    let dir = plugin.display().to_string();
    let (out, request) = p.run(&["--plugin-dir", &dir, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sys = system(&request.expect("a request"));
    assert!(sys.contains("Speak as the house style says."), "{sys}");
    assert_eq!(init_line(&out)["output_style"], "helpers:house");
}

#[test]
fn a_project_style_is_offered_by_name_but_not_through_a_link_out_of_the_project() {
    let p = Project::new(json!({"outputStyle": "brief"}));
    write_style(
        &p.dir.join(".claude/output-styles"),
        "brief",
        "",
        "Be brief.",
    );
    let (out, request) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(system(&request.expect("a request")).contains("Be brief."));

    // A folder linked to elsewhere is not read: the setting names no style, and says so.
    let outside = p.root.join("elsewhere");
    write_style(&outside, "brief", "", "Read from outside the project.");
    std::fs::remove_dir_all(p.dir.join(".claude/output-styles")).expect("rm");
    std::os::unix::fs::symlink(&outside, p.dir.join(".claude/output-styles")).expect("link");
    let (out, request) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sys = system(&request.expect("a request"));
    assert!(!sys.contains("Read from outside"), "{sys}");
    assert!(sys.contains(DEFAULT_PROMPT), "{sys}");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}: `outputStyle` setting ignored: no output style named `brief`",
            p.dir.join(".claude/settings.json").display()
        )),
        "{err}"
    );
}

#[test]
fn an_agent_keeps_its_prompt_under_an_output_style() {
    let p = with_reviewer(json!({"outputStyle": "brief"}));
    write_style(
        &p.dir.join(".claude/output-styles"),
        "brief",
        "",
        "Be brief.",
    );
    let (out, request) = p.run(&["--agent", "reviewer"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sys = system(&request.expect("a request"));
    assert!(
        sys.starts_with("You are the reviewer.") && sys.contains("Be brief."),
        "{sys}"
    );
}

#[test]
fn the_status_line_is_told_the_output_style() {
    let p = Project::new(json!({
        "outputStyle": "brief",
        "statusLine": {"type": "command", "command":
            r#"read -r input; printf '%s' "$input" | sed -n 's/.*"output_style":{"name":"\([^"]*\)"}.*/style \1/p'"#},
    }));
    write_style(
        &p.dir.join(".claude/output-styles"),
        "brief",
        "",
        "Be brief.",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["context", "--json", "--no-hooks"])
        .current_dir(&p.dir)
        .env("WARDEN_HOME", p.root.join("home"))
        .env("HOME", &p.root)
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("context");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["statusLines"][0]["output"], "style brief", "{v:#}");
}
