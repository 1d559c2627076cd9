//! Kubernetes pods on containerd: a container's CRI metadata and its pod's
//! `memext.io/*` annotations, read from the container runtime's own state,
//! never from the API server.
//!
//! containerd's CRI plugin writes an OCI bundle for every task it runs,
//! `STATE/io.containerd.runtime.v2.task/NAMESPACE/ID/config.json`, whose
//! `annotations` hold the CRI's own (`io.kubernetes.cri.*`: sandbox or
//! container, names, namespace) and the pod's annotations that the runtime's
//! `pod_annotations` setting lets through (`pod_annotations = ["memext.io/*"]`
//! in containerd's config: see deploy/kubernetes/README.md). The pod's
//! annotations give its class (`memext.io/class: critical | extend | ignore`)
//! and per-pod parameters (`memext.io/floor`, `memext.io/idle-after`,
//! `memext.io/push-out`, `memext.io/admit-within`), over the policy file's.
//!
//! Annotations are written by whoever creates the pod: a value memext cannot
//! parse is left out (and said in `problems`), never guessed; the operator
//! decides whether annotations count at all (`[runtimes] pod_annotations`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{Class, ClassOverrides};
use crate::identity::is_container_id;

pub const PREFIX: &str = "memext.io/";
const CRI_TYPE: &str = "io.kubernetes.cri.container-type";
const CRI_CONTAINER: &str = "io.kubernetes.cri.container-name";
const CRI_POD: &str = "io.kubernetes.cri.sandbox-name";
const CRI_NAMESPACE: &str = "io.kubernetes.cri.sandbox-namespace";
/// The shortest `memext.io/idle-after` a pod may set.
pub const MIN_IDLE_AFTER: std::time::Duration = std::time::Duration::from_secs(5);
/// The largest bundle config read (a spec is a few KiB).
const MAX_SPEC_BYTES: u64 = 1 << 20;

/// What memext knows of a container in a pod.
#[derive(Debug, Clone, Default)]
pub struct PodContainer {
    pub namespace: String,
    pub pod: String,
    /// None for the pod's sandbox (its pause container).
    pub container: Option<String>,
    /// The class the pod's annotations give.
    pub class: Option<Class>,
    /// The per-pod parameters its annotations give.
    pub(crate) overrides: ClassOverrides,
    /// Annotations left out, and why.
    pub problems: Vec<String>,
}

impl PodContainer {
    /// Its name in memext's tables and selectors (which have no `/`): the
    /// kubelet's own convention, `k8s_CONTAINER_POD_NAMESPACE`, with `POD`
    /// for the sandbox.
    pub fn name(&self) -> String {
        let c = self.container.as_deref().unwrap_or("POD");
        format!("k8s_{c}_{}_{}", self.pod, self.namespace)
    }
}

/// Reads the CRI metadata of a container from its OCI annotations; None
/// when they are not a CRI container's.
pub fn from_annotations(a: &BTreeMap<String, String>) -> Option<PodContainer> {
    let namespace = a.get(CRI_NAMESPACE)?.clone();
    let pod = a.get(CRI_POD)?.clone();
    let container = match a.get(CRI_TYPE).map(String::as_str) {
        Some("sandbox") => None,
        _ => Some(a.get(CRI_CONTAINER)?.clone()),
    };
    let mut p = PodContainer {
        namespace,
        pod,
        container,
        ..PodContainer::default()
    };
    let mut params = toml::Table::new();
    for (key, value) in a.range(PREFIX.to_owned()..) {
        let Some(name) = key.strip_prefix(PREFIX) else {
            break;
        };
        match name {
            "class" => match value.as_str() {
                "critical" => p.class = Some(Class::Critical),
                "extend" => p.class = Some(Class::Extend),
                "ignore" => p.class = Some(Class::Ignore),
                _ => p.problems.push(format!(
                    "{key}: {value:?} is not a class (critical, extend or ignore)"
                )),
            },
            "floor" | "idle-after" | "push-out" | "admit-within" => {
                params.insert(name.replace('-', "_"), toml::Value::String(value.clone()));
            }
            _ => p.problems.push(format!("{key}: not a memext annotation")),
        }
    }
    // Each key checked alone: a bad value leaves out that parameter only.
    let mut good = toml::Table::new();
    for (k, v) in params {
        let mut one = toml::Table::new();
        one.insert(k.clone(), v.clone());
        match one.try_into::<ClassOverrides>() {
            Ok(_) => {
                good.insert(k, v);
            }
            Err(e) => p.problems.push(format!(
                "{PREFIX}{}: {}",
                k.replace('_', "-"),
                e.message().trim()
            )),
        }
    }
    p.overrides = good.try_into().unwrap_or_default();

    // A pod sets its own idle time, but not one that would have memext push
    // it out and read it back between its every two breaths (the daemon's
    // time and the tiers' bandwidth are everyone's).
    if p.overrides.idle_after.is_some_and(|d| d.0 < MIN_IDLE_AFTER) {
        p.overrides.idle_after = None;
        p.problems.push(format!(
            "{PREFIX}idle-after: below the shortest a pod may set, {}",
            humantime::format_duration(MIN_IDLE_AFTER)
        ));
    }
    // Faster wakes are paid for with the critical pods' CPU: the host's
    // policy grants them, not a pod to itself.
    if p.overrides.fast_wakes.take().is_some() {
        p.problems.push(format!(
            "{PREFIX}fast-wakes: set by the host's policy, not by a pod"
        ));
    }
    if p.class == Some(Class::Critical) && p.overrides.push_out.take().is_some() {
        p.problems.push(format!(
            "{PREFIX}push-out: critical pods are never pushed out"
        ));
    }
    Some(p)
}

