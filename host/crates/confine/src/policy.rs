//! [`Confinement`]: what a confined process may touch, and the default lists.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::restore::Depth;

/// System trees programs need to run at all: binaries, libraries, configuration, and process
/// information. Read and execute only. `/proc` is whole because every process's
/// `/proc/self` is a different directory; Landlock's ptrace rule still keeps `environ`, `mem`,
/// `fd` and the like of processes outside the call unreadable, but command lines of other
/// processes stay visible.
pub const SYSTEM_READABLE: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/proc",
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
];

/// Files under [`SYSTEM_READABLE`] that hold secrets. They are root-only on a normal system,
/// which is not enough when Warden itself runs as root (containers, CI). The last component
/// may be a `*`/`?` pattern, matched against the directory's entries when the process starts.
pub const SYSTEM_DENIED: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*key",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
];

/// Device files programs open for reading and writing; no other device is reachable.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Toolchains, caches and configuration under the home directory that ordinary development
/// commands read (compilers, package managers, git). Read and execute only: nothing a call
/// does can change the user's toolchain. Credential stores are never on this list, and are
/// denied outright by [`HOME_DENIED`]; configuration files that may hold a token among
/// settings programs need are shown without it ([`HOME_SANITISED`]).
pub const HOME_READABLE: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".gitconfig",
    ".config/git",
    ".cache/pip",
    ".cache/uv",
    ".local/share/uv",
    ".pyenv",
    ".rbenv",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".local/bin",
    ".local/lib",
    "go/pkg/mod",
    ".cache/go-build",
    ".m2/repository",
    ".gradle/caches",
];

/// Credential stores under the home directory. Denied even when a granted tree contains
/// them: credentials inside [`HOME_READABLE`] trees, and all of them when the project is the
/// home directory itself (or contains it).
pub const HOME_DENIED: &[&str] = &[
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/git/credentials",
    ".git-credentials",
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".docker",
    ".kube",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".yarnrc",
    ".yarnrc.yml",
    ".gem/credentials",
    ".terraform.d",
    ".vault-token",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".claude/.credentials.json",
    ".claude.json",
];

/// Configuration files under the home directory that programs need (git's `user.name`,
/// cargo's build settings) and that may also hold a credential (`http.extraHeader`, a token
/// in a remote's URL, cargo's `registry.token`). A call sees a copy without every line that
/// names a token, password, secret or authorisation header, or holds a URL with a password
/// (see [`Confinement::sanitise`]); a file with no such line is shown as it is.
pub const HOME_SANITISED: &[&str] = &[
    ".gitconfig",
    ".config/git/config",
    ".cargo/config.toml",
    ".cargo/config",
];

/// Shell start-up files in the home directory: read-only for a call whose writable tree
/// holds them (a project at the home directory or above it), and removed after the call if
/// it created them.
pub const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
];

/// Secrets in a project: unreadable and unwritable even though the project is writable.
pub const PROJECT_DENIED: &[&str] = &[".env", ".env.*"];

/// Files in a project that make later, unconfined programs do something: git configuration
/// and hooks run by the user's next `git` command, and Claude Code settings and MCP servers
/// loaded by the next session. A call can never leave them changed (see the crate docs for
/// how).
pub const PROJECT_PROTECTED: &[&str] = &[
    ".git/config",
    ".git/hooks",
    ".claude/settings*.json",
    ".mcp.json",
];

/// Paths in a project that later programs load or run, read-only for the call (see
/// [`Confinement::read_only`]): Claude Code's project directory (settings, hooks, commands,
/// agents, skills; `.claude/worktrees` stays writable when it exists), MCP servers, and git
/// hooks run by husky. Every repository directory in the project is protected too: see
/// [`Confinement::project`].
pub const PROJECT_READ_ONLY: &[&str] = &[".claude", ".mcp.json", ".husky"];

/// Paths inside [`PROJECT_READ_ONLY`] ones that stay writable when they exist.
pub const PROJECT_WRITABLE_INSIDE: &[&str] = &[".claude/worktrees"];

