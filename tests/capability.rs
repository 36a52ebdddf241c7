//! Permissions enforced at the capability boundary: the built-in tools run as components, and
//! the user's rules hold wherever a guest touches files, programs or the network, however the
//! access is spelled. Each call runs as a session runs a call that was already allowed
//! ([`Session::execute_approved`]), so what is checked here is the boundary alone.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden::runtime::{
    CallContext, DigestPin, FsGrant, Grant, Limits, Runtime, RuntimeConfig, ToolCallOutcome, World,
};
use warden::session::{Session, SessionOptions};
use warden::tools::BuiltinTool;
use warden_config::Home;
use warden_permissions::Decision;

const SECRET: &str = "SECRET_TOKEN=hunter2";

/// One compile cache for every test's session, so each component is compiled once per run.
fn cache_dir() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| tempfile::tempdir().expect("cache dir"))
        .path()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio")
        .block_on(f)
}

/// A project with `.claude/settings.json` holding `deny`, a secret `.env`, a symlink to it, a
/// subdirectory and a file next to (outside) the project.
struct Project {
    _root: tempfile::TempDir,
    dir: PathBuf,
    outside: PathBuf,
    session: Arc<Session>,
}

fn project(deny: &[&str]) -> Project {
    let root = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(root.path()).expect("canonical tempdir");
    let dir = base.join("proj");
    let home = base.join("home");
    for d in [dir.join(".claude"), dir.join("sub"), home.clone()] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(
        dir.join(".claude/settings.json"),
        json!({"permissions": {"deny": deny}}).to_string(),
    )
    .expect("settings");
    std::fs::write(dir.join(".env"), format!("{SECRET}\n")).expect(".env");
    std::fs::write(dir.join("README.md"), "alpha\nbeta\ngamma\n").expect("readme");
    std::os::unix::fs::symlink(".env", dir.join("link")).expect("symlink");
    let outside = base.join("outside.txt");
    std::fs::write(&outside, "outside the project\n").expect("outside");
    std::os::unix::fs::symlink(&outside, dir.join("out-link")).expect("symlink out");
    let mut opts = SessionOptions::new(&dir, Home::new(home.clone()));
    opts.user_home = Some(home);
    opts.managed_dir = None;
    opts.claude_config = warden_config::ClaudeConfig::default();
    opts.runtime.cache_dir = Some(cache_dir().to_path_buf());
    opts.runtime.pooling = false;
    let session = Arc::new(Session::load(&opts));
    Project {
        _root: root,
        dir,
        outside,
        session,
    }
}

impl Project {
    /// Runs `tool` as the session runs a call that was allowed: the rules' asks are let
    /// through, their denies hold at every capability use.
    fn run(&self, tool: &str, input: Value) -> ToolCallOutcome {
        let tool = self.session.tools().get(tool).expect("a built-in tool");
        block_on(self.session.execute_approved(tool, &input))
            .expect("session")
            .expect("tool call")
    }

    fn bash(&self, command: &str) -> ToolCallOutcome {
        self.run("Bash", json!({ "command": command, "timeout": 10_000 }))
    }
}

#[track_caller]
fn assert_denied(outcome: &ToolCallOutcome, what: &str, naming: &str) {
    match outcome {
        ToolCallOutcome::Denied(m) => {
            assert!(
                m.contains(naming),
                "{what}: denial should name `{naming}`: {m}"
            );
            assert!(!m.contains("hunter2"), "{what}: secret leaked into {m}");
        }
        other => panic!("{what}: expected a denial, got {other:?}"),
    }
}

#[track_caller]
fn content(outcome: ToolCallOutcome, what: &str) -> String {
    match outcome {
        ToolCallOutcome::Ok { content, .. } => content,
        other => panic!("{what}: expected success, got {other:?}"),
    }
}

#[test]
fn read_deny_holds_for_every_spelling_of_the_path() {
    let p = project(&["Read(./.env)"]);
    let abs = p.dir.join(".env").display().to_string();
    for path in [".env", abs.as_str(), "sub/../.env", "link", "./sub/../link"] {
        let out = p.run("Read", json!({ "file_path": path }));
        assert_denied(&out, &format!("Read {path}"), "Read(./.env)");
    }
    // The rule is about .env only: the Read tool itself works, lines numbered as Claude
    // Code numbers them.
    let text = content(
        p.run(
            "Read",
            json!({"file_path": "README.md", "offset": 2, "limit": 1}),
        ),
        "Read README",
    );
    assert_eq!(text, "2\tbeta");
}