/// The OCI annotations of containerd task `id` (64 hex), from its bundle
/// under one of `roots` (containerd's state directories), in any namespace.
/// Paths are built only from the configured roots, namespace directories
/// containerd made (plain names, no dots at the start) and the validated id.
pub fn read_annotations(roots: &[PathBuf], id: &str) -> Option<BTreeMap<String, String>> {
    if !is_container_id(id) {
        return None;
    }
    roots.iter().find_map(|root| {
        let tasks = root.join("io.containerd.runtime.v2.task");
        std::fs::read_dir(&tasks)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(plain_name))
            .find_map(|ns| spec_annotations(&ns.path().join(id).join("config.json")))
    })
}

fn plain_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

#[derive(serde::Deserialize)]
struct Spec {
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

fn spec_annotations(path: &Path) -> Option<BTreeMap<String, String>> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_SPEC_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str::<Spec>(&text)
        .ok()
        .map(|s| s.annotations)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cri(kind: &str, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut a: BTreeMap<String, String> = [
            (CRI_TYPE, kind),
            (CRI_CONTAINER, "app"),
            (CRI_POD, "web-0"),
            (CRI_NAMESPACE, "shop"),
            ("io.kubernetes.cri.sandbox-id", "x"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        a.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        a
    }

    #[test]
    fn a_pods_annotations_give_its_class_and_parameters() {
        let p = from_annotations(&cri(
            "container",
            &[
                ("memext.io/class", "extend"),
                ("memext.io/floor", "8MiB"),
                ("memext.io/idle-after", "45s"),
                ("memext.io/push-out", "when-needed"),
                ("other.io/x", "y"),
            ],
        ))
        .expect("a CRI container");
        assert_eq!(p.name(), "k8s_app_web-0_shop");
        assert_eq!(p.class, Some(Class::Extend));
        assert_eq!(p.overrides.floor.map(|b| b.0), Some(8 << 20));
        assert_eq!(
            p.overrides.idle_after.map(|d| d.0),
            Some(std::time::Duration::from_secs(45))
        );
        assert!(p.overrides.push_out.is_some());
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let sandbox = from_annotations(&cri("sandbox", &[])).expect("sandbox");
        assert_eq!(sandbox.name(), "k8s_POD_web-0_shop");
        assert_eq!(sandbox.class, None);
    }

    #[test]
    fn a_bad_annotation_is_left_out_and_said() {
        let p = from_annotations(&cri(
            "container",
            &[
                ("memext.io/class", "vip"),
                ("memext.io/floor", "lots"),
                ("memext.io/idle-after", "10s"),
                ("memext.io/colour", "red"),
            ],
        ))
        .expect("a CRI container");
        assert_eq!(p.class, None);
        let quick = from_annotations(&cri("container", &[("memext.io/idle-after", "100ms")]))
            .expect("a CRI container");
        assert_eq!(quick.overrides.idle_after, None, "below 5 s: left out");
        assert_eq!(quick.problems.len(), 1);
        assert_eq!(p.overrides.floor, None);
        assert!(p.overrides.idle_after.is_some(), "the good one stays");
        assert_eq!(p.problems.len(), 3, "{:?}", p.problems);
        assert!(p.problems.iter().any(|m| m.contains("memext.io/floor")));
        // A critical pod is never pushed out, whatever it asks.
        let c = from_annotations(&cri(
            "container",
            &[
                ("memext.io/class", "critical"),
                ("memext.io/push-out", "when-needed"),
            ],
        ))
        .expect("a CRI container");
        assert_eq!(c.overrides.push_out, None);
        assert_eq!(c.problems.len(), 1);
        // Nor does a pod give itself faster wakes (the critical pods' CPU).
        let f = from_annotations(&cri("container", &[("memext.io/fast-wakes", "true")]))
            .expect("a CRI container");
        assert_eq!(f.overrides.fast_wakes, None);
        assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
        // Not a CRI container (plain containerd, docker): nothing.
        assert!(from_annotations(&BTreeMap::new()).is_none());
    }

    #[test]
    fn annotations_come_from_containerds_bundle_by_validated_id_only() {
        let root = tempfile::tempdir().expect("tmp");
        let id = "ab".repeat(32);
        let dir = root
            .path()
            .join("io.containerd.runtime.v2.task/k8s.io")
            .join(&id);
        std::fs::create_dir_all(&dir).expect("bundle");
        std::fs::write(
            dir.join("config.json"),
            r#"{"ociVersion":"1.0.2","annotations":{"memext.io/class":"critical"}}"#,
        )
        .expect("spec");
        let roots = [root.path().to_path_buf()];
        let a = read_annotations(&roots, &id).expect("found");
        assert_eq!(a["memext.io/class"], "critical");
        assert_eq!(read_annotations(&roots, &"cd".repeat(32)), None);
        assert_eq!(read_annotations(&roots, "../../../etc"), None);
    }
}
