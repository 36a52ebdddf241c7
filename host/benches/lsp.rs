//! What the session adds to a language server, measured side by side in one run on one warm
//! pyright (the pinned one of the LSP tests, started confined by the session).
//!
//! `cargo bench -p warden --bench lsp` prints p50/p99 of, interleaved round by round so load
//! on the machine hits both rows of a pair alike:
//! 1. `textDocument/hover` sent straight to the session's pyright through its client;
//! 2. the same hover as the `LSP` tool through the session's pipeline (input validation,
//!    rules, the file re-read and compared with the open text, the result formatted);
//! 3. a Write of a `.txt` file, which no server handles;
//! 4. a Write of a Python file with a type error, until its result holds the
//!    `<new-diagnostics>` pyright published (each round writes another text, so pyright
//!    analyses it anew);
//! 5. the same change sent straight to pyright (`didChange`, `didSave`) until it publishes.
//!
//! Row 2 minus row 1 is the LSP tool's overhead (goal: ≤ 1 ms). Row 4 includes the 250 ms
//! the session waits after the first publication for more (`warden::lsp::SETTLE`).

#[path = "../../tests/support/peers.rs"]
mod peers;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use warden::session::{DenyAsker, Session, SessionOptions, ToolStatus};
use warden_config::Home;

const HOVER_ROUNDS: usize = 300;
const WRITE_ROUNDS: usize = 20;

fn p(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn row(name: &str, samples: &mut [Duration]) -> Duration {
    let (p50, p99) = (p(samples, 0.5), p(samples, 0.99));
    println!("  {name:<52} {:>11} / {:>11}", ms(p50), ms(p99));
    p50
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let proj = dir.path().join("proj");
    let home = dir.path().join("home");
    let plugin = dir.path().join("plugin");
    for d in [
        proj.join(".claude"),
        home.clone(),
        plugin.join(".claude-plugin"),
    ] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let proj = proj.canonicalize().expect("canonical");
    std::fs::write(
        home.join("settings.json"),
        json!({"sandbox": {"readablePaths": [peers::install_dir()]}}).to_string(),
    )
    .expect("user settings");
    std::fs::write(
        proj.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["LSP", "Write"]}}).to_string(),
    )
    .expect("settings");
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "langs"}"#,
    )
    .expect("manifest");
    std::fs::write(
        plugin.join(".lsp.json"),
        json!({"python": {
            "command": peers::node().display().to_string(),
            "args": [peers::pyright().display().to_string(), "--stdio"],
            "extensionToLanguage": {".py": "python"}
        }})
        .to_string(),
    )
    .expect(".lsp.json");
    let lib = proj.join("lib.py");
    std::fs::write(
        &lib,
        "def greet(name: str) -> str:\n    return \"hello \" + name\n",
    )
    .expect("lib.py");
    let main_py = proj.join("main.py");
    let text = |n: usize| {
        format!(
            "from lib import greet\n\nmessage{n}: int = greet(\"world\")\nprint(greet(\"again\"))\n"
        )
    };
    std::fs::write(&main_py, text(0)).expect("main.py");

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut opts = SessionOptions::new(&proj, Home::new(&home));
    opts.managed_dir = None;
    opts.claude_config = warden_config::ClaudeConfig::default();
    opts.runtime.pooling = true;
    opts.plugin_dirs = vec![plugin];
    let session = Arc::new(Session::load(&opts));

    let hover_input =
        json!({"operation": "hover", "filePath": "main.py", "line": 4, "character": 7});
    let tool_hover = || {
        rt.block_on(async {
            let o = session
                .call_tool("LSP", hover_input.clone(), &DenyAsker)
                .await
                .expect("LSP");
            match &o.status {
                ToolStatus::Ok { content, .. } => assert!(content.contains("def greet"), "{o:?}"),
                other => panic!("LSP hover: {other:?}"),
            }
        })
    };
    // Starts pyright, opens main.py and waits for its analysis.
    tool_hover();
    let client = rt
        .block_on(session.lsp().client_for(&main_py))
        .expect("pyright")
        .expect("a server for .py");
    let uri = warden_lsp::client::file_uri(&main_py).expect("uri");
    let direct_hover = || {
        rt.block_on(async {
            let h = client
                .request::<warden_lsp::lsp_types::request::HoverRequest>(
                    warden_lsp::lsp_types::HoverParams {
                        text_document_position_params:
                            warden_lsp::lsp_types::TextDocumentPositionParams {
                                text_document: warden_lsp::lsp_types::TextDocumentIdentifier {
                                    uri: uri.clone(),
                                },
                                position: warden_lsp::lsp_types::Position {
                                    line: 3,
                                    character: 6,
                                },
                            },
                        work_done_progress_params: Default::default(),
                    },
                )
                .await
                .expect("hover");
            assert!(h.is_some());
        })
    };
    for _ in 0..30 {
        tool_hover();
        direct_hover();
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..HOVER_ROUNDS {
        let t = Instant::now();
        direct_hover();
        a.push(t.elapsed());
        let t = Instant::now();
        tool_hover();
        b.push(t.elapsed());
    }

    let write = |file: &std::path::Path, content: &str| {
        rt.block_on(async {
            let o = session
                .call_tool(
                    "Write",
                    json!({"file_path": file, "content": content}),
                    &DenyAsker,
                )
                .await
                .expect("Write");
            match o.status {
                ToolStatus::Ok { content, .. } => content,
                other => panic!("Write: {other:?}"),
            }
        })
    };
    let notes = proj.join("notes.txt");
    let mut n = 0;
    let mut write_py = || {
        n += 1;
        let out = write(&main_py, &text(n));
        assert!(out.contains("<new-diagnostics>"), "{out}");
    };
    let mut m = 10_000;
    let mut direct_change = || {
        m += 1;
        let t = text(m);
        rt.block_on(async {
            let before = client.publications();
            assert!(client.sync(&main_py, "python", &t).expect("didChange"));
            client.saved(&main_py, &t);
            let d = client
                .diagnostics_after(&main_py, before, Duration::from_secs(10), Duration::ZERO)
                .await
                .expect("diagnostics");
            assert!(!d.is_empty());
        });
    };
    for _ in 0..3 {
        write_py();
        write(&notes, "notes\n");
        direct_change();
    }
    let (mut c, mut d, mut e) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WRITE_ROUNDS {
        let t = Instant::now();
        write(&notes, &format!("notes {i}\n"));
        c.push(t.elapsed());
        let t = Instant::now();
        write_py();
        d.push(t.elapsed());
        let t = Instant::now();
        direct_change();
        e.push(t.elapsed());
    }

    println!(
        "Language servers, warm pyright {} (p50 / p99):",
        peers::PYRIGHT
    );
    println!("  hover, {HOVER_ROUNDS} rounds interleaved:");
    let a50 = row("1. direct request to the server", &mut a);
    let b50 = row("2. the LSP tool through the session's pipeline", &mut b);
    println!(
        "  LSP tool overhead (2 - 1, p50): {} (goal ≤ 1 ms)",
        ms(b50.saturating_sub(a50))
    );
    println!("  edits, {WRITE_ROUNDS} rounds interleaved:");
    row("3. Write of a .txt (no server)", &mut c);
    row("4. Write of a .py until <new-diagnostics>", &mut d);
    row(
        "5. didChange straight to pyright until it publishes",
        &mut e,
    );
    rt.block_on(session.close());
}
