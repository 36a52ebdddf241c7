//! Warden's sandboxed component runtime, embeddable in any host.
//!
//! One [`Runtime`] per process holds the wasmtime [`Engine`] (Cranelift, pooling allocator,
//! epoch interruption driven by a ticker thread), the compile cache and a linker per WIT
//! version and set of granted capabilities; share it as an `Arc<Runtime>`, and share the
//! components it loads through one [`ComponentCache`]. [`Runtime::load`] compiles a
//! component once per digest (or loads it from the cache), checks its digest against the one
//! its grant was approved for ([`DigestPin`]), picks the bindings of the `warden:plugin` version it
//! was built against ([`WitVersion`]), checks its imports against the grant and prepares an
//! `InstancePre`. Every call then gets a **fresh store**: a deny-by-default WASI context (no
//! preopens, env, args, sockets or inherited stdio; stdout and stderr captured with a cap),
//! its own memory limit and its own deadline. Nothing survives from one call to the next.
//!
//! Under load: a call that finds every one of the `max_instances` sandbox slots in use waits
//! for one in arrival order, for at most its deadline ([`Runtime::slot_stats`] counts the
//! waits); the ticker adds every tick that elapsed, however late it wakes, and a guest is
//! stopped by the wall clock, so deadlines hold while the machine is busy.
//!
//! The crate knows no Claude Code formats: a hook's answer is the version-neutral
//! [`HookResult`], and `warden-hooks` renders it as Claude Code JSON.

mod bindings;
mod cache;
pub mod capability;
mod component_cache;
mod limits;
mod sandbox;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

pub use bindings::{PACKAGE as WIT_PACKAGE, UnknownWitVersion, WitVersion, latest, since_v0_1};
pub use cache::{CacheOutcome, CompileCache, sha256_hex};
pub use capability::{EnvGrant, ExecGrant, NetGrant};
pub use component_cache::ComponentCache;
pub use limits::Limits;
pub use sandbox::{
    CallContext, Captured, DeniedPaths, HookCall, LogRecord, Policy, PolicyError,
    ProcessConfinement, ToolCall, ToolCallOutcome, UnrestrictedPolicy,
};
pub use warden_vocab::{Capability, FsGrant, Grant, HookDecision as Decision, HookResult, World};

use sandbox::SandboxState;

/// The digest a component file must have for its granted capabilities to be linked.
///
/// A grant is approved for particular bytes: if the file changes afterwards (a tampered
/// install, a swapped file), the new bytes must not inherit the capabilities. A component
/// granted nothing runs whatever its digest, since it can reach nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestPin<'a> {
    /// sha256 (lowercase hex) of the whole file, recorded when its capabilities were granted.
    Sha256(&'a str),
    /// No digest is known: a component that is granted any capability is refused (fail
    /// closed).
    None,
    /// The caller vouches for the bytes itself, for grants given together with the file
    /// (`warden hook-wasm --grant`) or records that do not yet carry a component digest.
    /// Every use should say why the bytes are trusted.
    Unchecked,
}

