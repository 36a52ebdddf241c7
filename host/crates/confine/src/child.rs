//! Code that runs between `fork` and `exec`.
//!
//! The process the caller forks becomes a supervisor: it marks itself a child subreaper and,
//! where the kernel allows it, gives its children a PID namespace of their own whose init it
//! starts first (see [`isolate`](crate::isolate)); then it forks the real command and waits.
//! When the command exits, the call's deadline passes, or the supervisor is asked to end
//! (SIGTERM, SIGINT, SIGHUP), it ends every process left: with a PID namespace by killing its
//! init, which takes the whole namespace with it; without, by killing every process left
//! below it (orphans, even `setsid` double forks, are re-parented to a subreaper), found in
//! `/proc`. Then it exits the way the command did. The command enters a private mount
//! namespace when it hides denied paths (see [`hide`](crate::hide)) or has a PID namespace
//! (its own `/proc` is mounted there), drops its capabilities, marks every descriptor but the
//! standard streams close-on-exec, confines itself (no_new_privs, Landlock, seccomp) and
//! returns to `exec`.
//!
//! Both run in a fork of a multithreaded process, so everything here is a raw system call on
//! memory prepared before the fork: no allocation, no locks.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use libc::{c_int, pid_t, sigset_t};

/// Everything the forked code needs, prepared by the parent.
pub(crate) struct ChildPlan {
    /// Landlock ruleset to enforce; kept open by the [`Guard`](crate::Guard) until spawn.
    pub ruleset_fd: RawFd,
    /// seccomp program, when network is off.
    pub filter: Option<Box<[libc::sock_filter]>>,
    /// Deadline of the whole call.
    pub timeout: Option<Duration>,
    /// Denied paths to cover in a private mount namespace before Landlock applies.
    pub hide: Option<crate::hide::Plan>,
    /// A PID namespace for the command, with its own `/proc`.
    pub pid: Option<crate::isolate::PidPlan>,
}

fn check(r: c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The `pre_exec` body: returns `Ok` only in the command process, which then execs.
///
/// # Safety
/// Must run in a freshly forked child, between `fork` and `exec`.
pub(crate) unsafe fn run(plan: &ChildPlan) -> io::Result<()> {
    // SAFETY: every call below is a plain system call (or libc's thin wrapper of one) on
    // stack memory or memory owned by `plan`, which the forked child inherited intact.
    unsafe {
        let mut ending: sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut ending);
        for s in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut ending, s);
        }
        // Blocked before the fork, so no SIGCHLD can be lost before the supervisor waits.
        let mut original: sigset_t = std::mem::zeroed();
        check(libc::sigprocmask(libc::SIG_BLOCK, &ending, &mut original))?;
        check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
        // An inherited SIG_IGN would have the kernel reap the command unseen.
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        let supervisor = libc::getpid();
        // Init's stack: in this frame, which the supervisor never leaves (`supervise` does
        // not return), so it outlives init.
        let mut init_stack = std::mem::MaybeUninit::<[u8; crate::isolate::INIT_STACK]>::uninit();
        let init = match &plan.pid {
            Some(p) => {
                crate::isolate::enter_pid_namespace(p)?;
                Some(crate::isolate::start_init(
                    p,
                    init_stack.as_mut_ptr().cast(),
                )?)
            }
            None => None,
        };
        match libc::fork() {
            -1 => {
                let e = io::Error::last_os_error();
                if let Some(i) = init {
                    libc::kill(i, libc::SIGKILL);
                    libc::waitpid(i, std::ptr::null_mut(), 0);
                }
                Err(e)
            }
            0 => {
                check(libc::sigprocmask(
                    libc::SIG_SETMASK,
                    &original,
                    std::ptr::null_mut(),
                ))?;
                // If the supervisor is killed outright, the command goes with it.
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                // A parent outside the command's PID namespace shows as 0; had the supervisor
                // died already, the parent would be init (1) or some other reaper.
                let parent = if init.is_some() { 0 } else { supervisor };
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                match (&plan.pid, &plan.hide) {
                    (Some(p), hide) => {
                        if hide.is_some() || p.mounts_proc() {
                            crate::isolate::enter_mount_namespace()?;
                        }
                        if let Some(h) = hide {
                            crate::hide::cover_all(h)?;
                        }
                        if p.mounts_proc() {
                            crate::isolate::mount_proc(p, plan.ruleset_fd)?;
                        }
                    }
                    (None, Some(h)) => {
                        crate::hide::enter(&h.ns)?;
                        crate::hide::cover_all(h)?;
                    }
                    (None, None) => {}
                }
                crate::isolate::drop_capabilities()?;
                crate::isolate::close_inherited()?;
                confine_self(plan)
            }
            command => supervise(command, init, plan.timeout, &ending),
        }
    }
}

