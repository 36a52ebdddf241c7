//! The bodies of the fuzz targets, one `pub fn <target>(data: &[u8])` each.
//!
//! They are plain functions so that two harnesses share them: the libFuzzer binaries in
//! `fuzz/fuzz_targets/` (nightly, cargo-fuzz) and the stable replay test
//! `tests/fuzz_corpora.rs`, which runs every committed seed and regression input through
//! every body. A body fails only by panicking (or hanging, or exhausting memory): each parser
//! must turn any input into a value or an error.
//!
//! Every body drives the entry point the loaders use on files. Parsers that read from disk
//! get the input written into a scratch directory that lives as long as the process, so one
//! input costs a few small writes rather than a fresh directory tree.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use warden_config::mcp::{McpServers, check_entry};
use warden_config::{ClaudeConfig, Home, LoadOptions, Origin, Scope, Settings, SettingsFile};
use warden_hooks::{Event, HookConfigBuilder, OnFailure, PluginContext, RawOutcome, classify_raw};
use warden_instructions::{ContextOptions, PluginContent, frontmatter, load_context};
use warden_permissions::shell::{self, MAX_COMMAND_LEN};
use warden_permissions::{Options, Permissions};
use warden_plugins::validate::{plugin_diagnostics, validate};
use warden_plugins::{LoadedPlugin, load_plugin};

/// A target's body: takes any bytes, returns only if the parsers under it coped.
pub type Body = fn(&[u8]);

/// Every target, by name, for harnesses that run them all.
pub const TARGETS: &[(&str, Body)] = &[
    ("plugin_json", plugin_json),
    ("marketplace_json", marketplace_json),
    ("hooks_json", hooks_json),
    ("warden_toml", warden_toml),
    ("frontmatter", frontmatter),
    ("permission_rules", permission_rules),
    ("bash", bash),
    ("hook_output", hook_output),
    ("settings", settings),
    ("mcp_json", mcp_json),
];

/// A scratch directory for the process, removed when the thread exits.
struct Scratch {
    dir: tempfile::TempDir,
}

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
    /// The rules the `bash` target asks about, compiled once.
    static BASH_RULES: std::cell::OnceCell<Permissions> = const { std::cell::OnceCell::new() };
}

/// Runs `f` with this thread's scratch directory, creating it on first use.
fn with_scratch<R>(f: impl FnOnce(&Path) -> R) -> R {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let scratch = s.get_or_insert_with(|| Scratch {
            dir: tempfile::Builder::new()
                .prefix("warden-fuzz-")
                .tempdir()
                .expect("create a scratch directory"),
        });
        f(scratch.dir.path())
    })
}

/// Writes `data` to `dir/rel`, creating parents.
fn put(dir: &Path, rel: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create a scratch subdirectory");
    }
    std::fs::write(&path, data).expect("write a scratch file");
    path
}

/// A fresh, empty subdirectory `name` of the scratch directory.
fn fresh(scratch: &Path, name: &str) -> PathBuf {
    let dir = scratch.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("clear a scratch subdirectory");
    }
    std::fs::create_dir_all(&dir).expect("create a scratch subdirectory");
    dir
}

