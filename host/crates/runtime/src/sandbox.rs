//! One call's sandbox: the store state, its construction and how its end is classified.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use warden_permissions::DeniedPaths;
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::limits::CallLimiter;
use super::{Grant, Limits, LoadedComponent, RuntimeConfig, RuntimeError};
use warden_vocab::HookResult;

/// Why a [`Policy`] refuses an access. The capability that asked puts it after what was
/// refused (`reading /p: ...`), so each variant says only why.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PolicyError {
    /// A rule denies it.
    #[error("{}", with_origin(reason, origin.as_deref()))]
    Denied {
        /// The rule's reason, naming the rule.
        reason: String,
        /// The settings file (or flag) the rule came from, when known.
        origin: Option<String>,
    },
    /// A rule asks the user, and nobody can be asked while an approved call runs
    /// (`AskAt::Deny`).
    #[error("needs approval: {}", with_origin(reason, origin.as_deref()))]
    NeedsApproval {
        /// The rule's reason, naming the rule.
        reason: String,
        /// The settings file (or flag) the rule came from, when known.
        origin: Option<String>,
    },
    /// The rules could not be compiled, so nothing is allowed.
    #[error("the permission rules cannot be used, so nothing is allowed: {0}")]
    RulesUnusable(String),
    /// Which paths the rules deny below the roots could not be worked out (a directory
    /// unreadable, too many entries): the access it was for is refused.
    #[error(transparent)]
    DeniedPaths(Arc<warden_permissions::PermissionsError>),
    /// This context reaches nothing at all, whatever the grant.
    #[error("{0}")]
    NothingReachable(&'static str),
}

fn with_origin(reason: &str, origin: Option<&str>) -> String {
    match origin {
        Some(o) => format!("{reason} (from {o})"),
        None => reason.to_string(),
    }
}

/// The checks a capability makes before touching the real world, beyond the grant itself.
/// The permission engine implements this so a guest's accesses obey the user's rules; the
/// grant is always checked first, by the capability.
pub trait Policy: Send + Sync {
    /// May the guest read (`write == false`) or change this absolute, resolved path?
    fn check_path(&self, path: &std::path::Path, write: bool) -> Result<(), PolicyError>;
    /// May the guest run this argument vector (program already resolved to a path)?
    fn check_exec(&self, argv: &[String], cwd: &std::path::Path) -> Result<(), PolicyError>;
    /// May the guest fetch this URL?
    fn check_url(&self, url: &str) -> Result<(), PolicyError>;
    /// The existing paths below `roots` (absolute directories a program will be able to
    /// reach) that the rules take away, found now, just before a program starts: the OS
    /// confinement of that program is built from them. An error keeps the program from
    /// starting. The default takes nothing away.
    fn denied_paths(&self, roots: &[PathBuf]) -> Result<DeniedPaths, PolicyError> {
        let _ = roots;
        Ok(DeniedPaths::default())
    }
}

/// How programs started through `exec` are confined by the operating system, beyond what
/// the grant and the rules give them (see `warden-confine` for what is enforced, and how).
///
/// Every field widens what a program may do, so a session takes them only from settings the
/// user controls (user, managed, command line), never from a project's own files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessConfinement {
    /// Where the kernel cannot confine programs, run them unconfined (with a warning in the
    /// call's log) instead of refusing (`sandbox.allowUnconfined`).
    pub allow_unconfined: bool,
    /// The user's home: its toolchain directories become readable, its credential stores
    /// stay denied. `None`: nothing in the home is readable unless granted.
    pub home: Option<PathBuf>,
    /// More read-only paths (`sandbox.readablePaths`).
    pub readable: Vec<PathBuf>,
    /// Network access for programs (`sandbox.network`; off by default). The kernel cannot
    /// limit it to hosts: on means every host.
    pub network: bool,
    /// Files later programs run that a program must not change even inside a writable
    /// grant: the scripts configured hooks and MCP servers start (resolved, absolute).
    /// Read-only for programs (`warden_confine::Confinement::read_only`), and refused to
    /// the file tools under every name, hard links included.
    pub read_only: Vec<PathBuf>,
}

impl ProcessConfinement {
    /// The defaults for the current user: confined, home from `$HOME`, no network.
    pub fn for_current_user() -> Self {
        ProcessConfinement {
            home: warden_vocab::home_dir().filter(|h| h.is_absolute()),
            ..ProcessConfinement::default()
        }
    }
}

