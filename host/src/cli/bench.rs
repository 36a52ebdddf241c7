//! `warden bench`: load and soak numbers for sandboxed hooks on this machine.
//!
//! Everything happens in a scratch directory: a marketplace of plugins generated from the
//! protect-secrets example (its component is embedded in `warden`, so a fresh checkout needs
//! no extra build), installed into scratch Warden homes with the real plugin manager, then
//! loaded as `warden run` and `warden serve` load a session. The parts:
//!
//! 1. **plugins**: N plugins installed and a session loaded over them, one PreToolUse through
//!    all N hooks (which compiles and loads every component), then the process's RSS once
//!    idle. The session's runtime is the one those commands use (no instance pool).
//! 2. **concurrent**: N PreToolUse dispatches started at once.
//! 3. **sequential**: N PreToolUse dispatches one after another, RSS sampled after a warm-up
//!    and then every 5% of the run.
//! 4. **direct**: `Runtime::call_hook` on the same component with the same limits, one task,
//!    then one task per worker thread: the sandbox alone, to show what dispatching adds.
//!
//! Every dispatch goes the way a session's tool call does: `Session::dispatch_options()` and
//! `warden_hooks::dispatch` per call (the PreToolUse step of `Session::call_tool`), the WASM
//! handler through the session's `WasmRunner`, its component from the session's cache. Every
//! answer is checked (deny for `.env`, no decision for `README.md`); anything else is an error.
//! Parts 2–4 use a long-lived process's runtime (pooling allocator, `--pool` slots).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};
use warden::runtime::{DigestPin, Limits, World};
use warden::session::{Session, SessionOptions};
use warden_config::{Home, Scope};
use warden_hooks::{Decision, Event, HookVerdict, Outcome, dispatch};
use warden_plugins::{InstallOptions, PluginManager};

/// Arguments.
#[derive(clap::Args)]
#[command(
    after_help = "Parts run in this order; 0 skips one. The defaults are the full run \
(a few minutes on 2 cores); the numbers in the README come from it.

Examples:
  warden bench                                        the full run: 100 plugins, 5 × 10,000 concurrent, 1,000,000 sequential
  warden bench --plugins 0 --concurrent 0 --sequential 100000
                                                      a shorter soak only
  warden bench --concurrent 500 --sequential 5000 --plugins 10 --direct 2000 --json
                                                      a smoke run, machine-readable
  warden bench --plugins 0 --sequential 0 --direct 0 --pool 1 --threads 4
                                                      one slot for four threads: calls queue for it"
)]
pub struct Args {
    /// Plugins to install and load for the idle-RSS part.
    #[arg(long, default_value_t = 100, value_name = "N")]
    plugins: usize,
    /// PreToolUse dispatches started at once.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    concurrent: usize,
    /// Bursts of `--concurrent` dispatches, one after another (RSS must not rise from one
    /// to the next).
    #[arg(long, default_value_t = 5, value_name = "N")]
    rounds: usize,
    /// PreToolUse dispatches one after another (the soak).
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    sequential: usize,
    /// `Runtime::call_hook` calls without the dispatcher, for comparison (half on one task,
    /// half spread over the worker threads).
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    direct: usize,
    /// Sandbox slots of the runtime (`max_instances`) for the dispatch parts.
    #[arg(long, default_value_t = 128, value_name = "N")]
    pool: u32,
    /// Worker threads of the async runtime (`warden serve` and `warden run` use 2).
    #[arg(long, default_value_t = 2, value_name = "N")]
    threads: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// The hook: protect-secrets, as embedded in this binary.
const HOOK_NAME: &str = "protect-secrets (lean Rust, embedded in warden)";

/// Every generated plugin's `warden.toml`: protect-secrets' own declaration.
const WARDEN_TOML: &str = r#"[components.guard]
path = "wasm/guard.wasm"
world = "hook"
capabilities = { fs = [], net = [], env = [], exec = [] }

[[hooks.PreToolUse]]
matcher = "Read|Edit|MultiEdit|Write|NotebookEdit|Bash"
hooks = [{ type = "wasm", component = "guard", timeout = 5, onFailure = "block" }]
"#;

/// RSS may grow by this much after warm-up and still count as flat.
const FLAT_WITHIN: f64 = 0.10;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.threads == 0 || args.pool == 0 {
        anyhow::bail!("--threads and --pool must be at least 1");
    }
    let scratch = tempfile::Builder::new()
        .prefix("warden-bench-")
        .tempdir()
        .context("creating a scratch directory")?;
    let root = scratch.path().canonicalize()?;
    let project = root.join("project");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join(".env"), "API_KEY=not-a-real-key\n")?;
    std::fs::write(project.join("README.md"), "# bench\n")?;
    let market = root.join("market");
    write_marketplace(&market, args.plugins.max(1))?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads)
        .enable_all()
        .build()?;
    let mut report = Report {
        cores: std::thread::available_parallelism().map_or(1, usize::from),
        threads: args.threads,
        pool: args.pool,
        component_bytes: warden::guests::PROTECT_SECRETS_WASM.len(),
        rss_at_start: rss_kib(),
        plugins: None,
        runs: Vec::new(),
    };

    if args.plugins > 0 {
        progress(&args, &format!("installing {} plugins", args.plugins));
        let home = Home::new(root.join("home-plugins"));
        let installed = Instant::now();
        install(&home, &project, &market, args.plugins)?;
        let install_secs = installed.elapsed().as_secs_f64();
        progress(&args, "loading a session over them");
        report.plugins =
            Some(rt.block_on(idle_rss(&home, &project, args.plugins, install_secs))?);
    }

    if args.concurrent + args.sequential + args.direct > 0 {
        let home = Home::new(root.join("home-one"));
        install(&home, &project, &market, 1)?;
        let mut opts = session_options(&project, &home);
        // A long-lived process keeps its instances warm, as `warden mcp serve` does.
        opts.runtime.pooling = true;
        opts.runtime.max_instances = args.pool;
        let session = Arc::new(Session::load(&opts));
        if let Some(p) = session.load_problems().first() {
            anyhow::bail!("the bench session did not load: {p}");
        }
        let bench = Arc::new(Bench::new(session, &project)?);
        progress(&args, "warming up");
        rt.block_on(bench.clone().warm_up(1_000))?;
        if args.concurrent > 0 {
            progress(
                &args,
                &format!(
                    "{} × {} concurrent dispatches",
                    args.rounds.max(1),
                    group(args.concurrent)
                ),
            );
            report.runs.push(
                rt.block_on(
                    bench
                        .clone()
                        .concurrent(args.concurrent, args.rounds.max(1)),
                )?,
            );
        }
        if args.sequential > 0 {
            progress(
                &args,
                &format!("{} sequential dispatches", group(args.sequential)),
            );
            report
                .runs
                .push(rt.block_on(bench.clone().sequential(args.sequential))?);
        }
        if args.direct > 0 {
            progress(&args, &format!("{} direct calls", group(args.direct)));
            let one = args.direct.div_ceil(2);
            report.runs.push(rt.block_on(bench.clone().direct(one, 1))?);
            report
                .runs
                .push(rt.block_on(bench.clone().direct(args.direct - one, args.threads.max(1)))?);
        }
    }
    drop(rt);

    let errors: usize = report.runs.iter().map(|r| r.errors).sum::<usize>()
        + report.plugins.as_ref().map_or(0, |p| p.errors);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        report.print();
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn progress(args: &Args, what: &str) {
    if !args.json {
        eprintln!("warden bench: {what}…");
    }
}

