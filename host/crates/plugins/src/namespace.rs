//! External names of plugin components (Claude Code's namespacing, spec 4.5).

/// `plugin:skill` (invoked as `/plugin:skill`).
pub fn skill(plugin: &str, skill: &str) -> String {
    format!("{plugin}:{skill}")
}

/// `plugin:command` (invoked as `/plugin:command`).
pub fn command(plugin: &str, command: &str) -> String {
    format!("{plugin}:{command}")
}

/// `plugin:agent`; `agent` may already carry subfolder segments (`review:security`).
pub fn agent(plugin: &str, agent: &str) -> String {
    format!("{plugin}:{agent}")
}

/// MCP server name `plugin:<plugin>:<server>`.
pub fn mcp_server(plugin: &str, server: &str) -> String {
    format!("plugin:{plugin}:{server}")
}

/// MCP tool name `mcp__plugin_<plugin>_<server>__<tool>`, characters outside `[A-Za-z0-9_-]` → `_`.
pub fn mcp_tool(plugin: &str, server: &str, tool: &str) -> String {
    warden_config::mcp::tool_name(&format!("plugin_{plugin}_{server}"), tool)
}

/// Theme id `custom:<plugin>:<slug>`.
pub fn theme(plugin: &str, slug: &str) -> String {
    format!("custom:{plugin}:{slug}")
}

/// Plugin id `name@marketplace`.
pub fn plugin_id(name: &str, marketplace: &str) -> String {
    format!("{name}@{marketplace}")
}

/// Splits `name@marketplace` (the marketplace part is optional).
pub fn split_plugin_id(id: &str) -> (&str, Option<&str>) {
    match id.rsplit_once('@') {
        Some((n, m)) if !n.is_empty() && !m.is_empty() => (n, Some(m)),
        _ => (id, None),
    }
}

/// The data directory name for a plugin id (`${CLAUDE_PLUGIN_DATA}` is
/// `plugins/data/<this>`), unique per id.
///
/// Claude Code's shape is the id with characters outside `[A-Za-z0-9_-]` replaced by `-`
/// (`formatter@my-marketplace` → `formatter-my-marketplace`), and that name is kept whenever
/// no other id can flatten to it: a plugin name of `[A-Za-z0-9_]` (no `-`, so the first `-` is
/// where the `@` was) and a marketplace name of `[A-Za-z0-9_-]`. Any other id flattens
/// lossily (`a-b@c` and `a@b-c` both give `a-b-c`, and `a.b@c` gives what `a-b@c` does), so
/// its name gets `.` and the first 16 hex digits of the id's sha256
/// (`protect-secrets@warden-examples` → `protect-secrets-warden-examples.<16 hex>`). The `.`
/// appears in no flattened name, so the two forms never meet, and two hashed names are equal
/// only for equal ids. See [`legacy_data_dir_name`] for directories named before this.
pub fn data_dir_name(plugin_id: &str) -> String {
    let flat = legacy_data_dir_name(plugin_id);
    let word = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let lossless = match plugin_id.split_once('@') {
        Some((name, market)) => {
            !name.is_empty()
                && !market.is_empty()
                && word(name)
                && market
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }
        None => false,
    };
    if lossless {
        return flat;
    }
    use sha2::{Digest, Sha256};
    let digest = hex::encode(Sha256::digest(plugin_id.as_bytes()));
    format!("{flat}.{}", &digest[..16])
}

/// The name earlier Warden versions gave every plugin's data directory: Claude Code's
/// flattening alone, which two ids can share. A session moves such a directory to the
/// plugin's [`data_dir_name`] when only one installed plugin flattens to it.
pub fn legacy_data_dir_name(plugin_id: &str) -> String {
    crate::util::sanitize(plugin_id, '-')
}

