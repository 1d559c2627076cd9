#!/bin/bash
# bench/peers' full-size burst cells (2 GiB cap, 12 noise containers of 341
# MiB, 45 s windows): base (340a6cb) against onset (7f11ae5: an onset with
# its pages in swap served and admitted as a wake; also 45cf9c8's wake_bytes),
# order A B B A.
OUT=/var/tmp/s30/ab2; mkdir -p $OUT
run() { # NAME TREE ROUND MODES
  [ -e $OUT/stop ] && return
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --noise burst --modes $4 --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
run onset /var/tmp/s30-onset 1 ideal,memext
run base /var/tmp/s30-base 1 ideal,memext
run base /var/tmp/s30-base 2 ideal,memext
run onset /var/tmp/s30-onset 2 ideal,memext
echo done >> $OUT/ab.log
