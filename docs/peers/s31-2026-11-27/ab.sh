#!/bin/bash
# Full-size burst cells: the s30-onset build (onsets with pages in swap read
# back and admitted as wakes) and main, each with memext's default and with
# the cheap path's settings (page-out at rest by process_madvise, idle after 3 s).
OUT=/var/tmp/s31/ab; mkdir -p $OUT
V=memext+daemon.reclaim=page-out+idle_after=3s
run() { # NAME TREE MODES
  [ -e $OUT/stop ] && return
  echo "$(date +%T) $1" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --noise burst --modes $3 --rounds 1 --out $OUT/$1 > $OUT/$1.log 2>&1)
  echo "$(date +%T) $1 rc=$?" >> $OUT/ab.log
}
run onset /var/tmp/s31-onset ideal,memext,$V
run main /work/main ideal,memext,$V
echo done >> $OUT/ab.log
