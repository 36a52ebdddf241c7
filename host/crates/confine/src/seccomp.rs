//! A small seccomp filter: sockets when network is off; mount changes, kernel interfaces that
//! reach past the file rules (keyrings included), and changes to other processes always.
//!
//! Landlock (ABI 4 to 9) only knows TCP bind and connect; UDP, raw, netlink and packet
//! sockets, and unix sockets to services outside the call, need this filter. It refuses
//! `socket(2)` for every family but `AF_UNIX` (and `AF_UNIX` too unless allowed), and
//! `io_uring_setup(2)`, whose rings could create sockets without calling `socket(2)`.
//! Landlock has no rule for `setpriority(2)`, `prlimit(2)`, `ioprio_set(2)` or the
//! `sched_set*` calls on another process of the same user; this filter allows them only on
//! the caller itself. System calls of a foreign architecture (32-bit or x32 on x86-64),
//! which would reach the same kernel code under other numbers, kill the process.

use libc::sock_filter;

const LD_ABS_W: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
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

/// System calls that reach past the file rules or into the kernel: fanotify (watching, and
/// with permission events blocking, other processes' file accesses), file handles (opening a
/// file by handle bypasses the covers of [`hide`](crate::hide) and path lookup), BPF, perf
/// events, kernel modules and kexec. Refused always; most also need capabilities the
/// command no longer holds, so this is a second wall.
///
/// The keyring calls need no capability: the call shares the caller's session keyring and
/// the user's keyring, where credential helpers and filesystems keep tokens, and neither
/// Landlock nor a namespace separates them. `userfaultfd` lets a program stall the kernel
/// mid-copy, the usual way to widen a kernel race; no development tool needs it. `ptrace` is
/// left to Landlock, which already limits it to the call's own processes (a debugger run by
/// the call still works).
const KERNEL_CALLS: &[i64] = &[
    libc::SYS_fanotify_init,
    libc::SYS_fanotify_mark,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_userfaultfd,
];

/// `PRIO_PROCESS` and `IOPRIO_WHO_PROCESS`: a target that is one process.
const PRIO_PROCESS: u32 = 0;
const IOPRIO_WHO_PROCESS: u32 = 1;

/// Offset of the low 32 bits of argument `n` (little-endian: the only byte order built).
const fn arg(n: u32) -> u32 {
    OFF_ARG0 + 8 * n
}

/// System calls that change another process's scheduling, priority or limits, allowed only
/// when they name the caller itself: every argument listed (an `int` or `pid_t`, so its low
/// 32 bits are all the kernel reads) must equal its value. A thread id naming the caller is
/// refused too, since a filter cannot know it.
const SELF_ONLY: &[(i64, &[(u32, u32)])] = &[
    (
        libc::SYS_setpriority,
        &[(arg(0), PRIO_PROCESS), (arg(1), 0)],
    ),
    (
        libc::SYS_ioprio_set,
        &[(arg(0), IOPRIO_WHO_PROCESS), (arg(1), 0)],
    ),
    (libc::SYS_sched_setaffinity, &[(arg(0), 0)]),
    (libc::SYS_sched_setscheduler, &[(arg(0), 0)]),
    (libc::SYS_sched_setparam, &[(arg(0), 0)]),
    (libc::SYS_sched_setattr, &[(arg(0), 0)]),
];

/// `prlimit64(pid, resource, new, old)`: allowed for the caller itself (`pid` 0) or to read
/// (`new` NULL), refused otherwise: lowering Warden's limits could kill it, or make the
/// restore of protected paths fail.
fn prlimit_rule() -> [sock_filter; 8] {
    let eperm = errno(libc::EPERM);
    [
        stmt(LD_ABS_W, arg(0)),
        jump(JEQ_K, 0, 4, 0),
        stmt(LD_ABS_W, arg(2)),
        jump(JEQ_K, 0, 0, 3),
        stmt(LD_ABS_W, arg(2) + 4),
        jump(JEQ_K, 0, 0, 1),
        stmt(RET_K, libc::SECCOMP_RET_ALLOW),
        stmt(RET_K, eperm),
    ]
}