/// A policy that adds nothing to the grant.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnrestrictedPolicy;

impl Policy for UnrestrictedPolicy {
    fn check_path(&self, _: &std::path::Path, _: bool) -> Result<(), PolicyError> {
        Ok(())
    }

    fn check_exec(&self, _: &[String], _: &std::path::Path) -> Result<(), PolicyError> {
        Ok(())
    }

    fn check_url(&self, _: &str) -> Result<(), PolicyError> {
        Ok(())
    }
}

/// What a call may see of the session, beyond its grant.
#[derive(Clone)]
pub struct CallContext {
    /// The session's working directory (relative guest paths resolve against it).
    pub cwd: PathBuf,
    /// The rules checked on every capability use.
    pub policy: Arc<dyn Policy>,
    /// Values for granted environment variables (others are never visible).
    pub env: Vec<(String, String)>,
    /// How the programs the guest starts are confined.
    pub processes: ProcessConfinement,
}

impl CallContext {
    /// A context for `cwd` with no extra policy, taking granted variables from the host's
    /// environment.
    pub fn new(cwd: impl Into<PathBuf>, grant: &Grant) -> Self {
        Self::with_policy(cwd, grant, Arc::new(UnrestrictedPolicy))
    }

    /// A context for `cwd` checked by `policy`, taking granted variables from the host's
    /// environment.
    pub fn with_policy(cwd: impl Into<PathBuf>, grant: &Grant, policy: Arc<dyn Policy>) -> Self {
        Self::confined(cwd, grant, policy, ProcessConfinement::for_current_user())
    }

    /// A context for `cwd` checked by `policy`, whose programs are confined as `processes`
    /// says, taking granted variables from the host's environment.
    pub fn confined(
        cwd: impl Into<PathBuf>,
        grant: &Grant,
        policy: Arc<dyn Policy>,
        processes: ProcessConfinement,
    ) -> Self {
        let env = grant
            .env
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v)))
            .collect();
        CallContext {
            cwd: cwd.into(),
            policy,
            env,
            processes,
        }
    }
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cwd", &self.cwd)
            .field("env", &self.env.len())
            .field("processes", &self.processes)
            .finish_non_exhaustive()
    }
}

/// Guest output captured from stdout or stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// What was kept (lossy UTF-8).
    pub text: String,
    /// True if the guest wrote more than the cap and the rest was dropped.
    pub truncated: bool,
}

/// One message the guest logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// `trace` .. `error`.
    pub level: &'static str,
    /// The message (capped).
    pub message: String,
}

/// A finished hook call.
#[derive(Debug, Clone)]
pub struct HookCall {
    /// The hook's answer.
    pub result: HookResult,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// What it logged.
    pub logs: Vec<LogRecord>,
    /// Wall time including instantiation and any wait for a sandbox slot.
    pub elapsed: Duration,
}

/// How a tool call ended (from the tool's side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCallOutcome {
    /// Success.
    Ok {
        /// Text for the model.
        content: String,
        /// Structured result, as JSON text.
        structured: Option<String>,
    },
    /// The tool rejected its input.
    InvalidInput(String),
    /// A capability check refused an access.
    Denied(String),
    /// Any other failure.
    Failed(String),
}

impl ToolCallOutcome {
    pub(crate) fn size(&self) -> usize {
        match self {
            ToolCallOutcome::Ok {
                content,
                structured,
            } => content.len() + structured.as_ref().map_or(0, String::len),
            ToolCallOutcome::InvalidInput(m)
            | ToolCallOutcome::Denied(m)
            | ToolCallOutcome::Failed(m) => m.len(),
        }
    }
}

/// A finished tool call.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The outcome.
    pub outcome: ToolCallOutcome,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// What it logged.
    pub logs: Vec<LogRecord>,
    /// Wall time including instantiation and any wait for a sandbox slot.
    pub elapsed: Duration,
}

/// The state of one store. Lives exactly as long as one call.
pub struct SandboxState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) grant: Arc<Grant>,
    pub(crate) ctx: CallContext,
    /// The capability providers' own state for this call.
    pub(crate) calls: crate::capability::CallStates,
    pub(crate) deadline: std::time::Instant,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

