//! The policy file's class and daemon settings: their defaults and checks.
use super::tests::{err_line, parse};
use super::*;
use std::time::Duration;

#[test]
fn cpu_weight_defaults_low_for_extend_and_is_checked() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.cpu_weight, Some(CpuWeight(EXTEND_CPU_WEIGHT)));
    assert_eq!(c.critical.cpu_weight, None);
    let c = parse("[class.critical]\ncpu_weight = 400\n[class.extend]\ncpu_weight = 1\n")
        .expect("weights");
    assert_eq!(c.critical.cpu_weight, Some(CpuWeight(400)));
    assert_eq!(c.extend.engine().cpu_weight, Some(1));
    for bad in ["0", "10001", "-5"] {
        let (line, msg) = err_line(&format!("[class.extend]\ncpu_weight = {bad}\n"));
        assert_eq!(line, 2, "{bad}");
        assert!(
            msg.contains("cpu_weight") || msg.contains("invalid"),
            "{bad}: {msg}"
        );
    }
}

#[test]
fn the_waking_weight_defaults_to_the_kernels_and_is_checked() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.engine().wake_cpu_weight, 100);
    let c = parse("[class.extend]\nwake_cpu_weight = 20\n").expect("weight");
    assert_eq!(c.extend.engine().wake_cpu_weight, 20);
    let (line, msg) = err_line("[class.extend]\nwake_cpu_weight = 0\n");
    assert_eq!(line, 2);
    assert!(msg.contains("out of range"), "{msg}");
}

#[test]
fn the_resident_weight_is_off_by_default_and_checked() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.engine().resident_cpu_weight, None);
    let c = parse("[class.extend]\nresident_cpu_weight = 1000\n").expect("weight");
    assert_eq!(c.extend.engine().resident_cpu_weight, Some(1000));
    let (line, msg) = err_line("[class.extend]\nresident_cpu_weight = 10001\n");
    assert_eq!(line, 2);
    assert!(msg.contains("out of range"), "{msg}");
}

#[test]
fn the_extend_cpu_budget_is_off_by_default_in_thousandths_and_checked() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.engine().cpu_max_milli, None);
    let c = parse("[class.extend]\ncpu_max = 0.3\n").expect("budget");
    assert_eq!(c.extend.engine().cpu_max_milli, Some(300));
    let c = parse("[class.extend]\ncpu_max = 2\n").expect("an integer is CPUs too");
    assert_eq!(c.extend.engine().cpu_max_milli, Some(2000));
    for bad in ["0", "0.001", "2000", "-1"] {
        let (line, msg) = err_line(&format!("[class.extend]\ncpu_max = {bad}\n"));
        assert_eq!(line, 2, "{bad}");
        assert!(msg.contains("out of range"), "{bad}: {msg}");
    }
    let (_, msg) = err_line("[class.critical]\ncpu_max = 1.0\n");
    assert!(msg.contains("applies to extend"), "{msg}");
}

#[test]
fn wakes_at_once_is_off_by_default_for_extend_only_and_checked() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.engine().wakes_at_once, None);
    let c = parse("[class.extend]\nwakes_at_once = 1\n").expect("one at a time");
    assert_eq!(c.extend.engine().wakes_at_once, Some(1));
    for bad in ["0", "1025", "-1", "1.5"] {
        let (line, msg) = err_line(&format!("[class.extend]\nwakes_at_once = {bad}\n"));
        assert_eq!(line, 2, "{bad}");
        assert!(!msg.is_empty(), "{bad}");
    }
    let (_, msg) = err_line("[class.extend]\nwakes_at_once = 0\n");
    assert!(msg.contains("out of range"), "{msg}");
    let (_, msg) = err_line("[class.critical]\nwakes_at_once = 1\n");
    assert!(msg.contains("applies to extend"), "{msg}");
}

#[test]
fn extend_contexts_are_idle_cpu_groups_only_when_asked_and_critical_ones_never() {
    let c = parse("").expect("empty policy");
    assert!(!c.extend.engine().cpu_idle);
    let c = parse("[class.extend]\ncpu_idle = true\n").expect("idle groups");
    assert!(c.extend.engine().cpu_idle);
    let (line, _) = err_line("[class.extend]\ncpu_idle = 1\n");
    assert_eq!(line, 2, "a number is not a switch");
    let (_, msg) = err_line("[class.critical]\ncpu_idle = true\n");
    assert!(msg.contains("cpu_idle applies to extend"), "{msg}");
}

