//! `warden plugin …`: Claude Code's `claude plugin` verbs over `$WARDEN_HOME/plugins/`.
//!
//! Every verb prints the `Display` form of its result, or the `Serialize` form with `--json`,
//! and exits 0 on success and 1 on any error (errors are printed as `✘ …` on stderr, worded
//! like Claude Code's and saying what to do next). Progress bars are drawn only when stdout and
//! stderr are terminals and never with `--json` (see [`super::progress`]).
//!
//! Installing or updating a plugin whose WASM components ask for capabilities (fs, net, env,
//! exec) needs consent: a `y/N` question on a terminal, `--yes` for everything it asks, or
//! `--grant kind:value` for exactly the listed capabilities (see [`consent`]).

use std::fmt::Display;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Subcommand, ValueEnum};
use serde::Serialize;
use serde_json::json;
use warden_config::{Home, Scope};
use warden_plugins::{Consent, InstallOutcome, PluginError, PluginManager, VerifyStatus};

mod consent;
mod details;
mod oci;

use consent::ConsentMode;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check a plugin or marketplace directory (plugin.json, hooks, frontmatter,
    /// marketplace.json); exit 1 when it has errors.
    #[command(after_help = "Examples:
  warden plugin validate ./my-plugin
  warden plugin validate ./my-marketplace --strict
  warden plugin validate ./my-plugin --json")]
    Validate(ValidateArgs),
    /// Add, list, remove or update marketplaces.
    #[command(subcommand)]
    Marketplace(MarketplaceCmd),
    /// Install a plugin from a known marketplace, or from an OCI registry (`oci://…`).
    #[command(
        visible_alias = "i",
        after_help = "Examples:
  warden plugin install protect-secrets
  warden plugin install protect-secrets@warden-examples --scope project
  warden plugin install my-guard@my-marketplace --grant exec:git --grant env:HOME
  warden plugin install protect-secrets --yes --json
  warden plugin install oci://registry.example.com/team/my-guard:1.0"
    )]
    Install(InstallArgs),
    /// Uninstall a plugin.
    #[command(
        visible_aliases = ["remove", "rm"],
        after_help = "Examples:
  warden plugin uninstall protect-secrets
  warden plugin uninstall protect-secrets@warden-examples --scope project --keep-data"
    )]
    Uninstall(UninstallArgs),
    /// Enable an installed plugin (exit 1 if it is already enabled).
    #[command(after_help = "Examples:
  warden plugin enable protect-secrets
  warden plugin enable protect-secrets@warden-examples --scope local")]
    Enable(EnableArgs),
    /// Disable an installed plugin (exit 1 if it is already disabled).
    #[command(after_help = "Examples:
  warden plugin disable protect-secrets
  warden plugin disable protect-secrets@warden-examples --scope project --json")]
    Disable(EnableArgs),
    /// Update a plugin to the version its marketplace lists now.
    #[command(after_help = "Examples:
  warden plugin update protect-secrets
  warden plugin update protect-secrets@warden-examples --scope user --yes")]
    Update(UpdateArgs),
    /// List installed plugins (and, with --available, the ones that can be installed).
    #[command(after_help = "Examples:
  warden plugin list
  warden plugin list --available
  warden plugin list --json")]
    List(ListArgs),
    /// Show an installed plugin: version, install path, digest, enabled state, its WASM
    /// components (world, sha256, capabilities requested and granted), hooks, skills, agents,
    /// commands and MCP servers, and what its programs (command hooks, stdio MCP servers) may
    /// read, write and reach, their grant, and the refusals they met lately.
    #[command(
        visible_alias = "info",
        after_help = "Examples:
  warden plugin details protect-secrets
  warden plugin details protect-secrets@warden-examples --json"
    )]
    Details(DetailsArgs),
    /// Re-hash every installed plugin and compare with the digest recorded at install; exit 1
    /// when one was modified or is missing (`warden plugin install` restores it).
    Verify(JsonArgs),
    /// Grant an installed plugin the capabilities it requests (after a lost or reset grant),
    /// or give its programs (command hooks, MCP servers) more: `--write`, `--read`,
    /// `--network`.
    #[command(after_help = "Examples:
  warden plugin grant protect-secrets
  warden plugin grant my-guard@my-marketplace --grant exec:git --grant env:HOME
  warden plugin grant prettier-hooks --write '${CLAUDE_PROJECT_DIR}'
  warden plugin grant docs-fetcher --network --read ~/.config/docs")]
    Grant(GrantArgs),
    /// Push a plugin directory to an OCI registry (each .wasm component as a layer, the other
    /// files as one more), optionally signed; prints the manifest digest.
    #[command(after_help = "Examples:
  warden plugin publish ./my-plugin oci://registry.example.com/team/my-plugin:1.0 --key team.key
  warden plugin publish ./my-plugin oci://127.0.0.1:5000/my-plugin:dev
  echo \"$TOKEN\" | warden plugin publish ./my-plugin oci://ghcr.io/org/my-plugin:1.0 --username me --password-stdin")]
    Publish(oci::PublishArgs),
    /// Sign the artifact a registry tag names now with a private key.
    #[command(after_help = "Examples:
  warden plugin sign oci://registry.example.com/team/my-plugin:1.0 --key team.key")]
    Sign(oci::SignArgs),
}

