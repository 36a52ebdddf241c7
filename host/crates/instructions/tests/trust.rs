//! What a hostile repository cannot put into the model's context: files it links to outside
//! itself, its `.env` files, and imports the user never approved.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::json;
use warden_config::{Home, Scope, Settings, SettingsFile};
use warden_instructions::*;

const SECRET: &str = "PRIVATE-KEY-7c1d9e";

struct Fx {
    _t: tempfile::TempDir,
    root: PathBuf,
}

impl Fx {
    /// `uhome/` is the user's home (holding `.ssh/id_rsa` and `.aws/credentials`), `whome/`
    /// Warden's, `proj/` a git repository.
    fn new() -> Fx {
        let t = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(t.path()).expect("canon");
        std::fs::create_dir_all(root.join("proj/.git")).expect("git");
        let fx = Fx { _t: t, root };
        fx.w("uhome/.ssh/id_rsa", SECRET);
        fx.w("uhome/.aws/credentials", SECRET);
        fx
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
    /// A symlink at `rel` to `target` (absolute).
    fn link(&self, target: &Path, rel: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        symlink(target, &p).expect("symlink");
        p
    }
    fn opts(&self) -> ContextOptions {
        let mut o = ContextOptions::new(self.p("proj"), Home::new(self.p("whome")));
        o.user_home = Some(self.p("uhome"));
        o
    }
}

/// Nothing of the secret reached the context: memory, skills, commands, agents, warnings.
fn assert_no_secret(ctx: &Context) {
    assert!(!ctx.memory_text().contains(SECRET), "{}", ctx.memory_text());
    for s in ctx.skills.iter().chain(&ctx.commands) {
        assert!(!s.body.contains(SECRET), "{}", s.path.display());
        assert!(!s.description.contains(SECRET), "{}", s.path.display());
    }
    for a in &ctx.agents {
        assert!(!a.prompt.contains(SECRET), "{}", a.name);
    }
    for w in &ctx.warnings {
        assert!(!w.to_string().contains(SECRET), "{w}");
    }
}

/// The warning about `file`, which must name it.
fn warning_about<'a>(ctx: &'a Context, file: &Path) -> &'a Diagnostic {
    ctx.warnings
        .iter()
        .find(|w| w.file == file)
        .unwrap_or_else(|| panic!("no warning names {}: {:?}", file.display(), ctx.warnings))
}

#[test]
fn memory_rules_skills_commands_and_agents_linking_out_of_the_project_are_not_read() {
    let fx = Fx::new();
    let key = fx.p("uhome/.ssh/id_rsa");
    let aws = fx.p("uhome/.aws/credentials");
    let elsewhere = fx.w("elsewhere/notes.md", SECRET);
    let linked = [
        fx.link(&key, "proj/CLAUDE.md"),
        fx.link(&aws, "proj/.claude/CLAUDE.md"),
        fx.link(&key, "proj/CLAUDE.local.md"),
        fx.link(&elsewhere, "proj/.claude/rules/style.md"),
        fx.link(&key, "proj/.claude/commands/deploy.md"),
        fx.link(&key, "proj/.claude/skills/keys/SKILL.md"),
        fx.link(&aws, "proj/.claude/agents/helper.md"),
    ];
    // A directory link out of the project is no better than a file link.
    fx.link(&fx.p("uhome/.ssh"), "proj/.claude/rules/ssh");
    fx.link(&fx.p("elsewhere"), "proj/sub/.claude/commands");
    let ctx = load_context(&fx.opts());
    assert_no_secret(&ctx);
    assert!(ctx.memory.is_empty(), "{:?}", ctx.memory);
    assert!(ctx.skills.is_empty() && ctx.commands.is_empty() && ctx.agents.is_empty());
    for f in &linked {
        let w = warning_about(&ctx, f);
        assert!(w.message.contains("outside the project"), "{w}");
    }
}

#[test]
fn links_within_the_project_are_still_followed() {
    let fx = Fx::new();
    fx.w("proj/docs/guide.md", "the guide");
    fx.link(&fx.p("proj/docs/guide.md"), "proj/CLAUDE.md");
    fx.w("proj/shared/rules/r.md", "a rule");
    fx.link(&fx.p("proj/shared/rules"), "proj/.claude/rules/shared");
    let ctx = load_context(&fx.opts());
    let texts: Vec<&str> = ctx.memory.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["the guide", "a rule"], "{:?}", ctx.warnings);
}

