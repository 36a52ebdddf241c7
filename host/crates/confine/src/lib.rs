//! OS confinement for the programs Warden starts on behalf of WebAssembly tools.
//!
//! Checking a program's arguments cannot stop `sed -n 'r .env' README.md`,
//! `find . -exec cat {} \;` or `python3 script.py` from reading a secret, nor `setsid` from
//! leaving a process behind. This crate confines the process itself, and every process it
//! starts, with kernel features an unprivileged user can use:
//!
//! | what | how | kernel |
//! |---|---|---|
//! | files: read/execute only the granted trees, write only the writable ones | Landlock, every filesystem right of the ABI handled | ABI ≥ 3 (Linux 6.2), required |
//! | denied paths inside granted trees (`.env`, `secrets/`) hidden, so the trees are granted whole | a private mount namespace (inside a user namespace mapping only the caller's uid and gid, unless root): an empty read-only tmpfs over a denied directory, a read-only `nodev` bind of `/dev/null` over a denied file (opening it fails), hard links to it in the directories on the way covered too; mount and namespace system calls refused by seccomp, mount changes by Landlock | user namespaces allowed (else carving, below); [`hides_with_mounts`] |
//! | hard links and renames that would expose a denied file | Landlock `REFER` (a file may not gain rights by moving) | ABI ≥ 2 |
//! | `truncate(2)` outside writable trees | Landlock `TRUNCATE` | ABI ≥ 3 |
//! | device ioctls outside granted devices | Landlock `IOCTL_DEV` | ABI ≥ 5, when available |
//! | TCP bind/connect when network is off | Landlock net rules | ABI ≥ 4, when available |
//! | every other socket family (UDP, raw, netlink, packet, unix) when network is off | seccomp filter on `socket(2)`, `io_uring_setup(2)` refused | any kernel with seccomp, required |
//! | signals and abstract unix sockets reaching processes outside the call | Landlock scoping | ABI ≥ 6 (Linux 6.12), required unless [`Confinement::allow_unscoped`] |
//! | seeing processes outside the call: their `/proc` (command lines, environment as root), their numbers | a PID namespace per call, with its own `/proc` mounted in the command's mount namespace (inside a user namespace mapping only the caller's uid and gid, unless root) | user namespaces allowed (else the caller's `/proc`, below); [`isolates_processes`] |
//! | renicing, re-limiting (`prlimit`), re-pinning (`taskset`), re-scheduling or `ionice` of other processes, Warden's own limits | seccomp: `setpriority`, `ioprio_set`, `sched_setaffinity`, `sched_setscheduler`, `sched_setparam`, `sched_setattr` only on the caller itself, `prlimit64` only on itself or to read | any kernel with seccomp |
//! | capabilities (as root: reading any process's memory and environment, fanotify, file handles, raw devices, modules) | every capability dropped in the command after its mounts (bounding set, ambient, inheritable, permitted, effective), securebits locked so executing as uid 0 gives none back | any |
//! | kernel interfaces past the file rules: fanotify, `open_by_handle_at`/`name_to_handle_at`, BPF, perf events, modules, kexec, keyrings (`keyctl`, `add_key`, `request_key`: the session keyring is shared with the caller), `userfaultfd` | seccomp refuses them (`EPERM`); system calls of a foreign architecture (32-bit or x32 on x86-64) kill | any kernel with seccomp |
//! | descriptors Warden holds (a file the rules refuse, a socket while network is off) | every descriptor above 2 closed on exec (`close_range`) | Linux 5.11 |
//! | setuid programs gaining rights | `no_new_privs` | any |
//! | processes outliving the call (`setsid`, double forks, daemons) | [`Confinement::spawn`]: the command is process 1 of its PID namespace, and the kernel kills the rest of the namespace when it exits; [`Confinement::confine`]: a supervisor process that ends the call's PID namespace (killing its init kills every process in it), or without one is a child subreaper that kills what is left and reaps it | any (`PR_SET_CHILD_SUBREAPER`, Linux 3.4) |
//! | a private temporary directory per call, emptied after it (and reset: mode, times, extended attributes) before this process's next call gets it, removed when the process exits (see the `temp` module) | `TMPDIR`, `TMP`, `TEMP` point to it | any |
//! | files later, unconfined programs run or obey changed: every repository's `config`, `config.worktree`, `hooks`, `info`, `commondir`, `gitdir` (submodules' and worktrees' too), `.git` files, `.claude/`, `.mcp.json`, `.husky/`, virtualenvs' `*.pth`, shell start-up files, [`Confinement::read_only`] paths | bound onto themselves read-only in the private mount namespace: writing fails (`EROFS`), removing, renaming or replacing them or a repository directory fails (`EBUSY`); what does not exist yet is removed after the call if the call created it; a repository the call creates loses its configuration and hooks after it | user namespaces allowed; else carved read-only, with repository entries and `*.pth` restored after the call |
//! | credentials in configuration programs need (`~/.gitconfig`, `~/.cargo/config.toml`, [`HOME_SANITISED`]) | a copy without the lines that may hold one, bound over the file; carved: the file denied, git pointed at the copy (`GIT_CONFIG_GLOBAL`) | any |
//!
//! Where the kernel cannot give what is asked, [`Confinement::confine`] fails with
//! [`ConfineError::Unsupported`], which says what is missing and how to opt out
//! ([`OPT_OUT_HINT`]); it never runs the program unconfined. [`status`] tells what the running
//! kernel enforces.
//!
//! # Using it
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::process::Command;
//! use warden_confine::Confinement;
//!
//! let project = std::path::Path::new("/home/me/project");
//! let c = Confinement::for_project(project, Some(std::path::Path::new("/home/me")));
//! let mut cmd = Command::new("cat");
//! cmd.arg("README.md").current_dir(project);
//! let guard = c.confine(&mut cmd)?;
//! let out = cmd.output()?;          // the supervisor exits once every process has ended
//! let restored = guard.finish()?;   // protected paths the call changed, now put back
//! # let _ = (out, restored); Ok(()) }
//! ```
//!
//! [`Confinement::spawn`] starts a [`Program`] instead, without copying the caller's memory
//! (`clone(CLONE_VM | CLONE_VFORK)`, as `posix_spawn` does; see the `spawn` module): the
//! cheaper way where a PID namespace is available, and the one Warden uses for every program
//! that runs for one call (the `exec` capability, command hooks). Its [`Child`] is waited for
//! with [`Child::wait`] (or `wait_async` with the `tokio` feature) and ended with
//! [`Child::end`].
//!
//! With `tokio::process::Command`, confine `cmd.as_std_mut()`. The child the caller sees is
//! the supervisor: to end a call early (timeout, cancellation) send it SIGTERM with
//! [`end_call`], which kills the whole tree. Do not SIGKILL the supervisor (tokio's
//! `kill_on_drop`, `Child::kill`, a process-group kill): with a PID namespace every process
//! of the call dies with it (the namespace's init is killed when the supervisor dies), but
//! without one, processes that left the command's session would survive.
//! [`Confinement::timeout`] is a backstop the supervisor enforces itself.
//!
//! # A PID namespace where possible, a subreaper always
//!
//! A PID namespace hides every other process (and their `/proc`) from the call and ends it
//! whole, with no `/proc` scan: killing its init kills every process in it. Unprivileged it
//! needs a user namespace, which several distributions turn off (Ubuntu's AppArmor
//! restriction, `kernel.unprivileged_userns_clone=0`, `user.max_user_namespaces=0`); there
//! the supervisor is a subreaper instead, the call sees the caller's `/proc`, and ends by
//! scanning `/proc` for what is left. The namespace's init is started with
//! `clone(CLONE_VM)`, which copies no memory, so the namespace costs no extra fork.
//!
//! # Why no capabilities, rather than another uid, when root
//!
//! As root the command keeps uid 0 but holds no capability: it still owns the files root
//! owns (the project, when root made it), which a switch to an unprivileged uid would lose;
//! it can no longer bypass file permissions, read other processes' memory or environment,
//! or use fanotify, file handles, raw devices or modules. The securebits `NOROOT` and
//! `NO_SETUID_FIXUP`, locked, keep `exec` from giving capabilities back to uid 0.
//!
//! # Limits
//!
//! - Rules are about paths, fixed when the process starts. Where a private mount namespace
//!   is available ([`hides_with_mounts`]), a denied path inside a granted tree is covered by
//!   a mount in the command's namespace and the tree stays one rule. A covered file shows in
//!   `stat` and listings as a character device (`/dev/null`'s mode) that cannot be opened; a
//!   covered directory as an empty one. Covered paths cannot be removed, renamed or linked
//!   (`EBUSY`, `EXDEV`). The covers follow names, not files: if another process renames or
//!   deletes a covered path on the host during the call, the kernel drops the cover and the
//!   call can reach what is then at that name; a hard link to a denied file elsewhere than
//!   in the directories between the granted tree and the file is not covered (as with
//!   carving). The same tree reached through another mount (a bind mount of the project
//!   elsewhere that is also granted) is not covered. Without a private mount namespace
//!   ([`Confinement::hide_with_mounts`] off, or user namespaces disabled:
//!   `kernel.unprivileged_userns_clone=0`, Ubuntu's AppArmor restriction,
//!   `user.max_user_namespaces=0`), and for a denied path with a grant below it, a denied
//!   path is carved out: the tree's other entries are granted one by one, recursively down
//!   to it. The directories on the way (the project root when it holds `.env`) keep only
//!   listing, creating, removing and moving entries, so a file or directory created there
//!   later, by this call or another process, cannot be read or written by this call: a
//!   call cannot create and then use a new file directly in such a directory (`git init`
//!   or `cargo build` in a project root holding `.env` fails), but can in any subdirectory
//!   that existed at spawn time, and the next call sees the new entry and grants it. Names
//!   of entries in a denied directory can be listed, and a denied file can be deleted
//!   (never read). A read-only grant inside a writable tree is always carved.
//! - A denied pattern (`.env.*`) is matched when the process starts; a matching file
//!   created later by another process is readable by the call where paths are hidden by
//!   mounts, and unreadable only because it lands in a carved directory where they are
//!   carved.
//! - The command process runs in its own mount namespace (and, unless root, user
//!   namespace: files of other users show as owned by `nobody`) and cannot call `mount`,
//!   `umount2`, the new mount API, `pivot_root`, `unshare` or `setns` (`EPERM`): programs
//!   that build their own sandbox with `unshare` fail; `clone` with namespace flags is not
//!   filtered (Landlock still refuses mount changes inside).
//! - Hard links: a covered file cannot be linked (`EXDEV`, the cover is another mount), and
//!   entries in the directories on the way that are the same file (device and inode) are
//!   covered too. Carved: a link to a denied file in another directory needs `REFER`, which
//!   Landlock refuses because the file would gain rights; a link in the same directory is
//!   just as denied, and when a later call carves that directory, entries that are the same
//!   file as a denied file, and symlinks, get no rule of their own.
//! - Read-only paths ([`Confinement::read_only`], [`PROJECT_READ_ONLY`], [`SHELL_STARTUP`],
//!   and in each project every repository's `config`, `config.worktree`, `hooks`, `info`,
//!   `commondir`, `gitdir`, `.git` files and virtualenvs' `*.pth`) are refused where a private
//!   mount namespace is available: each existing one is bound onto itself read-only, each
//!   repository directory onto itself as it is, so neither can be moved away or replaced
//!   (`EBUSY`) and another session reading them while the call runs sees the originals. git
//!   keeps working (objects, refs, index and logs stay writable); what writes a
//!   repository's configuration (`git config`, `git remote add`, `git push -u`) fails. A
//!   protected path that does not exist when the call starts cannot be bound: the call can
//!   create it (`.git/commondir`, a new `.claude/`, a new `*.pth`), other processes can see it
//!   during the call, and it is removed after the call (an editable `pip install` into a
//!   project's virtualenv loses its new `.pth`). A repository the call creates (`git init`,
//!   `cargo new`, a new submodule) keeps its objects but loses `config`, `hooks`, `info` and
//!   `gitdir` (a new worktree's `commondir` is reset to `../..`), and a `.git` file the call
//!   creates is removed. The project is searched for repositories and virtualenvs at most
//!   100,000 entries deep, breadth first, leaving out build outputs and caches (directories
//!   holding a `CACHEDIR.TAG`, such as cargo's `target`, and `node_modules`) that were there
//!   before the call: a repository deeper than that, or inside one of those, is not
//!   protected. A read-only
//!   file reached through a hard link made before the call, in a directory that is not
//!   read-only, is not covered (the file tools refuse writing such a link).
//! - Without a private mount namespace, read-only paths are carved read-only, which splits
//!   their directory as a denied path does (new files directly in it cannot be written), and
//!   repository entries and `*.pth` are not carved (that would stop git writing its index, or
//!   installs): they, and every read-only directory, are copied before and restored after the
//!   call, so during the call a process can change them and other processes see it. A
//!   directory the call moved away and replaced is put back (the replacement is moved aside
//!   under a `.replaced-by-call-…` name); one it deleted is rebuilt from the copy when it was
//!   copied whole, and is otherwise an error from [`Guard::finish`] the caller must report.
//! - Credentials in configuration files programs need are taken out line by line
//!   ([`HOME_SANITISED`]): a line naming a token, password, secret or authorisation header,
//!   or holding a URL with a password, is dropped, so a secret under another key name stays
//!   visible. Without a mount namespace the file is denied instead, with git pointed at the
//!   copy; cargo then fails to read its own configuration if it holds a token.
//! - Landlock does not control `stat(2)`, `chmod(2)`, `chown(2)` or `utimes(2)`: a confined
//!   process can see that a denied file exists and its size, and can change the mode of
//!   files it owns anywhere.
//! - `/tmp` and `/dev/shm` are not reachable: programs that ignore `TMPDIR`, and POSIX
//!   shared memory and named semaphores (Python's `multiprocessing` locks), fail.
//! - `/proc` is the call's own where a PID namespace is available ([`isolates_processes`]):
//!   only the call's processes are listed, process 1 is the namespace's init (a copy of the
//!   caller's memory that never runs the caller's code; its command line is wiped, its
//!   environment and memory are closed by Landlock's ptrace rule and, in Warden, by Warden
//!   being non-dumpable), and the command's parent shows as process 0. A grant below
//!   `/proc` other than `/proc` itself names the caller's instance and has no effect there;
//!   a denied path below `/proc` leaves the call's `/proc` unreadable. Without a PID
//!   namespace, other processes' command lines are visible (their environment, memory and
//!   descriptors are not: no capabilities, and a non-dumpable Warden).
//! - Other processes' priority, limits, CPUs and scheduling cannot be changed, nor those of
//!   the call's own processes by number (`renice -p $pid`, a thread's affinity by its id):
//!   only a call naming the caller itself (`nice`, `ulimit`, `taskset cmd`, `ionice cmd`)
//!   is allowed; programs that set a thread's affinity by its id get `EPERM`.
//! - As root the command holds no capabilities: files of other users are reachable only as
//!   their mode allows, ports below 1024 cannot be bound, `chown` to another user and
//!   `setuid` programs fail. 32-bit (and x32) programs are killed at their first system call.
//! - Only standard input, output and error are passed to the program: a descriptor the
//!   caller meant it to inherit is closed on exec.
//! - Pathname unix sockets are reachable when [`Confinement::unix_sockets`] or network is
//!   on: Landlock controls them only from ABI 9.
//! - If the Warden process itself dies, the supervisor lives on and ends the call when its
//!   command ends or at its deadline. If the supervisor is SIGKILLed, every process of the
//!   call dies with it where there is a PID namespace; without one, processes that left the
//!   command's session keep running (the command itself dies with the supervisor).
//! - No resource limits (processes, memory, CPU): those belong to the caller (`setrlimit` in
//!   its own `pre_exec`, cgroups).
//!
//! # Cost
//!
//! Per call: building the ruleset (one `open(O_PATH)` and one Landlock rule per grant and
//! per entry of a carved directory), copying protected paths, searching the project for
//! repositories before and after the call (one `statx` per directory while it is unchanged,
//! its listing read again only when it changed), two forks instead of one;
//! with a PID namespace also an `unshare`, init's `clone(CLONE_VM)` (no memory copied), and
//! in the command a mount namespace (when not already made for hiding), a `/proc` mount and
//! one Landlock rule, all skipped when no grant reaches `/proc`; without one, a `/proc` scan
//! when processes are left over. Carving is what costs: as root, the
//! default [`SYSTEM_DENIED`] list carves `/etc` (one rule per entry); for any other user
//! those root-owned files are already closed to the process, need no carve-out, and `/etc`
//! is one rule.
//!
//! Spawn and wait of `/bin/true`, p50, criterion (`cargo bench -p warden-confine`), one run
//! from before hiding by mounts (so carved),
//! Linux 6.18, Landlock ABI 7, as root, on 2 cores shared with other builds (load average
//! 4–9, so absolute numbers are inflated; the ratios are the point):
//!
//! | | p50 |
//! |---|---|
//! | unconfined | 1.7 ms |
//! | confined, `/usr` `/lib*` `/bin` only, no private temp | 4.1 ms |
//! | confined, [`Confinement::for_project`] (as root: 164 rules, `/etc` carved; project root carved around `.env`) | 13.8 ms |
//!
//! Where the time goes for the last row, carved (medians of 150 calls, same machine): `confine`
//! 2.9 ms (building 164 rules: ~190 `open`, ~350 `stat`), `spawn` 9.3 ms, wait 1.4 ms,
//! `finish` 0.3 ms. `landlock_restrict_self` itself takes 0.1–0.15 ms for 164 rules (0.03 ms
//! for 4); most of `spawn` is getting two forked processes scheduled on the overloaded cores.
//!
//! A later run (same machine, load average about 7, criterion's central estimate, 60 samples;
//! "carved" is [`Confinement::hide_with_mounts`] off):
//!
//! | | estimate |
//! |---|---|
//! | unconfined | 1.8 ms |
//! | confined, `/usr` `/lib*` `/bin` only, no private temp | 5.7 ms |
//! | confined, [`Confinement::for_project`], carved (as root: `/etc` and the project root carved) | 12.9 ms |
//! | confined, [`Confinement::for_project`], denied paths hidden by mounts (a mount namespace, one mount per denied path, nothing carved) | 9.7 ms |
//!
//! Hiding by mounts replaces the carving's `open`s, `stat`s and rules with one `unshare`, a
//! few `/proc/self` writes (unless root) and one mount per denied path in the forked command
//! process; the first call of a process also forks once to probe for it.
//!
//! What process isolation (the PID namespace with its own `/proc`, dropping capabilities,
//! closing descriptors, the larger seccomp filter) adds: the bench built without it and with
//! it, run in turn five times on a quieter machine (load average 1–3; criterion's central
//! estimate, 5 s each): [`Confinement::for_project`] 2.53–3.43 ms without, 2.85–4.28 ms
//! with, a median difference between neighbouring runs of 0.3 ms; `/usr` `/lib*` `/bin`
//! only (no grant reaches `/proc`, so no mount namespace) 1.59–1.92 ms and 1.47–2.01 ms, no
//! difference; unconfined 0.73–0.77 ms. Most of the added time is the `/proc` mount and its
//! teardown when the namespace ends.

