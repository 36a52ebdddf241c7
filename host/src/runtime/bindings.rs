//! Host bindings for each released version of the `warden:plugin` WIT package.
//!
//! Every version gets its own module generated from its frozen folder under `wit/`; `latest`
//! names the current one. When a new version is released, its folder and module are added
//! next to these and the old module keeps running the guests built against it.

/// Bindings for `warden:plugin@0.1.0` (`wit/v0.1`).
pub mod v0_1 {
    /// The `hook` world.
    // Generated code; the WIT files carry the documentation.
    #[allow(missing_docs)]
    pub mod hook {
        wasmtime::component::bindgen!({
            path: "../wit/v0.1",
            world: "warden:plugin/hook",
            imports: { default: async | trappable },
            exports: { default: async },
        });
    }

    /// The `tool` world; shares the interface bindings of [`hook`].
    #[allow(missing_docs)]
    pub mod tool {
        wasmtime::component::bindgen!({
            path: "../wit/v0.1",
            world: "warden:plugin/tool",
            imports: { default: async | trappable },
            exports: { default: async },
            with: {
                "warden:plugin/types": super::hook::warden::plugin::types,
                "warden:plugin/log": super::hook::warden::plugin::log,
                "warden:plugin/fs": super::hook::warden::plugin::fs,
                "warden:plugin/exec": super::hook::warden::plugin::exec,
                "warden:plugin/http": super::hook::warden::plugin::http,
                "warden:plugin/env": super::hook::warden::plugin::env,
            },
        });
    }

    pub use hook::warden::plugin::{env, exec, fs, http, log, types};
}

pub use v0_1 as latest;
