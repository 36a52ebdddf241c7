//! Bash: parses the command line itself and runs every simple command through the exec
//! capability as an argument vector, so the host sees, resolves and checks each real program.
//!
//! Supported: words with `'…'`, `"…"` and `\` escapes; `&&`, `||`, `;` and newlines; `|`
//! pipes (each command's output is the next one's stdin); `>`, `>>`, `2>`, `2>>`, `&>`, `<`,
//! `2>&1` and `>&2`, with files written and read through the fs capability; `cd`; leading
//! `NAME=value` assignments (passed only if the variable is granted). Not supported, and
//! refused rather than guessed: `$` expansion, command substitution, globbing, subshells,
//! background jobs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_common::{exec_error, fs_error, join, opt_u64, string};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, exec, fs};

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
const MAX_OUTPUT_CHARS: usize = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Seq,
    Pipe,
    PipeAll,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Stdout,
    Stderr,
    Both,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Redirect {
    /// Output of `target` to a file.
    Out {
        target: Target,
        append: bool,
        file: String,
    },
    /// stdin from a file.
    In(String),
    /// `2>&1`.
    ErrToOut,
    /// `>&2`.
    OutToErr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Op(Op),
    Redir(Redirect),
}

#[derive(Debug, Default)]
struct Simple {
    words: Vec<String>,
    redirects: Vec<Redirect>,
}

fn invalid(m: impl Into<String>) -> ToolError {
    ToolError::InvalidInput(m.into())
}

/// The lexer's state: tokens so far, the word being read, and a redirection waiting for its
/// file name.
#[derive(Default)]
struct Lexer {
    out: Vec<Token>,
    word: String,
    in_word: bool,
    pending: Option<(Target, bool)>,
    pending_in: bool,
}

impl Lexer {
    /// Ends the word being read, as a word or as the file of a waiting redirection.
    fn push_word(&mut self) {
        if !self.in_word {
            return;
        }
        let w = std::mem::take(&mut self.word);
        self.in_word = false;
        if let Some((target, append)) = self.pending.take() {
            self.out.push(Token::Redir(Redirect::Out {
                target,
                append,
                file: w,
            }));
        } else if self.pending_in {
            self.pending_in = false;
            self.out.push(Token::Redir(Redirect::In(w)));
        } else {
            self.out.push(Token::Word(w));
        }
    }
}

