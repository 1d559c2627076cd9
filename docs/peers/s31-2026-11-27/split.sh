#!/bin/bash
# The split oracle in the full-size burst cells: the noise capped apart at
# what the critical container leaves, paging itself out when each touch ends.
OUT=/var/tmp/s31/split; mkdir -p $OUT
run() { # NAME ROUNDS ARGS...
  [ -e $OUT/stop ] && return
  local name=$1 rounds=$2; shift 2
  echo "$(date +%T) $name" >> $OUT/ab.log
  (cd /work/main && python3 bench/peers/run.py --noise burst --rounds $rounds --out $OUT/$name "$@" > $OUT/$name.log 2>&1)
  echo "$(date +%T) $name rc=$?" >> $OUT/ab.log
}
run w1024 1 --modes ideal,oracle-split
run w10 2 --modes ideal,oracle-split --oracle-cpu-shares 10
echo done >> $OUT/ab.log
