//! Copying a plugin tree into staging: Claude Code's symlink rules, within budgets.
//!
//! The tree comes from a marketplace or repository someone else controls, so the copy assumes
//! it is hostile:
//!
//! * **Budgets.** [`CopyLimits`] caps the total bytes, the number of files, the directory depth
//!   and the size of any one file. Defaults: 512 MiB, 20,000 files, 32 levels, 100 MiB. Each can
//!   be changed in the *user* settings file (`~/.warden/settings.json`; a project's settings are
//!   not read, as a cloned repository could raise them):
//!   `{"plugins": {"copyLimits": {"maxTotalBytes": 1073741824, "maxFiles": 50000,
//!   "maxDepth": 48, "maxFileBytes": 209715200}}}`. Going over a budget fails the install.
//! * **Each real directory once.** A directory reached a second time through symlinks (a symlink
//!   DAG such as `dN/{a,b} -> ../d(N+1)`, which would otherwise expand exponentially) is not
//!   copied again: the second place becomes a relative symlink to the first copy.
//! * **Only regular files, directories and symlinks.** A FIFO, socket or device is skipped with a
//!   warning naming it. The type is read with `symlink_metadata` before anything is opened, and
//!   files are opened with `O_NONBLOCK | O_NOFOLLOW` and checked again on the open handle, so a
//!   FIFO swapped in meanwhile cannot block the copy.
//! * **Nothing left behind.** The copy goes into the install's staging directory, which is
//!   removed on any failure; the previous installation is not touched until the commit.
//!
//! Symlinks: a link whose target is inside the plugin is kept (as a relative link); one pointing
//! elsewhere inside the boundary (the marketplace or repository) is dereferenced; one pointing
//! outside is skipped. `.git` is not copied; file modes are kept.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::diag::Diagnostic;
use crate::error::{PluginError, io};
use crate::progress::Progress;
use crate::util::open_regular;

/// Environment variable (milliseconds) that slows the copy into staging down per file. It exists
/// for crash-safety tests that kill an install midway; leave it unset otherwise.
pub const COPY_DELAY_ENV: &str = "WARDEN_PLUGINS_COPY_DELAY_MS";

/// Budgets for copying one plugin (see the module docs for the defaults and the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyLimits {
    /// Total bytes of all files (`maxTotalBytes`).
    pub max_total_bytes: u64,
    /// Number of files and symlinks (`maxFiles`).
    pub max_files: u64,
    /// Directory nesting below the plugin root (`maxDepth`).
    pub max_depth: u64,
    /// Size of any one file (`maxFileBytes`).
    pub max_file_bytes: u64,
}

impl Default for CopyLimits {
    fn default() -> Self {
        CopyLimits {
            max_total_bytes: 512 << 20,
            max_files: 20_000,
            max_depth: 32,
            max_file_bytes: 100 << 20,
        }
    }
}

impl CopyLimits {
    /// The defaults overridden by `plugins.copyLimits` of a settings object read from `file`.
    pub fn from_settings(settings: &Map<String, Value>, file: &Path) -> Result<Self, PluginError> {
        let mut l = CopyLimits::default();
        let Some(v) = settings.get("plugins").and_then(|p| p.get("copyLimits")) else {
            return Ok(l);
        };
        let bad = |key: &str, message: String| PluginError::BadCopyLimit {
            file: file.to_path_buf(),
            key: key.to_string(),
            message,
        };
        let Value::Object(o) = v else {
            return Err(bad("", "must be an object".into()));
        };
        for (k, val) in o {
            let slot = match k.as_str() {
                "maxTotalBytes" => &mut l.max_total_bytes,
                "maxFiles" => &mut l.max_files,
                "maxDepth" => &mut l.max_depth,
                "maxFileBytes" => &mut l.max_file_bytes,
                _ => {
                    return Err(bad(
                        k,
                        "unknown key; known: maxTotalBytes, maxFiles, maxDepth, maxFileBytes"
                            .into(),
                    ));
                }
            };
            *slot = val
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad(k, format!("must be a positive integer, found {val}")))?;
        }
        Ok(l)
    }
}

