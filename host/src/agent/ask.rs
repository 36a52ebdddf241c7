//! Who answers a permission rule's `ask` in a conversation.
//!
//! - [`TerminalAsker`]: on a terminal, *allow once*, *always* or *deny*. "Always" writes an
//!   allow rule for the call to the project's `.claude/settings.local.json`, as Claude Code
//!   does, and stops asking for it for the rest of the session.
//! - [`DenyAsker`](crate::session::DenyAsker): where nobody can answer (a pipe, CI, `--json`):
//!   every `ask` is a denial whose message says so.
//! - [`FnAsker`]: an embedder's callback.

use std::collections::HashSet;
use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::session::{AskAnswer, AskFuture, AskRequest, Asker};

/// An embedder's callback as an [`Asker`].
pub struct FnAsker<F>(pub F);

impl<F> Asker for FnAsker<F>
where
    F: Fn(&AskRequest<'_>) -> AskAnswer + Send + Sync,
{
    fn ask<'a>(&'a self, request: AskRequest<'a>) -> AskFuture<'a> {
        let answer = (self.0)(&request);
        Box::pin(std::future::ready(answer))
    }

    fn label(&self) -> &str {
        "embedder"
    }
}

/// The allow rule that "always" saves for a call, in the form Claude Code writes: the exact
/// command for Bash, the absolute path (`//…`) for file tools, the domain for WebFetch, the
/// tool itself for everything else (MCP tools included).
///
/// `None` when no rule says exactly this call: a command or path with a rule metacharacter
/// (`*`, `?`, `[`, `{`, `(`, `)`) or a line break would be saved as a wider pattern than the
/// call the user approved (`rm *` approved once must not become "any rm"), so such a call is
/// allowed this once and nothing is saved.
pub fn rule_for(tool: &str, input: &Value, cwd: &Path) -> Option<String> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let literal = |t: &str| {
        !t.is_empty()
            && !t.chars().any(|c| {
                matches!(
                    c,
                    '*' | '?' | '[' | ']' | '{' | '}' | '(' | ')' | '\n' | '\r'
                )
            })
    };
    match tool {
        "Bash" => s("command")
            .map(str::trim)
            .filter(|c| literal(c))
            .map(|c| format!("Bash({c})")),
        "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => s("file_path")
            .or_else(|| s("notebook_path"))
            .filter(|p| literal(p))
            .map(|p| {
                let abs = if Path::new(p).is_absolute() {
                    PathBuf::from(p)
                } else {
                    cwd.join(p)
                };
                format!("{tool}(/{})", abs.display())
            }),
        "WebFetch" => s("url")
            .and_then(host_of)
            .map(|h| format!("WebFetch(domain:{h})")),
        _ => Some(tool.to_string()),
    }
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Adds `rule` to `permissions.allow` of the local settings file of a session in `cwd`
/// (`.claude/settings.local.json` at the repository root), keeping everything else in it.
/// Returns the file written.
pub fn save_allow_rule(cwd: &Path, rule: &str) -> Result<PathBuf, String> {
    let path = warden_config::local_root(cwd)
        .join(".claude")
        .join("settings.local.json");
    warden_plugins::store::edit_settings(&path, |m| {
        let perms = m
            .entry("permissions")
            .or_insert_with(|| Value::Object(Default::default()));
        if !perms.is_object() {
            *perms = Value::Object(Default::default());
        }
        if let Some(p) = perms.as_object_mut() {
            let allow = p.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
            if !allow.is_array() {
                *allow = Value::Array(Vec::new());
            }
            if let Some(a) = allow.as_array_mut()
                && !a.iter().any(|v| v.as_str() == Some(rule))
            {
                a.push(Value::String(rule.to_string()));
            }
        }
    })
    .map_err(|e| e.to_string())?;
    Ok(path)
}

/// Asks on the terminal: `y` once, `a` always, anything else denies. Questions from calls
/// that run in parallel are asked one at a time.
pub struct TerminalAsker {
    cwd: PathBuf,
    remembered: Mutex<HashSet<String>>,
    turn: tokio::sync::Mutex<()>,
    /// Where "always" saved its rules, and any failure to save one.
    pub saved: Arc<Mutex<Vec<String>>>,
}

impl TerminalAsker {
    /// A terminal asker for a session in `cwd`.
    pub fn new(cwd: &Path) -> Self {
        TerminalAsker {
            cwd: cwd.to_path_buf(),
            remembered: Mutex::new(HashSet::new()),
            turn: tokio::sync::Mutex::new(()),
            saved: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Whether standard input and standard error are a terminal (only then can anyone answer).
    pub fn available() -> bool {
        use std::io::IsTerminal as _;
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}

impl Asker for TerminalAsker {
    fn ask<'a>(&'a self, request: AskRequest<'a>) -> AskFuture<'a> {
        Box::pin(async move {
            let rule = rule_for(request.tool, request.input, &self.cwd);
            if let Some(rule) = &rule
                && self
                    .remembered
                    .lock()
                    .map(|r| r.contains(rule))
                    .unwrap_or(false)
            {
                return AskAnswer::AllowAlways;
            }
            let _turn = self.turn.lock().await;
            let input = request.input.to_string();
            let shown: String = input.chars().take(400).collect();
            let question = format!(
                "\n? {}({}{})\n  {}\n  [y] yes, once   {}[n] no: ",
                request.tool,
                shown,
                if shown.len() < input.len() { "…" } else { "" },
                request.reason,
                match &rule {
                    Some(rule) => format!("[a] yes, and always allow `{rule}`   "),
                    None => String::new(),
                },
            );
            let line = tokio::task::spawn_blocking(move || {
                let mut err = std::io::stderr();
                let _ = err.write_all(question.as_bytes());
                let _ = err.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line)
            })
            .await;
            let answer = match line {
                Ok(Ok(l)) => l.trim().to_ascii_lowercase(),
                _ => String::new(),
            };
            match answer.as_str() {
                "y" | "yes" => AskAnswer::AllowOnce,
                "a" | "always" => {
                    let Some(rule) = rule else {
                        // No rule says exactly this call; it is allowed this once only.
                        return AskAnswer::AllowOnce;
                    };
                    if let Ok(mut r) = self.remembered.lock() {
                        r.insert(rule.clone());
                    }
                    let note = match save_allow_rule(&self.cwd, &rule) {
                        Ok(p) => format!("saved `{rule}` to {}", p.display()),
                        Err(e) => format!("could not save `{rule}`: {e}"),
                    };
                    eprintln!("  {note}");
                    if let Ok(mut s) = self.saved.lock() {
                        s.push(note);
                    }
                    AskAnswer::AllowAlways
                }
                _ => AskAnswer::Deny,
            }
        })
    }

    fn label(&self) -> &str {
        "user"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_for_calls() {
        let cwd = Path::new("/p");
        let rule = |tool: &str, input: Value| rule_for(tool, &input, cwd);
        assert_eq!(
            rule("Bash", json!({"command": "npm test"})).as_deref(),
            Some("Bash(npm test)")
        );
        assert_eq!(
            rule("Edit", json!({"file_path": "src/a.rs"})).as_deref(),
            Some("Edit(//p/src/a.rs)")
        );
        assert_eq!(
            rule("WebFetch", json!({"url": "https://u@Docs.rs:443/x"})).as_deref(),
            Some("WebFetch(domain:docs.rs)")
        );
        assert_eq!(rule("mcp__gh__x", json!({})).as_deref(), Some("mcp__gh__x"));
        // A call no rule says exactly is never saved as a wider one: approving `rm *` once
        // must not allow every rm, nor `a)b` every command.
        for command in ["rm *", "a)b", "ls\nrm -rf ~", "cat {a,b}", ""] {
            assert_eq!(rule("Bash", json!({"command": command})), None, "{command}");
        }
        assert_eq!(rule("Read", json!({"file_path": "src/*.rs"})), None);
        assert_eq!(rule("Bash", json!({})), None);
    }

    #[test]
    fn always_keeps_the_local_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let local = dir.path().join(".claude/settings.local.json");
        std::fs::create_dir_all(local.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            &local,
            r#"{"env": {"A": "1"}, "permissions": {"allow": ["Read"]}}"#,
        )
        .expect("write");
        save_allow_rule(dir.path(), "Bash(npm test)").expect("saved");
        save_allow_rule(dir.path(), "Bash(npm test)").expect("saved twice");
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&local).expect("read")).expect("json");
        assert_eq!(v["env"]["A"], "1");
        assert_eq!(v["permissions"]["allow"], json!(["Read", "Bash(npm test)"]));
        // A file that is not JSON is never overwritten.
        std::fs::write(&local, "{oops").expect("write");
        assert!(save_allow_rule(dir.path(), "Bash(x)").is_err());
        assert_eq!(std::fs::read_to_string(&local).expect("read"), "{oops");
    }
}
