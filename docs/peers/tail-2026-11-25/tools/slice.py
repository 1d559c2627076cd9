"""slice.py PID NS: sets a task's EEVDF slice (sched_attr.sched_runtime, SCHED_OTHER, keeping its nice)."""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_sched_setattr, SYS_sched_getattr = 314, 315
def getattr_(pid):
    buf = ctypes.create_string_buffer(56)
    if libc.syscall(SYS_sched_getattr, pid, buf, 56, 0) != 0:
        raise OSError(ctypes.get_errno(), "getattr")
    return buf
def set_slice(pid, ns):
    b = getattr_(pid)
    size, pol, flags, nice, prio, rt, dl, per = struct.unpack_from("IIQiIQQQ", b.raw)
    if pol not in (0, 3):  # SCHED_OTHER, SCHED_BATCH
        return False
    raw = struct.pack("IIQiIQQQ", 48, pol, 0, nice, 0, ns, 0, 0)
    if libc.syscall(SYS_sched_setattr, pid, ctypes.create_string_buffer(raw, 48), 0) != 0:
        raise OSError(ctypes.get_errno(), "setattr")
    return True
if __name__ == "__main__":
    print(set_slice(int(sys.argv[1]), int(sys.argv[2])))
