//! MCP server configuration: where servers are configured, what an entry may contain, and how
//! variables in it are expanded.
//!
//! # Scopes
//!
//! Warden reads the same entry shape as Claude Code (`claude-code-compat.md` §9):
//!
//! | Scope | Where | Precedence |
//! |---|---|---|
//! | [`McpScope::Local`] | `$WARDEN_HOME/state.json` → `projects["<cwd>"].mcpServers` | 1 |
//! | [`McpScope::Project`] | `<cwd>/.mcp.json` | 2 |
//! | [`McpScope::User`] | `$WARDEN_HOME/state.json` → `mcpServers` | 3 |
//! | [`McpScope::Plugin`] | an enabled plugin's `.mcp.json` or manifest | 4 |
//!
//! `state.json` plays the role of Claude Code's `~/.claude.json`. The first three scopes match
//! by name and the whole winning entry is used (fields are never merged). Plugin servers are
//! matched by endpoint instead (same URL, or same command and arguments, compared as written):
//! a plugin server that duplicates a configured one is dropped, so the user's own configuration
//! wins.
//!
//! # Approval of project servers
//!
//! A `.mcp.json` comes with the repository, and a stdio server in it is an arbitrary command, so
//! project servers start [`Approval::Pending`]. The settings keys Claude Code uses decide:
//!
//! * `disabledMcpjsonServers` (names) disables a server whichever settings file says it:
//!   turning a server off is always safe, so a project may do it too. It wins over approval.
//! * `enableAllProjectMcpServers: true` or `enabledMcpjsonServers` (names) approve, but only when
//!   they come from a file the user controls: user, managed or `--settings`
//!   ([`Scope::is_user_controlled`](crate::Scope::is_user_controlled)). The project's own `.claude/settings.json` and
//!   `.claude/settings.local.json` cannot approve: a hostile repository would otherwise approve
//!   the commands it ships, and nothing stops it from committing a `settings.local.json`.
//!
//! * `warden mcp approve <name>` records an approval in `state.json` →
//!   `projects["<cwd>"].approvedMcpjsonServers`, pinned to the sha256 of the server's
//!   definition ([`definition_digest`]): a changed entry in `.mcp.json` is pending again. `warden
//!   mcp approve --deny` lists the name in that project's `disabledMcpjsonServers`, which
//!   disables it like the settings key. `state.json` is the user's file, and no settings file of
//!   any scope is read for pinned approvals, so a repository cannot write one for itself.
//!
//! Every other scope is [`Approval::Approved`]. A project server that is not approved does not
//! hide a user-scope server of the same name (a repository must not be able to knock out the
//! user's servers by reusing their names); the user's server is used and a note is recorded.
//!
//! # Variables
//!
//! `${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env` values, `url` and
//! `headers` values, and nowhere else, as in Claude Code. The default runs to the first `}`:
//! defaults cannot nest (`${A:-${B}}` is `A`, else the text `${B` followed by `}`), which
//! [`check_entry`] warns about. A variable that is set but empty is used as it is (Claude Code
//! falls back to the default only when the variable is unset). `$${` and a `$` that does not
//! start `${name}` are kept as written.
//!
//! Unlike Claude Code, a variable that is unset and has no default is an error naming the
//! server, the field and the variable: Claude Code passes the literal `${TOKEN}` on, and the
//! server then fails far from the cause.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::{ConfigError, Home, MAX_SETTINGS_BYTES, Settings, did_you_mean, json_type_name};

pub mod edit;

/// File name of the project-scope server list, at the project root.
pub const PROJECT_FILE: &str = ".mcp.json";

/// Largest `state.json` read. It also holds per-project state, so it may outgrow a settings
/// file.
pub const MAX_STATE_BYTES: u64 = 16 << 20;

/// Key of a project's entry in `state.json` mapping project-server names to the digest of the
/// definition the user approved ([`definition_digest`]).
pub const APPROVED_KEY: &str = "approvedMcpjsonServers";

/// Key of a project's entry in `state.json` (and of settings files) listing disabled project
/// servers.
pub const DISABLED_KEY: &str = "disabledMcpjsonServers";

/// The transports a configuration file may name.
const TRANSPORTS: &[&str] = &["stdio", "http", "sse", "ws"];

/// Fields of a server entry that Claude Code reads.
const KNOWN_FIELDS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "url",
    "headers",
    "headersHelper",
    "oauth",
    "timeout",
    "alwaysLoad",
];

/// Where a server was configured.
///
/// Precedence for same-name servers: `Local` > `Project` > `User` (these match by name).
/// Plugin servers are deduplicated against those by endpoint (same URL, or same command and
/// arguments); the user-configured one wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum McpScope {
    /// `state.json` → `projects["<project path>"].mcpServers`: this project, this user.
    Local,
    /// `.mcp.json` at the project root, shared through the repository.
    Project,
    /// `state.json` → `mcpServers`: every project of this user.
    User,
    /// A server bundled with an enabled plugin.
    Plugin,
}

