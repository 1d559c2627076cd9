//! The pmem broker's protocol on any line: a request it accepts names a valid
//! region and formats back to itself; a reply parses after formatting.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scm::protocol::{valid_name, OpenRequest, Reply};

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(r) = OpenRequest::parse(line) {
        assert!(valid_name(&r.name), "{:?}", r.name);
        assert!(!r.name.contains('/') && !r.name.starts_with('.'));
        assert_eq!(OpenRequest::parse(&r.to_line()), Ok(r.clone()));
    }
    if let Ok(reply) = Reply::parse(line) {
        if let Reply::Err { .. } = reply {
            assert!(Reply::parse(&reply.to_line()).is_ok());
        }
    }
    let err = Reply::Err {
        reason: line.to_owned(),
    };
    let text = err.to_line();
    assert_eq!(text.matches('\n').count(), 1, "one line");
    assert!(Reply::parse(&text).is_ok());
});
