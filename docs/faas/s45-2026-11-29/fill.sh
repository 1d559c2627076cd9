#!/bin/bash
# bench/faas, memext on the swap file, one round; how the functions' swapped pages lie in the swap file as the replay starts (after the fill and the settle) and 60 s into it.
cd /work/main
D=/var/tmp/s45
echo "$(date +%T) start fill" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext --rounds 1 --out $D/fill > $D/fill.out 2>&1 &
BENCH=$!
while ! grep -q 'replaying' $D/fill.out 2>/dev/null; do sleep 2; kill -0 $BENCH 2>/dev/null || exit 1; done
for at in 0 60; do
  [ $at -gt 0 ] && sleep 60
  PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
  python3 $D/an/slots.py $PIDS > $D/fill-$at.txt 2>&1
  echo "$(date +%T) fill slots at $at s" >> $D/progress
done
wait $BENCH
echo "$(date +%T) end fill rc=$?" >> $D/progress
