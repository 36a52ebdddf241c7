//! Hook handlers (spec 1.6): the typed form of one entry of a matcher group's `hooks` array.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use warden_vocab::schema::Field;
use warden_vocab::schema::hooks::HandlerSpec;
use warden_vocab::{Event, HandlerType};

/// A timeout at or above this many seconds is almost certainly milliseconds written by mistake.
///
/// Claude Code reads `timeout` as seconds, and plugins are meant to run unchanged, so the value
/// is kept as seconds (`5000` → 5000 s) and only a warning is emitted. Rewriting it would make
/// Warden stop a hook that Claude Code lets run.
pub const MILLISECOND_TIMEOUT_THRESHOLD: f64 = 1000.0;

/// Longest timeout honoured; larger values (and `Infinity`-like numbers) are clamped so that
/// `Duration` arithmetic cannot overflow.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// `onFailure` of handlers (spec 1.11).
///
/// Claude Code documents it for command and http handlers only; an `mcp_tool` or `wasm` handler
/// stands in for a command hook, so it takes the same field rather than silently failing open.
/// `prompt` and `agent` handlers take it too: a model guard whose model cannot be reached, times
/// out or answers nonsense would otherwise always let the action through. Claude Code ignores
/// the field there, so such a hook fails open under Claude Code and closed under Warden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// Failures are non-blocking (the default).
    #[default]
    Continue,
    /// A failure behaves as exit 2 (fail closed).
    Block,
}

/// Which shell runs a shell-form command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Shell {
    /// `sh -c` on Unix (the `"bash"` setting: Claude Code uses the system shell there too).
    #[default]
    Bash,
    /// `pwsh -Command`, with `${CLAUDE_*}` placeholders rewritten to `${env:NAME}`.
    PowerShell,
}

/// A `command` handler.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandHandler {
    /// Shell string, or the executable in exec form.
    pub command: String,
    /// Exec-form arguments; `Some` switches to exec form.
    pub args: Option<Vec<String>>,
    /// Run in the background; cannot block.
    pub is_async: bool,
    /// Background run that reports exit 2 back as a wake-up message; implies `is_async`.
    pub async_rewake: bool,
    /// Shell for the shell form.
    pub shell: Shell,
}

/// An `http` handler.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpHandler {
    /// POST target.
    pub url: String,
    /// Header templates; `$VAR` / `${VAR}` interpolated from allowed variables only.
    pub headers: BTreeMap<String, String>,
    /// Variables headers may read (further limited by `httpHookAllowedEnvVars`).
    pub allowed_env_vars: Vec<String>,
}

/// An `mcp_tool` handler: a call to a tool on an already connected MCP server, made through
/// the host's [`McpToolRunner`](crate::McpToolRunner). The tool's text is read as a command's
/// stdout; a server that is not connected, a tool error or a failed call is a non-blocking error
/// (or a failure for `onFailure: "block"`).
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolHandler {
    /// Configured server name; a plugin's server is `plugin:<plugin>:<server>`.
    pub server: String,
    /// Tool on that server.
    pub tool: String,
    /// Tool arguments, an object whose string values may hold `${path}` templates.
    ///
    /// `path` is a dotted path into the hook input, e.g. `${tool_input.file_path}`; a segment
    /// that is a number indexes an array (`${tool_input.edits.0.old_string}`). Templates are
    /// replaced in string values at any depth (object keys are left alone), and always as text,
    /// even when the template is the whole string, so the tool gets the same kind of value
    /// whatever the hook input holds:
    /// * a string is inserted as it is;
    /// * a number, boolean, array or object is inserted as its JSON text;
    /// * a missing path, or `null`, becomes the empty string: hook inputs leave optional fields
    ///   out or set them to `null` interchangeably, and the tool should see the same for both.
    pub input: Option<Value>,
}