/// Everything that can go wrong loading or calling a component. Each variant names the
/// component and, for limits, the limit.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The wasm file could not be read.
    #[error("cannot read component {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The bytes are not a valid component.
    #[error("{component}: not a valid WebAssembly component: {message}")]
    Compile {
        /// Component name.
        component: String,
        /// Compiler message.
        message: String,
    },
    /// The component imports a capability its plugin was not granted.
    #[error(
        "{component}: imports `{import}`, which needs the `{capability}` capability, but it was not granted; \
         grant `{capability}` to the plugin (warden plugin install --grant {capability}:...) or remove the import"
    )]
    CapabilityNotGranted {
        /// Component name.
        component: String,
        /// The capability.
        capability: Capability,
        /// The imported interface.
        import: String,
    },
    /// The component imports something the host does not provide.
    #[error("{component}: imports `{import}`, which Warden does not provide{hint}")]
    UnknownImport {
        /// Component name.
        component: String,
        /// The imported name.
        import: String,
        /// What to use instead, if anything.
        hint: String,
    },
    /// The component does not implement the expected world.
    #[error("{component}: does not implement the `{world}` world: {message}")]
    WrongWorld {
        /// Component name.
        component: String,
        /// Expected world.
        world: &'static str,
        /// Linker message.
        message: String,
    },
    /// The deadline passed (an infinite loop, or a slow host call).
    #[error("{component}: exceeded its deadline of {} ms and was stopped", deadline.as_millis())]
    Deadline {
        /// Component name.
        component: String,
        /// The limit.
        deadline: Duration,
    },
    /// The guest tried to grow its memory beyond the limit.
    #[error("{component}: exceeded its memory limit of {limit} bytes and was stopped")]
    MemoryLimit {
        /// Component name.
        component: String,
        /// The limit.
        limit: usize,
    },
    /// The guest returned more than the output limit.
    #[error("{component}: returned {size} bytes, over the output limit of {limit} bytes")]
    OutputLimit {
        /// Component name.
        component: String,
        /// What it returned.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The guest trapped (panic, stack overflow, ...).
    #[error("{component}: trapped: {message}{}", stderr_tail(.stderr))]
    Trap {
        /// Component name.
        component: String,
        /// The trap.
        message: String,
        /// The end of what the guest wrote to stderr (a panic message, usually).
        stderr: String,
    },
    /// The file's digest is not the one its capabilities were granted for.
    #[error(
        "{component}: the file changed since its capabilities were granted (granted for sha256 {expected}, \
         the file now has sha256 {actual}); it was not loaded. Run `warden plugin verify` to check the \
         installed plugins, and restore it with `warden plugin install <plugin>` (or `warden plugin update`)"
    )]
    DigestMismatch {
        /// Component name.
        component: String,
        /// The digest the grant was approved for.
        expected: String,
        /// The file's digest.
        actual: String,
    },
    /// The component is granted capabilities, but no digest says which bytes they are for.
    #[error(
        "{component}: it is granted capabilities ({capabilities}) but no digest pins the file they were \
         granted for, so it was not loaded. A grant made before Warden recorded component digests has none: \
         approve the plugin again with `warden plugin grant <plugin>`"
    )]
    Unpinned {
        /// Component name.
        component: String,
        /// The granted capabilities, comma-separated.
        capabilities: String,
    },
    /// The component was built against a `warden:plugin` version this host cannot run.
    #[error(
        "{component}: built against warden:plugin@{version}, which this host does not support \
         (supported: warden:plugin@{supported}); update Warden, or rebuild the plugin with a supported warden-sdk"
    )]
    UnsupportedVersion {
        /// Component name.
        component: String,
        /// The version it names.
        version: String,
        /// The versions this host runs.
        supported: String,
    },
    /// The engine could not be set up.
    #[error("cannot set up the WebAssembly engine: {0}")]
    Engine(String),
    /// Every sandbox slot stayed in use for as long as the call could wait (its deadline).
    #[error(
        "{component}: no sandbox slot came free within {} ms (all {slots} in use); the host is overloaded, try again",
        waited.as_millis()
    )]
    Busy {
        /// Component name.
        component: String,
        /// The slots the runtime has (`max_instances`).
        slots: usize,
        /// How long the call waited for one.
        waited: Duration,
    },
}

impl RuntimeError {
    /// Short machine-readable name of the error kind (`deadline`, `memory-limit`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeError::Read { .. } => "read",
            RuntimeError::Compile { .. } => "compile",
            RuntimeError::CapabilityNotGranted { .. } => "capability-not-granted",
            RuntimeError::UnknownImport { .. } => "unknown-import",
            RuntimeError::WrongWorld { .. } => "wrong-world",
            RuntimeError::Deadline { .. } => "deadline",
            RuntimeError::MemoryLimit { .. } => "memory-limit",
            RuntimeError::OutputLimit { .. } => "output-limit",
            RuntimeError::Trap { .. } => "trap",
            RuntimeError::DigestMismatch { .. } => "digest-mismatch",
            RuntimeError::Unpinned { .. } => "unpinned",
            RuntimeError::UnsupportedVersion { .. } => "unsupported-version",
            RuntimeError::Engine(_) => "engine",
            RuntimeError::Busy { .. } => "busy",
        }
    }
}

fn stderr_tail(stderr: &str) -> String {
    let t = stderr.trim();
    if t.is_empty() {
        return String::new();
    }
    let start = t.char_indices().rev().nth(499).map(|(i, _)| i).unwrap_or(0);
    format!("; guest stderr: {}", &t[start..])
}