#![cfg(target_os = "linux")]

mod child;
mod error;
mod hide;
pub mod hint;
mod isolate;
mod listing;
mod persist;
mod plan;
mod policy;
mod realpath;
mod reaper;
mod restore;
mod seccomp;
mod spawn;
mod support;
mod temp;

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::ABI;

pub use error::{ConfineError, OPT_OUT_HINT};
pub use policy::{
    Confinement, DEVICES, HOME_DENIED, HOME_READABLE, HOME_SANITISED, PROJECT_DENIED,
    PROJECT_PROTECTED, PROJECT_PROTECTED_ENTRIES, PROJECT_READ_ONLY, PROJECT_WRITABLE_INSIDE,
    SHELL_STARTUP, SYSTEM_DENIED, SYSTEM_READABLE,
};
pub use spawn::{Child, Program, SpawnError, Stdio, spawns_without_supervisor};
pub use support::{Support, status};

use support::{MIN_FS_ABI, SCOPE_ABI, kernel_for, support_for};

impl Confinement {
    /// What the kernel offers, lowered by a test's pretended ABI.
    fn support(&self) -> Support {
        let real = status();
        match self.abi_ceiling {
            Some(c) => support_for(real.landlock_abi.min(c), real.seccomp),
            None => real,
        }
    }

