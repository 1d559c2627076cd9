"""A sampler to run beside bench/peers (v1 memory): every 0.1 s, the server
cgroup /memext-peers and each container in it. Line: `t name usage limit
failcnt pgmajfault swap`; once per container `# map ID NAME` (its name from
the private Docker engine's state). Usage: psampler.py OUT SECONDS.
(docs/peers/limit-room-2026-11-24's samples came from its first version:
without the swap column and the map lines.)"""
import json, os, sys, time
if len(sys.argv) != 3 or sys.argv[1].startswith("-"):
    raise SystemExit(__doc__)
root = "/sys/fs/cgroup/memory/memext-peers"
out = open(sys.argv[1], "w")
end = time.time() + float(sys.argv[2])
def rd(p):
    try:
        return open(p).read().strip()
    except OSError:
        return ""
def stat(p):
    d = {}
    for l in rd(p + "/memory.stat").splitlines():
        k, _, v = l.partition(" ")
        if k in ("pgmajfault", "swap"):
            d[k] = v
    return f"{d.get('pgmajfault','')} {d.get('swap','')}"
names = {}
def name_of(d):
    if d not in names:
        try:
            c = json.load(open(f"/var/tmp/memext-dockerd-peers/root/containers/{d}/config.v2.json"))
            names[d] = c["Name"].lstrip("/")
            out.write(f"# map {d[:12]} {names[d]}\n")
        except (OSError, ValueError, KeyError):
            return
while time.time() < end:
    if not os.path.isdir(root):
        time.sleep(0.2); continue
    t = time.time()
    out.write(f"{t:.2f} parent {rd(root+'/memory.usage_in_bytes')} {rd(root+'/memory.limit_in_bytes')} {rd(root+'/memory.failcnt')} {stat(root)}\n")
    for d in os.listdir(root):
        p = os.path.join(root, d)
        if os.path.isdir(p):
            name_of(d)
            out.write(f"{t:.2f} {d[:12]} {rd(p+'/memory.usage_in_bytes')} {rd(p+'/memory.limit_in_bytes')} {rd(p+'/memory.failcnt')} {stat(p)}\n")
    out.flush()
    time.sleep(0.1)
