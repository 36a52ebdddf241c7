//! Compiling settings and command-line flags into a [`Permissions`]: rules parsed, anchored
//! and indexed per list, the mode chosen, working directories gathered, problems collected as
//! warnings naming their file.

use std::path::{Path, PathBuf};

use serde_json::Value;
use warden_config::{Scope, Settings};

use super::cache::{LinkCache, ParseCache};
use super::types::{Mode, Options, PermissionsError, Warning};
use super::{Permissions, Source};
use crate::paths::{self, Anchors};
use crate::rules::{self, CommandIndex, Problem, RuleKind, RuleSet, Spec};

/// How a user trusts a workspace, for the warnings about what waits for trust. Warden's own
/// commands run sessions as trusted (like `claude -p`); an embedder that passes
/// `Options::trusted: false` leaves the choice to its user, as Claude Code's trust dialog does.
const HOW_TO_TRUST: &str = "trust it to apply them: run `claude` in this folder and accept its trust dialog (Claude Code records `hasTrustDialogAccepted` for the folder in ~/.claude.json), or pass `trusted: true` in the permission options when embedding Warden";

impl Permissions {
    /// Builds the engine from loaded settings. Problems with individual rules become
    /// [`Permissions::warnings`]; only a contradiction the user must resolve is an error.
    pub fn from_settings(
        settings: &Settings,
        opts: &Options,
    ) -> Result<Permissions, PermissionsError> {
        let mut b = Builder {
            opts,
            sources: Vec::new(),
            warnings: Vec::new(),
            lists: [Vec::new(), Vec::new(), Vec::new()],
            extra_dirs: Vec::new(),
        };
        let managed_only = settings.scope(Scope::Managed).any(|f| {
            f.value
                .get("allowManagedPermissionRulesOnly")
                .and_then(Value::as_bool)
                == Some(true)
        });
        let mut flags_added = false;
        for f in &settings.files {
            if f.scope != Scope::Managed && !flags_added {
                b.flags(managed_only);
                flags_added = true;
            }
            if managed_only && f.scope != Scope::Managed {
                continue;
            }
            let Some(perms) = f.value.get("permissions") else {
                continue;
            };
            let name = f.display_name();
            let Some(perms) = perms.as_object() else {
                b.warnings.push(Warning {
                    source: name,
                    message: "\"permissions\" must be an object; ignored".into(),
                });
                continue;
            };
            let root = match (f.scope, f.path.is_some()) {
                (Scope::Local, _) | (_, false) => opts.cwd.clone(),
                _ => f.base_dir().unwrap_or_else(|| opts.cwd.clone()),
            };
            let untrusted_project = f.scope == Scope::Project && !opts.trusted;
            let src = b.source(name.clone());
            for (kind, key) in [
                (RuleKind::Deny, "deny"),
                (RuleKind::Ask, "ask"),
                (RuleKind::Allow, "allow"),
            ] {
                let Some(list) = perms.get(key) else { continue };
                let Some(list) = list.as_array() else {
                    b.warnings.push(Warning {
                        source: name.clone(),
                        message: format!(
                            "permissions.{key} must be an array of rule strings; ignored"
                        ),
                    });
                    continue;
                };
                if untrusted_project && kind == RuleKind::Allow {
                    if !list.is_empty() {
                        b.warnings.push(Warning {
                            source: name.clone(),
                            message: format!("Ignoring {} permissions.allow entries from {name}: this workspace has not been trusted; {HOW_TO_TRUST}", list.len()),
                        });
                    }
                    continue;
                }
                for item in list {
                    match item.as_str() {
                        Some(text) => b.rule(text, kind, src, &root, false),
                        None => b.warnings.push(Warning {
                            source: name.clone(),
                            message: format!(
                                "permissions.{key} entry {item} is not a string; ignored"
                            ),
                        }),
                    }
                }
            }
            if let Some(dirs) = perms.get("additionalDirectories").and_then(Value::as_array) {
                if untrusted_project {
                    if !dirs.is_empty() {
                        b.warnings.push(Warning {
                            source: name.clone(),
                            message: format!("Ignoring {} permissions.additionalDirectories entries from {name}: this workspace has not been trusted; {HOW_TO_TRUST}", dirs.len()),
                        });
                    }
                } else {
                    for d in dirs.iter().filter_map(Value::as_str) {
                        let dir = paths::resolve(d, &opts.cwd, &opts.home);
                        // A repository may name its own subdirectories, not the rest of the
                        // disk: reads there would run without asking.
                        if !f.scope.is_user_controlled()
                            && !paths::is_within(&dir, &paths::normalise(&opts.cwd))
                        {
                            b.warnings.push(Warning {
                                source: name.clone(),
                                message: format!("`permissions.additionalDirectories` entry {d:?} is ignored: it is outside the project, and a repository's settings can tighten, never loosen"),
                            });
                            continue;
                        }
                        b.extra_dirs.push(dir);
                    }
                }
            }
        }
        if !flags_added {
            b.flags(managed_only);
        }

        let bypass_disabled_by = settings.files.iter().find(|f| {
            f.value
                .get("permissions")
                .and_then(|p| p.get("disableBypassPermissionsMode"))
                .and_then(Value::as_str)
                == Some("disable")
        });
        let mut mode = Mode::Default;
        if let Some(m) = opts.mode {
            if m == Mode::BypassPermissions
                && let Some(f) = bypass_disabled_by
            {
                return Err(PermissionsError::BypassDisabled {
                    file: f.display_name(),
                });
            }
            mode = m;
        } else if let Some((v, f)) = settings_mode(settings, &mut b.warnings) {
            let name = f.display_name();
            match v.as_str().map(|s| (s, Mode::parse(s))) {
                Some((_, Some(Mode::BypassPermissions))) if bypass_disabled_by.is_some() => b.warnings.push(Warning {
                    source: name,
                    message: "defaultMode bypassPermissions is disabled by permissions.disableBypassPermissionsMode; using default".into(),
                }),
                Some((_, Some(m))) => mode = m,
                Some(("auto", None)) => b.warnings.push(Warning { source: name, message: "defaultMode \"auto\" is not supported by Warden; using default".into() }),
                _ => b.warnings.push(Warning {
                    source: name,
                    message: format!("defaultMode {v} is not one of default, acceptEdits, plan, dontAsk, bypassPermissions; using default"),
                }),
            }
        }
        for d in &opts.add_dirs {
            b.extra_dirs
                .push(paths::resolve(&d.to_string_lossy(), &opts.cwd, &opts.home));
        }
        b.warnings
            .extend(settings.ignored_loosenings().into_iter().map(|i| Warning {
                source: i.file,
                message: format!("`{}` is ignored: {}", i.key, i.why),
            }));
        let mut work_dirs = vec![paths::normalise(&opts.cwd)];
        work_dirs.extend(b.extra_dirs.iter().cloned());
        let [deny, ask, allow] = b.lists;
        Ok(Permissions {
            mode,
            cwd: paths::normalise(&opts.cwd),
            home: opts.home.clone(),
            work_dirs,
            extra_dirs: b.extra_dirs,
            commands: CommandIndex::new([&deny, &ask, &allow]),
            deny: RuleSet::new(deny),
            ask: RuleSet::new(ask),
            allow: RuleSet::new(allow),
            sources: b.sources,
            warnings: b.warnings,
            bypass_disabled: bypass_disabled_by.is_some(),
            parse_cache: ParseCache::default(),
            real_anchors: std::sync::OnceLock::new(),
            link_cache: LinkCache::default(),
        })
    }
}

