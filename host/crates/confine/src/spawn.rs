//! Starting a confined program without copying the caller's memory.
//!
//! [`Confinement::confine`] works on a [`std::process::Command`], whose `pre_exec` hook runs in
//! a `fork` of the caller: the kernel copies the page tables of the whole caller (tens of
//! megabytes for a process that holds a WebAssembly engine: milliseconds per copy), twice (the
//! supervisor and the command), and every page the caller writes while the supervisor lives is
//! copied again on write. [`Confinement::spawn`] starts the command the way `posix_spawn` does:
//! `clone(CLONE_VM | CLONE_VFORK)`, so the child borrows the caller's memory until it calls
//! `execve`, while the calling thread waits. The same clone makes the command the first
//! process (init) of a new PID namespace (and user namespace, unless root): when the command
//! exits, the kernel kills every process left in the namespace, so no supervisor is needed to
//! end the call, and the command's `/proc` lists only the call's processes.
//!
//! The child makes the same system calls, in the same order, as the forked command of
//! [`Confinement::confine`] (see [`child`](crate::child)): private mount namespace, covers and
//! read-only binds, its own `/proc`, no capabilities, descriptors closed on exec, no_new_privs,
//! Landlock, seccomp. Where a PID namespace is not available (user namespaces disabled), or the
//! kernel refuses the clone, `spawn` starts the program through the supervisor instead, with
//! the same [`Child`] interface.
//!
//! What differs from the supervised form, besides the cost:
//! - The command is process 1 of its namespace: the kernel does not deliver a signal to it
//!   from inside the namespace unless it handles that signal (a `kill $$` from a script it
//!   runs is ignored), and orphans of the call are re-parented to it.
//! - No process enforces [`Confinement::timeout`] for the caller: the caller ends the call
//!   with [`Child::end`] at its deadline (SIGKILL to process 1 ends the whole namespace). If the
//!   caller itself dies, the reaper (see [`reaper`](crate::reaper)) kills every call it had
//!   running.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::ExitStatus;

use libc::{c_char, c_int, c_void};

use crate::{ConfineError, Confinement, Guard, Prepared, child};

/// What a standard stream of the program is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdio {
    /// `/dev/null`.
    Null,
    /// The caller's own stream.
    Inherit,
    /// A pipe whose other end is in [`Child`].
    Piped,
}

/// A program to start confined: what [`std::process::Command`] holds, with an environment
/// that is exactly the variables given (as after `env_clear`).
#[derive(Debug, Clone)]
pub struct Program {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    stdio: [Stdio; 3],
}

