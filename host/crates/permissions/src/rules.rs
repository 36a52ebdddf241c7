//! Rule strings (spec 2.1): parsing, classification and startup warnings.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::fxhash::FxHashMap;
use crate::paths::{self, Anchors};
use crate::pattern::{self, CommandPattern, DomainPattern, Wildcard};

/// Which list a rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// `permissions.allow`.
    Allow,
    /// `permissions.ask`.
    Ask,
    /// `permissions.deny`.
    Deny,
}

impl RuleKind {
    /// The settings key suffix (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// Tool names Warden knows; deny/ask rules naming anything else are warned about (2.8).
pub const KNOWN_TOOLS: &[&str] = &[
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "Cd",
    "Edit",
    "EndConversation",
    "EnterPlanMode",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "LSP",
    "Monitor",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "PowerShell",
    "Read",
    "SendMessage",
    "Skill",
    "SlashCommand",
    "Task",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "TodoWrite",
    "ToolSearch",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// Tools whose input is an edit of `file_path`/`notebook_path`, all governed by `Edit(path)`.
pub const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Tools governed by `Read(path)`.
pub const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS", "NotebookRead"];

/// The canonical name for a tool (`Task` is the legacy name of `Agent`).
pub fn canonical_tool(name: &str) -> &str {
    if name == "Task" { "Agent" } else { name }
}

/// How a rule's tool part matches tool names.
#[derive(Debug, Clone)]
pub enum ToolPat {
    /// One canonical name.
    Exact(String),
    /// A glob over the whole name (deny/ask, or allow after a literal `mcp__server__`).
    Glob(Wildcard),
    /// `mcp__server` / `mcp__server__tool-glob`.
    Mcp {
        /// The server segment.
        server: String,
        /// `None` = every tool of the server.
        tool: Option<Wildcard>,
    },
}

impl ToolPat {
    /// Whether the pattern selects `tool` (already canonical).
    pub fn matches(&self, tool: &str) -> bool {
        match self {
            ToolPat::Exact(n) => n == tool || (n == "Edit" && EDIT_TOOLS.contains(&tool)),
            ToolPat::Glob(w) => w.matches(tool),
            ToolPat::Mcp { server, tool: t } => match split_mcp(tool) {
                Some((s, name)) => s == server && t.as_ref().is_none_or(|w| w.matches(name)),
                None => false,
            },
        }
    }

    /// The exact name, for specifier interpretation.
    pub fn name(&self) -> &str {
        match self {
            ToolPat::Exact(n) => n,
            _ => "",
        }
    }
}

/// `mcp__server__tool` → (`server`, `tool`).
pub fn split_mcp(tool: &str) -> Option<(&str, &str)> {
    let rest = tool.strip_prefix("mcp__")?;
    match rest.find("__") {
        Some(i) => Some((&rest[..i], &rest[i + 2..])),
        None => Some((rest, "")),
    }
}

/// What a rule's specifier constrains.
#[derive(Debug, Clone)]
pub enum Spec {
    /// No specifier (or `*`): the whole tool.
    Any,
    /// A Bash command pattern.
    Command(CommandPattern),
    /// A `Read`/`Edit` path pattern, compiled to these absolute globs.
    Path {
        /// `true` for `Edit(...)`, `false` for `Read(...)`.
        edit: bool,
        /// Absolute gitignore-style globs.
        globs: Vec<String>,
    },
    /// `WebFetch(domain:…)`.
    Domain(DomainPattern),
    /// `Tool(param:value)`.
    Param {
        /// The top-level input field.
        name: String,
        /// Its value pattern.
        value: Wildcard,
    },
    /// Agent/Skill/Cd names and other plain specifiers.
    Text(CommandPattern),
}

/// A usable rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written.
    pub text: String,
    /// Index of the source it came from.
    pub source: usize,
    /// Tool part.
    pub tool: ToolPat,
    /// Specifier.
    pub spec: Spec,
}

/// A rule that was skipped or is suspicious.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The message (without the source prefix).
    pub message: String,
    /// Whether the rule is still used.
    pub kept: bool,
}