#[test]
fn read_deny_holds_for_programs_the_bash_tool_runs() {
    let p = project(&["Read(./.env)"]);
    let abs = p.dir.join(".env").display().to_string();
    let commands = [
        "cat .env".to_string(),
        format!("cat {abs}"),
        "cat sub/../.env".to_string(),
        "cat link".to_string(),
        "/bin/cat .env".to_string(),
        "head -n1 < .env".to_string(),
        "echo x | /bin/cat - .env".to_string(),
        "cd sub && cat ../.env".to_string(),
    ];
    for c in &commands {
        assert_denied(&p.bash(c), c, "Read(./.env)");
    }
    // The Grep and Glob tools skip the file rather than leak it.
    let grep = content(
        p.run(
            "Grep",
            json!({"pattern": "hunter2", "output_mode": "content"}),
        ),
        "Grep",
    );
    assert!(!grep.contains("hunter2"), "Grep leaked the secret: {grep}");
    let out = content(p.bash("cat README.md | wc -l"), "pipe");
    assert_eq!(out.trim(), "3");
}

const TEXT_BASH_C: Decision = Decision::Deny;

/// Where the capability boundary catches what the text-level decision lets through. Each row:
/// the command, warden-permissions' text-level verdict, and whether the Bash tool is denied.
#[test]
fn the_capability_boundary_catches_what_the_text_misses() {
    let p = project(&["Read(./.env)", "Bash(git push *)"]);
    let perms = p.session.rules().expect("permissions");
    let rows = [
        // Claude Code checks a symlink's target too (spec 2.4), so the text level sees this one.
        ("cat link", Decision::Deny),
        ("sh -c 'cat .env'", Decision::Ask),
        ("python3 -c 'print(open(\".env\").read())'", Decision::Ask),
        ("find . -name .env -exec cat {} ;", Decision::Ask),
    ];
    for (command, text) in rows {
        let d = perms.decide("Bash", &json!({ "command": command }), None);
        assert_eq!(
            d.decision, text,
            "text-level answer for `{command}`: {}",
            d.reason
        );
        match p.bash(command) {
            ToolCallOutcome::Denied(m) => assert!(!m.contains("hunter2"), "{m}"),
            other => panic!("`{command}` should be denied at the boundary, got {other:?}"),
        }
    }
    // The Read tool on a symlink: both levels resolve `link` to `.env` (spec 2.4).
    let d = perms.decide("Read", &json!({ "file_path": p.dir.join("link") }), None);
    assert_eq!(d.decision, Decision::Deny, "{}", d.reason);
    assert_denied(
        &p.run("Read", json!({"file_path": "link"})),
        "Read link",
        "Read(./.env)",
    );
}

#[test]
fn bash_deny_holds_for_every_spelling_of_the_program() {
    let p = project(&["Bash(git push *)"]);
    let perms = p.session.rules().expect("permissions");
    // (command, Claude Code's text-level answer per spec 2.3, warden-permissions' answer)
    // The engine deliberately strips git's global options and program paths (see its
    // `strip_git_globals`) and checks the code of `bash -c` against deny rules, so it is
    // stricter than Claude Code there. The capability boundary denies all of them.
    let cases = [
        ("git push origin main", Decision::Deny, Decision::Deny),
        ("git -C . push", Decision::Ask, Decision::Deny),
        ("/usr/bin/git push", Decision::Ask, Decision::Deny),
        ("bash -c 'git push'", Decision::Ask, TEXT_BASH_C),
    ];
    for (command, claude_code, engine) in cases {
        let text = perms.decide("Bash", &json!({ "command": command }), None);
        assert_eq!(
            text.decision, engine,
            "text-level answer for `{command}` (Claude Code: {claude_code:?}): {}",
            text.reason
        );
        assert_denied(&p.bash(command), command, "Bash(git push *)");
    }
    // Other git commands still run.
    let out = content(p.bash("git --version"), "git --version");
    assert!(out.starts_with("git version"), "{out}");
}

