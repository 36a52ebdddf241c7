//! Ending every running call when the process that started it dies.
//!
//! A call started by [`Confinement::spawn`](crate::Confinement::spawn) is process 1 of its own
//! PID namespace, and nothing else watches it: while the caller lives, the caller waits for it
//! and ends it at its deadline. If the caller is killed in the middle of a call, a program that
//! never exits would run on, confined but unattended, holding whatever it was given.
//!
//! The reaper is one small process per caller, started with the first spawned call. It shares
//! the caller's memory (`CLONE_VM`, so starting it copies nothing), keeps none of the caller's
//! descriptors but its end of a socket pair, and runs a loop of plain system calls on its own
//! stack: it never allocates, locks or touches the caller's data. Each spawned call's pidfd is
//! sent to it over the socket. When the caller dies, for any reason, the kernel closes the
//! caller's end of the socket; the reaper reads end-of-file, kills process 1 of every call it
//! holds (which ends each call's whole namespace) and exits. A call that ends normally is
//! noticed through its pidfd and forgotten.
//!
//! It holds at most [`MAX_CALLS`] calls at once; past that a call runs unwatched (as it would
//! without a reaper), which no real session approaches.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};

use libc::{c_int, c_void};

/// Most calls watched at once.
pub(crate) const MAX_CALLS: usize = 1024;

/// Stack of the reaper's loop: the poll set and the watched descriptors live on it.
const STACK: usize = 128 << 10;

struct Reaper {
    /// The caller's end of the socket; sends are serialised so descriptors do not interleave.
    sock: Mutex<OwnedFd>,
}

fn reaper() -> Option<&'static Reaper> {
    static REAPER: OnceLock<Option<Reaper>> = OnceLock::new();
    REAPER.get_or_init(|| start().ok()).as_ref()
}

/// Hands the reaper a spawned call's pidfd, so the call is killed if this process dies before
/// it ends. Returns whether the call is watched (false where no reaper could be started).
pub(crate) fn watch(pidfd: BorrowedFd<'_>) -> bool {
    let Some(r) = reaper() else {
        return false;
    };
    let Ok(sock) = r.sock.lock() else {
        return false;
    };
    send_fd(sock.as_raw_fd(), pidfd.as_raw_fd()).is_ok()
}

/// A message header for one byte of `iov` and the control buffer `space` (aligned for
/// `cmsghdr`, room for one descriptor). Pure: the reaper builds its own with it too.
fn one_descriptor(iov: &mut libc::iovec, space: &mut [u64; 4]) -> libc::msghdr {
    // SAFETY: msghdr is plain data, for which all zeroes is a valid value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(space);
    msg
}

fn send_fd(sock: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut space = [0u64; 4];
    let mut msg = one_descriptor(&mut iov, &mut space);
    // SAFETY: every pointer in `msg` points at live locals, and the control buffer is large
    // enough for CMSG_SPACE(sizeof(int)).
    unsafe {
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<c_int>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<c_int>(), fd);
        loop {
            if libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }
}

fn start() -> io::Result<Reaper> {
    if !RAW_SYSCALLS {
        return Err(io::Error::from(io::ErrorKind::Unsupported));
    }
    let mut pair = [0 as c_int; 2];
    // SAFETY: socketpair writes two descriptors into `pair`.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    // SAFETY: a fresh anonymous mapping. It is never unmapped: the reaper runs on it for as
    // long as it lives, which may be longer than this process.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let top = ((base as usize + STACK) & !15) as *mut c_void;
    // The descriptor number travels by value: the reaper reads nothing of ours after it starts.
    let arg = theirs.as_raw_fd() as usize as *mut c_void;
    // SAFETY: the child runs `reaper_main` on the stack mapped above with the caller's memory,
    // making only system calls on its own stack (see the module docs). Every signal is blocked
    // across the clone so no handler of the caller runs in it; it keeps them blocked. Exit
    // signal 0: it never exits while this process lives, and is reaped by whoever adopts it.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(reaper_main, top, libc::CLONE_VM, arg);
        let e = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            libc::munmap(base, STACK);
            return Err(e);
        }
        pid
    };
    let _ = pid;
    // The reaper has its own copy of the descriptor table; ours of its end would keep the
    // socket open after we die.
    drop(theirs);
    Ok(Reaper {
        sock: Mutex::new(ours),
    })
}

