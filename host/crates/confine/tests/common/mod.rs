//! A project, a fake home and a directory outside both, all under one temporary directory.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use std::io::Read;

use warden_confine::{Child, Confinement, Program, Stdio};

pub const SECRET: &str = "SECRET-TOKEN-4711";

pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub project: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
    pub temp: PathBuf,
}

fn write(p: &Path, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let project = root.join("project");
    let outside = root.join("outside");
    let home = root.join("home");
    let temp = root.join("tmp");
    write(&project.join("README.md"), "readme text\n");
    write(&project.join("src/main.rs"), "fn main() {}\n");
    write(&project.join(".env"), &format!("TOKEN={SECRET}\n"));
    write(&project.join(".env.local"), &format!("LOCAL={SECRET}\n"));
    write(&outside.join("hostname"), &format!("{SECRET}\n"));
    write(&home.join(".ssh/id_ed25519"), &format!("{SECRET}\n"));
    write(&home.join(".aws/credentials"), &format!("{SECRET}\n"));
    write(
        &home.join(".cargo/credentials.toml"),
        &format!("token = \"{SECRET}\"\n"),
    );
    write(&home.join(".cargo/config.toml"), "[build]\n");
    write(
        &home.join(".gitconfig"),
        "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n",
    );
    std::fs::create_dir_all(&temp).unwrap();
    for d in [&root, &project, &outside, &home] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Fixture {
        _tmp: tmp,
        root,
        project,
        outside,
        home,
        temp,
    }
}

impl Fixture {
    pub fn confinement(&self) -> Confinement {
        Confinement::for_project(&self.project, Some(&self.home))
            .private_temp_in(Some(self.temp.clone()))
    }

    pub fn command(&self, argv: &[&str]) -> Command {
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..])
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("LC_ALL", "C");
        cmd
    }

    /// `argv` as [`Confinement::spawn`] takes it, with the environment of [`command`].
    pub fn program(&self, argv: &[&str]) -> Program {
        let mut p = Program::new(argv[0]);
        p.args(&argv[1..])
            .current_dir(&self.project)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("LC_ALL", "C")
            .stdin(Stdio::Null)
            .stdout(Stdio::Piped)
            .stderr(Stdio::Piped);
        p
    }

    /// Runs `argv` in the project under `c` through [`Confinement::spawn`]; returns its output
    /// and the protected paths the guard restored.
    pub fn run_with(&self, c: &Confinement, argv: &[&str]) -> (Output, Vec<PathBuf>) {
        let (mut child, guard) = c.spawn(&self.program(argv)).unwrap();
        let out = collect(&mut child);
        let restored = guard.finish().unwrap();
        (out, restored)
    }

    /// Like [`run_with`], through [`Confinement::confine`] and a [`Command`] (the supervised
    /// form).
    pub fn run_command_with(&self, c: &Confinement, argv: &[&str]) -> (Output, Vec<PathBuf>) {
        let mut cmd = self.command(argv);
        let guard = c.confine(&mut cmd).unwrap();
        let out = cmd.output().unwrap();
        let restored = guard.finish().unwrap();
        (out, restored)
    }

    pub fn run(&self, argv: &[&str]) -> Output {
        self.run_with(&self.confinement(), argv).0
    }

    pub fn sh(&self, script: &str) -> Output {
        self.run(&["/bin/sh", "-c", script])
    }
}

/// Reads a spawned child's piped output to the end and waits for it.
pub fn collect(child: &mut Child) -> Output {
    let read = |fd: Option<std::os::fd::OwnedFd>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(fd) = fd {
                let _ = std::fs::File::from(fd).read_to_end(&mut buf);
            }
            buf
        })
    };
    let (out, err) = (read(child.stdout.take()), read(child.stderr.take()));
    let status = child.wait().unwrap();
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn assert_no_secret(o: &Output, what: &str) {
    let all = format!("{}{}", stdout(o), String::from_utf8_lossy(&o.stderr));
    assert!(!all.contains(SECRET), "{what} leaked the secret: {all}");
}
