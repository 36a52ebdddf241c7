//! Structural validation of hooks configuration (`hooks/hooks.json`, inline `hooks` objects and
//! the hooks of `warden.toml`). Execution lives in the hooks crate; this module only checks the
//! shape, classifies problems the way Claude Code's validator does, and returns the groups that
//! would load.
//!
//! Rules (Claude Code's documented behaviour):
//! * A file is *wrapped* (`{"description"?, "hooks": {...}}`) when it has a `hooks` key holding an
//!   object; a `hooks` key holding anything else is an error; without a `hooks` key the top-level
//!   keys are event names (*bare* form).
//! * Unknown event names are warnings (with a "did you mean"), their groups are skipped.
//! * An unknown handler `type` is an error; a missing required field is an error.
//! * A handler type the event does not support (e.g. `prompt` on `SessionStart`) is a warning and
//!   the handler is skipped.
//! * A non-string or uncompilable `matcher` is a warning and the group is skipped.
//! * Unknown keys at group or handler level are warnings, never errors.
//! * `timeout` is in seconds; a value ≥ 1000 is kept but warned about (it looks like milliseconds).

use std::path::Path;

use serde_json::{Map, Value};

use crate::diag::Diagnostic;
use crate::util::{Src, did_you_mean};
use warden_config::json_type_name;
use warden_vocab::schema::Field;
use warden_vocab::schema::hooks::{HandlerSpec, HooksDocument, MatcherGroup};

/// Every hook event name Claude Code knows (the hook engine's list, so the two never drift).
pub static EVENTS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    warden_vocab::Event::ALL
        .iter()
        .map(|e| e.as_str())
        .collect()
});

/// Claude Code's handler types.
pub const HANDLER_TYPES: &[&str] = &["command", "http", "mcp_tool", "prompt", "agent"];

/// Whether `event` accepts handlers of `kind` (`wasm` runs wherever `command` does).
pub fn event_supports(event: &str, kind: &str) -> bool {
    // Unknown types and events are reported elsewhere; do not add a second diagnostic.
    let Ok(ty) = kind.parse::<warden_vocab::HandlerType>() else {
        return true;
    };
    event
        .parse::<warden_vocab::Event>()
        .map_or(true, |e| e.supports(ty))
}

/// Where a hooks object comes from, which decides the handler types allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookFlavor {
    /// Claude Code hooks (`hooks.json`, inline `hooks`): the five documented types.
    ClaudeCode,
    /// `warden.toml` hooks: only `{type = "wasm", component = "<name>"}` handlers.
    Wasm,
}

/// Checks a hooks value. `src` (the file's source, when it came from a file) gives positions.
/// Returns the event → groups map of everything that would load.
pub(crate) fn check_hooks(
    value: &Value,
    file: &Path,
    src: Src<'_>,
    flavor: HookFlavor,
    diags: &mut Vec<Diagnostic>,
) -> Map<String, Value> {
    check_document(&HooksDocument::from_value(value), file, src, flavor, diags)
}

/// Checks a hooks document as read once (see [`check_hooks`]).
pub(crate) fn check_document(
    doc: &HooksDocument,
    file: &Path,
    src: Src<'_>,
    flavor: HookFlavor,
    diags: &mut Vec<Diagnostic>,
) -> Map<String, Value> {
    let pos = |key: &str| src.pos(key);
    let events = match doc {
        HooksDocument::NotObject(Value::Array(a)) if a.is_empty() => {
            // Seen in published plugins; nothing is lost, so only warn (documented choice).
            diags.push(Diagnostic::warning(
                file,
                "hooks file is an empty array, not an object; it declares no hooks",
            ));
            return Map::new();
        }
        HooksDocument::NotObject(value) => {
            diags.push(Diagnostic::error(
                file,
                format!(
                    "hooks must be an object of event names (or {{\"hooks\": {{...}}}}), found {}; these hooks are skipped. \
                     Rewrite it as {{\"hooks\": {{\"PreToolUse\": [{{\"matcher\": \"...\", \"hooks\": [{{\"type\": \"command\", \"command\": \"...\"}}]}}]}}}}",
                    json_type_name(value)
                ),
            ));
            return Map::new();
        }
        HooksDocument::HooksNotObject(other) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!("`hooks` must be an object mapping event names to matcher groups, found {}; these hooks are skipped", json_type_name(other)),
                )
                .at(pos("hooks")),
            );
            return Map::new();
        }
        HooksDocument::Wrapped { events, extra_keys } => {
            for k in extra_keys {
                diags.push(
                    Diagnostic::warning(
                        file,
                        format!("unknown key `{k}` in hooks file is ignored"),
                    )
                    .at(pos(k)),
                );
            }
            events
        }
        HooksDocument::Bare(events) => events,
    };
    let mut out = Map::new();
    for entry in &events.0 {
        let event = &entry.name;
        if entry.event.is_none() {
            let hint = did_you_mean(event, &EVENTS)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            diags.push(
                Diagnostic::warning(file, format!("unknown hook event `{event}`{hint}; its hooks are skipped (event names are case-sensitive)"))
                    .at(pos(event)),
            );
            continue;
        }
        let groups = match &entry.groups {
            Ok(groups) => groups,
            Err(other) => {
                diags.push(
                    Diagnostic::error(
                        file,
                        format!(
                            "event `{event}` must be an array of matcher groups, found {}",
                            json_type_name(other)
                        ),
                    )
                    .at(pos(event)),
                );
                continue;
            }
        };
        let mut kept = Vec::new();
        for g in groups {
            if let Some(g) = check_group(event, g, file, &pos, flavor, diags) {
                kept.push(g);
            }
        }
        if !kept.is_empty() {
            out.insert(event.clone(), Value::Array(kept));
        }
    }
    out
}