/// A `prompt` or `agent` handler: a question put to a model through the host's
/// [`ModelHookRunner`](crate::ModelHookRunner), answered `{"ok": bool, "reason"?: string}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelHandler {
    /// The prompt; `$ARGUMENTS` stands for the hook input (rules on
    /// [`ModelHookCall::prompt`](crate::ModelHookCall::prompt)).
    pub prompt: String,
    /// Requested model (`None`: the host's fast default).
    pub model: Option<String>,
    /// `continueOnBlock`: a block goes back to Claude and the turn goes on, instead of ending
    /// the turn. Read for prompt handlers only; agent handlers always behave as if it were set.
    pub continue_on_block: bool,
}

impl ModelHandler {
    /// A short excerpt of the prompt that tells handlers apart in notices: its first non-blank
    /// line, cut at [`Self::LABEL_CHARS`] characters.
    fn excerpt(&self) -> String {
        let line = self
            .prompt
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let mut out: String = line.chars().take(Self::LABEL_CHARS).collect();
        if out.len() < line.len() {
            out.push('…');
        }
        out
    }

    /// Characters of the prompt kept in a handler's label.
    const LABEL_CHARS: usize = 40;
}

/// A `wasm` handler from the `warden` section of `plugin.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct WasmHandler {
    /// Key in `warden.components`.
    pub component: String,
    /// Absolute path of the `.wasm` file.
    pub path: PathBuf,
    /// Declared world (e.g. `"hook"`).
    pub world: Option<String>,
    /// The whole component declaration, for host-specific keys.
    pub declaration: Value,
}

/// What a handler does.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerKind {
    /// `command`.
    Command(CommandHandler),
    /// `http`.
    Http(HttpHandler),
    /// `mcp_tool`.
    McpTool(McpToolHandler),
    /// `prompt`.
    Prompt(ModelHandler),
    /// `agent`.
    Agent(ModelHandler),
    /// `wasm`.
    Wasm(WasmHandler),
}

impl HandlerKind {
    /// Its type.
    pub fn handler_type(&self) -> HandlerType {
        match self {
            HandlerKind::Command(_) => HandlerType::Command,
            HandlerKind::Http(_) => HandlerType::Http,
            HandlerKind::McpTool(_) => HandlerType::McpTool,
            HandlerKind::Prompt(_) => HandlerType::Prompt,
            HandlerKind::Agent(_) => HandlerType::Agent,
            HandlerKind::Wasm(_) => HandlerType::Wasm,
        }
    }
}

/// One hook handler.
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    /// What it runs.
    pub kind: HandlerKind,
    /// The `if` permission-rule filter.
    pub if_rule: Option<String>,
    /// Explicit `timeout` (seconds in the file).
    pub timeout: Option<Duration>,
    /// Spinner text.
    pub status_message: Option<String>,
    /// Run once per session (honoured for skill frontmatter only).
    pub once: bool,
    /// Fail-closed behaviour.
    pub on_failure: OnFailure,
    /// The handler object as written: the deduplication key for settings-file handlers.
    pub raw: Value,
}

impl Handler {
    /// The timeout that applies on `event`.
    pub fn effective_timeout(&self, event: Event) -> Duration {
        self.timeout
            .unwrap_or_else(|| self.kind.handler_type().default_timeout(event))
    }

    /// Whether this is an async command handler (fire and forget).
    pub fn is_async(&self) -> bool {
        matches!(&self.kind, HandlerKind::Command(c) if c.is_async || c.async_rewake)
    }

    /// A short name for messages: the command, URL, tool, component or the start of the
    /// prompt.
    pub fn label(&self) -> String {
        match &self.kind {
            HandlerKind::Command(c) => match &c.args {
                Some(a) if !a.is_empty() => format!("{} {}", c.command, a.join(" ")),
                _ => c.command.clone(),
            },
            HandlerKind::Http(h) => h.url.clone(),
            HandlerKind::McpTool(m) => format!("{}:{}", m.server, m.tool),
            HandlerKind::Prompt(m) => format!("prompt \"{}\"", m.excerpt()),
            HandlerKind::Agent(m) => format!("agent \"{}\"", m.excerpt()),
            HandlerKind::Wasm(w) => format!("wasm:{}", w.component),
        }
    }
}