impl Program {
    /// `program` is looked up in the `PATH` of the program's environment (else the caller's)
    /// when it holds no `/`, as `execvp` does.
    pub fn new(program: impl Into<OsString>) -> Program {
        Program {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            stdio: [Stdio::Inherit; 3],
        }
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl Into<OsString>) -> &mut Program {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(&mut self, args: I) -> &mut Program {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets a variable, replacing an earlier value.
    pub fn env(&mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> &mut Program {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// The directory the program starts in (default: the caller's).
    pub fn current_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Program {
        self.cwd = Some(dir.into());
        self
    }

    /// What standard input is connected to (default: the caller's).
    pub fn stdin(&mut self, s: Stdio) -> &mut Program {
        self.stdio[0] = s;
        self
    }

    /// What standard output is connected to (default: the caller's).
    pub fn stdout(&mut self, s: Stdio) -> &mut Program {
        self.stdio[1] = s;
        self
    }

    /// What standard error is connected to (default: the caller's).
    pub fn stderr(&mut self, s: Stdio) -> &mut Program {
        self.stdio[2] = s;
        self
    }

    /// The program as given.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments after the program.
    pub fn get_args(&self) -> impl Iterator<Item = &OsStr> {
        self.args.iter().map(OsString::as_os_str)
    }
}

/// Why [`Confinement::spawn`] started nothing.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The confinement could not be prepared (see [`Confinement::confine`]).
    #[error(transparent)]
    Confine(#[from] ConfineError),
    /// The process could not be started, or could not confine itself, or `execve` failed
    /// (`NotFound`, `PermissionDenied` as `std::process::Command::spawn` reports them).
    #[error("{0}")]
    Start(#[source] io::Error),
}

/// A confined program started by [`Confinement::spawn`].
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    /// Readable once the process has exited; signals go through it, never to a reused pid.
    pidfd: OwnedFd,
    /// Through the supervisor (no PID namespace here): the supervisor's [`std::process::Child`].
    supervised: Option<std::process::Child>,
    status: Option<ExitStatus>,
    /// [`Confinement::timeout`], enforced by [`wait`](Child::wait) and
    /// [`wait_async`](Child::wait_async) where no supervisor does.
    deadline: Option<std::time::Instant>,
    /// The caller's end of a piped standard input.
    pub stdin: Option<OwnedFd>,
    /// The caller's end of a piped standard output.
    pub stdout: Option<OwnedFd>,
    /// The caller's end of a piped standard error.
    pub stderr: Option<OwnedFd>,
}

impl Child {
    /// The process the caller waits for: the command (process 1 of its namespace), or its
    /// supervisor.
    pub fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// A descriptor that becomes readable when the process exits (for an event loop).
    pub fn pidfd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.pidfd.as_fd()
    }

    /// The exit status, if the process has exited (then it is reaped).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let s = match &mut self.supervised {
            Some(c) => c.try_wait()?,
            None => wait_pid(self.pid, libc::WNOHANG)?,
        };
        self.status = s;
        Ok(s)
    }

    /// Waits for the process to exit, blocking the thread.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let s = match &mut self.supervised {
            Some(c) => c.wait()?,
            None => {
                if let Some(d) = self.deadline
                    && !self.exits_by(d)?
                {
                    self.end()?;
                }
                loop {
                    if let Some(s) = wait_pid(self.pid, 0)? {
                        break s;
                    }
                }
            }
        };
        self.status = Some(s);
        Ok(s)
    }

    /// Waits until the process exits or `deadline` passes; true if it exited.
    fn exits_by(&self, deadline: std::time::Instant) -> io::Result<bool> {
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let mut p = libc::pollfd {
                fd: self.pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = c_int::try_from(left.as_millis().saturating_add(1)).unwrap_or(c_int::MAX);
            // SAFETY: poll reads and writes the one pollfd given.
            match unsafe { libc::poll(&mut p, 1, ms) } {
                n if n > 0 => return Ok(true),
                0 => {}
                _ => {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EINTR) {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Waits for the process to exit without blocking the runtime's threads.
    #[cfg(feature = "tokio")]
    pub async fn wait_async(&mut self) -> io::Result<ExitStatus> {
        struct Raw(RawFd);
        impl AsRawFd for Raw {
            fn as_raw_fd(&self) -> RawFd {
                self.0
            }
        }
        if let Some(s) = self.try_wait()? {
            return Ok(s);
        }
        // SAFETY: the pidfd stays open, and the same, while `ready` lives (this call borrows
        // `self`, which owns it).
        let ready = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(
                Raw(self.pidfd.as_raw_fd()),
                tokio::io::Interest::READABLE,
            )?
        };
        let deadline = self.deadline.map(tokio::time::Instant::from_std);
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok(s);
            }
            let readable = ready.readable();
            let mut guard = match deadline {
                Some(d) => match tokio::time::timeout_at(d, readable).await {
                    Ok(g) => g?,
                    Err(_) => {
                        self.end()?;
                        self.deadline = None;
                        continue;
                    }
                },
                None => readable.await?,
            };
            guard.clear_ready();
        }
    }

    /// Ends the call: every process of it is killed (the supervisor is asked to kill them,
    /// or process 1 of the namespace is killed, which kills the rest). Nothing once the
    /// process has been reaped.
    pub fn end(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        let sig = if self.supervised.is_some() {
            libc::SIGTERM
        } else {
            libc::SIGKILL
        };
        // SAFETY: pidfd_send_signal takes a descriptor this process owns and no memory.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0u32,
            )
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            // ESRCH: it has exited already (not yet reaped).
            if e.raw_os_error() != Some(libc::ESRCH) {
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.end();
            let _ = self.wait();
        }
    }
}

