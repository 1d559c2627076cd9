//! Load for the container-density experiment (bench/containerscale), spoken in
//! Redis's protocol over Unix sockets (the containers have no network):
//! - `fill`: SET `PREFIX:i` to `size` pseudo-random bytes, pipelined;
//! - `load`: the critical workload, N clients each sending GET of a random key of
//!   the whole keyspace, every latency recorded in an HDR histogram;
//! - `noise`: one serial client fetching a random blob of a random noise container,
//!   with a pause between fetches, until told to stop;
//! - `load` with [`Protocol::Http`]: the same clients against the web workload's
//!   HTTP front (keep-alive `GET /item/<k>`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use hdrhistogram::Histogram;

/// One connection to a Redis server.
pub struct Conn {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

fn encode(args: &[&[u8]], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

impl Conn {
    pub fn open(socket: &Path) -> anyhow::Result<Self> {
        let s = UnixStream::connect(socket)
            .with_context(|| format!("connecting {}", socket.display()))?;
        Ok(Self {
            reader: BufReader::new(s.try_clone()?),
            writer: s,
        })
    }

    pub fn send(&mut self, args: &[&[u8]]) -> anyhow::Result<()> {
        let mut buf = Vec::new();
        encode(args, &mut buf);
        self.writer.write_all(&buf)?;
        Ok(())
    }

    /// Reads one reply; a bulk string's bytes go to `body` (reused), its length is returned.
    pub fn reply(&mut self, body: &mut Vec<u8>) -> anyhow::Result<i64> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let line = line.trim_end();
        let (kind, rest) = line.split_at(1.min(line.len()));
        match kind {
            "+" | ":" => Ok(rest.parse().unwrap_or(0)),
            "-" => bail!("redis error: {rest}"),
            "$" => {
                let len: i64 = rest.parse().context("bulk length")?;
                if len >= 0 {
                    let n = usize::try_from(len).context("bulk length")? + 2;
                    body.resize(n, 0);
                    self.reader.read_exact(body)?;
                }
                Ok(len)
            }
            _ => bail!("unexpected reply {line:?}"),
        }
    }
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// SETs `count` keys `prefix:0..count` to `size` pseudo-random bytes each.
pub fn fill(socket: &Path, prefix: &str, count: u64, size: usize) -> anyhow::Result<()> {
    let mut conn = Conn::open(socket)?;
    let mut rng = 0x2545_F491_4F6C_DD1D_u64 ^ count ^ (size as u64);
    let mut value = vec![0u8; size];
    let batch = (1 << 20) / size.max(1) + 1;
    let mut body = Vec::new();
    let mut i = 0;
    while i < count {
        let n = (batch as u64).min(count - i);
        for k in i..i + n {
            for chunk in value.chunks_mut(8) {
                let r = xorshift(&mut rng).to_le_bytes();
                chunk.copy_from_slice(&r[..chunk.len()]);
            }
            conn.send(&[b"SET", format!("{prefix}:{k}").as_bytes(), &value])?;
        }
        for _ in 0..n {
            conn.reply(&mut body)?;
        }
        i += n;
    }
    Ok(())
}

/// What `load` measured.
pub struct LoadResult {
    pub requests: u64,
    pub seconds: f64,
    pub histogram: Histogram<u64>,
}

/// What the load clients speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Redis `GET prefix:<k>`.
    Redis,
    /// HTTP/1.1 keep-alive `GET /item/<k>`.
    Http,
}

/// One HTTP/1.1 request and its response (headers, then Content-Length bytes).
fn http_get(conn: &mut Conn, key: u64, body: &mut Vec<u8>) -> anyhow::Result<()> {
    conn.writer
        .write_all(format!("GET /item/{key} HTTP/1.1\r\nHost: front\r\n\r\n").as_bytes())?;
    let mut line = String::new();
    conn.reader.read_line(&mut line)?;
    if !line.starts_with("HTTP/1.1 200") {
        bail!("front answered {:?}", line.trim_end());
    }
    let mut length = 0usize;
    loop {
        line.clear();
        conn.reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().context("Content-Length")?;
            }
        }
    }
    body.resize(length, 0);
    conn.reader.read_exact(body)?;
    Ok(())
}

