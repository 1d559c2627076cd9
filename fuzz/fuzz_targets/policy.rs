//! The policy parser on any text: an error that names a line, never a panic;
//! a policy it accepts classifies and resolves without one either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memext::config::{Config, ConfigError};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::parse(text, std::path::Path::new("fuzz.toml")) {
        Ok(cfg) => {
            let _ = (cfg.extend.engine(), cfg.critical.engine());
        }
        Err(ConfigError::Syntax { line, .. } | ConfigError::Invalid { line, .. }) => {
            assert!(line >= 1 && line <= text.lines().count().max(1) + 1, "line {line}");
        }
        Err(_) => {}
    }
});
