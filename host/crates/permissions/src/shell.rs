//! Shell command parsing on top of `brush-parser`.
//!
//! A command line is flattened into the simple commands it would run: every element of a
//! pipeline or `&&`/`||`/`;`/`&` list, the bodies of subshells, brace groups and control-flow
//! constructs, and the contents of `$()`, backticks and process substitutions. Permission rules
//! are then matched per simple command, never against the raw text.

use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, IoFileRedirectKind,
    IoFileRedirectTarget, IoRedirect,
};
use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};
use brush_parser::{ParserOptions, TokenizerOptions};

/// Commands longer than this are never auto-approved (spec 2.3: commands over 10,000 chars
/// prompt), and parsing them is not attempted.
pub const MAX_COMMAND_LEN: usize = 10_000;

/// Nesting beyond this depth (`$( $( $( …)))`) is treated as unparsable rather than risking the
/// stack on adversarial input.
const MAX_DEPTH: usize = 24;

/// Parentheses open at once beyond this depth are refused before parsing: `brush-parser`
/// backtracks exponentially over unclosed `(` (twenty take seconds, forty would take hours),
/// and no command line an agent runs nests them this deep.
const MAX_PARENS: usize = 12;

/// Why a command line could not be turned into simple commands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The shell grammar rejected the text.
    #[error("cannot parse shell command: {0}")]
    Syntax(String),
    /// Over [`MAX_COMMAND_LEN`] characters.
    #[error("command is longer than {MAX_COMMAND_LEN} characters")]
    TooLong,
    /// Substitutions nested too deeply to analyse.
    #[error("command substitutions nested more than {MAX_DEPTH} levels deep")]
    TooDeep,
    /// `(` nested more than [`MAX_PARENS`] deep outside quotes.
    #[error("parentheses nested more than {MAX_PARENS} levels deep")]
    TooManyParens,
}

/// A redirection attached to a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `true` for `>`, `>>`, `>|`, `<>`, `&>`; `false` for `<`.
    pub write: bool,
    /// The unquoted target word.
    pub target: String,
    /// The target contains an expansion (`$VAR`, `$()`, `~`) or an unquoted glob, so its
    /// final path is unknown before the shell runs.
    pub unknown: bool,
}

/// One simple command with its words unquoted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` assignments.
    pub assignments: Vec<(String, String)>,
    /// The command name and arguments after quote removal.
    pub words: Vec<String>,
    /// The same words as written (quotes kept).
    pub raw_words: Vec<String>,
    /// Per word: whether it has an unquoted glob character (`*`, `?`, `[`).
    pub globbed: Vec<bool>,
    /// Redirections of this command (and of enclosing compound commands).
    pub redirects: Vec<Redirect>,
    /// Some word contains `$VAR`, `$()`, backticks or arithmetic expansion.
    pub dynamic: bool,
}

/// A parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedCommand {
    /// Every simple command the line would run, including those inside substitutions.
    pub commands: Vec<SimpleCommand>,
    /// The line contains `$()`, backticks or `$VAR` anywhere.
    pub dynamic: bool,
    /// The line contains a command substitution (`$()` or backticks).
    pub substitution: bool,
    /// Redirections on compound commands with no simple command inside to carry them.
    pub orphan_redirects: Vec<Redirect>,
}

fn options() -> ParserOptions {
    // Extended globbing off: `!(…)`/`@(…)` would otherwise be words, and bash without
    // `shopt -s extglob` (the non-interactive default) parses them as syntax errors.
    ParserOptions {
        enable_extended_globbing: false,
        ..ParserOptions::default()
    }
}

/// Parses `text` into its simple commands.
///
/// Lines in the plain subset [`parse_plain`] accepts are split by it; everything else goes
/// through [`parse_full`]. Both give the same result wherever the subset applies.
pub fn parse(text: &str) -> Result<ParsedCommand, ShellError> {
    if text.len() > MAX_COMMAND_LEN {
        return Err(ShellError::TooLong);
    }
    match parse_plain(text) {
        Some(parsed) => Ok(parsed),
        None => parse_full(text),
    }
}

