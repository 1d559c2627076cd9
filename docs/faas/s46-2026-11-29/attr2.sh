#!/bin/bash
# attr.sh again, two rounds, a recording per replay (attr2-N.perf), to catch a run whose functions
# hit the cap often beside one that does not.
cd /work/main
D=/var/tmp/s46
echo "$(date +%T) start attr2" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext --rounds 2 --out $D/attr2 > $D/attr2.out 2>&1 &
BENCH=$!
seen=0
while kill -0 $BENCH 2>/dev/null; do
  n=$(grep -c 'replaying' $D/attr2.out 2>/dev/null)
  if [ "${n:-0}" -gt "$seen" ]; then
    seen=$n
    sleep 20
    perf record -q -e vmscan:mm_vmscan_memcg_reclaim_begin -e vmscan:mm_vmscan_memcg_reclaim_end -a -o $D/attr2-$n.perf -- sleep 120 > /dev/null 2>&1
  fi
  sleep 1
done
wait $BENCH
echo "$(date +%T) end attr2 rc=$?" >> $D/progress
