//! Claude Code–compatible hook engine.
//!
//! Existing Claude Code plugins run unchanged: their `hooks/hooks.json`, settings-file hooks and
//! skill/agent frontmatter hooks are loaded with Claude Code's rules, and Warden's WASM hook
//! components (declared in the `warden` section of `plugin.json`) run beside them through the
//! same classification and merge. `mcp_tool` handlers call their tool through the host's MCP
//! client, behind [`McpToolRunner`], and the tool's text is classified as a command's stdout.
//! `prompt` and `agent` handlers ask the host's model, behind [`ModelHookRunner`]; its
//! `{"ok": …}` answer becomes the output a command would give for the same decision.
//!
//! Flow:
//! 1. [`HookConfigBuilder`] collects hooks from settings ([`warden_config::Settings`]), plugins,
//!    skills, agents and the host, applies the policy gates and yields a [`HookConfig`];
//! 2. [`dispatch`] selects the handlers of one event (matcher, `if`, dedup), runs them in
//!    parallel with their timeouts and merges their results into a [`MergedResult`];
//! 3. the host reads [`MergedResult::permission_verdict`] for the permission engine, or prints
//!    [`to_cc_output`] for the `warden hook <Event>` bridge.
//!
//! Hooks speak the permission rules' vocabulary: a merged PreToolUse decision is a
//! [`HookVerdict`] (a [`Decision`] or `defer`, merged `deny > defer > ask > allow`), which
//! [`warden_permissions::Permissions::decide`] takes as it is.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use warden_hooks::*;
//! # async fn host(settings: &warden_config::Settings, manifest: &serde_json::Value,
//! #               runner: Arc<dyn WasmHookRunner>, stdin: serde_json::Value) {
//! let mut builder = HookConfigBuilder::from_settings(settings);
//! builder.add_plugin(
//!     PluginContext::new("guard@local", "/plugins/guard", "/data/guard-local"),
//!     Some(manifest), // plugin.json: `hooks` and the `warden` section
//! );
//! let config = builder.build();
//! for w in &config.warnings {
//!     eprintln!("warning: {w}");
//! }
//!
//! // Bridge mode: Claude Code runs its own hooks and asks Warden for the WASM ones.
//! let event: Event = "PreToolUse".parse().unwrap();
//! let mut opts = DispatchOptions::new("/work/project").with_wasm_runner(runner);
//! opts.wasm_only = true;
//! let result = dispatch(event, &stdin, &config, &opts).await;
//! let (stdout, code, stderr) = to_cc_output(&result.merged, event);
//! print!("{}", render_stdout(&stdout));
//! if let Some(e) = stderr {
//!     eprint!("{e}");
//! }
//! std::process::exit(code);
//! # }
//! ```
//!
//! Behaviour choices where the specification is silent are documented on the item concerned:
//! [`MILLISECOND_TIMEOUT_THRESHOLD`] (timeouts that look like milliseconds),
//! [`HookConfigBuilder::build`] (gates), [`dispatch`] (dedup, loop cap, async, `once`),
//! [`cap_text`] (spilling), [`to_cc_output`] (exit codes), [`McpToolHandler::input`]
//! (`${path}` templates), [`OnFailure`] (handler types it applies to), [`ModelHookCall::prompt`]
//! (`$ARGUMENTS`).

mod config;
mod dispatch;
mod exec;
mod handler;
mod input;
mod matcher;
mod merge;
mod model;
mod output;
mod typed_result;

pub use config::{
    ConfigWarning, HookConfig, HookConfigBuilder, HookSource, ParseOptions, ParsedGroup,
    PluginContext, RegisteredHook, parse_hooks, url_allowed,
};
pub use dispatch::{
    AsyncHookReport, DEFAULT_STOP_BLOCK_CAP, DispatchOptions, DispatchResult, HandlerReport,
    SESSION_END_BASE_BUDGET, SESSION_END_MAX_BUDGET, dispatch,
};
pub use exec::{
    ConfinedChild, ConfinedProcess, Launch, MAX_CAPTURE_BYTES, McpToolCall, McpToolReply,
    McpToolRunner, PIPE_GRACE, ProcessConfiner, RawOutcome, WasmHookCall, WasmHookRunner,
};
pub use handler::{
    CommandHandler, Handler, HandlerKind, HttpHandler, MAX_TIMEOUT, MILLISECOND_TIMEOUT_THRESHOLD,
    McpToolHandler, ModelHandler, OnFailure, Shell, WasmHandler,
};
pub use input::{
    CommonFields, ConfigChange, CwdChanged, DirectoryAdded, Effort, Elicitation, ElicitationResult,
    EventPayload, FileChanged, HookInput, InputError, InstructionsLoaded, McpServerInfo,
    MessageDisplay, Notification, PermissionDenied, PermissionRequest, PostCompact, PostToolBatch,
    PostToolUse, PostToolUseFailure, PreCompact, PreToolUse, SessionEnd, SessionStart, Setup, Stop,
    StopFailure, SubagentStart, SubagentStop, Task, TeammateIdle, ToolCall, UserPromptExpansion,
    UserPromptSubmit, WorktreeCreate, WorktreeRemove,
};
pub use matcher::{Matcher, MatcherError};
pub use merge::{MergedResult, PermissionVerdict, merge, render_stdout, to_cc_output};
pub use model::{ModelHookCall, ModelHookRunner};
pub use output::{
    Classified, MAX_OUTPUT_CHARS, Outcome, PREVIEW_CHARS, cap_text, classify_raw, validate_output,
};
pub use typed_result::{CcOutput, TypedHookResult};
/// The decision vocabulary hooks share with the permission rules (see [`warden_permissions`]).
pub use warden_permissions::{Decision, HookVerdict};
pub use warden_vocab::{Event, HandlerType, UnknownEvent, UnknownHandlerType};
