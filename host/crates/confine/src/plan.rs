//! Turning path grants into Landlock rules.
//!
//! Landlock can only grant, and a grant on a directory covers everything below it. A denied
//! path inside a granted tree is therefore carved out by granting the tree's entries one by
//! one around it, recursively down to the denied path. The directories on the way
//! ("intermediate" directories) keep only rights that are harmless when inherited by the
//! denied path: listing, and for writable trees creating, removing and moving entries, but
//! never reading or writing file contents.

use std::collections::HashSet;
use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, make_bitflags,
};

use crate::error::ConfineError;
use crate::hide::Target;
use crate::policy::{Level, expand};

/// Rights that apply to a file itself; on a directory they are inherited by every file below.
fn file_rights() -> BitFlags<AccessFs> {
    make_bitflags!(AccessFs::{Execute | ReadFile | WriteFile | Truncate | IoctlDev})
}

fn rights(level: Level, dir: bool, abi: ABI) -> BitFlags<AccessFs> {
    let all = AccessFs::from_all(abi);
    let r = match level {
        Level::Deny => BitFlags::EMPTY,
        Level::Read => AccessFs::from_read(abi),
        Level::Write => all,
    };
    if dir { r } else { r & file_rights() }
}

fn intermediate_rights(level: Level, abi: ABI) -> BitFlags<AccessFs> {
    match level {
        Level::Deny => BitFlags::EMPTY,
        Level::Read => AccessFs::ReadDir.into(),
        Level::Write => AccessFs::from_all(abi) & !file_rights(),
    }
}