/// The session options `warden run` and `warden serve` start from, in a scratch home that
/// reads nothing of the user's own configuration.
fn session_options(project: &Path, home: &Home) -> SessionOptions {
    let mut opts = SessionOptions::new(project, home.clone());
    opts.user_home = Some(project.to_path_buf());
    opts.managed_dir = None;
    opts.claude_config = warden_config::ClaudeConfig::default();
    opts
}

fn plugin_name(i: usize) -> String {
    format!("guard-{i:04}")
}

/// A marketplace of `n` plugins, each protect-secrets' component and hook under its own name.
/// Each component carries its plugin's name in a custom section, so each is its own file with
/// its own digest and is compiled and cached on its own, as distinct plugins would be.
fn write_marketplace(dir: &Path, n: usize) -> anyhow::Result<()> {
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        let name = plugin_name(i);
        let plugin = dir.join(&name);
        std::fs::create_dir_all(plugin.join(".claude-plugin"))?;
        std::fs::create_dir_all(plugin.join("wasm"))?;
        let manifest = json!({
            "name": name,
            "version": "0.1.0",
            "description": "protect-secrets' guard under another name, for warden bench",
        });
        std::fs::write(
            plugin.join(".claude-plugin/plugin.json"),
            serde_json::to_string_pretty(&manifest)?,
        )?;
        std::fs::write(plugin.join("warden.toml"), WARDEN_TOML)?;
        std::fs::write(
            plugin.join("wasm/guard.wasm"),
            with_custom_section(
                warden::guests::PROTECT_SECRETS_WASM,
                "warden-bench",
                name.as_bytes(),
            ),
        )?;
        entries.push(json!({"name": name, "source": format!("./{name}")}));
    }
    std::fs::create_dir_all(dir.join(".claude-plugin"))?;
    let catalog = json!({
        "name": "warden-bench",
        "owner": {"name": "Warden"},
        "plugins": entries,
    });
    std::fs::write(
        dir.join(".claude-plugin/marketplace.json"),
        serde_json::to_string_pretty(&catalog)?,
    )?;
    Ok(())
}

