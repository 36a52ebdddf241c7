//! One fixture per real-world quirk of published plugins and marketplaces
//! (`real-world-edge-cases.md` §1–§6, §9, §11). Each builds its own small tree.

mod common;

use std::path::Path;

use common::*;
use serde_json::json;
use warden_plugins::marketplace::{PluginSource, load_marketplace};
use warden_plugins::{LoadContext, Severity, load_plugin, load_plugin_with, validate};

fn has(diags: &[warden_plugins::Diagnostic], sev: Severity, needle: &str) -> bool {
    diags
        .iter()
        .any(|d| d.severity == sev && d.message.contains(needle))
}

fn mkt_with(dir: &Path, name: &str, entries: serde_json::Value) -> warden_plugins::Marketplace {
    write_tree(
        dir,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(name, entries),
        )],
    );
    let mut d = Vec::new();
    load_marketplace(dir, &mut d).unwrap_or_else(|| panic!("marketplace: {d:?}"))
}

fn load_entry(
    m: &warden_plugins::Marketplace,
    name: &str,
) -> Result<warden_plugins::LoadedPlugin, warden_plugins::LoadError> {
    let e = m.entry(name).expect("entry");
    let dir = m.entry_dir(e).expect("relative");
    load_plugin_with(
        &dir,
        &LoadContext {
            entry: Some(e),
            marketplace_file: None,
            at_source: false,
        },
    )
}

fn skill_names(p: &warden_plugins::LoadedPlugin) -> Vec<String> {
    p.skills.iter().map(|s| s.default_name.clone()).collect()
}

// §1 marketplace.json

#[test]
fn root_source_shared_by_entries_with_different_skill_subsets() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "skills/pdf/SKILL.md",
                "---\nname: pdf\ndescription: d\n---\n",
            ),
            (
                "skills/xlsx/SKILL.md",
                "---\nname: xlsx\ndescription: d\n---\n",
            ),
            (
                "skills/art/SKILL.md",
                "---\nname: art\ndescription: d\n---\n",
            ),
        ],
    );
    let m = mkt_with(
        t.path(),
        "skills-mkt",
        json!([
            {"name": "docs", "source": "./", "strict": false, "skills": ["./skills/pdf", "./skills/xlsx"]},
            {"name": "art", "source": "./", "strict": false, "skills": ["./skills/art"]}
        ]),
    );
    assert_eq!(
        skill_names(&load_entry(&m, "docs").expect("docs")),
        ["pdf", "xlsx"]
    );
    assert_eq!(skill_names(&load_entry(&m, "art").expect("art")), ["art"]);
}

#[test]
fn bare_dot_source_and_plugin_root_dot() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"name":"bv","owner":{"name":"o"},"metadata":{"pluginRoot":"."},"plugins":[{"name":"brand","source":"."},{"name":"b2","source":"./."}]}"#,
        )],
    );
    let mut d = Vec::new();
    let m = load_marketplace(t.path(), &mut d).expect("mkt");
    assert!(m.plugins.iter().all(|e| e.source
        == PluginSource::Relative {
            path: String::new()
        }));
}

#[test]
fn plugin_root_applies_only_to_bare_names() {
    let t = tempfile::tempdir().expect("tmp");
    simple_plugin(&t.path().join("plugins/a"), "a", None);
    simple_plugin(&t.path().join("plugins/fmt"), "fmt", None);
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"name":"m","owner":{"name":"o"},"metadata":{"pluginRoot":"./plugins"},"plugins":[{"name":"a","source":"./plugins/a"},{"name":"fmt","source":"fmt"}]}"#,
        )],
    );
    let mut d = Vec::new();
    let m = load_marketplace(t.path(), &mut d).expect("mkt");
    assert!(d.iter().all(|x| !x.is_error()), "{d:?}");
    assert_eq!(
        m.entry("a").map(|e| &e.source),
        Some(&PluginSource::Relative {
            path: "plugins/a".into()
        })
    );
    assert_eq!(
        m.entry("fmt").map(|e| &e.source),
        Some(&PluginSource::Relative {
            path: "plugins/fmt".into()
        })
    );
}

#[test]
fn md_file_sources_are_per_entry_errors() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(t.path(), &[("agents/x_agent.md", "---\nname: x\n---\n")]);
    simple_plugin(&t.path().join("ok"), "ok", None);
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"name":"m","owner":{"name":"o"},"metadata":{"pluginRoot":"./agents"},"plugins":[{"name":"x","source":"x_agent.md"},{"name":"ok","source":"./ok"}]}"#,
        )],
    );
    let mut d = Vec::new();
    let m = load_marketplace(t.path(), &mut d).expect("mkt still loads");
    assert!(has(
        &d,
        Severity::Error,
        "is a file; a plugin source must be a directory"
    ));
    assert_eq!(m.plugins.len(), 1);
}

#[test]
fn git_sources_with_sha_ref_and_unknown_commit_key() {
    let t = tempfile::tempdir().expect("tmp");
    let sha = "a".repeat(40);
    let m = mkt_with(
        t.path(),
        "m",
        json!([
            {"name": "c", "source": {"source": "git-subdir", "url": "https://example.com/mono.git", "path": "plugins/c", "ref": "v1.2.0", "sha": sha}},
            {"name": "d", "source": {"source": "github", "repo": "example/d", "commit": "x", "sha": sha}},
            {"name": "e", "source": {"source": "git-subdir", "url": "example/mono", "path": "e"}}
        ]),
    );
    let d = m.entry("d").expect("d");
    assert_eq!(
        d.source.git_url().as_deref(),
        Some("https://github.com/example/d.git")
    );
    assert_eq!(d.source.git_pin(), (None, Some(sha.as_str())));
    assert_eq!(
        m.entry("e").and_then(|e| e.source.git_url()).as_deref(),
        Some("https://github.com/example/mono.git")
    );
}

