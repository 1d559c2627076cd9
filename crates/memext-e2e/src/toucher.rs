//! A child process that holds anonymous memory and touches it on command, so a
//! test can watch its pages move between DRAM and swap from the outside.
//!
//! Protocol over stdin/stdout, one line each:
//!   (at start) → `up`  (the runtime is initialised: what start-up allocates
//!   is charged where the child was started, not to the cgroup it is moved to)
//!   `alloc`  → `ready ADDR LEN`   (LEN bytes allocated, every page written)
//!   `alloc-mixed` → the same, its first half random bytes and the rest zeros
//!            (bench/faas's functions' heaps: compressible as theirs are)
//!   `free`   → `freed`   (the buffer given back: a job that ends)
//!   `touch`  → `touched MAJFLT MINFLT MICROS` (every page read; fault deltas)
//!   `spin MS` → `spun`   (MS milliseconds of CPU, touching none of the buffer)
//!   `incore` → `incore PAGES TOTAL` (mincore: in DRAM or the swap cache)
//!   `exit`   → the process exits.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{bail, Context};

/// Runs the toucher protocol in this process (the child side).
pub fn serve(bytes: usize) -> anyhow::Result<()> {
    let page = memext_sys::page_bytes();
    let mut buf: Vec<u8> = Vec::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    writeln!(out, "up")?;
    out.flush()?;
    for line in stdin.lock().lines() {
        match line?.trim() {
            "alloc" => {
                buf = vec![0u8; bytes];
                for (i, p) in buf.chunks_mut(page).enumerate() {
                    // Distinct, non-zero content: no page is a same-filled page.
                    p[..8].copy_from_slice(&(i as u64 | 1 << 40).to_le_bytes());
                    p[page / 2] = u8::try_from(i % 251).expect("below 251") | 1;
                }
                writeln!(out, "ready {} {}", buf.as_ptr() as usize, buf.len())?;
            }
            "alloc-mixed" => {
                buf = mixed(bytes);
                writeln!(out, "ready {} {}", buf.as_ptr() as usize, buf.len())?;
            }
            "free" => {
                buf = Vec::new();
                writeln!(out, "freed")?;
            }
            "touch" => {
                // Run the measuring code once first: a cgroup squeeze may also
                // have evicted this binary's own text pages, and their faults
                // are not faults of the memory being measured.
                std::hint::black_box(touch_all(&buf[..0], page));
                let _ = rusage();
                let before = rusage();
                let t = std::time::Instant::now();
                std::hint::black_box(touch_all(&buf, page));
                let after = rusage();
                writeln!(
                    out,
                    "touched {} {} {}",
                    after.0 - before.0,
                    after.1 - before.1,
                    t.elapsed().as_micros()
                )?;
            }
            "incore" => {
                let start = (buf.as_ptr() as usize).div_ceil(page) * page;
                let pages = (buf.as_ptr() as usize + buf.len() - start) / page;
                let n = memext_sys::pagemap::mincore_own(start as *const u8, pages * page)?;
                writeln!(out, "incore {n} {pages}")?;
            }
            cmd if cmd.starts_with("spin ") => {
                let ms: u64 = cmd[5..].trim().parse()?;
                let t = std::time::Instant::now();
                let mut x = 0u64;
                while t.elapsed() < std::time::Duration::from_millis(ms) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                writeln!(out, "spun")?;
            }
            "exit" => return Ok(()),
            other => bail!("toucher: unknown command {other:?}"),
        }
        out.flush()?;
    }
    Ok(())
}

/// `bytes` bytes, the first half random (xorshift64*: incompressible as
/// bench/faas's `os.urandom` half is), the rest zeros, every page written.
fn mixed(bytes: usize) -> Vec<u8> {
    let mut buf = vec![0u8; bytes];
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(std::process::id());
    let half = bytes / 2;
    for w in buf[..half].chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        w.copy_from_slice(&v[..w.len()]);
    }
    let page = memext_sys::page_bytes();
    for p in buf[half..].chunks_mut(page) {
        // Written (an opaque zero: a store the compiler cannot drop as
        // writing what calloc gave), so a page of its own, same-filled.
        p[0] = std::hint::black_box(0);
    }
    buf
}

/// Reads the first byte of every page of `buf`.
#[inline(never)]
fn touch_all(buf: &[u8], page: usize) -> u64 {
    let mut sum = 0u64;
    for p in buf.chunks(page) {
        sum = sum.wrapping_add(u64::from(std::hint::black_box(p[0])));
    }
    sum
}

/// (major faults, minor faults) of this process so far, from /proc/self/stat.
fn rusage() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name: state is field 3, minflt 10, majflt 12.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|w| w.parse().unwrap_or(0))
        .collect();
    (
        f.get(9).copied().unwrap_or(0),
        f.get(7).copied().unwrap_or(0),
    )
}

/// What one `touch` reported.
#[derive(Debug, Clone, Copy)]
pub struct TouchReport {
    pub major_faults: u64,
    pub minor_faults: u64,
    pub micros: u64,
}

/// The parent side: a running toucher child, killed and reaped on drop.
pub struct Toucher {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub addr: u64,
    pub len: u64,
}

