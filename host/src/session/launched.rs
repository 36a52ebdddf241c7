//! The files configured hooks and MCP servers start: the scripts and programs their command
//! lines name inside the project or the home (`bash scripts/fmt.sh`,
//! `"$CLAUDE_PROJECT_DIR"/tools/guard.py`, `node server/index.js`). A call may not change
//! them (`ProcessConfinement::read_only`): the next event or server start would run whatever
//! it wrote, with the rights of that hook or server, which may be more than the call's.
//!
//! Only what the command line names is covered, as the command line is all that is known
//! before the program runs: a module the named script imports (`require('./lib')`) or a
//! program found through `PATH` is not.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use warden_hooks::HandlerKind;

use super::Session;

/// Where a command line's names are looked up.
pub(super) struct Anchors<'a> {
    /// The project (hooks and servers start there; `CLAUDE_PROJECT_DIR`), resolved.
    pub project: &'a Path,
    /// The user's home (`~`, `$HOME`), resolved.
    pub home: Option<&'a Path>,
    /// `CLAUDE_PLUGIN_ROOT`, for a plugin's hooks and servers.
    pub plugin_root: Option<&'a Path>,
}

impl Anchors<'_> {
    /// The existing files inside the project or the home that the shell text `text` names:
    /// every word of every simple command it would run (the program, its arguments, and the
    /// value of `--option=value`), with `$CLAUDE_PROJECT_DIR`, `$CLAUDE_PLUGIN_ROOT`, `$HOME`
    /// and `~` put in and relative names taken from the project. A line that cannot be parsed
    /// names nothing.
    pub fn files_in_shell(&self, text: &str, out: &mut BTreeSet<PathBuf>) {
        let Ok(parsed) = warden_permissions::shell::parse(text) else {
            return;
        };
        for cmd in &parsed.commands {
            for w in &cmd.words {
                self.file_word(w, out);
            }
        }
    }

    /// The same for one word of an argument vector (exec form, an MCP server's `args`).
    pub fn file_word(&self, word: &str, out: &mut BTreeSet<PathBuf>) {
        self.file_named(word, out);
        if let Some((_, value)) = word.split_once('=') {
            self.file_named(value, out);
        }
    }

    fn file_named(&self, word: &str, out: &mut BTreeSet<PathBuf>) {
        let Some(expanded) = self.expand(word) else {
            return;
        };
        let path = Path::new(&expanded);
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.project.join(path)
        };
        let Ok(real) = joined.canonicalize() else {
            return;
        };
        let inside =
            real.starts_with(self.project) || self.home.is_some_and(|h| real.starts_with(h));
        if inside && real.is_file() {
            out.insert(real);
        }
    }

    /// `word` with the variables a hook or server sees put in; `None` when anything else
    /// would be expanded by the shell (another variable, a substitution), or it is empty.
    fn expand(&self, word: &str) -> Option<String> {
        if word.is_empty() || word.starts_with('-') {
            return None;
        }
        let mut s = word.to_string();
        if let Some(home) = self.home {
            let h = home.display().to_string();
            if s == "~" || s.starts_with("~/") {
                s = format!("{h}{}", &s[1..]);
            }
            s = s.replace("${HOME}", &h).replace("$HOME", &h);
        }
        let project = self.project.display().to_string();
        s = s
            .replace("${CLAUDE_PROJECT_DIR}", &project)
            .replace("$CLAUDE_PROJECT_DIR", &project);
        if let Some(root) = self.plugin_root {
            let r = root.display().to_string();
            s = s
                .replace("${CLAUDE_PLUGIN_ROOT}", &r)
                .replace("$CLAUDE_PLUGIN_ROOT", &r);
        }
        (!s.contains(['$', '`', '~'])).then_some(s)
    }
}