/// Bytes of an unquoted word that bash takes literally: no quoting, expansion, globbing,
/// comment, tilde or redirection meaning. The same set `Walker::expand` passes through as is.
fn plain_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_./=:,+%@^".contains(&b)
}

/// Words bash treats as grammar in command position. Any of them anywhere sends the line to
/// the full parser, which knows where they count.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "function", "select", "time", "coproc",
];

/// Splits a command line without the full shell grammar, when it is nothing but plain words
/// (see `plain_word_byte`), spaces or tabs, and the operators `&&`, `||`, `|` and `;`, with
/// no reserved word. Returns `None` for anything else, including lines the shell would reject
/// (`a &&`, `; a`, `a ;; b`), so the caller falls back to [`parse_full`] and gets its exact
/// result or error.
///
/// Most commands an agent runs are of this shape, and splitting them this way costs a small
/// fraction of a full parse.
pub fn parse_plain(text: &str) -> Option<ParsedCommand> {
    let bytes = text.as_bytes();
    let mut out = ParsedCommand::default();
    let mut cmd = SimpleCommand::default();
    // Whether the current simple command has any word (assignment or not) yet.
    let mut has_word = false;
    // An operator that needs a command after it was the last token.
    let mut pending_op = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' => i += 1,
            b'&' | b'|' | b';' => {
                let next = bytes.get(i + 1).copied();
                let len = match (b, next) {
                    (b'&', Some(b'&')) | (b'|', Some(b'|')) => 2,
                    (b'|', _) | (b';', _) => 1,
                    // A lone `&` runs in the background; `|&` and `;;` are other grammar.
                    _ => return None,
                };
                if matches!((b, next), (b'|', Some(b'&')) | (b';', Some(b';'))) {
                    return None;
                }
                if !has_word {
                    return None;
                }
                finish_plain(&mut out, std::mem::take(&mut cmd));
                has_word = false;
                pending_op = b != b';';
                i += len;
            }
            _ if plain_word_byte(b) => {
                let start = i;
                while i < bytes.len() && plain_word_byte(bytes[i]) {
                    i += 1;
                }
                let word = &text[start..i];
                if RESERVED.contains(&word) {
                    return None;
                }
                if cmd.words.is_empty() && word.contains('=') {
                    let (name, value) = word.split_once('=')?;
                    let valid = name
                        .bytes()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
                    if !valid {
                        return None;
                    }
                    cmd.assignments.push((name.to_string(), value.to_string()));
                } else {
                    cmd.words.push(word.to_string());
                    cmd.raw_words.push(word.to_string());
                    cmd.globbed.push(false);
                }
                has_word = true;
                pending_op = false;
            }
            _ => return None,
        }
    }
    if pending_op || (!has_word && out.commands.is_empty()) {
        return None;
    }
    if has_word {
        finish_plain(&mut out, cmd);
    }
    Some(out)
}

/// Adds a finished simple command; assignment-only commands run nothing and are dropped, as
/// the full parser does.
fn finish_plain(out: &mut ParsedCommand, cmd: SimpleCommand) {
    if !cmd.words.is_empty() {
        out.commands.push(cmd);
    }
}

/// Parses `text` with the full shell grammar (`brush-parser`), whatever its shape.
pub fn parse_full(text: &str) -> Result<ParsedCommand, ShellError> {
    if text.len() > MAX_COMMAND_LEN {
        return Err(ShellError::TooLong);
    }
    let mut out = ParsedCommand::default();
    let opts = options();
    parse_into(text, &opts, 0, &mut out)?;
    Ok(out)
}

fn parse_into(
    text: &str,
    opts: &ParserOptions,
    depth: usize,
    out: &mut ParsedCommand,
) -> Result<(), ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    let (parens, split_parens) = scan_parens(text);
    if parens > MAX_PARENS {
        return Err(ShellError::TooManyParens);
    }
    let tok_opts = TokenizerOptions {
        enable_extended_globbing: opts.enable_extended_globbing,
        posix_mode: opts.posix_mode,
        sh_mode: opts.sh_mode,
    };
    let program = guarded(|| {
        let tokens = brush_parser::uncached_tokenize_str(text, &tok_opts)
            .map_err(|e| ShellError::Syntax(e.to_string()))?;
        brush_parser::parse_tokens(&tokens, opts).map_err(|e| ShellError::Syntax(e.to_string()))
    })?;
    let mut w = Walker {
        opts,
        depth,
        out,
        split_parens,
    };
    for list in &program.complete_commands {
        w.list(list, &[])?;
    }
    Ok(())
}

