//! `warden plugin publish` and `warden plugin sign`: a plugin directory as an OCI artifact in a
//! registry, signed with a key made by `warden key generate`.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use warden_distribution::{Auth, Options, SecretKey};

/// Registry connection flags shared by publish and sign.
#[derive(clap::Args)]
pub(super) struct RegistryArgs {
    /// Allow plain HTTP to a registry that is not on the loopback interface (loopback
    /// registries are always reached over plain HTTP).
    #[arg(long)]
    insecure: bool,
    /// Registry user name (the password is read from stdin with --password-stdin); without
    /// it, credentials come from the Docker config file.
    #[arg(long, requires = "password_stdin")]
    username: Option<String>,
    /// Read the registry password from the first line of stdin.
    #[arg(long, requires = "username")]
    password_stdin: bool,
}

impl RegistryArgs {
    fn options(&self) -> anyhow::Result<Options> {
        let auth = match &self.username {
            Some(u) => {
                let mut line = String::new();
                std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .context("reading the password from stdin")?;
                Auth::Basic(u.clone(), line.trim_end_matches(['\r', '\n']).to_string())
            }
            None => Auth::DockerConfig,
        };
        Ok(Options {
            insecure: self.insecure,
            auth,
            ..Options::default()
        })
    }
}

/// Arguments of `warden plugin publish`.
#[derive(clap::Args)]
pub(super) struct PublishArgs {
    /// The plugin directory (built: its .wasm components are published as they are).
    dir: PathBuf,
    /// Where to push: `oci://HOST[:PORT]/REPOSITORY:TAG`.
    reference: String,
    /// Sign the pushed manifest with this private key (`warden key generate` writes it).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `warden plugin sign`.
#[derive(clap::Args)]
pub(super) struct SignArgs {
    /// The artifact to sign: `oci://HOST[:PORT]/REPOSITORY:TAG` (the manifest the tag names now).
    reference: String,
    /// The private key (`warden key generate` writes it).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    #[command(flatten)]
    registry: RegistryArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// `FILE`, else `FILE.key`, so the path given to `key generate` works too.
pub(super) fn load_key(path: &Path) -> anyhow::Result<SecretKey> {
    let with_ext = PathBuf::from(format!("{}.key", path.display()));
    let p = if !path.exists() && with_ext.exists() {
        with_ext
    } else {
        path.to_path_buf()
    };
    Ok(SecretKey::load(&p)?)
}

fn show(json: bool, p: &warden_distribution::Published, verb: &str) {
    if json {
        println!("{}", serde_json::to_string_pretty(p).unwrap_or_default());
        return;
    }
    println!("✔ {verb} {}", p.reference);
    println!("  manifest {}", p.manifest_digest);
    match (&p.signer, &p.signature_tag) {
        (Some(k), Some(t)) => println!("  signed by {k} (tag {t})"),
        _ => println!(
            "  unsigned (sign with `warden plugin sign {} --key FILE`)",
            p.reference
        ),
    }
}

pub(super) fn publish(a: PublishArgs) -> anyhow::Result<ExitCode> {
    let key = a.key.as_deref().map(load_key).transpose()?;
    let opts = a.registry.options()?;
    let p = warden_distribution::oci::publish(&a.dir, &a.reference, key.as_ref(), &opts)?;
    show(a.json, &p, "Published");
    Ok(ExitCode::SUCCESS)
}

pub(super) fn sign(a: SignArgs) -> anyhow::Result<ExitCode> {
    let key = load_key(&a.key)?;
    let opts = a.registry.options()?;
    let p = warden_distribution::oci::sign(&a.reference, &key, &opts)?;
    show(a.json, &p, "Signed");
    Ok(ExitCode::SUCCESS)
}
