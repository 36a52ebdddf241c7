//! Which files may enter the model's context, whatever links they pass through.
//!
//! A repository chooses the names and the links under it, so a checked-in `CLAUDE.md`, rule,
//! skill, command or agent can be a symlink to `~/.ssh/id_rsa`. Two checks keep such files out:
//!
//! * **Containment.** A file the project supplies is read only when its real path (links
//!   resolved) is inside the project (the git repository holding the working directory, else
//!   the working directory). That covers memory files, rules, skills, commands and agents found
//!   in the project's directories, and `@path` imports written as paths inside the project, even
//!   when imports outside the project were approved: the approval is for imports that say they
//!   leave the project, not for a link that hides it. A link that stays inside is followed.
//!   The user's own files (Warden's home, Claude Code's user directory), managed files,
//!   plugins' files and the memory of directories above the project follow their links
//!   anywhere except into secrets: a user may keep `~/.claude/CLAUDE.md` in a dotfiles
//!   repository, and a repository cannot write there.
//! * **Secrets.** No file, whoever supplies it, is read when its path as found or its real
//!   path is a project secret by name (`.env`, `.env.*`: the names the OS confinement denies
//!   in every project) or lies in one of the user's credential stores (`~/.ssh`, `~/.aws`,
//!   `~/.gnupg`, …: the confinement's list of the home's credential stores). This holds with no
//!   Read rule at all; the session's Read deny rules are checked as well, before it (see
//!   [`crate::memory::ReadGate`]).
//!
//! A file refused by either check is skipped with a warning naming it and why; nothing of its
//! text is read.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

#[cfg(target_os = "linux")]
use warden_confine::{HOME_DENIED, PROJECT_DENIED};

/// The project secrets by name, where the OS confinement crate is not built.
#[cfg(not(target_os = "linux"))]
const PROJECT_DENIED: &[&str] = &[".env", ".env.*"];
/// The credential stores under the home, where the OS confinement crate is not built.
#[cfg(not(target_os = "linux"))]
const HOME_DENIED: &[&str] = &[".ssh", ".aws", ".azure", ".gnupg", ".netrc", ".docker"];

/// The containment and secret checks of one session (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Reach {
    /// The project root as found, and with links resolved.
    project: PathBuf,
    project_real: PathBuf,
    /// Credential stores: each as found under the user's home, and with links resolved.
    stores: Vec<PathBuf>,
    secret_names: GlobSet,
}

impl Reach {
    /// The checks for a session in `cwd` whose user's home is `user_home` (no credential
    /// store is known without one; secret names are checked all the same).
    pub fn new(cwd: &Path, user_home: Option<&Path>) -> Self {
        let project = warden_config::local_root(cwd);
        let project_real = std::fs::canonicalize(&project).unwrap_or_else(|_| project.clone());
        let mut stores = Vec::new();
        if let Some(home) = user_home {
            let real = std::fs::canonicalize(home).ok();
            for d in HOME_DENIED {
                stores.push(home.join(d));
                if let Some(r) = &real
                    && r != home
                {
                    stores.push(r.join(d));
                }
            }
        }
        let mut b = GlobSetBuilder::new();
        for p in PROJECT_DENIED {
            if let Ok(g) = Glob::new(p) {
                b.add(g);
            }
        }
        Reach {
            project,
            project_real,
            stores,
            secret_names: b.build().unwrap_or_else(|_| GlobSet::empty()),
        }
    }

    /// The project root, links resolved.
    pub fn project_root(&self) -> &Path {
        &self.project_real
    }

    /// Whether `path`, as written, names something inside the project.
    pub fn in_project(&self, path: &Path) -> bool {
        path.starts_with(&self.project) || path.starts_with(&self.project_real)
    }

    /// Whether the file at `path` may be read: refused when it is a secret, or when
    /// `contained` and it resolves outside the project. A path that cannot be resolved is
    /// refused.
    pub fn check(&self, path: &Path, contained: bool) -> Result<(), Unreachable> {
        let real = std::fs::canonicalize(path).map_err(|source| Unreachable::Unresolved {
            path: path.to_path_buf(),
            source: std::sync::Arc::new(source),
        })?;
        self.check_resolved(path, &real, contained)
    }

    /// [`Reach::check`] with the real path already known.
    pub fn check_resolved(
        &self,
        path: &Path,
        real: &Path,
        contained: bool,
    ) -> Result<(), Unreachable> {
        if contained && !real.starts_with(&self.project_real) {
            return Err(Unreachable::OutsideProject {
                real: real.to_path_buf(),
                project: self.project_real.clone(),
            });
        }
        for p in [path, real] {
            if let Some(why) = self.secret(p) {
                return Err(Unreachable::Secret {
                    link_to: (p != path).then(|| real.to_path_buf()),
                    why,
                });
            }
        }
        Ok(())
    }

    /// Why `path` is a secret, if it is.
    fn secret(&self, path: &Path) -> Option<String> {
        if let Some(store) = self.stores.iter().find(|s| path.starts_with(s)) {
            return Some(format!(
                "{} is in the credential store {}",
                path.display(),
                store.display()
            ));
        }
        let name = path.file_name()?;
        self.secret_names.is_match(Path::new(name)).then(|| {
            format!(
                "{} is a `.env` file, never given to the model",
                path.display()
            )
        })
    }
}

/// Why [`Reach`] refuses a file. Displayed as the end of a warning that names the file.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Unreachable {
    /// Its real path could not be resolved.
    #[error("cannot resolve its real path ({source}); not read")]
    Unresolved {
        /// The path as written.
        path: PathBuf,
        /// Why.
        source: std::sync::Arc<std::io::Error>,
    },
    /// It is a link that leaves the project, for a file that must stay inside it.
    #[error("a link to {}, outside the project {}; not followed", real.display(), project.display())]
    OutsideProject {
        /// Where it leads.
        real: PathBuf,
        /// The project root, links resolved.
        project: PathBuf,
    },
    /// It is a secret (a credential store, a `.env` file), or a link to one.
    #[error("{}{why}; not read", link_to.as_ref().map(|r| format!("a link to {}: ", r.display())).unwrap_or_default())]
    Secret {
        /// The real path, when the path as written is a link to the secret.
        link_to: Option<PathBuf>,
        /// Which secret, naming the path.
        why: String,
    },
}