/// `wasm` with a custom section appended (valid at the end of a component or module).
fn with_custom_section(wasm: &[u8], name: &str, payload: &[u8]) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(payload);
    let mut out = wasm.to_vec();
    out.push(0);
    leb(body.len(), &mut out);
    out.extend_from_slice(&body);
    out
}

/// Installs the first `n` plugins of the marketplace into `home`, granting what they ask
/// (nothing).
fn install(home: &Home, project: &Path, market: &Path, n: usize) -> anyhow::Result<()> {
    let manager = PluginManager::new(home.clone(), project).quiet(true);
    manager
        .marketplace_add(&market.display().to_string(), Scope::User)
        .context("adding the bench marketplace")?;
    let opts = InstallOptions {
        scope: Scope::User,
        accept_capabilities: true,
    };
    for i in 0..n {
        let spec = format!("{}@warden-bench", plugin_name(i));
        manager
            .install(&spec, &opts)
            .with_context(|| format!("installing {spec}"))?;
    }
    Ok(())
}

/// The hook input a session's PreToolUse step builds, for a Read of `file`.
fn pre_tool_use(session: &Session, file: &Path, id: &str) -> Value {
    json!({
        "session_id": session.session_id,
        "transcript_path": session.home.root().join("projects/bench/transcript.jsonl"),
        "cwd": session.cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": file},
        "tool_use_id": id,
    })
}

/// One PreToolUse dispatch through `session`, checked: `hooks` handlers all ran and
/// succeeded, and the decision is deny when `deny`, none otherwise.
async fn dispatch_checked(
    session: &Arc<Session>,
    input: &Value,
    deny: bool,
    hooks: usize,
) -> Result<Duration, String> {
    dispatch_timed(session, input, deny, hooks)
        .await
        .map(|t| t.total)
}

/// Where one dispatch's time went.
#[derive(Debug, Clone, Copy, Default)]
struct Split {
    total: Duration,
    /// `Session::dispatch_options()`.
    options: Duration,
    /// The handlers' own wall time (the session's `WasmRunner`: component lookup, call
    /// context, `Runtime::call_hook`; then classification).
    handlers: Duration,
}

async fn dispatch_timed(
    session: &Arc<Session>,
    input: &Value,
    deny: bool,
    hooks: usize,
) -> Result<Split, String> {
    let started = Instant::now();
    let opts = session.dispatch_options().map_err(|e| e.to_string())?;
    let options = started.elapsed();
    let result = dispatch(Event::PreToolUse, input, session.hook_config(), &opts).await;
    let took = Split {
        total: started.elapsed(),
        options,
        handlers: result.handlers.iter().map(|h| h.elapsed).sum(),
    };
    if result.handlers.len() != hooks {
        return Err(format!(
            "{} handlers ran, expected {hooks}",
            result.handlers.len()
        ));
    }
    if let Some(h) = result
        .handlers
        .iter()
        .find(|h| h.result.outcome != Outcome::Success)
    {
        return Err(format!("{}: {:?}", h.label, h.result.outcome));
    }
    let decision = result.merged.permission_verdict().decision;
    let want = deny.then_some(HookVerdict::Decided(Decision::Deny));
    if decision != want {
        return Err(format!("decision {decision:?}, expected {want:?}"));
    }
    Ok(took)
}

/// What the plugins part measured.
struct PluginsReport {
    count: usize,
    install_secs: f64,
    rss_before: Option<u64>,
    rss_loaded: Option<u64>,
    first_dispatch_secs: f64,
    warm_dispatch_micros: f64,
    rss_idle: Option<u64>,
    errors: usize,
    first_error: Option<String>,
    pooling: bool,
    slots: u32,
}

async fn idle_rss(
    home: &Home,
    project: &Path,
    n: usize,
    install_secs: f64,
) -> anyhow::Result<PluginsReport> {
    let rss_before = rss_kib();
    let opts = session_options(project, home);
    let (pooling, slots) = (opts.runtime.pooling, opts.runtime.max_instances);
    let session = Arc::new(Session::load(&opts));
    if let Some(p) = session.load_problems().first() {
        anyhow::bail!("the session over {n} plugins did not load: {p}");
    }
    let _ = session.hook_config();
    let rss_loaded = rss_kib();
    let input = pre_tool_use(&session, &project.join("README.md"), "toolu_plugins");
    let mut errors = 0;
    let mut first_error = None;
    let mut note = |r: &Result<Duration, String>| {
        if let Err(e) = r {
            errors += 1;
            first_error.get_or_insert_with(|| e.clone());
        }
    };
    let first = Instant::now();
    let r = dispatch_checked(&session, &input, false, n).await;
    note(&r);
    let first_dispatch_secs = first.elapsed().as_secs_f64();
    let mut warm = Vec::new();
    for _ in 0..5 {
        let r = dispatch_checked(&session, &input, false, n).await;
        note(&r);
        if let Ok(d) = r {
            warm.push(d);
        }
    }
    warm.sort();
    let warm_dispatch_micros = warm
        .get(warm.len() / 2)
        .map_or(0.0, |d| d.as_secs_f64() * 1e6);
    // Idle: nothing running, the session and its loaded components kept.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_idle = rss_kib();
    drop(session);
    Ok(PluginsReport {
        count: n,
        install_secs,
        rss_before,
        rss_loaded,
        first_dispatch_secs,
        warm_dispatch_micros,
        rss_idle,
        errors,
        first_error,
        pooling,
        slots,
    })
}

