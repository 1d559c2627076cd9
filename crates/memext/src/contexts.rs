//! Memory-context discovery: walk the cgroup tree, recognise containers and
//! units, name them from their runtime's metadata, and classify them by policy.
//! Reads only; never writes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use memext_cgroup::{CgroupPath, Hierarchy, HierarchyError};

use crate::config::{Class, Config, ContextFacts};
use crate::identity::{identify, is_container_id, Identity, Runtime};
use crate::kube::{self, PodContainer};

/// One memory context: a cgroup memext knows as a workload.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MemoryContext {
    pub path: CgroupPath,
    pub identity: Identity,
    pub name: Option<String>,
    pub class: Class,
    /// Index of the `[[select]]` entry that gave the class.
    pub selector: Option<usize>,
    /// The class came from the pod's `memext.io/class` annotation.
    pub annotated: bool,
    /// A Kubernetes container's pod metadata and annotations (containerd).
    #[serde(skip)]
    pub pod: Option<PodContainer>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct DiscoverOptions {
    /// Also list systemd units and plain cgroups that no selector names.
    pub all: bool,
}

/// Finds the memory contexts under `hierarchy`, in tree order.
pub fn discover(
    hierarchy: &Hierarchy,
    config: &Config,
    opts: DiscoverOptions,
) -> Result<Vec<MemoryContext>, HierarchyError> {
    let mut names = NameResolver::new(&config.runtimes.docker_roots, &config.runtimes.podman_roots)
        .with_containerd(&config.runtimes.containerd_roots);
    let mut out: Vec<MemoryContext> = Vec::new();
    // Cgroups whose sub-cgroups belong to them (a set: thousands of them).
    let mut owners: HashSet<String> = HashSet::new();
    for path in hierarchy.walk()? {
        if path
            .components()
            .next()
            .is_some_and(|top| config.host.leave_alone.iter().any(|l| l == top))
        {
            continue;
        }
        // A container's own sub-cgroups are part of it, not contexts of their own.
        if has_owner(&path, &owners) {
            continue;
        }
        let Some(identity) = identify(&path) else {
            continue;
        };
        let pod = names.pod(&identity);
        let name = pod
            .as_ref()
            .map(PodContainer::name)
            .or_else(|| names.name(&identity));
        let facts = ContextFacts {
            path: &path,
            identity: &identity,
            name: name.as_deref(),
        };
        // A pod's own annotation, where the policy lets annotations count,
        // comes before the selectors.
        let (class, selector, annotated) = match pod.as_ref().and_then(|p| p.class) {
            Some(c) if config.runtimes.pod_annotations => (c, None, true),
            _ => {
                let (c, s) = config.classify(&facts);
                (c, s, false)
            }
        };
        let wanted = identity.runtime.is_container()
            || selector.is_some()
            || (opts.all && is_leafish(hierarchy, &path));
        // A container, or a selected unit or plain cgroup, owns what is
        // below it.
        if identity.runtime.is_container() || wanted {
            owners.insert(path.as_str().to_owned());
        }
        if wanted {
            out.push(MemoryContext {
                path,
                identity,
                name,
                class,
                selector,
                annotated,
                pod,
            });
        }
    }
    Ok(out)
}

/// Whether a cgroup above `path` is in `owners`.
fn has_owner(path: &CgroupPath, owners: &HashSet<String>) -> bool {
    let s = path.as_str();
    owners.contains("/")
        || s.match_indices('/')
            .map(|(i, _)| &s[..i])
            .any(|above| !above.is_empty() && owners.contains(above))
}

/// A cgroup with processes of its own (for `--all`, which skips pure structure).
fn is_leafish(h: &Hierarchy, path: &CgroupPath) -> bool {
    std::fs::read_to_string(path.under(&h.memory_root).join("cgroup.procs"))
        .is_ok_and(|t| !t.trim().is_empty())
}