/// Copies the plugin at `src` into `dest` (which must not exist); returns warnings about what
/// was skipped.
pub(super) fn copy_tree(
    src: &Path,
    boundary: &Path,
    dest: &Path,
    limits: CopyLimits,
    progress: Progress,
) -> Result<Vec<Diagnostic>, PluginError> {
    let root = src.canonicalize().map_err(io(src))?;
    let boundary = boundary.canonicalize().map_err(io(boundary))?;
    let total = count_files(&root, limits.max_files);
    let pb = progress.bar(
        total,
        format!(
            "Copying {}",
            root.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default()
        ),
    );
    let delay = std::env::var(COPY_DELAY_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let mut cx = CopyCx {
        root: root.clone(),
        boundary,
        dest_root: dest.to_path_buf(),
        limits,
        pb,
        delay,
        files: 0,
        bytes: 0,
        visited: HashMap::new(),
        warnings: Vec::new(),
    };
    let r = cx.copy_dir(&root, dest, 0);
    cx.pb.finish_and_clear();
    r.map(|()| cx.warnings)
}

/// Files below `dir` (not following links, stopping at `cap`), for the progress bar.
fn count_files(dir: &Path, cap: u64) -> u64 {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() && e.file_name() != ".git" => stack.push(e.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
            if n >= cap {
                return n;
            }
        }
    }
    n
}

struct CopyCx {
    root: PathBuf,
    boundary: PathBuf,
    dest_root: PathBuf,
    limits: CopyLimits,
    pb: indicatif::ProgressBar,
    delay: u64,
    files: u64,
    bytes: u64,
    /// Resolved source directory → where it was copied to.
    visited: HashMap<PathBuf, PathBuf>,
    warnings: Vec<Diagnostic>,
}