/// Entries in a project protected as entries (see [`Confinement::protect_entry`]): `.git`
/// as a file points git at another repository (worktrees, submodules); as a directory it must
/// stay the same directory.
pub const PROJECT_PROTECTED_ENTRIES: &[&str] = &[".git"];

/// How much of one process tree's view a path gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Deny,
    Read,
    Write,
}

/// What a confined program, and everything it starts, may do. Build one per call (or clone
/// a template), then [`confine`](Confinement::confine) the command.
///
/// Paths must be absolute. Read and write grants cover the whole tree below them; a denied
/// path inside a granted tree takes that part away (the tree is then granted entry by entry,
/// see the crate docs). Paths that do not exist when the process starts are skipped.
#[derive(Debug, Clone)]
pub struct Confinement {
    pub(crate) paths: Vec<(PathBuf, Level)>,
    pub(crate) protected: Vec<(PathBuf, Depth)>,
    /// Read-only paths, and whether they are carved out of the rules when there is no mount
    /// namespace.
    pub(crate) read_only: Vec<(PathBuf, bool)>,
    /// Project roots searched for repositories and virtualenvs when the call starts.
    pub(crate) projects: Vec<PathBuf>,
    pub(crate) sanitise: Vec<PathBuf>,
    pub(crate) network: bool,
    pub(crate) unix_sockets: bool,
    pub(crate) allow_unscoped: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) private_temp: Option<PathBuf>,
    pub(crate) protect_limit: u64,
    pub(crate) abi_ceiling: Option<u32>,
    pub(crate) hide_with_mounts: bool,
    /// See [`Confinement::require_process_isolation`] (in `isolate.rs`).
    pub(crate) require_process_isolation: bool,
}

impl Default for Confinement {
    fn default() -> Self {
        Self::new()
    }
}

impl Confinement {
    /// Nothing readable, nothing writable, no network, a private temporary directory under
    /// the system one.
    pub fn new() -> Self {
        Confinement {
            paths: Vec::new(),
            protected: Vec::new(),
            read_only: Vec::new(),
            projects: Vec::new(),
            sanitise: Vec::new(),
            network: false,
            unix_sockets: false,
            allow_unscoped: false,
            timeout: None,
            private_temp: Some(std::env::temp_dir()),
            protect_limit: 16 << 20,
            abi_ceiling: None,
            hide_with_mounts: true,
            require_process_isolation: false,
        }
    }

    /// The usual confinement for a command run in a project: the system defaults, the home
    /// defaults, and the project writable with its secrets denied and its configuration
    /// protected.
    pub fn for_project(project: impl AsRef<Path>, home: Option<&Path>) -> Self {
        let c = Self::new().system_defaults();
        let c = match home {
            Some(h) => c.home_defaults(h),
            None => c,
        };
        c.project(project)
    }

    /// Adds [`SYSTEM_READABLE`], [`SYSTEM_DENIED`] and [`DEVICES`].
    pub fn system_defaults(mut self) -> Self {
        for p in SYSTEM_READABLE {
            self = self.read(p);
        }
        for p in DEVICES {
            self = self.write(p);
        }
        for p in SYSTEM_DENIED {
            self = self.deny(p);
        }
        self
    }

    /// Adds [`HOME_READABLE`], [`HOME_DENIED`] and [`HOME_SANITISED`] below `home`, and makes
    /// [`SHELL_STARTUP`] read-only (which matters only when a writable tree holds them).
    pub fn home_defaults(mut self, home: &Path) -> Self {
        for p in HOME_READABLE {
            self = self.read(home.join(p));
        }
        for p in HOME_DENIED {
            self = self.deny(home.join(p));
        }
        for p in HOME_SANITISED {
            self = self.sanitise(home.join(p));
        }
        for p in SHELL_STARTUP {
            self = self.read_only(home.join(p));
        }
        self
    }

