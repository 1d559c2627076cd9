//! The C ABI. Every function catches panics, checks its pointers (null,
//! alignment, and that a region handle is one this library handed out), and
//! returns an `scm_result`; the message of the last failure on this thread is
//! kept for `scm_last_error`. Functions that take a region accept NULL for the
//! default region (`scm_set_default`, or opened from `SCM_REGION` on first use).
//!
//! One file on purpose (~570 lines): the whole exported surface, each export a
//! few lines of argument checks around a call into `region`, in the order of
//! the committed header, so that a reader can hold the ABI and its checks in
//! one view.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::client::{broker_socket, open_via_broker};
use crate::error::{invalid, RegionError, ScmResult};
use crate::persist::{persist_points, ScmMode};
use crate::protocol::{valid_name, OpenRequest};
use crate::region::{open_path, Region};
use crate::tx::Recovery;

/// Opaque handle on an open region.
pub struct ScmRegion {
    _private: [u8; 0],
}

/// `scm_open` flag: create the region if it does not exist.
pub const SCM_CREATE: u32 = 1;
/// `scm_open` flag: `name` is a host path, not a region name for the broker.
pub const SCM_PATH: u32 = 2;

/// What `scm_region_info` fills in.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ScmInfo {
    pub size: u64,
    pub heap_size: u64,
    pub free_bytes: u64,
    /// Allocated objects, the root included (counted by walking the heap).
    pub objects: u64,
    pub mode: ScmMode,
    /// 1 if the region was closed cleanly before this open.
    pub was_clean: u32,
    /// 0: nothing to recover; 1: a transaction was rolled back; 2: a commit was finished.
    pub recovered: u32,
}

static REGIONS: Mutex<Vec<Arc<Region>>> = Mutex::new(Vec::new());
static DEFAULT: Mutex<Option<Arc<Region>>> = Mutex::new(None);
const DEFAULT_REGION_SIZE: u64 = 64 << 20;

/// Bumped whenever a region is closed, so a thread's cached region is re-checked.
static REGIONS_GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// The region this thread used last (with the generation it was found in): most
    /// calls that take a pointer hit it and skip the registry's lock.
    static LAST_REGION: RefCell<Option<(u64, Arc<Region>)>> = const { RefCell::new(None) };
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // During thread exit the slot may be gone already (a free() from a destructor).
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
}

fn fail(e: &RegionError) -> ScmResult {
    set_last_error(&e.to_string());
    ScmResult::from(e)
}

/// Runs `f` at the boundary: panics become SCM_EPANIC, errors their code.
fn boundary(f: impl FnOnce() -> Result<(), RegionError>) -> ScmResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => ScmResult::SCM_OK,
        Ok(Err(e)) => fail(&e),
        Err(_) => {
            set_last_error("panic inside libscm");
            ScmResult::SCM_EPANIC
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn register(region: Region) -> *mut ScmRegion {
    let region = Arc::new(region);
    let handle = Arc::as_ptr(&region) as *mut ScmRegion;
    lock(&REGIONS).push(region);
    handle
}

/// The region behind a handle; NULL means the default region.
fn resolve(handle: *mut ScmRegion) -> Result<Arc<Region>, RegionError> {
    if handle.is_null() {
        return default_region();
    }
    lock(&REGIONS)
        .iter()
        .find(|r| Arc::as_ptr(r) as *mut ScmRegion == handle)
        .cloned()
        .ok_or_else(|| invalid("not a region handle from scm_open"))
}

/// The region that contains `ptr`.
fn containing(ptr: *const u8) -> Result<Arc<Region>, RegionError> {
    let generation = REGIONS_GENERATION.load(Ordering::Acquire);
    // try_with: the cache is unusable while the thread's locals are being destroyed.
    let cached = LAST_REGION
        .try_with(|c| match &*c.borrow() {
            Some((g, r)) if *g == generation && r.mem().offset_of(ptr).is_some() => Some(r.clone()),
            _ => None,
        })
        .ok()
        .flatten();
    if let Some(r) = cached {
        return Ok(r);
    }
    let found = lock(&REGIONS)
        .iter()
        .find(|r| r.mem().offset_of(ptr).is_some())
        .cloned()
        .ok_or_else(|| invalid(format!("{ptr:p} is not inside an open region")))?;
    let _ = LAST_REGION.try_with(|c| *c.borrow_mut() = Some((generation, found.clone())));
    Ok(found)
}

fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 10),
        'M' | 'm' => (&t[..t.len() - 1], 20),
        'G' | 'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn default_region() -> Result<Arc<Region>, RegionError> {
    let mut default = lock(&DEFAULT);
    if let Some(r) = default.as_ref() {
        return Ok(r.clone());
    }
    let name = std::env::var("SCM_REGION").map_err(|_| RegionError::NoDefault)?;
    let size = match std::env::var("SCM_REGION_SIZE") {
        Ok(s) => parse_size(&s).ok_or_else(|| invalid(format!("SCM_REGION_SIZE={s}")))?,
        Err(_) => DEFAULT_REGION_SIZE,
    };
    let flags = SCM_CREATE | if name.contains('/') { SCM_PATH } else { 0 };
    let handle = open_region(&name, size, flags)?;
    let region = resolve(handle)?;
    *default = Some(region.clone());
    Ok(region)
}