/// What parsing one handler needs to know.
pub(crate) struct ParseCtx<'a> {
    pub event: Event,
    pub allow_wasm: bool,
    pub components: Option<&'a Map<String, Value>>,
    pub plugin_root: Option<&'a std::path::Path>,
    pub is_plugin: bool,
    pub honour_once: bool,
}

const COMMON_KEYS: &[&str] = &["type", "if", "timeout", "statusMessage", "once"];

fn check_keys(spec: &HandlerSpec, specific: &[&str], warn: &mut dyn FnMut(String)) {
    for k in &spec.keys {
        if !COMMON_KEYS.contains(&k.as_str()) && !specific.contains(&k.as_str()) {
            warn(format!("unknown handler key `{k}` (ignored)"));
        }
    }
}

fn opt_string(field: &Field<String>, key: &str, warn: &mut dyn FnMut(String)) -> Option<String> {
    match field {
        Field::Valid(s) => Some(s.clone()),
        f if f.is_unset() => None,
        _ => {
            warn(format!("`{key}` must be a string (ignored)"));
            None
        }
    }
}

fn opt_bool(field: &Field<bool>, key: &str, warn: &mut dyn FnMut(String)) -> bool {
    match field {
        Field::Valid(b) => *b,
        f if f.is_unset() => false,
        _ => {
            warn(format!("`{key}` must be a boolean (ignored)"));
            false
        }
    }
}

/// A string that holds more than blanks.
fn non_blank(field: &Field<String>) -> Option<&String> {
    field.valid().filter(|s| !s.trim().is_empty())
}

fn parse_timeout(field: &Field<f64>, warn: &mut dyn FnMut(String)) -> Option<Duration> {
    let secs = match field {
        Field::Absent => return None,
        Field::Valid(secs) => *secs,
        Field::Invalid(v) => {
            warn(format!(
                "`timeout` must be a number of seconds, found {v} (default used)"
            ));
            return None;
        }
    };
    if !secs.is_finite() || secs <= 0.0 {
        warn(format!(
            "`timeout` {secs} is not a positive number of seconds (default used)"
        ));
        return None;
    }
    if secs >= MILLISECOND_TIMEOUT_THRESHOLD {
        warn(format!(
            "`timeout` {secs} looks like milliseconds; it is read as seconds, as Claude Code does ({:.1} minutes)",
            secs / 60.0
        ));
    }
    Some(
        Duration::try_from_secs_f64(secs)
            .unwrap_or(MAX_TIMEOUT)
            .min(MAX_TIMEOUT),
    )
}

fn parse_on_failure(field: &Field<String>, warn: &mut dyn FnMut(String)) -> OnFailure {
    match field.valid().map(String::as_str) {
        None => {
            if !field.is_unset() {
                warn("`onFailure` must be \"continue\" or \"block\" (default used)".to_string());
            }
            OnFailure::Continue
        }
        Some("continue") => OnFailure::Continue,
        Some("block") => OnFailure::Block,
        Some(other) => {
            warn(format!(
                "`onFailure` \"{other}\" is not \"continue\" or \"block\" (default used)"
            ));
            OnFailure::Continue
        }
    }
}

