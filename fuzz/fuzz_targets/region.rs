//! libscm opening a corrupted region: a region file with objects, a root and
//! a transaction in flight (its undo log written) is taken as the template;
//! each input overwrites bytes of a copy (5-byte records: offset u32 LE, value)
//! and the copy is opened, recovered and used. Every corruption must end in an
//! error or a usable region, never a panic or an access outside the mapping.
#![no_main]

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use scm::Region;

const SIZE: u64 = 128 << 10;

fn memfd(bytes: &[u8]) -> std::fs::File {
    let fd: OwnedFd = rustix::fs::memfd_create("scm-fuzz", rustix::fs::MemfdFlags::CLOEXEC)
        .expect("memfd_create");
    let mut f = std::fs::File::from(fd);
    if bytes.is_empty() {
        f.set_len(SIZE).expect("ftruncate");
    } else {
        f.write_all(bytes).expect("write");
    }
    f
}

/// The file of a region mid-transaction.
fn template() -> &'static [u8] {
    static T: OnceLock<Vec<u8>> = OnceLock::new();
    T.get_or_init(|| {
        let f = memfd(&[]);
        let r = Region::open(f.try_clone().expect("dup").into(), SIZE).expect("format");
        let root = r.root(256).expect("root");
        for n in [16, 100, 4000, 24] {
            r.alloc(n, None).expect("alloc");
        }
        r.tx_begin().expect("tx");
        r.tx_add(root, 128).expect("tx_add");
        let mut bytes = vec![0u8; SIZE as usize];
        f.read_exact_at(&mut bytes, 0).expect("read");
        r.tx_end(false).ok();
        bytes
    })
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = template().to_vec();
    for rec in data.chunks_exact(5) {
        let off = u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]) as usize % bytes.len();
        bytes[off] = rec[4];
    }
    let f = memfd(&bytes);
    let Ok(r) = Region::open(f.into(), 0) else {
        return;
    };
    let _ = r.check();
    let _ = r.facts();
    if let Ok(off) = r.alloc(48, None) {
        let _ = r.object_size(off);
        let _ = r.free(off, None);
    }
    if r.tx_begin().is_ok() {
        if let Ok(root) = r.root(64) {
            let _ = r.tx_add(root, 64);
        }
        let _ = r.tx_end(true);
    }
});
