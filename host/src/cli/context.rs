//! `warden context [--cwd DIR] [--touch FILE]... [--json] [--settings FILE]... [--plugin-dir DIR]...`
//!
//! What a session started in DIR would have in context once the touched files were read: memory
//! files in load order with their `InstructionsLoaded` `load_reason`, rules (loaded or waiting for
//! a matching file), the skill listing exactly as given to the model, every skill, command and
//! agent under its (namespaced) name, the MCP servers, the plugins' language servers with the
//! extensions they serve, the plugins' monitors (`monitors`: plugin, name, command, description,
//! when; listing them starts none), the status lines (`statusLines`: `statusLine` and
//! `subagentStatusLine` with their source and command; `statusLine` rendered by running its
//! command confined, its `output` or `error`), every warning, and which files of Claude Code's own user
//! directory were read (or why none were: `claudeConfig` in the JSON). Like a session, it fires
//! the `InstructionsLoaded` hooks once per loaded file (`--no-hooks` skips them). Exit 0; exit 2
//! only for unusable input.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use warden::instructions::{self, HookFiring};
use warden::session::Session;
use warden_instructions::{Context, Diagnostic, Skill, SkillSource};

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden context                             what a session here would load, and why
  warden context --touch src/app.ts          also the memory and rules reading that file loads
  warden context --cwd ~/project --json      another directory, as JSON")]
pub struct Args {
    #[command(flatten)]
    session: super::SessionArgs,
    /// A file read or edited during the session (repeatable; relative to the session's
    /// directory): loads the memory of the directories down to it and the rules it matches.
    #[arg(long = "touch", value_name = "FILE")]
    touch: Vec<PathBuf>,
    /// Print the context as JSON.
    #[arg(long)]
    json: bool,
    /// Do not fire the `InstructionsLoaded` hooks.
    #[arg(long)]
    no_hooks: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = match args.session.options(None)? {
        Ok(o) => o,
        Err(e) => {
            eprintln!("warden context: {}", e.0);
            return Ok(ExitCode::from(2));
        }
    };
    let session = std::sync::Arc::new(Session::load(&opts));
    let mut ctx = instructions::load_context(&session, &args.touch);

    let mut firings = Vec::new();
    if !args.no_hooks {
        let config = session.hook_config();
        // A plugin's hooks file is checked twice, by the plugin loader (its diagnostics are
        // already in the warnings) and by the hooks engine, each in its own words: a file the
        // loader reported on is reported once, in the loader's words.
        let reported: std::collections::HashSet<&std::path::Path> = session
            .plugins
            .iter()
            .flat_map(|p| p.plugin.diagnostics.iter().map(|d| d.file.as_path()))
            .collect();
        for w in &config.warnings {
            let file = w
                .origin
                .trim_end_matches(" (inline hooks)")
                .trim_end_matches(" (warden)");
            if reported.contains(std::path::Path::new(file)) {
                continue;
            }
            ctx.warnings.push(Diagnostic::warning(
                std::path::Path::new(&w.origin),
                &w.message,
            ));
        }
        match session.dispatch_options() {
            Ok(dopts) => {
                let common = instructions::common_fields(&session, &instructions::new_session_id());
                firings = super::block_on_multi(instructions::fire_instructions_loaded(
                    &ctx.memory,
                    &common,
                    config,
                    &dopts,
                ))?;
            }
            Err(e) => ctx.warnings.push(Diagnostic::warning(
                std::path::Path::new("settings"),
                format!("InstructionsLoaded hooks not run: {e}"),
            )),
        }
        for f in &firings {
            for p in &f.problems {
                ctx.warnings.push(Diagnostic::warning(
                    &f.file_path,
                    format!("InstructionsLoaded hook: {p}"),
                ));
            }
        }
    }

