//! Claude Code's own user configuration, read beside Warden's home.
//!
//! A Claude Code user keeps permission rules, hooks, `CLAUDE.md`, rules, skills, agents and
//! commands in `CLAUDE_CONFIG_DIR` (default `~/.claude`). A Warden session reads them too, so
//! the user's deny rules hold in Warden as they do in Claude Code. They are read, never
//! written: Warden's installs, grants, caches and its own user settings stay in its home.
//!
//! **Precedence.** Claude Code's `settings.json` is a user-scope file ([`Scope::User`]) just
//! below Warden's own `<home>/settings.json` and so below local, project, `--settings` and
//! managed files: a scalar such as `permissions.defaultMode` set in both comes from Warden's
//! file, arrays such as `permissions.deny` combine across both, objects merge key by key.
//! [`SettingsFile::origin`](crate::SettingsFile::origin) tells the two user files apart.
//!
//! **Opting out.** `WARDEN_NO_CLAUDE_CONFIG=1` in the environment, `"readClaudeConfig": false`
//! in Warden's user settings (or in a `--settings` or managed file, never in a project's own
//! files, which could otherwise drop the user's deny rules), or an embedder passing
//! [`ClaudeConfig::Off`] turns the reading off. A relative `CLAUDE_CONFIG_DIR` turns it off too:
//! reading `~/.claude` instead would mix in a configuration the user pointed Claude Code away
//! from.
//!
//! **Bridge hooks.** A Claude Code user who runs Warden's guards through the bridge has hooks
//! that hand each event to Warden (`warden hook …`, `warden serve --ensure`, or `http` hooks
//! to `warden serve` on a loopback address). Inside a Warden session they would run Warden
//! within Warden, enforcing twice or recursing, so they are left out of the loaded file and
//! each is reported as a [`SkippedHook`].

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Environment variable relocating Claude Code's configuration directory (`~/.claude`).
pub const CLAUDE_CONFIG_DIR_ENV: &str = "CLAUDE_CONFIG_DIR";
/// Environment variable that, set to anything but empty, `0` or `false`, stops Warden from
/// reading Claude Code's user configuration.
pub const NO_CLAUDE_CONFIG_ENV: &str = "WARDEN_NO_CLAUDE_CONFIG";
/// The Warden setting that, `false`, stops Warden from reading Claude Code's user
/// configuration (honoured in Warden's user settings, `--settings` and managed files).
pub const READ_CLAUDE_CONFIG_KEY: &str = "readClaudeConfig";

/// Whether and where Claude Code's user configuration is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaudeConfig {
    /// Read it from this directory.
    Dir(PathBuf),
    /// Do not read it.
    Off(ClaudeConfigOff),
}

/// Why Claude Code's user configuration is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaudeConfigOff {
    /// `WARDEN_NO_CLAUDE_CONFIG` is set.
    EnvVar,
    /// A settings file says `"readClaudeConfig": false`; its display name.
    Setting(String),
    /// The program embedding Warden did not ask for it.
    NotRequested,
    /// `CLAUDE_CONFIG_DIR` is not an absolute path.
    RelativeDir(PathBuf),
    /// Neither `CLAUDE_CONFIG_DIR` nor `HOME` is set.
    NoHome,
    /// The directory is Warden's own home, which is read as such.
    SameAsHome(PathBuf),
}

impl fmt::Display for ClaudeConfigOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaudeConfigOff::EnvVar => write!(f, "{NO_CLAUDE_CONFIG_ENV} is set"),
            ClaudeConfigOff::Setting(file) => {
                write!(f, "\"{READ_CLAUDE_CONFIG_KEY}\": false in {file}")
            }
            ClaudeConfigOff::NotRequested => f.write_str("not requested by the embedding program"),
            ClaudeConfigOff::RelativeDir(p) => write!(
                f,
                "{CLAUDE_CONFIG_DIR_ENV}={} is not an absolute path",
                p.display()
            ),
            ClaudeConfigOff::NoHome => write!(f, "neither {CLAUDE_CONFIG_DIR_ENV} nor HOME is set"),
            ClaudeConfigOff::SameAsHome(p) => {
                write!(f, "{} is Warden's own home, read as such", p.display())
            }
        }
    }
}

impl fmt::Display for ClaudeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaudeConfig::Dir(d) => write!(f, "read from {}", d.display()),
            ClaudeConfig::Off(why) => write!(f, "not read: {why}"),
        }
    }
}

