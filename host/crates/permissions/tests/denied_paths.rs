//! `Permissions::denied_paths`: the existing paths deny rules take away below some roots,
//! listed when a program starts so it can be confined by path.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::json;
mod common;

use common::{Tree, engine_with, tree};
use warden_permissions::{DeniedPaths, Mode, Permissions, PermissionsError};

fn touch(p: &Path) {
    if let Some(d) = p.parent() {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(p, "x\n").expect("write");
}

fn engine(t: &Tree, ask: &[&str], deny: &[&str]) -> Permissions {
    engine_with(
        &t.proj,
        &t.home(),
        json!({"ask": ask, "deny": deny}),
        Mode::Default,
    )
}

/// The denied paths below the project, and how many directory entries finding them took.
fn denied(t: &Tree, ask: &[&str], deny: &[&str], ask_denies: bool) -> (DeniedPaths, usize) {
    engine(t, ask, deny)
        .denied_paths_counted(std::slice::from_ref(&t.proj), ask_denies, 200_000)
        .expect("lists")
}

fn read_only(paths: &[PathBuf]) -> DeniedPaths {
    DeniedPaths {
        read: paths.to_vec(),
        write: Vec::new(),
    }
}

#[test]
fn a_literal_file_is_returned_without_a_search() {
    let t = tree();
    touch(&t.proj.join(".env"));
    touch(&t.proj.join("a/.env"));
    let (d, visited) = denied(&t, &[], &["Read(./.env)"], false);
    assert_eq!(d, read_only(&[t.proj.join(".env")]));
    assert_eq!(visited, 0);
}

#[test]
fn a_directory_rule_returns_the_directory_itself() {
    let t = tree();
    touch(&t.proj.join("secrets/a/key"));
    touch(&t.proj.join("secrets/b"));
    let (d, visited) = denied(&t, &[], &["Read(./secrets/**)"], false);
    assert_eq!(d, read_only(&[t.proj.join("secrets")]));
    assert_eq!(visited, 0);
}

#[test]
fn common_rules_do_not_search_the_tree() {
    let t = tree();
    for i in 0..50 {
        for j in 0..20 {
            touch(&t.proj.join(format!("src/m{i}/f{j}.rs")));
        }
    }
    touch(&t.proj.join(".env"));
    touch(&t.proj.join("secrets/k"));
    touch(&t.proj.join(".git/config"));
    let p = engine(
        &t,
        &[],
        &[
            "Read(./.env)",
            "Read(./secrets/**)",
            "Edit(./.git/**)",
            "Read(~/.ssh/**)",
        ],
    );
    // A limit of zero entries: any listing at all would fail.
    let (d, visited) = p
        .denied_paths_counted(std::slice::from_ref(&t.proj), false, 0)
        .expect("no search needed");
    assert_eq!(visited, 0);
    assert_eq!(
        d,
        DeniedPaths {
            read: vec![t.proj.join(".env"), t.proj.join("secrets")],
            write: vec![t.proj.join(".git")],
        }
    );
    assert_eq!(
        p.denied_paths(std::slice::from_ref(&t.proj), false).ok(),
        Some(d)
    );
}

#[test]
fn a_bare_name_is_found_at_any_depth() {
    let t = tree();
    for f in [".env", "a/b/.env", "a/.envrc", "a/b/c/env", "x/.env/inner"] {
        touch(&t.proj.join(f));
    }
    let (d, _) = denied(&t, &[], &["Read(.env)"], false);
    // A directory named `.env` is denied as a whole and not searched.
    assert_eq!(
        d,
        read_only(&[
            t.proj.join(".env"),
            t.proj.join("a/b/.env"),
            t.proj.join("x/.env"),
        ])
    );
}

#[test]
fn a_recursive_wildcard_pattern_is_searched_for() {
    let t = tree();
    for f in ["k.pem", "x/y/k.pem", "k.pem.txt", "x/notes.md"] {
        touch(&t.proj.join(f));
    }
    let (d, _) = denied(&t, &[], &["Read(**/*.pem)"], false);
    assert_eq!(
        d,
        read_only(&[t.proj.join("k.pem"), t.proj.join("x/y/k.pem")])
    );
}

#[test]
fn a_search_goes_no_deeper_than_its_pattern() {
    let t = tree();
    touch(&t.proj.join("a/key"));
    touch(&t.proj.join("b/c/key"));
    for i in 0..30 {
        touch(&t.proj.join(format!("b/c/d{i}/f")));
    }
    let (d, visited) = denied(&t, &[], &["Read(./*/key)"], false);
    assert_eq!(d, read_only(&[t.proj.join("a/key")]));
    // `a`, `b`, `a/key` and `b/c`: nothing below the pattern's two levels is listed.
    assert_eq!(visited, 4);
}

#[test]
fn edit_denies_give_write_only_paths() {
    let t = tree();
    touch(&t.proj.join("Cargo.lock"));
    touch(&t.proj.join("vendor/x/lib.rs"));
    let (d, _) = denied(
        &t,
        &[],
        &["Edit(./Cargo.lock)", "Edit(./vendor/**)", "Edit(./missing)"],
        false,
    );
    assert_eq!(
        d,
        DeniedPaths {
            read: Vec::new(),
            write: vec![t.proj.join("Cargo.lock"), t.proj.join("vendor")],
        }
    );
}

#[test]
fn a_path_denied_for_both_is_listed_as_unreadable_only() {
    let t = tree();
    touch(&t.proj.join("creds.json"));
    touch(&t.proj.join("a/creds.json"));
    let (d, _) = denied(&t, &[], &["Edit(creds.json)", "Read(./creds.json)"], false);
    assert_eq!(
        d,
        DeniedPaths {
            read: vec![t.proj.join("creds.json")],
            write: vec![t.proj.join("a/creds.json")],
        }
    );
}

#[test]
fn symlinks_are_not_followed() {
    let t = tree();
    touch(&t.out.join(".env"));
    touch(&t.out.join("deep/.env"));
    symlink(&t.out, t.proj.join("linked")).expect("symlink");
    // A link that matches is returned as itself, whatever it points to.
    symlink(t.out.join("deep"), t.proj.join(".env")).expect("symlink");
    let (d, visited) = denied(&t, &[], &["Read(.env)"], false);
    assert_eq!(d, read_only(&[t.proj.join(".env")]));
    assert_eq!(visited, 2);
}

#[test]
fn ask_rules_count_only_when_asked_to() {
    let t = tree();
    touch(&t.proj.join("notes/private.md"));
    touch(&t.proj.join("build.rs"));
    let ask = ["Read(./notes/**)", "Edit(./build.rs)"];
    assert_eq!(denied(&t, &ask, &[], false).0, DeniedPaths::default());
    assert_eq!(
        denied(&t, &ask, &[], true).0,
        DeniedPaths {
            read: vec![t.proj.join("notes")],
            write: vec![t.proj.join("build.rs")],
        }
    );
}

#[test]
fn a_search_past_the_limit_is_an_error_naming_the_rule() {
    let t = tree();
    for i in 0..20 {
        touch(&t.proj.join(format!("f{i}")));
    }
    let p = engine(&t, &[], &["Read(./.env)", "Read(.env)"]);
    let err = p
        .denied_paths_counted(std::slice::from_ref(&t.proj), false, 10)
        .expect_err("too large");
    assert!(
        matches!(&err, PermissionsError::DeniedPathsSearchTooLarge { rule, dir, .. }
            if rule == "Read(.env)" && dir == &t.proj),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("Read(.env)") && msg.contains("Read(./.env)"),
        "{msg}"
    );
}

#[test]
fn missing_literal_paths_are_skipped() {
    let t = tree();
    let (d, visited) = denied(
        &t,
        &[],
        &["Read(./.env)", "Read(./secrets/**)", "Edit(./a/b/c)"],
        false,
    );
    assert_eq!(d, DeniedPaths::default());
    assert_eq!(visited, 0);
}

#[test]
fn paths_outside_every_root_are_not_returned() {
    let t = tree();
    touch(&t.out.join("secret"));
    touch(&t.root.join("home/.ssh/id_ed25519"));
    touch(&t.out.join("x.pem"));
    let out = t.out.to_string_lossy().to_string();
    let (d, visited) = denied(
        &t,
        &[],
        &[
            &format!("Read(/{out}/secret)"),
            "Read(~/.ssh/**)",
            &format!("Read(/{out}/**/*.pem)"),
        ],
        false,
    );
    assert_eq!(d, DeniedPaths::default());
    assert_eq!(visited, 0);
}

#[test]
fn a_root_inside_a_denied_directory_is_denied_as_a_whole() {
    let t = tree();
    touch(&t.proj.join("a"));
    let above = t.root.to_string_lossy().to_string();
    let (d, _) = denied(&t, &[], &[&format!("Read(/{above}/**)")], false);
    assert_eq!(d, read_only(std::slice::from_ref(&t.proj)));
}

#[test]
fn several_roots_are_searched_and_the_result_is_sorted() {
    let t = tree();
    touch(&t.proj.join("z/.env"));
    touch(&t.proj.join(".env"));
    touch(&t.out.join(".env"));
    let p = engine(
        &t,
        &[],
        &["Read(.env)", &format!("Read(/{}/.env)", t.out.display())],
    );
    let d = p
        .denied_paths(&[t.proj.clone(), t.out.clone(), t.proj.join("z")], false)
        .expect("lists");
    // The bare name is anchored at the working directory, so `out` only has the literal.
    assert_eq!(
        d,
        read_only(&[
            t.out.join(".env"),
            t.proj.join(".env"),
            t.proj.join("z/.env")
        ])
    );
}

#[test]
fn relative_roots_are_refused() {
    let t = tree();
    let p = engine(&t, &[], &["Read(.env)"]);
    assert!(matches!(
        p.denied_paths(&[PathBuf::from("proj")], false),
        Err(PermissionsError::RelativeRoot { .. })
    ));
}