/// How far a mode lets calls run without asking, for comparing a repository's choice with
/// the user's: `plan` and `dontAsk` approve nothing `default` would not.
fn looseness(m: Mode) -> u8 {
    match m {
        Mode::Plan | Mode::DontAsk => 0,
        Mode::Default => 1,
        Mode::AcceptEdits => 2,
        Mode::BypassPermissions => 3,
    }
}

/// The `permissions.defaultMode` that counts, and its file: the highest-precedence one, except
/// that a project or local file's mode counts only when it is no looser than the mode the
/// user's own files give (`default` when they give none): a repository may choose `plan`, or
/// `default` over the user's `acceptEdits`, never `acceptEdits` or `bypassPermissions` (see
/// `warden_config::loosen`). An ignored choice is a warning naming its file.
fn settings_mode<'s>(
    settings: &'s Settings,
    warnings: &mut Vec<Warning>,
) -> Option<(&'s Value, &'s warden_config::SettingsFile)> {
    let mode_of = |f: &'s warden_config::SettingsFile| {
        f.value
            .get("permissions")
            .and_then(|p| p.get("defaultMode"))
            .map(|v| (v, f))
    };
    let users = settings
        .files
        .iter()
        .filter(|f| f.scope.is_user_controlled())
        .find_map(mode_of)
        .and_then(|(v, _)| v.as_str().and_then(Mode::parse))
        .unwrap_or(Mode::Default);
    for (v, f) in settings.files.iter().filter_map(mode_of) {
        if f.scope.is_user_controlled() {
            return Some((v, f));
        }
        match v.as_str().and_then(Mode::parse) {
            Some(m) if looseness(m) > looseness(users) => warnings.push(Warning {
                source: f.display_name(),
                message: format!("`permissions.defaultMode` {v} is ignored: it is looser than the mode your own settings give ({}), and a repository's settings can tighten, never loosen", users.as_str()),
            }),
            _ => return Some((v, f)),
        }
    }
    None
}

