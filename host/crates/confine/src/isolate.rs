//! Keeping a confined call away from the processes outside it.
//!
//! - **A PID namespace of its own.** The supervisor enters a new PID namespace for its
//!   children (inside a new user namespace mapping only its own uid and gid, unless root) and
//!   starts the namespace's init with `clone(CLONE_VM)` on a small stack of its own (no copy
//!   of the address space); the command is forked next, as process 2. In its private mount
//!   namespace the command mounts a fresh `/proc`, which lists only the call's processes, and
//!   grants it to Landlock as the caller's `/proc` grant was. Init ignores `SIGCHLD` (the
//!   kernel reaps what is re-parented to it) and waits for ever; it dies with the supervisor
//!   (`PR_SET_PDEATHSIG`), and its death kills every process of the namespace, so ending a
//!   call needs no `/proc` scan. Init never runs the caller's code, but its memory is the
//!   caller's: the caller's command line is wiped from it, since `/proc/1/cmdline` is
//!   readable without the ptrace check that guards `environ` and `mem`.
//! - **No capabilities.** The command drops every capability (bounding set, ambient,
//!   inheritable, permitted, effective) after its mounts are made, and, where it may
//!   (`CAP_SETPCAP`: root, or inside the user namespace), locks the securebits so that
//!   executing a program as uid 0 does not give them back.
//! - **No inherited descriptors.** Every descriptor above 2 is closed on exec.
//!
//! Everything that runs after the fork is a raw system call on memory prepared before it.

use std::ffi::CStr;
use std::io;
use std::sync::OnceLock;

use libc::{c_int, pid_t};

impl crate::Confinement {
    /// Fails [`confine`](crate::Confinement::confine) with
    /// [`ConfineError::NoProcessIsolation`](crate::ConfineError::NoProcessIsolation) where a
    /// call cannot get a PID namespace of its own (see [`isolates_processes`](crate::isolates_processes)),
    /// instead of running it with the caller's `/proc` (off by default).
    pub fn require_process_isolation(mut self, required: bool) -> Self {
        self.require_process_isolation = required;
        self
    }
}

/// How the supervisor makes the PID namespace, prepared before the fork.
#[derive(Debug)]
pub(crate) struct PidPlan {
    /// Root needs no user namespace.
    as_root: bool,
    /// `"<uid> <uid> 1"`, `"<gid> <gid> 1"`.
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Landlock rights on the fresh `/proc` (those the caller granted on `/proc`, or none);
    /// `None` when no grant reaches `/proc` at all, so it need not be replaced.
    proc_access: Option<u64>,
    /// The caller's command line in memory (`arg_start`, `arg_end`), wiped in init's copy.
    args: Option<(usize, usize)>,
}

impl PidPlan {
    pub(crate) fn for_this_process(proc_access: Option<u64>) -> PidPlan {
        // SAFETY: these calls cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        PidPlan {
            as_root: uid == 0,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            proc_access,
            args: command_line(),
        }
    }

    /// Whether Warden runs as root (no user namespace is made).
    pub(crate) fn as_root(&self) -> bool {
        self.as_root
    }

    /// Whether the command mounts its own `/proc` (and so needs a mount namespace).
    pub(crate) fn mounts_proc(&self) -> bool {
        self.proc_access.is_some()
    }
}

/// Bytes of init's stack: it makes four system calls and waits.
pub(crate) const INIT_STACK: usize = 16 << 10;

fn check(r: c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_long(r: libc::c_long) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Where this process's command line lies (`/proc/self/stat` fields 48 and 49), read once.
fn command_line() -> Option<(usize, usize)> {
    static ARGS: OnceLock<Option<(usize, usize)>> = OnceLock::new();
    *ARGS.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the name, which may hold spaces, start with field 3.
        let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(48 - 3);
        let start: usize = fields.next()?.parse().ok()?;
        let end: usize = fields.next()?.parse().ok()?;
        (start < end && end - start < (1 << 20)).then_some((start, end))
    })
}

unsafe fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: plain system calls on a NUL-terminated path and a borrowed buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(err);
        }
        Ok(())
    }
}

/// Makes the children this process forks from now on members of a new PID namespace.
///
/// # Safety
/// Only in a single-threaded (freshly forked) process.
pub(crate) unsafe fn enter_pid_namespace(p: &PidPlan) -> io::Result<()> {
    // SAFETY: plain system calls on memory prepared before the fork.
    unsafe {
        if p.as_root {
            return check(libc::unshare(libc::CLONE_NEWPID));
        }
        check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID))?;
        write_file(c"/proc/self/uid_map", &p.uid_map)?;
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/gid_map", &p.gid_map)
    }
}

/// Maps the caller's uid and gid in the user namespace the process was cloned into (nothing
/// as root, which makes none).
///
/// # Safety
/// Only in the cloned child, before it changes anything else.
pub(crate) unsafe fn map_ids(p: &PidPlan) -> io::Result<()> {
    if p.as_root {
        return Ok(());
    }
    // SAFETY: plain system calls on memory prepared before the clone.
    unsafe {
        write_file(c"/proc/self/uid_map", &p.uid_map)?;
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/gid_map", &p.gid_map)
    }
}

/// The namespace's init. It shares the supervisor's memory (and so its `errno`), so it makes
/// only calls that succeed, and never returns from the last one.
extern "C" fn init_main(_: *mut libc::c_void) -> c_int {
    // SAFETY: plain system calls with constant arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // The caller's pipes must reach end-of-file without waiting for init.
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        loop {
            // No handler is installed, so no signal ends this wait; SIGKILL ends init.
            libc::syscall(
                libc::SYS_ppoll,
                std::ptr::null_mut::<libc::pollfd>(),
                0usize,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            );
        }
    }
}

