#!/bin/bash
# bench/faas, memext on the swap file, one round; how the functions' swapped pages lie in the swap file, twice in the replay.
cd /work/main
D=/var/tmp/s45
echo "$(date +%T) start slots" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext --rounds 1 --out $D/slots > $D/slots.out 2>&1 &
BENCH=$!
while ! grep -q 'replaying' $D/slots.out 2>/dev/null; do sleep 2; kill -0 $BENCH 2>/dev/null || exit 1; done
for at in 60 120; do
  sleep 60
  PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
  python3 $D/an/slots.py $PIDS > $D/slots-$at.txt 2>&1
  echo "$(date +%T) slots at $at s" >> $D/progress
done
wait $BENCH
echo "$(date +%T) end slots rc=$?" >> $D/progress