#[test]
fn paths_outside_the_granted_directory_are_refused() {
    let p = project(&[]);
    let outside = p.outside.display().to_string();
    for path in [
        "../outside.txt",
        outside.as_str(),
        "sub/../../outside.txt",
        "out-link",
        "/etc/hostname",
    ] {
        let out = p.run("Read", json!({ "file_path": path }));
        match &out {
            ToolCallOutcome::Denied(m) => assert!(
                m.contains("outside") || m.contains("granted"),
                "Read {path}: {m}"
            ),
            other => panic!("Read {path}: expected a denial, got {other:?}"),
        }
    }
    let out = p.run(
        "Write",
        json!({"file_path": "../escape.txt", "content": "x"}),
    );
    assert!(matches!(out, ToolCallOutcome::Denied(_)), "{out:?}");
    assert!(!p.dir.parent().expect("parent").join("escape.txt").exists());
    // Redirections are writes through the same capability.
    let out = p.bash("echo x > ../escape.txt");
    assert!(matches!(out, ToolCallOutcome::Denied(_)), "{out:?}");
    assert!(!p.dir.parent().expect("parent").join("escape.txt").exists());
}

#[test]
fn writing_needs_a_write_grant_and_obeys_read_denies() {
    let p = project(&["Read(./.env)"]);
    let rt = Runtime::new(RuntimeConfig {
        pooling: false,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let grant = Grant {
        fs: vec![FsGrant {
            path: p.dir.clone(),
            write: false,
        }],
        ..Grant::default()
    };
    let write = rt
        .load(
            "Write",
            BuiltinTool::Write.wasm(),
            World::Tool,
            &grant,
            DigestPin::Sha256(BuiltinTool::Write.sha256()),
        )
        .expect("load Write");
    let input = json!({"file_path": "new.txt", "content": "data"}).to_string();
    let call = block_on(rt.call_tool(
        &write,
        &input,
        &Limits::default(),
        CallContext::new(&p.dir, &grant),
    ))
    .expect("call");
    assert_denied(&call.outcome, "write without grant", "read-only");
    assert!(!p.dir.join("new.txt").exists());

    // With the session grant, Write and Edit work, but a Read deny also blocks writing.
    let out = p.run(
        "Write",
        json!({"file_path": "sub/new.txt", "content": "one two two"}),
    );
    assert!(content(out, "Write").contains("File created successfully"));
    let out = p.run("Edit", json!({"file_path": "sub/new.txt", "old_string": "two", "new_string": "2", "replace_all": true}));
    content(out, "Edit");
    assert_eq!(
        std::fs::read_to_string(p.dir.join("sub/new.txt")).expect("read"),
        "one 2 2"
    );
    for path in [".env", "link"] {
        let out = p.run(
            "Write",
            json!({"file_path": path, "content": "overwritten"}),
        );
        assert_denied(&out, &format!("Write {path}"), "Read(./.env)");
    }
    assert_denied(
        &p.bash("echo overwritten > .env"),
        "redirect to .env",
        "Read(./.env)",
    );
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".env")).expect("read"),
        format!("{SECRET}\n")
    );
}

#[test]
fn programs_outside_the_grant_are_refused() {
    let p = project(&[]);
    // `id` exists on every Unix but is not in the Bash tool's grant.
    assert_denied(&p.bash("id"), "id", "not a granted program");
    assert_denied(
        &p.bash("/usr/bin/id"),
        "/usr/bin/id",
        "not a granted program",
    );
    // A planted link cannot borrow a granted name.
    std::os::unix::fs::symlink("/usr/bin/id", p.dir.join("git")).expect("symlink");
    assert_denied(&p.bash("./git"), "./git -> id", "not a granted program");
}

#[test]
fn a_hung_program_is_killed_with_its_process_group_at_the_deadline() {
    let p = project(&[]);
    let marker = "41.7293";
    let started = Instant::now();
    let out = p.run(
        "Bash",
        json!({"command": format!("sh -c 'sleep {marker} & sleep {marker}'"), "timeout": 700}),
    );
    let elapsed = started.elapsed();
    match &out {
        ToolCallOutcome::Failed(m) => assert!(m.contains("timed out"), "{m}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    // Neither the program nor its background child survives.
    std::thread::sleep(Duration::from_millis(200));
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker) && c.starts_with("sleep"))
        .collect();
    assert!(survivors.is_empty(), "still running: {survivors:?}");
}