/// What a session does with a plugin directory: load it, validate it as `claude plugin
/// validate` does, and register its hooks (`hooks.json`, inline manifest hooks and the
/// `warden.toml` section) the way `Session::hook_config` does.
fn plugin_pipeline(root: &Path) {
    let plugin: LoadedPlugin = match load_plugin(root) {
        Ok(p) => p,
        Err(e) => {
            assert!(
                !e.diagnostics.is_empty(),
                "a failed load must say why: {}",
                root.display()
            );
            return;
        }
    };
    let _ = plugin_diagnostics(&plugin);
    let manifest = std::fs::read_to_string(root.join(".claude-plugin/plugin.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(t.trim_start_matches('\u{feff}')).ok())
        .map(|mut v| {
            if let Value::Object(m) = &mut v {
                m.remove("warden");
            }
            v
        });
    let ctx = PluginContext::new("p@m", &plugin.root, root.join("data"));
    let mut builder = HookConfigBuilder::new();
    builder.add_plugin(ctx.clone(), manifest.as_ref());
    if let Some(w) = &plugin.warden {
        builder.add_warden_section(Arc::new(ctx), &w.to_hooks_value(), "warden.toml");
        let _ = w.requests();
    }
    let _ = builder.build();
}

/// `.claude-plugin/plugin.json`, through [`load_plugin`], validation and hook registration.
pub fn plugin_json(data: &[u8]) {
    with_scratch(|s| {
        let root = fresh(s, "plugin");
        put(&root, ".claude-plugin/plugin.json", data);
        plugin_pipeline(&root);
    });
}

/// `.claude-plugin/marketplace.json`, through [`validate`] (which loads the marketplace and
/// every plugin of it that lives in the same directory).
pub fn marketplace_json(data: &[u8]) {
    with_scratch(|s| {
        let root = fresh(s, "market");
        put(&root, ".claude-plugin/marketplace.json", data);
        // A local plugin for relative sources to point at.
        put(
            &root,
            "plugins/p/.claude-plugin/plugin.json",
            br#"{"name":"p"}"#,
        );
        let report = validate(&root);
        let _ = report.fails(true);
    });
}

/// `hooks/hooks.json` of a plugin, through the plugin loader's checks and the hooks engine.
pub fn hooks_json(data: &[u8]) {
    with_scratch(|s| {
        let root = fresh(s, "hooks");
        put(&root, ".claude-plugin/plugin.json", br#"{"name":"p"}"#);
        put(&root, "hooks/hooks.json", data);
        plugin_pipeline(&root);
    });
}

/// A plugin's `warden.toml`, through the plugin loader and hook registration.
pub fn warden_toml(data: &[u8]) {
    with_scratch(|s| {
        let root = fresh(s, "warden");
        put(&root, ".claude-plugin/plugin.json", br#"{"name":"p"}"#);
        put(&root, warden_plugins::WARDEN_TOML, data);
        plugin_pipeline(&root);
    });
}

/// Markdown with YAML frontmatter, read as a skill, an agent, a command and a rule: by the
/// instruction layer ([`load_context`], for a project, the user's home and a plugin) and by
/// the plugin validator's frontmatter checks.
pub fn frontmatter(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = frontmatter::parse(text, Path::new("fuzz.md"));
    }
    with_scratch(|s| {
        let project = fresh(s, "fm-project");
        let home = fresh(s, "fm-home");
        let plugin = fresh(s, "fm-plugin");
        put(&project, ".claude/skills/s/SKILL.md", data);
        put(&project, ".claude/agents/a.md", data);
        put(&project, ".claude/commands/c.md", data);
        put(&project, ".claude/rules/r.md", data);
        put(&project, "src/main.rs", b"fn main() {}\n");
        put(&home, "rules/r.md", data);
        put(&plugin, ".claude-plugin/plugin.json", br#"{"name":"p"}"#);
        put(&plugin, "skills/s/SKILL.md", data);
        put(&plugin, "agents/a.md", data);
        put(&plugin, "commands/c.md", data);

        let mut opts = ContextOptions::new(&project, Home::new(&home));
        opts.user_home = None;
        opts.touched_files = vec![project.join("src/main.rs")];
        opts.plugins = vec![PluginContent {
            name: "p".into(),
            root: plugin.clone(),
            skills_dirs: vec![plugin.join("skills")],
            commands_dirs: vec![plugin.join("commands")],
            agents_dirs: vec![plugin.join("agents")],
        }];
        let mut ctx = load_context(&opts);
        let _ = ctx.touch(&project.join("src/main.rs"));
        let _ = ctx.render_text();
        let report = validate(&plugin);
        let _ = report.fails(true);
    });
}

/// Permission rules, one per line, as `allow`, `ask` and `deny` entries of a project settings
/// file and as `--allowedTools`/`--disallowedTools`, compiled by [`Permissions::from_settings`]
/// and then asked about a few tool calls (the last line also as a Bash command).
pub fn permission_rules(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let_parser_panics_unwind();
    let lines: Vec<&str> = text.lines().collect();
    let mut lists: [Vec<Value>; 3] = Default::default();
    for (i, l) in lines.iter().enumerate() {
        lists[i % 3].push(Value::String((*l).to_string()));
    }
    let [allow, ask, deny] = lists;
    with_scratch(|s| {
        let cwd = s.join("rules-project");
        let home = s.join("rules-home");
        let mut value = Map::new();
        value.insert(
            "permissions".into(),
            json!({ "allow": allow, "ask": ask, "deny": deny }),
        );
        let settings = project_settings(&cwd, value);
        let opts = Options {
            cwd: cwd.clone(),
            home,
            mode: None,
            allowed_tools: lines.iter().step_by(2).map(|l| l.to_string()).collect(),
            disallowed_tools: lines
                .iter()
                .skip(1)
                .step_by(4)
                .map(|l| l.to_string())
                .collect(),
            add_dirs: Vec::new(),
            trusted: true,
        };
        let Ok(perms) = Permissions::from_settings(&settings, &opts) else {
            return;
        };
        let command = lines.last().copied().unwrap_or("git push origin main");
        let calls = [
            ("Bash", json!({ "command": command })),
            (
                "Bash",
                json!({ "command": "rm -rf build && git push origin main" }),
            ),
            ("Read", json!({ "file_path": cwd.join(".env") })),
            ("Edit", json!({ "file_path": "../outside.txt" })),
            ("WebFetch", json!({ "url": "https://example.com/a?b=c" })),
            ("mcp__srv__tool", json!({ "x": 1 })),
        ];
        for (tool, input) in &calls {
            let _ = perms.decide(tool, input, None);
        }
    });
}

/// libFuzzer's panic hook aborts at the panic site, before any `catch_unwind` runs; the shell
/// parser catches `brush-parser`'s panics on purpose (they make a line unparsable), so those
/// unwind to it. A panic anywhere else still aborts at once, and one that escapes a body
/// aborts in libfuzzer-sys (or fails the replay test), so an uncaught parser panic is still
/// a crash.
fn let_parser_panics_unwind() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_parser = info
                .location()
                .is_some_and(|l| l.file().contains("brush-parser"));
            if !in_parser {
                previous(info);
            }
        }));
    });
}