impl Default for ClaudeConfig {
    /// Off: a caller that builds options by hand reads nothing it did not name.
    fn default() -> Self {
        ClaudeConfig::Off(ClaudeConfigOff::NotRequested)
    }
}

impl ClaudeConfig {
    /// From this process's environment: see [`ClaudeConfig::from_vars`].
    pub fn from_env() -> Self {
        Self::from_vars(
            std::env::var_os(NO_CLAUDE_CONFIG_ENV).as_deref(),
            std::env::var_os(CLAUDE_CONFIG_DIR_ENV).as_deref(),
            warden_vocab::home_dir().as_deref().map(Path::as_os_str),
        )
    }

    /// From the values of `WARDEN_NO_CLAUDE_CONFIG`, `CLAUDE_CONFIG_DIR` and `HOME`: off when
    /// the first is set (to anything but empty, `0` or `false`), else `CLAUDE_CONFIG_DIR` when
    /// it is set and not empty (off when it is relative), else `$HOME/.claude`.
    pub fn from_vars(no: Option<&OsStr>, dir: Option<&OsStr>, home: Option<&OsStr>) -> Self {
        if no.is_some_and(|v| !v.is_empty() && v != "0" && v != "false") {
            return ClaudeConfig::Off(ClaudeConfigOff::EnvVar);
        }
        if let Some(d) = dir.filter(|d| !d.is_empty()) {
            let d = PathBuf::from(d);
            return if d.is_absolute() {
                ClaudeConfig::Dir(d)
            } else {
                ClaudeConfig::Off(ClaudeConfigOff::RelativeDir(d))
            };
        }
        match home.filter(|h| !h.is_empty()) {
            Some(h) if Path::new(h).is_absolute() => {
                ClaudeConfig::Dir(Path::new(h).join(".claude"))
            }
            _ => ClaudeConfig::Off(ClaudeConfigOff::NoHome),
        }
    }

    /// The directory, when it is read.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            ClaudeConfig::Dir(d) => Some(d),
            ClaudeConfig::Off(_) => None,
        }
    }

    /// Claude Code's user settings file in the directory, when it is read.
    pub fn settings_file(&self) -> Option<PathBuf> {
        self.dir().map(|d| d.join("settings.json"))
    }
}

/// A hook of Claude Code's user settings that was not loaded because it hands the event to
/// Warden itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedHook {
    /// The settings file.
    pub file: PathBuf,
    /// The event it was declared for.
    pub event: String,
    /// The command or URL it runs.
    pub target: String,
}

impl fmt::Display for SkippedHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the {} hook `{}` was not loaded: it hands the event to Warden, which runs this session already",
            self.file.display(),
            self.event,
            self.target
        )
    }
}

/// Removes the bridge hooks (see the [module docs](self)) from a settings object's `hooks`,
/// dropping groups and events left empty, and returns what was removed.
pub fn strip_bridge_hooks(value: &mut Map<String, Value>, file: &Path) -> Vec<SkippedHook> {
    let mut skipped = Vec::new();
    let Some(Value::Object(events)) = value.get_mut("hooks") else {
        return skipped;
    };
    events.retain(|event, groups| {
        let Value::Array(groups) = groups else {
            return true;
        };
        let before = groups.len();
        groups.retain_mut(|group| {
            let Some(Value::Array(handlers)) = group.get_mut("hooks") else {
                return true;
            };
            let had = handlers.len();
            handlers.retain(|h| match bridge_target(h) {
                Some(target) => {
                    skipped.push(SkippedHook {
                        file: file.to_path_buf(),
                        event: event.clone(),
                        target,
                    });
                    false
                }
                None => true,
            });
            had == 0 || !handlers.is_empty()
        });
        before == 0 || !groups.is_empty()
    });
    skipped
}