#[derive(Subcommand)]
enum MarketplaceCmd {
    /// Add a marketplace: a directory, a git URL (`https://…`, `file://…`, `git@host:path`,
    /// optional `#ref`) or `owner/repo[@ref]`.
    #[command(after_help = "Examples:
  warden plugin marketplace add ./plugins
  warden plugin marketplace add https://github.com/owner/repo.git#v1.2
  warden plugin marketplace add owner/repo@main --scope project
  warden plugin marketplace add ~/src/claude-code --allow-reserved-name
  warden plugin marketplace add ./other-copy --replace")]
    Add(MarketplaceAddArgs),
    /// List known marketplaces.
    List(JsonArgs),
    /// Remove a marketplace (refused while plugins installed from it remain, unless
    /// --uninstall-plugins).
    #[command(
        visible_alias = "rm",
        after_help = "Examples:
  warden plugin marketplace remove warden-examples
  warden plugin marketplace remove warden-examples --uninstall-plugins
  warden plugin marketplace remove warden-examples --scope project"
    )]
    Remove(MarketplaceRemoveArgs),
    /// Refresh one marketplace, or all when no name is given.
    #[command(after_help = "Examples:
  warden plugin marketplace update
  warden plugin marketplace update warden-examples --json")]
    Update(MarketplaceUpdateArgs),
    /// Sign a git or directory marketplace: write `.claude-plugin/warden-index.json` (each
    /// plugin's digest, staged as an install stages it) and its signature
    /// `.claude-plugin/warden-index.sig`, made with a key from `warden key generate`.
    #[command(after_help = "Examples:
  warden plugin marketplace sign ./my-marketplace --key ~/.config/warden/team.key
  warden key trust team.pub --for marketplace:my-marketplace   # on the installing side")]
    Sign(MarketplaceSignArgs),
}

/// The scopes a plugin verb may write.
#[derive(Clone, Copy, ValueEnum)]
enum ScopeArg {
    /// `$WARDEN_HOME/settings.json`.
    User,
    /// `.claude/settings.json` in the current directory (shared with the project).
    Project,
    /// `.claude/settings.local.json` at the repository root (not shared).
    Local,
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Scope {
        match s {
            ScopeArg::User => Scope::User,
            ScopeArg::Project => Scope::Project,
            ScopeArg::Local => Scope::Local,
        }
    }
}

#[derive(clap::Args)]
struct JsonArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ValidateArgs {
    /// The plugin or marketplace directory.
    path: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
}