/// The Bash parser, differentially: wherever the fast path ([`shell::parse_plain`]) gives an
/// answer, the full grammar ([`shell::parse_full`]) must give the same one, since
/// [`shell::parse`] trusts the fast path whenever it answers. The line then goes through the
/// permission engine as a Bash call, under rules that make it look at wrappers, `git` globals,
/// `rm` flags, `sed` scripts, written files and inline code (`bash.rs`).
pub fn bash(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let_parser_panics_unwind();
    let full = shell::parse_full(text);
    if let Some(plain) = shell::parse_plain(text)
        && text.len() <= MAX_COMMAND_LEN
    {
        assert_eq!(
            Ok(&plain),
            full.as_ref(),
            "fast path and full parser disagree on {text:?}"
        );
    }
    let _ = shell::parse(text);
    BASH_RULES.with(|perms| {
        let perms = perms.get_or_init(|| {
            with_scratch(|s| {
                let cwd = s.join("bash-project");
                let rules = |l: &[&str]| Value::from(l.to_vec());
                let mut value = Map::new();
                value.insert(
                    "permissions".into(),
                    json!({
                        "allow": rules(&["Bash(git status)", "Bash(ls *)", "Bash(npm run *)", "Bash(sed -n *)"]),
                        "ask": rules(&["Bash(git push *)", "Bash(python3 *)"]),
                        "deny": rules(&["Bash(rm -rf *)", "Read(.env)", "Read(secrets/**)", "Edit(.git/**)"]),
                    }),
                );
                let settings = project_settings(&cwd, value);
                let opts = Options {
                    cwd: cwd.clone(),
                    home: s.join("bash-home"),
                    mode: None,
                    allowed_tools: Vec::new(),
                    disallowed_tools: Vec::new(),
                    add_dirs: Vec::new(),
                    trusted: true,
                };
                Permissions::from_settings(&settings, &opts).expect("fixed rules compile")
            })
        });
        let _ = perms.decide("Bash", &json!({ "command": text }), None);
    });
}

