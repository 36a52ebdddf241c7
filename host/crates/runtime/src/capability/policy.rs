//! The user's permission rules as a capability [`Policy`].
//!
//! A capability check happens while a tool call that was already approved is running, so an
//! `ask` answer cannot reach a user there. [`AskAt::Allow`] (the default) lets such accesses
//! through: the call was approved, and only rules that *deny* stop its accesses. With
//! [`AskAt::Deny`] an access that would need approval is refused as well, for unattended runs.

use std::path::Path;
use std::sync::Arc;

use warden_permissions::{Access, Decision, Permissions, Ruling};

use crate::Policy;

/// What a capability does with an access the rules would ask the user about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AskAt {
    /// Let it through: the enclosing call was approved.
    #[default]
    Allow,
    /// Refuse it.
    Deny,
}

/// [`Policy`] backed by the permission engine: Read/Edit rules for files, Bash rules for
/// programs, WebFetch rules for URLs.
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    perms: Arc<Permissions>,
    ask: AskAt,
}

impl PermissionPolicy {
    /// A policy over compiled rules.
    pub fn new(perms: Arc<Permissions>, ask: AskAt) -> Self {
        PermissionPolicy { perms, ask }
    }

    /// The rules.
    pub fn permissions(&self) -> &Permissions {
        &self.perms
    }

    fn verdict(&self, d: Ruling) -> Result<(), String> {
        let from = |d: &Ruling| match (&d.rule, &d.source) {
            (Some(_), Some(src)) => format!("{} (from {src})", d.reason),
            _ => d.reason.clone(),
        };
        match d.decision {
            Decision::Allow => Ok(()),
            Decision::Ask if self.ask == AskAt::Allow => Ok(()),
            Decision::Ask => Err(format!("needs approval: {}", from(&d))),
            Decision::Deny => Err(from(&d)),
        }
    }
}

impl Policy for PermissionPolicy {
    fn check_path(&self, path: &Path, write: bool) -> Result<(), String> {
        let access = if write { Access::Write } else { Access::Read };
        self.verdict(self.perms.check_path(access, path))
    }

    fn check_exec(&self, argv: &[String], cwd: &Path) -> Result<(), String> {
        self.verdict(self.perms.check_exec(argv, cwd))
    }

    fn check_url(&self, url: &str) -> Result<(), String> {
        self.verdict(self.perms.check_url(url))
    }

    /// Read and Edit deny rules, plus ask rules when an `ask` refuses ([`AskAt::Deny`]).
    fn denied_paths(&self, roots: &[std::path::PathBuf]) -> Result<crate::DeniedPaths, String> {
        self.perms
            .denied_paths(roots, self.ask == AskAt::Deny)
            .map_err(|e| e.to_string())
    }
}