#[test]
fn strict_false_entry_is_the_whole_definition() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            ("plugins/lsp/README.md", "readme"),
            ("plugins/cmds/tools/a.md", "---\ndescription: a\n---\n"),
            (
                "plugins/cmds/agents/r.md",
                "---\nname: r\ndescription: d\n---\n",
            ),
        ],
    );
    let m = mkt_with(
        t.path(),
        "m",
        json!([
            {"name": "clangd-lsp", "source": "./plugins/lsp", "strict": false, "lspServers": {"clangd": {"command": "clangd", "args": ["--background-index"], "extensionToLanguage": {".c": "c", ".h": "c", ".C": "cpp", ".H": "cpp"}}}},
            {"name": "cmds", "source": "./plugins/cmds", "strict": false, "commands": ["./tools/a.md"], "agents": ["./agents/r.md"]}
        ]),
    );
    let lsp = load_entry(&m, "clangd-lsp").expect("lsp");
    assert_eq!(lsp.name, "clangd-lsp");
    let ext = &lsp.lsp_servers["clangd"]["extensionToLanguage"];
    assert_eq!(ext[".C"], "cpp", "extension keys keep their case");
    assert_eq!(ext[".c"], "c");
    let cmds = load_entry(&m, "cmds").expect("cmds");
    assert_eq!(cmds.commands.len(), 1);
    assert_eq!(cmds.agent_name(&cmds.agents[0]), "cmds:r");
}

#[test]
fn strict_false_conflicting_with_plugin_json_fails_that_plugin_only() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "p/.claude-plugin/plugin.json",
                r#"{"name":"p","commands":["./c/"]}"#,
            ),
            ("p/c/x.md", "x"),
        ],
    );
    simple_plugin(&t.path().join("q"), "q", None);
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "p", "source": "./p", "strict": false, "commands": ["./c/x.md"]}, {"name": "q", "source": "./q"}]),
    );
    let e = load_entry(&m, "p").expect_err("conflict");
    assert!(e.to_string().contains("conflicting manifests"), "{e}");
    assert!(load_entry(&m, "q").is_ok());
    let r = validate(t.path());
    assert!(
        r.has_errors
            && r.diagnostics
                .iter()
                .any(|d| d.message.contains("conflicting manifests"))
    );
}

#[test]
fn missing_source_directories_and_submodules_are_per_entry_errors() {
    let t = tempfile::tempdir().expect("tmp");
    simple_plugin(&t.path().join("ok"), "ok", None);
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "gone", "source": "./gone"}, {"name": "sub", "source": "./vendor/submodule", "strict": false}, {"name": "ok", "source": "./ok"}]),
    );
    assert_eq!(m.plugins.len(), 1);
    let r = validate(t.path());
    assert_eq!(r.error_count, 2, "{r}");
}

#[test]
fn default_strict_without_plugin_json_takes_entry_name_and_discovers() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "plugin-dev/commands/create.md",
                "---\ndescription: c\n---\n",
            ),
            (
                "plugin-dev/skills/s/SKILL.md",
                "---\nname: s\ndescription: d\n---\n",
            ),
        ],
    );
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "plugin-dev", "source": "./plugin-dev"}]),
    );
    let p = load_entry(&m, "plugin-dev").expect("loads");
    assert!(!p.has_manifest);
    assert_eq!(p.command_name(&p.commands[0]), "plugin-dev:create");
    assert_eq!(p.skill_name(&p.skills[0], None), "plugin-dev:s");
}

#[test]
fn entry_skills_items_are_skill_dirs_or_parents_of_skills() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "p/local-ai-use/SKILL.md",
                "---\nname: a\ndescription: d\n---\n",
            ),
            ("p/more/x/SKILL.md", "---\nname: x\ndescription: d\n---\n"),
            ("p/more/y/SKILL.md", "---\nname: y\ndescription: d\n---\n"),
        ],
    );
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "p", "source": "./p", "skills": ["./local-ai-use", "./more"]}]),
    );
    assert_eq!(
        skill_names(&load_entry(&m, "p").expect("p")),
        ["local-ai-use", "x", "y"]
    );
}

#[test]
fn entry_name_differs_from_manifest_name_namespaces_by_manifest() {
    let t = tempfile::tempdir().expect("tmp");
    simple_plugin(
        &t.path().join("partner-built/spglobal"),
        "sp-global",
        Some("1.0.0"),
    );
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "spglobal", "source": "./partner-built/spglobal", "version": "0.9.0"}]),
    );
    let p = load_entry(&m, "spglobal").expect("loads");
    assert_eq!(p.name, "sp-global");
    assert_eq!(
        p.manifest.version.as_deref(),
        Some("1.0.0"),
        "plugin.json wins silently"
    );
    let r = validate(t.path());
    assert!(r.warnings().any(|d| d.message.contains("plugin.json wins")));
}

#[test]
fn marketplace_without_owner_or_without_plugins() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"name":"m","plugins":[]}"#,
        )],
    );
    let r = validate(t.path());
    assert!(r.has_errors && r.errors().any(|d| d.message.contains("owner")));
    let t2 = tempfile::tempdir().expect("tmp");
    write_tree(
        t2.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"agents":[{"name":"x"}]}"#,
        )],
    );
    let r = validate(t2.path());
    assert!(
        r.errors()
            .any(|d| d.message.contains("it is not a marketplace")),
        "{r}"
    );
}

#[test]
fn extra_keys_everywhere_are_accepted() {
    let t = tempfile::tempdir().expect("tmp");
    simple_plugin(&t.path().join("a"), "a", None);
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"$schema":"x","name":"m","version":"1","description":"d","owner":{"name":"o"},"metadata":{"totalPlugins":1,"lastUpdated":"x"},"renames":{"wordpress.com":"wp","old":null},
               "plugins":[{"name":"a","source":"./a","displayName":"A","value_type":"x","tags":["t"],"category":"c","license":"MIT"}]}"#,
        )],
    );
    let r = validate(t.path());
    assert!(!r.has_errors, "{r}");
}

