//! Behaviour of the instruction layer against the rules of spec sections 6, 7 and 8.

use std::path::{Path, PathBuf};

use serde_json::json;
use warden_config::{Home, Scope, Settings, SettingsFile};
use warden_instructions::*;

struct Fx {
    _t: tempfile::TempDir,
    root: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let t = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(t.path()).expect("canon");
        std::fs::create_dir_all(root.join("proj/.git")).expect("git");
        Fx { _t: t, root }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
    fn w(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        p
    }
    fn opts(&self, cwd: &str) -> ContextOptions {
        let mut o = ContextOptions::new(self.p(cwd), Home::new(self.p("whome")));
        o.user_home = Some(self.p("uhome"));
        o
    }
}

fn names(ctx: &Context) -> Vec<String> {
    ctx.memory
        .iter()
        .map(|m| m.path.display().to_string())
        .collect()
}

fn rel(fx: &Fx, ctx: &Context) -> Vec<String> {
    let r = fx.root.display().to_string();
    names(ctx)
        .into_iter()
        .map(|n| n.trim_start_matches(&r).trim_start_matches('/').to_string())
        .collect()
}

fn has_warning(ctx: &Context, needle: &str) -> bool {
    ctx.warnings.iter().any(|w| w.to_string().contains(needle))
}

fn settings_with(scope: Scope, value: serde_json::Value) -> Settings {
    let value = value.as_object().cloned().expect("object");
    Settings {
        files: vec![SettingsFile {
            scope,
            origin: Default::default(),
            path: None,
            value,
        }],
        errors: Vec::new(),
        ..Default::default()
    }
}

// ---- 8.1 files and order ----

#[test]
fn memory_walks_up_root_first_with_local_after_sibling() {
    let fx = Fx::new();
    fx.w("CLAUDE.md", "top");
    fx.w("proj/CLAUDE.md", "proj");
    fx.w("proj/CLAUDE.local.md", "proj local");
    fx.w("proj/.claude/CLAUDE.md", "proj dot");
    fx.w("proj/a/CLAUDE.md", "a");
    fx.w("proj/a/b/CLAUDE.local.md", "b local");
    let ctx = load_context(&fx.opts("proj/a/b"));
    assert_eq!(
        rel(&fx, &ctx),
        [
            "CLAUDE.md",
            "proj/CLAUDE.md",
            "proj/.claude/CLAUDE.md",
            "proj/CLAUDE.local.md",
            "proj/a/CLAUDE.md",
            "proj/a/b/CLAUDE.local.md"
        ]
    );
    assert!(
        ctx.memory
            .iter()
            .all(|m| m.load_reason == LoadReason::SessionStart)
    );
    assert_eq!(ctx.memory[3].memory_type, MemoryType::Local);
    assert_eq!(ctx.memory[1].memory_type, MemoryType::Project);
}

#[test]
fn managed_then_user_then_project() {
    let fx = Fx::new();
    fx.w("managed/CLAUDE.md", "m");
    fx.w("whome/CLAUDE.md", "u");
    fx.w("proj/CLAUDE.md", "p");
    let mut o = fx.opts("proj");
    o.managed_dir = Some(fx.p("managed"));
    o.settings = settings_with(Scope::Managed, json!({"claudeMd": "policy text"}));
    let ctx = load_context(&o);
    let types: Vec<MemoryType> = ctx.memory.iter().map(|m| m.memory_type).collect();
    assert_eq!(
        types,
        [
            MemoryType::Managed,
            MemoryType::Managed,
            MemoryType::User,
            MemoryType::Project
        ]
    );
    assert_eq!(ctx.memory[1].kind, MemoryKind::ManagedSetting);
    assert_eq!(ctx.memory[1].content, "policy text");
    assert!(ctx.memory_text().contains("Contents of"));
}

/// The same session with Claude Code's user directory `cc/` read beside Warden's home.
fn with_claude_dir(fx: &Fx, cwd: &str) -> ContextOptions {
    let mut o = fx.opts(cwd);
    o.claude_dir = Some(fx.p("cc"));
    o.settings.claude_config = warden_config::ClaudeConfig::Dir(fx.p("cc"));
    o
}

#[test]
fn claude_code_user_memory_and_rules_load_before_wardens_own() {
    let fx = Fx::new();
    fx.w("cc/CLAUDE.md", "cc memory @notes.md");
    fx.w("cc/notes.md", "cc notes");
    fx.w("cc/rules/style.md", "cc rule");
    fx.w("cc/rules/ts.md", "---\npaths: \"**/*.ts\"\n---\ncc ts rule");
    fx.w("whome/CLAUDE.md", "warden memory");
    fx.w("whome/rules/w.md", "warden rule");
    fx.w("proj/CLAUDE.md", "p");
    let ctx = load_context(&with_claude_dir(&fx, "proj"));
    assert_eq!(
        rel(&fx, &ctx),
        [
            "cc/CLAUDE.md",
            "cc/notes.md",
            "cc/rules/style.md",
            "whome/CLAUDE.md",
            "whome/rules/w.md",
            "proj/CLAUDE.md"
        ]
    );
    assert!(
        ctx.memory[..5]
            .iter()
            .all(|m| m.memory_type == MemoryType::User)
    );
    let r = &ctx.claude_config;
    assert!(r.read);
    assert_eq!(r.dir, Some(fx.p("cc")));
    assert_eq!(
        r.memory,
        [
            fx.p("cc/CLAUDE.md"),
            fx.p("cc/notes.md"),
            fx.p("cc/rules/style.md")
        ]
    );
    assert_eq!(r.rules, [fx.p("cc/rules/style.md"), fx.p("cc/rules/ts.md")]);
    let text = ctx.render_text();
    assert!(
        text.contains(&format!(
            "Claude Code user configuration: read from {}",
            fx.p("cc").display()
        )),
        "{text}"
    );
    assert!(text.contains(&format!(
        "  rule (waiting): {}",
        fx.p("cc/rules/ts.md").display()
    )));

    // A conditional rule of Claude Code's directory loads like any user rule.
    let mut ctx = ctx;
    let new = ctx.touch(&fx.p("proj/src/a.ts"));
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].path, fx.p("cc/rules/ts.md"));
    assert!(ctx.claude_config.memory.contains(&fx.p("cc/rules/ts.md")));
}

