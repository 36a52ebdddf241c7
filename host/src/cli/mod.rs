//! One module per subcommand; this file only parses and dispatches.

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

mod bench;
mod build;
mod check;
mod context;
mod demo;
mod hook;
mod hook_wasm;
mod key;
mod lsp;
mod mcp;
mod new;
mod plugin;
mod progress;
mod run;
mod serve;
mod skill;
mod style;
mod tool;

/// Warden hosts agent plugins as sandboxed WebAssembly components.
#[derive(Parser)]
#[command(name = "warden", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a WASM hook component on one event read from stdin (Claude Code hook JSON in,
    /// Claude Code hook JSON out; exit 2 for a block).
    HookWasm(hook_wasm::Args),
    /// Run the hooks configured for one event (Claude Code hook JSON on stdin and stdout).
    Hook(hook::Args),
    /// Answer hook events over local HTTP, as Claude Code's `http` hooks send them: the
    /// bridge without a process per event.
    Serve(serve::Args),
    /// Decide one tool call as a session in a directory would (hooks, then rules).
    Check(check::Args),
    /// Show Warden at work: a scripted session in a scratch home and project, no network.
    Demo(demo::Args),
    /// Run an agent conversation in a project: a scripted model (`--script`) or a real one
    /// (`-p` with ANTHROPIC_API_KEY, or an OpenAI-compatible server).
    Run(run::Args),
    /// Run a built-in tool (Read, Write, Edit, Glob, Grep, Bash) as a sandboxed component,
    /// with the permission rules enforced where it touches files, programs and the network.
    Tool(tool::Args),
    /// Install, update and manage plugins and marketplaces (mirrors `claude plugin`).
    Plugin(plugin::Args),
    /// Make signing keys for published plugins, and trust publishers' public keys.
    Key(key::Args),
    /// Show what a session in a directory would load: memory files and why, rules, the skill
    /// listing, agents, commands, what it read of Claude Code's user configuration, and every
    /// warning.
    Context(context::Args),
    /// Warden's MCP client and server: `serve` its WASM tools to any MCP client; `list`,
    /// `tools` and `call` the MCP servers a session is configured with.
    Mcp(mcp::Args),
    /// The plugins' language servers: `list` them, or print the `diagnostics` they publish
    /// for files.
    Lsp(lsp::Args),
    /// Render a skill as invoked (`show`, running its `!` commands through the permission
    /// rules) or list them (`list`).
    Skill(skill::Args),
    /// Build a plugin's WASM components from source (Rust, Python, JavaScript, C), with each
    /// language's toolchain.
    Build(build::Args),
    /// Create a plugin with one hook or tool component in Rust, Python, JavaScript or C,
    /// ready for `warden build`.
    New(new::Args),
    /// Measure sandboxed PreToolUse hooks under load on this machine: a burst of concurrent
    /// dispatches, a long sequential soak, calls per second, latency, and RSS over time and
    /// with many plugins installed.
    Bench(bench::Args),
    /// Print a shell completion script: `warden completions bash > ~/.local/share/bash-completion/completions/warden`.
    Completions(CompletionsArgs),
}

/// Arguments of `warden completions`.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden completions bash > ~/.local/share/bash-completion/completions/warden
  warden completions zsh > ~/.zfunc/_warden        (with `fpath+=~/.zfunc` before compinit)
  warden completions fish > ~/.config/fish/completions/warden.fish")]
struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

fn completions(a: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "warden", &mut out);
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(&out) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::HookWasm(a) => hook_wasm::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Run(a) => run::run(a),
        Command::Check(a) => check::run(a),
        Command::Tool(a) => tool::run(a),
        Command::Hook(a) => hook::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Plugin(a) => plugin::run(a),
        Command::Key(a) => key::run(a),
        Command::Context(a) => context::run(a),
        Command::Skill(a) => skill::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Lsp(a) => lsp::run(a),
        Command::Build(a) => build::run(a),
        Command::New(a) => new::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Completions(a) => completions(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            style::eprintln!("{}: {e:#}", style::error("warden"));
            ExitCode::from(1)
        }
    }
}

