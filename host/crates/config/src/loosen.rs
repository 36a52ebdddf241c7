//! A repository's settings can tighten the user's, never loosen them.
//!
//! Project and local files (`.claude/settings.json`, and `.claude/settings.local.json`, which
//! a repository can commit: [`Scope::is_user_controlled`](crate::Scope::is_user_controlled)) come with the working tree. What
//! they may set:
//!
//! | key | from a project or local file |
//! |---|---|
//! | `permissions.deny`, `ask`, `disableBypassPermissionsMode` | applies (tightens) |
//! | `permissions.allow` | applies, as in Claude Code (opening the session accepts the workspace) |
//! | `permissions.defaultMode` | applies when no looser than the mode the user's files give (`default` when none): `plan` and `dontAsk` always, `default` unless the user chose `plan` or `dontAsk`; `acceptEdits` and `bypassPermissions` are ignored |
//! | `permissions.additionalDirectories` | entries inside the project apply; entries outside it are ignored |
//! | `sandbox.*` (`enabled`, `network`, `allowedDomains`, `readablePaths`, `allowUnconfined`, `excludedCommands`, `autoAllowBashIfSandboxed`, `confinePlugins`, …) | ignored: only user, managed and `--settings` files configure the sandbox |
//! | `env` entries that change how programs start ([`changes_program_start`]) | ignored |
//! | `enableAllProjectMcpServers`, `enabledMcpjsonServers` | ignored: a repository cannot approve its own servers |
//! | `agent` | applies, as in Claude Code: the main conversation takes that agent's prompt, `tools` and `model`, which narrow what it does; the agent's `permissionMode`, `hooks` and `mcpServers` are not applied |
//!
//! [`Settings::ignored_loosenings`] names every such key a project or local file sets, so
//! `warden check` and the other configuration diagnostics can say it was ignored; the
//! permission engine applies the `permissions` rows, the session the rest.

use serde_json::Value;

use crate::Settings;

/// One key of a project or local file that was ignored because it would loosen the user's
/// settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The file, as [`SettingsFile::display_name`](crate::SettingsFile::display_name).
    pub file: String,
    /// The key, dotted (`sandbox.network`, `env.LD_PRELOAD`).
    pub key: String,
    /// Why it does not count.
    pub why: &'static str,
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: `{}` is ignored: {}", self.file, self.key, self.why)
    }
}

const SANDBOX_WHY: &str = "the sandbox is configured only from user, managed and --settings files; a repository's settings can tighten, never loosen";
const ENV_WHY: &str = "it changes how programs start (what they load or run first), and a repository's settings can tighten, never loosen";
const APPROVAL_WHY: &str =
    "a repository cannot approve its own MCP servers; approve them in your user settings";

/// Environment variables that change how a program starts rather than what it works on: what
/// the shell runs first (`BASH_ENV`, `ENV`, `PROMPT_COMMAND`), which libraries or modules are
/// loaded (`LD_*`, `NODE_OPTIONS`, `PYTHON*`, `PERL5*`, `RUBY*`), which programs are found
/// (`PATH`), and git's configuration (`GIT_*`: `GIT_CONFIG_*` adds configuration,
/// `GIT_SSH_COMMAND`, `GIT_EXEC_PATH` run programs).
pub fn changes_program_start(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "PATH",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "RUSTC_WRAPPER",
        "RUSTC",
        "CARGO_HOME",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "GOFLAGS",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "SSH_ASKPASS",
        "HOME",
        "XDG_CONFIG_HOME",
        "ZDOTDIR",
        "TMPDIR",
        "SHELL",
        "NPM_CONFIG_USERCONFIG",
        "PIP_CONFIG_FILE",
    ];
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "PYTHON",
        "PERL5",
        "PERLLIB",
        "RUBY",
        "GEM_",
        "BUNDLE_",
        "NPM_CONFIG_",
    ];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

