//! Context loading on a synthetic monorepo: 10,000 directories, 500 `CLAUDE.md` files and 300
//! rules, with the working directory four levels deep and a few touched files. Goal: ≤ 200 ms.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_main};
use warden_config::Home;
use warden_instructions::{ContextOptions, load_context};

fn write(p: &Path, text: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(p, text).expect("write");
}

/// Builds `a0..a9/b0..b9/c0..c9/d0..d9` (10,000 leaves, 11,110 directories in all).
fn monorepo(root: &Path) -> PathBuf {
    std::fs::create_dir_all(root.join(".git")).expect("git");
    let mut claude = 0;
    let mut leaf = 0;
    for a in 0..10 {
        for b in 0..10 {
            for c in 0..10 {
                for d in 0..10 {
                    let dir = root.join(format!("a{a}/b{b}/c{c}/d{d}"));
                    std::fs::create_dir_all(&dir).expect("mkdir");
                    if leaf % 20 == 0 && claude < 490 {
                        write(
                            &dir.join("CLAUDE.md"),
                            &format!("# Leaf {leaf}\nBuild with `make`. See @notes.md\n"),
                        );
                        write(&dir.join("notes.md"), "notes\n");
                        claude += 1;
                    }
                    leaf += 1;
                }
            }
        }
    }
    let cwd = root.join("a3/b4/c5/d6");
    for (i, anc) in [
        "",
        "a3",
        "a3/b4",
        "a3/b4/c5",
        "a3/b4/c5/d6",
        "a3/b4/c5/d6/src",
        "a3/b4/c5/d6/src/x",
    ]
    .iter()
    .enumerate()
    {
        let d = root.join(anc);
        write(
            &d.join("CLAUDE.md"),
            &format!("level {i}\n<!-- note -->\n@docs/extra.md\n"),
        );
        write(&d.join("docs/extra.md"), "extra\n");
        if i % 2 == 0 {
            write(&d.join("CLAUDE.local.md"), "local\n");
        }
    }
    for r in 0..300 {
        let base = match r % 3 {
            0 => root.to_path_buf(),
            1 => root.join("a3/b4"),
            _ => cwd.join("src"),
        };
        let text = match r % 4 {
            0 => format!("Rule {r}: always.\n"),
            1 => format!(
                "---\npaths:\n  - \"src/{{a,b}}/**/*.{{ts,tsx}}\"\n  - \"pkg{r}/**\"\n---\nRule {r}\n"
            ),
            2 => format!("---\npaths: \"**/*.rs, lib{r}/**\"\n---\nRule {r}\n"),
            _ => format!("---\ndescription: topic {r}\npaths: x/**/*.{{md,mdx}}\n---\nRule {r}\n"),
        };
        write(
            &base.join(format!(".claude/rules/group{}/rule{r}.md", r % 7)),
            &text,
        );
    }
    write(&cwd.join("src/x/main.rs"), "fn main() {}\n");
    cwd
}

fn bench(c: &mut Criterion) {
    let t = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(t.path()).expect("canon");
    let cwd = monorepo(&root);
    let mut opts = ContextOptions::new(&cwd, Home::new(root.join("home")));
    opts.user_home = Some(root.join("home"));
    opts.touched_files = vec![
        PathBuf::from("src/x/main.rs"),
        PathBuf::from("src/a/deep/view.tsx"),
        PathBuf::from("src/x/guide.mdx"),
        root.join("a7/b1/c2/d3/other.rs"),
    ];
    let ctx = load_context(&opts);
    eprintln!(
        "synthetic monorepo: {} memory files loaded, {} rules ({} loaded), {} warnings",
        ctx.memory.len(),
        ctx.rules.len(),
        ctx.rules.iter().filter(|r| r.loaded).count(),
        ctx.warnings.len()
    );
    for w in &ctx.warnings {
        eprintln!("  {w}");
    }
    let mut g = c.benchmark_group("context");
    g.sample_size(20);
    g.bench_function("load_context_monorepo", |b| b.iter(|| load_context(&opts)));
    g.finish();
}

// The macro generates an undocumented function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
