//! memext's container image (scripts/image, deploy/kubernetes/Dockerfile) run
//! as the DaemonSet runs it, on the private Docker engine: with every
//! capability this machine has (see below), unconfined, in the
//! host's PID namespace, the host's cgroup tree under /host, the engine's
//! metadata read-only, its state and socket in host directories. It manages
//! its sibling: an idle container selected by name is pushed out, the host's
//! `memext status` reads the agent through the mounted socket, and
//! `docker stop` (SIGTERM) makes it put the sibling's knob back.

mod common;

use std::path::Path;
use std::process::Command;

use memext_e2e::docker::{repo_root, Container, Engine};
use memext_e2e::sandbox::{v1_limit, ScratchDir, TierSandbox};

const MIB: u64 = 1 << 20;

fn limit_of(id: &str) -> u64 {
    v1_limit(&format!("/memext-docker/{id}"))
}

#[test]
fn the_image_runs_privileged_and_manages_its_sibling() {
    let _g = common::serial();
    let engine_dir = ScratchDir::new("image-engine");
    let engine = Engine::start(&engine_dir.0).expect("engine");
    let out = Command::new(repo_root().join("scripts/image"))
        .arg(&engine_dir.0)
        .arg("--debug")
        .output()
        .expect("scripts/image");
    assert!(
        out.status.success(),
        "scripts/image: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tar = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(Path::new(&tar).is_file(), "no image tarball at {tar}");

    let sb = TierSandbox::new(
        "image",
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"512MiB\"\npriority = 10\n\n\
         [daemon]\nsocket = \"@DIR@/run/memext.sock\"\n",
    );
    sb.up();
    for d in ["agent", "agent-state", "run"] {
        std::fs::create_dir_all(sb.dir.join(d)).expect("dir");
    }
    std::fs::write(
        sb.dir.join("agent/memext.toml"),
        "[host]\ncgroup_root = \"/host/sys/fs/cgroup\"\nstate_dir = \"/var/lib/memext\"\n\n\
         [[select]]\nname = \"idle-sib\"\nclass = \"extend\"\n\n\
         [class.extend]\nidle_after = \"2s\"\nfloor = \"8MiB\"\n\n\
         [runtimes]\ndocker_roots = [\"/var/lib/docker\"]\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\nsocket = \"/run/memext/memext.sock\"\n",
    )
    .expect("agent config");

    let helper = format!("{}:/memext-e2e:ro", env!("CARGO_BIN_EXE_memext-e2e"));
    let sib = Container::run(&engine, "idle-sib", &["-v", &helper]).expect("sibling");
    engine
        .ok(&[
            "exec",
            "-d",
            "idle-sib",
            "/memext-e2e",
            "workload",
            "96",
            "idle",
        ])
        .expect("workload");
    let before = limit_of(&sib.id);

    let vol = |host: &Path, at: &str| format!("{}:{at}", host.display());
    let args = [
        "run",
        "-d",
        "--name",
        "memext-agent",
        // The DaemonSet's `privileged: true` but for one capability: this
        // machine's bounding set lacks CAP_SYS_RESOURCE, and runc refuses a
        // privileged container it cannot give every capability to.
        "--cap-add",
        "ALL",
        "--cap-drop",
        "SYS_RESOURCE",
        "--security-opt",
        "seccomp=unconfined",
        "--security-opt",
        "apparmor=unconfined",
        "--pid",
        "host",
        "--network",
        "none",
        "-v",
        "/sys/fs/cgroup:/host/sys/fs/cgroup",
        "-v",
        &vol(&engine.data_root(), "/var/lib/docker:ro"),
        "-v",
        &vol(&sb.dir.join("agent"), "/etc/memext:ro"),
        "-v",
        &vol(&sb.dir.join("agent-state"), "/var/lib/memext"),
        "-v",
        &vol(&sb.dir.join("run"), "/run/memext"),
        "memext:0.1.0",
        "--log-format",
        "json",
        "--config",
        "/etc/memext/memext.toml",
        "daemon",
    ];
    let id = engine.ok(&args).expect("run the image");
    let agent = Container {
        engine: &engine,
        name: "memext-agent".into(),
        id,
    };
    let logs =
        || String::from_utf8_lossy(&engine.docker(&["logs", "memext-agent"]).stderr).into_owned();
    let pushed = memext_e2e::sandbox::wait_for("the sibling pushed out by the agent", 60, || {
        let json = String::from_utf8_lossy(&sb.run(&["status", "--json"]).stdout).into_owned();
        let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
        rows.iter().any(|r| {
            r["name"] == "idle-sib"
                && r["out"] == true
                && r["resident_bytes"].as_u64().is_some_and(|b| b <= 16 * MIB)
        })
    });
    assert!(pushed.is_ok(), "{pushed:?}; agent log: {}", logs());
    assert!(limit_of(&sib.id) < before, "no limit on the sibling");
    engine
        .ok(&["stop", "-t", "30", "memext-agent"])
        .expect("docker stop");
    assert_eq!(limit_of(&sib.id), before, "knob left: {}", logs());
    assert!(logs().contains("knobs restored"), "{}", logs());
    drop(agent);
    drop(sib);
}
