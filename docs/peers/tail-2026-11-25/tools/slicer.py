"""slicer.py SECONDS NS: while a memext daemon whose policy has the marker
(pageout_bandwidth = "256MiB") runs, every 0.5 s sets slice NS on each task of
the critical container (pc-critical). Exploratory (issue 15)."""
import glob, json, os, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from slice import set_slice
end = time.time() + float(sys.argv[1]); ns = int(sys.argv[2])
done = set()
def crit_id():
    for p in glob.glob("/var/tmp/memext-dockerd-peers/root/containers/*/config.v2.json"):
        try:
            if json.load(open(p))["Name"] == "/pc-critical":
                return p.split("/")[-2]
        except (OSError, ValueError, KeyError):
            pass
while time.time() < end:
    time.sleep(0.5)
    marked = False
    for c in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            a = open(c).read().split("\0")
            if a[-2:-1] == ["daemon"] and "--config" in a and 'pageout_bandwidth = "256MiB"' in open(a[a.index("--config") + 1]).read():
                marked = True
        except (OSError, IndexError):
            pass
    if not marked:
        continue
    cid = crit_id()
    if not cid:
        continue
    try:
        tids = open(f"/sys/fs/cgroup/cpu/memext-peers/{cid}/tasks").read().split()
    except OSError:
        continue
    n = 0
    for t in tids:
        if (cid, t) in done:
            continue
        try:
            if set_slice(int(t), ns):
                n += 1
            done.add((cid, t))
        except OSError:
            pass
    if n:
        print(time.strftime("%H:%M:%S"), cid[:12], "set", n, flush=True)
