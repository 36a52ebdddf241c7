//! The `LSP` tool: its input, the request each operation makes, and the text its result is
//! given as (positions 1-based, paths relative to the project).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare,
    DocumentSymbolRequest, GotoDefinition, GotoImplementation, HoverRequest, References,
    WorkspaceSymbolRequest,
};
use lsp_types::{
    CallHierarchyItem, Diagnostic, DiagnosticSeverity, GotoDefinitionResponse, HoverContents,
    Location, MarkedString, OneOf, Position, Range, SymbolKind, TextDocumentIdentifier,
    TextDocumentPositionParams, Uri,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::client::{Client, file_uri, uri_path};
use crate::manager::LspManager;

/// What the tool is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Operation {
    /// `textDocument/definition`.
    GoToDefinition,
    /// `textDocument/references` (declaration included).
    FindReferences,
    /// `textDocument/hover`.
    Hover,
    /// `textDocument/documentSymbol`.
    DocumentSymbol,
    /// `workspace/symbol` with `query`.
    WorkspaceSymbol,
    /// `textDocument/implementation`.
    GoToImplementation,
    /// `textDocument/prepareCallHierarchy`.
    PrepareCallHierarchy,
    /// `callHierarchy/incomingCalls` of the item at the position.
    IncomingCalls,
    /// `callHierarchy/outgoingCalls` of the item at the position.
    OutgoingCalls,
}

impl Operation {
    /// Every operation, as the tool's schema lists them.
    pub const ALL: [&'static str; 9] = [
        "goToDefinition",
        "findReferences",
        "hover",
        "documentSymbol",
        "workspaceSymbol",
        "goToImplementation",
        "prepareCallHierarchy",
        "incomingCalls",
        "outgoingCalls",
    ];
}

/// The tool's input.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolInput {
    /// What to do.
    pub operation: Operation,
    /// The file (absolute, or relative to the project).
    pub file_path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based character.
    pub character: u32,
    /// For `workspaceSymbol`.
    #[serde(default)]
    pub query: Option<String>,
}

/// The tool's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// The operation.
    pub operation: Operation,
    /// The answer, as text for the model.
    pub result: String,
    /// The file, as given.
    pub file_path: String,
    /// How many results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_count: Option<usize>,
    /// In how many files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_count: Option<usize>,
}

/// The JSON Schema of [`ToolInput`].
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": Operation::ALL, "description": "The operation to perform"},
            "filePath": {"type": "string", "description": "The absolute or relative path to the file"},
            "line": {"type": "integer", "minimum": 1, "description": "The line number (1-based, as shown in editors)"},
            "character": {"type": "integer", "minimum": 1, "description": "The character offset (1-based, as shown in editors)"},
            "query": {"type": "string", "description": "The symbol to search for (workspaceSymbol)"}
        },
        "required": ["operation", "filePath", "line", "character"],
        "additionalProperties": false
    })
}

/// The tool's description for the model.
pub const DESCRIPTION: &str = "Code intelligence from the project's language servers: goToDefinition, findReferences, hover, documentSymbol, workspaceSymbol (with `query`), goToImplementation, prepareCallHierarchy, incomingCalls, outgoingCalls. `line` and `character` are 1-based.";

