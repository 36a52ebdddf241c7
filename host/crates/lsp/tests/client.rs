//! The client against a toy server (`fixtures/toy_server.py`): diagnostics, document sync,
//! the file gate, graceful shutdown, and restarts after crashes up to `maxRestarts`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use warden_lsp::{
    FileGate, LspManager, OpenGate, ServerSpec, Status, ToolInput, Unconfined, config, ops,
};

fn toy(extra: &[&str], tweak: serde_json::Value) -> serde_json::Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/toy_server.py");
    let mut args = vec![script.display().to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut c = json!({
        "command": "python3",
        "args": args,
        "extensionToLanguage": {".toy": "toy"},
        "shutdownTimeout": 2000,
    });
    if let (Some(c), Some(t)) = (c.as_object_mut(), tweak.as_object()) {
        c.extend(t.clone());
    }
    c
}

fn manager(dir: &Path, entry: serde_json::Value, gate: Arc<dyn FileGate>) -> LspManager {
    let config = config::parse(&entry).map_err(|p| format!("{p:?}"));
    LspManager::new(
        dir,
        vec![ServerSpec {
            id: "plugin:t:toy".into(),
            config,
            launcher: Arc::new(Unconfined),
        }],
        gate,
    )
}

fn hover(path: &Path) -> ToolInput {
    serde_json::from_value(json!({
        "operation": "hover",
        "filePath": path.display().to_string(),
        "line": 1,
        "character": 1,
    }))
    .expect("input")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_server_is_restarted_then_given_up_after_max_restarts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a.toy");
    std::fs::write(&file, "first\n").expect("write");
    let m = manager(
        dir.path(),
        toy(&["--crash-on", "2"], json!({"maxRestarts": 1})),
        Arc::new(OpenGate),
    );
    let input = hover(&file);

    let one = ops::run(&m, &input, &file).await.expect("first request");
    assert!(one.result.contains("hover 1"), "{}", one.result);
    let crash = ops::run(&m, &input, &file)
        .await
        .expect_err("the server crashes");
    assert!(crash.contains("crashing on purpose"), "{crash}");

    // Started again: a fresh process answers its first request.
    let again = ops::run(&m, &input, &file).await.expect("restarted");
    assert!(again.result.contains("hover 1"), "{}", again.result);
    assert_eq!(m.list()[0].1, Status::Running { restarts: 1 });

    let crash = ops::run(&m, &input, &file)
        .await
        .expect_err("crashes again");
    assert!(crash.contains("crashing on purpose"), "{crash}");
    let given_up = ops::run(&m, &input, &file).await.expect_err("given up");
    assert!(given_up.contains("maxRestarts 1"), "{given_up}");
    assert!(matches!(m.list()[0].1, Status::Stopped(_)));
    // It stays stopped: no new process is started however often it is asked.
    let still = ops::run(&m, &input, &file)
        .await
        .expect_err("still stopped");
    assert_eq!(still, given_up);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_restart_on_crash_a_crash_is_final() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a.toy");
    std::fs::write(&file, "x\n").expect("write");
    let m = manager(
        dir.path(),
        toy(&["--crash-on", "1"], json!({"restartOnCrash": false})),
        Arc::new(OpenGate),
    );
    let input = hover(&file);
    ops::run(&m, &input, &file).await.expect_err("crash");
    let e = ops::run(&m, &input, &file)
        .await
        .expect_err("not restarted");
    assert!(e.contains("restartOnCrash is false"), "{e}");
}

struct NoDotEnv;

impl FileGate for NoDotEnv {
    fn check(&self, path: &Path) -> Result<(), String> {
        if path.file_name().is_some_and(|n| n == "secret.toy") {
            return Err(format!("{} is denied", path.display()));
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_follow_changes_denied_files_are_never_sent_and_shutdown_is_graceful() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("log");
    let file = dir.path().join("a.toy");
    let secret = dir.path().join("secret.toy");
    std::fs::write(&file, "first line\n").expect("write");
    std::fs::write(&secret, "TOKEN=hunter2\n").expect("write");
    let m = manager(
        dir.path(),
        toy(&["--log", &log.display().to_string()], json!({})),
        Arc::new(NoDotEnv),
    );
    let wait = Duration::from_secs(10);
    let quiet = Duration::from_millis(100);
    let (_, d) = m
        .diagnostics(&file, false, wait, quiet)
        .await
        .expect("diagnostics")
        .expect("a server handles .toy");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].message, "text: first line");
    assert_eq!(
        ops::diagnostic_line("a.toy", &d[0]),
        "a.toy:1:1 warning text: first line [toy]"
    );

    std::fs::write(&file, "second line\n").expect("rewrite");
    let (_, d) = m
        .diagnostics(&file, true, wait, quiet)
        .await
        .expect("diagnostics")
        .expect("handled");
    assert_eq!(d[0].message, "text: second line");
    let block = ops::new_diagnostics_block("a.toy", &d).expect("a block");
    assert!(block.starts_with("<new-diagnostics>") && block.ends_with("</new-diagnostics>"));

    let refused = m
        .diagnostics(&secret, false, wait, quiet)
        .await
        .expect_err("a denied file is refused");
    assert!(refused.contains("denied"), "{refused}");
    assert!(
        m.diagnostics(&dir.path().join("b.txt"), false, wait, quiet)
            .await
            .expect("no server")
            .is_none()
    );

    m.shutdown().await;
    let log = std::fs::read_to_string(&log).expect("log");
    let methods: Vec<&str> = log.lines().collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "initialized",
            "textDocument/didOpen",
            "textDocument/didChange",
            "textDocument/didSave",
            "shutdown",
            "exit"
        ],
        "the secret file is never opened"
    );
}

#[test]
fn unknown_operations_and_fields_are_refused_by_the_input_type() {
    let bad = serde_json::from_value::<ToolInput>(json!({
        "operation": "rename", "filePath": "a", "line": 1, "character": 1
    }));
    assert!(bad.is_err());
    let schema = ops::input_schema();
    assert_eq!(
        schema["properties"]["operation"]["enum"]
            .as_array()
            .map(Vec::len),
        Some(9)
    );
}