#[test]
fn renames_cycle_is_an_error() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"name":"m","owner":{"name":"o"},"renames":{"a":"b","b":"a"},"plugins":[]}"#,
        )],
    );
    assert!(
        validate(t.path())
            .errors()
            .any(|d| d.message.contains("cycle"))
    );
}

#[test]
fn duplicate_entry_names_are_errors() {
    let t = tempfile::tempdir().expect("tmp");
    simple_plugin(&t.path().join("a"), "a", None);
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(
                "m",
                json!([{"name": "a", "source": "./a"}, {"name": "a", "source": "./a"}]),
            ),
        )],
    );
    let r = validate(t.path());
    let e = r
        .errors()
        .find(|d| d.message.contains("duplicate plugin name"))
        .expect("dup");
    assert!(e.line.is_some());
}

// §2 plugin.json

#[test]
fn component_path_shapes_and_dedupe() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","skills":["./skills/","./extra/skills"],"commands":"./commands/","agents":["./agents","./more/special.md"]}"#,
            ),
            ("skills/a/SKILL.md", "---\nname: a\ndescription: d\n---\n"),
            (
                "extra/skills/b/SKILL.md",
                "---\nname: b\ndescription: d\n---\n",
            ),
            ("commands/c.md", "c"),
            ("agents/r.md", "---\nname: r\ndescription: d\n---\n"),
            ("more/special.md", "---\nname: s\ndescription: d\n---\n"),
        ],
    );
    let p = load_plugin(t.path()).expect("loads");
    assert_eq!(skill_names(&p), ["a", "b"], "default skills/ loaded once");
    assert_eq!(p.commands.len(), 1);
    assert_eq!(p.agents.len(), 2);
    assert!(
        p.diagnostics
            .iter()
            .all(|d| !d.message.contains("is ignored because")),
        "{:?}",
        p.diagnostics
    );
}

#[test]
fn manifest_key_replaces_default_folder_with_warning() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","commands":["./cmds/"]}"#,
            ),
            ("commands/old.md", "o"),
            ("cmds/new.md", "n"),
        ],
    );
    let p = load_plugin(t.path()).expect("loads");
    assert_eq!(
        p.commands
            .iter()
            .map(|c| c.local_name())
            .collect::<Vec<_>>(),
        ["new"]
    );
    assert!(has(
        &p.diagnostics,
        Severity::Warning,
        "folder `commands/` is ignored"
    ));
}

#[test]
fn commands_object_map_reads_sources_with_warning() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","commands":{"init":{"source":"./commands/init.md","description":"x"}}}"#,
            ),
            ("commands/init.md", "i"),
        ],
    );
    let p = load_plugin(t.path()).expect("loads");
    assert_eq!(p.commands.len(), 1);
    assert!(has(&p.diagnostics, Severity::Warning, "object map"));
}

#[test]
fn hooks_shapes_string_inline_wrapped_unwrapped_and_dedupe() {
    let hook = r#"{"type":"command","command":"true"}"#;
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","hooks":"./hooks.json"}"#,
            ),
            (
                "hooks.json",
                &format!(r#"{{"hooks":{{"Stop":[{{"hooks":[{hook}]}}]}}}}"#),
            ),
        ],
    );
    assert_eq!(load_plugin(t.path()).expect("p").hooks.len(), 1);

    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            &format!(r#"{{"name":"p","hooks":{{"SessionStart":[{{"hooks":[{hook}]}}]}}}}"#),
        )],
    );
    let p = load_plugin(t.path()).expect("p");
    assert!(
        p.hooks[0].hooks.contains_key("SessionStart"),
        "unwrapped inline"
    );

    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            &format!(r#"{{"name":"p","hooks":{{"hooks":{{"Stop":[{{"hooks":[{hook}]}}]}}}}}}"#),
        )],
    );
    assert!(
        load_plugin(t.path()).expect("p").hooks[0]
            .hooks
            .contains_key("Stop"),
        "wrapped inline"
    );

    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","hooks":"./hooks/hooks.json"}"#,
            ),
            (
                "hooks/hooks.json",
                &format!(r#"{{"hooks":{{"Stop":[{{"hooks":[{hook}]}}]}}}}"#),
            ),
        ],
    );
    assert_eq!(
        load_plugin(t.path()).expect("p").hooks.len(),
        1,
        "default file named by the manifest loads once"
    );
}

#[test]
fn mcp_servers_shapes() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","mcpServers":"./.mcp.json"}"#,
            ),
            (".mcp.json", r#"{"mcpServers":{"db":{"command":"x"}}}"#),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert_eq!(p.mcp_servers.len(), 1);

    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"sp-global","mcpServers":{"spglobal":{"type":"http","url":"https://x"}}}"#,
            ),
            (
                ".mcp.json",
                r#"{"github":{"type":"http","url":"https://gh"}}"#,
            ),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert_eq!(
        p.mcp_servers.keys().collect::<Vec<_>>(),
        ["github", "spglobal"],
        "flat file plus inline"
    );
    assert_eq!(
        warden_plugins::namespace::mcp_tool(&p.name, "spglobal", "search"),
        "mcp__plugin_sp-global_spglobal__search"
    );

    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            r#"{"name":"p","mcpServers":{}}"#,
        )],
    );
    assert!(load_plugin(t.path()).expect("p").mcp_servers.is_empty());
}

#[test]
fn wrong_placeholder_in_mcp_args_warns() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".mcp.json",
            r#"{"mcpServers":{"s":{"command":"node","args":["${PLUGIN_ROOT}/x.js"]}}}"#,
        )],
    );
    assert!(has(
        &load_plugin(t.path()).expect("p").diagnostics,
        Severity::Warning,
        "${PLUGIN_ROOT}"
    ));
}

