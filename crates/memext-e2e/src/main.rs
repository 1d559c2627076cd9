//! memext-e2e helper binary:
//!   memext-e2e toucher BYTES      the child of the end-to-end tests
//!   memext-e2e v2-suite           the checks run as PID 1 inside the cgroup-v2 VM
//!   memext-e2e kbench [SIZE_MIB]  the kernel-interface micro-benchmark
//!   memext-e2e workload MIB busy|idle  a demo process holding memory
#![forbid(unsafe_code)]
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1).map(String::as_str) {
        Some("toucher") => args
            .get(2)
            .and_then(|b| b.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("usage: memext-e2e toucher BYTES"))
            .and_then(memext_e2e::toucher::serve),
        Some("v2-suite") => memext_e2e::v2suite::run(),
        Some("workload") => match (args.get(2).and_then(|m| m.parse().ok()), args.get(3).map(String::as_str)) {
            (Some(mib), Some(mode @ ("busy" | "idle"))) => memext_e2e::toucher::workload(mib, mode == "busy"),
            _ => Err(anyhow::anyhow!("usage: memext-e2e workload MIB busy|idle")),
        },
        Some("kbench") => memext_e2e::kbench::run(args.get(2).map(String::as_str)),
        _ => Err(anyhow::anyhow!("usage: memext-e2e toucher BYTES | v2-suite | kbench [SIZE_MIB] | workload MIB busy|idle")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memext-e2e: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