struct Builder<'o> {
    opts: &'o Options,
    sources: Vec<Source>,
    warnings: Vec<Warning>,
    lists: [Vec<rules::Rule>; 3],
    extra_dirs: Vec<PathBuf>,
}

impl Builder<'_> {
    fn source(&mut self, name: String) -> usize {
        self.sources.push(Source { name });
        self.sources.len() - 1
    }

    fn flags(&mut self, managed_only: bool) {
        let cwd = self.opts.cwd.clone();
        if !self.opts.disallowed_tools.is_empty() {
            let src = self.source("--disallowedTools".into());
            for r in self.opts.disallowed_tools.clone() {
                self.rule(&r, RuleKind::Deny, src, &cwd, false);
            }
        }
        if !self.opts.allowed_tools.is_empty() && !managed_only {
            let src = self.source("--allowedTools".into());
            for r in self.opts.allowed_tools.clone() {
                self.rule(&r, RuleKind::Allow, src, &cwd, true);
            }
        }
    }

    fn rule(&mut self, text: &str, kind: RuleKind, src: usize, root: &Path, from_flag: bool) {
        let anchors = Anchors {
            cwd: &self.opts.cwd,
            home: &self.opts.home,
            source_root: root,
        };
        let name = self.sources[src].name.clone();
        let warn = |ws: &mut Vec<Warning>, p: Problem| {
            if !p.message.is_empty() {
                ws.push(Warning {
                    source: name.clone(),
                    message: format!("Permission {} rule ({name}): {}", kind.as_str(), p.message),
                });
            }
        };
        match rules::compile(text, kind, src, &anchors, from_flag) {
            Ok((rule, problem)) => {
                if let Some(p) = problem {
                    warn(&mut self.warnings, p);
                }
                if let Spec::Path { globs, .. } = &rule.spec
                    && !globs.iter().all(|g| rules::glob_ok(g))
                {
                    warn(
                        &mut self.warnings,
                        Problem {
                            message: format!("{text}: invalid glob; rule ignored"),
                            kept: false,
                        },
                    );
                    return;
                }
                let idx = match kind {
                    RuleKind::Deny => 0,
                    RuleKind::Ask => 1,
                    RuleKind::Allow => 2,
                };
                self.lists[idx].push(rule);
            }
            Err(p) => warn(&mut self.warnings, p),
        }
    }
}
