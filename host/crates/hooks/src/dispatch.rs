//! Dispatching one event: select handlers (matcher, `if`, dedup), run them in parallel with
//! their timeouts, classify and merge (spec 1.7, 1.13).

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;

use crate::config::{HookConfig, HookSource, RegisteredHook};
use crate::exec::{
    McpToolCall, McpToolRunner, ProcessConfiner, ProcessSpec, RawOutcome, WasmHookCall,
    WasmHookRunner, interpolate_header, mcp_raw_outcome, run_http, run_process, substitute_input,
};
use crate::handler::{CommandHandler, HandlerKind, Shell};
use crate::merge::{MergedResult, merge_iter};
use crate::model::{ModelHookCall, ModelHookRunner, answer_outcome, build_prompt, instructions};
use crate::output::{Classified, Outcome, cap_text, classify_http, classify_owned};
use warden_vocab::{Event, HandlerType};

/// Default Stop / SubagentStop loop cap (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`).
pub const DEFAULT_STOP_BLOCK_CAP: u32 = 8;
/// Base `SessionEnd` budget shared by all its hooks.
pub const SESSION_END_BASE_BUDGET: Duration = Duration::from_millis(1500);
/// Largest `SessionEnd` budget settings-file timeouts can raise it to.
pub const SESSION_END_MAX_BUDGET: Duration = Duration::from_secs(60);

/// Variables removed from hook environments by `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`.
const SCRUBBED_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "AZURE_API_KEY",
];

/// A background (`async`) hook's result, delivered to the host for the next turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AsyncHookReport {
    /// The event that started it.
    pub event: Event,
    /// The handler's label.
    pub handler: String,
    /// `additionalContext` it returned.
    pub additional_context: Option<String>,
    /// `systemMessage` it returned.
    pub system_message: Option<String>,
    /// `asyncRewake` handler that exited 2: the message that wakes Claude (stderr, else stdout).
    pub rewake: Option<String>,
    /// Whether it timed out.
    pub timed_out: bool,
}

/// How to dispatch.
#[derive(Clone)]
pub struct DispatchOptions {
    /// Run only WASM handlers (the `warden hook <Event>` bridge, where Claude Code runs the
    /// others itself).
    pub wasm_only: bool,
    /// Runs WASM handlers; without it they are skipped with a notice.
    pub wasm_runner: Option<Arc<dyn WasmHookRunner>>,
    /// Calls the tools of `mcp_tool` handlers; without it they are skipped with a notice.
    pub mcp_runner: Option<Arc<dyn McpToolRunner>>,
    /// Asks the model of `prompt` and `agent` handlers; without it they are skipped with a
    /// notice.
    pub model_runner: Option<Arc<dyn ModelHookRunner>>,
    /// Working directory of hook processes (the project directory in Claude Code).
    pub cwd: PathBuf,
    /// `CLAUDE_PROJECT_DIR`.
    pub project_dir: PathBuf,
    /// Base environment of hook processes (`None`: this process's environment). `OTEL_*`
    /// variables are always removed.
    pub env: Option<BTreeMap<String, String>>,
    /// Added to every hook's environment (e.g. `CLAUDE_CODE_ENTRYPOINT`).
    pub extra_env: BTreeMap<String, String>,
    /// `CLAUDE_ENV_FILE` for `SessionStart`, `Setup`, `CwdChanged`, `FileChanged` hooks.
    pub env_file: Option<PathBuf>,
    /// Where over-long hook output is spilled (`None`: truncated in place).
    pub spill_dir: Option<PathBuf>,
    /// Stop / SubagentStop consecutive-block cap; 0 disables the cap.
    pub stop_block_cap: u32,
    /// `CLAUDE_PID` (default: this process).
    pub pid: Option<u32>,
    /// Receives results of `async` hooks (dropped when `None`).
    pub async_sink: Option<UnboundedSender<AsyncHookReport>>,
    /// Confines command handlers' processes (`None`: they run unconfined, as Claude Code runs
    /// them).
    pub process_confiner: Option<Arc<dyn ProcessConfiner>>,
}

impl std::fmt::Debug for DispatchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatchOptions")
            .field("wasm_only", &self.wasm_only)
            .field("wasm_runner", &self.wasm_runner.is_some())
            .field("mcp_runner", &self.mcp_runner.is_some())
            .field("model_runner", &self.model_runner.is_some())
            .field("cwd", &self.cwd)
            .field("project_dir", &self.project_dir)
            .field("stop_block_cap", &self.stop_block_cap)
            .field("confined", &self.process_confiner.is_some())
            .finish_non_exhaustive()
    }
}

