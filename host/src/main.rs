//! The `warden` command-line interface.

// `warden mcp serve` awaits the MCP SDK's server future, whose layout nests deeper than the
// default limit lets the compiler's lints walk.
#![recursion_limit = "256"]

mod cli;

fn main() -> std::process::ExitCode {
    quiet_on_closed_stdout();
    cli::main()
}

/// Ends the process as `cat` would (killed by SIGPIPE) when stdout is a closed pipe
/// (`warden plugin list | head -1`), instead of panicking.
///
/// SIGPIPE itself stays ignored, as Rust sets it: Warden writes to the stdin of command hooks,
/// confined programs and MCP servers, any of which may exit without reading it, and with the
/// default disposition that write would kill Warden (a hook that ignores its input is
/// ordinary). So a closed pipe is an `EPIPE` error everywhere, and only the one on stdout,
/// which `println!` turns into a panic, ends the process.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        #[cfg(unix)]
        if message.starts_with("failed printing to stdout")
            && message.contains(&format!("(os error {})", libc::EPIPE))
        {
            // SAFETY: restoring a signal's default disposition and raising it; nothing else
            // runs on this path.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::raise(libc::SIGPIPE);
            }
            std::process::exit(141);
        }
        default(info);
    }));
}
