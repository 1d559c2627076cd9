#!/bin/bash
# Who reclaims in bench/faas on the swap file under memext's default: every memcg reclaim
# (try_to_free_mem_cgroup_pages: a limit lowered, or a charge that failed at a limit) recorded
# for 120 s of the replay with the task that ran it (vmscan:mm_vmscan_memcg_reclaim_end, its
# nr_reclaimed), one round.
cd /work/main
D=/var/tmp/s46
echo "$(date +%T) start attr" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext --rounds 1 --out $D/attr > $D/attr.out 2>&1 &
BENCH=$!
while kill -0 $BENCH 2>/dev/null; do
  if grep -q 'replaying' $D/attr.out 2>/dev/null; then
    sleep 20
    perf record -q -e vmscan:mm_vmscan_memcg_reclaim_begin -e vmscan:mm_vmscan_memcg_reclaim_end -a -o $D/attr.perf -- sleep 120 > /dev/null 2>&1
    break
  fi
  sleep 1
done
wait $BENCH
echo "$(date +%T) end attr rc=$?" >> $D/progress