    /// Prepares `cmd` so the process it spawns is confined, and returns the [`Guard`] that
    /// must live until the process has been waited for. Fails, and leaves `cmd` untouched,
    /// when the kernel cannot enforce the confinement.
    ///
    /// Call it once per command, after setting its environment: it sets `TMPDIR`, `TMP` and
    /// `TEMP` (an `env_clear` afterwards would drop them).
    pub fn confine(&self, cmd: &mut Command) -> Result<Guard, ConfineError> {
        let Prepared {
            mut guard,
            plan,
            ruleset,
            env,
        } = self.prepare()?;
        for (var, value) in &env {
            cmd.env(var, value);
        }
        guard.ruleset = Some(ruleset);
        // SAFETY: `child::run` only makes async-signal-safe system calls on memory prepared
        // here (see its module docs); the ruleset descriptor stays open while the guard lives.
        unsafe {
            cmd.pre_exec(move || child::run(&plan));
        }
        Ok(guard)
    }

    /// Everything a confined call needs before its process starts: the ruleset, the plan the
    /// forked code follows, the variables to set, and the guard that undoes it afterwards.
    fn prepare(&self) -> Result<Prepared, ConfineError> {
        let s = self.support();
        let unsupported = |needed: u32, feature: &'static str| ConfineError::Unsupported {
            abi: s.landlock_abi,
            needed,
            kernel: kernel_for(needed),
            feature,
        };
        if !s.filesystem {
            return Err(unsupported(
                MIN_FS_ABI,
                "limiting files to the granted paths",
            ));
        }
        if !s.scoping && !self.allow_unscoped {
            return Err(unsupported(
                SCOPE_ABI,
                "keeping signals and abstract unix sockets inside the call",
            ));
        }
        if !self.network && !s.seccomp {
            return Err(ConfineError::NoSeccomp);
        }
        let abi = ABI::from(i32::try_from(s.landlock_abi).unwrap_or(i32::MAX));

