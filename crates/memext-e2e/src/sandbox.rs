//! Test scaffolding shared by the end-to-end suites: the `memext` binary of
//! this build, a scratch directory with a config whose tiers are taken down
//! and which is removed on drop, and a child process killed on drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

/// The `memext` binary of this workspace build (target/<profile>/memext),
/// found beside the running test executable (target/<profile>/deps/…).
pub fn memext_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join("memext");
    assert!(
        bin.is_file(),
        "{} not built; run `cargo build --workspace` first",
        bin.display()
    );
    bin
}

pub fn memext(args: &[&str]) -> Output {
    Command::new(memext_bin())
        .args(args)
        .output()
        .expect("run memext")
}

pub fn swaps() -> String {
    std::fs::read_to_string("/proc/swaps").expect("/proc/swaps")
}

/// The names of the active swap areas (the first column of /proc/swaps): what
/// a test compares before and after, since the usage of an area that was
/// there before moves on its own.
pub fn swap_areas() -> Vec<String> {
    swaps()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// A scratch directory `/var/tmp/memext-e2e-<pid>-<label>` with a config
/// (`@DIR@` in the TOML is replaced by the directory). On drop: `memext
/// restore` (the knobs of a daemon that was killed), `memext tiers down`, then
/// the directory is removed.
pub struct TierSandbox {
    pub dir: PathBuf,
    pub config: PathBuf,
}

impl TierSandbox {
    pub fn new(label: &str, toml: &str) -> Self {
        let dir = PathBuf::from(format!(
            "/var/tmp/memext-e2e-{}-{label}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("sandbox dir");
        let config = dir.join("memext.toml");
        let text = format!(
            "[host]\nstate_dir = \"{}/state\"\n\n{}",
            dir.display(),
            toml.replace("@DIR@", &dir.to_string_lossy())
        );
        std::fs::write(&config, text).expect("write config");
        Self { dir, config }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(memext_bin());
        c.arg("--config").arg(&self.config).args(args);
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run memext")
    }

    /// Starts `memext daemon` with this config, its log (JSON lines, see
    /// [`crate::events_named`]) in `DIR/LOG`.
    pub fn daemon(&self, log: &str) -> ChildGuard {
        let file = std::fs::File::create(self.dir.join(log)).expect("daemon log");
        ChildGuard(
            self.command(&["--log-format", "json", "daemon"])
                .stdout(std::process::Stdio::null())
                .stderr(file)
                .spawn()
                .expect("start memext daemon"),
        )
    }

    pub fn up(&self) {
        let out = self.run(&["tiers", "up"]);
        assert!(
            out.status.success(),
            "tiers up failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for TierSandbox {
    fn drop(&mut self) {
        // A daemon the test killed (a failed test's guard) left its limits:
        // put them back first, or swapoff could not bring the pages home.
        self.run(&["restore"]);
        let out = self.run(&["tiers", "down"]);
        if !out.status.success() {
            eprintln!(
                "tiers down failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// Polls `f` every 100 ms until it holds; an error after `secs` seconds.
pub fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) -> anyhow::Result<()> {
    let t0 = std::time::Instant::now();
    while !f() {
        if t0.elapsed() > std::time::Duration::from_secs(secs) {
            anyhow::bail!("timed out after {secs} s waiting for {what}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Ok(())
}

/// A child process of the test, killed (by its pid, SIGKILL) and reaped on drop.
pub struct ChildGuard(pub Child);

impl ChildGuard {
    /// Sends SIGTERM and waits up to `secs` for the exit status.
    pub fn terminate(&mut self, secs: u64) -> Option<std::process::ExitStatus> {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.0.id()).ok()?)?;
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).ok()?;
        for _ in 0..secs * 20 {
            if let Ok(Some(st)) = self.0.try_wait() {
                return Some(st);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            self.0.kill().ok();
        }
        self.0.wait().ok();
    }
}

/// A directory `/var/tmp/memext-e2e-<pid>-<label>`, removed on drop (also when the
/// test fails).
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub fn new(label: &str) -> Self {
        let p = PathBuf::from(format!(
            "/var/tmp/memext-e2e-{}-{label}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).expect("scratch dir");
        Self(p)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// The results.json a bench wrote into `dir`: its text (for messages) and
/// its value.
pub fn bench_results(dir: &ScratchDir) -> (String, serde_json::Value) {
    let text = std::fs::read_to_string(dir.0.join("results.json")).expect("results.json");
    let value = serde_json::from_str(&text).expect("results.json is JSON");
    (text, value)
}

/// Panics if top-level cgroup `name` is left at the cgroup root (v2) or in
/// any hierarchy mounted under it (v1: memory, cpu, cpuacct, freezer, the
/// unified one...): a bench's daemon and its clean-up touch several.
pub fn assert_cgroup_gone(name: &str) {
    let left = cgroups_left(Path::new("/sys/fs/cgroup"), name);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Where top-level cgroup `name` still is: under `top` itself and under
/// each directory in it (a hierarchy's mount point).
pub fn cgroups_left(top: &Path, name: &str) -> Vec<PathBuf> {
    let mut roots = vec![top.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(top) {
        roots.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    roots
        .into_iter()
        .map(|r| r.join(name))
        .filter(|p| p.exists())
        .collect()
}

/// How many daemon errors a bench's results.json reports (its
/// `daemon_warnings_and_errors` entries at level ERROR).
pub fn daemon_errors(results: &serde_json::Value) -> usize {
    results["daemon_warnings_and_errors"]
        .as_array()
        .map_or(0, |l| l.iter().filter(|e| e["level"] == "ERROR").count())
}

/// Runs `python3 bench/<name>/run.py ARGS --profile debug --out DIR` (a
/// benchmark's smoke profile, against this build) into a fresh scratch
/// directory, asserts that it succeeded and that it left no swap device behind,
/// and returns the directory with its results.
pub fn run_bench_smoke(name: &str, args: &[&str]) -> ScratchDir {
    let scratch = ScratchDir::new(name);
    let swaps_before = swap_areas();
    let script = crate::docker::repo_root().join(format!("bench/{name}/run.py"));
    let status = Command::new("python3")
        .arg(&script)
        .args(args)
        .args(["--profile", "debug", "--out"])
        .arg(&scratch.0)
        .status()
        .unwrap_or_else(|e| panic!("run python3 {}: {e}", script.display()));
    assert!(status.success(), "bench/{name} {args:?} failed");
    assert_eq!(swap_areas(), swaps_before, "bench/{name}: swap left behind");
    scratch
}

/// Runs `cmd`, panics with its output unless it succeeds; its stdout.
pub fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The v1 `memory.limit_in_bytes` of cgroup `path` (e.g. `/memext-docker/<id>`).
pub fn v1_limit(path: &str) -> u64 {
    let p = std::path::Path::new("/sys/fs/cgroup/memory")
        .join(path.trim_start_matches('/'))
        .join("memory.limit_in_bytes");
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .trim()
        .parse()
        .expect("a limit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_left_in_any_hierarchy_is_found() {
        let top = std::env::temp_dir().join(format!("memext-cgroups-left-{}", std::process::id()));
        for d in [
            "memory",
            "cpuacct/memext-x/inner",
            "freezer/memext-x",
            "unified",
            "memext-x",
        ] {
            std::fs::create_dir_all(top.join(d)).expect("make a fake hierarchy");
        }
        let mut left = cgroups_left(&top, "memext-x");
        left.sort();
        let mut want: Vec<PathBuf> = ["cpuacct/memext-x", "freezer/memext-x", "memext-x"]
            .iter()
            .map(|d| top.join(d))
            .collect();
        want.sort();
        assert_eq!(left, want);
        assert!(cgroups_left(&top, "memext-y").is_empty());
        std::fs::remove_dir_all(&top).expect("remove the fake hierarchies");
    }
}