/// Splits a command line into words, operators and redirections.
fn lex(src: &str) -> Result<Vec<Token>, ToolError> {
    let chars: Vec<char> = src.chars().collect();
    let mut lx = Lexer::default();
    let mut i = 0;

    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' => {
                lx.push_word();
                i += 1;
            }
            '\n' | ';' => {
                lx.push_word();
                lx.out.push(Token::Op(Op::Seq));
                i += 1;
            }
            '#' if !lx.in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\'' => {
                lx.in_word = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(invalid("unterminated single quote")),
                        Some('\'') => break,
                        Some(&ch) => lx.word.push(ch),
                    }
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                lx.in_word = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(invalid("unterminated double quote")),
                        Some('"') => break,
                        Some('\\') => match chars.get(i + 1) {
                            Some(&e @ ('"' | '\\' | '$' | '`')) => {
                                lx.word.push(e);
                                i += 1;
                            }
                            Some('\n') => i += 1,
                            _ => lx.word.push('\\'),
                        },
                        Some('$') if expands(chars.get(i + 1).copied()) => {
                            return Err(expansion_error(&chars[i..]));
                        }
                        Some('`') => {
                            return Err(invalid("command substitution (`…`) is not supported"));
                        }
                        Some(&ch) => lx.word.push(ch),
                    }
                    i += 1;
                }
                i += 1;
            }
            '\\' => {
                match next {
                    Some('\n') => {}
                    Some(e) => {
                        lx.word.push(e);
                        lx.in_word = true;
                    }
                    None => return Err(invalid("trailing backslash")),
                }
                i += 2;
            }
            '$' if expands(next) => return Err(expansion_error(&chars[i..])),
            '`' => return Err(invalid("command substitution (`…`) is not supported")),
            '(' | ')' => return Err(invalid("subshells and grouping are not supported")),
            '&' if next == Some('&') => {
                lx.push_word();
                lx.out.push(Token::Op(Op::And));
                i += 2;
            }
            '&' if next == Some('>') => {
                lx.push_word();
                let append = chars.get(i + 2) == Some(&'>');
                lx.pending = Some((Target::Both, append));
                i += if append { 3 } else { 2 };
            }
            '&' => return Err(invalid("background jobs (`&`) are not supported")),
            '|' if next == Some('|') => {
                lx.push_word();
                lx.out.push(Token::Op(Op::Or));
                i += 2;
            }
            '|' => {
                lx.push_word();
                if next == Some('&') {
                    lx.out.push(Token::Op(Op::PipeAll));
                    i += 2;
                } else {
                    lx.out.push(Token::Op(Op::Pipe));
                    i += 1;
                }
            }
            '>' | '<' => {
                // A bare `1` or `2` right before the operator is a file descriptor.
                let fd = if lx.in_word && (lx.word == "1" || lx.word == "2") && !lx.word.is_empty()
                {
                    let fd = lx.word.clone();
                    lx.word.clear();
                    lx.in_word = false;
                    Some(fd)
                } else {
                    lx.push_word();
                    None
                };
                if lx.pending.is_some() || lx.pending_in {
                    return Err(invalid("a redirection is missing its file"));
                }
                if c == '<' {
                    if fd.is_some() || next == Some('<') {
                        return Err(invalid(
                            "here-documents and input descriptors are not supported",
                        ));
                    }
                    lx.pending_in = true;
                    i += 1;
                    continue;
                }
                let append = next == Some('>');
                let after = if append { i + 2 } else { i + 1 };
                if chars.get(after) == Some(&'&') {
                    let dst = chars.get(after + 1).copied();
                    let redir = match (fd.as_deref(), dst) {
                        (Some("2"), Some('1')) => Redirect::ErrToOut,
                        (None | Some("1"), Some('2')) => Redirect::OutToErr,
                        _ => return Err(invalid("unsupported descriptor duplication")),
                    };
                    lx.out.push(Token::Redir(redir));
                    i = after + 2;
                    continue;
                }
                let target = if fd.as_deref() == Some("2") {
                    Target::Stderr
                } else {
                    Target::Stdout
                };
                lx.pending = Some((target, append));
                i = after;
            }
            _ => {
                lx.word.push(c);
                lx.in_word = true;
                i += 1;
            }
        }
    }
    lx.push_word();
    if lx.pending.is_some() || lx.pending_in {
        return Err(invalid("a redirection is missing its file"));
    }
    Ok(lx.out)
}

fn expands(next: Option<char>) -> bool {
    next.is_some_and(|n| {
        n.is_ascii_alphanumeric()
            || matches!(n, '_' | '{' | '(' | '?' | '@' | '*' | '#' | '$' | '!' | '-')
    })
}

fn expansion_error(rest: &[char]) -> ToolError {
    let shown: String = rest.iter().take(20).collect();
    invalid(format!(
        "shell expansion is not supported (at `{shown}`); write the value out, or quote it with single quotes"
    ))
}

/// Groups tokens into `(connector before, pipeline)` entries.
/// Simple commands joined by pipes; `true` where `|&` also pipes stderr.
type Pipeline = Vec<(Simple, bool)>;

fn parse(tokens: Vec<Token>) -> Result<Vec<(Op, Pipeline)>, ToolError> {
    let mut list = Vec::new();
    let mut pipeline: Vec<(Simple, bool)> = Vec::new();
    let mut cur = Simple::default();
    let mut connector = Op::Seq;
    let flush = |cur: &mut Simple| -> Option<Simple> {
        if cur.words.is_empty() && cur.redirects.is_empty() {
            None
        } else {
            Some(std::mem::take(cur))
        }
    };
    for t in tokens {
        match t {
            Token::Word(w) => cur.words.push(w),
            Token::Redir(r) => cur.redirects.push(r),
            Token::Op(op @ (Op::Pipe | Op::PipeAll)) => {
                let Some(s) = flush(&mut cur) else {
                    return Err(invalid("a pipe is missing its command"));
                };
                pipeline.push((s, op == Op::PipeAll));
            }
            Token::Op(op) => {
                match flush(&mut cur) {
                    Some(s) => pipeline.push((s, false)),
                    None if pipeline.is_empty() && op == Op::Seq => continue,
                    None => return Err(invalid("an operator is missing its command")),
                }
                list.push((connector, std::mem::take(&mut pipeline)));
                connector = op;
            }
        }
    }
    match flush(&mut cur) {
        Some(s) => pipeline.push((s, false)),
        None if !pipeline.is_empty() || matches!(connector, Op::And | Op::Or) => {
            return Err(invalid("the command ends with an operator"));
        }
        None => {}
    }
    if !pipeline.is_empty() {
        list.push((connector, pipeline));
    }
    Ok(list)
}

