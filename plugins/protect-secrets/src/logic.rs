//! The protect-secrets decision, shared by the lean component (`lib.rs`) and the std build
//! the benchmarks compare it with (`plugins/testing/protect-secrets-std`).

use alloc::format;
use alloc::string::{String, ToString};

use warden_sdk::{Hook, HookEvent, HookResult};

/// The hook.
pub struct ProtectSecrets;

impl Hook for ProtectSecrets {
    fn handle(event: HookEvent) -> HookResult {
        let Some(call) = event.tool_call() else {
            return HookResult::none();
        };
        let hit = match call.tool_name {
            "Read" | "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => call
                .file_path()
                .filter(|p| is_secret(p))
                .map(str::to_string),
            "Bash" => call.command().and_then(secret_in_command),
            _ => None,
        };
        match hit {
            Some(path) => HookResult::deny(format!(
                "{path} holds credentials and is protected by the protect-secrets plugin. \
                 Do not read, print or edit it. If you need a setting, ask the user for the \
                 specific non-secret value, or read an example file such as .env.example."
            )),
            None => HookResult::none(),
        }
    }
}

/// Whether `path` names a protected file.
pub fn is_secret(path: &str) -> bool {
    let path = path.trim_matches(|c| c == '"' || c == '\'');
    let mut components = path
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".");
    let Some(name) = path.rsplit(['/', '\\']).next() else {
        return false;
    };
    if components.any(|c| c == "secrets") && !path.ends_with("secrets") {
        return true;
    }
    if name == ".env" {
        return true;
    }
    if let Some(suffix) = name.strip_prefix(".env.") {
        return !matches!(suffix, "example" | "sample" | "template" | "dist");
    }
    name.ends_with(".pem") || name.starts_with("id_rsa")
}

/// The first protected path a shell command mentions, if any.
pub fn secret_in_command(command: &str) -> Option<String> {
    // Split on whitespace and the shell's operator and redirection characters; quotes are
    // stripped so `cat ".env"` is caught too. Over-matching a word is the safe direction here.
    command
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' | '=')
        })
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'' || c == '$' || c == '{' || c == '}'))
        .find(|w| !w.is_empty() && is_secret(w))
        .map(str::to_string)
}
