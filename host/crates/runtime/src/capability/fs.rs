//! `warden:plugin/fs`: every access is resolved inside a capability-safe handle on the granted
//! directory that contains it, then checked against the user's rules on its real path.
//!
//! The steps, for every operation:
//! 1. the guest path is made absolute (against the session cwd) and normalised lexically, so
//!    `sub/../.env` and `/abs/.env` are the same path;
//! 2. the granted directory that contains it is opened with `cap-std`, and the rest of the
//!    path is resolved relative to that handle: `..`, absolute symlink targets and symlinks
//!    leading out of the directory fail there, whatever the path looked like;
//! 3. the real path (symlinks followed, through the handle) and the path as written are both
//!    checked against the policy: a deny on either refuses the access;
//! 4. the operation runs on the real path, through the same handle. Reading and writing open
//!    the checked path component by component with `O_NOFOLLOW`: a symlink swapped in after
//!    the check (anywhere on the path) makes the open fail instead of sending it elsewhere;
//! 5. a regular file with more than one link is compared, by device and inode, with every
//!    file the rules deny below the granted directories: a hard link to `.env` is `.env`.
//!    A write also compares it with the files later, unconfined programs run or obey that
//!    programs may not change (repository configuration and hooks, `.claude/`, `.mcp.json`,
//!    `.husky/`, shell start-up files, Warden's and Claude Code's homes, the scripts of hooks
//!    and MCP servers): a hard link a program made to `.claude/settings.json` is refused to
//!    Write and Edit.
//!
//! Blocking file-system calls run on the blocking pool and are bounded by the call's deadline,
//! so a FIFO or a slow network mount cannot hold the host past it.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use wasmtime::component::HasSelf;

use super::Provider;
use crate::bindings::{WitVersion, since_v0_1};
use crate::latest::fs::{DirEntry, ErrorCode, FsError, Host, Kind, Metadata};
use crate::sandbox::SandboxState;
use crate::{Grant, Policy};
use warden_vocab::Capability;