/// What runs for a system call allowed only on the caller: allowed when every `(offset,
/// value)` matches, refused otherwise.
fn self_only(conds: &[(u32, u32)]) -> Vec<sock_filter> {
    let k = conds.len();
    // [LD, JEQ]×k [RET ALLOW] [RET EPERM]
    let mut b = Vec::with_capacity(2 * k + 2);
    for (i, &(off, value)) in conds.iter().enumerate() {
        b.push(stmt(LD_ABS_W, off));
        b.push(jump(JEQ_K, value, 0, (2 * (k - i) - 1) as u8));
    }
    b.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
    b.push(stmt(RET_K, errno(libc::EPERM)));
    b
}

/// The filter program. Always: system calls of a foreign architecture (32-bit or x32 on
/// x86-64), which would reach the same kernel code under other numbers and past this filter,
/// kill; mount and namespace calls, [`KERNEL_CALLS`], and changes to other processes'
/// scheduling, priority and limits are refused. Network off: sockets other than unix ones
/// (and unix ones unless `allow_unix`) and `io_uring_setup` are refused.
///
/// The system calls handled are found by a binary search over their numbers rather than one
/// comparison after another: when the filter is installed the kernel runs it for every
/// system call number to cache the ones it always allows (with interrupts off, in the
/// process being started), so its length is paid about 450 times per call, and every
/// system call the program makes walks a few comparisons instead of all of them.
pub(crate) fn filter(network: bool, allow_unix: bool) -> Vec<sock_filter> {
    let foreign = libc::SECCOMP_RET_KILL_PROCESS;
    let mut prog = vec![
        stmt(LD_ABS_W, OFF_ARCH),
        jump(JEQ_K, NATIVE_ARCH, 1, 0),
        stmt(RET_K, foreign),
        stmt(LD_ABS_W, OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    prog.extend([jump(JGE_K, X32_SYSCALL_BIT, 0, 1), stmt(RET_K, foreign)]);
    prog.extend(search(&mut handlers(network, allow_unix)));
    prog
}

/// Each system call the filter handles, with what runs once its number matched (every path
/// of which returns).
fn handlers(network: bool, allow_unix: bool) -> Vec<(u32, Vec<sock_filter>)> {
    let eperm = errno(libc::EPERM);
    let mut h: Vec<(u32, Vec<sock_filter>)> = MOUNT_CALLS
        .iter()
        .chain(KERNEL_CALLS)
        .map(|&nr| (nr as u32, vec![stmt(RET_K, eperm)]))
        .collect();
    for &(nr, conds) in SELF_ONLY {
        h.push((nr as u32, self_only(conds)));
    }
    h.push((libc::SYS_prlimit64 as u32, prlimit_rule().to_vec()));
    if !network {
        let unix_verdict = if allow_unix {
            libc::SECCOMP_RET_ALLOW
        } else {
            errno(libc::EACCES)
        };
        h.push((
            libc::SYS_socket as u32,
            vec![
                stmt(LD_ABS_W, OFF_ARG0),
                jump(JEQ_K, libc::AF_UNIX as u32, 0, 1),
                stmt(RET_K, unix_verdict),
                stmt(RET_K, errno(libc::EACCES)),
            ],
        ));
        h.push((libc::SYS_io_uring_setup as u32, vec![stmt(RET_K, eperm)]));
    }
    h
}

/// Handlers this many or fewer are compared one after another.
const LINEAR: usize = 3;

/// A binary search of `handlers` by system call number (loaded in the accumulator), with
/// every number not found allowed. BPF jumps only forward: a node is `JGE middle` followed
/// by its lower half, then its upper half.
fn search(handlers: &mut [(u32, Vec<sock_filter>)]) -> Vec<sock_filter> {
    handlers.sort_by_key(|(nr, _)| *nr);
    node(handlers)
}

fn node(handlers: &[(u32, Vec<sock_filter>)]) -> Vec<sock_filter> {
    if handlers.len() <= LINEAR {
        let mut out = Vec::new();
        for (nr, body) in handlers {
            out.push(jump(JEQ_K, *nr, 0, offset(body.len())));
            out.extend(body);
        }
        out.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
        return out;
    }
    let mid = handlers.len() / 2;
    let lower = node(&handlers[..mid]);
    let upper = node(&handlers[mid..]);
    let mut out = vec![jump(JGE_K, handlers[mid].0, offset(lower.len()), 0)];
    out.extend(lower);
    out.extend(upper);
    out
}

/// A jump over `n` instructions. The whole program is a few hundred instructions at most
/// (a unit test checks every offset fits), far below the 255 a jump can skip.
fn offset(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program on one system call, as the kernel's interpreter would: the verdict,
    /// and how many instructions it took.
    fn run(prog: &[sock_filter], nr: i64, args: [u64; 6]) -> (u32, usize) {
        let mut data = Vec::new();
        data.extend((nr as i32).to_ne_bytes());
        data.extend(NATIVE_ARCH.to_ne_bytes());
        data.extend(0u64.to_ne_bytes());
        for a in args {
            data.extend(a.to_ne_bytes());
        }
        let (mut pc, mut acc, mut steps) = (0usize, 0u32, 0);
        loop {
            steps += 1;
            let i = prog[pc];
            match i.code {
                LD_ABS_W => {
                    let k = i.k as usize;
                    acc = u32::from_ne_bytes(data[k..k + 4].try_into().unwrap());
                    pc += 1;
                }
                JEQ_K | JGE_K => {
                    let taken = if i.code == JEQ_K {
                        acc == i.k
                    } else {
                        acc >= i.k
                    };
                    pc += 1 + usize::from(if taken { i.jt } else { i.jf });
                }
                RET_K => return (i.k, steps),
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    fn verdict(prog: &[sock_filter], nr: i64, args: [u64; 6]) -> u32 {
        run(prog, nr, args).0
    }

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const OTHER: u64 = 4242;

    #[test]
    fn other_processes_are_refused_and_the_caller_allowed() {
        let eperm = errno(libc::EPERM);
        for network in [false, true] {
            let p = filter(network, false);
            let v = |nr, args| verdict(&p, nr, args);
            assert_eq!(v(libc::SYS_setpriority, [0, 0, 5, 0, 0, 0]), ALLOW);
            assert_eq!(v(libc::SYS_setpriority, [0, OTHER, 5, 0, 0, 0]), eperm);
            // A process group or user (who 0: the caller's own) reaches other processes.
            assert_eq!(v(libc::SYS_setpriority, [1, 0, 5, 0, 0, 0]), eperm);
            assert_eq!(v(libc::SYS_setpriority, [2, 0, 5, 0, 0, 0]), eperm);
            assert_eq!(v(libc::SYS_ioprio_set, [1, 0, 0, 0, 0, 0]), ALLOW);
            assert_eq!(v(libc::SYS_ioprio_set, [1, OTHER, 0, 0, 0, 0]), eperm);
            assert_eq!(v(libc::SYS_ioprio_set, [2, 0, 0, 0, 0, 0]), eperm);
            for nr in [
                libc::SYS_sched_setaffinity,
                libc::SYS_sched_setscheduler,
                libc::SYS_sched_setparam,
                libc::SYS_sched_setattr,
            ] {
                assert_eq!(v(nr, [0, 8, 1, 0, 0, 0]), ALLOW, "{nr}");
                assert_eq!(v(nr, [OTHER, 8, 1, 0, 0, 0]), eperm, "{nr}");
            }
            // prlimit64(pid, resource, new, old): itself, or reading another's.
            assert_eq!(v(libc::SYS_prlimit64, [0, 7, 0x1000, 0, 0, 0]), ALLOW);
            assert_eq!(v(libc::SYS_prlimit64, [OTHER, 7, 0, 0x1000, 0, 0]), ALLOW);
            assert_eq!(v(libc::SYS_prlimit64, [OTHER, 7, 0x1000, 0, 0, 0]), eperm);
            assert_eq!(v(libc::SYS_prlimit64, [OTHER, 7, 1 << 40, 0, 0, 0]), eperm);
            // The upper half of an int argument is not the kernel's: pid 0 stays pid 0.
            assert_eq!(
                v(libc::SYS_sched_setaffinity, [1 << 32, 8, 1, 0, 0, 0]),
                ALLOW
            );
            for &nr in KERNEL_CALLS.iter().chain(MOUNT_CALLS) {
                assert_eq!(v(nr, [0; 6]), eperm, "{nr}");
            }
            assert_eq!(v(libc::SYS_read, [0; 6]), ALLOW);
            assert_eq!(v(libc::SYS_getpid, [0; 6]), ALLOW);
        }
        let off = filter(false, false);
        assert_eq!(
            verdict(
                &off,
                libc::SYS_socket,
                [libc::AF_INET as u64, 1, 0, 0, 0, 0]
            ),
            errno(libc::EACCES)
        );
        let on = filter(true, false);
        assert_eq!(
            verdict(&on, libc::SYS_socket, [libc::AF_INET as u64, 1, 0, 0, 0, 0]),
            ALLOW
        );
    }

    /// The filter as it was written before the binary search: one comparison per system
    /// call, in order. The search must give the same verdict for every call and argument.
    fn linear_reference(network: bool, allow_unix: bool) -> Vec<sock_filter> {
        let foreign = libc::SECCOMP_RET_KILL_PROCESS;
        let mut prog = vec![
            stmt(LD_ABS_W, OFF_ARCH),
            jump(JEQ_K, NATIVE_ARCH, 1, 0),
            stmt(RET_K, foreign),
            stmt(LD_ABS_W, OFF_NR),
        ];
        #[cfg(target_arch = "x86_64")]
        prog.extend([jump(JGE_K, X32_SYSCALL_BIT, 0, 1), stmt(RET_K, foreign)]);
        for (nr, body) in handlers(network, allow_unix) {
            prog.push(jump(JEQ_K, nr, 0, body.len() as u8));
            prog.extend(body);
        }
        prog.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
        prog
    }

    #[test]
    fn the_search_gives_the_verdicts_of_one_comparison_after_another() {
        let argsets: [[u64; 6]; 6] = [
            [0; 6],
            [OTHER, 0, 0, 0, 0, 0],
            [1, 0, 0, 0, 0, 0],
            [0, OTHER, 5, 0, 0, 0],
            [libc::AF_UNIX as u64, 1, 0, 0, 0, 0],
            [libc::AF_INET6 as u64, 0x1000, 0, 0x1000, 0, 0],
        ];
        for network in [false, true] {
            for unix in [false, true] {
                let fast = filter(network, unix);
                let slow = linear_reference(network, unix);
                // Every jump lands inside the program (none was clamped).
                assert!(fast.len() < 255, "{} instructions", fast.len());
                for (pc, i) in fast.iter().enumerate() {
                    if i.code == JEQ_K || i.code == JGE_K {
                        assert!(pc + 1 + usize::from(i.jt.max(i.jf)) < fast.len(), "{pc}");
                    }
                }
                for nr in 0..1024i64 {
                    for args in argsets {
                        assert_eq!(
                            verdict(&fast, nr, args),
                            verdict(&slow, nr, args),
                            "nr {nr} args {args:?} network {network} unix {unix}"
                        );
                    }
                }
                // Walked for a call it lets through: a handful of instructions, not all.
                assert!(
                    steps(&fast, libc::SYS_read) <= 16,
                    "{}",
                    steps(&fast, libc::SYS_read)
                );
            }
        }
    }

    /// How many instructions the program runs for system call `nr` (no arguments).
    fn steps(prog: &[sock_filter], nr: i64) -> usize {
        run(prog, nr, [0; 6]).1
    }
}
