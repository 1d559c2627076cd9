//! A cpu cgroup (v1) for some of this process's threads, at the top of the
//! cpu hierarchy beside the containers' cgroups.
//!
//! A thread's nice value weighs only against the other threads of its own
//! group: the process's cpu cgroup, or, where that is the root, the
//! autogroup of its session (a systemd service, a shell's `setsid`). That
//! group competes with each container's cgroup at the group's weight, 1024,
//! however low its threads' nice values: a daemon's nice-19 thread alone in
//! its group shares a CPU with a container's task about as a nice-0 one
//! would (37-47% of it, `memext-e2e` `move_group_v1`; the kernel hands a
//! group's weight to the CPUs its runnable threads are on).
//! A thread in a group of its own at a low weight, beside the containers,
//! weighs against them what its nice value says.
//!
//! On cgroup v2 a thread can only move within its process's threaded
//! subtree, below the process's own cgroup, where the group's weight is the
//! process's again: not offered there.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ThreadGroupError {
    #[error("no v1 cpu hierarchy under {root} (cpu.shares)")]
    NoCpuHierarchy { root: PathBuf },
    #[error("this process's cpu cgroup is not in /proc/self/cgroup")]
    NoHome,
    #[error("{op} {path} failed")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What a thread group weighs against its siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupWeight {
    /// `cpu.shares` (2 to 262144; a nice-0 task's group has 1024).
    Shares(u64),
    /// `cpu.idle`: the group runs on CPU time no sibling wants (kernels
    /// since 5.15; older ones get the least shares, 2).
    Idle,
}

impl GroupWeight {
    /// The shares that weigh against a nice-0 task's group what a thread at
    /// `nice` (clamped to -20..19) weighs against a nice-0 thread: the
    /// kernel's own weights (1024 at 0, about 1.25 times less a step).
    pub fn of_nice(nice: i32) -> Self {
        const WEIGHTS: [u64; 40] = [
            88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100,
            4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172,
            137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
        ];
        let i = usize::try_from(nice.clamp(-20, 19) + 20).unwrap_or(20);
        Self::Shares(WEIGHTS[i])
    }
}

/// A cpu cgroup `ROOT/NAME` that threads of this process join and leave;
/// removed when dropped (its threads sent home first).
#[derive(Debug)]
pub struct ThreadGroup {
    dir: PathBuf,
    /// The `tasks` file of the cpu cgroup this process was in.
    home: PathBuf,
    weight: GroupWeight,
}

impl ThreadGroup {
    /// Creates (or takes over, left by an earlier run) `name` at the top of
    /// the v1 cpu hierarchy mounted at `cpu_root`, at `weight`; this
    /// process's threads come home to the cpu cgroup it is in now.
    pub fn create(
        cpu_root: &Path,
        name: &str,
        weight: GroupWeight,
    ) -> Result<Self, ThreadGroupError> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|source| {
            ThreadGroupError::Io {
                op: "read",
                path: "/proc/self/cgroup".into(),
                source,
            }
        })?;
        let home = cpu_cgroup_of(&own)
            .and_then(|p| crate::CgroupPath::parse(p).ok())
            .ok_or(ThreadGroupError::NoHome)?;
        Self::create_in(cpu_root, name, weight, &home)
    }

    /// [`ThreadGroup::create`], its threads' home the cpu cgroup `home`.
    pub fn create_in(
        cpu_root: &Path,
        name: &str,
        weight: GroupWeight,
        home: &crate::CgroupPath,
    ) -> Result<Self, ThreadGroupError> {
        if !cpu_root.join("cpu.shares").is_file() {
            return Err(ThreadGroupError::NoCpuHierarchy {
                root: cpu_root.into(),
            });
        }
        let dir = cpu_root.join(name);
        crate::hierarchy::make_dir(&dir).map_err(|source| ThreadGroupError::Io {
            op: "mkdir",
            path: dir.clone(),
            source,
        })?;
        let group = Self {
            home: home.under(cpu_root).join("tasks"),
            dir,
            weight,
        };
        group.set_weight()?;
        Ok(group)
    }

    fn set_weight(&self) -> Result<(), ThreadGroupError> {
        let write = |file: &str, value: &str| {
            let path = self.dir.join(file);
            std::fs::write(&path, value).map_err(|source| ThreadGroupError::Io {
                op: "write",
                path,
                source,
            })
        };
        match self.weight {
            GroupWeight::Shares(s) => {
                if self.dir.join("cpu.idle").is_file() {
                    write("cpu.idle", "0")?;
                }
                write("cpu.shares", &s.to_string())
            }
            GroupWeight::Idle if self.dir.join("cpu.idle").is_file() => write("cpu.idle", "1"),
            GroupWeight::Idle => write("cpu.shares", "2"),
        }
    }

    /// The group's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves thread `tid` of this process into the group.
    pub fn join(&self, tid: i32) -> std::io::Result<()> {
        std::fs::write(self.dir.join("tasks"), tid.to_string())
    }

    /// Moves thread `tid` of this process back to the process's cpu cgroup.
    pub fn leave(&self, tid: i32) -> std::io::Result<()> {
        std::fs::write(&self.home, tid.to_string())
    }

    /// Sends every thread of this process in the group home (threads of
    /// other processes someone put there are not the group's to move).
    pub fn send_home(&self) -> std::io::Result<()> {
        let ours = Path::new("/proc/self/task");
        for tid in self.threads()? {
            if ours.join(tid.to_string()).exists() {
                self.leave(tid)?;
            }
        }
        Ok(())
    }

    /// The threads in the group now.
    pub fn threads(&self) -> std::io::Result<Vec<i32>> {
        Ok(std::fs::read_to_string(self.dir.join("tasks"))?
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect())
    }
}