/// A one-request HTTP server on 127.0.0.1.
fn serve_once(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        while let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn fetch(grant_net: &[&str], url: &str) -> ToolCallOutcome {
    let rt = Runtime::new(RuntimeConfig {
        pooling: false,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let grant = Grant {
        net: grant_net.iter().map(|s| s.to_string()).collect(),
        ..Grant::default()
    };
    let wasm = std::fs::read(warden_test_artifacts::USES_HTTP).expect("uses_http.wasm");
    let c = rt
        .load(
            "uses_http",
            &wasm,
            World::Tool,
            &grant,
            DigestPin::Unchecked,
        )
        .expect("load");
    let input = json!({ "url": url }).to_string();
    block_on(rt.call_tool(
        &c,
        &input,
        &Limits::with_deadline(Duration::from_secs(20)),
        CallContext::new("/", &grant),
    ))
    .expect("call")
    .outcome
}

#[test]
fn http_to_local_addresses_needs_a_grant_naming_them() {
    let port = serve_once("hello from loopback");
    let url = format!("http://127.0.0.1:{port}/");
    // Not granted at all.
    assert_denied(
        &fetch(&["https://example.com"], &url),
        "ungranted host",
        "not granted",
    );
    // Granted only through wildcards: the resolved address is loopback, so it is refused.
    assert_denied(
        &fetch(&["http://*.*.*.*:*"], &url),
        "wildcard grant",
        "local or private",
    );
    assert_denied(
        &fetch(&["http://*:*"], &format!("http://localhost:{port}/")),
        "localhost via wildcard",
        "local or private",
    );
    assert_denied(
        &fetch(
            &["http://*.*.*.*:*"],
            "http://169.254.169.254/latest/meta-data/",
        ),
        "cloud metadata",
        "local or private",
    );
    // Named explicitly: it works, against a real server.
    let out = content(fetch(&["http://127.0.0.1:*"], &url), "explicit grant");
    assert_eq!(out, "200 hello from loopback");
    // Other schemes are not HTTP.
    match fetch(&["http://127.0.0.1:*"], "file:///etc/passwd") {
        ToolCallOutcome::Failed(m) => assert!(m.contains("InvalidUrl"), "{m}"),
        other => panic!("file URL: {other:?}"),
    }
}

#[test]
fn the_cli_runs_a_tool_and_reports_a_denial() {
    let p = project(&["Read(./.env)"]);
    let bin = Path::new(env!("CARGO_BIN_EXE_warden"));
    let run = |input: Value| {
        std::process::Command::new(bin)
            .args(["tool", "Read", "--input", &input.to_string(), "--cwd"])
            .arg(&p.dir)
            .env("WARDEN_HOME", p.dir.join("../home"))
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .output()
            .expect("run warden")
    };
    let ok = run(json!({"file_path": "README.md"}));
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&ok.stdout),
        "1\talpha\n2\tbeta\n3\tgamma\n4\t\n"
    );
    let denied = run(json!({"file_path": ".env"}));
    assert_eq!(denied.status.code(), Some(2));
    let err = String::from_utf8_lossy(&denied.stderr);
    assert!(
        err.contains("Read(./.env)") && !err.contains("hunter2"),
        "{err}"
    );
}

/// A path checked and then swapped for a symlink to a denied file before the open: the open
/// goes component by component without following links, so the swap fails the call instead
/// of reading the secret. Racing a flipper thread, every outcome must be free of the secret.
#[test]
fn a_symlink_swapped_in_after_the_check_is_never_followed() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let p = project(&["Read(./.env)"]);
    let target = p.dir.join("flip");
    std::fs::write(&target, "plain text\n").expect("flip");
    let stop = Arc::new(AtomicBool::new(false));
    let flips = Arc::new(AtomicU64::new(0));
    let flipper = {
        let (dir, stop, flips) = (p.dir.clone(), stop.clone(), flips.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::write(dir.join("flip.plain"), "plain text\n");
                let _ = std::fs::rename(dir.join("flip.plain"), dir.join("flip"));
                let _ = std::os::unix::fs::symlink(".env", dir.join("flip.link"));
                let _ = std::fs::rename(dir.join("flip.link"), dir.join("flip"));
                flips.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // At least 300 reads, and more while the flipper has hardly run: on a loaded machine (the
    // other tests compiling components) it can be starved for the length of 300 fast calls.
    let give_up = Instant::now() + Duration::from_secs(60);
    let (mut read, mut refused) = (0, 0);
    while read + refused < 300 || (flips.load(Ordering::Relaxed) <= 100 && Instant::now() < give_up)
    {
        match p.run("Read", json!({ "file_path": "flip" })) {
            ToolCallOutcome::Ok { content, .. } => {
                assert!(!content.contains("hunter2"), "the swap leaked: {content}");
                read += 1;
            }
            ToolCallOutcome::Denied(m) | ToolCallOutcome::Failed(m) => {
                assert!(!m.contains("hunter2"), "the swap leaked: {m}");
                refused += 1;
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().expect("flipper");
    let flips = flips.load(Ordering::Relaxed);
    assert!(flips > 100, "the race never ran ({flips} flips)");
    // Both sides of the race were seen, or the test proved nothing.
    assert!(read > 0 && refused > 0, "read {read}, refused {refused}");
}

/// A hard link is the file it links to: the Read, Write and Edit tools refuse another name of
/// a file the rules deny, and the denied file is left as it was.
#[test]
fn a_hard_link_to_a_denied_file_is_that_file() {
    let p = project(&["Read(./.env)"]);
    std::fs::hard_link(p.dir.join(".env"), p.dir.join("sub/hl")).expect("hard link");
    assert_denied(
        &p.run("Read", json!({ "file_path": "sub/hl" })),
        "Read of a hard link",
        ".env",
    );
    assert_denied(
        &p.run("Write", json!({ "file_path": "sub/hl", "content": "gone" })),
        "Write to a hard link",
        ".env",
    );
    let edit = p.run(
        "Edit",
        json!({ "file_path": "sub/hl", "old_string": "hunter2", "new_string": "x" }),
    );
    assert!(
        matches!(&edit, ToolCallOutcome::Denied(m) if !m.contains("hunter2")),
        "Edit of a hard link: {edit:?}"
    );
    let env = std::fs::read_to_string(p.dir.join(".env")).expect(".env");
    assert_eq!(env, format!("{SECRET}\n"));
    // An ordinary file with two names is just a file.
    std::fs::hard_link(p.dir.join("README.md"), p.dir.join("sub/readme2")).expect("link");
    let text = content(p.run("Read", json!({ "file_path": "sub/readme2" })), "Read");
    assert!(text.contains("alpha"), "{text}");
}

#[test]
fn a_hard_link_to_a_file_whose_editing_is_denied_cannot_be_written() {
    let p = project(&["Edit(./.git/**)"]);
    std::fs::create_dir_all(p.dir.join(".git")).expect("mkdir");
    std::fs::write(p.dir.join(".git/config"), "[core]\n").expect("config");
    std::fs::hard_link(p.dir.join(".git/config"), p.dir.join("sub/cfg")).expect("hard link");
    let out = p.run(
        "Write",
        json!({ "file_path": "sub/cfg", "content": "[core]\nfsmonitor = evil\n" }),
    );
    assert_denied(&out, "Write to a hard link of .git/config", ".git/config");
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".git/config")).expect("config"),
        "[core]\n"
    );
    // Reading it is not what the rule takes away.
    let text = content(p.run("Read", json!({ "file_path": "sub/cfg" })), "Read");
    assert!(text.contains("[core]"), "{text}");
}

/// A project whose rules deny three files, each beside an allowed twin at the same depth, for
/// the spelling property below.
fn spelling_project() -> &'static Project {
    static P: OnceLock<Project> = OnceLock::new();
    P.get_or_init(|| {
        let p = project(&["Read(./.env)", "Read(./secret/**)", "Read(**/token)"]);
        for d in ["secret", "public", "deep/a/b"] {
            std::fs::create_dir_all(p.dir.join(d)).expect("mkdir");
        }
        for (denied, allowed) in SPELLING_PAIRS {
            if *denied != ".env" {
                std::fs::write(p.dir.join(denied), format!("{SECRET}\n")).expect("secret");
            }
            std::fs::write(p.dir.join(allowed), "visible\n").expect("twin");
        }
        p
    })
}

/// Denied files (by the three rules) and allowed twins spelled the same way.
const SPELLING_PAIRS: &[(&str, &str)] = &[
    (".env", "visible.txt"),
    ("secret/key.pem", "public/key.pem"),
    ("deep/a/b/token", "deep/a/b/notes"),
];

/// One way of spelling a path that names the same file.
#[derive(Debug, Clone)]
enum Spelling {
    /// Components joined by these separators (`/`, `//`, `/./`, `/sub/../`), after a prefix
    /// (`""`, `./`, the absolute project path, or it with a doubled slash).
    Lexical { prefix: u8, seps: Vec<u8> },
    /// Through a new symlink to the file itself.
    LinkToFile,
    /// Through a new symlink to the file's directory.
    LinkToDir,
    /// A new hard link to the file, elsewhere in the project.
    HardLink,
}

fn spelling() -> impl proptest::strategy::Strategy<Value = Spelling> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0u8..4, proptest::collection::vec(0u8..4, 3))
            .prop_map(|(prefix, seps)| Spelling::Lexical { prefix, seps }),
        1 => Just(Spelling::LinkToFile),
        1 => Just(Spelling::LinkToDir),
        1 => Just(Spelling::HardLink),
    ]
}

