//! Network, signals, and processes outliving the call.
#![cfg(target_os = "linux")]

mod common;

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use common::{fixture, stdout};
use warden_confine::{Confinement, end_call};

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); count it as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// The live process whose command line is `sleep <duration>`. A call's processes have
/// numbers of their own PID namespace, which mean nothing outside it, so tests find them by a
/// duration no other test uses.
fn sleeping(duration: &str) -> Option<i32> {
    let want = format!("sleep\0{duration}\0");
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want.as_bytes())
                && alive(*pid)
        })
}

fn kill(pid: i32) {
    // SAFETY: kill(2) with a pid this test started.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

#[test]
fn tcp_connect_to_localhost_fails() {
    let f = fixture();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hi >&3");
    let out = f.run(&["bash", "-c", &script]);
    assert!(!out.status.success(), "{out:?}");
    assert!(listener.accept().is_err(), "a connection got through");

    // With network allowed the same command connects: the refusal is the confinement's.
    let (open, _) = f.run_with(&f.confinement().network(true), &["bash", "-c", &script]);
    assert!(open.status.success(), "{open:?}");
    let (mut s, _) = listener.accept().unwrap();
    s.set_nonblocking(false).unwrap();
    let mut got = String::new();
    s.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hi\n");
}

#[test]
fn udp_send_fails() {
    let f = fixture();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let script = format!("echo hi > /dev/udp/127.0.0.1/{port}");
    let out = f.run(&["bash", "-c", &script]);
    assert!(!out.status.success(), "{out:?}");
    let mut buf = [0u8; 16];
    assert!(sock.recv(&mut buf).is_err(), "a datagram got through");

    let (open, _) = f.run_with(&f.confinement().network(true), &["bash", "-c", &script]);
    assert!(open.status.success(), "{open:?}");
    let n = sock.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"hi\n");
}

#[test]
fn unix_sockets_are_refused_unless_allowed() {
    let f = fixture();
    let probe = "import socket; socket.socket(socket.AF_UNIX); print('made')";
    let Ok(p) = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
    else {
        return;
    };
    let prefix = String::from_utf8_lossy(&p.stdout).trim().to_string();
    let python = format!("{prefix}/bin/python3");
    let c = f.confinement().read(&prefix);
    let (out, _) = f.run_with(&c, &[&python, "-c", probe]);
    assert!(!stdout(&out).contains("made"), "{out:?}");
    let (out, _) = f.run_with(&c.clone().unix_sockets(true), &[&python, "-c", probe]);
    assert!(stdout(&out).contains("made"), "{out:?}");
}

#[test]
fn signals_cannot_reach_processes_outside_the_call() {
    let f = fixture();
    let me = std::process::id().to_string();
    let out = f.run(&["kill", "-0", &me]);
    assert!(!out.status.success(), "{out:?}");
    let plain = f.command(&["kill", "-0", &me]).status().unwrap();
    assert!(plain.success());
    // Inside the call, signals work.
    let inside = f.sh("sleep 5 & kill $!; wait $!; echo $?");
    assert_eq!(stdout(&inside), "143\n");
}

#[test]
fn a_setsid_double_fork_ends_with_the_call() {
    let f = fixture();
    let script = "setsid sh -c 'sleep 300.1 & echo $! > src/pid'; sleep 0.2";
    let out = f.sh(script);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !std::fs::read_to_string(f.project.join("src/pid"))
            .unwrap()
            .trim()
            .is_empty()
    );
    let left = sleeping("300.1");
    assert!(
        left.is_none(),
        "the double-forked sleep {left:?} outlived the call"
    );

    // Unconfined, the same script leaves the process behind.
    let st = f.command(&["sh", "-c", script]).status().unwrap();
    assert!(st.success());
    let survived = sleeping("300.1");
    if let Some(pid) = survived {
        kill(pid);
    }
    assert!(
        survived.is_some(),
        "the control process should have survived"
    );
}

#[test]
fn the_deadline_kills_the_whole_tree() {
    let f = fixture();
    let c = f.confinement().timeout(Duration::from_millis(300));
    let start = Instant::now();
    let (out, _) = f.run_with(
        &c,
        &[
            "sh",
            "-c",
            "setsid sleep 300.2 & echo $! > src/pid; sleep 300",
        ],
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{out:?}");
    assert!(
        !std::fs::read_to_string(f.project.join("src/pid"))
            .unwrap()
            .trim()
            .is_empty()
    );
    assert_eq!(sleeping("300.2"), None);
}

#[test]
fn end_call_kills_the_whole_tree() {
    let f = fixture();
    let mut cmd = f.command(&[
        "sh",
        "-c",
        "setsid sleep 300.3 & echo $! > src/pid; sleep 300",
    ]);
    let guard = f.confinement().confine(&mut cmd).unwrap();
    let mut child = cmd.spawn().unwrap();
    let pidfile = f.project.join("src/pid");
    let start = Instant::now();
    while !pidfile.exists() || std::fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(10));
    }
    // The pid is written before `setsid` has exec'd `sleep`.
    while sleeping("300.3").is_none() {
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(10));
    }
    end_call(child.id()).unwrap();
    let st = child.wait().unwrap();
    guard.finish().unwrap();
    assert_eq!(st.signal(), Some(libc::SIGKILL));
    assert_eq!(sleeping("300.3"), None);
}