#[test]
fn claude_code_directory_not_read_without_it_and_says_why() {
    let fx = Fx::new();
    fx.w("cc/CLAUDE.md", "cc memory");
    fx.w("cc/skills/s/SKILL.md", "---\ndescription: d\n---\nbody");
    let mut o = fx.opts("proj");
    o.settings.claude_config =
        warden_config::ClaudeConfig::Off(warden_config::ClaudeConfigOff::EnvVar);
    let ctx = load_context(&o);
    assert!(ctx.memory.is_empty());
    assert!(ctx.skills.is_empty());
    assert!(!ctx.claude_config.read);
    assert_eq!(
        ctx.claude_config.reason.as_deref(),
        Some("WARDEN_NO_CLAUDE_CONFIG is set")
    );
    assert!(
        ctx.render_text()
            .contains("Claude Code user configuration: not read (WARDEN_NO_CLAUDE_CONFIG is set)")
    );
}

#[test]
fn nested_memory_loads_lazily_when_a_file_below_is_touched() {
    let fx = Fx::new();
    fx.w("proj/CLAUDE.md", "p");
    fx.w("proj/sub/CLAUDE.md", "sub");
    fx.w("proj/sub/deep/CLAUDE.local.md", "deep");
    fx.w("proj/other/CLAUDE.md", "other");
    let mut ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md"]);
    let new = ctx.touch(&fx.p("proj/sub/deep/x.rs"));
    assert_eq!(new.len(), 2);
    assert!(
        new.iter()
            .all(|m| m.load_reason == LoadReason::NestedTraversal)
    );
    assert_eq!(
        new[0].trigger_file_path.as_deref(),
        Some(fx.p("proj/sub/deep/x.rs").as_path())
    );
    // A second touch in the same tree loads nothing new; a relative path works too.
    assert!(ctx.touch(Path::new("sub/y.rs")).is_empty());
    assert_eq!(ctx.touch(Path::new("other/z.rs")).len(), 1);
    let ev = ctx.instructions_loaded_events();
    assert_eq!(ev[1]["load_reason"], "nested_traversal");
    assert_eq!(ev[1]["memory_type"], "Project");
}

#[test]
fn claude_md_excludes_skip_files_but_not_managed() {
    let fx = Fx::new();
    fx.w("managed/CLAUDE.md", "m");
    fx.w("proj/CLAUDE.md", "p");
    fx.w("proj/sub/CLAUDE.md", "s");
    let mut o = fx.opts("proj/sub");
    o.managed_dir = Some(fx.p("managed"));
    let managed = fx.p("managed/CLAUDE.md").display().to_string();
    o.settings = settings_with(
        Scope::Project,
        json!({"claudeMdExcludes": ["**/proj/CLAUDE.md", managed]}),
    );
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["managed/CLAUDE.md", "proj/sub/CLAUDE.md"]);
}

#[test]
fn html_comments_are_stripped_outside_code() {
    let fx = Fx::new();
    fx.w(
        "proj/CLAUDE.md",
        "keep\n<!-- secret -->\n```\n<!-- shown -->\n```\n",
    );
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(ctx.memory[0].content, "keep\n```\n<!-- shown -->\n```\n");
}

#[test]
fn agents_md_is_a_fallback_only() {
    let fx = Fx::new();
    fx.w("proj/AGENTS.md", "agents");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/AGENTS.md"]);
    assert_eq!(ctx.memory[0].kind, MemoryKind::AgentsMd);
    fx.w("proj/CLAUDE.md", "claude");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md"]);
}

#[test]
fn oversized_memory_file_is_skipped_with_warning() {
    let fx = Fx::new();
    fx.w("proj/CLAUDE.md", &"x".repeat((4 << 20) + 1));
    let ctx = load_context(&fx.opts("proj"));
    assert!(ctx.memory.is_empty());
    assert!(has_warning(&ctx, "over the"));
}

// ---- 8.2 imports ----

