//! A session's language servers: each started on first use for a file of one of its
//! extensions (the first server registered for an extension wins), restarted after a crash
//! up to `maxRestarts`, and shut down with the session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_types::Diagnostic;

use crate::client::{Client, Launcher};
use crate::config::ServerConfig;

/// Largest file sent to a server.
pub const MAX_DOCUMENT_BYTES: u64 = 32 << 20;

/// Says whether a file may be shown to servers: the host refuses `.env` files and paths its
/// Read rules deny, so they never reach a `didOpen`.
pub trait FileGate: Send + Sync {
    /// `Err` with the reason when `path` must not be sent.
    fn check(&self, path: &Path) -> Result<(), String>;
}

/// Lets every file through (tests of the client alone).
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenGate;

impl FileGate for OpenGate {
    fn check(&self, _: &Path) -> Result<(), String> {
        Ok(())
    }
}

/// One configured server.
pub struct ServerSpec {
    /// `plugin:<plugin>:<server>`.
    pub id: String,
    /// Its configuration, expanded, or why it cannot be used.
    pub config: Result<ServerConfig, String>,
    /// Starts (and confines) its process.
    pub launcher: Arc<dyn Launcher>,
}

impl std::fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSpec")
            .field("id", &self.id)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    client: Option<Arc<Client>>,
    restarts: u32,
    stopped: Option<String>,
}

struct Server {
    spec: ServerSpec,
    state: tokio::sync::Mutex<State>,
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Not started yet (servers start on first use).
    NotStarted,
    /// Running.
    Running {
        /// Times it was restarted after a crash.
        restarts: u32,
    },
    /// It failed to start, or crashed more than it may be restarted.
    Stopped(String),
    /// Its configuration cannot be used.
    Invalid(String),
}

impl Status {
    /// A word for listings.
    pub fn label(&self) -> &'static str {
        match self {
            Status::NotStarted => "not started",
            Status::Running { .. } => "running",
            Status::Stopped(_) => "stopped",
            Status::Invalid(_) => "invalid",
        }
    }
}

/// A session's servers.
pub struct LspManager {
    folder: PathBuf,
    servers: Vec<Server>,
    gate: Arc<dyn FileGate>,
}

impl std::fmt::Debug for LspManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspManager")
            .field("folder", &self.folder)
            .field("servers", &self.servers.len())
            .finish_non_exhaustive()
    }
}

/// A document opened on its server.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The server.
    pub client: Arc<Client>,
    /// `plugin:<plugin>:<server>`.
    pub server: String,
    /// Whether diagnostics of this server are shown after edits.
    pub diagnostics: bool,
    /// The publication counter before the document was sent.
    pub before: u64,
    /// Whether anything was sent (the server had another text, or none).
    pub changed: bool,
}

impl LspManager {
    /// The servers of `specs`, in precedence order, for the project `folder` (each server's
    /// `workspaceFolder` overrides it); `gate` decides which files may be sent.
    pub fn new(folder: &Path, specs: Vec<ServerSpec>, gate: Arc<dyn FileGate>) -> LspManager {
        LspManager {
            folder: folder.to_path_buf(),
            servers: specs
                .into_iter()
                .map(|spec| Server {
                    spec,
                    state: tokio::sync::Mutex::new(State::default()),
                })
                .collect(),
            gate,
        }
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The project folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Every server with where it stands.
    pub fn list(&self) -> Vec<(&ServerSpec, Status)> {
        self.servers
            .iter()
            .map(|s| {
                let status = match &s.spec.config {
                    Err(e) => Status::Invalid(e.clone()),
                    Ok(_) => match s.state.try_lock() {
                        Ok(st) => match (&st.stopped, &st.client) {
                            (Some(why), _) => Status::Stopped(why.clone()),
                            (None, Some(c)) if c.is_alive() => Status::Running {
                                restarts: st.restarts,
                            },
                            (None, Some(c)) => Status::Stopped(c.exit_message()),
                            (None, None) => Status::NotStarted,
                        },
                        Err(_) => Status::Running { restarts: 0 },
                    },
                };
                (&s.spec, status)
            })
            .collect()
    }

    fn server_for(&self, path: &Path) -> Option<(&Server, &ServerConfig, String)> {
        let ext = format!(".{}", path.extension()?.to_str()?);
        self.servers.iter().find_map(|s| {
            let c = s.spec.config.as_ref().ok()?;
            let lang = c.language_of(&ext)?;
            Some((s, c, lang.to_string()))
        })
    }

    /// Whether some server handles `path`'s extension, and shows its diagnostics after edits.
    pub fn diagnoses(&self, path: &Path) -> bool {
        self.server_for(path)
            .is_some_and(|(_, c, _)| c.diagnostics())
    }

    /// Whether some server handles `path`'s extension.
    pub fn handles(&self, path: &Path) -> bool {
        self.server_for(path).is_some()
    }

    async fn client(&self, server: &Server, config: &ServerConfig) -> Result<Arc<Client>, String> {
        let mut st = server.state.lock().await;
        if let Some(why) = &st.stopped {
            return Err(why.clone());
        }
        if let Some(c) = &st.client {
            if c.is_alive() {
                return Ok(c.clone());
            }
            c.reap().await;
            let mut crash = c.exit_message();
            for n in c.notes() {
                crash.push_str("\n  ");
                crash.push_str(&n);
            }
            st.client = None;
            let max = config.max_restarts();
            if !config.restart_on_crash() {
                let why = format!("{crash}\nIt is not restarted (restartOnCrash is false).");
                st.stopped = Some(why.clone());
                return Err(why);
            }
            if st.restarts >= max {
                let why = format!(
                    "{crash}\nIt was restarted {} time{} already (maxRestarts {max}), so it is not started again in this session.",
                    st.restarts,
                    if st.restarts == 1 { "" } else { "s" }
                );
                st.stopped = Some(why.clone());
                return Err(why);
            }
            st.restarts += 1;
        }
        let folder = config
            .workspace_folder
            .as_deref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.folder.clone());
        match Client::start(
            &server.spec.id,
            config,
            &folder,
            server.spec.launcher.as_ref(),
        )
        .await
        {
            Ok(c) => {
                let c = Arc::new(c);
                st.client = Some(c.clone());
                Ok(c)
            }
            Err(e) => {
                let why = e.to_string();
                st.stopped = Some(why.clone());
                Err(why)
            }
        }
    }

