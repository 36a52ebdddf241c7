//! Consent to the capabilities a plugin's WASM components request.
//!
//! Three ways to consent, one per invocation:
//! * `--yes`: everything the plugin asks for;
//! * `--grant kind:value` (repeatable): exactly the listed capabilities; the install is refused,
//!   with the missing `--grant` flags spelled out, when the plugin asks for more;
//! * neither: a `y/N` question when stdin and stderr are terminals, else a refusal that says
//!   which flags would grant the request.
//!
//! `--grant` syntax: `exec:<program>`, `env:<VAR>`, `net:<scheme://host[:port]>`,
//! `fs:read:<path>`, `fs:write:<path>` (`fs:<path>` means read). Values are compared with the
//! request exactly as written in the plugin's `plugin.json` (e.g. `fs:read:${CLAUDE_PROJECT_DIR}`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal, Write};

use warden_plugins::{Capabilities, CapabilityRequest, ConsentRequired, FsAccess, FsCapability};

/// How consent is given for this invocation.
pub(super) enum ConsentMode {
    /// `--yes`.
    Yes,
    /// `--grant …`: what was listed.
    Grant(Capabilities),
    /// Ask on the terminal (or refuse when there is none).
    Ask,
}

impl ConsentMode {
    /// From the flags; a malformed `--grant` is an error naming the accepted forms.
    pub(super) fn from_flags(yes: bool, grants: &[String]) -> Result<Self, String> {
        if yes {
            return Ok(ConsentMode::Yes);
        }
        if grants.is_empty() {
            return Ok(ConsentMode::Ask);
        }
        let mut caps = Capabilities::default();
        for g in grants {
            parse_grant(g, &mut caps)?;
        }
        Ok(ConsentMode::Grant(caps))
    }

    /// Whether everything is accepted up front.
    pub(super) fn is_yes(&self) -> bool {
        matches!(self, ConsentMode::Yes)
    }
}

fn parse_grant(s: &str, into: &mut Capabilities) -> Result<(), String> {
    let bad = || {
        format!(
            "--grant `{s}` is not understood: use exec:<program>, env:<VAR>, net:<scheme://host[:port]>, fs:read:<path> or fs:write:<path>"
        )
    };
    let (kind, value) = s.split_once(':').ok_or_else(bad)?;
    if value.is_empty() {
        return Err(bad());
    }
    match kind.trim().to_ascii_lowercase().as_str() {
        "exec" => into.exec.push(value.to_string()),
        "env" => into.env.push(value.to_string()),
        // Origins carry no path; tolerate the trailing slash people tend to type.
        "net" => into.net.push(value.trim_end_matches('/').to_string()),
        "fs" => {
            let (access, path) = match value.split_once(':') {
                Some(("read", p)) => (FsAccess::Read, p),
                Some(("write", p)) => (FsAccess::Write, p),
                _ => (FsAccess::Read, value),
            };
            if path.is_empty() {
                return Err(bad());
            }
            into.fs.push(FsCapability {
                path: path.to_string(),
                access,
            });
        }
        _ => return Err(bad()),
    }
    Ok(())
}

/// Gets consent for an install or update that returned `NeedsConsent`: `Ok` to go ahead, or
/// the message to fail with (nothing has been changed).
pub(super) fn obtain(
    mode: &ConsentMode,
    asked: &ConsentRequired,
    json: bool,
) -> Result<(), String> {
    let label = format!("{} {}", asked.plugin_id, asked.version);
    decide(mode, &label, asked.command, &asked.diff, json)
}

/// Gets consent for `grant`: the whole request of an installed plugin.
pub(super) fn obtain_for_request(
    mode: &ConsentMode,
    req: &CapabilityRequest,
    json: bool,
) -> Result<(), String> {
    let wanted: BTreeMap<String, Capabilities> = req
        .components
        .iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(n, c)| (n.clone(), c.clone()))
        .collect();
    decide(mode, &req.plugin_id, "grant", &wanted, json)
}

fn decide(
    mode: &ConsentMode,
    label: &str,
    command: &str,
    wanted: &BTreeMap<String, Capabilities>,
    json: bool,
) -> Result<(), String> {
    let nothing_changed = if command == "grant" {
        "Nothing was granted."
    } else {
        "Nothing was installed."
    };
    match mode {
        ConsentMode::Yes => Ok(()),
        ConsentMode::Grant(granted) => {
            let missing: BTreeMap<String, Capabilities> = wanted
                .iter()
                .filter_map(|(n, c)| {
                    let d = c.minus(granted);
                    (!d.is_empty()).then(|| (n.clone(), d))
                })
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            Err(format!(
                "{label} requests more than --grant allows:\n{}{nothing_changed} Add {} or accept everything it requests with --yes.",
                render(&missing),
                grant_flags(&missing).join(" ")
            ))
        }
        ConsentMode::Ask => {
            // The question needs a person: a terminal to read the answer from and one to show
            // it on. JSON output is for scripts, so it never prompts.
            let interactive =
                !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            if !interactive {
                return Err(format!(
                    "{label} needs consent for these capabilities:\n{}{nothing_changed} Re-run with --yes to grant everything it requests, or grant each one: {}",
                    render(wanted),
                    grant_flags(wanted).join(" ")
                ));
            }
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "{label} asks for these capabilities (its WebAssembly components get nothing else):\n{}Grant them and {command}? [y/N] ",
                render(wanted)
            );
            let _ = err.flush();
            drop(err);
            let mut answer = String::new();
            // A read error or end of input counts as "no".
            let _ = std::io::stdin().lock().read_line(&mut answer);
            if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                Ok(())
            } else {
                Err(format!(
                    "Consent refused. {nothing_changed} To grant without asking, re-run with --yes or {}",
                    grant_flags(wanted).join(" ")
                ))
            }
        }
    }
}