fn open_region(name: &str, size: u64, flags: u32) -> Result<*mut ScmRegion, RegionError> {
    if flags & !(SCM_CREATE | SCM_PATH) != 0 {
        return Err(invalid(format!("unknown flags {flags:#x}")));
    }
    let create = flags & SCM_CREATE != 0;
    let (fd, size): (OwnedFd, u64) = if flags & SCM_PATH != 0 {
        (open_path(Path::new(name), size, create)?.into(), size)
    } else {
        if !valid_name(name) {
            return Err(invalid(format!(
                "region name {name:?}: use 1-64 of [A-Za-z0-9_.-], not starting with '.'"
            )));
        }
        let request = OpenRequest {
            name: name.to_string(),
            size,
            create,
        };
        open_via_broker(&broker_socket(), &request)?
    };
    Ok(register(Region::open(fd, size)?))
}

/// # Safety
/// `out` must be null or point to writable storage for a `T`.
unsafe fn write_out<T>(out: *mut T, value: T) -> Result<(), RegionError> {
    if out.is_null() || !out.is_aligned() {
        return Err(invalid("null or misaligned output pointer"));
    }
    // SAFETY: non-null and aligned (checked); writable per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Opens (with `SCM_CREATE`, creates) a region. Without `SCM_PATH`, `name` is a region
/// name asked of the pmem broker (`SCM_BROKER_SOCKET`, default /run/memext/pmem/pmem.sock);
/// with it, a host path. `size` 0 opens an existing region at its size.
///
/// # Safety
/// `name` must be null or a NUL-terminated string; `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn scm_open(
    name: *const c_char,
    size: u64,
    flags: u32,
    out: *mut *mut ScmRegion,
) -> ScmResult {
    boundary(|| {
        if name.is_null() {
            return Err(invalid("null name"));
        }
        // SAFETY: non-null and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| invalid("name is not UTF-8"))?;
        let handle = open_region(name, size, flags)?;
        // SAFETY: out is null or writable per the contract; write_out checks null.
        unsafe { write_out(out, handle) }
    })
}

/// Opens a region from an inherited descriptor (it is duplicated, not taken).
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn scm_open_fd(fd: c_int, size: u64, out: *mut *mut ScmRegion) -> ScmResult {
    boundary(|| {
        if fd < 0 {
            return Err(invalid(format!("descriptor {fd}")));
        }
        // SAFETY: fd is a non-negative descriptor the caller says is open; it is only
        // borrowed here to duplicate it.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let owned = borrowed
            .try_clone_to_owned()
            .map_err(|source| RegionError::Io { op: "dup", source })?;
        let handle = register(Region::open(owned, size)?);
        // SAFETY: out is null or writable per the contract.
        unsafe { write_out(out, handle) }
    })
}

/// Closes a region; it is unmapped (and marked clean) once no call is using it.
#[no_mangle]
pub extern "C" fn scm_close(region: *mut ScmRegion) -> ScmResult {
    boundary(|| {
        if region.is_null() {
            return Err(invalid("null region"));
        }
        let mut regions = lock(&REGIONS);
        let at = regions
            .iter()
            .position(|r| Arc::as_ptr(r) as *mut ScmRegion == region)
            .ok_or_else(|| invalid("not a region handle from scm_open"))?;
        let r = regions.remove(at);
        REGIONS_GENERATION.fetch_add(1, Ordering::AcqRel);
        drop(regions);
        // This thread's cache must not keep the closed region mapped.
        let _ = LAST_REGION.try_with(|c| *c.borrow_mut() = None);
        let mut default = lock(&DEFAULT);
        if default.as_ref().is_some_and(|d| Arc::ptr_eq(d, &r)) {
            *default = None;
        }
        Ok(())
    })
}

/// Makes `region` the one `scmalloc`, `scm_root`, `scmsync` and NULL handles use.
#[no_mangle]
pub extern "C" fn scm_set_default(region: *mut ScmRegion) -> ScmResult {
    boundary(|| {
        if region.is_null() {
            return Err(invalid("null region"));
        }
        let r = resolve(region)?;
        *lock(&DEFAULT) = Some(r);
        Ok(())
    })
}