struct Shell {
    cwd: String,
    deadline: Instant,
    timeout_ms: u64,
    timed_out: bool,
    /// `exit` ran: nothing after it runs.
    exited: bool,
    /// The status of the last command, which a bare `exit` returns.
    last: i32,
}

/// Programs whose exit status 1 is an answer, not a failure, and what it means, as Claude
/// Code reads them when the command line ends with one.
const ONE_IS_AN_ANSWER: &[(&str, &str)] = &[
    ("grep", "No matches found"),
    ("rg", "No matches found"),
    ("diff", "Files differ"),
    ("test", "Condition is false"),
    ("[", "Condition is false"),
];

impl Shell {
    fn path(&self, p: &str) -> String {
        if p.starts_with('/') {
            p.to_string()
        } else {
            join(&self.cwd, p)
        }
    }

    fn write_to(&self, file: &str, bytes: &[u8], append: bool) -> Result<(), ToolError> {
        if file == "/dev/null" {
            return Ok(());
        }
        let path = self.path(file);
        let mut data = Vec::new();
        if append {
            match fs::read(&path) {
                Ok(old) => data = old,
                Err(e) if e.code == fs::ErrorCode::NotFound => {}
                Err(e) => return Err(fs_error(e)),
            }
        }
        data.extend_from_slice(bytes);
        fs::write(&path, &data).map_err(fs_error)
    }

