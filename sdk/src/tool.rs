use alloc::string::String;

use serde_json::Value;

/// A tool the model can call; each call runs in a fresh sandbox.
pub trait Tool {
    /// Name, description and input schema.
    fn describe() -> ToolInfo;
    /// Runs the tool on its input object.
    fn invoke(input: Value) -> Result<ToolOutput, ToolError>;
}

/// What a tool says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: Value,
}

/// A successful result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text for the model.
    pub content: String,
    /// Optional structured result.
    pub structured: Option<Value>,
}

impl ToolOutput {
    /// A plain-text result.
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            structured: None,
        }
    }
}

/// Why a tool failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The input made no sense.
    InvalidInput(String),
    /// A capability check refused an access.
    Denied(String),
    /// Anything else.
    Failed(String),
}