/// Engine-wide settings. Per-call limits are in [`Limits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Compile cache directory (`None` disables the cache). Default: none; the CLI uses
    /// `$WARDEN_HOME/cache`.
    pub cache_dir: Option<PathBuf>,
    /// Concurrent sandboxes the pool holds. Default 128. A call that finds them all in use
    /// waits for one, in arrival order, for at most its own deadline (see [`SlotStats`]).
    pub max_instances: u32,
    /// Hard ceiling on any call's memory limit. Default 256 MiB.
    pub max_memory_bytes: usize,
    /// Epoch tick: the granularity of deadlines. Default 1 ms.
    pub tick: Duration,
    /// Use the pooling allocator (default). Off, every store maps fresh memory: slower, but
    /// needs less address space.
    pub pooling: bool,
    /// Bytes at the start of each pooled linear memory that stay mapped from one call to the
    /// next (pooling allocator only). Of those, only the pages a call wrote are reset, so the
    /// next fresh instance in the slot finds them resident; beyond it the slot's memory goes
    /// back to the kernel and is faulted in again. Default 16 MiB: it covers the initialised
    /// heap of the interpreter guests (QuickJS about 1 MiB, CPython about 12 MiB), for which
    /// 64 KiB cost a fresh JavaScript call a third of its time; a small guest keeps only the
    /// few pages it writes. Without Linux's `PAGEMAP_SCAN` (before 6.7, other systems) every
    /// page of the window is reset after each call, written or not, so at most 64 KiB is kept.
    pub keep_resident_bytes: usize,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            cache_dir: None,
            max_instances: 128,
            max_memory_bytes: 256 << 20,
            tick: Duration::from_millis(1),
            pooling: true,
            keep_resident_bytes: 16 << 20,
        }
    }
}

impl RuntimeConfig {
    /// The keep-resident window this configuration gets on this machine: without
    /// `PAGEMAP_SCAN` wasmtime resets the whole window after every call, written or not, so a
    /// large one would cost a small guest a memset of its whole heap and at most 64 KiB is
    /// kept. 0 without the pooling allocator.
    pub fn resident_window(&self) -> usize {
        if !self.pooling {
            0
        } else if PoolingAllocationConfig::is_pagemap_scan_available() {
            self.keep_resident_bytes
        } else {
            self.keep_resident_bytes.min(64 << 10)
        }
    }
}

/// A component ready to be called: compiled, import-checked and pre-linked for one grant.
pub struct LoadedComponent {
    name: String,
    digest: String,
    world: World,
    version: WitVersion,
    grant: Arc<Grant>,
    imports: Vec<String>,
    cache: CacheOutcome,
    pre: Pre,
}

/// The prepared instance, in the bindings of the component's WIT version.
enum Pre {
    V0_1Hook(since_v0_1::hook::HookPre<SandboxState>),
    V0_1Tool(since_v0_1::tool::ToolPre<SandboxState>),
}

impl LoadedComponent {
    /// The name used in errors (the file name, or the plugin's component name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// sha256 of the wasm bytes.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The world it implements.
    pub fn world(&self) -> World {
        self.world
    }

    /// The `warden:plugin` version it was built against.
    pub fn version(&self) -> WitVersion {
        self.version
    }

    /// The interfaces it imports.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// The grant it was linked against.
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// Whether it came from the compile cache.
    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache
    }
}

/// How calls have fared getting a sandbox slot since the runtime started
/// ([`Runtime::slot_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlotStats {
    /// The slots the runtime has (`max_instances`).
    pub slots: usize,
    /// Slots in use now.
    pub in_use: usize,
    /// The most slots in use at once.
    pub peak_in_use: usize,
    /// Calls that found every slot in use and waited in the queue for one.
    pub queued: u64,
    /// Queued calls whose deadline passed before a slot came free ([`RuntimeError::Busy`]).
    pub busy: u64,
}

struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            // Wake it rather than wait out its tick: a one-event process (`warden hook`) would
            // otherwise spend up to a tick exiting.
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// A linker serves one WIT version and one set of granted capabilities.
type LinkerKey = (WitVersion, u8);

/// The process-wide component runtime. Cheap to share behind an `Arc`; all methods take
/// `&self`.
pub struct Runtime {
    engine: Engine,
    config: RuntimeConfig,
    cache: CompileCache,
    linkers: Mutex<HashMap<LinkerKey, Arc<Linker<SandboxState>>>>,
    slots: Arc<tokio::sync::Semaphore>,
    queued: AtomicU64,
    busy: AtomicU64,
    peak_in_use: AtomicUsize,
    _ticker: Ticker,
}

