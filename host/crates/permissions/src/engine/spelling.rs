//! The names one file goes by once symlinks are resolved, and how rule hits combine over them.

use std::path::{Path, PathBuf};

use crate::rules::{Hit, first};

/// The names one file goes by (spec 2.4, symlinks): the path as written and, when the
/// filesystem resolves it somewhere else, the resolved target.
///
/// A deny or ask rule applies if it matches any name; an allow rule, and the automatic
/// approval inside the working directories, only if it matches both the written path and
/// the target. Otherwise a link inside an allowed area could hand out a file the rules
/// never allowed, and a link outside a denied one could read what they deny.
#[derive(Debug)]
pub(super) struct Spellings {
    /// The path as written, made absolute and normalised lexically: what rules always saw.
    pub(super) lexical: PathBuf,
    pub(super) target: Target,
}

#[derive(Debug, Clone)]
pub(super) enum Target {
    /// Resolving changes nothing: the written path is the file's only name.
    Same,
    /// The file's other names: the resolved target as resolved and, when it lies below a
    /// working directory or home that is itself reached through a symlink, under that
    /// directory's configured name (so a project opened through a linked path still matches
    /// its own `./` rules, whichever spelling a call uses). Matching any of them counts as
    /// matching the target.
    Elsewhere(Vec<PathBuf>),
    /// The links form a loop, so there is no target to check: nothing approves the path
    /// automatically and only its written form is checked against deny and ask rules.
    Unknown,
}

impl Spellings {
    /// A path taken as written, without consulting the filesystem.
    pub(super) fn lexical(lexical: PathBuf) -> Self {
        Spellings {
            lexical,
            target: Target::Same,
        }
    }

    /// The first rule `hit` finds under any name: how deny and ask rules apply.
    pub(super) fn any_hit(&self, hit: impl Fn(&Path) -> Hit) -> Hit {
        let mut h = hit(&self.lexical);
        if let Target::Elsewhere(names) = &self.target {
            for n in names {
                h = first(h, hit(n));
            }
        }
        h
    }

    /// The rule `hit` finds for the written path, provided it also finds one for the target:
    /// how allow rules apply.
    pub(super) fn all_hit(&self, hit: impl Fn(&Path) -> Hit) -> Hit {
        let h = hit(&self.lexical)?;
        match &self.target {
            Target::Same => Some(h),
            Target::Elsewhere(names) => names.iter().any(|n| hit(n).is_some()).then_some(h),
            Target::Unknown => None,
        }
    }

    /// Whether `pred` holds for the written path and the target.
    pub(super) fn all(&self, pred: impl Fn(&Path) -> bool) -> bool {
        pred(&self.lexical)
            && match &self.target {
                Target::Same => true,
                Target::Elsewhere(names) => names.iter().any(|n| pred(n)),
                Target::Unknown => false,
            }
    }

    /// The first name `pred` holds for.
    pub(super) fn find(&self, pred: impl Fn(&Path) -> bool) -> Option<&Path> {
        if pred(&self.lexical) {
            return Some(&self.lexical);
        }
        match &self.target {
            Target::Elsewhere(names) => names.iter().map(PathBuf::as_path).find(|n| pred(n)),
            _ => None,
        }
    }
}
