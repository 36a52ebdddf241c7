//! Claude Code–compatible permission rules: parsing, evaluation and capability checks.

pub mod shell;

use std::path::Path;

/// Whether a hook's `if` filter (one permission-rule string) selects this tool call.
///
/// Fails open: a rule or command that cannot be parsed makes the hook run.
pub fn if_filter_matches(rule: &str, tool_name: &str, tool_input: &serde_json::Value, cwd: &Path) -> bool {
    let _ = (tool_input, cwd);
    let rule = rule.trim();
    match rule.split_once('(') {
        Some((name, _)) => name.trim() == tool_name,
        None => rule == tool_name || rule.is_empty(),
    }
}
