//! The conversation's transcript: one JSON object per line at `transcript_path`, in the shape
//! Claude Code writes (`type`, `uuid`, `parentUuid`, `sessionId`, `timestamp`, `cwd`,
//! `isSidechain`, `message`), so tools that read Claude Code transcripts read Warden's.
//!
//! Hooks get the path in `transcript_path` and may read the file while the session runs, so
//! every line is written and flushed when it happens. A transcript that cannot be written is
//! reported once and the conversation goes on: losing the log must not stop the work.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use warden_model::{Message, Role, Usage};

/// Why a transcript could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("cannot read the transcript {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a transcript line.
    #[error("{path}:{line}: not a transcript line: {reason}")]
    Line {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// No transcript to continue.
    #[error("no conversation to continue in {dir}")]
    NoneToContinue {
        /// Where transcripts were looked for.
        dir: PathBuf,
    },
}

/// A conversation read back from its transcript, to resume it.
#[derive(Debug, Clone, Default)]
pub struct Saved {
    /// The main thread's messages, from the last compaction on (what the model had).
    pub messages: Vec<Message>,
    /// The session id the lines carry.
    pub session_id: Option<String>,
    /// The last line's `uuid`: the parent of the next one.
    pub last_uuid: Option<String>,
}

/// Reads a transcript back: user and assistant lines of the main thread in order, with the
/// messages before the last `compact_boundary` dropped, as the summary after it replaced them.
pub fn load(path: &Path) -> Result<Saved, TranscriptError> {
    let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut saved = Saved::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| TranscriptError::Line {
            path: path.to_path_buf(),
            line: i + 1,
            reason,
        };
        let v: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if let Some(u) = v.get("uuid").and_then(Value::as_str) {
            saved.last_uuid = Some(u.to_string());
        }
        if saved.session_id.is_none() {
            saved.session_id = v.get("sessionId").and_then(Value::as_str).map(String::from);
        }
        if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        match v.get("type").and_then(Value::as_str) {
            Some("user" | "assistant") => {
                let m = v
                    .get("message")
                    .cloned()
                    .ok_or_else(|| bad("no `message`".into()))?;
                let message: Message = serde_json::from_value(json!({
                    "role": m.get("role").cloned().unwrap_or(Value::Null),
                    "content": m.get("content").cloned().unwrap_or(Value::Null),
                }))
                .map_err(|e| bad(e.to_string()))?;
                saved.messages.push(message);
            }
            Some("system")
                if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") =>
            {
                saved.messages.clear();
            }
            _ => {}
        }
    }
    Ok(saved)
}

/// The most recently written transcript in `dir` (`--continue`).
pub fn latest(dir: &Path) -> Result<PathBuf, TranscriptError> {
    let none = || TranscriptError::NoneToContinue {
        dir: dir.to_path_buf(),
    };
    let entries = std::fs::read_dir(dir).map_err(|_| none())?;
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
        .ok_or_else(none)
}

/// An append-only JSONL transcript.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    cwd: String,
    agent_id: Option<String>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last_uuid: Option<String>,
    file: Option<std::fs::File>,
    error: Option<String>,
}

impl Transcript {
    /// A transcript at `path` (created with its directory on the first line). `agent_id` marks
    /// a subagent's transcript (`isSidechain: true`).
    pub fn new(path: PathBuf, session_id: &str, cwd: &Path, agent_id: Option<String>) -> Self {
        Transcript {
            path,
            session_id: session_id.to_string(),
            cwd: cwd.display().to_string(),
            agent_id,
            state: Mutex::new(State::default()),
        }
    }

    /// Goes on after the line `uuid` (a resumed conversation's last line).
    pub fn continue_after(&self, uuid: Option<String>) {
        if let Ok(mut s) = self.state.lock() {
            s.last_uuid = uuid;
        }
    }