#[test]
fn user_memory_may_link_outside_its_directory_but_never_into_credentials() {
    let fx = Fx::new();
    fx.w("dotfiles/CLAUDE.md", "my global notes");
    fx.link(&fx.p("dotfiles/CLAUDE.md"), "whome/CLAUDE.md");
    let rule = fx.link(&fx.p("uhome/.ssh/id_rsa"), "whome/rules/keys.md");
    let skill = fx.link(&fx.p("uhome/.aws/credentials"), "whome/skills/aws/SKILL.md");
    let ctx = load_context(&fx.opts());
    assert_no_secret(&ctx);
    let texts: Vec<&str> = ctx.memory.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["my global notes"]);
    assert!(ctx.skills.is_empty());
    for f in [&rule, &skill] {
        let w = warning_about(&ctx, f);
        assert!(w.message.contains("credential"), "{w}");
    }
}

#[test]
fn env_files_are_not_imported_without_any_read_rule() {
    let fx = Fx::new();
    fx.w("proj/.env", &format!("API_KEY={SECRET}\n"));
    fx.w("proj/config/.env.production", &format!("DB={SECRET}\n"));
    fx.w("proj/ok.md", "fine");
    let claude = fx.w(
        "proj/CLAUDE.md",
        "Intro\n@.env\nand @config/.env.production and @ok.md\n",
    );
    // No read gate at all: the default protection holds by itself.
    let ctx = load_context(&fx.opts());
    assert_no_secret(&ctx);
    let paths: Vec<&Path> = ctx.memory.iter().map(|m| m.path.as_path()).collect();
    assert_eq!(paths, [claude.as_path(), fx.p("proj/ok.md").as_path()]);
    for (line, name) in [(2, "@.env"), (3, "@config/.env.production")] {
        let w = ctx
            .warnings
            .iter()
            .find(|w| w.file == claude && w.message.contains(name))
            .unwrap_or_else(|| panic!("no warning for {name}: {:?}", ctx.warnings));
        assert_eq!(w.line, Some(line), "{w}");
    }
}

#[test]
fn an_import_linking_out_of_the_project_is_refused_even_when_external_imports_are_approved() {
    let fx = Fx::new();
    fx.w("elsewhere/notes.md", SECRET);
    fx.link(&fx.p("elsewhere/notes.md"), "proj/docs/notes.md");
    fx.w("shared/team.md", "team notes");
    let claude = fx.w("proj/CLAUDE.md", "@docs/notes.md\n@../shared/team.md\n");
    let mut o = fx.opts();
    o.external_imports_approved = true;
    let ctx = load_context(&o);
    assert_no_secret(&ctx);
    let texts: Vec<&str> = ctx.memory.iter().map(|m| m.content.as_str()).collect();
    // An import written as outside the project is what the approval is for.
    assert_eq!(
        texts,
        ["@docs/notes.md\n@../shared/team.md\n", "team notes"]
    );
    let w = ctx
        .warnings
        .iter()
        .find(|w| w.file == claude && w.message.contains("@docs/notes.md"))
        .unwrap_or_else(|| panic!("no warning: {:?}", ctx.warnings));
    assert_eq!(w.line, Some(1));
    assert!(w.message.contains("outside the project"), "{w}");
}

#[test]
fn credential_stores_are_never_imported() {
    let fx = Fx::new();
    let claude = fx.w("proj/CLAUDE.md", "@~/.ssh/id_rsa\n@~/.aws/credentials\n");
    let mut o = fx.opts();
    o.external_imports_approved = true;
    let ctx = load_context(&o);
    assert_no_secret(&ctx);
    assert_eq!(ctx.memory.len(), 1);
    assert_eq!(
        ctx.warnings.iter().filter(|w| w.file == claude).count(),
        2,
        "{:?}",
        ctx.warnings
    );
}

#[test]
fn a_repositorys_settings_cannot_approve_external_imports() {
    let fx = Fx::new();
    fx.w("outside.md", SECRET);
    fx.w("proj/CLAUDE.md", "@../outside.md");
    for scope in [Scope::Project, Scope::Local] {
        let mut o = fx.opts();
        o.settings = Settings {
            files: vec![SettingsFile {
                scope,
                origin: Default::default(),
                path: Some(fx.p("proj/.claude/settings.json")),
                value: json!({"hasClaudeMdExternalIncludesApproved": true})
                    .as_object()
                    .cloned()
                    .expect("object"),
            }],
            ..Default::default()
        };
        let ctx = load_context(&o);
        assert_no_secret(&ctx);
        assert_eq!(ctx.memory.len(), 1, "{scope}");
    }
}
