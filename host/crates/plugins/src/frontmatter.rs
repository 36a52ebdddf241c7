//! Frontmatter checks for skills, agents and commands. YAML parsing belongs to the instruction
//! layer; until its parser is wired in, only file-level checks run here.

use crate::diag::Diagnostic;
use crate::loader::LoadedPlugin;

/// Adds frontmatter diagnostics for every markdown component of `p`.
pub(crate) fn check_plugin(p: &LoadedPlugin, diags: &mut Vec<Diagnostic>) {
    let files = p
        .skills
        .iter()
        .map(|s| &s.file)
        .chain(p.agents.iter().map(|a| &a.path))
        .chain(p.commands.iter().map(|c| &c.path));
    for f in files {
        if let Err(e) = std::fs::read_to_string(f) {
            diags.push(Diagnostic::error(f, format!("cannot read: {e}")));
        }
    }
}