impl Runtime {
    /// Builds the engine and starts the epoch ticker.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let mut cfg = Config::new();
        cfg.wasm_component_model(true)
            .epoch_interruption(true)
            .max_wasm_stack(512 << 10);
        if config.pooling {
            let n = config.max_instances.max(1);
            let mut pool = PoolingAllocationConfig::new();
            pool.total_component_instances(n)
                .total_core_instances(n * 4)
                .total_memories(n * 2)
                .total_tables(n * 4)
                .total_stacks(n)
                .max_core_instances_per_component(50)
                .max_memories_per_component(10)
                .max_tables_per_component(50)
                .table_elements(100_000)
                .max_component_instance_size(4 << 20)
                .max_core_instance_size(4 << 20)
                .max_memory_size(config.max_memory_bytes)
                // Reset only the pages a call dirtied (Linux ≥ 6.7; ignored elsewhere), and
                // keep them resident so a fresh instance does not fault on first use.
                .pagemap_scan(Enabled::Auto)
                .linear_memory_keep_resident(config.resident_window())
                .table_keep_resident(256 << 10);
            cfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        let engine = Engine::new(&cfg).map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;
        let cache = CompileCache::new(config.cache_dir.clone(), &engine);
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let engine = engine.clone();
            let stop = stop.clone();
            let tick = config.tick;
            std::thread::Builder::new()
                .name("warden-epoch".into())
                .spawn(move || {
                    let start = Instant::now();
                    let tick_ns = tick.as_nanos().max(1);
                    let mut done: u128 = 0;
                    while !stop.load(Ordering::Relaxed) {
                        // Every tick that elapsed since the start counts, however late this
                        // thread woke: under CPU load it wakes late, and one epoch per wake-up
                        // stretched a 5 s deadline to 15 s.
                        let due = start.elapsed().as_nanos() / tick_ns;
                        while done < due {
                            engine.increment_epoch();
                            done += 1;
                        }
                        let next = start
                            + Duration::from_nanos(
                                u64::try_from(tick_ns * (done + 1)).unwrap_or(u64::MAX),
                            );
                        // Parked, not asleep, so dropping the runtime can wake it at once.
                        std::thread::park_timeout(next.saturating_duration_since(Instant::now()));
                    }
                })
                .map_err(|e| RuntimeError::Engine(format!("cannot start the epoch ticker: {e}")))?
        };
        let slots = Arc::new(tokio::sync::Semaphore::new(
            config.max_instances.max(1) as usize
        ));
        Ok(Runtime {
            engine,
            config,
            cache,
            linkers: Mutex::new(HashMap::new()),
            slots,
            queued: AtomicU64::new(0),
            busy: AtomicU64::new(0),
            peak_in_use: AtomicUsize::new(0),
            _ticker: Ticker {
                stop,
                thread: Some(thread),
            },
        })
    }

    /// The process's runtime for `config`: the one already running with the same settings if
    /// any is still alive, else a new one. Engines are expensive (a pool of reserved memory,
    /// a ticker thread, compiled code that cannot be shared between engines), so callers that
    /// each want a runtime share one through this.
    pub fn shared(config: RuntimeConfig) -> Result<Arc<Runtime>, RuntimeError> {
        static SHARED: Mutex<Vec<std::sync::Weak<Runtime>>> = Mutex::new(Vec::new());
        let mut live = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|w| w.strong_count() > 0);
        if let Some(rt) = live
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .find(|rt| rt.config == config)
        {
            return Ok(rt);
        }
        let rt = Arc::new(Runtime::new(config)?);
        live.push(Arc::downgrade(&rt));
        Ok(rt)
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine-wide settings.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Compiles the component file at `path` into the compile cache, and records its digest
    /// for the path, so the first [`load_file`](Self::load_file) of it (in this process or
    /// any later one with the same engine settings and cache) maps the compiled code instead
    /// of compiling, and a first call costs what any call does (`warden build` calls this for
    /// what it built). Nothing is checked against a grant: nothing runs.
    pub fn precompile_file(&self, path: &Path) -> Result<CacheOutcome, RuntimeError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let path = std::path::absolute(path).map_err(|source| RuntimeError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (_, outcome, _) = self.cache.load_path(&self.engine, &path, &name)?;
        Ok(outcome)
    }

    /// The sha256 of the component file at `path` as recorded in the compile cache by the
    /// last [`load_file`](Self::load_file) or [`precompile_file`](Self::precompile_file) of
    /// it, when the file has not changed since (checked by its identity, without reading it).
    /// What is recorded about a component by digest (its tool description) can then be found
    /// without loading it.
    pub fn recorded_digest(&self, path: &Path) -> Option<String> {
        let path = std::path::absolute(path).ok()?;
        self.cache.recorded_digest(&path)
    }

    /// Reads and loads a component file (see [`load`](Self::load)). The name in errors is the
    /// file name. The digest comes from the compile cache when the file is unchanged, so
    /// pinning costs no second read.
    pub fn load_file(
        &self,
        path: &Path,
        world: World,
        grant: &Grant,
        pin: DigestPin<'_>,
    ) -> Result<LoadedComponent, RuntimeError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let path = std::path::absolute(path).map_err(|source| RuntimeError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (component, cache, digest) = self.cache.load_path(&self.engine, &path, &name)?;
        self.prepare(&name, component, digest, cache, world, grant, pin)
    }

    /// Compiles (or loads from the cache) a component, checks its digest against `pin` when
    /// `grant` gives any capability, picks the bindings of its WIT version, checks its imports
    /// against `grant` and prepares it for fast instantiation.
    pub fn load(
        &self,
        name: &str,
        wasm: &[u8],
        world: World,
        grant: &Grant,
        pin: DigestPin<'_>,
    ) -> Result<LoadedComponent, RuntimeError> {
        let digest = sha256_hex(wasm);
        let (component, cache) = self.cache.load(&self.engine, wasm, &digest, name)?;
        self.prepare(name, component, digest, cache, world, grant, pin)
    }

    #[allow(clippy::too_many_arguments)]
    fn prepare(
        &self,
        name: &str,
        component: Component,
        digest: String,
        cache: CacheOutcome,
        world: World,
        grant: &Grant,
        pin: DigestPin<'_>,
    ) -> Result<LoadedComponent, RuntimeError> {
        check_pin(name, &digest, grant, pin)?;
        let version = WitVersion::of(&component, &self.engine).map_err(|e| {
            RuntimeError::UnsupportedVersion {
                component: name.to_string(),
                version: e.version,
                supported: WitVersion::supported(),
            }
        })?;
        let imports = self.check_imports(name, &component, grant)?;
        let linker = self.linker(version, grant)?;
        let wrong_world = |e: wasmtime::Error| RuntimeError::WrongWorld {
            component: name.to_string(),
            world: world.name(),
            message: format!("{e:#}"),
        };
        let instance_pre = linker.instantiate_pre(&component).map_err(wrong_world)?;
        let pre = match (version, world) {
            (WitVersion::V0_1, World::Hook) => {
                Pre::V0_1Hook(since_v0_1::hook::HookPre::new(instance_pre).map_err(wrong_world)?)
            }
            (WitVersion::V0_1, World::Tool) => {
                Pre::V0_1Tool(since_v0_1::tool::ToolPre::new(instance_pre).map_err(wrong_world)?)
            }
        };
        Ok(LoadedComponent {
            name: name.to_string(),
            digest,
            world,
            version,
            grant: Arc::new(grant.clone()),
            imports,
            cache,
            pre,
        })
    }

    /// Refuses a component whose imports the grant does not cover, naming the capability,
    /// before anything is linked or run.
    fn check_imports(
        &self,
        name: &str,
        component: &Component,
        grant: &Grant,
    ) -> Result<Vec<String>, RuntimeError> {
        let ty = component.component_type();
        let mut imports = Vec::new();
        for (import, _) in ty.imports(&self.engine) {
            let import = import.to_string();
            let unversioned = import.split('@').next().unwrap_or(&import);
            // `wasi:filesystem` and `wasi:sockets` are linked inert (see `build_linker`):
            // language runtimes (Python, C's wasip1 adapter) import them unconditionally.
            let wasi_basics = [
                "wasi:io/",
                "wasi:clocks/",
                "wasi:random/",
                "wasi:cli/",
                "wasi:filesystem/",
                "wasi:sockets/",
            ]
            .iter()
            .any(|p| unversioned.starts_with(p));
            match capability::provider_for(&import) {
                _ if wasi_basics => {}
                Some(p) => {
                    if let Some(capability) = p.capability
                        && !grant.allows(capability)
                    {
                        return Err(RuntimeError::CapabilityNotGranted {
                            component: name.to_string(),
                            capability,
                            import,
                        });
                    }
                }
                None => {
                    let hint = if unversioned.starts_with("wasi:http/") {
                        "; the network is available through `warden:plugin/http` with a `net` grant"
                    } else {
                        ""
                    };
                    return Err(RuntimeError::UnknownImport {
                        component: name.to_string(),
                        import,
                        hint: hint.to_string(),
                    });
                }
            }
            imports.push(import);
        }
        Ok(imports)
    }

    /// The linker offering exactly the granted capabilities (plus WASI basics and `log`), in
    /// the bindings of `version`.
    fn linker(
        &self,
        version: WitVersion,
        grant: &Grant,
    ) -> Result<Arc<Linker<SandboxState>>, RuntimeError> {
        let key = (version, grant.capability_set());
        let mut linkers = self.linkers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = linkers.get(&key) {
            return Ok(l.clone());
        }
        let linker = Arc::new(
            build_linker(&self.engine, version, grant)
                .map_err(|e| RuntimeError::Engine(format!("{e:#}")))?,
        );
        linkers.insert(key, linker.clone());
        Ok(linker)
    }

    /// Runs a hook component on one event in a fresh sandbox.
    pub async fn call_hook(
        &self,
        component: &LoadedComponent,
        event_name: &str,
        input_json: &str,
        limits: &Limits,
        ctx: CallContext,
    ) -> Result<HookCall, RuntimeError> {
        let Pre::V0_1Hook(pre) = &component.pre else {
            return Err(RuntimeError::WrongWorld {
                component: component.name.clone(),
                world: "hook",
                message: "it was loaded as a tool".into(),
            });
        };
        let started = Instant::now();
        let deadline = deadline_after(started, limits.deadline);
        let _slot = self.slot(&component.name, started, deadline).await?;
        let mut store =
            sandbox::new_store(&self.engine, &self.config, component, limits, deadline, ctx);
        let event = since_v0_1::types::Event {
            name: event_name.to_string(),
            input: input_json.to_string(),
        };
        let fut = async {
            let hook = pre.instantiate_async(&mut store).await?;
            hook.call_handle(&mut store, &event).await
        };
        let outcome = run_with_deadline(fut, deadline).await;
        let result = sandbox::finish(store, component, limits, outcome)?;
        let (value, captured) = result;
        let hook_result = since_v0_1::hook_result(value);
        let size = hook_result.size();
        if size > limits.output_bytes {
            return Err(RuntimeError::OutputLimit {
                component: component.name.clone(),
                size,
                limit: limits.output_bytes,
            });
        }
        Ok(HookCall {
            result: hook_result,
            stdout: captured.0,
            stderr: captured.1,
            logs: captured.2,
            elapsed: started.elapsed(),
        })
    }

    /// Asks a tool component to describe itself, in a fresh sandbox.
    pub async fn describe_tool(
        &self,
        component: &LoadedComponent,
        limits: &Limits,
        ctx: CallContext,
    ) -> Result<since_v0_1::types::ToolInfo, RuntimeError> {
        let pre = tool_pre(component)?;
        let started = Instant::now();
        let deadline = deadline_after(started, limits.deadline);
        let _slot = self.slot(&component.name, started, deadline).await?;
        let mut store =
            sandbox::new_store(&self.engine, &self.config, component, limits, deadline, ctx);
        let fut = async {
            let tool = pre.instantiate_async(&mut store).await?;
            tool.call_describe(&mut store).await
        };
        let outcome = run_with_deadline(fut, deadline).await;
        let (info, _) = sandbox::finish(store, component, limits, outcome)?;
        Ok(info)
    }

    /// Runs a tool component on one input, in a fresh sandbox.
    pub async fn call_tool(
        &self,
        component: &LoadedComponent,
        input_json: &str,
        limits: &Limits,
        ctx: CallContext,
    ) -> Result<ToolCall, RuntimeError> {
        let pre = tool_pre(component)?;
        let started = Instant::now();
        let deadline = deadline_after(started, limits.deadline);
        let _slot = self.slot(&component.name, started, deadline).await?;
        let mut store =
            sandbox::new_store(&self.engine, &self.config, component, limits, deadline, ctx);
        let fut = async {
            let tool = pre.instantiate_async(&mut store).await?;
            tool.call_invoke(&mut store, input_json).await
        };
        let outcome = run_with_deadline(fut, deadline).await;
        let (value, captured) = sandbox::finish(store, component, limits, outcome)?;
        let outcome = match value {
            Ok(out) => ToolCallOutcome::Ok {
                content: out.content,
                structured: out.structured,
            },
            Err(since_v0_1::types::ToolError::InvalidInput(m)) => ToolCallOutcome::InvalidInput(m),
            Err(since_v0_1::types::ToolError::Denied(m)) => ToolCallOutcome::Denied(m),
            Err(since_v0_1::types::ToolError::Failed(m)) => ToolCallOutcome::Failed(m),
        };
        let size = outcome.size();
        if size > limits.output_bytes {
            return Err(RuntimeError::OutputLimit {
                component: component.name.clone(),
                size,
                limit: limits.output_bytes,
            });
        }
        Ok(ToolCall {
            outcome,
            stdout: captured.0,
            stderr: captured.1,
            logs: captured.2,
            elapsed: started.elapsed(),
        })
    }

    /// How calls have fared getting a sandbox slot so far.
    pub fn slot_stats(&self) -> SlotStats {
        let slots = self.slot_count();
        SlotStats {
            slots,
            in_use: slots.saturating_sub(self.slots.available_permits()),
            peak_in_use: self.peak_in_use.load(Ordering::Relaxed),
            queued: self.queued.load(Ordering::Relaxed),
            busy: self.busy.load(Ordering::Relaxed),
        }
    }

    fn slot_count(&self) -> usize {
        self.config.max_instances.max(1) as usize
    }

    /// A sandbox slot for one call. When every slot is in use the call queues (the semaphore
    /// hands slots out in arrival order) until one comes free or its `deadline` passes: a
    /// burst larger than the pool is served late rather than refused, and a flood cannot hold
    /// a caller longer than the call itself may last.
    async fn slot(
        &self,
        name: &str,
        started: Instant,
        deadline: Instant,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, RuntimeError> {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                self.queued.fetch_add(1, Ordering::Relaxed);
                let wait = self.slots.clone().acquire_owned();
                match tokio::time::timeout_at(deadline.into(), wait).await {
                    Ok(Ok(p)) => p,
                    // The semaphore is never closed; a closed one would mean no slot ever.
                    Ok(Err(_)) | Err(_) => {
                        self.busy.fetch_add(1, Ordering::Relaxed);
                        return Err(RuntimeError::Busy {
                            component: name.to_string(),
                            slots: self.slot_count(),
                            waited: started.elapsed(),
                        });
                    }
                }
            }
        };
        let in_use = self
            .slot_count()
            .saturating_sub(self.slots.available_permits());
        self.peak_in_use.fetch_max(in_use, Ordering::Relaxed);
        Ok(permit)
    }
}

