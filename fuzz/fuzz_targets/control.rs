//! The daemon's control socket on any request bytes (what a client may send,
//! at most the length the daemon reads): one JSON line back, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memext::daemon::serve::{respond, REQUEST_MAX};

fuzz_target!(|data: &[u8]| {
    let request = &data[..data.len().min(REQUEST_MAX as usize)];
    let out = respond(request, &[]);
    assert_eq!(out.last(), Some(&b'\n'));
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
    let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    assert!(v.is_array() || v.get("error").is_some());
});
