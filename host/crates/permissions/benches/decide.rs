//! Decisions per second for 1,000 mixed rules against compound Bash commands and paths.

// criterion's macros generate undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use warden_config::{Scope, Settings, SettingsFile};
use warden_permissions::{Mode, Options, Permissions};

fn rules() -> (Vec<String>, Vec<String>, Vec<String>) {
    let programs = [
        "git", "cargo", "npm", "make", "docker", "kubectl", "python3", "node", "rm", "curl",
    ];
    let (mut allow, mut ask, mut deny) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..1000 {
        let p = programs[i % programs.len()];
        let rule = match i % 10 {
            0..=3 => format!("Bash({p} sub{i} *)"),
            4 => format!("Bash({p}:*)"),
            5 => format!("Read(src/mod{i}/**)"),
            6 => format!("Edit(//var/data/{i}/**)"),
            7 => format!("WebFetch(domain:host{i}.example.com)"),
            8 => format!("Bash(* --flag{i})"),
            _ => format!("mcp__server{i}__tool"),
        };
        match i % 3 {
            0 => allow.push(rule),
            1 => ask.push(rule),
            _ => deny.push(rule),
        }
    }
    (allow, ask, deny)
}

fn engine() -> Permissions {
    let (allow, ask, deny) = rules();
    let v = json!({"permissions": {"allow": allow, "ask": ask, "deny": deny}});
    let f = SettingsFile {
        scope: Scope::Project,
        origin: Default::default(),
        path: Some("/w/p/.claude/settings.json".into()),
        value: v.as_object().cloned().unwrap_or_default(),
    };
    let o = Options {
        cwd: "/w/p".into(),
        home: "/h".into(),
        mode: Some(Mode::Default),
        trusted: true,
        ..Options::default()
    };
    Permissions::from_settings(
        &Settings {
            files: vec![f],
            errors: vec![],
            ..Default::default()
        },
        &o,
    )
    .expect("rules compile")
}

fn inputs() -> Vec<(&'static str, Value)> {
    let cmds = [
        "git status && cargo build --release | tee out.log",
        "npm run sub12 --watch; make all",
        "cd src && ls -la && grep -r foo . | wc -l",
        "FOO=1 timeout 5 cargo test -- --nocapture || echo failed",
        "docker run --rm -it img sh -c 'echo hi' > /dev/null 2>&1",
        "for f in $(ls *.rs); do rustfmt $f; done",
    ];
    let paths = [
        "/w/p/src/mod15/a.rs",
        "/w/p/README.md",
        "/var/data/16/x",
        "/etc/hosts",
    ];
    let mut v: Vec<(&'static str, Value)> = cmds
        .iter()
        .map(|c| ("Bash", json!({ "command": c })))
        .collect();
    for p in paths {
        v.push(("Read", json!({ "file_path": p })));
        v.push(("Edit", json!({ "file_path": p })));
    }
    v.push(("WebFetch", json!({"url": "https://host7.example.com/x"})));
    v.push(("mcp__server9__tool", json!({})));
    v
}

fn report(label: &str, p: &Permissions, inputs: &[(&str, Value)]) {
    let rounds = 20_000 / inputs.len().max(1);
    let start = Instant::now();
    let mut n = 0u64;
    for _ in 0..rounds {
        for (t, i) in inputs {
            black_box(p.decide(t, i, None));
            n += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{label}: {:.0} decisions/s ({n} decisions in {secs:.3}s, one core)",
        n as f64 / secs
    );
}

/// Every command new to the engine, so each decision pays for a parse: `kinds` of the six
/// benchmark commands are cycled through (the first four are plain lines, the last two need
/// the full shell grammar).
fn report_cold(label: &str, p: &Permissions, inputs: &[(&str, Value)], kinds: usize) {
    let fresh: Vec<Value> = (0..6000)
        .map(|i| {
            let (_, v) = &inputs[i % kinds];
            let c = v["command"].as_str().unwrap_or("");
            json!({ "command": format!("{c} && echo {i}") })
        })
        .collect();
    let start = Instant::now();
    for v in &fresh {
        black_box(p.decide("Bash", v, None));
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{label}: {:.0} decisions/s", fresh.len() as f64 / secs);
}

fn bench(c: &mut Criterion) {
    let p = engine();
    let all = inputs();
    let bash: Vec<_> = all.iter().filter(|(t, _)| *t == "Bash").cloned().collect();
    let other: Vec<_> = all.iter().filter(|(t, _)| *t != "Bash").cloned().collect();
    report("mixed (Bash + paths + URLs + MCP)", &p, &all);
    report("compound Bash only", &p, &bash);
    report("paths, URLs, MCP only", &p, &other);
    report_cold(
        "compound Bash, never seen before (parse each)",
        &engine(),
        &all,
        6,
    );
    report_cold(
        "plain compound Bash, never seen before (plain splitter each)",
        &engine(),
        &all,
        4,
    );
    c.bench_function("decide/mixed", |b| {
        b.iter(|| {
            for (t, i) in &all {
                black_box(p.decide(t, i, None));
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