/// `start + d`, or a date too far to matter where that would overflow (a deadline read from
/// a hook's `timeout` can be anything).
fn deadline_after(start: Instant, d: Duration) -> Instant {
    start
        .checked_add(d)
        .or_else(|| start.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(start)
}

fn tool_pre(
    component: &LoadedComponent,
) -> Result<&since_v0_1::tool::ToolPre<SandboxState>, RuntimeError> {
    match &component.pre {
        Pre::V0_1Tool(p) => Ok(p),
        Pre::V0_1Hook(_) => Err(RuntimeError::WrongWorld {
            component: component.name.clone(),
            world: "tool",
            message: "it was loaded as a hook".into(),
        }),
    }
}

/// Epochs stop a guest that is running wasm; the outer timeout also stops one that is stuck
/// in a host call (epochs cannot interrupt those).
async fn run_with_deadline<T>(
    fut: impl std::future::Future<Output = wasmtime::Result<T>>,
    deadline: Instant,
) -> Result<wasmtime::Result<T>, ()> {
    let left = deadline.saturating_duration_since(Instant::now());
    let grace = left + Duration::from_millis(50).max(left / 10);
    tokio::time::timeout(grace, fut).await.map_err(|_| ())
}

fn build_linker(
    engine: &Engine,
    version: WitVersion,
    grant: &Grant,
) -> wasmtime::Result<Linker<SandboxState>> {
    use wasmtime_wasi::cli::WasiCli;
    use wasmtime_wasi::clocks::WasiClocks;
    use wasmtime_wasi::p2::bindings::{cli, clocks, random};
    use wasmtime_wasi::random::WasiRandom;

    struct HasIo;
    impl wasmtime::component::HasData for HasIo {
        type Data<'a> = &'a mut wasmtime::component::ResourceTable;
    }

    let mut linker = Linker::new(engine);
    let l = &mut linker;
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<SandboxState, HasIo>(l, |t| {
        &mut t.table
    })?;
    wasmtime_wasi_io::bindings::wasi::io::poll::add_to_linker::<SandboxState, HasIo>(l, |t| {
        &mut t.table
    })?;
    wasmtime_wasi_io::bindings::wasi::io::streams::add_to_linker::<SandboxState, HasIo>(l, |t| {
        &mut t.table
    })?;
    clocks::wall_clock::add_to_linker::<SandboxState, WasiClocks>(
        l,
        wasmtime_wasi::clocks::WasiClocksView::clocks,
    )?;
    clocks::monotonic_clock::add_to_linker::<SandboxState, WasiClocks>(
        l,
        wasmtime_wasi::clocks::WasiClocksView::clocks,
    )?;
    random::random::add_to_linker::<SandboxState, WasiRandom>(
        l,
        wasmtime_wasi::random::WasiRandomView::random,
    )?;
    random::insecure::add_to_linker::<SandboxState, WasiRandom>(
        l,
        wasmtime_wasi::random::WasiRandomView::random,
    )?;
    random::insecure_seed::add_to_linker::<SandboxState, WasiRandom>(
        l,
        wasmtime_wasi::random::WasiRandomView::random,
    )?;
    let cli_view = wasmtime_wasi::cli::WasiCliView::cli;
    cli::exit::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::environment::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::stdin::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::stdout::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::stderr::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::terminal_input::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::terminal_output::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::terminal_stdin::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::terminal_stdout::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;
    cli::terminal_stderr::add_to_linker::<SandboxState, WasiCli>(l, cli_view)?;

    // Inert: the store's WASI context has no preopens and refuses every socket (see
    // `sandbox::new_store`), so these reach nothing. They are linked because language
    // runtimes import them whether or not the guest code uses them; a guest reaches files
    // and the network only through Warden's own checked interfaces.
    {
        use wasmtime_wasi::filesystem::WasiFilesystem;
        use wasmtime_wasi::p2::bindings::{filesystem, sockets};
        use wasmtime_wasi::sockets::WasiSockets;
        let fs_view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem;
        let net_view = wasmtime_wasi::sockets::WasiSocketsView::sockets;
        filesystem::types::add_to_linker::<SandboxState, WasiFilesystem>(l, fs_view)?;
        filesystem::preopens::add_to_linker::<SandboxState, WasiFilesystem>(l, fs_view)?;
        sockets::tcp::add_to_linker::<SandboxState, WasiSockets>(l, net_view)?;
        sockets::udp::add_to_linker::<SandboxState, WasiSockets>(l, net_view)?;
        sockets::udp_create_socket::add_to_linker::<SandboxState, WasiSockets>(l, net_view)?;
        sockets::tcp_create_socket::add_to_linker::<SandboxState, WasiSockets>(l, net_view)?;
        sockets::instance_network::add_to_linker::<SandboxState, WasiSockets>(l, net_view)?;
        sockets::network::add_to_linker::<SandboxState, WasiSockets>(
            l,
            &Default::default(),
            net_view,
        )?;
        sockets::ip_name_lookup::add_to_linker::<SandboxState, WasiSockets>(l, net_view)?;
    }

    for provider in capability::PROVIDERS {
        if provider.capability.is_none_or(|c| grant.allows(c)) {
            (provider.link)(l, version)?;
        }
    }
    Ok(linker)
}

/// Refuses a granted component whose bytes are not the ones the grant was approved for.
fn check_pin(
    name: &str,
    digest: &str,
    grant: &Grant,
    pin: DigestPin<'_>,
) -> Result<(), RuntimeError> {
    let granted: Vec<&str> = Capability::ALL
        .into_iter()
        .filter(|c| grant.allows(*c))
        .map(Capability::name)
        .collect();
    if granted.is_empty() {
        return Ok(());
    }
    match pin {
        DigestPin::Sha256(expected) if expected.eq_ignore_ascii_case(digest) => Ok(()),
        DigestPin::Sha256(expected) => Err(RuntimeError::DigestMismatch {
            component: name.to_string(),
            expected: expected.to_string(),
            actual: digest.to_string(),
        }),
        DigestPin::Unchecked => Ok(()),
        DigestPin::None => Err(RuntimeError::Unpinned {
            component: name.to_string(),
            capabilities: granted.join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::{DigestPin, Grant, RuntimeError, check_pin};

    #[test]
    fn pins() {
        let digest = "ab".repeat(32);
        let upper = digest.to_uppercase();
        let other = "cd".repeat(32);
        let granted = Grant {
            env: vec!["HOME".into()],
            ..Grant::default()
        };
        let nothing = Grant::default();
        // (grant, pin, loads?)
        let table = [
            (&granted, DigestPin::Sha256(&digest), true),
            (&granted, DigestPin::Sha256(&upper), true),
            (&granted, DigestPin::Sha256(&other), false),
            (&granted, DigestPin::Sha256(""), false),
            (&granted, DigestPin::None, false),
            (&granted, DigestPin::Unchecked, true),
            (&nothing, DigestPin::Sha256(&other), true),
            (&nothing, DigestPin::None, true),
        ];
        for (grant, pin, want) in table {
            let got = check_pin("c.wasm", &digest, grant, pin);
            assert_eq!(got.is_ok(), want, "{pin:?} with {grant:?}: {got:?}");
        }
        let err = check_pin("c.wasm", &digest, &granted, DigestPin::Sha256(&other))
            .err()
            .map(|e| e.kind());
        assert_eq!(err, Some("digest-mismatch"));
        let err = check_pin("c.wasm", &digest, &granted, DigestPin::None);
        assert!(matches!(err, Err(RuntimeError::Unpinned { .. })));
    }
}