#[test]
fn ending_a_spawned_call_kills_the_whole_tree() {
    let f = fixture();
    let (mut child, guard) = f
        .confinement()
        .spawn(&f.program(&[
            "sh",
            "-c",
            "setsid sleep 300.4 & echo $! > src/pid; sleep 300",
        ]))
        .unwrap();
    let start = Instant::now();
    while sleeping("300.4").is_none() {
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(10));
    }
    child.end().unwrap();
    let st = child.wait().unwrap();
    guard.finish().unwrap();
    assert_eq!(st.signal(), Some(libc::SIGKILL));
    assert_eq!(sleeping("300.4"), None);
}

#[test]
fn exit_status_and_output_pass_through() {
    let f = fixture();
    let out = f.sh("echo out; echo err >&2; exit 7");
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(stdout(&out), "out\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    let (killed, _) = f.run_command_with(&f.confinement(), &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(killed.status.signal(), Some(libc::SIGTERM));
    // Spawned, the shell is process 1 of its namespace, which ignores a signal it does not
    // handle from inside the namespace; from outside, `Child::end` kills it.
    if warden_confine::spawns_without_supervisor() {
        let ignored = f.sh("kill -TERM $$; echo alive");
        assert_eq!(stdout(&ignored), "alive\n", "{ignored:?}");
    }
    // A program that cannot start is a spawn error, not a hang.
    let mut cmd = f.command(&["/nonexistent/program"]);
    let _guard = f.confinement().confine(&mut cmd).unwrap();
    assert!(cmd.output().is_err());
    match f.confinement().spawn(&f.program(&["/nonexistent/program"])) {
        Err(warden_confine::SpawnError::Start(e)) => {
            assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}")
        }
        other => panic!("{other:?}"),
    }
    match f
        .confinement()
        .spawn(&f.program(&["no-such-program-anywhere"]))
    {
        Err(warden_confine::SpawnError::Start(e)) => {
            assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_old_kernel_is_a_clear_error() {
    let f = fixture();
    let mut cmd = f.command(&["true"]);
    let err = f
        .confinement()
        .pretend_abi_at_most(0)
        .confine(&mut cmd)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Landlock") && err.contains("sandbox.allowUnconfined"),
        "{err}"
    );
    let err = f
        .confinement()
        .pretend_abi_at_most(2)
        .confine(&mut cmd)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ABI 3") && err.contains("offers ABI 2"),
        "{err}"
    );
    let err = f
        .confinement()
        .pretend_abi_at_most(5)
        .confine(&mut cmd)
        .unwrap_err()
        .to_string();
    assert!(err.contains("signals") && err.contains("6.12"), "{err}");

    // Accepting unscoped kernels still confines files.
    let c = f.confinement().pretend_abi_at_most(5).allow_unscoped(true);
    let (ok, _) = f.run_with(&c, &["cat", "README.md"]);
    assert!(ok.status.success(), "{ok:?}");
    let (denied, _) = f.run_with(&c, &["cat", ".env"]);
    assert!(!denied.status.success());
    let s = warden_confine::status();
    assert!(
        s.landlock_abi >= 6 && s.filesystem && s.scoping && s.tcp && s.seccomp,
        "{s:?}"
    );
    let _ = Confinement::new();
}

/// Set in the copy of this test binary that plays the caller killed mid-call.
const CALLER: &str = "WARDEN_CONFINE_TEST_CALLER";

#[test]
fn a_call_dies_with_the_process_that_started_it() {
    if std::env::var_os(CALLER).is_some() {
        // The caller: start a call that would run for minutes, say so, and wait to be killed.
        let f = fixture();
        let (_child, _guard) = f
            .confinement()
            .spawn(&f.program(&["sleep", "300.7"]))
            .unwrap();
        println!("started");
        std::thread::sleep(Duration::from_secs(600));
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let mut caller = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_call_dies_with_the_process_that_started_it",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CALLER, "1")
        .env("TMPDIR", scratch.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let call = loop {
        if let Some(pid) = sleeping("300.7") {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the caller never started its call"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    caller.kill().unwrap();
    caller.wait().unwrap();
    let killed = Instant::now();
    while alive(call) && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let survived = alive(call);
    if survived {
        kill(call);
    }
    assert!(
        !survived,
        "the call outlived the process that started it by 5 s"
    );
}
