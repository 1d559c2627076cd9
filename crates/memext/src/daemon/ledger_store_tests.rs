//! The ledger's snapshot and journal: what a reload finds after appends,
//! compactions, a crash between a compaction's two steps, and a torn line.

use memext_cgroup::Limit;

use super::*;

fn record(cgroup: &str, knob: LimitKnob, written: u64) -> KnobRecord {
    KnobRecord {
        cgroup: cgroup.into(),
        knob,
        original: Limit::Max,
        written: Limit::Bytes(written),
        refused: None,
        lowering_to: None,
    }
}

fn set(cgroup: &str, knob: LimitKnob, written: u64) -> Entry {
    Entry::Set(record(cgroup, knob, written))
}

fn drop_limit(cgroup: &str) -> Entry {
    Entry::Drop {
        cgroup: cgroup.into(),
        knob: LimitKnob::V1Limit,
    }
}

/// Applies `e` to `records` and appends it, as the ledger does.
fn change(store: &mut LedgerStore, records: &mut Vec<KnobRecord>, e: Entry) {
    e.apply(records);
    store.append(e, records).expect("append");
}

fn reload(path: &Path) -> Vec<KnobRecord> {
    LedgerStore::load(path).expect("load").1
}

#[test]
fn changes_survive_a_reload_through_the_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state/daemon.json");
    let (mut store, mut records) = LedgerStore::load(&path).expect("nothing there yet");
    assert!(records.is_empty());
    change(&mut store, &mut records, set("/a", LimitKnob::V1Limit, 1));
    change(&mut store, &mut records, set("/b", LimitKnob::V1Limit, 2));
    change(
        &mut store,
        &mut records,
        set("/a", LimitKnob::V1CpuShares, 3),
    );
    // A rewritten record keeps its place (records unwind newest first).
    change(&mut store, &mut records, set("/a", LimitKnob::V1Limit, 4));
    change(&mut store, &mut records, drop_limit("/b"));
    assert!(!path.exists(), "no snapshot written for five changes");
    assert_eq!(reload(&path), records);
    assert_eq!(
        records,
        vec![
            record("/a", LimitKnob::V1Limit, 4),
            record("/a", LimitKnob::V1CpuShares, 3)
        ]
    );
    change(&mut store, &mut records, Entry::DropCgroup("/a".into()));
    assert!(reload(&path).is_empty());
}

#[test]
fn a_long_journal_is_folded_into_the_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("daemon.json");
    let (mut store, mut records) = LedgerStore::load(&path).expect("load");
    for i in 0..200u64 {
        let e = Entry::Set(record(&format!("/c{}", i % 10), LimitKnob::V1Limit, i));
        change(&mut store, &mut records, e);
    }
    assert!(path.exists(), "compacted");
    let journal = std::fs::read_to_string(path.with_extension("journal")).unwrap_or_default();
    assert!(journal.lines().count() < COMPACT_AFTER, "{journal}");
    assert_eq!(reload(&path), records);
    assert_eq!(records.len(), 10);
}

/// A crash after a compaction's snapshot, before the journal was emptied:
/// the old generation's lines are in the snapshot already and are skipped
/// (every entry is also idempotent, so replaying them would do no harm; the
/// generation keeps that from being something a new entry must preserve).
#[test]
fn a_crash_inside_a_compaction_does_not_apply_old_lines_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("daemon.json");
    let (mut store, mut records) = LedgerStore::load(&path).expect("load");
    change(&mut store, &mut records, set("/a", LimitKnob::V1Limit, 1));
    change(&mut store, &mut records, set("/b", LimitKnob::V1Limit, 2));
    let journal = std::fs::read_to_string(path.with_extension("journal")).expect("journal");
    // Compacted; /a dropped after it (a line of the new generation)...
    store.compact(&records).expect("compact");
    change(&mut store, &mut records, drop_limit("/a"));
    // ... and the old generation's lines back in front, as a crash would
    // have left them had the journal not been emptied.
    let now = std::fs::read_to_string(path.with_extension("journal")).expect("journal");
    std::fs::write(path.with_extension("journal"), journal + &now).expect("write");
    assert_eq!(reload(&path), vec![record("/b", LimitKnob::V1Limit, 2)]);
}

#[test]
fn a_torn_last_line_is_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("daemon.json");
    let (mut store, mut records) = LedgerStore::load(&path).expect("load");
    change(&mut store, &mut records, set("/a", LimitKnob::V1Limit, 1));
    let journal = path.with_extension("journal");
    let mut text = std::fs::read_to_string(&journal).expect("journal");
    text.push_str(r#"{"g":0,"e":{"set":{"cgroup":"/b","kn"#);
    std::fs::write(&journal, text).expect("write");
    assert_eq!(reload(&path), records);
}

#[test]
fn remove_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("daemon.json");
    let (mut store, mut records) = LedgerStore::load(&path).expect("load");
    change(&mut store, &mut records, set("/a", LimitKnob::V1Limit, 1));
    store.compact(&records).expect("compact");
    change(&mut store, &mut records, Entry::DropCgroup("/a".into()));
    store.remove().expect("remove");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
}
