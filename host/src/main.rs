//! The `warden` command-line interface.

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
