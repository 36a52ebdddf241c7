//! json-query: a jq query over one JSON file, read through the fs capability.
//!
//! The query language is jq's, run by [jaq](https://github.com/01mf02/jaq) (`jaq-core`,
//! `jaq-std`, `jaq-json`) with its standard library. The file may hold one JSON value or
//! several (JSON Lines, concatenated values); like `jq`, the query runs on each in turn.
//! Results are printed like `jq` prints them (indented by two spaces), or with `raw` like
//! `jq -r` (strings without quotes), and the output is cut at [`MAX_OUTPUT`] bytes.

mod query;

use serde_json::{Value, json};
use warden_sdk::fs::{self, ErrorCode, FsError};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput};

/// Most bytes of output returned; the rest of the results are not computed.
pub const MAX_OUTPUT: usize = 100 * 1024;

struct JsonQuery;

impl Tool for JsonQuery {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "query".into(),
            description: "Runs a jq query over a JSON file and returns the results, one per line, printed like `jq` prints them (or like `jq -r` with `raw`). Full jq syntax: paths (`.a.b`, `.[0]`, `.[-1]`, `.[2:4]`, `.[]`), pipes, `select`, `map`, `keys`, `length`, `to_entries`, `group_by`, `sort_by`, `test`, string interpolation and the rest of jq's standard library. A file with several JSON values (JSON Lines) is queried value by value. Output is cut at 100 KB. Use it to look into large JSON files (package manifests, lock files, API dumps, logs) without reading them whole.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The JSON file, absolute or relative to the working directory"},
                    "query": {"type": "string", "description": "The jq query, e.g. `.dependencies | keys` or `.items[] | select(.size > 10) | .name`"},
                    "raw": {"type": "boolean", "description": "Print string results without quotes, like `jq -r` (default false)"}
                },
                "required": ["file_path", "query"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let file_path = string(&input, "file_path")?;
        let query = string(&input, "query")?;
        let raw = match input.get("raw") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(ToolError::InvalidInput("`raw` must be a boolean".into())),
        };
        if file_path.is_empty() {
            return Err(ToolError::InvalidInput("`file_path` is empty".into()));
        }
        // The query is checked before the file is read, as jq does.
        let filter = query::compile(query).map_err(ToolError::InvalidInput)?;
        let path = absolute(file_path);
        let bytes = fs::read(&path).map_err(fs_error)?;
        let out = query::run(&filter, &bytes, raw, MAX_OUTPUT).map_err(|e| match e {
            query::RunError::NotJson(m) => {
                ToolError::Failed(format!("{path} is not valid JSON: {m}"))
            }
            query::RunError::Query(m) => ToolError::InvalidInput(m),
        })?;
        let (results, truncated) = (out.results, out.truncated);
        let content = out.into_content(MAX_OUTPUT);
        Ok(ToolOutput {
            content,
            structured: Some(json!({
                "file_path": path,
                "results": results,
                "truncated": truncated,
            })),
        })
    }
}

warden_sdk::export_tool!(JsonQuery);

/// A required string field.
fn string<'a>(input: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    input
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidInput(format!("`{key}` is required and must be a string")))
}

/// A refusal stays a refusal, so the model can tell a permission problem from a missing file;
/// either way the host's message (which names the path and the rule) is passed on.
fn fs_error(e: FsError) -> ToolError {
    match e.code {
        ErrorCode::Denied => ToolError::Denied(e.message),
        _ => ToolError::Failed(e.message),
    }
}

/// `path` made absolute against the session's working directory, for messages.
fn absolute(path: &str) -> String {
    if path.starts_with('/') {
        return path.to_string();
    }
    let cwd = fs::cwd();
    let rel = path.strip_prefix("./").unwrap_or(path);
    format!("{}/{rel}", cwd.trim_end_matches('/'))
}
