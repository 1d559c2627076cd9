"""Samples /memext-peers (v1 memory) every 0.1 s: parent usage/limit/failcnt,
each child's usage, limit, failcnt, pgmajfault. Line: t name usage limit failcnt majflt"""
import os, sys, time
root = "/sys/fs/cgroup/memory/memext-peers"
out = open(sys.argv[1], "w")
end = time.time() + float(sys.argv[2])
def rd(p):
    try:
        return open(p).read().strip()
    except OSError:
        return ""
def majflt(p):
    for l in rd(p + "/memory.stat").splitlines():
        if l.startswith("pgmajfault "):
            return l.split()[1]
    return ""
while time.time() < end:
    if not os.path.isdir(root):
        time.sleep(0.2); continue
    t = time.time()
    out.write(f"{t:.2f} parent {rd(root+'/memory.usage_in_bytes')} {rd(root+'/memory.limit_in_bytes')} {rd(root+'/memory.failcnt')} {majflt(root)}\n")
    for d in os.listdir(root):
        p = os.path.join(root, d)
        if os.path.isdir(p):
            out.write(f"{t:.2f} {d[:12]} {rd(p+'/memory.usage_in_bytes')} {rd(p+'/memory.limit_in_bytes')} {rd(p+'/memory.failcnt')} {majflt(p)}\n")
    out.flush()
    time.sleep(0.1)