pub(super) const PROVIDER: Provider = Provider {
    capability: Some(Capability::Fs),
    interface: "warden:plugin/fs",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::fs::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

/// Largest file `read` returns; bigger files are refused with `too-large`.
pub const MAX_READ_BYTES: u64 = 16 << 20;
/// Largest directory listing `list-dir` returns.
pub const MAX_DIR_ENTRIES: usize = 100_000;
/// Longest path accepted from a guest.
const MAX_PATH_BYTES: usize = 4096;

fn err(code: ErrorCode, message: impl Into<String>) -> FsError {
    FsError {
        code,
        message: message.into(),
    }
}

/// `.` dropped, `..` popping a component, never above the root (the one lexical normalisation
/// the capability checks use, shared with the grants' own check).
pub(crate) use warden_vocab::paths::normalise_clamped as normalise;

/// The absolute, lexically normalised form of a guest path, or `invalid-path`.
pub(crate) fn absolute(cwd: &Path, raw: &str) -> Result<PathBuf, FsError> {
    if raw.is_empty() {
        return Err(err(ErrorCode::InvalidPath, "empty path"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(err(
            ErrorCode::InvalidPath,
            format!("path is longer than {MAX_PATH_BYTES} bytes"),
        ));
    }
    if raw.contains('\0') {
        return Err(err(
            ErrorCode::InvalidPath,
            format!("path {raw:?} contains a NUL byte"),
        ));
    }
    let p = Path::new(raw);
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    Ok(normalise(&joined))
}

/// A path resolved inside one granted directory.
struct Resolved {
    /// The path as the guest wrote it, absolute and normalised.
    lexical: PathBuf,
    /// Handle on the granted directory.
    dir: Dir,
    /// Real path of the granted directory.
    root_real: PathBuf,
    /// The rest of the path, relative to `dir`, with symlinks resolved (as far as it exists).
    rel_real: PathBuf,
}

impl Resolved {
    fn real(&self) -> PathBuf {
        normalise(&self.root_real.join(&self.rel_real))
    }

    /// The path handed to cap-std: `.` for the directory itself.
    fn rel(&self) -> &Path {
        if self.rel_real.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.rel_real
        }
    }
}

/// Finds the granted directory containing `lexical` (a writable one if `write`), opens it and
/// resolves the rest of the path through the handle.
fn resolve(grant: &Grant, lexical: PathBuf, write: bool) -> Result<Resolved, FsError> {
    let mut best: Option<(PathBuf, PathBuf, usize)> = None;
    let mut read_only_match = None;
    for g in &grant.fs {
        let granted = normalise(&g.path);
        let real = std::fs::canonicalize(&granted).unwrap_or_else(|_| granted.clone());
        // The guest may name the directory as granted or by its real path.
        let rest = lexical
            .strip_prefix(&granted)
            .ok()
            .or_else(|| lexical.strip_prefix(&real).ok());
        let Some(rest) = rest else { continue };
        if !g.allows(&granted.join(rest), write) {
            read_only_match = Some(g.path.clone());
            continue;
        }
        let depth = real.components().count();
        if best.as_ref().is_none_or(|(_, _, d)| depth > *d) {
            best = Some((real, rest.to_path_buf(), depth));
        }
    }
    let Some((root_real, rest, _)) = best else {
        return Err(match read_only_match {
            Some(dir) => err(
                ErrorCode::Denied,
                format!(
                    "{}: writing is not granted (the fs grant for {} is read-only)",
                    lexical.display(),
                    dir.display()
                ),
            ),
            None => err(
                ErrorCode::Denied,
                format!(
                    "{}: outside every granted directory ({})",
                    lexical.display(),
                    granted_list(grant)
                ),
            ),
        });
    };
    let dir = Dir::open_ambient_dir(&root_real, ambient_authority()).map_err(|e| {
        io_err(
            &lexical,
            e,
            &format!("cannot open the granted directory {}", root_real.display()),
        )
    })?;
    let rel_real = real_rel(&dir, &rest, &lexical)?;
    Ok(Resolved {
        lexical,
        dir,
        root_real,
        rel_real,
    })
}

fn granted_list(grant: &Grant) -> String {
    if grant.fs.is_empty() {
        return "no directory is granted".into();
    }
    let dirs: Vec<String> = grant
        .fs
        .iter()
        .map(|g| {
            format!(
                "{}{}",
                g.path.display(),
                if g.write {
                    " (read-write)"
                } else {
                    " (read-only)"
                }
            )
        })
        .collect();
    format!("granted: {}", dirs.join(", "))
}

/// Resolves symlinks in `rest` through `dir`. Components that do not exist yet (a file about to
/// be created) are kept as written: the deepest existing ancestor is resolved and they are
/// appended, since something that does not exist cannot be a link.
fn real_rel(dir: &Dir, rest: &Path, lexical: &Path) -> Result<PathBuf, FsError> {
    if rest.as_os_str().is_empty() {
        return Ok(PathBuf::new());
    }
    let mut existing = rest.to_path_buf();
    let mut missing: Vec<std::ffi::OsString> = Vec::new();
    loop {
        let probe = if existing.as_os_str().is_empty() {
            Path::new(".")
        } else {
            existing.as_path()
        };
        match dir.canonicalize(probe) {
            Ok(real) => {
                let mut out = normalise(&real);
                for m in missing.iter().rev() {
                    out.push(m);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink is not "missing": creating through it would write to
                // wherever it points.
                if dir
                    .symlink_metadata(probe)
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    return Err(err(
                        ErrorCode::Denied,
                        format!(
                            "{}: is a symlink to a missing target; links are only followed to existing files inside the granted directory",
                            lexical.display()
                        ),
                    ));
                }
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        missing.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    _ => return Err(io_err(lexical, e, "cannot resolve")),
                }
            }
            Err(e) => return Err(io_err(lexical, e, "cannot resolve")),
        }
    }
}

/// Maps an I/O error to an `fs-error`; cap-std reports an escape as `PermissionDenied` with its
/// own wording, which is replaced by one naming the path.
fn io_err(path: &Path, e: std::io::Error, what: &str) -> FsError {
    use std::io::ErrorKind as K;
    let p = path.display();
    match e.kind() {
        K::NotFound => err(
            ErrorCode::NotFound,
            format!("{p}: no such file or directory"),
        ),
        K::PermissionDenied if e.to_string().contains("outside") => err(
            ErrorCode::Denied,
            format!("{p}: leads outside the granted directory (through `..` or a symlink)"),
        ),
        K::PermissionDenied => err(ErrorCode::Denied, format!("{p}: {what}: {e}")),
        K::AlreadyExists => err(ErrorCode::AlreadyExists, format!("{p}: already exists")),
        K::NotADirectory => err(ErrorCode::NotADirectory, format!("{p}: not a directory")),
        K::IsADirectory => err(ErrorCode::IsADirectory, format!("{p}: is a directory")),
        K::InvalidInput | K::InvalidFilename => {
            err(ErrorCode::InvalidPath, format!("{p}: {what}: {e}"))
        }
        _ if e.raw_os_error() == Some(libc::ELOOP) => err(
            ErrorCode::Denied,
            format!("{p}: too many levels of symlinks"),
        ),
        _ => err(ErrorCode::Io, format!("{p}: {what}: {e}")),
    }
}

/// Checks the path as written and the real path against the policy.
fn check(policy: &dyn Policy, r: &Resolved, write: bool) -> Result<(), FsError> {
    let real = r.real();
    let verb = if write { "writing" } else { "reading" };
    for p in [&r.lexical, &real] {
        if let Err(rule) = policy.check_path(p, write) {
            let shown = if *p == r.lexical {
                r.lexical.display().to_string()
            } else {
                format!("{} (real path {})", r.lexical.display(), real.display())
            };
            return Err(err(
                ErrorCode::Denied,
                format!("{verb} {shown} is denied: {rule}"),
            ));
        }
        if r.lexical == real {
            break;
        }
    }
    Ok(())
}

fn kind_of(ft: cap_std::fs::FileType) -> Kind {
    if ft.is_symlink() {
        Kind::Symlink
    } else if ft.is_dir() {
        Kind::Directory
    } else if ft.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

/// What one operation needs, detached from the store so it can run on the blocking pool.
struct Job {
    grant: Arc<Grant>,
    policy: Arc<dyn Policy>,
    lexical: PathBuf,
    /// Read-only files and directories besides those in every grant (see
    /// [`PROTECTED_IN_GRANT`]).
    read_only: Vec<PathBuf>,
    /// Files configured hooks and MCP servers start (`ProcessConfinement::read_only`):
    /// refused to writes by any name, not only through another hard link.
    launched: Vec<PathBuf>,
}

impl Job {
    fn resolve(&self, write: bool) -> Result<Resolved, FsError> {
        let r = resolve(&self.grant, self.lexical.clone(), write)?;
        check(self.policy.as_ref(), &r, write)?;
        if write {
            self.refuse_launched(&r)?;
        }
        Ok(r)
    }

    /// A write to a file a hook or server starts would make its next start run what the
    /// call wrote, possibly with more rights than the call has (a user hook runs with the
    /// user's). No rule allows it: the user changes such a file outside the session.
    fn refuse_launched(&self, r: &Resolved) -> Result<(), FsError> {
        let real = r.real();
        match self
            .launched
            .iter()
            .find(|f| **f == real || **f == r.lexical)
        {
            Some(f) => Err(err(
                ErrorCode::Denied,
                format!(
                    "{} is denied: a configured hook or MCP server runs {}, so neither tools nor programs may change it (edit it outside the session)",
                    r.lexical.display(),
                    f.display()
                ),
            )),
            None => Ok(()),
        }
    }
}

impl SandboxState {
    fn fs_job(&self, raw: &str) -> Result<Job, FsError> {
        let processes = &self.calls.exec.processes;
        let mut read_only = processes.read_only.clone();
        read_only.extend(agent_homes(processes.home.as_deref()));
        if let Some(h) = &processes.home {
            read_only.extend(SHELL_STARTUP.iter().map(|n| h.join(n)));
        }
        Ok(Job {
            grant: self.grant.clone(),
            policy: self.ctx.policy.clone(),
            lexical: absolute(&self.ctx.cwd, raw)?,
            read_only,
            launched: processes.read_only.clone(),
        })
    }

    /// Runs `f` on the blocking pool, giving up at the call's deadline.
    async fn fs_run<T: Send + 'static>(
        &mut self,
        raw: &str,
        f: impl FnOnce(Job) -> Result<T, FsError> + Send + 'static,
    ) -> Result<T, FsError> {
        let job = self.fs_job(raw)?;
        let shown = job.lexical.display().to_string();
        let remaining = self.remaining();
        if remaining.is_zero() {
            return Err(err(
                ErrorCode::Io,
                format!("{shown}: the call's deadline has passed"),
            ));
        }
        let task = tokio::task::spawn_blocking(move || f(job));
        match tokio::time::timeout(remaining.max(Duration::from_millis(1)), task).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(err(
                ErrorCode::Io,
                format!("{shown}: host task failed: {e}"),
            )),
            Err(_) => Err(err(
                ErrorCode::Io,
                format!("{shown}: did not finish before the call's deadline"),
            )),
        }
    }
}