fn ptr_result(f: impl FnOnce() -> Result<*mut c_void, RegionError>) -> *mut c_void {
    let mut out = std::ptr::null_mut();
    let rc = boundary(|| {
        out = f()?;
        Ok(())
    });
    if rc == ScmResult::SCM_OK {
        out
    } else {
        std::ptr::null_mut()
    }
}

fn address(region: &Region, off: u64) -> *mut c_void {
    region
        .mem()
        .ptr_at(off)
        .map_or(std::ptr::null_mut(), |p| p.cast())
}

/// Allocates `size` bytes in the default region, like malloc; NULL on failure.
#[no_mangle]
pub extern "C" fn scmalloc(size: u64) -> *mut c_void {
    ptr_result(|| {
        let r = default_region()?;
        Ok(address(&r, r.alloc(size, None)?))
    })
}

/// Frees an object from any open region (a NULL pointer is a no-op, as for free()).
#[no_mangle]
pub extern "C" fn scm_free(ptr: *mut c_void) -> ScmResult {
    boundary(|| {
        if ptr.is_null() {
            return Ok(());
        }
        let r = containing(ptr.cast())?;
        let off = r.heap_offset(ptr.cast(), 1)?;
        r.free(off, None)
    })
}

/// Allocates `size` bytes and, in the same crash-atomic step, stores the new object's
/// offset at `dest` (a 64-bit word inside the region), so the object cannot leak.
/// `dest` may be NULL; `out` (may be NULL) receives the object's address.
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn scm_alloc(
    region: *mut ScmRegion,
    size: u64,
    dest: *mut u64,
    out: *mut *mut c_void,
) -> ScmResult {
    boundary(|| {
        let r = resolve(region)?;
        let dest = if dest.is_null() {
            None
        } else {
            Some(r.heap_offset(dest.cast(), 8)?)
        };
        let off = r.alloc(size, dest)?;
        if !out.is_null() {
            // SAFETY: non-null; writable per the contract.
            unsafe { write_out(out, address(&r, off))? };
        }
        Ok(())
    })
}

/// Frees the object whose offset is stored at `location` (a word inside the region)
/// and zeroes that word, in one crash-atomic step.
///
/// # Safety
/// `location` must be null or point into an open region.
#[no_mangle]
pub unsafe extern "C" fn scm_free_at(region: *mut ScmRegion, location: *mut u64) -> ScmResult {
    boundary(|| {
        let r = resolve(region)?;
        if location.is_null() {
            return Err(invalid("null location"));
        }
        let loc = r.heap_offset(location.cast(), 8)?;
        let off = r.mem().load(loc)?;
        r.free(off, Some(loc))
    })
}

/// The default region's root object, `size` bytes, zeroed when first made; NULL on failure.
#[no_mangle]
pub extern "C" fn scm_root(size: u64) -> *mut c_void {
    ptr_result(|| {
        let r = default_region()?;
        Ok(address(&r, r.root(size)?))
    })
}

/// The root object of `region` (NULL: default), `size` bytes, zeroed when first made.
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn scm_region_root(
    region: *mut ScmRegion,
    size: u64,
    out: *mut *mut c_void,
) -> ScmResult {
    boundary(|| {
        let r = resolve(region)?;
        let off = r.root(size)?;
        // SAFETY: out is null or writable per the contract.
        unsafe { write_out(out, address(&r, off)) }
    })
}

/// The usable size of the allocated object at `ptr`; SCM_EINVAL if `ptr` is not the
/// start of an allocated object of an open region.
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn scm_object_size(ptr: *const c_void, out: *mut u64) -> ScmResult {
    boundary(|| {
        let r = containing(ptr.cast())?;
        let off = r.heap_offset(ptr.cast(), 1)?;
        let size = r.object_size(off)?;
        // SAFETY: out is null or writable per the contract.
        unsafe { write_out(out, size) }
    })
}

/// Makes `len` bytes at `ptr` (inside an open region) durable.
#[no_mangle]
pub extern "C" fn scm_persist(ptr: *const c_void, len: u64) -> ScmResult {
    boundary(|| {
        let r = containing(ptr.cast())?;
        let off = r
            .mem()
            .offset_of(ptr.cast())
            .ok_or_else(|| invalid("pointer outside the region"))?;
        if !r.mem().contains(off, len) {
            return Err(invalid(format!(
                "{len} bytes from {ptr:p} run past the region"
            )));
        }
        r.persist(off, len)
    })
}

/// Makes every store to the default region durable.
#[no_mangle]
pub extern "C" fn scmsync() -> ScmResult {
    boundary(|| default_region()?.sync())
}