    /// Makes `project` writable, denies [`PROJECT_DENIED`], makes [`PROJECT_READ_ONLY`]
    /// read-only and protects [`PROJECT_PROTECTED`] and [`PROJECT_PROTECTED_ENTRIES`] inside
    /// it. When the call starts, the project is also searched (breadth first, at most
    /// 100,000 entries, symlinks not followed, build outputs and caches left out: directories
    /// holding a `CACHEDIR.TAG` and `node_modules`) for repository directories (`.git`, and the
    /// repositories of their submodules and worktrees) and virtualenvs: each repository's
    /// `config`, `config.worktree`, `hooks`, `info`, `commondir` and `gitdir` are read-only
    /// (its objects, refs, index and logs stay writable, so git works), each `.git` file is
    /// read-only, and so is every `*.pth` file in a virtualenv's `site-packages`. After the
    /// call, a repository it created loses those entries and a `.git` file it created is
    /// removed (see the crate docs).
    pub fn project(mut self, project: impl AsRef<Path>) -> Self {
        let root = project.as_ref();
        self = self.write(root);
        for p in PROJECT_DENIED {
            self = self.deny(root.join(p));
        }
        for p in PROJECT_PROTECTED {
            self = self.protect(root.join(p));
        }
        for p in PROJECT_PROTECTED_ENTRIES {
            self = self.protect_entry(root.join(p));
        }
        for p in PROJECT_READ_ONLY {
            self = self.read_only(root.join(p));
        }
        for p in PROJECT_WRITABLE_INSIDE {
            let inside = root.join(p);
            if inside.is_dir() {
                self = self.write(inside);
            }
        }
        self.projects.push(root.to_path_buf());
        self
    }

