//! `memext check-config`: validate a policy file and say what it selects.

use std::path::PathBuf;

use crate::config::{self, Config};

use super::tiers::describe_tiers;

pub fn run(file: Option<PathBuf>, config_flag: Option<PathBuf>) -> anyhow::Result<()> {
    let path = file
        .or(config_flag)
        .unwrap_or_else(|| PathBuf::from(config::DEFAULT_PATH));
    let c = Config::load(&path)?;
    println!("{}: ok", path.display());
    for (i, s) in c.selectors.iter().enumerate() {
        println!("  select {}: {}", i + 1, s.describe());
    }
    for class in [config::Class::Critical, config::Class::Extend] {
        if let Some(p) = c.params(class) {
            println!(
                "  class {class}: idle_after={} floor={} headroom={}% pageout={}/s prefetch={}/s map_back={} cpu_weight={} wake_cpu_weight={}{}",
                humantime::format_duration(p.idle_after),
                p.floor,
                p.headroom.0,
                p.pageout_bandwidth,
                p.prefetch_bandwidth,
                if p.map_back { "on" } else { "off" },
                p.cpu_weight
                    .map_or_else(|| "as set".to_owned(), |w| w.0.to_string()),
                p.wake_cpu_weight.0,
                engine_extras(p)
            );
        }
    }
    println!("  tiers: {}", describe_tiers(&c.tiers));
    Ok(())
}

/// The class settings that are off unless the policy sets them, as
/// ` key=value` each: only those in force.
fn engine_extras(p: &config::ClassParams) -> String {
    let mut out = String::new();
    if !p.admit_within.is_zero() {
        out += &format!(
            " admit_within={}",
            humantime::format_duration(p.admit_within)
        );
    }
    if p.push_out == config::PushOutWhen::Needed {
        out += " push_out=when-needed";
    }
    if let Some(c) = p.cpu_max {
        out += &format!(" cpu_max={}", f64::from(c.0) / 1000.0);
    }
    if let Some(n) = p.wakes_at_once {
        out += &format!(" wakes_at_once={}", n.0);
    }
    if p.fast_wakes {
        out += " fast_wakes=on";
    }
    if p.map_kept {
        out += " map_kept=on";
    }
    if p.cpu_idle {
        out += " cpu_idle=on";
    }
    if p.admit_at_peak {
        out += " admit_at_peak=on";
    }
    if p.keep_anon {
        out += " keep_anon=on";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_in_force_are_listed_and_those_off_are_not() {
        let extend = Config::extend_defaults();
        assert_eq!(engine_extras(&extend), " admit_within=5s");
        assert_eq!(engine_extras(&Config::critical_defaults()), " keep_anon=on");
        let set = config::ClassParams {
            cpu_max: Some(config::Cpus(300)),
            wakes_at_once: Some(config::WakesAtOnce(1)),
            fast_wakes: true,
            push_out: config::PushOutWhen::Needed,
            cpu_idle: true,
            admit_at_peak: true,
            ..extend
        };
        assert_eq!(
            engine_extras(&set),
            " admit_within=5s push_out=when-needed cpu_max=0.3 wakes_at_once=1 fast_wakes=on cpu_idle=on admit_at_peak=on"
        );
    }
}