#[test]
fn imports_relative_home_absolute_fragment_and_escaped_space() {
    let fx = Fx::new();
    let abs = fx.w("proj/abs/target.md", "abs");
    fx.w("uhome/tilde.md", "tilde");
    fx.w("proj/docs/my notes.md", "notes");
    fx.w("proj/docs/guide.md", "guide");
    fx.w(
        "proj/CLAUDE.md",
        &format!(
            "See @docs/guide.md#setup and @docs/my\\ notes.md\n@{}\n`@docs/nope.md`\n",
            abs.display()
        ),
    );
    fx.w(
        "proj/.claude/CLAUDE.md",
        "home import @~/tilde.md (outside the project, so approval is on)",
    );
    let mut o = fx.opts("proj");
    o.external_imports_approved = true;
    let ctx = load_context(&o);
    let r = rel(&fx, &ctx);
    assert_eq!(
        r[..4],
        [
            "proj/CLAUDE.md",
            "proj/docs/guide.md",
            "proj/docs/my notes.md",
            "proj/abs/target.md"
        ]
    );
    assert!(r.contains(&"uhome/tilde.md".to_string()), "{r:?}");
    assert_eq!(ctx.memory[1].load_reason, LoadReason::Include);
    assert_eq!(
        ctx.memory[1].parent_file_path.as_deref(),
        Some(fx.p("proj/CLAUDE.md").as_path())
    );
    assert_eq!(ctx.memory[1].kind, MemoryKind::Import);
}

#[test]
fn imports_inside_code_are_ignored() {
    let fx = Fx::new();
    fx.w("proj/a.md", "a");
    fx.w(
        "proj/CLAUDE.md",
        "```\n@a.md\n```\nuse `@a.md` here\n<!-- @a.md -->\n",
    );
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md"]);
}

#[test]
fn import_depth_four_loads_and_five_is_refused() {
    let fx = Fx::new();
    fx.w("proj/CLAUDE.md", "@d1.md");
    for i in 1..=5 {
        fx.w(
            &format!("proj/d{i}.md"),
            &format!("level {i} @d{}.md", i + 1),
        );
    }
    fx.w("proj/d6.md", "too deep");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(
        rel(&fx, &ctx),
        [
            "proj/CLAUDE.md",
            "proj/d1.md",
            "proj/d2.md",
            "proj/d3.md",
            "proj/d4.md"
        ]
    );
    assert!(
        ctx.warnings.iter().any(|w| w.file.ends_with("d4.md")
            && w.line == Some(1)
            && w.message.contains("refused")),
        "{:?}",
        ctx.warnings
    );
}

#[test]
fn import_cycle_is_detected() {
    let fx = Fx::new();
    fx.w("proj/CLAUDE.md", "@a.md");
    fx.w("proj/a.md", "@b.md");
    fx.w("proj/b.md", "@a.md and @CLAUDE.md");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md", "proj/a.md", "proj/b.md"]);
    assert!(has_warning(&ctx, "import cycle skipped"));
}

#[cfg(unix)]
#[test]
fn symlink_cycles_and_loops_are_handled() {
    let fx = Fx::new();
    fx.w("proj/real.md", "@link.md");
    std::os::unix::fs::symlink(fx.p("proj/real.md"), fx.p("proj/link.md")).expect("symlink");
    std::os::unix::fs::symlink(fx.p("proj/loop1.md"), fx.p("proj/loop2.md")).expect("symlink");
    std::os::unix::fs::symlink(fx.p("proj/loop2.md"), fx.p("proj/loop1.md")).expect("symlink");
    fx.w("proj/CLAUDE.md", "@real.md @loop1.md");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md", "proj/real.md"]);
    assert!(
        has_warning(&ctx, "import cycle skipped"),
        "{:?}",
        ctx.warnings
    );
}

#[test]
fn imports_outside_the_project_need_approval_except_from_user_files() {
    let fx = Fx::new();
    fx.w("outside/x.md", "x");
    fx.w("outside/y.md", "y");
    fx.w(
        "proj/CLAUDE.md",
        &format!("@{} @../outside/y.md", fx.p("outside/x.md").display()),
    );
    fx.w("whome/CLAUDE.md", "@../outside/y.md");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(
        rel(&fx, &ctx),
        ["whome/CLAUDE.md", "outside/y.md", "proj/CLAUDE.md"]
    );
    let w = ctx
        .warnings
        .iter()
        .find(|w| w.message.contains("not approved"))
        .expect("warning");
    assert!(w.file.ends_with("proj/CLAUDE.md"));
    assert!(w.message.contains("outside/x.md"), "{w}");
    let mut o = fx.opts("proj");
    o.external_imports_approved = true;
    let ctx = load_context(&o);
    assert!(rel(&fx, &ctx).contains(&"outside/x.md".to_string()));
}

/// A gate refusing every path under `secret` (a directory of the fixture), recording what it
/// was asked about.
fn deny_under(secret: PathBuf) -> (ReadGate, std::sync::Arc<std::sync::Mutex<Vec<PathBuf>>>) {
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    let gate = ReadGate::new(move |p: &Path| {
        log.lock().expect("log").push(p.to_path_buf());
        if p.starts_with(&secret) || p.file_name().is_some_and(|n| n == ".env") {
            Err("denied by test rule".into())
        } else {
            Ok(())
        }
    });
    (gate, asked)
}

const SECRET: &str = "TOPSECRET-4242";

/// The refusal warning for `importer`, after checking that no warning and no memory text holds
/// the secret and that no refused file was loaded.
fn refusal<'a>(ctx: &'a Context, importer: &Path, imported: &str) -> &'a Diagnostic {
    for m in &ctx.memory {
        assert!(
            !m.content.contains(SECRET),
            "{}: {}",
            m.path.display(),
            m.content
        );
    }
    assert!(!ctx.memory_text().contains(SECRET));
    for w in &ctx.warnings {
        assert!(!w.to_string().contains(SECRET), "{w}");
    }
    ctx.warnings
        .iter()
        .find(|w| w.file == importer && w.message.contains(imported))
        .unwrap_or_else(|| panic!("no warning for {imported}: {:?}", ctx.warnings))
}