#[test]
fn user_config_with_enum_and_no_title_fails_precisely() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            "{\n  \"name\": \"p\",\n  \"userConfig\": {\"region\": {\"type\": \"string\", \"description\": \"r\", \"enum\": [\"eu\"]}}\n}",
        )],
    );
    let e = load_plugin(t.path()).expect_err("strict options");
    assert!(
        e.diagnostics
            .iter()
            .any(|d| d.message.contains("unknown field `enum`"))
    );
    assert!(
        e.diagnostics
            .iter()
            .any(|d| d.message.contains("needs a `title`"))
    );
}

#[test]
fn unknown_top_level_keys_warn_with_did_you_mean() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            "{\n  \"name\": \"p\",\n  \"category\": \"x\",\n  \"descripton\": \"typo\"\n}",
        )],
    );
    let r = validate(t.path());
    assert!(!r.has_errors, "{r}");
    let d = r
        .warnings()
        .find(|d| d.message.contains("did you mean `description`"))
        .expect("suggestion");
    assert_eq!((d.line, d.column), (Some(4), Some(3)));
    assert!(r.warnings().any(|d| d.message.contains("`category`")));
}

#[test]
fn value_type_variants_repository_object_author_string() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"$schema":"https://json.schemastore.org/claude-code-plugin-manifest.json","name":"p","author":"Jane","repository":{"type":"git","url":"https://x"},"metadata":{"a":1},"defaultEnabled":false,"dependencies":["q",{"name":"r","version":"^1"}],"displayName":"P","experimental":{"monitors":"./monitors/monitors.json"}}"#,
            ),
            (
                "monitors/monitors.json",
                r#"[{"name":"m","command":"sh -c 'x'","description":"d","when":"on-skill-invoke:s"}]"#,
            ),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert_eq!(
        p.manifest.author.as_ref().map(|a| a.name.as_str()),
        Some("Jane")
    );
    assert_eq!(p.manifest.dependencies.len(), 2);
    assert_eq!(p.monitors.len(), 1);
    assert!(
        validate(t.path()).warning_count == 0,
        "{}",
        validate(t.path())
    );
}

#[test]
fn missing_or_non_kebab_name() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", r#"{"description":"x"}"#)],
    );
    assert!(
        load_plugin(t.path())
            .expect_err("no name")
            .to_string()
            .contains("`name` is required")
    );
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", r#"{"name":"My_Plugin"}"#)],
    );
    assert!(has(
        &load_plugin(t.path()).expect("loads").diagnostics,
        Severity::Warning,
        "not kebab-case"
    ));
    // Spaces are another matter: Claude Code refuses the plugin.
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", r#"{"name":"My Plugin"}"#)],
    );
    assert!(
        load_plugin(t.path())
            .expect_err("spaces")
            .to_string()
            .contains("Plugin name cannot contain spaces")
    );
}

#[test]
fn wrong_types_fail_the_load_except_metadata() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            "{\"name\":\"p\",\n\"keywords\":\"a,b\"}",
        )],
    );
    let e = load_plugin(t.path()).expect_err("keywords");
    assert_eq!(e.diagnostics[0].line, Some(2));
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            r#"{"name":"p","metadata":"x"}"#,
        )],
    );
    assert!(has(
        &load_plugin(t.path()).expect("loads").diagnostics,
        Severity::Warning,
        "`metadata` should be an object"
    ));
}

#[test]
fn channels_and_top_level_themes() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","channels":[{"server":"nope"}],"themes":"./themes/"}"#,
            ),
            ("themes/dark.json", "{}"),
        ],
    );
    let r = validate(t.path());
    assert!(
        r.errors()
            .any(|d| d.message.contains("channel server `nope`"))
    );
    assert!(
        r.warnings()
            .any(|d| d.message.contains("experimental.themes"))
    );
}

// §3 layout and discovery

#[test]
fn skill_md_directly_in_skills_lowercase_nested_and_template() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            ("skills/SKILL.md", "---\nname: top\ndescription: d\n---\n"),
            ("skills/lower/skill.md", "no frontmatter"),
            (
                "skills/contact-center/SKILL.md",
                "---\nname: cc\ndescription: d\n---\n",
            ),
            (
                "skills/contact-center/android/SKILL.md",
                "---\nname: contact-center/android\ndescription: d\n---\n",
            ),
            (
                "skills/_template/SKILL.md",
                "---\nname: <name>\ndescription: d\n---\n",
            ),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    let plugin_name = p.name.clone();
    assert_eq!(
        skill_names(&p),
        [plugin_name.as_str(), "_template", "contact-center", "lower"],
        "nested skill is a supporting file"
    );
    assert!(has(
        &p.diagnostics,
        Severity::Warning,
        "SKILL.md directly in skills/"
    ));
    assert!(has(&p.diagnostics, Severity::Warning, "upper case"));
    assert!(has(
        &p.diagnostics,
        Severity::Warning,
        "looks like a template"
    ));
}

#[test]
fn root_skill_md_single_skill_plugin() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"solo"}"#),
            ("SKILL.md", "---\nname: fancy\ndescription: d\n---\n"),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert_eq!(p.skill_name(&p.skills[0], Some("fancy")), "solo:fancy");
    assert_eq!(p.skill_name(&p.skills[0], None), "solo:solo");
}

