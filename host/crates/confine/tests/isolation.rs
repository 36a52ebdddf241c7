//! What a confined program can learn about, or do to, processes and descriptors outside its
//! call: their environment and command lines, their priority, limits and CPUs, Warden's own
//! limits, the caller's open descriptors, capabilities, and kernel interfaces that reach past
//! the file rules (fanotify, file handles, modules, BPF).
#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{Fixture, SECRET, assert_no_secret, fixture, stdout};
use warden_confine::Confinement;

/// A process outside the call, killed when dropped.
struct Outside(Child);

impl Outside {
    /// `sh -c 'sleep 60; : <SECRET>'` with the secret in its environment too, in a process
    /// group of its own.
    fn start() -> Outside {
        let child = Command::new("sh")
            .args(["-c", &format!("sleep 60; : {SECRET}")])
            .env("OUTSIDE_TOKEN", SECRET)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let o = Outside(child);
        // Until sh has exec'd, its command line is still the test's.
        for _ in 0..200 {
            if std::fs::read(format!("/proc/{}/cmdline", o.pid()))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(SECRET))
            {
                return o;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("the outside process did not start");
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn stat_field(&self, n: usize) -> String {
        let s = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let after = s.rsplit(')').next().unwrap();
        // Fields after the name start at 3 (state).
        after.split_whitespace().nth(n - 3).unwrap().to_string()
    }

    fn limits(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/limits", self.pid())).unwrap()
    }

    fn cpus(&self) -> String {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        s.lines()
            .find(|l| l.starts_with("Cpus_allowed_list"))
            .unwrap()
            .to_string()
    }

    fn ioprio(&self) -> i64 {
        const IOPRIO_WHO_PROCESS: i64 = 1;
        // SAFETY: ioprio_get reads nothing from this process's memory.
        unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, self.pid()) }
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Python interpreter's prefix and path, with a confinement that can run it.
fn python(f: &Fixture) -> (String, Confinement) {
    let probe = Command::new("python3")
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("python3 is needed for this test");
    let prefix = String::from_utf8_lossy(&probe.stdout).trim().to_string();
    let c = f.confinement().read(&prefix);
    (format!("{prefix}/bin/python3"), c)
}

/// Whether the call gets a PID namespace here; without one it sees the caller's `/proc`.
fn skip_without_pid_namespace() -> bool {
    if !warden_confine::isolates_processes() {
        eprintln!("no PID namespace for calls here: the call sees the caller's /proc");
        return true;
    }
    false
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn environments_and_command_lines_outside_the_call_are_unreadable() {
    if skip_without_pid_namespace() {
        return;
    }
    let f = fixture();
    let outside = Outside::start();
    let me = std::process::id();
    let o = outside.pid();
    for script in [
        format!("cat /proc/{me}/environ"),
        format!("cat /proc/{o}/environ"),
        format!("cat /proc/{o}/cmdline"),
        format!("cat /proc/{me}/cmdline"),
        "cat /proc/1/environ".to_string(),
        "cat /proc/$PPID/environ".to_string(),
        // The pattern matches the secret without containing it (grep's own command line).
        format!(
            "grep -a {}[{}] /proc/[0-9]*/cmdline /proc/[0-9]*/environ",
            &SECRET[..SECRET.len() - 1],
            &SECRET[SECRET.len() - 1..]
        ),
    ] {
        let argv = ["/bin/sh", "-c", script.as_str()];
        // Spawned, process 1 is the command itself: its own environment holds no secret.
        let own = script == "cat /proc/1/environ";
        let out = f.run(&argv);
        assert_no_secret(&out, &script);
        assert!(own || stdout(&out).is_empty(), "{script}: {out:?}");
        // Supervised, process 1 is the supervisor's init, which is not readable.
        let (out, _) = f.run_command_with(&f.confinement(), &argv);
        assert_no_secret(&out, &script);
        assert!(stdout(&out).is_empty(), "{script}: {out:?}");
    }
    // The outside process is not there at all, and process 1 is not the system's init: the
    // command itself when spawned, the supervisor's init (command line wiped) when supervised.
    let script = format!("test -e /proc/{o} && echo visible; tr -d '\\0' < /proc/1/cmdline");
    let out = f.sh(&script);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), format!("/bin/sh-c{script}"), "{out:?}");
    let (out, _) = f.run_command_with(&f.confinement(), &["/bin/sh", "-c", &script]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), "", "{out:?}");
    // Unconfined, the same reads work: the refusal is the confinement's.
    let plain = f
        .command(&["cat", &format!("/proc/{o}/cmdline")])
        .output()
        .unwrap();
    assert!(stdout(&plain).contains(SECRET));
}

