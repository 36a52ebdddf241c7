//! `warden lsp`: the language servers of a session's plugins (see [`warden::lsp`]).
//!
//! * `list [--json]`: every server (`plugin:<plugin>:<server>`), its extensions and status.
//! * `diagnostics FILE... [--json]`: starts the server for each file (confined), opens it,
//!   and prints what it publishes as `file:line:col severity message [source]`; exit 1 when
//!   any is an error.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use warden::session::Session;
use warden_lsp::Status;

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden lsp list                     the plugins' language servers and their extensions
  warden lsp diagnostics src/app.py   what the server for .py files reports for it
  warden tool LSP --input '{\"operation\":\"hover\",\"filePath\":\"src/app.py\",\"line\":3,\"character\":5}'

Exit status of `diagnostics`: 0 no errors, 1 some error reported (or a file no server could
check), 2 unusable arguments.")]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// List the configured language servers, their extensions and status.
    List(ListArgs),
    /// Print the diagnostics the language servers publish for files.
    Diagnostics(DiagnosticsArgs),
}

#[derive(clap::Args)]
struct ListArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct DiagnosticsArgs {
    /// Files to check (relative to the session's directory, or absolute).
    #[arg(required = true)]
    files: Vec<String>,
    #[command(flatten)]
    session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `warden lsp`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::List(a) => list(a),
        Command::Diagnostics(a) => diagnostics(a),
    }
}

fn open(args: &SessionArgs) -> anyhow::Result<Result<Arc<Session>, ExitCode>> {
    let opts = match args.options(None)? {
        Ok(o) => o,
        Err(e) => {
            eprintln!("warden lsp: {}", e.0);
            return Ok(Err(ExitCode::from(2)));
        }
    };
    let session = Session::load(&opts);
    for p in session.load_problems() {
        eprintln!("warden lsp: {p}");
    }
    Ok(Ok(Arc::new(session)))
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let session = match open(&args.session)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let rows = rows(&session);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if rows.is_empty() {
        println!("No language servers configured (plugins declare them in .lsp.json).");
    } else {
        for r in &rows {
            print!("{}", row_text(r));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every configured server as `{id, command, extensions: [{extension, language}], status,
/// error}`; listing starts none.
pub(super) fn rows(session: &Session) -> Vec<Value> {
    session
        .lsp()
        .list()
        .into_iter()
        .map(|(spec, status)| {
            let (extensions, command) = match &spec.config {
                Ok(c) => (
                    c.extension_to_language
                        .iter()
                        .map(|(e, l)| json!({"extension": e, "language": l}))
                        .collect::<Vec<_>>(),
                    Some(c.command.clone()),
                ),
                Err(_) => (Vec::new(), None),
            };
            let error = match &status {
                Status::Invalid(e) | Status::Stopped(e) => Some(e.clone()),
                _ => None,
            };
            json!({
                "id": spec.id,
                "command": command,
                "extensions": extensions,
                "status": status.label(),
                "error": error,
            })
        })
        .collect()
}

/// The extensions of a row of [`rows`], as `.py (python), .pyi (python)`.
pub(super) fn extensions_text(row: &Value) -> String {
    row["extensions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} ({})",
                e["extension"].as_str().unwrap_or(""),
                e["language"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn row_text(r: &Value) -> String {
    let mut out = format!(
        "{}: {}\n",
        r["id"].as_str().unwrap_or(""),
        r["status"].as_str().unwrap_or("")
    );
    let exts = extensions_text(r);
    if !exts.is_empty() {
        out.push_str(&format!("  extensions: {exts}\n"));
    }
    if let Some(c) = r["command"].as_str() {
        out.push_str(&format!("  command: {c}\n"));
    }
    if let Some(e) = r["error"].as_str() {
        out.push_str(&format!("  error: {e}\n"));
    }
    out
}

fn diagnostics(args: DiagnosticsArgs) -> anyhow::Result<ExitCode> {
    let session = match open(&args.session)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let lsp = session.lsp();
    if lsp.is_empty() {
        eprintln!("warden lsp: no language servers configured (plugins declare them in .lsp.json)");
        return Ok(ExitCode::from(1));
    }
    let (rows, failed) = super::block_on_multi(async {
        let mut rows: Vec<Value> = Vec::new();
        let mut failed = false;
        for f in &args.files {
            let path = warden::lsp::absolute(&session, f);
            let shown = warden::lsp::display(&session, &path);
            match lsp
                .diagnostics(
                    &path,
                    false,
                    warden::lsp::CLI_DIAGNOSTICS_WAIT,
                    warden::lsp::SETTLE,
                )
                .await
            {
                Ok(Some((opened, diags))) => {
                    for d in diags {
                        rows.push(json!({
                            "file": shown,
                            "line": d.range.start.line + 1,
                            "column": d.range.start.character + 1,
                            "severity": warden_lsp::ops::severity(&d),
                            "message": d.message,
                            "source": d.source,
                            "code": d.code,
                            "server": opened.server,
                        }));
                    }
                }
                Ok(None) => {
                    failed = true;
                    eprintln!("warden lsp: {shown}: no language server is configured for it");
                }
                Err(e) => {
                    failed = true;
                    eprintln!("warden lsp: {shown}: {e}");
                }
            }
        }
        session.close().await;
        (rows, failed)
    })?;
    let errors = rows.iter().any(|r| r["severity"] == "error");
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for r in &rows {
            let mut line = format!(
                "{}:{}:{} {} {}",
                r["file"].as_str().unwrap_or(""),
                r["line"],
                r["column"],
                r["severity"].as_str().unwrap_or(""),
                r["message"].as_str().unwrap_or("").replace('\n', " ")
            );
            if let Some(s) = r["source"].as_str() {
                line.push_str(&format!(" [{s}]"));
            }
            println!("{line}");
        }
    }
    Ok(if errors || failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
