//! A tool that misbehaves as its `attack` input says: `trap` executes `unreachable`, `panic`
//! panics, `loop` spins until the host's deadline interrupts it; `ok` answers "fine".

use serde_json::{Value, json};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput};

struct HostileTool;

impl Tool for HostileTool {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "hostile-tool".into(),
            description: "Misbehaves on purpose".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "attack": {"type": "string", "enum": ["ok", "trap", "loop", "panic"]}
                },
                "required": ["attack"]
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        match input.get("attack").and_then(Value::as_str) {
            Some("ok") => Ok(ToolOutput::text("fine")),
            // A trap the guest raises itself, with no panic machinery before it.
            Some("trap") => core::arch::wasm32::unreachable(),
            Some("panic") => panic!("hostile tool panicked on purpose"),
            Some("loop") => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            // Only reached when the host let through input its schema forbids.
            other => Err(ToolError::InvalidInput(format!(
                "attack must be ok, trap, loop or panic, found {other:?}"
            ))),
        }
    }
}

warden_sdk::export_tool!(HostileTool);