#[test]
fn read_gate_skips_a_denied_direct_import_and_says_why() {
    let fx = Fx::new();
    let env = fx.w("proj/.env", &format!("API_KEY={SECRET}\n"));
    fx.w("proj/secrets/key.txt", SECRET);
    fx.w("proj/ok.md", "fine");
    let claude = fx.w(
        "proj/CLAUDE.md",
        "Intro\n@.env\nSee @./secrets/key.txt and @ok.md\n",
    );
    let mut o = fx.opts("proj");
    let (gate, asked) = deny_under(fx.p("proj/secrets"));
    o.read_gate = Some(gate);
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md", "proj/ok.md"]);
    let w = refusal(&ctx, &claude, &env.display().to_string());
    assert_eq!(w.line, Some(2), "{w}");
    assert!(w.message.contains("@.env"), "{w}");
    assert!(w.message.contains("denied by test rule"), "{w}");
    let w = refusal(
        &ctx,
        &claude,
        &fx.p("proj/secrets/key.txt").display().to_string(),
    );
    assert_eq!(w.line, Some(3), "{w}");
    // Memory files themselves are not gated: only imports are asked about.
    let asked = asked.lock().expect("log").clone();
    assert!(!asked.contains(&claude), "{asked:?}");
    assert!(asked.contains(&fx.p("proj/ok.md")), "{asked:?}");
}

#[test]
fn read_gate_applies_to_nested_imports_and_their_imports_are_not_read() {
    let fx = Fx::new();
    fx.w("proj/CLAUDE.md", "@docs/a.md");
    let a = fx.w("proj/docs/a.md", "level one\n\n@../secrets/b.md\n");
    fx.w("proj/secrets/b.md", &format!("{SECRET} @../docs/c.md"));
    fx.w("proj/docs/c.md", "only reachable through b");
    let mut o = fx.opts("proj");
    let (gate, asked) = deny_under(fx.p("proj/secrets"));
    o.read_gate = Some(gate);
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md", "proj/docs/a.md"]);
    let w = refusal(&ctx, &a, &fx.p("proj/secrets/b.md").display().to_string());
    assert_eq!(w.line, Some(3), "{w}");
    assert!(!asked.lock().expect("log").contains(&fx.p("proj/docs/c.md")));
}

#[cfg(unix)]
#[test]
fn read_gate_sees_through_a_symlink_to_a_denied_file() {
    let fx = Fx::new();
    let key = fx.w("proj/secrets/key.txt", SECRET);
    std::os::unix::fs::symlink(&key, fx.p("proj/innocent.md")).expect("symlink");
    let claude = fx.w("proj/CLAUDE.md", "@innocent.md");
    let mut o = fx.opts("proj");
    o.read_gate = Some(deny_under(fx.p("proj/secrets")).0);
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md"]);
    let w = refusal(
        &ctx,
        &claude,
        &fx.p("proj/innocent.md").display().to_string(),
    );
    assert!(w.message.contains(&key.display().to_string()), "{w}");
}

#[test]
fn read_gate_applies_to_home_imports() {
    let fx = Fx::new();
    fx.w("uhome/.ssh/id_rsa", SECRET);
    let claude = fx.w("proj/CLAUDE.md", "keys: @~/.ssh/id_rsa");
    let mut o = fx.opts("proj");
    o.external_imports_approved = true;
    o.read_gate = Some(deny_under(fx.p("uhome/.ssh")).0);
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md"]);
    let w = refusal(
        &ctx,
        &claude,
        &fx.p("uhome/.ssh/id_rsa").display().to_string(),
    );
    assert!(w.message.contains("@~/.ssh/id_rsa"), "{w}");
    // Without a gate the credential store stays out all the same.
    let mut o = fx.opts("proj");
    o.external_imports_approved = true;
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["proj/CLAUDE.md"]);
    let w = refusal(
        &ctx,
        &claude,
        &fx.p("uhome/.ssh/id_rsa").display().to_string(),
    );
    assert!(w.message.contains("credential store"), "{w}");
}

// ---- 8.3 rules ----

#[test]
fn unconditional_rules_load_at_start_user_before_project() {
    let fx = Fx::new();
    fx.w("whome/rules/u.md", "user rule");
    fx.w("proj/CLAUDE.md", "p");
    fx.w("proj/.claude/rules/b.md", "b");
    fx.w(
        "proj/.claude/rules/sub/a.md",
        "---\ndescription: x\n---\nsub rule",
    );
    fx.w("proj/CLAUDE.local.md", "l");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(
        rel(&fx, &ctx),
        [
            "whome/rules/u.md",
            "proj/CLAUDE.md",
            "proj/.claude/rules/b.md",
            "proj/.claude/rules/sub/a.md",
            "proj/CLAUDE.local.md"
        ]
    );
    assert_eq!(ctx.memory[3].content, "sub rule");
    assert_eq!(ctx.memory[3].kind, MemoryKind::Rule);
}

