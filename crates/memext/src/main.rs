//! The `memext` command: memory contexts, the engine, tiers and persistent
//! memory for containers.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use memext::cli;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let log = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MEMEXT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr);
    match cli.log_format {
        cli::LogFormat::Text => log.init(),
        // Fields at the top level beside `timestamp`, `level` and `message`.
        cli::LogFormat::Json => log.json().flatten_event(true).init(),
    }
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memext: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
