//! Pure parsers for the text formats of cgroup control files, shared by v1
//! and v2. No I/O here.

use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("line {line}: expected `key value`, found {text:?}")]
    KeyValue { line: usize, text: String },
    #[error("expected a number or `max`, found {text:?}")]
    Limit { text: String },
    #[error("expected a number, found {text:?}")]
    Number { text: String },
    #[error("line {line}: malformed pressure line {text:?}")]
    Pressure { line: usize, text: String },
    #[error("line {line}: malformed pid {text:?}")]
    Pid { line: usize, text: String },
    #[error("expected THAWED, FREEZING or FROZEN, found {text:?}")]
    Freezer { text: String },
}

/// A memory limit: a number of bytes, or no limit at all. Never -1.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Limit {
    Bytes(u64),
    Max,
}

impl Limit {
    /// The limit as a byte count, `None` for `Max`.
    pub fn bytes(self) -> Option<u64> {
        match self {
            Limit::Bytes(b) => Some(b),
            Limit::Max => None,
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Bytes(b) => write!(f, "{b}"),
            Limit::Max => f.write_str("max"),
        }
    }
}

/// cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages in bytes
/// (0x7FFFFFFFFFFFF000 on 4 KiB pages); anything this large is unlimited.
const V1_UNLIMITED_FLOOR: u64 = 1 << 62;

/// Parses a v2 limit file (`max` or a byte count).
pub fn parse_limit_v2(text: &str) -> Result<Limit, ParseError> {
    match text.trim() {
        "max" => Ok(Limit::Max),
        t => t
            .parse()
            .map(Limit::Bytes)
            .map_err(|_| ParseError::Limit { text: t.to_owned() }),
    }
}

/// Parses a v1 limit file (a byte count, where huge means unlimited).
pub fn parse_limit_v1(text: &str) -> Result<Limit, ParseError> {
    let n = parse_u64(text)?;
    Ok(if n >= V1_UNLIMITED_FLOOR {
        Limit::Max
    } else {
        Limit::Bytes(n)
    })
}

/// v1 `cpu.cfs_quota_us`: microseconds per period, -1 for no quota.
pub fn parse_cfs_quota_v1(text: &str) -> Result<Limit, ParseError> {
    match text.trim() {
        "-1" => Ok(Limit::Max),
        t => parse_u64(t).map(Limit::Bytes),
    }
}

/// v2 `cpu.max` (`$MAX $PERIOD`): its quota, `max` for none.
pub fn parse_cpu_max(text: &str) -> Result<Limit, ParseError> {
    let quota = text.split_whitespace().next().unwrap_or("");
    parse_limit_v2(quota)
}

/// v1 `freezer.state` as the freezer knob's value: 1 for FROZEN and for
/// FREEZING (on its way there), 0 for THAWED.
pub fn parse_freezer_state(text: &str) -> Result<Limit, ParseError> {
    match text.trim() {
        "THAWED" => Ok(Limit::Bytes(0)),
        "FREEZING" | "FROZEN" => Ok(Limit::Bytes(1)),
        t => Err(ParseError::Freezer { text: t.to_owned() }),
    }
}

pub fn parse_u64(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    t.parse()
        .map_err(|_| ParseError::Number { text: t.to_owned() })
}

/// Parses flat-keyed files (`memory.stat`, `cpu.stat`): one `key value` per line.
pub fn parse_flat_keyed(text: &str) -> Result<HashMap<String, u64>, ParseError> {
    let mut map = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || ParseError::KeyValue {
            line: i + 1,
            text: line.to_owned(),
        };
        let (k, v) = line.split_once(' ').ok_or_else(bad)?;
        map.insert(k.to_owned(), v.trim().parse().map_err(|_| bad())?);
    }
    Ok(map)
}

/// Parses `cgroup.procs`: one pid per line.
pub fn parse_procs(text: &str) -> Result<Vec<u32>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            l.trim().parse().map_err(|_| ParseError::Pid {
                line: i + 1,
                text: l.to_owned(),
            })
        })
        .collect()
}

/// One line of a PSI file: share of wall time stalled, in percent, over the
/// last 10/60/300 s, and the total stall time in microseconds.
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PressureLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// A `*.pressure` file: `some` (at least one task stalled) and `full` (all stalled).
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Pressure {
    pub some: PressureLine,
    pub full: Option<PressureLine>,
}

