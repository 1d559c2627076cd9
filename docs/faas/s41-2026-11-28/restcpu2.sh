#!/bin/bash
# A bench/faas function at rest beside a hog, both under a capped parent
# with swap: the function's CPU and faults each second.
set -u
P=memext-s41-cap
M=/sys/fs/cgroup/memory/$P; C=/sys/fs/cgroup/cpuacct/$P
SW=/var/tmp/s41/swapfile
cleanup() {
  [ -n "${hog:-}" ] && kill $hog 2>/dev/null; [ -n "${fn:-}" ] && kill $fn 2>/dev/null; wait 2>/dev/null
  swapoff $SW 2>/dev/null; rm -f $SW /tmp/s41-rest.sock
  rmdir $M/fn $M/hog $M $C/fn $C 2>/dev/null
}
trap cleanup EXIT
fallocate -l 1G $SW && chmod 600 $SW && mkswap -q $SW && swapon $SW
mkdir -p $M/fn $M/hog $C/fn
echo $((300 << 20)) > $M/memory.limit_in_bytes
python3 /work/main/bench/faas/function.py --socket /tmp/s41-rest.sock --heap-mib 48 &
fn=$!
echo $fn > $M/fn/cgroup.procs; echo $fn > $C/fn/cgroup.procs
sleep 3
python3 - <<'PY' &
import os, time
b = bytearray(400 << 20)
while True:
    for o in range(0, len(b), 4096): b[o] = (b[o] + 1) & 255
    time.sleep(0.2)
PY
hog=$!
echo $hog > $M/hog/cgroup.procs
prev=$(cat $C/fn/cpuacct.usage); pf=$(awk '/^pgfault/ {print $2}' $M/fn/memory.stat); pm=$(awk '/^pgmajfault/ {print $2}' $M/fn/memory.stat)
for i in $(seq 1 ${1:-20}); do
  sleep 1
  cur=$(cat $C/fn/cpuacct.usage); f=$(awk '/^pgfault/ {print $2}' $M/fn/memory.stat); m=$(awk '/^pgmajfault/ {print $2}' $M/fn/memory.stat)
  echo -n "$(( (cur - prev) / 1000 ))us/$((f - pf))f/$((m - pm))M "
  prev=$cur; pf=$f; pm=$m
done
echo
grep -E "^(swap|rss) " $M/fn/memory.stat
