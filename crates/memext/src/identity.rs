//! Recognising what a cgroup is from its path alone: a container of some
//! runtime (with its id), a systemd unit, or a plain cgroup. Pure: the same
//! recognisers serve memory-context discovery and, later, the pmem broker,
//! which maps a caller's /proc/PID/cgroup to a container identity.

use memext_cgroup::CgroupPath;

/// Who made a cgroup.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    Docker,
    Podman,
    Containerd,
    #[serde(rename = "crio")]
    CriO,
    /// A Kubernetes container in a cgroupfs-driver layout (`kubepods/…/pod<uid>/<id>`).
    Kubernetes,
    Systemd,
    Plain,
}

impl Runtime {
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Docker => "docker",
            Runtime::Podman => "podman",
            Runtime::Containerd => "containerd",
            Runtime::CriO => "crio",
            Runtime::Kubernetes => "kubernetes",
            Runtime::Systemd => "systemd",
            Runtime::Plain => "plain",
        }
    }

    /// Containers have a 64-hex id; systemd units and plain cgroups do not.
    pub fn is_container(self) -> bool {
        !matches!(self, Runtime::Systemd | Runtime::Plain)
    }
}

impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a cgroup is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Identity {
    pub runtime: Runtime,
    /// The container id (64 hex), the systemd unit name, or the cgroup path.
    pub id: String,
    /// The Kubernetes pod uid, for containers in a pod.
    pub pod: Option<String>,
}

pub fn is_container_id(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// `prefix<64hex>suffix` → the id.
fn wrapped_id<'a>(name: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    name.strip_prefix(prefix)?
        .strip_suffix(suffix)
        .filter(|id| is_container_id(id))
}

/// The pod uid of a `pod<uid>` (cgroupfs) or `kubepods-<qos>-pod<uid>.slice`
/// (systemd, with `_` for `-`) component.
fn pod_uid(component: &str) -> Option<String> {
    if let Some(uid) = component.strip_prefix("pod") {
        return Some(uid.to_owned());
    }
    let slice = component.strip_suffix(".slice")?;
    let i = slice.rfind("-pod")?;
    Some(slice[i + 4..].replace('_', "-"))
}

fn pod_of(path: &CgroupPath) -> Option<String> {
    let comps: Vec<&str> = path.components().collect();
    if !comps.iter().any(|c| c.starts_with("kubepods")) {
        return None;
    }
    comps.iter().rev().skip(1).find_map(|c| pod_uid(c))
}