impl McpScope {
    /// `"local"`, `"project"`, `"user"` or `"plugin"`.
    pub fn as_str(self) -> &'static str {
        match self {
            McpScope::Local => "local",
            McpScope::Project => "project",
            McpScope::User => "user",
            McpScope::Plugin => "plugin",
        }
    }
}

impl fmt::Display for McpScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A local process speaking MCP over stdin/stdout.
    Stdio {
        /// The program, run as is (never split on spaces).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport.
    Sse {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// WebSocket. Parsed and reported; Warden cannot connect it.
    Ws {
        /// The endpoint.
        url: String,
        /// Headers sent with the upgrade request.
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `"stdio"`, `"http"`, `"sse"` or `"ws"`, as the `type` field spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Sse { .. } => "sse",
            Transport::Ws { .. } => "ws",
        }
    }
}

/// A server entry after variable expansion, ready to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The name the entry was configured under.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Per-tool-call timeout (the entry's `timeout`, in milliseconds).
    pub timeout: Option<Duration>,
    /// `alwaysLoad`: the server's tools are always in context rather than found on demand.
    pub always_load: bool,
}

/// One problem with one server entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryProblem {
    /// Where inside the entry: `"type"`, `"url"`, `"args[2]"`, `"env.API_KEY"`; empty for the
    /// entry as a whole.
    pub field: String,
    /// What is wrong and what to do about it.
    pub message: String,
    /// Whether the entry cannot be used (`false`: a warning, the entry still works).
    pub error: bool,
}

