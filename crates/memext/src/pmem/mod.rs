//! Persistent memory for containers, the host side: the broker that hands each
//! container the descriptor of its own region files (and nothing else), the
//! store of those files, and export/import of a container's regions.
//! The library containers use is `libscm`.

pub mod archive;
pub mod broker;
pub mod peer;
pub mod store;

use crate::config::RuntimePaths;
use crate::identity::is_container_id;

/// The full id of the Docker container `arg` names: a 64-hex id, a unique id
/// prefix (at least 4 characters), or a container name.
pub fn resolve_container(runtimes: &RuntimePaths, arg: &str) -> anyhow::Result<String> {
    if is_container_id(arg) {
        return Ok(arg.to_owned());
    }
    let names = crate::contexts::NameResolver::new(&runtimes.docker_roots, &runtimes.podman_roots);
    let mut found = Vec::new();
    for root in &runtimes.docker_roots {
        let Ok(entries) = std::fs::read_dir(root.join("containers")) else {
            continue;
        };
        for e in entries.flatten() {
            let id = e.file_name().to_string_lossy().into_owned();
            if !is_container_id(&id) {
                continue;
            }
            let by_prefix = arg.len() >= 4 && id.starts_with(arg);
            if by_prefix || names.docker_name(&id).as_deref() == Some(arg) {
                found.push(id);
            }
        }
    }
    found.sort();
    found.dedup();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => anyhow::bail!(
            "no Docker container is called {arg:?} (looked in {:?})",
            runtimes.docker_roots
        ),
        _ => anyhow::bail!(
            "{arg:?} names {} containers; give more of the id",
            found.len()
        ),
    }
}