/// no_new_privs, then Landlock, then seccomp (which needs no_new_privs when unprivileged).
pub(crate) unsafe fn confine_self(plan: &ChildPlan) -> io::Result<()> {
    // SAFETY: plain system calls; the filter program lives in `plan` until exec.
    unsafe {
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        if plan.ruleset_fd >= 0 {
            let r = libc::syscall(libc::SYS_landlock_restrict_self, plan.ruleset_fd, 0u32);
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(filter) = &plan.filter {
            let prog = libc::sock_fprog {
                len: u16::try_from(filter.len())
                    .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
                filter: filter.as_ptr().cast_mut(),
            };
            let r = libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &prog as *const libc::sock_fprog,
            );
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

fn monotonic_ns() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into `ts` only.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// Reaps every exited child without blocking; returns false once there are no children.
unsafe fn reap(command: pid_t, status: &mut Option<c_int>) -> bool {
    loop {
        let mut st: c_int = 0;
        // SAFETY: waitpid writes into `st` only.
        let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
        if r > 0 {
            if r == command {
                *status = Some(st);
            }
            continue;
        }
        return r == 0;
    }
}

unsafe fn supervise(
    command: pid_t,
    init: Option<pid_t>,
    timeout: Option<Duration>,
    ending: &sigset_t,
) -> ! {
    // SAFETY: plain system calls on stack memory; this process never returns to Rust code
    // outside this function.
    unsafe {
        // Keep nothing of the caller's open: its pipes must reach EOF when the command's
        // processes end, and std's exec-error pipe must close for `spawn` to return.
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..4096 {
                libc::close(fd);
            }
        }
        let deadline = timeout.map(|t| monotonic_ns() + t.as_nanos() as i128);
        let mut status = None;
        loop {
            reap(command, &mut status);
            if status.is_some() {
                break;
            }
            let sig = match deadline {
                Some(d) => {
                    let left = d - monotonic_ns();
                    if left <= 0 {
                        break;
                    }
                    let ts = libc::timespec {
                        tv_sec: (left / 1_000_000_000) as libc::time_t,
                        tv_nsec: (left % 1_000_000_000) as libc::c_long,
                    };
                    libc::sigtimedwait(ending, std::ptr::null_mut(), &ts)
                }
                None => libc::sigwaitinfo(ending, std::ptr::null_mut()),
            };
            if sig == libc::SIGTERM || sig == libc::SIGINT || sig == libc::SIGHUP {
                break;
            }
        }
        match init {
            Some(i) => end_namespace(command, i, &mut status),
            None => end_all(command, &mut status, ending),
        }
        exit_as(status)
    }
}

/// Kills the PID namespace's init, which kills every other process in it, and reaps the
/// command and init. Init's exit completes only once every process of the namespace is gone,
/// and needs the command (a child of this process, not of init) reaped first.
unsafe fn end_namespace(command: pid_t, init: pid_t, status: &mut Option<c_int>) {
    // SAFETY: plain system calls on stack memory.
    unsafe {
        libc::kill(init, libc::SIGKILL);
        loop {
            let mut st: c_int = 0;
            let r = libc::waitpid(-1, &mut st, 0);
            if r == command {
                *status = Some(st);
            }
            if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return;
            }
        }
    }
}

/// Kills every descendant until none is left. Orphans are re-parented to this subreaper, so
/// killing the direct children, reaping them and looking again reaches the whole tree.
unsafe fn end_all(command: pid_t, status: &mut Option<c_int>, ending: &sigset_t) {
    // SAFETY: plain system calls on stack memory.
    unsafe {
        let me = libc::getpid();
        let mut blind_rounds = 0;
        while reap(command, status) {
            if !kill_children(me) {
                // Without /proc the leftovers cannot be found; give up after a second rather
                // than never ending the call.
                blind_rounds += 1;
                if blind_rounds > 200 {
                    return;
                }
            }
            // Wait for a SIGCHLD, but not forever: a process re-parented after the scan is
            // found by the next one.
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 5_000_000,
            };
            libc::sigtimedwait(ending, std::ptr::null_mut(), &ts);
        }
    }
}

