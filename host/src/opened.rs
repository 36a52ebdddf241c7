//! The projects a long-lived service may run a repository's hooks for.
//!
//! A hook input names its session's directory in `cwd`, and a session there reads that
//! directory's `.claude/settings.json`, whose command hooks run with the user's rights. For
//! `warden hook` Claude Code chose the directory: the user opened the project, and accepted it
//! in Claude Code's trust dialog. A service answering POSTs has no such guarantee: the `cwd`
//! is whatever the request says. Warden keeps no record of its own of the projects a user
//! trusted, so "opened" means named when the service started: the directory it was started in
//! (or its `--cwd`) and each `--project`.
//!
//! An event runs in the opened project that holds its `cwd` (the deepest, when opened
//! projects nest), never in the `cwd` itself: a directory inside an opened project with a
//! `.claude` of its own (a vendored repository, a submodule) is not a project the user
//! opened, and its settings are not read. An event whose `cwd` lies in no opened project runs
//! nothing.

use std::path::{Path, PathBuf};

/// A project that cannot be opened.
#[derive(Debug, thiserror::Error)]
#[error("project {}", path.display())]
pub struct OpenError {
    /// The directory as given.
    pub path: PathBuf,
    /// Why it cannot be resolved.
    pub source: std::io::Error,
}

/// The projects a service was started for, by their canonical paths.
#[derive(Debug, Clone, Default)]
pub struct OpenedProjects {
    roots: Vec<PathBuf>,
}

impl OpenedProjects {
    /// Opens each directory (resolved now, symbolic links and all, so a link changed later
    /// does not move a project).
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Result<Self, OpenError> {
        let mut roots = Vec::new();
        for path in dirs {
            let canonical = path
                .canonicalize()
                .and_then(|c| {
                    if c.is_dir() {
                        Ok(c)
                    } else {
                        Err(std::io::Error::new(
                            std::io::ErrorKind::NotADirectory,
                            "not a directory",
                        ))
                    }
                })
                .map_err(|source| OpenError {
                    path: path.clone(),
                    source,
                })?;
            if !roots.contains(&canonical) {
                roots.push(canonical);
            }
        }
        Ok(OpenedProjects { roots })
    }

    /// The opened projects.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The opened project an event whose `cwd` is `dir` runs in: the deepest opened project
    /// holding `dir` once resolved. `None` for a relative path, a path that does not resolve
    /// and a path outside every opened project.
    pub fn project_of(&self, dir: &Path) -> Option<&Path> {
        if !dir.is_absolute() {
            return None;
        }
        let dir = dir.canonicalize().ok()?;
        self.roots
            .iter()
            .filter(|r| dir.starts_with(r))
            .max_by_key(|r| r.components().count())
            .map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_runs_in_the_opened_project_that_holds_its_cwd() {
        let t = tempfile::tempdir().expect("tempdir");
        let base = t.path().canonicalize().expect("canonical");
        for d in ["proj/sub/vendored", "proj2", "elsewhere", "proj/inner"] {
            std::fs::create_dir_all(base.join(d)).expect("mkdir");
        }
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("proj/link"))
            .expect("symlink");
        let opened = OpenedProjects::new([
            base.join("proj"),
            base.join("proj/inner"),
            base.join("proj/../proj"),
        ])
        .expect("open");
        assert_eq!(opened.roots().len(), 2, "{:?}", opened.roots());
        let proj = base.join("proj");
        assert_eq!(opened.project_of(&proj), Some(proj.as_path()));
        // A directory inside with settings of its own still runs as the opened project.
        assert_eq!(
            opened.project_of(&base.join("proj/sub/vendored")),
            Some(proj.as_path())
        );
        assert_eq!(
            opened.project_of(&base.join("proj/inner")),
            Some(base.join("proj/inner").as_path())
        );
        // A sibling whose name starts alike, `..`, a link out, a relative path, a missing one.
        for outside in [
            base.join("proj2"),
            base.join("proj/../elsewhere"),
            base.join("proj/link"),
            PathBuf::from("proj"),
            base.join("proj/missing"),
            PathBuf::from("/"),
        ] {
            assert_eq!(opened.project_of(&outside), None, "{}", outside.display());
        }
    }

    #[test]
    fn a_project_that_does_not_resolve_is_an_error_naming_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let file = t.path().join("f");
        std::fs::write(&file, "").expect("write");
        for bad in [t.path().join("missing"), file] {
            let e = OpenedProjects::new([bad.clone()]).expect_err("refused");
            assert!(e.to_string().contains(&bad.display().to_string()), "{e}");
        }
    }
}
