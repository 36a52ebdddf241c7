//! A plugin's language-server configuration (`.lsp.json`, or `lspServers` in `plugin.json`),
//! as Claude Code reads it: a map of server name to [`ServerConfig`].
//!
//! Configurations are strict: an unknown field, a wrong type, a `command` with spaces (its
//! arguments belong in `args`) or an empty `extensionToLanguage` makes the server invalid,
//! and it is skipped. [`check`] names each problem's field so a caller holding the file's
//! text can point at it (`warden plugin validate` prints `file:line:col`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long a server may take to answer `initialize` when `startupTimeout` is not set.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;
/// How long `shutdown`/`exit` may take before the server is ended, when not set.
pub const DEFAULT_SHUTDOWN_TIMEOUT_MS: u64 = 5_000;
/// How long one request may take when `requestTimeout` is not set.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;
/// How many times a crashed server is started again when `maxRestarts` is not set.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

/// The fields a server configuration may have.
pub const FIELDS: &[&str] = &[
    "command",
    "args",
    "extensionToLanguage",
    "transport",
    "env",
    "initializationOptions",
    "settings",
    "workspaceFolder",
    "startupTimeout",
    "shutdownTimeout",
    "requestTimeout",
    "restartOnCrash",
    "maxRestarts",
    "diagnostics",
];

/// How the client talks to the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Standard input and output.
    #[default]
    Stdio,
    /// Accepted as Claude Code accepts it; the server is spoken to over stdio all the same.
    Socket,
}

/// One server, as configured.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerConfig {
    /// The program (no spaces; arguments go in `args`).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// File extensions (with the dot) to LSP language ids: `{".py": "python"}`.
    pub extension_to_language: BTreeMap<String, String>,
    /// `stdio` (default) or `socket`.
    #[serde(default)]
    pub transport: Transport,
    /// Added to the server's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `initializationOptions` of `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization_options: Option<Value>,
    /// Sent with `workspace/didChangeConfiguration` after `initialized`, and the answer to the
    /// server's `workspace/configuration` requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    /// The workspace folder (default: the project directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_folder: Option<String>,
    /// Milliseconds `initialize` may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout: Option<u64>,
    /// Milliseconds `shutdown` and `exit` may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_timeout: Option<u64>,
    /// Milliseconds one request may take (default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout: Option<u64>,
    /// Whether a crashed server is started again (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_on_crash: Option<bool>,
    /// How many times at most (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_restarts: Option<u32>,
    /// Whether published diagnostics are shown after edits (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<bool>,
}

impl ServerConfig {
    /// `startupTimeout`, or its default.
    pub fn startup_timeout(&self) -> Duration {
        Duration::from_millis(self.startup_timeout.unwrap_or(DEFAULT_STARTUP_TIMEOUT_MS))
    }

    /// `shutdownTimeout`, or its default.
    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_millis(self.shutdown_timeout.unwrap_or(DEFAULT_SHUTDOWN_TIMEOUT_MS))
    }

    /// `requestTimeout`, or its default.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT_MS))
    }

    /// `restartOnCrash`, or its default.
    pub fn restart_on_crash(&self) -> bool {
        self.restart_on_crash.unwrap_or(true)
    }

    /// `maxRestarts`, or its default.
    pub fn max_restarts(&self) -> u32 {
        self.max_restarts.unwrap_or(DEFAULT_MAX_RESTARTS)
    }

    /// `diagnostics`, or its default.
    pub fn diagnostics(&self) -> bool {
        self.diagnostics.unwrap_or(true)
    }

    /// The language id of `extension` (with its dot), compared without case.
    pub fn language_of(&self, extension: &str) -> Option<&str> {
        self.extension_to_language
            .iter()
            .find(|(e, _)| e.eq_ignore_ascii_case(extension))
            .map(|(_, l)| l.as_str())
    }

    /// Expands `${VAR}`, `${VAR:-default}`, `${CLAUDE_PLUGIN_ROOT}` and
    /// `${user_config.KEY}` in `command`, `args`, `env` values and `workspaceFolder`, exactly
    /// as a plugin's stdio MCP server is expanded ([`warden_config::mcp::resolve`]): `vars`
    /// looks a name up (`user_config.KEY` arrives as written); an unset variable without a
    /// default is an error naming it.
    pub fn expand(
        &self,
        name: &str,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerConfig, String> {
        // The folder rides as a last argument so that one expansion covers every field.
        let mut args = self.args.clone();
        args.push(self.workspace_folder.clone().unwrap_or_default());
        let entry = serde_json::json!({
            "command": self.command,
            "args": args,
            "env": self.env,
        });
        let spec = warden_config::mcp::resolve(name, &entry, vars).map_err(|e| e.to_string())?;
        let warden_config::mcp::Transport::Stdio {
            command,
            mut args,
            env,
        } = spec.transport
        else {
            return Err(format!("LSP server `{name}`: not a command"));
        };
        let folder = args.pop().filter(|f| !f.is_empty());
        Ok(ServerConfig {
            command,
            args,
            env,
            workspace_folder: folder,
            ..self.clone()
        })
    }
}

