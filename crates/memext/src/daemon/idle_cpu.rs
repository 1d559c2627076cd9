//! The per-tick CPU check of idle contexts a kernel event guards, read
//! through their parent cgroups: a parent's CPU time counts every
//! descendant's, so when it has not moved since its read at the previous
//! tick, none of its children ran, and none of them is read. A host full of
//! sleeping contexts then costs one read per parent per tick instead of one
//! per context; a parent with any running child (its own CPU moved) has each
//! of its idle children read as before.
//!
//! Exact, not sampled: a child is skipped only if it was checked at the
//! parent's previous read (read after it, or itself covered by it), so a run
//! between a child's own read and the parent's is never missed. Must not:
//! decide anything (it only says what a context's CPU time is), or write.

use std::collections::HashMap;
use std::time::Duration;

use memext_cgroup::{AnyCgroup, CgroupPath, Hierarchy, MemoryCgroup as _};
use memext_engine::ContextId;

#[derive(Default)]
pub struct IdleCpu {
    tick: u64,
    parents: HashMap<CgroupPath, Parent>,
    /// Each checked child's CPU time and the tick it was last checked.
    children: HashMap<ContextId, (Duration, u64)>,
}

struct Parent {
    /// None: the parent cannot be opened.
    cg: Option<AnyCgroup>,
    /// Its CPU time at its last read (None: unreadable), and that read's tick.
    last: Option<Duration>,
    read_tick: u64,
    /// The verdict of this tick's read: nothing below it ran since the read
    /// at this (earlier) tick.
    quiet_since: Option<u64>,
}

impl IdleCpu {
    /// A new tick: parents are read again once each.
    pub fn begin_tick(&mut self) {
        self.tick += 1;
    }

    /// The CPU time of context `id` (cgroup `cg` at `path`): read, or the
    /// value read before when its parent shows that nothing below it ran
    /// since. None when it cannot be read.
    pub fn cpu(
        &mut self,
        hierarchy: &Hierarchy,
        id: &ContextId,
        path: &CgroupPath,
        cg: &AnyCgroup,
    ) -> Option<Duration> {
        let tick = self.tick;
        let quiet_since = path
            .parent()
            .and_then(|p| self.parent_quiet_since(hierarchy, p));
        if let Some((cpu, checked)) = self.children.get_mut(id) {
            if quiet_since == Some(*checked) {
                *checked = tick;
                return Some(*cpu);
            }
        }
        let cpu = cg.cpu_usage().ok().flatten()?;
        self.children.insert(id.clone(), (cpu, tick));
        Some(cpu)
    }

    /// Forgets parents and children not checked at this tick: a chain of
    /// checks that broke has to begin again with a read.
    pub fn end_tick(&mut self) {
        let tick = self.tick;
        self.children.retain(|_, (_, checked)| *checked == tick);
        self.parents.retain(|_, p| p.read_tick == tick);
    }

    /// Reads `parent` once per tick; the tick of its previous read if its
    /// CPU time has not moved since.
    fn parent_quiet_since(&mut self, hierarchy: &Hierarchy, parent: CgroupPath) -> Option<u64> {
        let tick = self.tick;
        let p = self
            .parents
            .entry(parent)
            .or_insert_with_key(|path| Parent {
                cg: hierarchy.open(path).ok(),
                last: None,
                read_tick: 0,
                quiet_since: None,
            });
        if p.read_tick == tick {
            return p.quiet_since;
        }
        let now = p.cg.as_ref().and_then(|cg| cg.cpu_usage().ok().flatten());
        p.quiet_since = match (p.last, now) {
            (Some(before), Some(now)) if before == now => Some(p.read_tick),
            _ => None,
        };
        p.last = now;
        p.read_tick = tick;
        p.quiet_since
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A v2 tree: /srv holding /srv/a and /srv/b, each with a `cpu.stat`.
    struct Tree {
        dir: tempfile::TempDir,
        hierarchy: Hierarchy,
    }

    impl Tree {
        fn new() -> Self {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::write(dir.path().join("cgroup.controllers"), "cpu memory\n").expect("root");
            for d in ["srv", "srv/a", "srv/b"] {
                std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
            }
            let hierarchy = Hierarchy::probe(dir.path()).expect("v2 tree");
            let t = Tree { dir, hierarchy };
            for d in ["srv", "srv/a", "srv/b"] {
                t.set(d, 1000);
            }
            t
        }

        fn set(&self, cgroup: &str, usec: u64) {
            let text = format!("usage_usec {usec}\nuser_usec 0\nsystem_usec 0\n");
            std::fs::write(self.dir.path().join(cgroup).join("cpu.stat"), text).expect("cpu.stat");
        }

        fn child(&self, name: &str) -> (ContextId, CgroupPath, AnyCgroup) {
            let path = CgroupPath::parse(&format!("/srv/{name}")).expect("path");
            let cg = self.hierarchy.open(&path).expect("open");
            (ContextId::from(path.as_str()), path, cg)
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }
    }

    fn check(idle: &mut IdleCpu, t: &Tree, c: &(ContextId, CgroupPath, AnyCgroup)) -> u64 {
        let cpu = idle.cpu(&t.hierarchy, &c.0, &c.1, &c.2).expect("cpu");
        u64::try_from(cpu.as_micros()).expect("small")
    }

    /// While the parent's CPU time stands still no child is read (a child
    /// file changed behind a still parent, which the kernel never shows,
    /// proves it); once the parent moves, the children are read again.
    #[test]
    fn a_still_parent_covers_its_children() {
        let t = Tree::new();
        let (a, b) = (t.child("a"), t.child("b"));
        let mut idle = IdleCpu::default();
        idle.begin_tick();
        assert_eq!(check(&mut idle, &t, &a), 1000);
        assert_eq!(check(&mut idle, &t, &b), 1000);
        idle.end_tick();
        t.set("srv/a", 5000);
        idle.begin_tick();
        assert_eq!(
            check(&mut idle, &t, &a),
            1000,
            "the parent stood still: not read"
        );
        assert_eq!(check(&mut idle, &t, &b), 1000);
        idle.end_tick();
        t.set("srv", 5000);
        idle.begin_tick();
        assert_eq!(check(&mut idle, &t, &a), 5000, "the parent moved: read");
        idle.end_tick();
    }

    /// A child not checked at the parent's previous read (it was left out of
    /// a tick, or is new) is read even though the parent stood still: it may
    /// have run between its own read and the parent's.
    #[test]
    fn a_child_missing_from_the_previous_check_is_read() {
        let t = Tree::new();
        let (a, b) = (t.child("a"), t.child("b"));
        let mut idle = IdleCpu::default();
        idle.begin_tick();
        check(&mut idle, &t, &a);
        check(&mut idle, &t, &b);
        idle.end_tick();
        idle.begin_tick();
        check(&mut idle, &t, &a); // b is not asked for at this tick
        idle.end_tick();
        t.set("srv/b", 7000);
        idle.begin_tick();
        assert_eq!(check(&mut idle, &t, &b), 7000);
        idle.end_tick();
    }

    /// Without a readable parent every child is read at every tick.
    #[test]
    fn an_unreadable_parent_covers_nothing() {
        let t = Tree::new();
        std::fs::remove_file(t.root().join("srv/cpu.stat")).expect("rm");
        let a = t.child("a");
        let mut idle = IdleCpu::default();
        for usec in [1000, 3000] {
            idle.begin_tick();
            assert_eq!(check(&mut idle, &t, &a), usec);
            idle.end_tick();
            t.set("srv/a", 3000);
        }
    }
}