fn read_file(job: Job) -> Result<Vec<u8>, FsError> {
    let r = job.resolve(false)?;
    let meta = r
        .dir
        .metadata(r.rel())
        .map_err(|e| io_err(&r.lexical, e, "cannot stat"))?;
    if meta.is_dir() {
        return Err(err(
            ErrorCode::IsADirectory,
            format!("{}: is a directory", r.lexical.display()),
        ));
    }
    if !meta.is_file() {
        return Err(err(
            ErrorCode::Denied,
            format!(
                "{}: not a regular file (devices, FIFOs and sockets cannot be read)",
                r.lexical.display()
            ),
        ));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(too_large(&r.lexical, meta.len()));
    }
    // Non-blocking so a file swapped for a FIFO after the check cannot hang the open.
    let file = open_exact(&r, libc::O_RDONLY | libc::O_NONBLOCK)?;
    same_file_as_denied(&job, &r, &file, false)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_READ_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| io_err(&r.lexical, e, "cannot read"))?;
    if buf.len() as u64 > MAX_READ_BYTES {
        return Err(too_large(&r.lexical, buf.len() as u64));
    }
    Ok(buf)
}

fn too_large(path: &Path, size: u64) -> FsError {
    err(
        ErrorCode::TooLarge,
        format!(
            "{}: {size} bytes is over the {MAX_READ_BYTES}-byte read limit",
            path.display()
        ),
    )
}