/// Container names from runtime metadata on the host. Paths are built only from
/// validated 64-hex ids and configured roots, never from anything a container wrote
/// into a path; files are size-capped.
pub struct NameResolver<'a> {
    docker_roots: &'a [PathBuf],
    podman_roots: &'a [PathBuf],
    containerd_roots: &'a [PathBuf],
    podman: Option<HashMap<String, String>>,
}

const MAX_METADATA_BYTES: u64 = 8 << 20;

fn read_capped(path: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut s = String::new();
    f.take(MAX_METADATA_BYTES).read_to_string(&mut s).ok()?;
    Some(s)
}

#[derive(serde::Deserialize)]
struct DockerConfig {
    #[serde(rename = "Name")]
    name: String,
    #[serde(rename = "Config", default)]
    config: DockerContainerConfig,
}

#[derive(serde::Deserialize, Default)]
struct DockerContainerConfig {
    #[serde(rename = "Labels", default)]
    labels: Option<HashMap<String, String>>,
}

#[derive(serde::Deserialize)]
struct PodmanContainer {
    id: String,
    #[serde(default)]
    names: Vec<String>,
}

impl<'a> NameResolver<'a> {
    pub fn new(docker_roots: &'a [PathBuf], podman_roots: &'a [PathBuf]) -> Self {
        Self {
            docker_roots,
            podman_roots,
            containerd_roots: &[],
            podman: None,
        }
    }

    /// Also reads Kubernetes containers' metadata from containerd's state
    /// directories (`[runtimes] containerd_roots`).
    pub fn with_containerd(mut self, roots: &'a [PathBuf]) -> Self {
        self.containerd_roots = roots;
        self
    }

    /// A Kubernetes container's pod metadata and annotations, from its
    /// containerd bundle (None for other runtimes, or none found).
    pub fn pod(&self, identity: &Identity) -> Option<PodContainer> {
        if !matches!(identity.runtime, Runtime::Kubernetes | Runtime::Containerd) {
            return None;
        }
        kube::from_annotations(&kube::read_annotations(
            self.containerd_roots,
            &identity.id,
        )?)
    }

    pub fn name(&mut self, identity: &Identity) -> Option<String> {
        match identity.runtime {
            Runtime::Docker if is_container_id(&identity.id) => self.docker_name(&identity.id),
            Runtime::Podman if is_container_id(&identity.id) => self.podman_name(&identity.id),
            Runtime::Systemd => Some(identity.id.clone()),
            _ => None,
        }
    }

    fn docker_config(&self, id: &str) -> Option<DockerConfig> {
        if !is_container_id(id) {
            return None;
        }
        self.docker_roots.iter().find_map(|root| {
            let text = read_capped(&root.join("containers").join(id).join("config.v2.json"))?;
            serde_json::from_str(&text).ok()
        })
    }

    /// The name of Docker container `id`, from its metadata.
    pub fn docker_name(&self, id: &str) -> Option<String> {
        let c = self.docker_config(id)?;
        Some(c.name.trim_start_matches('/').to_owned()).filter(|n| !n.is_empty())
    }

    /// The value of label `label` of Docker container `id`.
    pub fn docker_label(&self, id: &str, label: &str) -> Option<String> {
        self.docker_config(id)?.config.labels?.remove(label)
    }

