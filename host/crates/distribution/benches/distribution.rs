//! The per-install cost of signature checking, with no registry: parsing the envelope's public
//! key and verifying an ed25519 signature of a manifest digest (the goal is well under 1 ms).
//! The install itself, from a registry on loopback, is measured by `tests/oci.rs`.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use warden_distribution::{PublicKey, SecretKey};

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

criterion_group!(benches, verify);
criterion_main!(benches);
