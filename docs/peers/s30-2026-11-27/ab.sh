#!/bin/bash
# bench/peers' full-size burst cells (2 GiB cap, 12 noise containers of 341
# MiB, 45 s windows): base (340a6cb) against wake (45cf9c8: a wake planned
# and admitted for all it was seen using), order A B B A; wake also with
# daemon.wake_room.
OUT=/var/tmp/s30/ab; mkdir -p $OUT
run() { # NAME TREE ROUND MODES
  [ -e $OUT/stop ] && return
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --noise burst --modes $4 --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
W=ideal,memext,memext+daemon.wake_room=352MiB
run base /var/tmp/s30-base 1 ideal,memext
run wake /work/main 1 $W
run wake /work/main 2 $W
run base /var/tmp/s30-base 2 ideal,memext
echo done >> $OUT/ab.log