        let mounts = self.hide_with_mounts && hide::available();
        // Each path resolved once while the call is prepared (see `realpath::Memo`).
        let _memo = realpath::Memo::start();
        let writable: Vec<PathBuf> = self
            .paths
            .iter()
            .filter(|(_, l)| *l == policy::Level::Write)
            .filter_map(|(p, _)| realpath::canonicalize(p).ok())
            .collect();
        let prepared = persist::Request {
            read_only: &self.read_only,
            projects: &self.projects,
            writable: &writable,
            mounts,
        }
        .prepare()?;
        let mut protected = without_bound(&self.protected, &prepared.targets, mounts);
        protected.extend(prepared.protect);
        // Shallower first: a directory rebuilt whole is in place before paths inside it.
        protected.sort_by_key(|(p, _)| p.components().count());
        let snapshots = restore::take(&protected, self.protect_limit)?;
        let temp = match &self.private_temp {
            Some(parent) => Some(temp::take(parent)?),
            None => None,
        };
        let mut guard = Guard {
            ruleset: None,
            temp,
            snapshots,
            after: prepared.after,
            scratch: None,
            finished: false,
        };
        let sanitised =
            persist::sanitised_copies(&self.sanitise, mounts, &mut guard.scratch, || {
                make_temp(&std::env::temp_dir())
            })?;
        let mut paths = self.paths.clone();
        paths.extend(prepared.carve.into_iter().map(|p| (p, policy::Level::Read)));
        paths.extend(sanitised.deny.into_iter().map(|p| (p, policy::Level::Deny)));
        paths.extend(sanitised.read.into_iter().map(|p| (p, policy::Level::Read)));
        let extras = plan::Extras {
            abi,
            deny_tcp: !self.network && s.tcp,
            scope: s.scoping,
            temp: guard.temp.as_ref().map(|t| t.path.as_path()),
            hide: mounts,
        };
        let built = plan::build(&paths, &extras)?;
        let mut targets = built.covers;
        targets.extend(prepared.targets);
        targets.extend(sanitised.targets);
        let targets = persist::merge(targets);
        let hide = (!targets.is_empty()).then(|| hide::Plan {
            ns: hide::Namespace::for_this_process(),
            targets,
        });
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = sanitised
            .env
            .iter()
            .map(|(k, v)| ((*k).into(), v.clone().into_os_string()))
            .collect();
        let ruleset: Option<OwnedFd> = built.ruleset.into();
        let ruleset = ruleset.ok_or_else(|| {
            ConfineError::Ruleset("the kernel returned no ruleset descriptor".into())
        })?;
        let pid = match isolate::available() {
            true => Some(isolate::PidPlan::for_this_process(self.proc_access(abi))),
            false if self.require_process_isolation => {
                return Err(ConfineError::NoProcessIsolation);
            }
            false => None,
        };
        let plan = child::ChildPlan {
            ruleset_fd: ruleset.as_raw_fd(),
            filter: s
                .seccomp
                .then(|| seccomp::filter(self.network, self.unix_sockets).into()),
            timeout: self.timeout,
            hide,
            pid,
        };
        if let Some(t) = &guard.temp {
            for var in ["TMPDIR", "TMP", "TEMP"] {
                env.push((var.into(), t.path.clone().into()));
            }
        }
        Ok(Prepared {
            guard,
            plan,
            ruleset,
            env,
        })
    }
}

