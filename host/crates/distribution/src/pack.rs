//! A plugin directory as OCI blobs, and back.
//!
//! Each `.wasm` file is one `application/wasm` layer titled with its path (the shape `wkg` and
//! the wasm OCI artifact convention use); every other file goes into one tar layer
//! ([`FILES_MEDIA_TYPE`]), written deterministically (sorted, owner 0, mtime 0, mode 0644 or
//! 0755) so the same tree always gives the same digests. Unpacking writes regular files and
//! directories only, at relative paths that stay inside the destination.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Component, Path, PathBuf};

use crate::error::{DistError, io};

/// Media type of a WASM component layer.
pub const WASM_MEDIA_TYPE: &str = "application/wasm";
/// The older media type some tools still push for components.
pub const WASM_LEGACY_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";
/// Media type of the config blob.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// Media type of the layer holding a plugin's non-WASM files.
pub const FILES_MEDIA_TYPE: &str = "application/vnd.warden.plugin.files.v1.tar";
/// The annotation naming a layer's file.
pub const TITLE: &str = "org.opencontainers.image.title";

/// One layer to push.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Media type.
    pub media_type: &'static str,
    /// Contents.
    pub data: Vec<u8>,
    /// The file's path, for WASM layers.
    pub title: Option<String>,
}

/// Reads `dir` into layers. Symbolic links, `.git` and files that are neither regular files
/// nor directories are refused or skipped as the copy at install would.
pub fn pack(dir: &Path) -> Result<Vec<Layer>, DistError> {
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    let mut layers = Vec::new();
    let mut tar = tar::Builder::new(Vec::new());
    let mut any_file = false;
    for rel in files {
        let path = dir.join(&rel);
        let data = std::fs::read(&path).map_err(io(&path))?;
        let name = rel.to_string_lossy().to_string();
        if name.ends_with(".wasm") {
            layers.push(Layer {
                media_type: WASM_MEDIA_TYPE,
                data,
                title: Some(name),
            });
            continue;
        }
        let exec = std::fs::metadata(&path)
            .map_err(io(&path))?
            .permissions()
            .mode()
            & 0o111
            != 0;
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(if exec { 0o755 } else { 0o644 });
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        h.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut h, &rel, data.as_slice())
            .map_err(io(&path))?;
        any_file = true;
    }
    if any_file {
        let data = tar.into_inner().map_err(io(dir))?;
        layers.push(Layer {
            media_type: FILES_MEDIA_TYPE,
            data,
            title: None,
        });
    }
    if layers.is_empty() {
        return Err(DistError::Pack {
            path: dir.to_path_buf(),
            reason: "holds no files to publish".into(),
        });
    }
    Ok(layers)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DistError> {
    let rd = std::fs::read_dir(dir).map_err(io(dir))?;
    for e in rd {
        let e = e.map_err(io(dir))?;
        let path = e.path();
        let ft = e.file_type().map_err(io(&path))?;
        if e.file_name() == ".git" {
            continue;
        }
        if ft.is_symlink() {
            return Err(DistError::Pack {
                path,
                reason: "is a symbolic link; a published plugin holds regular files only".into(),
            });
        }
        if ft.is_dir() {
            walk(root, &path, out)?;
        } else if ft.is_file() {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            out.push(rel);
        }
    }
    Ok(())
}

/// A relative path made only of normal components, or why not.
pub fn safe_relative(name: &str) -> Result<PathBuf, String> {
    let p = Path::new(name);
    if name.is_empty() || name.contains('\0') {
        return Err("empty path".into());
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return Err(format!("path `{name}` leaves the plugin directory")),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("path `{name}` names no file"));
    }
    Ok(out)
}

/// Writes `data` at `rel` under `dest`, never over an existing file.
pub fn write_file(dest: &Path, rel: &Path, data: &[u8], exec: bool) -> Result<(), DistError> {
    let path = dest.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if exec { 0o755 } else { 0o644 })
        .open(&path)
        .map_err(io(&path))?;
    f.write_all(data).map_err(io(&path))
}

/// Unpacks a files layer under `dest`: regular files and directories only, inside `dest`.
pub fn unpack_files(data: &[u8], dest: &Path, what: &str) -> Result<(), String> {
    let mut ar = tar::Archive::new(data);
    let entries = ar
        .entries()
        .map_err(|e| format!("{what}: unreadable tar: {e}"))?;
    for e in entries {
        let mut e = e.map_err(|e| format!("{what}: unreadable tar entry: {e}"))?;
        let raw = e
            .path()
            .map_err(|e| format!("{what}: bad entry path: {e}"))?
            .to_string_lossy()
            .to_string();
        let rel = safe_relative(&raw).map_err(|r| format!("{what}: {r}"))?;
        match e.header().entry_type() {
            tar::EntryType::Directory => {
                let d = dest.join(&rel);
                std::fs::create_dir_all(&d).map_err(|err| format!("{}: {err}", d.display()))?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let exec = e.header().mode().unwrap_or(0o644) & 0o111 != 0;
                let mut buf = Vec::new();
                e.read_to_end(&mut buf)
                    .map_err(|err| format!("{what}: {raw}: {err}"))?;
                write_file(dest, &rel, &buf, exec).map_err(|err| err.to_string())?;
            }
            other => {
                return Err(format!(
                    "{what}: entry `{raw}` is a {other:?}; only regular files and directories are unpacked"
                ));
            }
        }
    }
    Ok(())
}
