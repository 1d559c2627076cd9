//! The Debian package (scripts/package: cargo-deb) installed on this host
//! with dpkg, its unit run, and the package purged: nothing is left.
//!
//! PID 1 here is not systemd, so the unit's lifecycle is run as systemd runs
//! it, from the installed unit file: every ExecStartPre in order, ExecStart
//! with a NOTIFY_SOCKET (Type=notify: READY=1 awaited, watchdog pings
//! counted), then KillSignal (SIGTERM) and every ExecStopPost. The installed
//! conffile is edited as an operator would (a plain cgroup selected, a short
//! idle_after, smaller tiers), so that the daemon really changes a knob: a
//! sleeping process's cgroup gets a memory limit (pushed out). After the stop
//! the knob is back, the swap devices are gone, and after `dpkg --purge`
//! none of the package's files, its state or its run files remain. The
//! installed header, library and pkg-config file build a C program.

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memext_e2e::docker::repo_root;
use memext_e2e::sandbox::{run_ok as run, swap_areas, v1_limit, ScratchDir};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, is_root, ScratchCgroup};

const UNIT: &str = "/usr/lib/systemd/system/memext.service";
const CONFIG: &str = "/etc/memext/memext.toml";
/// Every path the package installs or its daemon makes.
const PACKAGE_PATHS: &[&str] = &[
    "/usr/bin/memext",
    CONFIG,
    "/etc/memext",
    UNIT,
    "/usr/lib/x86_64-linux-gnu/libscm.so",
    "/usr/lib/x86_64-linux-gnu/pkgconfig/libscm.pc",
    "/usr/include/libscm.h",
    "/usr/share/doc/memext",
    "/var/lib/memext",
    "/run/memext",
    "/run/memext.sock",
];

/// The package installed by this test: purged on drop (also when the test
/// fails), after the daemon it started is killed and the tiers taken down.
struct Installed {
    daemon: Option<Child>,
}

impl Drop for Installed {
    fn drop(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            d.kill().ok();
            d.wait().ok();
        }
        let memext = |args: &[&str]| Command::new("/usr/bin/memext").args(args).output().ok();
        memext(&["restore"]);
        memext(&["tiers", "down"]);
        Command::new("dpkg")
            .args(["--purge", "memext"])
            .output()
            .ok();
    }
}

/// The [Service] commands of a unit file: (key, command, failure ignored).
fn exec_lines(unit: &str) -> Vec<(String, Vec<String>, bool)> {
    unit.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.starts_with("Exec"))
        .map(|(k, v)| {
            let (ignore, cmd) = v.strip_prefix('-').map_or((false, v), |c| (true, c));
            let argv = cmd.split_whitespace().map(str::to_owned).collect();
            (k.to_owned(), argv, ignore)
        })
        .collect()
}

fn exec(argv: &[String], ignore: bool) {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .expect("run");
    assert!(
        ignore || out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What the daemon told its NOTIFY_SOCKET within `secs`, until READY=1.
fn await_ready(sock: &UnixDatagram, secs: u64) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    while Instant::now() < deadline {
        if let Ok(n) = sock.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
            if got
                .last()
                .is_some_and(|m| m.lines().any(|l| l == "READY=1"))
            {
                return got;
            }
        }
    }
    panic!("no READY=1 within {secs} s: {got:?}");
}

/// Edits the conffile as an operator would: the scratch cgroup's children
/// selected as extend, idle after 2 s, tiers of 256 MiB zram and 1 GiB swap.
fn configure(parent: &str) {
    let text = std::fs::read_to_string(CONFIG).expect("conffile");
    let edited = text
        .replace("idle_after = \"30s\"", "idle_after = \"2s\"")
        .replace("size = \"4GiB\"", "size = \"256MiB\"")
        .replace("size = \"16GiB\"", "size = \"1GiB\"");
    assert_ne!(text, edited, "the default config changed: update this test");
    let select = format!("\n[[select]]\ncgroup = \"{parent}/*\"\nclass = \"extend\"\n");
    std::fs::write(CONFIG, edited + &select).expect("write conffile");
}

fn limit(cg: &ScratchCgroup) -> u64 {
    v1_limit(cg.path.as_str())
}

fn zram_devices() -> Vec<PathBuf> {
    let mut d: Vec<PathBuf> = std::fs::read_dir("/sys/block")
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    d.retain(|p| p.to_string_lossy().contains("zram"));
    d.sort();
    d
}