fn write_file(job: Job, contents: Vec<u8>) -> Result<(), FsError> {
    let r = job.resolve(true)?;
    if r.rel_real.as_os_str().is_empty() {
        return Err(err(
            ErrorCode::IsADirectory,
            format!("{}: is a directory", r.lexical.display()),
        ));
    }
    if let Ok(m) = r.dir.metadata(r.rel()) {
        if m.is_dir() {
            return Err(err(
                ErrorCode::IsADirectory,
                format!("{}: is a directory", r.lexical.display()),
            ));
        }
        if !m.is_file() {
            return Err(err(
                ErrorCode::Denied,
                format!("{}: not a regular file", r.lexical.display()),
            ));
        }
    }
    // Not truncated on open: a hard link to a denied file must be refused before anything
    // of it is lost.
    let mut file = open_exact(&r, libc::O_WRONLY | libc::O_CREAT | libc::O_NONBLOCK)?;
    same_file_as_denied(&job, &r, &file, true)?;
    same_file_as_protected(&job, &r, &file)?;
    file.set_len(0)
        .and_then(|()| std::io::Write::write_all(&mut file, &contents))
        .map_err(|e| io_err(&r.lexical, e, "cannot write"))
}

fn append_file(job: Job, contents: Vec<u8>) -> Result<(), FsError> {
    let r = job.resolve(true)?;
    if r.rel_real.as_os_str().is_empty() {
        return Err(err(
            ErrorCode::IsADirectory,
            format!("{}: is a directory", r.lexical.display()),
        ));
    }
    if let Ok(m) = r.dir.metadata(r.rel()) {
        if m.is_dir() {
            return Err(err(
                ErrorCode::IsADirectory,
                format!("{}: is a directory", r.lexical.display()),
            ));
        }
        if !m.is_file() {
            return Err(err(
                ErrorCode::Denied,
                format!("{}: not a regular file", r.lexical.display()),
            ));
        }
    }
    let mut file = open_exact(
        &r,
        libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_NONBLOCK,
    )?;
    same_file_as_denied(&job, &r, &file, true)?;
    same_file_as_protected(&job, &r, &file)?;
    // One write: with O_APPEND the kernel places it at the end atomically for regular files.
    let n = std::io::Write::write(&mut file, &contents)
        .map_err(|e| io_err(&r.lexical, e, "cannot append to"))?;
    if n != contents.len() {
        std::io::Write::write_all(&mut file, &contents[n..])
            .map_err(|e| io_err(&r.lexical, e, "cannot append to"))?;
    }
    Ok(())
}