impl Settings {
    /// The keys project and local files set that do not count because they would loosen the
    /// user's settings (see the [module docs](crate::loosen)), each naming its file: `sandbox.*`,
    /// program-start `env` entries, and MCP server approval. The `permissions` keys are
    /// judged by the permission engine, which knows the working directories.
    pub fn ignored_loosenings(&self) -> Vec<Ignored> {
        let mut out = Vec::new();
        for f in self.files.iter().filter(|f| !f.scope.is_user_controlled()) {
            let file = f.display_name();
            let mut push = |key: String, why| {
                out.push(Ignored {
                    file: file.clone(),
                    key,
                    why,
                })
            };
            match f.value.get("sandbox") {
                Some(Value::Object(sb)) => {
                    for (k, v) in sb {
                        // Turning it on asks for nothing Warden does not already do.
                        if k == "enabled" && v == &Value::Bool(true) {
                            continue;
                        }
                        push(format!("sandbox.{k}"), SANDBOX_WHY);
                    }
                }
                Some(_) => push("sandbox".into(), SANDBOX_WHY),
                None => {}
            }
            if let Some(Value::Object(env)) = f.value.get("env") {
                for k in env.keys().filter(|k| changes_program_start(k)) {
                    push(format!("env.{k}"), ENV_WHY);
                }
            }
            for k in ["enableAllProjectMcpServers", "enabledMcpjsonServers"] {
                if f.value.contains_key(k) {
                    push(k.into(), APPROVAL_WHY);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Origin, Scope, SettingsFile};
    use serde_json::json;
    use std::path::PathBuf;

    fn file(scope: Scope, name: &str, v: Value) -> SettingsFile {
        SettingsFile {
            scope,
            origin: Origin::Warden,
            path: Some(PathBuf::from(name)),
            value: v.as_object().cloned().unwrap_or_default(),
        }
    }

    fn ignored(files: Vec<SettingsFile>) -> Vec<String> {
        let s = Settings {
            files,
            ..Settings::default()
        };
        s.ignored_loosenings()
            .into_iter()
            .map(|i| format!("{} {}", i.file, i.key))
            .collect()
    }

    #[test]
    fn each_loosening_key_of_a_repository_file_is_named() {
        let v = json!({
            "sandbox": {
                "enabled": false,
                "network": true,
                "allowedDomains": ["*"],
                "readablePaths": ["~/.ssh"],
                "allowUnconfined": true,
                "excludedCommands": ["docker"],
                "autoAllowBashIfSandboxed": true,
            },
            "env": {
                "BASH_ENV": "x", "ENV": "x", "LD_PRELOAD": "x", "LD_LIBRARY_PATH": "x",
                "NODE_OPTIONS": "x", "PYTHONSTARTUP": "x", "PYTHONPATH": "x",
                "GIT_CONFIG_COUNT": "1", "GIT_SSH_COMMAND": "x", "PATH": "x",
                "RUST_LOG": "debug", "FOO": "bar",
            },
            "enableAllProjectMcpServers": true,
            "enabledMcpjsonServers": ["srv"],
        });
        for (scope, name) in [
            (Scope::Project, ".claude/settings.json"),
            (Scope::Local, ".claude/settings.local.json"),
        ] {
            let got = ignored(vec![file(scope, name, v.clone())]);
            let mut want: Vec<String> = [
                "sandbox.enabled",
                "sandbox.network",
                "sandbox.allowedDomains",
                "sandbox.readablePaths",
                "sandbox.allowUnconfined",
                "sandbox.excludedCommands",
                "sandbox.autoAllowBashIfSandboxed",
                "env.BASH_ENV",
                "env.ENV",
                "env.LD_PRELOAD",
                "env.LD_LIBRARY_PATH",
                "env.NODE_OPTIONS",
                "env.PYTHONSTARTUP",
                "env.PYTHONPATH",
                "env.GIT_CONFIG_COUNT",
                "env.GIT_SSH_COMMAND",
                "env.PATH",
                "enableAllProjectMcpServers",
                "enabledMcpjsonServers",
            ]
            .iter()
            .map(|k| format!("{name} {k}"))
            .collect();
            let mut got_sorted = got.clone();
            got_sorted.sort();
            want.sort();
            assert_eq!(got_sorted, want, "{scope:?}");
        }
    }

    #[test]
    fn the_users_own_files_and_tightening_keys_are_not_named() {
        let v = json!({"sandbox": {"network": true}, "env": {"PATH": "/x"}, "enableAllProjectMcpServers": true});
        for scope in [Scope::User, Scope::Managed, Scope::Cli] {
            assert!(ignored(vec![file(scope, "s.json", v.clone())]).is_empty());
        }
        let tight = json!({"sandbox": {"enabled": true}, "env": {"RUST_LOG": "debug"}});
        assert!(ignored(vec![file(Scope::Project, "p.json", tight)]).is_empty());
        let text = Ignored {
            file: "/p/.claude/settings.json".into(),
            key: "sandbox.network".into(),
            why: SANDBOX_WHY,
        }
        .to_string();
        assert!(text.starts_with("/p/.claude/settings.json: `sandbox.network` is ignored"));
    }
}
