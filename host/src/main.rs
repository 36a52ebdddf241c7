//! The `warden` command-line interface.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