/// Turns one handler as written into a [`Handler`]. Problems are reported through `warn`;
/// `None` means the handler is skipped.
pub(crate) fn parse_handler(
    entry: &Result<HandlerSpec, Value>,
    ctx: &ParseCtx<'_>,
    warn: &mut dyn FnMut(String),
) -> Option<Handler> {
    let spec = match entry {
        Ok(spec) => spec,
        Err(raw) => {
            warn(format!("handler must be an object, found {raw} (skipped)"));
            return None;
        }
    };
    let ty = match spec.kind_str() {
        Some("wasm") if ctx.allow_wasm => HandlerType::Wasm,
        Some("wasm") => {
            warn(
                "unknown handler type \"wasm\" (skipped): WASM hooks are declared in the `warden` section of plugin.json"
                    .to_string(),
            );
            return None;
        }
        Some(name) => match name.parse::<HandlerType>() {
            Ok(ty) => ty,
            Err(_) => {
                warn(format!("unknown handler type \"{name}\" (skipped)"));
                return None;
            }
        },
        None => {
            warn("handler has no string `type` (skipped)".to_string());
            return None;
        }
    };
    if !ctx.event.supports(ty) {
        warn(format!(
            "`{}` handlers are not supported on {} (skipped)",
            ty.as_str(),
            ctx.event
        ));
        return None;
    }
    let kind = match ty {
        HandlerType::Command => HandlerKind::Command(command_handler(spec, ctx, warn)?),
        HandlerType::Http => HandlerKind::Http(http_handler(spec, warn)?),
        HandlerType::McpTool => HandlerKind::McpTool(mcp_tool_handler(spec, warn)?),
        HandlerType::Prompt => HandlerKind::Prompt(model_handler(spec, ty, warn)?),
        HandlerType::Agent => HandlerKind::Agent(model_handler(spec, ty, warn)?),
        HandlerType::Wasm => HandlerKind::Wasm(wasm_handler(spec, ctx, warn)?),
    };
    let once = opt_bool(&spec.once, "once", warn);
    if once && !ctx.honour_once {
        warn("`once` is only honoured in skill frontmatter (ignored)".to_string());
    }
    let on_failure = parse_on_failure(&spec.on_failure, warn);
    Some(Handler {
        kind,
        if_rule: opt_string(&spec.if_rule, "if", warn),
        timeout: parse_timeout(&spec.timeout, warn),
        status_message: opt_string(&spec.status_message, "statusMessage", warn),
        once: once && ctx.honour_once,
        on_failure,
        raw: spec.raw.clone(),
    })
}

fn command_handler(
    spec: &HandlerSpec,
    ctx: &ParseCtx<'_>,
    warn: &mut dyn FnMut(String),
) -> Option<CommandHandler> {
    check_keys(
        spec,
        &[
            "command",
            "args",
            "async",
            "asyncRewake",
            "shell",
            "onFailure",
        ],
        warn,
    );
    let Some(command) = non_blank(&spec.command).cloned() else {
        warn("command handler needs a non-empty string `command` (skipped)".to_string());
        return None;
    };
    let args = match &spec.args {
        Field::Valid(a) => Some(a.clone()),
        f if f.is_unset() => None,
        _ => {
            warn("`args` must be an array of strings (skipped)".to_string());
            return None;
        }
    };
    if args.is_some()
        && command.contains(char::is_whitespace)
        && !std::path::Path::new(&command).is_absolute()
    {
        warn(format!(
            "exec-form command `{command}` contains whitespace; spawning it will fail"
        ));
    }
    if ctx.is_plugin && args.is_none() && command.contains("${user_config.") {
        warn(format!(
            "shell-form plugin hook `{command}` references ${{user_config.*}}, which is only substituted in exec form; use $CLAUDE_PLUGIN_OPTION_<KEY> (skipped)"
        ));
        return None;
    }
    // A `shell` that is not a string is ignored as Claude Code ignores it.
    let shell = match spec.shell.valid().map(String::as_str) {
        None | Some("bash") => Shell::Bash,
        Some("powershell") => Shell::PowerShell,
        Some(other) => {
            warn(format!(
                "`shell` \"{other}\" is not \"bash\" or \"powershell\" (bash used)"
            ));
            Shell::Bash
        }
    };
    Some(CommandHandler {
        command,
        args,
        is_async: opt_bool(&spec.is_async, "async", warn),
        async_rewake: opt_bool(&spec.async_rewake, "asyncRewake", warn),
        shell,
    })
}