pub fn parse_pressure(text: &str) -> Result<Pressure, ParseError> {
    let mut p = Pressure::default();
    let mut saw_some = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || ParseError::Pressure {
            line: i + 1,
            text: line.to_owned(),
        };
        let mut words = line.split_whitespace();
        let kind = words.next().ok_or_else(bad)?;
        let mut pl = PressureLine::default();
        let mut fields = 0;
        for w in words {
            let (k, v) = w.split_once('=').ok_or_else(bad)?;
            match k {
                "avg10" => pl.avg10 = v.parse().map_err(|_| bad())?,
                "avg60" => pl.avg60 = v.parse().map_err(|_| bad())?,
                "avg300" => pl.avg300 = v.parse().map_err(|_| bad())?,
                "total" => pl.total_us = v.parse().map_err(|_| bad())?,
                _ => continue,
            }
            fields += 1;
        }
        if fields != 4 {
            return Err(bad());
        }
        match kind {
            "some" => {
                p.some = pl;
                saw_some = true;
            }
            "full" => p.full = Some(pl),
            _ => return Err(bad()),
        }
    }
    if !saw_some {
        return Err(ParseError::Pressure {
            line: 1,
            text: text.to_owned(),
        });
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_v2() {
        assert_eq!(parse_limit_v2("max\n"), Ok(Limit::Max));
        assert_eq!(parse_limit_v2("4294967296\n"), Ok(Limit::Bytes(1 << 32)));
        assert!(parse_limit_v2("-1").is_err());
        assert!(parse_limit_v2("").is_err());
    }

    #[test]
    fn limits_v1_treat_page_counter_max_as_unlimited() {
        assert_eq!(parse_limit_v1("9223372036854771712\n"), Ok(Limit::Max));
        assert_eq!(parse_limit_v1("536870912\n"), Ok(Limit::Bytes(512 << 20)));
        assert!(parse_limit_v1("max").is_err());
    }

    #[test]
    fn cpu_quotas_read_none_as_max() {
        assert_eq!(parse_cfs_quota_v1("-1\n"), Ok(Limit::Max));
        assert_eq!(parse_cfs_quota_v1("30000\n"), Ok(Limit::Bytes(30_000)));
        assert!(parse_cfs_quota_v1("-2").is_err());
        assert_eq!(parse_cpu_max("max 100000\n"), Ok(Limit::Max));
        assert_eq!(parse_cpu_max("30000 100000\n"), Ok(Limit::Bytes(30_000)));
        assert!(parse_cpu_max("").is_err());
    }

    #[test]
    fn freezer_state_is_frozen_while_freezing() {
        assert_eq!(parse_freezer_state("THAWED\n"), Ok(Limit::Bytes(0)));
        assert_eq!(parse_freezer_state("FREEZING\n"), Ok(Limit::Bytes(1)));
        assert_eq!(parse_freezer_state("FROZEN\n"), Ok(Limit::Bytes(1)));
        assert!(parse_freezer_state("frozen").is_err());
    }

    #[test]
    fn flat_keyed() {
        let m = parse_flat_keyed("anon 4096\nfile 8192\n\npgmajfault 3\n").expect("valid");
        assert_eq!(m["anon"], 4096);
        assert_eq!(m["pgmajfault"], 3);
        assert!(matches!(
            parse_flat_keyed("anon 1\nbroken\n"),
            Err(ParseError::KeyValue { line: 2, .. })
        ));
    }

    #[test]
    fn procs() {
        assert_eq!(parse_procs("12\n345\n").expect("valid"), vec![12, 345]);
        assert_eq!(parse_procs("").expect("empty is valid"), Vec::<u32>::new());
        assert!(parse_procs("12\nx\n").is_err());
    }

    #[test]
    fn pressure_with_and_without_full() {
        let t = "some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\n\
                 full avg10=0.50 avg60=0.10 avg300=0.00 total=6543\n";
        let p = parse_pressure(t).expect("valid");
        assert_eq!(p.some.avg10, 1.5);
        assert_eq!(p.some.total_us, 123456);
        assert_eq!(p.full.expect("full line").total_us, 6543);
        let cpu =
            parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").expect("valid");
        assert!(cpu.full.is_none());
        assert!(parse_pressure("some avg10=0.00 total=0\n").is_err());
        assert!(parse_pressure("").is_err());
    }
}
