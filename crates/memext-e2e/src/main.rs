//! memext-e2e helper binary:
//!   memext-e2e toucher BYTES      the child of the end-to-end tests
//!   memext-e2e v2-suite           the checks run as PID 1 inside the cgroup-v2 VM
//!   memext-e2e kbench [SIZE_MIB]  the kernel-interface micro-benchmark
//!   memext-e2e coldcall [HEAP_MIB [FILLER_MIB [ROUNDS]]]  what a cold call costs at a full cap
//!   memext-e2e workload MIB busy|idle  a demo process holding memory
//!   memext-e2e redis-fill SOCKET PREFIX COUNT SIZE         SET PREFIX:0..COUNT to random bytes
//!   memext-e2e redis-load SOCKET CLIENTS SECONDS KEYS PREFIX [HIST_CSV]   the critical load (JSON out)
//!   memext-e2e http-load SOCKET CLIENTS SECONDS KEYS [HIST_CSV]   the same against an HTTP front
//!   memext-e2e redis-noise DIR PAUSE_US PREFIX:COUNT,... [LOG]    the serial noise client, until stdin closes (LOG: one line per fetch)
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
        Some("coldcall") => memext_e2e::coldcall::run(&args[2..]),
        Some("redis-fill") | Some("redis-load") | Some("redis-noise") | Some("http-load") => redis(&args),
        _ => Err(anyhow::anyhow!(
            "usage: memext-e2e toucher BYTES | v2-suite | kbench [SIZE_MIB] | coldcall [HEAP_MIB [FILLER_MIB [ROUNDS]]] | workload MIB busy|idle | redis-fill | redis-load | http-load | redis-noise"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memext-e2e: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn redis(args: &[String]) -> anyhow::Result<()> {
    use memext_e2e::redisload;
    use std::path::Path;
    let arg = |i: usize, what: &str| {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| anyhow::anyhow!("missing {what}"))
    };
    let num = |i: usize, what: &str| -> anyhow::Result<u64> {
        arg(i, what)?
            .parse()
            .map_err(|_| anyhow::anyhow!("{what} must be a number"))
    };
    match args[1].as_str() {
        "redis-fill" => {
            let size = usize::try_from(num(5, "SIZE")?)?;
            redisload::fill(
                Path::new(arg(2, "SOCKET")?),
                arg(3, "PREFIX")?,
                num(4, "COUNT")?,
                size,
            )
        }
        "redis-load" | "http-load" => {
            let seconds: f64 = arg(4, "SECONDS")?
                .parse()
                .map_err(|_| anyhow::anyhow!("SECONDS must be a number"))?;
            let clients = usize::try_from(num(3, "CLIENTS")?)?;
            let (protocol, prefix, hist) = if args[1] == "http-load" {
                (redisload::Protocol::Http, "", args.get(6))
            } else {
                (redisload::Protocol::Redis, arg(6, "PREFIX")?, args.get(7))
            };
            let r = redisload::load(
                Path::new(arg(2, "SOCKET")?),
                protocol,
                clients,
                seconds,
                num(5, "KEYS")?,
                prefix,
            )?;
            println!("{}", redisload::report(&r, hist.map(Path::new))?);
            Ok(())
        }
        _ => {
            let pause = std::time::Duration::from_micros(num(3, "PAUSE_US")?);
            let blobs = arg(4, "PREFIX:COUNT,...")?
                .split(',')
                .map(|b| {
                    let (p, n) = b
                        .rsplit_once(':')
                        .ok_or_else(|| anyhow::anyhow!("blob spec {b:?} is not PREFIX:COUNT"))?;
                    Ok((
                        p.to_owned(),
                        n.parse::<u64>()
                            .map_err(|_| anyhow::anyhow!("count in {b:?}"))?,
                    ))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = stop.clone();
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let mut log = match args.get(5) {
                Some(path) => Some(std::io::BufWriter::new(
                    std::fs::File::create(path)
                        .map_err(|e| anyhow::anyhow!("creating {path}: {e}"))?,
                )),
                None => None,
            };
            let fetches = redisload::noise(
                Path::new(arg(2, "DIR")?),
                &blobs,
                pause,
                stop,
                log.as_mut().map(|w| w as &mut dyn std::io::Write),
            )?;
            if let Some(mut w) = log {
                std::io::Write::flush(&mut w)?;
            }
            println!("{{\"fetches\": {fetches}}}");
            Ok(())
        }
    }
}
