#!/bin/bash
# One bench/faas function at rest, called every 5 s: per second, its CPU,
# voluntary/involuntary switches, schedstat timeslices, read/write syscalls.
set -u
CG=/sys/fs/cgroup/cpuacct/memext-s41-sig
mkdir -p $CG
python3 /work/main/bench/faas/function.py --socket /tmp/s41-sig.sock --heap-mib 48 &
pid=$!
echo $pid > $CG/cgroup.procs
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rmdir $CG; rm -f /tmp/s41-sig.sock' EXIT
sleep 3
snap() {
  echo "$(cat $CG/cpuacct.usage) $(awk '/^voluntary_ctxt/ {v=$2} /^nonvoluntary_ctxt/ {n=$2} END {print v, n}' /proc/$pid/status) $(awk '{print $3}' /proc/$pid/schedstat) $(awk '/^syscr/ {r=$2} /^syscw/ {w=$2} END {print r, w}' /proc/$pid/io)"
}
prev=($(snap))
for i in $(seq 1 ${1:-30}); do
  if [ $((i % 5)) -eq 0 ]; then
    python3 -c "
import sys; sys.path.insert(0, '/work/main/bench/faas'); import invoke; invoke.call('/tmp/s41-sig.sock')" &
    c=$!; sleep 1; wait $c
  else
    sleep 1
  fi
  cur=($(snap))
  echo "$i cpu_us=$(( (cur[0]-prev[0])/1000 )) vol=$((cur[1]-prev[1])) invol=$((cur[2]-prev[2])) slices=$((cur[3]-prev[3])) syscr=$((cur[4]-prev[4])) syscw=$((cur[5]-prev[5]))$([ $((i % 5)) -eq 0 ] && echo '  <- call')"
  prev=("${cur[@]}")
done