fn wait_pid(pid: libc::pid_t, flags: c_int) -> io::Result<Option<ExitStatus>> {
    let mut st: c_int = 0;
    loop {
        // SAFETY: waitpid writes into `st` only.
        let r = unsafe { libc::waitpid(pid, &mut st, flags) };
        if r == pid {
            return Ok(Some(ExitStatus::from_raw(st)));
        }
        if r == 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} holds a NUL byte", s.to_string_lossy()),
        )
    })
}

/// Where `execvp` would look for `program`, in order.
fn candidates(program: &OsStr, path: Option<&OsStr>) -> io::Result<Vec<CString>> {
    if program.as_bytes().contains(&b'/') {
        return Ok(vec![cstring(program)?]);
    }
    if program.is_empty() {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    let inherited = std::env::var_os("PATH");
    let path = path
        .or(inherited.as_deref())
        .unwrap_or(OsStr::new("/usr/local/bin:/bin:/usr/bin"));
    let mut out = Vec::new();
    for dir in path.as_bytes().split(|&b| b == b':') {
        // An empty entry is the current directory, as for execvp.
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        let mut full = dir.to_vec();
        full.push(b'/');
        full.extend_from_slice(program.as_bytes());
        out.push(cstring(OsStr::from_bytes(&full))?);
    }
    Ok(out)
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The child's stack, with a guard page below it.
struct Stack {
    base: *mut c_void,
    len: usize,
}

const STACK: usize = 256 << 10;

impl Stack {
    fn new() -> io::Result<Stack> {
        let page = 4096usize.max(
            // SAFETY: sysconf has no memory effects.
            usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096),
        );
        let len = STACK + page;
        // SAFETY: a fresh anonymous mapping, unmapped in Drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Stack { base, len };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    fn top(&self) -> *mut c_void {
        ((self.base as usize + self.len) & !15) as *mut c_void
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; the child that used it has exec'd or exited.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// What the cloned child reads (the caller's memory, borrowed until `execve`).
struct Fast<'a> {
    plan: &'a child::ChildPlan,
    candidates: &'a [*const c_char],
    argv: &'a [*const c_char],
    envp: &'a [*const c_char],
    cwd: Option<&'a CString>,
    /// Descriptors to place on 0, 1, 2 (-1: keep the caller's).
    stdio: [RawFd; 3],
    /// Written by the child when it fails: errno, 0 while all is well.
    err: c_int,
}

impl Confinement {
    /// Starts `program` confined, without copying the caller's memory where a PID namespace
    /// is available (see the module docs of `spawn`), else through the supervisor. Returns
    /// the running program and the [`Guard`] to [`finish`](Guard::finish) after it has been
    /// waited for.
    pub fn spawn(&self, program: &Program) -> Result<(Child, Guard), SpawnError> {
        let Prepared {
            mut guard,
            plan,
            ruleset,
            env: extra,
        } = self.prepare()?;
        let mut env = program.env.clone();
        for (k, v) in extra {
            env.retain(|(key, _)| *key != k);
            env.push((k, v));
        }
        let child = match plan.pid.is_some() {
            true => spawn_fast(program, &env, &plan),
            false => spawn_supervised(program, &env, plan),
        }
        .map_err(SpawnError::Start)?;
        drop(ruleset);
        guard.ruleset = None;
        Ok((child, guard))
    }
}

/// The caller's ends of the pipes, and the descriptors the child places on 0, 1, 2.
struct Streams {
    parent: [Option<OwnedFd>; 3],
    child: [Option<OwnedFd>; 3],
}

fn streams(stdio: &[Stdio; 3]) -> io::Result<Streams> {
    let mut s = Streams {
        parent: [None, None, None],
        child: [None, None, None],
    };
    for (i, kind) in stdio.iter().enumerate() {
        match kind {
            Stdio::Inherit => {}
            Stdio::Null => {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/null")?;
                s.child[i] = Some(f.into());
            }
            Stdio::Piped => {
                let (r, w) = pipe()?;
                if i == 0 {
                    s.child[i] = Some(r);
                    s.parent[i] = Some(w);
                } else {
                    s.child[i] = Some(w);
                    s.parent[i] = Some(r);
                }
            }
        }
    }
    Ok(s)
}

fn spawn_supervised(
    program: &Program,
    env: &[(OsString, OsString)],
    plan: child::ChildPlan,
) -> io::Result<Child> {
    let mut cmd = std::process::Command::new(&program.program);
    cmd.args(&program.args)
        .env_clear()
        .envs(env.iter().cloned());
    if let Some(d) = &program.cwd {
        cmd.current_dir(d);
    }
    let mut s = streams(&program.stdio)?;
    for (i, fd) in s.child.iter_mut().enumerate() {
        let io = match fd.take() {
            Some(fd) => std::process::Stdio::from(fd),
            None => std::process::Stdio::inherit(),
        };
        match i {
            0 => cmd.stdin(io),
            1 => cmd.stdout(io),
            _ => cmd.stderr(io),
        };
    }
    // SAFETY: `child::run` only makes async-signal-safe system calls on memory prepared
    // before the fork; the ruleset descriptor stays open until `spawn` returns.
    unsafe {
        cmd.pre_exec(move || child::run(&plan));
    }
    let c = cmd.spawn()?;
    let pid = libc::pid_t::try_from(c.id()).map_err(|_| io::Error::other("pid out of range"))?;
    let [stdin, stdout, stderr] = s.parent;
    Ok(Child {
        pid,
        pidfd: pidfd_open(pid)?,
        supervised: Some(c),
        status: None,
        deadline: None,
        stdin,
        stdout,
        stderr,
    })
}

fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes no memory; the descriptor returned is new.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn spawn_fast(
    program: &Program,
    env: &[(OsString, OsString)],
    plan: &child::ChildPlan,
) -> io::Result<Child> {
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let cands = candidates(&program.program, path_var)?;
    let args: Vec<CString> = std::iter::once(program.program.as_os_str())
        .chain(program.args.iter().map(OsString::as_os_str))
        .map(cstring)
        .collect::<io::Result<_>>()?;
    let vars: Vec<CString> = env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstring(OsStr::from_bytes(&kv))
        })
        .collect::<io::Result<_>>()?;
    let cwd = program
        .cwd
        .as_deref()
        .map(|d| cstring(d.as_os_str()))
        .transpose()?;
    let ptrs = |v: &[CString]| -> Vec<*const c_char> {
        v.iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    };
    let (cand_p, argv, envp) = (ptrs(&cands), ptrs(&args), ptrs(&vars));
    let s = streams(&program.stdio)?;
    let raw = |i: usize| s.child[i].as_ref().map_or(-1, |f| f.as_raw_fd());
    let mut fast = Fast {
        plan,
        candidates: &cand_p,
        argv: &argv,
        envp: &envp,
        cwd: cwd.as_ref(),
        stdio: [raw(0), raw(1), raw(2)],
        err: 0,
    };
    let stack = Stack::new()?;
    let as_root = plan.pid.as_ref().is_some_and(|p| p.as_root());
    let mut flags =
        libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_NEWPID | libc::CLONE_PIDFD | libc::SIGCHLD;
    if !as_root {
        flags |= libc::CLONE_NEWUSER;
    }
    let mut pidfd: c_int = -1;
    // SAFETY: the child runs `fast_main` on its own stack with the caller's memory, making
    // only async-signal-safe calls on `fast` (alive until the child has exec'd or exited, as
    // CLONE_VFORK holds this thread until then); every signal is blocked across the clone so
    // no handler of the caller runs in the child.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            fast_main,
            stack.top(),
            flags,
            (&mut fast as *mut Fast).cast::<c_void>(),
            &mut pidfd as *mut c_int,
        );
        let clone_err = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(clone_err);
        }
        pid
    };
    drop(stack);
    // SAFETY: CLONE_PIDFD stored a new descriptor owned here.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    {
        use std::os::fd::AsFd;
        crate::reaper::watch(pidfd.as_fd());
    }
    // SAFETY: the child wrote `err` (if at all) before it exited; it no longer runs.
    let err = unsafe { std::ptr::read_volatile(&fast.err) };
    drop(s.child);
    if err != 0 {
        let _ = wait_pid(pid, 0);
        return Err(io::Error::from_raw_os_error(err));
    }
    let [stdin, stdout, stderr] = s.parent;
    Ok(Child {
        pid,
        pidfd,
        supervised: None,
        status: None,
        deadline: plan.timeout.map(|t| std::time::Instant::now() + t),
        stdin,
        stdout,
        stderr,
    })
}