fn http_handler(spec: &HandlerSpec, warn: &mut dyn FnMut(String)) -> Option<HttpHandler> {
    check_keys(
        spec,
        &["url", "headers", "allowedEnvVars", "onFailure"],
        warn,
    );
    let Some(url) = spec.url.valid().cloned() else {
        warn("http handler needs a string `url` (skipped)".to_string());
        return None;
    };
    let mut headers = BTreeMap::new();
    match &spec.headers {
        Field::Absent => {}
        Field::Valid(m) => {
            for (k, v) in m {
                match v.as_str() {
                    Some(s) => {
                        headers.insert(k.clone(), s.to_string());
                    }
                    None => warn(format!("header `{k}` must be a string (ignored)")),
                }
            }
        }
        Field::Invalid(_) => warn("`headers` must be an object (ignored)".to_string()),
    }
    let allowed_env_vars = spec
        .allowed_env_vars
        .valid()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Some(HttpHandler {
        url,
        headers,
        allowed_env_vars,
    })
}

fn mcp_tool_handler(spec: &HandlerSpec, warn: &mut dyn FnMut(String)) -> Option<McpToolHandler> {
    check_keys(spec, &["server", "tool", "input", "onFailure"], warn);
    let (Some(server), Some(tool)) = (spec.server.valid(), spec.tool.valid()) else {
        warn("mcp_tool handler needs string `server` and `tool` (skipped)".to_string());
        return None;
    };
    // Calling the tool without the arguments its author wrote could do something else
    // entirely, so a malformed `input` drops the handler rather than the field.
    let input = match &spec.input {
        Field::Valid(m) => Some(Value::Object(m.clone())),
        f if f.is_unset() => None,
        _ => {
            warn("mcp_tool `input` must be an object (skipped)".to_string());
            return None;
        }
    };
    Some(McpToolHandler {
        server: server.clone(),
        tool: tool.clone(),
        input,
    })
}

fn model_handler(
    spec: &HandlerSpec,
    ty: HandlerType,
    warn: &mut dyn FnMut(String),
) -> Option<ModelHandler> {
    check_keys(
        spec,
        &["prompt", "model", "continueOnBlock", "agent", "onFailure"],
        warn,
    );
    // Without its own question the model would only see the hook input and guess.
    let Some(prompt) = non_blank(&spec.prompt).cloned() else {
        warn(format!(
            "{} handler needs a non-empty string `prompt` (skipped)",
            ty.as_str()
        ));
        return None;
    };
    Some(ModelHandler {
        prompt,
        model: opt_string(&spec.model, "model", warn),
        continue_on_block: opt_bool(&spec.continue_on_block, "continueOnBlock", warn),
    })
}

fn wasm_handler(
    spec: &HandlerSpec,
    ctx: &ParseCtx<'_>,
    warn: &mut dyn FnMut(String),
) -> Option<WasmHandler> {
    check_keys(spec, &["component", "onFailure"], warn);
    let Some(name) = spec.component.valid() else {
        warn("wasm handler needs a string `component` (skipped)".to_string());
        return None;
    };
    let Some(decl) = ctx.components.and_then(|c| c.get(name)) else {
        warn(format!(
            "wasm handler names component `{name}`, which `warden.components` does not declare (skipped)"
        ));
        return None;
    };
    let Some(rel) = decl.get("path").and_then(Value::as_str) else {
        warn(format!("component `{name}` has no string `path` (skipped)"));
        return None;
    };
    let rel_path = std::path::Path::new(rel);
    if rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        warn(format!(
            "component `{name}` path `{rel}` must be relative and stay inside the plugin (skipped)"
        ));
        return None;
    }
    let Some(root) = ctx.plugin_root else {
        warn(format!(
            "component `{name}` has no plugin root to resolve against (skipped)"
        ));
        return None;
    };
    Some(WasmHandler {
        component: name.clone(),
        path: root.join(rel_path),
        world: decl
            .get("world")
            .and_then(Value::as_str)
            .map(str::to_string),
        declaration: decl.clone(),
    })
}