/// Runs `input` on the server for `path` (absolute).
pub async fn run(
    manager: &LspManager,
    input: &ToolInput,
    path: &Path,
) -> Result<ToolOutput, String> {
    let opened = manager.open(path, false).await?.ok_or_else(|| {
        format!(
            "no language server is configured for {} files",
            path.extension()
                .map(|e| format!(".{}", e.to_string_lossy()))
                .unwrap_or_else(|| "extension-less".into())
        )
    })?;
    let client = opened.client;
    let uri =
        file_uri(path).ok_or_else(|| format!("{} is not an absolute path", path.display()))?;
    let at = TextDocumentPositionParams {
        text_document: TextDocumentIdentifier { uri: uri.clone() },
        position: Position {
            line: input.line.saturating_sub(1),
            character: input.character.saturating_sub(1),
        },
    };
    let f = Fmt {
        folder: manager.folder().to_path_buf(),
    };
    let e = |e: crate::LspError| e.to_string();
    let (result, count, files) = match input.operation {
        Operation::GoToDefinition | Operation::GoToImplementation => {
            let found = if input.operation == Operation::GoToDefinition {
                client
                    .request::<GotoDefinition>(lsp_types::GotoDefinitionParams {
                        text_document_position_params: at,
                        work_done_progress_params: Default::default(),
                        partial_result_params: Default::default(),
                    })
                    .await
                    .map_err(e)?
            } else {
                client
                    .request::<GotoImplementation>(lsp_types::GotoDefinitionParams {
                        text_document_position_params: at,
                        work_done_progress_params: Default::default(),
                        partial_result_params: Default::default(),
                    })
                    .await
                    .map_err(e)?
            };
            let locs = locations(found);
            let what = if input.operation == Operation::GoToDefinition {
                ("definition", "Defined in")
            } else {
                ("implementation", "Implemented in")
            };
            let text = match locs.as_slice() {
                [] => format!("No {} found.", what.0),
                [one] => format!("{} {}", what.1, f.loc(&one.uri, &one.range)),
                many => format!(
                    "Found {} {}s:\n{}",
                    many.len(),
                    what.0,
                    many.iter()
                        .map(|l| format!("  {}", f.loc(&l.uri, &l.range)))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            };
            (text, locs.len(), f.files(locs.iter().map(|l| &l.uri)))
        }
        Operation::FindReferences => {
            let locs = client
                .request::<References>(lsp_types::ReferenceParams {
                    text_document_position: at,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                    context: lsp_types::ReferenceContext {
                        include_declaration: true,
                    },
                })
                .await
                .map_err(e)?
                .unwrap_or_default();
            let files = f.files(locs.iter().map(|l| &l.uri));
            let text = if locs.is_empty() {
                "No references found.".to_string()
            } else {
                format!(
                    "Found {} reference{} across {files} file{}:\n{}",
                    locs.len(),
                    plural(locs.len()),
                    plural(files),
                    locs.iter()
                        .map(|l| format!("  {}", f.loc(&l.uri, &l.range)))
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            };
            (text, locs.len(), files)
        }
        Operation::Hover => {
            let hover = client
                .request::<HoverRequest>(lsp_types::HoverParams {
                    text_document_position_params: at,
                    work_done_progress_params: Default::default(),
                })
                .await
                .map_err(e)?;
            match hover {
                None => ("No hover information.".to_string(), 0, 0),
                Some(h) => (
                    format!(
                        "Hover at {}:{}:\n{}",
                        input.line,
                        input.character,
                        hover_text(&h.contents).trim()
                    ),
                    1,
                    1,
                ),
            }
        }
        Operation::DocumentSymbol => {
            let found = client
                .request::<DocumentSymbolRequest>(lsp_types::DocumentSymbolParams {
                    text_document: TextDocumentIdentifier { uri },
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await
                .map_err(e)?;
            let mut lines = Vec::new();
            match found {
                None => {}
                Some(lsp_types::DocumentSymbolResponse::Flat(flat)) => {
                    for s in flat {
                        lines.push(format!(
                            "{} ({}) - line {}",
                            s.name,
                            kind(s.kind),
                            s.location.range.start.line + 1
                        ));
                    }
                }
                Some(lsp_types::DocumentSymbolResponse::Nested(nested)) => {
                    fn walk(s: &[lsp_types::DocumentSymbol], depth: usize, out: &mut Vec<String>) {
                        for s in s {
                            out.push(format!(
                                "{}{} ({}) - line {}",
                                "  ".repeat(depth),
                                s.name,
                                kind(s.kind),
                                s.range.start.line + 1
                            ));
                            walk(s.children.as_deref().unwrap_or(&[]), depth + 1, out);
                        }
                    }
                    walk(&nested, 0, &mut lines);
                }
            }
            let n = lines.len();
            let text = if n == 0 {
                "No symbols found.".to_string()
            } else {
                format!("Document symbols:\n{}", lines.join("\n"))
            };
            (text, n, usize::from(n > 0))
        }
        Operation::WorkspaceSymbol => {
            let query = input.query.clone().unwrap_or_default();
            // Servers answer `workspace/symbol` from what they have indexed so far, without
            // waiting: pyright answers nothing until it has loaded its workspace, clangd
            // nothing until it has parsed the open file. A document request waits for both,
            // so one on the file first makes the answer the same on a cold server as on a
            // warm one. Its own answer (or refusal) does not matter.
            let _ = client
                .request::<DocumentSymbolRequest>(lsp_types::DocumentSymbolParams {
                    text_document: TextDocumentIdentifier { uri: uri.clone() },
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await;
            let found = client
                .request::<WorkspaceSymbolRequest>(lsp_types::WorkspaceSymbolParams {
                    query: query.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await
                .map_err(e)?;
            let mut rows: Vec<(String, SymbolKind, Uri, Option<Range>)> = Vec::new();
            match found {
                None => {}
                Some(lsp_types::WorkspaceSymbolResponse::Flat(flat)) => {
                    for s in flat {
                        rows.push((s.name, s.kind, s.location.uri, Some(s.location.range)));
                    }
                }
                Some(lsp_types::WorkspaceSymbolResponse::Nested(nested)) => {
                    for s in nested {
                        let (uri, range) = match s.location {
                            OneOf::Left(l) => (l.uri, Some(l.range)),
                            OneOf::Right(w) => (w.uri, None),
                        };
                        rows.push((s.name, s.kind, uri, range));
                    }
                }
            }
            let files = f.files(rows.iter().map(|r| &r.2));
            let text = if rows.is_empty() {
                format!("No symbols matching `{query}` found.")
            } else {
                format!(
                    "Found {} symbol{} matching `{query}`:\n{}",
                    rows.len(),
                    plural(rows.len()),
                    rows.iter()
                        .map(|(name, k, uri, range)| {
                            let at = match range {
                                Some(r) => f.loc(uri, r),
                                None => f.path(uri),
                            };
                            format!("  {name} ({}) - {at}", kind(*k))
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            };
            (text, rows.len(), files)
        }
        Operation::PrepareCallHierarchy | Operation::IncomingCalls | Operation::OutgoingCalls => {
            let items = prepare(&client, at).await.map_err(e)?;
            match input.operation {
                Operation::PrepareCallHierarchy => {
                    let text = if items.is_empty() {
                        "No call hierarchy item at this position.".to_string()
                    } else {
                        format!(
                            "Call hierarchy item{}:\n{}",
                            if items.len() == 1 { "" } else { "s" },
                            items
                                .iter()
                                .map(|i| format!("  {}", f.item(i)))
                                .collect::<Vec<_>>()
                                .join("\n")
                        )
                    };
                    (text, items.len(), f.files(items.iter().map(|i| &i.uri)))
                }
                op => {
                    let Some(item) = items.into_iter().next() else {
                        return Ok(ToolOutput {
                            operation: input.operation,
                            result: "No call hierarchy item at this position.".into(),
                            file_path: input.file_path.clone(),
                            result_count: Some(0),
                            file_count: Some(0),
                        });
                    };
                    let name = item.name.clone();
                    let calls: Vec<(CallHierarchyItem, Vec<Range>)> =
                        if op == Operation::IncomingCalls {
                            client
                                .request::<CallHierarchyIncomingCalls>(
                                    lsp_types::CallHierarchyIncomingCallsParams {
                                        item,
                                        work_done_progress_params: Default::default(),
                                        partial_result_params: Default::default(),
                                    },
                                )
                                .await
                                .map_err(e)?
                                .unwrap_or_default()
                                .into_iter()
                                .map(|c| (c.from, c.from_ranges))
                                .collect()
                        } else {
                            client
                                .request::<CallHierarchyOutgoingCalls>(
                                    lsp_types::CallHierarchyOutgoingCallsParams {
                                        item,
                                        work_done_progress_params: Default::default(),
                                        partial_result_params: Default::default(),
                                    },
                                )
                                .await
                                .map_err(e)?
                                .unwrap_or_default()
                                .into_iter()
                                .map(|c| (c.to, c.from_ranges))
                                .collect()
                        };
                    let dir = if op == Operation::IncomingCalls {
                        ("incoming", "to", "calls at")
                    } else {
                        ("outgoing", "from", "called at")
                    };
                    let text = if calls.is_empty() {
                        format!("No {} calls {} `{name}`.", dir.0, dir.1)
                    } else {
                        format!(
                            "Found {} {} call{} {} `{name}`:\n{}",
                            calls.len(),
                            dir.0,
                            plural(calls.len()),
                            dir.1,
                            calls
                                .iter()
                                .map(|(i, ranges)| {
                                    let at: Vec<String> = ranges
                                        .iter()
                                        .map(|r| {
                                            format!(
                                                "{}:{}",
                                                r.start.line + 1,
                                                r.start.character + 1
                                            )
                                        })
                                        .collect();
                                    format!("  {} [{} {}]", f.item(i), dir.2, at.join(", "))
                                })
                                .collect::<Vec<_>>()
                                .join("\n")
                        )
                    };
                    (text, calls.len(), f.files(calls.iter().map(|c| &c.0.uri)))
                }
            }
        }
    };
    Ok(ToolOutput {
        operation: input.operation,
        result,
        file_path: input.file_path.clone(),
        result_count: Some(count),
        file_count: Some(files),
    })
}

async fn prepare(
    client: &Arc<Client>,
    at: TextDocumentPositionParams,
) -> Result<Vec<CallHierarchyItem>, crate::LspError> {
    Ok(client
        .request::<CallHierarchyPrepare>(lsp_types::CallHierarchyPrepareParams {
            text_document_position_params: at,
            work_done_progress_params: Default::default(),
        })
        .await?
        .unwrap_or_default())
}

fn locations(found: Option<GotoDefinitionResponse>) -> Vec<Location> {
    match found {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => vec![l],
        Some(GotoDefinitionResponse::Array(a)) => a,
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .map(|l| Location {
                uri: l.target_uri,
                range: l.target_selection_range,
            })
            .collect(),
    }
}

fn hover_text(c: &HoverContents) -> String {
    fn marked(m: &MarkedString) -> String {
        match m {
            MarkedString::String(s) => s.clone(),
            MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
        }
    }
    match c {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(a) => a.iter().map(marked).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(m) => m.value.clone(),
    }
}

fn kind(k: SymbolKind) -> String {
    format!("{k:?}")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

struct Fmt {
    folder: PathBuf,
}

impl Fmt {
    fn path(&self, uri: &Uri) -> String {
        match uri_path(uri) {
            Some(p) => p
                .strip_prefix(&self.folder)
                .map(Path::to_path_buf)
                .unwrap_or(p)
                .display()
                .to_string(),
            None => uri.as_str().to_string(),
        }
    }

    fn loc(&self, uri: &Uri, r: &Range) -> String {
        format!(
            "{}:{}:{}",
            self.path(uri),
            r.start.line + 1,
            r.start.character + 1
        )
    }

    fn item(&self, i: &CallHierarchyItem) -> String {
        format!(
            "{} ({}) - {}",
            i.name,
            kind(i.kind),
            self.loc(&i.uri, &i.selection_range)
        )
    }

    fn files<'a>(&self, uris: impl Iterator<Item = &'a Uri>) -> usize {
        uris.map(|u| u.as_str()).collect::<BTreeSet<_>>().len()
    }
}

/// A severity's word.
pub fn severity(d: &Diagnostic) -> &'static str {
    match d.severity {
        Some(DiagnosticSeverity::ERROR) | None => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        Some(_) => "error",
    }
}

/// `file:line:col severity message [source]`, 1-based.
pub fn diagnostic_line(file: &str, d: &Diagnostic) -> String {
    let mut s = format!(
        "{file}:{}:{} {} {}",
        d.range.start.line + 1,
        d.range.start.character + 1,
        severity(d),
        d.message.replace('\n', " ")
    );
    if let Some(src) = &d.source {
        s.push_str(&format!(" [{src}]"));
    }
    s
}

/// The block appended to a Write or Edit result: the file's diagnostics, wrapped in
/// `<new-diagnostics>`, or `None` when there are none.
pub fn new_diagnostics_block(file: &str, diags: &[Diagnostic]) -> Option<String> {
    if diags.is_empty() {
        return None;
    }
    let mut s =
        String::from("<new-diagnostics>The following new diagnostic issues were detected:\n\n");
    s.push_str(file);
    s.push_str(":\n");
    for d in diags {
        let mark = match severity(d) {
            "error" => "✘",
            "warning" => "⚠",
            _ => "★",
        };
        s.push_str(&format!(
            "  {mark} [Line {}:{}] {}",
            d.range.start.line + 1,
            d.range.start.character + 1,
            d.message.replace('\n', " ")
        ));
        if let Some(code) = &d.code {
            let code = match code {
                lsp_types::NumberOrString::Number(n) => n.to_string(),
                lsp_types::NumberOrString::String(s) => s.clone(),
            };
            s.push_str(&format!(" [{code}]"));
        }
        if let Some(src) = &d.source {
            s.push_str(&format!(" ({src})"));
        }
        s.push('\n');
    }
    s.push_str("</new-diagnostics>");
    Some(s)
}
