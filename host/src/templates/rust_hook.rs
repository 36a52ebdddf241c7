//! {{name}}: a PreToolUse hook on Bash. It denies `rm -rf /` and asks before `sudo`; every
//! other command goes on to the permission rules as usual.

use warden_sdk::{Hook, HookEvent, HookResult};

struct {{camel}};

impl Hook for {{camel}} {
    fn handle(event: HookEvent) -> HookResult {
        let Some(command) = event.tool_call().and_then(|call| call.command()) else {
            return HookResult::none();
        };
        let words: Vec<&str> = command.split_whitespace().collect();
        if words.first() == Some(&"sudo") {
            return HookResult::ask("runs as root");
        }
        if words.first() == Some(&"rm") && words.contains(&"/") && words.iter().any(|w| w.starts_with('-') && w.contains('r')) {
            return HookResult::deny("refusing to delete the root directory");
        }
        HookResult::none()
    }
}

warden_sdk::export_hook!({{camel}});