/// Makes every store to `region` (NULL: default) durable.
#[no_mangle]
pub extern "C" fn scm_sync(region: *mut ScmRegion) -> ScmResult {
    boundary(|| resolve(region)?.sync())
}

/// Begins a transaction on `region` (NULL: default), owned by the calling thread.
#[no_mangle]
pub extern "C" fn scm_tx_begin(region: *mut ScmRegion) -> ScmResult {
    boundary(|| resolve(region)?.tx_begin())
}

/// Saves `len` bytes at `ptr` in the transaction's undo log; change them afterwards.
#[no_mangle]
pub extern "C" fn scm_tx_add(ptr: *const c_void, len: u64) -> ScmResult {
    boundary(|| {
        let r = containing(ptr.cast())?;
        let off = r.heap_offset(ptr.cast(), len)?;
        r.tx_add(off, len)
    })
}

/// Makes the transaction's changes durable and performs its deferred frees.
#[no_mangle]
pub extern "C" fn scm_tx_commit(region: *mut ScmRegion) -> ScmResult {
    boundary(|| resolve(region)?.tx_end(true))
}

/// Restores every range the transaction added and frees what it allocated.
#[no_mangle]
pub extern "C" fn scm_tx_abort(region: *mut ScmRegion) -> ScmResult {
    boundary(|| resolve(region)?.tx_end(false))
}

/// How `region` (NULL: default) is made durable; SCM_MODE_NONE for a bad handle.
#[no_mangle]
pub extern "C" fn scm_mode(region: *mut ScmRegion) -> ScmMode {
    let mut mode = ScmMode::SCM_MODE_NONE;
    boundary(|| {
        mode = resolve(region)?.mode();
        Ok(())
    });
    mode
}

/// The offset of `ptr` inside `region` (NULL: default): the value to store in the
/// region instead of the pointer. 0 if `ptr` is not inside it.
#[no_mangle]
pub extern "C" fn scm_off(region: *mut ScmRegion, ptr: *const c_void) -> u64 {
    resolve(region)
        .ok()
        .and_then(|r| r.mem().offset_of(ptr.cast()))
        .unwrap_or(0)
}

/// The address of offset `off` in `region` (NULL: default); NULL for 0 or out of range.
#[no_mangle]
pub extern "C" fn scm_ptr(region: *mut ScmRegion, off: u64) -> *mut c_void {
    match resolve(region) {
        Ok(r) if off != 0 => address(&r, off),
        _ => std::ptr::null_mut(),
    }
}

/// Checks the region's persistent state (logs settled, heap consistent).
#[no_mangle]
pub extern "C" fn scm_check(region: *mut ScmRegion) -> ScmResult {
    boundary(|| resolve(region)?.check().map(|_| ()))
}

/// Fills `out` with the region's size, free bytes, mode and what recovery did.
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn scm_region_info(region: *mut ScmRegion, out: *mut ScmInfo) -> ScmResult {
    boundary(|| {
        let r = resolve(region)?;
        let f = r.facts();
        let info = ScmInfo {
            size: f.size,
            heap_size: f.heap_size,
            free_bytes: f.free_bytes,
            objects: r.check()?.allocated_blocks,
            mode: f.mode,
            was_clean: u32::from(f.was_clean),
            recovered: match f.recovery {
                Recovery::Nothing => 0,
                Recovery::RolledBack => 1,
                Recovery::FinishedCommit => 2,
            },
        };
        // SAFETY: out is null or writable per the contract.
        unsafe { write_out(out, info) }
    })
}

/// The message of the last failure on this thread ("" if none). Valid until the
/// thread's next failing call.
#[no_mangle]
pub extern "C" fn scm_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// A fixed description of a result code.
#[no_mangle]
pub extern "C" fn scm_strerror(code: ScmResult) -> *const c_char {
    let text: &'static CStr = match code {
        ScmResult::SCM_OK => c"success",
        ScmResult::SCM_EINVAL => c"invalid argument",
        ScmResult::SCM_ENOMEM => c"region full",
        ScmResult::SCM_EIO => c"region file I/O failed",
        ScmResult::SCM_ECORRUPT => c"region corrupt or not a region",
        ScmResult::SCM_EBROKER => c"pmem broker unreachable",
        ScmResult::SCM_EREFUSED => c"pmem broker refused",
        ScmResult::SCM_ETX => c"transaction call out of order",
        ScmResult::SCM_ENODEFAULT => c"no default region",
        ScmResult::SCM_EPANIC => c"internal error",
    };
    text.as_ptr()
}

/// Persist points passed in this process (see the crash hook SCM_CRASH_AT).
#[no_mangle]
pub extern "C" fn scm_persist_points() -> u64 {
    persist_points()
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn region_sizes_take_binary_suffixes() {
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999999G"), None);
    }
}
