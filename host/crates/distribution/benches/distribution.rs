//! The per-install cost of distribution, with no network beyond loopback:
//!
//! - signature verification: parsing the envelope's public key and verifying an ed25519
//!   signature of a manifest digest (the goal is well under 1 ms);
//! - the pull of a signed plugin holding a 5 MiB component from Debian's `docker-registry` on
//!   loopback, cold (every blob downloaded and hashed) and cached (blobs read back from the
//!   digest cache and hashed again), each unpacked into a fresh directory. The registry is
//!   taken from `PATH` (`cargo test --release -p warden --test oci` installs it); without it,
//!   that group is skipped with a note.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use warden_distribution::{Options, PublicKey, Requirement, SecretKey};

fn verify(c: &mut Criterion) {
    let key = SecretKey::generate().expect("randomness");
    let line = key.public().to_line();
    let digest = format!("sha256:{}", "ab".repeat(32));
    let sig = key.sign_manifest(&digest);
    c.bench_function("signature verification per install", |b| {
        b.iter(|| {
            let k = PublicKey::parse(std::hint::black_box(&line)).expect("key");
            assert!(k.verify_manifest(std::hint::black_box(&digest), &sig));
        })
    });
}

/// `docker-registry serve` on a free loopback port; killed on drop.
struct Registry(Child, String);

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn registry(dir: &Path) -> Option<Registry> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .ok()?
        .port();
    let config = dir.join("config.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.join("storage").display()
        ),
    )
    .ok()?;
    let child = Command::new("docker-registry")
        .arg("serve")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let reg = Registry(child, format!("127.0.0.1:{port}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(&reg.1).is_err() {
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(reg)
}

fn install_5mib(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(reg) = registry(dir.path()) else {
        eprintln!("docker-registry is not on PATH: the install bench is skipped");
        return;
    };
    let plugin = dir.path().join("plugin");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("wasm")).expect("mkdir");
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name":"big","version":"1.0.0"}"#,
    )
    .expect("plugin.json");
    let mut wasm = b"\0asm\x0d\0\x01\0".to_vec();
    wasm.extend((0..5 * 1024 * 1024 - 8).map(|i| (i % 251) as u8));
    std::fs::write(plugin.join("wasm/big.wasm"), wasm).expect("wasm");
    let key = SecretKey::generate().expect("randomness");
    let reference = format!("{}/team/big:1.0", reg.1);
    let opts = Options::default();
    warden_distribution::oci::publish(&plugin, &reference, Some(&key), &opts).expect("publish");
    let req = Requirement {
        required_by: Some("the bench trusts its key".into()),
        keys: vec![key.public()],
    };
    let dests = tempfile::tempdir().expect("tempdir");
    let mut n = 0u64;
    let mut fresh = || {
        n += 1;
        dests.path().join(n.to_string())
    };
    let mut group = c.benchmark_group("install of a 5 MiB component from a loopback registry");
    group.sample_size(20);
    group.bench_function("cold", |b| {
        b.iter(|| {
            let dest = fresh();
            let p =
                warden_distribution::oci::pull(&reference, None, &req, &dest, &opts).expect("pull");
            assert_eq!(p.cached_blobs, 0);
            let _ = std::fs::remove_dir_all(&dest);
        })
    });
    let cache = dests.path().join("cache");
    let cached = Options {
        cache_dir: Some(cache),
        ..Options::default()
    };
    let warm = fresh();
    warden_distribution::oci::pull(&reference, None, &req, &warm, &cached).expect("warm");
    group.bench_function("cached", |b| {
        b.iter(|| {
            let dest = fresh();
            let p = warden_distribution::oci::pull(&reference, None, &req, &dest, &cached)
                .expect("pull");
            assert!(p.cached_blobs > 0);
            let _ = std::fs::remove_dir_all(&dest);
        })
    });
    group.finish();
}

criterion_group!(benches, verify, install_5mib);
criterion_main!(benches);