impl SandboxState {
    /// Time left before the call's deadline (host calls must not outlive it).
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline
            .saturating_duration_since(std::time::Instant::now())
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

pub(crate) fn new_store(
    engine: &Engine,
    config: &RuntimeConfig,
    component: &LoadedComponent,
    limits: &Limits,
    deadline: std::time::Instant,
    ctx: CallContext,
) -> Store<SandboxState> {
    let stdout = MemoryOutputPipe::new(limits.capture_bytes);
    let stderr = MemoryOutputPipe::new(limits.capture_bytes);
    // Deny by default: no preopens, env, args or sockets, stdin closed. Granted env and
    // files are offered through Warden's own interfaces, where every use is checked.
    // `wasi:filesystem` and `wasi:sockets` are linked for language runtimes that import
    // them; with no preopens and every socket use refused they reach nothing.
    let wasi = WasiCtx::builder()
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .max_random_size(1 << 20)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .build();
    let mut table = ResourceTable::new();
    table.set_max_capacity(10_000);
    let memory_bytes = limits.memory_bytes.min(config.max_memory_bytes);
    let state = SandboxState {
        wasi,
        table,
        limiter: CallLimiter {
            memory_bytes,
            memory_limit_hit: None,
        },
        grant: component.grant.clone(),
        calls: crate::capability::CallStates::new(&ctx),
        ctx,
        deadline,
        stdout,
        stderr,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limiter);
    // Epochs say when to look, the wall clock decides: the store's deadline counts from the
    // engine's epoch now, which may lag the real time by as long as the ticker was kept off
    // the CPU, so reaching it early only sets the next check.
    let tick = config.tick;
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    store.set_epoch_deadline(ticks_for(left, tick).saturating_add(1));
    store.epoch_deadline_callback(move |ctx| {
        let left = ctx
            .data()
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(Trap::Interrupt.into());
        }
        Ok(UpdateDeadline::Continue(ticks_for(left, tick)))
    });
    // Caps what one host call may copy out of the guest (e.g. a huge path string).
    store.set_hostcall_fuel(limits.output_bytes.max(16 << 20));
    store
}

/// Whole ticks in `d`, rounded up, at least one.
fn ticks_for(d: Duration, tick: Duration) -> u64 {
    let ticks = d.as_nanos().div_ceil(tick.as_nanos().max(1)).max(1);
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

fn captured(pipe: &MemoryOutputPipe, cap: usize) -> Captured {
    let bytes = pipe.contents();
    Captured {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        truncated: bytes.len() >= cap && cap > 0,
    }
}

type Extras = (Captured, Captured, Vec<LogRecord>);

/// Tears the store down and turns the call's outcome into a value or a typed error.
pub(crate) fn finish<T>(
    store: Store<SandboxState>,
    component: &LoadedComponent,
    limits: &Limits,
    outcome: Result<wasmtime::Result<T>, ()>,
) -> Result<(T, Extras), RuntimeError> {
    let state = store.into_data();
    let stdout = captured(&state.stdout, limits.capture_bytes);
    let stderr = captured(&state.stderr, limits.capture_bytes);
    let name = component.name.clone();
    match outcome {
        Ok(Ok(v)) => Ok((v, (stdout, stderr, state.calls.log.records))),
        Err(()) => Err(RuntimeError::Deadline {
            component: name,
            deadline: limits.deadline,
        }),
        Ok(Err(e)) => {
            if state.limiter.memory_limit_hit.is_some() {
                return Err(RuntimeError::MemoryLimit {
                    component: name,
                    limit: state.limiter.memory_bytes,
                });
            }
            match e.downcast_ref::<Trap>() {
                Some(Trap::Interrupt) => Err(RuntimeError::Deadline {
                    component: name,
                    deadline: limits.deadline,
                }),
                Some(Trap::StackOverflow) => Err(RuntimeError::Trap {
                    component: name,
                    message: "stack overflow (recursion too deep)".into(),
                    stderr: stderr.text,
                }),
                Some(trap) => Err(RuntimeError::Trap {
                    component: name,
                    message: trap.to_string(),
                    stderr: stderr.text,
                }),
                None => Err(RuntimeError::Trap {
                    component: name,
                    message: format!("{e:#}"),
                    stderr: stderr.text,
                }),
            }
        }
    }
}