/// Parses a decimal number at the start of `b`.
fn parse_pid(b: &[u8]) -> Option<pid_t> {
    let mut v: pid_t = 0;
    let mut any = false;
    for &c in b {
        if !c.is_ascii_digit() {
            break;
        }
        v = v.checked_mul(10)?.checked_add(pid_t::from(c - b'0'))?;
        any = true;
    }
    any.then_some(v)
}

/// The parent pid from `/proc/<pid>/stat` (the field after the `)` closing the name, which
/// may itself contain spaces and parentheses).
unsafe fn parent_of(pid: &[u8]) -> Option<pid_t> {
    let mut path = [0u8; 40];
    let prefix = b"/proc/";
    let suffix = b"/stat\0";
    if prefix.len() + pid.len() + suffix.len() > path.len() {
        return None;
    }
    path[..prefix.len()].copy_from_slice(prefix);
    path[prefix.len()..prefix.len() + pid.len()].copy_from_slice(pid);
    path[prefix.len() + pid.len()..prefix.len() + pid.len() + suffix.len()].copy_from_slice(suffix);
    let mut buf = [0u8; 512];
    // SAFETY: `path` is NUL-terminated; read(2) fills at most `buf.len()` bytes.
    let n = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    let data = buf.get(..usize::try_from(n).ok()?)?;
    let close = data.iter().rposition(|&c| c == b')')?;
    // ") S 1234 …"
    parse_pid(data.get(close + 4..)?)
}

/// Returns false when `/proc` cannot be read.
unsafe fn kill_children(me: pid_t) -> bool {
    // SAFETY: getdents64 fills the aligned stack buffer; entries are parsed within `n` bytes.
    unsafe {
        let dir = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return false;
        }
        let mut buf = [0u64; 1024];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), 8 * buf.len());
            if n <= 0 {
                break;
            }
            let bytes = std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize);
            let mut off = 0usize;
            while off + 19 < bytes.len() {
                let reclen = usize::from(u16::from_ne_bytes([bytes[off + 16], bytes[off + 17]]));
                // The kernel never returns a record shorter than its header and a name.
                if reclen < 20 {
                    break;
                }
                let name_area = &bytes[off + 19..(off + reclen).min(bytes.len())];
                let len = name_area
                    .iter()
                    .position(|&c| c == 0)
                    .unwrap_or(name_area.len());
                let name = &name_area[..len];
                if let Some(pid) = parse_pid(name).filter(|_| name.iter().all(u8::is_ascii_digit))
                    && pid != me
                    && parent_of(name) == Some(me)
                {
                    libc::kill(pid, libc::SIGKILL);
                }
                off += reclen;
            }
        }
        libc::close(dir);
        true
    }
}

/// Exits with the command's status: its exit code, or the signal that ended it.
unsafe fn exit_as(status: Option<c_int>) -> ! {
    // SAFETY: plain system calls; `_exit` never returns.
    unsafe {
        match status {
            Some(st) if libc::WIFEXITED(st) => libc::_exit(libc::WEXITSTATUS(st)),
            Some(st) if libc::WIFSIGNALED(st) => {
                let sig = libc::WTERMSIG(st);
                // Die of the same signal, without a core dump of the supervisor.
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                libc::signal(sig, libc::SIG_DFL);
                let mut empty: sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                libc::kill(libc::getpid(), sig);
                libc::_exit(128 + sig)
            }
            _ => libc::_exit(125),
        }
    }
}