/// Opens the checked path below the granted directory one component at a time, refusing a
/// symlink anywhere: the path was resolved and checked with every link followed, so a link
/// there now was put there after the check.
fn open_exact(r: &Resolved, flags: libc::c_int) -> Result<std::fs::File, FsError> {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    let raced = || {
        err(
            ErrorCode::Denied,
            format!(
                "{}: changed while being opened (a symlink appeared on the checked path)",
                r.lexical.display()
            ),
        )
    };
    let names: Vec<&std::ffi::OsStr> = r
        .rel_real
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let Some((last, parents)) = names.split_last() else {
        return Err(err(
            ErrorCode::IsADirectory,
            format!("{}: is a directory", r.lexical.display()),
        ));
    };
    let openat = |at: libc::c_int, name: &std::ffi::OsStr, flags: libc::c_int| {
        let c = CString::new(name.as_bytes()).map_err(|_| {
            err(
                ErrorCode::InvalidPath,
                format!("{}: contains a NUL byte", r.lexical.display()),
            )
        })?;
        // SAFETY: `c` is NUL-terminated and `at` an open directory descriptor; openat(2)
        // only reads the name.
        let fd = unsafe {
            libc::openat(
                at,
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o666,
            )
        };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return Err(if e.raw_os_error() == Some(libc::ELOOP) {
                raced()
            } else {
                io_err(&r.lexical, e, "cannot open")
            });
        }
        // SAFETY: `fd` was just returned by openat(2) and belongs to nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let mut parent: Option<OwnedFd> = None;
    for name in parents {
        let at = parent
            .as_ref()
            .map_or(r.dir.as_raw_fd(), AsRawFd::as_raw_fd);
        match openat(at, name, libc::O_RDONLY | libc::O_DIRECTORY) {
            // ENOTDIR with O_NOFOLLOW on a symlink: the same race.
            Err(e) if e.code == ErrorCode::NotADirectory => return Err(raced()),
            other => parent = Some(other?),
        }
    }
    let at = parent
        .as_ref()
        .map_or(r.dir.as_raw_fd(), AsRawFd::as_raw_fd);
    let fd = openat(at, last, flags)?;
    let file = std::fs::File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| io_err(&r.lexical, e, "cannot stat"))?;
    if !meta.is_file() {
        return Err(err(
            ErrorCode::Denied,
            format!(
                "{}: not a regular file (devices, FIFOs and sockets cannot be read or written)",
                r.lexical.display()
            ),
        ));
    }
    Ok(file)
}

/// How many directory entries one hard-link check may visit below the directories the rules
/// deny as a whole; past it the file is refused rather than let through unchecked.
const HARD_LINK_WALK_LIMIT: usize = 200_000;