    /// Makes `path` (a file or a whole directory; the last component may be a pattern)
    /// unwritable by the call even inside a writable tree: for files that later, unconfined
    /// programs run or obey (a hook's script, an MCP server's program, Warden's and Claude
    /// Code's own configuration). A path that exists when the call starts is bound onto
    /// itself read-only in the command's mount namespace, so it can be neither written nor
    /// removed, renamed or replaced; without a mount namespace it is carved read-only out of
    /// the rules, and put back after the call if it was moved away. A path that does not
    /// exist yet cannot be bound: whatever the call creates there is removed after it. A
    /// writable grant inside a read-only directory stays writable. Paths outside every
    /// writable tree need nothing and get nothing.
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push((path.into(), true));
        self
    }

    /// Shows the call a copy of the file `path` without the lines that may hold a credential
    /// (see [`HOME_SANITISED`]), when it has any: bound read-only over it in the command's
    /// mount namespace, or, without one, the file is denied (and for git,
    /// `GIT_CONFIG_GLOBAL` names the copy). The path must also be readable (a
    /// [`read`](Self::read) grant) for the copy to be read.
    pub fn sanitise(mut self, path: impl Into<PathBuf>) -> Self {
        self.sanitise.push(path.into());
        self
    }

    /// Lets the process read and execute everything below `path`.
    pub fn read(mut self, path: impl Into<PathBuf>) -> Self {
        self.paths.push((path.into(), Level::Read));
        self
    }

    /// Lets the process read, write, create and remove everything below `path`.
    pub fn write(mut self, path: impl Into<PathBuf>) -> Self {
        self.paths.push((path.into(), Level::Write));
        self
    }

    /// Takes `path` away from a granted tree: neither readable nor writable. The last
    /// component may be a `*`/`?` pattern; it is matched when the process starts, so a file
    /// created later under a matching name is not covered by the pattern (it is still
    /// unreadable when its directory was split around a denied entry; see the crate docs).
    pub fn deny(mut self, path: impl Into<PathBuf>) -> Self {
        self.paths.push((path.into(), Level::Deny));
        self
    }

    /// Keeps `path` (a file or a whole directory, present or not; the last component may be
    /// a pattern) from being left changed by the call: whatever the call does to it is undone
    /// by [`Guard::finish`](crate::Guard::finish) once every process of the call has ended.
    pub fn protect(mut self, path: impl Into<PathBuf>) -> Self {
        self.protected.push((path.into(), Depth::Whole));
        self
    }

    /// Like [`protect`](Self::protect) for a file, but a directory is kept only as itself:
    /// after the call it must be the same directory (not replaced, not a symlink), while
    /// its contents may change. A path absent before may become a directory, not a file.
    pub fn protect_entry(mut self, path: impl Into<PathBuf>) -> Self {
        self.protected.push((path.into(), Depth::Entry));
        self
    }

    /// Allows network access (off by default). Sockets of every family are then allowed, and
    /// Landlock's TCP rules are not used.
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Allows creating unix sockets while network is off (off by default: a unix socket
    /// reaches services outside the call, such as an SSH agent or the Docker daemon).
    /// `socketpair(2)` is always allowed.
    pub fn unix_sockets(mut self, allowed: bool) -> Self {
        self.unix_sockets = allowed;
        self
    }

    /// Accepts kernels before Landlock ABI 6 (Linux 6.12), where a confined process can still
    /// signal the user's other processes and reach abstract unix sockets (the latter only when
    /// [`unix_sockets`](Self::unix_sockets) is on). Without this, such kernels are an error.
    pub fn allow_unscoped(mut self, allowed: bool) -> Self {
        self.allow_unscoped = allowed;
        self
    }

    /// Ends every process of the call this long after it starts, even if the caller has lost
    /// track of it.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Where the private temporary directory is created (default: the system temporary
    /// directory), or `None` for no private temporary directory.
    pub fn private_temp_in(mut self, parent: Option<PathBuf>) -> Self {
        self.private_temp = parent;
        self
    }

    /// Most bytes kept to restore protected paths (default 16 MiB); more is an error, because
    /// a path that cannot be restored cannot be protected.
    pub fn protect_limit(mut self, bytes: u64) -> Self {
        self.protect_limit = bytes;
        self
    }

    /// Hides denied paths inside granted trees with a private mount namespace where the
    /// kernel allows it (default on), so the trees are granted whole; off, or where user
    /// namespaces are unavailable, they are carved out of the Landlock rules instead, with the
    /// limits the crate docs describe.
    pub fn hide_with_mounts(mut self, on: bool) -> Self {
        self.hide_with_mounts = on;
        self
    }

    /// Behaves as if the kernel offered at most this Landlock ABI. Only for tests of the
    /// unsupported-kernel path: it can only take features away.
    #[doc(hidden)]
    pub fn pretend_abi_at_most(mut self, abi: u32) -> Self {
        self.abi_ceiling = Some(abi);
        self
    }
}

/// Whether a file name matches a pattern with `*` (any run) and `?` (one character).
pub(crate) fn wildcard_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some(p);
            mark = n;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            n = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

pub(crate) fn is_pattern(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.as_encoded_bytes().iter().any(|&c| c == b'*' || c == b'?'))
}

/// Expands a path whose last component may be a pattern into the existing matches; a plain
/// path comes back as itself, whether it exists or not.
pub(crate) fn expand(path: &Path) -> Vec<PathBuf> {
    if !is_pattern(path) {
        return vec![path.to_path_buf()];
    }
    let (Some(dir), Some(pat)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| wildcard_match(pat.as_encoded_bytes(), e.file_name().as_encoded_bytes()))
        .map(|e| dir.join(e.file_name()))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::wildcard_match;

    #[test]
    fn wildcards() {
        for (p, n, want) in [
            (".env", ".env", true),
            (".env.*", ".env.local", true),
            (".env.*", ".env", false),
            ("settings*.json", "settings.json", true),
            ("settings*.json", "settings.local.json", true),
            ("settings*.json", "settings.json.bak", false),
            ("ssh_host_*key", "ssh_host_ed25519_key", true),
            ("ssh_host_*key", "ssh_host_ed25519_key.pub", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
        ] {
            assert_eq!(
                wildcard_match(p.as_bytes(), n.as_bytes()),
                want,
                "{p} vs {n}"
            );
        }
    }
}