#[test]
fn the_call_sees_only_its_own_processes() {
    let f = fixture();
    let required = f.confinement().require_process_isolation(true);
    let mut cmd = f.command(&["true"]);
    match required.confine(&mut cmd) {
        Ok(guard) => {
            assert!(warden_confine::isolates_processes());
            assert!(cmd.status().unwrap().success());
            guard.finish().unwrap();
        }
        Err(e) => {
            assert!(!warden_confine::isolates_processes());
            assert!(e.to_string().contains("PID namespace"), "{e}");
        }
    }
    if skip_without_pid_namespace() {
        return;
    }
    let _outside = Outside::start();
    let out = f.sh("sleep 5 & ls /proc | grep -c '^[0-9]'; kill $!");
    assert!(out.status.success(), "{out:?}");
    // The shell (process 1), sleep and ls (grep is counted while ls lists, or not).
    let n: u32 = stdout(&out).trim().parse().unwrap();
    assert!((3..=4).contains(&n), "{n} processes visible: {out:?}");
    // A grant of `/` reaches `/proc` too: the call's own is mounted there as well.
    let whole = Confinement::new().read("/").private_temp_in(None);
    let argv = ["sh", "-c", "ls /proc | grep -c '^[0-9]'"];
    // Spawned: the shell (process 1) and ls, and grep while ls lists, or not.
    let (out, _) = f.run_with(&whole, &argv);
    let n: u32 = stdout(&out).trim().parse().unwrap();
    assert!((2..=3).contains(&n), "{n} processes visible: {out:?}");
    // Supervised: the supervisor's init too.
    let (out, _) = f.run_command_with(&whole, &argv);
    let n: u32 = stdout(&out).trim().parse().unwrap();
    assert!((3..=4).contains(&n), "{n} processes visible: {out:?}");
    // /proc/self works in every process of the call.
    let selves = f.sh("readlink /proc/self/exe; sh -c 'read -r c < /proc/self/comm; echo $c'");
    assert_eq!(stdout(&selves), "/usr/bin/readlink\nsh\n", "{selves:?}");
}

#[test]
fn priority_limits_cpus_and_io_of_outside_processes_cannot_be_changed() {
    let f = fixture();
    let outside = Outside::start();
    let o = outside.pid();
    let (nice, limits, cpus, ioprio) = (
        outside.stat_field(19),
        outside.limits(),
        outside.cpus(),
        outside.ioprio(),
    );
    for script in [
        format!("renice -n 7 -p {o}"),
        format!("renice -n 7 -g {o}"),
        format!("prlimit --pid {o} --nofile=5:5"),
        format!("prlimit --pid {o} --cpu=1:1"),
        format!("taskset -p 1 {o}"),
        format!("ionice -c 3 -p {o}"),
        format!("ionice -c 3 -P {o}"),
        format!("chrt -i -p 0 {o}"),
    ] {
        let out = f.sh(&script);
        assert!(!out.status.success(), "{script}: {out:?}");
    }
    assert_eq!(outside.stat_field(19), nice);
    assert_eq!(outside.limits(), limits);
    assert_eq!(outside.cpus(), cpus);
    assert_eq!(outside.ioprio(), ioprio);

    // A process may still change its own.
    let own = f.sh(
        "nice -n 3 true && taskset -c 0 true && ionice -c 3 true && chrt -i 0 true \
         && prlimit --nofile=64:64 true && ulimit -n 32 && ulimit -n",
    );
    assert!(own.status.success(), "{own:?}");
    assert_eq!(stdout(&own), "32\n");
}

