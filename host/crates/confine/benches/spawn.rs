//! Spawn and wait of `/bin/true`, unconfined and confined, in one run.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

#[cfg(not(target_os = "linux"))]
fn main() {}

#[cfg(target_os = "linux")]
criterion::criterion_main!(linux::benches);

#[cfg(target_os = "linux")]
mod linux {
    use std::path::Path;
    use std::process::{Command, Stdio};

    use criterion::{Criterion, criterion_group};
    use warden_confine::Confinement;

    fn command(dir: &Path) -> Command {
        let mut cmd = Command::new("/bin/true");
        cmd.current_dir(dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn spawn(c: &mut Criterion) {
        let tmp = tempfile::tempdir().expect("temporary directory");
        let project = tmp.path().join("project");
        let home = tmp.path().join("home");
        for d in [project.join("src"), home.join(".cargo")] {
            std::fs::create_dir_all(d).expect("fixture directory");
        }
        std::fs::write(project.join("README.md"), "x").expect("fixture file");
        std::fs::write(project.join(".env"), "SECRET=1").expect("fixture file");
        let whole = Confinement::for_project(&project, Some(&home));

        let mut g = c.benchmark_group("spawn_wait_true");
        g.sample_size(60);
        g.bench_function("unconfined", |b| {
            b.iter(|| {
                let st = command(&project).status().expect("spawn");
                assert!(st.success());
            })
        });
        g.bench_function("confined_default_project", |b| {
            b.iter(|| {
                let mut cmd = command(&project);
                let guard = whole.confine(&mut cmd).expect("confine");
                let st = cmd.status().expect("spawn");
                guard.finish().expect("finish");
                assert!(st.success());
            })
        });
        // As the `exec` capability and command hooks start programs: `Confinement::spawn`,
        // no supervisor, the command process 1 of its own PID namespace.
        g.bench_function("spawned_default_project", |b| {
            b.iter(|| {
                let mut p = warden_confine::Program::new("/bin/true");
                p.current_dir(&project)
                    .env("PATH", "/usr/bin:/bin")
                    .stdin(warden_confine::Stdio::Null)
                    .stdout(warden_confine::Stdio::Null)
                    .stderr(warden_confine::Stdio::Null);
                let (mut child, guard) = whole.spawn(&p).expect("spawn");
                let st = child.wait().expect("wait");
                guard.finish().expect("finish");
                assert!(st.success());
            })
        });
        let carved = Confinement::for_project(&project, Some(&home)).hide_with_mounts(false);
        g.bench_function("confined_default_project_carved", |b| {
            b.iter(|| {
                let mut cmd = command(&project);
                let guard = carved.confine(&mut cmd).expect("confine");
                let st = cmd.status().expect("spawn");
                guard.finish().expect("finish");
                assert!(st.success());
            })
        });
        let bare = Confinement::new()
            .read("/usr")
            .read("/lib")
            .read("/lib64")
            .read("/bin")
            .private_temp_in(None);
        g.bench_function("confined_minimal", |b| {
            b.iter(|| {
                let mut cmd = command(&project);
                let guard = bare.confine(&mut cmd).expect("confine");
                let st = cmd.status().expect("spawn");
                guard.finish().expect("finish");
                assert!(st.success());
            })
        });
        // A project the size of a small crate workspace: a repository and 400 directories,
        // searched for repositories before and after every call.
        let repo = tmp.path().join("repo");
        for i in 0..20 {
            for j in 0..20 {
                std::fs::create_dir_all(repo.join(format!("src/m{i}/s{j}"))).expect("fixture");
                std::fs::write(repo.join(format!("src/m{i}/s{j}/lib.rs")), "x").expect("fixture");
            }
        }
        for d in [".git/hooks", ".git/info", ".git/objects", ".git/refs"] {
            std::fs::create_dir_all(repo.join(d)).expect("fixture");
        }
        std::fs::write(repo.join(".git/config"), "[core]\n").expect("fixture");
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").expect("fixture");
        let in_repo = Confinement::for_project(&repo, Some(&home));
        g.bench_function("confined_project_with_repository_400_dirs", |b| {
            b.iter(|| {
                let mut cmd = command(&repo);
                let guard = in_repo.confine(&mut cmd).expect("confine");
                let st = cmd.status().expect("spawn");
                guard.finish().expect("finish");
                assert!(st.success());
            })
        });
        g.finish();
    }

    criterion_group!(benches, spawn);
}