/// Splits `Tool(spec)`; `None` when the shape is invalid.
pub fn split_rule(text: &str) -> Option<(&str, Option<&str>)> {
    let t = text.trim();
    match t.find('(') {
        Some(open) => {
            let inner = t.strip_suffix(')')?.get(open + 1..)?;
            let tool = t[..open].trim();
            if tool.is_empty() || tool.contains(char::is_whitespace) {
                return None;
            }
            Some((tool, Some(inner)))
        }
        None => {
            if t.is_empty() || t.contains([')', ' ']) {
                return None;
            }
            Some((t, None))
        }
    }
}

/// Fields each built-in tool accepts, to tell `Tool(param:value)` apart from specifiers that
/// merely contain a colon (`Bash(npm run test:unit)`, `Read(C:/x)`).
fn known_fields(tool: &str) -> Option<&'static [&'static str]> {
    Some(match tool {
        "Bash" | "PowerShell" => &[
            "command",
            "description",
            "timeout",
            "run_in_background",
            "dangerouslyDisableSandbox",
        ],
        "Read" => &["file_path", "offset", "limit", "pages"],
        "Edit" | "MultiEdit" => &[
            "file_path",
            "old_string",
            "new_string",
            "replace_all",
            "edits",
        ],
        "Write" => &["file_path", "content"],
        "Glob" => &["pattern", "path"],
        "Grep" => &[
            "pattern",
            "path",
            "glob",
            "type",
            "output_mode",
            "multiline",
            "head_limit",
        ],
        "NotebookEdit" => &[
            "notebook_path",
            "cell_id",
            "new_source",
            "cell_type",
            "edit_mode",
        ],
        "WebFetch" => &["url", "prompt"],
        "Skill" => &["skill", "args"],
        "Cd" => &["path"],
        _ => return None,
    })
}

/// Fields whose content has its own rule syntax; `Tool(field:…)` on them is ignored (2.1).
fn primary_field(tool: &str, field: &str) -> bool {
    matches!(
        (tool, field),
        ("Bash" | "PowerShell", "command")
            | ("Read" | "Edit" | "Write" | "MultiEdit", "file_path")
            | ("Grep" | "Glob", "path")
            | (_, "notebook_path")
            | ("WebFetch", "url")
    )
}

fn param_split(tool: &str, spec: &str) -> Option<(String, String)> {
    let (name, value) = spec.split_once(':')?;
    let name = name.trim();
    if name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    match known_fields(tool) {
        Some(fields) if !fields.contains(&name) => None,
        _ => Some((name.to_string(), value.trim().to_string())),
    }
}

