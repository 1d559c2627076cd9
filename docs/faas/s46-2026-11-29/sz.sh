#!/bin/bash
# bench/faas on the swap file: memext (swap file 2x the functions' memory, ~14 GiB: never half full,
# so a page read back keeps its slot) against memext with an 8 GiB swap file (more than half full
# all through: the kernel frees a page's slot when it is faulted back in), two rotated rounds;
# every function's swap slots read 60 s into each replay.
cd /work/main
D=/var/tmp/s46
echo "$(date +%T) start sz" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext,memext+tiers.size_mib=8192 --rounds 2 --out $D/sz > $D/sz.out 2>&1 &
BENCH=$!
seen=0
while kill -0 $BENCH 2>/dev/null; do
  n=$(grep -c 'replaying' $D/sz.out 2>/dev/null)
  if [ "${n:-0}" -gt "$seen" ]; then
    seen=$n
    label=$(grep -E '^\[[0-9:]+\] \[[0-9]+/[0-9]+\]' $D/sz.out | tail -1 | sed 's/.*\] //')
    sleep 60
    PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
    { echo "# $label, 60 s into the replay"; python3 $D/an/slots.py $PIDS | tail -1; grep -E 'SwapTotal|SwapFree|SwapCached' /proc/meminfo | tr '\n' ' '; echo; } >> $D/sz-slots.txt 2>&1
  fi
  sleep 2
done
wait $BENCH
echo "$(date +%T) end sz rc=$?" >> $D/progress