#[test]
fn readme_in_agents_loads_with_warning_and_subdir_agents_namespace() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"my-plugin"}"#),
            ("agents/README.md", "# About"),
            (
                "agents/review/security.md",
                "---\nname: security\ndescription: d\n---\n",
            ),
            ("commands/skill.md", "---\ndescription: x\n---\n"),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    let names: Vec<String> = p.agents.iter().map(|a| p.agent_name(a)).collect();
    assert_eq!(names, ["my-plugin:README", "my-plugin:review:security"]);
    assert!(has(
        &p.diagnostics,
        Severity::Warning,
        "README.md in `agents` has no frontmatter"
    ));
    assert_eq!(
        p.command_name(&p.commands[0]),
        "my-plugin:skill",
        "a command file named skill.md is a command"
    );
}

#[test]
fn decoy_config_files_are_never_globbed() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"p"}"#),
            ("skills/x/SKILL.md", "---\nname: x\ndescription: d\n---\n"),
            (
                "skills/x/.claude-plugin/hooks.json",
                r#"{"hooks":{"on_task_complete":[]}}"#,
            ),
            (
                "templates/cli/.mcp.json",
                r#"{"mcpServers":{"tmpl":{"command":"x"}}}"#,
            ),
            ("examples/hooks.json", r#"{"sessionStart":[]}"#),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert!(p.hooks.is_empty() && p.mcp_servers.is_empty());
    assert!(
        !validate(t.path())
            .diagnostics
            .iter()
            .any(|d| d.message.contains("sessionStart"))
    );
}

#[cfg(unix)]
#[test]
fn symlinks_escaping_the_root_are_refused_naming_the_path() {
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir().expect("tmp");
    let root = t.path().join("p");
    write_tree(
        &root,
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","commands":["./commands/"],"hooks":"./escape.json"}"#,
            ),
            ("commands/ok.md", "ok"),
        ],
    );
    write_tree(
        t.path(),
        &[
            ("sibling/SKILL.md", "---\nname: s\ndescription: d\n---\n"),
            ("outside.json", "{}"),
            ("secret.md", "s"),
        ],
    );
    std::fs::create_dir_all(root.join("skills")).expect("mkdir");
    symlink(t.path().join("sibling"), root.join("skills/linked")).expect("ln");
    symlink(t.path().join("outside.json"), root.join("escape.json")).expect("ln");
    symlink(t.path().join("secret.md"), root.join("commands/secret.md")).expect("ln");
    symlink("ok.md", root.join("commands/alias.md")).expect("ln inside");
    let p = load_plugin(&root).expect("plugin still loads");
    assert!(p.skills.is_empty() && p.hooks.is_empty());
    assert_eq!(p.commands.len(), 2, "ok.md and the internal alias");
    let errs: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert!(
        errs.iter()
            .all(|d| d.message.contains("outside the plugin root"))
    );
    assert!(errs.iter().any(|d| d.file.ends_with("escape.json")));
    // The warden component path is held to the same rule.
    write_tree(
        &root,
        &[(
            ".claude-plugin/plugin.json",
            r#"{"name":"p","warden":{"components":{"x":{"path":"wasm/x.wasm","world":"tool"}}}}"#,
        )],
    );
    std::fs::create_dir_all(root.join("wasm")).expect("mkdir");
    symlink(t.path().join("outside.json"), root.join("wasm/x.wasm")).expect("ln");
    let p = load_plugin(&root).expect("p");
    assert!(p.warden.is_none());
    assert!(
        p.diagnostics
            .iter()
            .any(|d| d.is_error() && d.message.contains("outside the plugin root"))
    );
}

#[test]
fn plugin_settings_json_keeps_agent_and_status_line() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "settings.json",
                r#"{"agent":"main","subagentStatusLine":{"type":"command","command":"x","padding":1},"other":1}"#,
            ),
            ("CLAUDE.md", "x"),
            ("bin/tool", "#!/bin/sh\n"),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert_eq!(
        p.settings.keys().collect::<Vec<_>>(),
        ["agent", "subagentStatusLine"]
    );
    assert!(p.bin_dir.is_some());
    assert!(has(
        &p.diagnostics,
        Severity::Warning,
        "CLAUDE.md at a plugin root is not loaded"
    ));
}

// §4 hooks.json

#[test]
fn array_shaped_hooks_files_are_errors_and_the_plugin_keeps_the_rest() {
    for shape in [
        r#"{"hooks":[{"event":"PreToolUse","matcher":"Bash","command":"x"}]}"#,
        r#"[{"type":"PostToolUse","matcher":{"toolNames":["x"]},"hook":{}}]"#,
        r#"[{"name":"n","event":"tool-use","filter":"x","action":"y"}]"#,
    ] {
        let t = tempfile::tempdir().expect("tmp");
        write_tree(
            t.path(),
            &[("hooks/hooks.json", shape), ("commands/c.md", "c")],
        );
        let p = load_plugin(t.path()).expect("p");
        assert_eq!(p.commands.len(), 1);
        assert!(p.hooks.iter().all(|h| h.hooks.is_empty()));
        assert!(p.diagnostics.iter().any(|d| d.is_error()), "{shape}");
    }
}

#[test]
fn hooks_warnings_unknown_events_ms_timeouts_prompt_on_session_start_bad_matchers() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            "hooks/hooks.json",
            r#"{"description":"d","$schema":"http://json-schema.org/draft-07/schema#","hooks":{
              "sessionStart":[],"beforeShellExecution":[],
              "SessionStart":[{"hooks":[{"type":"prompt","prompt":"x"},{"type":"command","command":"echo","timeout":30000}]}],
              "PostToolUse":[{"matcher":"Write(docs/**)","hooks":[{"type":"command","command":"true"}]},{"matcher":{"toolNames":["Write"]},"hooks":[]},
                             {"matcher":"^claude-security:claude-security$","hooks":[{"type":"command","command":"x","if":"Bash(git commit:*)"}]}],
              "Stop":[{"hooks":[{"type":"command","command":"x","if":"Bash(x)"}]}]}}"#,
        )],
    );
    let r = validate(t.path());
    assert!(!r.has_errors, "{r}");
    for needle in [
        "did you mean `SessionStart`",
        "beforeShellExecution",
        "does not support `prompt`",
        "looks like milliseconds",
        "not a valid regular expression",
        "must be a string",
        "will never run",
    ] {
        assert!(
            r.warnings().any(|d| d.message.contains(needle)),
            "missing warning: {needle}\n{r}"
        );
    }
    let p = load_plugin(t.path()).expect("p");
    assert_eq!(
        p.hooks[0].hooks["PostToolUse"].as_array().map(Vec::len),
        Some(1)
    );
}