impl Toucher {
    /// Starts `exe toucher BYTES` and waits until it is up; the caller moves
    /// it into a cgroup, then calls `alloc`. Waiting matters: a child moved
    /// while it still starts up runs and charges that start-up in its new
    /// cgroup. In a CI run of `wake_events_v1` its CPU there grew by 0.9 ms
    /// with no command sent, and the usage threshold armed 512 KiB above its
    /// usage fired.
    pub fn spawn(exe: &std::path::Path, bytes: usize) -> anyhow::Result<Self> {
        let mut child = Command::new(exe)
            .args(["toucher", &bytes.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} toucher", exe.display()))?;
        let stdin = child.stdin.take().context("toucher stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("toucher stdout")?);
        let mut t = Self {
            child,
            stdin,
            stdout,
            addr: 0,
            len: 0,
        };
        let mut line = String::new();
        if t.stdout.read_line(&mut line)? == 0 || line.trim() != "up" {
            bail!("toucher {} did not start: {line:?}", t.pid());
        }
        Ok(t)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn ask(&mut self, cmd: &str) -> anyhow::Result<Vec<String>> {
        writeln!(self.stdin, "{cmd}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            bail!("toucher {} exited during {cmd:?}", self.pid());
        }
        Ok(line.split_whitespace().map(str::to_owned).collect())
    }

    pub fn alloc(&mut self) -> anyhow::Result<()> {
        self.allocate("alloc")
    }

    /// Sends `cmd` (an allocation) and takes the buffer it reports ready.
    fn allocate(&mut self, cmd: &str) -> anyhow::Result<()> {
        let r = self.ask(cmd)?;
        if r.len() != 3 || r[0] != "ready" {
            bail!("toucher: unexpected reply {r:?}");
        }
        self.addr = r[1].parse()?;
        self.len = r[2].parse()?;
        Ok(())
    }

    /// As `alloc`, with `alloc-mixed`'s content (half random, half zeros).
    pub fn alloc_mixed(&mut self) -> anyhow::Result<()> {
        self.allocate("alloc-mixed")
    }

    /// Gives the buffer back (allocated again by the next `alloc`).
    pub fn free(&mut self) -> anyhow::Result<()> {
        let r = self.ask("free")?;
        if r.first().map(String::as_str) != Some("freed") {
            bail!("toucher: unexpected reply {r:?}");
        }
        Ok(())
    }

    /// Burns `ms` of CPU without touching the buffer: a wake that has not yet
    /// reached its memory.
    pub fn spin(&mut self, ms: u64) -> anyhow::Result<()> {
        let r = self.ask(&format!("spin {ms}"))?;
        if r.first().map(String::as_str) != Some("spun") {
            bail!("toucher: unexpected reply {r:?}");
        }
        Ok(())
    }

    /// (pages in memory or swap cache, pages of the buffer), by mincore.
    pub fn incore(&mut self) -> anyhow::Result<(u64, u64)> {
        let r = self.ask("incore")?;
        if r.len() != 3 || r[0] != "incore" {
            bail!("toucher: unexpected reply {r:?}");
        }
        Ok((r[1].parse()?, r[2].parse()?))
    }

    /// (pages of the buffer mapped in DRAM, pages of the buffer), by pagemap
    /// from the outside: what memext itself sees.
    pub fn mapped(&self) -> anyhow::Result<(u64, u64)> {
        let page = memext_sys::page_size();
        let range = memext_sys::AddrRange::new(
            self.addr.div_ceil(page) * page,
            (self.addr + self.len) / page * page,
        );
        let r = memext_sys::pagemap::Pagemap::open(self.pid()).and_then(|mut pm| pm.scan(range))?;
        Ok((
            memext_sys::pagemap::Residency::of(&r).resident_pages,
            range.len() / page,
        ))
    }

    pub fn touch(&mut self) -> anyhow::Result<TouchReport> {
        let r = self.ask("touch")?;
        if r.len() != 4 || r[0] != "touched" {
            bail!("toucher: unexpected reply {r:?}");
        }
        Ok(TouchReport {
            major_faults: r[1].parse()?,
            minor_faults: r[2].parse()?,
            micros: r[3].parse()?,
        })
    }
}

impl Drop for Toucher {
    fn drop(&mut self) {
        // Our own child, by its pid: ask it to exit, then make sure.
        writeln!(self.stdin, "exit").ok();
        self.stdin.flush().ok();
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// A demo workload: holds `mib` MiB; when `busy`, touches a quarter of it every
/// 50 ms (an active service); otherwise sleeps (an idle container). Runs until killed.
pub fn workload(mib: usize, busy: bool) -> anyhow::Result<()> {
    let page = memext_sys::page_bytes();
    let mut buf = vec![0u8; mib << 20];
    for (i, p) in buf.chunks_mut(page).enumerate() {
        p[..8].copy_from_slice(&(i as u64 | 1 << 40).to_le_bytes());
    }
    let mut round = 0usize;
    loop {
        if busy {
            let quarter = buf.len() / 4;
            let start = (round % 4) * quarter;
            for p in buf[start..start + quarter].chunks_mut(page) {
                p[8] = p[8].wrapping_add(1);
            }
            round += 1;
            std::thread::sleep(std::time::Duration::from_millis(50));
        } else {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}