/// Starts the namespace's init on `stack`, which must stay untouched while init lives.
///
/// # Safety
/// Only after [`enter_pid_namespace`], in a single-threaded (freshly forked) process, with
/// `stack` pointing to `INIT_STACK` bytes this process does not otherwise use.
pub(crate) unsafe fn start_init(p: &PidPlan, stack: *mut u8) -> io::Result<pid_t> {
    // SAFETY: the command line region comes from the kernel's own account of this
    // process's memory (unchanged since the fork); the stack is ours, and init touches
    // nothing else of the shared memory.
    unsafe {
        if let Some((start, end)) = p.args {
            std::ptr::write_bytes(start as *mut u8, 0, end - start);
        }
        let top = (stack as usize + INIT_STACK) & !15;
        let pid = libc::clone(
            init_main,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::null_mut(),
        );
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(pid)
    }
}

/// Enters a new mount namespace whose mounts propagate nowhere (the user namespace, if any,
/// is the supervisor's).
///
/// # Safety
/// Only in a single-threaded (freshly forked) process.
pub(crate) unsafe fn enter_mount_namespace() -> io::Result<()> {
    // SAFETY: plain system calls with constant arguments.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWNS))?;
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))
    }
}

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// Mounts the namespace's own `/proc` over the caller's and grants it to `ruleset` as the
/// caller's was (the ruleset's rule for `/proc` names the caller's instance).
///
/// # Safety
/// Only after [`enter_mount_namespace`], in the namespace's process 2.
pub(crate) unsafe fn mount_proc(p: &PidPlan, ruleset: c_int) -> io::Result<()> {
    // SAFETY: plain system calls on stack memory.
    unsafe {
        check(libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ))?;
        let access = match p.proc_access {
            Some(a) if a != 0 && ruleset >= 0 => a,
            _ => return Ok(()),
        };
        let fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let rule = PathBeneath {
            allowed_access: access,
            parent_fd: fd,
        };
        const LANDLOCK_RULE_PATH_BENEATH: c_int = 1;
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        );
        let err = io::Error::last_os_error();
        libc::close(fd);
        if r != 0 {
            return Err(err);
        }
        Ok(())
    }
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAP_VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;

/// Drops every capability for good. Run after the mounts, which need `CAP_SYS_ADMIN`.
///
/// # Safety
/// Only in a single-threaded (freshly forked) process.
pub(crate) unsafe fn drop_capabilities() -> io::Result<()> {
    // SAFETY: plain system calls on stack memory of the sizes the kernel expects.
    unsafe {
        let mut header = CapHeader {
            version: CAP_VERSION_3,
            pid: 0,
        };
        let none = CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        };
        let mut data = [none; 2];
        check_long(libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        ))?;
        // Without CAP_SETPCAP (not root, no user namespace) the bounding set and securebits
        // cannot change; such a process holds nothing to lose, and no_new_privs keeps exec
        // from granting anything.
        if data[0].effective & (1 << CAP_SETPCAP) != 0 {
            for cap in 0..64 {
                if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                    let e = io::Error::last_os_error();
                    // EINVAL: past the last capability this kernel knows.
                    if e.raw_os_error() == Some(libc::EINVAL) {
                        break;
                    }
                    return Err(e);
                }
            }
            let bits = libc::SECBIT_NOROOT
                | libc::SECBIT_NOROOT_LOCKED
                | libc::SECBIT_NO_SETUID_FIXUP
                | libc::SECBIT_NO_SETUID_FIXUP_LOCKED
                | libc::SECBIT_KEEP_CAPS_LOCKED
                | libc::SECBIT_NO_CAP_AMBIENT_RAISE
                | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
            check(libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0))?;
        }
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ))?;
        let mut header = CapHeader {
            version: CAP_VERSION_3,
            pid: 0,
        };
        let data = [none; 2];
        check_long(libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        ))
    }
}

/// Marks every descriptor above standard error close-on-exec: only stdin, stdout and stderr
/// reach the program (a descriptor the caller opened without `O_CLOEXEC` would otherwise
/// hand it a file or socket the rules refuse).
///
/// # Safety
/// Only in a freshly forked process.
pub(crate) unsafe fn close_inherited() -> io::Result<()> {
    // SAFETY: close_range touches no memory.
    unsafe {
        check_long(libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ))
    }
}

/// Whether this process can give each call a PID namespace with its own `/proc`: a forked
/// child tries it once per process.
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(probe)
}

unsafe fn wait_ok(pid: pid_t) -> bool {
    // SAFETY: waitpid writes into `st` only.
    unsafe {
        let mut st: c_int = 0;
        loop {
            let r = libc::waitpid(pid, &mut st, 0);
            if r == pid {
                return libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0;
            }
            if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
    }
}

fn probe() -> bool {
    let plan = PidPlan::for_this_process(Some(0));
    // SAFETY: the children make raw system calls on memory prepared before the fork and end
    // with `_exit`; the parent only waits.
    unsafe {
        match libc::fork() {
            -1 => false,
            0 => {
                if enter_pid_namespace(&plan).is_err() {
                    libc::_exit(1);
                }
                let ok = match libc::fork() {
                    -1 => false,
                    0 => {
                        let ok = enter_mount_namespace().is_ok() && mount_proc(&plan, -1).is_ok();
                        libc::_exit(if ok { 0 } else { 1 })
                    }
                    pid => wait_ok(pid),
                };
                libc::_exit(if ok { 0 } else { 1 })
            }
            pid => wait_ok(pid),
        }
    }
}