/// Opens an entry itself (a symlink stays a symlink) for use as a rule's anchor: `name`
/// relative to the directory `at`, or an absolute path. Going through the parent's
/// descriptor means a directory swapped for a symlink by a concurrent process cannot send a
/// carve-out somewhere else.
fn open_entry(at: Option<&OwnedFd>, name: &Path) -> std::io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    let c = CString::new(name.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let dir = at.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `c` is a valid NUL-terminated string and `dir` an open descriptor (or
    // AT_FDCWD); O_PATH|O_NOFOLLOW opens the entry without reading anything.
    let fd = unsafe {
        libc::openat(
            dir,
            c.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero `stat` is a valid value, and fstat(2) only writes into it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the duration of the call; fstat(2) works on O_PATH descriptors
    // and describes the entry itself (a symlink opened with O_NOFOLLOW stays a symlink).
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

struct Planner {
    abi: ABI,
    ruleset: Option<RulesetCreated>,
    /// Files that are denied; a hard link to one of them elsewhere in a split directory is
    /// the same file and stays denied.
    denied_inodes: HashSet<(u64, u64)>,
}

impl Planner {
    fn add(
        &mut self,
        fd: OwnedFd,
        access: BitFlags<AccessFs>,
        path: &Path,
    ) -> Result<(), ConfineError> {
        if access.is_empty() {
            return Ok(());
        }
        let Some(rs) = self.ruleset.take() else {
            return Err(ConfineError::Ruleset(
                "ruleset lost after an earlier error".into(),
            ));
        };
        let rs = rs
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| ConfineError::Ruleset(format!("{}: {e}", path.display())))?;
        self.ruleset = Some(rs);
        Ok(())
    }

    /// Grants `path` at `level`, carving out the entries of `inside` (all strictly below it).
    fn visit(
        &mut self,
        at: Option<&OwnedFd>,
        path: &Path,
        level: Level,
        inside: &[(PathBuf, Level)],
    ) -> Result<(), ConfineError> {
        let name = match (at, path.file_name()) {
            (Some(_), Some(n)) => Path::new(n),
            _ => path,
        };
        let fd = match open_entry(at, name) {
            Ok(fd) => fd,
            // Vanished or unreachable entries have nothing to grant.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
                ) =>
            {
                return Ok(());
            }
            Err(e) => return Err(ConfineError::path(path, e)),
        };
        let st = fstat(&fd).map_err(|e| ConfineError::path(path, e))?;
        let kind = st.st_mode & libc::S_IFMT;
        let is_dir = kind == libc::S_IFDIR;
        if kind == libc::S_IFLNK {
            // A symlink needs no rule (its target is checked), and a rule through it would
            // grant whatever it points at.
            return Ok(());
        }
        if !is_dir || inside.is_empty() {
            if !is_dir && self.denied_inodes.contains(&(st.st_dev, st.st_ino)) {
                return Ok(());
            }
            return self.add(fd, rights(level, is_dir, self.abi), path);
        }
        // Listed through the descriptor (the magic link is the directory just opened, not a
        // new lookup of `path`).
        use std::os::fd::AsRawFd;
        let entries = std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|e| ConfineError::path(path, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| ConfineError::path(path, e))?;
            let child = path.join(entry.file_name());
            let child_level = inside
                .iter()
                .filter(|(p, _)| *p == child)
                .map(|(_, l)| *l)
                .min()
                .unwrap_or(level);
            let below: Vec<(PathBuf, Level)> = inside
                .iter()
                .filter(|(p, _)| p != &child && p.starts_with(&child))
                .cloned()
                .collect();
            self.visit(Some(&fd), &child, child_level, &below)?;
        }
        self.add(fd, intermediate_rights(level, self.abi), path)
    }
}

/// Resolves symlinks in a grant's path so rules and carve-outs compare as the kernel sees
/// them; a missing path resolves to nothing.
fn resolve(path: &Path) -> Result<Option<PathBuf>, ConfineError> {
    if !path.is_absolute() {
        return Err(ConfineError::Relative(path.to_path_buf()));
    }
    match crate::realpath::canonicalize(path) {
        Ok(p) => Ok(Some(p)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => Ok(None),
        Err(e) => Err(ConfineError::path(path, e)),
    }
}

/// Whether file permissions already keep this process (and so the confined one) from
/// reading or writing `path`, for good: it belongs to another user, so it cannot be
/// `chmod`ed either. Such a denied path (`/etc/shadow` for a normal user) needs no carve-out,
/// which saves granting `/etc` entry by entry on every call. As root nothing qualifies.
fn owned_by_another_and_closed(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: geteuid has no failure mode; access(2) reads the NUL-terminated path only.
    unsafe {
        meta.uid() != libc::geteuid()
            && libc::access(c.as_ptr(), libc::R_OK) != 0
            && libc::access(c.as_ptr(), libc::W_OK) != 0
    }
}

/// What the ruleset needs besides paths.
pub(crate) struct Extras<'a> {
    pub abi: ABI,
    pub deny_tcp: bool,
    pub scope: bool,
    pub temp: Option<&'a Path>,
    /// Denied paths inside granted trees are covered by mounts (see [`hide`](crate::hide))
    /// instead of carved out.
    pub hide: bool,
}

/// The ruleset, and the paths the command process must cover before applying it.
pub(crate) struct Built {
    pub ruleset: RulesetCreated,
    pub covers: Vec<Target>,
}

/// Takes out of `all` the denied paths that can be covered by mounts: inside a granted tree,
/// with no grant below them, not symlinks. Adds the entries that are the same file as a
/// covered one (hard links) in the directories on the way from the outermost granted tree
/// containing it, the directories carving would have split.
fn covers(all: &mut Vec<(PathBuf, Level)>) -> Result<Vec<Target>, ConfineError> {
    let grants: Vec<PathBuf> = all
        .iter()
        .filter(|(_, l)| *l != Level::Deny)
        .map(|(p, _)| p.clone())
        .collect();
    let mut out: Vec<(Target, u64)> = Vec::new();
    let mut keep = Vec::new();
    for (p, level) in all.drain(..) {
        let outermost = grants.iter().find(|g| *g != &p && p.starts_with(g));
        let coverable = level == Level::Deny
            && outermost.is_some()
            && !grants.iter().any(|g| g != &p && g.starts_with(&p));
        if coverable && let Some(t) = Target::of(&p).map_err(|e| ConfineError::path(&p, e))? {
            use std::os::unix::fs::MetadataExt;
            let links = std::fs::symlink_metadata(&p)
                .map(|m| m.nlink())
                .unwrap_or(1);
            out.push((t, links));
            if links > 1
                && !out.last().is_some_and(|(t, _)| t.dir)
                && let Some(root) = outermost
            {
                let (dev, ino) = out.last().map(|(t, _)| (t.dev, t.ino)).unwrap_or_default();
                for dir in p.ancestors().skip(1).take_while(|a| a.starts_with(root)) {
                    let Ok(entries) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    for e in entries.flatten() {
                        let other = e.path();
                        if other != p
                            && let Ok(m) = std::fs::symlink_metadata(&other)
                            && m.dev() == dev
                            && m.ino() == ino
                            && let Some(t) =
                                Target::of(&other).map_err(|e| ConfineError::path(&other, e))?
                        {
                            out.push((t, 1));
                        }
                    }
                }
            }
            continue;
        }
        keep.push((p, level));
    }
    *all = keep;
    let mut targets: Vec<Target> = out.into_iter().map(|(t, _)| t).collect();
    targets.sort_by(|a, b| a.path.cmp(&b.path));
    targets.dedup_by(|later, earlier| later.path == earlier.path);
    // What lies inside a covered directory is hidden with it (and could not be found there).
    let dirs: Vec<PathBuf> = targets
        .iter()
        .filter(|t| t.dir)
        .map(|t| PathBuf::from(std::ffi::OsStr::from_bytes(t.path.as_bytes())))
        .collect();
    targets.retain(|t| {
        let p = Path::new(std::ffi::OsStr::from_bytes(t.path.as_bytes()));
        !dirs.iter().any(|d| d != p && p.starts_with(d))
    });
    Ok(targets)
}

/// Builds the Landlock ruleset for `paths` (before any process exists, so it may allocate).
pub(crate) fn build(paths: &[(PathBuf, Level)], x: &Extras<'_>) -> Result<Built, ConfineError> {
    let err = |e: landlock::RulesetError| ConfineError::Ruleset(e.to_string());
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(x.abi))
        .map_err(err)?;
    if x.deny_tcp {
        rs = rs.handle_access(AccessNet::from_all(x.abi)).map_err(err)?;
    }
    if x.scope {
        rs = rs.scope(Scope::from_all(x.abi)).map_err(err)?;
    }
    let created = rs.create().map_err(err)?;

    // Expand patterns, resolve symlinks; when one path is named twice, the stricter wins.
    let mut all: Vec<(PathBuf, Level)> = Vec::new();
    for (p, level) in paths {
        for e in expand(p) {
            if let Some(r) = resolve(&e)? {
                if *level == Level::Deny && owned_by_another_and_closed(&r) {
                    continue;
                }
                all.push((r, *level));
            }
        }
    }
    if let Some(t) = x.temp
        && let Some(r) = resolve(t)?
    {
        all.push((r, Level::Write));
    }
    all.sort();
    all.dedup_by(|later, earlier| later.0 == earlier.0); // sorted: Deny < Read < Write, first kept
    let covered = if x.hide {
        covers(&mut all)?
    } else {
        Vec::new()
    };

    let mut planner = Planner {
        abi: x.abi,
        ruleset: Some(created),
        denied_inodes: all
            .iter()
            .filter(|(_, l)| *l == Level::Deny)
            .filter_map(|(p, _)| std::fs::symlink_metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            })
            .collect(),
    };
    // Every grant is visited. A tree is split only around what must have less than the tree
    // (denied paths, read-only grants inside a writable tree); a grant with more below it is
    // simply one more rule, since Landlock adds rights up.
    for (root, level) in all.iter().filter(|(_, l)| *l != Level::Deny) {
        let inside: Vec<(PathBuf, Level)> = all
            .iter()
            .filter(|(p, l)| *l < *level && p != root && p.starts_with(root))
            .cloned()
            .collect();
        planner.visit(None, root, *level, &inside)?;
    }
    let ruleset = planner
        .ruleset
        .ok_or_else(|| ConfineError::Ruleset("ruleset lost after an earlier error".into()))?;
    Ok(Built {
        ruleset,
        covers: covered,
    })
}
