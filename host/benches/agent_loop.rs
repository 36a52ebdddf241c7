//! The agent loop's own cost per tool call (everything but the model), beside the pipeline
//! alone, measured side by side in one run.
//!
//! `cargo bench --workspace --bench agent_loop` prints p50/p99 of, interleaved round by round:
//! 1. the built-in `Read` tool called through the session's pipeline (rules, a fresh
//!    WebAssembly sandbox, the fs capability);
//! 2. the same call made by a scripted model inside a conversation, per call: a batch of
//!    `CALLS` model turns each calling `Read`, then a final answer, divided by `CALLS`. This
//!    adds building each request, the transcript lines, the tool result message and the Stop
//!    and UserPromptSubmit events (no hooks configured).
//!
//! Row 2 minus row 1 is the loop's overhead per tool call.
//!
//! 3. `/compact` of a conversation of about 150,000 tokens (600,000 characters in 200
//!    messages, read back as `--resume` would), the summary from a scripted model: everything
//!    Warden does around the model (PreCompact, the request, the memory read again from disk,
//!    PostCompact, SessionStart, the transcript).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use warden::agent::model::ScriptedDriver;
use warden::agent::model::{Block, Message, Role};
use warden::agent::transcript::Saved;
use warden::agent::{Conversation, ConversationOptions, TurnEnd};
use warden::session::{DenyAsker, Session, SessionOptions, ToolStatus};
use warden_config::Home;

const ROUNDS: usize = 60;
const CALLS: usize = 10;

fn p(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".claude")).expect("mkdir");
    std::fs::write(project.join("README.md"), "hello\n").expect("write");
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Read"]}}).to_string(),
    )
    .expect("settings");
    let mut opts = SessionOptions::new(&project, Home::new(root.join("home")));
    opts.user_home = Some(root.clone());
    opts.managed_dir = None;
    opts.claude_config =
        warden_config::ClaudeConfig::Off(warden_config::ClaudeConfigOff::NotRequested);
    let session = Arc::new(Session::load(&opts));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");

    let mut script = String::from("turns:\n");
    for _ in 0..CALLS {
        script.push_str("  - tool_use: [{name: Read, input: {file_path: README.md}}]\n");
    }
    script.push_str("  - text: done\n");

    let pipeline = || {
        let t = Instant::now();
        let o = rt
            .block_on(session.call_tool("Read", json!({"file_path": "README.md"}), &DenyAsker))
            .expect("pipeline");
        assert!(matches!(o.status, ToolStatus::Ok { .. }));
        t.elapsed()
    };
    let conversation = |transcript: &std::path::Path| {
        let driver = Arc::new(ScriptedDriver::parse(&script, "bench").expect("script"));
        let mut c = Conversation::new(
            session.clone(),
            driver,
            Arc::new(DenyAsker),
            ConversationOptions {
                max_turns: CALLS as u32 + 1,
                transcript_path: Some(transcript.to_path_buf()),
                ..ConversationOptions::default()
            },
        );
        rt.block_on(c.start());
        let t = Instant::now();
        let report = rt.block_on(c.send("read it"));
        let d = t.elapsed() / CALLS as u32;
        assert!(
            matches!(report.end, TurnEnd::Completed { .. }),
            "{:?}",
            report.end
        );
        d
    };

    // Warm: compile the Read component and fill the instance template.
    for _ in 0..5 {
        pipeline();
    }
    let transcript = root.join("t.jsonl");
    conversation(&transcript);

    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.push(pipeline());
        let _ = std::fs::remove_file(&transcript);
        b.push(conversation(&transcript));
    }
    let (a50, a99, b50, b99) = (
        p(&mut a, 0.5),
        p(&mut a, 0.99),
        p(&mut b, 0.5),
        p(&mut b, 0.99),
    );
    // A conversation of ~150k tokens (4 characters a token), as --resume reads it back.
    let big: Vec<Message> = (0..200)
        .map(|i| Message {
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            content: vec![Block::text(format!("{i} {}", "lorem ipsum ".repeat(250)))],
        })
        .collect();
    let compact_script = "turns:\n  - for: compact\n    text: the summary\n";
    let compaction = |transcript: &std::path::Path| {
        let driver = Arc::new(ScriptedDriver::parse(compact_script, "bench").expect("script"));
        let mut c = Conversation::new(
            session.clone(),
            driver,
            Arc::new(DenyAsker),
            ConversationOptions {
                transcript_path: Some(transcript.to_path_buf()),
                ..ConversationOptions::default()
            },
        );
        c.resume(Saved {
            messages: big.clone(),
            ..Saved::default()
        });
        rt.block_on(c.start());
        let t = Instant::now();
        let report = rt.block_on(c.send("/compact"));
        let d = t.elapsed();
        assert!(
            matches!(report.end, TurnEnd::Completed { .. }) && c.messages().len() == 1,
            "{:?}",
            report.end
        );
        d
    };
    let mut compactions = Vec::new();
    for _ in 0..20 {
        let _ = std::fs::remove_file(&transcript);
        compactions.push(compaction(&transcript));
    }
    let (c50, c99) = (p(&mut compactions, 0.5), p(&mut compactions, 0.99));

    let mut out = String::new();
    let _ = writeln!(
        out,
        "agent_loop ({ROUNDS} rounds, {CALLS} calls a conversation)"
    );
    let _ = writeln!(
        out,
        "  pipeline alone, Read     p50 {}  p99 {}",
        us(a50),
        us(a99)
    );
    let _ = writeln!(
        out,
        "  in the loop, per call    p50 {}  p99 {}",
        us(b50),
        us(b99)
    );
    let _ = writeln!(
        out,
        "  loop overhead per call   p50 {}",
        us(b50.saturating_sub(a50))
    );
    let _ = writeln!(
        out,
        "  /compact of ~150k tokens p50 {}  p99 {} (20 rounds, scripted summary)",
        us(c50),
        us(c99)
    );
    print!("{out}");
}
