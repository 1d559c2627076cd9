#!/bin/bash
# faas A/B: the build before the reclaimer (old, /var/tmp/memext-b) against this one (new), rounds alternating.
set -u
OUT=/var/tmp/faasab3
mkdir -p $OUT
for r in 1 2; do
  for b in fix lever; do
    if [ $b = fix ]; then tree=/var/tmp/memext-b; else tree=/work/main; fi
    echo "$(date +%T) $b-r$r" >> $OUT/ab.log
    bash /work/main/bench/faas/statsampler.sh $OUT/$b-r$r.status &
    sp=$!
    (cd $tree && python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 \
       --tiers zram --modes memext --rounds 1 --out $OUT/$b-r$r > $OUT/$b-r$r.log 2>&1)
    echo "$(date +%T) $b-r$r rc=$?" >> $OUT/ab.log
    kill $sp
  done
done
echo done >> $OUT/ab.log