/// What [`Confinement::prepare`] hands to the code that starts the process.
struct Prepared {
    guard: Guard,
    plan: child::ChildPlan,
    /// Kept open until the process has applied it.
    ruleset: OwnedFd,
    /// Variables the program must see (private temp directory, sanitised configuration).
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

impl Confinement {
    /// Landlock rights for a call's own `/proc`: read, when the caller granted `/proc` and
    /// denied nothing inside it (a denial there names the caller's instance, so it could not
    /// be kept), else none; `None` when no grant reaches `/proc` (neither the caller's nor a
    /// new one would be readable, so none is mounted). A grant above `/proc` (`/`) covers the
    /// new one by itself.
    fn proc_access(&self, abi: ABI) -> Option<u64> {
        use landlock::AccessFs;
        let proc = Path::new("/proc");
        let granted = |exact: bool| {
            self.paths.iter().any(|(p, l)| {
                *l != policy::Level::Deny && (p == proc || (!exact && proc.starts_with(p)))
            })
        };
        if !granted(false) {
            return None;
        }
        let granted = granted(true);
        let denied_inside = self
            .paths
            .iter()
            .any(|(p, l)| *l == policy::Level::Deny && p.starts_with(proc));
        Some(if granted && !denied_inside {
            AccessFs::from_read(abi).bits()
        } else {
            0
        })
    }
}

/// The protected paths that still need a copy: those the call's mount namespace does not
/// bind read-only. A path bound read-only (or inside a directory bound read-only) cannot be
/// written, created, removed, renamed or replaced by the call, so copying it before the call
/// and comparing it after would only cost time. A path that does not exist yet keeps its
/// entry: the call could create it, and it is removed after the call.
fn without_bound(
    protected: &[(PathBuf, restore::Depth)],
    targets: &[hide::Target],
    mounts: bool,
) -> Vec<(PathBuf, restore::Depth)> {
    use std::os::unix::ffi::OsStrExt;
    if !mounts {
        return protected.to_vec();
    }
    let bound: Vec<&Path> = targets
        .iter()
        .filter(|t| t.mount == hide::Mount::ReadOnly)
        .map(|t| Path::new(std::ffi::OsStr::from_bytes(t.path.as_bytes())))
        .collect();
    if bound.is_empty() {
        return protected.to_vec();
    }
    protected
        .iter()
        .filter(|(p, _)| {
            // A pattern's matches live in its directory; that directory must be bound.
            let probe = if policy::is_pattern(p) {
                p.parent()
            } else {
                Some(p.as_path())
            };
            match probe.and_then(|q| realpath::canonicalize(q).ok()) {
                Some(real) => !bound.iter().any(|b| real.starts_with(b)),
                None => true,
            }
        })
        .cloned()
        .collect()
}

/// Whether each call gets a PID namespace of its own, with its own `/proc` (see the crate
/// docs); where not, the call sees the caller's `/proc`. Probed once per process.
pub fn isolates_processes() -> bool {
    isolate::available()
}

/// Whether denied paths inside granted trees are hidden with a private mount namespace in
/// this process (see [`Confinement::hide_with_mounts`]), rather than carved out of the
/// Landlock rules. Probed once per process.
pub fn hides_with_mounts() -> bool {
    hide::available()
}

/// Creates a fresh 0700 directory below `parent`.
fn make_temp(parent: &Path) -> Result<PathBuf, ConfineError> {
    use std::os::unix::fs::DirBuilderExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("warden-call-{}-{n}-{nanos:x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(ConfineError::path(parent, e)),
        }
    }
    Err(ConfineError::path(
        parent,
        last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::AlreadyExists)),
    ))
}