fn own_limit(resource: libc::__rlimit_resource_t) -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `r` only.
    assert_eq!(unsafe { libc::getrlimit(resource, &mut r) }, 0);
    (r.rlim_cur, r.rlim_max)
}

#[test]
fn the_call_cannot_lower_the_callers_limits() {
    let f = fixture();
    let me = std::process::id();
    let nofile = own_limit(libc::RLIMIT_NOFILE);
    let cpu = own_limit(libc::RLIMIT_CPU);
    for script in [
        format!("prlimit --pid {me} --nofile=3:3"),
        format!("prlimit --pid {me} --cpu=1:1"),
    ] {
        let out = f.sh(&script);
        assert!(!out.status.success(), "{script}: {out:?}");
    }
    // The system call itself, not only the tool.
    let (python, c) = python(&f);
    let script = "import ctypes, os, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        new = (ctypes.c_ulong * 2)(1, 1)\n\
        r = libc.prlimit(int(sys.argv[1]), int(sys.argv[2]), new, None)\n\
        print(r, ctypes.get_errno())\n";
    for resource in [libc::RLIMIT_CPU, libc::RLIMIT_NOFILE] {
        let (out, _) = f.run_with(
            &c,
            &[
                &python,
                "-c",
                script,
                &me.to_string(),
                &resource.to_string(),
            ],
        );
        assert_eq!(stdout(&out), format!("-1 {}\n", libc::EPERM), "{out:?}");
    }
    assert_eq!(own_limit(libc::RLIMIT_NOFILE), nofile);
    assert_eq!(own_limit(libc::RLIMIT_CPU), cpu);
    // And the restore after the call still ran (run_with finishes the guard).
    let (after, restored) = f.run_with(&f.confinement(), &["sh", "-c", "echo x > .mcp.json"]);
    assert!(after.status.success(), "{after:?}");
    assert_eq!(restored, vec![f.project.join(".mcp.json")]);
}