fn check_group(
    event: &str,
    group: &Result<MatcherGroup, Value>,
    file: &Path,
    pos: &dyn Fn(&str) -> Option<(usize, usize)>,
    flavor: HookFlavor,
    diags: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let g = match group {
        Ok(g) => g,
        Err(other) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!(
                        "a matcher group of `{event}` must be an object, found {}",
                        json_type_name(other)
                    ),
                )
                .at(pos(event)),
            );
            return None;
        }
    };
    for k in &g.keys {
        if !matches!(k.as_str(), "matcher" | "hooks") {
            diags.push(
                Diagnostic::warning(
                    file,
                    format!("unknown key `{k}` in a `{event}` matcher group is ignored"),
                )
                .at(pos(k)),
            );
        }
    }
    match &g.matcher {
        Field::Valid(m) => {
            if let Err(e) = check_matcher(m) {
                diags.push(
                    Diagnostic::warning(file, format!("matcher `{m}` of `{event}` is not a valid regular expression ({e}); the group is skipped"))
                        .at(pos("matcher")),
                );
                return None;
            }
        }
        f if f.is_unset() => {}
        f => {
            diags.push(
                Diagnostic::warning(
                    file,
                    format!(
                        "matcher of `{event}` must be a string, found {}; the group is skipped",
                        f.invalid().map_or("null", json_type_name)
                    ),
                )
                .at(pos("matcher")),
            );
            return None;
        }
    }
    let Some(handlers) = &g.hooks else {
        diags.push(
            Diagnostic::error(
                file,
                format!("a `{event}` matcher group needs a `hooks` array of handlers"),
            )
            .at(pos(event)),
        );
        return None;
    };
    let kept: Vec<Value> = handlers
        .iter()
        .filter(|h| check_handler(event, h, file, pos, flavor, diags))
        .filter_map(|h| h.as_ref().ok().map(|h| h.raw.clone()))
        .collect();
    let mut raw = g.raw.clone();
    raw.insert("hooks".into(), Value::Array(kept));
    Some(Value::Object(raw))
}

/// Claude Code's matcher rule: `""`/`"*"` or only `[A-Za-z0-9_\- ,|]` is an exact list,
/// anything else must compile as a regular expression.
pub fn check_matcher(m: &str) -> Result<(), String> {
    if m.is_empty()
        || m == "*"
        || m.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'))
    {
        return Ok(());
    }
    nothing_to_repeat(m)?;
    regex::Regex::new(m).map(|_| ()).map_err(|e| {
        e.to_string()
            .lines()
            .last()
            .unwrap_or("invalid")
            .trim()
            .to_string()
    })
}

/// JavaScript rejects a quantifier that follows another quantifier (`docs/**`: "Nothing to
/// repeat"), which Rust's `regex` accepts; check it first so both agree.
fn nothing_to_repeat(m: &str) -> Result<(), String> {
    let (mut quant, mut lazy, mut in_class) = (false, false, false);
    let mut chars = m.chars();
    while let Some(c) = chars.next() {
        if in_class {
            match c {
                '\\' => {
                    chars.next();
                }
                ']' => in_class = false,
                _ => {}
            }
            continue;
        }
        match c {
            '\\' => {
                chars.next();
                (quant, lazy) = (false, false);
            }
            '[' => {
                in_class = true;
                (quant, lazy) = (false, false);
            }
            '*' | '+' => {
                if quant {
                    return Err(format!("nothing to repeat before `{c}`"));
                }
                quant = true;
            }
            '?' => {
                if quant && !lazy {
                    lazy = true;
                } else if lazy {
                    return Err("nothing to repeat before `?`".into());
                } else {
                    quant = true;
                }
            }
            _ => (quant, lazy) = (false, false),
        }
    }
    Ok(())
}