/// The command or URL of a handler that hands the event to Warden, else `None`.
fn bridge_target(handler: &Value) -> Option<String> {
    let h = handler.as_object()?;
    match h.get("type").and_then(Value::as_str) {
        Some("command") => {
            let command = h.get("command").and_then(Value::as_str)?;
            match h.get("args").and_then(Value::as_array) {
                // Exec form: the program and its arguments are given apart, no shell.
                Some(args) => {
                    let args: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
                    (is_warden(command) && args.first().is_some_and(|a| is_bridge_subcommand(a)))
                        .then(|| {
                            std::iter::once(command)
                                .chain(args)
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                }
                None => shell_runs_warden_bridge(command).then(|| command.to_string()),
            }
        }
        Some("http") => {
            let url = h.get("url").and_then(Value::as_str)?;
            is_warden_serve_url(url).then(|| url.to_string())
        }
        _ => None,
    }
}

/// `warden` itself or a path ending in `/warden`.
fn is_warden(program: &str) -> bool {
    program == "warden" || program.ends_with("/warden")
}

/// The subcommands that answer hook events: `hook`, `hook-wasm`, and `serve` (which the HTTP
/// bridge starts from its SessionStart hook).
fn is_bridge_subcommand(word: &str) -> bool {
    matches!(word, "hook" | "hook-wasm" | "serve")
}

/// Whether any simple command of a shell line runs `warden hook`, `warden hook-wasm` or
/// `warden serve`. Words are split as the shell would split plain text and quotes; leading
/// variable assignments and the wrappers `env`, `exec`, `command` and `nohup` (with their
/// options) are skipped, and the script of `sh -c` (or `bash`, `dash`, `zsh`) is looked into.
fn shell_runs_warden_bridge(line: &str) -> bool {
    shell_commands(line)
        .iter()
        .any(|words| words_run_warden_bridge(words))
}

fn words_run_warden_bridge(words: &[String]) -> bool {
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if is_assignment(w)
            || matches!(w.as_str(), "env" | "exec" | "command" | "nohup")
            || (i > 0 && w.starts_with('-'))
        {
            i += 1;
        } else {
            break;
        }
    }
    let Some(program) = words.get(i) else {
        return false;
    };
    if is_warden(program) {
        return words.get(i + 1).is_some_and(|s| is_bridge_subcommand(s));
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    if matches!(name, "sh" | "bash" | "dash" | "zsh") {
        let rest = &words[i + 1..];
        if let Some(script) = rest
            .iter()
            .position(|w| w == "-c")
            .and_then(|c| rest.get(c + 1))
        {
            return shell_runs_warden_bridge(script);
        }
    }
    false
}

/// Splits a shell line into simple commands (at `;`, `&`, `|`, newlines and parentheses) of
/// unquoted words. Expansions are kept as written, which is enough to see the program name.
fn shell_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    let end_word = |word: &mut String, in_word: &mut bool, commands: &mut Vec<Vec<String>>| {
        if *in_word {
            if let Some(c) = commands.last_mut() {
                c.push(std::mem::take(word));
            }
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' | '`' => {
                end_word(&mut word, &mut in_word, &mut commands);
                if commands.last().is_some_and(|c| !c.is_empty()) {
                    commands.push(Vec::new());
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut commands),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut commands);
    commands.retain(|c| !c.is_empty());
    commands
}

/// An `http` hook URL on a loopback host whose path is `/hook/…`: where `warden serve` answers,
/// whatever port it was given.
fn is_warden_serve_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split_once(']').map_or(v6, |(h, _)| h)
    } else {
        host_port.split_once(':').map_or(host_port, |(h, _)| h)
    };
    let host = host.trim_end_matches('.');
    let loopback = host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    loopback && path.starts_with("/hook/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directory_from_the_environment() {
        let home = Some(OsStr::new("/home/u"));
        assert_eq!(
            ClaudeConfig::from_vars(None, None, home),
            ClaudeConfig::Dir(PathBuf::from("/home/u/.claude"))
        );
        assert_eq!(
            ClaudeConfig::from_vars(None, Some(OsStr::new("/cfg/cc")), home),
            ClaudeConfig::Dir(PathBuf::from("/cfg/cc"))
        );
        assert_eq!(
            ClaudeConfig::from_vars(None, Some(OsStr::new("")), home),
            ClaudeConfig::Dir(PathBuf::from("/home/u/.claude"))
        );
        assert_eq!(
            ClaudeConfig::from_vars(None, Some(OsStr::new("cc")), home),
            ClaudeConfig::Off(ClaudeConfigOff::RelativeDir(PathBuf::from("cc")))
        );
        assert_eq!(
            ClaudeConfig::from_vars(None, None, None),
            ClaudeConfig::Off(ClaudeConfigOff::NoHome)
        );
        for off in ["1", "yes", "true"] {
            assert_eq!(
                ClaudeConfig::from_vars(Some(OsStr::new(off)), Some(OsStr::new("/cfg")), home),
                ClaudeConfig::Off(ClaudeConfigOff::EnvVar)
            );
        }
        for on in ["", "0", "false"] {
            assert!(
                ClaudeConfig::from_vars(Some(OsStr::new(on)), None, home)
                    .dir()
                    .is_some()
            );
        }
    }

    #[test]
    fn bridge_commands_are_recognised() {
        for c in [
            "warden hook --wasm-only PreToolUse",
            "/usr/local/bin/warden hook PreToolUse",
            "\"$HOME/.cargo/bin/warden\" hook --wasm-only PermissionRequest",
            "WARDEN_HOME=/x warden hook PreToolUse",
            "env WARDEN_HOME=/x warden hook-wasm --component g.wasm PreToolUse",
            "exec warden hook PostToolUse",
            "warden serve --ensure",
            "cd /tmp && warden hook PreToolUse",
            "true; 'warden' hook Stop",
            "bash -c 'warden hook --wasm-only PreToolUse'",
            "/bin/sh -c \"exec warden hook PreToolUse\"",
        ] {
            assert!(shell_runs_warden_bridge(c), "{c}");
        }
        for c in [
            "warden check --tool Read",
            "echo warden hook",
            "wardenx hook PreToolUse",
            "/opt/warden/bin/lint hook",
            "jq . | tee warden.log",
            "warden",
            "sh -c 'echo warden hook'",
            "",
        ] {
            assert!(!shell_runs_warden_bridge(c), "{c}");
        }
    }

    #[test]
    fn serve_urls_are_recognised() {
        for u in [
            "http://127.0.0.1:47017/hook/PreToolUse",
            "http://localhost:9000/hook/Stop",
            "HTTP://[::1]:47017/hook/PreToolUse",
            "http://127.0.0.2/hook/X",
        ] {
            assert!(is_warden_serve_url(u), "{u}");
        }
        for u in [
            "https://example.com/hook/PreToolUse",
            "http://127.0.0.1:47017/health",
            "http://127.0.0.1.example.com/hook/PreToolUse",
            "http://localhost:8080/hooks",
            "ftp://127.0.0.1/hook/x",
        ] {
            assert!(!is_warden_serve_url(u), "{u}");
        }
    }

    /// Every hook of Warden's own bridge plugins, pasted into Claude Code's user settings, is
    /// recognised: a change to how the bridge calls Warden must be followed here.
    #[test]
    fn every_hook_of_the_bridge_plugins_is_recognised() {
        let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../plugins");
        for plugin in ["warden-bridge", "warden-bridge-http"] {
            let path = plugins.join(plugin).join("hooks/hooks.json");
            let text = std::fs::read_to_string(&path).expect("bridge hooks.json");
            let mut v: Value = serde_json::from_str(&text).expect("JSON");
            let map = v.as_object_mut().expect("object");
            let skipped = strip_bridge_hooks(map, &path);
            assert!(!skipped.is_empty(), "{plugin}");
            assert_eq!(
                v["hooks"],
                json!({}),
                "{plugin}: not every hook was recognised"
            );
        }
    }

    #[test]
    fn bridge_hooks_are_stripped_and_reported() {
        let mut v = json!({
            "hooks": {
                "PreToolUse": [
                    {"matcher": "*", "hooks": [
                        {"type": "command", "command": "warden hook --wasm-only PreToolUse"},
                        {"type": "command", "command": "./lint.sh"}
                    ]},
                    {"matcher": "Bash", "hooks": [
                        {"type": "http", "url": "http://127.0.0.1:47017/hook/PreToolUse"}
                    ]}
                ],
                "SessionStart": [
                    {"hooks": [{"type": "command", "command": "warden serve --ensure"}]}
                ],
                "Stop": [
                    {"hooks": [{"type": "command", "command": "/opt/bin/warden", "args": ["hook", "Stop"]}]}
                ],
                "PostToolUse": [
                    {"hooks": [{"type": "command", "command": "warden", "args": ["check"]}]}
                ]
            }
        });
        let map = v.as_object_mut().expect("object");
        let skipped = strip_bridge_hooks(map, Path::new("/cc/settings.json"));
        let got: Vec<(&str, &str)> = skipped
            .iter()
            .map(|s| (s.event.as_str(), s.target.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("PreToolUse", "warden hook --wasm-only PreToolUse"),
                ("PreToolUse", "http://127.0.0.1:47017/hook/PreToolUse"),
                ("SessionStart", "warden serve --ensure"),
                ("Stop", "/opt/bin/warden hook Stop"),
            ]
        );
        assert_eq!(
            v["hooks"],
            json!({
                "PreToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": "./lint.sh"}]}
                ],
                "PostToolUse": [
                    {"hooks": [{"type": "command", "command": "warden", "args": ["check"]}]}
                ]
            })
        );
        assert!(
            skipped[0]
                .to_string()
                .contains("/cc/settings.json: the PreToolUse hook")
        );
    }
}
