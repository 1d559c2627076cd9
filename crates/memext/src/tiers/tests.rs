//! The tiers' pure planner and parsers, and the state file, on literal inputs.
use super::*;
use std::path::{Path, PathBuf};

use memext_sys::swap::SwapArea;

use crate::config::{SwapFileConfig, TiersConfig, ZramConfig};
use crate::units::ByteSize;

fn area(p: &str) -> SwapArea {
    SwapArea {
        path: p.into(),
        kind: "file".into(),
        size_bytes: 1,
        used_bytes: 0,
        priority: 1,
    }
}

#[test]
fn the_next_area_is_the_highest_priority_one_with_room() {
    let with = |p: &str, prio: i32, used: u64| SwapArea {
        kind: if p.starts_with("/dev/") {
            "partition"
        } else {
            "file"
        }
        .into(),
        priority: prio,
        used_bytes: used,
        size_bytes: 10,
        ..area(p)
    };
    assert!(!next_area_is_zram(&[]));
    assert!(next_area_is_zram(&[
        with("/dev/zram0", 100, 0),
        with("/var/swap0", 10, 0)
    ]));
    assert!(!next_area_is_zram(&[
        with("/dev/zram0", 100, 10),
        with("/var/swap0", 10, 0)
    ]));
    assert!(!next_area_is_zram(&[
        with("/dev/zram0", 5, 0),
        with("/var/swap0", 10, 0)
    ]));
    // A swap file that happens to be called zram-something is a file.
    assert!(!next_area_is_zram(&[with("/srv/zram.img", 1, 0)]));
}

fn cfg() -> TiersConfig {
    TiersConfig {
        zram: Some(ZramConfig {
            size: ByteSize(1 << 30),
            algorithm: "lz4".into(),
            priority: 100,
            mem_limit: None,
        }),
        zswap: None,
        swapfile: vec![SwapFileConfig {
            path: "/var/lib/memext/swap0".into(),
            size: ByteSize(1 << 30),
            priority: 50,
        }],
        page_cluster: None,
        large_folios: None,
    }
}

#[test]
fn plan_from_nothing_makes_everything() {
    let plan = plan_up(&cfg(), &TierState::default(), &[area("/dev/zram0")]);
    assert_eq!(plan.len(), 2);
    assert!(matches!(plan[0], TierAction::MakeZram(_)));
    assert!(matches!(plan[1], TierAction::MakeSwapFile(_)));
}

#[test]
fn swap_read_ahead_is_set_after_the_swap_areas_and_only_when_asked() {
    let asked = TiersConfig {
        page_cluster: Some(0),
        ..cfg()
    };
    let plan = plan_up(&asked, &TierState::default(), &[]);
    assert_eq!(plan.last(), Some(&TierAction::SetPageCluster(0)));
    assert!(!plan_up(&cfg(), &TierState::default(), &[])
        .iter()
        .any(|a| matches!(a, TierAction::SetPageCluster(_))));
}

#[test]
fn large_folios_are_set_last_and_only_when_asked() {
    let asked = TiersConfig {
        large_folios: Some(ByteSize(64 << 10)),
        page_cluster: Some(0),
        ..cfg()
    };
    let plan = plan_up(&asked, &TierState::default(), &[]);
    assert_eq!(plan.last(), Some(&TierAction::SetLargeFolios(64)));
    assert!(!plan_up(&cfg(), &TierState::default(), &[])
        .iter()
        .any(|a| matches!(a, TierAction::SetLargeFolios(_))));
}

#[test]
fn reads_the_selected_choice_and_the_folio_sizes() {
    assert_eq!(
        selected_choice("always inherit madvise [never]\n"),
        Some("never")
    );
    assert_eq!(
        selected_choice("always [inherit] madvise never"),
        Some("inherit")
    );
    assert_eq!(selected_choice("always inherit madvise never"), None);
    assert_eq!(
        large_folio_sizes([
            "hugepages-64kB",
            "enabled",
            "hugepages-2048kB",
            "hugepages-16kB"
        ]),
        vec![16, 64, 2048]
    );
}

#[test]
fn plan_is_idempotent_once_up() {
    let state = TierState {
        zram: Some(ZramMade {
            index: 3,
            priority: 100,
        }),
        zswap: None,
        swapfiles: vec!["/var/lib/memext/swap0".into()],
        page_cluster: None,
        large_folios: None,
    };
    let active = [area("/dev/zram3"), area("/var/lib/memext/swap0")];
    assert!(plan_up(&cfg(), &state, &active).is_empty());
    // Someone else's zram0 does not count as ours.
    let state2 = TierState {
        zram: None,
        ..state
    };
    assert_eq!(
        plan_up(
            &cfg(),
            &state2,
            &[area("/dev/zram0"), area("/var/lib/memext/swap0")]
        )
        .len(),
        1
    );
}