/// One problem of a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field (`command`, `extensionToLanguage..py`), empty for the server itself.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A message that names its field already reads as it is.
        if self.field.is_empty() || self.message.contains(&format!("`{}`", self.field)) {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}` {}", self.field, self.message)
        }
    }
}

fn problem(field: &str, message: impl Into<String>) -> Problem {
    Problem {
        field: field.to_string(),
        message: message.into(),
    }
}

/// Every problem of `entry` (empty: it is valid).
pub fn check(entry: &Value) -> Vec<Problem> {
    let Some(o) = entry.as_object() else {
        return vec![problem(
            "",
            format!(
                "must be an object, found {}",
                warden_vocab::text::a_json_type(entry)
            ),
        )];
    };
    let mut out = Vec::new();
    for (k, v) in o {
        match k.as_str() {
            "command" => match v.as_str() {
                None => out.push(problem(
                    k,
                    format!(
                        "must be a string, found {}",
                        warden_vocab::text::a_json_type(v)
                    ),
                )),
                Some(c) if c.trim().is_empty() => out.push(problem(k, "is empty")),
                Some(c) if c.chars().any(char::is_whitespace) => out.push(problem(
                    k,
                    format!("`{c}` has spaces: give the program alone and its arguments in `args`"),
                )),
                Some(_) => {}
            },
            "args" => typed::<Vec<String>>(k, v, "an array of strings", &mut out),
            "env" => typed::<BTreeMap<String, String>>(k, v, "an object of strings", &mut out),
            "extensionToLanguage" => match v.as_object() {
                None => out.push(problem(
                    k,
                    format!(
                        "must be an object of \".ext\": \"language\", found {}",
                        warden_vocab::text::a_json_type(v)
                    ),
                )),
                Some(m) if m.is_empty() => out.push(problem(
                    k,
                    "maps no extension: give at least one, as {\".py\": \"python\"}",
                )),
                Some(m) => {
                    for (ext, lang) in m {
                        let field = format!("{k}.{ext}");
                        if !ext.starts_with('.') || ext.len() < 2 {
                            out.push(problem(
                                &field,
                                "is not a file extension: write it with its dot, as \".py\"",
                            ));
                        }
                        if lang.as_str().is_none_or(|l| l.trim().is_empty()) {
                            out.push(problem(
                                &field,
                                "must name a language id (a non-empty string)",
                            ));
                        }
                    }
                }
            },
            "transport" => {
                if serde_json::from_value::<Transport>(v.clone()).is_err() {
                    out.push(problem(
                        k,
                        format!("must be \"stdio\" or \"socket\", found {v}"),
                    ));
                }
            }
            "workspaceFolder" => typed::<String>(k, v, "a string", &mut out),
            "startupTimeout" | "shutdownTimeout" | "requestTimeout" => match v.as_u64() {
                Some(n) if n > 0 => {}
                _ => out.push(problem(
                    k,
                    format!("must be a positive number of milliseconds, found {v}"),
                )),
            },
            "maxRestarts" => {
                if v.as_u64().is_none_or(|n| u32::try_from(n).is_err()) {
                    out.push(problem(
                        k,
                        format!("must be a whole number of restarts, found {v}"),
                    ));
                }
            }
            "restartOnCrash" | "diagnostics" => typed::<bool>(k, v, "true or false", &mut out),
            "initializationOptions" | "settings" => {}
            other => out.push(problem(
                other,
                format!(
                    "unknown field `{other}` (LSP configs are strict; the fields are {})",
                    FIELDS.join(", ")
                ),
            )),
        }
    }
    for required in ["command", "extensionToLanguage"] {
        if !o.contains_key(required) {
            out.push(problem("", format!("needs `{required}`")));
        }
    }
    out
}

/// The configuration of `entry`, or every problem it has.
pub fn parse(entry: &Value) -> Result<ServerConfig, Vec<Problem>> {
    let problems = check(entry);
    if !problems.is_empty() {
        return Err(problems);
    }
    serde_json::from_value(entry.clone()).map_err(|e| vec![problem("", e.to_string())])
}

fn typed<T: serde::de::DeserializeOwned>(
    field: &str,
    v: &Value,
    what: &str,
    out: &mut Vec<Problem>,
) {
    if serde_json::from_value::<T>(v.clone()).is_err() {
        out.push(problem(
            field,
            format!(
                "must be {what}, found {}",
                warden_vocab::text::a_json_type(v)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_config_parses_with_its_defaults() {
        let c = parse(&json!({
            "command": "pyright-langserver",
            "args": ["--stdio"],
            "extensionToLanguage": {".py": "python", ".pyi": "python"},
            "settings": {"python": {"analysis": {}}},
            "maxRestarts": 1
        }))
        .expect("valid");
        assert_eq!(c.language_of(".PY"), Some("python"));
        assert_eq!(c.request_timeout(), Duration::from_secs(60));
        assert!(c.restart_on_crash() && c.diagnostics());
        assert_eq!(c.max_restarts(), 1);
        assert_eq!(c.transport, Transport::Stdio);
    }

    #[test]
    fn each_problem_names_its_field() {
        let p = check(&json!({
            "command": "node server.js",
            "extensionToLanguage": {"py": "python"},
            "requestTimeout": -1,
            "diagnostic": false,
            "transport": "pipe"
        }));
        let fields: Vec<&str> = p.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "command",
                "extensionToLanguage.py",
                "requestTimeout",
                "diagnostic",
                "transport"
            ],
            "{p:?}"
        );
        let p = check(&json!({"extensionToLanguage": {}}));
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p.iter().any(|p| p.message.contains("needs `command`")));
    }

    #[test]
    fn expansion_covers_command_args_env_and_folder() {
        let c = parse(&json!({
            "command": "${CLAUDE_PLUGIN_ROOT}/bin/ls",
            "args": ["--level", "${user_config.level}"],
            "env": {"HOME_X": "${HOME_X:-none}"},
            "workspaceFolder": "${CLAUDE_PROJECT_DIR}/src",
            "extensionToLanguage": {".x": "x"}
        }))
        .expect("valid");
        let vars = |n: &str| match n {
            "CLAUDE_PLUGIN_ROOT" => Some("/p".to_string()),
            "CLAUDE_PROJECT_DIR" => Some("/w".to_string()),
            "user_config.level" => Some("3".to_string()),
            _ => None,
        };
        let e = c.expand("x", &vars).expect("expands");
        assert_eq!(e.command, "/p/bin/ls");
        assert_eq!(e.args, ["--level", "3"]);
        assert_eq!(e.env["HOME_X"], "none");
        assert_eq!(e.workspace_folder.as_deref(), Some("/w/src"));
        let missing = c.expand("x", &|_| None).expect_err("unset root");
        assert!(missing.contains("CLAUDE_PLUGIN_ROOT"), "{missing}");
    }
}
