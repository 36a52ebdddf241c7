//! The OS confinement of a program started through `exec` (Linux: `warden-confine`).
//!
//! What the program may reach, built fresh for every start:
//!
//! | what | read | write |
//! |---|---|---|
//! | system directories programs need (`/usr`, `/etc`, …, see `warden_confine::SYSTEM_READABLE`) | yes | no |
//! | toolchains and their configuration in the home (`~/.cargo`, `~/.rustup`, `~/.npm`, `~/.gitconfig`, …) and `sandbox.readablePaths` | yes (`~/.gitconfig`, `~/.config/git/config`, `~/.cargo/config.toml` without lines that may hold a credential) | no |
//! | credential stores in the home (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.claude/.credentials.json`, `~/.claude.json`, Warden's `state.json`, …) | no | no |
//! | the granted directories (a writable grant: its project files) | yes | if granted |
//! | the session directory, when no grant covers it | yes | no |
//! | `.env`, `.env.*` in those, and every path a Read deny rule covers (plus Read ask rules for hooks) | no | no |
//! | paths an Edit deny rule covers | yes | no |
//! | in a writable grant: every repository's `config`, `hooks`, `info`, `commondir`, `gitdir` (also of submodules and worktrees), `.git` files, `.claude/`, `.mcp.json`, `.husky/`, virtualenvs' `*.pth`; shell start-up files, Warden's home and Claude Code's configuration directory when a grant holds them; the scripts of configured hooks and MCP servers (`ProcessConfinement::read_only`) | yes | no (what does not exist yet is removed after the call if the call creates it; see `warden_confine`) |
//! | a private temporary directory (`TMPDIR`), removed after the call | yes | yes |
//! | network | only with `sandbox.network` | |
//!
//! Every process the program starts is confined the same way and ends with the call. Where
//! the kernel cannot enforce this, the program does not start, unless the user set
//! `sandbox.allowUnconfined` (then it runs as before, with a warning in the call's log).

use std::path::PathBuf;
use std::time::Duration;

use crate::latest::exec::ExecError;
use crate::sandbox::SandboxState;

/// Grace the supervisor gives past the call's own timeout before it ends everything itself,
/// in case the host lost track of the call.
const BACKSTOP_GRACE: Duration = Duration::from_secs(5);

/// A confined program started, and what undoes its confinement after it.
#[cfg(target_os = "linux")]
pub(super) type Confined = (warden_confine::Child, Guard);
#[cfg(target_os = "linux")]
pub(super) type Guard = warden_confine::Guard;
#[cfg(not(target_os = "linux"))]
pub(super) type Confined = (std::convert::Infallible, Guard);
#[cfg(not(target_os = "linux"))]
pub(super) type Guard = std::convert::Infallible;

/// Restores what the call changed of protected paths; returns them.
#[cfg(target_os = "linux")]
pub(super) fn finish(guard: Guard) -> Result<Vec<PathBuf>, warden_confine::ConfineError> {
    guard.finish()
}

#[cfg(not(target_os = "linux"))]
pub(super) fn finish(guard: Guard) -> Result<Vec<PathBuf>, std::convert::Infallible> {
    match guard {}
}

/// Files in those homes that hold credentials or servers' environments: denied.
#[cfg(target_os = "linux")]
fn agent_secrets(home: Option<&std::path::Path>) -> Vec<PathBuf> {
    use super::super::fs::{claude_home, warden_home};
    // `plugin-secrets.json` holds plugins' sensitive `userConfig` values, handed only to the
    // plugin they belong to.
    let mut out: Vec<PathBuf> = warden_home(home)
        .map(|w| [w.join("state.json"), w.join("plugin-secrets.json")])
        .into_iter()
        .flatten()
        .collect();
    if let Some(c) = claude_home(home) {
        out.push(c.join(".credentials.json"));
        out.push(c.join(".claude.json"));
    }
    out
}

impl SandboxState {
    /// The directories the grant and the session give a program, and whether each is
    /// writable. The session directory is readable even without a grant: it is where the
    /// program runs.
    fn process_roots(&self) -> Vec<(PathBuf, bool)> {
        let mut roots: Vec<(PathBuf, bool)> = self
            .grant
            .fs
            .iter()
            .map(|g| (super::super::fs::normalise(&g.path), g.write))
            .collect();
        let cwd = super::super::fs::normalise(&self.ctx.cwd);
        if !roots.iter().any(|(r, _)| cwd.starts_with(r)) {
            roots.push((cwd, false));
        }
        roots
    }

