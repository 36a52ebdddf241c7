//! Git through the real `git` binary (as cargo's `net.git-fetch-with-cli` does): clone, sparse
//! checkout of one folder, pinning to a ref or commit.
//!
//! Credential prompts are disabled (`GIT_TERMINAL_PROMPT=0`); each git process is killed after
//! `WARDEN_PLUGIN_GIT_TIMEOUT_MS` (falling back to `CLAUDE_CODE_PLUGIN_GIT_TIMEOUT_MS`, default
//! 120000 ms), like Claude Code.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A git command failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git: {0}; install git and make sure it is on PATH")]
    Spawn(#[source] std::io::Error),
    /// git exited with an error.
    #[error("`git {args}` failed: {stderr}; check the URL, ref and your network or credentials")]
    Failed {
        /// The arguments.
        args: String,
        /// What git printed.
        stderr: String,
    },
    /// git ran longer than the timeout.
    #[error(
        "`git {args}` timed out after {ms} ms; set WARDEN_PLUGIN_GIT_TIMEOUT_MS to allow longer"
    )]
    Timeout {
        /// The arguments.
        args: String,
        /// The timeout.
        ms: u64,
    },
}

fn timeout() -> Duration {
    let ms = [
        "WARDEN_PLUGIN_GIT_TIMEOUT_MS",
        "CLAUDE_CODE_PLUGIN_GIT_TIMEOUT_MS",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok()))
    .unwrap_or(120_000);
    Duration::from_millis(ms)
}

/// Runs `git <args>` in `cwd`, returning trimmed stdout.
pub fn run(cwd: Option<&Path>, args: &[&str]) -> Result<String, GitError> {
    let mut cmd = Command::new("git");
    if let Some(c) = cwd {
        cmd.current_dir(c);
    }
    cmd.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ADVICE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(GitError::Spawn)?;
    let limit = timeout();
    let start = Instant::now();
    // Drain output on threads so a chatty git cannot block on a full pipe.
    let out_h = child.stdout.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = std::io::Read::read_to_end(&mut s, &mut b);
            b
        })
    });
    let err_h = child.stderr.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = std::io::Read::read_to_end(&mut s, &mut b);
            b
        })
    });
    let status = loop {
        if let Some(st) = child.try_wait().map_err(GitError::Spawn)? {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(GitError::Timeout {
                args: args.join(" "),
                ms: limit.as_millis() as u64,
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out_h.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err_h.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        let e = String::from_utf8_lossy(&stderr).trim().to_string();
        return Err(GitError::Failed {
            args: args.join(" "),
            stderr: if e.is_empty() {
                format!("exit status {status}")
            } else {
                e
            },
        });
    }
    Ok(String::from_utf8_lossy(&stdout).trim().to_string())
}

/// Clones `url` into `dest` (which must not exist), checking out `sha` if given, else `git_ref`,
/// else the default branch. With `sparse`, only that folder is checked out (partial clone,
/// cone-mode sparse checkout). Returns the checked-out commit.
pub fn clone(
    url: &str,
    dest: &Path,
    git_ref: Option<&str>,
    sha: Option<&str>,
    sparse: Option<&str>,
) -> Result<String, GitError> {
    let dest_s = dest.to_string_lossy().to_string();
    let mut args: Vec<&str> = vec!["clone", "--quiet"];
    if sha.is_none() {
        args.extend(["--depth", "1"]);
        if let Some(r) = git_ref {
            args.extend(["--branch", r]);
        }
    }
    if sparse.is_some() {
        args.extend(["--filter=blob:none", "--sparse"]);
    }
    if sha.is_some() && sparse.is_none() {
        args.push("--no-checkout");
    }
    args.extend(["--", url, &dest_s]);
    run(None, &args)?;
    if let Some(path) = sparse {
        run(Some(dest), &["sparse-checkout", "set", "--", path])?;
    }
    if let Some(sha) = sha {
        run(
            Some(dest),
            &[
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "--quiet",
                "--detach",
                sha,
            ],
        )?;
    }
    head(dest)
}

/// The commit checked out in `dir`.
pub fn head(dir: &Path) -> Result<String, GitError> {
    run(Some(dir), &["rev-parse", "HEAD"])
}
