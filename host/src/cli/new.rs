//! `warden new hook|tool --lang L [NAME]`: a plugin with one component (see
//! [`warden::scaffold`]).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use warden_plugins::{GuestLang, World};

#[derive(Parser)]
#[command(after_help = "Examples:
  warden new hook --lang python no-drop-table     a Python PreToolUse hook in ./no-drop-table
  warden new tool --lang rust tools/word-count    a Rust tool in ./tools/word-count
  cd no-drop-table && warden build && warden plugin validate .
  warden plugin marketplace add . && warden plugin install no-drop-table@no-drop-table")]
pub struct Args {
    /// What the component is: a hook (called on events) or a tool (called by the model).
    kind: Kind,
    /// The language of the component.
    #[arg(long, value_enum)]
    lang: Lang,
    /// The plugin directory to create; its last segment is the plugin's name (kebab-case).
    /// Defaults to `my-hook` or `my-tool`.
    name: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    Hook,
    Tool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Lang {
    Rust,
    Python,
    #[value(alias = "javascript")]
    Js,
    C,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let world = match args.kind {
        Kind::Hook => World::Hook,
        Kind::Tool => World::Tool,
    };
    let lang = match args.lang {
        Lang::Rust => GuestLang::Rust,
        Lang::Python => GuestLang::Python,
        Lang::Js => GuestLang::Js,
        Lang::C => GuestLang::C,
    };
    let dest = args.name.unwrap_or_else(|| {
        PathBuf::from(match world {
            World::Hook => "my-hook",
            World::Tool => "my-tool",
        })
    });
    let made = warden::scaffold::scaffold(&dest, world, lang)?;
    println!(
        "Created {} `{}` ({lang}) in {}",
        match world {
            World::Hook => "hook plugin",
            World::Tool => "tool plugin",
        },
        made.name,
        made.dir.display()
    );
    for f in &made.files {
        println!("  {f}");
    }
    let setup = if lang == GuestLang::Js {
        format!("cd {} && npm install && warden build", made.dir.display())
    } else {
        format!("cd {} && warden build", made.dir.display())
    };
    println!("Next: {setup} && warden plugin validate .");
    // The directory is a marketplace of this one plugin.
    println!(
        "Then: warden plugin marketplace add . && warden plugin install {}@{}",
        made.name, made.name
    );
    Ok(ExitCode::SUCCESS)
}