impl fmt::Display for EntryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// Errors turning configuration into servers.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    /// A `${VAR}` with no default names a variable that is not set.
    #[error(
        "MCP server `{server}`: {field}: variable `{variable}` is not set and has no default; set it, or write `${{{variable}:-}}` to allow it to be empty"
    )]
    MissingVariable {
        /// The server.
        server: String,
        /// The field, as in [`EntryProblem::field`].
        field: String,
        /// The variable.
        variable: String,
    },
    /// The entry fails [`check_entry`], or a field is unusable after expansion.
    #[error("MCP server `{server}`: {field}: {message}")]
    Invalid {
        /// The server.
        server: String,
        /// The field, as in [`EntryProblem::field`].
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A server file could not be read or parsed (the message names the file, and the line and
    /// column of a syntax error).
    #[error(transparent)]
    File(#[from] ConfigError),
    /// A server file parsed but does not hold servers where it should.
    #[error("{path}: {message}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

// ---------------------------------------------------------------------------------------------
// Variables

/// A piece of a string as variable expansion sees it.
enum Piece<'a> {
    /// Text copied as is.
    Text(&'a str),
    /// `${name}` or `${name:-default}`; `raw` is the whole reference.
    Var {
        name: &'a str,
        default: Option<&'a str>,
        raw: &'a str,
    },
}

/// Splits `text` into literal text and variable references, following Claude Code's
/// `\$\{([^}]+)\}`: the reference runs to the first `}`. `$${` is kept literally.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut lit_start = 0;
    let mut pos = 0;
    while let Some(i) = rest.find('$') {
        let at = pos + i;
        let tail = &text[at..];
        let mut consumed = 1;
        if tail.starts_with("$${") {
            consumed = 3;
        } else if let Some(body) = tail.strip_prefix("${")
            && let Some(end) = body.find('}')
            && end > 0
        {
            let inner = &body[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            if lit_start < at {
                out.push(Piece::Text(&text[lit_start..at]));
            }
            let len = 2 + end + 1;
            out.push(Piece::Var {
                name,
                default,
                raw: &text[at..at + len],
            });
            lit_start = at + len;
            consumed = len;
        }
        pos = at + consumed;
        rest = &text[pos..];
    }
    if lit_start < text.len() {
        out.push(Piece::Text(&text[lit_start..]));
    }
    out
}

/// Expands the references in `text`; `server` and `field` name the place in errors.
fn expand(
    text: &str,
    server: &str,
    field: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<String, McpConfigError> {
    let mut out = String::with_capacity(text.len());
    for p in pieces(text) {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Var { name, default, .. } => {
                match vars(name).or_else(|| default.map(str::to_string)) {
                    Some(v) => out.push_str(&v),
                    None => {
                        return Err(McpConfigError::MissingVariable {
                            server: server.to_string(),
                            field: field.to_string(),
                            variable: name.to_string(),
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Checking an entry

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
    Sse,
    Ws,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        match s {
            "stdio" => Some(Kind::Stdio),
            "http" => Some(Kind::Http),
            "sse" => Some(Kind::Sse),
            "ws" => Some(Kind::Ws),
            _ => None,
        }
    }

    fn schemes(self) -> &'static [&'static str] {
        match self {
            Kind::Ws => &["ws://", "wss://"],
            _ => &["http://", "https://"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Stdio => "stdio",
            Kind::Http => "http",
            Kind::Sse => "sse",
            Kind::Ws => "ws",
        }
    }
}

/// The transport an entry declares: `type`, or stdio when `type` is absent and `command` is
/// there. `None` when neither says.
fn kind_of(o: &Map<String, Value>) -> Option<Kind> {
    match o.get("type") {
        Some(Value::String(t)) => Kind::parse(t),
        Some(_) => None,
        None => o.contains_key("command").then_some(Kind::Stdio),
    }
}

#[derive(Default)]
struct Problems(Vec<EntryProblem>);

impl Problems {
    fn error(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(EntryProblem {
            field: field.into(),
            message: message.into(),
            error: true,
        });
    }

    fn warning(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(EntryProblem {
            field: field.into(),
            message: message.into(),
            error: false,
        });
    }

    fn wrong_type(&mut self, field: impl Into<String>, expected: &str, v: &Value) {
        self.error(
            field,
            format!("must be {expected}, found {}", json_type_name(v)),
        );
    }
}

/// Checks one raw server entry (the object under its name) without expanding anything.
///
/// Errors make the entry unusable: a `type` other than stdio/http/sse/ws, a stdio server without
/// a `command` string, a remote server without a `url` string, fields of the wrong JSON type, a
/// URL whose scheme does not fit the transport, or both `command` and `url`. Warnings leave it
/// usable, or at least loadable: an empty `url` (a placeholder; [`resolve`] refuses it), unknown fields (Claude Code ignores them; `_`-prefixed keys are comments and pass
/// silently), fields that the transport ignores, `${PLUGIN_ROOT}` (not a Claude Code variable),
/// defaults that look nested, and `oauth` / `headersHelper`, which Warden does not run.
pub fn check_entry(name: &str, entry: &Value) -> Vec<EntryProblem> {
    let mut p = Problems::default();
    if name.trim().is_empty() {
        p.error("", "the server name is empty; tools are named after it");
    }
    let Some(o) = entry.as_object() else {
        p.error(
            "",
            format!(
                "a server must be an object, found {}",
                json_type_name(entry)
            ),
        );
        return p.0;
    };

    let kind = match o.get("type") {
        None if o.contains_key("command") => Some(Kind::Stdio),
        None if o.contains_key("url") => {
            p.error(
                "type",
                "missing: a server with a `url` needs `\"type\": \"http\"` (or `sse`, `ws`); only stdio servers may leave it out",
            );
            None
        }
        None => {
            p.error(
                "command",
                "missing: a server needs a `command` (a local program) or a `type` and `url` (a remote server)",
            );
            None
        }
        Some(Value::String(t)) => {
            let k = Kind::parse(t);
            if k.is_none() {
                p.error("type", unknown_transport(t));
            }
            k
        }
        Some(other) => {
            p.wrong_type("type", "a string (stdio, http, sse or ws)", other);
            None
        }
    };
    if o.contains_key("command") && o.contains_key("url") {
        p.error(
            "url",
            "a server has either `command` (stdio) or `url` (http, sse, ws), not both",
        );
    }

    check_types(o, &mut p);

    match kind {
        Some(Kind::Stdio) => {
            match o.get("command") {
                None => p.error(
                    "command",
                    "missing: a stdio server needs a `command` string",
                ),
                Some(Value::String(c)) if c.trim().is_empty() => {
                    p.error("command", "is empty; name the program to run")
                }
                Some(Value::String(c)) => {
                    let first = c.split_whitespace().next().unwrap_or("");
                    if !o.contains_key("args")
                        && c.trim().contains(char::is_whitespace)
                        && !first.contains(['/', '\\', '$'])
                    {
                        p.warning(
                            "command",
                            format!(
                                "`{c}` is run as a single program name, not split on spaces; put the arguments in `args`"
                            ),
                        );
                    }
                }
                Some(_) => {}
            }
            for k in ["headers", "headersHelper", "oauth"] {
                if o.contains_key(k) {
                    p.warning(
                        k,
                        "applies only to http, sse and ws servers; a stdio server ignores it",
                    );
                }
            }
        }
        Some(k) => {
            match o.get("url") {
                None => p.error(
                    "url",
                    format!("missing: an {} server needs a `url` string", k.name()),
                ),
                // Published plugins ship `"url": ""` as a placeholder for a connector the
                // user adds elsewhere; the plugin is otherwise fine, so this only warns.
                Some(Value::String(u)) if u.trim().is_empty() => p.warning(
                    "url",
                    "is empty, so this server cannot connect (an empty `url` is a placeholder in some published plugins)",
                ),
                Some(Value::String(u)) => {
                    if let Some(msg) = url_problem(u, k, true) {
                        p.error("url", msg);
                    }
                }
                Some(_) => {}
            }
            for f in ["args", "env"] {
                if o.contains_key(f) {
                    p.warning(
                        f,
                        format!(
                            "applies only to stdio servers; an {} server ignores it",
                            k.name()
                        ),
                    );
                }
            }
            if o.get("headersHelper").is_some_and(Value::is_string) {
                p.warning(
                    "headersHelper",
                    "Warden does not run header helpers; the server gets only the static `headers`",
                );
            }
            if o.get("oauth").is_some_and(Value::is_object) {
                p.warning(
                    "oauth",
                    if k == Kind::Ws {
                        "WebSocket servers have no OAuth in Claude Code; it is ignored"
                    } else {
                        "Warden does not run OAuth flows; a server that requires sign-in will refuse the connection (send a token in `headers` instead)"
                    },
                );
            }
        }
        None => {}
    }

    for key in o.keys() {
        if KNOWN_FIELDS.contains(&key.as_str()) || key.starts_with('_') {
            continue;
        }
        let msg = match key.as_str() {
            "enabled" | "disabled" => "is not an MCP server field and does not turn the server on or off; list its name in `disabledMcpjsonServers` (settings) to turn it off".to_string(),
            _ => match did_you_mean(key, KNOWN_FIELDS) {
                Some(k) => format!("unknown field (did you mean `{k}`?); it is ignored"),
                None => "unknown field; it is ignored".to_string(),
            },
        };
        p.warning(key.as_str(), msg);
    }

    for (field, text) in expandable_strings(o) {
        check_variables(&field, text, &mut p);
    }
    p.0
}

/// Type checks of every known field that is present, whatever the transport.
fn check_types(o: &Map<String, Value>, p: &mut Problems) {
    for (k, expected) in [
        ("command", "a string"),
        ("url", "a string"),
        ("headersHelper", "a string (a shell command)"),
    ] {
        if let Some(v) = o.get(k)
            && !v.is_string()
        {
            p.wrong_type(k, expected, v);
        }
    }
    match o.get("args") {
        Some(Value::Array(a)) => {
            for (i, v) in a.iter().enumerate() {
                if !v.is_string() {
                    p.wrong_type(format!("args[{i}]"), "a string", v);
                }
            }
        }
        Some(v) => p.wrong_type("args", "an array of strings", v),
        None => {}
    }
    for f in ["env", "headers"] {
        match o.get(f) {
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    if !v.is_string() {
                        p.wrong_type(format!("{f}.{k}"), "a string", v);
                    }
                }
            }
            Some(v) => p.wrong_type(f, "an object of strings", v),
            None => {}
        }
    }
    if let Some(v) = o.get("oauth")
        && !v.is_object()
    {
        p.wrong_type("oauth", "an object", v);
    }
    if let Some(v) = o.get("alwaysLoad")
        && !v.is_boolean()
    {
        p.wrong_type("alwaysLoad", "a boolean", v);
    }
    match o.get("timeout") {
        None => {}
        Some(v) => match timeout_of(v) {
            Err(msg) => p.error("timeout", msg),
            Ok(d) if d < Duration::from_secs(1) => p.warning(
                "timeout",
                format!(
                    "is in milliseconds: {} ms is very short for a tool call; was it meant as seconds?",
                    d.as_millis()
                ),
            ),
            Ok(_) => {}
        },
    }
}

/// The entry's `timeout` (milliseconds) as a duration.
fn timeout_of(v: &Value) -> Result<Duration, String> {
    let Some(ms) = v.as_f64() else {
        return Err(format!(
            "must be a positive number of milliseconds, found {}",
            json_type_name(v)
        ));
    };
    if ms.is_nan() || ms <= 0.0 {
        return Err(format!(
            "must be a positive number of milliseconds, found {v}"
        ));
    }
    Duration::try_from_secs_f64(ms / 1000.0)
        .map_err(|_| format!("{v} milliseconds is too long to be a timeout"))
}

/// What is wrong with `url` for a `kind` server, if anything. With `before_expansion`, a URL
/// whose scheme comes from a variable is accepted; it is checked again once expanded.
fn url_problem(url: &str, kind: Kind, before_expansion: bool) -> Option<String> {
    if url.trim().is_empty() {
        return Some("is empty".to_string());
    }
    let schemes = kind.schemes();
    let literal = if before_expansion {
        url.split("${").next().unwrap_or("")
    } else {
        url
    };
    let lower = literal.to_ascii_lowercase();
    if let Some(s) = schemes.iter().find(|s| lower.starts_with(**s)) {
        let host = &literal[s.len()..];
        let has_var = before_expansion && literal.len() < url.len();
        if (host.is_empty() && !has_var) || host.starts_with('/') {
            return Some(format!("`{url}` has no host"));
        }
        return None;
    }
    if before_expansion
        && literal.len() < url.len()
        && schemes.iter().any(|s| s.starts_with(&lower))
    {
        return None;
    }
    let want = if kind == Kind::Ws {
        "a ws:// or wss:// URL"
    } else {
        "an http:// or https:// URL"
    };
    let hint = match (kind, lower.split("://").next()) {
        (Kind::Ws, Some("http" | "https")) => " (for streamable HTTP use `\"type\": \"http\"`)",
        (Kind::Http | Kind::Sse, Some("ws" | "wss")) => " (for WebSocket use `\"type\": \"ws\"`)",
        _ => "",
    };
    Some(format!(
        "an {} server needs {want}, found `{url}`{hint}",
        kind.name()
    ))
}

fn unknown_transport(t: &str) -> String {
    let alias = match t.to_ascii_lowercase().as_str() {
        "streamable-http" | "streamable_http" | "streamablehttp" | "streamable" => Some("http"),
        "websocket" | "websockets" => Some("ws"),
        "sdk" => {
            return "`sdk` servers live inside an SDK process; a configuration file cannot declare one (use stdio, http, sse or ws)".to_string();
        }
        _ => None,
    };
    match alias.or_else(|| did_you_mean(t, TRANSPORTS)) {
        Some(k) => format!("unknown transport `{t}` (did you mean `{k}`?)"),
        None => format!("unknown transport `{t}`; use stdio, http, sse or ws"),
    }
}

/// The strings [`resolve`] expands, each with its field path; `headersHelper` too, because
/// Claude Code substitutes plugin variables in it.
fn expandable_strings(o: &Map<String, Value>) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    for f in ["command", "url", "headersHelper"] {
        if let Some(Value::String(s)) = o.get(f) {
            out.push((f.to_string(), s.as_str()));
        }
    }
    if let Some(Value::Array(a)) = o.get("args") {
        for (i, v) in a.iter().enumerate() {
            if let Value::String(s) = v {
                out.push((format!("args[{i}]"), s.as_str()));
            }
        }
    }
    for f in ["env", "headers"] {
        if let Some(Value::Object(m)) = o.get(f) {
            for (k, v) in m {
                if let Value::String(s) = v {
                    out.push((format!("{f}.{k}"), s.as_str()));
                }
            }
        }
    }
    out
}

fn check_variables(field: &str, text: &str, p: &mut Problems) {
    for piece in pieces(text) {
        match piece {
            Piece::Var {
                name: "PLUGIN_ROOT",
                default: None,
                ..
            } => p.warning(
                field,
                "uses ${PLUGIN_ROOT}, which Claude Code does not set; write ${CLAUDE_PLUGIN_ROOT}",
            ),
            Piece::Var {
                default: Some(d),
                raw,
                ..
            } if d.contains("${") => p.warning(
                field,
                format!(
                    "`{raw}`: a default cannot contain another variable; the reference ends at the first `}}` and what follows is kept as text"
                ),
            ),
            Piece::Text(t) if t.replace("$${", "").contains("${") => p.warning(
                field,
                "has a `${` that does not start a variable (no name, or no closing `}`); it is kept as written",
            ),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Resolving an entry

/// Expands `${VAR}` and `${VAR:-default}` in `command`, `args`, `env` values, `url` and header
/// values, and builds the connection spec.
///
/// `vars` looks a variable up by the name written between `${` and `:-`/`}` (a plugin's
/// `${user_config.KEY}` arrives as `user_config.KEY`); the caller supplies the process
/// environment plus `CLAUDE_PLUGIN_ROOT`, `CLAUDE_PLUGIN_DATA` and `CLAUDE_PROJECT_DIR`.
/// A variable that is unset and has no default is [`McpConfigError::MissingVariable`]. An entry
/// with a [`check_entry`] error, or an empty command or bad URL after expansion, is
/// [`McpConfigError::Invalid`].
pub fn resolve(
    name: &str,
    entry: &Value,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerSpec, McpConfigError> {
    let invalid = |field: &str, message: String| McpConfigError::Invalid {
        server: name.to_string(),
        field: field.to_string(),
        message,
    };
    if let Some(p) = check_entry(name, entry).into_iter().find(|p| p.error) {
        return Err(invalid(&p.field, p.message));
    }
    let (Some(o), Some(kind)) = (entry.as_object(), entry.as_object().and_then(kind_of)) else {
        return Err(invalid("", "not a server entry".to_string()));
    };
    let x = |field: &str, text: &str| expand(text, name, field, vars);
    let str_map = |field: &str| -> Result<BTreeMap<String, String>, McpConfigError> {
        let mut out = BTreeMap::new();
        if let Some(Value::Object(m)) = o.get(field) {
            for (k, v) in m {
                if let Value::String(s) = v {
                    out.insert(k.clone(), x(&format!("{field}.{k}"), s)?);
                }
            }
        }
        Ok(out)
    };
    let transport = if kind == Kind::Stdio {
        let command = x(
            "command",
            o.get("command").and_then(Value::as_str).unwrap_or(""),
        )?;
        if command.trim().is_empty() {
            return Err(invalid(
                "command",
                "is empty once variables are expanded".to_string(),
            ));
        }
        let mut args = Vec::new();
        if let Some(Value::Array(a)) = o.get("args") {
            for (i, v) in a.iter().enumerate() {
                if let Value::String(s) = v {
                    args.push(x(&format!("args[{i}]"), s)?);
                }
            }
        }
        Transport::Stdio {
            command,
            args,
            env: str_map("env")?,
        }
    } else {
        let url = x("url", o.get("url").and_then(Value::as_str).unwrap_or(""))?;
        if let Some(msg) = url_problem(&url, kind, false) {
            return Err(invalid("url", msg));
        }
        let headers = str_map("headers")?;
        match kind {
            Kind::Http => Transport::Http { url, headers },
            Kind::Sse => Transport::Sse { url, headers },
            _ => Transport::Ws { url, headers },
        }
    };
    let timeout = match o.get("timeout") {
        Some(v) => Some(timeout_of(v).map_err(|m| invalid("timeout", m))?),
        None => None,
    };
    Ok(ServerSpec {
        name: name.to_string(),
        transport,
        timeout,
        always_load: o
            .get("alwaysLoad")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

// ---------------------------------------------------------------------------------------------
// Files

/// The keys `state.json` → `projects` may file the project in `cwd` under, in the order they
/// are looked up: `cwd` as given, then its canonical form.
pub fn project_keys(cwd: &Path) -> Vec<String> {
    let mut keys = vec![cwd.display().to_string()];
    if let Ok(c) = cwd.canonicalize() {
        let c = c.display().to_string();
        if c != keys[0] {
            keys.push(c);
        }
    }
    keys
}

/// Reads a `.mcp.json`-shaped file: wrapped `{"mcpServers": {…}}` or flat `{"<name>": {…}}`.
/// If `mcpServers` holds an object the file is wrapped; otherwise every top-level value except
/// `$schema` is a server. `Ok(None)` when the file does not exist. The size limit is that of a
/// settings file; a syntax error names the file, line and column.
pub fn read_servers_file(path: &Path) -> Result<Option<Map<String, Value>>, McpConfigError> {
    let Some(text) = crate::read_text_limited(path, MAX_SETTINGS_BYTES)? else {
        return Ok(None);
    };
    // Editors on Windows add a byte-order mark; it says nothing about the content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let top = crate::parse_settings(text, path)?;
    Ok(Some(servers_of(top)))
}

/// The servers of a parsed `.mcp.json`-shaped object (see [`read_servers_file`]).
pub fn servers_of(mut top: Map<String, Value>) -> Map<String, Value> {
    let mut servers = if top.get("mcpServers").is_some_and(Value::is_object) {
        match top.remove("mcpServers") {
            Some(Value::Object(inner)) => inner,
            _ => Map::new(),
        }
    } else {
        top
    };
    servers.remove("$schema");
    servers
}

fn read_state(path: &Path) -> Result<Option<Map<String, Value>>, ConfigError> {
    match crate::read_text_limited(path, MAX_STATE_BYTES)? {
        Some(text) => crate::parse_settings(&text, path).map(Some),
        None => Ok(None),
    }
}

// ---------------------------------------------------------------------------------------------
// The servers of a session

/// Whether a server may be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Approval {
    /// It may.
    Approved,
    /// A project server nobody has approved yet: ask, or leave it off.
    Pending,
    /// Listed in `disabledMcpjsonServers`: never start it.
    Disabled,
}

/// The plugin a server came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginServer {
    /// `name@marketplace`.
    pub plugin_id: String,
    /// The plugin's name (its namespace).
    pub plugin_name: String,
    /// The plugin root (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// The plugin's data directory (`${CLAUDE_PLUGIN_DATA}`).
    pub data_dir: PathBuf,
}

/// A configured server before expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    /// The name it is configured under (for a plugin server, its key in the plugin).
    pub name: String,
    /// Where it was configured.
    pub scope: McpScope,
    /// The file it came from, or `plugin <id>`.
    pub origin: String,
    /// The raw entry.
    pub entry: Value,
    /// The plugin, for plugin servers.
    pub plugin: Option<PluginServer>,
    /// Whether it may be started.
    pub approval: Approval,
}

impl ServerEntry {
    /// The name in its tool names, `mcp__<this>__<tool>`: the configured name, or
    /// `plugin_<plugin>_<server>`, with characters outside `[A-Za-z0-9_-]` replaced by `_` as
    /// Claude Code does.
    pub fn tool_prefix_name(&self) -> String {
        sanitize(&self.key())
    }

    /// The name `mcp_tool` hook handlers use: the configured name, or
    /// `plugin:<plugin>:<server>`.
    pub fn handler_name(&self) -> String {
        match &self.plugin {
            Some(p) => format!("plugin:{}:{}", p.plugin_name, self.name),
            None => self.name.clone(),
        }
    }

    /// The name before sanitising.
    fn key(&self) -> String {
        match &self.plugin {
            Some(p) => format!("plugin_{}_{}", p.plugin_name, self.name),
            None => self.name.clone(),
        }
    }

    /// What a plugin server is compared with to find duplicates.
    fn endpoint(&self) -> Option<Endpoint> {
        endpoint(&self.entry)
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Endpoint {
    Url(String),
    Command(String, Vec<String>),
}

/// The endpoint as written: the URL without a trailing `/`, or the command and its arguments.
fn endpoint(entry: &Value) -> Option<Endpoint> {
    if let Some(u) = entry.get("url").and_then(Value::as_str) {
        return Some(Endpoint::Url(u.trim_end_matches('/').to_string()));
    }
    let command = entry.get("command").and_then(Value::as_str)?;
    let args = match entry.get("args") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    Some(Endpoint::Command(command.to_string(), args))
}

/// Replaces characters outside `[A-Za-z0-9_-]` by `_`, as Claude Code does for the parts of
/// an MCP tool name.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The tool name `mcp__<server>__<tool>`, characters outside `[A-Za-z0-9_-]` replaced by `_`.
/// `server_prefix` is [`ServerEntry::tool_prefix_name`] (or the unsanitised form).
pub fn tool_name(server_prefix: &str, tool: &str) -> String {
    format!("mcp__{}__{}", sanitize(server_prefix), sanitize(tool))
}

/// Whether the project server `name` may start, from the settings (see the module docs:
/// disabling counts from any file, approving only from files the user controls).
pub fn project_approval(settings: &Settings, name: &str) -> Approval {
    let lists = |key: &str, f: &crate::SettingsFile| {
        f.value
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(name)))
    };
    if settings
        .files
        .iter()
        .any(|f| lists("disabledMcpjsonServers", f))
    {
        return Approval::Disabled;
    }
    let approved = settings
        .files
        .iter()
        .filter(|f| f.scope.is_user_controlled())
        .any(|f| {
            f.value.get("enableAllProjectMcpServers") == Some(&Value::Bool(true))
                || lists("enabledMcpjsonServers", f)
        });
    if approved {
        Approval::Approved
    } else {
        Approval::Pending
    }
}

/// `sha256:<hex>` of a server's name and definition, keys sorted at every level, so that the
/// same entry written in another key order or spacing keeps its approval and any change to a
/// field (command, arguments, environment, URL, headers, anything else) loses it.
pub fn definition_digest(name: &str, entry: &Value) -> String {
    use sha2::Digest as _;
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let canonical = Value::Array(vec![Value::String(name.to_string()), sorted(entry)]);
    format!(
        "sha256:{}",
        hex::encode(sha2::Sha256::digest(canonical.to_string().as_bytes()))
    )
}

/// What the user recorded for a project's servers in `state.json` (see the module docs).
#[derive(Debug, Default)]
struct Choices {
    approved: Map<String, Value>,
    disabled: Vec<String>,
}

impl Choices {
    fn of(project: Option<&Map<String, Value>>) -> Choices {
        let Some(p) = project else {
            return Choices::default();
        };
        Choices {
            approved: match p.get(APPROVED_KEY) {
                Some(Value::Object(m)) => m.clone(),
                _ => Map::new(),
            },
            disabled: match p.get(DISABLED_KEY) {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            },
        }
    }
}

/// The servers of a session, and what went wrong finding them.
#[derive(Debug, Clone, Default)]
pub struct McpServers {
    /// One entry per name, highest precedence first, then plugin servers as added.
    pub servers: Vec<ServerEntry>,
    /// Unreadable files, malformed sections and servers left out; each names its file or
    /// server.
    pub problems: Vec<String>,
}

impl McpServers {
    /// Loads the user- and project-configured servers of a session in `cwd` (plugin servers are
    /// added with [`McpServers::add_plugin_servers`]).
    ///
    /// Local: `<WARDEN_HOME>/state.json` → `projects["<cwd>"].mcpServers` (the key is `cwd` as
    /// given, else its canonical form); Project: `<cwd>/.mcp.json`; User: `state.json` top-level
    /// `mcpServers`. A name configured in several scopes takes the whole entry of the highest
    /// one, except that a project server that is not approved does not hide a user one.
    pub fn load(cwd: &Path, home: &Home, settings: &Settings) -> McpServers {
        let mut out = McpServers::default();
        let state_path = home.state_file();
        let state_origin = state_path.display().to_string();
        let state = match read_state(&state_path) {
            Ok(s) => s.unwrap_or_default(),
            Err(e) => {
                out.problems.push(e.to_string());
                Map::new()
            }
        };

        let state_project = out.state_project(&state, cwd, &state_origin);
        let choices = Choices::of(state_project.as_ref().map(|(_, p)| *p));
        let local = out.state_section(state_project, &state_origin);
        let project_path = cwd.join(PROJECT_FILE);
        let project = match read_servers_file(&project_path) {
            Ok(s) => s.unwrap_or_default(),
            Err(e) => {
                out.problems.push(e.to_string());
                Map::new()
            }
        };
        let user = match state.get("mcpServers") {
            Some(Value::Object(m)) => m.clone(),
            Some(other) => {
                out.problems.push(format!(
                    "{state_origin}: `mcpServers` must be an object of servers, found {}",
                    json_type_name(other)
                ));
                Map::new()
            }
            None => Map::new(),
        };

        let project_origin = project_path.display().to_string();
        let mut project_entries = Vec::new();
        for (name, entry) in project {
            let mut approval = project_approval(settings, &name);
            if choices.disabled.contains(&name) {
                approval = Approval::Disabled;
            } else if approval == Approval::Pending
                && let Some(pinned) = choices.approved.get(&name)
            {
                if pinned.as_str() == Some(definition_digest(&name, &entry).as_str()) {
                    approval = Approval::Approved;
                } else {
                    out.problems.push(format!(
                        "{project_origin}: MCP server `{name}` changed since it was approved ({state_origin}); review it, then run `warden mcp approve {name}`"
                    ));
                }
            }
            project_entries.push(ServerEntry {
                approval,
                name,
                scope: McpScope::Project,
                origin: project_origin.clone(),
                entry,
                plugin: None,
            });
        }
        let project = project_entries;
        let configured = |scope: McpScope, servers: Map<String, Value>| {
            servers
                .into_iter()
                .map(|(name, entry)| ServerEntry {
                    name,
                    scope,
                    origin: state_origin.clone(),
                    entry,
                    plugin: None,
                    approval: Approval::Approved,
                })
                .collect::<Vec<_>>()
        };
        let local = configured(McpScope::Local, local);
        let user = configured(McpScope::User, user);

        for e in local {
            out.servers.push(e);
        }
        for e in project {
            if out.servers.iter().any(|s| s.name == e.name) {
                continue;
            }
            if e.approval != Approval::Approved && user.iter().any(|u| u.name == e.name) {
                let state = if e.approval == Approval::Pending {
                    "is not approved"
                } else {
                    "is disabled"
                };
                out.problems.push(format!(
                    "{}: MCP server `{}` {state}; the user-scope server of that name ({}) is used",
                    e.origin, e.name, state_origin
                ));
                continue;
            }
            out.servers.push(e);
        }
        for e in user {
            if out.servers.iter().any(|s| s.name == e.name) {
                continue;
            }
            out.servers.push(e);
        }
        out
    }

    /// `projects["<cwd>"]` of the state file, with its key ([`project_keys`], first found).
    fn state_project<'a>(
        &mut self,
        state: &'a Map<String, Value>,
        cwd: &Path,
        origin: &str,
    ) -> Option<(String, &'a Map<String, Value>)> {
        let projects = match state.get("projects") {
            Some(Value::Object(p)) => p,
            Some(other) => {
                self.problems.push(format!(
                    "{origin}: `projects` must be an object keyed by project path, found {}",
                    json_type_name(other)
                ));
                return None;
            }
            None => return None,
        };
        let (key, project) = project_keys(cwd)
            .into_iter()
            .find_map(|k| projects.get(&k).map(|p| (k, p)))?;
        match project {
            Value::Object(p) => Some((key, p)),
            other => {
                self.problems.push(format!(
                    "{origin}: `projects[\"{key}\"]` must be an object, found {}",
                    json_type_name(other)
                ));
                None
            }
        }
    }

    /// `projects["<cwd>"].mcpServers` of the state file.
    fn state_section(
        &mut self,
        project: Option<(String, &Map<String, Value>)>,
        origin: &str,
    ) -> Map<String, Value> {
        let Some((key, project)) = project else {
            return Map::new();
        };
        match project.get("mcpServers") {
            Some(Value::Object(m)) => m.clone(),
            Some(other) => {
                self.problems.push(format!(
                    "{origin}: `projects[\"{key}\"].mcpServers` must be an object of servers, found {}",
                    json_type_name(other)
                ));
                Map::new()
            }
            None => Map::new(),
        }
    }

    /// Adds one plugin's servers (`LoadedPlugin::mcp_servers`). A server whose endpoint (URL, or
    /// command and arguments, as written) matches a server already present and not disabled is
    /// left out with a note in `problems`: the server the user configured wins, then the plugin
    /// added first.
    pub fn add_plugin_servers(&mut self, plugin: PluginServer, servers: &Map<String, Value>) {
        for (name, entry) in servers {
            if name == "$schema" {
                continue;
            }
            let candidate = ServerEntry {
                name: name.clone(),
                scope: McpScope::Plugin,
                origin: format!("plugin {}", plugin.plugin_id),
                entry: entry.clone(),
                plugin: Some(plugin.clone()),
                approval: Approval::Approved,
            };
            let ep = candidate.endpoint();
            let dup = self
                .servers
                .iter()
                .find(|s| s.approval != Approval::Disabled && ep.is_some() && s.endpoint() == ep);
            if let Some(d) = dup {
                self.problems.push(format!(
                    "plugin {}: MCP server `{name}` is left out: `{}` ({}, {}) has the same endpoint",
                    plugin.plugin_id,
                    d.handler_name(),
                    d.scope,
                    d.origin
                ));
                continue;
            }
            let prefix = candidate.tool_prefix_name();
            if let Some(d) = self.servers.iter().find(|s| s.tool_prefix_name() == prefix) {
                self.problems.push(format!(
                    "plugin {}: MCP server `{name}` is left out: its tools would be named like those of `{}` ({})",
                    plugin.plugin_id,
                    d.handler_name(),
                    d.origin
                ));
                continue;
            }
            self.servers.push(candidate);
        }
    }

    /// The entry tools know as `name`: the configured name for user, project and local servers,
    /// `plugin_<plugin>_<server>` for plugin servers (either as written or sanitised).
    pub fn get(&self, name: &str) -> Option<&ServerEntry> {
        self.servers
            .iter()
            .find(|s| s.key() == name)
            .or_else(|| self.servers.iter().find(|s| s.tool_prefix_name() == name))
    }
}
