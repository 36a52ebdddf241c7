//! Helpers shared by the built-in tool components: input fields, error mapping, paths.

use serde_json::Value;
use warden_sdk::ToolError;
use warden_sdk::exec::ExecError;
use warden_sdk::fs::{self, ErrorCode, FsError};

/// A required string field.
pub fn string<'a>(input: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    input
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidInput(format!("`{key}` is required and must be a string")))
}

/// An optional string field.
pub fn opt_string<'a>(input: &'a Value, key: &str) -> Result<Option<&'a str>, ToolError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::InvalidInput(format!("`{key}` must be a string"))),
    }
}

/// An optional non-negative integer field.
pub fn opt_u64(input: &Value, key: &str) -> Result<Option<u64>, ToolError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            ToolError::InvalidInput(format!("`{key}` must be a non-negative integer"))
        }),
    }
}

/// An optional boolean field.
pub fn opt_bool(input: &Value, key: &str) -> Result<Option<bool>, ToolError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| ToolError::InvalidInput(format!("`{key}` must be a boolean"))),
    }
}

/// A file-system error as a tool error: refusals stay refusals, so the caller can tell a
/// permission problem from a missing file.
pub fn fs_error(e: FsError) -> ToolError {
    match e.code {
        ErrorCode::Denied => ToolError::Denied(e.message),
        _ => ToolError::Failed(e.message),
    }
}

/// An exec error as a tool error.
pub fn exec_error(e: ExecError) -> ToolError {
    match e {
        ExecError::Denied(m) => ToolError::Denied(m),
        ExecError::NotFound(m) => ToolError::Failed(format!("command not found: {m}")),
        ExecError::Failed(m) => ToolError::Failed(m),
    }
}

/// `path` made absolute against the session's cwd, for messages and joins.
pub fn absolute(path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        join(&fs::cwd(), path)
    }
}

/// `abs` as Claude Code shows a path it found: relative to the working directory `cwd` when it
/// lies under it, absolute otherwise; `.` segments (from a search of `.`) dropped.
pub fn shown(abs: &str, cwd: &str) -> String {
    let mut clean = String::new();
    for part in abs.split('/').filter(|p| !p.is_empty() && *p != ".") {
        clean.push('/');
        clean.push_str(part);
    }
    let cwd = cwd.trim_end_matches('/');
    match clean.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')) {
        Some(rel) if !rel.is_empty() => rel.to_string(),
        _ if clean.is_empty() => "/".to_string(),
        _ => clean,
    }
}

/// `dir/name`, without doubling the slash.
pub fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The parent directory of an absolute path (`/` for top-level entries).
pub fn parent(path: &str) -> Option<&str> {
    let trimmed = path.trim_end_matches('/');
    let i = trimmed.rfind('/')?;
    Some(if i == 0 { "/" } else { &trimmed[..i] })
}

/// Creates the parent directories of `path` if they are missing.
pub fn ensure_parent(path: &str) -> Result<(), ToolError> {
    if let Some(p) = parent(path)
        && fs::stat(p).is_err()
    {
        fs::create_dir(p).map_err(fs_error)?;
    }
    Ok(())
}

/// Every file under `root` (depth first, sorted), skipping `.git` and entries the host refuses.
/// `visit` gets the absolute path and the path relative to `root`; returning `false` stops.
pub fn walk(root: &str, visit: &mut dyn FnMut(&str, &str) -> bool) -> Result<(), ToolError> {
    fn go(dir: &str, rel: &str, depth: usize, visit: &mut dyn FnMut(&str, &str) -> bool) -> bool {
        if depth > 64 {
            return true;
        }
        let Ok(entries) = fs::list_dir(dir) else {
            return true;
        };
        for e in entries {
            let abs = join(dir, &e.name);
            let r = if rel.is_empty() {
                e.name.clone()
            } else {
                format!("{rel}/{}", e.name)
            };
            match e.kind {
                fs::Kind::Directory if e.name == ".git" => {}
                fs::Kind::Directory if !go(&abs, &r, depth + 1, visit) => return false,
                fs::Kind::File if !visit(&abs, &r) => return false,
                _ => {}
            }
        }
        true
    }
    fs::list_dir(root).map_err(fs_error)?;
    go(root, "", 0, visit);
    Ok(())
}