    /// Where it is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first write error, if any line could not be written.
    pub fn error(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.error.clone())
    }

    /// Appends a message.
    pub fn message(&self, message: &Message, model: Option<&str>, usage: Option<Usage>) {
        let kind = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut m = json!({ "role": kind, "content": message.content });
        if let (Some(model), Some(o)) = (model, m.as_object_mut()) {
            o.insert("model".into(), Value::String(model.to_string()));
            if let Some(u) = usage {
                o.insert(
                    "usage".into(),
                    json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}),
                );
            }
        }
        self.line(kind, json!({ "message": m }));
    }

    /// Appends a system line (a hook's feedback, a stop, an error).
    pub fn system(&self, subtype: &str, content: &str) {
        self.line(
            "system",
            json!({ "subtype": subtype, "content": content, "level": "info" }),
        );
    }

    fn line(&self, kind: &str, extra: Value) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let uuid = crate::instructions::new_session_id();
        let mut v = json!({
            "type": kind,
            "uuid": uuid,
            "parentUuid": state.last_uuid,
            "sessionId": self.session_id,
            "timestamp": iso_now(),
            "cwd": self.cwd,
            "isSidechain": self.agent_id.is_some(),
        });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            if let Some(a) = &self.agent_id {
                o.insert("agentId".into(), Value::String(a.clone()));
            }
            o.extend(e);
        }
        if state.file.is_none() && state.error.is_none() {
            let opened = self
                .path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| {
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&self.path)
                });
            match opened {
                Ok(f) => state.file = Some(f),
                Err(e) => {
                    state.error = Some(format!(
                        "cannot write the transcript {}: {e}",
                        self.path.display()
                    ));
                }
            }
        }
        if let Some(f) = state.file.as_mut() {
            let mut text = v.to_string();
            text.push('\n');
            if let Err(e) = f.write_all(text.as_bytes()) {
                state.error = Some(format!(
                    "cannot write the transcript {}: {e}",
                    self.path.display()
                ));
                state.file = None;
            }
        }
        state.last_uuid = Some(uuid);
    }
}

/// The current time as RFC 3339 UTC with milliseconds (`2026-12-01T20:52:03.123Z`).
pub fn iso_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        (s / 60) % 60,
        s % 60,
        d.subsec_millis()
    )
}

/// Today's date, `YYYY-MM-DD` (UTC).
pub fn today() -> String {
    iso_now()[..10].to_string()
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's
/// algorithm), so no date crate is needed for a timestamp.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_423), (2025, 12, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(iso_now().len(), 24);
    }

    #[test]
    fn lines_chain_and_flush() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a/b/t.jsonl");
        let t = Transcript::new(path.clone(), "s1", dir.path(), None);
        t.message(&Message::user("hello"), None, None);
        t.system("stop_hook_feedback", "again");
        let text = std::fs::read_to_string(&path).expect("written");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "user");
        assert_eq!(lines[0]["message"]["content"][0]["text"], "hello");
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
        assert_eq!(lines[1]["sessionId"], "s1");
    }

    #[test]
    fn a_transcript_reads_back_from_its_last_compaction_without_sidechains() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let t = Transcript::new(path.clone(), "s1", dir.path(), None);
        t.message(&Message::user("before"), None, None);
        t.system("compact_boundary", "manual");
        t.message(&Message::user("summary"), None, None);
        t.message(
            &Message {
                role: Role::Assistant,
                content: vec![warden_model::Block::text("ok")],
            },
            Some("m"),
            Some(Usage::default()),
        );
        let side = Transcript::new(path.clone(), "s1", dir.path(), Some("a1".into()));
        side.message(&Message::user("subagent task"), None, None);
        let saved = load(&path).expect("loads");
        assert_eq!(saved.session_id.as_deref(), Some("s1"));
        let texts: Vec<String> = saved.messages.iter().map(Message::text).collect();
        assert_eq!(texts, ["summary", "ok"]);
        assert!(saved.last_uuid.is_some());
        std::fs::write(&path, "{\"type\":\"user\"}\nnot json\n").expect("write");
        let e = load(&path).expect_err("bad lines");
        assert!(e.to_string().contains("t.jsonl:1"), "{e}");
    }
}
