//! A scratch tree and an engine over one project settings file, for the tests that work on
//! real files.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use warden_config::{Scope, Settings, SettingsFile};
use warden_permissions::{Mode, Options, Permissions};

/// A scratch tree: `<root>/proj` is the working directory, `<root>/out` lies outside it,
/// `<root>/home` is the home.
pub struct Tree {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub proj: PathBuf,
    pub out: PathBuf,
}

impl Tree {
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }
}

pub fn tree() -> Tree {
    let dir = tempfile::tempdir().expect("tempdir");
    // The temporary directory may itself sit behind a link (macOS `/tmp`), and rules match
    // paths lexically: work below its resolved form, so roots and the working directory are
    // spelled alike and the only links in play are the ones each test makes.
    let root = dir.path().canonicalize().expect("canonical tempdir");
    let proj = root.join("proj");
    let out = root.join("out");
    for d in [&proj, &out, &root.join("home")] {
        fs::create_dir_all(d).expect("mkdir");
    }
    Tree {
        _dir: dir,
        root,
        proj,
        out,
    }
}

/// The engine for a session in `cwd` whose project settings hold `permissions`.
pub fn engine_with(cwd: &Path, home: &Path, permissions: Value, mode: Mode) -> Permissions {
    let v = serde_json::json!({ "permissions": permissions });
    let file = SettingsFile {
        scope: Scope::Project,
        origin: Default::default(),
        path: Some(cwd.join(".claude/settings.json")),
        value: v.as_object().cloned().unwrap_or_default(),
    };
    Permissions::from_settings(
        &Settings {
            files: vec![file],
            errors: Vec::new(),
            ..Default::default()
        },
        &Options {
            cwd: cwd.to_path_buf(),
            home: home.to_path_buf(),
            mode: Some(mode),
            trusted: true,
            ..Options::default()
        },
    )
    .expect("builds")
}