extern "C" fn fast_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Fast` of `spawn_fast`, whose thread waits (CLONE_VFORK).
    unsafe {
        let f = arg.cast::<Fast>();
        let e = match fast_child(&*f) {
            Ok(()) => libc::ENOEXEC,
            Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
        };
        std::ptr::write_volatile(&mut (*f).err, if e == 0 { libc::EINVAL } else { e });
        libc::_exit(127)
    }
}

/// Confines the child and executes the program; returns only on failure.
unsafe fn fast_child(f: &Fast) -> io::Result<()> {
    // SAFETY: plain system calls on memory the caller prepared; this process shares the
    // caller's memory, so nothing here allocates, locks or writes anything but `f.err`.
    unsafe {
        // Handlers are the caller's code: back to the default for every caught signal, and
        // SIGPIPE too (as `std::process::Command` does).
        for sig in 1..libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && (old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE)
                && old.sa_sigaction != libc::SIG_DFL
            {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let plan = f.plan;
        if let Some(p) = &plan.pid {
            crate::isolate::map_ids(p)?;
            if plan.hide.is_some() || p.mounts_proc() {
                crate::isolate::enter_mount_namespace()?;
            }
            if let Some(h) = &plan.hide {
                crate::hide::cover_all(h)?;
            }
            if p.mounts_proc() {
                crate::isolate::mount_proc(p, plan.ruleset_fd)?;
            }
        }
        if let Some(d) = f.cwd
            && libc::chdir(d.as_ptr()) != 0
        {
            return Err(io::Error::last_os_error());
        }
        for (target, &fd) in f.stdio.iter().enumerate() {
            if fd < 0 {
                continue;
            }
            let target = target as c_int;
            // dup2 onto itself would leave close-on-exec set.
            if fd == target {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            } else if libc::dup2(fd, target) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        crate::isolate::drop_capabilities()?;
        crate::isolate::close_inherited()?;
        child::confine_self(plan)?;
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        // execvp's search: a candidate that is missing or refused is skipped; refused is
        // reported when nothing else is found.
        let mut refused = false;
        for &c in f.candidates {
            if c.is_null() {
                break;
            }
            libc::execve(c, f.argv.as_ptr(), f.envp.as_ptr());
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EACCES) => refused = true,
                Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP | libc::ENAMETOOLONG) => {}
                _ => return Err(io::Error::last_os_error()),
            }
        }
        Err(io::Error::from_raw_os_error(if refused {
            libc::EACCES
        } else {
            libc::ENOENT
        }))
    }
}

/// Whether `spawn` starts programs without a supervisor here (a PID namespace per call is
/// available).
pub fn spawns_without_supervisor() -> bool {
    crate::isolate::available()
}
