//! Before `tiers down` removes a swap area: are there cgroups whose pages in
//! swap their memory limit does not let back into DRAM? `swapoff` charges
//! every page it reads back to its cgroup; one over its limit makes it fail
//! ("Cannot allocate memory") half-way. Reads only.

use memext_cgroup::{CgroupPath, Hierarchy, Limit, LimitKnob, MemoryCgroup, Version};

/// A cgroup that could not take its swapped pages back.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocker {
    pub cgroup: CgroupPath,
    pub usage: u64,
    pub swapped: u64,
    pub limit: u64,
}

/// Pure: a limit that `usage` plus `swapped` does not fit in.
pub fn cannot_take_back(usage: u64, swapped: u64, limit: Limit) -> Option<u64> {
    match limit {
        Limit::Bytes(l) if swapped > 0 && usage.saturating_add(swapped) > l => Some(l),
        _ => None,
    }
}

/// Every cgroup (but those under a top-level name in `leave_alone`) whose
/// swapped pages do not fit under its hard limit.
pub fn blockers(h: &Hierarchy, leave_alone: &[String]) -> anyhow::Result<Vec<Blocker>> {
    let knob = match h.version {
        Version::V1 => LimitKnob::V1Limit,
        Version::V2 => LimitKnob::Max,
    };
    let mut out = Vec::new();
    for path in h.walk()? {
        if path
            .components()
            .next()
            .is_some_and(|top| leave_alone.iter().any(|l| l == top))
        {
            continue;
        }
        // A cgroup that vanishes or cannot be read meanwhile holds nothing of ours.
        let Ok(cg) = h.open(&path) else { continue };
        let (Ok(m), Ok(limit)) = (cg.memory(), cg.read_limit(knob)) else {
            continue;
        };
        if let Some(limit) = cannot_take_back(m.usage_bytes, m.swap_bytes, limit) {
            out.push(Blocker {
                cgroup: path,
                usage: m.usage_bytes,
                swapped: m.swap_bytes,
                limit,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_hard_limit_below_use_plus_swap_blocks() {
        let mib = 1 << 20;
        assert_eq!(
            cannot_take_back(16 * mib, 240 * mib, Limit::Bytes(16 * mib)),
            Some(16 * mib)
        );
        assert_eq!(cannot_take_back(16 * mib, 240 * mib, Limit::Max), None);
        assert_eq!(
            cannot_take_back(16 * mib, 240 * mib, Limit::Bytes(512 * mib)),
            None
        );
        assert_eq!(cannot_take_back(16 * mib, 0, Limit::Bytes(16 * mib)), None);
    }
}
