//! `warden:plugin/exec`: an argument vector, never a shell string.
//!
//! The program is resolved through `PATH` to an absolute file; its name must be granted, and
//! the whole vector (with the resolved program) must pass the policy, which looks through
//! wrappers and into `sh -c` code. The child gets a cleared environment (only `PATH` and
//! granted variables), a working directory inside a granted directory or the session cwd, and
//! its own process group, which is killed as a whole at the deadline or when the call ends, so
//! nothing it started outlives the call.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use wasmtime::component::HasSelf;

mod confine;

/// What `exec` keeps for one call: how the programs it starts are confined (from the
/// session, fixed when the call starts).
#[derive(Debug, Default)]
pub(crate) struct CallState {
    pub(crate) processes: crate::sandbox::ProcessConfinement,
}

impl CallState {
    pub(crate) fn new(ctx: &crate::sandbox::CallContext) -> Self {
        CallState {
            processes: ctx.processes.clone(),
        }
    }
}

use super::Provider;
use super::env::EnvGrant;
use super::fs::absolute;
use crate::bindings::{WitVersion, since_v0_1};
use crate::latest::exec::{ExecError, Host, Options, Output};
use crate::sandbox::SandboxState;
use warden_vocab::Capability;

pub(super) const PROVIDER: Provider = Provider {
    capability: Some(Capability::Exec),
    interface: "warden:plugin/exec",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::exec::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

/// The `exec` part of a grant: program names, matched on the file name of the resolved
/// program (`git` grants `/usr/bin/git`, never `/tmp/git-evil` or `gitk`).
#[derive(Debug, Clone, Copy)]
pub struct ExecGrant<'a>(pub &'a [String]);

impl ExecGrant<'_> {
    /// Whether the guest may run `program` (a resolved path, or a bare name).
    pub fn allows(&self, program: &Path) -> bool {
        let name = file_name(program);
        !name.is_empty() && self.0.iter().any(|g| g == name)
    }
}

/// Bytes kept from each of stdout and stderr.
pub const MAX_CAPTURE_BYTES: usize = 1 << 20;
/// Timeout when the guest gives none (still capped by the call's deadline).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Most arguments, and most total bytes of arguments and stdin, accepted from a guest.
const MAX_ARGS: usize = 4096;
const MAX_ARG_BYTES: usize = 1 << 20;
const MAX_STDIN_BYTES: usize = 16 << 20;
/// `PATH` when the host has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn host_path() -> String {
    std::env::var("PATH")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| FALLBACK_PATH.to_string())
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Resolves `argv[0]`: a name is looked up in `PATH`, anything with a slash is a path
/// (relative to `cwd`).
fn resolve_program(prog: &str, cwd: &Path, path_var: &str) -> Result<PathBuf, ExecError> {
    if prog.is_empty() || prog.contains('\0') {
        return Err(ExecError::Failed(format!("invalid program name {prog:?}")));
    }
    if prog.contains('/') {
        let p = super::fs::normalise(&cwd.join(prog));
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(ExecError::NotFound(format!(
                "{}: no such executable file",
                p.display()
            )))
        };
    }
    std::env::split_paths(path_var)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(prog))
        .find(|p| is_executable(p))
        .ok_or_else(|| ExecError::NotFound(format!("{prog}: not found in PATH ({path_var})")))
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(OsStr::to_str).unwrap_or("")
}

/// Reads a stream to its end, keeping at most `cap` bytes; the rest is drained so the child
/// never blocks on a full pipe.
async fn capture(mut r: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 << 10];
    let mut truncated = false;
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, truncated)
}

impl SandboxState {
    fn exec_cwd(&self, requested: Option<&str>) -> Result<PathBuf, ExecError> {
        let lexical = match requested {
            Some(raw) => absolute(&self.ctx.cwd, raw).map_err(|e| ExecError::Failed(e.message))?,
            None => super::fs::normalise(&self.ctx.cwd),
        };
        let real = std::fs::canonicalize(&lexical).map_err(|e| {
            ExecError::Failed(format!("working directory {}: {e}", lexical.display()))
        })?;
        let allowed_roots = self
            .grant
            .fs
            .iter()
            .map(|g| g.path.clone())
            .chain(std::iter::once(self.ctx.cwd.clone()));
        let inside = allowed_roots
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .any(|root| real.starts_with(&root));
        if !inside {
            return Err(ExecError::Denied(format!(
                "working directory {} is outside the session directory {} and every granted directory",
                real.display(),
                self.ctx.cwd.display()
            )));
        }
        Ok(real)
    }

