//! `validate(path)`: `claude plugin validate` for a plugin or marketplace directory.

use std::path::Path;

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
    let diags = match load_plugin_with(path, &LoadContext::default()) {
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
    d
}