/// Compiles one rule. `Err` = skipped; `Ok((rule, Some(problem)))` = kept with a warning.
pub fn compile(
    text: &str,
    kind: RuleKind,
    source: usize,
    anchors: &Anchors<'_>,
    from_allowed_tools_flag: bool,
) -> Result<(Rule, Option<Problem>), Problem> {
    let skip = |m: String| Problem {
        message: m,
        kept: false,
    };
    let Some((tool_raw, spec_raw)) = split_rule(text) else {
        return Err(skip(format!(
            "{text:?} is not a valid permission rule; write Tool or Tool(specifier)"
        )));
    };
    let tool_raw = canonical_tool(tool_raw);
    let tool = if let Some(rest) = tool_raw.strip_prefix("mcp__") {
        let (server, t) = match rest.find("__") {
            Some(i) => (&rest[..i], Some(&rest[i + 2..])),
            None => (rest, None),
        };
        if server.contains('*') || server.is_empty() {
            if kind == RuleKind::Allow {
                return Err(skip(format!(
                    "{text}: allow rules accept tool-name globs only after a literal mcp__<server>__ prefix; rule skipped"
                )));
            }
            ToolPat::Glob(Wildcard::new(tool_raw))
        } else {
            let tool = t.filter(|t| *t != "*" && !t.is_empty()).map(Wildcard::new);
            ToolPat::Mcp {
                server: server.to_string(),
                tool,
            }
        }
    } else if tool_raw.contains('*') {
        if kind == RuleKind::Allow {
            return Err(skip(format!(
                "{text}: allow rules accept tool-name globs only after a literal mcp__<server>__ prefix; rule skipped"
            )));
        }
        ToolPat::Glob(Wildcard::new(tool_raw))
    } else {
        ToolPat::Exact(tool_raw.to_string())
    };
    let mut problem = None;
    if kind != RuleKind::Allow
        && let ToolPat::Exact(n) = &tool
        && !n.contains('_')
        && !KNOWN_TOOLS.contains(&n.as_str())
    {
        problem = Some(Problem {
            message: format!(
                "{text}: unknown tool {n:?} (tool names are case-sensitive, e.g. Bash, Read, Edit)"
            ),
            kept: true,
        });
    }
    let name = tool.name().to_string();
    let spec = match spec_raw.map(str::trim) {
        None | Some("*") => Spec::Any,
        Some("") => {
            return Err(skip(format!(
                "{text}: empty specifier; write {name} or {name}(pattern)"
            )));
        }
        Some(s) => {
            if name == "WebFetch"
                && let Some(d) = s.strip_prefix("domain:")
            {
                if d.trim() == "*" {
                    Spec::Any
                } else {
                    Spec::Domain(DomainPattern::new(d))
                }
            } else if let Some((field, value)) = param_split(&name, s) {
                if primary_field(&name, &field) {
                    return Err(skip(format!(
                        "{text}: {field} cannot be matched as a parameter; use {name}(pattern) instead; rule ignored"
                    )));
                }
                if kind == RuleKind::Allow {
                    return Err(skip(format!(
                        "{text}: parameter rules work only in deny and ask lists; rule ignored"
                    )));
                }
                Spec::Param {
                    name: field,
                    value: Wildcard::new(&value),
                }
            } else {
                match name.as_str() {
                    "Bash" => Spec::Command(CommandPattern::new(s)),
                    "Read" | "Edit" => Spec::Path {
                        edit: name == "Edit",
                        globs: paths::rule_globs(s, anchors, kind != RuleKind::Allow),
                    },
                    "Write" | "NotebookEdit" | "Glob" | "MultiEdit" => {
                        if name == "Glob" && from_allowed_tools_flag {
                            return Err(Problem {
                                message: String::new(),
                                kept: false,
                            });
                        }
                        return Err(skip(format!(
                            "{text} is not matched by file permission checks — only Edit(path) rules are consulted for edits and Read(path) for reads; write Edit({s}) or Read({s}) instead"
                        )));
                    }
                    "WebFetch" => {
                        return Err(skip(format!(
                            "{text}: WebFetch rules take domain:<host>; write WebFetch(domain:{s})"
                        )));
                    }
                    _ => Spec::Text(CommandPattern::new(s)),
                }
            }
        }
    };
    Ok((
        Rule {
            text: text.trim().to_string(),
            source,
            tool,
            spec,
        },
        problem,
    ))
}

/// The compiled rules of one list, indexed for fast lookup.
///
/// Every index holds rule positions in ascending order, so "first match" within one index is
/// the first hit of a forward scan, and the first match of the list is the smallest position
/// among the indexes a lookup consults.
#[derive(Debug, Default)]
pub struct RuleSet {
    /// Every rule, in precedence order.
    pub rules: Vec<Rule>,
    tool_level: ToolIndex,
    read_paths: PathIndex,
    edit_paths: PathIndex,
    /// The `Edit(path)` rules that name a protected path (see [`names_protected`]).
    protected_edit_paths: PathIndex,
    exact_hosts: FxHashMap<Box<str>, Vec<usize>>,
    wild_hosts: Vec<usize>,
    params: Vec<usize>,
    texts: Vec<usize>,
}

/// Tool-level rules by the tool names they can select.
#[derive(Debug, Default)]
struct ToolIndex {
    /// Exact names; `Edit` is filed under every edit tool it governs.
    exact: FxHashMap<Box<str>, Vec<usize>>,
    /// `mcp__server…` rules by server; their tool part is still checked.
    mcp: FxHashMap<Box<str>, Vec<usize>>,
    /// Name globs, tried against every tool.
    globs: Vec<usize>,
}

impl ToolIndex {
    fn add(&mut self, i: usize, tool: &ToolPat) {
        match tool {
            ToolPat::Exact(n) => {
                push(&mut self.exact, n, i);
                if n == "Edit" {
                    for t in EDIT_TOOLS.iter().filter(|t| **t != "Edit") {
                        push(&mut self.exact, t, i);
                    }
                }
            }
            ToolPat::Mcp { server, .. } => push(&mut self.mcp, server, i),
            ToolPat::Glob(_) => self.globs.push(i),
        }
    }