/// One block per component, one line per capability kind.
fn render(caps: &BTreeMap<String, Capabilities>) -> String {
    let mut s = String::new();
    for (name, c) in caps {
        let _ = writeln!(s, "  {}:", warden_plugins::capability::shown_name(name));
        let mut line = |kind: &str, items: Vec<String>| {
            if !items.is_empty() {
                let _ = writeln!(s, "    {kind:<5} {}", items.join(", "));
            }
        };
        line(
            "fs",
            c.fs.iter()
                .map(|f| match f.access {
                    FsAccess::Read => format!("read {}", f.path),
                    FsAccess::Write => format!("read+write {}", f.path),
                })
                .collect(),
        );
        line(
            "net",
            c.net
                .iter()
                .map(|n| {
                    if n == warden_plugins::ANY_NETWORK {
                        "every host".to_string()
                    } else {
                        n.clone()
                    }
                })
                .collect(),
        );
        line("env", c.env.clone());
        line("exec", c.exec.clone());
    }
    s
}

/// The `--grant` flags that would grant `caps`, shell-quoted where needed.
fn grant_flags(caps: &BTreeMap<String, Capabilities>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: String| {
        let flag = format!("--grant {}", shell_quote(&v));
        if !out.contains(&flag) {
            out.push(flag);
        }
    };
    for c in caps.values() {
        for f in &c.fs {
            let a = match f.access {
                FsAccess::Read => "read",
                FsAccess::Write => "write",
            };
            push(format!("fs:{a}:{}", f.path));
        }
        c.net.iter().for_each(|n| push(format!("net:{n}")));
        c.env.iter().for_each(|n| push(format!("env:{n}")));
        c.exec.iter().for_each(|n| push(format!("exec:{n}")));
    }
    out
}

fn shell_quote(s: &str) -> String {
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.:/@%+=,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_syntax() {
        let mut c = Capabilities::default();
        for g in [
            "exec:git",
            "env:HOME",
            "net:https://api.github.com/",
            "fs:write:${CLAUDE_PLUGIN_DATA}",
            "fs:/etc/hosts",
        ] {
            parse_grant(g, &mut c).expect(g);
        }
        assert_eq!(c.exec, ["git"]);
        assert_eq!(c.env, ["HOME"]);
        assert_eq!(c.net, ["https://api.github.com"]);
        assert_eq!(c.fs[0].access, FsAccess::Write);
        assert_eq!(c.fs[0].path, "${CLAUDE_PLUGIN_DATA}");
        assert_eq!(c.fs[1].access, FsAccess::Read);
        assert_eq!(c.fs[1].path, "/etc/hosts");
        for bad in ["git", "exec:", "proc:x", "fs:read:"] {
            assert!(parse_grant(bad, &mut c).is_err(), "{bad}");
        }
    }

    #[test]
    fn flags_round_trip() {
        let mut want = BTreeMap::new();
        want.insert(
            "guard".to_string(),
            Capabilities {
                fs: vec![FsCapability {
                    path: "${CLAUDE_PROJECT_DIR}".into(),
                    access: FsAccess::Read,
                }],
                net: vec!["https://api.github.com".into()],
                env: vec![],
                exec: vec!["git".into()],
            },
        );
        let flags = grant_flags(&want);
        assert_eq!(
            flags,
            [
                "--grant 'fs:read:${CLAUDE_PROJECT_DIR}'",
                "--grant net:https://api.github.com",
                "--grant exec:git"
            ]
        );
        let listed: Vec<String> = [
            "fs:read:${CLAUDE_PROJECT_DIR}",
            "net:https://api.github.com",
            "exec:git",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mode = ConsentMode::from_flags(false, &listed).expect("flags");
        assert!(decide(&mode, "p@m 1", "install", &want, true).is_ok());
        let fewer = ConsentMode::from_flags(false, &listed[..2]).expect("flags");
        let err = decide(&fewer, "p@m 1", "install", &want, true).expect_err("exec missing");
        assert!(err.contains("--grant exec:git"), "{err}");
        assert!(!err.contains("--grant net:"), "{err}");
    }
}
