//! A Kubernetes node without a kubelet: Debian's containerd with its CRI
//! plugin (scripts/containerd-engine, configured as a node for memext would
//! be: cgroupfs driver, `pod_annotations = ["memext.io/*"]`), driven by
//! tools/cri-pod, which uses the kubelet's own CRI client library
//! (k8s.io/cri-client) to run pods with annotations under the kubelet's cgroup
//! parents (`/kubepods/burstable/pod<uid>`). memext, with no selector at all,
//! classifies the pods from their annotations, read from containerd's task
//! bundles: the idle `extend` pod is pushed out to its annotated floor, the
//! `critical` one never; names follow the kubelet's `k8s_CONTAINER_POD_NS`.
//! Everything is removed again (pods, containerd, its mounts and cgroups).
//!
//! The systemd driver's layout (`kubepods-burstable-pod<uid>.slice/
//! cri-containerd-<id>.scope`) needs systemd as PID 1 (runc's systemd cgroup
//! manager), which this machine lacks: it is covered by the discovery tests
//! on the fixture tree (`contexts::tests`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use memext_e2e::docker::{python_unit_tests, repo_root};
use memext_e2e::sandbox::{run_ok as run, v1_limit as limit_of, TierSandbox};
use memext_e2e::status_row;

const MIB: u64 = 1 << 20;

/// The node: containerd running in `dir`, the pods this test ran, the
/// kubelet-layout cgroups containerd made. All removed on drop.
struct Node {
    dir: PathBuf,
    cri_pod: PathBuf,
    pods: Vec<String>,
}

impl Node {
    fn endpoint(&self) -> String {
        format!("unix://{}/containerd.sock", self.dir.display())
    }

    fn cri(&self, args: &[&str]) -> String {
        run(Command::new(&self.cri_pod)
            .arg("-endpoint")
            .arg(self.endpoint())
            .args(args))
    }