    fn first(&self, rules: &[Rule], tool: &str) -> Option<usize> {
        let exact = self.exact.get(tool).and_then(|v| v.first().copied());
        let mcp = split_mcp(tool)
            .and_then(|(server, _)| self.mcp.get(server))
            .and_then(|v| first_where(v, |i| rules[i].tool.matches(tool)));
        let glob = first_where(&self.globs, |i| rules[i].tool.matches(tool));
        first(first(exact, mcp), glob)
    }
}

fn push(map: &mut FxHashMap<Box<str>, Vec<usize>>, key: &str, i: usize) {
    match map.get_mut(key) {
        Some(v) => v.push(i),
        None => {
            map.insert(key.into(), vec![i]);
        }
    }
}

fn first_where(list: &[usize], mut ok: impl FnMut(usize) -> bool) -> Option<usize> {
    list.iter().copied().find(|&i| ok(i))
}

fn lookup<'m>(map: &'m FxHashMap<Box<str>, Vec<usize>>, key: &str) -> &'m [usize] {
    map.get(key).map_or(&[], Vec::as_slice)
}

#[derive(Debug, Default)]
struct PathIndex {
    set: GlobSet,
    owners: Vec<usize>,
}

impl PathIndex {
    /// Indexes the `Read` (or, with `edit`, `Edit`) path rules for which `keep` holds.
    fn build(rules: &[Rule], edit: bool, keep: impl Fn(&Rule) -> bool) -> Self {
        let mut b = GlobSetBuilder::new();
        let mut owners = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if let Spec::Path { edit: e, globs } = &r.spec
                && *e == edit
            {
                if !keep(r) {
                    continue;
                }
                for g in globs {
                    // Rules were validated when compiled; a glob globset still rejects (for
                    // example an unclosed `[`) simply never matches.
                    if let Ok(glob) = path_glob(g) {
                        b.add(glob);
                        owners.push(i);
                    }
                }
            }
        }
        PathIndex {
            set: b.build().unwrap_or_default(),
            owners,
        }
    }

    fn first(&self, path: &Path) -> Option<usize> {
        if self.owners.is_empty() {
            return None;
        }
        let cand = globset::Candidate::new(path);
        thread_local! {
            static BUF: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BUF.with(|buf| {
            let mut buf = buf.borrow_mut();
            self.set.matches_candidate_into(&cand, &mut buf);
            buf.iter().map(|&g| self.owners[g]).min()
        })
    }
}

