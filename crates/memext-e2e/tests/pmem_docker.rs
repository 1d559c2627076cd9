//! The pmem broker and libscm with real Docker containers: each container gets
//! its own regions and nothing else, whatever it sends; regions survive process
//! exit, `docker restart` and a broker restart; export/import carries them to
//! another container. Needs root, docker.io and debootstrap (scripts/install-deps).

use std::path::{Path, PathBuf};
use std::process::Command;

use memext_e2e::docker::{Container, Engine};
use memext_e2e::is_root;
use memext_e2e::sandbox::{memext_bin, wait_for, ChildGuard};

struct Setup {
    dir: PathBuf,
    config: PathBuf,
    socket_dir: PathBuf,
    region_root: PathBuf,
    probe_dir: PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
        std::fs::remove_dir_all(&self.region_root).ok();
    }
}

/// Builds scm_probe against the libscm.so next to the memext binary, into a
/// directory that is bind-mounted read-only into the containers.
fn build_probe(out: &Path) -> PathBuf {
    let lib_dir = memext_bin().parent().expect("target dir").to_path_buf();
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::create_dir_all(out.join("lib")).expect("probe dir");
    std::fs::copy(lib_dir.join("libscm.so"), out.join("lib/libscm.so"))
        .expect("libscm.so is built (cargo build)");
    let status = Command::new("cc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crates.join("libscm/include"))
        .arg(crates.join("memext-e2e/c/scm_probe.c"))
        .arg("-o")
        .arg(out.join("scm_probe"))
        .arg(format!("-L{}", out.join("lib").display()))
        .arg("-Wl,-rpath,/opt/scm/lib")
        .arg("-lscm")
        .status()
        .expect("run cc");
    assert!(status.success(), "cc scm_probe.c failed");
    out.join("scm_probe")
}

fn setup(engine: &Engine) -> Setup {
    let dir = PathBuf::from(format!("/var/tmp/memext-e2e-{}-pmem", std::process::id()));
    let region_root = PathBuf::from(format!(
        "/dev/shm/memext-e2e-{}-regions",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("test dir");
    let socket_dir = dir.join("sock");
    let config = dir.join("memext.toml");
    std::fs::write(
        &config,
        format!(
            "[runtimes]\ndocker_roots = [\"{}\"]\n\n[pmem]\nroot = \"{}\"\nsocket = \"{}/pmem.sock\"\ncontainer_quota = \"64M\"\ntotal_quota = \"128M\"\n",
            engine.data_root().display(),
            region_root.display(),
            socket_dir.display()
        ),
    )
    .expect("write config");
    let probe_dir = dir.join("probe");
    build_probe(&probe_dir);
    Setup {
        dir,
        config,
        socket_dir,
        region_root,
        probe_dir,
    }
}

fn start_broker(s: &Setup) -> ChildGuard {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(s.dir.join("broker.log"))
        .expect("log");
    let child = Command::new(memext_bin())
        .arg("--config")
        .arg(&s.config)
        .arg("pmem-broker")
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start the broker");
    let sock = s.socket_dir.join("pmem.sock");
    wait_for("the broker's socket", 10, || sock.exists()).expect("broker up");
    ChildGuard(child)
}

fn container<'e>(engine: &'e Engine, s: &Setup, name: &str) -> Container<'e> {
    let probe = format!("{}:/opt/scm:ro", s.probe_dir.display());
    let sock = format!("{}:/run/memext/pmem", s.socket_dir.display());
    Container::run(engine, name, &["-v", &probe, "-v", &sock]).expect("docker run")
}

fn probe(c: &Container<'_>, args: &[&str]) -> String {
    let mut all = vec!["/opt/scm/scm_probe"];
    all.extend_from_slice(args);
    c.exec(&all).1
}

/// One long scenario on purpose: the containers, regions and broker it sets
/// up are shared by every step (refusals, restart, export/import), and setting
/// them up once per step would multiply the test's time by ten.
#[test]
fn containers_get_only_their_own_regions_and_keep_them() {
    assert!(is_root(), "the pmem e2e suite needs root");
    // The engine's state directory is a cache (the imported image), like the VM's.
    let engine = Engine::start(Path::new("/var/tmp/memext-dockerd"))
        .expect("private Docker engine (scripts/docker-engine)");
    let s = setup(&engine);
    let mut broker = start_broker(&s);
    let a = container(&engine, &s, "memext-pmem-a");
    let b = container(&engine, &s, "memext-pmem-b");

    // Each container writes its own region "data"; each reads back only its own.
    let wrote = probe(&a, &["write", "data", "1048576", "alpha"]);
    assert!(
        wrote.starts_with("ok mode 2"),
        "A writes (tmpfs: fence mode): {wrote}"
    );
    let wrote = probe(&b, &["write", "data", "1048576", "beta"]);
    assert!(wrote.starts_with("ok"), "B writes: {wrote}");
    assert_eq!(probe(&a, &["read", "data"]), "text alpha");
    assert_eq!(probe(&b, &["read", "data"]), "text beta");
    assert!(
        s.region_root.join(&a.id).join("data").is_file(),
        "filed under A's container id"
    );

    // Whatever A sends, it never obtains B's region.
    for (request, why) in [
        (format!("OPEN {} 0 0", b.id), "B's id as a region name"),
        (
            format!("OPEN ../{}/data 0 0", b.id),
            "a path out of A's directory",
        ),
        ("OPEN .. 0 0".to_owned(), "the parent directory"),
        (
            "OPEN data 4294967296 1".to_owned(),
            "more than the region holds",
        ),
        ("OPEN huge 4294967296 1".to_owned(), "more than the quota"),
        ("OPEN data 0 0 extra".to_owned(), "a malformed request"),
    ] {
        let reply = probe(&a, &["raw", &request]);
        assert!(
            reply.starts_with("reply ERR") && !reply.contains("+fd"),
            "{why}: {reply}"
        );
    }
    let planted = s.region_root.join(&a.id).join("planted");
    std::os::unix::fs::symlink(s.region_root.join(&b.id).join("data"), &planted)
        .expect("plant a symlink");
    let reply = probe(&a, &["read", "planted"]);
    assert!(
        reply.starts_with("error 6") && reply.contains("symlink"),
        "a planted symlink is refused: {reply}"
    );
    std::fs::remove_file(&planted).ok();
    let reply = probe(&a, &["orphan", "data"]);
    assert!(
        reply.contains("ERR") && reply.contains("exited"),
        "a connection whose connecting process exited: {reply}"
    );

    // Host processes are refused by default.
    let host = Command::new(s.probe_dir.join("scm_probe"))
        .args(["read", "data"])
        .env("SCM_BROKER_SOCKET", s.socket_dir.join("pmem.sock"))
        .env("LD_LIBRARY_PATH", s.probe_dir.join("lib"))
        .output()
        .expect("host probe");
    let text = String::from_utf8_lossy(&host.stdout);
    assert!(
        !host.status.success() && text.contains("outside a container"),
        "host caller: {text}"
    );

    // Persistence across docker restart and a broker restart.
    engine
        .ok(&["restart", "-t", "1", &a.name])
        .expect("docker restart");
    assert_eq!(
        probe(&a, &["read", "data"]),
        "text alpha",
        "after docker restart"
    );
    assert!(
        broker.terminate(10).is_some_and(|st| st.success()),
        "broker stops on SIGTERM"
    );
    drop(broker);
    broker = start_broker(&s);
    assert_eq!(
        probe(&a, &["read", "data"]),
        "text alpha",
        "after a broker restart"
    );
    assert_eq!(
        probe(&b, &["read", "data"]),
        "text beta",
        "after a broker restart"
    );

    // Export A's regions, import them for a new container C.
    let c = container(&engine, &s, "memext-pmem-c");
    let tar = s.dir.join("a-regions.tar");
    let memext = |args: &[&str]| {
        let out = Command::new(memext_bin())
            .arg("--config")
            .arg(&s.config)
            .args(args)
            .output()
            .expect("memext");
        assert!(
            out.status.success(),
            "memext {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    memext(&["pmem", "export", &a.name, tar.to_str().expect("utf-8 path")]);
    memext(&[
        "pmem",
        "import",
        &c.id[..12],
        tar.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(
        probe(&c, &["read", "data"]),
        "text alpha",
        "C has A's region after import"
    );

    let log = std::fs::read_to_string(s.dir.join("broker.log")).unwrap_or_default();
    assert!(
        log.contains("refused") && log.contains("symlink"),
        "refusals are logged with their reason:\n{log}"
    );
    drop(broker);
}