impl DispatchOptions {
    /// Options for a session in `project_dir`, reading `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` from the
    /// environment.
    pub fn new(project_dir: impl Into<PathBuf>) -> Self {
        let project_dir = project_dir.into();
        let stop_block_cap = std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_STOP_BLOCK_CAP);
        DispatchOptions {
            wasm_only: false,
            wasm_runner: None,
            mcp_runner: None,
            model_runner: None,
            cwd: project_dir.clone(),
            project_dir,
            env: None,
            extra_env: BTreeMap::new(),
            env_file: None,
            spill_dir: None,
            stop_block_cap,
            pid: None,
            async_sink: None,
            process_confiner: None,
        }
    }

    /// Confines command handlers' processes with `confiner`.
    pub fn with_process_confiner(mut self, confiner: Arc<dyn ProcessConfiner>) -> Self {
        self.process_confiner = Some(confiner);
        self
    }

    /// Sets the WASM runner.
    pub fn with_wasm_runner(mut self, runner: Arc<dyn WasmHookRunner>) -> Self {
        self.wasm_runner = Some(runner);
        self
    }

    /// Sets the runner of `mcp_tool` handlers.
    pub fn with_mcp_runner(mut self, runner: Arc<dyn McpToolRunner>) -> Self {
        self.mcp_runner = Some(runner);
        self
    }

    /// Sets the runner of `prompt` and `agent` handlers.
    pub fn with_model_runner(mut self, runner: Arc<dyn ModelHookRunner>) -> Self {
        self.model_runner = Some(runner);
        self
    }
}

/// What happened to one handler.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerReport {
    /// Command, URL, tool or component.
    pub label: String,
    /// Its type.
    pub handler_type: HandlerType,
    /// Its source's label (`Project Settings`, `Plugin Hooks (x@y)`, …).
    pub source: String,
    /// The file or plugin directory it was declared in (see [`HookSource::origin`]).
    ///
    /// [`HookSource::origin`]: crate::HookSource::origin
    pub origin: Option<String>,
    /// Its classified result.
    pub result: Classified,
    /// Exit code, for command and WASM handlers that exited.
    pub exit_code: Option<i32>,
    /// Set when a `prompt` or `agent` handler answered `ok: false` and that blocks on this
    /// event: `true` when the reason should go back to Claude with the turn going on
    /// (`continueOnBlock`, always for agent handlers), `false` when the turn should end (spec
    /// 1.12). `None` for every other report.
    pub continue_on_block: Option<bool>,
    /// Wall time.
    pub elapsed: Duration,
}

/// The result of [`dispatch`].
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchResult {
    /// The merged outcome.
    pub merged: MergedResult,
    /// Per-handler reports, in finish order (skipped handlers first).
    pub handlers: Vec<HandlerReport>,
    /// Notices about this dispatch (skipped handlers, loop cap).
    pub warnings: Vec<String>,
}

impl DispatchResult {
    /// Why this dispatch of a guard event must block: a WASM handler that failed (could not
    /// load, trapped, timed out), whatever its `onFailure`. A WASM guard is there to stop
    /// calls, so one that did not answer is not "no objection"; command and other handlers
    /// keep Claude Code's rule (their `onFailure` decides).
    pub fn failed_wasm_guard(&self) -> Option<String> {
        self.handlers
            .iter()
            .filter(|h| h.handler_type == HandlerType::Wasm)
            .find_map(|h| match &h.result.outcome {
                Outcome::NonBlockingError { message } => Some(format!(
                    "the guard {} ({}) failed, so the call is blocked: {message}",
                    h.label, h.source
                )),
                Outcome::Blocking {
                    reason,
                    fail_closed: true,
                } => Some(format!(
                    "the guard {} ({}) failed, so the call is blocked: {reason}",
                    h.label, h.source
                )),
                Outcome::Cancelled => Some(format!(
                    "the guard {} ({}) timed out, so the call is blocked",
                    h.label, h.source
                )),
                _ => None,
            })
    }
}

/// Per-dispatch data shared by the handler tasks.
struct Ctx {
    event: Event,
    input: Arc<str>,
    /// The hook input as JSON, kept only when an `mcp_tool` handler (its `${path}` templates
    /// read from it) or a model handler (its runner gets it) runs.
    input_value: Option<Value>,
    base_env: BTreeMap<String, String>,
    opts: DispatchOptions,
    http_allowed_env_vars: Option<Vec<String>>,
    /// `CLAUDE_CODE_SESSION_ID` and `CLAUDE_EFFORT`, read from the input once.
    session_id: Option<String>,
    effort: Option<String>,
}

