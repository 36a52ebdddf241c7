//! One module per subcommand; this file only parses and dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check;
mod context;
mod demo;
mod hook;
mod hook_wasm;
mod plugin;
mod skill;
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
    /// Decide one tool call as a session in a directory would (hooks, then rules).
    Check(check::Args),
    /// Show Warden at work on a few sample events, installing nothing.
    Demo(demo::Args),
    /// Run a built-in tool (Read, Write, Edit, Glob, Grep, Bash) as a sandboxed component,
    /// with the permission rules enforced where it touches files, programs and the network.
    Tool(tool::Args),
    /// Install, update and manage plugins and marketplaces (mirrors `claude plugin`).
    Plugin(plugin::Args),
    /// Show what a session in a directory would load: memory files and why, rules, the skill
    /// listing, agents, commands and every warning.
    Context(context::Args),
    /// Render a skill as invoked (`show`, running its `!` commands through the permission
    /// rules) or list them (`list`).
    Skill(skill::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::HookWasm(a) => hook_wasm::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Check(a) => check::run(a),
        Command::Tool(a) => tool::run(a),
        Command::Hook(a) => hook::run(a),
        Command::Plugin(a) => plugin::run(a),
        Command::Context(a) => context::run(a),
        Command::Skill(a) => skill::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("warden: {e:#}");
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

/// `--plugin-dir` values made absolute against the directory `warden` was started in, as a
/// shell user expects; the session's own directory (a hook input's `cwd`, `--cwd`) may differ.
pub(crate) fn plugin_dirs(dirs: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    dirs.iter()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
        .collect()
}

/// The compile cache directory under `$WARDEN_HOME`, if a home can be found.
pub(crate) fn cache_dir() -> Option<std::path::PathBuf> {
    warden_config::Home::from_env().ok().map(|h| h.cache_dir())
}
