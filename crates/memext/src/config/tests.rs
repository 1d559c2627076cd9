//! The policy file's parser and checks on literal policies.
use super::*;
use std::path::Path;
use std::time::Duration;

use memext_cgroup::CgroupPath;

use crate::identity::{Identity, Runtime};
use crate::units::ByteSize;

const H: &str = "3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a";

/// The policy `text` as read from `memext.toml` (also for `tests_settings`).
pub(super) fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("memext.toml"))
}

/// The line and message of the error `text` must give.
pub(super) fn err_line(text: &str) -> (usize, String) {
    match parse(text) {
        Err(ConfigError::Syntax { line, message, .. })
        | Err(ConfigError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

const FULL: &str = r#"
[host]
state_dir = "/var/lib/memext"

[[select]]
name = "redis*"
class = "critical"

[[select]]
cgroup = "/memext-demo/*"
class = "extend"

[[select]]
runtime = "docker"
class = "extend"

[class.extend]
idle_after = "10s"
floor = "64MiB"

[runtimes]
docker_roots = ["/var/lib/docker", "/srv/docker"]

[tiers.zram]
size = "4G"
algorithm = "lz4"
mem_limit = "1GiB"

[[tiers.swapfile]]
path = "/var/lib/memext/swap0"
size = "16GiB"
priority = 50
"#;

#[test]
fn parses_a_full_policy() {
    let c = parse(FULL).expect("valid");
    assert_eq!(c.selectors.len(), 3);
    assert_eq!(c.extend.idle_after, Duration::from_secs(10));
    assert_eq!(c.extend.floor, ByteSize(64 << 20));
    assert_eq!(
        c.extend.prefetch_bandwidth,
        Config::extend_defaults().prefetch_bandwidth
    );
    assert_eq!(c.critical, Config::critical_defaults());
    assert_eq!(
        c.tiers.zram.as_ref().map(|z| (z.size, z.mem_limit)),
        Some((ByteSize(4 << 30), Some(ByteSize(1 << 30))))
    );
    assert_eq!(c.tiers.swapfile[0].priority, 50);
    assert_eq!(c.runtimes.docker_roots.len(), 2);
}

#[test]
fn first_matching_selector_wins() {
    let c = parse(FULL).expect("valid");
    let docker = Identity {
        runtime: Runtime::Docker,
        id: H.into(),
        pod: None,
    };
    let path = CgroupPath::parse(&format!("/docker/{H}")).expect("path");
    let redis = ContextFacts {
        path: &path,
        identity: &docker,
        name: Some("redis-1"),
    };
    assert_eq!(c.classify(&redis), (Class::Critical, Some(0)));
    let noise = ContextFacts {
        name: Some("noise-3"),
        ..redis
    };
    assert_eq!(c.classify(&noise), (Class::Extend, Some(2)));
    let plain = Identity {
        runtime: Runtime::Plain,
        id: "/memext-demo/busy".into(),
        pod: None,
    };
    let p2 = CgroupPath::parse("/memext-demo/busy").expect("path");
    assert_eq!(
        c.classify(&ContextFacts {
            path: &p2,
            identity: &plain,
            name: None
        }),
        (Class::Extend, Some(1))
    );
    let p3 = CgroupPath::parse("/memext-demo/a/b").expect("path");
    assert_eq!(
        c.classify(&ContextFacts {
            path: &p3,
            identity: &plain,
            name: None
        }),
        (Class::Ignore, None)
    );
}

#[test]
fn id_prefix_matches_containers_only() {
    let c = parse("[[select]]\nid = \"3f2a3f\"\nclass = \"critical\"\n").expect("valid");
    let path = CgroupPath::parse(&format!("/docker/{H}")).expect("path");
    let docker = Identity {
        runtime: Runtime::Docker,
        id: H.into(),
        pod: None,
    };
    assert_eq!(
        c.classify(&ContextFacts {
            path: &path,
            identity: &docker,
            name: None
        })
        .0,
        Class::Critical
    );
}

#[test]
fn unknown_key_names_its_line() {
    let (line, msg) = err_line("[[select]]\ncgroup = \"/a\"\nclas = \"extend\"\n");
    assert_eq!(line, 3, "{msg}");
    assert!(msg.contains("clas"), "{msg}");
    let (line, msg) = err_line("\n\n[class.extend]\nidle = \"3s\"\n");
    assert_eq!(line, 4, "{msg}");
}

#[test]
fn pmem_section_parses_keys_and_refuses_unsafe_paths() {
    let c = Config::parse(
        "[pmem]\nkey = \"label:app\"\ncontainer_quota = \"1G\"\n",
        Path::new("m.toml"),
    )
    .expect("valid");
    assert_eq!(c.pmem.key, RegionKey::Label("app".into()));
    assert_eq!(c.pmem.container_quota.0, 1 << 30);
    assert!(!c.pmem.allow_host, "host callers are refused by default");
    for bad in [
        "[pmem]\nkey = \"label:\"\n",
        "[pmem]\nkey = \"uid\"\n",
        "[pmem]\nroot = \"relative\"\n",
        "[pmem]\nroot = \"/r\"\nsocket = \"/r/s.sock\"\n",
        "[pmem]\ncontainer_quota = \"2G\"\ntotal_quota = \"1G\"\n",
    ] {
        assert!(Config::parse(bad, Path::new("m.toml")).is_err(), "{bad}");
    }
}

#[test]
fn bad_size_names_its_line() {
    let (line, msg) = err_line("[class.extend]\nidle_after = \"5s\"\nfloor = \"12 parsecs\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("not a size"), "{msg}");
}

#[test]
fn selectors_that_can_never_match() {
    for (text, want) in [
        (
            "[[select]]\ncgroup = \"docker/*\"\nclass = \"extend\"\n",
            "start with /",
        ),
        (
            "[[select]]\ncgroup = \"/a/../b\"\nclass = \"extend\"\n",
            "..",
        ),
        (
            "[[select]]\nid = \"XYZ\"\nclass = \"extend\"\n",
            "lowercase hex",
        ),
        (
            "[[select]]\nruntime = \"dokcer\"\nclass = \"extend\"\n",
            "unknown variant",
        ),
        (
            "[[select]]\nname = \"a/b\"\nclass = \"extend\"\n",
            "never match",
        ),
        (
            "[[select]]\nruntime = \"systemd\"\nid = \"ab\"\nclass = \"extend\"\n",
            "no container id",
        ),
        (
            "[[select]]\nruntime = \"plain\"\nname = \"x\"\nclass = \"extend\"\n",
            "no name",
        ),
        ("[[select]]\nclass = \"extend\"\n", "at least one"),
        (
            "[[select]]\ncgroup = \"/a/[\"\nclass = \"extend\"\n",
            "not a valid glob",
        ),
    ] {
        let (line, msg) = err_line(text);
        assert!(msg.contains(want), "{text}: {msg}");
        assert!(line <= 3, "{text}: line {line}");
    }
}

#[test]
fn tier_mistakes() {
    let both = "[tiers.zram]\nsize = \"1G\"\n[tiers.zswap]\ncompressor = \"lz4\"\n";
    assert!(err_line(both).1.contains("twice"));
    let rel = "[[tiers.swapfile]]\npath = \"swap0\"\nsize = \"1G\"\n";
    assert!(err_line(rel).1.contains("absolute"));
    let dup = "[[tiers.swapfile]]\npath = \"/s\"\nsize = \"1G\"\n[[tiers.swapfile]]\npath = \"/s\"\nsize = \"1G\"\n";
    assert!(err_line(dup).1.contains("twice"));
    let prio = "[tiers.zram]\nsize = \"1G\"\npriority = 99999\n";
    assert!(err_line(prio).1.contains("priority"));
    let no_room = "[tiers.zram]\nsize = \"1G\"\nmem_limit = \"0\"\n";
    assert!(err_line(no_room).1.contains("mem_limit"));
    let read_ahead = "[tiers]\npage_cluster = 11\n";
    assert!(err_line(read_ahead).1.contains("page_cluster"));
    assert_eq!(
        parse("[tiers]\npage_cluster = 0\n")
            .expect("valid")
            .tiers
            .page_cluster,
        Some(0)
    );
}

#[test]
fn large_folio_sizes_the_kernel_can_have() {
    for bad in ["48KiB", "8KiB", "2MiB", "0"] {
        let text = format!("[tiers]\nlarge_folios = \"{bad}\"\n");
        assert!(err_line(&text).1.contains("power of two"), "{bad}");
    }
    let with_zswap = "[tiers]\nlarge_folios = \"64KiB\"\n[tiers.zswap]\n";
    assert!(err_line(with_zswap).1.contains("4 KiB pages"));
    for good in ["16KiB", "64KiB", "1MiB"] {
        let text = format!("[tiers]\nlarge_folios = \"{good}\"\n");
        let got = parse(&text).expect("valid").tiers.large_folios;
        assert!(got.is_some_and(|s| s.0.is_power_of_two()), "{good}");
    }
}

#[test]
fn error_message_has_file_and_line() {
    let e = parse("[[select]]\nclass = \"sometimes\"\ncgroup = \"/a\"\n").expect_err("bad class");
    let s = e.to_string();
    assert!(s.starts_with("memext.toml:2:"), "{s}");
}