impl Drop for ThreadGroup {
    fn drop(&mut self) {
        self.send_home().ok();
        std::fs::remove_dir(&self.dir).ok();
    }
}

/// The cpu controller's cgroup in `/proc/PID/cgroup`'s text (v1 lines
/// `ID:CONTROLLERS:PATH`).
pub fn cpu_cgroup_of(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        controllers.split(',').any(|c| c == "cpu").then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_is_found_among_the_hierarchies() {
        let text =
            "12:memory:/a\n3:cpu,cpuacct:/system.slice/memext.service\n2:cpuacct:/x\n0::/u\n";
        assert_eq!(cpu_cgroup_of(text), Some("/system.slice/memext.service"));
        assert_eq!(
            cpu_cgroup_of("3:cpuacct:/x\n0::/\n"),
            None,
            "cpuacct alone is not cpu"
        );
        assert_eq!(cpu_cgroup_of("0::/user.slice\n"), None, "v2 only");
    }

    #[test]
    fn shares_follow_the_kernels_nice_weights() {
        assert_eq!(GroupWeight::of_nice(0), GroupWeight::Shares(1024));
        assert_eq!(GroupWeight::of_nice(19), GroupWeight::Shares(15));
        assert_eq!(GroupWeight::of_nice(5), GroupWeight::Shares(335));
        assert_eq!(GroupWeight::of_nice(-20), GroupWeight::Shares(88761));
        assert_eq!(GroupWeight::of_nice(40), GroupWeight::Shares(15), "clamped");
    }

    #[test]
    fn a_tree_without_cpu_shares_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let e = ThreadGroup::create_in(
            dir.path(),
            "moves",
            GroupWeight::Idle,
            &crate::CgroupPath::root(),
        )
        .expect_err("no cpu.shares at the root");
        assert!(matches!(e, ThreadGroupError::NoCpuHierarchy { .. }), "{e}");
    }

    #[test]
    fn a_group_is_made_at_its_weight_and_taken_over_at_another() {
        // A fake v1 cpu root: the kernel makes the files of a new cgroup;
        // here the test does, which makes rmdir fail (not empty) and shows
        // only that the weight is written.
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("cpu.shares"), "1024").expect("root");
        let root = crate::CgroupPath::root();
        let g = ThreadGroup::create_in(dir.path(), "moves", GroupWeight::of_nice(19), &root)
            .expect("create");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("moves/cpu.shares")).expect("shares"),
            "15"
        );
        std::fs::write(dir.path().join("moves/cpu.idle"), "0").expect("idle file");
        drop(g);
        let g = ThreadGroup::create_in(dir.path(), "moves", GroupWeight::Idle, &root)
            .expect("taken over");
        assert_eq!(
            std::fs::read_to_string(g.dir().join("cpu.idle")).expect("idle"),
            "1"
        );
    }
}
