//! Output styles, as Claude Code's: the `outputStyle` setting names one; its markdown body is
//! added to the main conversation's system prompt.
//!
//! The styles offered: the built-in `default` (the usual system prompt), the `*.md` files of
//! `$WARDEN_HOME/output-styles/` (user) and `.claude/output-styles/` of the working directory
//! (project), each named by its frontmatter `name` or its file name, and enabled plugins'
//! output styles (`output-styles/`, or the manifest's `outputStyles`) as `plugin:name`.
//! Frontmatter: `keep-coding-instructions: true` keeps the default prompt's coding
//! instructions before the style (Claude Code leaves them out of a custom style's prompt by
//! default); a plugin style with `force-for-plugin: true` applies whenever its plugin is
//! enabled, over the setting. A project style is read only from a regular file inside the
//! project (not through a link), so a repository cannot have a file from elsewhere read into
//! the prompt.

use std::path::{Path, PathBuf};

use warden_instructions::{fields, frontmatter};

use crate::session::Session;

/// One output style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputStyle {
    /// The name it is selected by (`plugin:name` for a plugin's).
    pub name: String,
    /// Its instructions: the markdown body.
    pub body: String,
    /// `keep-coding-instructions`.
    pub keep_coding_instructions: bool,
    /// `force-for-plugin` (plugin styles only).
    pub forced: bool,
    /// The file.
    pub file: PathBuf,
}

/// The name of the built-in style: the usual system prompt.
pub const DEFAULT: &str = "default";

fn read(path: &Path, name_prefix: Option<&str>, plugin: bool) -> Result<OutputStyle, String> {
    let text = frontmatter::read_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc = frontmatter::parse(&text, path).map_err(|e| e.to_string())?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let name = fields::string(&doc, "name").unwrap_or(stem);
    let flag = |k: &str| {
        doc.frontmatter
            .get(k)
            .and_then(fields::as_bool)
            .unwrap_or(false)
    };
    Ok(OutputStyle {
        name: match name_prefix {
            Some(p) => format!("{p}:{name}"),
            None => name,
        },
        body: doc.body.trim().to_string(),
        keep_coding_instructions: flag("keep-coding-instructions"),
        forced: plugin && flag("force-for-plugin"),
        file: path.to_path_buf(),
    })
}

/// The `*.md` regular files directly in `dir` (links are not followed), sorted.
fn md_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    out.sort();
    out
}

/// Every style the session offers besides `default`, with problems reading them.
pub fn available(session: &Session) -> (Vec<OutputStyle>, Vec<String>) {
    let (mut styles, mut problems) = (Vec::new(), Vec::new());
    let project = session.cwd.join(".claude/output-styles");
    // A project's folder must itself be a folder of the project, not a link out of it.
    let project_ok = std::fs::symlink_metadata(&project).is_ok_and(|m| m.is_dir());
    let dirs = [
        Some(session.home.root().join("output-styles")),
        project_ok.then_some(project),
    ];
    for dir in dirs.into_iter().flatten() {
        for f in md_files(&dir) {
            match read(&f, None, false) {
                Ok(s) => styles.push(s),
                Err(e) => problems.push(format!("output style left out: {e}")),
            }
        }
    }
    for p in &session.plugins {
        for f in &p.plugin.output_styles {
            match read(&f.path, Some(&p.plugin.name), true) {
                Ok(s) => styles.push(s),
                Err(e) => problems.push(format!("output style left out: {e}")),
            }
        }
    }
    (styles, problems)
}

/// The style the main conversation uses (`None`: `default`) and warnings, each naming the
/// file: a plugin's forced style first, else the `outputStyle` setting.
pub fn select(session: &Session) -> (Option<OutputStyle>, Vec<String>) {
    let (styles, mut warnings) = available(session);
    let mut forced = styles.iter().filter(|s| s.forced);
    if let Some(f) = forced.next() {
        for other in forced {
            warnings.push(format!(
                "{}: output style `{}` not forced: `{}` already is",
                other.file.display(),
                other.name,
                f.name
            ));
        }
        return (Some(f.clone()), warnings);
    }
    let Some((value, file)) = session.settings.scalar("outputStyle") else {
        return (None, warnings);
    };
    let file = file.display_name();
    let Some(name) = value.as_str() else {
        warnings.push(format!(
            "{file}: `outputStyle` setting ignored: it must be a style's name (a string)"
        ));
        return (None, warnings);
    };
    if name.eq_ignore_ascii_case(DEFAULT) {
        return (None, warnings);
    }
    let found = styles
        .iter()
        .find(|s| s.name == name)
        .or_else(|| styles.iter().find(|s| s.name.eq_ignore_ascii_case(name)));
    match found {
        Some(s) => (Some(s.clone()), warnings),
        None => {
            let mut names = vec![DEFAULT.to_string()];
            names.extend(styles.iter().map(|s| s.name.clone()));
            warnings.push(format!(
                "{file}: `outputStyle` setting ignored: no output style named `{name}`; the styles are: {}",
                names.join(", ")
            ));
            (None, warnings)
        }
    }
}
