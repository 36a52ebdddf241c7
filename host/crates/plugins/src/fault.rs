//! Named crash points, for the tests that kill Warden in the middle of changing its state
//! (`tests/faults.rs`).
//!
//! A crash between two writes is the case atomic renames and write ordering exist for, and
//! timing a `kill -9` from outside lands wherever the scheduler puts it. A named point makes
//! the crash land exactly between two steps: when `WARDEN_TEST_FAULT` equals a point's name,
//! the process aborts there ([`std::process::abort`]: no destructors, no cleanup, like
//! SIGKILL), and the test then checks what the next run sees.
//!
//! This is for tests. It is not a way in for anyone: whoever can set Warden's environment can
//! already make it do anything, and the only thing a point can do is end the process early,
//! which killing it does as well. The variable is read once; an unset variable costs one
//! comparison per point.

use std::sync::OnceLock;

/// The environment variable naming the point to abort at.
pub const FAULT_ENV: &str = "WARDEN_TEST_FAULT";

/// What a point prints on stderr before it aborts, followed by its name, so a test can tell
/// that the process died at that point and not somewhere else.
pub const FAULT_MESSAGE: &str = "warden: aborting at fault point ";

/// Every point, in the order the steps run. A unit test checks that this list and the points
/// in the source are the same, so the fault tests, which iterate over it, cover every point.
pub const POINTS: &[&str] = &[
    // install <plugin>: a new installation.
    "install.fetched",
    "install.cached",
    "install.settings-written",
    "install.grants-written",
    "install.registry-written",
    // update <plugin>: a new version over an installed one.
    "update.fetched",
    "update.cached",
    "update.grants-written",
    "update.registry-written",
    "update.old-version-released",
    // uninstall <plugin>.
    "uninstall.registry-written",
    "uninstall.settings-written",
    "uninstall.cache-released",
    "uninstall.data-removed",
    // grant <plugin>.
    "grant.checked",
    "grant.written",
    // marketplace update [name] (git marketplaces).
    "marketplace-update.cloned",
    "marketplace-update.swapped",
    "marketplace-update.written",
];

/// Aborts the process when `WARDEN_TEST_FAULT` names this point.
pub(crate) fn point(name: &'static str) {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    let armed = ARMED.get_or_init(|| std::env::var(FAULT_ENV).ok());
    if armed.as_deref() == Some(name) {
        eprintln!("{FAULT_MESSAGE}{name}");
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::POINTS;

    fn points_in(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).expect("read src").flatten() {
            let p = e.path();
            if p.is_dir() {
                points_in(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("fault.rs") {
                let text = std::fs::read_to_string(&p).expect("read source");
                // Every literal name passed to `point`, also in `if … { "a" } else { "b" }`.
                for call in text.split("fault::point(").skip(1) {
                    let args = call.split(");").next().unwrap_or("");
                    out.extend(args.split('"').skip(1).step_by(2).map(str::to_string));
                }
            }
        }
    }

    #[test]
    fn every_point_in_the_source_is_listed_once_and_every_listed_point_exists() {
        let mut found = Vec::new();
        points_in(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut found,
        );
        let found: BTreeSet<String> = found.into_iter().collect();
        let listed: BTreeSet<String> = POINTS.iter().map(|s| s.to_string()).collect();
        assert_eq!(listed.len(), POINTS.len(), "a point is listed twice");
        assert_eq!(found, listed);
    }
}