/// Refuses `file` when it is another name of a file the rules deny (a hard link): of one the
/// rules take away from reading, or, for a `write`, also of one they only take away from
/// editing. Only files with more than one link are looked into, so the search for denied
/// files costs nothing in the usual case.
fn same_file_as_denied(
    job: &Job,
    r: &Resolved,
    file: &std::fs::File,
    write: bool,
) -> Result<(), FsError> {
    use std::os::unix::fs::MetadataExt;
    let meta = file
        .metadata()
        .map_err(|e| io_err(&r.lexical, e, "cannot stat"))?;
    if meta.nlink() <= 1 {
        return Ok(());
    }
    let unknown = |e: String| {
        err(
            ErrorCode::Denied,
            format!(
                "{}: has other names (hard links), and which files the rules deny could not be worked out: {e}",
                r.lexical.display()
            ),
        )
    };
    let roots: Vec<PathBuf> = job.grant.fs.iter().map(|g| normalise(&g.path)).collect();
    let denied = job
        .policy
        .denied_paths(&roots)
        .map_err(|e| unknown(e.to_string()))?;
    let mut budget = HARD_LINK_WALK_LIMIT;
    let (lists, verb): (&[&[PathBuf]], _) = if write {
        (&[&denied.read, &denied.write], "written")
    } else {
        (&[&denied.read], "read")
    };
    for p in lists.iter().flat_map(|l| l.iter()) {
        if let Some(other) = find_inode(p, meta.dev(), meta.ino(), &mut budget).map_err(unknown)? {
            return Err(err(
                ErrorCode::Denied,
                format!(
                    "{} is denied: it is another name (a hard link) of {}, which may not be {verb}",
                    r.lexical.display(),
                    other.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Warden's home (`$WARDEN_HOME`, else `~/.warden`).
pub(crate) fn warden_home(home: Option<&std::path::Path>) -> Option<PathBuf> {
    std::env::var_os("WARDEN_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".warden")))
}

/// Claude Code's configuration directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
pub(crate) fn claude_home(home: Option<&std::path::Path>) -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".claude")))
}

/// Warden's home and Claude Code's configuration directory: settings, hooks and MCP servers
/// the next session obeys, so read-only to programs wherever a grant holds them.
pub(crate) fn agent_homes(home: Option<&std::path::Path>) -> Vec<PathBuf> {
    warden_home(home)
        .into_iter()
        .chain(claude_home(home))
        .collect()
}

/// Paths below every writable grant that programs may not change, the same
/// `warden_confine` keeps read-only (its `PROJECT_READ_ONLY` and a repository's entries).
const PROTECTED_IN_GRANT: &[&str] = &[
    ".claude",
    ".mcp.json",
    ".husky",
    ".git/config",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info",
    ".git/commondir",
    ".git/gitdir",
    ".git",
];

/// Shell start-up files in the home (`warden_confine::SHELL_STARTUP`).
const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
];

/// Refuses a write to `file` when it is another name (a hard link) of a file programs may
/// not change: a program could make such a link where that was possible, and a Write
/// through it would change the file a later, unconfined program runs. The protected file's
/// own name is left to the rules (writing `.claude/settings.json` itself asks, as any
/// protected path does).
fn same_file_as_protected(job: &Job, r: &Resolved, file: &std::fs::File) -> Result<(), FsError> {
    use std::os::unix::fs::MetadataExt;
    let meta = file
        .metadata()
        .map_err(|e| io_err(&r.lexical, e, "cannot stat"))?;
    if meta.nlink() <= 1 {
        return Ok(());
    }
    let own = r.root_real.join(&r.rel_real);
    let mut places: Vec<PathBuf> = Vec::new();
    for g in job.grant.fs.iter().filter(|g| g.write) {
        let root = normalise(&g.path);
        for p in PROTECTED_IN_GRANT {
            if *p == ".git" {
                // Submodules' repositories: their configuration and hooks.
                for m in std::fs::read_dir(root.join(".git/modules"))
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    places.push(m.path().join("config"));
                    places.push(m.path().join("hooks"));
                }
                continue;
            }
            places.push(root.join(p));
        }
    }
    places.extend(job.read_only.iter().cloned());
    let mut budget = HARD_LINK_WALK_LIMIT;
    for p in &places {
        let found = find_inode(p, meta.dev(), meta.ino(), &mut budget).map_err(|e| {
            err(
                ErrorCode::Denied,
                format!(
                    "{}: has other names (hard links), and the files programs may not change could not be searched for it: {e}",
                    r.lexical.display()
                ),
            )
        })?;
        if let Some(other) = found
            && std::fs::canonicalize(&other).ok().as_deref() != Some(own.as_path())
        {
            return Err(err(
                ErrorCode::Denied,
                format!(
                    "{} is denied: it is another name (a hard link) of {}, which later programs run or obey and may not be changed this way",
                    r.lexical.display(),
                    other.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The name under `denied` of the file `(dev, ino)`: `denied` itself, or, when it is a
/// directory the rules take away as a whole (`Read(./secret/**)` lists `secret`), any regular
/// file below it. Symlinks inside are not followed: they are other files, not other names.
fn find_inode(
    denied: &Path,
    dev: u64,
    ino: u64,
    budget: &mut usize,
) -> Result<Option<PathBuf>, String> {
    use std::os::unix::fs::{DirEntryExt, MetadataExt};
    let Ok(top) = std::fs::metadata(denied) else {
        return Ok(None);
    };
    if top.dev() == dev && top.ino() == ino {
        return Ok(Some(denied.to_path_buf()));
    }
    if !top.is_dir() {
        return Ok(None);
    }
    let mut stack = vec![denied.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // What the host cannot list, no name in it was checked by a rule either way; the
            // same choice the denied-path search makes.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => continue,
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            *budget = budget.checked_sub(1).ok_or_else(|| {
                format!("more than {HARD_LINK_WALK_LIMIT} entries below the denied directories")
            })?;
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                stack.push(entry.path());
            } else if ft.is_file()
                && entry.ino() == ino
                && entry.metadata().is_ok_and(|m| m.dev() == dev)
            {
                return Ok(Some(entry.path()));
            }
        }
    }
    Ok(None)
}

fn stat_path(job: Job) -> Result<Metadata, FsError> {
    let r = job.resolve(false)?;
    // Stat the link itself when the path as written is one (the WIT promises the link's kind);
    // its real path was still checked above.
    let rest = lexical_rest(&r);
    let meta = match rest.as_deref() {
        Some(rest) if !rest.as_os_str().is_empty() => r
            .dir
            .symlink_metadata(rest)
            .or_else(|_| r.dir.metadata(r.rel())),
        _ => r.dir.metadata(r.rel()),
    }
    .map_err(|e| io_err(&r.lexical, e, "cannot stat"))?;
    let modified_ms = meta
        .modified()
        .ok()
        .and_then(|t| t.into_std().duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    Ok(Metadata {
        kind: kind_of(meta.file_type()),
        size: meta.len(),
        modified_ms,
    })
}

/// The path as written, relative to the granted directory, when its parent resolves to the
/// same place (so stat-ing it through the handle cannot reach anything else).
fn lexical_rest(r: &Resolved) -> Option<PathBuf> {
    let name = r.lexical.file_name()?;
    let real_parent = r.rel_real.parent().unwrap_or(Path::new(""));
    let candidate = real_parent.join(name);
    (candidate != r.rel_real).then_some(candidate)
}

fn list(job: Job) -> Result<Vec<DirEntry>, FsError> {
    let r = job.resolve(false)?;
    let rd = r
        .dir
        .read_dir(r.rel())
        .map_err(|e| io_err(&r.lexical, e, "cannot list"))?;
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| io_err(&r.lexical, e, "cannot list"))?;
        if out.len() >= MAX_DIR_ENTRIES {
            return Err(err(
                ErrorCode::TooLarge,
                format!(
                    "{}: more than {MAX_DIR_ENTRIES} entries",
                    r.lexical.display()
                ),
            ));
        }
        let kind = entry.file_type().map(kind_of).unwrap_or(Kind::Other);
        out.push(DirEntry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn mkdir(job: Job) -> Result<(), FsError> {
    let r = job.resolve(true)?;
    r.dir
        .create_dir_all(r.rel())
        .map_err(|e| io_err(&r.lexical, e, "cannot create directory"))
}

fn remove(job: Job) -> Result<(), FsError> {
    let r = job.resolve(true)?;
    // Remove the entry as written (a link, not its target), through its resolved parent.
    let target = lexical_rest(&r).unwrap_or_else(|| r.rel_real.clone());
    if target.as_os_str().is_empty() {
        return Err(err(
            ErrorCode::IsADirectory,
            format!("{}: is a directory", r.lexical.display()),
        ));
    }
    r.dir
        .remove_file(&target)
        .map_err(|e| io_err(&r.lexical, e, "cannot remove"))
}

impl Host for SandboxState {
    async fn cwd(&mut self) -> wasmtime::Result<String> {
        Ok(self.ctx.cwd.display().to_string())
    }

    async fn read(&mut self, path: String) -> wasmtime::Result<Result<Vec<u8>, FsError>> {
        Ok(self.fs_run(&path, read_file).await)
    }

    async fn write(
        &mut self,
        path: String,
        contents: Vec<u8>,
    ) -> wasmtime::Result<Result<(), FsError>> {
        Ok(self.fs_run(&path, move |j| write_file(j, contents)).await)
    }

    async fn append(
        &mut self,
        path: String,
        contents: Vec<u8>,
    ) -> wasmtime::Result<Result<(), FsError>> {
        Ok(self.fs_run(&path, move |j| append_file(j, contents)).await)
    }

    async fn stat(&mut self, path: String) -> wasmtime::Result<Result<Metadata, FsError>> {
        Ok(self.fs_run(&path, stat_path).await)
    }

    async fn list_dir(&mut self, path: String) -> wasmtime::Result<Result<Vec<DirEntry>, FsError>> {
        Ok(self.fs_run(&path, list).await)
    }

    async fn create_dir(&mut self, path: String) -> wasmtime::Result<Result<(), FsError>> {
        Ok(self.fs_run(&path, mkdir).await)
    }

    async fn remove_file(&mut self, path: String) -> wasmtime::Result<Result<(), FsError>> {
        Ok(self.fs_run(&path, remove).await)
    }
}

#[cfg(test)]
mod grant_tests {
    use std::path::{Path, PathBuf};

    use warden_vocab::FsGrant;

    #[test]
    fn allows() {
        let read_only = FsGrant {
            path: PathBuf::from("/work/project"),
            write: false,
        };
        let read_write = FsGrant {
            path: PathBuf::from("/work/project/"),
            write: true,
        };
        let table = [
            ("/work/project", false, true, true),
            ("/work/project/src/main.rs", false, true, true),
            ("/work/project/src/main.rs", true, false, true),
            ("/work/project/../secret", false, false, false),
            ("/work/project/a/../../project/b", true, false, true),
            ("/work/projectile/x", false, false, false),
            ("/work", false, false, false),
            ("/etc/passwd", false, false, false),
            ("/", true, false, false),
        ];
        for (path, write, want_ro, want_rw) in table {
            let path = Path::new(path);
            assert_eq!(
                read_only.allows(path, write),
                want_ro,
                "read-only {path:?} {write}"
            );
            assert_eq!(
                read_write.allows(path, write),
                want_rw,
                "read-write {path:?} {write}"
            );
        }
    }
}

#[cfg(test)]
mod open_tests {
    use std::path::PathBuf;

    use cap_std::ambient_authority;
    use cap_std::fs::Dir;

    use super::{ErrorCode, Resolved, open_exact};

    fn resolved(root: &std::path::Path, rel: &str) -> Resolved {
        Resolved {
            lexical: root.join(rel),
            dir: Dir::open_ambient_dir(root, ambient_authority()).expect("open root"),
            root_real: root.to_path_buf(),
            rel_real: PathBuf::from(rel),
        }
    }

    /// The open is the check's second half: a link where the checked path had none (the last
    /// component or a directory on the way) fails the open instead of being followed.
    #[test]
    fn the_checked_path_is_opened_without_following_links() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path();
        std::fs::write(root.join(".env"), "secret").expect(".env");
        std::fs::create_dir(root.join("sub")).expect("sub");
        std::fs::write(root.join("sub/plain"), "plain").expect("plain");
        std::os::unix::fs::symlink(".env", root.join("flip")).expect("link");
        std::os::unix::fs::symlink("sub", root.join("dirlink")).expect("dir link");

        let ok = open_exact(&resolved(root, "sub/plain"), libc::O_RDONLY).expect("plain file");
        assert_eq!(std::io::read_to_string(ok).expect("read"), "plain");
        for rel in ["flip", "dirlink/plain"] {
            let e = open_exact(&resolved(root, rel), libc::O_RDONLY).expect_err(rel);
            assert_eq!(e.code, ErrorCode::Denied, "{rel}: {}", e.message);
            assert!(
                e.message.contains("changed while being opened"),
                "{}",
                e.message
            );
        }
        let fifo = root.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("path");
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_exact(&resolved(root, "fifo"), libc::O_RDONLY | libc::O_NONBLOCK)
            .expect_err("fifo");
        assert_eq!(e.code, ErrorCode::Denied, "{}", e.message);
    }
}

#[cfg(test)]
mod protected_link_tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::{ErrorCode, Job, write_file};
    use crate::sandbox::UnrestrictedPolicy;
    use warden_vocab::{FsGrant, Grant};

    fn job(root: &std::path::Path, rel: &str, read_only: Vec<PathBuf>) -> Job {
        Job {
            grant: Arc::new(Grant {
                fs: vec![FsGrant {
                    path: root.to_path_buf(),
                    write: true,
                }],
                ..Grant::default()
            }),
            policy: Arc::new(UnrestrictedPolicy),
            lexical: root.join(rel),
            launched: read_only.clone(),
            read_only,
        }
    }

    /// A program made a hard link to a file later programs obey; writing through it with the
    /// file tools would change that file, so it is refused and the file left as it was.
    #[test]
    fn a_hard_link_to_a_protected_file_cannot_be_written() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(t.path()).expect("root");
        std::fs::create_dir_all(root.join(".claude")).expect(".claude");
        std::fs::create_dir_all(root.join(".git/hooks")).expect(".git");
        std::fs::create_dir_all(root.join("scripts")).expect("scripts");
        std::fs::write(root.join(".claude/settings.json"), "{}\n").expect("settings");
        std::fs::write(root.join(".git/config"), "[core]\n").expect("config");
        std::fs::write(root.join("scripts/fmt.sh"), "fmt\n").expect("script");
        std::fs::write(root.join("README.md"), "readme\n").expect("readme");
        let pairs = [
            (".claude/settings.json", "notes.txt"),
            (".git/config", "cfg.txt"),
            ("scripts/fmt.sh", "fmt-copy.sh"),
        ];
        for (target, link) in pairs {
            std::fs::hard_link(root.join(target), root.join(link)).expect("link");
            let extra = vec![root.join("scripts/fmt.sh")];
            let e = write_file(job(&root, link, extra), b"evil\n".to_vec()).expect_err(link);
            assert_eq!(e.code, ErrorCode::Denied, "{link}: {}", e.message);
            assert!(e.message.contains(target), "{link}: {}", e.message);
            assert_ne!(
                std::fs::read(root.join(target)).expect("target"),
                b"evil\n",
                "{target} was changed through {link}"
            );
        }
        // An ordinary file with two names is just a file.
        std::fs::hard_link(root.join("README.md"), root.join("readme2")).expect("link");
        write_file(job(&root, "readme2", Vec::new()), b"new\n".to_vec()).expect("readme2");
        assert_eq!(
            std::fs::read(root.join("README.md")).expect("readme"),
            b"new\n"
        );
    }
}
