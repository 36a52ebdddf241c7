//! The way the `exec` capability uses it: a tokio command, a timeout, and ending the call.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use common::{assert_no_secret, fixture};
use warden_confine::end_call;

#[tokio::test(flavor = "current_thread")]
async fn a_tokio_command_is_confined_and_ended_with_its_tree() {
    let f = fixture();
    let c = f.confinement();

    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", "cat README.md .env"])
        .current_dir(&f.project)
        .env_clear();
    let guard = c.confine(cmd.as_std_mut()).unwrap();
    let out = cmd.output().await.unwrap();
    guard.finish().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "readme text\n");
    assert_no_secret(&out, "tokio cat");

    // The caller's own timeout ends the call through the supervisor.
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", "setsid sleep 300.4 & echo $! > src/pid; sleep 300"])
        .current_dir(&f.project)
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    let guard = c.confine(cmd.as_std_mut()).unwrap();
    let mut child = cmd.spawn().unwrap();
    let waited = tokio::time::timeout(Duration::from_millis(500), child.wait()).await;
    assert!(waited.is_err(), "sleep 300 ended early");
    end_call(child.id().unwrap()).unwrap();
    let st = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    guard.finish().unwrap();
    assert_eq!(st.signal(), Some(libc::SIGKILL));
    assert!(
        !std::fs::read_to_string(f.project.join("src/pid"))
            .unwrap()
            .trim()
            .is_empty()
    );
    // Its number is one of the call's PID namespace: it is found by its command line.
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x00300.4\x00"));
    assert!(!left, "the setsid sleep outlived the call");
}
