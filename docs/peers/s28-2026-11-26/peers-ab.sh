#!/bin/bash
# issue 15's scenario (postgres x burst, session 24's parameters), base
# (79b5e6d, session 27's final) and final (230ce8f: the precursor, holds
# ending with their call, an extra wake counted half), order A B B A.
OUT=/var/tmp/s28/peers; mkdir -p $OUT
run() { # NAME TREE ROUND
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
run base /var/tmp/s28-base 1
run final /var/tmp/s28-extra 1
run final /var/tmp/s28-extra 2
run base /var/tmp/s28-base 2
echo done >> $OUT/ab.log
