#!/bin/bash
# A bench/faas function at rest in its own cpuacct cgroup: its CPU each second.
set -u
CG=/sys/fs/cgroup/cpuacct/memext-s41-rest
mkdir -p $CG
python3 /work/main/bench/faas/function.py --socket /tmp/s41-rest.sock --heap-mib 48 &
pid=$!
echo $pid > $CG/cgroup.procs
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rmdir $CG; rm -f /tmp/s41-rest.sock' EXIT
sleep 3
prev=$(cat $CG/cpuacct.usage)
for i in $(seq 1 ${1:-20}); do
  sleep 1
  cur=$(cat $CG/cpuacct.usage)
  echo -n "$(( (cur - prev) / 1000 )) "
  prev=$cur
done
echo