    /// Sends `path` (read now) to its server, starting the server if needed. `Ok(None)`: no
    /// server handles its extension. `saved`: also send `didSave` (the file was written).
    pub async fn open(&self, path: &Path, saved: bool) -> Result<Option<Opened>, String> {
        let Some((server, config, lang)) = self.server_for(path) else {
            return Ok(None);
        };
        self.gate.check(path)?;
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.len() > MAX_DOCUMENT_BYTES {
            return Err(format!(
                "{} is {} bytes; at most {MAX_DOCUMENT_BYTES} are sent to a language server",
                path.display(),
                meta.len()
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let client = self.client(server, config).await?;
        let before = client.publications();
        let changed = client.sync(path, &lang, &text).map_err(|e| e.to_string())?;
        if saved {
            client.saved(path, &text);
        }
        Ok(Some(Opened {
            client,
            server: server.spec.id.clone(),
            diagnostics: config.diagnostics(),
            before,
            changed: changed || saved,
        }))
    }

    /// The diagnostics of `path` once its server has looked at the current text: waits up to
    /// `first` for them, then `quiet` for more. `Ok(None)`: no server handles it.
    pub async fn diagnostics(
        &self,
        path: &Path,
        saved: bool,
        first: Duration,
        quiet: Duration,
    ) -> Result<Option<(Opened, Vec<Diagnostic>)>, String> {
        let Some(o) = self.open(path, saved).await? else {
            return Ok(None);
        };
        let found = if o.changed {
            o.client
                .diagnostics_after(path, o.before, first, quiet)
                .await
        } else {
            None
        }
        .or_else(|| o.client.diagnostics(path))
        .unwrap_or_default();
        if !o.client.is_alive() {
            return Err(o.client.exit_message());
        }
        Ok(Some((o, found)))
    }

    /// The server that handles `path`, started, after a crash restarted within
    /// `maxRestarts` (for requests that need no document, as `workspace/symbol`).
    pub async fn client_for(&self, path: &Path) -> Result<Option<Arc<Client>>, String> {
        let Some((server, config, _)) = self.server_for(path) else {
            return Ok(None);
        };
        self.client(server, config).await.map(Some)
    }

    /// Ends every running server (`shutdown`, `exit`, then a signal after
    /// `shutdownTimeout`).
    pub async fn shutdown(&self) {
        let mut running = Vec::new();
        for s in &self.servers {
            let mut st = s.state.lock().await;
            if let Some(c) = st.client.take() {
                running.push(c);
            }
        }
        let ends = running.iter().map(|c| c.shutdown());
        futures_join(ends).await;
    }
}

async fn futures_join<F: std::future::Future<Output = ()>>(fs: impl Iterator<Item = F>) {
    let mut set = Vec::new();
    for f in fs {
        set.push(Box::pin(f));
    }
    for f in set {
        f.await;
    }
}
