#!/bin/bash
# issue 15's scenario (postgres x burst, session 24's parameters), base
# (2d7713b) and new (this session's final engine), order A B B A.
OUT=/var/tmp/s26/peers; mkdir -p $OUT
run() { # NAME TREE ROUND
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
run base /var/tmp/s26/wt-base 1
run final /var/tmp/s26/wt-final 1
run final /var/tmp/s26/wt-final 2
run base /var/tmp/s26/wt-base 2
echo done >> $OUT/ab.log