    /// Starts `argv` confined (with exactly `env`, in `cwd`, output piped, input piped or
    /// `/dev/null`), or says why it cannot run. `Ok(None)`: the kernel cannot confine and the
    /// user allowed unconfined programs; the caller starts it unconfined.
    #[cfg(target_os = "linux")]
    pub(super) fn spawn_confined(
        &mut self,
        argv: &[String],
        cwd: &std::path::Path,
        env: &[(String, String)],
        piped_stdin: bool,
        limit: Duration,
    ) -> Result<Option<Confined>, ExecError> {
        use warden_confine::{
            ConfineError, Confinement, PROJECT_DENIED, Program, SpawnError, Stdio,
        };

        let settings = self.calls.exec.processes.clone();
        let roots = self.process_roots();
        let mut c = Confinement::new().system_defaults();
        if let Some(home) = &settings.home {
            c = c.home_defaults(home);
        }
        for p in &settings.readable {
            c = c.read(p);
        }
        for p in super::super::fs::agent_homes(settings.home.as_deref()) {
            c = c.read_only(p);
        }
        for p in agent_secrets(settings.home.as_deref()) {
            c = c.deny(p);
        }
        for p in &settings.read_only {
            c = c.read_only(p);
        }
        for (root, write) in &roots {
            c = if *write {
                c.project(root)
            } else {
                let mut c = c.read(root);
                for d in PROJECT_DENIED {
                    c = c.deny(root.join(d));
                }
                c
            };
        }
        let dirs: Vec<PathBuf> = roots.iter().map(|(r, _)| r.clone()).collect();
        let denied = self.ctx.policy.denied_paths(&dirs).map_err(|e| {
            ExecError::Denied(format!(
                "cannot work out which paths the rules deny, so the program was not started: {e}"
            ))
        })?;
        for p in denied.read {
            c = c.deny(p);
        }
        for p in denied.write {
            c = c.read(p);
        }
        c = c
            .network(settings.network)
            .timeout(limit.saturating_add(BACKSTOP_GRACE));
        let mut program = Program::new(&argv[0]);
        program
            .args(&argv[1..])
            .current_dir(cwd)
            .stdin(if piped_stdin {
                Stdio::Piped
            } else {
                Stdio::Null
            })
            .stdout(Stdio::Piped)
            .stderr(Stdio::Piped);
        for (k, v) in env {
            program.env(k, v);
        }
        match c.spawn(&program) {
            Ok(started) => Ok(Some(started)),
            Err(SpawnError::Confine(
                e @ (ConfineError::Unsupported { .. } | ConfineError::NoSeccomp),
            )) if settings.allow_unconfined => {
                self.calls.log.push(
                    "warn",
                    format!("running the program unconfined (sandbox.allowUnconfined): {e}"),
                );
                Ok(None)
            }
            Err(SpawnError::Confine(e)) => Err(ExecError::Denied(e.to_string())),
            Err(SpawnError::Start(e)) => Err(match e.kind() {
                std::io::ErrorKind::NotFound => ExecError::NotFound(format!("{}: {e}", argv[0])),
                // The program lies outside what the sandbox lets programs read.
                std::io::ErrorKind::PermissionDenied => {
                    let hints = self.readable_hints(Some(std::path::Path::new(&argv[0])), &[]);
                    ExecError::Failed(format!(
                        "cannot start {}: {e}{}",
                        argv[0],
                        hints.iter().map(|h| format!("; {h}")).collect::<String>()
                    ))
                }
                _ => ExecError::Failed(format!("cannot start {}: {e}", argv[0])),
            }),
        }
    }

    /// Lines that name the `sandbox.readablePaths` setting for what a confined program that
    /// failed was refused reading: the program itself when it could not be started
    /// (`program`), else the paths its `stderr` names (see `warden_confine::hint`).
    #[cfg(target_os = "linux")]
    pub(super) fn readable_hints(
        &self,
        program: Option<&std::path::Path>,
        stderr: &[u8],
    ) -> Vec<String> {
        let home = self.calls.exec.processes.home.as_deref();
        match program {
            Some(p) => warden_confine::hint::readable_paths_hint(p, home)
                .into_iter()
                .collect(),
            None => warden_confine::hint::refusal_hints(&String::from_utf8_lossy(stderr), home),
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn readable_hints(
        &self,
        _program: Option<&std::path::Path>,
        _stderr: &[u8],
    ) -> Vec<String> {
        Vec::new()
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn spawn_confined(
        &mut self,
        _argv: &[String],
        _cwd: &std::path::Path,
        _env: &[(String, String)],
        _piped_stdin: bool,
        _limit: Duration,
    ) -> Result<Option<Confined>, ExecError> {
        if self.calls.exec.processes.allow_unconfined {
            self.calls.log.push(
                "warn",
                "running the program unconfined (sandbox.allowUnconfined): this OS has no confinement Warden can use".into(),
            );
            return Ok(None);
        }
        Err(ExecError::Denied(
            "cannot confine programs on this operating system (Warden confines them on Linux 6.2 or later); \
             set `sandbox.allowUnconfined: true` to run programs without OS confinement"
                .into(),
        ))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn agent_secrets_cover_warden_state_and_plugin_secrets() {
        use super::super::super::fs::{claude_home, warden_home};
        let home = std::path::Path::new("/home/someone");
        let secrets = super::agent_secrets(Some(home));
        let (warden, claude) = (
            warden_home(Some(home)).expect("a Warden home"),
            claude_home(Some(home)).expect("a Claude Code home"),
        );
        for f in [
            warden.join("state.json"),
            warden.join("plugin-secrets.json"),
            claude.join(".credentials.json"),
            claude.join(".claude.json"),
        ] {
            assert!(
                secrets.contains(&f),
                "{} not denied: {secrets:?}",
                f.display()
            );
        }
    }
}