#[derive(clap::Args)]
struct MarketplaceAddArgs {
    /// A directory, a git URL or `owner/repo[@ref]`.
    source: String,
    /// Settings file that declares the marketplace.
    #[arg(short, long, value_enum, default_value = "user")]
    scope: ScopeArg,
    /// Accept a reserved marketplace name (`claude-code-plugins`, `claude-plugins-official`,
    /// …) from a local source: a directory or a `file://` clone, e.g. a checkout of an
    /// official marketplace. A remote source may use a reserved name only from
    /// github.com/anthropics, with or without this flag.
    #[arg(long)]
    allow_reserved_name: bool,
    /// Point a marketplace name that is already added at this new source.
    #[arg(long)]
    replace: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct MarketplaceRemoveArgs {
    /// Marketplace name.
    name: String,
    /// Settings file to remove the declaration from.
    #[arg(short, long, value_enum, default_value = "user")]
    scope: ScopeArg,
    /// Also uninstall the plugins installed from it (otherwise removal is refused while any
    /// remain).
    #[arg(long)]
    uninstall_plugins: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct MarketplaceSignArgs {
    /// The marketplace directory (holding .claude-plugin/marketplace.json).
    dir: PathBuf,
    /// The private key (`warden key generate` writes it).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct MarketplaceUpdateArgs {
    /// Marketplace name (default: all).
    name: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// How the capabilities a plugin asks for are accepted.
#[derive(clap::Args)]
struct ConsentArgs {
    /// Grant every capability the plugin's components request, without asking.
    #[arg(short, long, conflicts_with = "grant")]
    yes: bool,
    /// Grant one capability (repeatable): `exec:<program>`, `env:<VAR>`,
    /// `net:<scheme://host[:port]>`, `fs:read:<path>` or `fs:write:<path>`. The install is
    /// refused if the plugin asks for anything not listed.
    #[arg(long = "grant", value_name = "KIND:VALUE")]
    grant: Vec<String>,
}

#[derive(clap::Args)]
struct InstallArgs {
    /// `<plugin>`, `<plugin>@<marketplace>`, or `oci://HOST[:PORT]/REPOSITORY:TAG`.
    plugin: String,
    /// Where to install and enable it.
    #[arg(short, long, value_enum, default_value = "user")]
    scope: ScopeArg,
    #[command(flatten)]
    consent: ConsentArgs,
    /// Allow plain HTTP to an OCI registry that is not on the loopback interface (loopback
    /// registries are always reached over plain HTTP).
    #[arg(long)]
    insecure: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct UpdateArgs {
    /// Installed plugin (`<plugin>` or `<plugin>@<marketplace>`).
    plugin: String,
    /// The installation to update (default: the one for this directory).
    #[arg(short, long, value_enum)]
    scope: Option<ScopeArg>,
    #[command(flatten)]
    consent: ConsentArgs,
    /// Allow plain HTTP to an OCI registry that is not on the loopback interface (loopback
    /// registries are always reached over plain HTTP).
    #[arg(long)]
    insecure: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct UninstallArgs {
    /// Installed plugin (`<plugin>` or `<plugin>@<marketplace>`).
    plugin: String,
    /// The installation to remove (default: the one for this directory).
    #[arg(short, long, value_enum)]
    scope: Option<ScopeArg>,
    /// Keep the plugin's data directory.
    #[arg(long)]
    keep_data: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct EnableArgs {
    /// Installed plugin (`<plugin>` or `<plugin>@<marketplace>`).
    plugin: String,
    /// Settings file to write (default: the scope of the installation for this directory).
    #[arg(short, long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// enable only: a value for one of the plugin's `userConfig` options (repeatable);
    /// sensitive ones are kept in a private file of Warden's home, never in settings.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    config: Vec<String>,
}

#[derive(clap::Args)]
struct ListArgs {
    /// Print JSON (the installed array; with --available, `{installed, available}`).
    #[arg(long)]
    json: bool,
    /// Also list plugins of known marketplaces that are not installed.
    #[arg(long)]
    available: bool,
}

#[derive(clap::Args)]
struct DetailsArgs {
    /// Installed plugin (`<plugin>` or `<plugin>@<marketplace>`).
    plugin: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct GrantArgs {
    /// Installed plugin (`<plugin>` or `<plugin>@<marketplace>`).
    plugin: String,
    #[command(flatten)]
    consent: ConsentArgs,
    /// Let the plugin's programs read and write PATH (repeatable; absolute, `~/…`, or
    /// `${CLAUDE_PROJECT_DIR}`, `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}`).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["yes", "grant"])]
    write: Vec<String>,
    /// Let the plugin's programs read PATH (repeatable).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["yes", "grant"])]
    read: Vec<String>,
    /// Let the plugin's programs use the network (every host: the kernel cannot limit a
    /// program to hosts).
    #[arg(long, conflicts_with_all = ["yes", "grant"])]
    network: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Cmd::Validate(a) = &args.command {
        // Needs no home directory: it only reads the given path.
        return Ok(validate(a));
    }
    let args = match args.command {
        Cmd::Publish(a) => return oci::publish(a),
        Cmd::Sign(a) => return oci::sign(a),
        command => Args { command },
    };
    let home = Home::from_env().context("locating the Warden home directory")?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let json = match &args.command {
        Cmd::Validate(a) => a.json,
        Cmd::Marketplace(MarketplaceCmd::Add(a)) => a.json,
        Cmd::Marketplace(MarketplaceCmd::List(a)) => a.json,
        Cmd::Marketplace(MarketplaceCmd::Remove(a)) => a.json,
        Cmd::Marketplace(MarketplaceCmd::Update(a)) => a.json,
        Cmd::Marketplace(MarketplaceCmd::Sign(a)) => a.json,
        Cmd::Install(a) => a.json,
        Cmd::Uninstall(a) => a.json,
        Cmd::Enable(a) | Cmd::Disable(a) => a.json,
        Cmd::Update(a) => a.json,
        Cmd::List(a) => a.json,
        Cmd::Verify(a) => a.json,
        Cmd::Grant(a) => a.json,
        Cmd::Details(a) => a.json,
        Cmd::Publish(_) | Cmd::Sign(_) => false,
    };
    let user_home = home.clone();
    // Bars go to stderr: draw them only for a person watching, never around JSON output.
    let mgr = PluginManager::new(home, cwd).quiet(!super::progress::shown(json));
    Ok(match args.command {
        Cmd::Validate(a) => validate(&a),
        Cmd::Marketplace(m) => marketplace(&mgr, m),
        Cmd::Install(a) => install(&mgr, a),
        Cmd::Update(a) => update(&mgr, a),
        Cmd::Uninstall(a) => {
            let r = mgr.uninstall(&a.plugin, a.scope.map(Into::into), a.keep_data);
            report(
                a.json,
                "uninstall",
                r.map_err(|e| format!("Failed to uninstall plugin \"{}\": {e}", a.plugin)),
            )
        }
        Cmd::Enable(a) => {
            // userConfig first: a plugin whose required options have no value stays off.
            let configured = match configure(&mgr, &user_home, &a.plugin, &a.config) {
                Ok(c) => c,
                Err(message) => return Ok(fail(a.json, "enable", &message)),
            };
            let r = mgr.enable(&a.plugin, a.scope.map(Into::into));
            if let (Some(c), Err(PluginError::AlreadyInState { .. })) = (&configured, &r) {
                // Values for a plugin already on: stored, which is what was asked.
                if a.json {
                    println!(
                        "{}",
                        json!({"command": "enable", "outcome": "configured", "plugin": a.plugin,
                            "settings": c.settings, "sensitive": c.sensitive})
                    );
                } else {
                    println!("✔ Configured plugin \"{}\"", a.plugin);
                }
                return Ok(ExitCode::SUCCESS);
            }
            let enabled = r.as_ref().ok().map(|v| v.plugin_id.clone());
            let code = toggled(a.json, "enable", &a.plugin, r);
            // Compiled now rather than at the first call of a session, as install does: the
            // cache may have been emptied, or the engine changed, since the plugin was
            // installed.
            if let Some(id) = enabled
                && let Ok(d) = mgr.details(&id)
            {
                precompile(a.json, &id, &d.install_path);
            }
            code
        }
        Cmd::Disable(a) if !a.config.is_empty() => fail(
            a.json,
            "disable",
            "--config is for `warden plugin enable`: a disabled plugin's options are not read",
        ),
        Cmd::Disable(a) => {
            let r = mgr.disable(&a.plugin, a.scope.map(Into::into));
            toggled(a.json, "disable", &a.plugin, r)
        }
        Cmd::List(a) => list(&mgr, &a),
        Cmd::Verify(a) => verify(&mgr, a.json),
        Cmd::Grant(a) => grant(&mgr, a),
        Cmd::Details(a) => details::run(&mgr, &a.plugin, a.json),
        Cmd::Publish(_) | Cmd::Sign(_) => ExitCode::SUCCESS,
    })
}

/// Stores `given` (`KEY=VALUE`) for the installed `plugin`'s `userConfig` options and checks
/// that every required one has a value (`None`: the plugin declares none and none was given).
/// Only the keys are printed, never a value.
fn configure(
    mgr: &PluginManager,
    home: &Home,
    plugin: &str,
    given: &[String],
) -> Result<Option<warden::plugin_config::Configured>, String> {
    let d = match mgr.details(plugin) {
        Ok(d) => d,
        // enable itself says why an unknown plugin cannot be enabled.
        Err(_) if given.is_empty() => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let loaded = warden_plugins::load_plugin(&d.install_path)
        .map_err(|e| format!("{}: {e}", d.install_path.display()))?;
    let schema = &loaded.manifest.user_config;
    if schema.is_empty() && given.is_empty() {
        return Ok(None);
    }
    let done = warden::plugin_config::configure(home, &d.plugin_id, schema, given)
        .map_err(|e| e.to_string())?;
    if !done.settings.is_empty() {
        eprintln!(
            "userConfig {} stored in {}",
            done.settings.join(", "),
            home.user_settings().display()
        );
    }
    if !done.sensitive.is_empty() {
        eprintln!(
            "userConfig {} (sensitive) stored in {} (readable only by you)",
            done.sensitive.join(", "),
            warden::plugin_config::secrets_file(home).display()
        );
    }
    Ok(Some(done))
}

/// Prints the result of enable or disable. A plugin already in the asked state is a failure,
/// as in Claude Code: `Plugin "<p>" is already disabled`, exit 1, and with `--json` its
/// `failureCode: already_in_goal_state`.
fn toggled(
    json: bool,
    command: &str,
    plugin: &str,
    r: Result<warden_plugins::EnableOutput, PluginError>,
) -> ExitCode {
    match r {
        Ok(v) => {
            print(json, &v);
            ExitCode::SUCCESS
        }
        Err(e @ PluginError::AlreadyInState { .. }) => {
            let message = e.to_string();
            if json {
                println!(
                    "{}",
                    json!({
                        "command": command,
                        "outcome": "failed",
                        "plugin": plugin,
                        "message": message,
                        "failureCode": "already_in_goal_state",
                        "alreadyInGoalState": true,
                    })
                );
            }
            eprintln!("✘ Failed to {command} plugin \"{plugin}\": {message}");
            ExitCode::from(1)
        }
        Err(e) => fail(
            json,
            command,
            &format!("Failed to {command} plugin \"{plugin}\": {e}"),
        ),
    }
}

// ------------------------------------------------------------------ output

/// Prints a value: compact JSON (one line, like Claude Code's `--json` verb results) or text.
fn print<T: Serialize + Display>(json: bool, v: &T) {
    if json {
        match serde_json::to_string(v) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("✘ cannot encode the result as JSON: {e}"),
        }
    } else {
        // Some Display forms end with a newline of their own.
        println!("{}", v.to_string().trim_end());
    }
}

/// Prints a listing: pretty JSON or text.
fn print_pretty<T: Serialize + Display>(json: bool, v: &T) {
    if json {
        match serde_json::to_string_pretty(v) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("✘ cannot encode the result as JSON: {e}"),
        }
    } else {
        println!("{}", v.to_string().trim_end());
    }
}

/// Reports a failure: `✘ <message>` on stderr and, with `--json`, an `outcome: error` object
/// on stdout so scripts reading stdout see the failure too. Always exit code 1.
fn fail(json: bool, command: &str, message: &str) -> ExitCode {
    if json {
        println!(
            "{}",
            json!({ "command": command, "outcome": "error", "message": message })
        );
    }
    eprintln!("✘ {message}");
    ExitCode::from(1)
}

/// Prints a verb result, or fails with its error message.
fn report<T: Serialize + Display>(json: bool, command: &str, r: Result<T, String>) -> ExitCode {
    match r {
        Ok(v) => {
            print(json, &v);
            ExitCode::SUCCESS
        }
        Err(msg) => fail(json, command, &msg),
    }
}

// ------------------------------------------------------------------ verbs

fn validate(a: &ValidateArgs) -> ExitCode {
    if !a.path.exists() {
        return fail(
            a.json,
            "validate",
            &format!(
                "Path does not exist: {}. Give a plugin directory (with .claude-plugin/plugin.json) or a marketplace directory (with .claude-plugin/marketplace.json).",
                a.path.display()
            ),
        );
    }
    let r = warden_plugins::validate(&a.path);
    if !a.json && !r.has_errors && r.fails(a.strict) {
        // Only warnings, but --strict counts them: the report's own summary would say
        // "passed", so print the diagnostics under a failing summary instead.
        for d in &r.diagnostics {
            println!("{d}");
        }
        println!(
            "✘ Validation failed for {} {} (--strict): 0 error(s), {} warning(s)",
            match r.kind {
                warden_plugins::ReportKind::Plugin => "plugin",
                warden_plugins::ReportKind::Marketplace => "marketplace",
            },
            r.path.display(),
            r.warning_count
        );
        return ExitCode::from(1);
    }
    print_pretty(a.json, &r);
    if r.fails(a.strict) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Marketplace-level text output for `marketplace list`.
struct MarketplaceList(Vec<warden_plugins::MarketplaceListItem>);

impl Serialize for MarketplaceList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl Display for MarketplaceList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return write!(
                f,
                "No marketplaces configured. Add one with `warden plugin marketplace add <dir | git URL | owner/repo>`."
            );
        }
        write!(f, "Configured marketplaces:")?;
        for m in &self.0 {
            write!(f, "\n  ❯ {m}")?;
        }
        Ok(())
    }
}

/// The messages of `marketplace update` (one per marketplace).
struct Updated(Vec<warden_plugins::MarketplaceOutput>);

impl Serialize for Updated {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl Display for Updated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return write!(f, "No marketplaces to update.");
        }
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

fn marketplace(mgr: &PluginManager, cmd: MarketplaceCmd) -> ExitCode {
    match cmd {
        MarketplaceCmd::Add(a) => {
            let mgr = mgr.clone().allow_reserved_names(a.allow_reserved_name);
            let r = mgr
                .marketplace_add_with(&a.source, a.scope.into(), a.replace)
                .inspect(|o| {
                    for w in &o.warnings {
                        eprintln!("warning: {w}");
                    }
                })
                .map_err(|e| match e {
                    // Claude Code prints this one without the "Failed to add" prefix.
                    PluginError::PathNotFound(_) => format!(
                        "{e}. Give an existing directory (containing .claude-plugin/marketplace.json), a git URL with its scheme, or owner/repo."
                    ),
                    e => format!("Failed to add marketplace: {e}"),
                });
            report(a.json, "marketplace-add", r)
        }
        MarketplaceCmd::List(a) => match mgr.marketplace_list() {
            Ok(v) => {
                print_pretty(a.json, &MarketplaceList(v));
                ExitCode::SUCCESS
            }
            Err(e) => fail(
                a.json,
                "marketplace-list",
                &format!("Failed to list marketplaces: {e}"),
            ),
        },
        MarketplaceCmd::Remove(a) => {
            let r = mgr
                .marketplace_remove(&a.name, a.scope.into(), a.uninstall_plugins)
                .map_err(|e| format!("Failed to remove marketplace: {e}"));
            report(a.json, "marketplace-remove", r)
        }
        MarketplaceCmd::Update(a) => {
            let r = mgr
                .marketplace_update(a.name.as_deref())
                .map(Updated)
                .map_err(|e| match &a.name {
                    Some(n) => format!("Failed to update marketplace {n}: {e}"),
                    None => format!("Failed to update marketplaces: {e}"),
                });
            report(a.json, "marketplace-update", r)
        }
        MarketplaceCmd::Sign(a) => {
            let r = oci::load_key(&a.key)
                .map_err(|e| e.to_string())
                .and_then(|key| {
                    mgr.marketplace_sign(&a.dir, &key)
                        .map_err(|e| e.to_string())
                })
                .map_err(|e| format!("Failed to sign marketplace {}: {e}", a.dir.display()));
            report(a.json, "marketplace-sign", r)
        }
    }
}

fn install(mgr: &PluginManager, a: InstallArgs) -> ExitCode {
    let mgr = &mgr.clone().insecure_registries(a.insecure);
    let spec = a.plugin.clone();
    let scope: Scope = a.scope.into();
    let what = format!("install plugin \"{spec}\"");
    run_with_consent(&a.consent, a.json, "install", &what, |consent| {
        if spec.starts_with("oci://") {
            return mgr.install_oci(&spec, scope, consent);
        }
        mgr.install_with_consent(&spec, scope, consent)
    })
}

fn update(mgr: &PluginManager, a: UpdateArgs) -> ExitCode {
    let mgr = &mgr.clone().insecure_registries(a.insecure);
    let spec = a.plugin.clone();
    let scope = a.scope.map(Into::into);
    let what = format!("update plugin \"{spec}\"");
    run_with_consent(&a.consent, a.json, "update", &what, |consent| {
        mgr.update_with_consent(&spec, scope, consent)
    })
}

/// Runs install or update: first without accepting capabilities (everything, with `--yes`); if
/// consent is needed, gets it (flags or the terminal) and runs again accepting the request of
/// exactly the tree that was shown.
fn run_with_consent(
    consent: &ConsentArgs,
    json: bool,
    command: &str,
    what: &str,
    op: impl Fn(&Consent) -> Result<InstallOutcome, PluginError>,
) -> ExitCode {
    let mode = match ConsentMode::from_flags(consent.yes, &consent.grant) {
        Ok(m) => m,
        Err(msg) => return fail(json, command, &format!("Failed to {what}: {msg}")),
    };
    let first = match op(&Consent::from(mode.is_yes())) {
        Ok(o) => o,
        Err(e) => return fail(json, command, &format!("Failed to {what}: {e}")),
    };
    let asked = match first {
        InstallOutcome::Installed(r) => {
            print_installed(json, &r);
            return ExitCode::SUCCESS;
        }
        InstallOutcome::NeedsConsent(c) => c,
    };
    if let Err(msg) = consent::obtain(&mode, &asked, json) {
        if json {
            // The request itself, so a script can show it; the error object follows.
            print(true, &asked);
        }
        return fail(json, command, &msg);
    }
    // The tree is fetched again for the second call; the consent names the digest that was
    // shown, so a copy that changed in between is refused instead of installed with a grant
    // nobody saw.
    match op(&Consent::AcceptDigest(asked.sha256.clone())) {
        Ok(InstallOutcome::Installed(r)) => {
            print_installed(json, &r);
            ExitCode::SUCCESS
        }
        Ok(InstallOutcome::NeedsConsent(c)) if c.approved_sha256.is_some() => {
            if json {
                // The new request, so a script can show it; the error object follows.
                print(true, &c);
            }
            fail(
                json,
                command,
                &format!(
                    "Failed to {what}: {} changed while consent was asked (sha256 {} → {}). Nothing was installed. Run the command again to review what it requests now.",
                    c.plugin_id, asked.sha256, c.sha256
                ),
            )
        }
        Ok(InstallOutcome::NeedsConsent(c)) => fail(
            json,
            command,
            &format!(
                "Failed to {what}: consent was given but the plugin still asks: {}",
                c.message
            ),
        ),
        Err(e) => fail(json, command, &format!("Failed to {what}: {e}")),
    }
}

fn print_installed(json: bool, r: &warden_plugins::InstallReport) {
    if !json {
        for w in &r.warnings {
            eprintln!("{w}");
        }
    }
    // Its MCP servers: what the plugin will start or reach, and the names their tools get.
    let servers = super::mcp::plugin_servers(&r.install_path, &r.plugin_id);
    if json {
        match serde_json::to_value(InstallOutcome::Installed(r.clone())) {
            Ok(mut v) => {
                if let Some(o) = v.as_object_mut() {
                    o.insert("mcpServers".into(), serde_json::Value::Array(servers));
                }
                println!("{v}");
            }
            Err(e) => eprintln!("✘ cannot encode the result as JSON: {e}"),
        }
    } else {
        print(json, &InstallOutcome::Installed(r.clone()));
        if !servers.is_empty() {
            println!("  MCP servers ({}):", servers.len());
            for s in &servers {
                println!("    {}", super::mcp::describe_line(s));
            }
        }
    }
    precompile(json, &r.plugin_id, &r.install_path);
}

/// Compiles the plugin's WASM components into the compile cache now, so its first hook or
/// tool call does not pay for compilation (~0.1 s for a small Rust guest, seconds for
/// interpreter-based guests), and asks each tool its `describe()` name, which is recorded
/// with it (so no session has to run the tool to list it) and printed as the name the tool is
/// offered under. Install, update and enable do this. A component that fails to compile, or a
/// tool that cannot be named (a name MCP does not allow, one two tools share), is reported;
/// the plugin stays installed, and the component is refused with the same error when it is
/// used.
fn precompile(json: bool, plugin_id: &str, install_path: &std::path::Path) {
    use warden::runtime::{DigestPin, Grant, Runtime, RuntimeError};
    let Ok(plugin) = warden_plugins::load_plugin(install_path) else {
        return;
    };
    let Some(section) = &plugin.warden else {
        return;
    };
    if section.components.is_empty() {
        return;
    }
    let Ok(home) = warden_config::Home::from_env() else {
        return;
    };
    let config = warden::session::SessionOptions::new(install_path, home).runtime;
    let Ok(runtime) = Runtime::shared(config) else {
        return;
    };
    let bar = super::progress::progress(json).bar_of(
        section.components.len() as u64,
        format!("Compiling {plugin_id}"),
        "components",
    );
    for (name, component) in &section.components {
        bar.set_message(format!("Compiling {plugin_id} ({name})"));
        // Only compilation matters here; the grant is checked when the component is used.
        match runtime.load_file(
            &component.path,
            component.world,
            &Grant::default(),
            DigestPin::None,
        ) {
            Err(e @ (RuntimeError::Compile { .. } | RuntimeError::Read { .. })) if !json => {
                eprintln!("warning: component `{name}` of {plugin_id}: {e}")
            }
            _ => {}
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let named = warden::session::describe_plugin_tools(
        &runtime,
        plugin_id,
        &plugin.name,
        section,
        install_path,
    );
    if json {
        return;
    }
    for (component, named) in named {
        match named {
            Ok(name) => println!("  Tool {component}: {name}"),
            Err(e) => eprintln!("warning: {e}"),
        }
    }
}

fn list(mgr: &PluginManager, a: &ListArgs) -> ExitCode {
    match mgr.list(a.available) {
        Ok(l) => {
            if a.json && !a.available {
                // Claude Code's `plugin list --json` is the bare array of installed plugins.
                match serde_json::to_string_pretty(&l.installed) {
                    Ok(s) => println!("{s}"),
                    Err(e) => return fail(true, "list", &format!("cannot encode JSON: {e}")),
                }
            } else {
                print_pretty(a.json, &l);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(a.json, "list", &format!("Failed to list plugins: {e}")),
    }
}

fn verify(mgr: &PluginManager, json: bool) -> ExitCode {
    match mgr.verify() {
        Ok(v) => {
            if !json && v.plugins.is_empty() {
                println!("No plugins installed.");
                return ExitCode::SUCCESS;
            }
            print_pretty(json, &v);
            if v.ok {
                return ExitCode::SUCCESS;
            }
            if !json {
                // Install re-hashes the cache copy of the version it installs and replaces a
                // modified one, so it is the whole repair.
                for p in &v.plugins {
                    let install =
                        format!("warden plugin install {} --scope {}", p.plugin_id, p.scope);
                    match p.status {
                        VerifyStatus::Tampered => eprintln!(
                            "To restore {}: run `{install}` (it replaces the modified copy in {}).",
                            p.plugin_id,
                            p.install_path.display()
                        ),
                        VerifyStatus::Missing => {
                            eprintln!("To restore {}: run `{install}`.", p.plugin_id)
                        }
                        VerifyStatus::Ok | VerifyStatus::Unrecorded => {}
                    }
                }
            }
            ExitCode::from(1)
        }
        Err(e) => fail(json, "verify", &format!("Failed to verify plugins: {e}")),
    }
}

fn grant(mgr: &PluginManager, a: GrantArgs) -> ExitCode {
    let what = format!("grant plugin \"{}\"", a.plugin);
    if !a.write.is_empty() || !a.read.is_empty() || a.network {
        return grant_processes(mgr, a, &what);
    }
    let mode = match ConsentMode::from_flags(a.consent.yes, &a.consent.grant) {
        Ok(m) => m,
        Err(msg) => return fail(a.json, "grant", &format!("Failed to {what}: {msg}")),
    };
    let req = match mgr.capability_request(&a.plugin) {
        Ok(r) => r,
        Err(e) => return fail(a.json, "grant", &format!("Failed to {what}: {e}")),
    };
    // Asking again for what is already granted to this exact version would only be noise.
    let covered = mgr.grant_for(&req.plugin_id, &req.digest).is_some_and(|g| {
        req.components
            .iter()
            .all(|(n, c)| g.component(n).is_some_and(|have| have.covers(c)))
    });
    if !req.is_empty()
        && !covered
        && let Err(msg) = consent::obtain_for_request(&mode, &req, a.json)
    {
        return fail(a.json, "grant", &msg);
    }
    match mgr.grant(&a.plugin) {
        Ok(g) => {
            if a.json {
                match serde_json::to_string(&g) {
                    Ok(s) => println!("{s}"),
                    Err(e) => return fail(true, "grant", &format!("cannot encode JSON: {e}")),
                }
            } else {
                println!("✔ Granted {} its requested capabilities", g.plugin_id);
                for (c, caps) in &g.components {
                    println!("  {}: {caps}", warden_plugins::capability::shown_name(c));
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(a.json, "grant", &format!("Failed to {what}: {e}")),
    }
}

/// `grant NAME --write PATH | --read PATH | --network`: what was asked for is what the user
/// typed, so it needs no further consent.
fn grant_processes(mgr: &PluginManager, a: GrantArgs, what: &str) -> ExitCode {
    use warden_plugins::capability::{Capabilities, FsAccess, FsCapability};
    let mut add = Capabilities::default();
    for (paths, access) in [(&a.write, FsAccess::Write), (&a.read, FsAccess::Read)] {
        for p in paths {
            let expanded_home = p.starts_with("~/");
            if p.is_empty()
                || p.contains('\0')
                || !(p.starts_with('/') || expanded_home || p.starts_with("${CLAUDE_"))
            {
                return fail(
                    a.json,
                    "grant",
                    &format!(
                        "Failed to {what}: `{p}` must be an absolute path, `~/…`, or start with ${{CLAUDE_PROJECT_DIR}}, ${{CLAUDE_PLUGIN_ROOT}} or ${{CLAUDE_PLUGIN_DATA}}"
                    ),
                );
            }
            add.fs.push(FsCapability {
                path: p.clone(),
                access,
            });
        }
    }
    if a.network {
        add.net.push(warden_plugins::ANY_NETWORK.to_string());
    }
    match mgr.grant_processes(&a.plugin, &add) {
        Ok(g) => {
            if a.json {
                match serde_json::to_string(&g) {
                    Ok(s) => println!("{s}"),
                    Err(e) => return fail(true, "grant", &format!("cannot encode JSON: {e}")),
                }
            } else {
                println!("✔ Granted {} {add}", g.plugin_id);
                if let Some(all) = g.component(warden_plugins::PROCESSES_GRANT_KEY) {
                    println!(
                        "  {}: {all}",
                        warden_plugins::capability::shown_name(warden_plugins::PROCESSES_GRANT_KEY)
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(a.json, "grant", &format!("Failed to {what}: {e}")),
    }
}
