//! `warden build [DIR]`: builds a plugin's components from source (see [`warden::build`]).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use warden::build::{BuildEvent, Built, build_plugin, toolchain_status};

#[derive(Parser)]
#[command(after_help = "Examples:
  warden build                      build every component of the plugin in this directory
  warden build plugins/url-guard    build another plugin
  warden build --component guard    build one component
  warden build --check-tools        show which language toolchains are installed")]
pub struct Args {
    /// The plugin directory (holding `warden.toml`).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Build only this component.
    #[arg(long)]
    component: Option<String>,
    /// Print one JSON object per component built.
    #[arg(long)]
    json: bool,
    /// List the tools each language needs, and whether each is installed; build nothing.
    #[arg(long)]
    check_tools: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.check_tools {
        let mut missing = false;
        for t in toolchain_status(&args.dir) {
            match &t.found {
                Some(p) => println!("{:<7} {:<45} {}", t.lang, t.tool, p.display()),
                None => {
                    missing = true;
                    println!("{:<7} {:<45} missing: {}", t.lang, t.tool, t.install)
                }
            }
        }
        return Ok(if missing {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    refuse_installed_copy(&args.dir)?;
    // A bar on a terminal only: piped output stays plain lines.
    let tty = std::io::stderr().is_terminal() && !args.json;
    let bar = if tty {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    } else {
        ProgressBar::hidden()
    };
    let json = args.json;
    let mut started = Instant::now();
    let mut said = Instant::now();
    let result = build_plugin(
        &args.dir,
        args.component.as_deref(),
        &mut |event| match event {
            BuildEvent::Started {
                target,
                index,
                total,
            } => {
                started = Instant::now();
                said = started;
                bar.set_length(total as u64);
                bar.set_position(index as u64);
                bar.set_message(format!("building {} ({})", target.name, target.spec.lang));
                if !tty && !json {
                    eprintln!("building {} ({})…", target.name, target.spec.lang);
                }
            }
            BuildEvent::Output { target, line } => {
                let line = super::first_line(line, 60);
                bar.set_message(format!(
                    "building {} ({}): {line}",
                    target.name, target.spec.lang
                ));
                // Without a bar, a long build still says where it is, every 15 s at most.
                if !tty && !json && said.elapsed() >= PROGRESS_EVERY {
                    said = Instant::now();
                    eprintln!(
                        "  {} ({:.0} s): {line}",
                        target.name,
                        started.elapsed().as_secs_f64()
                    );
                }
            }
            BuildEvent::Finished(b) => {
                bar.inc(1);
                let line = if json {
                    serde_json::to_string(b).unwrap_or_default()
                } else {
                    format!(
                        "built {} ({}) -> {} ({}, {:.1} s)",
                        b.name,
                        b.lang,
                        b.path.display(),
                        human_bytes(b.bytes),
                        b.elapsed.as_secs_f64()
                    )
                };
                bar.suspend(|| println!("{line}"));
            }
        },
    );
    let built = match result {
        Ok(built) => built,
        Err(e) => {
            bar.finish_and_clear();
            return Err(e.into());
        }
    };
    let named = precompile(&args.dir, &built, &bar, json);
    bar.finish_and_clear();
    Ok(named)
}

/// How often a build without a progress bar prints where it is.
const PROGRESS_EVERY: Duration = Duration::from_secs(15);

/// Compiles each built component into the compile cache (the engine settings every command
/// uses), so the first `warden hook-wasm`, `tool` or session call of it, and of the copy an
/// install makes, maps compiled code instead of compiling: seconds for an interpreter guest.
/// A component that does not compile is only reported: the build stands, and it is refused
/// with the same error when it is used. Then each tool is asked its `describe()` name, which
/// is the name it is offered under (recorded, so a session need not ask): a name MCP does not
/// allow, or one two tools share, fails the build (exit 1) naming the components.
fn precompile(dir: &std::path::Path, built: &[Built], bar: &ProgressBar, json: bool) -> ExitCode {
    let Ok(home) = warden_config::Home::from_env() else {
        return ExitCode::SUCCESS;
    };
    let config = warden::session::SessionOptions::new(dir, home).runtime;
    let runtime = match warden::runtime::Runtime::shared(config) {
        Ok(r) => r,
        Err(e) => {
            if !json {
                bar.suspend(|| eprintln!("warning: cannot compile the components ahead: {e}"));
            }
            return ExitCode::SUCCESS;
        }
    };
    for b in built {
        bar.set_message(format!("compiling {} for its first call", b.name));
        let started = Instant::now();
        match runtime.precompile_file(&b.path) {
            Ok(_) if !json => bar.suspend(|| {
                println!(
                    "compiled {} for its first call ({:.1} s)",
                    b.name,
                    started.elapsed().as_secs_f64()
                )
            }),
            Ok(_) => {}
            Err(e) if !json => bar.suspend(|| eprintln!("warning: component `{}`: {e}", b.name)),
            Err(_) => {}
        }
    }
    let Ok(plugin) = warden_plugins::load_plugin(dir) else {
        return ExitCode::SUCCESS;
    };
    let Some(section) = &plugin.warden else {
        return ExitCode::SUCCESS;
    };
    let root = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    bar.set_message("asking the tools their names");
    let mut code = ExitCode::SUCCESS;
    for (component, named) in
        warden::session::describe_plugin_tools(&runtime, &plugin.name, &plugin.name, section, &root)
    {
        match named {
            Ok(name) if !json => {
                bar.suspend(|| println!("tool {component} is offered as {name}"));
            }
            Ok(_) => {}
            Err(e) => {
                code = ExitCode::from(1);
                bar.suspend(|| eprintln!("error: {e}"));
            }
        }
    }
    code
}

/// Refuses to build in an installed copy of a plugin (under Warden's plugin cache): the files
/// written there change the tree its recorded digest pins, so `warden plugin verify` reports
/// it as tampered and its grants stop applying. The source is where a component is built.
fn refuse_installed_copy(dir: &std::path::Path) -> Result<()> {
    let Ok(home) = warden_config::Home::from_env() else {
        return Ok(());
    };
    let cache = home.plugins_dir().join("cache");
    if let (Ok(d), Ok(c)) = (dir.canonicalize(), cache.canonicalize())
        && d.starts_with(&c)
    {
        anyhow::bail!(
            "{} is an installed copy of a plugin (in Warden's plugin cache, {}); building there would change the files its digest pins, and `warden plugin verify` would report it as tampered. Build the plugin's source instead (`warden build <source dir>`), then install it again (`warden plugin install <plugin>@<marketplace>`)",
            d.display(),
            c.display()
        );
    }
    Ok(())
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / (1 << 10) as f64),
        n => format!("{n} B"),
    }
}