#[test]
fn descriptors_of_the_caller_are_not_inherited() {
    let f = fixture();
    let secret = std::ffi::CString::new(f.outside.join("hostname").to_str().unwrap()).unwrap();
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is closed below. Without
    // O_CLOEXEC on purpose: a descriptor some library opened carelessly.
    let file = unsafe { libc::open(secret.as_ptr(), libc::O_RDONLY) };
    assert!(file >= 0);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sock = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut accepted, _) = listener.accept().unwrap();
    // SAFETY: clears FD_CLOEXEC on a descriptor this test owns.
    assert_eq!(
        unsafe { libc::fcntl(sock.as_raw_fd(), libc::F_SETFD, 0) },
        0
    );
    let s = sock.as_raw_fd();
    let out = f.sh(&format!(
        "cat <&{file}; echo through-the-socket >&{s}; ls /proc/self/fd/{file} /proc/self/fd/{s}"
    ));
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(file) };
    drop(sock);
    assert_no_secret(&out, "an inherited file descriptor");
    assert!(!out.status.success(), "{out:?}");
    // The call has ended, so anything it wrote is there to read. Processes other tests
    // start meanwhile inherit the socket too and keep it open: no end-of-file is expected.
    accepted
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut got = [0u8; 64];
    match accepted.read(&mut got) {
        Ok(n) => assert_eq!(n, 0, "the call wrote to an inherited socket"),
        Err(e) => assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{e}"
        ),
    }
    // Standard streams are still passed.
    let mut cmd = f.command(&["sh", "-c", "read l; echo \"got $l\"; echo err >&2"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let guard = f.confinement().confine(&mut cmd).unwrap();
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"line\n").unwrap();
    let out = child.wait_with_output().unwrap();
    guard.finish().unwrap();
    assert_eq!(stdout(&out), "got line\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
}

fn status_field(status: &str, name: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn the_call_holds_no_capabilities() {
    let f = fixture();
    let out = f.run(&["cat", "/proc/self/status"]);
    assert!(out.status.success(), "{out:?}");
    let status = stdout(&out);
    let zero = "0000000000000000";
    for cap in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
        assert_eq!(status_field(&status, cap), zero, "{cap} {status}");
    }
    if is_root() || warden_confine::isolates_processes() {
        assert_eq!(status_field(&status, "CapBnd:"), zero, "{status}");
    }
    assert_eq!(status_field(&status, "NoNewPrivs:"), "1");
    // A root-owned program started from the call gains nothing either.
    let again = f.sh("sh -c 'grep ^Cap /proc/self/status'");
    for line in stdout(&again).lines() {
        assert!(line.ends_with(zero), "{line}");
    }
}

#[test]
fn fanotify_file_handles_modules_and_bpf_are_refused() {
    let f = fixture();
    let (python, c) = python(&f);
    // The handle of the hidden `.env`, learnt outside the call (fanotify would report it).
    let handle = Command::new(&python)
        .args([
            "-c",
            "import ctypes, os, sys\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             class H(ctypes.Structure):\n    _fields_ = [('n', ctypes.c_uint), ('t', ctypes.c_int), ('b', ctypes.c_ubyte * 128)]\n\
             h = H(); h.n = 128; m = ctypes.c_int()\n\
             if libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(h), ctypes.byref(m), 0) != 0:\n    sys.exit(os.strerror(ctypes.get_errno()))\n\
             print(h.t, bytes(h.b[:h.n]).hex())\n",
            f.project.join(".env").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(handle.status.success(), "{handle:?}");
    let handle = stdout(&handle);
    let (kind, bytes) = handle.trim().split_once(' ').unwrap();
    let open_by_handle = "import ctypes, os, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        class H(ctypes.Structure):\n    _fields_ = [('n', ctypes.c_uint), ('t', ctypes.c_int), ('b', ctypes.c_ubyte * 128)]\n\
        b = bytes.fromhex(sys.argv[2]); h = H(); h.n = len(b); h.t = int(sys.argv[1])\n\
        for i, x in enumerate(b): h.b[i] = x\n\
        mount = os.open('.', os.O_RDONLY | os.O_DIRECTORY)\n\
        fd = libc.open_by_handle_at(mount, ctypes.byref(h), os.O_RDONLY)\n\
        print(os.read(fd, 100).decode() if fd >= 0 else 'refused %d' % ctypes.get_errno())\n";
    let (out, _) = f.run_with(&c, &[&python, "-c", open_by_handle, kind, bytes]);
    assert_no_secret(&out, "open_by_handle_at");
    assert_eq!(
        stdout(&out),
        format!("refused {}\n", libc::EPERM),
        "{out:?}"
    );

    // Each call with arguments that would be harmless if it ran: it must not run at all.
    let calls: [(&str, libc::c_long); 11] = [
        ("fanotify_init", libc::SYS_fanotify_init),
        ("fanotify_mark", libc::SYS_fanotify_mark),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("kexec_load", libc::SYS_kexec_load),
        ("kexec_file_load", libc::SYS_kexec_file_load),
    ];
    let script = "import ctypes, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        for a in sys.argv[1:]:\n\
        \x20   name, nr = a.split('=')\n\
        \x20   r = libc.syscall(int(nr), -1, 0, 0, 0xffff0000, 0)\n\
        \x20   print(name, r, ctypes.get_errno() if r < 0 else 0)\n";
    let mut argv = vec![python.as_str(), "-c", script];
    let args: Vec<String> = calls.iter().map(|(n, nr)| format!("{n}={nr}")).collect();
    argv.extend(args.iter().map(String::as_str));
    let (out, _) = f.run_with(&c, &argv);
    assert!(out.status.success(), "{out:?}");
    let want: String = calls
        .iter()
        .map(|(n, _)| format!("{n} -1 {}\n", libc::EPERM))
        .collect();
    assert_eq!(stdout(&out), want, "{out:?}");
}

/// Keyring and page-fault interfaces: the session and user keyrings are shared with the
/// caller (a key another process of the user stored, such as a credential helper's token, is
/// readable by any process of that keyring), and `userfaultfd` is a tool for widening kernel
/// races. Each is refused; the key stored outside the call stays unreadable.
#[test]
fn keyrings_and_userfaultfd_are_refused() {
    let f = fixture();
    let (python, c) = python(&f);
    // A key in the user keyring, stored outside the call the way a credential helper would.
    let store = "import ctypes, os, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        d = sys.argv[2].encode()\n\
        k = libc.syscall(int(sys.argv[1]), b'user', b'warden-isolation-test', d, len(d), -4)\n\
        sys.exit(os.strerror(ctypes.get_errno()) if k < 0 else 0)\n";
    let stored = Command::new(&python)
        .args([
            "-c",
            store,
            &libc::SYS_add_key.to_string(),
            &format!("{SECRET}-{}", std::process::id()),
        ])
        .output()
        .unwrap();
    let keyring = stored.status.success();
    if !keyring {
        eprintln!("no keyring here ({stored:?}): only the refusals are checked");
    }
    // request_key finds it through the user keyring; KEYCTL_READ (11) reads it.
    let read = "import ctypes, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        req, ctl = int(sys.argv[1]), int(sys.argv[2])\n\
        k = libc.syscall(req, b'user', b'warden-isolation-test', None, 0)\n\
        if k < 0:\n    print('refused', ctypes.get_errno()); sys.exit(0)\n\
        buf = ctypes.create_string_buffer(256)\n\
        n = libc.syscall(ctl, 11, k, buf, 256)\n\
        print(buf.raw[:n].decode() if n > 0 else 'unreadable %d' % ctypes.get_errno())\n";
    let (out, _) = f.run_with(
        &c,
        &[
            &python,
            "-c",
            read,
            &libc::SYS_request_key.to_string(),
            &libc::SYS_keyctl.to_string(),
        ],
    );
    if keyring {
        // Leave nothing behind in the user's keyring: KEYCTL_INVALIDATE (21).
        let _ = Command::new(&python)
            .args([
                "-c",
                "import ctypes, sys\n\
                 libc = ctypes.CDLL(None)\n\
                 k = libc.syscall(int(sys.argv[1]), b'user', b'warden-isolation-test', None, 0)\n\
                 k >= 0 and libc.syscall(int(sys.argv[2]), 21, k)\n",
                &libc::SYS_request_key.to_string(),
                &libc::SYS_keyctl.to_string(),
            ])
            .status();
    }
    assert_no_secret(&out, "request_key and keyctl");
    assert_eq!(
        stdout(&out),
        format!("refused {}\n", libc::EPERM),
        "{out:?}"
    );

    let calls: [(&str, libc::c_long); 4] = [
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        ("userfaultfd", libc::SYS_userfaultfd),
    ];
    // Arguments that would be harmless if the call ran: KEYCTL_GET_KEYRING_ID (0) of the
    // session keyring (-3), no key type, no flags.
    let script = "import ctypes, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        for a in sys.argv[1:]:\n\
        \x20   name, nr = a.split('=')\n\
        \x20   r = libc.syscall(int(nr), 0, -3, 0, 0, 0)\n\
        \x20   print(name, r, ctypes.get_errno() if r < 0 else 0)\n";
    let mut argv = vec![python.as_str(), "-c", script];
    let args: Vec<String> = calls.iter().map(|(n, nr)| format!("{n}={nr}")).collect();
    argv.extend(args.iter().map(String::as_str));
    let (out, _) = f.run_with(&c, &argv);
    assert!(out.status.success(), "{out:?}");
    let want: String = calls
        .iter()
        .map(|(n, _)| format!("{n} -1 {}\n", libc::EPERM))
        .collect();
    assert_eq!(stdout(&out), want, "{out:?}");
}
