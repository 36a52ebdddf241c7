//! The `warden` command-line interface.

// `warden mcp serve` awaits the MCP SDK's server future, whose layout nests deeper than the
// default limit lets the compiler's lints walk.
#![recursion_limit = "256"]

mod cli;

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so `warden plugin list | head -1` would panic on the closed pipe.
    // Like other command-line tools, end quietly instead.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cli::main()
}