/// Substitutes the exact tokens `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and
/// `${CLAUDE_PROJECT_DIR}`; `${VAR:-default}` forms are left for the shell (the variables are
/// also exported to child processes).
pub fn substitute(
    text: &str,
    plugin_root: &str,
    plugin_data: &str,
    project_dir: Option<&str>,
) -> String {
    let mut out = text
        .replace("${CLAUDE_PLUGIN_ROOT}", plugin_root)
        .replace("${CLAUDE_PLUGIN_DATA}", plugin_data);
    if let Some(p) = project_dir {
        out = out.replace("${CLAUDE_PROJECT_DIR}", p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(skill("my-plugin", "review"), "my-plugin:review");
        assert_eq!(
            agent("my-plugin", "review:security"),
            "my-plugin:review:security"
        );
        assert_eq!(mcp_server("my-plugin", "db"), "plugin:my-plugin:db");
        assert_eq!(
            mcp_tool("my-plugin", "db", "query"),
            "mcp__plugin_my-plugin_db__query"
        );
        assert_eq!(
            mcp_tool("my.plugin", "d b", "q:x"),
            "mcp__plugin_my_plugin_d_b__q_x"
        );
        assert_eq!(
            data_dir_name("formatter@my-marketplace"),
            "formatter-my-marketplace"
        );
        assert_eq!(data_dir_name("fmt_2@mkt"), "fmt_2-mkt");
        assert_eq!(split_plugin_id("a@b"), ("a", Some("b")));
        assert_eq!(split_plugin_id("a"), ("a", None));
        assert_eq!(
            substitute(
                "${CLAUDE_PLUGIN_ROOT}/x ${CLAUDE_PLUGIN_ROOT:-.}",
                "/r",
                "/d",
                None
            ),
            "/r/x ${CLAUDE_PLUGIN_ROOT:-.}"
        );
    }

    #[test]
    fn data_dir_names_are_unique_where_the_flattening_is_lossy() {
        // Each group flattens to one name; the names must all differ.
        let groups = [
            ["a-b@c", "a@b-c", "a.b@c", "a+b@c"],
            ["x@y-z", "x-y@z", "x@y.z", "x.y@z"],
        ];
        for ids in groups {
            let names: Vec<String> = ids.iter().map(|i| data_dir_name(i)).collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), ids.len(), "{ids:?} -> {names:?}");
            for (id, n) in ids.iter().zip(&names) {
                assert!(
                    crate::names::check_path_name(n).is_ok(),
                    "{id} -> {n} is not a safe directory name"
                );
                assert!(n.starts_with(&legacy_data_dir_name(id)), "{id} -> {n}");
            }
        }
        // A lossless name is never the hashed name of another id.
        let hashed = data_dir_name("a-b@c");
        let (flat, hash) = hashed.split_once('.').expect("hashed");
        assert_ne!(data_dir_name(&format!("a@b-c-{hash}")), hashed);
        assert_eq!(flat, "a-b-c");
        assert_eq!(data_dir_name("a-b@c"), hashed, "stable");
    }

    #[test]
    fn a_data_directory_named_the_old_way_moves_to_the_new_name_when_only_its_plugin_has_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let home = warden_config::Home::new(t.path().join("home"));
        let record = serde_json::json!([{"scope": "user", "installPath": t.path().join("cache"),
            "version": "1", "installedAt": "2026-01-01T00:00:00Z",
            "lastUpdated": "2026-01-01T00:00:00Z"}]);
        let installed = serde_json::json!({"version": 2, "plugins": {
            "my-tool@mkt": record, "a-b@c": record, "a@b-c": record}});
        let plugins = home.plugins_dir();
        std::fs::create_dir_all(plugins.join("data/my-tool-mkt")).expect("mkdir");
        std::fs::write(plugins.join("data/my-tool-mkt/state"), "kept").expect("write");
        std::fs::create_dir_all(plugins.join("data/a-b-c")).expect("mkdir");
        std::fs::write(
            plugins.join("installed_plugins.json"),
            installed.to_string(),
        )
        .expect("write");
        let m = crate::manager::PluginManager::new(home, t.path());
        let active = m.active_plugins().expect("active");
        let dir = |id: &str| {
            active
                .iter()
                .find(|a| a.plugin_id == id)
                .map(|a| a.data_dir.clone())
                .expect("active plugin")
        };
        let mine = dir("my-tool@mkt");
        assert_eq!(
            mine,
            plugins.join("data").join(data_dir_name("my-tool@mkt"))
        );
        assert_eq!(
            std::fs::read_to_string(mine.join("state")).expect("moved"),
            "kept"
        );
        assert!(!plugins.join("data/my-tool-mkt").exists());
        // Two plugins flatten to `a-b-c`: the old directory is left to neither.
        assert_eq!(dir("a@b-c"), plugins.join("data/a-b-c"));
        assert_ne!(dir("a-b@c"), plugins.join("data/a-b-c"));
        assert!(plugins.join("data/a-b-c").is_dir());
        assert!(!dir("a-b@c").exists());
    }
}