/// The deepest nesting of `(` outside quotes and escapes (the bodies of substitutions inside
/// double quotes are not counted here: each is measured again when it is parsed on its own),
/// and whether a `(` outside quotes is followed, after blanks, by another `(`: two subshells
/// to the shell (`( ( rm x ) )` runs `rm`), which brush-parser reads as the arithmetic command
/// `((…))`, where no command would run.
fn scan_parens(text: &str) -> (usize, bool) {
    let b = text.as_bytes();
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    let mut split = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' => {
                // To the closing quote, or the end when there is none.
                i = b[i + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |p| i + 1 + p);
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' => {
                depth += 1;
                max = max.max(depth);
                let next = b[i + 1..].iter().position(|c| !matches!(c, b' ' | b'\t'));
                split |= next.is_some_and(|p| p > 0 && b[i + 1 + p] == b'(');
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    (max, split)
}

/// Runs `brush-parser` on untrusted text. It is third-party code that panics on some input
/// (numbers too large for its integer types: `a 99999999999>x`, `~99999999999999999999`); a
/// panic must become "unparsable", which never auto-approves, not a crash of the host.
fn guarded<T>(parse: impl FnOnce() -> Result<T, ShellError>) -> Result<T, ShellError> {
    // Nothing the closure mutates outlives a panic: it only reads the text and options.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(parse))
        .unwrap_or_else(|_| Err(ShellError::Syntax("parser failure".to_string())))
}

struct Walker<'a, 'o> {
    opts: &'a ParserOptions,
    depth: usize,
    out: &'o mut ParsedCommand,
    /// The text has `(` blanks `(` outside quotes (see [`scan_parens`]).
    split_parens: bool,
}

struct Expanded {
    text: String,
    dynamic: bool,
    globbed: bool,
}

