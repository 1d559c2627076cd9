//! Setup shared by the daemon's end-to-end test binaries: one test at a time
//! per binary (they share machine-wide swap), a scratch cgroup selected as
//! `extend` with a toucher in it, and a sandbox holding the daemon's config and
//! an optional swap file. Each binary uses a subset.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use memext_cgroup::{AnyCgroup, MemoryCgroup};
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, is_root, ScratchCgroup};

static MACHINE: Mutex<()> = Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    assert!(is_root(), "the end-to-end suite needs root");
    MACHINE.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn helper() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_memext-e2e"))
}

pub fn mapped(t: &Toucher) -> (u64, u64) {
    t.mapped().expect("pagemap")
}

pub fn wait_for(what: &str, secs: u64, f: impl FnMut() -> bool) {
    memext_e2e::sandbox::wait_for(what, secs, f).expect("condition");
}

pub fn config(cg: &ScratchCgroup, extra: &str) -> String {
    config_with(cg, "", extra)
}

/// `config` with more `[daemon]` keys (`daemon`: TOML lines).
pub fn config_with(cg: &ScratchCgroup, daemon: &str, extra: &str) -> String {
    format!(
        "[[select]]\ncgroup = \"{}/*\"\nclass = \"extend\"\n\n[class.extend]\nidle_after = \"2s\"\nfloor = \"16MiB\"\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n{daemon}\n{extra}",
        cg.parent
    )
}

/// What each daemon test starts from: a scratch cgroup selected as `extend`,
/// a sandbox with the daemon config (and a swap file of `swap`, if given,
/// already up), and a toucher holding `mib` MiB in the cgroup.
pub struct Setup {
    pub cg: ScratchCgroup,
    pub sb: TierSandbox,
    pub t: Toucher,
    pub c: AnyCgroup,
}

pub fn setup(label: &str, mib: usize, swap: Option<&str>) -> Setup {
    setup_with(label, mib, swap, "")
}

/// `setup` with more `[daemon]` keys (`daemon`: TOML lines).
pub fn setup_with(label: &str, mib: usize, swap: Option<&str>, daemon: &str) -> Setup {
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, label).expect("cgroup");
    let tiers = swap.map_or(String::new(), |size| {
        format!("[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"{size}\"\npriority = 10\n")
    });
    let sb = TierSandbox::new(label, &config_with(&cg, daemon, &tiers));
    if swap.is_some() {
        sb.up();
    }
    let mut t = Toucher::spawn(helper(), mib << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let c = cg.open().expect("open");
    Setup { cg, sb, t, c }
}

/// A cgroup made beside a scratch one (under its parent), removed on drop:
/// declare it after the `ScratchCgroup`, so that it goes first.
pub struct Sibling {
    pub h: memext_cgroup::Hierarchy,
    pub path: memext_cgroup::CgroupPath,
}

impl Sibling {
    pub fn new(cg: &ScratchCgroup, name: &str) -> Self {
        let s = Self {
            h: cg.hierarchy.clone(),
            path: cg.parent.child(name).expect("path"),
        };
        s.h.create(&s.path).expect("sibling cgroup");
        s
    }
}

impl Drop for Sibling {
    fn drop(&mut self) {
        memext_e2e::remove_cgroups(&self.h, std::slice::from_ref(&self.path));
    }
}

/// The CPU time cgroup `cg` used while `f` ran.
pub fn cpu_of(cg: &impl MemoryCgroup, f: impl FnOnce()) -> std::time::Duration {
    let used = || {
        cg.cpu_usage()
            .expect("cpuacct")
            .expect("a cpuacct hierarchy")
    };
    let before = used();
    f();
    used().saturating_sub(before)
}

/// A sandbox whose policy selects `cg` critical and `noise` extend, with
/// the class tables `classes` (TOML), ticking every 200 ms.
pub fn critical_and_noise(
    name: &str,
    cg: &ScratchCgroup,
    noise: &Sibling,
    classes: &str,
) -> TierSandbox {
    critical_and_noise_with(name, cg, noise, classes, "")
}

/// `critical_and_noise` with more `[daemon]` keys (`daemon`: TOML lines).
pub fn critical_and_noise_with(
    name: &str,
    cg: &ScratchCgroup,
    noise: &Sibling,
    classes: &str,
    daemon: &str,
) -> TierSandbox {
    let toml = format!(
        "[[select]]\ncgroup = \"{}\"\nclass = \"critical\"\n\n[[select]]\ncgroup = \"{}\"\nclass = \"extend\"\n\n\
         {classes}\n\n[daemon]\ncapacity = \"4GiB\"\ntick = \"200ms\"\nsocket = \"@DIR@/memext.sock\"\n{daemon}\n",
        cg.path, noise.path
    );
    TierSandbox::new(name, &toml)
}

/// A toucher holding `mib` MiB (allocated) in cgroup `path` of `h`.
pub fn toucher_in(
    h: &memext_cgroup::Hierarchy,
    path: &memext_cgroup::CgroupPath,
    mib: usize,
) -> Toucher {
    let mut t = Toucher::spawn(helper(), mib << 20).expect("toucher");
    h.attach(path, t.pid()).expect("attach");
    t.alloc().expect("alloc");
    t
}

/// A process in the critical context burning CPU until dropped.
pub struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    pub fn start(cg: &ScratchCgroup) -> Self {
        let mut t = toucher_in(&cg.hierarchy, &cg.path, 4);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                t.spin(200).expect("spin");
            }
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