    /// A program opens files with the host's authority, out of the fs capability's reach, so
    /// every argument naming an existing path (`x`, or the value of `--opt=x`) is checked as a
    /// read of both the path as written and its real path: `cat link-to-.env` and
    /// `/bin/cat .env` hit a `Read(./.env)` deny like the Read tool does.
    fn check_path_args(&self, args: &[String], cwd: &Path) -> Result<(), ExecError> {
        const MAX_CHECKED: usize = 512;
        let candidates = args
            .iter()
            .flat_map(|a| {
                let value = a.split_once('=').map(|(_, v)| v);
                std::iter::once(a.as_str()).chain(value)
            })
            .filter(|a| !a.is_empty() && a.len() < 4096)
            .take(MAX_CHECKED);
        for arg in candidates {
            let lexical = super::fs::normalise(&cwd.join(arg));
            if std::fs::symlink_metadata(&lexical).is_err() {
                continue;
            }
            let real = std::fs::canonicalize(&lexical).unwrap_or_else(|_| lexical.clone());
            for p in [&lexical, &real] {
                if let Err(rule) = self.ctx.policy.check_path(p, false) {
                    return Err(ExecError::Denied(format!(
                        "argument `{arg}` names {}, which may not be read: {rule}",
                        p.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Everything that must hold before the program runs; returns the resolved argv and cwd.
    fn exec_check(
        &self,
        argv: &[String],
        options: &Options,
        path_var: &str,
    ) -> Result<(Vec<String>, PathBuf), ExecError> {
        let Some(prog) = argv.first() else {
            return Err(ExecError::Failed("empty argument vector".into()));
        };
        let total: usize = argv.iter().map(String::len).sum();
        if argv.len() > MAX_ARGS || total > MAX_ARG_BYTES {
            return Err(ExecError::Failed(format!(
                "argument vector too large ({} arguments, {total} bytes)",
                argv.len()
            )));
        }
        if argv.iter().any(|a| a.contains('\0')) {
            return Err(ExecError::Failed("an argument contains a NUL byte".into()));
        }
        let cwd = self.exec_cwd(options.cwd.as_deref())?;
        let program = resolve_program(prog, &cwd, path_var)?;
        let granted = ExecGrant(&self.grant.exec);
        let name = file_name(&program);
        if !granted.allows(&program) {
            return Err(ExecError::Denied(format!(
                "{} ({}) is not a granted program (granted: {})",
                name,
                program.display(),
                if self.grant.exec.is_empty() {
                    "none".to_string()
                } else {
                    self.grant.exec.join(", ")
                }
            )));
        }
        // A link the guest could have planted (`./git -> /bin/rm` in a writable directory)
        // must not borrow a granted name: there the target's name has to be granted too.
        if let Ok(real) = std::fs::canonicalize(&program) {
            let planted = self.grant.fs.iter().filter(|g| g.write).any(|g| {
                std::fs::canonicalize(&g.path)
                    .is_ok_and(|root| program.starts_with(&root) || program.starts_with(&g.path))
            });
            if planted && real != program && !granted.allows(&real) {
                return Err(ExecError::Denied(format!(
                    "{} is a link to {}, which is not a granted program",
                    program.display(),
                    real.display()
                )));
            }
        }
        let mut checked = Vec::with_capacity(argv.len());
        checked.push(program.display().to_string());
        checked.extend(argv[1..].iter().cloned());
        self.ctx
            .policy
            .check_exec(&checked, &cwd)
            .map_err(|rule| ExecError::Denied(format!("`{}` is denied: {rule}", shown(argv))))?;
        self.check_path_args(&argv[1..], &cwd)?;
        if options
            .stdin
            .as_ref()
            .is_some_and(|s| s.len() > MAX_STDIN_BYTES)
        {
            return Err(ExecError::Failed(format!(
                "stdin is over the {MAX_STDIN_BYTES}-byte limit"
            )));
        }
        Ok((checked, cwd))
    }

    async fn exec_run(&mut self, argv: Vec<String>, options: Options) -> Result<Output, ExecError> {
        let path_var = host_path();
        let (argv, cwd) = self.exec_check(&argv, &options, &path_var)?;
        let limit = options
            .timeout_ms
            .map(|ms| Duration::from_millis(ms.into()))
            .unwrap_or(DEFAULT_TIMEOUT)
            .min(self.remaining());
        if limit.is_zero() {
            return Err(ExecError::Failed("the call's deadline has passed".into()));
        }

        let granted = EnvGrant(&self.grant.env);
        let mut env: Vec<(String, String)> = vec![("PATH".into(), path_var.clone())];
        for (k, v) in &self.ctx.env {
            if granted.allows(k) {
                env.push((k.clone(), v.clone()));
            }
        }
        for (k, v) in &options.env {
            if granted.allows(k) && !k.contains(['=', '\0']) && !v.contains('\0') {
                env.push((k.clone(), v.clone()));
            }
        }
        let piped_stdin = options.stdin.is_some();
        let confined = self.spawn_confined(&argv, &cwd, &env, piped_stdin, limit)?;
        let (mut child, confined) = match confined {
            #[cfg(target_os = "linux")]
            Some((child, guard)) => (Proc::Confined(child), Some(guard)),
            #[cfg(not(target_os = "linux"))]
            Some((never, _)) => match never {},
            None => {
                let mut cmd = tokio::process::Command::new(&argv[0]);
                cmd.args(&argv[1..])
                    .current_dir(&cwd)
                    .env_clear()
                    .envs(env.iter().map(|(k, v)| (k, v)))
                    .stdin(if piped_stdin {
                        Stdio::piped()
                    } else {
                        Stdio::null()
                    })
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .process_group(0)
                    .kill_on_drop(true);
                let child = cmd.spawn().map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => {
                        ExecError::NotFound(format!("{}: {e}", argv[0]))
                    }
                    _ => ExecError::Failed(format!("cannot start {}: {e}", argv[0])),
                })?;
                let group = child.id().and_then(|id| i32::try_from(id).ok());
                (Proc::Plain(child, Ending(group)), None)
            }
        };
        let stdin_task = match (child.stdin(), options.stdin) {
            (Some(mut pipe), Some(bytes)) => Some(tokio::spawn(async move {
                // A child that exits without reading closes the pipe; that is not an error.
                let _ = pipe.write_all(&bytes).await;
            })),
            _ => None,
        };
        let (Some(out), Some(err)) = (child.stdout(), child.stderr()) else {
            return Err(ExecError::Failed(
                "cannot capture the program's output".into(),
            ));
        };
        let out_task = tokio::spawn(capture(out, MAX_CAPTURE_BYTES));
        let err_task = tokio::spawn(capture(err, MAX_CAPTURE_BYTES));

        let (status, timed_out) = match tokio::time::timeout(limit, child.wait()).await {
            Ok(Ok(s)) => (s.code().unwrap_or(-1), false),
            Ok(Err(e)) => {
                child.end();
                return Err(ExecError::Failed(format!("waiting for {}: {e}", argv[0])));
            }
            Err(_) => (-1, true),
        };
        // Unconfined, background children of the program hold the pipes open until the group
        // goes; confined, they ended with the call.
        if timed_out {
            child.end();
            let _ = child.wait().await;
        }
        child.reaped();
        if let Some(t) = stdin_task {
            t.abort();
        }
        let drain = Duration::from_secs(2).min(self.remaining().max(Duration::from_millis(10)));
        let (stdout, t1) = tokio::time::timeout(drain, out_task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let (mut stderr, t2) = tokio::time::timeout(drain, err_task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        if confined.is_some() && status != 0 {
            for hint in self.readable_hints(None, &stderr) {
                stderr.extend_from_slice(format!("\n{hint}\n").as_bytes());
            }
        }
        if let Some(guard) = confined {
            let restored = confine::finish(guard)
                .map_err(|e| ExecError::Failed(format!("{} ended, but {e}", argv[0])))?;
            if !restored.is_empty() {
                let names: Vec<String> = restored.iter().map(|p| p.display().to_string()).collect();
                let note = format!(
                    "\nwarden: {} changed write-protected paths, now restored: {}\n",
                    file_name(Path::new(&argv[0])),
                    names.join(", ")
                );
                self.calls.log.push("warn", note.trim().to_string());
                stderr.extend_from_slice(note.as_bytes());
            }
        }
        Ok(Output {
            status,
            stdout,
            stderr,
            truncated: t1 || t2,
            timed_out,
        })
    }
}

/// The process of one `exec`: confined (ended as a whole by `warden_confine::Child::end`,
/// also when dropped), or unconfined in its own process group.
enum Proc {
    #[cfg(target_os = "linux")]
    Confined(warden_confine::Child),
    Plain(tokio::process::Child, Ending),
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

#[cfg(target_os = "linux")]
fn pipe_end<T: From<std::os::fd::OwnedFd>>(fd: Option<std::os::fd::OwnedFd>) -> Option<T> {
    fd.map(T::from)
}

impl Proc {
    fn stdin(&mut self) -> Option<Writer> {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Confined(c) => pipe_end::<std::process::ChildStdin>(c.stdin.take())
                .and_then(|p| tokio::process::ChildStdin::from_std(p).ok())
                .map(|p| Box::new(p) as Writer),
            Proc::Plain(c, _) => c.stdin.take().map(|p| Box::new(p) as Writer),
        }
    }

    fn stdout(&mut self) -> Option<Reader> {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Confined(c) => pipe_end::<std::process::ChildStdout>(c.stdout.take())
                .and_then(|p| tokio::process::ChildStdout::from_std(p).ok())
                .map(|p| Box::new(p) as Reader),
            Proc::Plain(c, _) => c.stdout.take().map(|p| Box::new(p) as Reader),
        }
    }

    fn stderr(&mut self) -> Option<Reader> {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Confined(c) => pipe_end::<std::process::ChildStderr>(c.stderr.take())
                .and_then(|p| tokio::process::ChildStderr::from_std(p).ok())
                .map(|p| Box::new(p) as Reader),
            Proc::Plain(c, _) => c.stderr.take().map(|p| Box::new(p) as Reader),
        }
    }

    async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Confined(c) => c.wait_async().await,
            Proc::Plain(c, _) => c.wait().await,
        }
    }

    /// Ends every process of the call early (timeout, or the call abandoned).
    fn end(&mut self) {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Confined(c) => {
                let _ = c.end();
            }
            Proc::Plain(_, e) => e.end(),
        }
    }

    /// The program has been waited for. An unconfined group is still killed: its leader's
    /// exit does not end the rest of it.
    fn reaped(&mut self) {
        if let Proc::Plain(_, e) = self {
            e.end();
        }
    }
}

/// The process group of an unconfined program, killed when the call ends or is dropped.
struct Ending(Option<i32>);

impl Ending {
    fn end(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: kill(2) has no memory effects; a negative pid names the process group
            // this call created (the child is its leader), and a stale group only yields ESRCH.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.end();
    }
}

impl Host for SandboxState {
    async fn run(
        &mut self,
        argv: Vec<String>,
        options: Options,
    ) -> wasmtime::Result<Result<Output, ExecError>> {
        Ok(self.exec_run(argv, options).await)
    }
}

/// The argument vector as a reader would type it: words with spaces or quotes single-quoted.
fn shown(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::ExecGrant;

    #[test]
    fn allows() {
        let granted = ["git".to_string(), "cargo".to_string()];
        let table = [
            ("/usr/bin/git", true),
            ("git", true),
            ("/home/u/.cargo/bin/cargo", true),
            ("/usr/bin/gitk", false),
            ("/tmp/git-evil", false),
            ("/usr/bin/git/", true),
            ("/usr/bin/rm", false),
            ("/", false),
            ("", false),
        ];
        for (program, want) in table {
            assert_eq!(
                ExecGrant(&granted).allows(Path::new(program)),
                want,
                "{program}"
            );
        }
        assert!(!ExecGrant(&[]).allows(Path::new("/usr/bin/git")));
    }
}
