//! Spec 2.4, symlinks: the link path and its resolved target are both checked; an allow needs
//! both to match (else the user is asked), a deny applies if either matches.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};
mod common;

use common::Tree;
use warden_permissions::{Access, Decision, Mode, Permissions};

use Decision::{Allow, Ask, Deny};

fn tree() -> Tree {
    let t = common::tree();
    fs::create_dir_all(t.proj.join("docs")).expect("mkdir");
    t
}

fn write(p: &Path) {
    fs::write(p, "x\n").expect("write");
}

fn engine_at(cwd: &Path, home: &Path, allow: &[&str], deny: &[&str], mode: Mode) -> Permissions {
    common::engine_with(cwd, home, json!({"allow": allow, "deny": deny}), mode)
}

fn engine(t: &Tree, allow: &[&str], deny: &[&str]) -> Permissions {
    engine_at(&t.proj, &t.root.join("home"), allow, deny, Mode::Default)
}

fn tool(p: &Permissions, name: &str, input: Value) -> Decision {
    p.decide(name, &input, None).decision
}

fn read(p: &Permissions, path: &Path) -> Decision {
    tool(p, "Read", json!({ "file_path": path.to_string_lossy() }))
}

fn edit(p: &Permissions, name: &str, path: &Path) -> Decision {
    tool(p, name, json!({ "file_path": path.to_string_lossy() }))
}

fn bash(p: &Permissions, cmd: &str) -> Decision {
    p.decide("Bash", &json!({ "command": cmd }), None).decision
}

#[test]
fn a_link_to_a_denied_file_is_denied() {
    let t = tree();
    write(&t.proj.join(".env"));
    symlink(".env", t.proj.join("link")).expect("symlink");
    let p = engine(&t, &[], &["Read(./.env)"]);
    let link = t.proj.join("link");

    let decision = p.decide("Read", &json!({"file_path": "link"}), None);
    assert_eq!(decision.decision, Deny);
    assert_eq!(decision.rule.as_deref(), Some("Read(./.env)"));
    assert_eq!(edit(&p, "Edit", &link), Deny);
    assert_eq!(edit(&p, "Write", &link), Deny);
    assert_eq!(edit(&p, "MultiEdit", &link), Deny);
    assert_eq!(bash(&p, "cat link"), Deny);
    assert_eq!(bash(&p, "echo x > link"), Deny);
    assert_eq!(p.check_path(Access::Read, &link).decision, Deny);
    assert_eq!(p.check_path(Access::Write, &link).decision, Deny);
    // An ordinary file next to it is unaffected.
    write(&t.proj.join("README.md"));
    assert_eq!(read(&p, &t.proj.join("README.md")), Allow);
}

#[test]
fn an_edit_deny_reaches_through_a_link_for_notebooks_too() {
    let t = tree();
    write(&t.proj.join("nb.ipynb"));
    symlink("nb.ipynb", t.proj.join("alias.ipynb")).expect("symlink");
    let p = engine(&t, &[], &["Edit(./nb.ipynb)"]);
    let input = json!({"notebook_path": t.proj.join("alias.ipynb").to_string_lossy()});
    assert_eq!(tool(&p, "NotebookEdit", input), Deny);
}

#[test]
fn an_allow_needs_both_the_link_and_its_target() {
    let t = tree();
    let guide = t.proj.join("docs/guide.md");
    write(&guide);
    write(&t.out.join("secret.txt"));
    // The link lies outside docs (and outside the project); its target is allowed.
    symlink(&guide, t.out.join("to-guide")).expect("symlink");
    // The link lies inside docs; its target is outside everything allowed.
    symlink(t.out.join("secret.txt"), t.proj.join("docs/to-secret")).expect("symlink");
    // Both inside docs.
    symlink("guide.md", t.proj.join("docs/alias.md")).expect("symlink");
    let p = engine(&t, &["Read(./docs/**)"], &[]);

    assert_eq!(read(&p, &guide), Allow);
    assert_eq!(read(&p, &t.out.join("to-guide")), Ask);
    assert_eq!(read(&p, &t.proj.join("docs/to-secret")), Ask);
    assert_eq!(read(&p, &t.proj.join("docs/alias.md")), Allow);
    assert_eq!(bash(&p, "cat docs/to-secret"), Ask);
    assert_eq!(
        p.check_path(Access::Read, &t.out.join("to-guide")).decision,
        Ask
    );
    assert_eq!(
        p.check_path(Access::Read, &t.proj.join("docs/to-secret"))
            .decision,
        Ask
    );
    assert_eq!(
        p.check_path(Access::Read, &t.proj.join("docs/alias.md"))
            .decision,
        Allow
    );

    // The same for Edit rules, with the link inside the project but outside docs.
    symlink("docs/guide.md", t.proj.join("guide-link")).expect("symlink");
    let p = engine(&t, &["Edit(./docs/**)"], &[]);
    assert_eq!(edit(&p, "Edit", &guide), Allow);
    assert_eq!(edit(&p, "Edit", &t.proj.join("guide-link")), Ask);
    assert_eq!(edit(&p, "Edit", &t.proj.join("docs/to-secret")), Ask);
    assert_eq!(
        p.check_path(Access::Write, &t.proj.join("docs/to-secret"))
            .decision,
        Ask
    );
}