    /// Runs one simple command; returns (status, stdout, stderr).
    fn run(
        &mut self,
        cmd: &Simple,
        stdin: Option<Vec<u8>>,
    ) -> Result<(i32, Vec<u8>, Vec<u8>), ToolError> {
        let mut stdin = stdin;
        for r in &cmd.redirects {
            if let Redirect::In(f) = r {
                stdin = Some(if f == "/dev/null" {
                    Vec::new()
                } else {
                    fs::read(&self.path(f)).map_err(fs_error)?
                });
            }
        }
        let assignments = cmd.words.iter().take_while(|w| is_assignment(w)).count();
        let env: Vec<(String, String)> = cmd.words[..assignments]
            .iter()
            .filter_map(|w| {
                w.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
        let argv = &cmd.words[assignments..];
        let (status, mut out, mut err) = match argv.first().map(String::as_str) {
            None => (0, Vec::new(), Vec::new()),
            Some("exit") => {
                self.exited = true;
                match argv.get(1).map(|a| a.parse::<i64>()) {
                    None => (self.last, Vec::new(), Vec::new()),
                    Some(Ok(n)) => ((n & 0xff) as i32, Vec::new(), Vec::new()),
                    Some(Err(_)) => (
                        2,
                        Vec::new(),
                        format!("exit: {}: numeric argument required\n", argv[1]).into_bytes(),
                    ),
                }
            }
            Some("cd") => {
                let target = argv.get(1).map(String::as_str).unwrap_or(".");
                let path = normalise(&self.path(target));
                match fs::stat(&path) {
                    Ok(m) if m.kind == fs::Kind::Directory => {
                        self.cwd = path;
                        (0, Vec::new(), Vec::new())
                    }
                    Ok(_) => (
                        1,
                        Vec::new(),
                        format!("cd: {target}: Not a directory\n").into_bytes(),
                    ),
                    Err(e) if e.code == fs::ErrorCode::Denied => {
                        return Err(ToolError::Denied(e.message));
                    }
                    Err(_) => (
                        1,
                        Vec::new(),
                        format!("cd: {target}: No such file or directory\n").into_bytes(),
                    ),
                }
            }
            Some(_) => {
                let left = self.deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    self.timed_out = true;
                    return Ok((-1, Vec::new(), Vec::new()));
                }
                let options = exec::Options {
                    cwd: Some(self.cwd.clone()),
                    stdin,
                    env,
                    timeout_ms: Some(left.as_millis().min(u32::MAX as u128) as u32),
                };
                let o = exec::run(argv, &options).map_err(exec_error)?;
                if o.timed_out {
                    self.timed_out = true;
                }
                (o.status, o.stdout, o.stderr)
            }
        };
        for r in &cmd.redirects {
            match r {
                Redirect::ErrToOut => out.append(&mut err),
                Redirect::OutToErr => err.append(&mut out),
                Redirect::Out {
                    target,
                    append,
                    file,
                } => {
                    let bytes = match target {
                        Target::Stdout => std::mem::take(&mut out),
                        Target::Stderr => std::mem::take(&mut err),
                        Target::Both => {
                            let mut b = std::mem::take(&mut out);
                            b.append(&mut err);
                            b
                        }
                    };
                    self.write_to(file, &bytes, *append)?;
                }
                Redirect::In(_) => {}
            }
        }
        Ok((status, out, err))
    }
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((k, _)) => {
            !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn cap(s: String) -> String {
    match s.char_indices().nth(MAX_OUTPUT_CHARS) {
        Some((cut, _)) => format!("{}\n… [output truncated]", &s[..cut]),
        None => s,
    }
}

struct Bash;

impl Tool for Bash {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Bash".into(),
            description: "Executes a command line. Each simple command runs as its own program (argv, no shell); `&&`, `||`, `;`, `|` and `>`/`>>`/`<` redirections are handled by the tool. Shell expansion, command substitution and globbing are not supported.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command to execute"},
                    "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
                    "description": {"type": "string", "description": "Clear, concise description of what this command does"}
                },
                "required": ["command"]
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let command = string(&input, "command")?;
        let timeout_ms = opt_u64(&input, "timeout")?
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .min(MAX_TIMEOUT_MS);
        let list = parse(lex(command)?)?;
        let mut sh = Shell {
            cwd: fs::cwd(),
            deadline: Instant::now() + Duration::from_millis(timeout_ms),
            timeout_ms,
            timed_out: false,
            exited: false,
            last: 0,
        };
        let mut last_program = String::new();
        let mut status = 0;
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        for (connector, pipeline) in &list {
            if (*connector == Op::And && status != 0) || (*connector == Op::Or && status == 0) {
                continue;
            }
            let mut carry: Option<Vec<u8>> = None;
            let n = pipeline.len();
            for (i, (cmd, all)) in pipeline.iter().enumerate() {
                let (st, mut out, mut err) = sh.run(cmd, carry.take())?;
                status = st;
                sh.last = st;
                last_program = cmd
                    .words
                    .iter()
                    .find(|w| !is_assignment(w))
                    .map(|w| w.rsplit('/').next().unwrap_or(w).to_string())
                    .unwrap_or_default();
                if *all {
                    out.append(&mut err);
                }
                stderr.append(&mut err);
                if i + 1 < n {
                    carry = Some(out);
                } else {
                    stdout.append(&mut out);
                }
                if sh.timed_out || sh.exited {
                    break;
                }
            }
            if sh.timed_out || sh.exited {
                break;
            }
        }
        let interpretation = ONE_IS_AN_ANSWER
            .iter()
            .find(|(p, _)| status == 1 && *p == last_program)
            .map(|(_, meaning)| *meaning);
        if interpretation.is_some() {
            status = 0;
        }
        let out = String::from_utf8_lossy(&stdout).into_owned();
        let err = String::from_utf8_lossy(&stderr).into_owned();
        // Claude Code's order: stdout then stderr on success; on failure the exit code
        // first, then stderr, then stdout.
        let joined = |parts: &[&str]| {
            parts
                .iter()
                .map(|p| p.trim_end())
                .filter(|p| !p.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        if sh.timed_out {
            return Err(ToolError::Failed(cap(joined(&[
                &format!("Command timed out after {} ms", sh.timeout_ms),
                &err,
                &out,
            ]))));
        }
        if status != 0 {
            return Err(ToolError::Failed(cap(joined(&[
                &format!("Exit code {status}"),
                &err,
                &out,
            ]))));
        }
        let content = match joined(&[&out, &err]) {
            c if c.is_empty() => "(Bash completed with no output)".to_string(),
            c => cap(c),
        };
        let mut structured = json!({
            "stdout": out,
            "stderr": err,
            "interrupted": false,
            "isImage": false,
            "noOutputExpected": false,
        });
        if let Some(meaning) = interpretation {
            structured["returnCodeInterpretation"] = json!(meaning);
        }
        Ok(ToolOutput {
            content,
            structured: Some(structured),
        })
    }
}

warden_sdk::export_tool!(Bash);
