//! Hiding denied paths in a private mount namespace.
//!
//! Landlock can only grant, so a denied path inside a granted tree otherwise has to be
//! carved out (see [`plan`](crate::plan)), which leaves new entries of the carved directories
//! unusable. Where the kernel lets this process create a mount namespace (as root directly,
//! otherwise inside a new user namespace that maps only the caller's own uid and gid), the
//! command process instead covers each denied path before Landlock is applied: a denied
//! directory with an empty read-only tmpfs, any other denied entry with a read-only, `nodev`
//! bind mount of `/dev/null` (so opening it fails with `EACCES`). The tree around it is then
//! granted whole.
//!
//! Everything the command process needs is prepared here, before the fork; the code that
//! runs after it ([`enter`], [`cover_all`]) makes raw system calls on that memory only.
//! Mount points are looked up again in the new namespace (a descriptor opened before would
//! name a mount of the caller's namespace, where the kernel refuses to mount), with
//! `openat2(RESOLVE_NO_SYMLINKS)` so a path swapped for a symlink cannot redirect a mount, and
//! must still be the very file (device and inode) that was planned: otherwise the spawn fails.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use libc::c_int;

// Numbers of the system calls added after 4.20 are the same on every architecture.
const SYS_OPEN_TREE: libc::c_long = 428;
const SYS_MOVE_MOUNT: libc::c_long = 429;
const SYS_OPENAT2: libc::c_long = 437;
const SYS_MOUNT_SETATTR: libc::c_long = 442;

const OPEN_TREE_CLONE: u32 = 1;
const OPEN_TREE_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: u32 = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// What is mounted on a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mount {
    /// Hidden: an empty tmpfs over a directory, `/dev/null` over anything else.
    Cover,
    /// The path bound onto itself read-only: it cannot be written, and, being a mount point,
    /// not removed, renamed or replaced (`EBUSY`).
    ReadOnly,
    /// The path bound onto itself as it is: still writable inside, but as a mount point it
    /// cannot be removed, renamed or replaced.
    Pin,
    /// The path bound onto itself writable again, below a read-only one (a writable grant
    /// inside a read-only directory).
    Writable,
    /// Another file (a sanitised copy) bound read-only over the path.
    Replace(CString),
}

/// One path to cover, as planned.
#[derive(Debug)]
pub(crate) struct Target {
    pub path: CString,
    pub dev: u64,
    pub ino: u64,
    pub dir: bool,
    pub mount: Mount,
}

impl Target {
    /// The entry at `path` itself (not followed), unless it is a symlink or gone.
    pub(crate) fn of(path: &Path) -> io::Result<Option<Target>> {
        use std::os::unix::fs::MetadataExt;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            return Ok(None);
        }
        let path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        Ok(Some(Target {
            path,
            dev: meta.dev(),
            ino: meta.ino(),
            dir: meta.is_dir(),
            mount: Mount::Cover,
        }))
    }

    /// Like [`of`](Self::of), with another kind of mount.
    pub(crate) fn with(path: &Path, mount: Mount) -> io::Result<Option<Target>> {
        Ok(Self::of(path)?.map(|t| Target { mount, ..t }))
    }
}

/// How the command process enters its namespace, prepared before the fork.
#[derive(Debug)]
pub(crate) struct Namespace {
    /// Root needs no user namespace (and keeps its view of file owners).
    as_root: bool,
    /// `"<uid> <uid> 1"`, `"<gid> <gid> 1"`.
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Namespace {
    pub(crate) fn for_this_process() -> Namespace {
        // SAFETY: these calls cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Namespace {
            as_root: uid == 0,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }
}

/// What the command process covers.
#[derive(Debug)]
pub(crate) struct Plan {
    pub ns: Namespace,
    pub targets: Vec<Target>,
}

fn check(r: c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
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

/// Enters a new mount namespace (and user namespace unless root) whose mounts do not
/// propagate anywhere. Runs after a fork: raw system calls only.
///
/// # Safety
/// Only in a single-threaded (freshly forked) process.
pub(crate) unsafe fn enter(ns: &Namespace) -> io::Result<()> {
    // SAFETY: plain system calls on memory prepared before the fork.
    unsafe {
        if ns.as_root {
            check(libc::unshare(libc::CLONE_NEWNS))?;
        } else {
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
            write_file(c"/proc/self/uid_map", &ns.uid_map)?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/gid_map", &ns.gid_map)?;
        }
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))
    }
}

struct Fd(c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closes a descriptor this process owns.
        unsafe { libc::close(self.0) };
    }
}

fn fd(r: libc::c_long) -> io::Result<Fd> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(Fd(r as c_int))
    }
}

/// Writes `/proc/self/fd/<n>` with a NUL into `buf`.
fn fd_path(n: c_int, buf: &mut [u8; 32]) -> &std::ffi::CStr {
    let prefix = b"/proc/self/fd/";
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 12];
    let mut len = 0;
    let mut v = n.unsigned_abs();
    loop {
        digits[len] = b'0' + (v % 10) as u8;
        len += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[prefix.len() + i] = digits[len - 1 - i];
    }
    buf[prefix.len() + len] = 0;
    // The buffer holds exactly one NUL, just written.
    std::ffi::CStr::from_bytes_until_nul(&buf[..]).unwrap_or(c"/")
}