fn canonical(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<_> = m.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    walk(&m[k.as_str()], out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for x in a {
                    walk(x, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut s = String::new();
    walk(v, &mut s);
    s
}

fn matcher_value(event: Event, input: &Value) -> String {
    let Some(field) = event.matcher_field() else {
        return String::new();
    };
    let v = input.get(field).and_then(Value::as_str).unwrap_or_default();
    if event == Event::FileChanged {
        Path::new(v)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(v)
            .to_string()
    } else {
        v.to_string()
    }
}

fn skipped(hook: &RegisteredHook, reason: String) -> HandlerReport {
    HandlerReport {
        label: hook.label.clone(),
        handler_type: hook.handler.kind.handler_type(),
        source: hook.source_label.clone(),
        origin: hook.source.origin().map(|p| p.display().to_string()),
        result: Classified {
            outcome: Outcome::Skipped { reason },
            json: None,
            plain: None,
        },
        exit_code: None,
        continue_on_block: None,
        elapsed: Duration::ZERO,
    }
}

/// Runs every handler of `config` that matches `event` / `input`, in parallel, and merges their
/// results. Never fails: broken, hung or hostile handlers become notices.
///
/// Choices where the documentation is silent:
/// * identical settings-file handlers are deduplicated by their handler object (key order
///   ignored); plugin, skill and agent copies always run;
/// * the Stop-loop cap lets `cap` consecutive blocks through and overrides the next one
///   (counted per event, and per `agent_id` for `SubagentStop`);
/// * `async` hooks keep their timeout (the baseline documentation's 10-minute default), so an
///   abandoned background hook cannot outlive the host indefinitely;
/// * a `once` skill hook is spent after its first successful run.
pub async fn dispatch(
    event: Event,
    input: &Value,
    config: &HookConfig,
    opts: &DispatchOptions,
) -> DispatchResult {
    let mut warnings = Vec::new();
    let mut reports = Vec::new();
    let value = matcher_value(event, input);
    let tool_name = input
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let tool_input = input.get("tool_input").unwrap_or(&Value::Null);
    let live_cwd = input
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .unwrap_or_else(|| opts.cwd.clone());
    let mut seen_settings = HashSet::new();
    let mut selected: Vec<Arc<RegisteredHook>> = Vec::new();
    for hook in config.hooks(event) {
        if !hook.matcher.matches(&value) {
            continue;
        }
        if hook.handler.once && hook.spent.load(Ordering::Acquire) {
            continue;
        }
        // `if` is only evaluated on tool events; elsewhere a handler carrying it never runs.
        if let Some(rule) = &hook.handler.if_rule
            && (!event.is_tool_event()
                || !warden_permissions::if_filter_matches(rule, tool_name, tool_input, &live_cwd))
        {
            continue;
        }
        let ty = hook.handler.kind.handler_type();
        if opts.wasm_only && ty != HandlerType::Wasm {
            continue;
        }
        match ty {
            HandlerType::McpTool if opts.mcp_runner.is_none() => {
                let msg = format!(
                    "{}: no MCP tool runner configured; skipped",
                    hook.handler.label()
                );
                warnings.push(msg.clone());
                reports.push(skipped(hook, msg));
                continue;
            }
            HandlerType::Prompt | HandlerType::Agent if opts.model_runner.is_none() => {
                let msg = format!(
                    "{}: no model runner configured ({} handlers need a model); skipped",
                    hook.handler.label(),
                    ty.as_str()
                );
                warnings.push(msg.clone());
                reports.push(skipped(hook, msg));
                continue;
            }
            HandlerType::Wasm if opts.wasm_runner.is_none() => {
                let msg = format!(
                    "{}: no WASM runner configured; skipped",
                    hook.handler.label()
                );
                warnings.push(msg.clone());
                reports.push(skipped(hook, msg));
                continue;
            }
            _ => {}
        }
        if hook.source.is_settings() && !seen_settings.insert(canonical(&hook.handler.raw)) {
            continue;
        }
        selected.push(hook.clone());
    }

    let session_end_budget = (event == Event::SessionEnd).then(|| session_end_budget(config, opts));
    // Only processes and HTTP headers read the environment; snapshotting it costs more than a
    // WASM call, so a dispatch without them skips it.
    let needs_env = selected.iter().any(|h| {
        matches!(
            h.handler.kind.handler_type(),
            HandlerType::Command | HandlerType::Http
        )
    });
    let needs_value = selected.iter().any(|h| {
        matches!(
            h.handler.kind.handler_type(),
            HandlerType::McpTool | HandlerType::Prompt | HandlerType::Agent
        )
    });
    let ctx = Arc::new(Ctx {
        event,
        // Straight into a buffer: `Display` goes through the formatting machinery, which cost
        // more than the rest of building the context. A `Value` always serialises.
        input: Arc::from(serde_json::to_string(input).unwrap_or_default()),
        input_value: needs_value.then(|| input.clone()),
        base_env: if needs_env {
            base_env(opts)
        } else {
            BTreeMap::new()
        },
        opts: opts.clone(),
        http_allowed_env_vars: config.http_allowed_env_vars.clone(),
        session_id: input
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        effort: input
            .pointer("/effort/level")
            .and_then(Value::as_str)
            .map(str::to_string),
    });

    let mut runs = Vec::with_capacity(selected.len());
    for hook in selected {
        let timeout = match session_end_budget {
            Some(b) => hook.handler.timeout.map_or(b, |t| t.min(b)),
            None => hook.handler.effective_timeout(event),
        };
        if hook.handler.is_async() {
            spawn_async(ctx.clone(), hook.clone(), timeout);
            let mut r = skipped(&hook, String::new());
            r.result.outcome = Outcome::Async;
            reports.push(r);
            continue;
        }
        runs.push((hook, timeout));
    }
    let collector = Arc::new(Collector::new(runs.len()));
    let helpers = runs.len().saturating_sub(1).min(helper_limit());
    let queue = Arc::new(Queue {
        runs,
        next: AtomicUsize::new(0),
    });
    let mut tasks = AbortOnDrop(Vec::with_capacity(helpers));
    for _ in 0..helpers {
        let claimer = Claimer::new(&ctx, &queue, &collector);
        tasks.0.push(tokio::spawn(claimer).abort_handle());
    }
    // The dispatching task claims handlers too instead of idling until the helpers finish: it
    // starts at once, while a helper may first have to be woken, and a lone handler needs no
    // task at all.
    Claimer::new(&ctx, &queue, &collector).await;
    collector.wait().await;
    tasks.0.clear();
    let (finished, failures) = collector.take();
    reports.extend(finished);
    warnings.extend(failures);
    let mut merged = merge_iter(
        event,
        input,
        reports.iter().map(|r| &r.result),
        opts.spill_dir.as_deref(),
    );
    // The turn ends unless every model handler that blocked asked for it to go on.
    merged.continue_on_block = reports
        .iter()
        .filter_map(|r| r.continue_on_block)
        .reduce(|a, b| a && b);
    apply_stop_cap(event, input, config, opts, &mut merged, &mut warnings);
    DispatchResult {
        merged,
        handlers: reports,
        warnings,
    }
}

/// Runs one handler and reports it.
async fn run_handler(ctx: Arc<Ctx>, hook: Arc<RegisteredHook>, timeout: Duration) -> HandlerReport {
    let started = Instant::now();
    let label = hook.label.clone();
    let (result, exit_code, model_blocked) = run_one(&ctx, &hook, &label, timeout).await;
    if hook.handler.once && result.outcome == Outcome::Success {
        hook.spent.store(true, Ordering::Release);
    }
    let continue_on_block = model_blocked.then(|| match &hook.handler.kind {
        HandlerKind::Prompt(m) => m.continue_on_block,
        _ => true,
    });
    HandlerReport {
        label,
        handler_type: hook.handler.kind.handler_type(),
        source: hook.source_label.clone(),
        origin: hook.source.origin().map(|p| p.display().to_string()),
        result,
        exit_code,
        continue_on_block,
        elapsed: started.elapsed(),
    }
}

/// Reports gathered in finish order.
#[derive(Default)]
struct Finished {
    reports: Vec<HandlerReport>,
    failures: Vec<String>,
}

/// How long the dispatcher keeps checking for the last reports, instead of sleeping, while
/// another thread is computing them. Waking a sleeping thread costs 20–30 µs on a small VM, more
/// than a WASM handler takes, so a short wait is spent awake; a handler that runs longer (or
/// waits for a process or a request) lets the dispatcher sleep after this.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(200);

/// Where handler tasks leave their reports. The dispatcher is woken once, by the last handler
/// to finish, rather than once per handler.
struct Collector {
    state: Mutex<Finished>,
    /// Reports still to come.
    remaining: AtomicUsize,
    /// Claimers currently running handlers on some thread.
    working: AtomicUsize,
    done: Notify,
}

impl Collector {
    fn new(expected: usize) -> Self {
        Collector {
            state: Mutex::new(Finished {
                reports: Vec::with_capacity(expected),
                failures: Vec::new(),
            }),
            remaining: AtomicUsize::new(expected),
            working: AtomicUsize::new(0),
            done: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Finished> {
        // A poisoned lock only means a handler panicked while holding it; the reports gathered
        // so far are still whole (pushes do not panic half-way).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn finished(&self) -> bool {
        self.remaining.load(Ordering::Acquire) == 0
    }

    async fn wait(&self) {
        let started = Instant::now();
        let mut spins = 0u32;
        while !self.finished() && self.working.load(Ordering::Acquire) > 0 {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) && started.elapsed() > SPIN_BEFORE_PARK {
                break;
            }
        }
        // `notify_one` keeps a permit when nobody waits yet, so a finish between the check and
        // this await is not lost.
        while !self.finished() {
            self.done.notified().await;
        }
    }

    fn take(&self) -> (Vec<HandlerReport>, Vec<String>) {
        let mut s = self.state();
        (
            std::mem::take(&mut s.reports),
            std::mem::take(&mut s.failures),
        )
    }
}

/// One handler's place in the [`Collector`]. Dropped without a report (the handler panicked,
/// or the dispatch was cancelled), it records a failure, so the dispatcher never waits for a
/// report that cannot come.
struct Slot {
    collector: Arc<Collector>,
    hook: Arc<RegisteredHook>,
    report: Option<HandlerReport>,
}

impl Slot {
    fn new(collector: Arc<Collector>, hook: Arc<RegisteredHook>) -> Self {
        Slot {
            collector,
            hook,
            report: None,
        }
    }

    fn fill(mut self, report: HandlerReport) {
        self.report = Some(report);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        {
            let mut s = self.collector.state();
            match self.report.take() {
                Some(r) => s.reports.push(r),
                None => s.failures.push(format!(
                    "hook task failed: {} panicked",
                    self.hook.handler.label()
                )),
            }
        }
        // After the push, so a dispatcher that sees zero finds every report in place.
        if self.collector.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.collector.done.notify_one();
        }
    }
}

/// Aborts the helper tasks of a dispatch that is dropped before they finish (a cancelled
/// dispatch must not leave hooks running).
struct AbortOnDrop(Vec<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// How many helper tasks a dispatch may spawn: one per other core the runtime can use, since
/// the dispatching task claims handlers itself.
fn helper_limit() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from));
    let workers = tokio::runtime::Handle::try_current().map_or(1, |h| h.metrics().num_workers());
    cores.saturating_sub(1).min(workers).max(1)
}

/// The handlers of one dispatch that have not started yet, claimed in order.
struct Queue {
    runs: Vec<(Arc<RegisteredHook>, Duration)>,
    next: AtomicUsize,
}

impl Queue {
    fn claim(&self) -> Option<&(Arc<RegisteredHook>, Duration)> {
        self.runs.get(self.next.fetch_add(1, Ordering::Relaxed))
    }
}

type HandlerFuture = Pin<Box<dyn Future<Output = HandlerReport> + Send>>;

/// Claims handlers from a [`Queue`] and runs them concurrently: each claimed handler is polled
/// at once, and one that has to wait (a process, a request) is kept in flight while the
/// claimer moves on. A WASM handler usually completes in that first poll, so the handlers'
/// CPU work spreads over the claimers without a task per handler, and no handler ever waits
/// behind another's I/O.
struct Claimer {
    ctx: Arc<Ctx>,
    queue: Arc<Queue>,
    collector: Arc<Collector>,
    running: Vec<(HandlerFuture, Slot)>,
}

impl Claimer {
    fn new(ctx: &Arc<Ctx>, queue: &Arc<Queue>, collector: &Arc<Collector>) -> Self {
        Claimer {
            ctx: ctx.clone(),
            queue: queue.clone(),
            collector: collector.clone(),
            running: Vec::new(),
        }
    }
}

/// Polls a handler, turning a panic into `Ready(None)`: a panicking handler becomes a notice,
/// as it would in a task of its own.
fn poll_handler(fut: &mut HandlerFuture, cx: &mut TaskContext<'_>) -> Poll<Option<HandlerReport>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
        Ok(Poll::Ready(r)) => Poll::Ready(Some(r)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(_) => Poll::Ready(None),
    }
}

impl Future for Claimer {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let this = &mut *self;
        // Handler panics are caught below, so the count is always given back.
        this.collector.working.fetch_add(1, Ordering::AcqRel);
        let poll = this.poll_handlers(cx);
        this.collector.working.fetch_sub(1, Ordering::AcqRel);
        poll
    }
}

