//! `warden plugin details <plugin>` (alias `info`; Claude Code calls the verb `details`).

use std::process::ExitCode;

use warden_plugins::PluginManager;

/// Prints the details of an installed plugin: text, or one JSON object with `--json`.
pub(super) fn run(mgr: &PluginManager, plugin: &str, json: bool) -> ExitCode {
    match mgr.details(plugin) {
        Ok(d) => {
            super::print_pretty(json, &d);
            ExitCode::SUCCESS
        }
        Err(e) => super::fail(
            json,
            "details",
            &format!("Failed to show plugin \"{plugin}\": {e}"),
        ),
    }
}