#[test]
fn made_since_is_what_is_new() {
    let before = TierState {
        zram: None,
        zswap: None,
        swapfiles: vec!["/a".into()],
        page_cluster: Some("3".into()),
        large_folios: None,
    };
    let after = TierState {
        zram: Some(ZramMade {
            index: 4,
            priority: 1,
        }),
        zswap: Some(ZswapSaved {
            enabled: "N".into(),
            compressor: "lzo".into(),
            max_pool_percent: "20".into(),
        }),
        swapfiles: vec!["/a".into(), "/b".into()],
        page_cluster: Some("3".into()),
        large_folios: Some(LargeFoliosSaved {
            kib: 64,
            enabled: "never".into(),
        }),
    };
    let new = made_since(&before, &after);
    assert_eq!(new.swapfiles, vec![PathBuf::from("/b")]);
    assert_eq!(new.zram, after.zram);
    assert!(new.zswap.is_some());
    // The read-ahead saved before this run is not this run's to restore.
    assert_eq!(new.page_cluster, None);
    // The large folios this run set are.
    assert_eq!(new.large_folios, after.large_folios);
    let first = TierState {
        page_cluster: None,
        ..before.clone()
    };
    assert_eq!(
        made_since(&first, &after).page_cluster,
        Some("3".to_owned())
    );
    assert_eq!(made_since(&after, &after), TierState::default());
}

#[test]
fn parses_zram_algorithms() {
    assert_eq!(
        parse_algorithms("[lzo-rle] lzo lz4 zstd\n"),
        vec!["lzo-rle", "lzo", "lz4", "zstd"]
    );
}

#[test]
fn finds_compressors_in_proc_crypto() {
    let text = "name         : lz4\ndriver       : lz4-scomp\ntype         : scomp\n\n\
                name         : sha256\ntype         : shash\n\n\
                name         : lzo\ntype         : compression\n";
    assert_eq!(crypto_compressors(text), vec!["lz4", "lzo"]);
}

#[test]
fn refuses_tmpfs_and_overlay() {
    assert_eq!(unsuitable_fs(0x0102_1994), Some("tmpfs"));
    assert_eq!(unsuitable_fs(0x794c_7630), Some("overlayfs"));
    assert_eq!(unsuitable_fs(0xEF53), None); // ext4
}

fn swapfile_cfg(path: &Path, size: u64) -> TiersConfig {
    TiersConfig {
        swapfile: vec![SwapFileConfig {
            path: path.into(),
            size: ByteSize(size),
            priority: 5,
        }],
        ..Default::default()
    }
}

#[test]
fn refuses_a_swap_file_on_tmpfs_before_making_anything() {
    let state = tempfile::tempdir().expect("tempdir");
    let target = Path::new("/dev/shm/memext-unit-never-made/swap");
    let err = up(
        &swapfile_cfg(target, 1 << 20),
        &StateFile::new(state.path()),
        &mut |_| {},
    )
    .expect_err("tmpfs");
    assert!(
        matches!(err, TierError::BadFilesystem { fs: "tmpfs", .. }),
        "{err}"
    );
    assert!(!target.parent().expect("parent").exists());
    assert!(!state.path().join("tiers.json").exists());
}

#[test]
fn refuses_a_swap_file_larger_than_free_space() {
    let state = tempfile::tempdir().expect("tempdir");
    let target = state.path().join("swap");
    let err = up(
        &swapfile_cfg(&target, 1 << 60),
        &StateFile::new(state.path()),
        &mut |_| {},
    )
    .expect_err("too big");
    assert!(matches!(err, TierError::NoSpace { .. }), "{err}");
    assert!(!target.exists());
}

#[test]
fn refuses_to_take_over_an_existing_file() {
    let state = tempfile::tempdir().expect("tempdir");
    let target = state.path().join("precious");
    std::fs::write(&target, "data").expect("write");
    let err = up(
        &swapfile_cfg(&target, 1 << 20),
        &StateFile::new(state.path()),
        &mut |_| {},
    )
    .expect_err("exists");
    assert!(matches!(err, TierError::Exists { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "data");
}

#[test]
fn state_round_trips_atomically() {
    let d = tempfile::tempdir().expect("tempdir");
    let store = StateFile::new(d.path());
    assert_eq!(store.load().expect("empty"), TierState::default());
    let s = TierState {
        zram: Some(ZramMade {
            index: 2,
            priority: 100,
        }),
        zswap: Some(ZswapSaved {
            enabled: "N".into(),
            compressor: "lzo".into(),
            max_pool_percent: "20".into(),
        }),
        swapfiles: vec!["/x".into()],
        page_cluster: Some("3".into()),
        large_folios: Some(LargeFoliosSaved {
            kib: 64,
            enabled: "inherit".into(),
        }),
    };
    store.save(&s).expect("save");
    assert_eq!(store.load().expect("load"), s);
    assert!(!d.path().join("tiers.json.tmp").exists());
    // A state file from before `page_cluster` and `large_folios` were kept
    // loads as none saved.
    std::fs::write(
        d.path().join("tiers.json"),
        r#"{"zram":null,"zswap":null,"swapfiles":["/x"]}"#,
    )
    .expect("old");
    assert_eq!(
        store.load().expect("old state"),
        TierState {
            swapfiles: vec!["/x".into()],
            ..TierState::default()
        }
    );
    std::fs::write(d.path().join("tiers.json"), "{").expect("corrupt");
    assert!(matches!(store.load(), Err(TierError::State { .. })));
}
