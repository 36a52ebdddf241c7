//! The `warden` command-line interface.

// `warden mcp serve` awaits the MCP SDK's server future, whose layout nests deeper than the
// default limit lets the compiler's lints walk.
#![recursion_limit = "256"]

mod cli;

fn main() -> std::process::ExitCode {
    #[cfg(target_os = "linux")]
    not_dumpable();
    quiet_on_closed_stdout();
    cli::main()
}

/// Keeps Warden's memory and environment (API keys) from other processes of the same user,
/// the programs it starts among them: a process that is not dumpable has its `/proc/<pid>`
/// files (`environ`, `mem`, `maps`, `fd`) owned by root and closed to ptrace without
/// `CAP_SYS_PTRACE`, and leaves no core dump. Its own `/proc/self` stays readable to it. The
/// flag is reset by `exec`, so the programs Warden starts are not affected; the processes it
/// forks to supervise them, copies of its memory, keep it.
#[cfg(target_os = "linux")]
fn not_dumpable() {
    // SAFETY: PR_SET_DUMPABLE only changes a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
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
