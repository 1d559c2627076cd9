#!/bin/bash
# bench/faas, memext on the swap file, one round; 60 s of the mover thread under perf in the replay.
cd /work/main
D=/var/tmp/s45
echo "$(date +%T) start prof" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext --rounds 1 --out $D/prof > $D/prof.out 2>&1 &
BENCH=$!
while ! grep -q 'replaying' $D/prof.out 2>/dev/null; do sleep 2; kill -0 $BENCH 2>/dev/null || exit 1; done
sleep 30
DPID=$(pgrep -f 'memext daemon' | head -1)
TID=$(for t in /proc/$DPID/task/*; do [ "$(cat $t/comm)" = memext-mover ] && basename $t; done)
echo "$(date +%T) daemon $DPID mover $TID" >> $D/progress
perf record -o $D/mover.perf.data -F 499 -e cpu-clock -e sched:sched_switch -g --tid $TID -- sleep 60 > $D/perf.out 2>&1
echo "$(date +%T) perf done" >> $D/progress
wait $BENCH
echo "$(date +%T) end prof rc=$?" >> $D/progress