/// Spells `rel` (a file below the project) as `how` says, making the links it needs.
fn spell(p: &Project, rel: &str, how: &Spelling) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let target = p.dir.join(rel);
    match how {
        Spelling::Lexical { prefix, seps } => {
            let mut s = match prefix {
                0 => String::new(),
                1 => "./".to_string(),
                2 => format!("{}/", p.dir.display()),
                _ => format!("{}//", p.dir.display()),
            };
            let parts: Vec<&str> = rel.split('/').collect();
            for (i, part) in parts.iter().enumerate() {
                s.push_str(part);
                if i + 1 < parts.len() {
                    s.push_str(match seps.get(i).copied().unwrap_or(0) {
                        0 => "/",
                        1 => "//",
                        2 => "/./",
                        _ => "/../",
                    });
                    if seps.get(i).copied().unwrap_or(0) >= 3 {
                        // Up and back down into the same directory.
                        s.push_str(part);
                        s.push('/');
                    }
                }
            }
            s
        }
        Spelling::LinkToFile => {
            // Relative targets: the boundary refuses absolute ones whatever they name.
            let link = format!("sub/file-link-{n}");
            std::os::unix::fs::symlink(format!("../{rel}"), p.dir.join(&link)).expect("symlink");
            link
        }
        Spelling::LinkToDir => {
            let link = format!("dir-link-{n}");
            let parent = match rel.rsplit_once('/') {
                Some((dir, _)) => dir,
                None => ".",
            };
            std::os::unix::fs::symlink(parent, p.dir.join(&link)).expect("symlink");
            let name = target.file_name().expect("a name").to_string_lossy();
            format!("{link}/{name}")
        }
        Spelling::HardLink => {
            let link = format!("sub/hard-link-{n}");
            std::fs::hard_link(&target, p.dir.join(&link)).expect("hard link");
            link
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// A file the rules deny is denied however the guest spells it, and the same spelling of
    /// an allowed twin reads, so the denial comes from the rule and not from a spelling the
    /// boundary cannot follow.
    #[test]
    fn a_denied_path_is_denied_for_every_spelling(pair in 0..SPELLING_PAIRS.len(), how in spelling()) {
        let p = spelling_project();
        let (denied, allowed) = SPELLING_PAIRS[pair];
        let spelt = spell(p, denied, &how);
        let out = p.run("Read", json!({ "file_path": spelt }));
        proptest::prop_assert!(
            matches!(&out, ToolCallOutcome::Denied(m) if !m.contains("hunter2")),
            "Read {spelt} ({how:?}) of denied {denied}: {out:?}"
        );
        let twin = spell(p, allowed, &how);
        let out = p.run("Read", json!({ "file_path": twin }));
        proptest::prop_assert!(
            matches!(&out, ToolCallOutcome::Ok { content, .. } if content.contains("visible")),
            "Read {twin} ({how:?}) of allowed {allowed}: {out:?}"
        );
    }
}