#[test]
fn conditional_rules_load_when_a_matching_file_is_touched() {
    let fx = Fx::new();
    fx.w(
        "proj/.claude/rules/list.md",
        "---\npaths:\n  - \"docs/**/*.md\"\n---\nlist",
    );
    fx.w(
        "proj/.claude/rules/comma.md",
        "---\npaths: \"lib/**, *.toml\"\n---\ncomma",
    );
    fx.w(
        "proj/.claude/rules/braces.md",
        "---\npaths: src/{a,b}/*.{ts,tsx}\n---\nbraces",
    );
    let mut o = fx.opts("proj");
    o.touched_files = vec![PathBuf::from("src/b/x.tsx")];
    let mut ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["proj/.claude/rules/braces.md"]);
    let m = &ctx.memory[0];
    assert_eq!(m.load_reason, LoadReason::PathGlobMatch);
    assert_eq!(
        m.globs.as_deref(),
        Some(&["src/{a,b}/*.{ts,tsx}".to_string()][..])
    );
    assert!(ctx.touch(&fx.p("proj/src/c/x.ts")).is_empty());
    assert!(ctx.touch(&fx.p("proj/src/a/deep/x.ts")).is_empty());
    assert_eq!(ctx.touch(&fx.p("proj/Cargo.toml")).len(), 1);
    assert_eq!(ctx.touch(&fx.p("proj/docs/x/y.md")).len(), 1);
    assert!(
        ctx.touch(&fx.p("proj/docs/x/z.md")).is_empty(),
        "a rule loads once"
    );
    assert!(ctx.rules.iter().all(|r| r.loaded));
}

#[test]
fn broken_rule_yaml_is_auto_quoted_or_loaded_unconditionally() {
    let fx = Fx::new();
    fx.w(
        "proj/.claude/rules/quoted.md",
        "---\npaths: **/*.rs\n---\nrs",
    );
    fx.w(
        "proj/.claude/rules/hopeless.md",
        "---\n- [unclosed\n---\nalways",
    );
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/.claude/rules/hopeless.md"]);
    assert_eq!(ctx.memory[0].content, "always");
    assert!(ctx.warnings.iter().any(|w| w.file.ends_with("hopeless.md")
        && w.line.is_some()
        && w.message.contains("unconditionally")));
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.file.ends_with("quoted.md") && w.message.contains("auto-quoting"))
    );
    let q = ctx
        .rules
        .iter()
        .find(|r| r.path.ends_with("quoted.md"))
        .expect("rule");
    assert_eq!(q.paths, ["**/*.rs"]);
    assert!(!q.loaded);
}

#[cfg(unix)]
#[test]
fn rules_follow_symlinked_dirs_once() {
    let fx = Fx::new();
    // Inside the project: a link out of it is not followed (see tests/trust.rs).
    fx.w("proj/shared-rules/s.md", "shared");
    std::fs::create_dir_all(fx.p("proj/.claude/rules")).expect("mkdir");
    std::os::unix::fs::symlink(fx.p("proj/shared-rules"), fx.p("proj/.claude/rules/shared"))
        .expect("symlink");
    std::os::unix::fs::symlink(fx.p("proj/.claude/rules"), fx.p("proj/.claude/rules/self"))
        .expect("symlink");
    let ctx = load_context(&fx.opts("proj"));
    assert_eq!(rel(&fx, &ctx), ["proj/.claude/rules/shared/s.md"]);
}

// ---- 6 skills and commands ----

fn plugin(fx: &Fx, name: &str) -> PluginContent {
    let root = fx.p(&format!("plugins/{name}"));
    PluginContent {
        name: name.into(),
        skills_dirs: vec![root.join("skills")],
        commands_dirs: vec![root.join("commands")],
        agents_dirs: vec![root.join("agents")],
        root,
    }
}

#[test]
fn skill_precedence_namespacing_and_listing() {
    let fx = Fx::new();
    fx.w(
        "managed/.claude/skills/deploy/SKILL.md",
        "---\ndescription: managed deploy\n---\n",
    );
    fx.w(
        "whome/skills/deploy/SKILL.md",
        "---\ndescription: user deploy\n---\n",
    );
    fx.w(
        "proj/.claude/skills/deploy/SKILL.md",
        "---\ndescription: project deploy\n---\n",
    );
    fx.w(
        "proj/.claude/skills/lint/SKILL.md",
        "---\nname: Fancy Lint\ndescription: lint it\nwhen_to_use: before commits\n---\n",
    );
    fx.w(
        "proj/.claude/skills/hidden/SKILL.md",
        "---\ndescription: secret\ndisable-model-invocation: yes\n---\n",
    );
    fx.w(
        "proj/.claude/skills/lower/skill.md",
        "# Lower\n\nFirst paragraph\nwraps.\n\nSecond.",
    );
    fx.w(
        "proj/.claude/commands/lint.md",
        "---\ndescription: old lint\n---\n",
    );
    fx.w("proj/.claude/commands/ship.md", "Ship it.");
    fx.w(
        "plugins/one/skills/review/SKILL.md",
        "---\ndescription: one review\n---\n",
    );
    fx.w(
        "plugins/two/skills/review/SKILL.md",
        "---\nname: review\ndescription: two review\n---\n",
    );
    fx.w(
        "plugins/two/commands/ops/run.md",
        "---\ndescription: run ops\n---\n",
    );
    let mut o = fx.opts("proj");
    o.managed_dir = Some(fx.p("managed"));
    o.plugins = vec![plugin(&fx, "one"), plugin(&fx, "two")];
    let ctx = load_context(&o);
    let deploy = ctx
        .skills
        .iter()
        .find(|s| s.name == "deploy")
        .expect("deploy");
    assert_eq!(deploy.description, "managed deploy");
    assert!(has_warning(&ctx, "shadowed"));
    assert!(ctx.skills.iter().any(|s| s.name == "one:review"));
    assert!(ctx.skills.iter().any(|s| s.name == "two:review"));
    let lint = ctx
        .skills
        .iter()
        .find(|s| s.name == "lint")
        .expect("lint by dir name");
    assert_eq!(lint.display_name.as_deref(), Some("Fancy Lint"));
    assert!(
        !ctx.commands.iter().any(|c| c.name == "lint"),
        "skill beats command"
    );
    assert!(ctx.commands.iter().any(|c| c.name == "two:ops:run"));
    let lower = ctx
        .skills
        .iter()
        .find(|s| s.name == "lower")
        .expect("skill.md");
    assert_eq!(lower.description, "First paragraph wraps.");
    assert!(has_warning(&ctx, "not spelled `SKILL.md`"));
    let listing = &ctx.skill_listing;
    assert!(
        listing.contains("- lint: lint it - before commits"),
        "{listing}"
    );
    assert!(listing.contains("- deploy: managed deploy"));
    assert!(listing.contains("- one:review: one review"));
    assert!(listing.contains("- ship: Ship it."));
    assert!(!listing.contains("secret"));
    assert!(matches!(
        ctx.find_skill("review"),
        Err(RenderError::Ambiguous { .. })
    ));
    assert_eq!(
        ctx.find_skill("/run").expect("bare plugin name").name,
        "two:ops:run"
    );
}

