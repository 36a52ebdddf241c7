//! Write Warden hooks and tools in Rust.
//!
//! A hook is a type implementing [`Hook`], exported with [`export_hook!`]:
//!
//! ```no_run
//! use warden_sdk::{Hook, HookEvent, HookResult};
//!
//! struct NoForcePush;
//!
//! impl Hook for NoForcePush {
//!     fn handle(event: HookEvent) -> HookResult {
//!         match event.tool_call() {
//!             Some(call) if call.command().is_some_and(|c| c.contains("push --force")) => {
//!                 HookResult::deny("force-push is not allowed here; push without --force")
//!             }
//!             _ => HookResult::none(),
//!         }
//!     }
//! }
//!
//! warden_sdk::export_hook!(NoForcePush);
//! ```
//!
//! Build it with `cargo build --target wasm32-wasip2 --release`: the output is a component
//! the host runs in a fresh sandbox per event. The guest crate must be a `cdylib` and name
//! this dependency `warden_sdk`.
//!
//! A tool implements [`Tool`] and is exported with [`export_tool!`]. Host capabilities (files,
//! processes, HTTP, environment) are in [`fs`], [`exec`], [`http`], [`env`] and [`log`]; each
//! works only if the plugin declared and the user granted it.
//!
//! # Lean hooks
//!
//! Every call runs in a brand-new instance, so what the guest links is paid on every call: a
//! component built with the standard library imports a dozen WASI interfaces (environment,
//! stdio, clocks, exit, ...) that the host wires up each time, and its C allocator is set up
//! again. A hook that needs none of that can be `#![no_std]` and call [`lean!`], which supplies
//! an allocator suited to one-call instances, a panic handler and `cabi_realloc`. The
//! component then imports only Warden's own interfaces; on the 2-core reference VM the
//! example `protect-secrets` hook went from 11.2 µs to 8.0 µs per fresh-sandbox call.
//!
//! ```no_run
//! #![cfg_attr(target_arch = "wasm32", no_std)]
//! extern crate alloc;
//!
//! use warden_sdk::{Hook, HookEvent, HookResult};
//!
//! struct Guard;
//! impl Hook for Guard {
//!     fn handle(event: HookEvent) -> HookResult {
//!         match event.tool_call() {
//!             Some(call) if call.file_path() == Some("/etc/shadow") => {
//!                 HookResult::deny("not that one")
//!             }
//!             _ => HookResult::none(),
//!         }
//!     }
//! }
//!
//! warden_sdk::export_hook!(Guard);
//! warden_sdk::lean!();
//! ```
//!
//! What a lean hook gives up: `std` (no `println!`, files or clocks; use [`log`] and the
//! capability interfaces), and panic messages (a panic traps, and the host reports the trap).
//! Its dependencies must not use `std` either, so build it in a cargo workspace of its own:
//! beside guests that enable `std` on a shared dependency, cargo would enable it for the hook
//! too.

#![no_std]

extern crate alloc;

mod event;
#[doc(hidden)]
pub mod lean;
mod result;
mod tool;
pub mod typed;

pub use event::{HookEvent, ToolCall};
pub use result::{Decision, HookResult};
pub use tool::{Tool, ToolError, ToolInfo, ToolOutput};
pub use typed::Payload;

/// Bindings for the host interfaces, shared by every world.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit/v0.1",
        world: "warden:plugin/imports",
        generate_all,
    });
}

pub use bindings::warden::plugin::{env, exec, fs, http, log};

/// A hook: called once per event in a fresh sandbox, so it keeps no state between calls.
pub trait Hook {
    /// Decides on one event.
    fn handle(event: HookEvent) -> HookResult;
}

#[doc(hidden)]
pub mod __private {
    pub use alloc::string::String;
    pub use wit_bindgen;

    use alloc::format;
    use alloc::string::ToString;

    use crate::{Decision, Hook, HookEvent, HookResult};

    /// A JSON value as text, for the export glue (which may sit in a `no_std` crate).
    pub fn json_text(v: &serde_json::Value) -> String {
        v.to_string()
    }