#[test]
fn admission_at_the_peak_only_when_asked_for_extend_contexts_that_are_admitted() {
    let c = parse("").expect("empty policy");
    assert!(!c.extend.engine().admit_at_peak);
    let c = parse("[class.extend]\nadmit_at_peak = true\n").expect("at the peak");
    assert!(c.extend.engine().admit_at_peak);
    let (_, msg) = err_line("[class.extend]\nadmit_at_peak = true\nadmit_within = \"0s\"\n");
    assert!(msg.contains("needs admit_within"), "{msg}");
    let (_, msg) = err_line("[class.critical]\nadmit_at_peak = true\n");
    assert!(msg.contains("admit_at_peak applies to extend"), "{msg}");
}

#[test]
fn waking_extend_contexts_wait_for_room_by_default_and_critical_ones_never() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.admit_within, EXTEND_ADMIT_WITHIN);
    assert_eq!(c.critical.admit_within, Duration::ZERO);
    let c = parse("[class.extend]\nadmit_within = \"0s\"\n").expect("off");
    assert!(c.extend.engine().admit_within.is_zero());
    let (line, msg) =
        err_line("[class.extend]\nfloor = \"16M\"\n[class.critical]\nadmit_within = \"2s\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("never waits"), "{msg}");
}

#[test]
fn idle_contexts_are_pushed_out_when_idle_unless_the_class_says_when_needed() {
    let c = parse("").expect("empty policy");
    assert_eq!(c.extend.push_out, PushOutWhen::Idle);
    let c = parse("[class.extend]\npush_out = \"when-needed\"\n").expect("when-needed");
    assert_eq!(c.extend.engine().push_out, PushOutWhen::Needed);
    let (line, msg) = err_line("[class.extend]\nfloor = \"16M\"\npush_out = \"sometimes\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("when-needed"), "{msg}");
    let (line, msg) = err_line("[class.critical]\npush_out = \"when-idle\"\n");
    assert_eq!(line, 1);
    assert!(msg.contains("never pushed out"), "{msg}");
}

#[test]
fn fast_wakes_are_off_unless_the_extend_class_asks() {
    let c = parse("").expect("empty policy");
    assert!(!c.extend.fast_wakes && !c.extend.engine().fast_wakes);
    let c = parse("[class.extend]\nfast_wakes = true\n").expect("on");
    assert!(c.extend.engine().fast_wakes);
    let (_, msg) = err_line("[class.extend]\nfast_wakes = \"yes\"\n");
    assert!(msg.contains("bool"), "{msg}");
    let (line, msg) = err_line("[class.critical]\nfast_wakes = true\n");
    assert_eq!(line, 1);
    assert!(msg.contains("extend contexts"), "{msg}");
}

#[test]
fn host_section_leave_alone_has_a_default_and_is_checked() {
    let c = parse("").expect("valid");
    assert_eq!(c.host.leave_alone, vec!["process_api".to_owned()]);
    assert_eq!(c.host.proc_root, PathBuf::from("/proc"));
    let c = parse("[host]\nleave_alone = [\"machine-agent\", \"ops\"]\n").expect("valid");
    assert_eq!(c.host.leave_alone, vec!["machine-agent", "ops"]);
    assert!(err_line("[host]\nleave_alone = [\"a/b\"]\n")
        .1
        .contains("top-level"));
    assert!(err_line("[host]\nproc_root = \"proc\"\n")
        .1
        .contains("absolute"));
}

#[test]
fn daemon_section() {
    let c = parse("[daemon]\ncapacity = \"8GiB\"\npoll = \"10ms\"\n").expect("valid");
    assert_eq!(c.daemon.capacity, Some(ByteSize(8 << 30)));
    assert_eq!(c.daemon.poll.0, Duration::from_millis(10));
    assert_eq!(c.daemon.tick.0, Duration::from_secs(1));
    let both = "[daemon]\ncapacity = \"8GiB\"\ncapacity_cgroup = \"/bench\"\n";
    assert!(err_line(both).1.contains("not both"));
    assert!(err_line("[daemon]\ncapacity_cgroup = \"bench\"\n")
        .1
        .contains("absolute"));
    assert!(err_line("[daemon]\npoll = \"2s\"\ntick = \"1s\"\n")
        .1
        .contains("poll"));
}

#[test]
fn daemon_observer() {
    let c = parse("").expect("valid");
    assert_eq!(c.daemon.observer, ObserverKind::Events);
    assert_eq!(c.daemon.idle_read.0, Duration::from_secs(60));
    let c = parse("[daemon]\nobserver = \"polling\"\n").expect("valid");
    assert_eq!(c.daemon.observer, ObserverKind::Polling);
    assert!(parse("[daemon]\nobserver = \"inotify\"\n").is_err());
    assert!(err_line("[daemon]\nidle_read = \"500ms\"\n")
        .1
        .contains("idle_read"));
}

#[test]
fn the_wake_read_back_nice_defaults_to_0_and_is_checked() {
    assert_eq!(
        parse("").expect("valid").daemon.wake_read_back_nice,
        Nice(0)
    );
    let c = parse("[daemon]\nwake_read_back_nice = 19\n").expect("valid");
    assert_eq!(c.daemon.wake_read_back_nice, Nice(19));
    let (line, msg) = err_line("[daemon]\ntick = \"1s\"\nwake_read_back_nice = 20\n");
    assert_eq!(line, 3);
    assert!(msg.contains("out of range"), "{msg}");
}

#[test]
fn the_move_priority_defaults_to_nice_and_takes_idle() {
    assert_eq!(
        parse("").expect("valid").daemon.move_priority,
        MovePriority::Nice
    );
    let c = parse("[daemon]\nmove_priority = \"idle\"\n").expect("valid");
    assert_eq!(c.daemon.move_priority, MovePriority::Idle);
    let (line, msg) = err_line("[daemon]\ntick = \"1s\"\nmove_priority = \"low\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("unknown variant"), "{msg}");
}

#[test]
fn daemon_reclaim() {
    assert_eq!(
        parse("").expect("valid").daemon.reclaim,
        ReclaimIn::Background
    );
    let c = parse("[daemon]\nreclaim = \"loop\"\n").expect("valid");
    assert_eq!(c.daemon.reclaim, ReclaimIn::Loop);
    let (line, msg) = err_line("[daemon]\ntick = \"1s\"\nreclaim = \"later\"\n");
    assert_eq!(line, 3, "{msg}");
    assert!(parse("").expect("valid").daemon.limit_room);
    assert!(
        !parse("[daemon]\nlimit_room = false\n")
            .expect("valid")
            .daemon
            .limit_room
    );
    assert!(parse("[daemon]\nlimit_room = \"no\"\n").is_err());
    assert_eq!(parse("").expect("valid").daemon.yield_to_wakes, None);
    assert_eq!(
        parse("[daemon]\nyield_to_wakes = true\n")
            .expect("valid")
            .daemon
            .yield_to_wakes,
        Some(true)
    );
    assert_eq!(parse("").expect("valid").daemon.keep_free, None);
    assert_eq!(
        parse("[daemon]\nkeep_free = \"96MiB\"\n")
            .expect("valid")
            .daemon
            .keep_free
            .map(|b| b.0),
        Some(96 << 20)
    );
    assert!(parse("[daemon]\nkeep_free = \"lots\"\n").is_err());
    assert!(!parse("").expect("valid").daemon.touches);
    assert!(
        parse("[daemon]\ntouches = true\n")
            .expect("valid")
            .daemon
            .touches
    );
}

#[test]
fn a_critical_class_keeps_its_anonymous_memory_unless_it_asks_not_to() {
    let c = parse("").expect("defaults");
    assert!(c.critical.keep_anon && c.critical.engine().keep_anon);
    assert!(!c.extend.keep_anon && !c.extend.engine().keep_anon);
    let c = parse("[class.critical]\nkeep_anon = false\n").expect("off");
    assert!(!c.critical.engine().keep_anon);
    let (_, msg) = err_line("[class.extend]\nkeep_anon = true\n");
    assert!(msg.contains("keep_anon applies to critical"), "{msg}");
}

#[test]
fn the_move_group_is_off_by_default_and_turned_on() {
    assert!(!parse("").expect("valid").daemon.move_group);
    assert!(
        parse("[daemon]\nmove_group = true\n")
            .expect("valid")
            .daemon
            .move_group
    );
    assert!(parse("[daemon]\nmove_group = 1\n").is_err());
}

#[test]
fn foretold_calls_is_an_absolute_path_and_unset_by_default() {
    assert_eq!(parse("").expect("valid").daemon.foretold_calls, None);
    let c = parse("[daemon]\nforetold_calls = \"/var/tmp/calls.json\"\n").expect("valid");
    assert_eq!(
        c.daemon.foretold_calls.as_deref(),
        Some(std::path::Path::new("/var/tmp/calls.json"))
    );
    let (_, msg) = err_line("[daemon]\nforetold_calls = \"calls.json\"\n");
    assert!(msg.contains("must be absolute"), "{msg}");
}
