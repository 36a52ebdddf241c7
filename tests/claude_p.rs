//! `warden run` as a drop-in for `claude -p`: what it prints (`--output-format text | json |
//! stream-json`, `--verbose`), its exit codes, PermissionRequest hooks answering an ask
//! nobody can, and the tool results and hook inputs in Claude Code's shapes (the field sets
//! are those of hook stdin captured from Claude Code 2.1.332).

use std::path::PathBuf;
use std::process::{Command, Output};

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
