//! Compiling and running a jq query with jaq, and printing its results like `jq`.

use std::io::{self, Write};

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, compile, data, load};
use jaq_json::Val;

/// A compiled query.
pub type Filter = jaq_core::Filter<data::JustLut<Val>>;

/// Why a query could not run to the end.
#[derive(Debug, PartialEq)]
pub enum RunError {
    /// The file is not JSON.
    NotJson(String),
    /// The query failed on the data (`cannot index ...`, `error(...)`).
    Query(String),
}

/// What a query printed.
#[derive(Debug, Default)]
pub struct Output {
    /// The results, one per line.
    pub text: String,
    /// How many results were printed (in part, for the last one when truncated).
    pub results: usize,
    /// The output reached the cap; later results were not computed.
    pub truncated: bool,
    /// The exit code, when the query called `halt`/`halt_error`.
    pub halted: Option<i32>,
}

impl Output {
    /// The text for the model: the results, and a note when they were cut, when there were
    /// none, or when the query halted.
    pub fn into_content(self, cap: usize) -> String {
        let mut content = self.text;
        if self.truncated {
            content.push_str(&format!(
                "\n[output truncated at {} KB after {} result(s); narrow the query to see the rest]",
                cap / 1024,
                self.results
            ));
        } else if self.results == 0 {
            content.push_str("[the query produced no results]");
        }
        if let Some(code) = self.halted {
            content.push_str(&format!("\n[the query called halt (exit code {code})]"));
        }
        content
    }
}

/// Parses and compiles `code` with jq's standard library, or says what is wrong with it, the
/// way jq would: `jq: error: ... at column N`.
pub fn compile(code: &str) -> Result<Filter, String> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(&arena, File { code, path: () })
        .map_err(|errs| load_errors(code, errs))?;
    Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| compile_errors(code, errs))
}

/// Runs `filter` on every JSON value of `input`, printing the results until `cap` bytes.
pub fn run(filter: &Filter, input: &[u8], raw: bool, cap: usize) -> Result<Output, RunError> {
    let values = jaq_json::read::parse_many(input)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| RunError::NotJson(e.to_string()))?;
    let pp = jaq_json::write::Pp {
        indent: Some("  ".to_string()),
        sep_space: true,
        ..Default::default()
    };
    let mut w = Capped {
        buf: Vec::new(),
        cap,
        full: false,
    };
    let mut out = Output::default();
    'values: for value in values {
        let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
        for result in filter.id.run((ctx, value)) {
            let v = match result {
                Ok(v) => v,
                Err(exn) => match exn.get_err() {
                    Ok(e) => return Err(RunError::Query(runtime_error(e, &w.buf))),
                    Err(exn) => {
                        // `halt`: stop quietly, as jq does; other control flow cannot escape.
                        out.halted = Some(exn.get_halt().unwrap_or(5));
                        break 'values;
                    }
                },
            };
            out.results += 1;
            let printed = match (&v, raw) {
                (Val::TStr(s) | Val::BStr(s), true) => w.write_all(s),
                _ => jaq_json::write::write(&mut w, &pp, 0, &v),
            }
            .and_then(|()| w.write_all(b"\n"));
            if printed.is_err() || w.full {
                out.truncated = true;
                break 'values;
            }
        }
    }
    out.text = utf8(w.buf, out.truncated);
    Ok(out)
}

/// A runtime error as jq words it; what was printed before it is mentioned, since the model
/// only sees the error.
fn runtime_error(e: jaq_core::Error<Val>, printed: &[u8]) -> String {
    let msg = match e.into_val() {
        // `error("text")` and jaq's own messages are strings: print them bare.
        Val::TStr(s) | Val::BStr(s) => String::from_utf8_lossy(&s).into_owned(),
        other => format!("{other} (not a string)"),
    };
    let lines = printed.iter().filter(|b| **b == b'\n').count();
    if lines == 0 {
        format!("jq: error: {msg}")
    } else {
        format!("jq: error: {msg} (after {lines} line(s) of output)")
    }
}