    /// Runs a pod of one container (the e2e helper, mounted read-only).
    fn pod(&mut self, name: &str, uid: &str, class: &str, floor: &str, cmd: &[&str]) {
        let helper = env!("CARGO_BIN_EXE_memext-e2e");
        let parent = format!("/kubepods/burstable/pod{uid}");
        let mut args = vec![
            "run",
            "-name",
            name,
            "-uid",
            uid,
            "-cgroup-parent",
            &parent,
            "-image",
            "memext.local/base:1",
        ];
        let (class, floor, mount) = (
            format!("memext.io/class={class}"),
            format!("memext.io/floor={floor}"),
            format!("{helper}=/memext-e2e"),
        );
        args.extend([
            "-annotation",
            &class,
            "-annotation",
            &floor,
            "-mount",
            &mount,
            "--",
        ]);
        args.extend(cmd);
        let out = self.cri(&args);
        let pod = out.split_whitespace().next().expect("pod id").to_owned();
        self.pods.push(pod);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        for p in std::mem::take(&mut self.pods) {
            Command::new(&self.cri_pod)
                .arg("-endpoint")
                .arg(self.endpoint())
                .args(["rm", &p])
                .output()
                .ok();
        }
        Command::new(repo_root().join("scripts/containerd-engine"))
            .arg("stop")
            .arg(&self.dir)
            .output()
            .ok();
        // The kubelet's layout, as containerd made it for these pods: empty now.
        for h in [
            "memory",
            "cpu,cpuacct",
            "cpuacct",
            "cpu",
            "freezer",
            "pids",
            "blkio",
            "devices",
            "cpuset",
            "hugetlb",
            "net_cls,net_prio",
            "perf_event",
            "rdma",
            "misc",
            "unified",
            "systemd",
        ] {
            remove_tree(&Path::new("/sys/fs/cgroup").join(h).join("kubepods"));
        }
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// Removes an (empty) cgroup tree, deepest first; leaves what is in use.
fn remove_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
    std::fs::remove_dir(dir).ok();
}

/// The DaemonSet manifest's checks (deploy/kubernetes/test_manifest.py).
#[test]
fn the_manifest_checks_pass() {
    python_unit_tests("deploy/kubernetes");
}

#[test]
fn pods_are_classified_by_annotation_and_the_idle_extend_one_is_pushed_out() {
    let _g = common::serial();
    assert!(
        !Path::new("/sys/fs/cgroup/memory/kubepods").exists(),
        "a kubelet's /kubepods exists on this host; not running pods beside it"
    );
    let cri_pod = repo_root().join("target/cri-pod");
    run(Command::new("go")
        .args(["build", "-o"])
        .arg(&cri_pod)
        .arg(".")
        .current_dir(repo_root().join("tools/cri-pod")));
    let dir = PathBuf::from(format!(
        "/var/tmp/memext-e2e-{}-containerd",
        std::process::id()
    ));
    let mut node = Node {
        dir: dir.clone(),
        cri_pod,
        pods: Vec::new(),
    };
    let engine = repo_root().join("scripts/containerd-engine");
    run(Command::new(&engine).arg("start").arg(&dir));
    run(Command::new(&engine).arg("image").arg(&dir));
    let version = node.cri(&["version"]);
    assert!(
        version.starts_with("containerd ") && version.trim().ends_with("v1"),
        "{version}"
    );

    let uid = |n: u32| format!("{:08x}-0000-4000-8000-{:012x}", std::process::id(), n);
    node.pod(
        "idle",
        &uid(1),
        "extend",
        "8MiB",
        &["/memext-e2e", "workload", "96", "idle"],
    );
    node.pod(
        "db",
        &uid(2),
        "critical",
        "8MiB",
        &["/memext-e2e", "workload", "64", "busy"],
    );

    // No selector: the pods' annotations are the only policy.
    let sb = TierSandbox::new(
        "kube",
        &format!(
            "[class.extend]\nidle_after = \"2s\"\n\n[runtimes]\ncontainerd_roots = [\"{}/state\"]\n\n\
             [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"512MiB\"\npriority = 10\n\n\
             [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\nsocket = \"@DIR@/memext.sock\"\n",
            dir.display()
        ),
    );
    sb.up();
    let status = || String::from_utf8_lossy(&sb.run(&["status", "--json"]).stdout).into_owned();
    let row = |json: &str, name: &str| -> Option<serde_json::Value> {
        let rows: Vec<serde_json::Value> = serde_json::from_str(json).ok()?;
        rows.into_iter().find(|r| r["name"] == name)
    };
    // Without the daemon: discovery alone names and classifies them.
    let local = status();
    let idle =
        row(&local, "k8s_app_idle_default").unwrap_or_else(|| panic!("no idle pod: {local}"));
    assert_eq!(idle["class"], "extend", "{idle}");
    assert_eq!(idle["runtime"], "kubernetes", "{idle}");
    let db = row(&local, "k8s_app_db_default").expect("db pod");
    assert_eq!(db["class"], "critical", "{db}");
    let (idle_cg, db_cg) = (
        idle["cgroup"].as_str().expect("cgroup").to_owned(),
        db["cgroup"].as_str().expect("cgroup").to_owned(),
    );
    assert!(
        idle_cg.starts_with(&format!("/kubepods/burstable/pod{}/", uid(1))),
        "{idle_cg}"
    );
    let db_limit = limit_of(&db_cg);

    let mut daemon = sb.daemon("daemon.log");
    let mut last = String::new();
    let pushed = memext_e2e::sandbox::wait_for(
        "the idle extend pod pushed out to its 8 MiB floor",
        60,
        || {
            last = status();
            row(&last, "k8s_app_idle_default").is_some_and(|r| {
                r["out"] == true && r["resident_bytes"].as_u64().is_some_and(|b| b <= 16 * MIB)
            })
        },
    );
    assert!(
        pushed.is_ok(),
        "{pushed:?}; status: {last}; log: {}",
        std::fs::read_to_string(sb.dir.join("daemon.log")).unwrap_or_default()
    );
    let json = status();
    let db = status_row(&json, &db_cg).expect("db row");
    assert_eq!(db["out"], false, "the critical pod was pushed out: {db}");
    assert_eq!(limit_of(&db_cg), db_limit, "a limit on the critical pod");
    daemon.terminate(30).expect("daemon stopped");
    assert!(
        limit_of(&idle_cg) > 1 << 40,
        "the idle pod's limit was not restored"
    );
    drop(node);
    assert!(
        !Path::new("/sys/fs/cgroup/memory/kubepods").exists(),
        "/kubepods left behind"
    );
}
