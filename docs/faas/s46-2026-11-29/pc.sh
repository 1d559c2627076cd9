#!/bin/bash
# bench/faas on the swap file: memext against memext with the swap read-ahead off while its tiers
# are up (tiers.page_cluster = 0), two rotated rounds; every function's swap slots read 60 s into
# each replay.
cd /work/main
D=/var/tmp/s46
echo "$(date +%T) start pc" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext+tiers.page_cluster=0,memext --rounds 2 --out $D/pc > $D/pc.out 2>&1 &
BENCH=$!
seen=0
while kill -0 $BENCH 2>/dev/null; do
  n=$(grep -c 'replaying' $D/pc.out 2>/dev/null)
  if [ "${n:-0}" -gt "$seen" ]; then
    seen=$n
    label=$(grep -E '^\[[0-9:]+\] \[[0-9]+/[0-9]+\]' $D/pc.out | tail -1 | sed 's/.*\] //')
    sleep 60
    PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
    { echo "# $label, 60 s into the replay"; python3 $D/an/slots.py $PIDS | tail -1; grep -E 'SwapTotal|SwapFree|SwapCached' /proc/meminfo | tr '\n' ' '; echo; } >> $D/pc-slots.txt 2>&1
  fi
  sleep 2
done
wait $BENCH
echo "$(date +%T) end pc rc=$?" >> $D/progress
