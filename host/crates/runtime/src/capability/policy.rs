//! The user's permission rules as a capability [`Policy`].
//!
//! A capability check happens while a tool call that was already approved is running, so an
//! `ask` answer cannot reach a user there. [`AskAt::Allow`] (the default) lets such accesses
//! through: the call was approved, and only rules that *deny* stop its accesses. With
//! [`AskAt::Deny`] an access that would need approval is refused as well, for unattended runs.

use std::path::Path;
use std::sync::Arc;

use warden_permissions::{Access, Decision, Permissions, Ruling};

use crate::{Policy, PolicyError};

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

    fn verdict(&self, d: Ruling) -> Result<(), PolicyError> {
        verdict(self.ask, d)
    }
}

fn verdict(ask: AskAt, d: Ruling) -> Result<(), PolicyError> {
    // The file a rule came from is named only for a rule (a default has none).
    let origin = d.rule.as_ref().and(d.source);
    match d.decision {
        Decision::Allow => Ok(()),
        Decision::Ask if ask == AskAt::Allow => Ok(()),
        Decision::Ask => Err(PolicyError::NeedsApproval {
            reason: d.reason,
            origin,
        }),
        Decision::Deny => Err(PolicyError::Denied {
            reason: d.reason,
            origin,
        }),
    }
}

impl Policy for PermissionPolicy {
    fn check_path(&self, path: &Path, write: bool) -> Result<(), PolicyError> {
        let access = if write { Access::Write } else { Access::Read };
        self.verdict(self.perms.check_path(access, path))
    }

    fn check_exec(&self, argv: &[String], cwd: &Path) -> Result<(), PolicyError> {
        self.verdict(self.perms.check_exec(argv, cwd))
    }

    fn check_url(&self, url: &str) -> Result<(), PolicyError> {
        self.verdict(self.perms.check_url(url))
    }

    /// Read and Edit deny rules, plus ask rules when an `ask` refuses ([`AskAt::Deny`]).
    fn denied_paths(
        &self,
        roots: &[std::path::PathBuf],
    ) -> Result<crate::DeniedPaths, PolicyError> {
        self.perms
            .denied_paths(roots, self.ask == AskAt::Deny)
            .map_err(|e| PolicyError::DeniedPaths(Arc::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ruling(decision: Decision, rule: Option<&str>, source: Option<&str>) -> Ruling {
        Ruling {
            decision,
            reason: "matches Read(./.env)".into(),
            rule: rule.map(Into::into),
            source: source.map(Into::into),
        }
    }

    #[test]
    fn a_refusal_is_typed_and_names_the_file_its_rule_came_from() {
        let e = verdict(
            AskAt::Deny,
            ruling(
                Decision::Deny,
                Some("Read(./.env)"),
                Some("/p/.claude/settings.json"),
            ),
        )
        .expect_err("a deny refuses");
        assert!(matches!(e, PolicyError::Denied { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "matches Read(./.env) (from /p/.claude/settings.json)"
        );
        let e = verdict(
            AskAt::Deny,
            ruling(Decision::Ask, Some("Read(./.env)"), Some("flag")),
        )
        .expect_err("an ask refuses under AskAt::Deny");
        assert!(matches!(e, PolicyError::NeedsApproval { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "needs approval: matches Read(./.env) (from flag)"
        );
        // No rule, no origin: a default is not from a file.
        let e = verdict(
            AskAt::Deny,
            ruling(Decision::Deny, None, Some("/p/settings.json")),
        )
        .expect_err("deny");
        assert_eq!(e.to_string(), "matches Read(./.env)");
        assert!(verdict(AskAt::Allow, ruling(Decision::Ask, Some("r"), None)).is_ok());
    }
}
