//! Loads every plugin and marketplace of the shared corpus: nothing may panic.

use std::path::{Path, PathBuf};

use warden_plugins::{load_plugin, validate};

fn corpus() -> Option<PathBuf> {
    let p = std::env::var_os("WARDEN_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/shared/corpus"));
    p.is_dir().then_some(p)
}

fn find(dir: &Path, file: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.join(file).is_file() {
                out.push(p.clone());
            }
            find(&p, file, out);
        }
    }
}

#[test]
fn corpus_loads_without_panic() {
    let Some(root) = corpus() else {
        eprintln!("skipping: corpus not found (set WARDEN_CORPUS)");
        return;
    };
    let mut mkts = Vec::new();
    find(&root, ".claude-plugin/marketplace.json", &mut mkts);
    let mut plugins = Vec::new();
    find(&root, ".claude-plugin/plugin.json", &mut plugins);
    let (mut errors, mut warnings) = (0, 0);
    for m in &mkts {
        let r = validate(m);
        errors += r.error_count;
        warnings += r.warning_count;
        if std::env::var_os("WARDEN_CORPUS_VERBOSE").is_some() {
            println!("{r}");
        }
    }
    let (mut ok, mut failed, mut skills, mut agents, mut commands) = (0, 0, 0, 0, 0);
    for p in &plugins {
        match load_plugin(p) {
            Ok(l) => {
                ok += 1;
                skills += l.skills.len();
                agents += l.agents.len();
                commands += l.commands.len();
                let r = validate(p);
                errors += r.error_count;
                warnings += r.warning_count;
                if std::env::var_os("WARDEN_CORPUS_VERBOSE").is_some() && r.has_errors {
                    println!("{r}");
                }
            }
            Err(e) => {
                failed += 1;
                println!("{e}");
            }
        }
    }
    println!(
        "corpus: {} marketplaces, {} plugin.json roots ({ok} loaded, {failed} failed), {skills} skills, {agents} agents, {commands} commands, {errors} errors, {warnings} warnings",
        mkts.len(),
        plugins.len()
    );
    assert!(!mkts.is_empty() && ok > 0);
}