/// Ends a confined call early: asks its supervisor (the child the caller spawned) to kill
/// every process of the call. The supervisor then exits as killed by SIGKILL.
pub fn end_call(supervisor_pid: u32) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(supervisor_pid)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) has no memory effects; a stale pid yields ESRCH.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Keeps what a confined call needs until it has ended: the ruleset until spawn, the private
/// temporary directory, the copies of protected paths. Call [`finish`](Guard::finish) after
/// waiting for the child; dropping the guard does the same but loses the errors.
#[derive(Debug)]
pub struct Guard {
    ruleset: Option<OwnedFd>,
    temp: Option<temp::TempDir>,
    snapshots: Vec<restore::Snapshot>,
    /// Repositories known when the call started.
    after: persist::After,
    /// Copies of configuration files without their credentials.
    scratch: Option<PathBuf>,
    finished: bool,
}

impl Guard {
    /// The call's private temporary directory, if it has one.
    pub fn temp_dir(&self) -> Option<&Path> {
        self.temp.as_ref().map(|t| t.path.as_path())
    }

    /// Restores protected paths, takes configuration and hooks out of repositories the call
    /// created, and removes the temporary directory. Call it only after the child (the
    /// supervisor) has been waited for: every process of the call has ended then. Returns
    /// the protected paths the call had changed (now restored), so the caller can tell the
    /// user.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, ConfineError> {
        self.cleanup()
    }

    fn cleanup(&mut self) -> Result<Vec<PathBuf>, ConfineError> {
        self.finished = true;
        self.ruleset = None;
        let mut changed = Vec::new();
        let mut first_err = None;
        for s in &self.snapshots {
            match s.restore() {
                Ok(true) => changed.push(s.path().to_path_buf()),
                Ok(false) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match self.after.check() {
            Ok(paths) => changed.extend(paths),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
        if let Some(t) = self.temp.take() {
            let path = t.path.clone();
            if let Err(e) = temp::give_back(t) {
                first_err.get_or_insert(ConfineError::path(path, e));
            }
        }
        if let Some(t) = self.scratch.take()
            && let Err(e) = std::fs::remove_dir_all(&t)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            first_err.get_or_insert(ConfineError::path(t, e));
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(changed),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.cleanup();
        }
    }
}