impl Walker<'_, '_> {
    fn list(&mut self, list: &CompoundList, outer: &[Redirect]) -> Result<(), ShellError> {
        for item in &list.0 {
            let and_or = &item.0;
            self.pipeline(&and_or.first, outer)?;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, outer)?,
                }
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, p: &ast::Pipeline, outer: &[Redirect]) -> Result<(), ShellError> {
        for cmd in &p.seq {
            self.command(cmd, outer)?;
        }
        Ok(())
    }

    fn command(&mut self, cmd: &Command, outer: &[Redirect]) -> Result<(), ShellError> {
        match cmd {
            Command::Simple(s) => self.simple(s, outer),
            Command::Compound(c, redirects) => {
                let mut reds = outer.to_vec();
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.redirect(io, &mut reds)?;
                    }
                }
                let before = self.out.commands.len();
                self.compound(c, &reds)?;
                if self.out.commands.len() == before && reds.len() > outer.len() {
                    self.out
                        .orphan_redirects
                        .extend(reds[outer.len()..].iter().cloned());
                }
                Ok(())
            }
            Command::Function(f) => {
                let mut reds = outer.to_vec();
                if let Some(r) = &f.body.1 {
                    for io in &r.0 {
                        self.redirect(io, &mut reds)?;
                    }
                }
                self.compound(&f.body.0, &reds)
            }
            Command::ExtendedTest(t, redirects) => {
                let mut reds = outer.to_vec();
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.redirect(io, &mut reds)?;
                    }
                }
                self.ext_test(&t.expr)?;
                if reds.len() > outer.len() {
                    self.out
                        .orphan_redirects
                        .extend(reds[outer.len()..].iter().cloned());
                }
                Ok(())
            }
        }
    }

    fn ext_test(&mut self, e: &ast::ExtendedTestExpr) -> Result<(), ShellError> {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.ext_test(a)?;
                self.ext_test(b)
            }
            E::Not(a) | E::Parenthesized(a) => self.ext_test(a),
            E::UnaryTest(_, w) => self.word(w).map(|_| ()),
            E::BinaryTest(_, a, b) => {
                self.word(a)?;
                self.word(b).map(|_| ())
            }
        }
    }

    fn compound(&mut self, c: &CompoundCommand, reds: &[Redirect]) -> Result<(), ShellError> {
        match c {
            // The parser may have joined `( (` into `((`; the shell would run what is inside.
            CompoundCommand::Arithmetic(_) if self.split_parens => Err(ShellError::Syntax(
                "`( (` is two subshells to the shell, not an arithmetic command".to_string(),
            )),
            CompoundCommand::Arithmetic(a) => self.dynamic_text(&a.expr.value),
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.dynamic_text(&e.value)?;
                }
                self.list(&f.body.list, reds)
            }
            CompoundCommand::BraceGroup(b) => self.list(&b.list, reds),
            CompoundCommand::Subshell(s) => self.list(&s.list, reds),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w)?;
                }
                self.list(&f.body.list, reds)
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p)?;
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body, reds)?;
                    }
                }
                Ok(())
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition, reds)?;
                self.list(&i.then, reds)?;
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, reds)?;
                    }
                    self.list(&e.body, reds)?;
                }
                Ok(())
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0, reds)?;
                self.list(&w.1.list, reds)
            }
            CompoundCommand::Coprocess(c) => self.command(&c.body, reds),
        }
    }

    /// Arithmetic text may hide `$(…)`; its commands are analysed like any other.
    fn dynamic_text(&mut self, text: &str) -> Result<(), ShellError> {
        self.out.dynamic = true;
        if text.contains("$(") || text.contains('`') {
            self.out.substitution = true;
            let mut probe = String::with_capacity(text.len() + 2);
            probe.push('"');
            probe.push_str(text);
            probe.push('"');
            self.expand(&probe)?;
        }
        Ok(())
    }

    fn simple(&mut self, s: &ast::SimpleCommand, outer: &[Redirect]) -> Result<(), ShellError> {
        let mut cmd = SimpleCommand {
            redirects: outer.to_vec(),
            ..SimpleCommand::default()
        };
        let mut items: Vec<&CommandPrefixOrSuffixItem> = Vec::new();
        if let Some(p) = &s.prefix {
            items.extend(p.0.iter());
        }
        let name_pos = items.len();
        if let Some(p) = &s.suffix {
            items.extend(p.0.iter());
        }
        let mut seen_word = false;
        let handle_word = |w: &Self, cmd: &mut SimpleCommand, e: Expanded, raw: &str| {
            let _ = w;
            cmd.dynamic |= e.dynamic;
            cmd.words.push(e.text);
            cmd.raw_words.push(raw.to_string());
            cmd.globbed.push(e.globbed);
        };
        for (i, item) in items.iter().enumerate() {
            if i == name_pos
                && let Some(name) = &s.word_or_name
            {
                let e = self.word(name)?;
                handle_word(self, &mut cmd, e, &name.value);
                seen_word = true;
            }
            match item {
                CommandPrefixOrSuffixItem::IoRedirect(io) => {
                    self.redirect(io, &mut cmd.redirects)?
                }
                CommandPrefixOrSuffixItem::Word(w) => {
                    let e = self.word(w)?;
                    handle_word(self, &mut cmd, e, &w.value);
                    seen_word = true;
                }
                CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    let value = match &a.value {
                        ast::AssignmentValue::Scalar(v) => self.word(v)?,
                        ast::AssignmentValue::Array(items) => {
                            let mut dynamic = false;
                            for (k, v) in items {
                                if let Some(k) = k {
                                    dynamic |= self.word(k)?.dynamic;
                                }
                                dynamic |= self.word(v)?.dynamic;
                            }
                            Expanded {
                                text: String::new(),
                                dynamic,
                                globbed: false,
                            }
                        }
                    };
                    cmd.dynamic |= value.dynamic;
                    if seen_word {
                        // `declare X=1` style: an argument, not an environment prefix.
                        cmd.words.push(w.value.clone());
                        cmd.raw_words.push(w.value.clone());
                        cmd.globbed.push(false);
                    } else {
                        let name = match &a.name {
                            ast::AssignmentName::VariableName(n) => n.clone(),
                            ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                        };
                        cmd.assignments.push((name, value.text));
                    }
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    self.out.substitution = true;
                    self.out.dynamic = true;
                    cmd.dynamic = true;
                    self.list(&sub.list, &[])?;
                }
            }
        }
        if items.len() == name_pos
            && let Some(name) = &s.word_or_name
        {
            let e = self.word(name)?;
            handle_word(self, &mut cmd, e, &name.value);
        }
        if cmd.words.is_empty() {
            // Assignment-only or redirect-only lines still write their redirect targets.
            if cmd.redirects.len() > outer.len() {
                self.out
                    .orphan_redirects
                    .extend(cmd.redirects[outer.len()..].iter().cloned());
            }
            return Ok(());
        }
        self.out.commands.push(cmd);
        Ok(())
    }

    fn redirect(&mut self, io: &IoRedirect, reds: &mut Vec<Redirect>) -> Result<(), ShellError> {
        match io {
            IoRedirect::File(_, kind, target) => {
                let write = match kind {
                    IoFileRedirectKind::Read => false,
                    IoFileRedirectKind::Write
                    | IoFileRedirectKind::Append
                    | IoFileRedirectKind::ReadAndWrite
                    | IoFileRedirectKind::Clobber => true,
                    IoFileRedirectKind::DuplicateInput | IoFileRedirectKind::DuplicateOutput => {
                        // `>&2` duplicates a descriptor; `>&file` (bash) writes a file.
                        match target {
                            IoFileRedirectTarget::Filename(w)
                            | IoFileRedirectTarget::Duplicate(w)
                                if !w.value.chars().all(|c| c.is_ascii_digit() || c == '-') =>
                            {
                                matches!(kind, IoFileRedirectKind::DuplicateOutput)
                            }
                            _ => return Ok(()),
                        }
                    }
                };
                match target {
                    IoFileRedirectTarget::Filename(w) | IoFileRedirectTarget::Duplicate(w) => {
                        let e = self.word(w)?;
                        let unknown = e.dynamic || e.globbed || e.text.starts_with('~');
                        reds.push(Redirect {
                            write,
                            target: e.text,
                            unknown,
                        });
                    }
                    IoFileRedirectTarget::Fd(_) => {}
                    IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.out.substitution = true;
                        self.out.dynamic = true;
                        self.list(&sub.list, &[])?;
                    }
                }
            }
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    let mut probe = String::with_capacity(doc.doc.value.len() + 2);
                    probe.push('"');
                    probe.push_str(&doc.doc.value.replace('"', "\\\""));
                    probe.push('"');
                    // A body that does not re-parse as a word has no substitution we can see;
                    // it only feeds stdin, so it is not a command of its own.
                    let _ = self.expand(&probe);
                }
            }
            IoRedirect::HereString(_, w) => {
                self.word(w)?;
            }
            IoRedirect::OutputAndError(w, _) => {
                let e = self.word(w)?;
                let unknown = e.dynamic || e.globbed || e.text.starts_with('~');
                reds.push(Redirect {
                    write: true,
                    target: e.text,
                    unknown,
                });
            }
        }
        Ok(())
    }

    fn word(&mut self, w: &ast::Word) -> Result<Expanded, ShellError> {
        self.expand(&w.value)
    }

    fn expand(&mut self, raw: &str) -> Result<Expanded, ShellError> {
        // Fast path: a plain word needs no piece parsing.
        if raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+%@^".contains(&b))
        {
            return Ok(Expanded {
                text: raw.to_string(),
                dynamic: false,
                globbed: false,
            });
        }
        let opts = self.opts;
        let pieces = guarded(|| {
            brush_parser::word::parse(raw, opts).map_err(|e| ShellError::Syntax(e.to_string()))
        })?;
        let mut e = Expanded {
            text: String::with_capacity(raw.len()),
            dynamic: false,
            globbed: false,
        };
        self.pieces(raw, &pieces, false, &mut e)?;
        Ok(e)
    }

    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        quoted: bool,
        e: &mut Expanded,
    ) -> Result<(), ShellError> {
        for p in pieces {
            let src = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => {
                    if !quoted && t.contains(['*', '?', '[']) {
                        e.globbed = true;
                    }
                    e.text.push_str(t);
                }
                WordPiece::SingleQuotedText(t) | WordPiece::AnsiCQuotedText(t) => {
                    e.text.push_str(t)
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, true, e)?;
                }
                WordPiece::EscapeSequence(s) => e.text.push_str(s.strip_prefix('\\').unwrap_or(s)),
                WordPiece::TildeExpansion(t) => {
                    e.text.push('~');
                    match t {
                        TildeExpr::Home => {}
                        TildeExpr::UserHome(u) => e.text.push_str(u),
                        _ => e.dynamic = true,
                    }
                }
                WordPiece::ParameterExpansion(_) => {
                    e.dynamic = true;
                    self.out.dynamic = true;
                    e.text.push_str(src);
                }
                WordPiece::CommandSubstitution(inner)
                | WordPiece::BackquotedCommandSubstitution(inner) => {
                    e.dynamic = true;
                    self.out.dynamic = true;
                    self.out.substitution = true;
                    e.text.push_str(src);
                    parse_into(inner, self.opts, self.depth + 1, self.out)?;
                }
                WordPiece::ArithmeticExpression(a) => {
                    e.dynamic = true;
                    e.text.push_str(src);
                    self.dynamic_text(&a.value)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        parse(text)
            .expect("parses")
            .commands
            .into_iter()
            .map(|c| c.words)
            .collect()
    }

    #[test]
    fn parser_panics_are_unparsable_not_crashes() {
        // brush-parser unwraps numbers into fixed-size integers: a file descriptor past i32
        // (command grammar) and a directory-stack index past usize (word parsing).
        for text in ["a 22222222222<>x", "echo ~99999999999999999999999"] {
            assert_eq!(
                parse(text),
                Err(ShellError::Syntax("parser failure".into())),
                "{text}"
            );
        }
    }

    #[test]
    fn unclosed_parentheses_are_refused_before_parsing() {
        // Forty unclosed `(` would keep the parser backtracking for hours.
        let start = std::time::Instant::now();
        assert_eq!(parse(&"(".repeat(40)), Err(ShellError::TooManyParens));
        assert_eq!(
            parse(" $|((((((((((((((((((((((((((((((((((((((( "),
            Err(ShellError::TooManyParens)
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        // Quoted parentheses are text, and twelve levels still parse.
        assert_eq!(
            words(r#"echo "((((((((((((((((" '))))))((((((((((((((('"#).len(),
            1
        );
        let nested = format!("{}b{}", "(a; ".repeat(12), ")".repeat(12));
        assert_eq!(words(&nested).len(), 13);
        assert_eq!(scan_parens(r#"a \( "(\"(" '(' (b)"#).0, 1);
    }

    #[test]
    fn spaced_double_parentheses_are_subshells_not_arithmetic() {
        // bash runs `rm` in `( ( rm -rf x ) )`; brush-parser alone reads the arithmetic `((…))`.
        for text in ["( ( rm -rf x ) )", "(\t(rm -rf x))", "a; ( ( ( rm x ) ) )"] {
            assert!(matches!(parse(text), Err(ShellError::Syntax(_))), "{text}");
        }
        assert_eq!(scan_parens("( (a) )"), (2, true));
        // `((` itself is arithmetic to bash too (it runs no command), and quoted text is text.
        assert!(parse("((x = 1 + 2))").is_ok());
        assert_eq!(scan_parens(r#"echo '( (' "( (" \( ("#), (1, false));
    }

    #[test]
    fn splits_every_compound_operator() {
        let got = words("a 1 && b 2 || c; d | e |& f & g\nh");
        let names: Vec<&str> = got.iter().map(|w| w[0].as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g", "h"]);
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(
            words(r#"echo "a b" 'c d' e\ f"#),
            [vec!["echo", "a b", "c d", "e f"]]
        );
    }

    #[test]
    fn substitutions_and_subshells_are_flattened() {
        let got = words("echo $(rm -rf x) `id` && (cd y; ls) && { pwd; }");
        let names: Vec<&str> = got.iter().map(|w| w[0].as_str()).collect();
        // Substitutions run before the command that uses their output.
        assert_eq!(names, ["rm", "id", "echo", "cd", "ls", "pwd"]);
        let p = parse("echo $(id)").expect("parses");
        assert!(p.substitution && p.dynamic);
    }

    #[test]
    fn control_flow_bodies_are_included() {
        let got = words(
            "for f in $(ls); do rm $f; done; if true; then mv a b; fi; while false; do x; done",
        );
        let names: Vec<&str> = got.iter().map(|w| w[0].as_str()).collect();
        assert_eq!(names, ["ls", "rm", "true", "mv", "false", "x"]);
    }

    #[test]
    fn redirections_are_collected() {
        let p = parse("echo hi > out.txt 2>&1 >> log < in").expect("parses");
        let r = &p.commands[0].redirects;
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(r[0].write && r[0].target == "out.txt");
        assert!(r[1].write && r[1].target == "log");
        assert!(!r[2].write && r[2].target == "in");
        let p = parse("echo > $HOME/x").expect("parses");
        assert!(p.commands[0].redirects[0].unknown);
    }

    #[test]
    fn heredoc_substitutions_are_seen() {
        let p = parse("cat <<EOF\nhello $(whoami)\nEOF\n").expect("parses");
        let names: Vec<&str> = p.commands.iter().map(|c| c.words[0].as_str()).collect();
        assert_eq!(names, ["whoami", "cat"]);
        let p = parse("cat <<'EOF'\nhello $(whoami)\nEOF\n").expect("parses");
        assert_eq!(p.commands.len(), 1);
    }

    #[test]
    fn leading_assignments_are_separated() {
        let p = parse("FOO=1 BAR='x y' cmd arg").expect("parses");
        let c = &p.commands[0];
        assert_eq!(
            c.assignments,
            [
                ("FOO".to_string(), "1".to_string()),
                ("BAR".to_string(), "x y".to_string())
            ]
        );
        assert_eq!(c.words, ["cmd", "arg"]);
    }

    #[test]
    fn plain_lines_skip_the_full_parser_with_the_same_result() {
        for text in [
            "git status && cargo build --release | tee out.log",
            "npm run sub12 --watch; make all",
            "cd src && ls -la && grep -r foo . | wc -l",
            "FOO=1 timeout 5 cargo test -- --nocapture || echo failed",
            "a&&b||c|d;e;",
            "\tls  -la\t",
            "FOO=1",
            "A=1 B=x=y cmd C=2",
        ] {
            let plain = parse_plain(text).expect(text);
            assert_eq!(Ok(plain), parse_full(text), "{text}");
        }
    }

    #[test]
    fn lines_outside_the_plain_subset_go_to_the_full_parser() {
        for text in [
            "",
            "   ",
            "echo 'a b'",
            "echo \"a\"",
            "echo $HOME",
            "echo `id`",
            "ls *.rs",
            "echo hi > out",
            "(ls)",
            "{ ls; }",
            "echo a\\ b",
            "ls # note",
            "ls ~",
            "a\nb",
            "a & b",
            "a |& b",
            "a ;; b",
            "a &&",
            "&& a",
            "; a",
            "a ; ; b",
            "a | | b",
            "time ls",
            "for x in a; do ls; done",
            "if true; then ls; fi",
            "A+=1 ls",
            "1A=2 ls",
            "=x ls",
            ";",
            "FOO=1;",
            "echo é",
        ] {
            assert!(parse_plain(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn unparsable_and_oversized_commands_are_errors() {
        assert!(parse("echo 'unterminated").is_err());
        assert!(parse("if then fi (").is_err());
        assert_eq!(
            parse(&"a".repeat(MAX_COMMAND_LEN + 1)),
            Err(ShellError::TooLong)
        );
    }
}