/// Covers one target. Runs after a fork: raw system calls only.
unsafe fn cover(t: &Target) -> io::Result<()> {
    // SAFETY: plain system calls on stack memory and memory prepared before the fork.
    unsafe {
        let how = OpenHow {
            flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
            mode: 0,
            resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        let target = fd(libc::syscall(
            SYS_OPENAT2,
            libc::AT_FDCWD,
            t.path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        ))?;
        let mut st: libc::stat = std::mem::zeroed();
        check(libc::fstat(target.0, &mut st))?;
        let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        if st.st_dev != t.dev || st.st_ino != t.ino || is_dir != t.dir {
            // Replaced since it was planned: the rules were made for the old file.
            return Err(io::Error::from_raw_os_error(libc::ESTALE));
        }
        match &t.mount {
            Mount::Cover if t.dir => {
                let mut buf = [0u8; 32];
                let at = fd_path(target.0, &mut buf);
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    at.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"mode=0,size=4k,nr_inodes=2".as_ptr().cast(),
                ))
            }
            Mount::Cover => {
                let null = fd(libc::syscall(
                    SYS_OPEN_TREE,
                    libc::AT_FDCWD,
                    c"/dev/null".as_ptr(),
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC,
                ))?;
                let hidden =
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
                attach(&null, &target, hidden, 0)
            }
            Mount::Replace(source) => {
                let copy = fd(libc::syscall(
                    SYS_OPEN_TREE,
                    libc::AT_FDCWD,
                    source.as_ptr(),
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC,
                ))?;
                let fixed =
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
                attach(&copy, &target, fixed, 0)
            }
            Mount::ReadOnly | Mount::Pin | Mount::Writable => {
                // A clone of the mount at the path itself (not its submounts), attached back
                // onto the same path: the same files, now behind a mount point of their own.
                let itself = fd(libc::syscall(
                    SYS_OPEN_TREE,
                    target.0,
                    c"".as_ptr(),
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | libc::AT_EMPTY_PATH as u32,
                ))?;
                let (set, clear) = match t.mount {
                    Mount::ReadOnly => (MOUNT_ATTR_RDONLY, 0),
                    Mount::Writable => (0, MOUNT_ATTR_RDONLY),
                    _ => (0, 0),
                };
                attach(&itself, &target, set, clear)
            }
        }
    }
}

/// Sets attributes on the detached mount `tree` and attaches it onto `target`. Runs after a
/// fork: raw system calls only.
unsafe fn attach(tree: &Fd, target: &Fd, set: u64, clear: u64) -> io::Result<()> {
    // SAFETY: plain system calls on stack memory and descriptors this process owns.
    unsafe {
        if set | clear != 0 {
            let attr = MountAttr {
                attr_set: set,
                attr_clr: clear,
                propagation: 0,
                userns_fd: 0,
            };
            let r = libc::syscall(
                SYS_MOUNT_SETATTR,
                tree.0,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            );
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let r = libc::syscall(
            SYS_MOVE_MOUNT,
            tree.0,
            c"".as_ptr(),
            target.0,
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        );
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Covers every target, then re-enters the working directory by name, so a working
/// directory inside a covered directory is the empty cover, not what it hides.
///
/// # Safety
/// Only after [`enter`], in a freshly forked process.
pub(crate) unsafe fn cover_all(plan: &Plan) -> io::Result<()> {
    // SAFETY: plain system calls on stack memory and memory prepared before the fork.
    unsafe {
        let mut cwd = [0u8; 4096];
        let have_cwd = !libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null();
        for t in &plan.targets {
            cover(t)?;
        }
        if have_cwd {
            check(libc::chdir(cwd.as_ptr().cast()))?;
        }
        Ok(())
    }
}

/// Whether this process can hide paths with a private mount namespace: a forked child tries
/// [`enter`] and covers a scratch directory of its own once per process.
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(probe)
}

fn probe() -> bool {
    let ns = Namespace::for_this_process();
    // SAFETY: the child makes raw system calls on memory prepared before the fork and ends
    // with `_exit`; the parent only waits for it.
    unsafe {
        match libc::fork() {
            -1 => false,
            0 => {
                let ok = enter(&ns).is_ok()
                    && libc::mount(
                        c"tmpfs".as_ptr(),
                        c"/".as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        c"mode=0,size=4k,nr_inodes=2".as_ptr().cast(),
                    ) == 0;
                libc::_exit(if ok { 0 } else { 1 })
            }
            pid => {
                let mut st: c_int = 0;
                loop {
                    let r = libc::waitpid(pid, &mut st, 0);
                    if r == pid {
                        break;
                    }
                    if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        return false;
                    }
                }
                libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
            }
        }
    }
}