    /// Runs a hook on raw event JSON; a malformed event becomes a non-blocking `none` with
    /// a system message, never a trap.
    pub fn run_hook<H: Hook>(name: &str, input: String) -> HookResult {
        match HookEvent::parse_owned(name, input) {
            Ok(event) => H::handle(event),
            Err(e) => HookResult {
                decision: Decision::None,
                system_message: Some(format!("hook could not parse the {name} event: {e}")),
                ..HookResult::none()
            },
        }
    }

    /// Runs a tool on raw input JSON.
    pub fn run_tool<T: crate::Tool>(input: &str) -> Result<crate::ToolOutput, crate::ToolError> {
        let value: serde_json::Value = serde_json::from_str(input)
            .map_err(|e| crate::ToolError::InvalidInput(format!("input is not JSON: {e}")))?;
        T::invoke(value)
    }
}

include!(concat!(::core::env!("OUT_DIR"), "/generate.rs"));

/// Exports a [`Hook`] implementation as the component's `handle` function.
#[rustfmt::skip]
#[macro_export]
macro_rules! export_hook {
    ($hook:ty) => {
        #[doc(hidden)]
        mod __warden_hook {
            warden_sdk::__generate_hook!();
        }

        const _: () = {
            use __warden_hook::warden::plugin::types as wit;

            struct Export;

            impl __warden_hook::Guest for Export {
                fn handle(event: wit::Event) -> wit::HookResult {
                    let r = warden_sdk::__private::run_hook::<$hook>(&event.name, event.input);
                    wit::HookResult {
                        decision: match r.decision {
                            warden_sdk::Decision::None => wit::Decision::None,
                            warden_sdk::Decision::Allow => wit::Decision::Allow,
                            warden_sdk::Decision::Deny => wit::Decision::Deny,
                            warden_sdk::Decision::Ask => wit::Decision::Ask,
                            warden_sdk::Decision::Defer => wit::Decision::Defer,
                            warden_sdk::Decision::Block => wit::Decision::Block,
                        },
                        reason: r.reason,
                        additional_context: r.additional_context,
                        updated_input: r.updated_input.as_ref().map(warden_sdk::__private::json_text),
                        system_message: r.system_message,
                        continue_: r.continue_,
                        stop_reason: r.stop_reason,
                        suppress_output: r.suppress_output,
                    }
                }
            }

    __warden_hook::export!(Export with_types_in __warden_hook);
        };
    };
}

/// Exports a [`Tool`] implementation as the component's `describe` and `invoke` functions.
// rustfmt mis-indents the `with_types_in` invocation inside this body.
#[rustfmt::skip]
#[macro_export]
macro_rules! export_tool {
    ($tool:ty) => {
        #[doc(hidden)]
        mod __warden_tool {
            warden_sdk::__generate_tool!();
        }

        const _: () = {
            use __warden_tool::warden::plugin::types as wit;

            struct Export;

            impl __warden_tool::Guest for Export {
                fn describe() -> wit::ToolInfo {
                    let info = <$tool as warden_sdk::Tool>::describe();
                    wit::ToolInfo {
                        name: info.name,
                        description: info.description,
                        input_schema: warden_sdk::__private::json_text(&info.input_schema),
                    }
                }

                fn invoke(input: warden_sdk::__private::String) -> Result<wit::ToolOutput, wit::ToolError> {
                    match warden_sdk::__private::run_tool::<$tool>(&input) {
                        Ok(out) => Ok(wit::ToolOutput {
                            content: out.content,
                            structured: out.structured.as_ref().map(warden_sdk::__private::json_text),
                        }),
                        Err(warden_sdk::ToolError::InvalidInput(m)) => {
                            Err(wit::ToolError::InvalidInput(m))
                        }
                        Err(warden_sdk::ToolError::Denied(m)) => Err(wit::ToolError::Denied(m)),
                        Err(warden_sdk::ToolError::Failed(m)) => Err(wit::ToolError::Failed(m)),
                    }
                }
            }

            __warden_tool::export!(Export with_types_in __warden_tool);
        };
    };
}
