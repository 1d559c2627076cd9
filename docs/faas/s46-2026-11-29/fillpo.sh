#!/bin/bash
# Who reclaims while bench/faas's functions fill (start under the cap), and how their slots lie when
# the replay begins: memext's default and daemon.reclaim = "page-out", one round each (rotated
# order: default first); perf records memcg reclaim from the first function's start to the replay,
# slots.py reads every function as the replay begins.
cd /work/main
D=/var/tmp/s46
echo "$(date +%T) start fillpo" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext,memext+daemon.reclaim=page-out --rounds 1 --out $D/fillpo > $D/fillpo.out 2>&1 &
BENCH=$!
seen=0
while kill -0 $BENCH 2>/dev/null; do
  n=$(grep -c 'functions up' $D/fillpo.out 2>/dev/null)
  r=$(grep -c 'replaying' $D/fillpo.out 2>/dev/null)
  if [ "${n:-0}" -gt 0 ] && [ "$seen" -eq "${r:-0}" ]; then
    seen=$((seen + 1))
    label=$(grep -E '^\[[0-9:]+\] \[[0-9]+/[0-9]+\]' $D/fillpo.out | tail -1 | sed 's/.*\] //')
    perf record -q -e vmscan:mm_vmscan_memcg_reclaim_begin -e vmscan:mm_vmscan_memcg_reclaim_end -a -o $D/fillpo-$seen.perf > /dev/null 2>&1 &
    PERF=$!
    while [ "$(grep -c 'replaying' $D/fillpo.out)" -lt "$seen" ]; do sleep 0.5; done
    kill -INT $PERF; wait $PERF
    PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
    { echo "# $label, as the replay begins"; python3 $D/an/slots.py $PIDS | tail -1; } >> $D/fillpo-slots.txt 2>&1
  fi
  sleep 0.5
done
wait $BENCH
echo "$(date +%T) end fillpo rc=$?" >> $D/progress