// §6 LSP

#[test]
fn lsp_servers_file_plus_inline_merge_once_and_strict_keys() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            "p/.lsp.json",
            r#"{"go":{"command":"gopls","extensionToLanguage":{".go":"go"}},"bad":{"command":"x","extensionToLanguage":{},"colour":"red"}}"#,
        )],
    );
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "p", "source": "./p", "lspServers": {"go": {"command": "gopls", "extensionToLanguage": {".go": "go"}}}}]),
    );
    let p = load_entry(&m, "p").expect("p");
    assert_eq!(p.lsp_servers.keys().collect::<Vec<_>>(), ["go"]);
    assert!(has(
        &p.diagnostics,
        Severity::Error,
        "unknown field `colour`"
    ));
}

// §7 frontmatter (classification only; parsing belongs to the instruction layer)

#[test]
fn frontmatter_quirks() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "agents/reviewer.md",
                "---\nname: reviewer\ndescription: Use this agent to review code. Examples: <example>Context: user says \"review\"\n<example>\nuser: \"check this\"\n</example>\nmodel: sonnet\n---\nBody\n",
            ),
            ("agents/nodesc.md", "---\nname: nodesc\nmodel: fable\n---\n"),
            ("agents/colon.md", "---\nname: a:b\ndescription: d\n---\n"),
            (
                "skills/catalyst/SKILL.md",
                "# Catalyst Calendar\n\ndescription: not frontmatter\n",
            ),
            (
                "skills/crlf/SKILL.md",
                "---\r\nname: crlf\r\ndescription: d\r\n---\r\nbody",
            ),
            ("skills/unclosed/SKILL.md", "---\nname: x\ndescription: d\n"),
            (
                "commands/ralph.md",
                "---\ndescription: r\nhide-from-slash-command-tool: \"true\"\nargument-hint: [project-name]\n---\n",
            ),
            ("commands/plain.md", "No frontmatter at all"),
        ],
    );
    let r = validate(t.path());
    let for_file = |f: &str| {
        r.diagnostics
            .iter()
            .filter(|d| d.file.ends_with(f))
            .collect::<Vec<_>>()
    };
    assert!(for_file("reviewer.md").iter().all(|d| !d.is_error()));
    assert!(
        for_file("reviewer.md")
            .iter()
            .any(|d| d.message.contains("lenient"))
    );
    assert!(
        for_file("nodesc.md")
            .iter()
            .any(|d| d.message.contains("no `description`"))
    );
    assert!(
        for_file("nodesc.md")
            .iter()
            .any(|d| d.message.contains("unknown model `fable`"))
    );
    assert!(
        for_file("colon.md")
            .iter()
            .any(|d| d.message.contains("contains `:`"))
    );
    assert!(
        for_file("catalyst/SKILL.md")
            .iter()
            .any(|d| d.message.contains("no frontmatter"))
    );
    assert!(
        for_file("crlf/SKILL.md").is_empty(),
        "{:?}",
        for_file("crlf/SKILL.md")
    );
    assert!(
        for_file("unclosed/SKILL.md")
            .iter()
            .any(|d| d.is_error() && d.line == Some(1))
    );
    assert!(
        for_file("ralph.md").is_empty(),
        "{:?}",
        for_file("ralph.md")
    );
    assert!(for_file("plain.md").is_empty());
}

// §9 bytes and encoding

#[test]
fn bom_no_final_newline_and_duplicate_keys_in_json() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".claude-plugin/plugin.json",
            "\u{feff}{\"name\":\"first\",\"name\":\"p\",\"description\":\"日本語 ⨯\"}",
        )],
    );
    let p = load_plugin(t.path()).expect("BOM tolerated");
    assert_eq!(p.name, "p", "last duplicate key wins, as in JSON.parse");
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", "{\"name\":\"p\",}")],
    );
    let e = load_plugin(t.path()).expect_err("trailing comma");
    assert_eq!(
        (e.diagnostics[0].line, e.diagnostics[0].column),
        (Some(1), Some(13))
    );
}

// Warden's part: `warden.toml`, and the deprecated `warden` key of plugin.json

const GOOD_TOML: &str = r#"tools = ["t"]

[components.g]
path = "./wasm/g.wasm"
world = "hook"
capabilities = { fs = [{ path = "${CLAUDE_PROJECT_DIR}", access = "read" }], net = ["https://api.example.com:8443"], env = ["HOME"], exec = ["git"] }

[components.t]
path = "wasm/t.wasm"
world = "tool"

[[hooks.PreToolUse]]
matcher = "Read|Edit|Write|Bash"
hooks = [{ type = "wasm", component = "g", timeout = 5, onFailure = "block" }]
"#;

#[test]
fn warden_toml_declares_components_hooks_and_tools() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name": "guard"}"#),
            ("warden.toml", GOOD_TOML),
            ("wasm/g.wasm", "x"),
            ("wasm/t.wasm", "x"),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    let w = p.warden.as_ref().expect("warden");
    assert_eq!(w.components["g"].capabilities.exec, ["git"]);
    assert_eq!(w.components["g"].capabilities.fs.len(), 1);
    assert_eq!(w.components["g"].world, warden_plugins::World::Hook);
    assert_eq!(w.tools, ["t"]);
    assert_eq!(
        w.hooks["PreToolUse"][0]["hooks"][0]["onFailure"],
        json!("block")
    );
    let r = validate(t.path());
    assert!(r.error_count == 0 && r.warning_count == 0, "{r}");
}