/// Compiles one of the absolute globs of a path rule with the options every path check
/// uses, so anything else matching rule globs agrees with the engine.
pub fn path_glob(g: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(g)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// Whether a glob string is accepted by globset (used to warn at startup).
pub fn glob_ok(g: &str) -> bool {
    path_glob(g).is_ok()
}

/// Whether a path rule names a protected path (`Edit(./.git/config)`, `Edit(.mcp.json)`)
/// rather than merely covering one (`Edit(./**)`): some glob's literal components, read in
/// order with the wildcard ones left out, make a protected path.
fn names_protected(r: &Rule) -> bool {
    let Spec::Path { globs, .. } = &r.spec else {
        return false;
    };
    globs.iter().any(|g| {
        let named: std::path::PathBuf = std::iter::once("/".to_string())
            .chain(g.split('/').filter_map(paths::literal_component))
            .collect();
        paths::is_protected(&named)
    })
}

impl RuleSet {
    /// Indexes `rules`.
    pub fn new(rules: Vec<Rule>) -> Self {
        let mut s = RuleSet {
            read_paths: PathIndex::build(&rules, false, |_| true),
            edit_paths: PathIndex::build(&rules, true, |_| true),
            protected_edit_paths: PathIndex::build(&rules, true, names_protected),
            ..RuleSet::default()
        };
        for (i, r) in rules.iter().enumerate() {
            match &r.spec {
                Spec::Any => s.tool_level.add(i, &r.tool),
                // Bash rules live in the cross-list `CommandIndex`.
                Spec::Command(_) | Spec::Path { .. } => {}
                Spec::Domain(d) => match d.exact_host() {
                    Some(h) => push(&mut s.exact_hosts, &h, i),
                    None => s.wild_hosts.push(i),
                },
                Spec::Param { .. } => s.params.push(i),
                Spec::Text(_) => s.texts.push(i),
            }
        }
        s.rules = rules;
        s
    }

    /// First tool-level rule (no specifier) selecting `tool`.
    pub fn tool_level(&self, tool: &str) -> Option<usize> {
        self.tool_level.first(&self.rules, tool)
    }

    /// First `Read(path)` rule matching.
    pub fn read_path(&self, p: &Path) -> Option<usize> {
        self.read_paths.first(p)
    }

    /// First `Edit(path)` rule matching.
    pub fn edit_path(&self, p: &Path) -> Option<usize> {
        self.edit_paths.first(p)
    }

    /// First `Edit(path)` rule matching `p` that names a protected path: only such a rule
    /// lets a guest write one (see [`crate::Permissions::check_path`]).
    pub fn protected_edit_path(&self, p: &Path) -> Option<usize> {
        self.protected_edit_paths.first(p)
    }

    /// First domain rule matching `host`.
    pub fn domain(&self, host: &str) -> Option<usize> {
        let host = pattern::normalise_host(host);
        self.domain_normalised(&host)
    }

    /// First domain rule matching `host`, already passed through
    /// [`pattern::normalise_host`].
    pub fn domain_normalised(&self, host: &str) -> Option<usize> {
        let ok = |i: usize| {
            let r = &self.rules[i];
            matches!(&r.spec, Spec::Domain(d) if r.tool.matches("WebFetch") && d.matches_normalised(host))
        };
        let exact = first_where(lookup(&self.exact_hosts, host), ok);
        let bound = exact.unwrap_or(usize::MAX);
        let wild = self
            .wild_hosts
            .iter()
            .copied()
            .take_while(|&i| i < bound)
            .find(|&i| ok(i));
        first(exact, wild)
    }

    /// First parameter rule for `tool` matching `input`.
    pub fn param(&self, tool: &str, input: &serde_json::Value) -> Option<usize> {
        first_where(&self.params, |i| {
            let r = &self.rules[i];
            match &r.spec {
                Spec::Param { name, value } => {
                    r.tool.matches(tool)
                        && input.get(name).is_some_and(|v| scalar_matches(v, value))
                }
                _ => false,
            }
        })
    }

    /// First plain-specifier rule for `tool` matching `text`.
    pub fn text(&self, tool: &str, text: &str) -> Option<usize> {
        first_where(&self.texts, |i| {
            let r = &self.rules[i];
            matches!(&r.spec, Spec::Text(p) if r.tool.matches(tool) && p.matches(text))
        })
    }
}

/// Where `kind`'s rules sit in [`CommandIndex`]'s per-list arrays.
fn list_slot(kind: RuleKind) -> usize {
    match kind {
        RuleKind::Deny => 0,
        RuleKind::Ask => 1,
        RuleKind::Allow => 2,
    }
}

/// Bash rules of the deny, ask and allow lists, indexed together: a command form is checked
/// against all three lists, so hashing its keys once serves every list.
#[derive(Debug, Default)]
pub struct CommandIndex {
    /// By key text; one key string can be a two-word, program and last-word key at once.
    keyed: FxHashMap<Box<str>, Keyed>,
    /// Rules with no literal first or last word, per list.
    unkeyed: [Vec<usize>; 3],
}

/// Rule positions filed under one key, per key kind and per list.
#[derive(Debug, Default)]
struct Keyed {
    two_words: [Vec<usize>; 3],
    program: [Vec<usize>; 3],
    last_word: [Vec<usize>; 3],
}

#[derive(Debug, Clone, Copy)]
enum KeyKind {
    TwoWords,
    Program,
    LastWord,
}

/// A command form's entries in a [`CommandIndex`], looked up once for all lists.
#[derive(Debug, Clone, Copy)]
pub struct FormKeys<'i> {
    two_words: Option<&'i Keyed>,
    program: Option<&'i Keyed>,
    last_word: Option<&'i Keyed>,
}

