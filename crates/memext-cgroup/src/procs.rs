//! The processes of a cgroup subtree, read from its `cgroup.procs` files.
//! A leaf module: v1 and v2 use it; it uses neither (nor the hierarchy).

use std::path::Path;

use crate::parse::parse_procs;
use crate::{CgroupError, CgroupPath};

/// Pids in the cgroup at `dir` and all cgroups below it.
pub(crate) fn procs_below(dir: &Path, path: &CgroupPath) -> Result<Vec<u32>, CgroupError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(d) = stack.pop() {
        crate::count_read();
        match std::fs::read_to_string(d.join("cgroup.procs")) {
            Ok(text) => out.extend(parse_procs(&text).map_err(|source| CgroupError::Parse {
                path: path.clone(),
                file: "cgroup.procs".into(),
                source,
            })?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if first {
                    return Err(CgroupError::Vanished { path: path.clone() });
                }
                continue;
            }
            Err(source) => {
                return Err(CgroupError::Read {
                    path: path.clone(),
                    file: "cgroup.procs".into(),
                    source,
                })
            }
        }
        first = false;
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                    stack.push(e.path());
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