#[test]
fn warden_key_is_still_read_with_a_deprecation_warning_and_warden_toml_wins() {
    let t = tempfile::tempdir().expect("tmp");
    let legacy = json!({"name": "guard", "warden": {
        "components": {"old": {"path": "wasm/g.wasm", "world": "hook"}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "wasm", "component": "old"}]}]}}});
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                &serde_json::to_string_pretty(&legacy).expect("json"),
            ),
            ("wasm/g.wasm", "x"),
            ("wasm/t.wasm", "x"),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    assert!(
        p.warden
            .as_ref()
            .is_some_and(|w| w.components.contains_key("old"))
    );
    let r = validate(t.path());
    assert_eq!((r.error_count, r.warning_count), (0, 1), "{r}");
    let w = r.warnings().next().expect("warning");
    assert!(w.file.ends_with(".claude-plugin/plugin.json"), "{w}");
    assert_eq!(w.line, Some(3), "{w}");
    assert!(
        w.message.contains("deprecated") && w.message.contains("move it to warden.toml"),
        "{w}"
    );

    write_tree(t.path(), &[("warden.toml", GOOD_TOML)]);
    let p = load_plugin(t.path()).expect("p");
    let w = p.warden.as_ref().expect("warden");
    assert!(w.components.contains_key("g") && !w.components.contains_key("old"));
    let r = validate(t.path());
    assert_eq!((r.error_count, r.warning_count), (0, 1), "{r}");
    let w = r.warnings().next().expect("warning");
    assert!(
        w.message.contains("`warden` key is ignored because") && w.message.contains("warden.toml"),
        "{w}"
    );
}

#[test]
fn warden_toml_problems_are_located_and_explained() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name": "guard"}"#),
            ("wasm/g.wasm", "x"),
            ("wasm/t.wasm", "x"),
            (
                "warden.toml",
                "[components.g]\npath = \"wasm/g.wasm\"\nworld = hook\n",
            ),
        ],
    );
    let r = validate(t.path());
    let e = r.errors().next().expect("syntax error");
    assert!(e.file.ends_with("warden.toml"), "{e}");
    assert_eq!((e.line, e.column), (Some(3), Some(9)), "{e}");
    assert!(e.message.starts_with("invalid TOML"), "{e}");
    assert!(load_plugin(t.path()).expect("p").warden.is_none());
    assert!(load_plugin(t.path()).expect("p").warden_declared);

    let bad = r#"tool = ["t"]
tools = ["ghost"]

[components.w]
path = "wasm/g.wasm"
world = "service"

[components.missing]
path = "wasm/none.wasm"
world = "hook"

[components.caps]
path = "wasm/g.wasm"
world = "hook"
capabilities = { fs = [{ path = "/x", access = "rw" }], net = ["ftp://x"], env = ["1BAD"], exec = ["git push"] }

[components.up]
path = "../g.wasm"
world = "tool"

[components.num]
path = 5
world = "hook"
capabilities = []

[components.t]
path = "wasm/t.wasm"
world = "tool"

[[hooks.PreToolUse]]
hooks = [{ type = "wasm", component = "nope" }, { type = "wasm", component = "t" }, { type = "command", command = "x" }]
"#;
    write_tree(t.path(), &[("warden.toml", bad)]);
    let r = validate(t.path());
    for needle in [
        "does not exist",
        "`components.w.world` is `service`; known worlds: hook, tool",
        "\"access\"",
        "ftp://x",
        "1BAD",
        "git push",
        "`components.up.path` `../g.wasm` must be relative to the plugin root without `..`",
        "`components.num.capabilities` must be a table, found array",
        "`nope`, which is not declared in `components`",
        "whose world is `tool`",
        "unknown hook type `command`",
        "`tools` lists `ghost`",
    ] {
        assert!(
            r.errors().any(|d| d.message.contains(needle)),
            "missing error: {needle}\n{r}"
        );
    }
    assert!(r.errors().all(|d| d.file.ends_with("warden.toml")), "{r}");
    let world = r
        .errors()
        .find(|d| d.message.contains("known worlds"))
        .expect("world");
    assert_eq!((world.line, world.column), (Some(6), Some(1)), "{world}");
    let unknown = r
        .warnings()
        .find(|d| d.message.contains("unknown key `tool`"))
        .expect("unknown key warning");
    assert!(
        unknown.message.contains("did you mean `tools`"),
        "{unknown}"
    );
    assert_eq!((unknown.line, unknown.column), (Some(1), Some(1)));
}

#[test]
fn warden_toml_is_held_to_the_manifest_size_limit() {
    let t = tempfile::tempdir().expect("tmp");
    let big = format!(
        "# {}\n",
        "x".repeat(warden_plugins::limits::MAX_MANIFEST_BYTES as usize)
    );
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name": "guard"}"#),
            ("warden.toml", &big),
        ],
    );
    let r = validate(t.path());
    assert!(
        r.errors()
            .any(|d| d.file.ends_with("warden.toml") && d.message.contains("cannot read")),
        "{r}"
    );
}

