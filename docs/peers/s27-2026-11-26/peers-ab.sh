#!/bin/bash
# issue 15's scenario (postgres x burst, session 24's parameters), base
# (2919b38, session 26's final) and same (ab00629: wakes within 3 s of one
# read as one by the schedule; the daemon's transition events carry their
# reading), order A B B A.
OUT=/var/tmp/s27/peers; mkdir -p $OUT
run() { # NAME TREE ROUND
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
run base /var/tmp/s27-base 1
run same /var/tmp/s27-log 1
run same /var/tmp/s27-log 2
run base /var/tmp/s27-base 2
echo done >> $OUT/ab.log
