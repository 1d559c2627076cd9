#!/bin/bash
# One bench/faas function called 200 times, then at rest: its CPU each second.
set -u
CG=/sys/fs/cgroup/cpuacct/memext-s41-gc
mkdir -p $CG
python3 /work/main/bench/faas/function.py --socket /tmp/s41-gc.sock --heap-mib 48 &
pid=$!
echo $pid > $CG/cgroup.procs
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rmdir $CG; rm -f /tmp/s41-gc.sock' EXIT
sleep 3
python3 -c "
import sys, time; sys.path.insert(0, '/work/main/bench/faas'); import invoke
for k in range(${2:-200}):
    invoke.call('/tmp/s41-gc.sock'); time.sleep(0.05)"
prev=$(cat $CG/cpuacct.usage)
for i in $(seq 1 ${1:-60}); do
  sleep 1; cur=$(cat $CG/cpuacct.usage); echo -n "$(( (cur - prev) / 1000 )) "; prev=$cur
done
echo
