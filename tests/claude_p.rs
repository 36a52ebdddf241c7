//! `warden run` as a drop-in for `claude -p`: what it prints (`--output-format text | json |
//! stream-json`, `--verbose`), its exit codes, PermissionRequest hooks answering an ask
//! nobody can, and the tool results and hook inputs in Claude Code's shapes (the field sets
//! are those of hook stdin captured from Claude Code 2.1.332).

use std::path::PathBuf;
use std::process::{Command, Output};

#[path = "support/messages_api.rs"]
mod messages_api;

use serde_json::{Value, json};

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

    fn settings(&self, settings: Value) {
        std::fs::write(self.dir.join(".claude/settings.json"), settings.to_string())
            .expect("settings");
    }

    /// A hook that appends its stdin to `.hook-logs/<log>.jsonl` and then runs `then`.
    fn hook(&self, log: &str, then: &str) -> Value {
        let logs = self.dir.join(".hook-logs");
        std::fs::create_dir_all(&logs).expect("mkdir");
        let path = self.dir.join(format!("{log}.sh"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n{then}\n",
                logs.join(format!("{log}.jsonl")).display()
            ),
        )
        .expect("write hook");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        json!([{"hooks": [{"type": "command", "command": path.display().to_string()}]}])
    }

    /// A hook beside the project (not in it) that appends its stdin to `<root>/<log>.jsonl`.
    fn hook_outside(&self, log: &str) -> Value {
        let path = self.root.join(format!("{log}.sh"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n",
                self.root.join(format!("{log}.jsonl")).display()
            ),
        )
        .expect("write hook");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        json!([{"hooks": [{"type": "command", "command": path.display().to_string()}]}])
    }

    fn log(&self, log: &str) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join(format!(".hook-logs/{log}.jsonl")))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("hook input is JSON"))
            .collect()
    }

    fn script(&self, yaml: &str) -> String {
        let path = self.root.join("script.yaml");
        std::fs::write(&path, yaml).expect("script");
        path.display().to_string()
    }

    fn warden(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .current_dir(&self.dir)
            .env("WARDEN_HOME", self.root.join("home"))
            .env("HOME", &self.root)
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("OPENAI_BASE_URL")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run warden")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

fn sorted<'a>(k: &[&'a str]) -> Vec<&'a str> {
    let mut k = k.to_vec();
    k.sort_unstable();
    k
}

const READ_THEN_DONE: &str = "prompt: read it
turns:
  - text: Reading.
    tool_use: [{id: toolu_1, name: Read, input: {file_path: README.md}}]
  - text: done
";

