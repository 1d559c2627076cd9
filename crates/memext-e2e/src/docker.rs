//! A private Docker engine for one test run (scripts/docker-engine: dockerd in a
//! network namespace of its own, containers under /memext-docker), the locally
//! built base image, and containers that are removed however the test ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, Context};

/// The repository's root (for scripts/).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the Python unit tests of `dir` (relative to the repository:
/// `bench/peers`); panics with their output when one fails.
pub fn python_unit_tests(dir: &str) {
    let out = std::process::Command::new("python3")
        .args(["-m", "unittest", "discover", "-s"])
        .arg(repo_root().join(dir))
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The engine; stopped (and its containers removed) on drop.
pub struct Engine {
    pub dir: PathBuf,
}

pub const IMAGE: &str = "memext-base:bookworm-2";

fn script(action: &str, dir: &Path) -> anyhow::Result<()> {
    let out = Command::new(repo_root().join("scripts/docker-engine"))
        .args([action])
        .arg(dir)
        .output()
        .context("run scripts/docker-engine")?;
    if !out.status.success() {
        bail!(
            "docker-engine {action}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

impl Engine {
    /// Starts the engine with its state in `dir` and imports the base image
    /// (built once with debootstrap and cached in /var/tmp/memext-image).
    pub fn start(dir: &Path) -> anyhow::Result<Self> {
        script("start", dir)?;
        let engine = Self {
            dir: dir.to_path_buf(),
        };
        script("image", dir)?;
        Ok(engine)
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("docker.sock")
    }

    /// Where this engine keeps container metadata (memext's runtimes.docker_roots).
    pub fn data_root(&self) -> PathBuf {
        self.dir.join("root")
    }

    pub fn docker(&self, args: &[&str]) -> Output {
        Command::new("/usr/bin/docker")
            .arg("-H")
            .arg(format!("unix://{}", self.socket().display()))
            .args(args)
            .output()
            .expect("run docker")
    }

    /// Runs docker and returns its trimmed stdout, or an error with its stderr.
    pub fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = self.docker(args);
        if !out.status.success() {
            bail!(
                "docker {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = script("stop", &self.dir) {
            eprintln!("memext-e2e: {e:#}");
        }
    }
}

/// A container started with `docker run -d`, removed (`docker rm -f`) on drop.
pub struct Container<'e> {
    pub engine: &'e Engine,
    pub name: String,
    pub id: String,
}

impl<'e> Container<'e> {
    /// `docker run -d --name NAME --network none EXTRA... IMAGE sleep infinity`.
    pub fn run(engine: &'e Engine, name: &str, extra: &[&str]) -> anyhow::Result<Self> {
        engine.docker(&["rm", "-f", name]);
        let mut args = vec!["run", "-d", "--name", name, "--network", "none"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[IMAGE, "sleep", "infinity"]);
        let id = engine.ok(&args)?;
        Ok(Self {
            engine,
            name: name.to_owned(),
            id,
        })
    }

    /// `docker exec NAME ARGS...`: (success, stdout).
    pub fn exec(&self, args: &[&str]) -> (bool, String) {
        let mut all = vec!["exec", self.name.as_str()];
        all.extend_from_slice(args);
        let out = self.engine.docker(&all);
        let mut text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() && text.is_empty() {
            text = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        }
        (out.status.success(), text)
    }
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        self.engine.docker(&["rm", "-f", &self.name]);
    }
}