fn check_handler(
    event: &str,
    h: &Result<HandlerSpec, Value>,
    file: &Path,
    pos: &dyn Fn(&str) -> Option<(usize, usize)>,
    flavor: HookFlavor,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let h = match h {
        Ok(h) => h,
        Err(other) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!(
                        "a `{event}` handler must be an object, found {}",
                        json_type_name(other)
                    ),
                )
                .at(pos(event)),
            );
            return false;
        }
    };
    let Some(kind) = h.kind_str() else {
        diags.push(
            Diagnostic::error(
                file,
                format!(
                    "a `{event}` handler has no `type`; use one of {}",
                    HANDLER_TYPES.join(", ")
                ),
            )
            .at(pos(event)),
        );
        return false;
    };
    let allowed: &[&str] = match flavor {
        HookFlavor::ClaudeCode => HANDLER_TYPES,
        HookFlavor::Wasm => &["wasm"],
    };
    if !allowed.contains(&kind) {
        let msg = if kind == "wasm" {
            "hook type `wasm` is only allowed in warden.toml at the plugin root (Claude Code rejects it elsewhere)".to_string()
        } else {
            let hint = did_you_mean(kind, allowed)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            format!(
                "unknown hook type `{kind}` on `{event}`{hint}; allowed: {}",
                allowed.join(", ")
            )
        };
        diags.push(Diagnostic::error(file, msg).at(pos("type")));
        return false;
    }
    let (required, optional): (&[(&str, &Field<String>)], &[&str]) = match kind {
        "command" => (
            &[("command", &h.command)],
            &["args", "async", "asyncRewake", "shell", "onFailure"],
        ),
        "http" => (
            &[("url", &h.url)],
            &["headers", "allowedEnvVars", "onFailure"],
        ),
        "mcp_tool" => (
            &[("server", &h.server), ("tool", &h.tool)],
            &["input", "onFailure"],
        ),
        "prompt" => (
            &[("prompt", &h.prompt)],
            &["model", "continueOnBlock", "onFailure"],
        ),
        "agent" => (&[("prompt", &h.prompt)], &["model", "onFailure"]),
        _ => (&[("component", &h.component)], &["onFailure"]),
    };
    let mut ok = true;
    for (r, value) in required {
        match value {
            Field::Valid(s) if !s.is_empty() => {}
            Field::Invalid(other) => {
                diags.push(
                    Diagnostic::error(
                        file,
                        format!(
                            "`{r}` of a `{kind}` hook on `{event}` must be a string, found {}",
                            json_type_name(other)
                        ),
                    )
                    .at(pos(r)),
                );
                ok = false;
            }
            _ => {
                diags.push(
                    Diagnostic::error(
                        file,
                        format!("a `{kind}` hook on `{event}` needs a non-empty `{r}`"),
                    )
                    .at(pos(event)),
                );
                ok = false;
            }
        }
    }
    for k in &h.keys {
        let common = matches!(
            k.as_str(),
            "type" | "if" | "timeout" | "statusMessage" | "once"
        );
        if !common && !required.iter().any(|(r, _)| r == k) && !optional.contains(&k.as_str()) {
            diags.push(
                Diagnostic::warning(
                    file,
                    format!("unknown key `{k}` in a `{kind}` hook on `{event}` is ignored"),
                )
                .at(pos(k)),
            );
        }
    }
    match &h.timeout {
        Field::Absent => {}
        Field::Valid(t) if *t >= 1000.0 => {
            // Shown as written (`30000`, not `30000.0`).
            let n = &h.raw["timeout"];
            diags.push(
                Diagnostic::warning(file, format!("timeout {n} on `{event}` is in seconds ({n} s); it looks like milliseconds — did you mean {}?", t / 1000.0))
                    .at(pos("timeout")),
            );
        }
        Field::Valid(_) => {}
        Field::Invalid(other) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!(
                        "`timeout` must be a number of seconds, found {}",
                        json_type_name(other)
                    ),
                )
                .at(pos("timeout")),
            );
            ok = false;
        }
    }
    if h.if_rule.is_present()
        && !event
            .parse::<warden_vocab::Event>()
            .is_ok_and(|e| e.is_tool_event())
    {
        diags.push(
            Diagnostic::warning(
                file,
                format!("`if` only applies to tool events; this `{event}` handler will never run"),
            )
            .at(pos("if")),
        );
    }
    if ok && !event_supports(event, kind) {
        diags.push(
            Diagnostic::warning(file, format!("`{event}` does not support `{kind}` hooks (only command/mcp_tool{}); the handler is skipped", if event_supports(event, "http") { "/http" } else { "" }))
                .at(pos("type")),
        );
        return false;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_nothing_to_repeat() {
        assert!(check_matcher("Write(docs/**)").is_err());
        assert!(check_matcher("Edit.*").is_ok());
        assert!(check_matcher("a+?").is_ok());
        assert!(check_matcher("^claude-security:claude-security$").is_ok());
        assert!(check_matcher(r"refund|invoice|\$[0-9]+").is_ok());
        assert!(check_matcher("[*+]x").is_ok());
    }
}