#[test]
fn text_output_is_the_final_answer_alone_and_verbose_is_the_transcript() {
    let p = Project::new(json!({"permissions": {"allow": ["Read"]}}));
    let script = p.script(READ_THEN_DONE);
    let out = p.warden(&["run", "--script", &script]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");

    let out = p.warden(&["run", "--script", &script, "--verbose"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("● Read(README.md)"), "{text}");
    assert!(text.contains("Reading."), "{text}");
}

#[test]
fn json_output_is_one_result_object_in_claude_codes_shape() {
    let p = Project::new(json!({"permissions": {"allow": ["Read"], "deny": ["Bash"]}}));
    let script = p.script(
        "prompt: read it
turns:
  - tool_use:
      - {id: toolu_1, name: Read, input: {file_path: README.md}}
      - {id: toolu_2, name: Bash, input: {command: ls}}
  - text: done
",
    );
    let out = p.warden(&["run", "--script", &script, "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON object");
    assert_eq!(r["type"], "result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["is_error"], false);
    assert_eq!(r["result"], "done");
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["stop_reason"], "end_turn");
    assert!(
        r["session_id"].as_str().is_some_and(|s| s.len() == 36),
        "{r}"
    );
    assert!(
        r["duration_ms"].is_u64() && r["duration_api_ms"].is_u64(),
        "{r}"
    );
    assert!(
        r["usage"]["input_tokens"].as_u64().is_some_and(|n| n > 0),
        "{r}"
    );
    assert!(r["usage"]["output_tokens"].is_u64(), "{r}");
    assert!(r["total_cost_usd"].is_number(), "{r}");
    assert_eq!(
        r["permission_denials"],
        json!([{"tool_name": "Bash", "tool_use_id": "toolu_2", "tool_input": {"command": "ls"}}])
    );

    // Out of turns: an error result and exit 1.
    let out = p.warden(&[
        "run",
        "--script",
        &script,
        "--output-format",
        "json",
        "--max-turns",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON object");
    assert_eq!(r["subtype"], "error_max_turns");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);

    // With --verbose: every stream-json line, as one array ending in the result.
    let out = p.warden(&[
        "run",
        "--script",
        &script,
        "--output-format",
        "json",
        "--verbose",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all: Vec<Value> = serde_json::from_str(stdout(&out).trim()).expect("a JSON array");
    let types: Vec<&str> = all.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(
        types,
        ["system", "assistant", "user", "assistant", "result"]
    );
}

#[test]
fn stream_json_prints_init_messages_and_the_result_line_by_line() {
    let p = Project::new(json!({"permissions": {"allow": ["Read"]}}));
    let script = p.script(READ_THEN_DONE);
    let out = p.warden(&["run", "--script", &script, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(
        types,
        ["system", "assistant", "user", "assistant", "result"]
    );
    let session = lines[0]["session_id"].as_str().expect("session_id");
    assert!(lines.iter().all(|l| l["session_id"] == session));
    assert!(lines.iter().all(|l| l["uuid"].is_string()));
    assert_eq!(lines[0]["subtype"], "init");
    assert_eq!(lines[0]["cwd"], p.dir.display().to_string());
    assert_eq!(lines[0]["permissionMode"], "default");
    assert!(
        lines[0]["tools"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("Read")))
    );
    assert_eq!(lines[1]["message"]["role"], "assistant");
    assert_eq!(lines[1]["message"]["content"][1]["type"], "tool_use");
    assert_eq!(lines[1]["message"]["content"][1]["id"], "toolu_1");
    assert_eq!(lines[1]["parent_tool_use_id"], Value::Null);
    let result = &lines[2]["message"]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["is_error"], false);
    assert!(
        result["content"]
            .as_str()
            .is_some_and(|c| c.contains("hello from the readme"))
    );
    assert_eq!(lines[4]["result"], "done");
    assert_eq!(lines[4]["subtype"], "success");
}

#[test]
fn a_dry_run_needs_no_api_key() {
    let p = Project::new(json!({}));
    let out = p.warden(&["run", "-p", "hi", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let req: Value = serde_json::from_slice(&out.stdout).expect("request JSON");
    assert!(req["model"].is_string());
    assert!(req["messages"][0]["content"].to_string().contains("hi"));
    // Running for real still needs one.
    let out = p.warden(&["run", "-p", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("ANTHROPIC_API_KEY"),
        "{}",
        stderr(&out)
    );
}

/// `touch made-it` asks in default mode; nobody can be asked in `-p`.
const TOUCH: &str = "prompt: make it
turns:
  - tool_use: [{id: toolu_1, name: Bash, input: {command: touch made-it}}]
  - text: finished
";

#[test]
fn a_permission_request_hook_answers_an_ask_nobody_could() {
    let p = Project::new(json!({}));
    let script = p.script(TOUCH);

    // No hook: Claude Code's `-p` answer, and nothing runs.
    let out = p.warden(&["run", "--script", &script, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines[2]["message"]["content"][0]["content"],
        "This command requires approval"
    );
    assert!(!p.dir.join("made-it").exists());

    // An approving hook lets it run, and sees what Claude Code sends.
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow"}}});
    p.settings(
        json!({"hooks": {"PermissionRequest": p.hook("allow", &format!("echo '{allow}'"))}}),
    );
    let out = p.warden(&["run", "--script", &script]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        p.dir.join("made-it").exists(),
        "the approved call did not run"
    );
    let log = p.log("allow");
    assert_eq!(log.len(), 1, "{log:?}");
    let input = &log[0];
    assert_eq!(
        keys(input),
        sorted(&[
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "permission_mode",
            "effort",
            "hook_event_name",
            "tool_name",
            "tool_input",
            "permission_suggestions",
        ]),
        "{input}"
    );
    assert_eq!(input["hook_event_name"], "PermissionRequest");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["tool_input"], json!({"command": "touch made-it"}));
    assert_eq!(
        input["permission_suggestions"],
        json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch made-it"}],
                "behavior": "allow", "destination": "localSettings"}])
    );

    // A denying hook's message is what the model is told.
    std::fs::remove_file(p.dir.join("made-it")).expect("rm");
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "not on Fridays"}}});
    p.settings(json!({"hooks": {"PermissionRequest": p.hook("deny", &format!("echo '{deny}'"))}}));
    let out = p.warden(&["run", "--script", &script, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines[2]["message"]["content"][0],
        json!({"tool_use_id": "toolu_1", "type": "tool_result", "content": "not on Fridays", "is_error": true})
    );
    assert!(!p.dir.join("made-it").exists(), "the denied call ran");
    assert_eq!(
        lines[4]["permission_denials"][0]["tool_use_id"], "toolu_1",
        "{}",
        lines[4]
    );
}

#[test]
fn tool_results_and_hook_inputs_have_claude_codes_shapes() {
    let p = Project::new(json!({}));
    let mut hooks = serde_json::Map::new();
    for e in [
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ] {
        hooks.insert(e.into(), p.hook("events", "true"));
    }
    p.settings(json!({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm *)"]}, "hooks": hooks}));
    let script = p.script(
        r#"prompt: go
turns:
  - tool_use:
      - {id: toolu_1, name: Bash, input: {command: 'sh -c "printf out; printf err >&2"'}}
      - {id: toolu_2, name: Bash, input: {command: 'true'}}
      - {id: toolu_3, name: Bash, input: {command: 'ls no-such-dir'}}
      - {id: toolu_4, name: Bash, input: {command: 'rm README.md'}}
  - text: done
"#,
    );
    let out = p.warden(&["run", "--script", &script, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let results: Vec<(String, bool)> = lines[2]["message"]["content"]
        .as_array()
        .expect("tool results")
        .iter()
        .map(|r| {
            (
                r["content"].as_str().unwrap_or_default().to_string(),
                r["is_error"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(results[0], ("out\nerr".into(), false));
    assert_eq!(
        results[1],
        ("(Bash completed with no output)".into(), false)
    );
    // A failure: the exit code first, then stderr.
    assert!(
        results[2].1
            && results[2].0.starts_with("Exit code 2\n")
            && results[2].0.contains("no-such-dir"),
        "{:?}",
        results[2]
    );
    assert_eq!(
        results[3],
        (
            "Permission to use Bash with command rm README.md has been denied.".into(),
            true
        )
    );
    assert!(p.dir.join("README.md").exists());

    let log = p.log("events");
    let of = |event: &str, id: Option<&str>| -> Value {
        log.iter()
            .find(|v| v["hook_event_name"] == event && id.is_none_or(|id| v["tool_use_id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no {event} {id:?} in {log:?}"))
    };
    let common = ["session_id", "transcript_path", "cwd", "hook_event_name"];
    let with =
        |extra: &[&'static str]| -> Vec<&'static str> { sorted(&[&common[..], extra].concat()) };
    assert_eq!(keys(&of("SessionStart", None)), with(&["source"]));
    assert_eq!(
        keys(&of("SessionEnd", None)),
        with(&["prompt_id", "reason"])
    );
    let tool = [
        "prompt_id",
        "permission_mode",
        "effort",
        "tool_name",
        "tool_input",
        "tool_use_id",
    ];
    assert_eq!(keys(&of("PreToolUse", Some("toolu_1"))), with(&tool));
    let post = of("PostToolUse", Some("toolu_1"));
    assert_eq!(
        keys(&post),
        with(&[&tool[..], &["tool_response", "duration_ms"]].concat())
    );
    assert!(post["duration_ms"].is_u64(), "{post}");
    assert_eq!(
        post["tool_response"],
        json!({"stdout": "out", "stderr": "err", "interrupted": false, "isImage": false,
               "noOutputExpected": false})
    );
    // Key order as Claude Code's.
    assert_eq!(
        post["tool_response"]
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default(),
        [
            "stdout",
            "stderr",
            "interrupted",
            "isImage",
            "noOutputExpected"
        ]
    );
    let failure = of("PostToolUseFailure", Some("toolu_3"));
    assert_eq!(
        keys(&failure),
        with(&[&tool[..], &["error", "is_interrupt", "duration_ms"]].concat())
    );
    assert!(
        failure["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("Exit code 2\n")),
        "{failure}"
    );
    assert_eq!(
        keys(&of("Stop", None)),
        with(&[
            "prompt_id",
            "permission_mode",
            "effort",
            "stop_hook_active",
            "last_assistant_message",
            "background_tasks",
            "session_crons"
        ])
    );
    // A denied call fires no PostToolUseFailure.
    assert!(
        !log.iter()
            .any(|v| v["tool_use_id"] == "toolu_4" && v["hook_event_name"] == "PostToolUseFailure")
    );
}

#[test]
fn a_pre_tool_use_hook_block_is_worded_as_claude_code_words_it() {
    let p = Project::new(json!({}));
    let hook = p.hook("pre", "echo 'no shell today' >&2; exit 2");
    let command = hook[0]["hooks"][0]["command"]
        .as_str()
        .expect("command")
        .to_string();
    p.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": hook}}));
    let script = p.script(TOUCH);
    let out = p.warden(&["run", "--script", &script, "--output-format", "stream-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines[2]["message"]["content"][0]["content"],
        format!("PreToolUse:Bash hook error: [{command}]: no shell today")
    );
    assert!(!p.dir.join("made-it").exists());
}

#[test]
fn warden_tool_answers_bash_in_the_typed_shape() {
    let p = Project::new(json!({"permissions": {"allow": ["Bash"]}}));
    let dir = p.dir.display().to_string();
    let out = p.warden(&[
        "tool",
        "Bash",
        "--cwd",
        &dir,
        "--input",
        r#"{"command": "true"}"#,
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    assert_eq!(v["content"], "(Bash completed with no output)");
    assert_eq!(
        v["structured"],
        json!({"stdout": "", "stderr": "", "interrupted": false, "isImage": false,
               "noOutputExpected": false})
    );
}

#[test]
fn read_answers_in_claude_codes_shape_to_the_model_and_to_hooks() {
    let p = Project::new(json!({}));
    p.settings(json!({"permissions": {"allow": ["Read"]},
        "hooks": {"PostToolUse": p.hook("post", "true"), "PostToolBatch": p.hook("batch", "true")}}));
    std::fs::write(p.dir.join("README.md"), "hello\n").expect("write");
    let script = p.script(READ_THEN_DONE);
    let out = p.warden(&["run", "--script", &script]);
    assert!(out.status.success(), "{}", stderr(&out));
    let post = &p.log("post")[0];
    assert_eq!(
        post["tool_response"],
        json!({"type": "text", "file": {"filePath": p.dir.join("README.md").display().to_string(),
            "content": "hello\n", "numLines": 2, "startLine": 1, "totalLines": 2}})
    );
    assert_eq!(
        p.log("batch")[0]["tool_calls"][0]["tool_response"],
        "1\thello\n2\t"
    );
}

// ---------------------------------------------------------------------------------------------
// A fake Messages API on loopback, for runs against `ANTHROPIC_BASE_URL`.

use messages_api::{serve_bodies as fake_messages_api, sse_turn};

fn text_turns(texts: &[&str]) -> Vec<String> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| sse_turn(&json!({"text": t}), i))
        .collect()
}

impl Project {
    /// `warden run` against a fake Messages API at `url`.
    fn warden_api(&self, url: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .arg("run")
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
            .env_remove("CLAUDE_CODE_EFFORT_LEVEL")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run warden")
    }
}

// ---------------------------------------------------------------------------------------------
// The differential test: the cases of tests/fixtures/claude-p/cases.json, run by `warden run -p`
// against the fake API; what each logging hook received is compared field by field with what
// Claude Code sent its hooks in the same case (tests/fixtures/claude-p/recordings, made by
// tests/fixtures/claude-p/record.py).

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude-p")
}

/// The recording a logged hook input is compared with: `<Event>__<Tool>`, `SessionStart__<source>`,
/// or `<Event>`.
fn recording_name(v: &Value) -> String {
    let event = v["hook_event_name"].as_str().unwrap_or_default();
    let tool = v["tool_name"]
        .as_str()
        .or(v["tool_calls"][0]["tool_name"].as_str())
        .or(v["source"].as_str());
    match tool {
        Some(t) => format!("{event}__{t}"),
        None => event.to_string(),
    }
}

/// Values that differ between any two runs: ids, paths of the run, timings.
const VARYING: &[&str] = &[
    "session_id",
    "transcript_path",
    "prompt_id",
    "duration_ms",
    "durationMs",
];

fn normalise(v: &Value, cwd: &str) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let v = if VARYING.contains(&k.as_str()) {
                        json!("<varies>")
                    } else {
                        normalise(v, cwd)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| normalise(v, cwd)).collect()),
        Value::String(s) => Value::String(s.replace(cwd, "/home/dev/project")),
        other => other.clone(),
    }
}

/// Every difference between Claude Code's `want` and Warden's `got`, one line each.
fn differences(at: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                match g.get(k) {
                    Some(gv) => differences(&format!("{at}.{k}"), wv, gv, out),
                    None => out.push(format!("{at}.{k}: missing (Claude Code sends {wv})")),
                }
            }
            for k in g.keys().filter(|k| !w.contains_key(*k)) {
                out.push(format!("{at}.{k}: extra (Claude Code sends no such field)"));
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                differences(&format!("{at}[{i}]"), wv, gv, out);
            }
        }
        _ if want != got => out.push(format!("{at}: Claude Code {want}, Warden {got}")),
        _ => {}
    }
}

/// Runs one case of cases.json and returns every hook input logged, in order.
fn run_case(case: &Value) -> (Project, Vec<Value>) {
    let p = Project::new(json!({}));
    let cwd = p.dir.display().to_string();
    // Apart in time, so that tools ordering by modification time (Glob, Grep) see them in
    // the order the recording script wrote them.
    let apart = || std::thread::sleep(std::time::Duration::from_millis(20));
    for (file, content) in case["files"].as_object().into_iter().flatten() {
        std::fs::write(p.dir.join(file), content.as_str().unwrap_or_default()).expect("file");
        apart();
    }
    let mut settings = json!({});
    // The logging hook lives outside the project, as in the recording script, so a Glob or
    // Grep of the project does not find it or its log.
    let log = p.hook_outside("all");
    let events = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SessionEnd",
        "PermissionDenied",
    ];
    settings["hooks"] = events
        .iter()
        .map(|e| (e.to_string(), log.clone()))
        .collect();
    p.settings(settings);
    apart();
    let turns: Vec<String> = case["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            let t: Value =
                serde_json::from_str(&t.to_string().replace("$CWD", &cwd)).expect("turn");
            sse_turn(&t, i)
        })
        .collect();
    let (url, _requests) = fake_messages_api(turns);
    let prompt = case["prompt"].as_str().unwrap_or("go");
    // The logging hook is outside the project, where a hook from the project's settings may
    // not run confined; the user's `confinePlugins: false` runs it as Claude Code does.
    let mut args = vec![
        "-p",
        prompt,
        "--output-format",
        "json",
        "--settings",
        r#"{"sandbox":{"confinePlugins":false}}"#,
    ];
    args.extend(
        case["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    let out = p.warden_api(&url, &args);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let logged = std::fs::read_to_string(p.root.join("all.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("hook input is JSON"))
        .collect();
    (p, logged)
}

#[test]
fn hook_inputs_match_claude_codes_recordings_field_by_field() {
    let cases: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("cases.json")).expect("cases.json"),
    )
    .expect("cases.json is JSON");
    let mut found = Vec::new();
    let mut compared = 0;
    for (name, case) in cases.as_object().expect("cases") {
        let (p, logged) = run_case(case);
        let cwd = p.dir.display().to_string();
        let dir = fixtures().join("recordings").join(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("recordings")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for file in files {
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let want: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).expect("recording"))
                    .expect("recording is JSON");
            let Some(got) = logged.iter().find(|v| recording_name(v) == stem) else {
                found.push(format!("{name}/{stem}: Warden never fired it"));
                continue;
            };
            compared += 1;
            differences(
                &format!("{name}/{stem}"),
                &normalise(&want, "/home/dev/project"),
                &normalise(got, &cwd),
                &mut found,
            );
        }
    }
    assert!(
        found.is_empty(),
        "hook inputs differ from Claude Code's:\n{}",
        found.join("\n")
    );
    assert!(
        compared >= 24 + 16 * 7 + 39 + 7,
        "only {compared} recordings compared"
    );
}

#[test]
fn the_comparison_finds_a_changed_field() {
    // The differential test would fail on a payload that strays: a wrong value, a missing
    // field and an extra one are each named.
    let want = json!({"tool_response": {"type": "create", "originalFile": null}, "a": 1});
    let got = json!({"tool_response": {"type": "update"}, "a": 1, "model": "x"});
    let mut found = Vec::new();
    differences("w", &want, &got, &mut found);
    assert_eq!(
        found,
        [
            "w.tool_response.type: Claude Code \"create\", Warden \"update\"",
            "w.tool_response.originalFile: missing (Claude Code sends null)",
            "w.model: extra (Claude Code sends no such field)",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Resuming, continuing and compacting.

fn session_id_of(out: &Output) -> String {
    let v: Value = serde_json::from_str(stdout(out).trim()).expect("result JSON");
    v["session_id"].as_str().expect("session_id").to_string()
}

fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["content"].to_string())
        .collect()
}

#[test]
fn resume_and_continue_rebuild_the_conversation_from_the_transcript() {
    let p = Project::new(json!({}));
    p.settings(json!({"hooks": {"SessionStart": p.hook("start", "true")}}));
    let (url, requests) = fake_messages_api(text_turns(&["noted", "it was 42", "still 42"]));
    let first = p.warden_api(&url, &["-p", "remember 42", "--output-format", "json"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let id = session_id_of(&first);
    requests.recv().expect("first request");

    let again = p.warden_api(
        &url,
        &[
            "--resume",
            &id,
            "-p",
            "which number?",
            "--output-format",
            "json",
        ],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(session_id_of(&again), id, "a resumed run keeps its session");
    let asked = requests.recv().expect("second request");
    let texts = user_texts(&asked);
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(
        texts[0].contains("remember 42") && texts[1].contains("noted"),
        "{texts:?}"
    );
    assert!(texts[2].contains("which number?"), "{texts:?}");

    let cont = p.warden_api(
        &url,
        &["--continue", "-p", "sure?", "--output-format", "json"],
    );
    assert!(cont.status.success(), "{}", stderr(&cont));
    assert_eq!(session_id_of(&cont), id);
    let texts = user_texts(&requests.recv().expect("third request"));
    assert_eq!(texts.len(), 5, "{texts:?}");
    assert!(texts[3].contains("it was 42"), "{texts:?}");

    let sources: Vec<(String, String)> = p
        .log("start")
        .iter()
        .map(|v| {
            (
                v["source"].as_str().unwrap_or_default().to_string(),
                v["session_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        sources,
        [
            ("startup".to_string(), id.clone()),
            ("resume".to_string(), id.clone()),
            ("resume".to_string(), id.clone()),
        ]
    );

    // A session with no transcript is an error naming the file.
    let missing = p.warden_api(&url, &["--resume", "no-such-session", "-p", "x"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no-such-session.jsonl"),
        "{}",
        stderr(&missing)
    );
}

fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn compact_prints_what_claude_code_prints() {
    // What `claude -p "/compact"` printed (Claude Code 2.1.332, each output format): in a new
    // conversation an empty answer, the error only on the stream as the command's stderr;
    // after a compaction an empty answer and the `Compacted` notice; with only a summary left,
    // `Not enough messages to compact.`; every `result` names the local command.
    let p = Project::new(json!({}));
    let (url, _requests) = fake_messages_api(text_turns(&["hello", "SUMMARY: said hello"]));

    let fresh = p.warden_api(&url, &["-p", "/compact"]);
    assert!(fresh.status.success(), "{}", stderr(&fresh));
    assert_eq!(stdout(&fresh), "\n");
    let fresh = p.warden_api(
        &url,
        &[
            "-p",
            "/compact",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    let lines = json_lines(&fresh);
    let said = lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .expect("the command's answer");
    assert_eq!(said["message"]["model"], "<synthetic>");
    assert_eq!(
        said["local_command_source"],
        "<local-command-stderr>Error: No messages to compact</local-command-stderr>"
    );
    assert_eq!(
        said["local_command_run"],
        json!({"command": "compact", "args": ""})
    );
    let result = lines.last().expect("result");
    assert_eq!(result["result"], "");
    assert_eq!(result["local_command"], "compact");
    assert_eq!(result["stop_reason"], Value::Null);
    assert_eq!(result["is_error"], false);

    let first = p.warden_api(&url, &["-p", "hi", "--output-format", "json"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let id = session_id_of(&first);
    let compact = p.warden_api(
        &url,
        &[
            "--resume",
            &id,
            "-p",
            "/compact",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    assert!(compact.status.success(), "{}", stderr(&compact));
    let lines = json_lines(&compact);
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "system" && l["subtype"] == "compact_boundary"),
        "{lines:?}"
    );
    let notice = lines
        .iter()
        .find(|l| l["type"] == "user" && l["isReplay"] == true)
        .expect("the notice");
    assert_eq!(
        notice["message"],
        json!({"role": "user", "content": "<local-command-stdout>Compacted </local-command-stdout>"})
    );
    let result = lines.last().expect("result");
    assert_eq!(
        (
            &result["result"],
            &result["local_command"],
            &result["num_turns"]
        ),
        (&json!(""), &json!("compact"), &json!(0))
    );

    let again = p.warden_api(&url, &["--resume", &id, "-p", "/compact"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), "Not enough messages to compact.\n");
}

#[test]
fn compact_now_summarises_and_puts_the_memory_back_read_again_from_disk() {
    let p = Project::new(json!({}));
    std::fs::write(p.dir.join("CLAUDE.md"), "Memory version one.\n").expect("memory");
    let log = p.hook("compact", "true");
    let pre = p.hook("pre", "echo 'Mention every file touched.'");
    p.settings(
        json!({"hooks": {"PreCompact": pre, "PostCompact": log.clone(),
        "SessionStart": log.clone(), "InstructionsLoaded": log}}),
    );
    let (url, requests) =
        fake_messages_api(text_turns(&["hello", "SUMMARY: said hello", "carrying on"]));
    let first = p.warden_api(&url, &["-p", "hi", "--output-format", "json"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let id = session_id_of(&first);
    let asked = requests.recv().expect("first request");
    assert!(user_texts(&asked)[0].contains("Memory version one."));

    // The memory changes on disk; compaction must put back what is there now.
    std::fs::write(p.dir.join("CLAUDE.md"), "Memory version two.\n").expect("memory");
    let compact = p.warden_api(
        &url,
        &[
            "--resume",
            &id,
            "-p",
            "/compact keep the numbers",
            "--output-format",
            "json",
        ],
    );
    assert!(compact.status.success(), "{}", stderr(&compact));
    let summary_request = requests.recv().expect("summary request");
    let ask = user_texts(&summary_request).pop().unwrap_or_default();
    assert!(
        ask.contains("keep the numbers") && ask.contains("Mention every file touched."),
        "the instructions of /compact and of the PreCompact hook reach the summariser: {ask}"
    );
    assert!(
        summary_request["tools"]
            .as_array()
            .is_none_or(|t| t.is_empty()),
        "no tools for the summary"
    );
    let pre = p.log("pre");
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["custom_instructions"], "keep the numbers");
    let events: Vec<String> = p
        .log("compact")
        .iter()
        .map(|v| {
            format!(
                "{} {}",
                v["hook_event_name"].as_str().unwrap_or_default(),
                v["source"]
                    .as_str()
                    .or(v["trigger"].as_str())
                    .or(v["load_reason"].as_str())
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            "InstructionsLoaded session_start",
            "SessionStart startup",
            "InstructionsLoaded session_start",
            "SessionStart resume",
            "InstructionsLoaded compact",
            "PostCompact manual",
            "SessionStart compact",
        ]
    );

    // The next run goes on from the summary, with the memory as it is now in front of it.
    let next = p.warden_api(
        &url,
        &["--continue", "-p", "go on", "--output-format", "json"],
    );
    assert!(next.status.success(), "{}", stderr(&next));
    let texts = user_texts(&requests.recv().expect("request after compaction"));
    assert_eq!(
        texts.len(),
        2,
        "the summary replaced the messages: {texts:?}"
    );
    assert!(
        texts[0].contains("Memory version two.") && texts[0].contains("SUMMARY: said hello"),
        "{}",
        texts[0]
    );
    assert!(
        !texts.iter().any(|t| t.contains("Memory version one.")),
        "{texts:?}"
    );
}

#[test]
fn setup_fires_with_init_and_maintenance_before_session_start() {
    let p = Project::new(json!({}));
    let log = p.hook("life", "true");
    p.settings(json!({"hooks": {"Setup": log.clone(), "SessionStart": log}}));
    let (url, _requests) = fake_messages_api(text_turns(&["one", "two"]));
    let names = |p: &Project| -> Vec<String> {
        p.log("life")
            .iter()
            .map(|v| {
                format!(
                    "{} {}",
                    v["hook_event_name"].as_str().unwrap_or_default(),
                    v["trigger"]
                        .as_str()
                        .or(v["source"].as_str())
                        .unwrap_or_default()
                )
            })
            .collect()
    };
    let out = p.warden_api(&url, &["-p", "hi", "--init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = p.warden_api(&url, &["-p", "hi", "--maintenance"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = p.warden_api(&url, &["--init-only"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        names(&p),
        [
            "Setup init",
            "SessionStart startup",
            "Setup maintenance",
            "SessionStart startup",
            "Setup init",
        ]
    );
    let setup = &p.log("life")[0];
    assert_eq!(
        keys(setup),
        sorted(&[
            "session_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "trigger"
        ])
    );
}

#[test]
fn effort_rides_on_tool_events_and_stop_and_follows_the_flag() {
    let p = Project::new(json!({}));
    let log = p.hook("effort", "true");
    p.settings(json!({"hooks": {"Stop": log.clone(), "UserPromptSubmit": log}}));
    let (url, _requests) = fake_messages_api(text_turns(&["one", "two"]));
    let out = p.warden_api(&url, &["-p", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = p.warden_api(&url, &["-p", "hi", "--effort", "high"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let logged = p.log("effort");
    let effort: Vec<(String, Value)> = logged
        .iter()
        .map(|v| {
            (
                v["hook_event_name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                v["effort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        effort,
        [
            ("UserPromptSubmit".to_string(), Value::Null),
            ("Stop".to_string(), json!({"level": "medium"})),
            ("UserPromptSubmit".to_string(), Value::Null),
            ("Stop".to_string(), json!({"level": "high"})),
        ]
    );
}