#[test]
fn warden_section_valid_and_invalid() {
    let t = tempfile::tempdir().expect("tmp");
    let good = json!({"name": "guard", "warden": {
        "components": {
            "g": {"path": "./wasm/g.wasm", "world": "hook", "capabilities": {"fs": [{"path": "${CLAUDE_PROJECT_DIR}", "access": "read"}], "net": ["https://api.example.com:8443"], "env": ["HOME"], "exec": ["git"]}},
            "t": {"path": "wasm/t.wasm", "world": "tool"}},
        "hooks": {"PreToolUse": [{"matcher": "Read|Edit|Write|Bash", "hooks": [{"type": "wasm", "component": "g", "timeout": 5}]}]},
        "tools": ["t"]}});
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", &good.to_string()),
            ("wasm/g.wasm", "x"),
            ("wasm/t.wasm", "x"),
        ],
    );
    let p = load_plugin(t.path()).expect("p");
    let w = p.warden.as_ref().expect("warden");
    assert_eq!(w.components["g"].capabilities.exec, ["git"]);
    assert_eq!(w.components["g"].world, warden_plugins::World::Hook);
    assert_eq!(w.tools, ["t"]);
    assert!(w.hooks.contains_key("PreToolUse"));
    let r = validate(t.path());
    assert!(r.error_count == 0 && r.warning_count == 1, "{r}");

    let bad = json!({"name": "guard", "warden": {
        "components": {
            "missing": {"path": "wasm/none.wasm", "world": "hook"},
            "world": {"path": "wasm/g.wasm", "world": "service"},
            "caps": {"path": "wasm/g.wasm", "world": "hook", "capabilities": {"fs": [{"path": "/x", "access": "rw"}], "net": ["ftp://x", "https://x/path"], "env": ["1BAD"], "exec": ["git push"]}},
            "up": {"path": "../g.wasm", "world": "tool"},
            "t": {"path": "wasm/t.wasm", "world": "tool"}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "wasm", "component": "nope"}, {"type": "wasm", "component": "t"}, {"type": "command", "command": "x"}]}]},
        "tools": ["ghost"], "extra": 1}});
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", &bad.to_string())],
    );
    let r = validate(t.path());
    for needle in [
        "does not exist",
        "known worlds: hook, tool",
        "\"access\"",
        "ftp://x",
        "https://x/path",
        "1BAD",
        "git push",
        "without `..`",
        "`nope`, which is not declared",
        "whose world is `tool`",
        "only `wasm`",
        "`ghost`",
    ] {
        let found = r.errors().any(|d| d.message.contains(needle))
            || (needle == "only `wasm`"
                && r.errors()
                    .any(|d| d.message.contains("unknown hook type `command`")));
        assert!(found, "missing error: {needle}\n{r}");
    }
    assert!(r.warnings().any(|d| d.message.contains("warden.extra")));
}

#[test]
fn wasm_hook_type_outside_warden_key_is_an_error() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            "hooks/hooks.json",
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"wasm","component":"g"}]}]}}"#,
        )],
    );
    assert!(
        validate(t.path())
            .errors()
            .any(|d| { d.message.contains("only allowed in warden.toml") })
    );
}

#[test]
fn report_serializes_and_prints() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(t.path(), &[(".claude-plugin/plugin.json", "{\"name\": 5}")]);
    let r = validate(t.path());
    assert!(r.has_errors && r.fails(false));
    let v = serde_json::to_value(&r).expect("ser");
    assert_eq!(v["kind"], "plugin");
    assert_eq!(v["diagnostics"][0]["severity"], "error");
    assert!(r.to_string().contains("✘ Validation failed"));
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", r#"{"name":"p","x":1}"#)],
    );
    let r = validate(t.path());
    assert!(
        !r.fails(false) && r.fails(true),
        "--strict turns warnings into failures"
    );
}

#[test]
fn explicit_strict_true_merges_entry_components_on_top() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                "p/.claude-plugin/plugin.json",
                r#"{"name":"p","commands":["./commands/"]}"#,
            ),
            ("p/commands/a.md", "a"),
            ("p/extra/b.md", "b"),
            ("p/agents/r.md", "---\nname: r\ndescription: d\n---\n"),
        ],
    );
    let m = mkt_with(
        t.path(),
        "m",
        json!([{"name": "p", "source": "./p", "strict": true, "commands": ["./extra/b.md"]}]),
    );
    let p = load_entry(&m, "p").expect("p");
    assert_eq!(
        p.commands
            .iter()
            .map(|c| c.local_name())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(p.agents.len(), 1);
}

#[test]
fn plugin_variables_substitute_exact_tokens_and_export() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", r#"{"name":"p"}"#)],
    );
    let p = load_plugin(t.path()).expect("p");
    let data = Path::new("/data/p-m");
    let s = p.substitute(r#"node ${CLAUDE_PLUGIN_ROOT}/x.js "${CLAUDE_PLUGIN_ROOT:-.}/y" ${CLAUDE_PLUGIN_DATA} $CLAUDE_PLUGIN_ROOT"#, data, None);
    assert_eq!(
        s,
        format!(
            r#"node {}/x.js "${{CLAUDE_PLUGIN_ROOT:-.}}/y" /data/p-m $CLAUDE_PLUGIN_ROOT"#,
            p.root.display()
        )
    );
    let env = p.env(data, Some(Path::new("/proj")));
    assert_eq!(
        env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        [
            "CLAUDE_PLUGIN_ROOT",
            "CLAUDE_PLUGIN_DATA",
            "CLAUDE_PROJECT_DIR"
        ]
    );
}

#[test]
fn a_plugin_name_with_spaces_is_an_error_as_in_claude_code() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(".claude-plugin/plugin.json", r#"{"name": "my plugin"}"#)],
    );
    let r = validate(t.path());
    assert!(r.has_errors, "{:?}", r.diagnostics);
    assert!(
        has(
            &r.diagnostics,
            Severity::Error,
            "Plugin name cannot contain spaces"
        ),
        "{:?}",
        r.diagnostics
    );
    // A name that is merely not kebab-case stays a warning.
    let u = tempfile::tempdir().expect("tmp");
    write_tree(
        u.path(),
        &[(".claude-plugin/plugin.json", r#"{"name": "My_Plugin"}"#)],
    );
    let r = validate(u.path());
    assert!(!r.has_errors, "{:?}", r.diagnostics);
}