/// `clients` clients, each GET of a random key of `0..keys`, for `seconds`.
pub fn load(
    socket: &Path,
    protocol: Protocol,
    clients: usize,
    seconds: f64,
    keys: u64,
    prefix: &str,
) -> anyhow::Result<LoadResult> {
    let deadline = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut threads = Vec::new();
    for c in 0..clients {
        let socket = socket.to_path_buf();
        let prefix = prefix.to_owned();
        threads.push(std::thread::spawn(
            move || -> anyhow::Result<Histogram<u64>> {
                let mut conn = Conn::open(&socket)?;
                let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)?;
                let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ ((c as u64 + 1) << 32);
                let mut body = Vec::new();
                while start.elapsed() < deadline {
                    let k = xorshift(&mut rng) % keys.max(1);
                    let t = Instant::now();
                    if protocol == Protocol::Http {
                        // A front may close a kept-alive connection; open another and ask again.
                        if http_get(&mut conn, k, &mut body).is_err() {
                            conn = Conn::open(&socket)?;
                            http_get(&mut conn, k, &mut body)?;
                        }
                    } else {
                        conn.send(&[b"GET", format!("{prefix}:{k}").as_bytes()])?;
                        conn.reply(&mut body)?;
                    }
                    hist.saturating_record(
                        u64::try_from(t.elapsed().as_micros())
                            .unwrap_or(u64::MAX)
                            .max(1),
                    );
                }
                Ok(hist)
            },
        ));
    }
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)?;
    for t in threads {
        let h = t
            .join()
            .map_err(|_| anyhow::anyhow!("a load client panicked"))??;
        histogram.add(&h)?;
    }
    Ok(LoadResult {
        requests: histogram.len(),
        seconds: start.elapsed().as_secs_f64(),
        histogram,
    })
}

/// Prints a load result as one JSON object (latencies in ms) and writes the
/// histogram's percentile distribution to `hist`.
pub fn report(r: &LoadResult, hist: Option<&Path>) -> anyhow::Result<String> {
    let h = &r.histogram;
    let ms = |us: u64| us as f64 / 1000.0;
    if let Some(path) = hist {
        let mut out = String::from("percentile,latency_ms,count\n");
        for v in h.iter_quantiles(2) {
            out.push_str(&format!(
                "{:.6},{:.3},{}\n",
                v.quantile_iterated_to(),
                ms(v.value_iterated_to()),
                v.count_since_last_iteration()
            ));
        }
        std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(format!(
        "{{\"requests\": {}, \"seconds\": {:.3}, \"throughput\": {:.1}, \"avg\": {:.3}, \"min\": {:.3}, \"max\": {:.3}, \"p50\": {:.3}, \"p90\": {:.3}, \"p95\": {:.3}, \"p99\": {:.3}, \"p999\": {:.3}}}",
        r.requests,
        r.seconds,
        r.requests as f64 / r.seconds,
        h.mean() / 1000.0,
        ms(h.min()),
        ms(h.max()),
        ms(h.value_at_quantile(0.50)),
        ms(h.value_at_quantile(0.90)),
        ms(h.value_at_quantile(0.95)),
        ms(h.value_at_quantile(0.99)),
        ms(h.value_at_quantile(0.999)),
    ))
}

/// The noise client: until `stop`, pick a random socket in `dir` (re-listed every
/// second, as containers are added) and a random blob of `blobs` (prefix, count),
/// fetch it whole, pause. Returns the number of fetches; with `log`, each fetch
/// is also written to it as a line `END_UNIX_MS LATENCY_US`, so that a harness
/// can take the fetches of a measurement window.
pub fn noise(
    dir: &Path,
    blobs: &[(String, u64)],
    pause: Duration,
    stop: Arc<AtomicBool>,
    mut log: Option<&mut dyn std::io::Write>,
) -> anyhow::Result<u64> {
    let mut rng = 0xD1B5_4A32_D192_ED03_u64;
    let mut sockets: Vec<PathBuf> = Vec::new();
    let mut listed = Instant::now() - Duration::from_secs(10);
    let mut conns: std::collections::HashMap<PathBuf, Conn> = std::collections::HashMap::new();
    let total: u64 = blobs.iter().map(|b| b.1).sum();
    let mut body = Vec::new();
    let mut fetches = 0;
    while !stop.load(Ordering::Relaxed) {
        if listed.elapsed() > Duration::from_secs(1) {
            sockets = std::fs::read_dir(dir)?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sock"))
                .collect();
            sockets.sort();
            listed = Instant::now();
        }
        if sockets.is_empty() || total == 0 {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let socket = &sockets[usize::try_from(xorshift(&mut rng) % sockets.len() as u64)
            .expect("an index below len")];
        let mut pick = xorshift(&mut rng) % total;
        let (prefix, index) = blobs
            .iter()
            .find_map(|(p, n)| {
                if pick < *n {
                    Some((p, pick))
                } else {
                    pick -= n;
                    None
                }
            })
            .expect("pick < total");
        if !conns.contains_key(socket) {
            match Conn::open(socket) {
                Ok(c) => {
                    conns.insert(socket.clone(), c);
                }
                Err(_) => continue,
            }
        }
        let conn = conns.get_mut(socket).expect("inserted above");
        let key = format!("{prefix}:{index}");
        let started = Instant::now();
        if conn
            .send(&[b"GET", key.as_bytes()])
            .and_then(|()| conn.reply(&mut body))
            .is_err()
        {
            conns.remove(socket);
            continue;
        }
        fetches += 1;
        if let Some(out) = log.as_mut() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            writeln!(out, "{} {}", now.as_millis(), started.elapsed().as_micros())?;
            out.flush()?; // a harness reads the log while the client runs
        }
        std::thread::sleep(pause);
    }
    Ok(fetches)
}
