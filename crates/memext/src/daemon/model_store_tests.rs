//! The model store on a fake proc directory: what survives a restart, what a
//! reused pid or another boot throws away.

use std::time::Duration;

use memext_engine::context::ClassParams;
use memext_engine::Class;

use super::*;

fn stat(pid: u32, start: u64) -> String {
    // The command name may hold spaces and parentheses.
    format!("{pid} (my (odd) cmd) S 1 {pid} {pid} 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 {start} 1000000 200 18446744073709551615\n")
}

fn fake_proc(boot: &str, procs: &[(u32, u64)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(d.path().join("sys/kernel/random")).expect("mkdir");
    std::fs::write(
        d.path().join("sys/kernel/random/boot_id"),
        format!("{boot}\n"),
    )
    .expect("boot_id");
    for &(pid, start) in procs {
        std::fs::create_dir_all(d.path().join(pid.to_string())).expect("mkdir");
        std::fs::write(
            d.path().join(pid.to_string()).join("stat"),
            stat(pid, start),
        )
        .expect("stat");
    }
    d
}

fn state(id: &str, pids: &[u32]) -> ContextState {
    let params = ClassParams {
        idle_after: Duration::from_secs(2),
        floor: 16 << 20,
        headroom_pct: 0,
        pageout_bandwidth: 1 << 28,
        prefetch_bandwidth: 1 << 29,
        map_back: true,
        map_kept: false,
        cpu_weight: Some(10),
        wake_cpu_weight: 100,
        resident_cpu_weight: None,
        cpu_max_milli: None,
        admit_within: std::time::Duration::ZERO,
        push_out: memext_engine::context::PushOutWhen::Idle,
        fast_wakes: false,
        keep_anon: false,
        wakes_at_once: None,
        cpu_idle: false,
        admit_at_peak: false,
    };
    let mut t = ContextState::new(ContextId::from(id), Class::Extend, params, Duration::ZERO);
    for &pid in pids {
        t.ws.record(Duration::from_secs(5), pid, &[(0, 8 << 20)]);
    }
    t.pids = pids.to_vec();
    t.out = true;
    t
}

#[test]
fn start_time_is_field_22_after_the_command_name() {
    assert_eq!(parse_start_time(&stat(42, 987_654)), Some(987_654));
    assert_eq!(parse_start_time("garbage"), None);
}

#[test]
fn a_saved_model_comes_back_without_the_processes_that_are_gone_or_reused() {
    let state_dir = tempfile::tempdir().expect("tempdir");
    let before = fake_proc("boot-a", &[(100, 5000), (200, 6000), (300, 7000)]);
    let store = ModelStore::new(state_dir.path(), before.path());
    let saved = [state("/a", &[100, 200]), state("/b", &[300])];
    store
        .save(saved.iter(), Duration::from_secs(10))
        .expect("save");
    assert!(
        !state_dir.path().join("model.json.tmp").exists(),
        "written aside, renamed"
    );

    // After the restart: 100 still runs, 200 is another process now (its
    // pid reused), 300 is gone.
    let after = fake_proc("boot-a", &[(100, 5000), (200, 9999)]);
    let loaded = ModelStore::new(state_dir.path(), after.path()).load();
    assert_eq!(loaded.discarded, None);
    assert_eq!(loaded.dropped_processes, 2);
    let a = &loaded.contexts[&ContextId::from("/a")];
    assert_eq!(
        a.ws.pids(),
        vec![100],
        "only the same process keeps its ranges"
    );
    assert_eq!(a.ws.bytes(), 8 << 20);
    assert!(a.out, "what memext pushed out is still out");
    assert!(loaded.contexts[&ContextId::from("/b")].ws.is_empty());
}

#[test]
fn another_boot_another_version_or_no_file_loads_nothing() {
    let state_dir = tempfile::tempdir().expect("tempdir");
    let procs = fake_proc("boot-a", &[(100, 5000)]);
    let store = ModelStore::new(state_dir.path(), procs.path());
    let nothing = store.load();
    assert!(
        nothing.contexts.is_empty() && nothing.discarded.is_none(),
        "no file: a fresh start"
    );
    store
        .save([state("/a", &[100])].iter(), Duration::ZERO)
        .expect("save");
    let rebooted = fake_proc("boot-b", &[(100, 5000)]);
    let l = ModelStore::new(state_dir.path(), rebooted.path()).load();
    assert!(l.contexts.is_empty());
    assert!(l.discarded.is_some_and(|w| w.contains("boot")));
    let path = state_dir.path().join("model.json");
    let text = std::fs::read_to_string(&path).expect("model");
    std::fs::write(&path, text.replacen("\"version\":1", "\"version\":99", 1)).expect("write");
    assert!(store
        .load()
        .discarded
        .is_some_and(|w| w.contains("version 99")));
    std::fs::write(&path, "{not json").expect("write");
    assert!(store.load().contexts.is_empty());
}
