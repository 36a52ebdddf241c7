//! `warden skill show NAME [ARGS…]` and `warden skill list`.
//!
//! `show` prints a skill or command as the model would receive it when invoked as
//! `/NAME ARGS…` in a session started in DIR: argument and `${CLAUDE_*}` substitutions applied,
//! `!` commands run after the permission rules allow them (the skill's `allowed-tools` count as
//! allow rules; a deny or ask aborts the render and nothing runs). `list` prints every skill and
//! command by invocation name.
//!
//! Exit codes: 0 rendered; 1 an injected command failed or was refused; 2 unusable input (no
//! such directory, no such skill, an ambiguous name).

use std::process::ExitCode;

use warden::instructions::{self, SkillError, SkillRenderOptions};
use warden::session::Session;

use super::SessionArgs;
use warden_instructions::{RenderError, SkillKind, SkillSource};

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden skill list                          every skill and command by invocation name
  warden skill show review src/main.rs       render `/review src/main.rs`
  warden skill show plugin:deploy --no-exec  leave its `!` commands unrun")]
pub struct Args {
    #[command(subcommand)]
    command: Verb,
}

#[derive(clap::Subcommand)]
enum Verb {
    /// Render a skill or command with its arguments, running its `!` commands through the
    /// permission rules.
    Show(ShowArgs),
    /// List every skill and command by invocation name.
    List(ListArgs),
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden skill show review src/main.rs       render `/review src/main.rs`
  warden skill show plugin:deploy --no-exec  leave its `!` commands unrun
  warden skill show fix --json -- -v         arguments starting with `-` after `--`")]
struct ShowArgs {
    /// The skill or command (`name`, `plugin:name`, or a plugin skill's unique bare name).
    name: String,
    /// Its arguments, as typed after `/NAME` (put `--` before arguments starting with `-`).
    args: Vec<String>,
    #[command(flatten)]
    session: SessionArgs,
    /// Leave `!` commands as written instead of running them.
    #[arg(long)]
    no_exec: bool,
    /// Value of `${CLAUDE_SESSION_ID}` (default: a fresh id).
    #[arg(long)]
    session_id: Option<String>,
    /// Value of `${CLAUDE_EFFORT}`.
    #[arg(long)]
    effort: Option<String>,
    /// Print `{"name", "content", "allowedTools", …}` as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ListArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Verb::Show(a) => show(a),
        Verb::List(a) => list(a),
    }
}

fn unusable(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    eprintln!("warden skill: {msg}");
    Ok(ExitCode::from(2))
}

/// Loads the session, or `None` after reporting an unusable directory.
fn session(a: &SessionArgs) -> anyhow::Result<Option<Session>> {
    match a.options(None)? {
        Ok(opts) => Ok(Some(Session::load(&opts))),
        Err(e) => {
            eprintln!("warden skill: {}", e.0);
            Ok(None)
        }
    }
}

/// Joins arguments into the string a user would have typed, quoting those that would not
/// survive word splitting so `$0`, `$1`… see the same words.
fn join_args(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && !a
                    .chars()
                    .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'));
            if plain {
                a.clone()
            } else {
                format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\""))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let Some(session) = session(&a.session)? else {
        return Ok(ExitCode::from(2));
    };
    let session = std::sync::Arc::new(session);
    let ctx = instructions::load_context(&session, &[]);
    let opts = SkillRenderOptions {
        session_id: Some(a.session_id.unwrap_or_else(instructions::new_session_id)),
        effort: a.effort,
        no_exec: a.no_exec,
    };
    match instructions::render_skill(&session, &ctx, &a.name, &join_args(&a.args), &opts) {
        Ok(r) => {
            if a.json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!("{}", r.content.trim_end());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(SkillError::Render(e @ (RenderError::NotFound(_) | RenderError::Ambiguous { .. }))) => {
            unusable(e)
        }
        Err(e) => {
            eprintln!("warden skill: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn list(a: ListArgs) -> anyhow::Result<ExitCode> {
    let Some(session) = session(&a.session)? else {
        return Ok(ExitCode::from(2));
    };
    let ctx = instructions::load_context(&session, &[]);
    let all: Vec<_> = ctx.skills.iter().chain(ctx.commands.iter()).collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    for s in all {
        let kind = match s.kind {
            SkillKind::Skill => "skill",
            SkillKind::Command => "command",
        };
        let source = match &s.source {
            SkillSource::Plugin(p) => format!("plugin {p}"),
            SkillSource::Project => "project".into(),
            SkillSource::User => "user".into(),
            SkillSource::Managed => "managed".into(),
        };
        let hint = s
            .argument_hint
            .as_deref()
            .map(|h| format!(" {h}"))
            .unwrap_or_default();
        println!("/{}{hint}  [{kind}, {source}]  {}", s.name, s.description);
    }
    for w in &ctx.warnings {
        eprintln!("{w}");
    }
    Ok(ExitCode::SUCCESS)
}