/// Recognises `path`. `None` means the cgroup is structure (a slice, a runtime's
/// parent directory, a pod, a conmon helper), not a workload of its own.
pub fn identify(path: &CgroupPath) -> Option<Identity> {
    if path.is_root() {
        return None;
    }
    let name = path.name();
    let container = |runtime, id: &str| {
        Some(Identity {
            runtime,
            id: id.to_owned(),
            pod: pod_of(path),
        })
    };
    if let Some(id) = wrapped_id(name, "docker-", ".scope") {
        return container(Runtime::Docker, id);
    }
    if name.starts_with("libpod-conmon-") || name.starts_with("crio-conmon-") {
        return None;
    }
    if let Some(id) =
        wrapped_id(name, "libpod-", ".scope").or_else(|| wrapped_id(name, "libpod-", ""))
    {
        return container(Runtime::Podman, id);
    }
    if let Some(id) = wrapped_id(name, "cri-containerd-", ".scope") {
        return container(Runtime::Containerd, id);
    }
    if let Some(id) = wrapped_id(name, "crio-", ".scope") {
        return container(Runtime::CriO, id);
    }
    if is_container_id(name) {
        // cgroupfs layouts: /docker/<id>, --cgroup-parent=/x/<id>, kubepods/…/pod<uid>/<id>
        let runtime = if pod_of(path).is_some() {
            Runtime::Kubernetes
        } else {
            Runtime::Docker
        };
        return container(runtime, name);
    }
    if name.ends_with(".slice") {
        return None;
    }
    let comps: Vec<&str> = path.components().collect();
    if comps.first().is_some_and(|c| c.starts_with("kubepods"))
        && (comps.len() <= 2 || pod_uid(name).is_some())
    {
        return None; // kubepods, kubepods/burstable, kubepods/burstable/pod<uid>
    }
    if name.ends_with(".service") || name.ends_with(".scope") {
        return Some(Identity {
            runtime: Runtime::Systemd,
            id: name.to_owned(),
            pod: None,
        });
    }
    Some(Identity {
        runtime: Runtime::Plain,
        id: path.as_str().to_owned(),
        pod: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(p: &str) -> Option<Identity> {
        identify(&CgroupPath::parse(p).expect("valid path"))
    }
    const H: &str = "3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a";

    #[test]
    fn docker_layouts() {
        for p in [
            format!("/docker/{H}"),
            format!("/memext-demo/{H}"),
            format!("/system.slice/docker-{H}.scope"),
        ] {
            let i = id(&p).unwrap_or_else(|| panic!("{p} not recognised"));
            assert_eq!(
                (i.runtime, i.id.as_str(), i.pod),
                (Runtime::Docker, H, None),
                "{p}"
            );
        }
    }

    #[test]
    fn podman_layouts_and_conmon() {
        assert_eq!(
            id(&format!("/machine.slice/libpod-{H}.scope")).map(|i| i.runtime),
            Some(Runtime::Podman)
        );
        assert_eq!(
            id(&format!("/libpod_parent/libpod-{H}")).map(|i| i.runtime),
            Some(Runtime::Podman)
        );
        assert_eq!(id(&format!("/machine.slice/libpod-conmon-{H}.scope")), None);
    }

    #[test]
    fn kubernetes_layouts() {
        let uid = "5f0c9f7e-3b1d-4c55-9d5e-0123456789ab";
        let cgroupfs =
            id(&format!("/kubepods/burstable/pod{uid}/{H}")).expect("cgroupfs pod container");
        assert_eq!(cgroupfs.runtime, Runtime::Kubernetes);
        assert_eq!(cgroupfs.pod.as_deref(), Some(uid));
        let sd = format!(
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice",
            uid.replace('-', "_")
        );
        let containerd = id(&format!("{sd}/cri-containerd-{H}.scope")).expect("containerd");
        assert_eq!(containerd.runtime, Runtime::Containerd);
        assert_eq!(containerd.pod.as_deref(), Some(uid));
        assert_eq!(
            id(&format!("{sd}/crio-{H}.scope")).map(|i| i.runtime),
            Some(Runtime::CriO)
        );
        assert_eq!(id(&format!("{sd}/crio-conmon-{H}.scope")), None);
        assert_eq!(id(&sd), None);
        assert_eq!(id(&format!("/kubepods/burstable/pod{uid}")), None);
        assert_eq!(id("/kubepods/burstable"), None);
    }

    #[test]
    fn systemd_and_plain() {
        let s = id("/system.slice/redis-server.service").expect("service");
        assert_eq!(
            (s.runtime, s.id.as_str()),
            (Runtime::Systemd, "redis-server.service")
        );
        assert_eq!(
            id("/user.slice/user-1000.slice/session-2.scope").map(|i| i.runtime),
            Some(Runtime::Systemd)
        );
        assert_eq!(id("/system.slice"), None);
        let p = id("/batch/job1").expect("plain");
        assert_eq!((p.runtime, p.id.as_str()), (Runtime::Plain, "/batch/job1"));
    }

    #[test]
    fn near_misses_are_not_containers() {
        // 63 hex, uppercase hex, a non-hex char: not container ids.
        assert_eq!(
            id(&format!("/docker/{}", &H[1..])).map(|i| i.runtime),
            Some(Runtime::Plain)
        );
        assert_eq!(
            id(&format!("/docker/{}", H.to_uppercase())).map(|i| i.runtime),
            Some(Runtime::Plain)
        );
        assert_eq!(
            id(&format!("/system.slice/docker-{}x.scope", &H[1..])).map(|i| i.runtime),
            Some(Runtime::Systemd)
        );
    }
}