/// A system call made without the C library: its wrappers write `errno`, which lives in the
/// caller's thread-local storage, and the reaper runs beside that thread (it may even have
/// exited, its storage freed). Returns the kernel's result: negative errno on failure.
#[inline(always)]
unsafe fn sys(nr: libc::c_long, a: [usize; 5]) -> isize {
    let ret: isize;
    // SAFETY: a plain system call; the kernel reads the arguments the caller vouches for.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3], in("r8") a[4],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") a[0] as isize => ret,
            in("x1") a[1], in("x2") a[2], in("x3") a[3], in("x4") a[4],
            options(nostack),
        );
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            let _ = (nr, a);
            ret = -(libc::ENOSYS as isize);
        }
    }
    ret
}

/// Whether [`sys`] exists for this architecture.
const RAW_SYSCALLS: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

extern "C" fn reaper_main(arg: *mut c_void) -> c_int {
    let sock = arg as usize;
    // SAFETY: only raw system calls on this function's own stack (see the module docs).
    unsafe {
        // Keep only the socket: copies of the caller's descriptors would hold its pipes and
        // sockets open after it dies.
        if sock > 0 {
            sys(libc::SYS_close_range, [0, sock - 1, 0, 0, 0]);
        }
        sys(
            libc::SYS_close_range,
            [sock + 1, u32::MAX as usize, 0, 0, 0],
        );
        // Not in the caller's process group or session: a terminal's ^C or a group kill aimed
        // at the caller must leave the reaper alive to do its work.
        sys(libc::SYS_setsid, [0; 5]);
        let mut held = [-1 as c_int; MAX_CALLS];
        let mut n = 0usize;
        let mut fds = [libc::pollfd {
            fd: -1,
            events: 0,
            revents: 0,
        }; MAX_CALLS + 1];
        loop {
            fds[0] = libc::pollfd {
                fd: sock as c_int,
                events: libc::POLLIN,
                revents: 0,
            };
            for (slot, &fd) in fds[1..].iter_mut().zip(&held[..n]) {
                *slot = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
            }
            let ready = sys(libc::SYS_ppoll, [fds.as_mut_ptr() as usize, n + 1, 0, 0, 8]);
            if ready < 0 {
                continue;
            }
            // Calls that ended: forget them (swap-remove, walking down so indices hold).
            for i in (0..n).rev() {
                if fds[i + 1].revents != 0 {
                    sys(libc::SYS_close, [held[i] as usize, 0, 0, 0, 0]);
                    n -= 1;
                    held[i] = held[n];
                    held[n] = -1;
                }
            }
            if fds[0].revents == 0 {
                continue;
            }
            match receive(sock) {
                Received::Fd(fd) if n < MAX_CALLS => {
                    held[n] = fd;
                    n += 1;
                }
                Received::Fd(fd) => {
                    sys(libc::SYS_close, [fd as usize, 0, 0, 0, 0]);
                }
                Received::Nothing => {}
                Received::Closed => {
                    for &fd in &held[..n] {
                        sys(
                            libc::SYS_pidfd_send_signal,
                            [fd as usize, libc::SIGKILL as usize, 0, 0, 0],
                        );
                    }
                    loop {
                        sys(libc::SYS_exit_group, [0; 5]);
                    }
                }
            }
        }
    }
}

enum Received {
    Fd(c_int),
    Nothing,
    Closed,
}

/// One message from the caller. Runs in the reaper: raw system calls on its own stack only.
unsafe fn receive(sock: usize) -> Received {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut space = [0u64; 4];
    let mut msg = one_descriptor(&mut iov, &mut space);
    // SAFETY: as in `send_fd`; recvmsg writes only into the buffers given. CMSG_* are pure
    // arithmetic on the header.
    unsafe {
        let got = sys(
            libc::SYS_recvmsg,
            [
                sock,
                (&mut msg as *mut libc::msghdr) as usize,
                libc::MSG_CMSG_CLOEXEC as usize,
                0,
                0,
            ],
        );
        if got == 0 {
            return Received::Closed;
        }
        if got < 0 {
            let e = -got as c_int;
            return if e == libc::EINTR || e == libc::EAGAIN {
                Received::Nothing
            } else {
                Received::Closed
            };
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Received::Nothing;
        }
        Received::Fd(std::ptr::read_unaligned(
            libc::CMSG_DATA(cmsg).cast::<c_int>(),
        ))
    }
}
