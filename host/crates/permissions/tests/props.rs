//! Property tests: the matcher never panics, and deny always beats allow.

mod common;

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use warden_permissions::{Access, Decision, HookVerdict, Mode, Permissions, if_filter_matches};

fn engine(allow: &[String], deny: &[String], mode: Mode) -> Permissions {
    engine3(allow, &[], deny, mode)
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::Default),
        Just(Mode::AcceptEdits),
        Just(Mode::Plan),
        Just(Mode::DontAsk),
        Just(Mode::BypassPermissions)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_rules_and_commands_never_panic(rule in ".{0,40}", cmd in ".{0,80}", path in ".{0,40}") {
        let p = engine(std::slice::from_ref(&rule), std::slice::from_ref(&rule), Mode::Default);
        let _ = p.decide("Bash", &json!({"command": cmd}), None);
        let _ = p.decide("Read", &json!({"file_path": path}), None);
        let _ = p.decide("WebFetch", &json!({"url": cmd}), None);
        let _ = p.check_path(Access::Write, std::path::Path::new(&path));
        let _ = p.check_exec(&[cmd.clone(), path.clone()], std::path::Path::new("/w/p"));
        let _ = p.check_url(&cmd);
        let _ = if_filter_matches(&rule, "Bash", &json!({"command": cmd}), std::path::Path::new("/w/p"));
    }

    #[test]
    fn shell_like_commands_never_panic(cmd in r#"[a-z $()`'"|&;<>{}\\*~=\n-]{0,60}"#) {
        let p = engine(&["Bash(a *)".to_string()], &["Bash(b *)".to_string()], Mode::Default);
        let _ = p.decide("Bash", &json!({"command": cmd}), None);
    }

    #[test]
    fn deny_always_beats_allow(
        prog in "[a-z]{1,6}",
        args in "[a-z0-9 ./-]{0,20}",
        sep in prop_oneof![Just(" && "), Just(" | "), Just("; "), Just(" || ")],
        other in "[a-z]{1,6}",
        m in mode(),
        hook in prop_oneof![Just(None), Just(Some(HookVerdict::Decided(Decision::Allow))), Just(Some(HookVerdict::Decided(Decision::Ask))), Just(Some(HookVerdict::Defer))],
    ) {
        let allow = vec![format!("Bash({prog} *)"), format!("Bash({other} *)"), "Bash".to_string(), format!("Read(**)")];
        let deny = vec![format!("Bash({prog} *)"), "Read(//secret/**)".to_string()];
        let p = engine(&allow, &deny, m);
        let cmd = format!("{other} x{sep}{prog} {args}");
        prop_assert_eq!(p.decide("Bash", &json!({"command": cmd}), hook).decision, Decision::Deny);
        prop_assert_eq!(p.decide("Read", &json!({"file_path": "/secret/k"}), hook).decision, Decision::Deny);
        prop_assert_eq!(p.check_path(Access::Write, std::path::Path::new("/secret/k")).decision, Decision::Deny);
    }
}

/// Pieces of command lines near the plain subset: plain words, assignments, reserved words,
/// every operator the plain splitter knows and some it must refuse, and bytes outside it.
fn near_plain_token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-zA-Z0-9_./=:,+%@^-]{1,6}",
        2 => "[A-Z_][A-Z0-9_]{0,3}=[a-z0-9=]{0,3}",
        1 => prop_oneof![Just("if"), Just("do"), Just("done"), Just("time"), Just("in"), Just("fi")].prop_map(str::to_string),
        3 => prop_oneof![Just("&&"), Just("||"), Just("|"), Just(";")].prop_map(str::to_string),
        1 => prop_oneof![Just("&"), Just("|&"), Just(";;"), Just("'q'"), Just("$X"), Just("*"), Just(">f"), Just("#"), Just("~"), Just("\\ ")].prop_map(str::to_string),
    ]
}

fn near_plain_line() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            near_plain_token(),
            prop_oneof![Just(""), Just(" "), Just("  "), Just("\t")],
        ),
        0..10,
    )
    .prop_map(|parts| {
        parts
            .into_iter()
            .map(|(t, sep)| format!("{t}{sep}"))
            .collect()
    })
}