    fn podman_name(&mut self, id: &str) -> Option<String> {
        let roots = self.podman_roots;
        let map = self.podman.get_or_insert_with(|| {
            let mut m = HashMap::new();
            for root in roots {
                let Some(text) =
                    read_capped(&root.join("overlay-containers").join("containers.json"))
                else {
                    continue;
                };
                let Ok(list) = serde_json::from_str::<Vec<PodmanContainer>>(&text) else {
                    continue;
                };
                for c in list {
                    if let Some(n) = c.names.into_iter().next() {
                        m.insert(c.id, n);
                    }
                }
            }
            m
        });
        map.get(id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(v: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../memext-cgroup/fixtures")
            .join(v)
    }

    fn runtimes_of(ctxs: &[MemoryContext]) -> Vec<(String, Runtime)> {
        ctxs.iter()
            .map(|c| (c.path.to_string(), c.identity.runtime))
            .collect()
    }

    #[test]
    fn discovers_v1_containers_and_skips_reserved_and_structure() {
        let h = Hierarchy::probe(&fixture("v1")).expect("v1");
        let ctxs = discover(
            &h,
            &Config::empty(Path::new("-")),
            DiscoverOptions::default(),
        )
        .expect("discover");
        let got = runtimes_of(&ctxs);
        assert_eq!(got.len(), 6, "{got:?}");
        assert!(got.iter().all(|(p, _)| !p.starts_with("/process_api")));
        let rt: Vec<Runtime> = got.iter().map(|g| g.1).collect();
        assert_eq!(rt.iter().filter(|r| **r == Runtime::Docker).count(), 3);
        assert!(rt.contains(&Runtime::Podman) && rt.contains(&Runtime::Kubernetes));
        // The kubelet's systemd driver on v1: a containerd scope in a pod slice.
        assert!(rt.contains(&Runtime::Containerd));
        // The podman container's own child cgroup is part of it.
        assert!(!got.iter().any(|(p, _)| p.ends_with("/container")));
        assert!(ctxs.iter().all(|c| c.class == Class::Ignore));
    }

    /// Kubernetes pods in both of the kubelet's cgroup layouts (cgroupfs:
    /// `kubepods/burstable/pod<uid>/<id>`; systemd driver:
    /// `…-pod<uid>.slice/cri-containerd-<id>.scope`) are classified by their
    /// pods' annotations from containerd's bundles, over the selectors; the
    /// policy can turn that off.
    #[test]
    fn pods_are_classified_by_their_annotations_from_containerd() {
        let h = Hierarchy::probe(&fixture("v1")).expect("v1");
        let state = tempfile::tempdir().expect("tmp");
        let bundle = |id: &str, class: &str| {
            let d = state
                .path()
                .join("io.containerd.runtime.v2.task/k8s.io")
                .join(id);
            std::fs::create_dir_all(&d).expect("bundle");
            let spec = serde_json::json!({"annotations": {
                "io.kubernetes.cri.container-type": "container",
                "io.kubernetes.cri.container-name": "app",
                "io.kubernetes.cri.sandbox-name": format!("pod-{class}"),
                "io.kubernetes.cri.sandbox-namespace": "default",
                "memext.io/class": class,
                "memext.io/floor": "8MiB",
            }});
            std::fs::write(d.join("config.json"), spec.to_string()).expect("spec");
        };
        let (cgroupfs, systemd) = ("e5".repeat(32), "18".repeat(32));
        bundle(&cgroupfs, "critical");
        bundle(&systemd, "extend");
        let text = format!(
            "[[select]]\nruntime = \"kubernetes\"\nclass = \"extend\"\n\n\
             [runtimes]\ncontainerd_roots = [\"{}\"]\n",
            state.path().display()
        );
        let mut cfg = Config::parse(&text, Path::new("t.toml")).expect("config");
        let find = |ctxs: &[MemoryContext], id: &str| {
            ctxs.iter()
                .find(|c| c.identity.id == id)
                .cloned()
                .expect("found")
        };
        let ctxs = discover(&h, &cfg, DiscoverOptions::default()).expect("discover");
        let a = find(&ctxs, &cgroupfs);
        assert_eq!((a.class, a.annotated), (Class::Critical, true));
        assert_eq!(a.name.as_deref(), Some("k8s_app_pod-critical_default"));
        let b = find(&ctxs, &systemd);
        assert_eq!(
            (b.class, b.identity.runtime),
            (Class::Extend, Runtime::Containerd)
        );
        assert!(b.pod.as_ref().is_some_and(|p| p.overrides.floor.is_some()));
        cfg.runtimes.pod_annotations = false;
        let ctxs = discover(&h, &cfg, DiscoverOptions::default()).expect("discover");
        let a = find(&ctxs, &cgroupfs);
        assert_eq!(
            (a.class, a.annotated),
            (Class::Extend, false),
            "the selector's"
        );
    }

    #[test]
    fn all_adds_units_and_plain_cgroups_with_processes() {
        let h = Hierarchy::probe(&fixture("v1")).expect("v1");
        let ctxs = discover(
            &h,
            &Config::empty(Path::new("-")),
            DiscoverOptions { all: true },
        )
        .expect("discover");
        let got = runtimes_of(&ctxs);
        assert!(
            got.contains(&(
                "/system.slice/redis-server.service".into(),
                Runtime::Systemd
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&("/batch/job1".into(), Runtime::Plain)),
            "{got:?}"
        );
        assert!(
            !got.iter().any(|(p, _)| p == "/batch" || p == "/docker"),
            "{got:?}"
        );
    }

    #[test]
    fn selected_plain_cgroup_becomes_a_context_with_its_class() {
        let h = Hierarchy::probe(&fixture("v1")).expect("v1");
        let cfg = Config::parse(
            "[[select]]\ncgroup = \"/batch/*\"\nclass = \"extend\"\n",
            Path::new("t"),
        )
        .expect("cfg");
        let ctxs = discover(&h, &cfg, DiscoverOptions::default()).expect("discover");
        let job = ctxs
            .iter()
            .find(|c| c.path.as_str() == "/batch/job1")
            .expect("job1 selected");
        assert_eq!((job.class, job.selector), (Class::Extend, Some(0)));
    }

    #[test]
    fn discovers_v2_layouts() {
        let h = Hierarchy::probe(&fixture("v2")).expect("v2");
        let ctxs = discover(
            &h,
            &Config::empty(Path::new("-")),
            DiscoverOptions::default(),
        )
        .expect("discover");
        let rt: Vec<Runtime> = ctxs.iter().map(|c| c.identity.runtime).collect();
        assert_eq!(
            rt,
            vec![
                // The kubelet's cgroupfs driver on v2, then its systemd driver.
                Runtime::Kubernetes,
                Runtime::Containerd,
                Runtime::CriO,
                Runtime::Podman,
                Runtime::Docker
            ],
            "{ctxs:?}"
        );
        let crio = &ctxs[1];
        assert_eq!(
            crio.identity.pod.as_deref(),
            Some("5f0c9f7e-3b1d-4c55-9d5e-0123456789ab")
        );
    }

    #[test]
    fn names_come_from_runtime_metadata() {
        let d = tempfile::tempdir().expect("tempdir");
        let id = "a1".repeat(32);
        let cdir = d.path().join("docker/containers").join(&id);
        std::fs::create_dir_all(&cdir).expect("mkdir");
        std::fs::write(
            cdir.join("config.v2.json"),
            r#"{"ID":"x","Name":"/redis-critical","State":{}}"#,
        )
        .expect("write");
        let pdir = d.path().join("podman/overlay-containers");
        std::fs::create_dir_all(&pdir).expect("mkdir");
        let pid = "d4".repeat(32);
        std::fs::write(
            pdir.join("containers.json"),
            format!(r#"[{{"id":"{pid}","names":["web"]}}]"#),
        )
        .expect("write");
        let droots = vec![d.path().join("docker")];
        let proots = vec![d.path().join("podman")];
        let mut r = NameResolver::new(&droots, &proots);
        let ident = |runtime, id: &str| Identity {
            runtime,
            id: id.into(),
            pod: None,
        };
        assert_eq!(
            r.name(&ident(Runtime::Docker, &id)).as_deref(),
            Some("redis-critical")
        );
        assert_eq!(
            r.name(&ident(Runtime::Podman, &pid)).as_deref(),
            Some("web")
        );
        assert_eq!(r.name(&ident(Runtime::Docker, &"b2".repeat(32))), None);
        // An id that is not 64 hex is never turned into a path.
        assert_eq!(r.name(&ident(Runtime::Docker, "../../etc")), None);
    }
}