impl CopyCx {
    /// Copies the resolved directory `src` to `dest`, `depth` levels below the plugin root.
    fn copy_dir(&mut self, src: &Path, dest: &Path, depth: u64) -> Result<(), PluginError> {
        if let Some(first) = self.visited.get(src).cloned() {
            return self.link(&first, dest);
        }
        if depth > self.limits.max_depth {
            return Err(PluginError::CopyBudget {
                path: src.to_path_buf(),
                what: "the directory depth".into(),
                limit: format!("{} levels", self.limits.max_depth),
                key: "maxDepth",
            });
        }
        self.visited.insert(src.to_path_buf(), dest.to_path_buf());
        std::fs::create_dir(dest).map_err(io(dest))?;
        let mut entries: Vec<_> = std::fs::read_dir(src).map_err(io(src))?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name();
            if name == ".git" {
                continue;
            }
            let from = src.join(&name);
            let to = dest.join(&name);
            let meta = std::fs::symlink_metadata(&from).map_err(io(&from))?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                self.copy_link(&from, &to, depth)?;
            } else if ft.is_dir() {
                self.copy_dir(&from, &to, depth + 1)?;
            } else if ft.is_file() {
                self.copy_file(&from, &to, &meta)?;
            } else {
                self.skip_special(&from);
            }
        }
        Ok(())
    }

    fn copy_link(&mut self, from: &Path, to: &Path, depth: u64) -> Result<(), PluginError> {
        let Ok(target) = from.canonicalize() else {
            return Ok(()); // dangling: skipped
        };
        if let Ok(inside) = target.strip_prefix(&self.root) {
            let dest_target = self.dest_root.join(inside);
            return self.link(&dest_target, to);
        }
        if !target.starts_with(&self.boundary) {
            return Ok(());
        }
        let meta = std::fs::metadata(&target).map_err(io(&target))?;
        if meta.is_dir() {
            self.copy_dir(&target, to, depth + 1)
        } else if meta.is_file() {
            self.copy_file(&target, to, &meta)
        } else {
            self.skip_special(from);
            Ok(())
        }
    }

    /// A relative symlink at `link` to `dest_target` (both inside the copy).
    fn link(&mut self, dest_target: &Path, link: &Path) -> Result<(), PluginError> {
        self.count(link, 0)?;
        let link_dir = link.parent().unwrap_or(&self.dest_root);
        let rel = relative(link_dir, dest_target);
        symlink(&rel, link).map_err(io(link))
    }

    fn skip_special(&mut self, path: &Path) {
        self.warnings.push(Diagnostic::warning(
            path,
            "not a regular file, directory or symlink (a FIFO, socket or device); it was not copied",
        ));
    }

    /// Counts one more entry of `len` bytes against the budgets.
    fn count(&mut self, path: &Path, len: u64) -> Result<(), PluginError> {
        self.files += 1;
        if self.files > self.limits.max_files {
            return Err(PluginError::CopyBudget {
                path: path.to_path_buf(),
                what: "the number of files".into(),
                limit: format!("{} files", self.limits.max_files),
                key: "maxFiles",
            });
        }
        if len > self.limits.max_file_bytes {
            return Err(PluginError::CopyBudget {
                path: path.to_path_buf(),
                what: format!("the file's size ({len} bytes)"),
                limit: format!("{} bytes", self.limits.max_file_bytes),
                key: "maxFileBytes",
            });
        }
        self.bytes = self.bytes.saturating_add(len);
        if self.bytes > self.limits.max_total_bytes {
            return Err(PluginError::CopyBudget {
                path: path.to_path_buf(),
                what: "the plugin's total size".into(),
                limit: format!("{} bytes", self.limits.max_total_bytes),
                key: "maxTotalBytes",
            });
        }
        Ok(())
    }

    fn copy_file(
        &mut self,
        from: &Path,
        to: &Path,
        meta: &std::fs::Metadata,
    ) -> Result<(), PluginError> {
        self.count(from, meta.len())?;
        let Some(mut file) = open_regular(from, false).map_err(io(from))? else {
            self.skip_special(from);
            return Ok(());
        };
        let mut out = create_like(to, meta).map_err(io(to))?;
        // The file may grow after it was measured: never read past what the budgets allow.
        let room = self
            .limits
            .max_file_bytes
            .min(self.limits.max_total_bytes - (self.bytes - meta.len()));
        let copied = copy_data(&mut (&mut file).take(room + 1), from, &mut out, to)?;
        if copied > room {
            return Err(PluginError::CopyBudget {
                path: from.to_path_buf(),
                what: "the file's size (it grew while being copied)".into(),
                limit: format!("{room} bytes"),
                key: "maxFileBytes",
            });
        }
        self.bytes = self.bytes - meta.len() + copied;
        self.pb.inc(1);
        if self.delay > 0 {
            std::thread::sleep(std::time::Duration::from_millis(self.delay));
        }
        Ok(())
    }
}

/// Copies `r` (the file `from`) into `w` (the file `to`), and names in an error the file whose
/// side failed: a full disk is a failure to write `to`, not to read `from`.
fn copy_data(
    r: &mut impl std::io::Read,
    from: &Path,
    w: &mut impl std::io::Write,
    to: &Path,
) -> Result<u64, PluginError> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(from)(e)),
        };
        w.write_all(&buf[..n]).map_err(io(to))?;
        total += n as u64;
    }
    w.flush().map_err(io(to))?;
    Ok(total)
}

/// Creates `to` (which must not exist) with `meta`'s permission bits.
fn create_like(to: &Path, meta: &std::fs::Metadata) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mode = meta.permissions().mode() & 0o777;
        o.mode(mode);
        let f = o.open(to)?;
        // Without setuid/setgid bits, and regardless of the umask.
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(f)
    }
    #[cfg(not(unix))]
    {
        let f = o.open(to)?;
        f.set_permissions(meta.permissions())?;
        Ok(f)
    }
}

fn relative(from_dir: &Path, target: &Path) -> PathBuf {
    let f: Vec<_> = from_dir.components().collect();
    let t: Vec<_> = target.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let _ = (target, link);
    Ok(())
}