#[test]
fn claude_code_user_skills_commands_and_agents_lose_a_clash_with_wardens() {
    let fx = Fx::new();
    let skill = |d: &str| format!("---\ndescription: {d}\n---\nbody {d}");
    fx.w("whome/skills/both/SKILL.md", &skill("warden both"));
    fx.w("cc/skills/both/SKILL.md", &skill("cc both"));
    fx.w("cc/skills/only-cc/SKILL.md", &skill("cc only"));
    fx.w("cc/commands/ccmd.md", &skill("cc command"));
    fx.w(
        "whome/agents/rev.md",
        "---\nname: rev\ndescription: warden rev\n---\nx",
    );
    fx.w(
        "cc/agents/rev.md",
        "---\nname: rev\ndescription: cc rev\n---\nx",
    );
    fx.w(
        "cc/agents/helper.md",
        "---\nname: helper\ndescription: cc helper\n---\nx",
    );
    // A project skill of the same name still loses to both user directories.
    fx.w("proj/.claude/skills/only-cc/SKILL.md", &skill("project"));
    let ctx = load_context(&with_claude_dir(&fx, "proj"));
    let find = |n: &str| ctx.skills.iter().find(|s| s.name == n).expect(n);
    assert_eq!(find("both").path, fx.p("whome/skills/both/SKILL.md"));
    assert_eq!(find("only-cc").path, fx.p("cc/skills/only-cc/SKILL.md"));
    assert_eq!(find("only-cc").source, SkillSource::User);
    assert!(has_warning(&ctx, "`both` is shadowed by"));
    assert!(ctx.commands.iter().any(|c| c.name == "ccmd"));
    let agent = |n: &str| ctx.agents.iter().find(|a| a.name == n).expect(n);
    assert_eq!(agent("rev").description, "warden rev");
    assert_eq!(agent("helper").source, AgentSource::User);
    assert!(has_warning(&ctx, "agent `rev` is shadowed by"));
    let r = &ctx.claude_config;
    assert_eq!(r.skills, ["only-cc"]);
    assert_eq!(r.commands, ["ccmd"]);
    assert_eq!(r.agents, ["helper"]);
    assert_eq!(
        r.dirs,
        [fx.p("cc/skills"), fx.p("cc/commands"), fx.p("cc/agents")]
    );
}

#[test]
fn a_session_in_the_home_directory_reads_claude_codes_directory_once_as_the_users() {
    let fx = Fx::new();
    fx.w("uhome/.claude/CLAUDE.md", "cc memory");
    fx.w(
        "uhome/.claude/skills/s/SKILL.md",
        "---\ndescription: d\n---\nbody",
    );
    fx.w(
        "uhome/.claude/agents/a.md",
        "---\nname: a\ndescription: d\n---\nx",
    );
    let mut o = fx.opts("uhome");
    o.claude_dir = Some(fx.p("uhome/.claude"));
    let ctx = load_context(&o);
    assert_eq!(rel(&fx, &ctx), ["uhome/.claude/CLAUDE.md"]);
    assert_eq!(ctx.memory[0].memory_type, MemoryType::User);
    assert_eq!(ctx.skills.len(), 1);
    assert_eq!(ctx.skills[0].source, SkillSource::User);
    assert_eq!(ctx.agents.len(), 1);
    assert_eq!(ctx.agents[0].source, AgentSource::User);
    assert!(!has_warning(&ctx, "shadowed"), "{:?}", ctx.warnings);
}

#[test]
fn skill_overrides_and_listing_cap() {
    let fx = Fx::new();
    fx.w(
        "proj/.claude/skills/a/SKILL.md",
        &format!("---\ndescription: {}\n---\n", "d".repeat(3000)),
    );
    fx.w(
        "proj/.claude/skills/b/SKILL.md",
        "---\ndescription: bee\n---\n",
    );
    fx.w(
        "proj/.claude/skills/c/SKILL.md",
        "---\ndescription: sea\n---\n",
    );
    let mut o = fx.opts("proj");
    o.settings = settings_with(
        Scope::Project,
        json!({"skillOverrides": {"b": "name-only", "c": "off"}}),
    );
    let ctx = load_context(&o);
    let lines: Vec<&str> = ctx.skill_listing.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].chars().count(), "- a: ".len() + 1536);
    assert_eq!(lines[1], "- b");
}

