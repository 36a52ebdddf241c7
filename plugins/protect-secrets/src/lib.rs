//! A PreToolUse hook that denies reads and edits of credential files.
//!
//! Protected: `.env` and `.env.*` (but not the `.example`/`.sample`/`.template` variants that
//! exist to be read), `*.pem`, `id_rsa*`, and anything under a `secrets/` directory. File
//! tools are checked by `tool_input.file_path`; Bash commands are checked word by word, so
//! `cat .env`, `source ./.env` and `grep KEY secrets/prod.json` are all refused.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

mod logic;

pub use logic::{ProtectSecrets, is_secret, secret_in_command};

warden_sdk::export_hook!(ProtectSecrets);
warden_sdk::lean!();
