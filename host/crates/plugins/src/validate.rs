//! `validate(path)`: `claude plugin validate` for a plugin or marketplace directory.

use std::path::Path;

use serde_json::Value;

use crate::diag::{Diagnostic, Report, ReportKind};
use crate::loader::{LoadContext, LoadedPlugin, MANIFEST_FILE, load_plugin_with};
use crate::marketplace::{MARKETPLACE_FILE, PluginSource, load_marketplace};

/// Validates a plugin directory, or a marketplace directory when it has
/// `.claude-plugin/marketplace.json` (a directory with both is validated as a marketplace whose
/// entries include the root plugin). A marketplace's relative-source plugins are validated too.
pub fn validate(path: &Path) -> Report {
    if path.join(MARKETPLACE_FILE).is_file() {
        validate_marketplace(path)
    } else {
        validate_plugin(path)
    }
}

/// Validates one plugin directory.
pub fn validate_plugin(path: &Path) -> Report {
    let ctx = LoadContext {
        at_source: true,
        ..LoadContext::default()
    };
    let diags = match load_plugin_with(path, &ctx) {
        Ok(p) => plugin_diagnostics(&p),
        Err(e) => e.diagnostics,
    };
    Report::new(path, ReportKind::Plugin, diags)
}

/// Validates a marketplace directory and its local plugins.
pub fn validate_marketplace(path: &Path) -> Report {
    let mut diags = Vec::new();
    let file = path.join(MARKETPLACE_FILE);
    if let Some(m) = load_marketplace(path, &mut diags) {
        for e in &m.plugins {
            let Some(dir) = m.entry_dir(e) else { continue };
            let ctx = LoadContext {
                entry: Some(e),
                marketplace_file: Some(&file),
                at_source: true,
            };
            match load_plugin_with(&dir, &ctx) {
                Ok(p) => {
                    if let (Some(ev), Some(pv)) = (&e.version, p.manifest.version.as_ref())
                        && p.has_manifest
                        && ev != pv
                    {
                        diags.push(Diagnostic::warning(
                            &file,
                            format!(
                                "entry `{}` has version {ev} but {} says {pv}; plugin.json wins",
                                e.name,
                                dir.join(MANIFEST_FILE).display()
                            ),
                        ));
                    }
                    diags.extend(plugin_diagnostics(&p));
                }
                Err(err) => diags.extend(err.diagnostics),
            }
        }
        for e in &m.plugins {
            if let PluginSource::Unsupported { kind } = &e.source {
                diags.push(Diagnostic::warning(
                    &file,
                    format!(
                        "entry `{}` uses a `{kind}` source, which Warden cannot install yet",
                        e.name
                    ),
                ));
            }
        }
    }
    Report::new(path, ReportKind::Marketplace, diags)
}

/// A loaded plugin's diagnostics plus the frontmatter checks of its skills, agents and commands.
pub fn plugin_diagnostics(p: &LoadedPlugin) -> Vec<Diagnostic> {
    let mut d = p.diagnostics.clone();
    crate::frontmatter::check_plugin(p, &mut d);
    check_hook_scripts(p, &mut d);
    d
}

/// A warning for every `${CLAUDE_PLUGIN_ROOT}/<path>` in a command hook (its `command` or
/// `args`) that names nothing in the plugin: the hook would fail each time it fires. A warning,
/// not an error: Claude Code 2.1.332 loads such a plugin, and its other hooks work.
fn check_hook_scripts(p: &LoadedPlugin, diags: &mut Vec<Diagnostic>) {
    let manifest = p.root.join(MANIFEST_FILE);
    for set in &p.hooks {
        let file = set.file.clone().unwrap_or_else(|| manifest.clone());
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (event, groups) in &set.hooks {
            let handlers = groups
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
                .filter(|h| {
                    h.get("type").and_then(Value::as_str).unwrap_or("command") == "command"
                });
            for h in handlers {
                let words = h.get("command").and_then(Value::as_str).into_iter().chain(
                    h.get("args")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                );
                for w in words {
                    for rel in plugin_root_paths(w) {
                        if p.root.join(&rel).exists() {
                            continue;
                        }
                        let line = text
                            .lines()
                            .position(|l| l.contains(&rel))
                            .map(|i| (i + 1, 1));
                        diags.push(
                            Diagnostic::warning(
                                &file,
                                format!(
                                    "hooks.{event}: command `{w}` runs ${{CLAUDE_PLUGIN_ROOT}}/{rel}, which does not exist in the plugin ({}); the hook fails every time it fires",
                                    p.root.join(&rel).display()
                                ),
                            )
                            .at(line),
                        );
                    }
                }
            }
        }
    }
}

/// The paths below the plugin root that a command names: what follows each
/// `${CLAUDE_PLUGIN_ROOT}/` or `$CLAUDE_PLUGIN_ROOT/`, up to a space, quote or shell operator.
/// Paths with further expansions (`$`, globs) are skipped: they cannot be checked statically.
fn plugin_root_paths(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for marker in ["${CLAUDE_PLUGIN_ROOT}/", "$CLAUDE_PLUGIN_ROOT/"] {
        let mut rest = command;
        while let Some(i) = rest.find(marker) {
            rest = &rest[i + marker.len()..];
            let end = rest
                .find(|c: char| c.is_whitespace() || "\"';|&)<>`".contains(c))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches('/');
            if !path.is_empty()
                && !path.contains(['$', '*', '?', '[', '{'])
                && !path.split('/').any(|s| s == "..")
            {
                out.push(path.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::plugin_root_paths;

    #[test]
    fn paths_after_the_plugin_root_placeholder() {
        assert_eq!(
            plugin_root_paths("python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/check.py\" --x"),
            ["hooks/check.py"]
        );
        assert_eq!(
            plugin_root_paths("$CLAUDE_PLUGIN_ROOT/a.sh && ${CLAUDE_PLUGIN_ROOT}/b.sh;"),
            ["b.sh", "a.sh"]
        );
        assert!(plugin_root_paths("${CLAUDE_PLUGIN_ROOT}/${NAME}.sh").is_empty());
        assert!(plugin_root_paths("echo ${CLAUDE_PLUGIN_ROOT}").is_empty());
        assert!(plugin_root_paths("${CLAUDE_PLUGIN_ROOT}/../x").is_empty());
    }
}
