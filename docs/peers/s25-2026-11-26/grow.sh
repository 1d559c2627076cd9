#!/bin/bash
# A/B of bench/peers' quick grow cells: base (session 24's final) against this build, rotated, ROUNDS rounds.
# Usage: grow.sh OUT
OUT=$1; mkdir -p $OUT
for r in $(seq 1 ${ROUNDS:-2}); do
  if [ $((r % 2)) = 1 ]; then order="new base"; else order="base new"; fi
  for b in $order; do
    tree=/work/main; [ $b = base ] && tree=/var/tmp/s25/wt-base
    echo "$(date +%T) $b-r$r" >> $OUT/ab.log
    /var/tmp/s25/oomwatch.sh $OUT/stop-$b-r$r memext-peers > $OUT/$b-r$r.oom.log 2>&1 &
    (cd $tree && python3 bench/peers/run.py --quick --critical postgres,redis --noise grow --modes ideal,memext --rounds 1 --out $OUT/$b-r$r > $OUT/$b-r$r.log 2>&1)
    echo "$(date +%T) $b-r$r rc=$?" >> $OUT/ab.log
    touch $OUT/stop-$b-r$r
  done
done
echo done >> $OUT/ab.log
