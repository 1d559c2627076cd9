//! libscm: byte-addressable persistent regions for containers.
//!
//! A region is a file (on DAX, tmpfs or a disk) mapped into the process; inside
//! it live a header, an undo log for transactions and a heap. Objects are named
//! by offsets, never pointers. The library reaches a region through the pmem
//! broker (inside a container), by host path, or from an inherited descriptor;
//! see `include/libscm.h` for the C API and `ffi` for its contract.
//!
//! Only `ffi` is the public C surface; the modules below it are the machinery,
//! also usable from Rust (the broker shares `protocol` and `client`).

// Offsets are u64 and become usize only for pointer arithmetic; on the 64-bit
// targets libscm builds for (see below) that never truncates.
#![allow(clippy::cast_possible_truncation)]

#[cfg(not(target_pointer_width = "64"))]
compile_error!("libscm addresses regions by 64-bit offsets and needs a 64-bit target");

pub mod client;
pub mod error;
pub mod ffi;
pub mod heap;
pub mod layout;
pub mod persist;
pub mod pm;
pub mod protocol;
pub mod region;
pub mod tx;

pub use error::{RegionError, ScmResult};
pub use persist::ScmMode;
pub use region::Region;