#[test]
fn package_installs_runs_its_unit_and_purges_leaving_nothing() {
    assert!(is_root(), "dpkg -i needs root");
    assert!(
        !Command::new("dpkg")
            .args(["-s", "memext"])
            .output()
            .expect("dpkg -s")
            .status
            .success(),
        "a memext package is installed on this host already; this test installs and purges its own"
    );
    assert!(
        Path::new("/sys/fs/cgroup/memory").is_dir(),
        "this test reads v1 limits (the v2 paths run in the VM suite)"
    );
    let deb = run(Command::new(repo_root().join("scripts/package")).arg("--debug"));
    let deb = deb
        .lines()
        .last()
        .expect("the .deb's path")
        .trim()
        .to_owned();
    let (swaps_before, zram_before) = (swap_areas(), zram_devices());

    let mut installed = Installed { daemon: None };
    run(Command::new("dpkg").args(["-i", &deb]));
    for p in &PACKAGE_PATHS[..8] {
        assert!(Path::new(p).exists(), "{p} not installed");
    }
    let conffiles = run(Command::new("dpkg-query").args(["-W", "-f=${Conffiles}", "memext"]));
    assert!(conffiles.contains(CONFIG), "not a conffile: {conffiles}");
    // The header, the library and its pkg-config file build a program.
    let flags = run(Command::new("pkg-config").args(["--cflags", "--libs", "libscm"]));
    assert!(flags.contains("-lscm"), "{flags}");
    let dir = ScratchDir::new("package");
    let src = dir.0.join("t.c");
    std::fs::write(
        &src,
        "#include <libscm.h>\nint main(void) { return scm_open == 0; }\n",
    )
    .expect("t.c");
    let mut cc = Command::new("cc");
    cc.arg(&src).arg("-o").arg(dir.0.join("t"));
    cc.args(flags.split_whitespace());
    run(&mut cc);

    // A sleeping process in a cgroup the edited policy selects.
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "sleeper").expect("cgroup");
    let helper = Path::new(env!("CARGO_BIN_EXE_memext-e2e"));
    let mut t = Toucher::spawn(helper, 64 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let limit_before = limit(&cg);
    configure(cg.parent.as_str());

    // The unit, as systemd runs it.
    let unit = std::fs::read_to_string(UNIT).expect("unit");
    assert!(unit.contains("Type=notify") && unit.contains("KillSignal=SIGTERM"));
    let lines = exec_lines(&unit);
    for (_, argv, ignore) in lines.iter().filter(|(k, ..)| k == "ExecStartPre") {
        exec(argv, *ignore);
    }
    assert_ne!(swap_areas(), swaps_before, "ExecStartPre set up no tier");
    let notify_path = dir.0.join("notify");
    let notify = UnixDatagram::bind(&notify_path).expect("notify socket");
    let start = &lines
        .iter()
        .find(|(k, ..)| k == "ExecStart")
        .expect("ExecStart")
        .1;
    let child = Command::new(&start[0])
        .args(&start[1..])
        .env("NOTIFY_SOCKET", &notify_path)
        .env("WATCHDOG_USEC", "30000000")
        .env("MEMEXT_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ExecStart");
    let pid = child.id();
    installed.daemon = Some(child);
    await_ready(&notify, 30);
    let deadline = Instant::now() + Duration::from_secs(30);
    while limit(&cg) == limit_before {
        assert!(
            Instant::now() < deadline,
            "the daemon set no limit on the sleeper in 30 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // Stop: SIGTERM, then ExecStopPost.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).expect("pid")).expect("pid"),
        rustix::process::Signal::TERM,
    )
    .expect("SIGTERM");
    let status = installed
        .daemon
        .take()
        .expect("daemon")
        .wait()
        .expect("wait");
    assert!(
        status.success(),
        "the daemon exited with {status} on SIGTERM"
    );
    for (_, argv, ignore) in lines.iter().filter(|(k, ..)| k == "ExecStopPost") {
        exec(argv, *ignore);
    }
    assert_eq!(limit(&cg), limit_before, "a knob left behind");
    assert_eq!(swap_areas(), swaps_before, "a swap device left behind");
    assert_eq!(zram_devices(), zram_before, "a zram device left behind");
    drop(t);

    run(Command::new("dpkg").args(["--purge", "memext"]));
    for p in PACKAGE_PATHS {
        assert!(!Path::new(p).exists(), "{p} left behind after purge");
    }
    drop(installed);
}