#[test]
fn working_directory_approval_needs_the_target_inside_too() {
    let t = tree();
    write(&t.out.join("secret.txt"));
    symlink(t.out.join("secret.txt"), t.proj.join("inside")).expect("symlink");
    let p = engine(&t, &[], &[]);
    // Reads inside the project run without asking, but this one reads outside it.
    assert_eq!(read(&p, &t.proj.join("inside")), Ask);
    assert_eq!(bash(&p, "cat inside"), Ask);
    assert_eq!(bash(&p, "wc -l inside"), Ask);
    let p = engine_at(&t.proj, &t.root.join("home"), &[], &[], Mode::AcceptEdits);
    assert_eq!(edit(&p, "Write", &t.proj.join("inside")), Ask);
    assert_eq!(bash(&p, "echo x > inside"), Ask);
    assert_eq!(edit(&p, "Write", &t.proj.join("plain.txt")), Allow);
}

#[test]
fn a_dangling_link_is_judged_by_where_it_would_write() {
    let t = tree();
    // `.env` does not exist yet: writing through the link would create it.
    symlink(".env", t.proj.join("dangling")).expect("symlink");
    symlink(t.out.join("new.txt"), t.proj.join("away")).expect("symlink");
    let p = engine(&t, &[], &["Read(./.env)"]);
    let dangling = t.proj.join("dangling");
    assert_eq!(read(&p, &dangling), Deny);
    assert_eq!(edit(&p, "Write", &dangling), Deny);
    assert_eq!(p.check_path(Access::Write, &dangling).decision, Deny);

    let p = engine_at(&t.proj, &t.root.join("home"), &[], &[], Mode::AcceptEdits);
    // Inside the project by name, outside it by target.
    assert_eq!(edit(&p, "Write", &t.proj.join("away")), Ask);
    assert_eq!(
        p.check_path(Access::Write, &t.proj.join("away")).decision,
        Ask
    );
}

#[test]
fn a_symlinked_directory_is_checked_as_its_target() {
    let t = tree();
    let secret = t.proj.join("secret_dir");
    fs::create_dir(&secret).expect("mkdir");
    write(&secret.join("key.txt"));
    symlink("secret_dir", t.proj.join("d")).expect("symlink");
    let p = engine(&t, &[], &["Read(./secret_dir/**)"]);
    let key = t.proj.join("d/key.txt");
    let new = t.proj.join("d/new.txt");

    assert_eq!(read(&p, &key), Deny);
    assert_eq!(edit(&p, "Edit", &key), Deny);
    // A file that does not exist yet is resolved through its nearest existing ancestor.
    assert_eq!(edit(&p, "Write", &new), Deny);
    assert_eq!(bash(&p, "cat d/key.txt"), Deny);
    assert_eq!(bash(&p, "cd d && cat key.txt"), Deny);
    assert_eq!(bash(&p, "echo x > d/new.txt"), Deny);
    assert_eq!(p.check_path(Access::Read, &key).decision, Deny);
    assert_eq!(p.check_path(Access::Write, &key).decision, Deny);
    assert_eq!(p.check_path(Access::Write, &new).decision, Deny);
    // The directory's own name is not denied.
    write(&t.proj.join("other.txt"));
    assert_eq!(read(&p, &t.proj.join("other.txt")), Allow);
}

#[test]
fn dot_dot_after_a_link_climbs_from_its_target_in_commands() {
    let t = tree();
    fs::create_dir(t.out.join("sub")).expect("mkdir");
    write(&t.out.join("secret.txt"));
    symlink(t.out.join("sub"), t.proj.join("d")).expect("symlink");
    let rule = format!("Read(/{})", t.out.join("secret.txt").display());
    let p = engine(&t, &[], &[&rule]);
    // The shell hands `d/../secret.txt` to the kernel, which reads `<out>/secret.txt`.
    assert_eq!(bash(&p, "cat d/../secret.txt"), Deny);
}

#[test]
fn a_project_reached_through_a_link_keeps_its_own_rules() {
    let t = tree();
    write(&t.proj.join("docs/guide.md"));
    write(&t.proj.join(".env"));
    write(&t.proj.join("README.md"));
    let alias = t.root.join("alias");
    symlink(&t.proj, &alias).expect("symlink");
    let p = engine_at(
        &alias,
        &t.root.join("home"),
        &["Read(./docs/**)"],
        &["Read(./.env)"],
        Mode::Default,
    );
    assert_eq!(read(&p, &alias.join("docs/guide.md")), Allow);
    assert_eq!(read(&p, &alias.join("README.md")), Allow);
    assert_eq!(read(&p, &alias.join(".env")), Deny);
    // The real spelling of a denied file is denied as well.
    assert_eq!(read(&p, &t.proj.join(".env")), Deny);
    assert_eq!(
        p.check_path(Access::Read, &alias.join("docs/guide.md"))
            .decision,
        Allow
    );
}

#[test]
fn a_link_loop_is_never_approved_automatically() {
    let t = tree();
    symlink("b", t.proj.join("a")).expect("symlink");
    symlink("a", t.proj.join("b")).expect("symlink");
    let p = engine(&t, &[], &[]);
    assert_eq!(read(&p, &t.proj.join("a")), Ask);
    assert_eq!(p.check_path(Access::Read, &t.proj.join("a")).decision, Ask);
}

#[test]
fn check_path_looks_at_the_filesystem_afresh() {
    let t = tree();
    write(&t.proj.join(".env"));
    let p = engine(&t, &[], &["Read(./.env)"]);
    let late = t.proj.join("late");
    assert_eq!(p.check_path(Access::Read, &late).decision, Allow);
    symlink(".env", &late).expect("symlink");
    assert_eq!(p.check_path(Access::Read, &late).decision, Deny);
}