/// A single-threaded tokio runtime for a one-shot command.
pub(crate) fn block_on<F: std::future::Future>(fut: F) -> anyhow::Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(rt.block_on(fut))
}

/// A multi-threaded tokio runtime, for commands that run hooks in parallel.
pub(crate) fn block_on_multi<F: std::future::Future>(fut: F) -> anyhow::Result<F::Output> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok(rt.block_on(fut))
}

/// The arguments every command that acts as a session shares (`hook`, `check`, `tool`,
/// `context`, `skill`), flattened into each.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct SessionArgs {
    /// The session's directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Extra settings: a file path or inline JSON, above project and user settings
    /// (repeatable), like Claude Code's `--settings`.
    #[arg(long = "settings", value_name = "FILE|JSON")]
    pub settings: Vec<String>,
    /// Load a plugin directory for this run only (repeatable); its components get no
    /// capabilities.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<std::path::PathBuf>,
    /// Permission mode: default, acceptEdits, plan, dontAsk or bypassPermissions (default:
    /// the settings' `defaultMode`).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
}

/// Unusable command-line input: the message for stderr (the command exits 2).
#[derive(Debug)]
pub(crate) struct Unusable(pub String);

impl SessionArgs {
    /// Session options for these arguments. `fallback_cwd` is used when `--cwd` is absent
    /// (`warden hook` takes the event's `cwd`), then the current directory.
    pub fn options(
        &self,
        fallback_cwd: Option<std::path::PathBuf>,
    ) -> anyhow::Result<Result<warden::session::SessionOptions, Unusable>> {
        let cwd = match (&self.cwd, fallback_cwd) {
            (Some(c), _) if c.is_dir() => c.canonicalize()?,
            (Some(c), _) => {
                return Ok(Err(Unusable(format!(
                    "--cwd {} is not a directory",
                    c.display()
                ))));
            }
            (None, Some(c)) => c,
            (None, None) => std::env::current_dir()?,
        };
        let mode = match self.mode.as_deref() {
            None => None,
            Some(m) => match warden_permissions::Mode::parse(m) {
                Some(mode) => Some(mode),
                None => {
                    return Ok(Err(Unusable(format!(
                        "unknown mode `{m}`; use default, acceptEdits, plan, dontAsk or bypassPermissions"
                    ))));
                }
            },
        };
        let home = warden_config::Home::from_env()?;
        let mut opts = warden::session::SessionOptions::new(cwd, home);
        opts.cli_settings = self.settings.clone();
        // Made absolute against the directory `warden` was started in, as a shell user
        // expects; the session's own directory (a hook input's `cwd`, `--cwd`) may differ.
        opts.plugin_dirs = self
            .plugin_dirs
            .iter()
            .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
            .collect();
        opts.mode = mode;
        Ok(Ok(opts))
    }
}

/// The compile cache directory under `$WARDEN_HOME`, if a home can be found.
pub(crate) fn cache_dir() -> Option<std::path::PathBuf> {
    warden_config::Home::from_env().ok().map(|h| h.cache_dir())
}

/// The first non-empty line of `s`, trimmed, cut to `max` characters with `…`.
pub(crate) fn first_line(s: &str, max: usize) -> String {
    warden_vocab::text::truncate_chars(warden_vocab::text::first_line(s), max)
}

/// Prints configuration warnings on stderr for a command that is about something else (`check`,
/// `tool`): every one with `verbose`, else one line with their number, so a script calling the
/// command in a loop is not flooded with the same list each time. Duplicates count once.
pub(crate) fn print_config_warnings(warnings: &[String], verbose: bool) {
    let mut unique: Vec<&String> = Vec::new();
    for w in warnings {
        if !unique.contains(&w) {
            unique.push(w);
        }
    }
    match (unique.len(), verbose) {
        (0, _) => {}
        (_, true) => {
            for w in unique {
                style::warn(w);
            }
        }
        (1, false) => {
            eprintln!("warden: 1 configuration warning; see `warden context` (or pass --verbose)")
        }
        (n, false) => eprintln!(
            "warden: {n} configuration warnings; see `warden context` (or pass --verbose)"
        ),
    }
}
