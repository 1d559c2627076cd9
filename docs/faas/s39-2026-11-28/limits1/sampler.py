# Samples every function cgroup's limit and usage under /memext-faas (v1)
# every PERIOD s into OUT (csv: t_epoch, name, limit, usage, swap) until STOPFILE exists.
import os, sys, time
out, stopfile = sys.argv[1], sys.argv[2]
root = '/sys/fs/cgroup/memory/memext-faas'
f = open(out, 'w'); f.write('t,cg,limit,usage\n')
while not os.path.exists(stopfile):
    t = time.time()
    try: names = os.listdir(root)
    except FileNotFoundError: time.sleep(0.5); continue
    rows = []
    for n in names:
        p = os.path.join(root, n)
        if not os.path.isdir(p): continue
        try:
            rows.append('%.3f,%s,%s,%s\n' % (t, n[:12], open(p + '/memory.limit_in_bytes').read().strip(), open(p + '/memory.usage_in_bytes').read().strip()))
        except OSError: pass
    try: rows.append('%.3f,PARENT,%s,%s\n' % (t, open(root + '/memory.limit_in_bytes').read().strip(), open(root + '/memory.usage_in_bytes').read().strip()))
    except OSError: pass
    f.writelines(rows); f.flush()
    time.sleep(max(0, 0.5 - (time.time() - t)))