    // MCP servers, as configured: listing them starts none.
    let servers: Vec<serde_json::Value> = session
        .mcp()
        .servers()
        .iter()
        .map(|s| super::mcp::describe(&s.entry))
        .collect();
    // Language servers, as configured: listing them starts none.
    let lsp_servers = super::lsp::rows(&session);
    for p in session.mcp().problems() {
        ctx.warnings
            .push(Diagnostic::warning(std::path::Path::new("MCP"), p.clone()));
    }
    // Plugins' monitors and the status lines, as configured; the status line is rendered
    // (its command runs confined, as in a session; see `warden::status_line`).
    let monitors = warden::monitors::configured(&session);
    let (status_lines, status_problems) = warden::status_line::configured(&session);
    for p in status_problems {
        ctx.warnings
            .push(Diagnostic::warning(std::path::Path::new("statusLine"), p));
    }
    let status_rows: Vec<serde_json::Value> = status_lines
        .iter()
        .map(|l| {
            let mut row = serde_json::to_value(l).unwrap_or_default();
            if l.key == "statusLine" {
                let model = std::env::var("ANTHROPIC_MODEL")
                    .ok()
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| warden_model::anthropic::DEFAULT_MODEL.to_string());
                let transcript =
                    warden::agent::Conversation::transcript_dir(session.home.root(), &session.cwd)
                        .join(format!("{}.jsonl", session.session_id));
                let input = warden::status_line::StatusInput::new(
                    &session,
                    &model,
                    &transcript.display().to_string(),
                );
                let (output, error) = match warden::status_line::render(&session, l, &input) {
                    Ok(o) => (serde_json::Value::String(o), serde_json::Value::Null),
                    Err(e) => (serde_json::Value::Null, serde_json::Value::String(e)),
                };
                if let Some(m) = row.as_object_mut() {
                    m.insert("output".into(), output);
                    m.insert("error".into(), error);
                }
            }
            row
        })
        .collect();
    // One problem, one line: the same warning reached through two paths is listed once.
    let mut seen: Vec<Diagnostic> = Vec::new();
    ctx.warnings.retain(|w| {
        let new = !seen.contains(w);
        if new {
            seen.push(w.clone());
        }
        new
    });
    if args.json {
        let mut v = serde_json::to_value(&ctx)?;
        if let Some(m) = v.as_object_mut() {
            m.insert(
                "instructionsLoadedHooks".into(),
                serde_json::to_value(&firings)?,
            );
            m.insert("mcpServers".into(), serde_json::Value::Array(servers));
            let lsp: Vec<serde_json::Value> = lsp_servers
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r["id"],
                        "command": r["command"],
                        "extensions": r["extensions"],
                        "error": r["error"],
                    })
                })
                .collect();
            m.insert("lspServers".into(), serde_json::Value::Array(lsp));
            m.insert("monitors".into(), serde_json::to_value(&monitors)?);
            m.insert(
                "statusLines".into(),
                serde_json::Value::Array(status_rows.clone()),
            );
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let mut out = render(&ctx, &firings);
        let _ = writeln!(out, "\nMCP servers ({}):", servers.len());
        for s in &servers {
            let _ = writeln!(out, "  {}", super::mcp::describe_line(s));
        }
        let _ = writeln!(out, "\nLSP servers ({}):", lsp_servers.len());
        for r in &lsp_servers {
            let id = r["id"].as_str().unwrap_or("");
            match r["error"].as_str() {
                Some(e) => {
                    let _ = writeln!(out, "  {id}: invalid: {e}");
                }
                None => {
                    let _ = writeln!(out, "  {id}: {}", super::lsp::extensions_text(r));
                }
            }
        }
        let _ = writeln!(out, "\nMonitors ({}):", monitors.len());
        for m in &monitors {
            let _ = writeln!(
                out,
                "  {} ({}, {}): {}",
                m.name, m.plugin, m.when, m.command
            );
        }
        let _ = writeln!(out, "\nStatus lines ({}):", status_rows.len());
        for r in &status_rows {
            let _ = writeln!(
                out,
                "  {} from {}: {}",
                r["key"].as_str().unwrap_or(""),
                r["source"].as_str().unwrap_or(""),
                r["command"].as_str().unwrap_or("")
            );
            if let Some(o) = r["output"].as_str() {
                let _ = writeln!(out, "    rendered: {o}");
            } else if let Some(e) = r["error"].as_str() {
                let _ = writeln!(out, "    not rendered: {e}");
            }
        }
        print!("{out}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The text form: the instruction layer's own rendering, then every skill and command by name
/// (including those left out of the listing) and what the hooks did.
fn render(ctx: &Context, firings: &[HookFiring]) -> String {
    let mut out = ctx.render_text();
    let all: Vec<&Skill> = ctx.skills.iter().chain(ctx.commands.iter()).collect();
    let _ = writeln!(out, "\nSkills and commands by name ({}):", all.len());
    for s in all {
        let kind = match s.kind {
            warden_instructions::SkillKind::Skill => "skill",
            warden_instructions::SkillKind::Command => "command",
        };
        let source = match &s.source {
            SkillSource::Plugin(p) => format!("plugin {p}"),
            SkillSource::Project => "project".into(),
            SkillSource::User => "user".into(),
            SkillSource::Managed => "managed".into(),
        };
        let mut notes = String::new();
        if s.disable_model_invocation {
            notes.push_str(", user only");
        }
        if !s.user_invocable {
            notes.push_str(", model only");
        }
        let _ = writeln!(
            out,
            "  /{} [{kind}, {source}{notes}] {}",
            s.name,
            s.path.display()
        );
    }
    if !firings.is_empty() {
        let _ = writeln!(out, "\nInstructionsLoaded hooks:");
        for f in firings {
            let _ = writeln!(
                out,
                "  {} [{}]: {} handler(s){}",
                f.file_path.display(),
                f.load_reason.as_str(),
                f.handlers,
                if f.problems.is_empty() {
                    ""
                } else {
                    ", with problems (see warnings)"
                }
            );
        }
    }
    out
}