/// The dispatch parts' session and inputs.
struct Bench {
    session: Arc<Session>,
    /// Read `.env` (denied) and Read `README.md` (no decision), alternately.
    inputs: [Value; 2],
}

/// What one part measured.
struct Run {
    name: String,
    path: &'static str,
    /// Calls in flight at once (tasks for the direct parts).
    concurrency: usize,
    rounds: usize,
    /// RSS growth the flatness verdict is taken on (see `flat_rule`).
    growth: Option<f64>,
    flat_rule: &'static str,
    /// Mean time per dispatch by stage (the soak only).
    split: Option<Split>,
    calls: usize,
    /// The calls the rate and latencies count (the soak leaves its warm-up out).
    timed: usize,
    errors: usize,
    first_error: Option<String>,
    secs: f64,
    latencies: Latencies,
    queued: u64,
    busy: u64,
    peak_in_use: usize,
    rss: RssTrack,
}

struct Latencies {
    mean: f64,
    p50: f64,
    p99: f64,
    max: f64,
}

impl Latencies {
    /// From nanoseconds; sorts them.
    fn of(ns: &mut [u32]) -> Latencies {
        ns.sort_unstable();
        let at = |q: f64| -> f64 {
            if ns.is_empty() {
                return 0.0;
            }
            let i = ((ns.len() as f64 - 1.0) * q).round() as usize;
            f64::from(ns[i.min(ns.len() - 1)]) / 1000.0
        };
        let sum: u64 = ns.iter().map(|&n| u64::from(n)).sum();
        Latencies {
            mean: if ns.is_empty() {
                0.0
            } else {
                sum as f64 / ns.len() as f64 / 1000.0
            },
            p50: at(0.50),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

/// RSS after warm-up, then samples, in KiB.
#[derive(Default)]
struct RssTrack {
    start: Option<u64>,
    samples: Vec<u64>,
    end: Option<u64>,
}

impl RssTrack {
    fn new() -> Self {
        RssTrack {
            start: rss_kib(),
            ..RssTrack::default()
        }
    }

    fn sample(&mut self) {
        if let Some(r) = rss_kib() {
            self.samples.push(r);
        }
    }

    fn finish(&mut self) {
        self.end = rss_kib();
        if let Some(e) = self.end {
            self.samples.push(e);
        }
    }

    fn peak(&self) -> Option<u64> {
        self.samples.iter().copied().chain(self.start).max()
    }

    /// How far the largest later sample is above the start, as a fraction of the start.
    fn growth(&self) -> Option<f64> {
        let start = self.start? as f64;
        let peak = self.peak()? as f64;
        (start > 0.0).then(|| (peak - start) / start)
    }
}

impl Bench {
    fn new(session: Arc<Session>, project: &Path) -> anyhow::Result<Self> {
        let inputs = [
            pre_tool_use(&session, &project.join(".env"), "toolu_env"),
            pre_tool_use(&session, &project.join("README.md"), "toolu_readme"),
        ];
        Ok(Bench { session, inputs })
    }

    async fn one(&self, i: usize) -> Result<Duration, String> {
        self.split(i).await.map(|t| t.total)
    }

    async fn split(&self, i: usize) -> Result<Split, String> {
        dispatch_timed(&self.session, &self.inputs[i % 2], i.is_multiple_of(2), 1).await
    }

    /// The first dispatch loads the component; the next ones fill the allocator's caches.
    async fn warm_up(self: Arc<Self>, n: usize) -> anyhow::Result<()> {
        let this = self.clone();
        tokio::spawn(async move {
            for i in 0..n {
                this.one(i)
                    .await
                    .map_err(|e| anyhow::anyhow!("warm-up: {e}"))?;
            }
            Ok::<(), anyhow::Error>(())
        })
        .await?
    }

    /// `rounds` bursts of `n` dispatches started at once, one burst after the other.
    async fn concurrent(self: Arc<Self>, n: usize, rounds: usize) -> anyhow::Result<Run> {
        let rt = self.session.runtime()?;
        let before = rt.slot_stats();
        // Written now: a fresh allocation's pages count in RSS only once written, which would
        // show the bench's own record as growth.
        let mut latencies = vec![u32::MAX; n * rounds];
        let mut tasks = Vec::with_capacity(n);
        let mut rss = RssTrack::new();
        let mut round_ends = Vec::with_capacity(rounds);
        let (mut errors, mut first_error) = (0, None);
        let started = Instant::now();
        for round in 0..rounds {
            let done = Arc::new(AtomicUsize::new(0));
            for i in 0..n {
                let (this, done) = (self.clone(), done.clone());
                tasks.push(tokio::spawn(async move {
                    let r = this.one(i).await;
                    done.fetch_add(1, Ordering::Relaxed);
                    r
                }));
            }
            let mut sampled = Instant::now();
            while done.load(Ordering::Relaxed) < n {
                // Polled often, so the burst's time is the dispatches', not this loop's; RSS
                // is sampled every 50 ms as before.
                tokio::time::sleep(Duration::from_millis(2)).await;
                if sampled.elapsed() >= Duration::from_millis(50) {
                    rss.sample();
                    sampled = Instant::now();
                }
            }
            for (i, t) in tasks.drain(..).enumerate() {
                match t.await {
                    Ok(Ok(d)) => latencies[round * n + i] = nanos(d),
                    Ok(Err(e)) => {
                        errors += 1;
                        first_error.get_or_insert(e);
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert(format!("task failed: {e}"));
                    }
                }
            }
            round_ends.push(rss_kib());
            rss.sample();
        }
        let secs = started.elapsed().as_secs_f64();
        rss.finish();
        // A burst holds its tasks while it runs and the allocator keeps what they freed for a
        // while, so the first burst sets the level; later bursts must not raise it.
        let growth = match (round_ends.first(), round_ends.last()) {
            (Some(Some(first)), Some(Some(last))) if *first > 0 => {
                Some((*last as f64 - *first as f64) / *first as f64)
            }
            _ => None,
        };
        let after = rt.slot_stats();
        Ok(Run {
            name: format!("{} concurrent dispatches × {rounds}", group(n)),
            path: "dispatch",
            concurrency: n,
            rounds,
            split: None,
            calls: n * rounds,
            timed: n * rounds,
            errors,
            first_error,
            secs,
            latencies: Latencies::of(&mut latencies),
            queued: after.queued - before.queued,
            busy: after.busy - before.busy,
            peak_in_use: after.peak_in_use,
            growth,
            flat_rule: "RSS after the last burst within 10% of RSS after the first",
            rss,
        })
    }

    async fn sequential(self: Arc<Self>, n: usize) -> anyhow::Result<Run> {
        let rt = self.session.runtime()?;
        let this = self.clone();
        tokio::spawn(async move {
            // Written now (a zeroed allocation would be touched only as the run fills it, and
            // show as growth).
            let mut ns = vec![u32::MAX; n];
            let warm = (n / 100).clamp(1_000.min(n), 10_000);
            let every = (n / 20).max(1);
            let before = rt.slot_stats();
            let (mut errors, mut first_error) = (0, None);
            let mut rss = RssTrack::default();
            let mut started = Instant::now();
            let mut timed_from = 0;
            let mut sums = Split::default();
            for (i, slot) in ns.iter_mut().enumerate() {
                if i == warm.min(n - 1) {
                    // Rate and RSS count from the end of the warm-up.
                    rss = RssTrack::new();
                    started = Instant::now();
                    timed_from = i;
                    sums = Split::default();
                } else if i > warm && (i - warm).is_multiple_of(every) {
                    rss.sample();
                }
                match this.split(i).await {
                    Ok(t) => {
                        *slot = nanos(t.total);
                        if i >= timed_from {
                            sums.options += t.options;
                            sums.handlers += t.handlers;
                            sums.total += t.total;
                        }
                    }
                    Err(e) => {
                        *slot = u32::MAX;
                        errors += 1;
                        first_error.get_or_insert(e);
                    }
                }
            }
            let secs = started.elapsed().as_secs_f64();
            rss.finish();
            let after = rt.slot_stats();
            let timed = (n - timed_from).max(1) as u32;
            let growth = rss.growth();
            Ok(Run {
                name: format!("{} sequential dispatches", group(n)),
                path: "dispatch",
                concurrency: 1,
                rounds: 1,
                growth,
                flat_rule: "every RSS sample after warm-up within 10% of the first",
                split: Some(Split {
                    total: sums.total / timed,
                    options: sums.options / timed,
                    handlers: sums.handlers / timed,
                }),
                calls: n,
                timed: n - timed_from,
                errors,
                first_error,
                secs,
                latencies: Latencies::of(&mut ns[timed_from..]),
                queued: after.queued - before.queued,
                busy: after.busy - before.busy,
                peak_in_use: after.peak_in_use,
                rss,
            })
        })
        .await?
    }

    /// `Runtime::call_hook` alone, on the component the session's runner uses, with the same
    /// limits and policy, on `tasks` tasks at once.
    async fn direct(self: Arc<Self>, n: usize, tasks: usize) -> anyhow::Result<Run> {
        let session = &self.session;
        let plugin = session
            .plugins
            .first()
            .context("the bench session has no plugin")?;
        let path = plugin.plugin.root.join("wasm/guard.wasm");
        let grant = session.component_grant(&plugin.id, "guard");
        let digest = session.component_digest(&plugin.id, "guard");
        let pin = digest.as_deref().map_or(DigestPin::None, DigestPin::Sha256);
        let cache = session.components()?;
        let component = cache.file(&path, World::Hook, &grant, pin)?;
        let rt = cache.runtime().clone();
        let limits = Limits::with_deadline(Duration::from_secs(5));
        let inputs: Arc<[String; 2]> = Arc::new(self.inputs.clone().map(|v| v.to_string()));
        let before = rt.slot_stats();
        // Written before RSS is first read, as in the soak.
        let records: Vec<Vec<u32>> = (0..tasks)
            .map(|t| vec![u32::MAX; n / tasks + usize::from(t < n % tasks)])
            .collect();
        let mut ns = Vec::with_capacity(n);
        let mut rss = RssTrack::new();
        let started = Instant::now();
        let mut handles = Vec::with_capacity(tasks);
        for mut record in records {
            let share = record.len();
            let (rt, component, inputs, grant) =
                (rt.clone(), component.clone(), inputs.clone(), grant.clone());
            let session = session.clone();
            handles.push(tokio::spawn(async move {
                let policy = session.guest_policy(false);
                let (mut errors, mut first_error) = (0, None);
                for i in 0..share {
                    let ctx = session.call_context(&session.cwd, &grant, policy.clone());
                    let call_started = Instant::now();
                    let r = rt
                        .call_hook(&component, "PreToolUse", &inputs[i % 2], &limits, ctx)
                        .await;
                    let took = call_started.elapsed();
                    let deny = i.is_multiple_of(2);
                    match r {
                        Ok(c)
                            if (c.result.decision == warden::hook_result::Decision::Deny)
                                == deny =>
                        {
                            record[i] = nanos(took)
                        }
                        Ok(c) => {
                            errors += 1;
                            first_error.get_or_insert(format!("decision {:?}", c.result.decision));
                        }
                        Err(e) => {
                            errors += 1;
                            first_error.get_or_insert(e.to_string());
                        }
                    }
                }
                (record, errors, first_error)
            }));
        }
        let (mut errors, mut first_error) = (0, None);
        for h in handles {
            let (part, e, first) = h.await?;
            ns.extend(part);
            errors += e;
            if let Some(f) = first {
                first_error.get_or_insert(f);
            }
        }
        let secs = started.elapsed().as_secs_f64();
        rss.finish();
        let after = rt.slot_stats();
        let growth = rss.growth();
        Ok(Run {
            concurrency: tasks,
            rounds: 1,
            growth,
            flat_rule: "RSS at the end within 10% of the start",
            name: if tasks == 1 {
                format!("{} call_hook, one task", group(n))
            } else {
                format!("{} call_hook, {tasks} tasks", group(n))
            },
            path: "runtime",
            split: None,
            calls: n,
            timed: n,
            errors,
            first_error,
            secs,
            latencies: Latencies::of(&mut ns),
            queued: after.queued - before.queued,
            busy: after.busy - before.busy,
            peak_in_use: after.peak_in_use,
            rss,
        })
    }
}

fn nanos(d: Duration) -> u32 {
    u32::try_from(d.as_nanos()).unwrap_or(u32::MAX)
}

/// This process's resident set size in KiB (`VmRSS` in `/proc/self/status`; Linux only).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

fn mib_value(kib: Option<u64>) -> Value {
    kib.map_or(Value::Null, |k| {
        json!((k as f64 / 1024.0 * 10.0).round() / 10.0)
    })
}

/// 1000000 as 1,000,000.
fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

struct Report {
    cores: usize,
    threads: usize,
    pool: u32,
    component_bytes: usize,
    rss_at_start: Option<u64>,
    plugins: Option<PluginsReport>,
    runs: Vec<Run>,
}

/// The goal for sandboxed hook calls per second on this class of machine.
const CALLS_GOAL: f64 = 50_000.0;
/// The goal for a process with 100 plugins installed, idle.
const IDLE_GOAL_MIB: f64 = 150.0;

impl Run {
    fn rate(&self) -> f64 {
        if self.secs > 0.0 {
            self.timed as f64 / self.secs
        } else {
            0.0
        }
    }

    fn flat(&self) -> Option<bool> {
        self.growth.map(|g| g <= FLAT_WITHIN)
    }

    fn to_json(&self) -> Value {
        json!({
            "part": self.name,
            "path": self.path,
            "concurrency": self.concurrency,
            "rounds": self.rounds,
            "calls": self.calls,
            "timedCalls": self.timed,
            "errors": self.errors,
            "firstError": self.first_error,
            "secs": (self.secs * 1000.0).round() / 1000.0,
            "callsPerSec": self.rate().round(),
            "meanUs": round1(self.latencies.mean),
            "p50Us": round1(self.latencies.p50),
            "p99Us": round1(self.latencies.p99),
            "maxUs": round1(self.latencies.max),
            "queued": self.queued,
            "busy": self.busy,
            "peakSlotsInUse": self.peak_in_use,
            "meanSplitUs": self.split.map(|t| json!({
                "dispatchOptions": round1(t.options.as_secs_f64() * 1e6),
                "handler": round1(t.handlers.as_secs_f64() * 1e6),
                "dispatcher": round1(t.total.saturating_sub(t.options + t.handlers).as_secs_f64() * 1e6),
                "total": round1(t.total.as_secs_f64() * 1e6),
            })),
            "rss": {
                "startMib": mib_value(self.rss.start),
                "endMib": mib_value(self.rss.end),
                "peakMib": mib_value(self.rss.peak()),
                "samplesMib": self.rss.samples.iter().map(|k| mib_value(Some(*k))).collect::<Vec<_>>(),
                "growthPct": self.growth.map(|g| round1(g * 100.0)),
                "flatWithin10Pct": self.flat(),
                "flatRule": self.flat_rule,
            },
        })
    }
}

impl Report {
    fn find(&self, path: &str, multi: bool) -> Option<&Run> {
        self.runs.iter().find(|r| {
            r.path == path
                && match path {
                    "dispatch" => r.name.contains("concurrent") == multi,
                    _ => r.name.contains("one task") != multi,
                }
        })
    }

    /// The best hook calls per second over all cores, through the dispatcher and alone.
    fn best_rates(&self) -> (Option<f64>, Option<f64>) {
        let dispatch = self
            .runs
            .iter()
            .filter(|r| r.path == "dispatch")
            .map(Run::rate)
            .reduce(f64::max);
        let direct = self
            .runs
            .iter()
            .filter(|r| r.path == "runtime")
            .map(Run::rate)
            .reduce(f64::max);
        (dispatch, direct)
    }

    /// One call at a time, mean µs: (the whole dispatch, its split, `call_hook` alone).
    fn dispatch_split(&self) -> Option<(Split, f64)> {
        let d = self.find("dispatch", false)?;
        let r = self.find("runtime", false)?;
        Some((d.split?, r.latencies.mean))
    }

    fn to_json(&self) -> Value {
        let (dispatch_rate, direct_rate) = self.best_rates();
        json!({
            "hook": {
                "component": HOOK_NAME,
                "bytes": self.component_bytes,
                "event": "PreToolUse",
                "tool": "Read",
            },
            "dispatchPath": "Session::dispatch_options + warden_hooks::dispatch per call (Session::call_tool's PreToolUse step), WASM handler through session::WasmRunner",
            "machine": {"cores": self.cores, "workerThreads": self.threads},
            "runtime": {"pooling": true, "slots": self.pool},
            "rssAtStartMib": mib_value(self.rss_at_start),
            "plugins": self.plugins.as_ref().map(|p| json!({
                "count": p.count,
                "installSecs": (p.install_secs * 100.0).round() / 100.0,
                "rssBeforeMib": mib_value(p.rss_before),
                "rssSessionLoadedMib": mib_value(p.rss_loaded),
                "firstDispatchSecs": (p.first_dispatch_secs * 100.0).round() / 100.0,
                "warmDispatchUs": round1(p.warm_dispatch_micros),
                "rssIdleMib": mib_value(p.rss_idle),
                "goalMib": IDLE_GOAL_MIB,
                "withinGoal": p.rss_idle.map(|k| (k as f64 / 1024.0) <= IDLE_GOAL_MIB),
                "errors": p.errors,
                "firstError": p.first_error,
                "runtime": {"pooling": p.pooling, "slots": p.slots},
            })),
            "runs": self.runs.iter().map(Run::to_json).collect::<Vec<_>>(),
            "hookCallsPerSec": {
                "dispatch": dispatch_rate.map(f64::round),
                "callHookAlone": direct_rate.map(f64::round),
                "goal": CALLS_GOAL,
            },
            "errors": self.runs.iter().map(|r| r.errors).sum::<usize>()
                + self.plugins.as_ref().map_or(0, |p| p.errors),
            "queued": self.runs.iter().map(|r| r.queued).sum::<u64>(),
            "busy": self.runs.iter().map(|r| r.busy).sum::<u64>(),
        })
    }

    fn print(&self) {
        println!(
            "PreToolUse (Read) through a session's dispatch path: Session::dispatch_options + \
             warden_hooks::dispatch per call,\nas in Session::call_tool; WASM hook: {HOOK_NAME}, \
             {:.1} KiB. {} cores, {} worker threads, sandbox slots: {} (pooling allocator).\n",
            self.component_bytes as f64 / 1024.0,
            self.cores,
            self.threads,
            self.pool
        );
        if let Some(p) = &self.plugins {
            println!(
                "{} plugins installed in {:.1} s; RSS {} before loading, {} with the session loaded, \
                 {} idle after a PreToolUse\nthrough all {} hooks (first {:.2} s, compiling each; \
                 then {:.1} ms) — goal ≤ {IDLE_GOAL_MIB:.0} MiB: {}{}\n",
                p.count,
                p.install_secs,
                mib(p.rss_before),
                mib(p.rss_loaded),
                mib(p.rss_idle),
                p.count,
                p.first_dispatch_secs,
                p.warm_dispatch_micros / 1000.0,
                match p.rss_idle {
                    Some(k) if k as f64 / 1024.0 <= IDLE_GOAL_MIB => "met",
                    Some(_) => "NOT met",
                    None => "n/a",
                },
                match (&p.first_error, p.errors) {
                    (Some(e), n) => format!("; {n} errors, first: {e}"),
                    _ => String::new(),
                }
            );
        }
        if !self.runs.is_empty() {
            println!(
                "{:<34} {:>7} {:>7} {:>5} {:>5} {:>10} {:>9} {:>9}  {:<27} {:>5}",
                "part",
                "errors",
                "queued",
                "busy",
                "peak",
                "calls/s",
                "p50",
                "p99",
                "RSS start → end (peak)",
                "flat"
            );
            for r in &self.runs {
                println!(
                    "{:<34} {:>7} {:>7} {:>5} {:>5} {:>10} {:>9} {:>9}  {:<27} {:>5}",
                    r.name,
                    r.errors,
                    r.queued,
                    r.busy,
                    r.peak_in_use,
                    group(r.rate().round() as usize),
                    format!("{:.1} µs", r.latencies.p50),
                    format!("{:.1} µs", r.latencies.p99),
                    format!(
                        "{} → {} ({})",
                        mib(r.rss.start).trim_end_matches(" MiB"),
                        mib(r.rss.end),
                        mib(r.rss.peak()).trim_end_matches(" MiB")
                    ),
                    match r.flat() {
                        Some(true) => "yes",
                        Some(false) => "NO",
                        None => "n/a",
                    }
                );
                if let Some(e) = &r.first_error {
                    println!("    first error: {e}");
                }
            }
            println!(
                "\npeak: the most sandbox slots in use at once; queued: calls that found every slot \
                 in use and waited for one;\nbusy: calls that gave up waiting (none may). flat: RSS \
                 within 10% of its value after warm-up (bursts: after the last burst,\nof its value \
                 after the first)."
            );
        }
        let (dispatch_rate, direct_rate) = self.best_rates();
        if dispatch_rate.is_some() || direct_rate.is_some() {
            let show = |r: Option<f64>| r.map_or("n/a".into(), |r| group(r.round() as usize));
            let verdict = |r: Option<f64>| match r {
                Some(r) if r >= CALLS_GOAL => "met",
                Some(_) => "not met",
                None => "not run",
            };
            println!(
                "\nsandboxed hook calls/s (best part): {} through the dispatcher (goal ≥ {}: {}), \
                 {} by call_hook alone ({})",
                show(dispatch_rate),
                group(CALLS_GOAL as usize),
                verdict(dispatch_rate),
                show(direct_rate),
                verdict(direct_rate),
            );
            if let Some((split, sandbox)) = self.dispatch_split() {
                let us = |d: Duration| d.as_secs_f64() * 1e6;
                let dispatcher = split.total.saturating_sub(split.options + split.handlers);
                println!(
                    "where a sequential dispatch's time goes (means): {:.1} µs in all; {:.1} µs \
                     Session::dispatch_options (a WasmRunner\nper call, as Session::call_tool \
                     builds it); {:.1} µs in the WASM handler, of which call_hook alone \
                     (store, instantiate, call,\nteardown) takes about {sandbox:.1} µs; {:.1} µs \
                     in the dispatcher (handler selection, input JSON, classification, merge)",
                    us(split.total),
                    us(split.options),
                    us(split.handlers),
                    us(dispatcher),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_section_keeps_a_component_loadable() {
        let wasm = with_custom_section(warden::guests::PROTECT_SECRETS_WASM, "x", b"guard-0001");
        assert!(wasm.len() > warden::guests::PROTECT_SECRETS_WASM.len());
        let parsed = wasmparser::Parser::new(0)
            .parse_all(&wasm)
            .collect::<Result<Vec<_>, _>>();
        assert!(parsed.is_ok(), "{parsed:?}");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1_000), "1,000");
        assert_eq!(group(1_000_000), "1,000,000");
    }
}