/// The output as text: invalid UTF-8 replaced, and a character cut by the cap dropped.
fn utf8(mut buf: Vec<u8>, truncated: bool) -> String {
    if truncated
        && let Err(e) = std::str::from_utf8(&buf)
        && e.error_len().is_none()
    {
        buf.truncate(e.valid_up_to());
    }
    match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// A buffer that refuses to grow past `cap`, so one huge result cannot exhaust memory.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    full: bool,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.cap - self.buf.len();
        if data.len() > room {
            self.buf.extend_from_slice(&data[..room]);
            self.full = true;
            return Err(io::Error::other("output cap reached"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The 1-based column of `at` (a slice of `code`) in `code`, in characters.
fn column(code: &str, at: &str) -> usize {
    let offset = (at.as_ptr() as usize)
        .saturating_sub(code.as_ptr() as usize)
        .min(code.len());
    code.get(..offset).map_or(offset, |s| s.chars().count()) + 1
}

/// A few characters of what was found, for messages.
fn found(s: &str) -> String {
    let s = s.trim_start();
    if s.is_empty() {
        return "end of query".to_string();
    }
    let short: String = s.chars().take(20).collect();
    if short.len() < s.len() {
        format!("`{short}...`")
    } else {
        format!("`{short}`")
    }
}

fn load_errors(code: &str, errs: load::Errors<&str, ()>) -> String {
    let mut msgs = Vec::new();
    for (_file, err) in errs {
        match err {
            load::Error::Io(es) => {
                for (path, e) in es {
                    msgs.push(format!("jq: error: cannot load module {path}: {e}"));
                }
            }
            load::Error::Lex(es) => {
                for (expect, rest) in es {
                    msgs.push(format!(
                        "jq: syntax error at column {}: expected {}, found {}",
                        column(code, rest),
                        expect.as_str(),
                        found(rest)
                    ));
                }
            }
            load::Error::Parse(es) => {
                for (expect, token) in es {
                    msgs.push(format!(
                        "jq: syntax error at column {}: expected {}, found {}",
                        column(code, token),
                        expect.as_str(),
                        found(token)
                    ));
                }
            }
        }
    }
    msgs.join("\n")
}

fn compile_errors(code: &str, errs: compile::Errors<&str, ()>) -> String {
    let mut msgs = Vec::new();
    for (_file, es) in errs {
        for (name, undefined) in es {
            let what = match undefined {
                compile::Undefined::Filter(arity) => format!("{name}/{arity}"),
                _ => name.to_string(),
            };
            msgs.push(format!(
                "jq: error: {} {what} is not defined at column {}",
                undefined.as_str(),
                column(code, name)
            ));
        }
    }
    msgs.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(code: &str, input: &str) -> Result<String, String> {
        let f = compile(code)?;
        run(&f, input.as_bytes(), false, 1 << 20)
            .map(|o| o.text)
            .map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn runs_jq_queries() {
        let doc = r#"{"a":{"b":[1,2,3]},"n":[{"x":1,"k":"p"},{"x":5,"k":"q"}]}"#;
        assert_eq!(q(".a.b[-1]", doc).unwrap(), "3\n");
        assert_eq!(q(".a.b[1:]", doc).unwrap(), "[\n  2,\n  3\n]\n");
        assert_eq!(
            q(".a", doc).unwrap(),
            "{\n  \"b\": [\n    1,\n    2,\n    3\n  ]\n}\n"
        );
        assert_eq!(
            q("[.n[] | select(.x > 2) | .k]", doc).unwrap(),
            "[\n  \"q\"\n]\n"
        );
        assert_eq!(q("keys", doc).unwrap(), "[\n  \"a\",\n  \"n\"\n]\n");
        assert_eq!(q(".n | length", doc).unwrap(), "2\n");
        assert_eq!(q("map(.x) | add", r#"[{"x":1},{"x":2}]"#).unwrap(), "3\n");
        assert_eq!(q(".x", "{\"x\":1}\n{\"x\":2}\n").unwrap(), "1\n2\n");
    }

    #[test]
    fn raw_prints_strings_bare() {
        let f = compile(".[]").unwrap();
        let o = run(&f, br#"["a\"b", 1]"#, true, 1000).unwrap();
        assert_eq!(o.text, "a\"b\n1\n");
    }

    #[test]
    fn errors_read_like_jq() {
        let e = compile(".a | ").err().unwrap();
        assert!(e.starts_with("jq: syntax error"), "{e}");
        let e = compile("nosuchfilter(1)").err().unwrap();
        assert!(e.contains("nosuchfilter/1 is not defined"), "{e}");
        let e = q(".a.b", "[1]").unwrap_err();
        assert!(e.contains("cannot index"), "{e}");
        let e = q("error(\"boom\")", "1").unwrap_err();
        assert!(e.contains("jq: error: boom"), "{e}");
        assert!(matches!(
            run(&compile(".").unwrap(), b"{nope", false, 10),
            Err(RunError::NotJson(_))
        ));
    }

    /// The cases the host's tool runner uses, minus the file system: every query case gives
    /// the expected text or error here too.
    #[test]
    fn shared_cases_hold_for_the_query_engine() {
        let text = include_str!("../tests/cases.json");
        let cases: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut checked = 0;
        for case in cases.as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let input = &case["input"];
            let expect = &case["expect"];
            let (Some(path), Some(code)) = (input["file_path"].as_str(), input["query"].as_str())
            else {
                continue;
            };
            let path = path.strip_prefix("./").unwrap_or(path);
            let Some(file) = case["files"].get(path) else {
                continue;
            };
            if input.get("raw").is_some_and(|r| !r.is_boolean()) {
                continue; // checked by the tool, before any query runs
            }
            let raw = input["raw"].as_bool().unwrap_or(false);
            let result = compile(code).and_then(|f| {
                let bytes = serde_json::to_vec(file).unwrap();
                match run(&f, &bytes, raw, crate::MAX_OUTPUT) {
                    Ok(out) => Ok(out.into_content(crate::MAX_OUTPUT)),
                    Err(RunError::Query(m) | RunError::NotJson(m)) => Err(m),
                }
            });
            match (expect["ok"].as_bool().unwrap(), result) {
                (true, Ok(content)) => {
                    let want = expect["content_contains"].as_str().unwrap();
                    assert!(
                        content.contains(want),
                        "{name}: {want:?} not in {content:?}"
                    );
                }
                (false, Err(msg)) => {
                    assert_eq!(expect["error"], "invalid-input", "{name}");
                    let want = expect["message_contains"].as_str().unwrap();
                    assert!(msg.contains(want), "{name}: {want:?} not in {msg:?}");
                }
                (_, other) => panic!("{name}: unexpected {other:?}"),
            }
            checked += 1;
        }
        assert!(checked >= 15, "only {checked} cases checked");
    }

    #[test]
    fn output_is_capped() {
        let f = compile("range(100000)").unwrap();
        let o = run(&f, b"null", false, 1000).unwrap();
        assert!(o.truncated);
        assert!(o.text.len() <= 1000);
        let f = compile("repeat(\"é\")").unwrap();
        let o = run(&f, b"null", true, 1001).unwrap();
        assert!(o.truncated && o.text.len() <= 1001);
    }
}