impl CommandIndex {
    /// Indexes the Bash rules of the three lists, given as deny, ask, allow.
    pub fn new(lists: [&[Rule]; 3]) -> Self {
        let mut ix = CommandIndex::default();
        for (slot, rules) in lists.into_iter().enumerate() {
            for (i, r) in rules.iter().enumerate() {
                let Spec::Command(p) = &r.spec else { continue };
                let (key, kind) = match (p.key2(), p.key(), p.last_key()) {
                    (Some(k), _, _) => (k, KeyKind::TwoWords),
                    (None, Some(k), _) => (k, KeyKind::Program),
                    (None, None, Some(k)) => (k, KeyKind::LastWord),
                    (None, None, None) => {
                        ix.unkeyed[slot].push(i);
                        continue;
                    }
                };
                let entry = match ix.keyed.get_mut(key) {
                    Some(e) => e,
                    None => ix.keyed.entry(key.into()).or_default(),
                };
                let lists = match kind {
                    KeyKind::TwoWords => &mut entry.two_words,
                    KeyKind::Program => &mut entry.program,
                    KeyKind::LastWord => &mut entry.last_word,
                };
                lists[slot].push(i);
            }
        }
        ix
    }

    /// Looks up the entries `form` can match under.
    pub fn keys(&self, form: &str) -> FormKeys<'_> {
        if self.keyed.is_empty() {
            return FormKeys {
                two_words: None,
                program: None,
                last_word: None,
            };
        }
        let program = form.split(' ').next().unwrap_or("");
        let last = form.rsplit(' ').next().unwrap_or("");
        let by_program = self.keyed.get(program);
        FormKeys {
            two_words: pattern::two_words(form).and_then(|k| self.keyed.get(k)),
            program: by_program,
            // A one-word form's last word is its program: same entry, no second hash.
            last_word: if last.len() == form.len() {
                by_program
            } else {
                self.keyed.get(last)
            },
        }
    }

    /// First rule of `set` (the `kind` list) matching `form`, given its [`FormKeys`].
    /// `exact_only` restricts to patterns without `*` (exec wrappers are approved only by a
    /// full-command rule).
    pub fn first(
        &self,
        set: &RuleSet,
        kind: RuleKind,
        keys: &FormKeys<'_>,
        form: &str,
        exact_only: bool,
    ) -> Option<usize> {
        let slot = list_slot(kind);
        let ok = |i: usize| match &set.rules[i].spec {
            Spec::Command(p) => (!exact_only || !p.is_wild()) && p.matches(form),
            _ => false,
        };
        let empty: &[usize] = &[];
        let two = keys.two_words.map_or(empty, |k| &k.two_words[slot]);
        let mut best = first_where(two, ok);
        for list in [
            keys.program.map_or(empty, |k| &k.program[slot]),
            &self.unkeyed[slot],
            keys.last_word.map_or(empty, |k| &k.last_word[slot]),
        ] {
            // Positions ascend, so a list whose next candidate is past the best hit so far
            // cannot improve on it.
            let bound = best.unwrap_or(usize::MAX);
            let hit = list
                .iter()
                .copied()
                .take_while(|&i| i < bound)
                .find(|&i| ok(i));
            best = first(best, hit);
        }
        best
    }

    /// First rule of `set` (the `kind` list) matching `form`.
    pub fn command(
        &self,
        set: &RuleSet,
        kind: RuleKind,
        form: &str,
        exact_only: bool,
    ) -> Option<usize> {
        self.first(set, kind, &self.keys(form), form, exact_only)
    }
}

/// Compares a top-level scalar input field to a parameter pattern, on the literal value.
pub fn scalar_matches(v: &serde_json::Value, pat: &Wildcard) -> bool {
    match v {
        serde_json::Value::String(s) => pat.matches(s),
        serde_json::Value::Bool(b) => pat.matches(if *b { "true" } else { "false" }),
        serde_json::Value::Number(n) => pat.matches(&n.to_string()),
        _ => false,
    }
}

/// A rule hit: the index of the matching rule in its [`RuleSet`], if one matched.
pub type Hit = Option<usize>;

/// The earlier of two rule hits.
pub fn first(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