/// Well-formed plain lines: commands of plain words joined by the four plain operators.
fn plain_line() -> impl Strategy<Value = String> {
    let word = "[a-z0-9_./:,+%@^-]{1,6}".prop_filter("not reserved", |w| {
        ![
            "if", "do", "fi", "in", "for", "done", "then", "else", "elif", "case", "esac", "time",
            "while", "until", "select", "function", "coproc",
        ]
        .contains(&w.as_str())
    });
    let command = (
        proptest::collection::vec("[A-Z][A-Z0-9_]{0,3}=[a-z0-9]{0,3}", 0..2),
        proptest::collection::vec(word, 1..5),
    )
        .prop_map(|(a, w)| [a, w].concat().join(" "));
    let op = prop_oneof![
        Just(" && "),
        Just(" || "),
        Just(" | "),
        Just("; "),
        Just("&&"),
        Just("|"),
        Just(";")
    ];
    (
        command.clone(),
        proptest::collection::vec((op, command), 0..4),
        prop_oneof![Just(""), Just(";"), Just(" ")],
    )
        .prop_map(|(head, rest, tail)| {
            let mut s = head;
            for (op, c) in rest {
                s.push_str(op);
                s.push_str(&c);
            }
            s.push_str(tail);
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whatever the plain splitter accepts, the full parser reads identically.
    #[test]
    fn plain_splitter_agrees_with_the_full_parser(text in near_plain_line()) {
        if let Some(plain) = warden_permissions::shell::parse_plain(&text) {
            prop_assert_eq!(Ok(plain), warden_permissions::shell::parse_full(&text), "{:?}", text);
        }
    }

    /// Well-formed plain lines always take the plain splitter, and agree with the full parser.
    #[test]
    fn plain_lines_take_the_plain_splitter(text in plain_line()) {
        let plain = warden_permissions::shell::parse_plain(&text);
        prop_assert!(plain.is_some(), "{:?}", text);
        prop_assert_eq!(plain.ok_or(()), warden_permissions::shell::parse_full(&text).map_err(|_| ()), "{:?}", text);
    }
}

/// How permissive a decision is: a deny rule may only ever move a call down this order.
fn rank(d: Decision) -> u8 {
    match d {
        Decision::Allow => 2,
        Decision::Ask => 1,
        Decision::Deny => 0,
    }
}

fn engine3(allow: &[String], ask: &[String], deny: &[String], mode: Mode) -> Permissions {
    common::engine_with(
        Path::new("/w/p"),
        Path::new("/h"),
        json!({"allow": allow, "ask": ask, "deny": deny}),
        mode,
    )
}

/// Rules of every shape the engine compiles: bare tools, command prefixes and wildcards, path
/// globs anchored every way, domains, MCP servers and tools, and a few that do not compile.
fn any_rule() -> impl Strategy<Value = String> {
    let fixed = prop_oneof![
        Just("Bash"),
        Just("Bash(rm *)"),
        Just("Bash(rm:*)"),
        Just("Bash(git push *)"),
        Just("Bash(git *)"),
        Just("Bash(* --force)"),
        Just("Bash(curl *)"),
        Just("Bash(cat *)"),
        Just("Bash(ls)"),
        Just("Read"),
        Just("Read(./secret/**)"),
        Just("Read(*.env)"),
        Just("Read(//etc/**)"),
        Just("Read(~/.ssh/**)"),
        Just("Read(/src/**)"),
        Just("Edit"),
        Just("Edit(src/**)"),
        Just("Edit(//tmp/**)"),
        Just("Write(*.md)"),
        Just("Grep"),
        Just("WebFetch"),
        Just("WebFetch(domain:example.com)"),
        Just("WebFetch(domain:*.example.com)"),
        Just("mcp__srv"),
        Just("mcp__srv__tool"),
        Just("mcp__other__*"),
        Just("Agent(Explore)"),
        Just("Bash("),
        Just("Read([)"),
    ]
    .prop_map(str::to_string);
    prop_oneof![
        6 => fixed,
        1 => "(Bash|Read|Edit)\\([a-z*/. ]{1,8}\\)",
    ]
}

/// Calls touching the rules above: shell lines with operators, paths in and out of the
/// project, URLs and MCP tools.
fn any_call() -> impl Strategy<Value = (String, serde_json::Value)> {
    let word = prop_oneof![
        Just("rm"),
        Just("/bin/rm"),
        Just("git"),
        Just("push"),
        Just("ls"),
        Just("cat"),
        Just("curl"),
        Just("--force"),
        Just("-rf"),
        Just("secret/k"),
        Just("x.env"),
        Just("echo")
    ];
    let command = proptest::collection::vec(word, 1..4).prop_map(|w| w.join(" "));
    let op = prop_oneof![Just(" && "), Just(" | "), Just("; "), Just(" || ")];
    let line = (
        command.clone(),
        proptest::collection::vec((op, command), 0..3),
    )
        .prop_map(|(head, rest)| {
            rest.into_iter()
                .fold(head, |s, (op, c)| format!("{s}{op}{c}"))
        });
    let path = prop_oneof![
        Just("/w/p/secret/k"),
        Just("secret/k"),
        Just("/w/p/src/main.rs"),
        Just("/w/p/a.env"),
        Just("/etc/passwd"),
        Just("/h/.ssh/id"),
        Just("/tmp/x"),
        Just("README.md"),
        Just("/src/lib.rs"),
        Just("/w/p/./secret/../secret/k")
    ];
    prop_oneof![
        line.prop_map(|c| ("Bash".to_string(), json!({"command": c}))),
        path.clone()
            .prop_map(|p| ("Read".to_string(), json!({"file_path": p}))),
        path.clone().prop_map(|p| (
            "Edit".to_string(),
            json!({"file_path": p, "old_string": "a", "new_string": "b"})
        )),
        path.clone()
            .prop_map(|p| ("Write".to_string(), json!({"file_path": p, "content": "x"}))),
        path.prop_map(|p| ("Grep".to_string(), json!({"pattern": "x", "path": p}))),
        prop_oneof![
            Just("https://example.com/a"),
            Just("https://api.example.com/"),
            Just("http://evil.test/")
        ]
        .prop_map(|u| ("WebFetch".to_string(), json!({"url": u, "prompt": "p"}))),
        prop_oneof![
            Just("mcp__srv__tool"),
            Just("mcp__srv__other"),
            Just("mcp__other__x")
        ]
        .prop_map(|t| (t.to_string(), json!({}))),
        Just((
            "Agent".to_string(),
            json!({"subagent_type": "Explore", "prompt": "p", "description": "d"})
        )),
    ]
}

fn rules() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(any_rule(), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Adding a deny rule never makes any answer more permissive: not the tool-call decision
    /// (whatever the hooks said and whatever the mode), and not the capability checks a
    /// component's file, program and network use goes through.
    #[test]
    fn a_deny_rule_never_loosens_a_decision(
        allow in rules(),
        ask in rules(),
        deny in rules(),
        extra in any_rule(),
        (tool, input) in any_call(),
        m in mode(),
        hook in prop_oneof![Just(None), Just(Some(HookVerdict::Decided(Decision::Allow))), Just(Some(HookVerdict::Decided(Decision::Ask))), Just(Some(HookVerdict::Decided(Decision::Deny))), Just(Some(HookVerdict::Defer))],
    ) {
        let before = engine3(&allow, &ask, &deny, m);
        let mut more = deny.clone();
        more.push(extra.clone());
        let after = engine3(&allow, &ask, &more, m);

        let (b, a) = (before.decide(&tool, &input, hook).decision, after.decide(&tool, &input, hook).decision);
        prop_assert!(rank(a) <= rank(b), "{tool} {input}: {b:?} became {a:?} after deny {extra:?}");

        let path = input.get("file_path").or_else(|| input.get("path")).and_then(|v| v.as_str());
        if let Some(path) = path {
            let path = std::path::Path::new(path);
            for access in [Access::Read, Access::Write] {
                let (b, a) = (before.check_path(access, path).decision, after.check_path(access, path).decision);
                prop_assert!(rank(a) <= rank(b), "{access:?} {}: {b:?} became {a:?} after deny {extra:?}", path.display());
            }
        }
        if let Some(cmd) = input.get("command").and_then(|v| v.as_str()) {
            let argv: Vec<String> = cmd.split_whitespace().take_while(|w| !["&&", "|", ";", "||"].contains(w)).map(str::to_string).collect();
            let cwd = std::path::Path::new("/w/p");
            let (b, a) = (before.check_exec(&argv, cwd).decision, after.check_exec(&argv, cwd).decision);
            prop_assert!(rank(a) <= rank(b), "exec {argv:?}: {b:?} became {a:?} after deny {extra:?}");
        }
        if let Some(url) = input.get("url").and_then(|v| v.as_str()) {
            let (b, a) = (before.check_url(url).decision, after.check_url(url).decision);
            prop_assert!(rank(a) <= rank(b), "url {url}: {b:?} became {a:?} after deny {extra:?}");
        }
    }
}