impl Claimer {
    fn poll_handlers(&mut self, cx: &mut TaskContext<'_>) -> Poll<()> {
        let this = self;
        let mut i = 0;
        while i < this.running.len() {
            match poll_handler(&mut this.running[i].0, cx) {
                Poll::Pending => i += 1,
                Poll::Ready(report) => {
                    let (_, slot) = this.running.swap_remove(i);
                    if let Some(r) = report {
                        slot.fill(r);
                    }
                }
            }
        }
        while let Some((hook, timeout)) = this.queue.claim() {
            let slot = Slot::new(this.collector.clone(), hook.clone());
            let mut fut: HandlerFuture =
                Box::pin(run_handler(this.ctx.clone(), hook.clone(), *timeout));
            match poll_handler(&mut fut, cx) {
                Poll::Pending => this.running.push((fut, slot)),
                Poll::Ready(Some(r)) => slot.fill(r),
                Poll::Ready(None) => drop(slot),
            }
        }
        if this.running.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

fn apply_stop_cap(
    event: Event,
    input: &Value,
    config: &HookConfig,
    opts: &DispatchOptions,
    merged: &mut MergedResult,
    warnings: &mut Vec<String>,
) {
    if !matches!(event, Event::Stop | Event::SubagentStop) {
        return;
    }
    let key = match event {
        Event::SubagentStop => format!(
            "SubagentStop:{}",
            input
                .get("agent_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
        ),
        _ => "Stop".to_string(),
    };
    let Ok(mut counts) = config.stop_blocks.lock() else {
        return;
    };
    if !merged.blocked {
        counts.remove(&key);
        return;
    }
    let n = counts.entry(key.clone()).or_insert(0);
    *n += 1;
    if opts.stop_block_cap > 0 && *n > opts.stop_block_cap {
        counts.remove(&key);
        merged.blocked = false;
        merged.block_reasons.clear();
        merged.continue_on_block = None;
        merged.stop_cap_overridden = true;
        warnings.push(format!(
            "{event} hooks blocked {} times in a row; allowing the stop (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP)",
            opts.stop_block_cap
        ));
    }
}

fn session_end_budget(config: &HookConfig, opts: &DispatchOptions) -> Duration {
    let env_ms = opts
        .env
        .as_ref()
        .and_then(|e| e.get("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS").cloned())
        .or_else(|| std::env::var("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS").ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(ms) = env_ms {
        return Duration::from_millis(ms);
    }
    config
        .hooks(Event::SessionEnd)
        .iter()
        .filter(|h| h.source.is_settings())
        .filter_map(|h| h.handler.timeout)
        .fold(SESSION_END_BASE_BUDGET, Duration::max)
        .min(SESSION_END_MAX_BUDGET)
}

fn base_env(opts: &DispatchOptions) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = match &opts.env {
        Some(e) => e.clone(),
        None => std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
    };
    env.retain(|k, _| !k.starts_with("OTEL_"));
    if env
        .get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB")
        .is_some_and(|v| v == "1")
    {
        for k in SCRUBBED_VARS {
            env.remove(*k);
        }
    }
    env
}

/// Replaces the exact `${NAME}` tokens (and `${user_config.KEY}` in exec form); forms such as
/// `${CLAUDE_PLUGIN_ROOT:-.}` are left to the shell, which sees the exported variable.
fn substitute(s: &str, vars: &[(String, String)]) -> String {
    let mut out = s.to_string();
    for (k, v) in vars {
        let token = format!("${{{k}}}");
        if out.contains(&token) {
            out = out.replace(&token, v);
        }
    }
    out
}

fn option_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn hook_env(ctx: &Ctx, source: &HookSource) -> (BTreeMap<String, String>, Vec<(String, String)>) {
    let opts = &ctx.opts;
    let mut env = ctx.base_env.clone();
    let mut subs = Vec::new();
    let project = opts.project_dir.display().to_string();
    env.insert("CLAUDE_PROJECT_DIR".into(), project.clone());
    subs.push(("CLAUDE_PROJECT_DIR".to_string(), project));
    if let Some(p) = source.plugin() {
        let root = p.root.display().to_string();
        let data = p.data_dir.display().to_string();
        env.insert("CLAUDE_PLUGIN_ROOT".into(), root.clone());
        env.insert("CLAUDE_PLUGIN_DATA".into(), data.clone());
        subs.push(("CLAUDE_PLUGIN_ROOT".into(), root));
        subs.push(("CLAUDE_PLUGIN_DATA".into(), data));
        for (k, v) in &p.options {
            env.insert(
                format!("CLAUDE_PLUGIN_OPTION_{}", k.to_uppercase()),
                option_string(v),
            );
        }
    }
    if let Some(sid) = &ctx.session_id {
        env.insert("CLAUDE_CODE_SESSION_ID".into(), sid.clone());
    }
    if let Some(level) = &ctx.effort {
        env.insert("CLAUDE_EFFORT".into(), level.clone());
    }
    env.insert("CLAUDECODE".into(), "1".into());
    env.insert("CLAUDE_CODE_CHILD_SESSION".into(), "1".into());
    env.insert(
        "CLAUDE_PID".into(),
        opts.pid.unwrap_or_else(std::process::id).to_string(),
    );
    if ctx.event.gets_env_file()
        && let Some(f) = &opts.env_file
    {
        env.insert("CLAUDE_ENV_FILE".into(), f.display().to_string());
    }
    for (k, v) in &opts.extra_env {
        env.insert(k.clone(), v.clone());
    }
    (env, subs)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn process_spec(
    ctx: &Ctx,
    c: &CommandHandler,
    source: &HookSource,
    timeout: Duration,
) -> ProcessSpec {
    let (env, mut subs) = hook_env(ctx, source);
    let (program, args) = match &c.args {
        Some(args) => {
            if let Some(p) = source.plugin() {
                for (k, v) in &p.options {
                    subs.push((format!("user_config.{k}"), option_string(v)));
                }
            }
            (
                substitute(&c.command, &subs),
                args.iter().map(|a| substitute(a, &subs)).collect(),
            )
        }
        None => match c.shell {
            Shell::Bash => {
                let cmd = substitute(&c.command, &subs);
                let cmd = match env
                    .get("CLAUDE_CODE_SHELL_PREFIX")
                    .filter(|p| !p.is_empty())
                {
                    Some(prefix) => format!("{prefix} {}", shell_quote(&cmd)),
                    None => cmd,
                };
                ("/bin/sh".to_string(), vec!["-c".to_string(), cmd])
            }
            Shell::PowerShell => {
                let ps: Vec<(String, String)> = subs
                    .iter()
                    .map(|(k, _)| (k.clone(), format!("${{env:{k}}}")))
                    .collect();
                let cmd = substitute(&c.command, &ps);
                (
                    "pwsh".to_string(),
                    vec![
                        "-NoProfile".into(),
                        "-NonInteractive".into(),
                        "-Command".into(),
                        cmd,
                    ],
                )
            }
        },
    };
    ProcessSpec {
        program,
        args,
        env,
        cwd: ctx.opts.cwd.clone(),
        stdin: ctx.input.clone(),
        timeout,
        confine: ctx
            .opts
            .process_confiner
            .clone()
            .map(|c| (c, source.clone())),
    }
}

async fn run_one(
    ctx: &Ctx,
    hook: &RegisteredHook,
    label: &str,
    timeout: Duration,
) -> (Classified, Option<i32>, bool) {
    let spill = ctx.opts.spill_dir.as_deref();
    let on_failure = hook.handler.on_failure;
    match &hook.handler.kind {
        HandlerKind::Command(c) => {
            let raw = run_process(process_spec(ctx, c, &hook.source, timeout)).await;
            let code = raw.exit_code;
            (
                classify_owned(ctx.event, raw, on_failure, label, spill),
                code,
                false,
            )
        }
        HandlerKind::Wasm(w) => {
            let Some(runner) = &ctx.opts.wasm_runner else {
                return (
                    Classified {
                        outcome: Outcome::Skipped {
                            reason: "no WASM runner".into(),
                        },
                        json: None,
                        plain: None,
                    },
                    None,
                    false,
                );
            };
            let plugin = hook.source.plugin();
            let none = Path::new("");
            let call = WasmHookCall {
                component: &w.path,
                component_name: &w.component,
                world: w.world.as_deref(),
                declaration: &w.declaration,
                plugin_id: plugin.map_or("", |p| p.id.as_str()),
                plugin_root: plugin.map_or(none, |p| p.root.as_path()),
                plugin_data: plugin.map_or(none, |p| p.data_dir.as_path()),
                project_dir: &ctx.opts.project_dir,
                event: ctx.event,
                input: &ctx.input,
                timeout,
            };
            let raw = match tokio::time::timeout(timeout, runner.run(call)).await {
                Ok(r) => r,
                Err(_) => RawOutcome::timed_out(),
            };
            let code = raw.exit_code;
            (
                classify_owned(ctx.event, raw, on_failure, label, spill),
                code,
                false,
            )
        }
        HandlerKind::Http(h) => {
            let mut allowed: Vec<String> = h.allowed_env_vars.clone();
            if let Some(global) = &ctx.http_allowed_env_vars {
                allowed.retain(|v| global.contains(v));
            }
            let headers: Vec<(String, String)> = h
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), interpolate_header(v, &allowed, &ctx.base_env)))
                .collect();
            let r = run_http(&h.url, &headers, ctx.input.clone(), timeout).await;
            (
                classify_http(ctx.event, &r, on_failure, label, spill),
                None,
                false,
            )
        }
        HandlerKind::McpTool(m) => {
            let Some(runner) = &ctx.opts.mcp_runner else {
                return (
                    Classified {
                        outcome: Outcome::Skipped {
                            reason: "no MCP tool runner".into(),
                        },
                        json: None,
                        plain: None,
                    },
                    None,
                    false,
                );
            };
            let arguments = match &m.input {
                None => Map::new(),
                Some(template) => {
                    match substitute_input(
                        template,
                        ctx.input_value.as_ref().unwrap_or(&Value::Null),
                    ) {
                        Value::Object(args) => args,
                        // Parsing only accepts objects; a handler built in code may not.
                        other => {
                            let raw = RawOutcome::error(format!(
                                "`input` of MCP tool `{}` on server `{}` must be an object, found {other}",
                                m.tool, m.server
                            ));
                            return (
                                classify_owned(ctx.event, raw, on_failure, label, spill),
                                None,
                                false,
                            );
                        }
                    }
                }
            };
            let call = McpToolCall {
                server: &m.server,
                tool: &m.tool,
                arguments,
                event: ctx.event,
                timeout,
            };
            let raw = match tokio::time::timeout(timeout, runner.call(call)).await {
                Ok(reply) => mcp_raw_outcome(&m.server, &m.tool, reply),
                Err(_) => RawOutcome::timed_out(),
            };
            // No process exited, so there is no exit code to report.
            (
                classify_owned(ctx.event, raw, on_failure, label, spill),
                None,
                false,
            )
        }
        HandlerKind::Prompt(m) | HandlerKind::Agent(m) => {
            let Some(runner) = &ctx.opts.model_runner else {
                return (
                    Classified {
                        outcome: Outcome::Skipped {
                            reason: "no model runner".into(),
                        },
                        json: None,
                        plain: None,
                    },
                    None,
                    false,
                );
            };
            let handler_type = hook.handler.kind.handler_type();
            let input = ctx.input_value.as_ref().unwrap_or(&Value::Null);
            let call = ModelHookCall {
                event: ctx.event,
                handler_type,
                prompt: build_prompt(&m.prompt, &ctx.input),
                instructions: instructions(handler_type),
                model: m.model.as_deref(),
                input,
                timeout,
            };
            let (raw, blocks) = match tokio::time::timeout(timeout, runner.run(call)).await {
                Ok(reply) => answer_outcome(ctx.event, handler_type, reply, spill),
                Err(_) => (RawOutcome::timed_out(), false),
            };
            (
                classify_owned(ctx.event, raw, on_failure, label, spill),
                None,
                blocks,
            )
        }
    }
}

fn spawn_async(ctx: Arc<Ctx>, hook: Arc<RegisteredHook>, timeout: Duration) {
    let HandlerKind::Command(c) = &hook.handler.kind else {
        return;
    };
    let spec = process_spec(&ctx, c, &hook.source, timeout);
    let rewake = c.async_rewake;
    tokio::spawn(async move {
        let raw = run_process(spec).await;
        let Some(sink) = &ctx.opts.async_sink else {
            return;
        };
        let spill = ctx.opts.spill_dir.as_deref();
        let json: Option<Map<String, Value>> =
            match serde_json::from_str::<Value>(raw.stdout.trim_start()) {
                Ok(Value::Object(m)) if crate::output::validate_output(ctx.event, &m).is_ok() => {
                    Some(m)
                }
                _ => None,
            };
        let get = |k: &str| -> Option<String> {
            let j = json.as_ref()?;
            let v = if k == "additionalContext" {
                j.get("hookSpecificOutput")?.get(k)?
            } else {
                j.get(k)?
            };
            v.as_str().map(|s| cap_text(s, spill))
        };
        let rewake_msg = (rewake && raw.exit_code == Some(2)).then(|| {
            let msg = if raw.stderr.trim().is_empty() {
                &raw.stdout
            } else {
                &raw.stderr
            };
            cap_text(msg.trim_end(), spill)
        });
        let report = AsyncHookReport {
            event: ctx.event,
            handler: hook.handler.label(),
            additional_context: get("additionalContext"),
            system_message: get("systemMessage"),
            rewake: rewake_msg,
            timed_out: raw.timed_out,
        };
        let _ = sink.send(report);
    });
}