#[test]
fn nested_skills_are_supporting_files_unless_enabled() {
    let fx = Fx::new();
    fx.w(
        "plugins/z/skills/center/SKILL.md",
        "---\ndescription: parent\n---\n",
    );
    fx.w(
        "plugins/z/skills/center/android/SKILL.md",
        "---\ndescription: child\n---\n",
    );
    fx.w(
        "plugins/z/skills/group/ios/SKILL.md",
        "---\ndescription: grouped\n---\n",
    );
    let mut o = fx.opts("proj");
    o.plugins = vec![plugin(&fx, "z")];
    let ctx = load_context(&o);
    let n: Vec<&str> = ctx.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(n, ["z:center"]);
    assert!(has_warning(&ctx, "one-level scan"));
    o.scan.nested_skills = true;
    let ctx = load_context(&o);
    let n: Vec<&str> = ctx.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(n, ["z:center", "z:center/android", "z:group/ios"]);
}

struct Runner;
impl CommandRunner for Runner {
    fn run(&self, command: &str, cwd: &Path) -> Result<String, String> {
        Ok(format!("ran {command} in {}", cwd.display()))
    }
}

#[test]
fn render_skill_substitutes_and_injects() {
    let fx = Fx::new();
    fx.w(
        "plugins/p/skills/go/SKILL.md",
        "---\narguments: [target, mode]\nallowed-tools: Bash(${CLAUDE_SKILL_DIR}/run.sh:*)\n---\nGo $target ($mode) $0 all=$ARGUMENTS dir=${CLAUDE_SKILL_DIR} root=${CLAUDE_PLUGIN_ROOT} sid=${CLAUDE_SESSION_ID}\nNow: !`date`\n",
    );
    let mut o = fx.opts("proj");
    o.plugins = vec![plugin(&fx, "p")];
    let ctx = load_context(&o);
    let ro = RenderOptions {
        runner: Some(&Runner),
        session_id: Some("abc".into()),
        ..RenderOptions::default()
    };
    let r = ctx.render_skill("p:go", "prod fast", &ro).expect("render");
    let dir = fx.p("plugins/p/skills/go").display().to_string();
    assert!(
        r.content
            .starts_with(&format!("Base directory for this skill: {dir}\n\n"))
    );
    assert!(
        r.content.contains(&format!(
            "Go prod (fast) prod all=prod fast dir={dir} root={} sid=abc",
            fx.p("plugins/p").display()
        )),
        "{}",
        r.content
    );
    assert!(
        r.content
            .contains(&format!("Now: ran date in {}", fx.p("proj").display()))
    );
    assert_eq!(r.allowed_tools, [format!("Bash({dir}/run.sh:*)")]);
    let mut o = fx.opts("proj");
    o.plugins = vec![plugin(&fx, "p")];
    o.settings = settings_with(Scope::User, json!({"disableSkillShellExecution": true}));
    let ctx = load_context(&o);
    let r = ctx.render_skill("go", "", &ro).expect("render");
    assert!(
        r.content
            .contains("Now: [shell command execution disabled by policy]")
    );
    assert!(matches!(
        ctx.render_skill("nope", "", &ro),
        Err(RenderError::NotFound(_))
    ));
}

// ---- 7 subagents ----

#[test]
fn agent_precedence_and_plugin_restrictions() {
    let fx = Fx::new();
    fx.w(
        "managed/.claude/agents/rev.md",
        "---\nname: rev\ndescription: managed\n---\nM",
    );
    fx.w(
        "proj/.claude/agents/rev.md",
        "---\nname: rev\ndescription: project\n---\nP",
    );
    fx.w(
        "proj/.claude/agents/deep/ops.md",
        "---\nname: ops\ndescription: project ops\n---\n",
    );
    fx.w(
        "whome/agents/ops.md",
        "---\nname: ops\ndescription: user ops\n---\n",
    );
    fx.w("whome/agents/README.md", "# Not an agent");
    fx.w(
        "proj/.claude/agents/Bad.md",
        "---\nname: Bad\ndescription: x\n---\n",
    );
    fx.w(
        "plugins/p/agents/review/security.md",
        "---\nname: security\ndescription: sec\nhooks:\n  Stop: []\npermissionMode: bypassPermissions\nmcpServers: [db]\n---\n",
    );
    fx.w(
        "plugins/p/agents/loose.md",
        "---\nname: loose\ndescription: Use this agent. Examples: <example>Context: x\n<example>\nuser: \"hi\"\n</example>\nmodel: sonnet\n---\nbody",
    );
    let mut o = fx.opts("proj");
    o.managed_dir = Some(fx.p("managed"));
    o.plugins = vec![plugin(&fx, "p")];
    o.cli_agents = Some(json!({"ops": {"description": "cli ops", "prompt": "c"}}));
    let ctx = load_context(&o);
    let get = |n: &str| {
        ctx.agents
            .iter()
            .find(|a| a.name == n)
            .unwrap_or_else(|| panic!("agent {n}"))
    };
    assert_eq!(get("rev").description, "managed");
    assert_eq!(get("ops").description, "cli ops");
    let sec = get("p:review:security");
    assert!(sec.hooks.is_none() && sec.mcp_servers.is_none() && sec.permission_mode.is_none());
    assert!(ctx.warnings.iter().any(|w| w.file.ends_with("security.md")
        && w.message.contains("hooks, mcpServers, permissionMode")));
    let loose = get("p:loose");
    assert_eq!(loose.model.as_deref(), Some("sonnet"));
    assert!(loose.description.contains("user: \"hi\""));
    assert!(
        !ctx.agents
            .iter()
            .any(|a| a.name.eq_ignore_ascii_case("bad"))
    );
    assert!(has_warning(&ctx, "no `name`"));
}