/// The files the commands of every configured hook (settings of every scope, whether or
/// not hooks run in this session, and enabled plugins) and of every MCP server that is not
/// disabled (user, local, project and plugin servers) name inside the project or `home`.
pub(super) fn launched_files(session: &Session, home: Option<&Path>) -> Vec<PathBuf> {
    let project = session
        .cwd
        .canonicalize()
        .unwrap_or_else(|_| session.cwd.clone());
    let home = home.map(|h| h.canonicalize().unwrap_or_else(|_| h.to_path_buf()));
    let plain = Anchors {
        project: &project,
        home: home.as_deref(),
        plugin_root: None,
    };
    let mut out = BTreeSet::new();
    for f in &session.settings.files {
        if let Some(events) = f.value.get("hooks").and_then(Value::as_object) {
            for handler in events
                .values()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
            {
                command_files(&plain, handler, &mut out);
            }
        }
    }
    for hook in session.hook_config().all() {
        let HandlerKind::Command(c) = &hook.handler.kind else {
            continue;
        };
        let root = hook.source.plugin().map(|p| p.root.clone());
        let anchors = Anchors {
            plugin_root: root.as_deref(),
            ..plain
        };
        match &c.args {
            Some(args) => {
                anchors.file_word(&c.command, &mut out);
                for a in args {
                    anchors.file_word(a, &mut out);
                }
            }
            None => anchors.files_in_shell(&c.command, &mut out),
        }
    }
    let mut servers =
        warden_config::mcp::McpServers::load(&session.cwd, &session.home, &session.settings);
    for (plugin, declared) in session.plugin_mcp_servers() {
        servers.add_plugin_servers(plugin, declared);
    }
    for s in servers
        .servers
        .iter()
        .filter(|s| s.approval != warden_config::mcp::Approval::Disabled)
    {
        let root = s.plugin.as_ref().map(|p| p.root.clone());
        let anchors = Anchors {
            plugin_root: root.as_deref(),
            ..plain
        };
        if let Some(c) = s.entry.get("command").and_then(Value::as_str) {
            anchors.file_word(c, &mut out);
        }
        for a in s
            .entry
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            anchors.file_word(a, &mut out);
        }
    }
    out.into_iter().collect()
}

/// The files one raw `command` handler of a settings file names (shell or exec form).
fn command_files(anchors: &Anchors<'_>, handler: &Value, out: &mut BTreeSet<PathBuf>) {
    if handler.get("type").and_then(Value::as_str) != Some("command") {
        return;
    }
    let Some(command) = handler.get("command").and_then(Value::as_str) else {
        return;
    };
    match handler.get("args").and_then(Value::as_array) {
        Some(args) => {
            anchors.file_word(command, out);
            for a in args.iter().filter_map(Value::as_str) {
                anchors.file_word(a, out);
            }
        }
        None => anchors.files_in_shell(command, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_a_command_line_are_found_as_the_shell_would_see_them() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().canonicalize().expect("canonical");
        let (project, home) = (root.join("p"), root.join("h"));
        let plugin = home.join(".warden/plugins/plug");
        for f in [
            project.join("scripts/fmt.sh"),
            project.join("tools/guard.py"),
            project.join("server/index.js"),
            project.join("cfg/lint.toml"),
            project.join("a b.sh"),
            home.join("bin/notify.sh"),
            plugin.join("hooks/run.sh"),
            root.join("outside.sh"),
        ] {
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::fs::write(&f, "x").expect("write");
        }
        let a = Anchors {
            project: &project,
            home: Some(&home),
            plugin_root: Some(&plugin),
        };
        let found = |text: &str| {
            let mut out = BTreeSet::new();
            a.files_in_shell(text, &mut out);
            out.into_iter()
                .map(|p| {
                    p.strip_prefix(&root)
                        .expect("under root")
                        .display()
                        .to_string()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(found("bash scripts/fmt.sh"), ["p/scripts/fmt.sh"]);
        assert_eq!(
            found("\"$CLAUDE_PROJECT_DIR\"/tools/guard.py --strict"),
            ["p/tools/guard.py"]
        );
        assert_eq!(
            found("cd ${CLAUDE_PROJECT_DIR} && node ./server/index.js"),
            ["p/server/index.js"]
        );
        assert_eq!(
            found("lint --config=cfg/lint.toml src"),
            ["p/cfg/lint.toml"]
        );
        assert_eq!(found("sh 'a b.sh'"), ["p/a b.sh"]);
        assert_eq!(
            found("sh ~/bin/notify.sh; sh $HOME/bin/notify.sh"),
            ["h/bin/notify.sh"]
        );
        assert_eq!(
            found("${CLAUDE_PLUGIN_ROOT}/hooks/run.sh"),
            ["h/.warden/plugins/plug/hooks/run.sh"]
        );
        // Outside the project and home, unknown variables, directories, missing files.
        assert!(found("sh ../outside.sh").is_empty());
        assert!(found(&format!("sh {}", root.join("outside.sh").display())).is_empty());
        assert!(found("sh $OTHER/scripts/fmt.sh").is_empty());
        assert!(found("ls scripts").is_empty());
        assert!(found("sh scripts/missing.sh").is_empty());
        assert!(found("echo 'unterminated").is_empty());
    }
}
