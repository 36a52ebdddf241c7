//! `warden key …`: ed25519 keys that sign published plugins, and the keys this user trusts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use warden_distribution::{PublicKey, SecretKey};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Make a signing key: writes PATH.key (private, mode 0600) and PATH.pub.
    #[command(after_help = "Examples:
  warden key generate ~/.config/warden/team
  warden plugin publish ./my-plugin oci://registry.example.com/team/my-plugin:1.0 --key ~/.config/warden/team.key")]
    Generate {
        /// The path the two files are named after.
        path: PathBuf,
    },
    /// Trust a public key for plugin signatures, in the user settings
    /// (`pluginSignatures.trustedKeys`). With --for, signatures by a trusted key become
    /// required under that registry prefix (or `marketplace:NAME`).
    #[command(after_help = "Examples:
  warden key trust team.pub --for registry.example.com/team
  warden key trust team.pub --for marketplace:team-tools
  warden key trust team.pub")]
    Trust {
        /// The `.pub` file.
        public_key: PathBuf,
        /// Registry prefix (`HOST[:PORT]/PATH`) or `marketplace:NAME` the key is trusted for
        /// (repeatable); without it, the key is trusted everywhere and requires nothing.
        #[arg(long = "for", value_name = "PREFIX")]
        scopes: Vec<String>,
    },
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        Cmd::Generate { path } => {
            let key = SecretKey::generate()?;
            let (private, public) = key.write_pair(&path)?;
            println!("✔ Generated key {}", key.public().key_id());
            println!("  private: {} (keep it secret)", private.display());
            println!("  public:  {}", public.display());
        }
        Cmd::Trust { public_key, scopes } => {
            let key = PublicKey::load(&public_key)?;
            let home =
                warden_config::Home::from_env().context("locating the Warden home directory")?;
            let settings = home.user_settings();
            warden_distribution::policy::trust_key(&settings, &key, &scopes)?;
            let at = if scopes.is_empty() {
                "everywhere (signatures stay optional unless `requireSignatures` is set)"
                    .to_string()
            } else {
                format!("for {} (signatures required there)", scopes.join(", "))
            };
            println!("✔ Trusted key {} {at}", key.key_id());
            println!("  in {}", settings.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
