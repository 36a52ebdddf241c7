//! A small seccomp filter that refuses sockets when network is off, and mount changes always.
//!
//! Landlock (ABI 4 to 9) only knows TCP bind and connect; UDP, raw, netlink and packet
//! sockets, and unix sockets to services outside the call, need this filter. It refuses
//! `socket(2)` for every family but `AF_UNIX` (and `AF_UNIX` too unless allowed), and
//! `io_uring_setup(2)`, whose rings could create sockets without calling `socket(2)`.
//! System calls of a foreign architecture (32-bit or x32 on x86-64), which would reach the
//! same kernel code under other numbers, kill the process.

use libc::sock_filter;

const LD_ABS_W: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
#[cfg(target_arch = "x86_64")]
const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// `offsetof(struct seccomp_data, …)`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0: u32 = 16;

#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

const fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

/// System calls that change the mount table or enter another namespace: refused always, so
/// a confined process cannot uncover what [`hide`](crate::hide) covered, even as root
/// (Landlock refuses mount changes too; this is a second wall). Numbers from 424 on are the
/// same on every architecture.
const MOUNT_CALLS: &[i64] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_unshare,
    libc::SYS_setns,
    428, // open_tree
    429, // move_mount
    430, // fsopen
    431, // fsconfig
    432, // fsmount
    433, // fspick
    442, // mount_setattr
    467, // open_tree_attr
];

/// The filter program. Always: mount and namespace calls are refused. Network off: sockets
/// other than unix ones (and unix ones unless `allow_unix`) and `io_uring_setup` are refused,
/// and system calls of a foreign architecture kill. Network on, those are allowed as before
/// (Landlock still refuses mount changes from them).
pub(crate) fn filter(network: bool, allow_unix: bool) -> Vec<sock_filter> {
    let foreign = if network {
        libc::SECCOMP_RET_ALLOW
    } else {
        libc::SECCOMP_RET_KILL_PROCESS
    };
    let unix_verdict = if allow_unix {
        libc::SECCOMP_RET_ALLOW
    } else {
        errno(libc::EACCES)
    };
    let mut prog = vec![
        stmt(LD_ABS_W, OFF_ARCH),
        jump(JEQ_K, NATIVE_ARCH, 1, 0),
        stmt(RET_K, foreign),
        stmt(LD_ABS_W, OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    prog.extend([jump(JGE_K, X32_SYSCALL_BIT, 0, 1), stmt(RET_K, foreign)]);
    for &nr in MOUNT_CALLS {
        prog.extend([
            jump(JEQ_K, nr as u32, 0, 1),
            stmt(RET_K, errno(libc::EPERM)),
        ]);
    }
    if !network {
        prog.extend([
            // socket(family, …): skip the four family checks for any other call.
            jump(JEQ_K, libc::SYS_socket as u32, 0, 4),
            stmt(LD_ABS_W, OFF_ARG0),
            jump(JEQ_K, libc::AF_UNIX as u32, 0, 1),
            stmt(RET_K, unix_verdict),
            stmt(RET_K, errno(libc::EACCES)),
            jump(JEQ_K, libc::SYS_io_uring_setup as u32, 0, 1),
            stmt(RET_K, errno(libc::EPERM)),
        ]);
    }
    prog.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
    prog
}