// ---- output ----

#[test]
fn context_serializes_and_renders_text() {
    let fx = Fx::new();
    fx.w("proj/CLAUDE.md", "p");
    fx.w("proj/.claude/rules/r.md", "---\npaths: [\"*.rs\"]\n---\nr");
    let ctx = load_context(&fx.opts("proj"));
    let v = serde_json::to_value(&ctx).expect("json");
    assert_eq!(v["memory"][0]["loadReason"], "session_start");
    assert_eq!(v["memory"][0]["memoryType"], "Project");
    assert_eq!(v["rules"][0]["paths"], json!(["*.rs"]));
    let text = ctx.render_text();
    assert!(text.contains("[Project, session_start]"));
    assert!(text.contains("*.rs"));
}

// ---- the published corpus ----

#[test]
fn every_corpus_skill_agent_and_command_loads_without_panic() {
    let corpus = Path::new("/work/shared/corpus");
    if !corpus.is_dir() {
        eprintln!("skipping: {} does not exist", corpus.display());
        return;
    }
    let mut files = Vec::new();
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    walk(corpus, &mut files);
    let mut plugins = Vec::new();
    let (mut skills, mut agents, mut commands, mut lenient, mut failed) = (0, 0, 0, 0, 0);
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let parent = f
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or("");
        let is_skill = name.eq_ignore_ascii_case("skill.md");
        let in_agents = f.components().any(|c| c.as_os_str() == "agents");
        let in_commands = f.components().any(|c| c.as_os_str() == "commands");
        if !(is_skill || in_agents || in_commands) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        match frontmatter::parse(&text, f) {
            Ok(d) => lenient += usize::from(d.lenient),
            Err(e) => {
                failed += 1;
                assert!(e.to_string().contains(&f.display().to_string()));
            }
        }
        if is_skill {
            skills += 1;
            let dir = f.parent().unwrap_or(corpus);
            plugins.push(PluginContent {
                name: format!("s{skills}"),
                root: dir.to_path_buf(),
                skills_dirs: vec![dir.to_path_buf()],
                ..Default::default()
            });
        } else if in_agents && parent == "agents" {
            agents += 1;
            plugins.push(PluginContent {
                name: format!("a{agents}"),
                root: corpus.into(),
                agents_dirs: vec![f.clone()],
                ..Default::default()
            });
        } else if in_commands {
            commands += 1;
            plugins.push(PluginContent {
                name: format!("c{commands}"),
                root: corpus.into(),
                commands_dirs: vec![f.clone()],
                ..Default::default()
            });
        }
    }
    let fx = Fx::new();
    let mut o = fx.opts("proj");
    o.plugins = plugins;
    let ctx = load_context(&o);
    eprintln!(
        "corpus: {skills} skill files, {agents} agents, {commands} commands; {lenient} lenient, {failed} unparsable; loaded {} skills, {} agents, {} commands, {} warnings",
        ctx.skills.len(),
        ctx.agents.len(),
        ctx.commands.len(),
        ctx.warnings.len()
    );
    assert!(skills > 0 && agents > 0 && commands > 0);
    assert_eq!(ctx.agents.len(), agents);
    assert_eq!(ctx.commands.len(), commands);
    assert_eq!(ctx.skills.len(), skills);
    let _ = ctx.render_text();
    for s in ctx.skills.iter().chain(ctx.commands.iter()) {
        let _ = ctx.render_skill(&s.name, "a 'b c' d", &RenderOptions::default());
    }
}

#[test]
fn a_file_outside_the_working_directory_loads_no_path_rules() {
    // The session runs in `proj/app`; rules with `paths` sit at the repository root, in an
    // ancestor directory and in the user's directory. Reading a file outside `proj/app` (in
    // the repository, or elsewhere) loads none of them, as in Claude Code; a file inside
    // does.
    let fx = Fx::new();
    fx.w(
        "proj/.claude/rules/ts.md",
        "---\npaths: \"**/*.ts\"\n---\nroot ts rule",
    );
    fx.w(
        "proj/app/.claude/rules/ts.md",
        "---\npaths: \"**/*.ts\"\n---\napp ts rule",
    );
    fx.w(
        "whome/rules/ts.md",
        "---\npaths: \"**/*.ts\"\n---\nuser ts rule",
    );
    fx.w("proj/lib/x.ts", "");
    fx.w("elsewhere/y.ts", "");
    fx.w("proj/app/z.ts", "");
    let mut ctx = load_context(&fx.opts("proj/app"));
    assert!(ctx.touch(&fx.p("proj/lib/x.ts")).is_empty());
    assert!(ctx.touch(&fx.p("elsewhere/y.ts")).is_empty());
    assert!(ctx.touch(Path::new("../lib/x.ts")).is_empty());
    let new = ctx.touch(&fx.p("proj/app/z.ts"));
    let loaded: Vec<&str> = new.iter().map(|m| m.content.trim()).collect();
    assert_eq!(loaded.len(), 3, "{loaded:?}");
    assert!(loaded.contains(&"root ts rule") && loaded.contains(&"app ts rule"));
}
