use super::{keep_anon_value, planned_limit, v1_cpu_shares, written_limit, V1_CHARGE_ROOM};
use memext_cgroup::{Limit, LimitKnob, Version};

#[test]
fn v2_weights_map_to_v1_shares_within_the_kernels_range() {
    assert_eq!(v1_cpu_shares(100), 1024); // both defaults
    assert_eq!(v1_cpu_shares(10), 102);
    assert_eq!(v1_cpu_shares(1), 10);
    assert_eq!(v1_cpu_shares(10000), 102_400);
    assert_eq!(v1_cpu_shares(0), 2);
    assert_eq!(v1_cpu_shares(u16::MAX), 262_144);
}

/// v2: a critical context's swap limit goes to 0 where it is the
/// kernel's `max` or memext's own; a LimitedSwap value the kubelet set
/// stays; under a limit of its own the original comes back.
#[test]
fn keep_anon_takes_only_a_swap_limit_nobody_else_set() {
    let (max, zero, kube) = (Limit::Max, Limit::Bytes(0), Limit::Bytes(16 << 20));
    assert_eq!(keep_anon_value(Version::V2, false, max, None), Some(zero));
    assert_eq!(keep_anon_value(Version::V2, false, kube, None), None);
    // memext's own 0 (or its original put back) is memext's to write.
    assert_eq!(
        keep_anon_value(Version::V2, false, max, Some(max)),
        Some(zero)
    );
    assert_eq!(
        keep_anon_value(Version::V2, false, zero, Some(max)),
        Some(zero)
    );
    assert_eq!(
        keep_anon_value(Version::V2, true, zero, Some(max)),
        Some(max)
    );
    assert_eq!(keep_anon_value(Version::V2, true, max, None), None);
}

/// v1: swappiness has no "unset", so any value is taken, but not under
/// a limit of the context's own (there the original comes back).
#[test]
fn keep_anon_on_v1_stands_back_only_for_a_limit_of_its_own() {
    let (sixty, zero) = (Limit::Bytes(60), Limit::Bytes(0));
    assert_eq!(keep_anon_value(Version::V1, false, sixty, None), Some(zero));
    assert_eq!(
        keep_anon_value(Version::V1, true, zero, Some(sixty)),
        Some(sixty)
    );
    assert_eq!(keep_anon_value(Version::V1, true, sixty, None), None);
}

/// A v1 hard limit is written `V1_CHARGE_ROOM` above the limit planned,
/// and read back as planned; v2's `memory.high` as planned.
#[test]
fn a_v1_limit_stands_its_charge_room_above_the_plan() {
    assert_eq!(V1_CHARGE_ROOM, 1 << 20);
    assert_eq!(written_limit(LimitKnob::V1Limit, 4 << 20), 5 << 20);
    assert_eq!(planned_limit(LimitKnob::V1Limit, 5 << 20), 4 << 20);
    assert_eq!(written_limit(LimitKnob::High, 4 << 20), 4 << 20);
    assert_eq!(planned_limit(LimitKnob::High, 4 << 20), 4 << 20);
    assert_eq!(planned_limit(LimitKnob::V1Limit, 0), 0);
}
