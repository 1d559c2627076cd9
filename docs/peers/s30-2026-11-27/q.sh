#!/bin/bash
# quick burst cells: ideal, memext, + wake_room, fast_wakes+page-out+wake_room
OUT=${OUT:-/var/tmp/s30/q}; mkdir -p $OUT
W=${W:-160MiB}
M="ideal,memext,memext+daemon.wake_room=$W,memext+fast_wakes=true+daemon.reclaim=page-out+daemon.wake_room=$W"
cd ${TREE:-/work/main}
for r in $(seq 1 ${ROUNDS:-2}); do
  [ -e $OUT/stop ] && exit 0
  echo "$(date +%T) r$r" >> $OUT/ab.log
  python3 bench/peers/run.py --quick --noise burst $EXTRA --modes $M --rounds 1 --out $OUT/r$r > $OUT/r$r.log 2>&1
  echo "$(date +%T) r$r rc=$?" >> $OUT/ab.log
done
echo done >> $OUT/ab.log
