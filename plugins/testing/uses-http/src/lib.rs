//! Fetches `{"url": ...}` with GET through the http capability and returns the body, so tests
//! can see what the host lets through.

use serde_json::{Value, json};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, http};

struct Fetch;

impl Tool for Fetch {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Fetch".into(),
            description: "GET a URL".into(),
            input_schema: json!({"type": "object", "properties": {"url": {"type": "string"}}}),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let url = input.get("url").and_then(Value::as_str).unwrap_or_default();
        let req = http::Request {
            method: "GET".into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            timeout_ms: Some(5000),
        };
        match http::fetch(&req) {
            Ok(r) => Ok(ToolOutput::text(format!(
                "{} {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            ))),
            Err(http::HttpError::Denied(m)) => Err(ToolError::Denied(m)),
            Err(e) => Err(ToolError::Failed(format!("{e:?}"))),
        }
    }
}

warden_sdk::export_tool!(Fetch);
