//! Loads 800 generated, corpus-shaped plugins (manifest, skills, commands, agents, hooks, MCP).
//! Target: all 800 in ≤ 2 s.

use std::path::{Path, PathBuf};
use std::time::Instant;

use criterion::{Criterion, criterion_main};

const PLUGINS: usize = 800;

fn write(p: &Path, s: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(p, s).expect("write");
}

fn generate(root: &Path) -> Vec<PathBuf> {
    (0..PLUGINS)
        .map(|i| {
            let p = root.join(format!("plugin-{i:03}"));
            write(
                &p.join(".claude-plugin/plugin.json"),
                &format!(r#"{{"name":"plugin-{i}","version":"1.0.{i}","description":"Generated plugin {i}","author":{{"name":"Bench"}},"keywords":["a","b"],"userConfig":{{"token":{{"type":"string","title":"Token","description":"API token","sensitive":true}}}}}}"#),
            );
            for s in 0..3 {
                write(&p.join(format!("skills/skill-{s}/SKILL.md")), &format!("---\nname: skill-{s}\ndescription: Skill {s} of plugin {i}. Use when asked.\n---\n# Skill\n\nBody with ${{CLAUDE_PLUGIN_ROOT}}.\n"));
            }
            for c in 0..2 {
                write(&p.join(format!("commands/cmd-{c}.md")), "---\ndescription: A command\nallowed-tools: Bash(git log:*), Read\n---\nRun $ARGUMENTS\n");
            }
            write(&p.join("agents/reviewer.md"), "---\nname: reviewer\ndescription: Reviews code\nmodel: sonnet\n---\nYou review.\n");
            write(&p.join("agents/sub/security.md"), "---\nname: security\ndescription: Security review\ntools: Read, Grep\n---\nCheck.\n");
            write(
                &p.join("hooks/hooks.json"),
                r#"{"description":"d","hooks":{"PreToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"bash ${CLAUDE_PLUGIN_ROOT}/hooks/check.sh","timeout":10}]}],"SessionStart":[{"matcher":"startup|clear|compact","hooks":[{"type":"command","command":"node ${CLAUDE_PLUGIN_ROOT}/hooks/start.js"}]}],"PostToolUse":[{"matcher":"mcp__.*__query","hooks":[{"type":"command","command":"true"}]}]}}"#,
            );
            write(&p.join(".mcp.json"), r#"{"mcpServers":{"api":{"type":"http","url":"https://example.com/mcp"},"local":{"command":"npx","args":["-y","server"]}}}"#);
            p
        })
        .collect()
}

fn load_all(dirs: &[PathBuf]) -> usize {
    dirs.iter()
        .map(|d| {
            warden_plugins::load_plugin(d)
                .map(|p| p.skills.len() + p.agents.len() + p.commands.len())
                .unwrap_or(0)
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tmp");
    let dirs = generate(tmp.path());
    let start = Instant::now();
    let n = load_all(&dirs);
    let once = start.elapsed();
    assert_eq!(n, PLUGINS * 7, "every component found");
    println!("loaded {PLUGINS} plugins ({n} components) in {once:?} (cold, one pass)");
    assert!(
        once.as_secs_f64() <= 2.0,
        "800 plugins must load in ≤ 2 s, took {once:?}"
    );
    let mut g = c.benchmark_group("load");
    g.sample_size(10);
    g.bench_function("800_plugins", |b| b.iter(|| load_all(&dirs)));
    g.bench_function("800_plugins_validate", |b| {
        b.iter(|| {
            dirs.iter()
                .filter(|d| warden_plugins::validate(d).has_errors)
                .count()
        })
    });
    g.finish();
}

mod group {
    //! The criterion group (its generated function has no docs).
    #![allow(missing_docs)]
    criterion::criterion_group!(benches, super::bench);
}
criterion_main!(group::benches);
