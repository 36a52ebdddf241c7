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

/// The data directory name for a plugin id: characters outside `[A-Za-z0-9_-]` → `-`
/// (`formatter@my-marketplace` → `formatter-my-marketplace`).
pub fn data_dir_name(plugin_id: &str) -> String {
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
}