/// A hook's result as the hooks engine receives it: the first byte picks the exit code and
/// failure policy, the rest is standard output. Classified for every event, both as printed
/// text and as the already-parsed object a WASM hook hands over.
pub fn hook_output(data: &[u8]) {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let code = match head & 3 {
        0 => 0,
        1 => 2,
        2 => 1,
        _ => 127,
    };
    let on_failure = if head & 4 == 0 {
        OnFailure::Continue
    } else {
        OnFailure::Block
    };
    let stdout = String::from_utf8_lossy(rest);
    let mut raw = RawOutcome::exited(code, stdout.as_ref(), "stderr text");
    let parsed = serde_json::from_str::<Map<String, Value>>(&stdout).ok();
    for event in Event::ALL {
        let _ = classify_raw(event, &raw, on_failure, "fuzz hook", None);
    }
    if parsed.is_some() {
        raw.json = parsed;
        raw.stdout.clear();
        for event in Event::ALL {
            let _ = classify_raw(event, &raw, on_failure, "fuzz hook", None);
        }
    }
}

/// A settings file, loaded by [`Settings::load`] as the project's `.claude/settings.json`, as
/// Claude Code's user `settings.json` and as inline `--settings` JSON, then read by the
/// permission engine and the hooks engine.
pub fn settings(data: &[u8]) {
    with_scratch(|s| {
        let cwd = fresh(s, "settings-project");
        let home = fresh(s, "settings-home");
        let claude = fresh(s, "settings-claude");
        put(&cwd, ".claude/settings.json", data);
        put(&claude, "settings.json", data);
        let mut cli_settings = Vec::new();
        if let Ok(text) = std::str::from_utf8(data)
            && text.starts_with('{')
        {
            cli_settings.push(text.to_string());
        }
        let opts = LoadOptions {
            cwd: cwd.clone(),
            home: Home::new(&home),
            managed_dir: None,
            cli_settings,
            claude_config: ClaudeConfig::from_vars(None, Some(claude.as_os_str()), None),
        };
        let settings = Settings::load(&opts);
        let _ = settings.merged();
        let popts = Options {
            cwd: cwd.clone(),
            home: home.clone(),
            mode: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            add_dirs: Vec::new(),
            trusted: true,
        };
        if let Ok(perms) = Permissions::from_settings(&settings, &popts) {
            let _ = perms.decide("Bash", &json!({ "command": "ls" }), None);
        }
        let _ = HookConfigBuilder::from_settings(&settings).build();
    });
}

/// A project's `.mcp.json`, through [`McpServers::load`] (with project servers approved, so
/// every entry is resolved) and the per-entry checks.
pub fn mcp_json(data: &[u8]) {
    if let Ok(Value::Object(top)) = serde_json::from_slice::<Value>(data) {
        for (name, entry) in warden_config::mcp::servers_of(top) {
            let _ = check_entry(&name, &entry);
        }
    }
    with_scratch(|s| {
        let cwd = fresh(s, "mcp-project");
        let home = fresh(s, "mcp-home");
        put(&cwd, ".mcp.json", data);
        let mut value = Map::new();
        value.insert("enableAllProjectMcpServers".into(), Value::Bool(true));
        // Approved in the user's file: a project's own files cannot approve.
        let settings = Settings {
            files: vec![SettingsFile {
                scope: Scope::User,
                origin: Origin::Warden,
                path: Some(home.join("settings.json")),
                value,
            }],
            ..Settings::default()
        };
        let _ = McpServers::load(&cwd, &Home::new(&home), &settings);
    });
}

/// Settings made of one project file at `cwd/.claude/settings.json` holding `value`.
fn project_settings(cwd: &Path, value: Map<String, Value>) -> Settings {
    Settings {
        files: vec![SettingsFile {
            scope: Scope::Project,
            origin: Origin::Warden,
            path: Some(cwd.join(".claude/settings.json")),
            value,
        }],
        ..Settings::default()
    }
}
