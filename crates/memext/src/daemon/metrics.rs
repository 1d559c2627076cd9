//! Prometheus metrics of the daemon, in the OpenMetrics text format, on
//! `--metrics-addr` (off by default). Rendered per scrape from the rows the
//! daemon publishes each tick, so scraping never touches the daemon's loop.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use memext_engine::model::State;

use super::serve::{ContextReport, Reports};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ContextLabels {
    cgroup: String,
    class: String,
}

/// Daemon-wide figures the rows do not carry.
#[derive(Debug, Default)]
pub struct DaemonGauges {
    /// DRAM the selected contexts may use together, bytes.
    pub capacity_bytes: AtomicU64,
    /// Charges that met the capacity cgroup's limit, the kernel reclaiming
    /// in the task that charged (v1 `memory.failcnt`, v2 `memory.events`
    /// `max`), as the kernel counts them; reported once read
    /// (`capacity_watched`: the capacity is a cgroup's limit).
    pub capacity_limit_hits: AtomicU64,
    pub capacity_watched: AtomicBool,
    /// Ticks run since start.
    pub ticks: AtomicU64,
    /// Wakes seen since start (by polling or at a tick).
    pub wakes: AtomicU64,
    /// Knobs memext currently owns (written and not yet restored).
    pub owned_knobs: AtomicUsize,
    /// Page-out and prefetch run at a quarter of their bandwidth: a critical
    /// context shows pressure.
    pub throttled: AtomicBool,
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The metrics text for `rows` and `d`.
pub fn render(rows: &[ContextReport], d: &DaemonGauges) -> String {
    let mut reg = <Registry>::with_prefix("memext");
    register_contexts(&mut reg, rows);
    register_daemon(&mut reg, rows.len(), d);
    let mut text = String::new();
    encode(&mut text, &reg).expect("writing to a String cannot fail");
    text
}

/// One family per figure, one series per context.
fn register_contexts(reg: &mut Registry, rows: &[ContextReport]) {
    let gauge = |reg: &mut Registry, name: &str, help: &str| {
        let f = Family::<ContextLabels, Gauge>::default();
        reg.register(name, help, f.clone());
        f
    };
    let resident = gauge(
        reg,
        "context_resident_bytes",
        "Bytes of the context resident in DRAM (anon + page cache)",
    );
    let swapped = gauge(
        reg,
        "context_swapped_bytes",
        "Bytes of the context in swap (zram, zswap or flash)",
    );
    let wset = gauge(
        reg,
        "context_working_set_bytes",
        "Bytes of the context's last recorded working set",
    );
    let target = gauge(
        reg,
        "context_target_bytes",
        "The planner's DRAM target for the context",
    );
    let state = gauge(
        reg,
        "context_state",
        "Context state: 0 active, 1 idle, 2 waking",
    );
    let out = gauge(
        reg,
        "context_pushed_out",
        "1 while memext holds the context pushed out",
    );
    let accuracy = Family::<ContextLabels, Gauge<f64, AtomicU64>>::default();
    reg.register(
        "context_prefetch_accuracy_ratio",
        "Of the pages last brought back, the share the context touched within the accuracy window",
        accuracy.clone(),
    );
    let pushed = Family::<ContextLabels, Counter>::default();
    reg.register(
        "context_pushed_out_pages",
        "Pages memext paged out of the context",
        pushed.clone(),
    );
    let back = Family::<ContextLabels, Counter>::default();
    reg.register(
        "context_brought_back_pages",
        "Pages memext brought back for the context",
        back.clone(),
    );
    let mapped = Family::<ContextLabels, Counter>::default();
    reg.register(
        "context_mapped_back_pages",
        "Pages memext mapped back (as huge pages) before a predicted wake of the context",
        mapped.clone(),
    );
    for r in rows {
        let l = ContextLabels {
            cgroup: r.cgroup.to_string(),
            class: r.class.to_string(),
        };
        resident.get_or_create(&l).set(to_i64(r.resident_bytes));
        swapped.get_or_create(&l).set(to_i64(r.swapped_bytes));
        wset.get_or_create(&l).set(to_i64(r.working_set_bytes));
        target.get_or_create(&l).set(to_i64(r.target_bytes));
        state.get_or_create(&l).set(match r.state {
            State::Active => 0,
            State::Idle => 1,
            State::Waking => 2,
        });
        out.get_or_create(&l).set(i64::from(r.out));
        if let Some(a) = r.prefetch_accuracy {
            accuracy.get_or_create(&l).set(a);
        }
        pushed.get_or_create(&l).inc_by(r.pushed_out_pages);
        back.get_or_create(&l).inc_by(r.brought_back_pages);
        mapped.get_or_create(&l).inc_by(r.mapped_back_pages);
    }
}

/// The daemon-wide gauges and counters.
fn register_daemon(reg: &mut Registry, contexts: usize, d: &DaemonGauges) {
    let one = |reg: &mut Registry, name: &str, help: &str, v: i64| {
        let g = Gauge::<i64>::default();
        g.set(v);
        reg.register(name, help, g);
    };
    one(
        reg,
        "contexts",
        "Memory contexts the daemon manages",
        to_i64(contexts as u64),
    );
    one(
        reg,
        "capacity_bytes",
        "DRAM the selected contexts may use together",
        to_i64(d.capacity_bytes.load(Ordering::Relaxed)),
    );
    one(
        reg,
        "owned_knobs",
        "cgroup knobs memext has changed and will restore",
        to_i64(d.owned_knobs.load(Ordering::Relaxed) as u64),
    );
    one(
        reg,
        "throttled",
        "1 while page-out and prefetch are slowed because a critical context shows memory pressure",
        i64::from(d.throttled.load(Ordering::Relaxed)),
    );
    if d.capacity_watched.load(Ordering::Relaxed) {
        let hits = Counter::<u64>::default();
        hits.inc_by(d.capacity_limit_hits.load(Ordering::Relaxed));
        reg.register(
            "capacity_limit_hits",
            "Charges that met the capacity cgroup's limit and reclaimed in the charging task \
             (v1 memory.failcnt, v2 memory.events max); in bench/faas they came with the tail",
            hits,
        );
    }
    let ticks = Counter::<u64>::default();
    ticks.inc_by(d.ticks.load(Ordering::Relaxed));
    reg.register("ticks", "Observe-plan-act cycles run", ticks);
    let wakes = Counter::<u64>::default();
    wakes.inc_by(d.wakes.load(Ordering::Relaxed));
    reg.register("wakes", "Context wakes seen", wakes);
}

pub struct MetricsServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MetricsServer {
    pub fn close(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

/// Serves `GET /metrics` on `addr`.
pub fn serve(
    addr: SocketAddr,
    rows: Reports,
    gauges: Arc<DaemonGauges>,
) -> anyhow::Result<MetricsServer> {
    let listener =
        TcpListener::bind(addr).with_context(|| format!("binding the metrics address {addr}"))?;
    let addr = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread = crate::socket::accept_loop(
        "memext-metrics",
        stop.clone(),
        crate::socket::listener_fd(&listener)?,
        move || listener.accept().map(|(c, _)| c),
        move |c| answer(c, &rows, &gauges),
    )?;
    Ok(MetricsServer {
        addr,
        stop,
        thread: Some(thread),
    })
}

fn answer(conn: TcpStream, rows: &Reports, gauges: &DaemonGauges) -> anyhow::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut request = String::new();
    BufReader::new(std::io::Read::take(&conn, 1024)).read_line(&mut request)?;
    let mut conn = conn;
    let mut parts = request.split_whitespace();
    let (status, body) = match (parts.next(), parts.next()) {
        (Some("GET"), Some("/metrics")) => {
            let rows = rows.lock().map(|r| r.clone()).unwrap_or_default();
            ("200 OK", render(&rows, gauges))
        }
        _ => (
            "404 Not Found",
            "only GET /metrics is served here\n".to_owned(),
        ),
    };
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::sync::Mutex;

    fn row() -> ContextReport {
        ContextReport {
            id: "/a/b".into(),
            runtime: crate::identity::Runtime::Plain,
            name: None,
            class: memext_engine::Class::Extend,
            cgroup: "/a/b".into(),
            state: State::Idle,
            target_bytes: 16 << 20,
            usage_bytes: 16 << 20,
            resident_bytes: 15 << 20,
            swapped_bytes: 240 << 20,
            working_set_bytes: 256 << 20,
            last_wake_s_ago: None,
            pushed_out_pages: 61_000,
            brought_back_pages: 7,
            mapped_back_pages: 3,
            prefetch_accuracy: Some(0.5),
            out: true,
            held: false,
            waiting: false,
            wake_path: None,
            limit_bytes: None,
            reclaiming_to: None,
            quiet: false,
            margin_bytes: 0,
            rest_slack_bytes: 0,
        }
    }

    #[test]
    fn every_metric_has_help_and_the_row_values() {
        let g = DaemonGauges::default();
        g.capacity_bytes.store(1 << 30, Ordering::Relaxed);
        let text = render(&[row()], &g);
        for name in [
            "memext_context_resident_bytes",
            "memext_context_swapped_bytes",
            "memext_context_working_set_bytes",
            "memext_context_target_bytes",
            "memext_context_state",
            "memext_context_pushed_out",
            "memext_context_prefetch_accuracy_ratio",
            "memext_context_pushed_out_pages",
            "memext_context_brought_back_pages",
            "memext_context_mapped_back_pages",
            "memext_contexts",
            "memext_capacity_bytes",
            "memext_owned_knobs",
            "memext_throttled",
            "memext_ticks",
            "memext_wakes",
        ] {
            assert!(
                text.contains(&format!("# HELP {name} ")),
                "{name} has no help:\n{text}"
            );
        }
        assert!(
            text.contains(
                "memext_context_swapped_bytes{cgroup=\"/a/b\",class=\"extend\"} 251658240"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "memext_context_pushed_out_pages_total{cgroup=\"/a/b\",class=\"extend\"} 61000"
            ),
            "{text}"
        );
        assert!(
            text.contains("memext_context_state{cgroup=\"/a/b\",class=\"extend\"} 1"),
            "{text}"
        );
        assert!(text.contains("memext_capacity_bytes 1073741824"), "{text}");
        assert!(text.contains("memext_throttled 0"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    /// The count of charges at the capacity cgroup's limit is reported
    /// only where the capacity is a cgroup's limit and the daemon read it.
    #[test]
    fn the_capacity_limit_hits_are_reported_once_watched() {
        let g = DaemonGauges::default();
        g.capacity_limit_hits.store(4711, Ordering::Relaxed);
        let text = render(&[], &g);
        assert!(!text.contains("memext_capacity_limit_hits"), "{text}");
        g.capacity_watched.store(true, Ordering::Relaxed);
        let text = render(&[], &g);
        assert!(
            text.contains("# HELP memext_capacity_limit_hits "),
            "{text}"
        );
        assert!(
            text.contains("memext_capacity_limit_hits_total 4711"),
            "{text}"
        );
    }

    #[test]
    fn serves_get_metrics_on_loopback_and_404_otherwise() {
        let rows: Reports = Arc::new(Mutex::new(vec![row()]));
        let s = serve("127.0.0.1:0".parse().expect("addr"), rows, Arc::default()).expect("serve");
        let get = |path: &str| {
            let mut c = TcpStream::connect(s.addr).expect("connect");
            write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
            let mut text = String::new();
            c.read_to_string(&mut text).expect("read");
            text
        };
        let ok = get("/metrics");
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        assert!(ok.contains("memext_contexts 1"), "{ok}");
        assert!(get("/").starts_with("HTTP/1.1 404"));
        s.close();
    }
}
